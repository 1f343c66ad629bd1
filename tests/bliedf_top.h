/* The heavy top exactly as in the BLieDF paper (seed 004 §4.1, spec
 * 004_bliedf.md §5), for tests/check_bliedf.c and benchmarks/bench_bliedf.c:
 *
 *   so3    q = R in SO(3), v = Omega (body), no constraints (57):
 *          J_O Omega' + Omega x J_O Omega - X x (R^T m gam) = 0;
 *   r3so3  q = (x, R) in R^3 x SO(3), v = (u, Omega), index 3 (58):
 *          m u' - m gam - R lambda = 0,  J Omega' + Omega x J Omega + X x lambda = 0,
 *          Phi(q) = -R^T x + X = 0.
 *
 * The constraint is the paper's -R^T x + X (the library's heavy-top model
 * uses -x + R X, whose multiplier is R lambda), so lambda here is the
 * paper's and the spec's reference numbers apply unchanged.  All derivatives
 * are exact (left-trivialised); check_bliedf compares them with finite
 * differences.  Header-only so that the test and the benchmark share one
 * definition without a library symbol. */
#ifndef LIVENS_BLIEDF_TOP_H
#define LIVENS_BLIEDF_TOP_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"

#define HT_M 15.0
static const double HT_X[3] = {0.0, 1.0, 0.0};
static const double HT_GAM[3] = {0.0, 0.0, -9.81};
static const double HT_JCM[3] = {0.234375, 0.46875, 0.234375};
static const double HT_JO[3] = {15.234375, 0.46875, 15.234375};
static const double HT_W0[3] = {0.0, 150.0, -4.61538};

/* Reference values at t = 2 (spec §5.3, DOP853 rtol 2.3e-14, accurate to
 * about 1e-12 absolute). */
static const double HT_R2[9] = {-0.4874490822362, -0.1504168227457, 0.8600977686648,
                                -0.5379397438442, -0.7241655916369, -0.4315148060983,
                                0.6877602956116,  -0.6730222695605, 0.2720786659328};
static const double HT_W2[3] = {0.12223321949756, 150.00000000000, -5.8556245892057};
static const double HT_L2[3] = {10.0192833113576, -613.5844313106911, -404.7734503958381};

static inline void ht_cross(const double a[3], const double b[3], double c[3]) {
  double t0 = a[1] * b[2] - a[2] * b[1], t1 = a[2] * b[0] - a[0] * b[2], t2 = a[0] * b[1] - a[1] * b[0];
  c[0] = t0, c[1] = t1, c[2] = t2;
}
static inline void ht_rv(const double *R, const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}
static inline void ht_rtv(const double *R, const double x[3], double y[3]) {
  double t[3];
  for (int i = 0; i < 3; i++) t[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
  y[0] = t[0], y[1] = t[1], y[2] = t[2];
}
/* a~ as a 3x3 row-major matrix */
static inline void ht_hat(const double a[3], double A[9]) {
  A[0] = 0, A[1] = -a[2], A[2] = a[1];
  A[3] = a[2], A[4] = 0, A[5] = -a[0];
  A[6] = -a[1], A[7] = a[0], A[8] = 0;
}
static inline void ht_mul(const double A[9], const double B[9], double C[9]) {
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, T, sizeof T);
}
static inline int ht_add3(lv_sink *s, int r0, int c0, const double A[9], double sc) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      int rc = lv_sink_add(s, r0 + i, c0 + j, sc * A[3 * i + j]);
      if (rc) return rc;
    }
  return 0;
}

/* ---- the model callbacks; user = (void *)1 for r3so3, NULL for so3 ---- */
static inline int ht_is_r3(void *u) { return u != NULL; }
static inline const double *ht_rot(const double *q, void *u) { return ht_is_r3(u) ? q + 3 : q; }

static int ht_mass(const double *q, lv_sink *M, void *u) {
  (void)q;
  int o = 0, rc;
  if (ht_is_r3(u)) {
    for (int i = 0; i < 3; i++)
      if ((rc = lv_sink_add(M, i, i, HT_M))) return rc;
    o = 3;
  }
  for (int i = 0; i < 3; i++)
    if ((rc = lv_sink_add(M, o + i, o + i, ht_is_r3(u) ? HT_JCM[i] : HT_JO[i]))) return rc;
  return 0;
}

/* V = -m gam . (x or R X) */
static int ht_V(const double *q, double *V, void *u) {
  double x[3];
  if (ht_is_r3(u)) memcpy(x, q, sizeof x);
  else ht_rv(q, HT_X, x);
  *V = -HT_M * (HT_GAM[0] * x[0] + HT_GAM[1] * x[1] + HT_GAM[2] * x[2]);
  return 0;
}

/* so3: dV = -X x (R^T m gam); r3so3: dV = (-m gam, 0) */
static int ht_dV(const double *q, double *dV, void *u) {
  if (ht_is_r3(u)) {
    for (int i = 0; i < 3; i++) dV[i] = -HT_M * HT_GAM[i], dV[3 + i] = 0.0;
    return 0;
  }
  double r[3];
  ht_rtv(q, HT_GAM, r);
  for (int i = 0; i < 3; i++) r[i] *= HT_M;
  ht_cross(HT_X, r, dV);
  for (int i = 0; i < 3; i++) dV[i] = -dV[i];
  return 0;
}

/* so3: d2V = -X~ (R^T m gam)~; r3so3: 0 (diagonal written for a fixed pattern) */
static int ht_d2V(const double *q, lv_sink *H, void *u) {
  if (ht_is_r3(u)) {
    for (int i = 0; i < 6; i++) {
      int rc = lv_sink_add(H, i, i, 0.0);
      if (rc) return rc;
    }
    return 0;
  }
  double r[3], A[9], Bm[9];
  ht_rtv(q, HT_GAM, r);
  for (int i = 0; i < 3; i++) r[i] *= HT_M;
  ht_hat(HT_X, A);
  ht_hat(r, Bm);
  ht_mul(A, Bm, A);
  return ht_add3(H, 0, 0, A, -1.0);
}

/* f = -Omega x J Omega (gyroscopic) */
static int ht_f(double t, const double *q, const double *v, double *f, void *u) {
  (void)t, (void)q;
  const double *J = ht_is_r3(u) ? HT_JCM : HT_JO;
  int o = ht_is_r3(u) ? 3 : 0;
  const double *W = v + o;
  double JW[3] = {J[0] * W[0], J[1] * W[1], J[2] * W[2]}, c[3];
  ht_cross(W, JW, c);
  for (int i = 0; i < o; i++) f[i] = 0.0;
  for (int i = 0; i < 3; i++) f[o + i] = -c[i];
  return 0;
}
static int ht_fdq(double t, const double *q, const double *v, lv_sink *K, void *u) {
  (void)t, (void)q, (void)v;
  int o = ht_is_r3(u) ? 3 : 0;
  for (int i = 0; i < 3; i++) {
    int rc = lv_sink_add(K, o + i, o + i, 0.0);
    if (rc) return rc;
  }
  return 0;
}
/* df/dv = -(W~ J - (J W)~) */
static int ht_fdv(double t, const double *q, const double *v, lv_sink *C, void *u) {
  (void)t, (void)q;
  const double *J = ht_is_r3(u) ? HT_JCM : HT_JO;
  int o = ht_is_r3(u) ? 3 : 0;
  const double *W = v + o;
  double JW[3] = {J[0] * W[0], J[1] * W[1], J[2] * W[2]}, A[9], Bm[9];
  ht_hat(W, A);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) A[3 * i + j] *= J[j];
  ht_hat(JW, Bm);
  for (int i = 0; i < 9; i++) A[i] = -(A[i] - Bm[i]);
  return ht_add3(C, o, o, A, 1.0);
}

/* Phi = -R^T x + X */
static int ht_g(const double *q, double *g, void *u) {
  (void)u;
  ht_rtv(q + 3, q, g);
  for (int i = 0; i < 3; i++) g[i] = -g[i] + HT_X[i];
  return 0;
}
/* G = [-R^T, -(R^T x)~] */
static int ht_G(const double *q, lv_sink *G, void *u) {
  (void)u;
  const double *R = q + 3;
  double Rt[9], r[3], A[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Rt[3 * i + j] = R[3 * j + i];
  ht_rtv(R, q, r);
  ht_hat(r, A);
  int rc = ht_add3(G, 0, 0, Rt, -1.0);
  return rc ? rc : ht_add3(G, 0, 3, A, -1.0);
}
/* D_q(G^T l) = [[0, R l~], [-l~ R^T, -l~ (R^T x)~]] */
static int ht_H(const double *q, const double *l, lv_sink *H, void *u) {
  (void)u;
  const double *R = q + 3;
  double L[9], A[9], Rt[9], r[3], X[9], Z[9] = {0};
  ht_hat(l, L);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Rt[3 * i + j] = R[3 * j + i];
  int rc = ht_add3(H, 0, 0, Z, 1.0);
  ht_mul(R, L, A);
  if (!rc) rc = ht_add3(H, 0, 3, A, 1.0);
  ht_mul(L, Rt, A);
  if (!rc) rc = ht_add3(H, 3, 0, A, -1.0);
  ht_rtv(R, q, r);
  ht_hat(r, X);
  ht_mul(L, X, A);
  if (!rc) rc = ht_add3(H, 3, 3, A, -1.0);
  return rc;
}
/* D_q(G w) = [w_W~ R^T, -(R^T w_u)~ + w_W~ (R^T x)~] */
static int ht_Z(const double *q, const double *w, lv_sink *Zs, void *u) {
  (void)u;
  const double *R = q + 3;
  double Wh[9], Rt[9], A[9], r[3], X[9], U[9];
  ht_hat(w + 3, Wh);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Rt[3 * i + j] = R[3 * j + i];
  ht_mul(Wh, Rt, A);
  int rc = ht_add3(Zs, 0, 0, A, 1.0);
  ht_rtv(R, q, r);
  ht_hat(r, X);
  ht_mul(Wh, X, A);
  ht_rtv(R, w, r);
  ht_hat(r, U);
  for (int i = 0; i < 9; i++) A[i] -= U[i];
  if (!rc) rc = ht_add3(Zs, 0, 3, A, 1.0);
  return rc;
}

/* Builds the heavy top; r3 = 1 for R^3 x SO(3) (index 3), 0 for SO(3). */
static inline int ht_model(int r3, lv_model **out) {
  lv_space *sp = NULL;
  lv_model *m = NULL;
  int rc = lv_space_new(&sp);
  if (!rc) rc = lv_space_add(sp, r3 ? LV_FACTOR_R3SO3 : LV_FACTOR_SO3, 0);
  if (!rc) rc = lv_model_new(&m, r3 ? "heavy-top-paper-r3so3" : "heavy-top-paper-so3", sp, r3 ? 3 : 0);
  if (rc) {
    lv_space_free(sp);
    return rc;
  }
  void *u = r3 ? (void *)1 : NULL;
  lv_model_set_user(m, u, NULL);
  rc = lv_model_set_mass(m, ht_mass, 1);
  if (!rc) rc = lv_model_set_potential(m, ht_V, ht_dV, ht_d2V);
  if (!rc) rc = lv_model_set_force(m, ht_f, ht_fdq, ht_fdv);
  if (!rc && r3) rc = lv_model_set_constraints(m, ht_g, ht_G, ht_H, ht_Z);
  double q0[12] = {0}, v0[6] = {0};
  double *R = r3 ? q0 + 3 : q0, *W = r3 ? v0 + 3 : v0;
  R[0] = R[4] = R[8] = 1.0;
  memcpy(W, HT_W0, sizeof HT_W0);
  if (r3) {
    memcpy(q0, HT_X, sizeof HT_X); /* x = R X */
    ht_cross(HT_W0, HT_X, v0);     /* u = R (Omega x X) */
  }
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

/* ---- reference: classical RK4 on (R, Omega) in R^12 for the SO(3) ODE ---- */

/* Omega' of (57) */
static inline void ht_wdot(const double *R, const double *W, double *Wd) {
  double r[3], a[3], b[3], JW[3] = {HT_JO[0] * W[0], HT_JO[1] * W[1], HT_JO[2] * W[2]};
  ht_rtv(R, HT_GAM, r);
  for (int i = 0; i < 3; i++) r[i] *= HT_M;
  ht_cross(HT_X, r, a);
  ht_cross(W, JW, b);
  for (int i = 0; i < 3; i++) Wd[i] = (a[i] - b[i]) / HT_JO[i];
}

static inline void ht_rhs(const double *y, double *f) {
  const double *R = y, *W = y + 9;
  double Wh[9];
  ht_hat(W, Wh);
  ht_mul(R, Wh, f);
  ht_wdot(R, W, f + 9);
}

/* Advance y = (R, Omega) by n RK4 steps of size h. */
static inline void ht_rk4(double *y, double h, long n) {
  double k1[12], k2[12], k3[12], k4[12], t[12];
  for (long s = 0; s < n; s++) {
    ht_rhs(y, k1);
    for (int i = 0; i < 12; i++) t[i] = y[i] + 0.5 * h * k1[i];
    ht_rhs(t, k2);
    for (int i = 0; i < 12; i++) t[i] = y[i] + 0.5 * h * k2[i];
    ht_rhs(t, k3);
    for (int i = 0; i < 12; i++) t[i] = y[i] + h * k3[i];
    ht_rhs(t, k4);
    for (int i = 0; i < 12; i++) y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
  }
}

static inline void ht_y0(double *y) {
  memset(y, 0, 12 * sizeof(double));
  y[0] = y[4] = y[8] = 1.0;
  memcpy(y + 9, HT_W0, sizeof HT_W0);
}

/* From (R, Omega): the r3so3 state (x, R), (u, Omega) and the paper's
 * lambda = m (Omega x (Omega x X) + Omega' x X) - m R^T gam. */
static inline void ht_r3_state(const double *y, double *q, double *v, double *lam) {
  const double *R = y, *W = y + 9;
  double Wd[3], a[3], b[3], r[3];
  if (q) {
    ht_rv(R, HT_X, q);
    memcpy(q + 3, R, 9 * sizeof(double));
  }
  ht_cross(W, HT_X, a);
  if (v) {
    ht_rv(R, a, v);
    memcpy(v + 3, W, 3 * sizeof(double));
  }
  if (lam) {
    ht_wdot(R, W, Wd);
    ht_cross(W, a, b);
    ht_cross(Wd, HT_X, a);
    ht_rtv(R, HT_GAM, r);
    for (int i = 0; i < 3; i++) lam[i] = HT_M * (b[i] + a[i] - r[i]);
  }
}

#endif
