/* Gyroscopic top in director coordinates (Betsch & Leyendecker; seed 003
 * §6.2 / spec §3.2) described on the multibody layer: one rigid body in
 * the directors formulation, q = (phi, d1, d2, d3) in R^12, phi the centre
 * of mass, d_i the body-fixed orthonormal directors along the principal
 * axes, its tip (body point -l e3) held at the origin by a spherical joint,
 * gravity along -e3.
 *   M = blockdiag(m I3, E1 I3, E2 I3, E3 I3),  E_i = 1/2 (I_j + I_k - I_i)   (101)
 *   V = m g phi_3
 *   g_int = [1/2(d1.d1-1); 1/2(d2.d2-1); 1/2(d3.d3-1); d1.d2; d1.d3; d2.d3]   (103)
 *   g_ext = phi / l - d3   (tip fixed at the origin)                         (104)
 * The layer writes the joint as phi - l d3 = 0; its rows are scaled by 1/l
 * (lv_mbs_scale_last_joint), the paper's g_ext, so the multipliers and the
 * rows' weight in the schemes' residuals are those of the paper (the
 * former hand-written model, tests/ref_gyro_top.c; check_mbs.c compares).
 * The orthogonality rows are the paper's d_i.d_j, not metis's 1/2 d_i.d_j:
 * any constant row scaling of g leaves the trajectory unchanged and only
 * rescales the multipliers (and |G M^-1 p| of those rows) by 2.
 * Symmetry: rotation about e3 through the tip, J3 = e3 . sum q_i x p_i.
 * Initial data: nutation alpha0 about e1, d_i = R(alpha0) e_i, phi = l d3,
 * omega = omega_p e3 + omega_s d3, v_i = omega x q_i (108)-(111), with the
 * steady-precession spin omega_s of (112) computed from the data (it is
 * 135.60895 for the paper's rounded data, not the printed 135.6).
 * Defaults are the paper's printed data m = 0.7069, I = 5.3014e-4,
 * l = 0.075 (those of the spec's reference values H0 = 5.66971,
 * J3 = 0.0710696); metis's exact cone (rho 2700, height 0.1) is
 * m = 0.706858, I1 = I2 = I3 = 5.30144e-4, reachable with --param. */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static const lv_param_info params[] = {
    {"m", "0.7069", "mass"},
    {"I1", "5.3014e-4", "principal moment of inertia about the centre of mass, axis d1"},
    {"I2", "5.3014e-4", "principal moment of inertia about the centre of mass, axis d2"},
    {"I3", "5.3014e-4", "principal moment of inertia about the centre of mass, axis d3 (symmetry axis)"},
    {"l", "0.075", "distance from the fixed tip to the centre of mass"},
    {"gravity", "9.81", "gravitational acceleration (along -e3)"},
    {"alpha0", "1.0471975511965976", "initial nutation angle about e1 (pi/3)"},
    {"omega_p", "10", "initial precession rate about e3"},
    {"omega_s", "eq. (112)", "initial spin rate about d3; default: the steady-precession value of eq. (112)"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  double m, I[3], E[3], l, grav, alpha, wp, ws;
  LV_CHECK(lv_kv_double(kv, "m", 0.7069, &m));
  LV_CHECK(lv_kv_double(kv, "I1", 5.3014e-4, &I[0]));
  LV_CHECK(lv_kv_double(kv, "I2", 5.3014e-4, &I[1]));
  LV_CHECK(lv_kv_double(kv, "I3", 5.3014e-4, &I[2]));
  LV_CHECK(lv_kv_double(kv, "l", 0.075, &l));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &grav));
  LV_CHECK(lv_kv_double(kv, "alpha0", 3.14159265358979323846 / 3.0, &alpha));
  LV_CHECK(lv_kv_double(kv, "omega_p", 10.0, &wp));
  for (int i = 0; i < 3; i++) E[i] = 0.5 * (I[(i + 1) % 3] + I[(i + 2) % 3] - I[i]);
  /* (112); the spin default needs omega_p != 0 */
  if (!lv_kv_string(kv, "omega_s", NULL) && !(wp != 0.0 && I[2] > 0.0)) return LV_EINPUT;
  double def = I[2] > 0.0 && wp != 0.0
                   ? m * grav * l / (I[2] * wp) + (I[0] + m * l * l - I[2]) / I[2] * wp * cos(alpha)
                   : 0.0;
  LV_CHECK(lv_kv_double(kv, "omega_s", def, &ws));
  /* positive mass and Euler-tensor entries (triangle inequality of the I_i) */
  if (!(m > 0) || !(l > 0) || !(E[0] > 0) || !(E[1] > 0) || !(E[2] > 0)) return LV_EINPUT;
  double c = cos(alpha), s = sin(alpha);
  const double R[9] = {1, 0, 0, 0, c, -s, 0, s, c}; /* columns d1, d2, d3 of (108) */
  double d3[3] = {R[2], R[5], R[8]}, x0[3], v0[3];
  for (int i = 0; i < 3; i++) x0[i] = l * d3[i];
  double w[3] = {ws * d3[0], ws * d3[1], wp + ws * d3[2]};
  lv_models_cross(w, x0, v0);
  const double tip[3] = {0, 0, -l}, o[3] = {0, 0, 0}, g[3] = {0, 0, -grav}, e3[3] = {0, 0, 1};
  lv_mbs *sy = NULL;
  int body, rc = lv_mbs_new(&sy, "directors");
  if (!rc) rc = lv_mbs_add_body(sy, m, NULL, I, x0, R, v0, w, LV_MBS_SPACE_FRAME, &body);
  if (!rc) rc = lv_mbs_add_spherical(sy, body, tip, LV_MBS_GROUND, o);
  if (!rc) rc = lv_mbs_scale_last_joint(sy, 1.0 / l);
  if (!rc) rc = lv_mbs_set_gravity(sy, g);
  if (!rc) rc = lv_mbs_add_rotation_symmetry(sy, e3, o);
  if (!rc) rc = lv_mbs_build(sy, "gyro-top", out);
  lv_mbs_free(sy);
  return rc;
}

const lv_model_info lv_model_gyro_top = {
    "gyro-top",
    "gyroscopic top in director coordinates (Kinon, Betsch & Schneider 2023, §6.2), described on the multibody "
    "layer: q = (phi, d1, d2, d3) in R^12, 9 constraints, steady-precession initial data; momentum map J3",
    params, create};
