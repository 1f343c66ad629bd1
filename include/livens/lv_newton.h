/** @file lv_newton.h
 *  Newton's method for the nonlinear system of one step.
 *
 *  The solver never sees the unknowns themselves: a scheme keeps its iterate
 *  (which may live on a Lie group) and provides
 *    residual(r)      -- r = F(x) at the current iterate,
 *    jacobian(ls)     -- assemble dF/dx into the linear solver,
 *    update(dx)       -- x <- x (+) dx  (addition or composition with exp),
 *  and optionally a weight vector for the increment test; a scale vector for
 *  the residual test is set on the solver (lv_newton_set_scale).  The
 *  solver solves J dx = -r, applies the update and stops when
 *    |r_i| <= max(res_tol, res_rtol s_i) for all i   (residual test), or
 *    ||dx / (atol + rtol |x|)||_rms <= 1             (increment test, needs weights)
 *  whichever the options enable; s_i = 0 without a scale callback, so the
 *  residual test is then the absolute ||r||_inf <= res_tol.  With units
 *  (lv_newton_set_units) the absolute part reads |r_i| <= res_tol u_i.
 *
 *  Both tests judge only iterates reached by at least one correction: the
 *  starting iterate (a scheme's predictor) is corrected however small its
 *  residual.  Schemes scale their rows by powers of h, so an absolute test
 *  on the stored rows loosens as h shrinks, and at h = 1e-6 the
 *  generalized-alpha predictor passed uncorrected with force residuals ~ 1
 *  (issue 14).  One correction of full or simplified Newton is an exact
 *  Newton step, which squares the predictor's error.
 *
 *  Why a scale: a residual component summed from terms of size s_i cannot
 *  be computed more accurately than about eps s_i, and an iterate with
 *  coordinates of size |x| cannot be placed closer than eps |x| to the
 *  solution.  An absolute res_tol below that round-off floor (a 10^4-link
 *  chain has coordinates ~ 10^4, floor ~ 10^-12) costs an iteration that
 *  cannot gain a digit; res_rtol (16 eps by default) accepts the floor and
 *  nothing far above it.  Components whose s_i stay below res_tol / res_rtol
 *  (~ 280 by default) are tested against res_tol exactly as without a scale.
 *
 *  Full Newton refactorises every iteration; modified Newton keeps the
 *  factorisation, also from one solve to the next, while the contraction
 *  rate of the increments stays below @c reuse_rate, and refactorises
 *  otherwise; simplified Newton factorises once at the
 *  start of every solve (the predictor of a step) and keeps it for that
 *  solve under the same rule.
 */
#ifndef LIVENS_LV_NEWTON_H
#define LIVENS_LV_NEWTON_H

#include "lv_export.h"

#include <float.h> /* DBL_EPSILON in LV_NEWTON_OPTIONS_INIT */
#include "lv_linsol.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The nonlinear system of one step, as callbacks on the scheme's iterate
 *  (see the file comment).  Callbacks return 0 or a status that stops the
 *  solve. */
typedef struct {
  /** r = F(x) at the current iterate (length n). */
  int (*residual)(void *ctx, double *r);
  /** Assemble the Newton matrix dF/dx at the current iterate.  Called
   *  between lv_linsol_begin and lv_linsol_factor. */
  int (*jacobian)(void *ctx, lv_linsol *ls);
  /** Apply the correction dx (length n) to the iterate. */
  int (*update)(void *ctx, const double *dx);
  /** Optional: w_i = 1 / (atol + rtol |x_i|) for the increment test. */
  int (*weights)(void *ctx, const double *atol_rtol, double *w);
  /** passed to every callback */
  void *ctx;
  /** number of unknowns (and of residual components) */
  int n;
} lv_newton_problem;
/** A problem by field name, without increment weights (set .weights after,
 *  if wanted): `lv_newton_problem pb = LV_NEWTON_PROBLEM_INIT(res, jac,
 *  upd, ctx, n);` */
#define LV_NEWTON_PROBLEM_INIT(residual_, jacobian_, update_, ctx_, n_)                      \
  {.residual = (residual_), .jacobian = (jacobian_), .update = (update_), .weights = NULL, \
   .ctx = (ctx_), .n = (n_)}
/** Set @p pb to LV_NEWTON_PROBLEM_INIT(residual, jacobian, update, ctx, n)
 *  (NULL @p pb: no-op). */
LV_API void lv_newton_problem_init(lv_newton_problem *pb, int (*residual)(void *, double *),
                                   int (*jacobian)(void *, lv_linsol *), int (*update)(void *, const double *),
                                   void *ctx, int n);

/** Residual scale callback (see lv_newton_set_scale): s_i >= 0, the
 *  magnitude of the terms summed into r_i at the current iterate. */
typedef int (*lv_newton_scale_fn)(void *ctx, double *s);

/** Newton variants (when the Jacobian is re-formed and factorised). */
typedef enum {
  LV_NEWTON_FULL = 0,     /**< new Jacobian every iteration */
  LV_NEWTON_MODIFIED = 1, /**< reuse the factorisation across solves while convergence is fast */
  LV_NEWTON_SIMPLIFIED = 2 /**< one factorisation per solve, at its first iterate, kept through
                                that solve while convergence is fast (refactorised otherwise) */
} lv_newton_kind;

/** Convergence tests of a Newton solve (lv_newton_options::stop). */
typedef enum {
  /** the residual test (res_tol, res_rtol) or the increment test (atol,
   *  rtol, with the problem's weights), the first corrected iterate that
   *  passes either */
  LV_NEWTON_STOP_DEFAULT = 0,
  /** residual reduction, the test of the Exudyn multibody code (its
   *  default NewtonSettings: newtonResidualMode 0, adaptInitialResidual):
   *  converged when ||r||_2 <= rtol r_ref or ||r||_2 <= atol, r_ref the
   *  residual at the solve's first iterate (the predictor; at least
   *  2 atol), replaced by the residual after the first correction where
   *  that is larger; res_tol, res_rtol and the increment weights are not
   *  used.  Modified and simplified Newton then refactorise, as that code
   *  does, from the third correction on when ||r_k||_2 > reuse_rate
   *  ||r_{k-1}||_2 (its modifiedNewtonContractivity, 0.5 there) and after
   *  max_frozen corrections of a solve.  With units
   *  (lv_newton_set_units) the norm is that of r_i / u_i, the equations
   *  in their own units, as that code takes it before scaling its rows.
   *  For comparisons with the
   *  iteration counts that code reports: the test's meaning changes with
   *  the scaling of the residual rows, so it is not the default. */
  LV_NEWTON_STOP_REDUCTION = 1
} lv_newton_stop;

/** Options of a Newton solve; the defaults are LV_NEWTON_OPTIONS_INIT. */
typedef struct {
  /** Newton variant (default LV_NEWTON_FULL) */
  lv_newton_kind kind;
  int max_iter;        /**< iteration limit (default 40) */
  double res_tol;      /**< residual max-norm tolerance (default 1e-12); <= 0 disables the
                            residual test.  A residual within 100x of it that stops
                            decreasing is accepted as the round-off floor. */
  double res_rtol;     /**< relative residual tolerance (default 16 DBL_EPSILON): component i
                            also passes with |r_i| <= res_rtol s_i when the problem supplies
                            a scale s; <= 0 disables.  Used only with res_tol > 0. */
  double atol, rtol;   /**< increment test tolerances (default 1e-12, 1e-8); used if weights given */
  double reuse_rate;   /**< modified Newton: refactor when ||dx_k||/||dx_{k-1}|| exceeds this (0.3) */
  double divergence;   /**< stop with LV_EDIVERGE if ||r|| grows by this factor over its minimum (1e8) */
  int damping;         /**< non-zero: halve the correction while the residual does not decrease (globalised Newton) */
  lv_newton_stop stop; /**< convergence test (default LV_NEWTON_STOP_DEFAULT) */
  int max_frozen;      /**< with LV_NEWTON_STOP_REDUCTION, modified and simplified Newton refactorise
                            at every correction of a solve beyond this many (Exudyn's
                            maxModifiedNewtonIterations, 8 there); 0 (default): no limit */
} lv_newton_options;
/** @var lv_newton_options::atol
 *   absolute increment tolerance (default 1e-12); used if weights are given
 *  @var lv_newton_options::rtol
 *   relative increment tolerance (default 1e-8); used if weights are given */

/** Per-solve statistics (also accumulated by the integrator). */
typedef struct {
  /** Newton corrections applied */
  int iterations;
  /** Newton matrices factorised */
  int factorizations;
  /** residual evaluations */
  int residual_evals;
  int damped;              /**< corrections shortened by damping */
  double residual_norm;    /**< max-norm of the last residual */
  double increment_norm;   /**< max-norm of the last increment */
  double contraction;      /**< last ||dx_k|| / ||dx_{k-1}|| */
  int scaled;              /**< converged by the relative part of the residual test: some
                                |r_i| > res_tol, all |r_i| <= res_rtol s_i where larger */
  int stalled;             /**< LV_ENEWTON because the residual fell by less than a tenth
                                below its best in LV_NEWTON_STALL corrections each under a
                                millionth of the solve's largest (converged in x, not in the
                                residual: a round-off floor or an inaccurate Newton matrix),
                                not because of max_iter */
  double residual_ratio;   /**< the last residual in units of its componentwise tolerance
                                (<= 1: converged); 0 when the residual test is off */
} lv_newton_stats;

/** Corrections without progress after which a solve stops as stalled
 *  (lv_newton_stats.stalled). */
#define LV_NEWTON_STALL 5

/** The defaults listed above, as an initialiser:
 *  `lv_newton_options o = LV_NEWTON_OPTIONS_INIT;` */
#define LV_NEWTON_OPTIONS_INIT                                                               \
  {.kind = LV_NEWTON_FULL, .max_iter = 40, .res_tol = 1e-12, .res_rtol = 16.0 * DBL_EPSILON, \
   .atol = 1e-12, .rtol = 1e-8, .reuse_rate = 0.3, .divergence = 1e8, .damping = 0,              \
   .stop = LV_NEWTON_STOP_DEFAULT, .max_frozen = 0}

/** Fill @p opt with the defaults listed above (LV_NEWTON_OPTIONS_INIT). */
LV_API void lv_newton_options_default(lv_newton_options *opt);

/** Opaque Newton solver: options, work arrays and a linear solver.
 *  Created by lv_newton_new(), freed by lv_newton_free(). */
typedef struct lv_newton lv_newton;

/** Create a solver for systems of size n using linear solver @p kind.
 *  Status: LV_EINPUT, LV_ENOMEM. */
LV_API int lv_newton_new(lv_newton **out, int n, lv_linsol_kind kind);
/** Free the solver and its linear solver (NULL: no-op). */
LV_API void lv_newton_free(lv_newton *nw);
/** The solver's options, to read or edit in place (owned by the solver;
 *  defaults as lv_newton_options_default).  @p nw must not be NULL. */
LV_API lv_newton_options *lv_newton_opts(lv_newton *nw);
/** The solver's linear solver (owned by it), e.g. for its statistics.
 *  @p nw must not be NULL. */
LV_API lv_linsol *lv_newton_linsol(lv_newton *nw);

/** Solve.  @p reuse non-zero allows modified Newton to start from the
 *  factorisation left by the previous solve.  Status: 0, LV_ENEWTON
 *  (iteration limit), LV_EDIVERGE, LV_ESINGULAR, LV_ENONFINITE (residual
 *  not finite), or a callback's status. */
LV_API int lv_newton_solve(lv_newton *nw, const lv_newton_problem *pb, int reuse,
                           lv_newton_stats *stats);

/** After a converged solve: up to @p max_corrections further corrections
 *  with the kept factorisation, while the residual max-norm at least halves.
 *  Brings a solution accepted at the tolerance down to round-off, which
 *  long conservative runs need (momentum maps drift by the accepted
 *  residual every step otherwise).  Adds its iterations to @p stats. */
LV_API int lv_newton_polish(lv_newton *nw, const lv_newton_problem *pb,
                            int max_corrections, lv_newton_stats *stats);

/** Give the residual test a scale (NULL, the default: absolute test only).
 *  @p scale is called with the ctx of the problem being solved and returns
 *  s_i >= 0, the magnitude of the terms summed into r_i (e.g. |M| |q| + |c|
 *  + |G^T| |lambda| for r = M q - c + G^T lambda, or |G(q)| |q| for g(q),
 *  whose round-off comes from q known only to eps |q|; lv_model_*_apply_abs
 *  form such products).  It is called at most once per solve, after the
 *  first correction and only while the absolute test fails, so it may cost
 *  as much as a residual.  A solver property rather than a field of
 *  lv_newton_problem so existing problem initialisers stay complete; every
 *  problem solved with @p nw must accept the callback's ctx. */
LV_API void lv_newton_set_scale(lv_newton *nw, lv_newton_scale_fn scale);

/** Give the residual test units (NULL, the default: u_i = 1).  @p units
 *  is called with the problem's ctx at the start of every solve and
 *  returns u_i > 0, the size in r_i of one unit of the equation the row
 *  states (force, constraint value, ...): the absolute test then reads
 *  |r_i| <= res_tol u_i, i.e. r_i / u_i <= res_tol in the equation's own
 *  units, whatever factors of h the scheme scaled the row by to keep its
 *  Newton matrix O(1).  A solver property like the scale. */
LV_API void lv_newton_set_units(lv_newton *nw, lv_newton_scale_fn units);

/** Mark the kept factorisation stale (e.g. after a step-size change). */
LV_API void lv_newton_invalidate(lv_newton *nw);

#ifdef __cplusplus
}
#endif
#endif
