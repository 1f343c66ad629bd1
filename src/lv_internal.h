/* Internal helpers shared by the library's translation units.  Not installed. */
#ifndef LIVENS_INTERNAL_H
#define LIVENS_INTERNAL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"

#define LV_CHECK(expr)            \
  do {                            \
    int lv_rc_ = (expr);          \
    if (lv_rc_ != 0) return lv_rc_; \
  } while (0)

/* calloc that returns NULL for n == 0 requests of a non-empty type as a
 * 1-element allocation, so callers need not special-case empty arrays. */
void *lv_calloc(size_t n, size_t size);
double lv_wall_time(void);

/* Small dense vector helpers. */
double lv_vnorm_inf(int n, const double *x);
double lv_vdot(int n, const double *x, const double *y);
/* Non-zero if every x[i] is finite: x - x is +0 for a finite x and NaN
 * for an infinite or NaN one, and a sum of +0s stays +0 (one test at the
 * end; inline: the calls on short vectors cost as much as the test). */
static inline int lv_all_finite(int n, const double *x) {
  double s0 = 0.0, s1 = 0.0;
  int i = 0;
  for (; i + 1 < n; i += 2) {
    s0 += x[i] - x[i];
    s1 += x[i + 1] - x[i + 1];
  }
  if (i < n) s0 += x[i] - x[i];
  return s0 + s1 == 0.0;
}
/* y = A x for a column-major dense rows x cols matrix. */
void lv_dense_matvec(int rows, int cols, const double *A, const double *x,
                     double *y);
/* y = A^T x. */
void lv_dense_matvec_t(int rows, int cols, const double *A, const double *x,
                       double *y);
/* The assembly object of @p ls (src/linsol/assembly.h): the schemes' inner
 * loops write their entries there directly, without the per-call checks of
 * lv_linsol_add. */
struct lv_assembly *lv_linsol_assembly(lv_linsol *ls);

/* Diagnostics with the state layout given (has_p: independent momenta);
 * the public lv_diag_new_for takes it from the integrator's scheme. */
int lv_diag_new_layout(lv_diag **out, const lv_model *m, int has_p);

/* lv_diag_eval without what the divergence guard does not read: energy,
 * max|g| and max|G v| only (gp_norm 0, momentum NULL).  For a run whose
 * step diagnostics no output callback takes (lv_integrator_step_point). */
int lv_diag_eval_guard(lv_diag *d, const lv_state *s, lv_diag_point *pt);

/* lv_diag_eval (full) or lv_diag_eval_guard (!full) taking the constraint
 * errors the step already knows (lv_stepper.cnorm_known, cnorm) instead of
 * evaluating them again. */
int lv_diag_eval_known(lv_diag *d, const lv_state *s, lv_diag_point *pt, int full, unsigned known,
                       const double cnorm[2]);

/* During the output callback of a step: the divergence guard's diagnostics
 * of the state just accepted (its time is the guard's, not yet the state's
 * final t), and in *layout the lv_diag that evaluated them; NULL outside
 * that callback or without the guard. */
const lv_diag_point *lv_integrator_step_point(const lv_integrator *it, const lv_diag **layout);

/* lv_diag_record of the state @p s whose diagnostics @p src already holds
 * (evaluated by @p layout): the same summary as lv_diag_record(d, s, pt)
 * without evaluating again, provided @p layout has d's model and state
 * layout; otherwise it evaluates. */
int lv_diag_record_known(lv_diag *d, const lv_state *s, const lv_diag *layout, const lv_diag_point *src,
                         lv_diag_point *pt);

/* Forget this thread's last evaluation failure (before a new step). */
void lv_model_clear_error(const lv_model *m);

/* Internal accessors of the model (src/model/model.c).  struct lv_model is
 * private to src/model/ (model/model_impl.h); the public accessors are in
 * livens/lv_model.h, these serve what only the library's layers need. */
/* 0 if the model has what every scheme needs (a mass matrix, and the
 * constraint function g when nc > 0), LV_EINPUT otherwise. */
int lv_model_validate(const lv_model *m);
/* Non-zero if the model has a potential (V, hence dV: lv_model_set_potential
 * sets them together). */
int lv_model_has_potential(const lv_model *m);
/* The destructor of the user data given to lv_model_set_user (NULL if
 * none), by which a builder recognises the models it made (src/mbs). */
void (*lv_model_user_destructor(const lv_model *m))(void *);
/* The potential through quadratic invariants (lv_model_set_invariants):
 * their number (0: none), pi(q) (ninv), Dpi(q) (ninv x nv through a sink)
 * and Vt, Vt' at given invariants (ninv each).  Like the other evaluators
 * they check the results (a non-finite value is LV_ENONFINITE, an entry
 * outside the block LV_EINPUT, a callback's failure LV_ECALLBACK) and record
 * the failure for lv_model_last_error.  Only call them when ninv > 0. */
int lv_model_ninv(const lv_model *m);
/* The multibody layer's CSV pose columns of element @p id of a model built
 * by lv_mbs_build (src/mbs/mbs.c): 1 if the element has them (a rigid
 * body; a particle only when it was named with lv_mbs_set_name, as every
 * particle of a system file is: an unnamed particle's position is its own
 * three q columns), 0 otherwise. */
int lv_mbs_model_has_columns(const lv_model *m, int id);
int lv_model_invariants(const lv_model *m, const double *q, double *pi);
int lv_model_invariant_jac(const lv_model *m, const double *q, lv_sink *D);
int lv_model_invariant_potential(const lv_model *m, const double *pi, double *vt, double *dvt);

/* A direct product with the constraint Jacobian, for a layer whose G is
 * cheaper to apply than to stream entry by entry through a sink (the
 * multibody layer): f(q, x, y, mode, user) adds op(G(q)) x to y (y is
 * zeroed by the caller; x and y do not overlap), op(G) = G or, with
 * LV_GPROD_T in mode, G^T, and with LV_GPROD_ABS the entries and x in
 * absolute value (the *_abs products).  It must add the entries the matrix callback G gives, in the
 * same order, so both paths agree to the bit.  lv_model_G_apply,
 * lv_model_GT_apply and their *_abs forms use it when set, checking the
 * result once for finiteness; a non-finite result or a failure runs the
 * sink path again, which names the callback and the entry as before.
 * lv_model_set_constraints clears it. */
#define LV_GPROD_T 1
#define LV_GPROD_ABS 2
typedef int (*lv_gprod_fn)(const double *q, const double *x, double *y, int mode, void *user);
int lv_model_set_G_product(lv_model *m, lv_gprod_fn f);
/* G's entries as values: f(q, v, cap, user) writes the first cap of the
 * values the matrix callback G adds, in its order, into v and returns how
 * many it adds (the same count at every q: the positions do not depend on
 * q).  A capture holding the recording of G's adds takes the values into
 * its slots without a sink call per entry (lv_spm_constraint_jac).
 * lv_model_G_values returns the count, or 0 when the model has no such
 * function; the values are not checked (the capture checks them).
 * lv_model_set_constraints clears it. */
typedef size_t (*lv_gvals_fn)(const double *q, double *v, size_t cap, void *user);
int lv_model_set_G_values(lv_model *m, lv_gvals_fn f);
size_t lv_model_G_values(const lv_model *m, const double *q, double *v, size_t cap);
/* The same for the constraint Hessian's callback, H(q; gamma), and the
 * curvature's, Z(q; w): f(q, gamma or w, v, cap, user), the positions
 * depending on neither argument; a capture of H or Z (lv_spm_model_matrix,
 * LV_MX_HESSIAN, LV_MX_CURVATURE) holding the recording of the callback's
 * adds takes them.  lv_model_set_constraints clears both. */
typedef size_t (*lv_hvals_fn)(const double *q, const double *x, double *v, size_t cap, void *user);
int lv_model_set_H_values(lv_model *m, lv_hvals_fn f);
size_t lv_model_H_values(const lv_model *m, const double *q, const double *gam, double *v, size_t cap);
int lv_model_set_Z_values(lv_model *m, lv_hvals_fn f);
size_t lv_model_Z_values(const lv_model *m, const double *q, const double *w, double *v, size_t cap);
/* The same for the constraint Hessian H(q; gamma) = sum_k gamma_k D^2 g_k:
 * f(q, gamma, x, y, mode, user) adds op(H(q; gamma)) x to y (zeroed by the
 * caller), the entries of the matrix callback's sink in its order, so that
 * lv_model_hessian_apply and lv_model_hessian_apply_abs give the bits of
 * their product sink.  A non-zero return (a case the product does not
 * cover) or a non-finite y runs the sink path.  lv_model_set_constraints
 * clears it. */
typedef int (*lv_hprod_fn)(const double *q, const double *gam, const double *x, double *y, int mode, void *user);
int lv_model_set_H_product(lv_model *m, lv_hprod_fn f);
/* y += G(q)^T lambda, accumulated into y (not zeroed): the entries in the
 * matrix callback's order, so the sums are those of a product sink on y.
 * Through the direct product when the model has one, checking y once; a
 * non-finite y then evaluates G through the checked path to name the
 * entry (status 0 when only lambda or y was not finite, as before). */
int lv_model_GT_apply_add(const lv_model *m, const double *q, const double *lambda, double *y);

/* G(q) and the Newton-matrix blocks' callbacks (which: G at q; d2V, df/dq, df/dv at (t, q,
 * v); the constraint Hessian at (q; gamma = x), the curvature at (q; w = x);
 * the invariants' gradients at q)
 * into a sink that sets *bad itself for a non-finite value or an entry
 * outside its block, without the finiteness wrapper per entry; a failure
 * or *bad reruns the checked evaluator into a null sink of the block, which
 * records the callback and entry.  A model without the callback takes the
 * checked path (finite differences). */
enum { LV_MX_G, LV_MX_D2V, LV_MX_FORCE_DQ, LV_MX_FORCE_DV, LV_MX_HESSIAN, LV_MX_CURVATURE, LV_MX_DINV };
int lv_model_matrix_flagged(const lv_model *m, int which, double t, const double *q, const double *v,
                            const double *x, lv_sink *S, const int *bad);

/* Dense (column-major) and matrix-free forms of the constraint Hessian
 * H(q; gamma) = D_q(G^T gamma) (nv x nv) and curvature Z(q; w) = D_q(G w)
 * (nc x nv), beside lv_model_mass_dense / lv_model_constraint_jac_dense.
 * The *_apply forms compute y = H x or y = Z x without forming the matrix. */
int lv_model_hessian_apply(const lv_model *m, const double *q, const double *gamma, const double *x, double *y);
int lv_model_curvature_apply(const lv_model *m, const double *q, const double *w, const double *x, double *y);
int lv_model_hessian_apply_abs(const lv_model *m, const double *q, const double *gamma, const double *x,
                               double *y);
int lv_model_hess_potential_apply_abs(const lv_model *m, const double *q, const double *x, double *y);
int lv_model_curvature_apply_abs(const lv_model *m, const double *q, const double *w, const double *x,
                                 double *y);

/* The constraints with their driving part (lv_model_set_driving):
 * g(q) - c(t) and G(q) v - c'(t) (nc each; tmp: scratch, nc).  Without
 * driving constraints they are g(q) and G(q) v. */
int lv_model_constraints_at(const lv_model *m, double t, const double *q, double *g, double *tmp);
int lv_model_velocity_constraints_at(const lv_model *m, double t, const double *q, const double *v, double *y,
                                     double *tmp);

/* Add the saddle-point matrix [M(qM) G(qGT)^T; G(qG) 0] ((nv + nc) square)
 * to A: the M block, then G^T, then G.  The same q three times is the
 * matrix of consistent accelerations and projections; RATTLE's stage 1 and
 * the initial projection take M and G^T at the old point. */
int lv_model_saddle(const lv_model *m, const double *qM, const double *qGT, const double *qG, lv_sink *A);

/* Consistent v' and lambda at (t, q, v) from the index-1 equations
 *   [M G^T; G 0] [v'; lambda] = [f - dV; -Z(q; v) v + c''(t)]
 * (c'' = 0 without driving constraints), with @p kkt holding that matrix
 * at q, factorised (so nc <= nv).  On return b (nv + nc) = [v'; lambda];
 * tmp: scratch, nv. */
int lv_model_consistent_accelerations(const lv_model *m, lv_linsol *kkt, double t, const double *q,
                                      const double *v, double *b, double *tmp);

/* Map a user callback's return value to a library status. */
static inline int lv_cb_status(int rc) { return rc == 0 ? 0 : LV_ECALLBACK; }

/* Finite-difference fallbacks (src/model/fd.c); mult scales the default
 * step (1 for the fallbacks; the derivative checker also uses 2 to
 * estimate the finite-difference error itself). */
int lv_fd_hess_potential(const lv_model *m, const double *q, lv_sink *H,
                    double mult);
int lv_fd_constraint_jac(const lv_model *m, const double *q, lv_sink *G,
                    double mult);
int lv_fd_constraint_hessian(const lv_model *m, const double *q,
                             const double *gamma, lv_sink *H,
                    double mult);
int lv_fd_constraint_curvature(const lv_model *m, const double *q,
                               const double *w, lv_sink *Z,
                    double mult);
int lv_fd_force_dq(const lv_model *m, double t, const double *q,
                   const double *v, lv_sink *K,
                    double mult);
int lv_fd_force_dv(const lv_model *m, double t, const double *q,
                   const double *v, lv_sink *C,
                    double mult);
/* D_q (M(q) a) (nv x nv) by central differences along q o exp(+-eps e_j):
 * the mass-matrix derivative of schemes with configuration-dependent M,
 * which has no derivative callback. */
int lv_fd_mass_dq(const lv_model *m, const double *q, const double *a, lv_sink *K, double mult);
/* Step used for the finite difference in direction j at q. */
/* Step along tangent direction j of sp, scaled by the coordinate it moves. */
double lv_fd_step_dir(const lv_space *sp, const double *q, int j);

/* Scheme options (src/schemes/options.c).  Each refusal writes one
 * sentence to st->detail, "<scheme>: KEY = VALUE is not accepted:
 * ACCEPTED", and returns LV_EINPUT; an absent option takes its default. */
int lv_opt_refuse(lv_stepper *st, const char *scheme, const char *key, const char *accepted);
/* *out = index of the value in the NULL-terminated choices */
int lv_opt_choice(lv_stepper *st, const char *scheme, const char *key, const char *const *choices, int def,
                  int *out);
/* 'on' -> 1, 'off' -> 0 */
int lv_opt_onoff(lv_stepper *st, const char *scheme, const char *key, int def, int *out);
/* a finite number; range checks are the caller's (with lv_opt_refuse) */
int lv_opt_double(lv_stepper *st, const char *scheme, const char *key, double def, double *out,
                  const char *accepted);

/* The post-convergence Newton polish (issue 19: one polish, a policy per
 * scheme; src/newton/newton.c): up to max_corrections corrections with the
 * factorisation kept by the last solve, while the measure falls at least
 * by the factor gain:
 *   LV_POLISH_RESIDUAL   |r| before each correction (lv_newton_polish);
 *   LV_POLISH_INCREMENT  |dx| of each correction; a correction that no
 *                        longer changes x ends it (the residual norm is
 *                        dominated by rounding elsewhere, e.g. of g(q));
 *   LV_POLISH_CHECKED    |r| after each correction, which must not exceed
 *                        max(|r| before, floor): else x is restored from
 *                        xsave and rolled_back set (the caller's caches of
 *                        x are then stale); sets stats->residual_norm.
 * x: the unknowns, updated additively by pb->update (INCREMENT, CHECKED);
 * xsave: room for a copy (CHECKED), or NULL: the solver's own correction
 * vector, which the checked polish does not use otherwise (the caller's
 * n-vector spared).  count_iterations: add the corrections
 * to stats->iterations; residual evaluations are always added.
 * reuse_residual (INCREMENT, CHECKED): the caller has not changed the
 * iterate or the problem since lv_newton_solve returned, so the residual
 * that solve ended with serves as the first one (no second evaluation). */
enum { LV_POLISH_RESIDUAL, LV_POLISH_INCREMENT, LV_POLISH_CHECKED };
typedef struct {
  int max_corrections;
  int measure;
  double gain;
  double *x, *xsave;
  double floor;
  int count_iterations;
  int rolled_back; /* out */
  int reuse_residual;
} lv_newton_polish_policy;
int lv_newton_polish_with(lv_newton *nw, const lv_newton_problem *pb, lv_newton_polish_policy *p,
                          lv_newton_stats *stats);

/* Whether the next lv_newton_solve(nw, pb, reuse, ...) factorises at its
 * first iterate (the predictor): always for full and simplified Newton or
 * reuse = 0, and for modified Newton when no factorisation is kept (none
 * yet, invalidated, or dropped after a failure).  A scheme that prepares
 * something only the Newton matrix reads at the predictor (BLieDF's record
 * of G) asks this first. */
int lv_newton_factorises_first(const lv_newton *nw, int reuse);

/* A sink's add_block as one add per entry in the block's order, the add's
 * body (add1, an always-inline function) inlined; a copy of the sink whose
 * add is no longer addfn goes through that add (lv_linsol.h). */
#define LV_SINK_ADD_BLOCK_INLINE(storage, name, add1, addfn)                                                  \
  storage int name(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda) {              \
    if (s->add != addfn) return lv_sink_add_block_each(s, i0, j0, nrows, ncols, a, lda);                      \
    for (int r = 0; r < nrows; r++) {                                                                         \
      const double *ar = a + (size_t)r * (size_t)lda;                                                         \
      for (int c = 0; c < ncols; c++) {                                                                       \
        int rc = add1(s, i0 + r, j0 + c, ar[c]);                                                              \
        if (rc) return rc;                                                                                    \
      }                                                                                                       \
    }                                                                                                         \
    return 0;                                                                                                 \
  }

/* A failed solve that another start or a smaller step may mend (the
 * integrator's halving, the schemes' restarts from another Newton start):
 * no convergence, divergence, a singular or non-finite Newton system. */
static inline int lv_newton_failed(int rc) {
  return rc == LV_ENEWTON || rc == LV_EDIVERGE || rc == LV_ESINGULAR || rc == LV_ENONFINITE;
}

/* A solve restarted from another start (EM, the VI theta family): its work
 * is added to the first attempt's, its final figures replace them. */
static inline void lv_newton_stats_add_restart(lv_newton_stats *ns, const lv_newton_stats *again) {
  ns->iterations += again->iterations;
  ns->factorizations += again->factorizations;
  ns->residual_evals += again->residual_evals;
  ns->damped += again->damped;
  ns->residual_norm = again->residual_norm;
  ns->increment_norm = again->increment_norm;
  ns->contraction = again->contraction;
}

#endif
