/* Test reference (tests only, not in the library): the rigid chain as it
 * was written by hand before the built-in model was described on the
 * multibody layer (models/rigid_chain.c); check_mbs.c compares the two.
 */
/* A chain of N rigid bodies in (R^3 x SO(3))^N with spherical joints: body i
 * (i = 0 .. N-1) has centre of mass x_i, orientation R_i (body -> inertial),
 * mass m and principal inertia J = diag(Jt, Jt, Ja) about its centre of mass
 * (a cylinder of length l and radius r along its body e3 axis).  Its upper
 * joint point is a = (0, 0, l/2) and its lower one b = -a in body
 * coordinates.  Joint 0 fixes body 0's upper point at the origin; joint i
 * ties body i's upper point to body i-1's lower point.  Gravity g0 along -e3.
 *
 *   q_i = (x_i, R_i), v_i = (u_i, Omega_i)  (inertial translational velocity,
 *   body angular velocity; the space's R^3 x SO(3) factor),
 *   M = diag(m I, J) per body,  V = m g0 sum_i x_i3,
 *   f = (0, -Omega_i x J Omega_i)               (gyroscopic force),
 *   g_i(q) = x_i + R_i a - x_{i-1} - R_{i-1} b   (3 per joint; x_{-1} = 0, no R_{-1} term).
 *
 * Derivatives along q o exp(eps w~) (left-trivialised; spec 000_001 §2.7 and
 * §4.3 applied to each body and joint; the heavy top is one body with a = -X):
 *   G:  joint i, body i:   [ I,  -R_i a~ ],   body i-1: [ -I,  R_{i-1} b~ ],
 *   H(q; gam) = D_q(G^T gam):   rotational block of body i:   a~ (R_i^T gam_i)~
 *                                                              - b~ (R_i^T gam_{i+1})~,
 *   Z(q; w)   = D_q(G w):       joint i: body i  R_i (a~ w_Omega,i)~,
 *                                        body i-1  -R_{i-1} (b~ w_Omega,i-1)~,
 *   df/dv = -(Omega~ J - (J Omega)~),  df/dq = 0.
 * Every callback writes O(N) entries in a fixed order (sparse path).
 * Symmetry: rotation about the vertical axis through the suspension point,
 * xi_Q = (e3 x x_i, R_i^T e3) per body (vertical angular momentum).
 *
 * Initial state: the straight chain tilted by `angle` degrees about e2 (all
 * R_i equal), body angular velocities Omega_i = (swing, 0, spin (1 + i/N))
 * and u_i from the joint velocity constraints, recursively from the
 * suspension point, so g(q0) = 0 and G(q0) v0 = 0 hold exactly. */
#include "lv_internal.h"
#include "refmodels.h"

typedef struct {
  int N;
  double m, l, r, g0;
  double J[3];
  double a[3], b[3];
} rchain;

/* C = A B for 3x3 row-major */
static void mul3(const double A[9], const double B[9], double C[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

static int add3(lv_sink *s, int r0, int c0, const double A[9], double scale) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(s, r0 + i, c0 + j, scale * A[3 * i + j]));
  return 0;
}

static const double *X(const double *q, int i) { return q + 12 * i; }
static const double *Rm(const double *q, int i) { return q + 12 * i + 3; }

static int mass(const double *q, lv_sink *M, void *u) {
  const rchain *C = u;
  (void)q;
  for (int i = 0; i < C->N; i++) {
    for (int k = 0; k < 3; k++) LV_CHECK(lv_sink_add(M, 6 * i + k, 6 * i + k, C->m));
    for (int k = 0; k < 3; k++) LV_CHECK(lv_sink_add(M, 6 * i + 3 + k, 6 * i + 3 + k, C->J[k]));
  }
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const rchain *C = u;
  double s = 0.0;
  for (int i = 0; i < C->N; i++) s += X(q, i)[2];
  *V = C->m * C->g0 * s;
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const rchain *C = u;
  (void)q;
  memset(dV, 0, (size_t)6 * (size_t)C->N * sizeof(double));
  for (int i = 0; i < C->N; i++) dV[6 * i + 2] = C->m * C->g0;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  const rchain *C = u;
  (void)q;
  /* V depends on x only, linearly, and x moves by plain addition: zero.
   * The diagonal is written to keep a fixed pattern. */
  for (int i = 0; i < 6 * C->N; i++) LV_CHECK(lv_sink_add(H, i, i, 0.0));
  return 0;
}

static int force(double t, const double *q, const double *v, double *f, void *u) {
  const rchain *C = u;
  (void)t, (void)q;
  for (int i = 0; i < C->N; i++) {
    const double *W = v + 6 * i + 3;
    double JW[3] = {C->J[0] * W[0], C->J[1] * W[1], C->J[2] * W[2]}, c[3];
    lv_models_cross(W, JW, c);
    f[6 * i] = f[6 * i + 1] = f[6 * i + 2] = 0.0;
    for (int k = 0; k < 3; k++) f[6 * i + 3 + k] = -c[k];
  }
  return 0;
}

static int force_dq(double t, const double *q, const double *v, lv_sink *K, void *u) {
  (void)t, (void)q, (void)v, (void)K, (void)u;
  return 0; /* the gyroscopic force does not depend on q: an empty (fixed) pattern */
}

static int force_dv(double t, const double *q, const double *v, lv_sink *D, void *u) {
  const rchain *C = u;
  (void)t, (void)q;
  for (int i = 0; i < C->N; i++) {
    const double *W = v + 6 * i + 3;
    double JW[3] = {C->J[0] * W[0], C->J[1] * W[1], C->J[2] * W[2]}, Wh[9], JWh[9], A[9];
    lv_hat3(W, Wh);
    lv_hat3(JW, JWh);
    /* d(W x JW)/dW = W~ J - (JW)~ */
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) A[3 * r + c] = Wh[3 * r + c] * C->J[c] - JWh[3 * r + c];
    LV_CHECK(add3(D, 6 * i + 3, 6 * i + 3, A, -1.0));
  }
  return 0;
}

static int constr(const double *q, double *g, void *u) {
  const rchain *C = u;
  for (int i = 0; i < C->N; i++) {
    double Ra[3], Rb[3] = {0, 0, 0}, xp[3] = {0, 0, 0};
    lv_models_rvec(Rm(q, i), C->a, Ra);
    if (i > 0) {
      lv_models_rvec(Rm(q, i - 1), C->b, Rb);
      memcpy(xp, X(q, i - 1), sizeof xp);
    }
    for (int k = 0; k < 3; k++) g[3 * i + k] = X(q, i)[k] + Ra[k] - xp[k] - Rb[k];
  }
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  const rchain *C = u;
  double ah[9], bh[9], A[9];
  lv_hat3(C->a, ah);
  lv_hat3(C->b, bh);
  for (int i = 0; i < C->N; i++) {
    for (int k = 0; k < 3; k++) LV_CHECK(lv_sink_add(G, 3 * i + k, 6 * i + k, 1.0));
    mul3(Rm(q, i), ah, A);
    LV_CHECK(add3(G, 3 * i, 6 * i + 3, A, -1.0));
    if (i > 0) {
      for (int k = 0; k < 3; k++) LV_CHECK(lv_sink_add(G, 3 * i + k, 6 * (i - 1) + k, -1.0));
      mul3(Rm(q, i - 1), bh, A);
      LV_CHECK(add3(G, 3 * i, 6 * (i - 1) + 3, A, 1.0));
    }
  }
  return 0;
}

static int chess(const double *q, const double *gam, lv_sink *H, void *u) {
  const rchain *C = u;
  double ah[9], bh[9];
  lv_hat3(C->a, ah);
  lv_hat3(C->b, bh);
  for (int i = 0; i < C->N; i++) {
    /* G^T gam, rotational part of body i: a~ R_i^T gam_i - b~ R_i^T gam_{i+1};
     * R^T y -> exp(-eps w~) R^T y differentiates to (R^T y)~ w. */
    double y[3], yh[9], A[9], B[9] = {0};
    lv_models_rtvec(Rm(q, i), gam + 3 * i, y);
    lv_hat3(y, yh);
    mul3(ah, yh, A);
    if (i + 1 < C->N) {
      lv_models_rtvec(Rm(q, i), gam + 3 * (i + 1), y);
      lv_hat3(y, yh);
      mul3(bh, yh, B);
    }
    for (int k = 0; k < 9; k++) A[k] -= B[k];
    LV_CHECK(add3(H, 6 * i + 3, 6 * i + 3, A, 1.0));
  }
  return 0;
}

static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  const rchain *C = u;
  for (int i = 0; i < C->N; i++) {
    double c[3], ch[9], A[9];
    lv_models_cross(C->a, w + 6 * i + 3, c);
    lv_hat3(c, ch);
    mul3(Rm(q, i), ch, A);
    LV_CHECK(add3(Z, 3 * i, 6 * i + 3, A, 1.0));
    if (i > 0) {
      lv_models_cross(C->b, w + 6 * (i - 1) + 3, c);
      lv_hat3(c, ch);
      mul3(Rm(q, i - 1), ch, A);
      LV_CHECK(add3(Z, 3 * i, 6 * (i - 1) + 3, A, -1.0));
    }
  }
  return 0;
}

static int sym(int s, const double *q, double *xi, void *u) {
  const rchain *C = u;
  (void)s;
  const double e3[3] = {0, 0, 1};
  for (int i = 0; i < C->N; i++) {
    const double *x = X(q, i);
    xi[6 * i] = -x[1];
    xi[6 * i + 1] = x[0];
    xi[6 * i + 2] = 0.0;
    lv_models_rtvec(Rm(q, i), e3, xi + 6 * i + 3);
  }
  return 0;
}

static const lv_param_info params[] = {
    {"N", "10", "number of bodies (1 .. 100000)"},
    {"m", "1", "mass of each body"},
    {"l", "1", "length of each body (distance between its two joints)"},
    {"r", "0.05", "radius of each body (cylinder: inertia about its centre of mass)"},
    {"gravity", "9.81", "gravitational acceleration (along -e3)"},
    {"angle", "30", "initial tilt of the straight chain from the downward vertical, degrees"},
    {"swing", "1", "initial body angular velocity about the body e1 axis"},
    {"spin", "5", "initial body angular velocity about the body's own axis e3 (grows along the chain)"},
    {NULL, NULL, NULL},
};

static void rchain_free(void *p) { free(p); }

int ref_rigid_chain(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  rchain *C = lv_calloc(1, sizeof *C);
  if (!C) return LV_ENOMEM;
  double angle = 30.0, swing = 1.0, spin = 5.0;
  int rc = lv_kv_int(kv, "N", 10, &C->N);
  if (!rc) rc = lv_kv_double(kv, "m", 1.0, &C->m);
  if (!rc) rc = lv_kv_double(kv, "l", 1.0, &C->l);
  if (!rc) rc = lv_kv_double(kv, "r", 0.05, &C->r);
  if (!rc) rc = lv_kv_double(kv, "gravity", 9.81, &C->g0);
  if (!rc) rc = lv_kv_double(kv, "angle", 30.0, &angle);
  if (!rc) rc = lv_kv_double(kv, "swing", 1.0, &swing);
  if (!rc) rc = lv_kv_double(kv, "spin", 5.0, &spin);
  if (!rc && (C->N < 1 || C->N > 100000 || !(C->m > 0) || !(C->l > 0) || !(C->r > 0) || !isfinite(C->m) ||
              !isfinite(C->l) || !isfinite(C->r) || !isfinite(C->g0) || !isfinite(angle) ||
              !isfinite(swing) || !isfinite(spin)))
    rc = LV_EINPUT;
  if (rc) {
    free(C);
    return rc;
  }
  int N = C->N;
  C->J[0] = C->J[1] = C->m * (3.0 * C->r * C->r + C->l * C->l) / 12.0;
  C->J[2] = 0.5 * C->m * C->r * C->r;
  C->a[2] = 0.5 * C->l;
  C->b[2] = -0.5 * C->l;

  lv_space *sp = NULL;
  lv_model *m = NULL;
  rc = lv_space_new(&sp);
  for (int i = 0; i < N && !rc; i++) rc = lv_space_add(sp, LV_FACTOR_R3SO3, 0);
  if (!rc) rc = lv_model_new(&m, "rigid-chain", sp, 3 * N);
  if (rc) {
    lv_space_free(sp);
    free(C);
    return rc;
  }
  lv_model_set_user(m, C, rchain_free);
  rc = lv_model_set_mass(m, mass, 1);
  if (!rc) rc = lv_model_set_potential(m, potential, grad, hess);
  if (!rc) rc = lv_model_set_force(m, force, force_dq, force_dv);
  if (!rc) rc = lv_model_set_constraints(m, constr, jac, chess, curv);
  if (!rc) rc = lv_model_set_symmetries(m, 1, sym);

  double *q0 = lv_calloc((size_t)12 * (size_t)N, sizeof(double));
  double *v0 = lv_calloc((size_t)6 * (size_t)N, sizeof(double));
  if (!rc && (!q0 || !v0)) rc = LV_ENOMEM;
  if (!rc) {
    double th = angle * (3.14159265358979323846 / 180.0), c = cos(th), s = sin(th);
    /* rotation about e2 by -th: the body axis -e3 (pointing down the chain)
     * turns from -e3 towards +e1 */
    const double R0[9] = {c, 0, -s, 0, 1, 0, s, 0, c};
    double up[3] = {0, 0, 0}; /* velocity of the previous lower joint point */
    for (int i = 0; i < N; i++) {
      double *x = q0 + 12 * i, *R = x + 3;
      memcpy(R, R0, sizeof R0);
      double loc[3] = {0, 0, -(2.0 * i + 1.0) * 0.5 * C->l};
      lv_models_rvec(R0, loc, x);
      double *W = v0 + 6 * i + 3, *uu = v0 + 6 * i, t[3], Rt[3];
      W[0] = swing;
      W[1] = 0.0;
      W[2] = spin * (1.0 + (double)i / N);
      /* u_i + R (W x a) = velocity of the joint point above */
      lv_models_cross(W, C->a, t);
      lv_models_rvec(R, t, Rt);
      for (int k = 0; k < 3; k++) uu[k] = up[k] - Rt[k];
      lv_models_cross(W, C->b, t);
      lv_models_rvec(R, t, Rt);
      for (int k = 0; k < 3; k++) up[k] = uu[k] + Rt[k];
    }
    rc = lv_model_set_initial(m, q0, v0);
  }
  free(q0);
  free(v0);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
