/** @file lv_integrator.h
 *  The time loop: consistent initial values, steps, output, statistics.
 */
#ifndef LIVENS_LV_INTEGRATOR_H
#define LIVENS_LV_INTEGRATOR_H

#include "lv_export.h"

#include <stddef.h>
#include "lv_scheme.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque integrator: one model, one scheme, the state and the time loop.
 *  Created by lv_integrator_new(), freed by lv_integrator_free(). */
typedef struct lv_integrator lv_integrator;

/** How lv_integrator_init treats initial values that violate g(q) = 0 or
 *  G(q) v = 0 (g(q) = c(t0) and G(q) v = c'(t0) for a model with driving
 *  constraints, lv_model_set_driving). */
typedef enum {
  LV_INIT_PROJECT = 0, /**< project q onto g = 0 (M-orthogonally) and v onto G v = 0 */
  LV_INIT_CHECK = 1    /**< fail with LV_EINCONSISTENT beyond the tolerance */
} lv_init_mode;

/** Why the output callback is called. */
typedef enum {
  /** after a successful lv_integrator_init (the initial state) */
  LV_OUTPUT_INIT = 0,
  /** after every accepted step */
  LV_OUTPUT_STEP = 1,
  /** at the end of lv_integrator_run_until, also after a failed step */
  LV_OUTPUT_FINAL = 2
} lv_output_event;

/** Output callback: return non-zero to stop the run (LV_ESTOPPED). */
typedef int (*lv_output_fn)(const lv_integrator *it, lv_output_event ev,
                            void *ctx);

/** Counters and figures of a run (lv_integrator_get_stats), since the
 *  last lv_integrator_init. */
typedef struct {
  long steps;              /**< accepted steps */
  long newton_iterations;  /**< over all solves, including failed ones */
  long factorizations;     /**< Newton matrix factorisations */
  long failed_solves;      /**< Newton failures (each followed by halving or stop) */
  long halvings;           /**< step-size halvings after a failed solve */
  long symbolic;           /**< symbolic analyses of the scheme's Newton solver (sparse) */
  lv_linsol_kind linsol;   /**< back-end of the scheme's Newton solver
                                (LV_LINSOL_DENSE, _KLU or _UMFPACK;
                                LV_LINSOL_SPARSE before its first
                                factorisation; LV_LINSOL_AUTO before init) */
  double sparse_flops_per_entry; /**< LV_LINSOL_SPARSE's figure for that
                                choice (lv_linsol_stats.flops_per_entry), -1
                                when the back-end was not chosen so */
  double wall_time;        /**< seconds spent in init + steps */
  double init_g_norm;      /**< |g(q0)| before projection */
  double init_gv_norm;     /**< |G(q0) v0| before projection */
  int projected;           /**< non-zero if the initial values were changed */
} lv_integrator_stats;

/** Create an integrator for @p model (not owned; must outlive the
 *  integrator) with the registered scheme named @p scheme and step size @p h.
 *  Status: LV_EUNKNOWN (scheme name), LV_EINPUT (h not positive and finite,
 *  NULL model, model lacks a required callback), LV_ENOTIMPL (the scheme
 *  needs a constant mass matrix, a linear space, no constraints or no
 *  applied forces, and the model has them; or the model has driving
 *  constraints (lv_model_set_driving) and the scheme supports scleronomic
 *  constraints g(q) = 0 only), LV_ENOMEM. */
LV_API int lv_integrator_new(lv_integrator **out, const lv_model *model,
                             const char *scheme, double h);
/** The same with a scheme given by its table (lv_scheme.h): a scheme written
 *  outside the library runs under the integrator's loop, halving, guard,
 *  diagnostics and checkpoints like a registered one.  @p type (not owned,
 *  must outlive the integrator) needs at least name, create and step.
 *  Status: as lv_integrator_new, LV_EINPUT for an incomplete table. */
LV_API int lv_integrator_new_with_type(lv_integrator **out, const lv_model *model,
                                       const lv_scheme_type *type, double h);
/** Free the integrator, its scheme data and state (NULL: no-op); the model
 *  is not freed. */
LV_API void lv_integrator_free(lv_integrator *it);

/** Scheme option by name (e.g. "theta", "0.5").  Before init.
 *  Status: LV_EUNKNOWN for a name the scheme does not have. */
LV_API int lv_integrator_set_option(lv_integrator *it, const char *key,
                                    const char *value);
/** Linear-solver back-end for every matrix of the run (projection of the
 *  initial values and the scheme's Newton and saddle-point solvers).
 *  LV_LINSOL_AUTO is resolved once, at init, on the size n = nv + nc of the
 *  saddle-point matrix [M G^T; G 0]: dense if n < @p threshold (0: the
 *  default LV_LINSOL_AUTO_THRESHOLD), LV_LINSOL_SPARSE otherwise (KLU or
 *  UMFPACK, chosen per matrix from its pattern); the choice is reported in
 *  lv_integrator_stats.linsol.  Before init.  Status: LV_EINPUT. */
LV_API int lv_integrator_set_linsol(lv_integrator *it, lv_linsol_kind kind,
                                    int threshold);
/** Newton options for the scheme's solves (copied; also takes effect after
 *  init).  Status: LV_EINPUT (NULL argument, unknown kind, max_iter < 1,
 *  NaN tolerance, negative atol or rtol, or no convergence test enabled). */
LV_API int lv_integrator_set_newton(lv_integrator *it, const lv_newton_options *opt);
/** The Newton options in force: lv_newton_options_default, with the kind
 *  LV_NEWTON_SIMPLIFIED for schemes flagged LV_SCHEME_SIMPLIFIED_NEWTON,
 *  until lv_integrator_set_newton.  Change a field by get, edit, set. */
LV_API void lv_integrator_get_newton(const lv_integrator *it, lv_newton_options *opt);
/** How init treats inconsistent initial values (default LV_INIT_PROJECT)
 *  and the tolerance on max|g| and max|G v| (default 1e-10).  Status:
 *  LV_EINPUT (NULL @p it, unknown mode, tol not positive and finite). */
LV_API int lv_integrator_set_init_mode(lv_integrator *it, lv_init_mode mode,
                                       double tol);
/** One-step schemes: after a failed Newton solve retry with h/2, up to
 *  @p max_halvings times (0 disables, the default). */
LV_API int lv_integrator_set_halving(lv_integrator *it, int max_halvings);
/** Output callback called with LV_OUTPUT_INIT, _STEP and _FINAL and @p ctx
 *  (NULL @p fn: none).  Status: LV_EINPUT (NULL @p it). */
LV_API int lv_integrator_set_output(lv_integrator *it, lv_output_fn fn, void *ctx);
/** Ask a running init or step to stop as soon as it can: schemes poll the
 *  request inside long phases (BLieDF's start-up), and the call returns
 *  LV_ESTOPPED with the last whole state kept.  Async-signal-safe (it only
 *  sets a flag), so a SIGINT handler may call it.  The request holds until
 *  the next lv_integrator_init. */
LV_API int lv_integrator_request_stop(lv_integrator *it);

/** Default bound of the divergence guard on |E - E0| / E_s, where
 *  E_s = max(|E0|, |T0| + |V0|) from the consistent initial state.  Growth
 *  by a hundred times the initial energy content is no result even for a
 *  dissipative scheme (whose error stays below E_s) or a driven model.
 *  Not applied to a model with driving constraints (lv_model_set_driving),
 *  whose energy changes by the prescribed motion's work without bound. */
#define LV_GUARD_ENERGY_DEFAULT 1e2
/** Default bound of the guard on max|g| / (1 + max|q0|) and
 *  max|G v| / ((1 + max|q0|)(1 + max|v0|)): a constraint error as large as
 *  the configuration (velocity) itself. */
#define LV_GUARD_CONSTRAINT_DEFAULT 1.0
/** Divergence guard, on by default: after each accepted step a non-finite
 *  state, or an energy or constraint error beyond the bounds above, stops
 *  the run with LV_EDIVERGED; lv_integrator_error_detail gives the time and
 *  the figure.  The state is then that of the last step within the bounds
 *  and lv_integrator_step returns LV_EINPUT until the next init (the
 *  scheme's history has moved past it).  @p enabled = 0 switches the guard
 *  off (no evaluation cost); a bound of 0 selects its default.  Read at
 *  init for the reference figures.  Status: LV_EINPUT (negative or NaN
 *  bound). */
LV_API int lv_integrator_set_divergence_guard(lv_integrator *it, int enabled,
                                              double energy_bound,
                                              double constraint_bound);
/** New step size for the following steps (allowed between steps).
 *  Status: LV_EINPUT (NULL @p it, h not positive and finite). */
LV_API int lv_integrator_set_step(lv_integrator *it, double h);

/** Set t0 and the initial values (NULL: the model's), make them consistent
 *  (or check them), initialise the scheme and call the output with
 *  LV_OUTPUT_INIT.  Status: LV_EINCONSISTENT, evaluation errors.  A failed
 *  init leaves no state to continue from (the state may be half
 *  overwritten): lv_integrator_step then returns LV_EINPUT, with that
 *  reason in lv_integrator_error_detail, until an init succeeds. */
LV_API int lv_integrator_init(lv_integrator *it, double t0, const double *q0,
                              const double *v0);
/** One step of size h (or several smaller ones after halving).  On failure
 *  the state is that of the last accepted step.  Status: LV_EINPUT (no
 *  successful init since creation, a failed init or LV_EDIVERGED),
 *  LV_EDIVERGED (divergence guard), solver and evaluation errors. */
LV_API int lv_integrator_step(lv_integrator *it);
/** Steps until t >= t_end - h/2 (the last step is not shortened), then the
 *  output with LV_OUTPUT_FINAL. */
LV_API int lv_integrator_run_until(lv_integrator *it, double t_end);

/** One sentence saying why the last init or step failed, with the
 *  figures: which callback produced NaN/Inf and in which component, the
 *  Newton iteration count and residual, how far the initial values were
 *  off.  Writes at most @p n bytes (NUL-terminated) to @p buf; returns the
 *  status of that failure (0 if the last call succeeded). */
LV_API int lv_integrator_error_detail(const lv_integrator *it, char *buf, size_t n);

/* Queries.  A NULL @p it gives NULL (pointers), NaN (step size) or all-zero
 * statistics; a NULL @p s to lv_integrator_get_stats does nothing. */
/** The current state (owned by the integrator, valid until it is freed). */
LV_API const lv_state *lv_integrator_state(const lv_integrator *it);
/** The model given to lv_integrator_new(). */
LV_API const lv_model *lv_integrator_model(const lv_integrator *it);
/** The scheme's table (name, order, flags). */
LV_API const lv_scheme_type *lv_integrator_scheme(const lv_integrator *it);
/** The current step size h (NaN for NULL). */
LV_API double lv_integrator_step_size(const lv_integrator *it);
/** Statistics of the last Newton solve. */
LV_API const lv_newton_stats *lv_integrator_last_newton(const lv_integrator *it);
/** Copy the run statistics into @p s. */
LV_API void lv_integrator_get_stats(const lv_integrator *it, lv_integrator_stats *s);

/** BLieDF (bliedf1 .. bliedf4) only (issue 20): starting values supplied by
 *  the caller instead of the start integrator (start=rkmk4 or ramp).  @p q
 *  (n x nq) and @p v (n x nv) are the configurations and velocities at
 *  t0 + j h, j = 1 .. n, for the step size h of the integrator; (t0, q0,
 *  v0) are the initial values of lv_integrator_init.  n is k - 1, or k when
 *  the lambda fix (56) applies (index 3, constraints, lambda-fix=on: it
 *  needs the node t0 + k h); n = k is accepted in any case.  The nodes are
 *  projected onto the constraints and their multipliers computed, as for
 *  the start integrator's nodes; they serve the first start only (a new
 *  step size restarts with the start integrator).  Call after a successful
 *  lv_integrator_init and before the first step.  Status: LV_EINPUT (not a
 *  BLieDF integrator, not initialised, a step already taken, n out of
 *  range, NULL or non-finite values), LV_ENOMEM. */
LV_API int lv_integrator_set_start_history(lv_integrator *it, int n, const double *q, const double *v);

/** Checkpoints (issue 17).  Size in bytes of the checkpoint image of the
 *  integrator as it is now: header, time, step count, step size, the
 *  state arrays, the statistics and the scheme's private history.
 *  Status: LV_EINPUT (NULL argument, no successful init or read). */
LV_API int lv_integrator_checkpoint_size(const lv_integrator *it, size_t *n);
/** Write the whole integrator state to @p path atomically: the image goes
 *  to a temporary file in the same directory, which is flushed to disk
 *  (fsync) and then renamed over @p path, so a kill at any moment leaves
 *  either the previous checkpoint or the new one, never a broken one.  A
 *  run continued from the checkpoint (lv_integrator_checkpoint_read)
 *  takes the same steps bit for bit as the run that wrote it, except
 *  after LV_NEWTON_MODIFIED Newton, whose factorisation kept from an
 *  earlier step is not stored (the resumed run refactorises, and agrees
 *  to the Newton tolerance).  The file is in the host's byte order.
 *  Status: LV_EINPUT (NULL argument, nothing to write: no successful
 *  init), LV_EIO (with the reason in lv_integrator_error_detail),
 *  LV_ENOMEM. */
LV_API int lv_integrator_checkpoint_write(lv_integrator *it, const char *path);
/** Continue from a checkpoint written by lv_integrator_checkpoint_write:
 *  @p it must have been created for a model of the same name and sizes
 *  with the same scheme, options, step size and Newton options (set
 *  them before the call, as for init); the state, time, step count,
 *  statistics and the scheme's history are replaced by the file's, and
 *  lv_integrator_step continues as the writing run would have (the
 *  output callback is not called).  A file that is not a checkpoint, is
 *  truncated or corrupt (checksum), or belongs to another model, scheme,
 *  size, option set or step size is refused with LV_EINPUT and one
 *  sentence in lv_integrator_error_detail; the integrator then has no
 *  state to step from until an init or read succeeds.  Status: LV_EINPUT,
 *  LV_EIO (unreadable), LV_ENOMEM, or the scheme's create status. */
LV_API int lv_integrator_checkpoint_read(lv_integrator *it, const char *path);

#ifdef __cplusplus
}
#endif
#endif
