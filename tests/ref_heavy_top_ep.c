/* Test reference (tests only, not in the library): the hand-written model
 * that the built-in alias of the same name (models/heavy_top.c, the
 * multibody layer) replaced; the tests compare against it. */
/* Heavy top in Euler parameters (spec 002 §1.3 "Gα (EP)", the paper's
 * non-Lie comparison formulation): q = (x, p) in the linear space R^7,
 * v = q' = (x', p'), p = (p0, p1, p2, p3) the unit quaternion of R, four
 * constraints: the spherical joint R(p) X - x = 0 (3, the sign of
 * heavy-top) and the norm (|p|^2 - 1)/2 = 0 (1).  Integrated by genalpha on
 * this linear space, that is the classical generalized-alpha of
 * Arnold-Brüls (exp = addition, T = I; sigma has no effect).
 *
 * With Gb(p) = [-p_v, p0 I - p_v~] (3x4) the body angular velocity is
 * Omega = 2 Gb(p) p', the kinetic energy 1/2 m |x'|^2 + 2 p'^T Gb^T J Gb p':
 *   M = diag(m I, 4 Gb^T J Gb)   (rank 3 in p: the norm constraint fixes p . p''),
 *   f = (0, -8 Gb(p')^T J Gb(p) p')   (Nikravesh; uses Gb(p') p' = 0),
 *   V = m g0 x3.
 * R(p) = (p0^2 - p_v . p_v) I + 2 p_v p_v^T + 2 p0 p_v~.  Data as heavy-top
 * (spec §5.1).  Derivatives of G, M and f by the library's finite
 * differences. */
#include "lv_internal.h"
#include "models/models.h"
#include "refmodels.h"

typedef struct {
  double m, g0, J[3], X[3];
} ep_top;

/* Gb(p) row-major 3x4 */
static void gbar(const double *p, double Gb[12]) {
  const double p0 = p[0], a = p[1], b = p[2], c = p[3];
  const double G[12] = {-a, p0, c, -b, -b, -c, p0, a, -c, b, -a, p0};
  memcpy(Gb, G, sizeof G);
}

static void rot(const double *p, double R[9]) {
  const double p0 = p[0], *e = p + 1;
  double s = p0 * p0 - (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = (i == j) * s + 2.0 * e[i] * e[j];
  R[1] -= 2 * p0 * e[2], R[2] += 2 * p0 * e[1];
  R[3] += 2 * p0 * e[2], R[5] -= 2 * p0 * e[0];
  R[6] -= 2 * p0 * e[1], R[7] += 2 * p0 * e[0];
}

static int mass(const double *q, lv_sink *M, void *u) {
  const ep_top *T = u;
  double Gb[12];
  gbar(q + 3, Gb);
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, i, i, T->m));
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      double s = 0.0;
      for (int k = 0; k < 3; k++) s += Gb[4 * k + i] * T->J[k] * Gb[4 * k + j];
      LV_CHECK(lv_sink_add(M, 3 + i, 3 + j, 4.0 * s));
    }
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const ep_top *T = u;
  *V = T->m * T->g0 * q[2];
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const ep_top *T = u;
  (void)q;
  for (int i = 0; i < 7; i++) dV[i] = 0.0;
  dV[2] = T->m * T->g0;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  (void)q, (void)H, (void)u;
  return 0;
}

static int force(double t, const double *q, const double *v, double *f, void *u) {
  const ep_top *T = u;
  (void)t;
  double Gp[12], Gv[12], w[3];
  gbar(q + 3, Gp);
  gbar(v + 3, Gv);
  for (int k = 0; k < 3; k++) {
    double s = 0.0;
    for (int j = 0; j < 4; j++) s += Gp[4 * k + j] * v[3 + j];
    w[k] = T->J[k] * s; /* J Gb(p) p' */
  }
  for (int i = 0; i < 3; i++) f[i] = 0.0;
  for (int j = 0; j < 4; j++) {
    double s = 0.0;
    for (int k = 0; k < 3; k++) s += Gv[4 * k + j] * w[k];
    f[3 + j] = -8.0 * s;
  }
  return 0;
}

static int constr(const double *q, double *g, void *u) {
  const ep_top *T = u;
  double R[9];
  rot(q + 3, R);
  for (int i = 0; i < 3; i++) g[i] = R[3 * i] * T->X[0] + R[3 * i + 1] * T->X[1] + R[3 * i + 2] * T->X[2] - q[i];
  g[3] = 0.5 * (q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6] - 1.0);
  return 0;
}

static const lv_param_info params[] = {
    {"Omega1", "0", "initial body angular velocity, 1"},
    {"Omega2", "150", "initial body angular velocity, 2"},
    {"Omega3", "-4.61538", "initial body angular velocity, 3"},
    {NULL, NULL, NULL},
};

int ref_heavy_top_ep(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  ep_top P = {15.0, 9.81, {0.234375, 0.46875, 0.234375}, {0, 1, 0}};
  double W[3];
  LV_CHECK(lv_kv_double(kv, "Omega1", 0.0, &W[0]));
  LV_CHECK(lv_kv_double(kv, "Omega2", 150.0, &W[1]));
  LV_CHECK(lv_kv_double(kv, "Omega3", -4.61538, &W[2]));
  lv_space *sp = NULL;
  int rc = lv_space_new_rn(&sp, 7);
  if (rc) return rc;
  lv_model *m = NULL;
  rc = lv_model_new(&m, "heavy-top-ep", sp, 4);
  if (rc) {
    lv_space_free(sp);
    return rc;
  }
  ep_top *U = lv_calloc(1, sizeof *U);
  if (!U) {
    lv_model_free(m);
    return LV_ENOMEM;
  }
  *U = P;
  lv_model_set_user(m, U, free);
  /* R0 = I: p = (1, 0, 0, 0), p' = Gb^T Omega / 2 = (0, Omega / 2); x' = Omega x X */
  double q0[7] = {P.X[0], P.X[1], P.X[2], 1, 0, 0, 0}, v0[7] = {0};
  v0[0] = W[1] * P.X[2] - W[2] * P.X[1];
  v0[1] = W[2] * P.X[0] - W[0] * P.X[2];
  v0[2] = W[0] * P.X[1] - W[1] * P.X[0];
  for (int i = 0; i < 3; i++) v0[4 + i] = 0.5 * W[i];
  rc = lv_model_set_mass(m, mass, 0);
  if (!rc) rc = lv_model_set_potential(m, potential, grad, hess);
  if (!rc) rc = lv_model_set_force(m, force, NULL, NULL);
  if (!rc) rc = lv_model_set_constraints(m, constr, NULL, NULL, NULL);
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
