/* Test reference (tests only, not in the library): the slider-crank as it
 * was written by hand before the built-in model was described on the
 * multibody layer (models/slider_crank.c); check_mbs.c compares the two.
 */
/* Spatial rigid slider-crank (spec 002 §5.3, paper §7.3, IFToMM benchmark
 * data as encoded in Exudyn's sliderCrank3Dbenchmark.py): crank, connecting
 * rod and slider, each a rigid body in R^3 x SO(3) (q = (x, R) row-major per
 * body, v = (u inertial, Omega body)), 17 holonomic constraints, 1 degree of
 * freedom, gravity 9.81 along -z.  Free response from crank angle 0 with
 * crank rate 6 rad/s (no drive).
 *
 *   crank  A = (0, 0.1, 0.12), length 0.08 along body z (+z at angle 0),
 *          m 0.12, J = diag(1e-4, 1e-4, 1e-5) at the COM (0.04 from A);
 *          revolute at A about global x: point A (3) + body x . e_y,
 *          body x . e_z = 0 (2).
 *   rod    length 0.3, body x along the rod from B to C, m 0.5,
 *          J = diag(4e-4, 4e-3, 4e-3); spherical joint to the crank at B (3).
 *   slider m 2, J = 1e-4 I; universal joint to the rod at C: point (3) +
 *          slider x . rod y = 0 (1); prismatic along global x through the
 *          origin: y = z = 0 (2) and rotation locked (3).
 *
 * The universal joint's cross axes: the spec's "conrod-x perpendicular to
 * slider-y" cannot hold with x along the rod (the rod's y component is
 * -1/3 at t = 0).  The pair slider-x (the sliding axis) and the rod-fixed
 * axis perpendicular to the rod and to global x at t = 0 is the one for
 * which the IFToMM initial rod angular velocity (1.92, -0.96, 0.48) rad/s
 * satisfies the velocity constraint exactly (with slider-z or slider-y it
 * does not), so it is used: rod body y = (0, -2, 1)/sqrt 5 at t = 0.
 *
 * Constraint Jacobian exact (left-trivialised: d(R a) = -R a~ theta);
 * its derivatives by the library's finite differences. */
#include "lv_internal.h"
#include "models/models.h"
#include "refmodels.h"

#define NB 3
#define NC 17

typedef struct {
  double m[NB], J[NB][3], g;
  double A[3];            /* crank pivot, global */
  double pA[3], pB[3];    /* crank body points A, B from its COM */
  double rB[3], rC[3];    /* rod body points B, C from its COM */
} sc;

static const double EX[3] = {1, 0, 0}, EY[3] = {0, 1, 0}, EZ[3] = {0, 0, 1};

static void cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void rvec(const double *R, const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}
static void rtvec(const double *R, const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
}
static const double *X(const double *q, int b) { return q + 12 * b; }
static const double *Rm(const double *q, int b) { return q + 12 * b + 3; }

static int mass(const double *q, lv_sink *M, void *u) {
  const sc *P = u;
  (void)q;
  for (int b = 0; b < NB; b++) {
    for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, 6 * b + i, 6 * b + i, P->m[b]));
    for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, 6 * b + 3 + i, 6 * b + 3 + i, P->J[b][i]));
  }
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const sc *P = u;
  double s = 0.0;
  for (int b = 0; b < NB; b++) s += P->m[b] * P->g * X(q, b)[2];
  *V = s;
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const sc *P = u;
  (void)q;
  for (int i = 0; i < 6 * NB; i++) dV[i] = 0.0;
  for (int b = 0; b < NB; b++) dV[6 * b + 2] = P->m[b] * P->g;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  (void)q, (void)H, (void)u;
  return 0;
}

/* gyroscopic -Omega x J Omega per body */
static int force(double t, const double *q, const double *v, double *f, void *u) {
  const sc *P = u;
  (void)t, (void)q;
  for (int b = 0; b < NB; b++) {
    const double *W = v + 6 * b + 3;
    double L[3] = {P->J[b][0] * W[0], P->J[b][1] * W[1], P->J[b][2] * W[2]}, c[3];
    cross(W, L, c);
    for (int i = 0; i < 3; i++) f[6 * b + i] = 0.0, f[6 * b + 3 + i] = -c[i];
  }
  return 0;
}

/* x_b + R_b p */
static void point(const double *q, int b, const double p[3], double y[3]) {
  rvec(Rm(q, b), p, y);
  for (int i = 0; i < 3; i++) y[i] += X(q, b)[i];
}

static int constr(const double *q, double *g, void *u) {
  const sc *P = u;
  double y[3], z[3], a[3], c[3];
  point(q, 0, P->pA, y);
  for (int i = 0; i < 3; i++) g[i] = y[i] - P->A[i];
  rvec(Rm(q, 0), EX, a);
  g[3] = a[1];
  g[4] = a[2];
  point(q, 0, P->pB, y);
  point(q, 1, P->rB, z);
  for (int i = 0; i < 3; i++) g[5 + i] = y[i] - z[i];
  point(q, 1, P->rC, y);
  for (int i = 0; i < 3; i++) g[8 + i] = y[i] - X(q, 2)[i];
  rvec(Rm(q, 2), EX, a);
  rvec(Rm(q, 1), EY, c);
  g[11] = dot(a, c);
  g[12] = X(q, 2)[1];
  g[13] = X(q, 2)[2];
  rvec(Rm(q, 2), EY, a);
  g[14] = a[2];
  rvec(Rm(q, 2), EZ, a);
  g[15] = a[0];
  rvec(Rm(q, 2), EX, a);
  g[16] = a[1];
  return 0;
}

/* rows r0..r0+2 += s d(x_b + R_b p) = s (I, -R_b p~) */
static int jpoint(lv_sink *G, int r0, const double *q, int b, const double p[3], double s) {
  const double *R = Rm(q, b);
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(G, r0 + i, 6 * b + i, s));
  /* (R p~)_{ij} = sum_k R_ik p~_kj,  p~ e_j = p x e_j */
  for (int j = 0; j < 3; j++) {
    double e[3] = {0, 0, 0}, c[3], y[3];
    e[j] = 1.0;
    cross(p, e, c);
    rvec(R, c, y);
    for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(G, r0 + i, 6 * b + 3 + j, -s * y[i]));
  }
  return 0;
}

/* row r += d((R_b a) . w) w.r.t. theta_b for a fixed global w: -(R_b^T w) x a */
static int jdir(lv_sink *G, int r, const double *q, int b, const double a[3], const double w[3]) {
  double z[3], c[3];
  rtvec(Rm(q, b), w, z);
  cross(z, a, c);
  for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(G, r, 6 * b + 3 + j, -c[j]));
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  const sc *P = u;
  double a[3], c[3];
  LV_CHECK(jpoint(G, 0, q, 0, P->pA, 1.0));
  LV_CHECK(jdir(G, 3, q, 0, EX, EY));
  LV_CHECK(jdir(G, 4, q, 0, EX, EZ));
  LV_CHECK(jpoint(G, 5, q, 0, P->pB, 1.0));
  LV_CHECK(jpoint(G, 5, q, 1, P->rB, -1.0));
  LV_CHECK(jpoint(G, 8, q, 1, P->rC, 1.0));
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(G, 8 + i, 12 + i, -1.0));
  rvec(Rm(q, 1), EY, c); /* (R_s e_x) . (R_r e_y): each factor with the other frozen */
  rvec(Rm(q, 2), EX, a);
  LV_CHECK(jdir(G, 11, q, 2, EX, c));
  LV_CHECK(jdir(G, 11, q, 1, EY, a));
  LV_CHECK(lv_sink_add(G, 12, 13, 1.0));
  LV_CHECK(lv_sink_add(G, 13, 14, 1.0));
  LV_CHECK(jdir(G, 14, q, 2, EY, EZ));
  LV_CHECK(jdir(G, 15, q, 2, EZ, EX));
  LV_CHECK(jdir(G, 16, q, 2, EX, EY));
  return 0;
}

static const lv_param_info params[] = {
    {"gravity", "9.81", "gravitational acceleration along -z [m/s^2]"},
    {"omega0", "6", "initial crank angular velocity about x [rad/s]"},
    {NULL, NULL, NULL},
};

int ref_slider_crank(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  sc P;
  memset(&P, 0, sizeof P);
  double w0;
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &P.g));
  LV_CHECK(lv_kv_double(kv, "omega0", 6.0, &w0));
  if (!isfinite(P.g) || !isfinite(w0)) return LV_EINPUT;
  P.m[0] = 0.12, P.m[1] = 0.5, P.m[2] = 2.0;
  const double J[NB][3] = {{1e-4, 1e-4, 1e-5}, {4e-4, 4e-3, 4e-3}, {1e-4, 1e-4, 1e-4}};
  memcpy(P.J, J, sizeof J);
  P.A[1] = 0.1, P.A[2] = 0.12;
  P.pA[2] = -0.04, P.pB[2] = 0.04;
  P.rB[0] = -0.15, P.rC[0] = 0.15;

  /* initial configuration: B = (0, 0.1, 0.2), C = (0.2, 0, 0) */
  const double B[3] = {0, 0.1, 0.2}, C[3] = {0.2, 0, 0};
  double e1[3], e2[3] = {0, -2 / sqrt(5.0), 1 / sqrt(5.0)}, e3[3];
  for (int i = 0; i < 3; i++) e1[i] = (C[i] - B[i]) / 0.3;
  cross(e1, e2, e3);
  double q0[36] = {0}, v0[18] = {0};
  double *qc = q0, *qr = q0 + 12, *qs = q0 + 24;
  qc[0] = 0, qc[1] = 0.1, qc[2] = 0.16;
  qc[3] = qc[7] = qc[11] = 1.0;
  for (int i = 0; i < 3; i++) qr[i] = 0.5 * (B[i] + C[i]);
  for (int i = 0; i < 3; i++) qr[3 + 3 * i] = e1[i], qr[4 + 3 * i] = e2[i], qr[5 + 3 * i] = e3[i];
  qs[0] = 0.2;
  qs[3] = qs[7] = qs[11] = 1.0;
  /* velocities: crank w0 e_x; rod from v_B, v_C with the universal joint's
   * spin (w0 = 6 gives the IFToMM (1.92, -0.96, 0.48)); slider v_C */
  double wc[3] = {w0, 0, 0}, rA[3] = {0, 0, 0.04}, rb[3] = {0, 0, 0.08}, vB[3], vC[3], vCOM[3];
  cross(wc, rA, vCOM);
  cross(wc, rb, vB);
  double d[3], s;
  for (int i = 0; i < 3; i++) d[i] = C[i] - B[i];
  /* rigid rod with C on the x axis: d . (v_C - v_B) = 0, v_C = (vx, 0, 0) */
  s = dot(d, vB) / d[0];
  double dv[3] = {s - vB[0], -vB[1], -vB[2]}, wp[3], wr[3];
  vC[0] = s, vC[1] = vC[2] = 0.0;
  cross(d, dv, wp);
  for (int i = 0; i < 3; i++) wp[i] /= dot(d, d);
  /* spin a along e1 from e_x . (w x e2) = 0 */
  double c1[3], c2[3];
  cross(wp, e2, c1);
  cross(e1, e2, c2);
  double a = -c1[0] / c2[0];
  for (int i = 0; i < 3; i++) wr[i] = wp[i] + a * e1[i];
  memcpy(v0, vCOM, sizeof vCOM);
  memcpy(v0 + 3, wc, sizeof wc);
  for (int i = 0; i < 3; i++) v0[6 + i] = 0.5 * (vB[i] + vC[i]);
  rtvec(qr + 3, wr, v0 + 9);
  memcpy(v0 + 12, vC, sizeof vC);

  lv_space *sp = NULL;
  int rc = lv_space_new(&sp);
  if (rc) return rc;
  for (int b = 0; b < NB && !rc; b++) rc = lv_space_add(sp, LV_FACTOR_R3SO3, 0);
  lv_model *m = NULL;
  if (!rc) rc = lv_model_new(&m, "slider-crank", sp, NC);
  if (rc) {
    lv_space_free(sp);
    return rc;
  }
  sc *U = lv_calloc(1, sizeof *U);
  if (!U) {
    lv_model_free(m);
    return LV_ENOMEM;
  }
  *U = P;
  lv_model_set_user(m, U, free);
  rc = lv_model_set_mass(m, mass, 1);
  if (!rc) rc = lv_model_set_potential(m, potential, grad, hess);
  if (!rc) rc = lv_model_set_force(m, force, NULL, NULL);
  if (!rc) rc = lv_model_set_constraints(m, constr, jac, NULL, NULL);
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
