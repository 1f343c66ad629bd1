/* Test reference (tests only, not in the library): the gyroscopic top as it
 * was written by hand before the built-in model was described on the
 * multibody layer (models/gyro_top.c); check_mbs.c compares the two.
 */
/* Gyroscopic top in director coordinates (Betsch & Leyendecker; seed 003
 * §6.2 / spec §3.2): q = (phi, d1, d2, d3) in R^12, phi the centre of mass,
 * d_i the body-fixed orthonormal directors along the principal axes.
 *   M = blockdiag(m I3, E1 I3, E2 I3, E3 I3),  E_i = 1/2 (I_j + I_k - I_i)   (101)
 *   V = m g phi_3   (gravity along -e3)
 *   g_int = [1/2(d1.d1-1); 1/2(d2.d2-1); 1/2(d3.d3-1); d1.d2; d1.d3; d2.d3]   (103)
 *   g_ext = phi / l - d3   (tip fixed at the origin)                         (104)
 * The orthogonality rows are the paper's d_i.d_j, not metis's 1/2 d_i.d_j:
 * any constant row scaling of g leaves the trajectory unchanged and only
 * rescales the multipliers (and |G M^-1 p| of those rows) by 2.
 * Symmetry: rotation about e3 acting on all four blocks, J3 = e3 . sum q_i x p_i.
 * Initial data: nutation alpha0 about e1, d_i = R(alpha0) e_i, phi = l d3,
 * omega = omega_p e3 + omega_s d3, v_i = omega x q_i (108)-(111), with the
 * steady-precession spin omega_s of (112) computed from the data (it is
 * 135.60895 for the paper's rounded data, not the printed 135.6).
 * Defaults are the paper's printed data m = 0.7069, I = 5.3014e-4,
 * l = 0.075 (those of the spec's reference values H0 = 5.66971,
 * J3 = 0.0710696); metis's exact cone (rho 2700, height 0.1) is
 * m = 0.706858, I1 = I2 = I3 = 5.30144e-4, reachable with --param. */
#include "lv_internal.h"
#include "refmodels.h"

typedef struct {
  double m, I[3], E[3], l, grav;
} gtop;

enum { PHI = 0, D1 = 3, D2 = 6, D3 = 9 };

static int mass(const double *q, lv_sink *M, void *u) {
  const gtop *T = u;
  (void)q;
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, PHI + i, PHI + i, T->m));
  for (int b = 0; b < 3; b++)
    for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, D1 + 3 * b + i, D1 + 3 * b + i, T->E[b]));
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const gtop *T = u;
  *V = T->m * T->grav * q[PHI + 2];
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const gtop *T = u;
  (void)q;
  memset(dV, 0, 12 * sizeof(double));
  dV[PHI + 2] = T->m * T->grav;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  (void)q, (void)u;
  /* zero; the diagonal keeps a fixed, non-empty pattern */
  for (int i = 0; i < 12; i++) LV_CHECK(lv_sink_add(H, i, i, 0.0));
  return 0;
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* internal constraint rows 3, 4, 5 couple directors (a, b) */
static const int pair_a[3] = {D1, D1, D2}, pair_b[3] = {D2, D3, D3};

static int constr(const double *q, double *g, void *u) {
  const gtop *T = u;
  for (int i = 0; i < 3; i++) g[i] = 0.5 * (dot3(q + D1 + 3 * i, q + D1 + 3 * i) - 1.0);
  for (int r = 0; r < 3; r++) g[3 + r] = dot3(q + pair_a[r], q + pair_b[r]);
  for (int i = 0; i < 3; i++) g[6 + i] = q[PHI + i] / T->l - q[D3 + i];
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  const gtop *T = u;
  for (int i = 0; i < 3; i++)
    for (int c = 0; c < 3; c++) LV_CHECK(lv_sink_add(G, i, D1 + 3 * i + c, q[D1 + 3 * i + c]));
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      LV_CHECK(lv_sink_add(G, 3 + r, pair_a[r] + c, q[pair_b[r] + c]));
      LV_CHECK(lv_sink_add(G, 3 + r, pair_b[r] + c, q[pair_a[r] + c]));
    }
  for (int i = 0; i < 3; i++) {
    LV_CHECK(lv_sink_add(G, 6 + i, PHI + i, 1.0 / T->l));
    LV_CHECK(lv_sink_add(G, 6 + i, D3 + i, -1.0));
  }
  return 0;
}

/* sum_k gamma_k D^2 g_k: identity blocks; the external rows are linear */
static int chess(const double *q, const double *gam, lv_sink *H, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++)
    for (int c = 0; c < 3; c++) LV_CHECK(lv_sink_add(H, D1 + 3 * i + c, D1 + 3 * i + c, gam[i]));
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      LV_CHECK(lv_sink_add(H, pair_a[r] + c, pair_b[r] + c, gam[3 + r]));
      LV_CHECK(lv_sink_add(H, pair_b[r] + c, pair_a[r] + c, gam[3 + r]));
    }
  return 0;
}

/* rows (D^2 g_k w)^T */
static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++)
    for (int c = 0; c < 3; c++) LV_CHECK(lv_sink_add(Z, i, D1 + 3 * i + c, w[D1 + 3 * i + c]));
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      LV_CHECK(lv_sink_add(Z, 3 + r, pair_a[r] + c, w[pair_b[r] + c]));
      LV_CHECK(lv_sink_add(Z, 3 + r, pair_b[r] + c, w[pair_a[r] + c]));
    }
  return 0;
}

static int sym(int k, const double *q, double *xi, void *u) {
  (void)u;
  if (k != 0) return 1;
  for (int b = 0; b < 4; b++) { /* e3 x x */
    xi[3 * b] = -q[3 * b + 1];
    xi[3 * b + 1] = q[3 * b];
    xi[3 * b + 2] = 0.0;
  }
  return 0;
}


static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

int ref_gyro_top(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  const lv_param_info *params = ref_params("gyro-top");
  if (!params) return LV_EUNKNOWN;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  gtop *T = lv_calloc(1, sizeof *T);
  if (!T) return LV_ENOMEM;
  double alpha, wp, ws;
  int rc = lv_kv_double(kv, "m", 0.7069, &T->m);
  if (!rc) rc = lv_kv_double(kv, "I1", 5.3014e-4, &T->I[0]);
  if (!rc) rc = lv_kv_double(kv, "I2", 5.3014e-4, &T->I[1]);
  if (!rc) rc = lv_kv_double(kv, "I3", 5.3014e-4, &T->I[2]);
  if (!rc) rc = lv_kv_double(kv, "l", 0.075, &T->l);
  if (!rc) rc = lv_kv_double(kv, "gravity", 9.81, &T->grav);
  if (!rc) rc = lv_kv_double(kv, "alpha0", 3.14159265358979323846 / 3.0, &alpha);
  if (!rc) rc = lv_kv_double(kv, "omega_p", 10.0, &wp);
  for (int i = 0; i < 3; i++) T->E[i] = 0.5 * (T->I[(i + 1) % 3] + T->I[(i + 2) % 3] - T->I[i]);
  /* (112); the spin default needs omega_p != 0 */
  if (!rc && !lv_kv_string(kv, "omega_s", NULL) && !(wp != 0.0 && T->I[2] > 0.0)) rc = LV_EINPUT;
  if (!rc) {
    double def = T->I[2] > 0.0 && wp != 0.0
                     ? T->m * T->grav * T->l / (T->I[2] * wp) +
                           (T->I[0] + T->m * T->l * T->l - T->I[2]) / T->I[2] * wp * cos(alpha)
                     : 0.0;
    rc = lv_kv_double(kv, "omega_s", def, &ws);
  }
  /* positive mass and Euler-tensor entries (triangle inequality of the I_i) */
  if (!rc && (!(T->m > 0) || !(T->l > 0) || !(T->E[0] > 0) || !(T->E[1] > 0) || !(T->E[2] > 0))) rc = LV_EINPUT;
  if (rc) {
    free(T);
    return rc;
  }
  double q0[12], v0[12], c = cos(alpha), s = sin(alpha);
  const double R[9] = {1, 0, 0, 0, c, s, 0, -s, c}; /* columns d1, d2, d3 of (108) */
  for (int i = 0; i < 9; i++) q0[D1 + i] = R[i];
  for (int i = 0; i < 3; i++) q0[PHI + i] = T->l * q0[D3 + i];
  double w[3] = {ws * q0[D3], ws * q0[D3 + 1], wp + ws * q0[D3 + 2]};
  for (int b = 0; b < 4; b++) cross(w, q0 + 3 * b, v0 + 3 * b);
  return lv_models_build(out, "gyro-top", 12, 9, T, free, mass, 1, potential, grad, hess, constr, jac, chess,
                         curv, 1, sym, q0, v0);
}
