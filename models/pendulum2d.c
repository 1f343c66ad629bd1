/* The planar mathematical pendulum of Arnold, Brüls & Cardona 2015,
 * Example 1, exactly as the paper writes it, described on the multibody
 * layer: one planar particle (q = (x, y) in R^2, M = m I) on a massless rod
 * of length l to the origin, gravity along -y,
 *   Phi(q) = (x^2 + y^2 - l^2) / 2  (an unscaled distance joint),
 * so G = (x, y) and lambda = m (|v|^2 - g0 y) / l^2.
 * Initial values from the initial deviation x0: hanging y0 = -sqrt(l^2 - x0^2),
 * the energy fixed to E = m/2 - m g0 l (so |v0| = 1 at x0 = 0), velocity
 * tangent to the circle in direction vsign (-y0, x0) / l.  vsign = +1 is the
 * direction that reproduces the paper's numbers.
 * Differs from pendulum3d in its constraint scaling (l^2 not divided out),
 * its plane and its initial data.  The model formerly written by hand is
 * tests/ref_pendulum2d.c (check_mbs.c compares the two). */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static const lv_param_info params[] = {
    {"m", "1", "mass"},
    {"l", "1", "rod length"},
    {"gravity", "9.81", "gravitational acceleration (along -y)"},
    {"x0", "0.2", "initial horizontal deviation from the lowest point"},
    {"vsign", "1", "+1: initial velocity along (-y0, x0) (away from equilibrium for x0 > 0); -1: opposite"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  double m, l, g0, x0, vs;
  LV_CHECK(lv_kv_double(kv, "m", 1.0, &m));
  LV_CHECK(lv_kv_double(kv, "l", 1.0, &l));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g0));
  LV_CHECK(lv_kv_double(kv, "x0", 0.2, &x0));
  LV_CHECK(lv_kv_double(kv, "vsign", 1.0, &vs));
  if (!(m > 0) || !(l > 0) || !(fabs(x0) < l) || (vs != 1.0 && vs != -1.0)) return LV_EINPUT;
  double q0[2] = {x0, -sqrt(l * l - x0 * x0)}, v0[2];
  double E = 0.5 * m - m * g0 * l, s2 = 2.0 * (E - m * g0 * q0[1]) / m;
  if (!(s2 >= 0.0)) return LV_EINPUT; /* the fixed energy cannot reach this height */
  double sp = sqrt(s2 > 0 ? s2 : 0.0);
  v0[0] = vs * sp * (-q0[1]) / l;
  v0[1] = vs * sp * q0[0] / l;
  static const double O[3] = {0, 0, 0};
  double g[3] = {0, -g0, 0};
  lv_mbs *s = NULL;
  int rc = lv_mbs_new(&s, "directors"), id = 0;
  if (!rc) rc = lv_mbs_add_planar_particle(s, m, q0, v0, &id);
  if (!rc) rc = lv_mbs_add_distance(s, id, O, LV_MBS_GROUND, O, l);
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_build(s, "pendulum2d", out);
  lv_mbs_free(s);
  return rc;
}

const lv_model_info lv_model_pendulum2d = {
    "pendulum2d", "planar pendulum of Arnold, Brüls & Cardona 2015, Example 1: q in R^2, Phi = (|q|^2 - l^2)/2, "
    "energy m/2 - m g0 l",
    params, create};
