/* Shared helpers of the built-in models (not installed). */
#ifndef LIVENS_MODELS_H
#define LIVENS_MODELS_H

#include "livens/livens.h"

/* 3-vector kit of the models: c = a x b; y = R x and y = R^T x for a
 * row-major 3 x 3 R. */
static inline void lv_models_cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
static inline void lv_models_rvec(const double *R, const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}
static inline void lv_models_rtvec(const double *R, const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
}

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
