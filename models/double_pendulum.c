/* Double pendulum of two rigid bars (thin cylinders) joined by revolute
 * joints about e1, the first hinged to the ground at the origin, gravity
 * along -e3: a system described on the multibody layer (issue 15) in
 * any formulation, so the same description runs under RATTLE, VI and
 * EM (directors) and under genalpha and BLieDF (r3so3, se3,
 * euler-parameters, cardan).  Bar k lies along
 * its body axis 2, at angle theta_k from the downward vertical, turning at
 * omega_k about e1. */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static const lv_param_info params[] = {
    {"formulation", "directors",
     "directors (R^24, constant mass matrix: RATTLE, VI, EM, ...), r3so3 ((R^3 x SO(3))^2), se3 (SE(3)^2), "
     "euler-parameters (R^14, M(q)) or cardan[-SEQ] (R^12, M(q)): genalpha, BLieDF"},
    {"m1", "1", "mass of bar 1"},
    {"m2", "1", "mass of bar 2"},
    {"L1", "1", "length of bar 1 (hinge to hinge)"},
    {"L2", "1", "length of bar 2"},
    {"r", "0.02", "radius of the bars (thin cylinders)"},
    {"gravity", "9.81", "gravitational acceleration (along -e3)"},
    {"theta1", "2", "initial angle of bar 1 from the downward vertical (pi/2: horizontal)"},
    {"theta2", "2.5", "initial angle of bar 2 from the downward vertical"},
    {"omega1", "0", "initial angular velocity of bar 1 about e1"},
    {"omega2", "1", "initial angular velocity of bar 2 about e1"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  const char *form = lv_kv_string(kv, "formulation", "directors");
  double m[2], L[2], r, g0, th[2], om[2];
  static const char *const mn[2] = {"m1", "m2"}, *const ln[2] = {"L1", "L2"}, *const tn[2] = {"theta1", "theta2"},
                           *const on[2] = {"omega1", "omega2"};
  static const double thd[2] = {2.0, 2.5}, omd[2] = {0.0, 1.0};
  for (int k = 0; k < 2; k++) {
    LV_CHECK(lv_kv_double(kv, mn[k], 1.0, &m[k]));
    LV_CHECK(lv_kv_double(kv, ln[k], 1.0, &L[k]));
    LV_CHECK(lv_kv_double(kv, tn[k], thd[k], &th[k]));
    LV_CHECK(lv_kv_double(kv, on[k], omd[k], &om[k]));
    if (!(L[k] > 0) || !isfinite(L[k]) || !isfinite(th[k]) || !isfinite(om[k])) return LV_EINPUT;
  }
  LV_CHECK(lv_kv_double(kv, "r", 0.02, &r));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g0));
  if (!(r > 0) || !isfinite(r) || !isfinite(g0)) return LV_EINPUT;
  lv_mbs *s = NULL;
  int rc = lv_mbs_new(&s, form), id[2] = {0, 0};
  double e1[3] = {1, 0, 0}, pivot[3] = {0, 0, 0}, g[3] = {0, 0, -g0};
  for (int k = 0; k < 2 && !rc; k++) {
    /* body axis 2 along the bar: R = Rx(theta - pi/2) maps e2 to u */
    double R[9], J[3], u[3] = {0, sin(th[k]), -cos(th[k])}, x[3], v[3], w[3] = {om[k], 0, 0};
    rc = lv_mbs_rotation_axis_angle(e1, th[k] - 1.5707963267948966, R);
    J[0] = J[2] = m[k] * (3 * r * r + L[k] * L[k]) / 12.0;
    J[1] = 0.5 * m[k] * r * r;
    double half[3] = {0.5 * L[k] * u[0], 0.5 * L[k] * u[1], 0.5 * L[k] * u[2]}, wh[3];
    wh[0] = w[1] * half[2] - w[2] * half[1], wh[1] = w[2] * half[0] - w[0] * half[2], wh[2] = w[0] * half[1] - w[1] * half[0];
    for (int i = 0; i < 3; i++) x[i] = pivot[i] + half[i], v[i] = wh[i];
    if (k == 1) { /* the hinge moves with the end of bar 1 */
      double w1[3] = {om[0], 0, 0}, u1[3] = {0, L[0] * sin(th[0]), -L[0] * cos(th[0])};
      v[0] += w1[1] * u1[2] - w1[2] * u1[1], v[1] += w1[2] * u1[0] - w1[0] * u1[2], v[2] += w1[0] * u1[1] - w1[1] * u1[0];
    }
    if (!rc) rc = lv_mbs_add_body(s, m[k], NULL, J, x, R, v, w, LV_MBS_SPACE_FRAME, &id[k]);
    double top[3] = {0, -0.5 * L[k], 0};
    if (!rc && k == 0) rc = lv_mbs_add_revolute(s, id[0], top, e1, LV_MBS_GROUND, pivot, e1);
    if (!rc && k == 1) {
      double end[3] = {0, 0.5 * L[0], 0};
      rc = lv_mbs_add_revolute(s, id[1], top, e1, id[0], end, e1);
    }
    for (int i = 0; i < 3; i++) pivot[i] += L[k] * u[i];
  }
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_build(s, "double-pendulum", out);
  lv_mbs_free(s);
  return rc == LV_EUNKNOWN ? LV_EINPUT : rc;
}

const lv_model_info lv_model_double_pendulum = {
    "double-pendulum",
    "two rigid bars on revolute joints about e1 under gravity, built by the multibody layer (doc/mbs.md) in "
    "any formulation (directors, r3so3, se3, euler-parameters, cardan)",
    params, create};
