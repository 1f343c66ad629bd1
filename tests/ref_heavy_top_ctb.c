/* Test reference (tests only, not in the library): the hand-written model
 * that the built-in alias of the same name (models/heavy_top.c, the
 * multibody layer) replaced; the tests compare against it. */
/* Heavy top in Cardan/Tait-Bryan angles (spec 002 §1.3 "Ga (CTB)", the
 * paper's second non-Lie comparison formulation): q = (x, phi) in the
 * linear space R^6, v = q' = (x', phi'), three constraints, the spherical
 * joint R(phi) X - x = 0 (the sign of heavy-top).  Integrated by genalpha
 * on this linear space, that is the classical generalized-alpha (exp =
 * addition, T = I; sigma has no effect).
 *
 * R(phi) = R_a(phi1) R_b(phi2) R_c(phi3) for the axis sequence "abc"
 * (parameter sequence, default xyz = Exudyn's RotXYZ, R = Rx Ry Rz, the
 * CTB of the paper).  Body angular velocity Omega = Gm(phi) phi' with the
 * columns
 *   g1 = R_c^T R_b^T e_a,  g2 = R_c^T e_b,  g3 = e_c
 * (singular where the middle angle is +-pi/2: det Gm = cos phi2 up to
 * sign).  Kinetic energy 1/2 m |x'|^2 + 1/2 Omega^T J Omega, so
 *   M = diag(m I, Gm^T J Gm),
 *   f = (0, -Gm^T (J Gm' phi' + Omega x J Omega)),  V = m g0 x3,
 * the Euler equations projected with the virtual rotation Gm dphi.
 * Gm' phi' = phi1' g1' + phi2' g2' with g1' = -phi3' e_c x g1
 * - phi2' R_c^T (e_b x R_b^T e_a), g2' = -phi3' e_c x g2.
 *
 * Data and initial state as heavy-top (spec §5.1): R0 = I (phi = 0),
 * phi'0 = Gm(0)^-1 Omega0, x'0 = Omega0 x X.  With the default xyz the
 * spin about body y drives the middle angle: the motion passes close to
 * the singular set cos phi2 = 0 every half turn (about every 10 ms), where
 * phi1' and phi3' peak; this is why CTB needs small steps on this problem
 * (genalpha: h <= 1.25e-4).  The classical top angles, sequence=zxy
 * (precession, nutation, spin), are worse here: their singular set is the
 * symmetry axis vertical, and the spec's Omega0 has J_O,zz Omega_z =
 * -J2 Omega_y, the condition for the axis to pass through the downward
 * vertical (it does, at t = 0.373 s), so that formulation diverges as
 * h -> 0.  G is supplied; the mass, force and constraint second
 * derivatives come from the library's finite differences. */
#include "lv_internal.h"
#include "models/models.h"
#include "refmodels.h"

typedef struct {
  double m, g0, J[3], X[3];
  int ax[3]; /* axis of each angle: 0 = x, 1 = y, 2 = z */
} ctb_top;

/* elementary rotation about axis a by angle t, row-major */
static void rot1(int a, double t, double R[9]) {
  double c = cos(t), s = sin(t);
  int b = (a + 1) % 3, d = (a + 2) % 3;
  memset(R, 0, 9 * sizeof(double));
  R[4 * a] = 1.0;
  R[3 * b + b] = c, R[3 * b + d] = -s;
  R[3 * d + b] = s, R[3 * d + d] = c;
}

static void mul3(const double A[9], const double B[9], double C[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) t[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, t, sizeof t);
}

/* y = A^T x */
static void tvec(const double A[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
}

static void cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

typedef struct {
  double R[9];     /* R(phi) */
  double g[3][3];  /* columns of Gm */
  double rba[3];   /* R_b^T e_a */
  double Rc[9];
} kin;

static void kinematics(const ctb_top *T, const double *phi, kin *k) {
  double Ra[9], Rb[9], e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  rot1(T->ax[0], phi[0], Ra);
  rot1(T->ax[1], phi[1], Rb);
  rot1(T->ax[2], phi[2], k->Rc);
  mul3(Ra, Rb, k->R);
  mul3(k->R, k->Rc, k->R);
  tvec(Rb, e[T->ax[0]], k->rba);
  tvec(k->Rc, k->rba, k->g[0]);
  tvec(k->Rc, e[T->ax[1]], k->g[1]);
  memcpy(k->g[2], e[T->ax[2]], sizeof k->g[2]);
}

/* Omega = Gm phi' */
static void omega(const kin *k, const double *dphi, double W[3]) {
  for (int i = 0; i < 3; i++) W[i] = k->g[0][i] * dphi[0] + k->g[1][i] * dphi[1] + k->g[2][i] * dphi[2];
}

static int mass(const double *q, lv_sink *M, void *u) {
  const ctb_top *T = u;
  kin k;
  kinematics(T, q + 3, &k);
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, i, i, T->m));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = 0.0;
      for (int l = 0; l < 3; l++) s += k.g[i][l] * T->J[l] * k.g[j][l];
      LV_CHECK(lv_sink_add(M, 3 + i, 3 + j, s));
    }
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const ctb_top *T = u;
  *V = T->m * T->g0 * q[2];
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const ctb_top *T = u;
  (void)q;
  for (int i = 0; i < 6; i++) dV[i] = 0.0;
  dV[2] = T->m * T->g0;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  (void)q, (void)H, (void)u;
  return 0;
}

static int force(double t, const double *q, const double *v, double *f, void *u) {
  const ctb_top *T = u;
  (void)t;
  kin k;
  kinematics(T, q + 3, &k);
  const double *dp = v + 3;
  const double *ec = k.g[2];
  double W[3], L[3], c[3], gd[3], t1[3], t2[3], w[3];
  omega(&k, dp, W);
  /* Gm' phi' */
  double eb[3] = {0, 0, 0};
  eb[T->ax[1]] = 1.0;
  cross(ec, k.g[0], t1);
  cross(eb, k.rba, t2);
  tvec(k.Rc, t2, w);
  for (int i = 0; i < 3; i++) gd[i] = dp[0] * (-dp[2] * t1[i] - dp[1] * w[i]);
  cross(ec, k.g[1], t1);
  for (int i = 0; i < 3; i++) gd[i] -= dp[1] * dp[2] * t1[i];
  for (int i = 0; i < 3; i++) L[i] = T->J[i] * W[i];
  cross(W, L, c);
  for (int i = 0; i < 3; i++) c[i] += T->J[i] * gd[i];
  for (int i = 0; i < 3; i++) f[i] = 0.0;
  for (int j = 0; j < 3; j++) f[3 + j] = -(k.g[j][0] * c[0] + k.g[j][1] * c[1] + k.g[j][2] * c[2]);
  return 0;
}

static int constr(const double *q, double *g, void *u) {
  const ctb_top *T = u;
  kin k;
  kinematics(T, q + 3, &k);
  for (int i = 0; i < 3; i++) g[i] = k.R[3 * i] * T->X[0] + k.R[3 * i + 1] * T->X[1] + k.R[3 * i + 2] * T->X[2] - q[i];
  return 0;
}

/* d(R X)/dphi_j = R (g_j x X) (body virtual rotation Gm dphi):
 * G = (-I, R (g_1 x X, g_2 x X, g_3 x X)). */
static int jac(const double *q, lv_sink *G, void *u) {
  const ctb_top *T = u;
  kin k;
  kinematics(T, q + 3, &k);
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(G, i, i, -1.0));
  for (int j = 0; j < 3; j++) {
    double c[3];
    cross(k.g[j], T->X, c);
    for (int i = 0; i < 3; i++)
      LV_CHECK(lv_sink_add(G, i, 3 + j, k.R[3 * i] * c[0] + k.R[3 * i + 1] * c[1] + k.R[3 * i + 2] * c[2]));
  }
  return 0;
}

static const lv_param_info params[] = {
    {"sequence", "xyz",
     "axes of the three angles, R = R_a R_b R_c (three distinct of x, y, z); xyz = Exudyn RotXYZ, the paper's CTB"},
    {"Omega1", "0", "initial body angular velocity, 1"},
    {"Omega2", "150", "initial body angular velocity, 2"},
    {"Omega3", "-4.61538", "initial body angular velocity, 3"},
    {NULL, NULL, NULL},
};

int ref_heavy_top_ctb(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  ctb_top P = {15.0, 9.81, {0.234375, 0.46875, 0.234375}, {0, 1, 0}, {0, 1, 2}};
  const char *seq = lv_kv_string(kv, "sequence", "xyz");
  if (strlen(seq) != 3) return LV_EINPUT;
  for (int i = 0; i < 3; i++) {
    if (seq[i] < 'x' || seq[i] > 'z') return LV_EINPUT;
    P.ax[i] = seq[i] - 'x';
  }
  if (P.ax[0] == P.ax[1] || P.ax[1] == P.ax[2] || P.ax[0] == P.ax[2]) return LV_EINPUT; /* Tait-Bryan */
  double W[3];
  LV_CHECK(lv_kv_double(kv, "Omega1", 0.0, &W[0]));
  LV_CHECK(lv_kv_double(kv, "Omega2", 150.0, &W[1]));
  LV_CHECK(lv_kv_double(kv, "Omega3", -4.61538, &W[2]));
  ctb_top *U = lv_calloc(1, sizeof *U);
  if (!U) return LV_ENOMEM;
  *U = P;
  /* R0 = I: Gm(0) = (e_a, e_b, e_c), a permutation, so phi'0 = Gm(0)^T Omega0 */
  double q0[6] = {P.X[0], P.X[1], P.X[2], 0, 0, 0}, v0[6];
  cross(W, P.X, v0);
  for (int i = 0; i < 3; i++) v0[3 + i] = W[P.ax[i]];
  lv_model *m = NULL;
  int rc = lv_models_build(&m, "heavy-top-ctb", 6, 3, U, free, mass, 0, potential, grad, hess, constr, jac, NULL,
                           NULL, 0, NULL, q0, v0);
  if (!rc) rc = lv_model_set_force(m, force, NULL, NULL);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
