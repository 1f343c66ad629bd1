/* Torsional springs and dampers, applied forces and torques of the
 * multibody layer (issue 15; doc/mbs.md "Forces").  Written, like the
 * joints, on the formulation maps of body-fixed points and axes (form.c),
 * so every formulation gets them with exact derivatives.
 *
 * Torsion about an axis pair (Aa of a, Ab of b, kept parallel by a
 * revolute or cylindrical joint).  With (ua, n1, n2) orthonormal on a,
 * p1 = cos theta0 n1 + sin theta0 n2, p2 = ua x p1, and m the b-fixed
 * vector that was n1 at the initial orientations (projected off Ab), the
 * two rows
 *     c = p1(a) . m(b),   s = p2(a) . m(b)
 * are dot products of axis maps (bilinear in directors) and
 *     phi = atan2(s, c) = theta - theta0   in (-pi, pi].
 * Their values, gradients G_c, G_s and Hessians H_c, H_s come from the
 * joints' row machinery (mbs_joint_eval), so, with rho = c^2 + s^2,
 *     dphi   = (c G_s - s G_c) / rho
 *     Hphi   = (c H_s - s H_c) / rho + (G_s G_c^T - G_c G_s^T) / rho
 *              - dphi (2 c G_c + 2 s G_s)^T / rho
 * (Hphi[a][b] = d_b dphi_a, the layout of H(q; gamma) = D_q(G^T gamma):
 * on the Lie groups the left-trivialised derivative, not symmetric).
 *   spring  V = 1/2 k phi^2,  dV = k phi dphi,
 *           d2V = k (dphi dphi^T + phi Hphi)
 *   damper  f = -c w dphi, w = dphi . v (= theta'),
 *           df/dv = -c dphi dphi^T,  df/dq = -c (dphi (v^T Hphi) + w Hphi).
 * Off the constraint manifold (rho != 1, EM's midpoints) phi is still the
 * smooth function above; its only singularity is rho = 0 (m along ua).
 *
 * Loads.  A force F(t) (space frame) at body point X: f = D^T F, D the
 * point's map; df/dq = D_q(D^T l)|_{l = F} (mbs_map_hess), df/dv = 0.
 * A torque tau(t) on a body: f = sum_k D_k^T l_k, l_k = 1/2 tau x y_k, y_k
 * the maps of the three body axes e_k (for a planar director body the
 * third is d_a x d_b).  On the manifold sum_k l_k . dy_k =
 * 1/2 sum_k tau . (d_k x (dtheta x d_k)) = tau . dtheta: the virtual work
 * of the torque, in every formulation; and
 *     df/dq = sum_k [ D_q(D_k^T l)|_{l = l_k} + 1/2 D_k^T tau~ D_k ]. */
#include "mbs/mbs_impl.h"

static int finite3(const double *a) { return a && isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }

/* Largest local dimension: two elements */
#define NL (2 * MBS_NV_MAX)

static const double PI = 3.14159265358979323846;

/* --------------------------------------------------------- description */

static int grow(void **p, int *cap, int n, size_t size) {
  if (n < *cap) return 0;
  int nc = *cap ? 2 * *cap : 4;
  void *q = realloc(*p, (size_t)nc * size);
  if (!q) return LV_ENOMEM;
  memset((char *)q + (size_t)*cap * size, 0, (size_t)(nc - *cap) * size);
  *p = q;
  *cap = nc;
  return 0;
}

int mbs_forces_clone(const mbs_sys *S, mbs_sys *T) {
  T->ts = NULL, T->ld = NULL, T->bu = NULL;
  T->nts = T->nld = T->cap_ts = T->cap_ld = T->nbu = T->cap_bu = 0;
  if (S->nbu) {
    T->bu = malloc((size_t)S->nbu * sizeof *T->bu);
    if (!T->bu) return LV_ENOMEM;
    memcpy(T->bu, S->bu, (size_t)S->nbu * sizeof *T->bu);
    T->nbu = T->cap_bu = S->nbu;
  }
  if (S->nts) {
    T->ts = malloc((size_t)S->nts * sizeof *T->ts);
    if (!T->ts) return LV_ENOMEM;
    memcpy(T->ts, S->ts, (size_t)S->nts * sizeof *T->ts);
    T->nts = T->cap_ts = S->nts;
  }
  if (S->nld) {
    T->ld = malloc((size_t)S->nld * sizeof *T->ld);
    if (!T->ld) return LV_ENOMEM;
    memcpy(T->ld, S->ld, (size_t)S->nld * sizeof *T->ld);
    T->nld = T->cap_ld = S->nld;
  }
  return 0;
}

void mbs_forces_clear(mbs_sys *S) {
  free(S->ts);
  free(S->ld);
  free(S->bu);
  S->ts = NULL, S->ld = NULL, S->bu = NULL;
  S->nts = S->nld = S->cap_ts = S->cap_ld = S->nbu = S->cap_bu = 0;
}

int mbs_has_torsion_springs(const mbs_sys *S) {
  if (S->nbu > 0) return 1;
  for (int k = 0; k < S->nts; k++)
    if (!S->ts[k].damper) return 1;
  return 0;
}

int mbs_has_forces(const mbs_sys *S) {
  if (S->nbu > 0) return 1;
  for (int k = 0; k < S->nts; k++)
    if (S->ts[k].damper) return 1;
  return S->nld > 0;
}



static void row_dot(mbs_row *r, int axis0, const double X0[3], const double X1[3]) {
  memset(r, 0, sizeof *r);
  r->nt = 2;
  r->t[0].slot = 0, r->t[0].axis = axis0;
  r->t[1].slot = 1, r->t[1].axis = 1;
  memcpy(r->t[0].X, X0, 3 * sizeof(double));
  memcpy(r->t[1].X, X1, 3 * sizeof(double));
  r->P[0][1] = r->P[1][0] = 1.0;
}

static int add_torsion(lv_mbs *s, int damper, int a, const double Aa[3], int b, const double Ab[3], double k,
                       double theta0) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = mbs_sys_of(s);
  const char *what = damper ? "torsional damper" : "torsional spring";
  int n = S->nts;
  if (a < 0 || a >= S->nel || b < 0 || b >= S->nel)
    return mbs_fail(s, LV_EINPUT, "%s %d: element id %d is not a body or the ground", what, n,
                    (a < 0 || a >= S->nel) ? a : b);
  if (a == b) return mbs_fail(s, LV_EINPUT, "%s %d: joins element %d to itself", what, n, a);
  int el[2] = {a, b};
  for (int i = 0; i < 2; i++)
    if (S->el[el[i]].kind == MBS_PARTICLE)
      return mbs_fail(s, LV_EINPUT, "%s %d: particle %d has no axes: a %s needs a rigid body or the ground", what,
                      n, el[i], what);
  if (!finite3(Aa) || !finite3(Ab) || !(mbs_dot3(Aa, Aa) > 0) || !(mbs_dot3(Ab, Ab) > 0))
    return mbs_fail(s, LV_EINPUT, "%s %d: axis missing, zero or not finite", what, n);
  if (!(k >= 0) || !isfinite(k))
    return mbs_fail(s, LV_EINPUT, "%s %d: %s %g must be finite and not negative", what, n,
                    damper ? "coefficient" : "stiffness", k);
  if (!isfinite(theta0) || !(fabs(theta0) < PI))
    return mbs_fail(s, LV_EINPUT, "%s %d: rest angle %g must be finite and within (-pi, pi)", what, n, theta0);
  double ua[3], ub[3], la = sqrt(mbs_dot3(Aa, Aa)), lb = sqrt(mbs_dot3(Ab, Ab));
  for (int i = 0; i < 3; i++) ua[i] = Aa[i] / la, ub[i] = Ab[i] / lb;
  /* the axes in space at the initial orientations must agree */
  double sa[3], sb[3], x[3];
  mbs_r_mul(S->el[a].rb->R0, ua, sa);
  mbs_r_mul(S->el[b].rb->R0, ub, sb);
  mbs_cross3(sa, sb, x);
  if (!(sqrt(mbs_dot3(x, x)) <= 1e-6) || !(mbs_dot3(sa, sb) > 0))
    return mbs_fail(s, LV_EINPUT,
                    "%s %d: axis_a and axis_b do not point the same way at the initial orientations (they must, "
                    "as a revolute joint keeps them)",
                    what, n);
  double n1[3], n2[3], p1[3], p2[3], m[3], w[3];
  mbs_normals(ua, n1, n2);
  for (int i = 0; i < 3; i++) p1[i] = cos(theta0) * n1[i] + sin(theta0) * n2[i];
  mbs_cross3(ua, p1, p2);
  /* m: a's n1 at the initial orientations, in b's frame, off b's axis */
  mbs_r_mul(S->el[a].rb->R0, n1, w);
  mbs_rt_mul(S->el[b].rb->R0, w, m);
  double mu = mbs_dot3(m, ub), mm;
  for (int i = 0; i < 3; i++) m[i] -= mu * ub[i];
  mm = sqrt(mbs_dot3(m, m));
  for (int i = 0; i < 3; i++) m[i] /= mm;
  if (grow((void **)&S->ts, &S->cap_ts, S->nts, sizeof *S->ts)) return mbs_fail(s, LV_ENOMEM, "out of memory");
  mbs_torsion *T = &S->ts[S->nts++];
  memset(T, 0, sizeof *T);
  T->el[0] = a, T->el[1] = b;
  T->damper = damper;
  T->k = k;
  row_dot(&T->rows[0], 1, p1, m);
  row_dot(&T->rows[1], 1, p2, m);
  /* indexed once here: the evaluations only read the rows, so a model
   * shared between threads stays unwritten */
  mbs_joint J;
  memset(&J, 0, sizeof J);
  J.u = T->u;
  J.el[0] = a, J.el[1] = b;
  J.nrows = 2;
  J.rows = T->rows;
  mbs_joint_index(&J);
  T->nu = J.nu;
  T->simple = J.simple;
  return 0;
}

int lv_mbs_add_torsional_spring(lv_mbs *s, int a, const double Aa[3], int b, const double Ab[3], double k,
                                double theta0) {
  return add_torsion(s, 0, a, Aa, b, Ab, k, theta0);
}

int lv_mbs_add_torsional_damper(lv_mbs *s, int a, const double Aa[3], int b, const double Ab[3], double c) {
  return add_torsion(s, 1, a, Aa, b, Ab, c, 0.0);
}

int lv_mbs_add_bushing(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], const double k[3],
                       const double c[3]) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = mbs_sys_of(s);
  int n = S->nbu, el[2] = {a, b};
  if (a < 0 || a >= S->nel || b < 0 || b >= S->nel)
    return mbs_fail(s, LV_EINPUT, "bushing %d: element id %d is not a particle, body or the ground", n,
                    (a < 0 || a >= S->nel) ? a : b);
  if (a == b) return mbs_fail(s, LV_EINPUT, "bushing %d: joins element %d to itself", n, a);
  if (!finite3(Xa) || !finite3(Xb)) return mbs_fail(s, LV_EINPUT, "bushing %d: point missing or not finite", n);
  const double *X[2] = {Xa, Xb};
  for (int i = 0; i < 2; i++)
    if (S->el[el[i]].kind == MBS_PARTICLE && (X[i][0] != 0.0 || X[i][1] != 0.0 || X[i][2] != 0.0))
      return mbs_fail(s, LV_EINPUT, "bushing %d: particle %d has no extent: attach at X = (0, 0, 0)", n, el[i]);
  if (!finite3(k) || !finite3(c) || !(k[0] >= 0 && k[1] >= 0 && k[2] >= 0) || !(c[0] >= 0 && c[1] >= 0 && c[2] >= 0))
    return mbs_fail(s, LV_EINPUT, "bushing %d: stiffnesses and damping coefficients must be given, finite and not "
                    "negative", n);
  if (grow((void **)&S->bu, &S->cap_bu, S->nbu, sizeof *S->bu)) return mbs_fail(s, LV_ENOMEM, "out of memory");
  mbs_bushing *B = &S->bu[S->nbu++];
  memset(B, 0, sizeof *B);
  double y[2][3];
  for (int i = 0; i < 2; i++) {
    const mbs_elem *e = &S->el[el[i]];
    B->el[i] = el[i];
    memcpy(B->X[i], X[i], sizeof B->X[i]);
    if (e->kind == MBS_GROUND) {
      memcpy(y[i], X[i], sizeof y[i]);
    } else {
      mbs_r_mul(e->rb->R0, X[i], y[i]);
      for (int j = 0; j < 3; j++) y[i][j] += e->x0[j];
    }
  }
  for (int j = 0; j < 3; j++) B->k[j] = k[j], B->c[j] = c[j], B->r0[j] = y[0][j] - y[1][j];
  return 0;
}

static int profile_ok(const lv_mbs_profile *p) {
  if (!p || !finite3(p->value)) return 0;
  switch (p->kind) {
    case LV_MBS_CONSTANT: return 1;
    case LV_MBS_SINE: return isfinite(p->frequency) && isfinite(p->phase);
    case LV_MBS_STEP: return isfinite(p->t0);
    case LV_MBS_RAMP: return isfinite(p->t0) && isfinite(p->t1) && p->t1 > p->t0;
  }
  return 0;
}

int lv_mbs_profile_eval(const lv_mbs_profile *p, double t, double out[3]) {
  if (!out || !profile_ok(p)) return LV_EINPUT;
  double f = 1.0;
  switch (p->kind) {
    case LV_MBS_CONSTANT: break;
    case LV_MBS_SINE: f = sin(2.0 * PI * p->frequency * t + p->phase); break;
    case LV_MBS_STEP: f = t < p->t0 ? 0.0 : 1.0; break;
    case LV_MBS_RAMP: f = t <= p->t0 ? 0.0 : t >= p->t1 ? 1.0 : (t - p->t0) / (p->t1 - p->t0); break;
  }
  for (int i = 0; i < 3; i++) out[i] = f * p->value[i];
  return 0;
}

static int add_load(lv_mbs *s, int torque, int body, const double *X, lv_mbs_load_fn fn, void *user,
                    const lv_mbs_profile *p) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = mbs_sys_of(s);
  const char *what = torque ? "torque" : "force";
  int n = S->nld;
  if (body <= 0 || body >= S->nel)
    return mbs_fail(s, LV_EINPUT, "%s %d: element id %d is not a particle or body (loads on the ground do nothing)",
                    what, n, body);
  const mbs_elem *e = &S->el[body];
  if (torque && e->kind != MBS_BODY)
    return mbs_fail(s, LV_EINPUT, "%s %d: element %d is a particle: a torque needs a rigid body", what, n, body);
  if (!torque) {
    if (!finite3(X)) return mbs_fail(s, LV_EINPUT, "%s %d: point of application missing or not finite", what, n);
    if (e->kind == MBS_PARTICLE && (X[0] != 0.0 || X[1] != 0.0 || X[2] != 0.0))
      return mbs_fail(s, LV_EINPUT, "%s %d: particle %d has no extent: apply the force at X = (0, 0, 0)", what, n,
                      body);
  }
  if (!fn && !profile_ok(p))
    return mbs_fail(s, LV_EINPUT,
                    "%s %d: %s", what, n,
                    p ? "time function not valid (finite value, frequency and phase; a ramp needs t1 > t0)"
                      : "no time function (NULL callback)");
  if (grow((void **)&S->ld, &S->cap_ld, S->nld, sizeof *S->ld)) return mbs_fail(s, LV_ENOMEM, "out of memory");
  mbs_load *L = &S->ld[S->nld++];
  memset(L, 0, sizeof *L);
  L->body = body;
  L->torque = torque;
  if (!torque) memcpy(L->X, X, sizeof L->X);
  L->fn = fn;
  L->user = user;
  if (!fn) L->prof = *p;
  return 0;
}

int lv_mbs_add_force(lv_mbs *s, int body, const double X[3], lv_mbs_load_fn fn, void *user) {
  if (s && !fn) return mbs_fail(s, LV_EINPUT, "force %d: no time function (NULL callback)", mbs_sys_of(s)->nld);
  return add_load(s, 0, body, X, fn, user, NULL);
}

int lv_mbs_add_torque(lv_mbs *s, int body, lv_mbs_load_fn fn, void *user) {
  if (s && !fn) return mbs_fail(s, LV_EINPUT, "torque %d: no time function (NULL callback)", mbs_sys_of(s)->nld);
  return add_load(s, 1, body, NULL, fn, user, NULL);
}

int lv_mbs_add_force_profile(lv_mbs *s, int body, const double X[3], const lv_mbs_profile *p) {
  if (s && !p) return mbs_fail(s, LV_EINPUT, "force %d: no time function (NULL profile)", mbs_sys_of(s)->nld);
  return add_load(s, 0, body, X, NULL, NULL, p);
}

int lv_mbs_add_torque_profile(lv_mbs *s, int body, const lv_mbs_profile *p) {
  if (s && !p) return mbs_fail(s, LV_EINPUT, "torque %d: no time function (NULL profile)", mbs_sys_of(s)->nld);
  return add_load(s, 1, body, NULL, NULL, NULL, p);
}

/* ----------------------------------------------------------- torsion */

/* Global column of local column c of a two-element block. */
static int glob(const mbs_sys *S, const int el[2], int c) {
  const mbs_elem *a = &S->el[el[0]], *b = &S->el[el[1]];
  return c < a->nv ? a->voff + c : b->voff + c - a->nv;
}

/* A local square matrix of the two elements el into sink s (mbs_add_pair_square). */
static int add_pair(const mbs_sys *S, const int el[2], lv_sink *s, const double *Hl) {
  return mbs_add_pair_square(s, &S->el[el[0]], &S->el[el[1]], Hl);
}

/* phi, dphi (n) and, if Hp, Hphi (n x n, row-major) of torsion T at q. */
static int torsion_eval(const mbs_sys *S, const mbs_torsion *T, const double *q, double *phi, double *dphi,
                        double *Hp, int *n) {
  mbs_joint J; /* the rows as indexed when the torsion was added (add_torsion) */
  memset(&J, 0, sizeof J);
  J.u = (mbs_term *)T->u;
  J.nu = T->nu;
  J.simple = T->simple;
  J.kind = "torsion";
  J.el[0] = T->el[0], J.el[1] = T->el[1];
  J.nrows = 2;
  J.rows = (mbs_row *)T->rows;
  double cs[2], G[2 * NL];
  int nl;
  mbs_joint_eval(S, &J, q, NULL, cs, G, NULL, &nl);
  double c = cs[0], s = cs[1], rho = c * c + s * s;
  if (!(rho > 0)) return LV_ENONFINITE; /* m along the axis: no angle */
  *n = nl;
  *phi = atan2(s, c);
  const double *Gc = G, *Gs = G + nl;
  for (int a = 0; a < nl; a++) dphi[a] = (c * Gs[a] - s * Gc[a]) / rho;
  if (Hp) {
    double gam[2] = {-s / rho, c / rho};
    mbs_joint_eval(S, &J, q, gam, NULL, NULL, Hp, NULL);
    for (int a = 0; a < nl; a++)
      for (int b = 0; b < nl; b++)
        Hp[a * nl + b] += (Gs[a] * Gc[b] - Gc[a] * Gs[b]) / rho - dphi[a] * 2.0 * (c * Gc[b] + s * Gs[b]) / rho;
  }
  return 0;
}

/* ---------------------------------------------------------- bushings */

/* r = y_a - y_b - r0 of bushing B, Dr = [D_a, -D_b] (3 x n, row-major),
 * off: the local column of each element's block. */
static void bushing_eval(const mbs_sys *S, const mbs_bushing *B, const double *q, double r[3], double *Dr, int *n,
                         int off[2]) {
  const mbs_elem *ea = &S->el[B->el[0]], *eb = &S->el[B->el[1]];
  *n = ea->nv + eb->nv;
  off[0] = 0, off[1] = ea->nv;
  double y[2][3], D[3 * MBS_NV_MAX];
  for (int k = 0; k < 2; k++) {
    const mbs_elem *e = k ? eb : ea;
    mbs_term t;
    memset(&t, 0, sizeof t);
    t.slot = k, t.axis = 0;
    memcpy(t.X, B->X[k], sizeof t.X);
    mbs_map(S->form, e, q + e->qoff, &t, y[k], D);
    if (Dr)
      for (int i = 0; i < 3; i++)
        for (int c = 0; c < e->nv; c++) Dr[i * *n + off[k] + c] = (k ? -1.0 : 1.0) * D[i * e->nv + c];
  }
  for (int i = 0; i < 3; i++) r[i] = y[0][i] - y[1][i] - B->r0[i];
}

/* Hl (n x n) += D_q(D_a^T l) - D_q(D_b^T l) */
static void bushing_hess(const mbs_sys *S, const mbs_bushing *B, const double *q, const double l[3], double *Hl,
                         int n, const int off[2]) {
  for (int k = 0; k < 2; k++) {
    const mbs_elem *e = &S->el[B->el[k]];
    if (!e->nv) continue;
    mbs_term t;
    memset(&t, 0, sizeof t);
    t.slot = k, t.axis = 0;
    memcpy(t.X, B->X[k], sizeof t.X);
    mbs_map_hess(S->form, e, q + e->qoff, &t, l, k ? -1.0 : 1.0, Hl + off[k] * n + off[k], n);
  }
}

static int bushing_V(const mbs_sys *S, const double *q, double *V) {
  double r[3], s = 0.0;
  int n, off[2];
  for (int k = 0; k < S->nbu; k++) {
    const mbs_bushing *B = &S->bu[k];
    bushing_eval(S, B, q, r, NULL, &n, off);
    for (int i = 0; i < 3; i++) s += 0.5 * B->k[i] * r[i] * r[i];
  }
  *V += s;
  return 0;
}

static int bushing_dV(const mbs_sys *S, const double *q, double *dV) {
  double r[3], Dr[3 * NL];
  int n, off[2];
  for (int k = 0; k < S->nbu; k++) {
    const mbs_bushing *B = &S->bu[k];
    bushing_eval(S, B, q, r, Dr, &n, off);
    double l[3] = {B->k[0] * r[0], B->k[1] * r[1], B->k[2] * r[2]};
    for (int c = 0; c < n; c++) dV[glob(S, B->el, c)] += l[0] * Dr[c] + l[1] * Dr[n + c] + l[2] * Dr[2 * n + c];
  }
  return 0;
}

/* D_q dV = Dr^T K Dr + D_q(D_a^T K r) - D_q(D_b^T K r) */
static int bushing_d2V(const mbs_sys *S, const double *q, lv_sink *H) {
  double r[3], Dr[3 * NL], Hl[NL * NL];
  int n, off[2];
  for (int k = 0; k < S->nbu; k++) {
    const mbs_bushing *B = &S->bu[k];
    bushing_eval(S, B, q, r, Dr, &n, off);
    double l[3] = {B->k[0] * r[0], B->k[1] * r[1], B->k[2] * r[2]};
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        Hl[a * n + b] = B->k[0] * Dr[a] * Dr[b] + B->k[1] * Dr[n + a] * Dr[n + b] + B->k[2] * Dr[2 * n + a] * Dr[2 * n + b];
    bushing_hess(S, B, q, l, Hl, n, off);
    LV_CHECK(add_pair(S, B->el, H, Hl));
  }
  return 0;
}

/* the damping force F = -C r', r' = Dr v */
static void bushing_F(const mbs_bushing *B, const double *Dr, int n, const double *v, const mbs_sys *S,
                      double F[3]) {
  for (int i = 0; i < 3; i++) {
    double rd = 0.0;
    for (int c = 0; c < n; c++) rd += Dr[i * n + c] * v[glob(S, B->el, c)];
    F[i] = -B->c[i] * rd;
  }
}

static int bushing_f(const mbs_sys *S, const double *q, const double *v, double *f) {
  double r[3], Dr[3 * NL], F[3];
  int n, off[2];
  for (int k = 0; k < S->nbu; k++) {
    const mbs_bushing *B = &S->bu[k];
    bushing_eval(S, B, q, r, Dr, &n, off);
    bushing_F(B, Dr, n, v, S, F);
    for (int c = 0; c < n; c++) f[glob(S, B->el, c)] += F[0] * Dr[c] + F[1] * Dr[n + c] + F[2] * Dr[2 * n + c];
  }
  return 0;
}

/* df/dv = -Dr^T C Dr */
static int bushing_dv(const mbs_sys *S, const double *q, lv_sink *C) {
  double r[3], Dr[3 * NL], Hl[NL * NL];
  int n, off[2];
  for (int k = 0; k < S->nbu; k++) {
    const mbs_bushing *B = &S->bu[k];
    bushing_eval(S, B, q, r, Dr, &n, off);
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        Hl[a * n + b] = -(B->c[0] * Dr[a] * Dr[b] + B->c[1] * Dr[n + a] * Dr[n + b] +
                          B->c[2] * Dr[2 * n + a] * Dr[2 * n + b]);
    LV_CHECK(add_pair(S, B->el, C, Hl));
  }
  return 0;
}

/* df/dq = D_q(D_a^T F) - D_q(D_b^T F) - Dr^T C Cr, Cr = D_q(Dr v) */
static int bushing_dq(const mbs_sys *S, const double *q, const double *v, lv_sink *K) {
  double r[3], Dr[3 * NL], Cr[3 * NL], Hl[NL * NL], F[3];
  int n, off[2];
  for (int k = 0; k < S->nbu; k++) {
    const mbs_bushing *B = &S->bu[k];
    bushing_eval(S, B, q, r, Dr, &n, off);
    bushing_F(B, Dr, n, v, S, F);
    memset(Cr, 0, (size_t)(3 * n) * sizeof(double));
    for (int sl = 0; sl < 2; sl++) {
      const mbs_elem *e = &S->el[B->el[sl]];
      if (!e->nv) continue;
      double Ce[3 * MBS_NV_MAX];
      memset(Ce, 0, sizeof Ce);
      mbs_term t;
      memset(&t, 0, sizeof t);
      t.slot = sl, t.axis = 0;
      memcpy(t.X, B->X[sl], sizeof t.X);
      mbs_map_curv(S->form, e, q + e->qoff, &t, v + e->voff, Ce, e->nv);
      for (int i = 0; i < 3; i++)
        for (int c = 0; c < e->nv; c++) Cr[i * n + off[sl] + c] = (sl ? -1.0 : 1.0) * Ce[i * e->nv + c];
    }
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        Hl[a * n + b] = -(B->c[0] * Dr[a] * Cr[b] + B->c[1] * Dr[n + a] * Cr[n + b] +
                          B->c[2] * Dr[2 * n + a] * Cr[2 * n + b]);
    bushing_hess(S, B, q, F, Hl, n, off);
    LV_CHECK(add_pair(S, B->el, K, Hl));
  }
  return 0;
}

int mbs_torsion_V(const mbs_sys *S, const double *q, double *V) {
  double dphi[NL], phi;
  int n;
  LV_CHECK(bushing_V(S, q, V));
  for (int k = 0; k < S->nts; k++) {
    if (S->ts[k].damper) continue;
    LV_CHECK(torsion_eval(S, &S->ts[k], q, &phi, dphi, NULL, &n));
    *V += 0.5 * S->ts[k].k * phi * phi;
  }
  return 0;
}

int mbs_torsion_dV(const mbs_sys *S, const double *q, double *dV) {
  double dphi[NL], phi;
  int n;
  LV_CHECK(bushing_dV(S, q, dV));
  for (int k = 0; k < S->nts; k++) {
    const mbs_torsion *T = &S->ts[k];
    if (T->damper) continue;
    LV_CHECK(torsion_eval(S, T, q, &phi, dphi, NULL, &n));
    for (int a = 0; a < n; a++) dV[glob(S, T->el, a)] += T->k * phi * dphi[a];
  }
  return 0;
}

int mbs_torsion_d2V(const mbs_sys *S, const double *q, lv_sink *H) {
  double dphi[NL], Hp[NL * NL], phi;
  int n;
  LV_CHECK(bushing_d2V(S, q, H));
  for (int k = 0; k < S->nts; k++) {
    const mbs_torsion *T = &S->ts[k];
    if (T->damper) continue;
    LV_CHECK(torsion_eval(S, T, q, &phi, dphi, Hp, &n));
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) Hp[a * n + b] = T->k * (dphi[a] * dphi[b] + phi * Hp[a * n + b]);
    LV_CHECK(add_pair(S, T->el, H, Hp));
  }
  return 0;
}

/* ------------------------------------------------------------- loads */

static int load_value(const mbs_load *L, double t, double out[3]) {
  if (L->fn) {
    if (L->fn(t, L->user, out)) return LV_ECALLBACK;
    return 0;
  }
  return lv_mbs_profile_eval(&L->prof, t, out);
}

/* The map of the point (torque: axis k) of load L: y and D (3 x nv). */
static void load_map(const mbs_sys *S, const mbs_load *L, int k, const double *q, double y[3], double *D) {
  const mbs_elem *e = &S->el[L->body];
  mbs_term t;
  memset(&t, 0, sizeof t);
  t.slot = 0;
  t.axis = L->torque;
  if (L->torque)
    t.X[k] = 1.0;
  else
    memcpy(t.X, L->X, sizeof t.X);
  mbs_map(S->form, e, q + e->qoff, &t, y, D);
}

int mbs_forces_f(const mbs_sys *S, double t, const double *q, const double *v, double *f) {
  double dphi[NL], phi, D[3 * MBS_NV_MAX], y[3], F[3], l[3];
  int n;
  LV_CHECK(bushing_f(S, q, v, f));
  for (int k = 0; k < S->nts; k++) {
    const mbs_torsion *T = &S->ts[k];
    if (!T->damper) continue;
    LV_CHECK(torsion_eval(S, T, q, &phi, dphi, NULL, &n));
    double w = 0.0;
    for (int a = 0; a < n; a++) w += dphi[a] * v[glob(S, T->el, a)];
    for (int a = 0; a < n; a++) f[glob(S, T->el, a)] -= T->k * w * dphi[a];
  }
  for (int k = 0; k < S->nld; k++) {
    const mbs_load *L = &S->ld[k];
    const mbs_elem *e = &S->el[L->body];
    LV_CHECK(load_value(L, t, F));
    for (int ax = 0; ax < (L->torque ? 3 : 1); ax++) {
      load_map(S, L, ax, q, y, D);
      if (L->torque) {
        mbs_cross3(F, y, l);
        for (int i = 0; i < 3; i++) l[i] *= 0.5;
      } else {
        memcpy(l, F, sizeof l);
      }
      for (int c = 0; c < e->nv; c++) f[e->voff + c] += l[0] * D[c] + l[1] * D[e->nv + c] + l[2] * D[2 * e->nv + c];
    }
  }
  return 0;
}

int mbs_forces_dv(const mbs_sys *S, double t, const double *q, const double *v, lv_sink *C) {
  (void)t, (void)v;
  double dphi[NL], Hl[NL * NL], phi;
  int n;
  LV_CHECK(bushing_dv(S, q, C));
  for (int k = 0; k < S->nts; k++) {
    const mbs_torsion *T = &S->ts[k];
    if (!T->damper) continue;
    LV_CHECK(torsion_eval(S, T, q, &phi, dphi, NULL, &n));
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) Hl[a * n + b] = -T->k * dphi[a] * dphi[b];
    LV_CHECK(add_pair(S, T->el, C, Hl));
  }
  return 0;
}

int mbs_forces_dq(const mbs_sys *S, double t, const double *q, const double *v, lv_sink *K) {
  double dphi[NL], Hp[NL * NL], phi, vHp[NL];
  int n;
  LV_CHECK(bushing_dq(S, q, v, K));
  for (int k = 0; k < S->nts; k++) {
    const mbs_torsion *T = &S->ts[k];
    if (!T->damper) continue;
    LV_CHECK(torsion_eval(S, T, q, &phi, dphi, Hp, &n));
    double w = 0.0;
    for (int a = 0; a < n; a++) w += dphi[a] * v[glob(S, T->el, a)];
    for (int b = 0; b < n; b++) {
      vHp[b] = 0.0;
      for (int a = 0; a < n; a++) vHp[b] += v[glob(S, T->el, a)] * Hp[a * n + b];
    }
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) Hp[a * n + b] = -T->k * (dphi[a] * vHp[b] + w * Hp[a * n + b]);
    LV_CHECK(add_pair(S, T->el, K, Hp));
  }
  double D[3 * MBS_NV_MAX], y[3], F[3], l[3], Hb[MBS_NV_MAX * MBS_NV_MAX], Tx[9];
  for (int k = 0; k < S->nld; k++) {
    const mbs_load *L = &S->ld[k];
    const mbs_elem *e = &S->el[L->body];
    int nv = e->nv;
    LV_CHECK(load_value(L, t, F));
    memset(Hb, 0, sizeof Hb);
    lv_hat3(F, Tx);
    for (int ax = 0; ax < (L->torque ? 3 : 1); ax++) {
      mbs_term tt;
      memset(&tt, 0, sizeof tt);
      tt.axis = L->torque;
      if (L->torque)
        tt.X[ax] = 1.0;
      else
        memcpy(tt.X, L->X, sizeof tt.X);
      load_map(S, L, ax, q, y, D);
      if (L->torque) {
        mbs_cross3(F, y, l);
        for (int i = 0; i < 3; i++) l[i] *= 0.5;
        /* + 1/2 D^T (tau~ D); an axis map does not depend on the centre of
         * mass (its first three columns are zero in every formulation) */
        double TD[3 * MBS_NV_MAX];
        for (int i = 0; i < 3; i++)
          for (int b = 3; b < nv; b++)
            TD[i * nv + b] = Tx[3 * i] * D[b] + Tx[3 * i + 1] * D[nv + b] + Tx[3 * i + 2] * D[2 * nv + b];
        for (int a = 3; a < nv; a++)
          for (int b = 3; b < nv; b++)
            Hb[a * nv + b] +=
                0.5 * (D[a] * TD[b] + D[nv + a] * TD[nv + b] + D[2 * nv + a] * TD[2 * nv + b]);
      } else {
        memcpy(l, F, sizeof l);
      }
      mbs_map_hess(S->form, e, q + e->qoff, &tt, l, 1.0, Hb, nv);
    }
    int o = L->torque ? 3 : 0; /* a torque's block: the rotation coordinates only */
    LV_CHECK(lv_sink_add_block(K, e->voff + o, e->voff + o, nv - o, nv - o, Hb + o * nv + o, nv));
  }
  return 0;
}
