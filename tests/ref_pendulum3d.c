/* Test reference (tests only, not in the library): the model as it was
 * written by hand before the built-in model was described on the
 * multibody layer (models/pendulum3d.c); check_mbs.c compares the two.
 */
/* The 3D mathematical pendulum (seed 003 §6.1): one particle of mass m on a
 * massless rod of length l, gravity along -e3.
 *   q in R^3,  V = m g q3,  g(q) = 1/2 (q.q / l^2 - 1),
 *   symmetry: rotation about e3, J = e3 . (q x p). */
#include "lv_internal.h"
#include "models/models.h"
#include "refmodels.h"

typedef struct {
  double m, l, grav;
} pendulum;

static int mass(const double *q, lv_sink *M, void *u) {
  const pendulum *P = u;
  (void)q;
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, i, i, P->m));
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const pendulum *P = u;
  *V = P->m * P->grav * q[2];
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const pendulum *P = u;
  (void)q;
  dV[0] = dV[1] = 0.0;
  dV[2] = P->m * P->grav;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  (void)q, (void)u;
  /* zero, but the diagonal positions are written to keep a fixed pattern */
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(H, i, i, 0.0));
  return 0;
}

static int constr(const double *q, double *g, void *u) {
  const pendulum *P = u;
  g[0] = 0.5 * ((q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) / (P->l * P->l) - 1.0);
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  const pendulum *P = u;
  for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(G, 0, j, q[j] / (P->l * P->l)));
  return 0;
}

static int chess(const double *q, const double *gam, lv_sink *H, void *u) {
  const pendulum *P = u;
  (void)q;
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(H, i, i, gam[0] / (P->l * P->l)));
  return 0;
}

static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  const pendulum *P = u;
  (void)q;
  for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(Z, 0, j, w[j] / (P->l * P->l)));
  return 0;
}

static int sym(int k, const double *q, double *xi, void *u) {
  (void)k, (void)u;
  xi[0] = -q[1];
  xi[1] = q[0];
  xi[2] = 0.0;
  return 0;
}


int ref_pendulum3d(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  const lv_param_info *params = ref_params("pendulum3d");
  if (!params) return LV_EUNKNOWN;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  pendulum *P = lv_calloc(1, sizeof *P);
  if (!P) return LV_ENOMEM;
  double q0[3], v0[3];
  int rc = lv_kv_double(kv, "m", 1.0, &P->m);
  if (!rc) rc = lv_kv_double(kv, "l", 1.0, &P->l);
  if (!rc) rc = lv_kv_double(kv, "gravity", 9.81, &P->grav);
  if (!rc) rc = lv_kv_double(kv, "x0", 1.0, &q0[0]);
  if (!rc) rc = lv_kv_double(kv, "y0", 0.0, &q0[1]);
  if (!rc) rc = lv_kv_double(kv, "z0", 0.0, &q0[2]);
  if (!rc) rc = lv_kv_double(kv, "vx0", 0.0, &v0[0]);
  if (!rc) rc = lv_kv_double(kv, "vy0", 1.0, &v0[1]);
  if (!rc) rc = lv_kv_double(kv, "vz0", 0.0, &v0[2]);
  if (!rc && (!(P->m > 0) || !(P->l > 0))) rc = LV_EINPUT;
  if (rc) {
    free(P);
    return rc;
  }
  return lv_models_build(out, "pendulum3d", 3, 1, P, free, mass, 1, potential, grad, hess, constr, jac,
                         chess, curv, 1, sym, q0, v0);
}
