/* A chain of N rigid bodies joined by spherical joints, described on the
 * multibody layer: body i (i = 0 .. N-1) has centre of mass x_i,
 * orientation R_i (body -> inertial), mass m and principal inertia
 * J = diag(Jt, Jt, Ja) about its centre of mass (a cylinder of length l and
 * radius r along its body e3 axis).  Its upper joint point is
 * a = (0, 0, l/2) and its lower one b = -a in body coordinates.  Joint 0
 * fixes body 0's upper point at the origin; joint i ties body i's upper
 * point to body i-1's lower point.  Gravity g0 along -e3.
 *
 * In r3so3 (the default; --param formulation= any of the layer's):
 *   q_i = (x_i, R_i), v_i = (u_i, Omega_i)  (inertial translational velocity,
 *   body angular velocity; the space's R^3 x SO(3) factor),
 *   M = diag(m I, J) per body,  V = m g0 sum_i x_i3,
 *   f = (0, -Omega_i x J Omega_i)               (gyroscopic force),
 *   g_i(q) = x_i + R_i a - x_{i-1} - R_{i-1} b   (3 per joint; x_{-1} = 0, no R_{-1} term),
 * with the layer's exact G, H, Z (left-trivialised).  Every callback writes
 * O(N) entries in a fixed order (each joint its two bodies' blocks: the
 * sparse path).  Symmetry: rotation about the vertical axis through the
 * suspension point (vertical angular momentum).  The model formerly written
 * by hand in r3so3 is tests/ref_rigid_chain.c; check_mbs.c compares.
 *
 * Initial state: the straight chain tilted by `angle` degrees about e2 (all
 * R_i equal), body angular velocities Omega_i = (swing, 0, spin (1 + i/N))
 * and u_i from the joint velocity constraints, recursively from the
 * suspension point, so g(q0) = 0 and G(q0) v0 = 0 hold exactly. */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static const lv_param_info params[] = {
    {"N", "10", "number of bodies (1 .. 100000)"},
    {"m", "1", "mass of each body"},
    {"l", "1", "length of each body (distance between its two joints)"},
    {"r", "0.05", "radius of each body (cylinder: inertia about its centre of mass)"},
    {"gravity", "9.81", "gravitational acceleration (along -e3)"},
    {"angle", "30", "initial tilt of the straight chain from the downward vertical, degrees"},
    {"swing", "1", "initial body angular velocity about the body e1 axis"},
    {"spin", "5", "initial body angular velocity about the body's own axis e3 (grows along the chain)"},
    {"formulation", "r3so3",
     "multibody layer: r3so3 ((R^3 x SO(3))^N, 3 N constraints), se3, directors (R^12N, 9 N constraints, constant "
     "mass matrix: RATTLE, VI, EM), euler-parameters (R^7N, 4 N), cardan or cardan-SEQ (R^6N, 3 N)"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  int N = 10;
  double m, l, r, g0, angle, swing, spin;
  LV_CHECK(lv_kv_int(kv, "N", 10, &N));
  LV_CHECK(lv_kv_double(kv, "m", 1.0, &m));
  LV_CHECK(lv_kv_double(kv, "l", 1.0, &l));
  LV_CHECK(lv_kv_double(kv, "r", 0.05, &r));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g0));
  LV_CHECK(lv_kv_double(kv, "angle", 30.0, &angle));
  LV_CHECK(lv_kv_double(kv, "swing", 1.0, &swing));
  LV_CHECK(lv_kv_double(kv, "spin", 5.0, &spin));
  if (N < 1 || N > 100000 || !(m > 0) || !(l > 0) || !(r > 0) || !isfinite(m) || !isfinite(l) || !isfinite(r) ||
      !isfinite(g0) || !isfinite(angle) || !isfinite(swing) || !isfinite(spin))
    return LV_EINPUT;
  double J[3], a[3] = {0, 0, 0.5 * l}, b[3] = {0, 0, -0.5 * l};
  J[0] = J[1] = m * (3.0 * r * r + l * l) / 12.0;
  J[2] = 0.5 * m * r * r;
  double th = angle * (3.14159265358979323846 / 180.0), c = cos(th), s = sin(th);
  /* rotation about e2 by -th: the body axis -e3 (pointing down the chain)
   * turns from -e3 towards +e1 */
  const double R0[9] = {c, 0, -s, 0, 1, 0, s, 0, c}, o[3] = {0, 0, 0}, g[3] = {0, 0, -g0}, e3[3] = {0, 0, 1};
  lv_mbs *sy = NULL;
  int rc = lv_mbs_new(&sy, lv_kv_string(kv, "formulation", "r3so3"));
  if (rc == LV_EUNKNOWN) rc = LV_EINPUT; /* the formulation's name: a bad parameter */
  double up[3] = {0, 0, 0}; /* velocity of the previous lower joint point */
  for (int i = 0, prev = LV_MBS_GROUND; i < N && !rc; i++) {
    double x[3], W[3], u[3], t[3], Rt[3], loc[3] = {0, 0, -(2.0 * i + 1.0) * 0.5 * l};
    lv_models_rvec(R0, loc, x);
    W[0] = swing;
    W[1] = 0.0;
    W[2] = spin * (1.0 + (double)i / N);
    /* u_i + R (W x a) = velocity of the joint point above */
    lv_models_cross(W, a, t);
    lv_models_rvec(R0, t, Rt);
    for (int k = 0; k < 3; k++) u[k] = up[k] - Rt[k];
    lv_models_cross(W, b, t);
    lv_models_rvec(R0, t, Rt);
    for (int k = 0; k < 3; k++) up[k] = u[k] + Rt[k];
    int id = 0;
    rc = lv_mbs_add_body(sy, m, NULL, J, x, R0, u, W, LV_MBS_BODY_FRAME, &id);
    if (!rc) rc = lv_mbs_add_spherical(sy, id, a, prev, prev == LV_MBS_GROUND ? o : b);
    prev = id;
  }
  if (!rc) rc = lv_mbs_set_gravity(sy, g);
  if (!rc) rc = lv_mbs_add_rotation_symmetry(sy, e3, o);
  if (!rc) rc = lv_mbs_build(sy, "rigid-chain", out);
  lv_mbs_free(sy);
  return rc;
}

const lv_model_info lv_model_rigid_chain = {
    "rigid-chain",
    "N rigid bodies with spherical joints, gravity, gyroscopic forces, described on the multibody layer "
    "((R^3xSO(3))^N by default); exact sparse derivatives",
    params, create};
