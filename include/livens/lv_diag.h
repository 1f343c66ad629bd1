/** @file lv_diag.h
 *  Diagnostics: energy, momentum maps, constraint residuals, per step and as
 *  a run summary, plus a CSV writer.
 *
 *  Definitions (state from lv_state):
 *  - energy:   H = 1/2 p . M^{-1} p + V(q) for schemes with momenta,
 *              E = 1/2 v . M v + V(q) otherwise;
 *  - momentum_k = p . xi_k(q) (p = M v where the scheme has no momenta);
 *  - g_norm  = max_i |g_i(q)|;
 *  - gv_norm = max_i |(G(q) v)_i|       (velocity constraint in the scheme's v);
 *  - gp_norm = max_i |(G(q) M^{-1} p)_i| (momentum-level constraint; = gv_norm
 *              when the scheme has no momenta).
 */
#ifndef LIVENS_LV_DIAG_H
#define LIVENS_LV_DIAG_H

#include "lv_export.h"

#include <stdio.h>
#include "lv_integrator.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque diagnostics evaluator and run summary: created by
 *  lv_diag_new_for(), freed by lv_diag_free(). */
typedef struct lv_diag lv_diag;

/** Diagnostics of one state (lv_diag_eval, lv_diag_record); definitions in
 *  the file comment. */
typedef struct {
  /** time of the state */
  double t;
  /** energy H or E */
  double energy;
  double *momentum;   /**< nsym values, owned by the diag object */
  double g_norm, gv_norm, gp_norm;
} lv_diag_point;
/** @var lv_diag_point::g_norm
 *   max_i |g_i(q) - c_i(t)| (c = 0 without driving constraints)
 *  @var lv_diag_point::gv_norm
 *   max_i |(G(q) v)_i - c_i'(t)|
 *  @var lv_diag_point::gp_norm
 *   max_i |(G(q) M^{-1} p)_i - c_i'(t)| */

/** Summary of the states recorded since creation or lv_diag_reset. */
typedef struct {
  /** number of states recorded */
  long samples;
  /** energy of the first recorded state, E0 */
  double energy0;
  double max_rel_energy_error;   /**< max |E - E0| / |E0|; NaN when E0 = 0 (undefined: read max_abs_energy_error) */
  /** max |E - E0| */
  double max_abs_energy_error;
  double max_energy_increment;   /**< max |E^{n+1} - E^n| */
  double energy_drift_rate;      /**< least-squares slope of (E - E0)/|E0| vs t; NaN when E0 = 0 */
  double max_momentum_error;     /**< max_k max_n |J_k - J_k(0)| */
  double max_g, max_gv, max_gp;
} lv_diag_summary;
/** @var lv_diag_summary::max_g
 *   max of g_norm over the run
 *  @var lv_diag_summary::max_gv
 *   max of gv_norm over the run
 *  @var lv_diag_summary::max_gp
 *   max of gp_norm over the run */

/** Create diagnostics for the states of @p it: its model, and the layout of
 *  its scheme's states (energy and momentum maps from the momenta p for
 *  schemes with LV_SCHEME_HAS_P, from M v otherwise).  The model must
 *  outlive the diagnostics; the integrator need not.
 *  Status: LV_EINPUT (NULL argument), LV_ENOMEM. */
LV_API int lv_diag_new_for(lv_diag **out, const lv_integrator *it);
/** Deprecated: diagnostics for @p model with the layout given by hand
 *  (@p has_p: the states carry independent momenta).  A wrong flag silently
 *  changes the reported energy; lv_diag_new_for takes it from the scheme. */
LV_API LV_DEPRECATED("use lv_diag_new_for, which takes the layout from the integrator")
int lv_diag_new(lv_diag **out, const lv_model *model, int has_p);
/** Free the diagnostics (NULL: no-op); the model is not freed. */
LV_API void lv_diag_free(lv_diag *d);

/** Evaluate the diagnostics of one state.  pt->momentum points into @p d.
 *  lv_diag_eval and lv_diag_record return LV_EINPUT for a NULL argument. */
LV_API int lv_diag_eval(lv_diag *d, const lv_state *s, lv_diag_point *pt);
/** Evaluate and accumulate into the summary (first call sets E0, J0). */
LV_API int lv_diag_record(lv_diag *d, const lv_state *s, lv_diag_point *pt);
/** Copy the summary; a NULL @p d gives an all-zero summary, a NULL @p sum
 *  does nothing. */
LV_API void lv_diag_get_summary(const lv_diag *d, lv_diag_summary *sum);
/** Forget the summary (NULL: no-op). */
LV_API void lv_diag_reset(lv_diag *d);

/** Write the CSV header for @p it's model and scheme:
 *  t, q1.., v1.., [p1..], lambda1.., [gamma1..], energy, momentum1..,
 *  g_norm, gv_norm, [gp_norm], newton_iters, and for a model built by the
 *  multibody layer every element's pose (lv_mbs_model_pose):
 *  NAME.x1..NAME.x3 and, for a rigid body, NAME.R11..NAME.R33. */
LV_API int lv_diag_csv_header(FILE *f, const lv_integrator *it);
/** Write one CSV row of the current state with its diagnostics @p pt. */
LV_API int lv_diag_csv_row(FILE *f, const lv_integrator *it, const lv_diag_point *pt);

/** Ready-made output callback: @p ctx is an lv_diag_writer; records the
 *  summary and, if csv is not NULL, writes a row (flushed every step, so an
 *  interrupted run keeps every accepted step). */
typedef struct {
  /** diagnostics to record into (required) */
  lv_diag *diag;
  /** CSV stream for rows, or NULL for the summary only */
  FILE *csv;
  int every;         /**< write every n-th step (default 1) */
  /** states seen since the last LV_OUTPUT_INIT, the initial one included (for @c every) */
  long count;
} lv_diag_writer;
/** Initialiser of an lv_diag_writer: `lv_diag_writer w =
 *  LV_DIAG_WRITER_INIT(diag, csv);` (csv NULL: the summary only). */
#define LV_DIAG_WRITER_INIT(d, csv_file) {.diag = (d), .csv = (csv_file), .every = 1, .count = 0}
/** Set @p w to LV_DIAG_WRITER_INIT(d, csv) (NULL @p w: no-op). */
LV_API void lv_diag_writer_init(lv_diag_writer *w, lv_diag *d, FILE *csv);
/** Returns non-zero (LV_EINPUT) for a NULL @p it, @p ctx or ctx->diag. */
LV_API int lv_diag_output(const lv_integrator *it, lv_output_event ev, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
