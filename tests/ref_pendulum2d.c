/* Test reference (tests only, not in the library): the model as it was
 * written by hand before the built-in model was described on the
 * multibody layer (models/pendulum2d.c); check_mbs.c compares the two.
 */
/* The planar mathematical pendulum of Arnold, Brüls & Cardona 2015,
 * Example 1, exactly as the paper writes it:
 *   q = (x, y) in R^2,  M = m I,  force vector (0, m g0) (gravity along -y),
 *   Phi(q) = (x^2 + y^2 - l^2) / 2,  so G = (x, y) and lambda = m(|v|^2 - g0 y)/l^2.
 * Initial values from the initial deviation x0: hanging y0 = -sqrt(l^2 - x0^2),
 * the energy fixed to E = m/2 - m g0 l (so |v0| = 1 at x0 = 0), velocity
 * tangent to the circle in direction vsign (-y0, x0) / l.  vsign = +1 is the
 * direction that reproduces the paper's numbers.
 * Differs from pendulum3d in its constraint scaling (l^2 not divided out),
 * its plane and its initial data. */
#include "lv_internal.h"
#include "models/models.h"
#include "refmodels.h"

typedef struct {
  double m, l, grav;
} pend;

static int mass(const double *q, lv_sink *M, void *u) {
  const pend *P = u;
  (void)q;
  LV_CHECK(lv_sink_add(M, 0, 0, P->m));
  return lv_sink_add(M, 1, 1, P->m);
}

static int potential(const double *q, double *V, void *u) {
  const pend *P = u;
  *V = P->m * P->grav * q[1];
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const pend *P = u;
  (void)q;
  dV[0] = 0.0;
  dV[1] = P->m * P->grav;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  (void)q, (void)H, (void)u;
  return 0; /* linear potential */
}

static int constr(const double *q, double *g, void *u) {
  const pend *P = u;
  g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - P->l * P->l);
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  (void)u;
  LV_CHECK(lv_sink_add(G, 0, 0, q[0]));
  return lv_sink_add(G, 0, 1, q[1]);
}

static int chess(const double *q, const double *lam, lv_sink *H, void *u) {
  (void)q, (void)u;
  LV_CHECK(lv_sink_add(H, 0, 0, lam[0]));
  return lv_sink_add(H, 1, 1, lam[0]);
}

static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  (void)q, (void)u;
  LV_CHECK(lv_sink_add(Z, 0, 0, w[0]));
  return lv_sink_add(Z, 0, 1, w[1]);
}

int ref_pendulum2d(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  const lv_param_info *params = ref_params("pendulum2d");
  if (!params) return LV_EUNKNOWN;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  pend *P = lv_calloc(1, sizeof *P);
  if (!P) return LV_ENOMEM;
  double x0, vs;
  int rc = lv_kv_double(kv, "m", 1.0, &P->m);
  if (!rc) rc = lv_kv_double(kv, "l", 1.0, &P->l);
  if (!rc) rc = lv_kv_double(kv, "gravity", 9.81, &P->grav);
  if (!rc) rc = lv_kv_double(kv, "x0", 0.2, &x0);
  if (!rc) rc = lv_kv_double(kv, "vsign", 1.0, &vs);
  if (!rc && (!(P->m > 0) || !(P->l > 0) || !(fabs(x0) < P->l) || (vs != 1.0 && vs != -1.0))) rc = LV_EINPUT;
  double q0[2], v0[2];
  if (!rc) {
    q0[0] = x0;
    q0[1] = -sqrt(P->l * P->l - x0 * x0);
    double E = 0.5 * P->m - P->m * P->grav * P->l;
    double s2 = 2.0 * (E - P->m * P->grav * q0[1]) / P->m;
    if (!(s2 >= 0.0)) rc = LV_EINPUT; /* the fixed energy cannot reach this height */
    double sp = sqrt(s2 > 0 ? s2 : 0.0);
    v0[0] = vs * sp * (-q0[1]) / P->l;
    v0[1] = vs * sp * q0[0] / P->l;
  }
  if (rc) {
    free(P);
    return rc;
  }
  return lv_models_build(out, "pendulum2d", 2, 1, P, free, mass, 1, potential, grad, hess, constr, jac,
                         chess, curv, 0, NULL, q0, v0);
}
