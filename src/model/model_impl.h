/* The model object, private to the model layer (src/model/, issue 19).
 * Only the C files of src/model/ include this header; every other layer
 * reaches the model through the accessors and evaluators of
 * livens/lv_model.h and the internal ones of lv_internal.h, which check the
 * callbacks' results and record failures.  A field access anywhere else
 * does not compile (benchmarks/count_model_access.sh counts them). */
#ifndef LIVENS_MODEL_IMPL_H
#define LIVENS_MODEL_IMPL_H

#include "lv_internal.h"

struct lv_model {
  char *name;
  lv_space *space;
  int nq, nv, nc;
  void *user;
  void (*free_user)(void *);
  lv_matrix_fn mass;
  int mass_constant;
  lv_scalar_fn V;
  lv_vector_fn dV;
  lv_matrix_fn d2V;
  lv_force_fn force;
  lv_force_jac_fn force_dq, force_dv;
  lv_vector_fn g;
  lv_matrix_fn G;
  lv_matrix_w_fn g_hessian, g_curvature;
  lv_gprod_fn Gprod; /* direct G products (lv_model_set_G_product), or NULL */
  lv_gvals_fn Gvals; /* G's entries as values (lv_model_set_G_values), or NULL */
  lv_hvals_fn Hvals; /* H(q; gamma)'s entries as values (lv_model_set_H_values), or NULL */
  lv_hvals_fn Zvals; /* Z(q; w)'s entries as values (lv_model_set_Z_values), or NULL */
  lv_hprod_fn Hprod; /* direct H(q; gamma) products (lv_model_set_H_product), or NULL */
  lv_drive_fn drive; /* driving constraints g(q) = c(t) (NULL: scleronomic) */
  int nsym;
  lv_symmetry_fn sym;
  int ninv;
  lv_invariant_fn inv;
  lv_matrix_fn dinv;
  lv_invariant_pot_fn inv_pot;
  double *q0, *v0;
};

#endif
