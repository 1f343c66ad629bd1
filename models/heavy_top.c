/* The heavy top of models/heavy_top.c described on the multibody layer
 * (issue 15): one rigid body (mass m, principal inertia J about the
 * centre of mass), its body point -X (the tip; X = centre of mass from the
 * tip) held at the origin by a spherical joint, gravity g0 along -e3.
 * Same parameters and initial state as heavy_top.c: R0 = I, x0 = X,
 * u0 = Omega0 x X, body angular velocity Omega0.
 *
 * In the directors formulation (q = (phi, d1, d2, d3) in R^12, 6 + 3
 * constraints, constant mass matrix) every scheme runs it, including
 * RATTLE, VI and EM.  Momentum maps: the rotation about the vertical e3
 * through the tip and, when the top is symmetric about X (X along a
 * principal axis i and J_j = J_k), the spin about the body axis X.
 *
 * In euler-parameters (R^7, 3 + 1 constraints) and cardan (R^6, 3
 * constraints; "cardan" is the sequence xyz, "cardan-SEQ" any other) the
 * mass matrix depends on q: genalpha and BLieDF on R^n run it, and it is
 * the same model as the hand-written heavy_top_ep.c / heavy_top_ctb.c (the
 * tip rows with the opposite sign, which flips only the multipliers). */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

int lv_models_heavy_top_mbs(const lv_kv *kv, const char *formulation, lv_model **out) {
  static const char *const jn[3] = {"J1", "J2", "J3"}, *const xn[3] = {"X1", "X2", "X3"},
                           *const wn[3] = {"Omega1", "Omega2", "Omega3"};
  static const double jd[3] = {0.234375, 0.46875, 0.234375}, xd[3] = {0, 1, 0}, wd[3] = {0, 150, -4.61538};
  double m, g0, J[3], X[3], W[3];
  *out = NULL;
  LV_CHECK(lv_kv_double(kv, "m", 15.0, &m));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g0));
  for (int i = 0; i < 3; i++) {
    LV_CHECK(lv_kv_double(kv, jn[i], jd[i], &J[i]));
    LV_CHECK(lv_kv_double(kv, xn[i], xd[i], &X[i]));
    LV_CHECK(lv_kv_double(kv, wn[i], wd[i], &W[i]));
  }
  lv_mbs *s = NULL;
  int body, rc = lv_mbs_new(&s, formulation);
  double v0[3] = {W[1] * X[2] - W[2] * X[1], W[2] * X[0] - W[0] * X[2], W[0] * X[1] - W[1] * X[0]};
  double tip[3] = {-X[0], -X[1], -X[2]}, o[3] = {0, 0, 0}, g[3] = {0, 0, -g0}, e3[3] = {0, 0, 1};
  if (!rc) rc = lv_mbs_add_body(s, m, NULL, J, X, NULL, v0, W, LV_MBS_BODY_FRAME, &body);
  if (!rc) rc = lv_mbs_add_spherical(s, body, tip, LV_MBS_GROUND, o);
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_add_rotation_symmetry(s, e3, o);
  for (int i = 0; i < 3 && !rc; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    if (X[i] != 0.0 && X[j] == 0.0 && X[k] == 0.0 && J[j] == J[k]) rc = lv_mbs_add_body_symmetry(s, body, X, tip);
  }
  if (!rc) rc = lv_mbs_build(s, "heavy-top", out);
  lv_mbs_free(s);
  return rc;
}
