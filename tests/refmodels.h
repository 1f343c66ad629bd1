/* Hand-written models kept as independent test references (tests/ref_*.c,
 * and the hand-written heavy top of models/heavy_top_hand.c):
 * the built-in models that replaced them are described on the multibody
 * layer (models/heavy_top.c); the tests compare the two.  Same parameters
 * as the built-in model of the same name. */
#ifndef LIVENS_TESTS_REFMODELS_H
#define LIVENS_TESTS_REFMODELS_H

#include "livens/livens.h"
#include "models/models.h"
#include <string.h>

/* The parameter table of the built-in model @p name (its models/ file): a
 * reference takes the same parameters, in the same order, with the same
 * defaults, so the two are compared on equal terms.  NULL if none. */
static inline const lv_param_info *ref_params(const char *name) {
  const lv_model_info *const *reg = lv_model_registry();
  for (int i = 0; reg[i]; i++)
    if (strcmp(reg[i]->name, name) == 0) return reg[i]->params;
  return NULL;
}

/* heavy-top, formulation r3so3 (default), se3, so3 or udq: the hand-written
 * top of models/heavy_top_hand.c, which the built-in model also uses for so3
 * and udq */
static inline int ref_heavy_top(const lv_kv *kv, lv_model **out) {
  return lv_models_heavy_top_hand(kv, lv_kv_string(kv, "formulation", "r3so3"), out);
}
/* heavy-top-ep: Euler parameters on R^7 (derivatives of G by finite differences) */
int ref_heavy_top_ep(const lv_kv *kv, lv_model **out);
/* heavy-top-ctb: Cardan angles on R^6, parameter sequence */
int ref_heavy_top_ctb(const lv_kv *kv, lv_model **out);
/* gyro-top: the gyroscopic top in directors, R^12, 9 constraints (tip rows
 * phi/l - d3); the built-in model's parameters */
int ref_gyro_top(const lv_kv *kv, lv_model **out);
/* rotor in r3so3 (R^3 x SO(3), second derivatives by finite differences);
 * the built-in model's parameters but formulation and mbs */
int ref_rotor(const lv_kv *kv, lv_model **out);
/* rigid-chain in (R^3 x SO(3))^N, 3 N constraints; the built-in model's
 * parameters but formulation */
int ref_rigid_chain(const lv_kv *kv, lv_model **out);
/* slider-crank in (R^3 x SO(3))^3, 17 constraints (H and Z by finite
 * differences); parameters gravity, omega0 */
int ref_slider_crank(const lv_kv *kv, lv_model **out);

/* chain: N particles on rods scaled by 1/l (models/chain.c's parameters) */
int ref_chain(const lv_kv *kv, lv_model **out);
/* pendulum3d: one particle on a rod scaled by 1/l^2 (models/pendulum3d.c's
 * parameters) */
int ref_pendulum3d(const lv_kv *kv, lv_model **out);
/* pendulum2d: q = (x, y), the unscaled rod (|q|^2 - l^2)/2
 * (models/pendulum2d.c's parameters) */
int ref_pendulum2d(const lv_kv *kv, lv_model **out);
/* four-particle: springs 1-3, 2-4 on the squared length, bars 1-2, 3-4
 * scaled by 1/l^2, the invariants of the potential for EM
 * (models/four_particle.c's parameters) */
int ref_four_particle(const lv_kv *kv, lv_model **out);

#endif
