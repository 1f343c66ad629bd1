/** @file lv_scheme.h
 *  Time-stepping schemes: one table of function pointers per scheme (like
 *  gsl_odeiv2_step_type), selected by name.  Users select schemes through
 *  lv_integrator_new(); this header is for people who add a scheme.
 */
#ifndef LIVENS_LV_SCHEME_H
#define LIVENS_LV_SCHEME_H

#include "lv_export.h"

#include <signal.h>
#include "lv_model.h"
#include "lv_newton.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The state shared between a scheme and the integrator / diagnostics.
 *  Arrays not used by a scheme are still allocated (zero). */
typedef struct {
  /** time */
  double t;
  double *q;       /**< configuration, nq */
  double *v;       /**< velocity, nv */
  double *p;       /**< momentum, nv (schemes with LV_SCHEME_HAS_P; else M v) */
  double *lambda;  /**< position-constraint multiplier, m */
  double *gamma;   /**< velocity-constraint multiplier, m (LV_SCHEME_HAS_GAMMA) */
} lv_state;

/** Scheme property flags. */
enum {
  LV_SCHEME_HAS_P = 1u << 0,         /**< carries momenta p independently of v */
  LV_SCHEME_HAS_GAMMA = 1u << 1,     /**< carries a velocity-level multiplier */
  LV_SCHEME_MULTISTEP = 1u << 2,     /**< keeps a history (no step halving) */
  LV_SCHEME_CONSTANT_MASS = 1u << 3, /**< requires a constant mass matrix */
  LV_SCHEME_LINEAR_SPACE = 1u << 4,  /**< requires a linear configuration space */
  LV_SCHEME_UNCONSTRAINED = 1u << 5, /**< requires a model without constraints */
  /** Its default Newton iteration is LV_NEWTON_SIMPLIFIED (one Jacobian per
   *  step, at the predictor): the scheme needs its equations solved to the
   *  tolerance, not to round-off.  Conserving schemes (EM, VI, RATTLE) leave
   *  it unset: their invariants hold to the residual of the last iterate,
   *  which full Newton takes to round-off. */
  LV_SCHEME_SIMPLIFIED_NEWTON = 1u << 6,
  /** Requires a model without applied forces f(t, q, v): the discrete
   *  equations are those of a conservative (Hamiltonian) system, and a
   *  force would otherwise be ignored silently. */
  LV_SCHEME_CONSERVATIVE = 1u << 7,
  /** Accepts driving (rheonomic) constraints g(q) - c(t) = 0
   *  (lv_model_set_driving).  A capability, unlike the requirements
   *  above: a scheme without it refuses a driven model (LV_ENOTIMPL), so
   *  a scheme written before driving constraints existed never treats
   *  g(q) - c(t) as g(q). */
  LV_SCHEME_DRIVEN = 1u << 8
};

/** One instance of a scheme attached to an integrator. */
typedef struct {
  /** the model integrated (not owned) */
  const lv_model *model;
  /** the state the scheme advances (owned by the integrator) */
  lv_state *state;
  const lv_kv *options;          /**< scheme options given by the user */
  lv_linsol_kind linsol_kind;    /**< back-end for the Newton matrices */
  int linsol_threshold;          /**< size threshold for LV_LINSOL_AUTO */
  lv_newton_options newton;      /**< tolerances and iteration limits */
  void *priv;                    /**< the scheme's own data */
  lv_linsol *linsol;             /**< set by the scheme: its main Newton
                                      solver, for statistics (may be NULL) */
  char detail[200];              /**< set by create on a refused option: one
                                      sentence naming the accepted range */
  const volatile sig_atomic_t *stop; /**< nonzero once a stop was requested
                                      (lv_integrator_request_stop): long
                                      loops inside a step poll it and
                                      return LV_ESTOPPED */
  lv_newton *newton_solver;      /**< set by the scheme (may be NULL): the
                                      Newton solver of its step equations,
                                      whose kept factorisation the
                                      integrator invalidates when the step
                                      size changes (before new_h) */
  /** Set by the scheme's step (optional; the integrator clears it before
   *  each step): which of cnorm hold the constraint errors of the state the
   *  step has just written, as lv_diag_eval computes them from the same
   *  values -- bit 0: cnorm[0] = max|g(q)|, bit 1: cnorm[1] = max|G(q) v|
   *  (a model without driving constraints).  The divergence guard takes
   *  them instead of evaluating g and G v again. */
  unsigned cnorm_known;
  double cnorm[2]; /**< see cnorm_known */
} lv_stepper;

/** A scheme: its description and the functions the integrator calls.
 *  Registered in lv_scheme_registry(). */
typedef struct {
  const char *name;          /**< name users type, e.g. "rattle" */
  const char *description;   /**< one line */
  const char *conserves;     /**< what it preserves, for `livens list` */
  int order;                 /**< nominal order in q and v */
  unsigned flags;            /**< LV_SCHEME_* */
  const lv_param_info *options; /**< accepted options, terminated by {NULL} */
  /** Allocate st->priv and parse st->options (LV_EUNKNOWN / LV_EINPUT). */
  int (*create)(lv_stepper *st);
  /** Called once the state holds consistent (t0, q0, v0): derive p,
   *  multipliers, accelerations, start a history. */
  int (*init)(lv_stepper *st);
  /** Advance st->state by h.  On failure the state must be unchanged. */
  int (*step)(lv_stepper *st, double h, lv_newton_stats *stats);
  /** Release st->priv. */
  void (*destroy)(lv_stepper *st);
  /* Members below were added after the first release: positional
   * initialisers that stop at destroy leave them NULL. */
  /** Optional: keep a copy of the private history that a successful step
   *  carries to the next one (anything besides st->state), so that the
   *  integrator can take back sub-steps of a halved step that failed as a
   *  whole.  NULL: the scheme keeps no such history.  Status: LV_ENOMEM. */
  int (*save)(lv_stepper *st);
  /** Optional: return the private history to the last save. */
  void (*restore)(lv_stepper *st);
  /** Optional: the integrator is about to call step with @p h, a step size
   *  different from that of the last step attempted since init (always
   *  called before the first step).  Factorisations that depend on h become
   *  stale (the integrator has already invalidated st->newton_solver's);
   *  a multistep history no longer fits and restarts. */
  void (*new_h)(lv_stepper *st, double h);
  /** Optional (checkpoints, issue 17): the private history of the last
   *  step (everything besides st->state that the next step's result
   *  depends on: accelerations, past steps, predictor data, counters) as
   *  a flat array of doubles.  @p dir is LV_HISTORY_COUNT (only count,
   *  @p buf unused), LV_HISTORY_WRITE (copy into @p buf) or
   *  LV_HISTORY_READ (copy back from @p buf, into an instance just
   *  created and not initialised).  Returns the number of doubles, which
   *  depends only on the instance's sizes and options.  NULL: the scheme
   *  keeps no history (its next step depends on st->state alone). */
  size_t (*history)(lv_stepper *st, double *buf, int dir);
} lv_scheme_type;

/** Directions of lv_scheme_type::history. */
enum {
  LV_HISTORY_COUNT = 0, /**< count the doubles only */
  LV_HISTORY_WRITE = 1, /**< copy the history into the buffer */
  LV_HISTORY_READ = 2   /**< set the history from the buffer */
};

/** Registered schemes, terminated by NULL. */
LV_API const lv_scheme_type *const *lv_scheme_registry(void);
/** Look a scheme up by name; NULL if unknown. */
LV_API const lv_scheme_type *lv_scheme_find(const char *name);
/** Why scheme @p type cannot run @p model, if it cannot: the first
 *  requirement of its flags that the model does not meet, in the order
 *  lv_integrator_new_with_type() tests them (which then returns
 *  LV_ENOTIMPL).  Returns that LV_SCHEME_* flag (LV_SCHEME_CONSTANT_MASS,
 *  LV_SCHEME_LINEAR_SPACE, LV_SCHEME_UNCONSTRAINED, LV_SCHEME_CONSERVATIVE,
 *  or LV_SCHEME_DRIVEN for a model with driving constraints and a scheme
 *  without them), or 0 when every requirement is met (the scheme's init
 *  may still refuse the model for a reason of its own, with LV_ENOTIMPL
 *  and no sentence).  When @p why is not NULL it receives one sentence
 *  (at most @p n bytes, always terminated), e.g. "it needs a constant mass
 *  matrix", or "" for 0.  NULL @p type or @p model: 0. */
LV_API unsigned lv_scheme_unmet_requirement(const lv_scheme_type *type, const lv_model *model, char *why, size_t n);

#ifdef __cplusplus
}
#endif
#endif
