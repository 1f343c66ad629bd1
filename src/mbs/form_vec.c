/* The two rotation formulations of the multibody layer whose coordinates
 * are plain vectors (issue 15; doc/mbs.md): seed 002's comparison
 * formulations Ga(EP) and Ga(CTB).  The space is R^n, v = q', and the
 * mass matrix depends on q, so these run under generalized-alpha and BLieDF
 * on R^n but not under RATTLE, VI or EM (constant mass only).
 *
 *   euler-parameters  q_b = (x, p) in R^7, p = (p0, e) the Euler
 *       parameters, R(p) = (p0^2 - e.e) I + 2 e e^T + 2 p0 e~ (quadratic,
 *       |p|^2 times a rotation; a rotation on the norm constraint
 *       1/2 (|p|^2 - 1) = 0, one extra row per body).  Body angular
 *       velocity Omega = 2 Gb(p) p', Gb = [-e, p0 I - e~] (3 x 4).
 *       y = [x] + R(p) X is quadratic in p: D = [I | dQ(p)] with
 *         dQ/dp0 = 2 p0 X + 2 e x X,
 *         dQ/de  = -2 X e^T + 2 (e.X) I + 2 e X^T - 2 p0 X~;
 *       the Hessian of l . R(p) X is constant,
 *         [2 l.X, 2 (X x l)^T; 2 (X x l), -2 (l.X) I + 2 (l X^T + X l^T)],
 *       and D_q(D w) = [0 | dQ(w_p)] (D is linear in p).
 *       Kinetic energy 1/2 m |x'|^2 + 2 p'^T Gb^T J Gb p', so
 *         M = diag(m I, 4 Gb^T J Gb)  (rank 3 in p; the norm row fixes p.p''),
 *       and the Euler-Lagrange equations of this Lagrangian ON R^4 (not
 *       only on the sphere) give the quadratic-velocity force
 *         f_p = -8 Gb(p')^T J Gb(p) p' = 8 Gb(p')^T J Gb(p') p
 *       (Gb(p) p' = -Gb(p') p, Gb(p') p' = 0), the force of
 *       tests/ref_heavy_top_ep.c (Nikravesh), with
 *         df/dq = 8 Gb(p')^T J Gb(p'),
 *         df/dv = -8 [B(w) + Gb(p')^T J Gb(p)],  w = J Gb(p) p',
 *         B(w) = [0, -w^T; w, -w~]  (Gb(v)^T w = B(w) v).
 *
 *   cardan  q_b = (x, phi) in R^6, R = R_a(phi1) R_b(phi2) R_c(phi3) for
 *       the axis sequence abc (any, a != b != c: Tait-Bryan "xyz" or proper
 *       Euler "zxz"), Omega = Gm(phi) phi' with the columns
 *         g1 = R_c^T R_b^T e_a,  g2 = R_c^T e_b,  g3 = e_c.
 *       d_j R = R g_j~ exactly, so D = [I | R (g_k x X)] and
 *         d_j d_k (R X) = R [g_j x (g_k x X) + (d_j g_k) x X],
 *       with d_2 g1 = -R_c^T (e_b x R_b^T e_a), d_3 g_k = -e_c x g_k
 *       (k = 1, 2), and their derivatives (all that depend on phi2, phi3
 *       only).  M = diag(m I, Gm^T J Gm) and the Euler equations projected
 *       on the virtual rotation Gm dphi (exact in minimal coordinates):
 *         f_phi = -Gm^T (J b + Omega x J Omega),
 *         b = Gm' phi' = sum_jk phi'_j phi'_k d_k g_j,
 *       the force of tests/ref_heavy_top_ctb.c, with exact df/dq and df/dv
 *       from the second derivatives of g.  Singular where det Gm = 0
 *       (Tait-Bryan: cos phi2 = 0; proper Euler: sin phi2 = 0). */
#include "mbs/mbs_impl.h"

/* y = R x, y = R^T x (row-major) */
static void mul3(const double A[9], const double B[9], double C[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) t[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, t, sizeof t);
}

/* ------------------------------------------------------ Euler parameters */

/* R(p), quadratic in p (|p|^2 times a rotation) */
static void ep_rot(const double *p, double R[9]) {
  const double p0 = p[0], *e = p + 1;
  double s = p0 * p0 - (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = (i == j) * s + 2.0 * e[i] * e[j];
  R[1] -= 2 * p0 * e[2], R[2] += 2 * p0 * e[1];
  R[3] += 2 * p0 * e[2], R[5] -= 2 * p0 * e[0];
  R[6] -= 2 * p0 * e[1], R[7] += 2 * p0 * e[0];
}

/* Gb(p) = [-e, p0 I - e~], row-major 3 x 4 */
static void ep_gbar(const double *p, double Gb[12]) {
  const double p0 = p[0], a = p[1], b = p[2], c = p[3];
  const double G[12] = {-a, p0, c, -b, -b, -c, p0, a, -c, b, -a, p0};
  memcpy(Gb, G, sizeof G);
}

/* D (3 x 4 at column offset o, leading dimension ld) += d(R(p) X)/dp */
static void ep_dq(const double *p, const double X[3], double *D, int ld, int o) {
  const double p0 = p[0], *e = p + 1;
  double c[3], ex = mbs_dot3(e, X), Xh[9];
  mbs_cross3(e, X, c);
  lv_hat3(X, Xh);
  for (int i = 0; i < 3; i++) {
    D[i * ld + o] += 2.0 * (p0 * X[i] + c[i]);
    for (int j = 0; j < 3; j++)
      D[i * ld + o + 1 + j] += -2.0 * X[i] * e[j] + 2.0 * ex * (i == j) + 2.0 * e[i] * X[j] - 2.0 * p0 * Xh[3 * i + j];
  }
}

/* quaternion product a (x) b */
static void qmul(const double a[4], const double b[4], double c[4]) {
  double t[3];
  mbs_cross3(a + 1, b + 1, t);
  c[0] = a[0] * b[0] - mbs_dot3(a + 1, b + 1);
  for (int i = 0; i < 3; i++) c[1 + i] = a[0] * b[1 + i] + b[0] * a[1 + i] + t[i];
}

/* Euler parameters of a rotation (Shepperd; p0 >= 0 where the trace
 * branch is taken: the identity gives exactly (1, 0, 0, 0)). */
static void ep_from_rot(const double R[9], double p[4]) {
  double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = sqrt(1.0 + tr) * 2.0; /* 4 p0 */
    p[0] = 0.25 * s;
    p[1] = (R[7] - R[5]) / s;
    p[2] = (R[2] - R[6]) / s;
    p[3] = (R[3] - R[1]) / s;
    return;
  }
  int i = R[0] >= R[4] && R[0] >= R[8] ? 0 : (R[4] >= R[8] ? 1 : 2), j = (i + 1) % 3, k = (i + 2) % 3;
  double s = sqrt(1.0 + R[4 * i] - R[4 * j] - R[4 * k]) * 2.0; /* 4 e_i */
  p[1 + i] = 0.25 * s;
  p[0] = (R[3 * k + j] - R[3 * j + k]) / s;
  p[1 + j] = (R[3 * j + i] + R[3 * i + j]) / s;
  p[1 + k] = (R[3 * k + i] + R[3 * i + k]) / s;
}

/* --------------------------------------------------------- Cardan angles */

typedef struct {
  double R[9];
  double g[3][3];         /* g[j]: column j of Gm */
  double dg[3][3][3];     /* dg[m][j] = d g_j / d phi_m */
  double ddg[3][3][3][3]; /* ddg[m][k][j] = d^2 g_j / d phi_m d phi_k */
} ckin;

/* elementary rotation about axis a by angle t, row-major */
static void rot1(int a, double t, double R[9]) {
  double c = cos(t), s = sin(t);
  int b = (a + 1) % 3, d = (a + 2) % 3;
  memset(R, 0, 9 * sizeof(double));
  R[4 * a] = 1.0;
  R[3 * b + b] = c, R[3 * b + d] = -s;
  R[3 * d + b] = s, R[3 * d + d] = c;
}

static void ck_eval(const int ax[3], const double *phi, ckin *k, int second) {
  double Ra[9], Rb[9], Rc[9], ea[3] = {0, 0, 0}, eb[3] = {0, 0, 0}, ec[3] = {0, 0, 0}, u[3], w[3], t[3];
  ea[ax[0]] = eb[ax[1]] = ec[ax[2]] = 1.0;
  rot1(ax[0], phi[0], Ra);
  rot1(ax[1], phi[1], Rb);
  rot1(ax[2], phi[2], Rc);
  mul3(Ra, Rb, k->R);
  mul3(k->R, Rc, k->R);
  memset(k->dg, 0, sizeof k->dg);
  mbs_rt_mul(Rb, ea, u); /* R_b^T e_a */
  mbs_rt_mul(Rc, u, k->g[0]);
  mbs_rt_mul(Rc, eb, k->g[1]);
  memcpy(k->g[2], ec, sizeof ec);
  mbs_cross3(eb, u, w); /* d_2 u = -e_b x u */
  mbs_rt_mul(Rc, w, t);
  for (int i = 0; i < 3; i++) k->dg[1][0][i] = -t[i];
  mbs_cross3(ec, k->g[0], t);
  for (int i = 0; i < 3; i++) k->dg[2][0][i] = -t[i];
  mbs_cross3(ec, k->g[1], t);
  for (int i = 0; i < 3; i++) k->dg[2][1][i] = -t[i];
  if (!second) return;
  memset(k->ddg, 0, sizeof k->ddg);
  mbs_cross3(eb, w, t); /* d_2 d_2 g1 = R_c^T (e_b x (e_b x u)) */
  mbs_rt_mul(Rc, t, k->ddg[1][1][0]);
  mbs_cross3(ec, k->dg[1][0], t); /* d_3 d_2 g1 = -e_c x d_2 g1 */
  for (int i = 0; i < 3; i++) k->ddg[2][1][0][i] = k->ddg[1][2][0][i] = -t[i];
  mbs_cross3(ec, k->dg[2][0], t);
  for (int i = 0; i < 3; i++) k->ddg[2][2][0][i] = -t[i];
  mbs_cross3(ec, k->dg[2][1], t);
  for (int i = 0; i < 3; i++) k->ddg[2][2][1][i] = -t[i];
}

/* S_jk = d_j d_k (R X) = R [g_j x (g_k x X) + (d_j g_k) x X] */
static void ck_second(const ckin *k, const double X[3], double S[3][3][3]) {
  for (int j = 0; j < 3; j++)
    for (int l = j; l < 3; l++) {
      double a[3], b[3], c[3];
      mbs_cross3(k->g[l], X, a);
      mbs_cross3(k->g[j], a, b);
      mbs_cross3(k->dg[j][l], X, c);
      for (int i = 0; i < 3; i++) b[i] += c[i];
      mbs_r_mul(k->R, b, S[j][l]);
      memcpy(S[l][j], S[j][l], sizeof S[j][l]);
    }
}

/* x = A^-1 b for a 3 x 3 A (row-major) by Gaussian elimination with
 * partial pivoting (exact for a permutation).  Returns 1 if A is singular
 * to 1e-10 relative. */
static int solve3(const double A0[9], const double b0[3], double x[3]) {
  double A[9], b[3], amax = 0.0;
  memcpy(A, A0, sizeof A);
  memcpy(b, b0, sizeof b);
  for (int i = 0; i < 9; i++) amax = fmax(amax, fabs(A[i]));
  for (int c = 0; c < 3; c++) {
    int p = c;
    for (int r = c + 1; r < 3; r++)
      if (fabs(A[3 * r + c]) > fabs(A[3 * p + c])) p = r;
    if (!(fabs(A[3 * p + c]) > 1e-10 * amax)) return 1;
    if (p != c) {
      for (int j = 0; j < 3; j++) {
        double t = A[3 * c + j];
        A[3 * c + j] = A[3 * p + j], A[3 * p + j] = t;
      }
      double t = b[c];
      b[c] = b[p], b[p] = t;
    }
    for (int r = c + 1; r < 3; r++) {
      double f = A[3 * r + c] / A[3 * c + c];
      if (f == 0.0) continue;
      for (int j = c; j < 3; j++) A[3 * r + j] -= f * A[3 * c + j];
      b[r] -= f * b[c];
    }
  }
  for (int r = 2; r >= 0; r--) {
    double s = b[r];
    for (int j = r + 1; j < 3; j++) s -= A[3 * r + j] * x[j];
    x[r] = s / A[3 * r + r];
  }
  return 0;
}

/* Angles of the rotation R for the sequence ax: 0, or 1 if R is on (or
 * within 1e-8 of) the singular set of the sequence. */
static int ck_from_rot(const int ax[3], const double R[9], double phi[3]) {
  int a = ax[0], b = ax[1], c = ax[2];
#define RR(i, j) R[3 * (i) + (j)]
  if (a != c) { /* Tait-Bryan: sin phi2 = eps R_ac */
    double eps = (b - a + 3) % 3 == 1 ? 1.0 : -1.0;
    phi[1] = atan2(eps * RR(a, c), sqrt(RR(a, a) * RR(a, a) + RR(a, b) * RR(a, b)));
    phi[0] = atan2(-eps * RR(b, c), RR(c, c));
    phi[2] = atan2(-eps * RR(a, b), RR(a, a));
    if (!(fabs(cos(phi[1])) > 1e-8)) return 1;
  } else { /* proper Euler: cos phi2 = R_aa */
    int d = 3 - a - b;
    double eps = (b - a + 3) % 3 == 1 ? 1.0 : -1.0;
    phi[1] = atan2(sqrt(RR(a, b) * RR(a, b) + RR(a, d) * RR(a, d)), RR(a, a));
    phi[0] = atan2(RR(b, a), -eps * RR(d, a));
    phi[2] = atan2(RR(a, b), eps * RR(a, d));
    if (!(fabs(sin(phi[1])) > 1e-8)) return 1;
  }
#undef RR
  return 0;
}

/* ------------------------------------------------------------- the maps */

void mbs_vec_dims(mbs_formulation f, int *nq, int *nv) { *nq = *nv = f == MBS_EP ? 7 : 6; }

void mbs_vec_rot(mbs_formulation f, const mbs_elem *e, const double *qb, double R[9]) {
  if (f == MBS_EP) {
    ep_rot(qb + 3, R);
  } else {
    ckin k;
    ck_eval(e->rb->seq, qb + 3, &k, 0);
    memcpy(R, k.R, sizeof k.R);
  }
}

void mbs_vec_map(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t, double y[3],
                 double *D) {
  int nv = e->nv, pt = !t->axis;
  double R[9];
  memset(D, 0, (size_t)(3 * nv) * sizeof(double));
  if (f == MBS_EP) {
    ep_rot(qb + 3, R);
    ep_dq(qb + 3, t->X, D, nv, 3);
  } else {
    ckin k;
    ck_eval(e->rb->seq, qb + 3, &k, 0);
    memcpy(R, k.R, sizeof R);
    for (int j = 0; j < 3; j++) {
      double c[3], d[3];
      mbs_cross3(k.g[j], t->X, c);
      mbs_r_mul(R, c, d);
      for (int i = 0; i < 3; i++) D[i * nv + 3 + j] = d[i];
    }
  }
  mbs_r_mul(R, t->X, y);
  if (pt)
    for (int i = 0; i < 3; i++) {
      y[i] += qb[i];
      D[i * nv + i] = 1.0;
    }
}

void mbs_vec_map_hess(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                      const double l[3], double s, double *Hb, int ld) {
  const double *X = t->X;
  if (f == MBS_EP) {
    double c[3], lx = mbs_dot3(l, X);
    mbs_cross3(X, l, c);
    Hb[3 * ld + 3] += s * 2.0 * lx;
    for (int i = 0; i < 3; i++) {
      Hb[3 * ld + 4 + i] += s * 2.0 * c[i];
      Hb[(4 + i) * ld + 3] += s * 2.0 * c[i];
      for (int j = 0; j < 3; j++)
        Hb[(4 + i) * ld + 4 + j] += s * (-2.0 * lx * (i == j) + 2.0 * (l[i] * X[j] + X[i] * l[j]));
    }
    return;
  }
  ckin k;
  double S[3][3][3];
  ck_eval(e->rb->seq, qb + 3, &k, 0);
  ck_second(&k, X, S);
  for (int j = 0; j < 3; j++)
    for (int m = 0; m < 3; m++) Hb[(3 + j) * ld + 3 + m] += s * mbs_dot3(l, S[j][m]);
}

void mbs_vec_map_curv(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                      const double *w, double *C, int ld) {
  if (f == MBS_EP) {
    ep_dq(w + 3, t->X, C, ld, 3);
    return;
  }
  ckin k;
  double S[3][3][3];
  ck_eval(e->rb->seq, qb + 3, &k, 0);
  ck_second(&k, t->X, S);
  for (int m = 0; m < 3; m++)
    for (int i = 0; i < 3; i++) C[i * ld + 3 + m] += S[m][0][i] * w[3] + S[m][1][i] * w[4] + S[m][2][i] * w[5];
}

/* ------------------------------------------------ initial data and pose */

int mbs_vec_rate(mbs_formulation f, const mbs_elem *e, const double *qb, const double w[3], int spatial,
                 double *out) {
  if (f == MBS_EP) {
    double u[4] = {0, w[0], w[1], w[2]}, r[4];
    if (spatial)
      qmul(u, qb + 3, r);
    else
      qmul(qb + 3, u, r);
    for (int i = 0; i < 4; i++) out[i] = 0.5 * r[i];
    return 0;
  }
  ckin k;
  double W[3], G[9];
  ck_eval(e->rb->seq, qb + 3, &k, 0);
  if (spatial)
    mbs_rt_mul(k.R, w, W);
  else
    memcpy(W, w, sizeof W);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) G[3 * i + j] = k.g[j][i];
  if (solve3(G, W, out)) {
    memset(out, 0, 3 * sizeof(double));
    return 1;
  }
  return 0;
}

int mbs_vec_initial(mbs_formulation f, const mbs_elem *e, double *qb, double *vb) {
  memcpy(qb, e->x0, 3 * sizeof(double));
  memcpy(vb, e->v0, 3 * sizeof(double));
  if (f == MBS_EP) { /* R0 is a rotation to 1e-12: p on the norm constraint exactly */
    double *p = qb + 3, n;
    ep_from_rot(e->rb->R0, p);
    n = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
    for (int i = 0; i < 4; i++) p[i] /= n;
  } else { /* the angles must give R0 back (R0 is a rotation to 1e-12) */
    if (ck_from_rot(e->rb->seq, e->rb->R0, qb + 3)) return 1;
    ckin k;
    ck_eval(e->rb->seq, qb + 3, &k, 0);
    for (int i = 0; i < 9; i++)
      if (!(fabs(k.R[i] - e->rb->R0[i]) <= 1e-10)) return 1;
  }
  return mbs_vec_rate(f, e, qb, e->rb->W0, 0, vb + 3);
}

void mbs_vec_pose_rot(mbs_formulation f, const mbs_elem *e, const double *qb, double R[9]) {
  mbs_vec_rot(f, e, qb, R);
  if (f == MBS_EP) {
    const double *p = qb + 3;
    double n = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3];
    for (int i = 0; i < 9; i++) R[i] /= n;
  }
}

/* ----------------------------------------------------- mass and forces */

int mbs_vec_mass(mbs_formulation f, const mbs_elem *e, const double *qb, lv_sink *M) {
  int o = e->voff + 3, n = f == MBS_EP ? 4 : 3;
  double G[12]; /* Omega = G q'_rot, 3 x n row-major */
  if (f == MBS_EP) {
    ep_gbar(qb + 3, G);
    for (int i = 0; i < 12; i++) G[i] *= 2.0;
  } else {
    ckin k;
    ck_eval(e->rb->seq, qb + 3, &k, 0);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) G[3 * i + j] = k.g[j][i];
  }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      double s = 0.0;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) s += G[n * i + a] * e->rb->J[3 * i + j] * G[n * j + b];
      LV_CHECK(lv_sink_add(M, o + a, o + b, s));
    }
  return 0;
}

/* Cardan: Omega, b = Gm' phi', c = J b + Omega x J Omega */
static void ck_terms(const ckin *k, const double J[9], const double *dp, double W[3], double L[3], double b[3],
                     double c[3]) {
  double t[3];
  for (int i = 0; i < 3; i++) {
    W[i] = k->g[0][i] * dp[0] + k->g[1][i] * dp[1] + k->g[2][i] * dp[2];
    b[i] = 0.0;
    for (int j = 0; j < 3; j++)
      for (int m = 0; m < 3; m++) b[i] += dp[j] * dp[m] * k->dg[m][j][i];
  }
  mbs_r_mul(J, W, L);
  mbs_cross3(W, L, t);
  mbs_r_mul(J, b, c);
  for (int i = 0; i < 3; i++) c[i] += t[i];
}

void mbs_vec_force(mbs_formulation f, const mbs_elem *e, const double *qb, const double *vb, double *fb) {
  fb[0] = fb[1] = fb[2] = 0.0;
  if (f == MBS_EP) {
    double Gp[12], Gv[12], a[3], w[3];
    ep_gbar(qb + 3, Gp);
    ep_gbar(vb + 3, Gv);
    for (int i = 0; i < 3; i++) a[i] = Gp[4 * i] * vb[3] + Gp[4 * i + 1] * vb[4] + Gp[4 * i + 2] * vb[5] + Gp[4 * i + 3] * vb[6];
    mbs_r_mul(e->rb->J, a, w);
    for (int j = 0; j < 4; j++) fb[3 + j] = -8.0 * (Gv[j] * w[0] + Gv[4 + j] * w[1] + Gv[8 + j] * w[2]);
    return;
  }
  ckin k;
  double W[3], L[3], b[3], c[3];
  ck_eval(e->rb->seq, qb + 3, &k, 0);
  ck_terms(&k, e->rb->J, vb + 3, W, L, b, c);
  for (int j = 0; j < 3; j++) fb[3 + j] = -mbs_dot3(k.g[j], c);
}

/* K (n x n, the body's rotation block) of df/dq (dq = 1) or df/dv */
static void vec_force_jac(mbs_formulation f, const mbs_elem *e, const double *qb, const double *vb, int dq,
                          double K[16]) {
  const double *J = e->rb->J;
  if (f == MBS_EP) {
    double Gp[12], Gv[12], A[12], a[3], w[3];
    ep_gbar(qb + 3, Gp);
    ep_gbar(vb + 3, Gv);
    /* A = J Gb(dq ? v : p) (3 x 4) */
    const double *Gr = dq ? Gv : Gp;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) A[4 * i + j] = J[3 * i] * Gr[j] + J[3 * i + 1] * Gr[4 + j] + J[3 * i + 2] * Gr[8 + j];
    double s = dq ? 8.0 : -8.0;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) K[4 * i + j] = s * (Gv[i] * A[j] + Gv[4 + i] * A[4 + j] + Gv[8 + i] * A[8 + j]);
    if (!dq) { /* - 8 B(w), w = J Gb(p) p' */
      for (int i = 0; i < 3; i++) a[i] = Gp[4 * i] * vb[3] + Gp[4 * i + 1] * vb[4] + Gp[4 * i + 2] * vb[5] + Gp[4 * i + 3] * vb[6];
      mbs_r_mul(J, a, w);
      double B[16] = {0, -w[0], -w[1], -w[2], w[0], 0, w[2], -w[1], w[1], -w[2], 0, w[0], w[2], w[1], -w[0], 0};
      for (int i = 0; i < 16; i++) K[i] -= 8.0 * B[i];
    }
    return;
  }
  ckin k;
  double W[3], L[3], b[3], c[3], Wh[9], Lh[9], P[9];
  const double *dp = vb + 3;
  ck_eval(e->rb->seq, qb + 3, &k, 1);
  ck_terms(&k, J, dp, W, L, b, c);
  /* P = d(Omega x J Omega)/dOmega = W~ J - (J W)~ */
  lv_hat3(W, Wh);
  lv_hat3(L, Lh);
  mul3(Wh, J, P);
  for (int i = 0; i < 9; i++) P[i] -= Lh[i];
  for (int m = 0; m < 3; m++) {
    double db[3] = {0, 0, 0}, dW[3] = {0, 0, 0}, t[3], u[3];
    if (dq) { /* d_m b = sum_jk dp_j dp_k d_m d_k g_j, d_m Omega = sum_j dp_j d_m g_j */
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          dW[i] += dp[j] * k.dg[m][j][i];
          for (int l = 0; l < 3; l++) db[i] += dp[j] * dp[l] * k.ddg[m][l][j][i];
        }
    } else { /* d b / d dp_m = sum_k dp_k (d_k g_m + d_m g_k), d Omega / d dp_m = g_m */
      for (int i = 0; i < 3; i++) {
        dW[i] = k.g[m][i];
        for (int l = 0; l < 3; l++) db[i] += dp[l] * (k.dg[l][m][i] + k.dg[m][l][i]);
      }
    }
    mbs_r_mul(J, db, t);
    mbs_r_mul(P, dW, u);
    for (int i = 0; i < 3; i++) t[i] += u[i];
    for (int j = 0; j < 3; j++) K[3 * j + m] = -mbs_dot3(k.g[j], t) - (dq ? mbs_dot3(k.dg[m][j], c) : 0.0);
  }
}

int mbs_vec_force_jac(mbs_formulation f, const mbs_elem *e, const double *qb, const double *vb, int dq,
                      lv_sink *K) {
  double B[16];
  int n = f == MBS_EP ? 4 : 3, o = e->voff + 3;
  vec_force_jac(f, e, qb, vb, dq, B);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) LV_CHECK(lv_sink_add(K, o + i, o + j, B[n * i + j]));
  return 0;
}

/* ------------------------------------- norm rows of the Euler parameters */

void mbs_vec_norm_g(const mbs_sys *S, const double *q, double *g) {
  for (int b = 1; b < S->nel; b++) {
    const mbs_elem *e = &S->el[b];
    if (e->kind != MBS_BODY) continue;
    const double *p = q + e->qoff + 3;
    g[e->nrow] = 0.5 * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3] - 1.0);
  }
}

