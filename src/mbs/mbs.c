/* The multibody layer (issue 15; doc/mbs.md): description API, joints as
 * constraint rows on the formulation maps of form.c, and the lv_model
 * callbacks of a built system.
 *
 * A constraint row is c = sum_i g_i . y_i + 1/2 sum_ij P_ij y_i . y_j + c0
 * on up to four maps y_i(q) (body points and axes).  With f_i = g_i +
 * sum_j P_ij y_j and D_i = dy_i/dv the chain rule gives, exactly,
 *   G_r        = sum_i f_i^T D_i
 *   H(q; gam)  = sum_r gam_r [ sum_ij P_ij D_i^T D_j + sum_i D_q(D_i^T l)|_{l=f_i} ]
 *   Z(q; w)_r  = sum_ij P_ij (D_i w)^T D_j + sum_i f_i^T D_q(D_i w)
 * Every joint is such a list of rows, written once for every formulation;
 * the directors' orthonormality constraints are rows of the same kind.
 * In directors every map is linear, so every row is at most quadratic and
 * the midpoint discrete gradients of EM are exact. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include "mbs/mbs_impl.h"

struct lv_mbs {
  mbs_sys sys;
  int cap_el, cap_j, cap_sym, cap_sp, cap_dp;
  char err[256];
};

static const double O3[3] = {0, 0, 0};

static const char *const form_names[] = {"directors", "r3so3", "se3", "euler-parameters", "cardan", NULL};

const char *const *lv_mbs_formulations(void) { return form_names; }

static int fail(lv_mbs *s, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, sizeof s->err, fmt, ap);
  va_end(ap);
  return rc;
}

const char *lv_mbs_error(const lv_mbs *s) { return s ? s->err : "no system (NULL)"; }

/* "body<id>" / "particle<id>" of an element other than @p id: the defaults
 * of elements added later must stay free. */
static int default_name_of_other(const char *name, int id) {
  const char *p = strncmp(name, "body", 4) == 0 ? name + 4 : strncmp(name, "particle", 8) == 0 ? name + 8 : NULL;
  if (!p || !*p || *p == '0') return 0;
  long k = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9' || k > 100000000) return 0;
    k = 10 * k + (*p - '0');
  }
  return k != id;
}

int lv_mbs_set_name(lv_mbs *s, int id, const char *name) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = &s->sys;
  if (id <= 0 || id >= S->nel) return fail(s, LV_EINPUT, "element %d: no such body or particle to name", id);
  if (!name || !*name) return fail(s, LV_EINPUT, "element %d: empty name", id);
  size_t n = strlen(name);
  if (n >= LV_MBS_NAME_MAX)
    return fail(s, LV_EINPUT, "element %d: name longer than %d characters", id, LV_MBS_NAME_MAX - 1);
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return fail(s, LV_EINPUT,
                  "element %d: a name is made of letters, digits, _ and - only (it heads CSV columns), not '%.60s'",
                  id, name);
  }
  if (strcmp(name, "ground") == 0) return fail(s, LV_EINPUT, "element %d: 'ground' is the inertial frame's name", id);
  if (default_name_of_other(name, id))
    return fail(s, LV_EINPUT, "element %d: '%s' is the default name of another element", id, name);
  for (int k = 1; k < S->nel; k++)
    if (k != id && S->el[k].name && strcmp(S->el[k].name, name) == 0)
      return fail(s, LV_EINPUT, "element %d: '%s' is already the name of element %d", id, name, k);
  char *c = malloc(n + 1);
  if (!c) return fail(s, LV_ENOMEM, "out of memory");
  memcpy(c, name, n + 1);
  free(S->el[id].name);
  S->el[id].name = c;
  S->el[id].named = 1;
  return 0;
}

const mbs_rigid mbs_rigid_point = {.R0 = {1, 0, 0, 0, 1, 0, 0, 0, 1}, .ax = {0, 1, 2}};

/* ------------------------------------------------------------ small math */

static int finite3(const double *a) { return a && isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }

/* ------------------------------------------------------------- creation */

/* "cardan" (the sequence xyz, seed 002's CTB) or "cardan-abc": 1 and the
 * axes in seq, else 0. */
static int cardan_sequence(const char *name, int seq[3]) {
  if (strcmp(name, "cardan") == 0) name = "cardan-xyz";
  if (strncmp(name, "cardan-", 7) != 0 || strlen(name) != 10) return 0;
  for (int k = 0; k < 3; k++) {
    char c = name[7 + k];
    if (c < 'x' || c > 'z' || (k > 0 && c == name[6 + k])) return 0;
    seq[k] = c - 'x';
  }
  return 1;
}

int lv_mbs_new(lv_mbs **out, const char *formulation) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  lv_mbs *s = lv_calloc(1, sizeof *s);
  if (!s) return LV_ENOMEM;
  s->sys.el = lv_calloc(1, sizeof(mbs_elem));
  if (!s->sys.el) {
    free(s);
    return LV_ENOMEM;
  }
  s->cap_el = s->sys.nel = 1; /* the ground */
  s->sys.last_joint = -1;
  s->sys.el[0].kind = MBS_GROUND;
  s->sys.el[0].rb = &mbs_rigid_point;
  *out = s;
  if (!formulation || strcmp(formulation, "directors") == 0) {
    s->sys.form = MBS_DIRECTORS;
  } else if (strcmp(formulation, "r3so3") == 0) {
    s->sys.form = MBS_R3SO3;
  } else if (strcmp(formulation, "se3") == 0) {
    s->sys.form = MBS_SE3;
  } else if (strcmp(formulation, "euler-parameters") == 0) {
    s->sys.form = MBS_EP;
  } else if (cardan_sequence(formulation, s->sys.seq)) {
    s->sys.form = MBS_CARDAN;
  } else {
    return fail(s, LV_EUNKNOWN,
                "unknown formulation (accepted: directors, r3so3, se3, euler-parameters, cardan, cardan-SEQ with "
                "SEQ three of x, y, z, consecutive ones distinct, e.g. cardan-zxz)");
  }
  snprintf(s->sys.fname, sizeof s->sys.fname, "%s", formulation ? formulation : "directors");
  return 0;
}

static void lin_free(mbs_joint *J) {
  struct mbs_jmat *X = J->x;
  if (!X) return;
  free(X->Gc), free(X->Gk), free(X->Hk), free(X->Zk);
  free(X->Gs), free(X->Gi), free(X->Hs), free(X->Hi), free(X->Zs), free(X->Zi);
  X->Gc = X->Gk = X->Hk = X->Zk = NULL;
  X->Gs = X->Gi = X->Hs = X->Hi = X->Zs = X->Zi = NULL;
  X->lin = 0;
}

static void sys_clear(mbs_sys *S) {
  for (int k = 0; k < S->nj; k++) {
    if (!S->j[k].rows_shared) free(S->j[k].rows);
    free(S->j[k].u);
    struct mbs_jmat *X = S->j[k].x;
    if (!X) continue;
    free(X->mG), free(X->mH), free(X->mZ);
    free(X->sG), free(X->sH), free(X->sZ);
    lin_free(&S->j[k]);
    free(X);
  }
  free(S->j);
  for (int k = 0; S->el && k < S->nel; k++) {
    if (S->el[k].kind == MBS_BODY) free((void *)S->el[k].rb);
    if (!S->names) free(S->el[k].name);
  }
  free(S->names);
  free(S->el);
  free(S->sym);
  free(S->sp);
  free(S->dp);
  free(S->ppoff);
  free(S->ppj);
  free(S->dvg);
  mbs_forces_clear(S);
  memset(S, 0, sizeof *S);
}

void lv_mbs_free(lv_mbs *s) {
  if (!s) return;
  sys_clear(&s->sys);
  free(s);
}

static int grow(void **p, int *cap, int n, size_t size) {
  if (n < *cap) return 0;
  int nc = *cap ? 2 * *cap : 8;
  void *q = realloc(*p, (size_t)nc * size);
  if (!q) return LV_ENOMEM;
  memset((char *)q + (size_t)*cap * size, 0, (size_t)(nc - *cap) * size);
  *p = q;
  *cap = nc;
  return 0;
}

static mbs_joint *new_joint(lv_mbs *s, const char *kind, int a, int b, int nrows) {
  mbs_sys *S = &s->sys;
  if (grow((void **)&S->j, &s->cap_j, S->nj, sizeof(mbs_joint))) return NULL;
  mbs_joint *J = &S->j[S->nj];
  memset(J, 0, sizeof *J);
  J->rows = lv_calloc((size_t)nrows, sizeof(mbs_row));
  if (!J->rows) return NULL;
  J->kind = kind;
  if (strcmp(kind, "orthonormality") != 0) S->last_joint = S->nj;
  J->el[0] = a;
  J->el[1] = b;
  J->nrows = nrows;
  S->nj++;
  return J;
}

/* Joint k's rows, if equal to those of joint k - 1, become a reference to
 * them (large systems of equal joints, the rods of a chain, keep one copy). */
static void share_rows(mbs_sys *S, int k) {
  if (k <= 0) return;
  mbs_joint *J = &S->j[k], *P = &S->j[k - 1];
  if (J->rows_shared || J->nrows != P->nrows || memcmp(J->rows, P->rows, (size_t)J->nrows * sizeof(mbs_row)))
    return;
  free(J->rows);
  J->rows = P->rows;
  J->rows_shared = 1;
}

static mbs_term term(int slot, int axis, const double X[3]) {
  mbs_term t;
  t.slot = slot;
  t.axis = axis;
  memcpy(t.X, X, sizeof t.X);
  return t;
}

/* c = y0 . y1 */
static void row_dot(mbs_row *r, mbs_term t0, mbs_term t1, double c0) {
  memset(r, 0, sizeof *r);
  r->nt = 2;
  r->t[0] = t0;
  r->t[1] = t1;
  r->P[0][1] = r->P[1][0] = 1.0;
  r->c0 = c0;
}

int lv_mbs_add_particle(lv_mbs *s, double m, const double x0[3], const double v0[3], int *id) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = &s->sys;
  int n = S->nel;
  if (!(m > 0) || !isfinite(m)) return fail(s, LV_EINPUT, "particle %d: mass %g is not positive and finite", n, m);
  if (!finite3(x0)) return fail(s, LV_EINPUT, "particle %d: initial position missing or not finite", n);
  if (v0 && !finite3(v0)) return fail(s, LV_EINPUT, "particle %d: initial velocity not finite", n);
  if (grow((void **)&S->el, &s->cap_el, n, sizeof(mbs_elem))) return fail(s, LV_ENOMEM, "out of memory");
  mbs_elem *e = &S->el[n];
  memset(e, 0, sizeof *e);
  e->kind = MBS_PARTICLE;
  e->pdim = 3;
  e->m = m;
  memcpy(e->x0, x0, sizeof e->x0);
  if (v0) memcpy(e->v0, v0, sizeof e->v0);
  e->rb = &mbs_rigid_point;
  S->nel++;
  if (id) *id = n;
  return 0;
}

/* A particle with two coordinates (x, y), its point (x, y, 0): the same
 * element as a particle (its maps, mass, gravity and joints go through the
 * same code, form.c's map y = (x, y, 0), D = [e1 e2]), pdim = 2. */
int lv_mbs_add_planar_particle(lv_mbs *s, double m, const double x0[2], const double v0[2], int *id) {
  if (!s) return LV_EINPUT;
  int n = s->sys.nel;
  if (!x0 || !isfinite(x0[0]) || !isfinite(x0[1]))
    return fail(s, LV_EINPUT, "planar particle %d: initial position missing or not finite", n);
  if (v0 && (!isfinite(v0[0]) || !isfinite(v0[1])))
    return fail(s, LV_EINPUT, "planar particle %d: initial velocity not finite", n);
  double x[3] = {x0[0], x0[1], 0.0}, v[3] = {v0 ? v0[0] : 0.0, v0 ? v0[1] : 0.0, 0.0};
  int rc = lv_mbs_add_particle(s, m, x, v, id);
  if (rc) return rc;
  s->sys.el[n].pdim = 2;
  return 0;
}

int lv_mbs_add_body(lv_mbs *s, double m, const double J[9], const double Jdiag[3], const double x0[3],
                    const double R0[9], const double v0[3], const double w0[3], lv_mbs_frame frame, int *id) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = &s->sys;
  int n = S->nel;
  if (!(m > 0) || !isfinite(m)) return fail(s, LV_EINPUT, "body %d: mass %g is not positive and finite", n, m);
  if (!finite3(x0)) return fail(s, LV_EINPUT, "body %d: initial position missing or not finite", n);
  if ((v0 && !finite3(v0)) || (w0 && !finite3(w0)))
    return fail(s, LV_EINPUT, "body %d: initial velocity not finite", n);
  if (frame != LV_MBS_BODY_FRAME && frame != LV_MBS_SPACE_FRAME)
    return fail(s, LV_EINPUT, "body %d: frame of the angular velocity is neither body nor space", n);
  double Jm[9] = {0};
  if (J) {
    memcpy(Jm, J, sizeof Jm);
  } else if (Jdiag) {
    Jm[0] = Jdiag[0], Jm[4] = Jdiag[1], Jm[8] = Jdiag[2];
  } else {
    return fail(s, LV_EINPUT, "body %d: no inertia given", n);
  }
  for (int i = 0; i < 9; i++)
    if (!isfinite(Jm[i])) return fail(s, LV_EINPUT, "body %d: inertia not finite", n);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < i; k++)
      if (fabs(Jm[3 * i + k] - Jm[3 * k + i]) > 1e-14 * (fabs(Jm[3 * i + k]) + fabs(Jm[3 * k + i])))
        return fail(s, LV_EINPUT, "body %d: inertia not symmetric", n);
  /* E = 1/2 tr(J) I - J, the second moment of the mass distribution, must
   * be positive definite (this implies J > 0), or singular along one body
   * axis c only: a planar body (lamina normal to c), whose directors keep
   * d_a, d_b as coordinates and d_c = d_a x d_b (form.c). */
  double tr = Jm[0] + Jm[4] + Jm[8], E[9];
  for (int i = 0; i < 9; i++) E[i] = -Jm[i];
  /* the diagonal as 1/2 (J_j + J_k - J_i): no cancellation against tr */
  for (int i = 0; i < 3; i++) E[4 * i] = 0.5 * (Jm[4 * ((i + 1) % 3)] + Jm[4 * ((i + 2) % 3)] - Jm[4 * i]);
  double m1 = E[0], m2 = E[0] * E[4] - E[1] * E[3],
         m3 = E[0] * (E[4] * E[8] - E[5] * E[7]) - E[1] * (E[3] * E[8] - E[5] * E[6]) +
              E[2] * (E[3] * E[7] - E[4] * E[6]);
  double sc = tr > 0 ? tr : 1.0;
  int planar = -1;
  if (!(m1 > 1e-14 * sc) || !(m2 > 1e-14 * sc * sc) || !(m3 > 1e-14 * sc * sc * sc)) {
    for (int c = 0; c < 3 && planar < 0; c++) {
      int a = (c + 1) % 3, b = (c + 2) % 3;
      double tol = 1e-12 * sc;
      if (fabs(E[4 * c]) <= tol && fabs(E[3 * a + c]) <= tol && fabs(E[3 * b + c]) <= tol && E[4 * a] > tol &&
          E[4 * a] * E[4 * b] - E[3 * a + b] * E[3 * b + a] > tol * tol)
        planar = c;
    }
    if (planar < 0)
      return fail(s, LV_EINPUT,
                  "body %d: inertia is not that of a rigid body (positive definite, J_i <= J_j + J_k, equality "
                  "only for a lamina normal to a body axis)",
                  n);
    int c = planar, a = (c + 1) % 3, b = (c + 2) % 3;
    E[4 * c] = E[3 * a + c] = E[3 * c + a] = E[3 * b + c] = E[3 * c + b] = 0.0;
  }
  double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (R0) {
    memcpy(R, R0, sizeof R);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) {
        double d = R[i] * R[k] + R[3 + i] * R[3 + k] + R[6 + i] * R[6 + k] - (i == k);
        if (!(fabs(d) <= 1e-12)) return fail(s, LV_EINPUT, "body %d: initial orientation is not a rotation", n);
      }
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                 R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (!(det > 0)) return fail(s, LV_EINPUT, "body %d: initial orientation is a reflection", n);
  }
  if (grow((void **)&S->el, &s->cap_el, n, sizeof(mbs_elem))) return fail(s, LV_ENOMEM, "out of memory");
  mbs_rigid *rb = lv_calloc(1, sizeof *rb);
  if (!rb) return fail(s, LV_ENOMEM, "out of memory");
  mbs_elem *e = &S->el[n];
  memset(e, 0, sizeof *e);
  e->kind = MBS_BODY;
  e->rb = rb;
  e->m = m;
  memcpy(rb->J, Jm, sizeof Jm);
  memcpy(rb->E, E, sizeof E);
  rb->planar = planar >= 0 && S->form == MBS_DIRECTORS;
  for (int k = 0; k < 3; k++) rb->ax[k] = rb->planar ? (planar + 1 + k) % 3 : k;
  memcpy(e->x0, x0, sizeof e->x0);
  memcpy(rb->R0, R, sizeof R);
  if (v0) memcpy(e->v0, v0, sizeof e->v0);
  if (w0) {
    if (frame == LV_MBS_SPACE_FRAME) {
      mbs_rt_mul(R, w0, rb->W0);
      rb->w0s = 1;
      memcpy(rb->w0, w0, sizeof rb->w0);
    } else {
      memcpy(rb->W0, w0, sizeof rb->W0);
    }
  }
  memcpy(rb->seq, S->seq, sizeof rb->seq);
  if (S->form == MBS_CARDAN) { /* the angles must describe R0 and W0 */
    double qb[6], vb[6];
    if (mbs_vec_initial(S->form, e, qb, vb)) {
      free(rb);
      e->rb = NULL;
      return fail(s, LV_EINPUT,
                  "body %d: initial orientation is on the singular set of the cardan angles %c%c%c (middle angle "
                  "%s): choose another sequence",
                  n, 'x' + S->seq[0], 'x' + S->seq[1], 'x' + S->seq[2], S->seq[0] == S->seq[2] ? "0 or pi" : "+-pi/2");
    }
  }
  S->nel++;
  if (S->form == MBS_DIRECTORS) { /* orthonormality rows on the body's axes */
    int nd = e->rb->planar ? 2 : 3, no = e->rb->planar ? 1 : 3;
    mbs_joint *Jt = new_joint(s, "orthonormality", n, LV_MBS_GROUND, nd + no);
    if (!Jt) {
      S->nel--;
      free(rb);
      e->rb = NULL;
      return fail(s, LV_ENOMEM, "out of memory");
    }
    static const double ek[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    static const int pa[3] = {0, 0, 1}, pb[3] = {1, 2, 2};
    for (int k = 0; k < nd; k++) {
      mbs_row *r = &Jt->rows[k];
      r->nt = 1;
      r->t[0] = term(0, 1, ek[e->rb->ax[k]]);
      r->P[0][0] = 1.0;
      r->c0 = -0.5;
    }
    for (int k = 0; k < no; k++)
      row_dot(&Jt->rows[nd + k], term(0, 1, ek[e->rb->ax[pa[k]]]), term(0, 1, ek[e->rb->ax[pb[k]]]), 0.0);
  }
  if (id) *id = n;
  return 0;
}

int lv_mbs_set_gravity(lv_mbs *s, const double g[3]) {
  if (!s) return LV_EINPUT;
  if (!finite3(g)) return fail(s, LV_EINPUT, "gravity missing or not finite");
  memcpy(s->sys.grav, g, sizeof s->sys.grav);
  return 0;
}

/* ---------------------------------------------------------------- joints */

/* Check the elements of a joint and its attachment data.  need_axis:
 * the joint uses axes (so both sides must be rigid bodies or ground);
 * need_rigid: the joint locks orientation. */
static int check_joint(lv_mbs *s, const char *kind, int a, const double *Xa, const double *Aa, int b,
                       const double *Xb, const double *Ab) {
  const mbs_sys *S = &s->sys;
  int el[2] = {a, b};
  const double *X[2] = {Xa, Xb}, *A[2] = {Aa, Ab};
  if (a < 0 || a >= S->nel || b < 0 || b >= S->nel)
    return fail(s, LV_EINPUT, "%s joint %d: element id %d is not a particle, body or the ground", kind, S->nj,
                (a < 0 || a >= S->nel) ? a : b);
  if (a == b) return fail(s, LV_EINPUT, "%s joint %d: joins element %d to itself", kind, S->nj, a);
  for (int k = 0; k < 2; k++) {
    const mbs_elem *e = &S->el[el[k]];
    if (!finite3(X[k])) return fail(s, LV_EINPUT, "%s joint %d: attachment point missing or not finite", kind, S->nj);
    if (e->kind == MBS_PARTICLE && (X[k][0] != 0.0 || X[k][1] != 0.0 || X[k][2] != 0.0))
      return fail(s, LV_EINPUT, "%s joint %d: particle %d has no extent: attach it at X = (0, 0, 0)", kind, S->nj,
                  el[k]);
    if (A[0] == NULL && A[1] == NULL) continue;
    if (e->kind == MBS_PARTICLE)
      return fail(s, LV_EINPUT, "%s joint %d: particle %d has no axes: a %s joint needs a rigid body or the ground",
                  kind, S->nj, el[k], kind);
    if (!finite3(A[k]) || !(mbs_dot3(A[k], A[k]) > 0))
      return fail(s, LV_EINPUT, "%s joint %d: axis missing, zero or not finite", kind, S->nj);
  }
  return 0;
}

/* the element cannot leave the x-y plane: a planar particle or the ground */
static int in_plane(const mbs_elem *e) {
  return e->kind == MBS_GROUND || (e->kind == MBS_PARTICLE && e->pdim == 2);
}

static void unit(const double *A, double u[3]) {
  double r = sqrt(mbs_dot3(A, A));
  for (int i = 0; i < 3; i++) u[i] = A[i] / r;
}

/* rows 0..2 of a spherical joint: (x_a - x_b)_k */
static void spherical_rows(mbs_row *r, const double Xa[3], const double Xb[3]) {
  for (int k = 0; k < 3; k++) {
    memset(&r[k], 0, sizeof r[k]);
    r[k].nt = 2;
    r[k].t[0] = term(0, 0, Xa);
    r[k].t[1] = term(1, 0, Xb);
    r[k].g[0][k] = 1.0;
    r[k].g[1][k] = -1.0;
  }
}

/* (x_a(Xa) - x_b(Xb)) . n_b = 0 */
static void line_row(mbs_row *r, const double Xa[3], const double Xb[3], const double n[3]) {
  memset(r, 0, sizeof *r);
  r->nt = 3;
  r->t[0] = term(0, 0, Xa);
  r->t[1] = term(1, 0, Xb);
  r->t[2] = term(1, 1, n);
  r->P[0][2] = r->P[2][0] = 1.0;
  r->P[1][2] = r->P[2][1] = -1.0;
}

int lv_mbs_add_spherical(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3]) {
  if (!s) return LV_EINPUT;
  LV_CHECK(check_joint(s, "spherical", a, Xa, NULL, b, Xb, NULL));
  if (in_plane(&s->sys.el[a]) && in_plane(&s->sys.el[b]))
    return fail(s, LV_EINPUT,
                "spherical joint %d: both ends stay in the x-y plane (planar particles or the ground): its z row "
                "would be a constant, not a constraint",
                s->sys.nj);
  mbs_joint *J = new_joint(s, "spherical", a, b, 3);
  if (!J) return fail(s, LV_ENOMEM, "out of memory");
  /* A planar director body held at a ground point p by a body point X off
   * its plane (X_c != 0, the heavy top's tip): x(X) - p is then bilinear
   * (through d_c = d_a x d_b), so g at the midpoint of two solutions is not
   * zero and EM would lose the angular momentum about p.  Rows invariant
   * under rotations about p instead: (phi - p) . d_k + X_k = 0 (k = a, b)
   * and 1/2 (|phi + X_a d_a + X_b d_b - p|^2 - X_c^2) = 0 (the branch
   * x(X) = p among the two is the one the motion starts on). */
  const mbs_elem *ea = &s->sys.el[a], *eb = &s->sys.el[b];
  int sb = ea->kind == MBS_GROUND ? 1 : eb->kind == MBS_GROUND ? 0 : -1;
  const mbs_elem *body = sb == 0 ? ea : sb == 1 ? eb : NULL;
  const double *X = sb == 0 ? Xa : Xb, *p = sb == 0 ? Xb : Xa;
  if (body && body->kind == MBS_BODY && body->rb->planar && X[body->rb->ax[2]] != 0.0) {
    static const double ek[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    int sg = 1 - sb;
    for (int k = 0; k < 2; k++) {
      mbs_row *r = &J->rows[k];
      memset(r, 0, sizeof *r);
      r->nt = 3;
      r->t[0] = term(sb, 0, O3);
      r->t[1] = term(sb, 1, ek[body->rb->ax[k]]);
      r->t[2] = term(sg, 0, p);
      r->P[0][1] = r->P[1][0] = 1.0;
      r->P[1][2] = r->P[2][1] = -1.0;
      r->c0 = X[body->rb->ax[k]];
    }
    double Xab[3];
    memcpy(Xab, X, sizeof Xab);
    Xab[body->rb->ax[2]] = 0.0;
    mbs_row *r = &J->rows[2];
    memset(r, 0, sizeof *r);
    r->nt = 2;
    r->t[0] = term(sb, 0, Xab);
    r->t[1] = term(sg, 0, p);
    r->P[0][0] = r->P[1][1] = 1.0;
    r->P[0][1] = r->P[1][0] = -1.0;
    r->c0 = -0.5 * X[body->rb->ax[2]] * X[body->rb->ax[2]];
    return 0;
  }
  spherical_rows(J->rows, Xa, Xb);
  return 0;
}

int lv_mbs_add_distance_scaled(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double L,
                               double scale) {
  if (!s) return LV_EINPUT;
  LV_CHECK(check_joint(s, "distance", a, Xa, NULL, b, Xb, NULL));
  if (!(L > 0) || !isfinite(L))
    return fail(s, LV_EINPUT, "distance joint %d: length %g is not positive and finite", s->sys.nj, L);
  if (!(scale > 0) || !isfinite(scale))
    return fail(s, LV_EINPUT, "distance joint %d: scale %g is not positive and finite", s->sys.nj, scale);
  mbs_joint *J = new_joint(s, "distance", a, b, 1);
  if (!J) return fail(s, LV_ENOMEM, "out of memory");
  mbs_row *r = &J->rows[0];
  r->nt = 2;
  r->t[0] = term(0, 0, Xa);
  r->t[1] = term(1, 0, Xb);
  r->P[0][0] = r->P[1][1] = scale;
  r->P[0][1] = r->P[1][0] = -scale;
  r->c0 = -0.5 * scale * L * L;
  r->dist = 1;
  r->ds = scale;
  r->L2 = L * L;
  share_rows(&s->sys, s->sys.nj - 1);
  return 0;
}

int lv_mbs_add_distance(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double L) {
  return lv_mbs_add_distance_scaled(s, a, Xa, b, Xb, L, 1.0);
}

int lv_mbs_add_revolute(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                        const double Ab[3]) {
  if (!s) return LV_EINPUT;
  LV_CHECK(check_joint(s, "revolute", a, Xa, Aa, b, Xb, Ab));
  mbs_joint *J = new_joint(s, "revolute", a, b, 5);
  if (!J) return fail(s, LV_ENOMEM, "out of memory");
  double ua[3], ub[3], n1[3], n2[3];
  unit(Aa, ua);
  unit(Ab, ub);
  mbs_normals(ub, n1, n2);
  spherical_rows(J->rows, Xa, Xb);
  row_dot(&J->rows[3], term(0, 1, ua), term(1, 1, n1), 0.0);
  row_dot(&J->rows[4], term(0, 1, ua), term(1, 1, n2), 0.0);
  return 0;
}

int lv_mbs_add_universal(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                         const double Ab[3]) {
  if (!s) return LV_EINPUT;
  LV_CHECK(check_joint(s, "universal", a, Xa, Aa, b, Xb, Ab));
  mbs_joint *J = new_joint(s, "universal", a, b, 4);
  if (!J) return fail(s, LV_ENOMEM, "out of memory");
  double ua[3], ub[3];
  unit(Aa, ua);
  unit(Ab, ub);
  spherical_rows(J->rows, Xa, Xb);
  row_dot(&J->rows[3], term(0, 1, ua), term(1, 1, ub), 0.0);
  return 0;
}

/* rows of a cylindrical joint; *n1 receives b's first normal */
static void cylindrical_rows(mbs_row *r, const double Xa[3], const double ua[3], const double Xb[3],
                             const double ub[3], double n1[3]) {
  double n2[3];
  mbs_normals(ub, n1, n2);
  line_row(&r[0], Xa, Xb, n1);
  line_row(&r[1], Xa, Xb, n2);
  row_dot(&r[2], term(0, 1, ua), term(1, 1, n1), 0.0);
  row_dot(&r[3], term(0, 1, ua), term(1, 1, n2), 0.0);
}

int lv_mbs_add_cylindrical(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                           const double Ab[3]) {
  if (!s) return LV_EINPUT;
  LV_CHECK(check_joint(s, "cylindrical", a, Xa, Aa, b, Xb, Ab));
  mbs_joint *J = new_joint(s, "cylindrical", a, b, 4);
  if (!J) return fail(s, LV_ENOMEM, "out of memory");
  double ua[3], ub[3], n1[3];
  unit(Aa, ua);
  unit(Ab, ub);
  cylindrical_rows(J->rows, Xa, ua, Xb, ub, n1);
  return 0;
}

/* b-frame image of the a-frame vector u at the initial orientations:
 * R_b0^T R_a0 u */
static void initial_in_b(const mbs_sys *S, int a, int b, const double u[3], double out[3]) {
  double w[3];
  mbs_r_mul(S->el[a].rb->R0, u, w);
  mbs_rt_mul(S->el[b].rb->R0, w, out);
}

int lv_mbs_add_prismatic(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                         const double Ab[3]) {
  if (!s) return LV_EINPUT;
  LV_CHECK(check_joint(s, "prismatic", a, Xa, Aa, b, Xb, Ab));
  mbs_joint *J = new_joint(s, "prismatic", a, b, 5);
  if (!J) return fail(s, LV_ENOMEM, "out of memory");
  double ua[3], ub[3], n1[3], t1[3], t2[3], m[3];
  unit(Aa, ua);
  unit(Ab, ub);
  cylindrical_rows(J->rows, Xa, ua, Xb, ub, n1);
  /* lock: a's normal t1 stays perpendicular to the b vector that was a's t2 */
  mbs_normals(ua, t1, t2);
  initial_in_b(&s->sys, a, b, t2, m);
  row_dot(&J->rows[4], term(0, 1, t1), term(1, 1, m), 0.0);
  return 0;
}

int lv_mbs_add_fixed(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3]) {
  static const double e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  if (!s) return LV_EINPUT;
  LV_CHECK(check_joint(s, "fixed", a, Xa, e[0], b, Xb, e[0]));
  mbs_joint *J = new_joint(s, "fixed", a, b, 6);
  if (!J) return fail(s, LV_ENOMEM, "out of memory");
  double f[3][3];
  for (int k = 0; k < 3; k++) initial_in_b(&s->sys, a, b, e[k], f[k]);
  spherical_rows(J->rows, Xa, Xb);
  row_dot(&J->rows[3], term(0, 1, e[0]), term(1, 1, f[1]), 0.0);
  row_dot(&J->rows[4], term(0, 1, e[0]), term(1, 1, f[2]), 0.0);
  row_dot(&J->rows[5], term(0, 1, e[1]), term(1, 1, f[2]), 0.0);
  return 0;
}

int lv_mbs_scale_last_joint(lv_mbs *s, double factor) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = &s->sys;
  if (S->last_joint < 0) return fail(s, LV_EINPUT, "joint scale: no joint added yet");
  mbs_joint *J = &S->j[S->last_joint];
  if (!(factor != 0.0) || !isfinite(factor))
    return fail(s, LV_EINPUT, "%s joint %d: scale %g is not finite and non-zero", J->kind, S->last_joint, factor);
  if (J->rows_shared) { /* the rows are an earlier joint's too (share_rows): scale a copy of its own */
    mbs_row *own = lv_calloc((size_t)J->nrows, sizeof(mbs_row));
    if (!own) return fail(s, LV_ENOMEM, "out of memory");
    memcpy(own, J->rows, (size_t)J->nrows * sizeof(mbs_row));
    J->rows = own;
    J->rows_shared = 0;
  }
  for (int r = 0; r < J->nrows; r++) {
    mbs_row *R = &J->rows[r];
    for (int i = 0; i < MBS_TERMS; i++) {
      for (int k = 0; k < 3; k++) R->g[i][k] *= factor;
      for (int k = 0; k < MBS_TERMS; k++) R->P[i][k] *= factor;
    }
    R->c0 *= factor;
    R->ds *= factor; /* a distance row's own scale, used where it is written directly (pp_*) */
  }
  return 0;
}

/* --------------------------------------------------------------- springs */

/* springs and dampers: the same two attachment points */
static int add_pair(lv_mbs *s, int damper, int a, const double Xa[3], int b, const double Xb[3], double k, double L0) {
  if (!s) return LV_EINPUT;
  mbs_sys *S = &s->sys;
  const char *what = damper ? "damper" : "spring";
  int n = damper ? S->ndp : S->nsp, el[2] = {a, b};
  const double *X[2] = {Xa, Xb};
  if (a < 0 || a >= S->nel || b < 0 || b >= S->nel)
    return fail(s, LV_EINPUT, "%s %d: element id %d is not a particle, body or the ground", what, n,
                (a < 0 || a >= S->nel) ? a : b);
  if (a == b) return fail(s, LV_EINPUT, "%s %d: joins element %d to itself", what, n, a);
  for (int i = 0; i < 2; i++) {
    if (!finite3(X[i])) return fail(s, LV_EINPUT, "%s %d: attachment point missing or not finite", what, n);
    if (S->el[el[i]].kind == MBS_PARTICLE && (X[i][0] != 0.0 || X[i][1] != 0.0 || X[i][2] != 0.0))
      return fail(s, LV_EINPUT, "%s %d: particle %d has no extent: attach it at X = (0, 0, 0)", what, n, el[i]);
  }
  if (!(k >= 0) || !isfinite(k) || !(L0 >= 0) || !isfinite(L0))
    return fail(s, LV_EINPUT,
                damper ? "%s %d: coefficient %g must be finite and not negative"
                       : "%s %d: stiffness %g and rest length %g must be finite and not negative",
                what, n, k, L0);
  mbs_spring **arr = damper ? &S->dp : &S->sp;
  if (grow((void **)arr, damper ? &s->cap_dp : &s->cap_sp, n, sizeof(mbs_spring)))
    return fail(s, LV_ENOMEM, "out of memory");
  mbs_spring *p = &(*arr)[n];
  if (damper)
    S->ndp++;
  else
    S->nsp++;
  p->el[0] = a, p->el[1] = b;
  memcpy(p->X[0], Xa, 3 * sizeof(double));
  memcpy(p->X[1], Xb, 3 * sizeof(double));
  p->k = k, p->L0 = L0;
  return 0;
}

int lv_mbs_add_spring(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double k, double L0) {
  return add_pair(s, 0, a, Xa, b, Xb, k, L0);
}

int lv_mbs_add_spring_squared(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double k,
                              double L0) {
  LV_CHECK(add_pair(s, 0, a, Xa, b, Xb, k, L0));
  s->sys.sp[s->sys.nsp - 1].sq = 1;
  return 0;
}

int lv_mbs_add_damper(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double c) {
  return add_pair(s, 1, a, Xa, b, Xb, c, 0.0);
}

/* ------------------------------------------------------------ symmetries */

static int add_sym(lv_mbs *s, mbs_symkind kind, int body, const double *axis, const double *point) {
  mbs_sys *S = &s->sys;
  if (!finite3(axis) || !(mbs_dot3(axis, axis) > 0))
    return fail(s, LV_EINPUT, "symmetry %d: axis missing, zero or not finite", S->nsym);
  if (point && !finite3(point)) return fail(s, LV_EINPUT, "symmetry %d: point not finite", S->nsym);
  if (grow((void **)&S->sym, &s->cap_sym, S->nsym, sizeof(mbs_sym))) return fail(s, LV_ENOMEM, "out of memory");
  mbs_sym *y = &S->sym[S->nsym++];
  y->kind = kind;
  y->body = body;
  unit(axis, y->axis);
  if (point) memcpy(y->point, point, sizeof y->point);
  return 0;
}

int lv_mbs_add_rotation_symmetry(lv_mbs *s, const double axis[3], const double point[3]) {
  if (!s) return LV_EINPUT;
  return add_sym(s, SYM_ROTATION, 0, axis, point ? point : O3);
}

int lv_mbs_add_translation_symmetry(lv_mbs *s, const double dir[3]) {
  if (!s) return LV_EINPUT;
  return add_sym(s, SYM_TRANSLATION, 0, dir, NULL);
}

int lv_mbs_add_body_symmetry(lv_mbs *s, int body, const double axis[3], const double point[3]) {
  if (!s) return LV_EINPUT;
  if (body <= 0 || body >= s->sys.nel || s->sys.el[body].kind != MBS_BODY)
    return fail(s, LV_EINPUT, "symmetry %d: element %d is not a rigid body", s->sys.nsym, body);
  return add_sym(s, SYM_BODY, body, axis, point ? point : O3);
}

/* ------------------------------------------------------ joint evaluation */

/* Local coordinates of a joint: slot a's tangent block, then slot b's. */
typedef struct {
  const mbs_elem *e[2];
  int off[2]; /* local column offset of each slot */
  int n;      /* nv_a + nv_b */
} jloc;

static void jloc_init(const mbs_sys *S, const mbs_joint *J, jloc *L) {
  L->e[0] = &S->el[J->el[0]];
  L->e[1] = &S->el[J->el[1]];
  L->off[0] = 0;
  L->off[1] = L->e[0]->nv;
  L->n = L->e[0]->nv + L->e[1]->nv;
}

static int jloc_global(const jloc *L, int k) { return k < L->off[1] ? L->e[0]->voff + k : L->e[1]->voff + k - L->off[1]; }

/* One block per pair of elements with coordinates.  Within every row and
 * every column the adds come in the order of one add per entry, row by
 * row; two distinct elements never share a position, so every sink sums
 * the same values (one element in both places: entry by entry, as the
 * positions coincide). */
int mbs_add_pair_square(lv_sink *s, const mbs_elem *ea, const mbs_elem *eb, const double *Hl) {
  const mbs_elem *e[2] = {ea, eb};
  int n = ea->nv + eb->nv, off[2] = {0, ea->nv};
  if (ea == eb) {
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        LV_CHECK(lv_sink_add(s, ea->voff + (a < off[1] ? a : a - off[1]), ea->voff + (b < off[1] ? b : b - off[1]),
                             Hl[a * n + b]));
    return 0;
  }
  for (int sa = 0; sa < 2; sa++)
    for (int sb = 0; e[sa]->nv && sb < 2; sb++)
      if (e[sb]->nv)
        LV_CHECK(lv_sink_add_block(s, e[sa]->voff, e[sb]->voff, e[sa]->nv, e[sb]->nv, Hl + off[sa] * n + off[sb], n));
  return 0;
}

#define NLOC (2 * MBS_NV_MAX)

/* The distinct maps of a joint's rows (each evaluated once per call), and
 * which rows are quadratic in the maps. */
static void joint_index_terms(mbs_joint *J) {
  J->nu = 0;
  J->simple = 1;
  for (int r = 0; r < J->nrows; r++) {
    mbs_row *R = &J->rows[r];
    R->quad = 0;
    for (int i = 0; i < R->nt; i++) {
      const mbs_term *t = &R->t[i];
      int k = 0;
      while (k < J->nu && !(J->u[k].slot == t->slot && J->u[k].axis == t->axis && J->u[k].X[0] == t->X[0] &&
                            J->u[k].X[1] == t->X[1] && J->u[k].X[2] == t->X[2]))
        k++;
      if (k == J->nu) J->u[J->nu++] = *t;
      R->ix[i] = k;
      for (int j = 0; j < R->nt; j++)
        if (R->P[i][j] != 0.0) R->quad = 1;
      int nz = 0, kk = -1;
      for (int j = 0; j < 3; j++)
        if (R->g[i][j] != 0.0) nz++, kk = j;
      R->uk[i] = nz == 1 ? kk : -1;
      R->us[i] = R->uk[i] >= 0 ? R->g[i][kk] : 0.0;
      if (R->uk[i] < 0) J->simple = 0;
    }
    if (R->quad || R->dist) J->simple = 0;
  }
  /* the spherical joint's layout: row r = c0 + us_0 y_0[r] + us_1 y_1[r]
   * on the joint's two maps, one on each slot */
  J->pair3 = J->simple && J->nrows == 3 && J->nu == 2 && J->u[0].slot != J->u[1].slot;
  for (int r = 0; r < J->nrows && J->pair3; r++) {
    const mbs_row *R = &J->rows[r];
    if (R->nt != 2 || R->ix[0] != 0 || R->ix[1] != 1 || R->uk[0] != r || R->uk[1] != r) J->pair3 = 0;
  }
}

/* joint_eval of a simple joint (mbs_joint.simple): the same
 * sums in the same order as the general path below (f_i = us_i e_uk adds
 * exact zeros elsewhere), without its bookkeeping.  Not for directors,
 * whose constant maps take the Kronecker form there. */
static void joint_eval_simple(mbs_formulation F, const mbs_joint *J, const jloc *L, const double *q,
                              const double *gam, const double *w, double *c, double *G, double *H, double *Z) {
  double Y[MBS_UNIQ][3], DD[MBS_UNIQ][3 * MBS_NV_MAX], LH[MBS_UNIQ][3];
  int HU[MBS_UNIQ], ld = L->n;
  /* the maps' values and D serve c and G only: H and Z take their second
   * derivatives from the maps' own routines */
  for (int t = 0; (c || G) && t < J->nu; t++) {
    const mbs_elem *e = L->e[J->u[t].slot];
    if (e->kind == MBS_GROUND) { /* y = X, no coordinates */
      memcpy(Y[t], J->u[t].X, sizeof Y[t]);
      continue;
    }
    mbs_map(F, e, q + e->qoff, &J->u[t], Y[t], G ? DD[t] : NULL);
  }
  if (c)
    for (int r = 0; r < J->nrows; r++) {
      const mbs_row *R = &J->rows[r];
      double cv = R->c0;
      for (int i = 0; i < R->nt; i++) cv += R->us[i] * Y[R->ix[i]][R->uk[i]];
      c[r] = cv;
    }
  if (G) {
    for (int k = 0; k < J->nrows * ld; k++) G[k] = 0.0;
    for (int r = 0; r < J->nrows; r++) {
      const mbs_row *R = &J->rows[r];
      for (int i = 0; i < R->nt; i++) {
        int sl = R->t[i].slot, n = L->e[sl]->nv;
        if (!n) continue;
        double *Gr = G + r * ld + L->off[sl];
        const double *Dk = DD[R->ix[i]] + R->uk[i] * n, us = R->us[i];
        if (n == 6) { /* a rigid body of the Lie group formulations: unrolled */
          Gr[0] += us * Dk[0], Gr[1] += us * Dk[1], Gr[2] += us * Dk[2];
          Gr[3] += us * Dk[3], Gr[4] += us * Dk[4], Gr[5] += us * Dk[5];
        } else {
          for (int k = 0; k < n; k++) Gr[k] += us * Dk[k];
        }
      }
    }
  }
  if (Z) { /* row r: sum_i us_i times row uk_i of the curvature D_q(D_t w) of map t */
    double CZ[MBS_UNIQ][3 * MBS_NV_MAX];
    for (int t = 0; t < J->nu; t++) {
      const mbs_elem *e = L->e[J->u[t].slot];
      if (e->kind != MBS_BODY) continue; /* constant maps have no curvature */
      memset(CZ[t], 0, (size_t)(3 * e->nv) * sizeof(double));
      mbs_map_curv(F, e, q + e->qoff, &J->u[t], w + e->voff, CZ[t], e->nv);
    }
    for (int k = 0; k < J->nrows * ld; k++) Z[k] = 0.0;
    for (int r = 0; r < J->nrows; r++) {
      const mbs_row *R = &J->rows[r];
      for (int i = 0; i < R->nt; i++) {
        const mbs_elem *e = L->e[R->t[i].slot];
        if (e->kind != MBS_BODY) continue;
        int n = e->nv;
        double *Zr = Z + r * ld + L->off[R->t[i].slot];
        const double *Ck = CZ[R->ix[i]] + R->uk[i] * n, us = R->us[i];
        if (n == 6) { /* a rigid body of the Lie group formulations: unrolled, as G above */
          Zr[0] += us * Ck[0], Zr[1] += us * Ck[1], Zr[2] += us * Ck[2];
          Zr[3] += us * Ck[3], Zr[4] += us * Ck[4], Zr[5] += us * Ck[5];
        } else {
          for (int b = 0; b < n; b++) Zr[b] += us * Ck[b];
        }
      }
    }
  }
  if (!H) return;
  for (int k = 0; k < ld * ld; k++) H[k] = 0.0;
  for (int t = 0; t < J->nu; t++) HU[t] = 0, LH[t][0] = LH[t][1] = LH[t][2] = 0.0;
  for (int r = 0; r < J->nrows; r++) {
    const mbs_row *R = &J->rows[r];
    double s = gam[r];
    if (s == 0.0) continue;
    for (int i = 0; i < R->nt; i++) {
      if (!L->e[R->t[i].slot]->nv) continue;
      int t = R->ix[i];
      HU[t] = 1;
      /* f_i = us_i e_uk: the other components would add s * 0.0, which
       * leaves every LH (never -0: it starts at +0) as it is */
      LH[t][R->uk[i]] += s * R->us[i];
    }
  }
  for (int t = 0; t < J->nu; t++)
    if (HU[t]) {
      const mbs_elem *e = L->e[J->u[t].slot];
      int o = L->off[J->u[t].slot];
      mbs_map_hess_nz(F, e, q + e->qoff, &J->u[t], LH[t], 1.0, H + o * ld + o, ld); /* H zeroed above */
    }
}

/* Rows r = 0, 1, 2 of a spherical-layout joint's G or Z on the n columns of
 * its map t: us_rt times row r of A (3 x n), onto the entry's zero (0.0 +
 * keeps the simple path's bits, -0 included). */
static inline void pair3_rows(double *out, int ld, const mbs_row *R, int t, const double *A, int n) {
  for (int r = 0; r < 3; r++, out += ld) {
    const double us = R[r].us[t], *a = A + r * n;
    if (n == 6) { /* a rigid body of the Lie group formulations: unrolled */
      out[0] = 0.0 + us * a[0], out[1] = 0.0 + us * a[1], out[2] = 0.0 + us * a[2];
      out[3] = 0.0 + us * a[3], out[4] = 0.0 + us * a[4], out[5] = 0.0 + us * a[5];
    } else {
      for (int k = 0; k < n; k++) out[k] = 0.0 + us * a[k];
    }
  }
}

/* joint_eval_simple of a joint in the spherical layout (mbs_joint.pair3):
 * the same sums in the same order with the rows' indices known (term t of
 * row r reads component r of map t, which sits on slot t's own columns, so
 * every entry of G, Z and of the maps' H weights gets one add onto its
 * zero, as there). */
static void joint_eval_pair3(mbs_formulation F, const mbs_joint *J, const jloc *L, const double *q,
                             const double *gam, const double *w, double *c, double *G, double *H, double *Z) {
  double Y[2][3], DD[2][3 * MBS_NV_MAX];
  const mbs_elem *e[2] = {L->e[J->u[0].slot], L->e[J->u[1].slot]};
  const int ld = L->n;
  for (int t = 0; (c || G) && t < 2; t++) {
    if (e[t]->kind == MBS_GROUND) { /* y = X, no coordinates */
      memcpy(Y[t], J->u[t].X, sizeof Y[t]);
      continue;
    }
    mbs_map(F, e[t], q + e[t]->qoff, &J->u[t], Y[t], G ? DD[t] : NULL);
  }
  const mbs_row *R = J->rows;
  if (c)
    for (int r = 0; r < 3; r++) c[r] = (R[r].c0 + R[r].us[0] * Y[0][r]) + R[r].us[1] * Y[1][r];
  /* the two slots' columns are all of G's and Z's (ld = nv_a + nv_b) */
  for (int t = 0; G && t < 2; t++) pair3_rows(G + L->off[J->u[t].slot], ld, R, t, DD[t], e[t]->nv);
  /* Z: the curvature D_q(D w) of a body's map; a constant map (a
   * particle's) has none, its columns stay zero */
  for (int t = 0; Z && t < 2; t++) {
    const int n = e[t]->nv;
    double *Zt = Z + L->off[J->u[t].slot], CZ[3 * MBS_NV_MAX];
    if (e[t]->kind != MBS_BODY) {
      for (int r = 0; r < 3; r++)
        for (int k = 0; k < n; k++) Zt[r * ld + k] = 0.0;
      continue;
    }
    memset(CZ, 0, (size_t)(3 * n) * sizeof(double));
    mbs_map_curv(F, e[t], q + e[t]->qoff, &J->u[t], w + e[t]->voff, CZ, n);
    pair3_rows(Zt, ld, R, t, CZ, n);
  }
  if (!H) return;
  for (int k = 0; k < ld * ld; k++) H[k] = 0.0;
  for (int t = 0; t < 2; t++) {
    if (!e[t]->nv) continue;
    double LH[3] = {0.0, 0.0, 0.0};
    int used = 0;
    for (int r = 0; r < 3; r++)
      if (gam[r] != 0.0) LH[r] += gam[r] * R[r].us[t], used = 1;
    int o = L->off[J->u[t].slot];
    if (used) mbs_map_hess_nz(F, e[t], q + e[t]->qoff, &J->u[t], LH, 1.0, H + o * ld + o, ld); /* H zeroed above */
  }
}

/* c (nrows), and if given: G (nrows x n), H(gam) (n x n), Z(w) (nrows x n)
 * local, row-major, leading dimension L->n; gam is the joint's part of
 * gamma, w the global tangent vector.
 * Cost: each distinct map once per call (its D only when G, H or Z is
 * asked for); its second derivatives once per call too: D_q(D^T l) is
 * linear in l, so the rows' l = gam_r f_r are summed per map first, and
 * the curvature D_q(D w) does not depend on the row. */
static void joint_eval(mbs_formulation F, const mbs_joint *J, const jloc *L, const double *q, const double *gam,
                       const double *w, double *c, double *G, double *H, double *Z) {
  if (J->simple && F != MBS_DIRECTORS) {
    if (J->pair3)
      joint_eval_pair3(F, J, L, q, gam, w, c, G, H, Z);
    else
      joint_eval_simple(F, J, L, q, gam, w, c, G, H, Z);
    return;
  }
  /* each distinct map once: y, and D either as kc (x) I3 (kr = 1, the
   * directors' and particles' constant maps) or in full */
  double Y[MBS_UNIQ][3], DD[MBS_UNIQ][3 * MBS_NV_MAX], KC[MBS_UNIQ][MBS_NV_MAX / 3], U[MBS_UNIQ][3];
  double LH[MBS_UNIQ][3]; /* H: sum over rows of gam_r f_r at the map */
  int KR[MBS_UNIQ], HU[MBS_UNIQ], ld = L->n, needD = G || H || Z;
  if (G) memset(G, 0, (size_t)J->nrows * ld * sizeof(double));
  if (H) memset(H, 0, (size_t)ld * ld * sizeof(double));
  if (Z) memset(Z, 0, (size_t)J->nrows * ld * sizeof(double));
  for (int t = 0; t < J->nu; t++) {
    const mbs_elem *e = L->e[J->u[t].slot];
    const double *qb = q + e->qoff;
    if (H) HU[t] = 0, LH[t][0] = LH[t][1] = LH[t][2] = 0.0;
    if (e->kind == MBS_GROUND) { /* y = X, no coordinates */
      memcpy(Y[t], J->u[t].X, sizeof Y[t]);
      KR[t] = 0;
      if (Z) U[t][0] = U[t][1] = U[t][2] = 0.0;
      continue;
    }
    KR[t] = (F == MBS_DIRECTORS || e->kind == MBS_PARTICLE) && mbs_map_kron(F, e, qb, &J->u[t], Y[t], KC[t]);
    if (!KR[t]) mbs_map(F, e, qb, &J->u[t], Y[t], needD ? DD[t] : NULL);
    if (Z) {
      const double *wt = w + e->voff;
      for (int k = 0; k < 3; k++) {
        double s = 0.0;
        if (KR[t])
          for (int p = 0; p < e->nv / 3; p++) {
            if (KC[t][p] != 0.0) s += KC[t][p] * wt[3 * p + k];
          }
        else
          for (int a = 0; a < e->nv; a++) s += DD[t][k * e->nv + a] * wt[a];
        U[t][k] = s;
      }
    }
  }
  /* Z: the curvature C_t = D_q(D_t w) of each non-constant map (3 x nv) */
  double CZ[MBS_UNIQ][3 * MBS_NV_MAX];
  if (Z)
    for (int t = 0; t < J->nu; t++) {
      const mbs_elem *e = L->e[J->u[t].slot];
      int nv = e->nv;
      if (!nv || KR[t]) continue;
      memset(CZ[t], 0, (size_t)(3 * nv) * sizeof(double));
      mbs_map_curv(F, e, q + e->qoff, &J->u[t], w + e->voff, CZ[t], nv);
    }
  if (c)
    for (int r = 0; r < J->nrows; r++) {
      const mbs_row *R = &J->rows[r];
      if (R->dist) {
        const double *y0 = Y[R->ix[0]], *y1 = Y[R->ix[1]];
        double d[3] = {y0[0] - y1[0], y0[1] - y1[1], y0[2] - y1[2]};
        c[r] = 0.5 * R->ds * (mbs_dot3(d, d) - R->L2);
        continue;
      }
      double cv = R->c0;
      for (int i = 0; i < R->nt; i++) {
        const double *yi = Y[R->ix[i]];
        cv += R->uk[i] >= 0 ? R->us[i] * yi[R->uk[i]] : mbs_dot3(R->g[i], yi);
        if (R->quad)
          for (int j = 0; j < R->nt; j++)
            if (R->P[i][j] != 0.0) cv += 0.5 * R->P[i][j] * mbs_dot3(yi, Y[R->ix[j]]);
      }
      c[r] = cv;
    }
  if (!needD) return;
  for (int r = 0; r < J->nrows; r++) {
    const mbs_row *R = &J->rows[r];
    double f[MBS_TERMS][3];
    const mbs_elem *e[MBS_TERMS];
    const double *y[MBS_TERMS], *D[MBS_TERMS], *kc[MBS_TERMS];
    int nv[MBS_TERMS], o[MBS_TERMS], kr[MBS_TERMS];
    for (int i = 0; i < R->nt; i++) {
      int t = R->ix[i], sl = R->t[i].slot;
      e[i] = L->e[sl];
      nv[i] = e[i]->nv;
      o[i] = L->off[sl];
      y[i] = Y[t];
      D[i] = DD[t];
      kc[i] = KC[t];
      kr[i] = KR[t];
    }
    if (R->dist) /* f_0 = -f_1 = ds (y_0 - y_1) */
      for (int k = 0; k < 3; k++) f[0][k] = R->ds * (y[0][k] - y[1][k]), f[1][k] = -f[0][k];
    for (int i = 0; !R->dist && i < R->nt; i++) {
      for (int k = 0; k < 3; k++) f[i][k] = R->g[i][k];
      if (R->quad)
        for (int j = 0; j < R->nt; j++)
          if (R->P[i][j] != 0.0)
            for (int k = 0; k < 3; k++) f[i][k] += R->P[i][j] * y[j][k];
    }
    if (G)
      for (int i = 0; i < R->nt; i++) {
        int n = nv[i];
        double *Gr = G + r * ld + o[i];
        if (!n) continue;
        if (!R->quad && R->uk[i] >= 0 && !kr[i]) { /* f = us e_k: us times row k of D */
          const double *Dk = D[i] + R->uk[i] * n, us = R->us[i];
          for (int k = 0; k < n; k++) Gr[k] += us * Dk[k];
          continue;
        }
        if (kr[i]) { /* blocks of zero kc add nothing */
          for (int p = 0; p < n / 3; p++)
            if (kc[i][p] != 0.0)
              for (int k = 0; k < 3; k++) Gr[3 * p + k] += kc[i][p] * f[i][k];
        } else {
          for (int k = 0; k < n; k++) Gr[k] += f[i][0] * D[i][k] + f[i][1] * D[i][n + k] + f[i][2] * D[i][2 * n + k];
        }
      }
    if (H && gam[r] != 0.0) {
      double s = gam[r];
      for (int i = 0; i < R->nt; i++) {
        int ni = nv[i];
        if (ni && !kr[i]) { /* the map's own second derivative: summed over rows, applied below */
          int t = R->ix[i];
          HU[t] = 1;
          for (int k = 0; k < 3; k++) LH[t][k] += s * f[i][k];
        }
        if (!R->quad) continue;
        for (int j = 0; j < R->nt; j++) {
          if (R->P[i][j] == 0.0 || !ni || !nv[j]) continue;
          int nj = nv[j];
          double pij = s * R->P[i][j];
          if (kr[i] && kr[j]) { /* (kc_i kc_j^T) (x) I3 */
            for (int p = 0; p < ni / 3; p++) {
              double x = pij * kc[i][p];
              if (x == 0.0) continue;
              for (int qq = 0; qq < nj / 3; qq++) {
                double v = x * kc[j][qq];
                if (v == 0.0) continue;
                for (int k = 0; k < 3; k++) H[(o[i] + 3 * p + k) * ld + o[j] + 3 * qq + k] += v;
              }
            }
            continue;
          }
          /* general: D_i^T D_j, a Kronecker side expanded on the fly */
          for (int a = 0; a < ni; a++) {
            double x0, x1, x2;
            if (kr[i]) {
              double v = pij * kc[i][a / 3];
              x0 = a % 3 == 0 ? v : 0.0, x1 = a % 3 == 1 ? v : 0.0, x2 = a % 3 == 2 ? v : 0.0;
            } else {
              x0 = pij * D[i][a], x1 = pij * D[i][ni + a], x2 = pij * D[i][2 * ni + a];
            }
            if (x0 == 0.0 && x1 == 0.0 && x2 == 0.0) continue;
            double *Hr = H + (o[i] + a) * ld + o[j];
            if (kr[j]) {
              for (int qq = 0; qq < nj / 3; qq++) {
                Hr[3 * qq] += x0 * kc[j][qq];
                Hr[3 * qq + 1] += x1 * kc[j][qq];
                Hr[3 * qq + 2] += x2 * kc[j][qq];
              }
            } else {
              for (int b = 0; b < nj; b++) Hr[b] += x0 * D[j][b] + x1 * D[j][nj + b] + x2 * D[j][2 * nj + b];
            }
          }
        }
      }
    }
    if (Z) {
      double *Zr = Z + r * ld;
      if (R->dist) { /* ds (u_0 - u_1)^T (D_0 - D_1), the difference first */
        const double *u0 = U[R->ix[0]], *u1 = U[R->ix[1]];
        double z[3] = {R->ds * (u0[0] - u1[0]), R->ds * (u0[1] - u1[1]), R->ds * (u0[2] - u1[2])};
        for (int j = 0; j < 2; j++) {
          int nj = nv[j];
          double sg = j ? -1.0 : 1.0;
          if (kr[j]) {
            for (int qq = 0; qq < nj / 3; qq++)
              if (kc[j][qq] != 0.0)
                for (int k = 0; k < 3; k++) Zr[o[j] + 3 * qq + k] += sg * kc[j][qq] * z[k];
          } else {
            for (int b = 0; b < nj; b++) Zr[o[j] + b] += sg * (z[0] * D[j][b] + z[1] * D[j][nj + b] + z[2] * D[j][2 * nj + b]);
          }
        }
      }
      if (R->quad && !R->dist)
        for (int i = 0; i < R->nt; i++)
          for (int j = 0; j < R->nt; j++) {
            if (R->P[i][j] == 0.0 || !nv[j]) continue;
            int nj = nv[j];
            const double *ui = U[R->ix[i]];
            double p = R->P[i][j];
            if (kr[j]) {
              for (int qq = 0; qq < nj / 3; qq++)
                if (kc[j][qq] != 0.0)
                  for (int k = 0; k < 3; k++) Zr[o[j] + 3 * qq + k] += p * kc[j][qq] * ui[k];
            } else {
              for (int b = 0; b < nj; b++)
                Zr[o[j] + b] += p * (ui[0] * D[j][b] + ui[1] * D[j][nj + b] + ui[2] * D[j][2 * nj + b]);
            }
          }
      for (int i = 0; i < R->nt; i++) {
        int ni = nv[i];
        if (!ni || kr[i]) continue; /* constant maps have no curvature */
        const double *C = CZ[R->ix[i]];
        for (int b = 0; b < ni; b++) Zr[o[i] + b] += f[i][0] * C[b] + f[i][1] * C[ni + b] + f[i][2] * C[2 * ni + b];
      }
    }
  }
  if (H)
    for (int t = 0; t < J->nu; t++)
      if (HU[t]) {
        const mbs_elem *e = L->e[J->u[t].slot];
        int o = L->off[J->u[t].slot];
        mbs_map_hess(F, e, q + e->qoff, &J->u[t], LH[t], 1.0, H + o * ld + o, ld);
      }
}

/* --------------------------------------------------------- the callbacks */

static int cb_mass(const double *q, lv_sink *M, void *u) {
  const mbs_sys *S = u;
  for (int k = 1; k < S->nel; k++) {
    const mbs_elem *e = &S->el[k];
    int o = e->voff;
    for (int i = 0; i < mbs_ntrans(e); i++) LV_CHECK(lv_sink_add(M, o + i, o + i, e->m));
    if (e->kind != MBS_BODY) continue;
    if (S->form == MBS_DIRECTORS) {
      int nd = e->rb->planar ? 2 : 3;
      for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) {
          double E = e->rb->E[3 * e->rb->ax[a] + e->rb->ax[b]];
          if (E != 0.0)
            for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, o + 3 + 3 * a + i, o + 3 + 3 * b + i, E));
        }
    } else if (MBS_VEC(S->form)) {
      LV_CHECK(mbs_vec_mass(S->form, e, q + e->qoff, M));
    } else {
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          if (e->rb->J[3 * a + b] != 0.0) LV_CHECK(lv_sink_add(M, o + 3 + a, o + 3 + b, e->rb->J[3 * a + b]));
    }
  }
  return 0;
}

static int cb_V(const double *q, double *V, void *u) {
  const mbs_sys *S = u;
  double s = 0.0;
  for (int k = 1; k < S->nel; k++) { /* -m g . x as (-m g) . x: m g0 x_3 for g = -g0 e3, bit for bit */
    const double m = S->el[k].m, mg[3] = {-m * S->grav[0], -m * S->grav[1], -m * S->grav[2]}, *x = q + S->el[k].qoff;
    s += mbs_ntrans(&S->el[k]) == 3 ? mbs_dot3(mg, x) : mg[0] * x[0] + mg[1] * x[1]; /* planar: z = 0 */
  }
  *V = s;
  return 0;
}

/* gravity's dV into dV (all of it: zeros where gravity does no work) */
static void grav_dV(const mbs_sys *S, const double *q, double *dV) {
  memset(dV, 0, (size_t)S->nv * sizeof(double));
  for (int k = 1; k < S->nel; k++) {
    const mbs_elem *e = &S->el[k];
    if (S->form == MBS_SE3 && e->kind == MBS_BODY) { /* along U: R^T (-m g) */
      double mg[3] = {-e->m * S->grav[0], -e->m * S->grav[1], -e->m * S->grav[2]};
      mbs_rt_mul(q + e->qoff + 3, mg, dV + e->voff);
    } else {
      for (int i = 0; i < mbs_ntrans(e); i++) dV[e->voff + i] = -e->m * S->grav[i];
    }
  }
}

static int cb_dV(const double *q, double *dV, void *u) {
  const mbs_sys *S = u;
  if (S->dvg)
    memcpy(dV, S->dvg, (size_t)S->nv * sizeof(double));
  else
    grav_dV(S, q, dV);
  return 0;
}

/* A built model's constant gravity gradient (no SE(3) body, whose R^T
 * turns it with the configuration): the values grav_dV computes, once. */
static int grav_dV_setup(mbs_sys *S) {
  for (int k = 1; k < S->nel; k++)
    if (S->form == MBS_SE3 && S->el[k].kind == MBS_BODY) return 0;
  if (S->nv == 0) return 0;
  S->dvg = lv_calloc((size_t)S->nv, sizeof(double));
  if (!S->dvg) return LV_ENOMEM;
  grav_dV(S, NULL, S->dvg);
  return 0;
}

static int cb_d2V(const double *q, lv_sink *H, void *u) {
  const mbs_sys *S = u;
  /* zero; directors keep a fixed, non-empty pattern at their bodies'
   * coordinates (as gyro_top.c did; a particle's coordinates carry no
   * entry, as in the hand-written chain, so a chain of 10^4 particles
   * writes no 3 10^4 zeros per Newton matrix), the Lie group and R^n
   * formulations add only se3's blocks (as heavy_top.c did) */
  if (S->form == MBS_DIRECTORS)
    for (int k = 1; k < S->nel; k++) {
      const mbs_elem *e = &S->el[k];
      if (e->kind != MBS_BODY) continue;
      for (int i = e->voff; i < e->voff + e->nv; i++) LV_CHECK(lv_sink_add(H, i, i, 0.0));
    }
  if (S->form == MBS_SE3) /* D_Omega(R^T (-m g)) = (R^T (-m g))~ on the U rows */
    for (int k = 1; k < S->nel; k++) {
      const mbs_elem *e = &S->el[k];
      if (e->kind != MBS_BODY) continue;
      double mg[3] = {-e->m * S->grav[0], -e->m * S->grav[1], -e->m * S->grav[2]}, r[3], A[9];
      mbs_rt_mul(q + e->qoff + 3, mg, r);
      lv_hat3(r, A);
      LV_CHECK(lv_sink_add_block(H, e->voff, e->voff + 3, 3, 3, A, 3));
    }
  return 0;
}

/* Lie group formulations: gyroscopic force -Omega x J Omega on each body
 * (and -m Omega x U on the body-frame translation in se3) */
static int cb_force(double t, const double *q, const double *v, double *f, void *u) {
  const mbs_sys *S = u;
  (void)t, (void)q;
  memset(f, 0, (size_t)S->nv * sizeof(double));
  for (int k = 1; k < S->nel; k++) {
    const mbs_elem *e = &S->el[k];
    if (e->kind != MBS_BODY) continue;
    if (MBS_VEC(S->form)) { /* quadratic-velocity force (form_vec.c) */
      mbs_vec_force(S->form, e, q + e->qoff, v + e->voff, f + e->voff);
      continue;
    }
    const double *W = v + e->voff + 3;
    double L[3], c[3];
    mbs_r_mul(e->rb->J, W, L);
    mbs_cross3(W, L, c);
    for (int i = 0; i < 3; i++) f[e->voff + 3 + i] = -c[i];
    if (S->form == MBS_SE3) { /* body-frame translation: -m Omega x U */
      mbs_cross3(W, v + e->voff, c);
      for (int i = 0; i < 3; i++) f[e->voff + i] = -e->m * c[i];
    }
  }
  return 0;
}

static int cb_force_dq(double t, const double *q, const double *v, lv_sink *K, void *u) {
  const mbs_sys *S = u;
  (void)t;
  if (MBS_VEC(S->form)) /* the quadratic-velocity force depends on q */
    for (int k = 1; k < S->nel; k++)
      if (S->el[k].kind == MBS_BODY)
        LV_CHECK(mbs_vec_force_jac(S->form, &S->el[k], q + S->el[k].qoff, v + S->el[k].voff, 1, K));
  return 0;
}

/* df/dOmega = -(W~ J - (J W)~) */
static int cb_force_dv(double t, const double *q, const double *v, lv_sink *C, void *u) {
  const mbs_sys *S = u;
  (void)t, (void)q;
  for (int k = 1; k < S->nel; k++) {
    const mbs_elem *e = &S->el[k];
    if (e->kind != MBS_BODY) continue;
    if (MBS_VEC(S->form)) {
      LV_CHECK(mbs_vec_force_jac(S->form, e, q + e->qoff, v + e->voff, 0, C));
      continue;
    }
    const double *W = v + e->voff + 3, *Jb = e->rb->J;
    double L[3], A[9], B[9];
    mbs_r_mul(Jb, W, L);
    lv_hat3(L, B);
    /* (W~ J)_ij without W~'s zero diagonal term: a +-0 that could change
     * only the sign of a zero sum, and a zero entry of df/dv is added to
     * the Newton matrix, whose entries are never -0, without effect */
    const double W0 = W[0], W1 = W[1], W2 = W[2];
    for (int j = 0; j < 3; j++) {
      A[j] = (-W2) * Jb[3 + j] + W1 * Jb[6 + j];
      A[3 + j] = W2 * Jb[j] + (-W0) * Jb[6 + j];
      A[6 + j] = (-W1) * Jb[j] + W0 * Jb[3 + j];
    }
    int o = e->voff + 3;
    double Cb[9];
    for (int i = 0; i < 9; i++) Cb[i] = -(A[i] - B[i]);
    LV_CHECK(lv_sink_add_block(C, o, o, 3, 3, Cb, 3));
    if (S->form == MBS_SE3) { /* d(-m Omega x U): -m Omega~ on U, m U~ on Omega, one 3 x 6 block (each
                               * position added once: the sums of one add per entry in any order) */
      double CU[3][6];
      lv_hat3(W, A);
      lv_hat3(v + e->voff, B);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) CU[i][j] = -e->m * A[3 * i + j], CU[i][3 + j] = e->m * B[3 * i + j];
      LV_CHECK(lv_sink_add_block(C, e->voff, e->voff, 3, 6, CU[0], 6));
    }
  }
  return 0;
}

/* r = x_a(Xa) - x_b(Xb) of spring p and Dr = [D_a, -D_b] (3 x L->n,
 * row-major); pi = |r|^2. */
static double spring_eval(const mbs_sys *S, const mbs_spring *p, const double *q, jloc *L, double r[3], double *Dr) {
  L->e[0] = &S->el[p->el[0]];
  L->e[1] = &S->el[p->el[1]];
  L->off[0] = 0;
  L->off[1] = L->e[0]->nv;
  L->n = L->e[0]->nv + L->e[1]->nv;
  double y[2][3], D[3 * MBS_NV_MAX];
  for (int k = 0; k < 2; k++) {
    const mbs_elem *e = L->e[k];
    mbs_term t;
    t.slot = k, t.axis = 0;
    memcpy(t.X, p->X[k], sizeof t.X);
    mbs_map(S->form, e, q + e->qoff, &t, y[k], D);
    if (Dr)
      for (int i = 0; i < 3; i++)
        for (int c = 0; c < e->nv; c++) Dr[i * L->n + L->off[k] + c] = (k ? -1.0 : 1.0) * D[i * e->nv + c];
  }
  for (int i = 0; i < 3; i++) r[i] = y[0][i] - y[1][i];
  return mbs_dot3(r, r);
}

/* Vt(pi) = 1/2 k (sqrt(pi) - L0)^2 and its first two derivatives */
static double spring_vt(const mbs_spring *p, double pi, double *d1, double *d2) {
  if (p->sq) { /* Vt(pi) = 1/2 k (pi - L0^2)^2 */
    double e = pi - p->L0 * p->L0;
    if (d1) *d1 = p->k * e;
    if (d2) *d2 = p->k;
    return 0.5 * p->k * e * e;
  }
  double l = sqrt(pi);
  if (d1) *d1 = p->L0 == 0.0 ? 0.5 * p->k : 0.5 * p->k * (1.0 - p->L0 / l);
  if (d2) *d2 = p->L0 == 0.0 ? 0.0 : 0.25 * p->k * p->L0 / (pi * l);
  return 0.5 * p->k * (l - p->L0) * (l - p->L0);
}

static int spring_pp(const mbs_sys *S, const mbs_spring *p, const double *q, double r[3], int o[2]);

static int cb_V_springs(const double *q, double *V, void *u) {
  const mbs_sys *S = u;
  LV_CHECK(cb_V(q, V, u));
  for (int k = 0; k < S->nsp; k++) {
    jloc L;
    double r[3];
    int o[2];
    double pi = spring_pp(S, &S->sp[k], q, r, o) ? mbs_dot3(r, r) : spring_eval(S, &S->sp[k], q, &L, r, NULL);
    *V += spring_vt(&S->sp[k], pi, NULL, NULL);
  }
  return mbs_torsion_V(S, q, V);
}

/* A spring between particles (or a particle and a ground point): its maps
 * are the positions (Dr = [I, -I]), so the callbacks below write it without
 * forming Dr (the particle systems' fast path, as for the pp joints; the
 * same numbers in the same order).  1 and r = y_a - y_b, the tangent
 * offsets o[s] of the slots (-1: ground), or 0 for any other spring. */
static int spring_pp(const mbs_sys *S, const mbs_spring *p, const double *q, double r[3], int o[2]) {
  const double *y[2];
  for (int k = 0; k < 2; k++) {
    const mbs_elem *e = &S->el[p->el[k]];
    if (e->kind == MBS_BODY || (e->kind == MBS_PARTICLE && e->pdim != 3)) return 0; /* planar: spring_eval */
    int gr = e->kind == MBS_GROUND;
    o[k] = gr ? -1 : e->voff;
    y[k] = gr ? p->X[k] : q + e->qoff;
  }
  for (int i = 0; i < 3; i++) r[i] = y[0][i] - y[1][i];
  return 1;
}

static int cb_dV_springs(const double *q, double *dV, void *u) {
  const mbs_sys *S = u;
  LV_CHECK(cb_dV(q, dV, u));
  double Dr[3 * 2 * MBS_NV_MAX];
  for (int k = 0; k < S->nsp; k++) {
    jloc L;
    double r[3], d1;
    int o[2];
    if (spring_pp(S, &S->sp[k], q, r, o)) {
      spring_vt(&S->sp[k], mbs_dot3(r, r), &d1, NULL);
      for (int sl = 0; sl < 2; sl++)
        for (int i = 0; o[sl] >= 0 && i < 3; i++) dV[o[sl] + i] += 2.0 * d1 * (sl ? -r[i] : r[i]);
      continue;
    }
    spring_vt(&S->sp[k], spring_eval(S, &S->sp[k], q, &L, r, Dr), &d1, NULL);
    for (int c = 0; c < L.n; c++)
      dV[jloc_global(&L, c)] += 2.0 * d1 * (r[0] * Dr[c] + r[1] * Dr[L.n + c] + r[2] * Dr[2 * L.n + c]);
  }
  return mbs_torsion_dV(S, q, dV);
}

/* D_q dV: Dr^T (2 Vt' I + 4 Vt'' r r^T) Dr + D_q(D_a^T f) - D_q(D_b^T f), f = 2 Vt' r */
static int cb_d2V_springs(const double *q, lv_sink *H, void *u) {
  const mbs_sys *S = u;
  LV_CHECK(cb_d2V(q, H, u));
  double Dr[3 * 2 * MBS_NV_MAX], Hl[4 * MBS_NV_MAX * MBS_NV_MAX];
  for (int k = 0; k < S->nsp; k++) {
    jloc L;
    double r[3], d1, d2;
    const mbs_spring *p = &S->sp[k];
    int o[2];
    if (spring_pp(S, p, q, r, o)) { /* blocks +-(2 Vt' I + 4 Vt'' r r^T) */
      spring_vt(p, mbs_dot3(r, r), &d1, &d2);
      double B[3][3]; /* the block, formed once */
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) B[a][b] = 2.0 * d1 * (a == b) + 4.0 * d2 * r[a] * r[b];
      if (o[0] >= 0 && o[1] >= 0) { /* two particles: the same adds, the signs and origins taken out */
        double nB[3][3];
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++) nB[a][b] = -B[a][b];
        /* four 3 x 3 blocks: within every row and every column the adds of
         * one per entry in the same order (the particles' positions are
         * disjoint) */
        for (int ka = 0; ka < 2; ka++) {
          LV_CHECK(lv_sink_add_block(H, o[ka], o[0], 3, 3, ka ? nB[0] : B[0], 3));
          LV_CHECK(lv_sink_add_block(H, o[ka], o[1], 3, 3, ka ? B[0] : nB[0], 3));
        }
        continue;
      }
      for (int ka = 0; ka < 2; ka++)
        for (int a = 0; o[ka] >= 0 && a < 3; a++)
          for (int kb = 0; kb < 2; kb++)
            for (int b = 0; o[kb] >= 0 && b < 3; b++)
              LV_CHECK(lv_sink_add(H, o[ka] + a, o[kb] + b, ka == kb ? B[a][b] : -B[a][b]));
      continue;
    }
    spring_vt(p, spring_eval(S, p, q, &L, r, Dr), &d1, &d2);
    int n = L.n;
    double f[3] = {2.0 * d1 * r[0], 2.0 * d1 * r[1], 2.0 * d1 * r[2]}, rD[2 * MBS_NV_MAX];
    for (int c = 0; c < n; c++) rD[c] = r[0] * Dr[c] + r[1] * Dr[n + c] + r[2] * Dr[2 * n + c];
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        Hl[a * n + b] = 2.0 * d1 * (Dr[a] * Dr[b] + Dr[n + a] * Dr[n + b] + Dr[2 * n + a] * Dr[2 * n + b]) +
                        4.0 * d2 * rD[a] * rD[b];
    for (int sl = 0; sl < 2; sl++) {
      const mbs_elem *e = L.e[sl];
      if (!e->nv) continue;
      mbs_term t;
      t.slot = sl, t.axis = 0;
      memcpy(t.X, p->X[sl], sizeof t.X);
      mbs_map_hess(S->form, e, q + e->qoff, &t, f, sl ? -1.0 : 1.0, Hl + L.off[sl] * n + L.off[sl], n);
    }
    LV_CHECK(mbs_add_pair_square(H, L.e[0], L.e[1], Hl)); /* at jloc_global(a), jloc_global(b) */
  }
  return mbs_torsion_d2V(S, q, H);
}

/* Invariants for EM (directors, linear spring maps): pi = |r|^2 per spring,
 * then g . x_cm per element when there is gravity. */
static int cb_pi(const double *q, double *pi, void *u) {
  const mbs_sys *S = u;
  for (int k = 0; k < S->nsp; k++) {
    jloc L;
    double r[3];
    int o[2];
    pi[k] = spring_pp(S, &S->sp[k], q, r, o) ? mbs_dot3(r, r) : spring_eval(S, &S->sp[k], q, &L, r, NULL);
  }
  for (int k = S->nsp; k < S->ninv; k++) {
    const mbs_elem *e = &S->el[1 + k - S->nsp];
    const double *x = q + e->qoff;
    pi[k] = mbs_ntrans(e) == 3 ? mbs_dot3(S->grav, x) : S->grav[0] * x[0] + S->grav[1] * x[1];
  }
  return 0;
}

static int cb_dpi(const double *q, lv_sink *D, void *u) {
  const mbs_sys *S = u;
  double Dr[3 * 2 * MBS_NV_MAX];
  for (int k = 0; k < S->nsp; k++) {
    jloc L;
    double r[3];
    int o[2];
    if (spring_pp(S, &S->sp[k], q, r, o)) {
      for (int sl = 0; sl < 2; sl++)
        for (int i = 0; o[sl] >= 0 && i < 3; i++) LV_CHECK(lv_sink_add(D, k, o[sl] + i, 2.0 * (sl ? -r[i] : r[i])));
      continue;
    }
    spring_eval(S, &S->sp[k], q, &L, r, Dr);
    for (int c = 0; c < L.n; c++)
      LV_CHECK(lv_sink_add(D, k, jloc_global(&L, c),
                           2.0 * (r[0] * Dr[c] + r[1] * Dr[L.n + c] + r[2] * Dr[2 * L.n + c])));
  }
  for (int k = S->nsp; k < S->ninv; k++) {
    const mbs_elem *e = &S->el[1 + k - S->nsp];
    for (int i = 0; i < mbs_ntrans(e); i++) LV_CHECK(lv_sink_add(D, k, e->voff + i, S->grav[i]));
  }
  return 0;
}

static int cb_vt(const double *pi, double *vt, double *dvt, void *u) {
  const mbs_sys *S = u;
  for (int k = 0; k < S->nsp; k++) vt[k] = spring_vt(&S->sp[k], pi[k], &dvt[k], NULL);
  for (int k = S->nsp; k < S->ninv; k++) {
    double m = S->el[1 + k - S->nsp].m;
    vt[k] = -m * pi[k];
    dvt[k] = -m;
  }
  return 0;
}

/* Damper p at (q, v): r, Dr (3 x n), Cr = D_q(Dr v) (3 x n), r' = Dr v and
 * mu = (r . r') / (r . r); the force is f = -c mu Dr^T r. */
static double damper_eval(const mbs_sys *S, const mbs_spring *p, const double *q, const double *v, jloc *L,
                          double r[3], double *Dr, double *Cr, double rd[3]) {
  double rr = spring_eval(S, p, q, L, r, Dr);
  int n = L->n;
  double vl[2 * MBS_NV_MAX];
  for (int c = 0; c < n; c++) vl[c] = v[jloc_global(L, c)];
  for (int i = 0; i < 3; i++) {
    rd[i] = 0.0;
    for (int c = 0; c < n; c++) rd[i] += Dr[i * n + c] * vl[c];
  }
  if (Cr) {
    memset(Cr, 0, (size_t)(3 * n) * sizeof(double));
    for (int sl = 0; sl < 2; sl++) {
      const mbs_elem *e = L->e[sl];
      if (!e->nv) continue;
      double C[3 * MBS_NV_MAX];
      memset(C, 0, sizeof C);
      mbs_term t;
      t.slot = sl, t.axis = 0;
      memcpy(t.X, p->X[sl], sizeof t.X);
      mbs_map_curv(S->form, e, q + e->qoff, &t, v + e->voff, C, e->nv);
      for (int i = 0; i < 3; i++)
        for (int c = 0; c < e->nv; c++) Cr[i * n + L->off[sl] + c] = (sl ? -1.0 : 1.0) * C[i * e->nv + c];
    }
  }
  return mbs_dot3(r, rd) / rr;
}

static int cb_force_all(double t, const double *q, const double *v, double *f, void *u) {
  const mbs_sys *S = u;
  if (S->form != MBS_DIRECTORS)
    LV_CHECK(cb_force(t, q, v, f, u));
  else
    memset(f, 0, (size_t)S->nv * sizeof(double));
  double Dr[3 * 2 * MBS_NV_MAX];
  for (int k = 0; k < S->ndp; k++) {
    jloc L;
    double r[3], rd[3];
    double mu = damper_eval(S, &S->dp[k], q, v, &L, r, Dr, NULL, rd), c = S->dp[k].k;
    for (int a = 0; a < L.n; a++)
      f[jloc_global(&L, a)] -= c * mu * (r[0] * Dr[a] + r[1] * Dr[L.n + a] + r[2] * Dr[2 * L.n + a]);
  }
  return mbs_forces_f(S, t, q, v, f);
}

/* df/dv = -c/(r . r) (Dr^T r)(Dr^T r)^T */
static int cb_force_dv_all(double t, const double *q, const double *v, lv_sink *C, void *u) {
  const mbs_sys *S = u;
  if (S->form != MBS_DIRECTORS) LV_CHECK(cb_force_dv(t, q, v, C, u));
  double Dr[3 * 2 * MBS_NV_MAX], Rt[2 * MBS_NV_MAX];
  for (int k = 0; k < S->ndp; k++) {
    jloc L;
    double r[3], rd[3];
    damper_eval(S, &S->dp[k], q, v, &L, r, Dr, NULL, rd);
    double s = -S->dp[k].k / mbs_dot3(r, r);
    int n = L.n;
    for (int a = 0; a < n; a++) Rt[a] = r[0] * Dr[a] + r[1] * Dr[n + a] + r[2] * Dr[2 * n + a];
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) LV_CHECK(lv_sink_add(C, jloc_global(&L, a), jloc_global(&L, b), s * Rt[a] * Rt[b]));
  }
  return mbs_forces_dv(S, t, q, v, C);
}

/* df/dq = -c [ (Dr^T r) dmu/dq + mu (Dr^T Dr + D_q(D_a^T r) - D_q(D_b^T r)) ],
 * dmu/dq = (r'^T Dr + r^T Cr - 2 mu r^T Dr) / (r . r) */
static int cb_force_dq_all(double t, const double *q, const double *v, lv_sink *K, void *u) {
  const mbs_sys *S = u;
  if (S->form != MBS_DIRECTORS) LV_CHECK(cb_force_dq(t, q, v, K, u));
  double Dr[3 * 2 * MBS_NV_MAX], Cr[3 * 2 * MBS_NV_MAX], Rt[2 * MBS_NV_MAX], dmu[2 * MBS_NV_MAX];
  double Hl[4 * MBS_NV_MAX * MBS_NV_MAX];
  for (int k = 0; k < S->ndp; k++) {
    jloc L;
    double r[3], rd[3];
    const mbs_spring *p = &S->dp[k];
    double mu = damper_eval(S, p, q, v, &L, r, Dr, Cr, rd), rr = mbs_dot3(r, r), c = p->k;
    int n = L.n;
    for (int a = 0; a < n; a++) {
      Rt[a] = r[0] * Dr[a] + r[1] * Dr[n + a] + r[2] * Dr[2 * n + a];
      double rdD = rd[0] * Dr[a] + rd[1] * Dr[n + a] + rd[2] * Dr[2 * n + a];
      double rC = r[0] * Cr[a] + r[1] * Cr[n + a] + r[2] * Cr[2 * n + a];
      dmu[a] = (rdD + rC - 2.0 * mu * Rt[a]) / rr;
    }
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        Hl[a * n + b] = mu * (Dr[a] * Dr[b] + Dr[n + a] * Dr[n + b] + Dr[2 * n + a] * Dr[2 * n + b]);
    for (int sl = 0; sl < 2; sl++) {
      const mbs_elem *e = L.e[sl];
      if (!e->nv) continue;
      mbs_term tt;
      tt.slot = sl, tt.axis = 0;
      memcpy(tt.X, p->X[sl], sizeof tt.X);
      mbs_map_hess(S->form, e, q + e->qoff, &tt, r, sl ? -mu : mu, Hl + L.off[sl] * n + L.off[sl], n);
    }
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        LV_CHECK(lv_sink_add(K, jloc_global(&L, a), jloc_global(&L, b), -c * (Rt[a] * dmu[b] + Hl[a * n + b])));
  }
  return mbs_forces_dq(S, t, q, v, K);
}

/* ---- distance joints between particles: the particle systems' fast path
 * (chains, pendulums, bar-and-spring systems) ----
 * A row ds/2 (|y_0 - y_1|^2 - L2) on the positions y_s of slot s's
 * particle (or its ground point): G = ds [d^T, -d^T], H(gam) = gam ds
 * [[I, -I], [-I, I]], Z(w) = ds (w_0 - w_1)^T [I, -I], d = y_0 - y_1; the
 * same numbers, in the same order, as joint_eval's scatter lists.  A planar
 * particle's position is (x, y, 0) and its blocks have its two
 * coordinates only (I2, and [I2 0] against a spatial particle). */
static int pp_joint(const mbs_sys *S, const mbs_joint *J) {
  if (J->nrows != 1 || !J->rows[0].dist) return 0;
  for (int k = 0; k < 2; k++)
    if (S->el[J->el[k]].kind == MBS_BODY) return 0;
  return J->rows[0].t[0].slot == 0 && J->rows[0].t[1].slot == 1;
}

/* d = y_0 - y_1, the tangent offsets o[s] of the slots (-1: ground) and
 * their coordinate counts n[s] (3, or 2 for a planar particle) */
static inline const mbs_row *pp_diff(const mbs_joint *J, const double *q, double d[3], int o[2], int n[2]) {
  const mbs_row *R = J->rows;
  double y[2][3]; /* constant indices once unrolled: kept in registers */
  for (int k = 0; k < 2; k++) {
    o[k] = J->ppo[k];
    n[k] = J->ppn[k];
    const double *p = o[k] < 0 ? R->t[k].X : q + J->ppq[k];
    y[k][0] = p[0], y[k][1] = p[1];
    y[k][2] = n[k] == 3 ? p[2] : 0.0; /* a planar particle: (x, y, 0) */
  }
  for (int i = 0; i < 3; i++) d[i] = y[0][i] - y[1][i];
  return R;
}

/* H's diagonal block on particle e: one entry per coordinate (as many as
 * a hand-written chain adds), the sum over its distance joints (h_walk) */
static inline double pp_diag_sum(const mbs_sys *S, int e, const double *gam) {
  double s = 0.0;
  for (int k = S->ppoff[e]; k < S->ppoff[e + 1]; k++) {
    const mbs_joint *J = &S->j[S->ppj[k]];
    s += gam[J->row0] * J->rows[0].ds;
  }
  return s;
}

/* the pp joints' slots (mbs_joint.ppo, ppn, ppq), and the CSR lists
 * ppoff, ppj of the pp joints at each element */
static int pp_lists(mbs_sys *S) {
  int n = 0;
  for (int k = 0; k < S->nj; k++) {
    mbs_joint *J = &S->j[k];
    n += J->pp;
    for (int sl = 0; J->pp && sl < 2; sl++) {
      const mbs_elem *e = &S->el[J->el[sl]];
      int gr = e->kind == MBS_GROUND;
      J->ppo[sl] = gr ? -1 : e->voff;
      J->ppn[sl] = gr ? 3 : e->pdim;
      J->ppq[sl] = gr ? -1 : e->qoff;
    }
  }
  if (!n) return 0;
  S->ppoff = lv_calloc((size_t)S->nel + 1, sizeof(int));
  S->ppj = lv_calloc((size_t)(2 * n), sizeof(int));
  if (!S->ppoff || !S->ppj) return LV_ENOMEM;
  for (int k = 0; k < S->nj; k++) /* counts, then offsets */
    for (int sl = 0; S->j[k].pp && sl < 2; sl++)
      if (S->el[S->j[k].el[sl]].kind != MBS_GROUND) S->ppoff[S->j[k].el[sl] + 1]++;
  for (int e = 0; e < S->nel; e++) S->ppoff[e + 1] += S->ppoff[e];
  int *pos = lv_calloc((size_t)S->nel, sizeof(int));
  if (!pos) return LV_ENOMEM;
  memcpy(pos, S->ppoff, (size_t)S->nel * sizeof(int));
  for (int k = 0; k < S->nj; k++)
    for (int sl = 0; S->j[k].pp && sl < 2; sl++)
      if (S->el[S->j[k].el[sl]].kind != MBS_GROUND) S->ppj[pos[S->j[k].el[sl]]++] = k;
  free(pos);
  return 0;
}

/* the tangent offsets of a joint's slots (-1: ground) and their
 * coordinate counts */
static inline void pp_offsets(const mbs_joint *J, int o[2], int n[2]) {
  for (int k = 0; k < 2; k++) o[k] = J->ppo[k], n[k] = J->ppn[k];
}

/* ---- configuration cache ----
 * A step evaluates g and G at the same configuration several times (a
 * Newton residual needs both, the divergence guard and the output both
 * again at the accepted one): per thread, the last configuration of a small
 * model, its g and its joints' local G (before the scatter through the
 * sink, which every call still makes).  The values are those the
 * callbacks compute, so a hit gives the same bits.  Keyed by the model's
 * serial (unique per build, so a freed model's entry never matches a new
 * one) and the configuration itself; per thread, so models shared between
 * threads stay read-only. */
#define MBS_CACHE_NQ 64
#define MBS_CACHE_NC 64
#define MBS_CACHE_NG 1024
typedef struct {
  unsigned long serial;
  int has_G;
  double q[MBS_CACHE_NQ], g[MBS_CACHE_NC], G[MBS_CACHE_NG];
} mbs_cache;
static _Thread_local mbs_cache cfg_cache;
static atomic_ulong cache_serials;

/* The serial of a built system whose g and local G fit the cache and
 * whose joints have maps to evaluate. */
static void cache_setup(mbs_sys *S) {
  int ng = 0;
  S->serial = 0;
  for (int k = 0; k < S->nj; k++) {
    mbs_joint *J = &S->j[k];
    if (J->pp || J->x->lin) continue;
    jloc L;
    jloc_init(S, J, &L);
    J->coff = ng;
    ng += J->nrows * L.n;
  }
  /* nothing to keep when every joint is written directly (particles and
   * their distance joints, directors' constant maps): a miss would only
   * add the comparison and the copies */
  if (ng == 0 || S->nq > MBS_CACHE_NQ || S->nc > MBS_CACHE_NC || ng > MBS_CACHE_NG) return;
  S->serial = atomic_fetch_add(&cache_serials, 1) + 1;
}

static int cache_hit(const mbs_sys *S, const double *q) {
  return cfg_cache.serial == S->serial && memcmp(cfg_cache.q, q, (size_t)S->nq * sizeof(double)) == 0;
}

/* g, and if Gc the joints' local G into Gc at their offsets */
static void eval_g(const mbs_sys *S, const double *q, double *g, double *Gc) {
  for (int k = 0; k < S->nj; k++) {
    const mbs_joint *J = &S->j[k];
    if (J->pp) {
      double d[3];
      int o[2], n[2];
      const mbs_row *R = pp_diff(J, q, d, o, n);
      g[J->row0] = 0.5 * R->ds * (mbs_dot3(d, d) - R->L2);
      continue;
    }
    jloc L;
    jloc_init(S, J, &L);
    joint_eval(S->form, J, &L, q, NULL, NULL, g + J->row0, Gc && !J->x->lin ? Gc + J->coff : NULL, NULL, NULL);
  }
  if (S->form == MBS_EP) mbs_vec_norm_g(S, q, g);
}

static int cb_g(const double *q, double *g, void *u) {
  const mbs_sys *S = u;
  if (S->serial) {
    if (!cache_hit(S, q)) {
      cfg_cache.serial = 0; /* incomplete until g is in */
      eval_g(S, q, cfg_cache.g, NULL);
      cfg_cache.has_G = 0;
      memcpy(cfg_cache.q, q, (size_t)S->nq * sizeof(double));
      cfg_cache.serial = S->serial;
    }
    memcpy(g, cfg_cache.g, (size_t)S->nc * sizeof(double));
    return 0;
  }
  eval_g(S, q, g, NULL);
  return 0;
}

/* A cached model's g and joints' local G at q in the cache (S->serial). */
static inline void cache_G(const mbs_sys *S, const double *q) {
  if (cache_hit(S, q) && cfg_cache.has_G) return;
  cfg_cache.serial = 0; /* incomplete until g and G are in */
  eval_g(S, q, cfg_cache.g, cfg_cache.G);
  cfg_cache.has_G = 1;
  memcpy(cfg_cache.q, q, (size_t)S->nq * sizeof(double));
  cfg_cache.serial = S->serial;
}

/* Entry e of a linear-form joint's G at q: its constant plus the linear terms. */
static inline double lin_G_entry(const struct mbs_jmat *X, int e, const double *q) {
  double v = X->Gc[e];
  for (int t = X->Gs[e]; t < X->Gs[e + 1]; t++) v += X->Gk[t] * q[X->Gi[t]];
  return v;
}

/* A joint's local G at q: from the configuration cache (filled by cache_G)
 * for a cached model, else evaluated into Gl. */
static inline const double *joint_G_local(const mbs_sys *S, const mbs_joint *J, const double *q, double *Gl) {
  if (S->serial) return cfg_cache.G + J->coff;
  jloc L;
  jloc_init(S, J, &L);
  joint_eval(S->form, J, &L, q, NULL, NULL, NULL, Gl, NULL, NULL);
  return Gl;
}

#if defined(__GNUC__)
#define GP_INLINE static inline __attribute__((always_inline))
#else
#define GP_INLINE static inline
#endif

/* G's entries in the one order every use of them follows (cb_G through a
 * sink, cb_Gvals as values, gp_walk as products): joint by joint, a
 * distance joint between particles as ds [d^T, -d^T] on its slots (or
 * through the caller's pp: gp_walk's fused products), a linear-form joint
 * from its coefficients, any other from its local G (the configuration
 * cache's for a cached model), in its scatter list's order; then the Euler
 * parameters' norm rows.  emit(ctx, i, j, v) takes each entry; the walker
 * is instantiated per use (emit and pp constants there, inlined). */
typedef int (*g_emit_fn)(void *ctx, int i, int j, double v);
typedef void (*g_pp_fn)(void *ctx, const mbs_joint *J, const double *q);

GP_INLINE int g_walk(const mbs_sys *S, const double *q, void *ctx, const g_emit_fn emit, const g_pp_fn pp) {
  double Gl[6 * NLOC];
  if (S->serial) cache_G(S, q);
  for (int k = 0; k < S->nj; k++) {
    const mbs_joint *J = &S->j[k];
    if (J->pp) {
      if (pp) {
        pp(ctx, J, q);
        continue;
      }
      double d[3];
      int o[2], n[2];
      const mbs_row *R = pp_diff(J, q, d, o, n);
      for (int t = 0; t < 2; t++) {
        if (o[t] < 0) continue;
        for (int i = 0; i < n[t]; i++) {
          double f = R->ds * d[i];
          LV_CHECK(emit(ctx, J->row0, o[t] + i, t ? -f : f));
        }
      }
      continue;
    }
    const struct mbs_jmat *X = J->x;
    if (X->lin) {
      for (int e = 0; e < X->nG; e++) LV_CHECK(emit(ctx, X->sG[3 * e + 1], X->sG[3 * e + 2], lin_G_entry(X, e, q)));
      continue;
    }
    const double *Gj = joint_G_local(S, J, q, Gl);
    for (const int *e = X->sG; e < X->sG + 3 * X->nG; e += 3) LV_CHECK(emit(ctx, e[1], e[2], Gj[e[0]]));
  }
  if (S->form == MBS_EP) /* one norm row per body: q's four Euler parameters */
    for (int b = 1; b < S->nel; b++) {
      const mbs_elem *e = &S->el[b];
      if (e->kind != MBS_BODY) continue;
      for (int i = 0; i < 4; i++) LV_CHECK(emit(ctx, e->nrow, e->voff + 3 + i, q[e->qoff + 3 + i]));
    }
  return 0;
}

GP_INLINE int g_emit_sink(void *ctx, int i, int j, double v) { return lv_sink_add(ctx, i, j, v); }

static int cb_G(const double *q, lv_sink *G, void *u) { return g_walk(u, q, G, g_emit_sink, NULL); }

/* cb_G's entries in cb_G's order as values (lv_model_set_G_values): the
 * first cap into v, the count returned.  A capture of G that holds cb_G's
 * recording takes them into its slots without a sink call per entry. */
typedef struct {
  double *v;
  size_t n, cap;
} g_values;

GP_INLINE int g_emit_value(void *ctx, int i, int j, double a) {
  (void)i, (void)j;
  g_values *g = ctx;
  if (g->n < g->cap) g->v[g->n] = a;
  g->n++;
  return 0;
}

static size_t cb_Gvals(const double *q, double *v, size_t cap, void *u) {
  g_values g = {v, 0, cap};
  g_walk(u, q, &g, g_emit_value, NULL);
  return g.n;
}

/* y += op(G) x directly (lv_model_set_G_product): cb_G's entries in cb_G's
 * order, without a sink call per entry (x and y never overlap: the model's
 * products are called with the scheme's distinct vectors).  gp_walk is
 * instantiated once per mode (a constant there), so the per-entry switch
 * folds away. */
typedef struct {
  const double *x;
  double *y;
  int mode;
} gprod;

GP_INLINE void gp_add(const gprod *P, int i, int j, double a) {
  switch (P->mode) {
  case 0: P->y[i] += a * P->x[j]; break;
  case LV_GPROD_T: P->y[j] += a * P->x[i]; break;
  case LV_GPROD_ABS: P->y[i] += fabs(a) * fabs(P->x[j]); break;
  default: P->y[j] += fabs(a) * fabs(P->x[i]); break;
  }
}

GP_INLINE int gp_emit(void *ctx, int i, int j, double a) {
  gp_add(ctx, i, j, a);
  return 0;
}

/* A distance joint between particles in g_walk's sums, each product formed
 * once (x and y do not overlap). */
GP_INLINE void gp_pp(void *ctx, const mbs_joint *J, const double *q) {
  const gprod *P = ctx;
  const double *x = P->x;
  double *y = P->y;
  const int mode = P->mode;
  double d[3];
  int o[2], n[2];
  const mbs_row *R = pp_diff(J, q, d, o, n);
  const double ds = R->ds;
  if (mode & LV_GPROD_T) {
    /* gp_add's sums: slot 0 adds t_i = (ds d_i) x[row0], slot 1 adds
     * (-ds d_i) x[row0] = -t_i (rounding is symmetric), i.e. subtracts
     * t_i; with LV_GPROD_ABS both add |ds d_i| |x[row0]|.  x[row0] is
     * read once and each product formed once. */
    const double xr = x[J->row0];
    double t[3];
    for (int i = 0; i < 3; i++) {
      double f = ds * d[i];
      t[i] = (mode & LV_GPROD_ABS) ? fabs(f) * fabs(xr) : f * xr;
    }
    if (o[0] >= 0) {
      double *ys = y + o[0];
      ys[0] += t[0], ys[1] += t[1];
      if (n[0] == 3) ys[2] += t[2];
    }
    if (o[1] >= 0) {
      double *ys = y + o[1];
      if (mode & LV_GPROD_ABS) {
        ys[0] += t[0], ys[1] += t[1];
        if (n[1] == 3) ys[2] += t[2];
      } else {
        ys[0] -= t[0], ys[1] -= t[1];
        if (n[1] == 3) ys[2] -= t[2];
      }
    }
    return;
  }
  /* G x: gp_add's sums into y[row0], in the same order, kept in a local */
  double acc = y[J->row0];
  for (int s = 0; s < 2; s++) {
    if (o[s] < 0) continue;
    const double *xs = x + o[s];
    for (int i = 0; i < n[s]; i++) {
      double f = ds * d[i], a = s ? -f : f;
      acc += (mode & LV_GPROD_ABS) ? fabs(a) * fabs(xs[i]) : a * xs[i];
    }
  }
  y[J->row0] = acc;
}

GP_INLINE void gp_walk(const mbs_sys *S, const double *q, const double *x, double *y, const int mode) {
  gprod P = {x, y, mode};
  g_walk(S, q, &P, gp_emit, gp_pp);
}

static int cb_Gprod(const double *q, const double *x, double *y, int mode, void *u) {
  const mbs_sys *S = u;
  switch (mode) {
  case 0: gp_walk(S, q, x, y, 0); break;
  case LV_GPROD_T: gp_walk(S, q, x, y, LV_GPROD_T); break;
  case LV_GPROD_ABS: gp_walk(S, q, x, y, LV_GPROD_ABS); break;
  default: gp_walk(S, q, x, y, LV_GPROD_T | LV_GPROD_ABS); break;
  }
  return 0;
}

/* a linear-form joint's entry e of H(q; gam) (its coefficients times the
 * multipliers), and a joint's local H from its evaluation: cb_H and the
 * direct product hp_walk take both from here */
static inline double lin_H_entry(const struct mbs_jmat *X, int e, const double *gam) {
  double v = 0.0;
  for (int t = X->Hs[e]; t < X->Hs[e + 1]; t++) v += X->Hk[t] * gam[X->Hi[t]];
  return v;
}

static inline void joint_H_local(const mbs_sys *S, const mbs_joint *J, const double *q, const double *gam,
                                 double *Hl) {
  jloc L;
  jloc_init(S, J, &L);
  joint_eval(S->form, J, &L, q, gam + J->row0, NULL, NULL, NULL, Hl, NULL);
}

/* H(q; gam)'s entries in the one order cb_H and hp_walk follow: the
 * particles' diagonal blocks (each coordinate's sum over its distance
 * joints, pp_diag_sum), then joint by joint the off-diagonal blocks of a
 * distance joint between particles (-gam ds on both, entry by entry), a
 * linear-form joint from its coefficients, any other from its local H in
 * its scatter list's order; then the Euler parameters' norm rows (gam of
 * the row on the four parameters' diagonal).  emit as g_walk's. */
GP_INLINE int h_walk(const mbs_sys *S, const double *q, const double *gam, void *ctx, const g_emit_fn emit) {
  double Hl[NLOC * NLOC];
  if (S->ppoff)
    for (int e = 1; e < S->nel; e++) {
      if (S->ppoff[e + 1] == S->ppoff[e]) continue;
      double s = pp_diag_sum(S, e, gam);
      for (int i = 0; i < S->el[e].pdim; i++) LV_CHECK(emit(ctx, S->el[e].voff + i, S->el[e].voff + i, s));
    }
  for (int k = 0; k < S->nj; k++) {
    const mbs_joint *J = &S->j[k];
    if (J->pp) {
      int o[2], n[2];
      pp_offsets(J, o, n);
      double s = gam[J->row0] * J->rows[0].ds;
      if (o[0] < 0 || o[1] < 0) continue;
      for (int i = 0; i < (n[0] < n[1] ? n[0] : n[1]); i++) {
        LV_CHECK(emit(ctx, o[0] + i, o[1] + i, -s));
        LV_CHECK(emit(ctx, o[1] + i, o[0] + i, -s));
      }
      continue;
    }
    const struct mbs_jmat *X = J->x;
    if (X->lin) {
      for (int e = 0; e < X->nH; e++) LV_CHECK(emit(ctx, X->sH[3 * e + 1], X->sH[3 * e + 2], lin_H_entry(X, e, gam)));
      continue;
    }
    joint_H_local(S, J, q, gam, Hl);
    for (const int *e = X->sH; e < X->sH + 3 * X->nH; e += 3) LV_CHECK(emit(ctx, e[1], e[2], Hl[e[0]]));
  }
  if (S->form == MBS_EP)
    for (int b = 1; b < S->nel; b++) {
      const mbs_elem *e = &S->el[b];
      if (e->kind != MBS_BODY) continue;
      for (int i = 0; i < 4; i++) LV_CHECK(emit(ctx, e->voff + 3 + i, e->voff + 3 + i, gam[e->nrow]));
    }
  return 0;
}

static int cb_H(const double *q, const double *gam, lv_sink *H, void *u) {
  return h_walk(u, q, gam, H, g_emit_sink);
}

/* cb_H's entries in cb_H's order as values (lv_model_set_H_values), as
 * cb_Gvals gives G's */
static size_t cb_Hvals(const double *q, const double *gam, double *v, size_t cap, void *u) {
  g_values g = {v, 0, cap};
  h_walk(u, q, gam, &g, g_emit_value);
  return g.n;
}

/* y += op(H(q; gam)) x directly (lv_model_set_H_product): h_walk's entries
 * through gp_add (per mode, as gp_walk).  The Euler parameters' norm rows
 * are left to the sink path (status 1). */
GP_INLINE int hp_walk(const mbs_sys *S, const double *q, const double *gam, const double *x, double *y,
                      const int mode) {
  if (S->form == MBS_EP) return 1;
  gprod P = {x, y, mode};
  return h_walk(S, q, gam, &P, gp_emit);
}

static int cb_Hprod(const double *q, const double *gam, const double *x, double *y, int mode, void *u) {
  const mbs_sys *S = u;
  switch (mode) {
  case 0: return hp_walk(S, q, gam, x, y, 0);
  case LV_GPROD_T: return hp_walk(S, q, gam, x, y, LV_GPROD_T);
  case LV_GPROD_ABS: return hp_walk(S, q, gam, x, y, LV_GPROD_ABS);
  default: return hp_walk(S, q, gam, x, y, LV_GPROD_T | LV_GPROD_ABS);
  }
}

/* Z(q; w)'s entries in the one order cb_Z and cb_Zvals follow: joint by
 * joint, a distance joint between particles as ds (w_0 - w_1)^T [I, -I] on
 * its slots, a linear-form joint from its coefficients, any other from its
 * local Z in its scatter list's order; then the Euler parameters' norm
 * rows (w on the four parameters).  emit as g_walk's. */
GP_INLINE int z_walk(const mbs_sys *S, const double *q, const double *w, void *ctx, const g_emit_fn emit) {
  double Zl[6 * NLOC];
  for (int k = 0; k < S->nj; k++) {
    const mbs_joint *J = &S->j[k];
    if (J->pp) {
      int o[2], n[2];
      pp_offsets(J, o, n);
      double ds = J->rows[0].ds, z[3];
      for (int i = 0; i < 3; i++)
        z[i] = ds * ((o[0] >= 0 && i < n[0] ? w[o[0] + i] : 0.0) - (o[1] >= 0 && i < n[1] ? w[o[1] + i] : 0.0));
      for (int t = 0; t < 2; t++) {
        if (o[t] < 0) continue;
        for (int i = 0; i < n[t]; i++) LV_CHECK(emit(ctx, J->row0, o[t] + i, t ? -z[i] : z[i]));
      }
      continue;
    }
    const struct mbs_jmat *X = J->x;
    if (X->lin) {
      for (int e = 0; e < X->nZ; e++) {
        double v = 0.0;
        for (int t = X->Zs[e]; t < X->Zs[e + 1]; t++) v += X->Zk[t] * w[X->Zi[t]];
        LV_CHECK(emit(ctx, X->sZ[3 * e + 1], X->sZ[3 * e + 2], v));
      }
      continue;
    }
    jloc L;
    jloc_init(S, J, &L);
    joint_eval(S->form, J, &L, q, NULL, w, NULL, NULL, NULL, Zl);
    for (const int *e = X->sZ; e < X->sZ + 3 * X->nZ; e += 3) LV_CHECK(emit(ctx, e[1], e[2], Zl[e[0]]));
  }
  if (S->form == MBS_EP)
    for (int b = 1; b < S->nel; b++) {
      const mbs_elem *e = &S->el[b];
      if (e->kind != MBS_BODY) continue;
      for (int i = 0; i < 4; i++) LV_CHECK(emit(ctx, e->nrow, e->voff + 3 + i, w[e->voff + 3 + i]));
    }
  return 0;
}

static int cb_Z(const double *q, const double *w, lv_sink *Z, void *u) { return z_walk(u, q, w, Z, g_emit_sink); }

/* cb_Z's entries in cb_Z's order as values (lv_model_set_Z_values) */
static size_t cb_Zvals(const double *q, const double *w, double *v, size_t cap, void *u) {
  g_values g = {v, 0, cap};
  z_walk(u, q, w, &g, g_emit_value);
  return g.n;
}

/* Generators xi(q) of the declared symmetries, left-trivialised. */
static int cb_sym(int k, const double *q, double *xi, void *u) {
  const mbs_sys *S = u;
  if (k < 0 || k >= S->nsym) return 1;
  const mbs_sym *y = &S->sym[k];
  memset(xi, 0, (size_t)S->nv * sizeof(double));
  for (int b = 1; b < S->nel; b++) {
    const mbs_elem *e = &S->el[b];
    const double *qb = q + e->qoff;
    double *o = xi + e->voff, r[3];
    /* se3 bodies move x by R U: the translational part is R^T x' */
    int body_frame = S->form == MBS_SE3 && e->kind == MBS_BODY;
    if (e->kind == MBS_PARTICLE && e->pdim == 2) { /* in the plane (lv_mbs_build checked the axis) */
      double c[3];
      if (y->kind == SYM_TRANSLATION) {
        memcpy(c, y->axis, sizeof c);
      } else if (y->kind == SYM_ROTATION) {
        r[0] = qb[0] - y->point[0], r[1] = qb[1] - y->point[1], r[2] = -y->point[2];
        mbs_cross3(y->axis, r, c);
      } else {
        continue;
      }
      o[0] = c[0], o[1] = c[1];
      continue;
    }
    if (y->kind == SYM_TRANSLATION) {
      if (body_frame)
        mbs_rt_mul(qb + 3, y->axis, o);
      else
        memcpy(o, y->axis, 3 * sizeof(double));
    } else if (y->kind == SYM_ROTATION) {
      double c[3];
      for (int i = 0; i < 3; i++) r[i] = qb[i] - y->point[i];
      mbs_cross3(y->axis, r, c);
      if (body_frame)
        mbs_rt_mul(qb + 3, c, o);
      else
        memcpy(o, c, sizeof c);
      if (e->kind != MBS_BODY) continue;
      if (S->form == MBS_DIRECTORS)
        for (int d = 0; d < (e->rb->planar ? 2 : 3); d++) mbs_cross3(y->axis, qb + 3 + 3 * d, o + 3 + 3 * d);
      else if (MBS_VEC(S->form))
        mbs_vec_rate(S->form, e, qb, y->axis, 1, o + 3);
      else
        mbs_rt_mul(qb + 3, y->axis, o + 3);
    } else if (b == y->body) {
      /* body frame: centre of mass moves by R (A x (-P)), R by R A~ */
      double mp[3] = {-y->point[0], -y->point[1], -y->point[2]}, c[3];
      mbs_cross3(y->axis, mp, c);
      if (S->form == MBS_DIRECTORS) {
        double D[3][3];
        mbs_directors(e, qb, D);
        for (int i = 0; i < 3; i++) o[i] = c[0] * D[0][i] + c[1] * D[1][i] + c[2] * D[2][i];
        for (int k = 0; k < (e->rb->planar ? 2 : 3); k++) {
          double ed[3] = {0, 0, 0}, a[3];
          ed[e->rb->ax[k]] = 1.0;
          mbs_cross3(y->axis, ed, a); /* d' = sum_j a_j d_j */
          for (int i = 0; i < 3; i++) o[3 + 3 * k + i] = a[0] * D[0][i] + a[1] * D[1][i] + a[2] * D[2][i];
        }
      } else if (MBS_VEC(S->form)) {
        double R[9];
        mbs_vec_rot(S->form, e, qb, R);
        mbs_r_mul(R, c, o);
        mbs_vec_rate(S->form, e, qb, y->axis, 0, o + 3);
      } else {
        if (body_frame)
          memcpy(o, c, sizeof c);
        else
          mbs_r_mul(qb + 3, c, o);
        memcpy(o + 3, y->axis, 3 * sizeof(double));
      }
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- build */

typedef struct {
  mbs_sys sys;
} mbs_model_data;

static void model_data_free(void *p) {
  mbs_model_data *d = p;
  if (!d) return;
  sys_clear(&d->sys);
  free(d);
}

/* Name of element k of a system being built (given or default) written to
 * buf (n bytes; buf NULL: only measured); its length. */
static size_t elem_name(const mbs_sys *S, int k, char *buf, size_t n) {
  const mbs_elem *e = &S->el[k];
  int w = k == 0 ? snprintf(buf, n, "ground")
          : e->name ? snprintf(buf, n, "%s", e->name)
                    : snprintf(buf, n, "%s%d", e->kind == MBS_BODY ? "body" : "particle", k);
  return w > 0 ? (size_t)w : 0;
}

/* Deep copy of a system. */
static int sys_clone(const mbs_sys *S, mbs_sys *T) {
  memset(T, 0, sizeof *T);
  *T = *S;
  T->el = NULL, T->j = NULL, T->sym = NULL, T->sp = NULL, T->dp = NULL, T->ppoff = T->ppj = NULL, T->names = NULL;
  T->dvg = NULL;
  T->nj = 0;
  if (mbs_forces_clone(S, T)) return LV_ENOMEM;
  T->el = lv_calloc((size_t)S->nel, sizeof(mbs_elem));
  T->sym = lv_calloc((size_t)(S->nsym > 0 ? S->nsym : 1), sizeof(mbs_sym));
  T->j = lv_calloc((size_t)(S->nj > 0 ? S->nj : 1), sizeof(mbs_joint));
  T->sp = lv_calloc((size_t)(S->nsp > 0 ? S->nsp : 1), sizeof(mbs_spring));
  T->dp = lv_calloc((size_t)(S->ndp > 0 ? S->ndp : 1), sizeof(mbs_spring));
  if (!T->el || !T->sym || !T->j || !T->sp || !T->dp) return LV_ENOMEM;
  if (S->nsp) memcpy(T->sp, S->sp, (size_t)S->nsp * sizeof(mbs_spring));
  if (S->ndp) memcpy(T->dp, S->dp, (size_t)S->ndp * sizeof(mbs_spring));
  memcpy(T->el, S->el, (size_t)S->nel * sizeof(mbs_elem));
  /* the bodies' rigid data and the names are the copy's own: names in one
   * block (a default name is written out here) */
  size_t len = 0;
  for (int k = 0; k < S->nel; k++) {
    T->el[k].name = NULL;
    if (S->el[k].kind == MBS_BODY) T->el[k].rb = NULL;
    len += elem_name(S, k, NULL, 0) + 1;
  }
  T->names = malloc(len);
  if (!T->names) return LV_ENOMEM;
  size_t o = 0;
  for (int k = 0; k < S->nel; k++) {
    T->el[k].name = T->names + o;
    o += elem_name(S, k, T->names + o, len - o) + 1;
  }
  for (int k = 0; k < S->nel; k++) {
    if (S->el[k].kind != MBS_BODY) continue;
    mbs_rigid *r = malloc(sizeof *r);
    if (!r) return LV_ENOMEM;
    *r = *S->el[k].rb;
    T->el[k].rb = r;
  }
  if (S->nsym) memcpy(T->sym, S->sym, (size_t)S->nsym * sizeof(mbs_sym));
  for (int k = 0; k < S->nj; k++) {
    mbs_joint *J = &T->j[k];
    *J = S->j[k];
    J->x = NULL;
    J->u = NULL;
    J->rows_shared = 0;
    J->rows = lv_calloc((size_t)J->nrows, sizeof(mbs_row));
    T->nj = k + 1;
    if (!J->rows) return LV_ENOMEM;
    memcpy(J->rows, S->j[k].rows, (size_t)J->nrows * sizeof(mbs_row));
    share_rows(T, k);
  }
  return 0;
}

/* Structural non-zeros of each joint's local G, H, Z: the union of the
 * non-zeros at two generic points (random configurations, rotations on
 * SO(3), multipliers and directions).  Every entry is an analytic function
 * of these, so an entry zero at a generic point is zero everywhere. */
static double rnd(unsigned long long *s) { /* xorshift64*, uniform in [-1, 1] */
  unsigned long long x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static int find_patterns(mbs_sys *S) {
  unsigned long long st = 0x9E3779B97F4A7C15ULL;
  double *q = lv_calloc((size_t)S->nq, sizeof(double)), *w = lv_calloc((size_t)S->nv, sizeof(double));
  if (!q || !w) {
    free(q);
    free(w);
    return LV_ENOMEM;
  }
  double G[6 * NLOC] = {0}, H[NLOC * NLOC] = {0}, Z[6 * NLOC] = {0};
  double gam[6], c[6];
  int rc = 0;
  for (int k = 0; k < S->nj && !rc; k++) {
    mbs_joint *J = &S->j[k];
    if (J->pp) continue; /* written directly */
    J->x->mG = lv_calloc(6 * NLOC, 1);
    J->x->mH = lv_calloc(NLOC * NLOC, 1);
    J->x->mZ = lv_calloc(6 * NLOC, 1);
    if (!J->x->mG || !J->x->mH || !J->x->mZ) rc = LV_ENOMEM;
  }
  for (int pass = 0; pass < 2 && !rc; pass++) {
    for (int i = 0; i < S->nq; i++) q[i] = rnd(&st);
    for (int i = 0; i < S->nv; i++) w[i] = rnd(&st);
    if (S->form == MBS_R3SO3 || S->form == MBS_SE3)
      for (int b = 1; b < S->nel; b++)
        if (S->el[b].kind == MBS_BODY) {
          double psi[3] = {3 * rnd(&st), 3 * rnd(&st), 3 * rnd(&st)};
          lv_so3_exp(psi, q + S->el[b].qoff + 3);
        }
    for (int k = 0; k < S->nj; k++) {
      mbs_joint *J = &S->j[k];
      if (J->pp) continue;
      jloc L;
      jloc_init(S, J, &L);
      for (int r = 0; r < 6; r++) gam[r] = 1.0 + rnd(&st) * 0.5;
      joint_eval(S->form, J, &L, q, gam, w, c, G, H, Z);
      for (int r = 0; r < J->nrows; r++)
        for (int k = 0; k < L.n; k++) {
          J->x->mG[r * NLOC + k] |= G[r * L.n + k] != 0.0;
          J->x->mZ[r * NLOC + k] |= Z[r * L.n + k] != 0.0;
        }
      for (int a = 0; a < L.n; a++)
        for (int k = 0; k < L.n; k++) J->x->mH[a * NLOC + k] |= H[a * L.n + k] != 0.0;
    }
  }
  free(q);
  free(w);
  return rc;
}

/* The masks as scatter lists (local flat index, global row, column), in the
 * masks' row-major order: the callbacks then add exactly the structural
 * non-zeros, in a fixed order. */
static int scatter_lists(const mbs_sys *S, mbs_joint *J) {
  if (J->pp) return 0;
  struct mbs_jmat *X = J->x;
  jloc L;
  jloc_init(S, J, &L);
  int n = L.n, cnt[3] = {0, 0, 0};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      X->sG = lv_calloc((size_t)(3 * cnt[0] + 3), sizeof(int));
      X->sH = lv_calloc((size_t)(3 * cnt[1] + 3), sizeof(int));
      X->sZ = lv_calloc((size_t)(3 * cnt[2] + 3), sizeof(int));
      if (!X->sG || !X->sH || !X->sZ) return LV_ENOMEM;
      X->nG = cnt[0], X->nH = cnt[1], X->nZ = cnt[2];
      cnt[0] = cnt[1] = cnt[2] = 0;
    }
    for (int r = 0; r < J->nrows; r++)
      for (int c = 0; c < n; c++) {
        if (X->mG[r * NLOC + c]) {
          if (pass) X->sG[3 * cnt[0]] = r * n + c, X->sG[3 * cnt[0] + 1] = J->row0 + r, X->sG[3 * cnt[0] + 2] = jloc_global(&L, c);
          cnt[0]++;
        }
        if (X->mZ[r * NLOC + c]) {
          if (pass) X->sZ[3 * cnt[2]] = r * n + c, X->sZ[3 * cnt[2] + 1] = J->row0 + r, X->sZ[3 * cnt[2] + 2] = jloc_global(&L, c);
          cnt[2]++;
        }
      }
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        if (X->mH[a * NLOC + b]) {
          if (pass)
            X->sH[3 * cnt[1]] = a * n + b, X->sH[3 * cnt[1] + 1] = jloc_global(&L, a), X->sH[3 * cnt[1] + 2] = jloc_global(&L, b);
          cnt[1]++;
        }
  }
  /* the masks are not needed any more */
  free(X->mG), free(X->mH), free(X->mZ);
  X->mG = X->mH = X->mZ = NULL;
  return 0;
}

/* Compile G, H, Z of a directors joint whose maps are all constant (see
 * mbs_joint.lin) from its rows: with D_i = kc_i (x) I3 and
 * y_j = [ground: X_j] or sum_p kc_j[p] q_{j,p} (the block p of element j),
 *   G_r  = sum_i kc_i (x) (g_i + sum_j P_ij y_j)^T,
 *   H    = sum_r gam_r sum_ij P_ij (kc_i kc_j^T) (x) I3,
 *   Z_r  = sum_ij P_ij kc_j (x) (D_i w)^T,
 * coefficients summed over rows and terms into dense local tables, then
 * listed along the scatter lists (whose entries the masks fixed).  Leaves
 * J->lin = 0 when a map is not constant. */
static int compile_linear(const mbs_sys *S, mbs_joint *J) {
  if (S->form != MBS_DIRECTORS || J->pp) return 0; /* pp joints have their own direct path */
  struct mbs_jmat *X = J->x;
  jloc L;
  jloc_init(S, J, &L);
  int n = L.n;
  double KC[MBS_UNIQ][MBS_NV_MAX / 3], y[3], qb[MBS_NV_MAX] = {0};
  for (int t = 0; t < J->nu; t++) {
    const mbs_elem *e = L.e[J->u[t].slot];
    if (e->kind != MBS_GROUND && !mbs_map_kron(S->form, e, qb, &J->u[t], y, KC[t])) return 0;
  }
  size_t nn = (size_t)n * (size_t)n;
  double *GC = lv_calloc((size_t)J->nrows * n, sizeof(double));
  double *GQ = lv_calloc((size_t)J->nrows * nn, sizeof(double)); /* [r][c][qc] */
  double *HG = lv_calloc(nn * (size_t)J->nrows, sizeof(double)); /* [a][b][r] */
  double *ZW = lv_calloc((size_t)J->nrows * nn, sizeof(double)); /* [r][c][wc] */
  int rc = 0;
  if (!GC || !GQ || !HG || !ZW) rc = LV_ENOMEM;
  for (int r = 0; r < J->nrows && !rc; r++) {
    const mbs_row *R = &J->rows[r];
    for (int i = 0; i < R->nt; i++) {
      int sli = R->t[i].slot, oi = L.off[sli], nbi = L.e[sli]->nv / 3;
      const double *kci = KC[R->ix[i]];
      for (int p = 0; p < nbi; p++) {
        if (kci[p] == 0.0) continue;
        for (int k = 0; k < 3; k++) {
          int col = oi + 3 * p + k;
          GC[r * n + col] += kci[p] * R->g[i][k];
          for (int j = 0; j < R->nt; j++) {
            double P = R->P[i][j];
            if (P == 0.0) continue;
            int slj = R->t[j].slot, oj = L.off[slj], nbj = L.e[slj]->nv / 3;
            const double *kcj = KC[R->ix[j]];
            if (L.e[slj]->kind == MBS_GROUND) {
              GC[r * n + col] += kci[p] * P * R->t[j].X[k];
              continue;
            }
            for (int pp = 0; pp < nbj; pp++) {
              if (kcj[pp] == 0.0) continue;
              int cj = oj + 3 * pp + k;
              double v = P * kci[p] * kcj[pp];
              GQ[((size_t)r * n + col) * n + cj] += v; /* G_r,col: y_j's block pp */
              HG[((size_t)col * n + cj) * J->nrows + r] += v;
              ZW[((size_t)r * n + cj) * n + col] += v; /* Z_r,cj: (D_i w)_k */
            }
          }
        }
      }
    }
  }
  /* the lists along the scatter lists */
  int cnt[3] = {0, 0, 0};
  for (int pass = 0; pass < 2 && !rc; pass++) {
    if (pass) {
      X->Gc = lv_calloc((size_t)X->nG + 1, sizeof(double));
      X->Gs = lv_calloc((size_t)X->nG + 1, sizeof(int));
      X->Hs = lv_calloc((size_t)X->nH + 1, sizeof(int));
      X->Zs = lv_calloc((size_t)X->nZ + 1, sizeof(int));
      X->Gk = lv_calloc((size_t)cnt[0] + 1, sizeof(double));
      X->Gi = lv_calloc((size_t)cnt[0] + 1, sizeof(int));
      X->Hk = lv_calloc((size_t)cnt[1] + 1, sizeof(double));
      X->Hi = lv_calloc((size_t)cnt[1] + 1, sizeof(int));
      X->Zk = lv_calloc((size_t)cnt[2] + 1, sizeof(double));
      X->Zi = lv_calloc((size_t)cnt[2] + 1, sizeof(int));
      if (!X->Gc || !X->Gs || !X->Hs || !X->Zs || !X->Gk || !X->Gi || !X->Hk || !X->Hi || !X->Zk || !X->Zi) {
        rc = LV_ENOMEM;
        break;
      }
      cnt[0] = cnt[1] = cnt[2] = 0;
    }
    for (int e = 0; e < X->nG; e++) {
      int f = X->sG[3 * e], r = f / n, c = f % n;
      if (pass) X->Gc[e] = GC[f], X->Gs[e] = cnt[0];
      for (int qc = 0; qc < n; qc++) {
        double v = GQ[((size_t)r * n + c) * n + qc];
        if (v == 0.0) continue;
        if (pass) X->Gk[cnt[0]] = v, X->Gi[cnt[0]] = jloc_global(&L, qc);
        cnt[0]++;
      }
    }
    for (int e = 0; e < X->nH; e++) {
      int f = X->sH[3 * e];
      if (pass) X->Hs[e] = cnt[1];
      for (int r = 0; r < J->nrows; r++) {
        double v = HG[(size_t)f * J->nrows + r];
        if (v == 0.0) continue;
        if (pass) X->Hk[cnt[1]] = v, X->Hi[cnt[1]] = J->row0 + r;
        cnt[1]++;
      }
    }
    for (int e = 0; e < X->nZ; e++) {
      int f = X->sZ[3 * e];
      if (pass) X->Zs[e] = cnt[2];
      for (int wc = 0; wc < n; wc++) {
        double v = ZW[(size_t)f * n + wc];
        if (v == 0.0) continue;
        if (pass) X->Zk[cnt[2]] = v, X->Zi[cnt[2]] = jloc_global(&L, wc);
        cnt[2]++;
      }
    }
    if (pass) X->Gs[X->nG] = cnt[0], X->Hs[X->nH] = cnt[1], X->Zs[X->nZ] = cnt[2];
  }
  free(GC), free(GQ), free(HG), free(ZW);
  if (rc) {
    lin_free(J);
    return rc;
  }
  X->lin = 1;
  return 0;
}

int lv_mbs_build(lv_mbs *s, const char *name, lv_model **out) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (!s) return LV_EINPUT;
  mbs_sys *S = &s->sys;
  if (S->nel < 2) return fail(s, LV_EINPUT, "the system has no particle or body");
  /* coordinates and constraint rows */
  int nq = 0, nv = 0, nc = 0;
  for (int k = 0; k < S->nel; k++) {
    mbs_elem *e = &S->el[k];
    mbs_elem_dims(S->form, e, &e->nq, &e->nv);
    e->qoff = nq;
    e->voff = nv;
    nq += e->nq;
    nv += e->nv;
  }
  for (int k = 0; k < S->nj; k++) {
    S->j[k].row0 = nc;
    nc += S->j[k].nrows;
  }
  if (S->form == MBS_EP) /* the norm rows, after the joints' */
    for (int k = 1; k < S->nel; k++)
      if (S->el[k].kind == MBS_BODY) S->el[k].nrow = nc++;
  S->nq = nq, S->nv = nv, S->nc = nc;
  /* a symmetry must keep planar particles in their plane: a translation
   * within it, a rotation about the z axis */
  for (int y = 0; y < S->nsym; y++) {
    const mbs_sym *Y = &S->sym[y];
    int keeps = Y->kind == SYM_BODY || (Y->kind == SYM_TRANSLATION ? fabs(Y->axis[2]) <= 1e-12
                                                                       : fabs(Y->axis[0]) <= 1e-12 && fabs(Y->axis[1]) <= 1e-12);
    for (int k = 1; k < S->nel && !keeps; k++)
      if (S->el[k].kind == MBS_PARTICLE && S->el[k].pdim == 2)
        return fail(s, LV_EINPUT,
                    "symmetry %d: the %s moves planar particle %d out of the x-y plane (a translation within it "
                    "or a rotation about the z axis)",
                    y, Y->kind == SYM_TRANSLATION ? "translation" : "rotation", k);
  }
  /* invariants for EM when every spring is quadratic in q (directors, no
   * point off a planar body's plane) */
  int quad = S->form == MBS_DIRECTORS && S->nsp > 0;
  for (int k = 0; k < S->nsp && quad; k++)
    for (int i = 0; i < 2; i++) {
      const mbs_elem *e = &S->el[S->sp[k].el[i]];
      if (e->kind == MBS_BODY && e->rb->planar && S->sp[k].X[i][e->rb->ax[2]] != 0.0) quad = 0;
    }
  int hasg = S->grav[0] != 0.0 || S->grav[1] != 0.0 || S->grav[2] != 0.0;
  S->ninv = quad ? S->nsp + (hasg ? S->nel - 1 : 0) : 0;
  if (mbs_has_torsion_springs(S)) S->ninv = 0; /* V is no longer a sum over the invariants: Gonzalez' form */
  mbs_model_data *d = lv_calloc(1, sizeof *d);
  if (!d) return fail(s, LV_ENOMEM, "out of memory");
  int rc = sys_clone(S, &d->sys);
  for (int k = 0; !rc && k < d->sys.nj; k++) { /* pp joints are written directly: no maps to index */
    mbs_joint *J = &d->sys.j[k];
    J->pp = pp_joint(&d->sys, J);
    if (J->pp) continue;
    J->u = lv_calloc(MBS_UNIQ, sizeof(mbs_term));
    J->x = lv_calloc(1, sizeof *J->x);
    if (!J->u || !J->x) rc = LV_ENOMEM;
    else joint_index_terms(J);
  }
  if (!rc) rc = pp_lists(&d->sys);
  if (!rc) rc = find_patterns(&d->sys);
  for (int k = 0; !rc && k < d->sys.nj; k++) rc = scatter_lists(&d->sys, &d->sys.j[k]);
  for (int k = 0; !rc && k < d->sys.nj; k++) rc = compile_linear(&d->sys, &d->sys.j[k]);
  if (!rc) cache_setup(&d->sys);
  if (!rc) rc = grav_dV_setup(&d->sys);
  lv_space *sp = NULL;
  if (!rc) {
    if (S->form == MBS_DIRECTORS || MBS_VEC(S->form)) {
      rc = lv_space_new_rn(&sp, nv);
    } else {
      rc = lv_space_new(&sp);
      for (int k = 1; k < S->nel && !rc; k++)
        rc = S->el[k].kind != MBS_BODY ? lv_space_add(sp, LV_FACTOR_RN, S->el[k].nq)
                                       : lv_space_add(sp, S->form == MBS_SE3 ? LV_FACTOR_SE3 : LV_FACTOR_R3SO3, 0);
    }
  }
  lv_model *m = NULL;
  if (!rc) rc = lv_model_new(&m, name ? name : "mbs", sp, nc);
  if (rc) {
    lv_space_free(sp);
    model_data_free(d);
    return fail(s, rc, "%s", rc == LV_ENOMEM ? "out of memory" : "the system could not be built");
  }
  lv_model_set_user(m, d, model_data_free);
  double *q0 = lv_calloc((size_t)nq, sizeof(double)), *v0 = lv_calloc((size_t)nv, sizeof(double));
  if (!q0 || !v0) rc = LV_ENOMEM;
  for (int k = 1; k < S->nel && !rc; k++) mbs_elem_initial(S->form, &S->el[k], q0 + S->el[k].qoff, v0 + S->el[k].voff);
  if (!rc) rc = lv_model_set_mass(m, cb_mass, !MBS_VEC(S->form));
  int tsp = mbs_has_torsion_springs(S);
  if (!rc && S->nsp == 0 && !tsp) rc = lv_model_set_potential(m, cb_V, cb_dV, cb_d2V);
  if (!rc && (S->nsp > 0 || tsp)) rc = lv_model_set_potential(m, cb_V_springs, cb_dV_springs, cb_d2V_springs);
  if (!rc && d->sys.ninv > 0) rc = lv_model_set_invariants(m, d->sys.ninv, cb_pi, cb_dpi, cb_vt);
  if (!rc && (S->form != MBS_DIRECTORS || S->ndp > 0 || mbs_has_forces(S)))
    rc = lv_model_set_force(m, cb_force_all, cb_force_dq_all, cb_force_dv_all);
  if (!rc && nc > 0) rc = lv_model_set_constraints(m, cb_g, cb_G, cb_H, cb_Z);
  if (!rc && nc > 0) rc = lv_model_set_G_product(m, cb_Gprod);
  if (!rc && nc > 0) rc = lv_model_set_G_values(m, cb_Gvals);
  if (!rc && nc > 0) rc = lv_model_set_H_values(m, cb_Hvals);
  if (!rc && nc > 0) rc = lv_model_set_Z_values(m, cb_Zvals);
  if (!rc && nc > 0) rc = lv_model_set_H_product(m, cb_Hprod);
  if (!rc && S->nsym > 0) rc = lv_model_set_symmetries(m, S->nsym, cb_sym);
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  free(q0);
  free(v0);
  if (rc) {
    lv_model_free(m);
    return fail(s, rc, "%s", rc == LV_ENOMEM ? "out of memory" : "the system could not be built");
  }
  *out = m;
  return 0;
}

/* --------------------------------------------------------------- queries */

static const mbs_sys *model_sys(const lv_model *m) {
  if (!m || lv_model_user_destructor(m) != model_data_free || !lv_model_user(m)) return NULL;
  return &((const mbs_model_data *)lv_model_user(m))->sys;
}

const char *lv_mbs_model_formulation(const lv_model *m) {
  const mbs_sys *S = model_sys(m);
  return S ? S->fname : NULL;
}

int lv_mbs_model_elements(const lv_model *m) {
  const mbs_sys *S = model_sys(m);
  return S ? S->nel : 0;
}

int lv_mbs_model_element(const lv_model *m, int id, const char **name, int *rigid) {
  const mbs_sys *S = model_sys(m);
  if (!S || id < 0 || id >= S->nel) return LV_EINPUT;
  if (name) *name = id == LV_MBS_GROUND ? "ground" : S->el[id].name;
  if (rigid) *rigid = S->el[id].kind == MBS_BODY;
  return 0;
}

int lv_mbs_model_has_columns(const lv_model *m, int id) {
  const mbs_sys *S = model_sys(m);
  if (!S || id <= 0 || id >= S->nel) return 0;
  return S->el[id].kind == MBS_BODY || S->el[id].named;
}

int lv_mbs_model_pose(const lv_model *m, int id, const double *q, double x[3], double R[9]) {
  const mbs_sys *S = model_sys(m);
  if (!S || !q || id < 0 || id >= S->nel) return LV_EINPUT;
  const mbs_elem *e = &S->el[id];
  mbs_elem_pose(S->form, e, q + e->qoff, x, R);
  return 0;
}

/* ------------------------------------- services for forces.c (issue 15) */

mbs_sys *mbs_sys_of(lv_mbs *s) { return &s->sys; }

int mbs_fail(lv_mbs *s, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, sizeof s->err, fmt, ap);
  va_end(ap);
  return rc;
}

void mbs_joint_index(mbs_joint *J) { joint_index_terms(J); }

void mbs_joint_eval(const mbs_sys *S, const mbs_joint *J, const double *q, const double *gam, double *c,
                    double *G, double *H, int *n) {
  jloc L;
  jloc_init(S, J, &L);
  if (n) *n = L.n;
  joint_eval(S->form, J, &L, q, gam, NULL, c, G, H, NULL);
}
