/** @file lv_model.h
 *  The mechanical system, described once and used by every scheme.
 *
 *  Equations of motion (left-trivialised on Lie groups, plain on R^d):
 *
 *      q' = v                       (q' = q o v~ on a Lie group)
 *      M(q) v' = -dV(q) + f(t,q,v) - G(q)^T lambda
 *      0 = g(q) - c(t)              (m constraints; c = 0 unless driven)
 *
 *  The constraints are scleronomic (g(q) = 0) unless the model has
 *  driving constraints (lv_model_set_driving): prescribed motion such as a
 *  crank turned at a given angle c(t), written g(q) - c(t) = 0 with the
 *  time dependence in c alone, so G, the Hessian and the curvature are
 *  those of g.  Only schemes flagged LV_SCHEME_DRIVEN integrate such a
 *  model (generalized-alpha); the others refuse it with LV_ENOTIMPL.
 *
 *  Sign convention: lambda enters with a minus sign on the right-hand side,
 *  i.e. the constraint force is -G^T lambda (as in the GGL paper, Kinon, Betsch & Schneider 2023).
 *  The generalized-alpha papers' "M v' + g(q,v,t) + B^T lambda = 0" is the
 *  same with g = dV - f and B = G.
 *
 *  Callbacks return 0 on success and non-zero to stop the step
 *  (reported as LV_ECALLBACK).  Matrix-valued callbacks write their entries
 *  through an lv_sink (see lv_linsol.h) so one callback serves dense and
 *  sparse assembly; they must add the same positions in the same order on
 *  every call (values may be zero) so sparse patterns stay fixed.
 *
 *  Every derivative a model does not supply is formed by finite differences
 *  along the space's retraction q o exp(eps e_j).  lv_model_check_derivatives
 *  compares the supplied ones against finite differences.
 */
#ifndef LIVENS_LV_MODEL_H
#define LIVENS_LV_MODEL_H

#include "lv_export.h"

#include <stdio.h>
#include "lv_linsol.h"
#include "lv_space.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Scalar of q: V(q). */
typedef int (*lv_scalar_fn)(const double *q, double *out, void *user);
/** Vector of q: dV(q) (nv), g(q) (m). */
typedef int (*lv_vector_fn)(const double *q, double *out, void *user);
/** Matrix of q through a sink: M(q) (nv x nv), d2V(q) (nv x nv), G(q) (m x nv). */
typedef int (*lv_matrix_fn)(const double *q, lv_sink *out, void *user);
/** Matrix of q and a vector w through a sink:
 *  constraint Hessian  H(q; gamma) = D_q (G(q)^T gamma)   (nv x nv, w = gamma in R^m);
 *  constraint curvature Z(q; w)    = D_q (G(q) w)         (m x nv,  w in R^nv). */
typedef int (*lv_matrix_w_fn)(const double *q, const double *w, lv_sink *out,
                              void *user);
/** Applied (non-potential) generalized force f(t, q, v) (nv). */
typedef int (*lv_force_fn)(double t, const double *q, const double *v,
                           double *out, void *user);
/** Jacobian of the applied force w.r.t. q or v (nv x nv) through a sink. */
typedef int (*lv_force_jac_fn)(double t, const double *q, const double *v,
                               lv_sink *out, void *user);
/** Symmetry generator k: xi_Q(q) in R^nv, so that the momentum map is
 *  J_k = p . xi_Q(q). */
typedef int (*lv_symmetry_fn)(int k, const double *q, double *xi_q, void *user);

/** Opaque mechanical system: space, callbacks, initial values and user
 *  data.  Created by lv_model_new() or lv_model_create(), freed by
 *  lv_model_free().  Evaluation does not write it, so one model may serve
 *  integrators in several threads. */
typedef struct lv_model lv_model;

/** Create a model on @p space (ownership of the space passes to the model)
 *  with @p nconstr holonomic constraints.  @p name is copied.
 *  Status: LV_EINPUT, LV_ENOMEM. */
LV_API int lv_model_new(lv_model **out, const char *name, lv_space *space,
                        int nconstr);
/** Free the model, its space and (if a destructor was given) the user data. */
LV_API void lv_model_free(lv_model *m);

/** User pointer passed to every callback, and an optional destructor. */
LV_API int lv_model_set_user(lv_model *m, void *user, void (*free_user)(void *));

/** Mass matrix.  @p constant non-zero means M does not depend on q (the
 *  VI / EM / RATTLE schemes require it).  Required. */
LV_API int lv_model_set_mass(lv_model *m, lv_matrix_fn mass, int constant);
/** Potential energy V, its gradient dV (required if V is set) and Hessian
 *  (optional: finite differences of dV otherwise).  Any may be NULL for a
 *  system without potential. */
LV_API int lv_model_set_potential(lv_model *m, lv_scalar_fn V, lv_vector_fn dV,
                                  lv_matrix_fn d2V);
/* (V and dV come together: dV without V is LV_EINPUT, since the
 *  energy-momentum schemes use differences of V and would drop the force.) */
/** Applied force f(t,q,v) and its Jacobians (optional, finite differences
 *  otherwise).  Gyroscopic terms of Lie group models go here
 *  (f = -Omega x J Omega). */
LV_API int lv_model_set_force(lv_model *m, lv_force_fn f, lv_force_jac_fn df_dq,
                              lv_force_jac_fn df_dv);
/** Constraints g (required if nconstr > 0), Jacobian G (optional, finite
 *  differences of g otherwise), Hessian D_q(G^T gamma) and curvature
 *  D_q(G w) (optional, finite differences of G otherwise). */
LV_API int lv_model_set_constraints(lv_model *m, lv_vector_fn g, lv_matrix_fn G,
                                    lv_matrix_w_fn hessian, lv_matrix_w_fn curvature);
/** Driving function of rheonomic constraints: the @p order-th derivative
 *  (0, 1 or 2) of c at time @p t, c(t), c'(t) or c''(t), into @p out (m). */
typedef int (*lv_drive_fn)(double t, int order, double *out, void *user);
/** Driving (rheonomic) constraints: the m constraints become
 *  g(q) - c(t) = 0, hence G(q) v = c'(t) on velocity level and
 *  G(q) v' + Z(q; v) v = c''(t) on acceleration level.  This is how a
 *  multibody model prescribes motion: a driven crank described by its
 *  angle coordinate phi has the row g_i(q) = phi and c_i(t) = omega t
 *  (other rows of c zero); a support moved along a path has its
 *  coordinates as rows (the built-in model "kapitza").  In Cartesian
 *  coordinates an angle is an atan2 with a branch cut, so a crank turning
 *  full circles needs an angle coordinate.  @p c supplies c and its first two derivatives exactly (no
 *  finite differences are taken); NULL makes the model scleronomic again.
 *  Only schemes flagged LV_SCHEME_DRIVEN (generalized-alpha, index 3 and
 *  2) accept such a model; lv_integrator_new refuses it for the others
 *  with LV_ENOTIMPL.  The initial projection, diagnostics (|g|, |G v|)
 *  and the divergence guard measure g(q) - c(t) and G(q) v - c'(t).
 *  Status: LV_EINPUT (NULL model, or a model without constraints). */
LV_API int lv_model_set_driving(lv_model *m, lv_drive_fn c);
/** @p n symmetry generators for momentum maps (J_k = p . xi_k(q)). */
LV_API int lv_model_set_symmetries(lv_model *m, int n, lv_symmetry_fn xi);
/** Initial configuration (nq) and velocity (nv), copied. */
LV_API int lv_model_set_initial(lv_model *m, const double *q0, const double *v0);
/** Optional: the potential written through quadratic invariants, for the
 *  invariant-based discrete gradient of the energy-momentum schemes:
 *  V(q) = sum_i Vt_i(pi_i(q)).  @p pi writes the n invariants,
 *  @p dpi their gradients (n x nv through a sink), @p vt the values
 *  Vt_i(pi_i) and derivatives Vt_i'(pi_i) (arrays of n). */
typedef int (*lv_invariant_fn)(const double *q, double *pi, void *user);
/** Potential in terms of the invariants: given the n invariants @p pi,
 *  write Vt_i(pi_i) into @p vt and Vt_i'(pi_i) into @p dvt (arrays of n).
 *  Returns 0, or non-zero to stop (LV_ECALLBACK). */
typedef int (*lv_invariant_pot_fn)(const double *pi, double *vt, double *dvt,
                                   void *user);
/** Register the invariant form of the potential described above: @p n
 *  invariants (0 removes them), all three callbacks required when n > 0.
 *  Status: LV_EINPUT (NULL model, n < 0, missing callback).  lv_dgrad_new()
 *  checks that they are quadratic and reproduce V. */
LV_API int lv_model_set_invariants(lv_model *m, int n, lv_invariant_fn pi,
                                   lv_matrix_fn dpi, lv_invariant_pot_fn vt);

/* Queries.  A NULL model is not a crash: the int queries return LV_EINPUT
 * (negative, so never a valid dimension), lv_model_has_force 0, and the
 * pointer queries NULL. */
/** The name given to lv_model_new() (owned by the model); NULL for NULL. */
LV_API const char *lv_model_name(const lv_model *m);
/** The configuration space (owned by the model); NULL for NULL. */
LV_API const lv_space *lv_model_space(const lv_model *m);
/** Doubles in a configuration q (lv_space_nq of the space); LV_EINPUT for NULL. */
LV_API int lv_model_nq(const lv_model *m);
/** Dimension of a velocity v (lv_space_nv of the space); LV_EINPUT for NULL. */
LV_API int lv_model_nv(const lv_model *m);
LV_API int lv_model_nc(const lv_model *m);     /**< number of constraints m */
LV_API int lv_model_nsym(const lv_model *m);   /**< number of symmetry generators */
/** Non-zero if the mass matrix was declared constant (lv_model_set_mass);
 *  LV_EINPUT for NULL. */
LV_API int lv_model_mass_constant(const lv_model *m);
/** The initial configuration (nq, owned by the model); NULL for NULL. */
LV_API const double *lv_model_q0(const lv_model *m);
/** The initial velocity (nv, owned by the model); NULL for NULL. */
LV_API const double *lv_model_v0(const lv_model *m);
/** The user pointer of lv_model_set_user() (NULL if none). */
LV_API void *lv_model_user(const lv_model *m);

/* Evaluation (supplied callback or finite-difference fallback).  All check
 * the results for NaN/Inf (LV_ENONFINITE) and map a non-zero callback return
 * to LV_ECALLBACK.  Matrix results are added into the sink. */
/** Add M(q) (nv x nv) into @p M.  LV_EINPUT if no mass callback was set.
 *  (These evaluation functions do not accept NULL arguments.) */
LV_API int lv_model_mass(const lv_model *m, const double *q, lv_sink *M);
/** V(q) into *@p V (0 for a model without potential). */
LV_API int lv_model_potential(const lv_model *m, const double *q, double *V);
/** dV(q) (nv) into @p dV (zeros for a model without potential). */
LV_API int lv_model_grad_potential(const lv_model *m, const double *q, double *dV);
/** Add d2V(q) (nv x nv) into @p H: the callback, or finite differences
 *  of dV; nothing for a model without potential. */
LV_API int lv_model_hess_potential(const lv_model *m, const double *q, lv_sink *H);
/** Applied force f(t, q, v) (nv) into @p f (zeros without a force). */
LV_API int lv_model_force(const lv_model *m, double t, const double *q,
                          const double *v, double *f);
/** Add df/dq (nv x nv) into @p K: the callback or finite differences;
 *  nothing without a force. */
LV_API int lv_model_force_dq(const lv_model *m, double t, const double *q,
                             const double *v, lv_sink *K);
/** Add df/dv (nv x nv) into @p C: the callback or finite differences;
 *  nothing without a force. */
LV_API int lv_model_force_dv(const lv_model *m, double t, const double *q,
                             const double *v, lv_sink *C);
/** Non-zero if the model has an applied force (0 for NULL). */
LV_API int lv_model_has_force(const lv_model *m);
/** Non-zero if the model has driving constraints (lv_model_set_driving;
 *  0 for NULL). */
LV_API int lv_model_has_driving(const lv_model *m);
/** The @p order-th derivative (0, 1, 2) of the driving function at @p t,
 *  c(t), c'(t) or c''(t), into @p out (m); zeros for a model without
 *  driving constraints, nothing when m = 0.  LV_EINPUT for another order. */
LV_API int lv_model_driving(const lv_model *m, double t, int order, double *out);
/** g(q) (m) into @p g; nothing when m = 0. */
LV_API int lv_model_constraints(const lv_model *m, const double *q, double *g);
/** Add G(q) (m x nv) into @p G: the callback or finite differences of g. */
LV_API int lv_model_constraint_jac(const lv_model *m, const double *q, lv_sink *G);
/** Add H(q; gamma) = D_q(G(q)^T gamma) (nv x nv) into @p H: the callback
 *  or finite differences of G. */
LV_API int lv_model_constraint_hessian(const lv_model *m, const double *q,
                                       const double *gamma, lv_sink *H);
/** Add Z(q; w) = D_q(G(q) w) (m x nv) into @p Z: the callback or finite
 *  differences of G. */
LV_API int lv_model_constraint_curvature(const lv_model *m, const double *q,
                                         const double *w, lv_sink *Z);
/** Symmetry generator @p k at q, xi_k(q) (nv), into @p xi.  LV_EINPUT
 *  for k outside [0, lv_model_nsym). */
LV_API int lv_model_symmetry(const lv_model *m, int k, const double *q, double *xi);

/** The last evaluation failure of this model on the calling thread: its
 *  status (0 if none), the name of the callback ("dV", "G", "mass", ...)
 *  and the first offending component (row, and column for a matrix; -1
 *  where not applicable).  Evaluation never writes the model, so one model
 *  may serve integrators in several threads; an integrator keeps its own
 *  copy (lv_integrator_error_detail). */
LV_API int lv_model_last_error(const lv_model *m, const char **callback, int *row,
                               int *col);

/** Dense conveniences (column-major, leading dimension = rows). */
LV_API int lv_model_mass_dense(const lv_model *m, const double *q, double *M);
/** G(q) as a dense m x nv column-major array (overwritten). */
LV_API int lv_model_constraint_jac_dense(const lv_model *m, const double *q,
                                         double *G);
/** y = G(q) x (m) and y = G(q)^T lambda (nv), via the Jacobian callback. */
LV_API int lv_model_G_apply(const lv_model *m, const double *q, const double *x,
                            double *y);
/** y = G(q)^T lambda (nv, overwritten; zeros when m = 0). */
LV_API int lv_model_GT_apply(const lv_model *m, const double *q, const double *lambda,
                             double *y);
/** y = M(q) x (nv), without forming M. */
LV_API int lv_model_mass_apply(const lv_model *m, const double *q, const double *x,
                               double *y);
/** The same products with every entry replaced by its modulus,
 *  y = |M(q)| |x|, |G(q)| |x|, |G(q)|^T |lambda|: the magnitude of the terms
 *  summed into each component of M x, G x, G^T lambda, i.e. the scale of
 *  their round-off (for lv_newton_problem.scale).  Entries a callback adds
 *  twice count twice. */
LV_API int lv_model_mass_apply_abs(const lv_model *m, const double *q, const double *x,
                                   double *y);
/** y = |G(q)| |x| (m). */
LV_API int lv_model_G_apply_abs(const lv_model *m, const double *q, const double *x,
                                double *y);
/** y = |G(q)|^T |lambda| (nv). */
LV_API int lv_model_GT_apply_abs(const lv_model *m, const double *q,
                                 const double *lambda, double *y);
/** Sinks that apply a matrix to a vector instead of storing it: each
 *  add(i, j, a) does y[i] += a x[j] (or y[j] += a x[i] when @p transposed).
 *  The caller zeroes y.  Defined as a struct so it lives on the stack. */
typedef struct {
  /** the sink to pass to a matrix callback (must stay the first member) */
  lv_sink sink;
  /** the vector the matrix is applied to */
  const double *x;
  /** the result, accumulated (zeroed by the caller) */
  double *y;
  /** non-zero: accumulate the transposed product */
  int transposed;
} lv_matvec_sink;
/** Initialise @p ms for an nrows x ncols matrix applied to @p x (or its
 *  transpose, if @p transposed) and return its sink.  @p ms must not be NULL. */
LV_API lv_sink *lv_matvec_sink_init(lv_matvec_sink *ms, int nrows, int ncols,
                                    const double *x, double *y, int transposed);

/** Result of a derivative check: for each derivative the supplied callback
 *  covers, the max relative deviation from central finite differences
 *  beyond the finite differences' own error (estimated from a second
 *  evaluation with twice the step), so an exactly zero derivative is not
 *  flagged because of truncation error. */
typedef struct {
  int checked;        /**< number of derivatives compared */
  int failed;         /**< number above the tolerance */
  double err_dV, err_d2V, err_G, err_hessian, err_curvature, err_df_dq,
      err_df_dv;      /**< max relative error, -1 if not supplied */
  double err_drive;   /**< c' and c'' of driving constraints against central
                           differences of c and c' at t = 0 and 1; -1 without */
} lv_check_result;
/** @var lv_check_result::err_dV
 *   max relative error of dV against V, -1 if not supplied
 *  @var lv_check_result::err_d2V
 *   max relative error of d2V against dV, -1 if not supplied
 *  @var lv_check_result::err_G
 *   max relative error of G against g, -1 if not supplied
 *  @var lv_check_result::err_hessian
 *   max relative error of the constraint Hessian against G, -1 if not supplied
 *  @var lv_check_result::err_curvature
 *   max relative error of the constraint curvature against G, -1 if not supplied
 *  @var lv_check_result::err_df_dq
 *   max relative error of df/dq against f, -1 if not supplied */

/** Compare supplied derivatives (dV against V, d2V against dV, G against g,
 *  hessian/curvature against G, force Jacobians against f, c' and c'' of
 *  driving constraints against c and c') with central
 *  finite differences at configuration @p q (NULL: the initial values),
 *  relative tolerance @p tol (0: 1e-6).  Writes one line per derivative to
 *  @p log if not NULL.  Returns 0 if all pass, LV_EINPUT if some failed
 *  (details in @p res), or an evaluation error. */
LV_API int lv_model_check_derivatives(const lv_model *m, const double *q,
                                      const double *v, double tol, FILE *log,
                                      lv_check_result *res);

/* ---- Registry of named benchmark models (models/) ---- */

/** A named model parameter with its default, as text. */
typedef struct {
  /** parameter name, as typed (key of an lv_kv) */
  const char *name;
  /** its default, as text */
  const char *default_value;
  /** one-line description */
  const char *doc;
} lv_param_info;
/** One row of an lv_param_info table, by field name (a constant expression,
 *  for static tables): `static const lv_param_info params[] =
 *  {LV_PARAM_INFO("m", "1", "mass"), LV_PARAM_INFO_END};` */
#define LV_PARAM_INFO(name_, default_, doc_) {.name = (name_), .default_value = (default_), .doc = (doc_)}
/** The row that ends an lv_param_info table. */
#define LV_PARAM_INFO_END {.name = NULL, .default_value = NULL, .doc = NULL}

/** Key/value list of textual parameters or options ("N" -> "1000"). */
typedef struct {
  /** number of pairs */
  int n;
  /** the n keys */
  const char **keys;
  /** the n values, as text */
  const char **values;
} lv_kv;
/** An lv_kv of @p n_ pairs by field name:
 *  `lv_kv params = LV_KV_INIT(1, keys, values);` */
#define LV_KV_INIT(n_, keys_, values_) {.n = (n_), .keys = (keys_), .values = (values_)}
/** Set @p kv to LV_KV_INIT(n, keys, values) (NULL @p kv: no-op). */
LV_API void lv_kv_init(lv_kv *kv, int n, const char **keys, const char **values);

/** A model of the registry (lv_model_registry()): its name, description,
 *  parameters and constructor. */
typedef struct {
  const char *name;         /**< name users type, e.g. "pendulum3d" */
  const char *description;  /**< one line */
  const lv_param_info *params; /**< terminated by {NULL} */
  /** Build the model from parameter overrides.  Unknown keys give LV_EUNKNOWN. */
  int (*create)(const lv_kv *params, lv_model **out);
} lv_model_info;
/** An lv_model_info by field name (a constant expression, for the static
 *  description a plugin returns; see examples/plugin_model.c). */
#define LV_MODEL_INFO_INIT(name_, description_, params_, create_) \
  {.name = (name_), .description = (description_), .params = (params_), .create = (create_)}

/** Registered models, terminated by a NULL entry. */
LV_API const lv_model_info *const *lv_model_registry(void);
/** Look a model up by name and create it.  Status: LV_EUNKNOWN. */
LV_API int lv_model_create(const char *name, const lv_kv *params, lv_model **out);

/** Parameter helpers for model constructors: parse @p key from @p kv as a
 *  double (default @p def).  LV_EINPUT if the text is not a number or @p out
 *  is NULL.  A NULL @p kv or @p key reads as "not given" (the default). */
LV_API int lv_kv_double(const lv_kv *kv, const char *key, double def, double *out);
/** As lv_kv_double for an int (decimal, in the range of int). */
LV_API int lv_kv_int(const lv_kv *kv, const char *key, int def, int *out);
/** The text of @p key in @p kv, or @p def if not given (not copied). */
LV_API const char *lv_kv_string(const lv_kv *kv, const char *key, const char *def);
/** LV_EUNKNOWN if @p kv has a key not among @p info (NULL-terminated names);
 *  *bad receives the offending key. */
LV_API int lv_kv_check(const lv_kv *kv, const lv_param_info *info, const char **bad);

#ifdef __cplusplus
}
#endif
#endif
