/* The four-particle system of Gonzalez (1999), seed 003 §6.3 / spec §3.3,
 * described on the multibody layer: four point masses in R^3,
 * q = (q1, q2, q3, q4) in R^12, no gravity.
 *   springs 1-3 and 2-4:  V = 1/2 k13 (|q3-q1|^2 - l13^2)^2 + 1/2 k24 (|q4-q2|^2 - l24^2)^2
 *                         (lv_mbs_add_spring_squared)
 *   rigid bars 1-2, 3-4:  g1 = 1/2 (|q2-q1|^2 / l12^2 - 1),  g2 = 1/2 (|q4-q3|^2 / l34^2 - 1)
 *                         (distance joints scaled by 1/l^2)
 * Six symmetry generators, in this order: translations along e1, e2, e3
 * (momentum maps = total linear momentum L) and rotations about e1, e2, e3
 * (momentum maps = total angular momentum J = sum q_i x p_i).
 * The layer hands EM the potential through its quadratic invariants
 * pi_1 = |q3-q1|^2, pi_2 = |q4-q2|^2 (eq. (122); the paper prints
 * pi_2 = |q4-q3|^2, a typo: it must match the spring 2-4 of (116)), for the
 * invariant-based discrete gradient (126) of the energy-momentum schemes.
 * The model formerly written by hand is tests/ref_four_particle.c
 * (check_mbs.c compares the two). */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

#define V4Z0 "1.1764705882352942"
static const lv_param_info params[] = {
    {"m1", "1", "mass of particle 1"},
    {"m2", "3", "mass of particle 2"},
    {"m3", "2.3", "mass of particle 3"},
    {"m4", "1.7", "mass of particle 4"},
    {"k13", "50", "stiffness of the spring 1-3"},
    {"k24", "500", "stiffness of the spring 2-4"},
    {"l13", "1", "rest length of the spring 1-3"},
    {"l24", "1", "rest length of the spring 2-4"},
    {"l12", "1", "length of the rigid bar 1-2"},
    {"l34", "1", "length of the rigid bar 3-4"},
    {"q1x", "0", "initial position of particle 1, x"},
    {"q1y", "0", "initial position of particle 1, y"},
    {"q1z", "0", "initial position of particle 1, z"},
    {"q2x", "1", "initial position of particle 2, x"},
    {"q2y", "0", "initial position of particle 2, y"},
    {"q2z", "0", "initial position of particle 2, z"},
    {"q3x", "0", "initial position of particle 3, x"},
    {"q3y", "1", "initial position of particle 3, y"},
    {"q3z", "0", "initial position of particle 3, z"},
    {"q4x", "1", "initial position of particle 4, x"},
    {"q4y", "1", "initial position of particle 4, y"},
    {"q4z", "0", "initial position of particle 4, z"},
    {"v1x", "0", "initial velocity of particle 1, x"},
    {"v1y", "0", "initial velocity of particle 1, y"},
    {"v1z", "0", "initial velocity of particle 1, z"},
    {"v2x", "0", "initial velocity of particle 2, x"},
    {"v2y", "0", "initial velocity of particle 2, y"},
    {"v2z", "0", "initial velocity of particle 2, z"},
    {"v3x", "0", "initial velocity of particle 3, x"},
    {"v3y", "0", "initial velocity of particle 3, y"},
    {"v3z", "0", "initial velocity of particle 3, z"},
    {"v4x", "0", "initial velocity of particle 4, x"},
    {"v4y", "0", "initial velocity of particle 4, y (the authors' metis error-analysis input uses 3/1.7)"},
    {"v4z", V4Z0, "initial velocity of particle 4, z (= 2/1.7, Kinon, Betsch & Schneider 2023, eq. (127))"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  /* m1..m4, k13, k24, l13, l24, l12, l34, then q1x .. v4z */
  double p[10], x0[24];
  for (int i = 0; i < 10; i++) LV_CHECK(lv_kv_double(kv, params[i].name, atof(params[i].default_value), &p[i]));
  for (int i = 0; i < 24; i++) {
    double def = i == 23 ? 2.0 / 1.7 : atof(params[10 + i].default_value);
    LV_CHECK(lv_kv_double(kv, params[10 + i].name, def, &x0[i]));
  }
  for (int i = 0; i < 4; i++)
    if (!(p[i] > 0)) return LV_EINPUT;
  if (!(p[4] >= 0) || !(p[5] >= 0) || !(p[6] >= 0) || !(p[7] >= 0) || !(p[8] > 0) || !(p[9] > 0)) return LV_EINPUT;
  static const double O[3] = {0, 0, 0}, E[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  lv_mbs *s = NULL;
  int rc = lv_mbs_new(&s, "directors");
  /* particle i (0-based) has id i + 1 */
  for (int i = 0; i < 4 && !rc; i++) rc = lv_mbs_add_particle(s, p[i], x0 + 3 * i, x0 + 12 + 3 * i, NULL);
  if (!rc) rc = lv_mbs_add_spring_squared(s, 3, O, 1, O, p[4], p[6]); /* r = q3 - q1 */
  if (!rc) rc = lv_mbs_add_spring_squared(s, 4, O, 2, O, p[5], p[7]); /* r = q4 - q2 */
  if (!rc) rc = lv_mbs_add_distance_scaled(s, 2, O, 1, O, p[8], 1.0 / (p[8] * p[8]));
  if (!rc) rc = lv_mbs_add_distance_scaled(s, 4, O, 3, O, p[9], 1.0 / (p[9] * p[9]));
  for (int k = 0; k < 3 && !rc; k++) rc = lv_mbs_add_translation_symmetry(s, E[k]);
  for (int k = 0; k < 3 && !rc; k++) rc = lv_mbs_add_rotation_symmetry(s, E[k], O);
  if (!rc) rc = lv_mbs_build(s, "four-particle", out);
  lv_mbs_free(s);
  return rc;
}

const lv_model_info lv_model_four_particle = {
    "four-particle",
    "four particles, springs 1-3 and 2-4, rigid bars 1-2 and 3-4 (Gonzalez 1999; Kinon, Betsch & Schneider 2023, "
    "§6.3): q in R^12, "
    "2 constraints, momentum maps L1 L2 L3 J1 J2 J3",
    params, create};
