/* Shared helpers of the built-in models (not installed). */
#ifndef LIVENS_MODELS_H
#define LIVENS_MODELS_H

#include "livens/livens.h"

/* Build a model on R^d with constant or configuration-dependent mass from
 * the usual callbacks; takes ownership of user (freed with free_user even
 * on failure). */
int lv_models_build(lv_model **out, const char *name, int d, int nc, void *user,
                    void (*free_user)(void *), lv_matrix_fn mass, int mass_constant,
                    lv_scalar_fn V, lv_vector_fn dV, lv_matrix_fn d2V, lv_vector_fn g,
                    lv_matrix_fn G, lv_matrix_w_fn hess, lv_matrix_w_fn curv, int nsym,
                    lv_symmetry_fn sym, const double *q0, const double *v0);

/* The heavy top written by hand (heavy_top_hand.c), @p formulation r3so3,
 * se3, so3 or udq, from heavy_top.c's parameters: the built-in model takes
 * so3 and udq from it (the multibody layer does not express them), the
 * tests its r3so3 and se3 as an independent reference. */
int lv_models_heavy_top_hand(const lv_kv *kv, const char *formulation, lv_model **out);

#endif
