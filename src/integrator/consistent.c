/* Consistent initial values: project q onto g(q) = 0 and v onto G(q) v = 0
 * in the metric of the mass matrix (the saddle-point module, model/saddle.h),
 * or report how far off they are. */
#include "integrator/integrator_impl.h"
#include "model/saddle.h"

/* q onto g(q) = 0, then v onto G(q) v = 0 (if wanted), with one
 * saddle-point solver; a failure leaves q as it was and reads
 * LV_EINCONSISTENT when the projection itself failed. */
static int project(lv_integrator *it, int positions) {
  lv_saddle *S = NULL;
  int rc = lv_saddle_new(&S, it->model, it->resolved_kind, it->linsol_threshold);
  if (!rc && positions) {
    rc = lv_saddle_project_q_at(S, it->state.t, it->state.q, 0);
    if (rc == LV_ENEWTON || rc == LV_EDIVERGE || rc == LV_ESINGULAR) rc = LV_EINCONSISTENT;
  }
  if (!rc && !positions) {
    rc = lv_saddle_project_v_at(S, it->state.t, it->state.q, it->state.v);
    if (rc == LV_ESINGULAR) rc = LV_EINCONSISTENT;
  }
  lv_saddle_free(S);
  return rc;
}

int lv_integrator_saddle_regular(lv_integrator *it) {
  lv_saddle *S = NULL;
  int rc = lv_saddle_new(&S, it->model, it->resolved_kind, it->linsol_threshold);
  if (!rc) rc = lv_saddle_factor(S, it->state.q);
  lv_saddle_free(S);
  return rc == 0 ? 1 : rc == LV_ESINGULAR ? 0 : -1;
}

static int residual_norms(const lv_model *m, const lv_state *s, double *gn, double *gvn) {
  int nc = lv_model_nc(m);
  *gn = *gvn = 0.0;
  if (nc == 0) return 0;
  double *r = lv_calloc(2 * (size_t)nc, sizeof(double));
  if (!r) return LV_ENOMEM;
  int rc = lv_model_constraints_at(m, s->t, s->q, r, r + nc); /* g(q) - c(t): the driving part too */
  if (!rc) *gn = lv_vnorm_inf(nc, r);
  if (!rc) rc = lv_model_velocity_constraints_at(m, s->t, s->q, s->v, r, r + nc);
  if (!rc) *gvn = lv_vnorm_inf(nc, r);
  free(r);
  return rc;
}

int lv_integrator_make_consistent(lv_integrator *it) {
  const lv_model *m = it->model;
  double gn, gvn;
  LV_CHECK(residual_norms(m, &it->state, &gn, &gvn));
  it->stats.init_g_norm = gn;
  it->stats.init_gv_norm = gvn;
  it->stats.projected = 0;
  if (lv_model_nc(m) == 0) return 0;
  double tol = it->init_tol;
  if (it->init_mode == LV_INIT_CHECK) return (gn > tol || gvn > tol) ? LV_EINCONSISTENT : 0;
  if (gn > tol) {
    LV_CHECK(project(it, 1));
    it->stats.projected = 1;
  }
  double gn2;
  LV_CHECK(residual_norms(m, &it->state, &gn2, &gvn));
  if (gvn > tol || it->stats.projected) {
    LV_CHECK(project(it, 0));
    it->stats.projected = 1;
  }
  return 0;
}
