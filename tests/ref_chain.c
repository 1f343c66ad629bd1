/* Test reference (tests only, not in the library): the chain as it was
 * written by hand before the built-in model was described on the
 * multibody layer (models/chain.c); check_mbs.c compares the two.
 */
/* The N-particle spatial pendulum chain in redundant coordinates: particle k
 * (k = 0 .. N-1) at x_k in R^3, mass m each, joined to its predecessor by a
 * massless rod of length l; particle 0 hangs from the fixed point at the
 * origin.  Gravity g0 along -e3.
 *
 *   q = (x_0, .., x_{N-1}) in R^{3N},  M = m I,  V = m g0 sum_k x_k3,
 *   g_k(q) = (|d_k|^2 - l^2) / (2 l),  d_k = x_k - x_{k-1}  (x_{-1} = 0),
 *   G: row k = d_k^T / l at x_k, -d_k^T / l at x_{k-1},
 *   H(q; gam) = D_q(G^T gam) = sum_k gam_k / l [[I, -I], [-I, I]] on (x_k, x_{k-1}),
 *   Z(q; w)   = D_q(G w):  row k = (w_k - w_{k-1})^T / l at x_k, minus that at x_{k-1}.
 *
 * The constraints are scaled by 1/l so that G has unit-vector rows for any
 * link length: the Newton matrices stay O(1) whether N = 10 or 10^6.
 * Every matrix callback writes O(N) entries in a fixed order, so the sparse
 * path assembles and analyses once.  Symmetry: rotation about the vertical
 * axis through the suspension point (momentum map: vertical angular momentum).
 *
 * Initial state: a straight chain in the x-z plane at `angle` degrees from
 * the downward vertical, and a velocity field along e2 (perpendicular to that
 * plane, so G v = 0 holds exactly): v_k = vy s_k (1 + 0.5 sin(3 pi s_k)) e2,
 * s_k = (k+1)/N -- a rotation about the vertical axis plus a bending part, so
 * the motion is three-dimensional and has angular momentum. */
#include "lv_internal.h"
#include "models/models.h"
#include "refmodels.h"

typedef struct {
  int N;
  double m, l, g0;
} chain;

static int mass(const double *q, lv_sink *M, void *u) {
  const chain *C = u;
  (void)q;
  for (int i = 0; i < 3 * C->N; i++) LV_CHECK(lv_sink_add(M, i, i, C->m));
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const chain *C = u;
  double s = 0.0;
  for (int k = 0; k < C->N; k++) s += q[3 * k + 2];
  *V = C->m * C->g0 * s;
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const chain *C = u;
  (void)q;
  for (int k = 0; k < C->N; k++) {
    dV[3 * k] = dV[3 * k + 1] = 0.0;
    dV[3 * k + 2] = C->m * C->g0;
  }
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  const chain *C = u;
  (void)q;
  /* V is linear: zero, but the diagonal positions are written so a scheme
   * that adds d2V into its Newton matrix keeps a fixed pattern */
  for (int i = 0; i < 3 * C->N; i++) LV_CHECK(lv_sink_add(H, i, i, 0.0));
  return 0;
}

/* d = x_k - x_{k-1} */
static void link(const double *q, int k, double d[3]) {
  for (int a = 0; a < 3; a++) d[a] = q[3 * k + a] - (k > 0 ? q[3 * (k - 1) + a] : 0.0);
}

static int constr(const double *q, double *g, void *u) {
  const chain *C = u;
  for (int k = 0; k < C->N; k++) {
    double d[3];
    link(q, k, d);
    g[k] = ((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - C->l * C->l) / (2.0 * C->l);
  }
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  const chain *C = u;
  double il = 1.0 / C->l;
  for (int k = 0; k < C->N; k++) {
    double d[3];
    link(q, k, d);
    for (int a = 0; a < 3; a++) {
      LV_CHECK(lv_sink_add(G, k, 3 * k + a, d[a] * il));
      if (k > 0) LV_CHECK(lv_sink_add(G, k, 3 * (k - 1) + a, -d[a] * il));
    }
  }
  return 0;
}

static int chess(const double *q, const double *gam, lv_sink *H, void *u) {
  const chain *C = u;
  (void)q;
  double il = 1.0 / C->l;
  int N = C->N;
  for (int k = 0; k < N; k++) {
    /* particle k belongs to links k and k+1 */
    double diag = (gam[k] + (k + 1 < N ? gam[k + 1] : 0.0)) * il;
    for (int a = 0; a < 3; a++) {
      LV_CHECK(lv_sink_add(H, 3 * k + a, 3 * k + a, diag));
      if (k > 0) {
        LV_CHECK(lv_sink_add(H, 3 * k + a, 3 * (k - 1) + a, -gam[k] * il));
        LV_CHECK(lv_sink_add(H, 3 * (k - 1) + a, 3 * k + a, -gam[k] * il));
      }
    }
  }
  return 0;
}

static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  const chain *C = u;
  (void)q;
  double il = 1.0 / C->l;
  for (int k = 0; k < C->N; k++) {
    for (int a = 0; a < 3; a++) {
      double dw = (w[3 * k + a] - (k > 0 ? w[3 * (k - 1) + a] : 0.0)) * il;
      LV_CHECK(lv_sink_add(Z, k, 3 * k + a, dw));
      if (k > 0) LV_CHECK(lv_sink_add(Z, k, 3 * (k - 1) + a, -dw));
    }
  }
  return 0;
}

static int sym(int s, const double *q, double *xi, void *u) {
  const chain *C = u;
  (void)s;
  for (int k = 0; k < C->N; k++) {
    xi[3 * k] = -q[3 * k + 1];
    xi[3 * k + 1] = q[3 * k];
    xi[3 * k + 2] = 0.0;
  }
  return 0;
}


int ref_chain(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  const lv_param_info *params = ref_params("chain");
  if (!params) return LV_EUNKNOWN;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  chain *C = lv_calloc(1, sizeof *C);
  if (!C) return LV_ENOMEM;
  double angle = 90.0, vy = 1.0;
  int rc = lv_kv_int(kv, "N", 10, &C->N);
  if (!rc) rc = lv_kv_double(kv, "m", 1.0, &C->m);
  if (!rc) rc = lv_kv_double(kv, "l", 1.0, &C->l);
  if (!rc) rc = lv_kv_double(kv, "gravity", 9.81, &C->g0);
  if (!rc) rc = lv_kv_double(kv, "angle", 90.0, &angle);
  if (!rc) rc = lv_kv_double(kv, "vy", 1.0, &vy);
  if (!rc && (C->N < 1 || C->N > 10000000 || !(C->m > 0) || !(C->l > 0) || !isfinite(C->m) ||
              !isfinite(C->l) || !isfinite(C->g0) || !isfinite(angle) || !isfinite(vy)))
    rc = LV_EINPUT;
  double *q0 = NULL, *v0 = NULL;
  if (!rc) {
    q0 = lv_calloc((size_t)3 * (size_t)C->N, sizeof(double));
    v0 = lv_calloc((size_t)3 * (size_t)C->N, sizeof(double));
    if (!q0 || !v0) rc = LV_ENOMEM;
  }
  if (rc) {
    free(q0);
    free(v0);
    free(C);
    return rc;
  }
  int N = C->N;
  double th = angle * (3.14159265358979323846 / 180.0);
  for (int k = 0; k < N; k++) {
    double s = (double)(k + 1) / N;
    q0[3 * k] = (k + 1) * C->l * sin(th);
    q0[3 * k + 2] = -(k + 1) * C->l * cos(th);
    v0[3 * k + 1] = vy * s * (1.0 + 0.5 * sin(3.0 * 3.14159265358979323846 * s));
  }
  rc = lv_models_build(out, "chain", 3 * N, N, C, free, mass, 1, potential, grad, hess, constr, jac, chess,
                       curv, 1, sym, q0, v0);
  free(q0);
  free(v0);
  return rc;
}
