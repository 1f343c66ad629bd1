/* The N-particle spatial pendulum chain in redundant coordinates, described
 * on the multibody layer: particle k (k = 0 .. N-1) at x_k in R^3, mass m
 * each, joined to its predecessor by a massless rod of length l; particle 0
 * hangs from the fixed point at the origin.  Gravity g0 along -e3.
 *
 *   q = (x_0, .., x_{N-1}) in R^{3N},  M = m I,  V = m g0 sum_k x_k3,
 *   g_k(q) = (|d_k|^2 - l^2) / (2 l),  d_k = x_k - x_{k-1}  (x_{-1} = 0).
 *
 * The rods are distance joints scaled by 1/l (lv_mbs_add_distance_scaled),
 * so that G has unit-vector rows for any link length: the Newton matrices
 * stay O(1) whether N = 10 or 10^6.  The layer's callbacks write O(N)
 * entries in a fixed order, so the sparse path assembles and analyses
 * once.  Symmetry: rotation about the vertical axis through the suspension
 * point (momentum map: vertical angular momentum).
 *
 * Initial state: a straight chain in the x-z plane at `angle` degrees from
 * the downward vertical, and a velocity field along e2 (perpendicular to that
 * plane, so G v = 0 holds exactly): v_k = vy s_k (1 + 0.5 sin(3 pi s_k)) e2,
 * s_k = (k+1)/N -- a rotation about the vertical axis plus a bending part, so
 * the motion is three-dimensional and has angular momentum.
 *
 * The model formerly written by hand is tests/ref_chain.c (check_mbs.c
 * compares the two). */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static const lv_param_info params[] = {
    {"N", "10", "number of particles (1 .. 10000000)"},
    {"m", "1", "mass of each particle"},
    {"l", "1", "length of each link"},
    {"gravity", "9.81", "gravitational acceleration (along -e3)"},
    {"angle", "90", "initial angle of the straight chain from the downward vertical, degrees"},
    {"vy", "1", "amplitude of the initial velocity field (along e2, perpendicular to the chain's plane)"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  int N;
  double m, l, g0, angle, vy;
  LV_CHECK(lv_kv_int(kv, "N", 10, &N));
  LV_CHECK(lv_kv_double(kv, "m", 1.0, &m));
  LV_CHECK(lv_kv_double(kv, "l", 1.0, &l));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g0));
  LV_CHECK(lv_kv_double(kv, "angle", 90.0, &angle));
  LV_CHECK(lv_kv_double(kv, "vy", 1.0, &vy));
  if (N < 1 || N > 10000000 || !(m > 0) || !(l > 0) || !isfinite(m) || !isfinite(l) || !isfinite(g0) ||
      !isfinite(angle) || !isfinite(vy))
    return LV_EINPUT;
  static const double O[3] = {0, 0, 0}, e3[3] = {0, 0, 1};
  double th = angle * (3.14159265358979323846 / 180.0), g[3] = {0, 0, -g0};
  lv_mbs *s = NULL;
  int rc = lv_mbs_new(&s, "directors");
  for (int k = 0; k < N && !rc; k++) {
    double s_k = (double)(k + 1) / N;
    double x[3] = {(k + 1) * l * sin(th), 0.0, -(k + 1) * l * cos(th)};
    double v[3] = {0.0, vy * s_k * (1.0 + 0.5 * sin(3.0 * 3.14159265358979323846 * s_k)), 0.0};
    rc = lv_mbs_add_particle(s, m, x, v, NULL);
    /* particle k has id k + 1; its predecessor k (the ground for k = 0) */
    if (!rc) rc = lv_mbs_add_distance_scaled(s, k + 1, O, k, O, l, 1.0 / l);
  }
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_add_rotation_symmetry(s, e3, O);
  if (!rc) rc = lv_mbs_build(s, "chain", out);
  lv_mbs_free(s);
  return rc;
}

const lv_model_info lv_model_chain = {
    "chain",
    "N-particle spatial pendulum chain: q in R^3N, N distance constraints, gravity; exact sparse derivatives "
    "(multibody layer)",
    params, create};
