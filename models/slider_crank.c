/* Spatial rigid slider-crank (spec 002 §5.3, paper §7.3, IFToMM benchmark
 * data as encoded in Exudyn's sliderCrank3Dbenchmark.py) described on the
 * multibody layer: crank, connecting rod and slider, 1 degree of freedom,
 * gravity 9.81 along -z.  Free response from crank angle 0 with crank rate
 * 6 rad/s (no drive).
 *
 *   crank  A = (0, 0.1, 0.12), length 0.08 along body z (+z at angle 0),
 *          m 0.12, J = diag(1e-4, 1e-4, 1e-5) at the COM (0.04 from A);
 *          revolute joint to the ground at A about global x.
 *   rod    length 0.3, body x along the rod from B to C, m 0.5,
 *          J = diag(4e-4, 4e-3, 4e-3); spherical joint to the crank at B.
 *   slider m 2, J = 1e-4 I; universal joint to the rod at C (slider x
 *          perpendicular to rod y); prismatic joint to the ground along
 *          global x through the origin.
 *
 * The universal joint's cross axes: the spec's "conrod-x perpendicular to
 * slider-y" cannot hold with x along the rod (the rod's y component is
 * -1/3 at t = 0).  The pair slider-x (the sliding axis) and the rod-fixed
 * axis perpendicular to the rod and to global x at t = 0 is the one for
 * which the IFToMM initial rod angular velocity (1.92, -0.96, 0.48) rad/s
 * satisfies the velocity constraint exactly (with slider-z or slider-y it
 * does not), so it is used: rod body y = (0, -2, 1)/sqrt 5 at t = 0.
 *
 * --param formulation=: r3so3 ((R^3 x SO(3))^3, 17 constraints, the
 * default), se3, directors (R^36, 35 constraints, constant mass matrix:
 * RATTLE, VI, EM), euler-parameters (R^21, 20), cardan[-SEQ] (R^18, 17).
 * The model formerly written by hand in r3so3 is tests/ref_slider_crank.c
 * (the same constraint manifold with other rows; check_mbs.c compares). */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* The consistent initial state for crank rate w0: per body its centre of
 * mass x[b], rotation R[b] (row-major), velocity u[b] and body angular
 * velocity W[b]. */
static void initial(double w0, double x[3][3], double R[3][9], double u[3][3], double W[3][3]) {
  /* configuration: B = (0, 0.1, 0.2), C = (0.2, 0, 0); crank and slider unrotated */
  const double B[3] = {0, 0.1, 0.2}, C[3] = {0.2, 0, 0};
  double e1[3], e2[3] = {0, -2 / sqrt(5.0), 1 / sqrt(5.0)}, e3[3];
  for (int i = 0; i < 3; i++) e1[i] = (C[i] - B[i]) / 0.3;
  lv_models_cross(e1, e2, e3);
  memset(x, 0, 9 * sizeof(double));
  memset(R, 0, 27 * sizeof(double));
  x[0][1] = 0.1, x[0][2] = 0.16;
  for (int i = 0; i < 3; i++) x[1][i] = 0.5 * (B[i] + C[i]);
  x[2][0] = 0.2;
  R[0][0] = R[0][4] = R[0][8] = R[2][0] = R[2][4] = R[2][8] = 1.0;
  for (int i = 0; i < 3; i++) R[1][3 * i] = e1[i], R[1][3 * i + 1] = e2[i], R[1][3 * i + 2] = e3[i];
  /* velocities: crank w0 e_x; rod from v_B, v_C with the universal joint's
   * spin (w0 = 6 gives the IFToMM (1.92, -0.96, 0.48)); slider v_C */
  double wc[3] = {w0, 0, 0}, rA[3] = {0, 0, 0.04}, rb[3] = {0, 0, 0.08}, vB[3], vC[3], vCOM[3];
  lv_models_cross(wc, rA, vCOM);
  lv_models_cross(wc, rb, vB);
  double d[3], s;
  for (int i = 0; i < 3; i++) d[i] = C[i] - B[i];
  /* rigid rod with C on the x axis: d . (v_C - v_B) = 0, v_C = (vx, 0, 0) */
  s = dot(d, vB) / d[0];
  double dv[3] = {s - vB[0], -vB[1], -vB[2]}, wp[3], wr[3];
  vC[0] = s, vC[1] = vC[2] = 0.0;
  lv_models_cross(d, dv, wp);
  for (int i = 0; i < 3; i++) wp[i] /= dot(d, d);
  /* spin a along e1 from e_x . (w x e2) = 0 */
  double c1[3], c2[3];
  lv_models_cross(wp, e2, c1);
  lv_models_cross(e1, e2, c2);
  double a = -c1[0] / c2[0];
  for (int i = 0; i < 3; i++) wr[i] = wp[i] + a * e1[i];
  memcpy(u[0], vCOM, sizeof vCOM);
  memcpy(W[0], wc, sizeof wc);
  for (int i = 0; i < 3; i++) u[1][i] = 0.5 * (vB[i] + vC[i]);
  for (int i = 0; i < 3; i++) W[1][i] = R[1][i] * wr[0] + R[1][3 + i] * wr[1] + R[1][6 + i] * wr[2]; /* R^T w */
  memcpy(u[2], vC, sizeof vC);
  memset(W[2], 0, sizeof W[2]);
}

static const lv_param_info params[] = {
    {"gravity", "9.81", "gravitational acceleration along -z [m/s^2]"},
    {"omega0", "6", "initial crank angular velocity about x [rad/s]"},
    {"formulation", "r3so3",
     "multibody layer: r3so3 ((R^3 x SO(3))^3, 17 constraints), se3, directors (R^36, 35 constraints, "
     "constant mass matrix: RATTLE, VI, EM), euler-parameters (R^21, 20 constraints, M(q)), "
     "cardan or cardan-SEQ (R^18, 17 constraints, M(q))"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  double grav, w0;
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &grav));
  LV_CHECK(lv_kv_double(kv, "omega0", 6.0, &w0));
  if (!isfinite(grav) || !isfinite(w0)) return LV_EINPUT;
  const char *form = lv_kv_string(kv, "formulation", "r3so3");
  static const double m[3] = {0.12, 0.5, 2.0};
  static const double J[3][3] = {{1e-4, 1e-4, 1e-5}, {4e-4, 4e-3, 4e-3}, {1e-4, 1e-4, 1e-4}};
  static const double A[3] = {0, 0.1, 0.12}, pA[3] = {0, 0, -0.04}, pB[3] = {0, 0, 0.04};
  static const double rB[3] = {-0.15, 0, 0}, rC[3] = {0.15, 0, 0}, o[3] = {0, 0, 0};
  static const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
  double g[3] = {0, 0, -grav}, x[3][3], R[3][9], u[3][3], W[3][3];
  initial(w0, x, R, u, W);
  lv_mbs *s = NULL;
  int id[3] = {0, 0, 0}, rc = lv_mbs_new(&s, form);
  if (rc == LV_EUNKNOWN) rc = LV_EINPUT; /* the formulation's name: a bad parameter */
  for (int b = 0; b < 3 && !rc; b++) rc = lv_mbs_add_body(s, m[b], NULL, J[b], x[b], R[b], u[b], W[b], LV_MBS_BODY_FRAME, &id[b]);
  if (!rc) rc = lv_mbs_add_revolute(s, id[0], pA, ex, LV_MBS_GROUND, A, ex);
  if (!rc) rc = lv_mbs_add_spherical(s, id[0], pB, id[1], rB);
  if (!rc) rc = lv_mbs_add_universal(s, id[1], rC, ey, id[2], o, ex);
  if (!rc) rc = lv_mbs_add_prismatic(s, id[2], o, ex, LV_MBS_GROUND, o, ex);
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_build(s, "slider-crank", out);
  lv_mbs_free(s);
  return rc;
}

const lv_model_info lv_model_slider_crank = {
    "slider-crank",
    "spatial rigid slider-crank (IFToMM benchmark, as in Holzinger, Arnold & Gerstmayr, §7.3), described on the "
    "multibody layer: 3 bodies, revolute, spherical, universal and prismatic joints, 1 dof",
    params, create};
