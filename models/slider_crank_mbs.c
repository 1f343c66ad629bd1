/* The spatial slider-crank of models/slider_crank.c described on the
 * multibody layer (issue 15): crank, connecting rod and slider; revolute
 * crank-ground at A about global x, spherical crank-rod at B, universal
 * rod-slider at C (rod body y perpendicular to slider x), prismatic slider
 * along global x through the origin; gravity 9.81 along -z.  The initial
 * state is the hand-written model's (its q0, v0 read back as body poses and
 * velocities), so both start from the same consistent state.
 *
 * In directors (3 x 12 coordinates, 18 orthonormality + 17 joint
 * constraints, constant mass matrix) RATTLE, VI and EM run it; in
 * euler-parameters (R^21, 17 + 3 norm constraints) and cardan (R^18) the
 * mass matrix depends on q (genalpha, BLieDF). */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

int lv_models_slider_crank_mbs(const lv_kv *kv, const char *formulation, lv_model **out) {
  *out = NULL;
  /* the hand-written model with the same parameters, for the initial state */
  const char *keys[8], *vals[8];
  int n = 0;
  for (int i = 0; kv && i < kv->n && n < 7; i++)
    if (strcmp(kv->keys[i], "formulation") != 0 && strcmp(kv->keys[i], "mbs") != 0) keys[n] = kv->keys[i], vals[n++] = kv->values[i];
  keys[n] = "formulation", vals[n++] = "r3so3";
  lv_kv kr = {n, keys, vals};
  lv_model *ref = NULL;
  LV_CHECK(lv_model_create("slider-crank", &kr, &ref));
  double grav;
  int rc = lv_kv_double(kv, "gravity", 9.81, &grav);
  const double *q0 = lv_model_q0(ref), *v0 = lv_model_v0(ref);
  static const double m[3] = {0.12, 0.5, 2.0};
  static const double J[3][3] = {{1e-4, 1e-4, 1e-5}, {4e-4, 4e-3, 4e-3}, {1e-4, 1e-4, 1e-4}};
  static const double A[3] = {0, 0.1, 0.12}, pA[3] = {0, 0, -0.04}, pB[3] = {0, 0, 0.04};
  static const double rB[3] = {-0.15, 0, 0}, rC[3] = {0.15, 0, 0}, o[3] = {0, 0, 0};
  static const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
  double g[3] = {0, 0, -grav};
  lv_mbs *s = NULL;
  int id[3] = {0, 0, 0};
  if (!rc) rc = lv_mbs_new(&s, formulation);
  for (int b = 0; b < 3 && !rc; b++)
    rc = lv_mbs_add_body(s, m[b], NULL, J[b], q0 + 12 * b, q0 + 12 * b + 3, v0 + 6 * b, v0 + 6 * b + 3,
                         LV_MBS_BODY_FRAME, &id[b]);
  if (!rc) rc = lv_mbs_add_revolute(s, id[0], pA, ex, LV_MBS_GROUND, A, ex);
  if (!rc) rc = lv_mbs_add_spherical(s, id[0], pB, id[1], rB);
  if (!rc) rc = lv_mbs_add_universal(s, id[1], rC, ey, id[2], o, ex);
  if (!rc) rc = lv_mbs_add_prismatic(s, id[2], o, ex, LV_MBS_GROUND, o, ex);
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_build(s, "slider-crank", out);
  lv_mbs_free(s);
  lv_model_free(ref);
  return rc;
}
