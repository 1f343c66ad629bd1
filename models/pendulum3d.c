/* The 3D mathematical pendulum (seed 003 §6.1), described on the multibody
 * layer: one particle of mass m on a massless rod of length l to the fixed
 * point at the origin, gravity along -e3.
 *   q in R^3,  V = m g q3,  g(q) = 1/2 (q.q / l^2 - 1)  (a distance joint
 *   scaled by 1/l^2, lv_mbs_add_distance_scaled),
 *   symmetry: rotation about e3, J = e3 . (q x p).
 * The model formerly written by hand is tests/ref_pendulum3d.c (check_mbs.c
 * compares the two). */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static const lv_param_info params[] = {
    {"m", "1", "mass"},
    {"l", "1", "rod length"},
    {"gravity", "9.81", "gravitational acceleration (along -e3)"},
    {"x0", "1", "initial position, x"},
    {"y0", "0", "initial position, y"},
    {"z0", "0", "initial position, z"},
    {"vx0", "0", "initial velocity, x"},
    {"vy0", "1", "initial velocity, y"},
    {"vz0", "0", "initial velocity, z"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  double m, l, g0, q0[3], v0[3];
  static const char *const qn[3] = {"x0", "y0", "z0"}, *const vn[3] = {"vx0", "vy0", "vz0"};
  LV_CHECK(lv_kv_double(kv, "m", 1.0, &m));
  LV_CHECK(lv_kv_double(kv, "l", 1.0, &l));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g0));
  for (int i = 0; i < 3; i++) {
    LV_CHECK(lv_kv_double(kv, qn[i], i == 0 ? 1.0 : 0.0, &q0[i]));
    LV_CHECK(lv_kv_double(kv, vn[i], i == 1 ? 1.0 : 0.0, &v0[i]));
  }
  if (!(m > 0) || !(l > 0)) return LV_EINPUT;
  static const double O[3] = {0, 0, 0}, e3[3] = {0, 0, 1};
  double g[3] = {0, 0, -g0};
  lv_mbs *s = NULL;
  int rc = lv_mbs_new(&s, "directors"), id = 0;
  if (!rc) rc = lv_mbs_add_particle(s, m, q0, v0, &id);
  if (!rc) rc = lv_mbs_add_distance_scaled(s, id, O, LV_MBS_GROUND, O, l, 1.0 / (l * l));
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_add_rotation_symmetry(s, e3, O);
  if (!rc) rc = lv_mbs_build(s, "pendulum3d", out);
  lv_mbs_free(s);
  return rc;
}

const lv_model_info lv_model_pendulum3d = {
    "pendulum3d", "3D mathematical pendulum (Kinon, Betsch & Schneider 2023, §6.1): q in R^3, one length constraint, "
    "gravity",
    params, create};
