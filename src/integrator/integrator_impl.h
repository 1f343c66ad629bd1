/* Internal definition of the integrator, shared by integrator.c and
 * consistent.c. */
#ifndef LIVENS_INTEGRATOR_IMPL_H
#define LIVENS_INTEGRATOR_IMPL_H

#include "lv_internal.h"

struct lv_integrator {
  const lv_model *model;
  volatile sig_atomic_t stop_requested; /* lv_integrator_request_stop */
  struct {
    const char *callback; /* the model's failure record when the last init or step ended */
    int status, row, col;
  } model_err;
  const lv_scheme_type *type;
  lv_stepper stepper;
  int created, initialized;
  lv_state state, backup;
  double h;
  double t_base;       /* time at which the current step size was set */
  long n_since_base;   /* steps taken since then */
  lv_kv opts;          /* owned copies of the scheme options */
  lv_linsol_kind linsol_kind;    /* as requested (may be LV_LINSOL_AUTO) */
  lv_linsol_kind resolved_kind;  /* chosen at init: DENSE or UMFPACK */
  int linsol_threshold;
  lv_newton_options newton;
  lv_init_mode init_mode;
  double init_tol;
  int max_halvings;
  lv_output_fn output;
  void *output_ctx;
  lv_integrator_stats stats;
  lv_newton_stats last;
  int last_status;     /* status of the last init/step, for error_detail */
  int fail_in_init;    /* the last failure happened in init */
  int saddle_regular;  /* after LV_ESINGULAR in the first step: 1 if [M G^T; G 0] factors at
                          the start state (so the step, not the model, is singular), 0 if
                          not, -1 if not known */
  /* Divergence guard (see lv_integrator_set_divergence_guard). */
  int guard_on;
  double guard_energy, guard_constraint;
  lv_diag *guard_diag;
  double guard_e0, guard_escale, guard_gscale, guard_gvscale;
  /* The guard's evaluation of the state just accepted, offered to the
   * output callback of the same step (lv_integrator_step_point), so a
   * summary does not evaluate the same diagnostics twice; valid only while
   * that callback runs. */
  lv_diag_point guard_pt;
  int guard_pt_valid;
  double div_t, div_value, div_bound; /* figures of the last LV_EDIVERGED */
  const char *div_what;
  double h_attempt;    /* h of the last scheme step attempted since init (0: none) */
  int not_ready;       /* the last step was refused: no successful init */
  char ckpt_detail[320]; /* why the last checkpoint read/write failed (issue 17) */
};

void lv_state_copy(lv_state *dst, const lv_state *src, int nq, int nv, int nc);
int lv_integrator_make_consistent(lv_integrator *it);
/* Checkpoints (checkpoint.c) need the parts of init that do not touch the
 * state: the back-end choice and a fresh scheme instance. */
void lv_integrator_resolve_linsol(lv_integrator *it);
int lv_integrator_create_stepper(lv_integrator *it);
/* 1 if the saddle-point matrix [M G^T; G 0] at the current state factors
 * (regular mass, independent constraints), 0 if it is singular, -1 if it
 * could not be evaluated. */
int lv_integrator_saddle_regular(lv_integrator *it);

#endif
