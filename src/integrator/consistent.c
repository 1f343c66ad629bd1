/* Consistent initial values: project q onto g(q) = 0 and v onto G(q) v = 0
 * in the metric of the mass matrix, or report how far off they are. */
#include "integrator/integrator_impl.h"

typedef struct {
  const lv_model *m;
  int nv, nc;        /* the model's dimensions */
  const double *q0;  /* the given configuration */
  double *q;         /* current iterate q0 o exp(delta) */
  double *delta;     /* nv */
  double *mu;        /* nc */
  double *tmp;       /* nv */
} proj_ctx;

/* r = [ M delta + G(q)^T mu ; g(q) ]: stationarity of the M-weighted distance
 * |delta|_M^2 / 2 under g(q0 o exp(delta)) = 0 (to first order in delta). */
static int proj_residual(void *ctx, double *r) {
  proj_ctx *c = ctx;
  const lv_model *m = c->m;
  LV_CHECK(lv_model_mass_apply(m, c->q0, c->delta, r));
  LV_CHECK(lv_model_GT_apply(m, c->q, c->mu, c->tmp));
  for (int i = 0; i < c->nv; i++) r[i] += c->tmp[i];
  return lv_model_constraints(m, c->q, r + c->nv);
}

static int assemble_saddle(const lv_model *m, const double *qM, const double *qG, lv_linsol *ls) {
  lv_sink A = lv_linsol_sink(ls);
  return lv_model_saddle(m, qM, qG, qG, &A);
}

static int proj_jacobian(void *ctx, lv_linsol *ls) {
  proj_ctx *c = ctx;
  /* Simplified Newton matrix (no curvature terms): the projection distance
   * is small, so the iteration still converges fast and robustly. */
  return assemble_saddle(c->m, c->q0, c->q, ls);
}

static int proj_update(void *ctx, const double *dx) {
  proj_ctx *c = ctx;
  for (int i = 0; i < c->nv; i++) c->delta[i] += dx[i];
  for (int i = 0; i < c->nc; i++) c->mu[i] += dx[c->nv + i];
  return lv_space_compose_exp(lv_model_space(c->m), c->q0, 1.0, c->delta, c->q);
}

static int project_positions(lv_integrator *it) {
  const lv_model *m = it->model;
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  int n = nv + nc, rc;
  proj_ctx c;
  c.m = m;
  c.nv = nv;
  c.nc = nc;
  double *q0 = lv_calloc((size_t)nq, sizeof(double));
  c.q = it->state.q;
  c.delta = lv_calloc((size_t)nv, sizeof(double));
  c.mu = lv_calloc((size_t)nc, sizeof(double));
  c.tmp = lv_calloc((size_t)nv, sizeof(double));
  lv_newton *nw = NULL;
  rc = (!q0 || !c.delta || !c.mu || !c.tmp) ? LV_ENOMEM : 0;
  if (!rc) rc = lv_newton_new(&nw, n, it->resolved_kind);
  if (!rc) {
    memcpy(q0, it->state.q, (size_t)nq * sizeof(double));
    c.q0 = q0;
    lv_newton_options *o = lv_newton_opts(nw);
    o->res_tol = 1e-14 * (1.0 + lv_vnorm_inf(nq, q0));
    o->max_iter = 50;
    lv_newton_problem pb = {proj_residual, proj_jacobian, proj_update, NULL, &c, n};
    lv_newton_stats st;
    rc = lv_newton_solve(nw, &pb, 0, &st);
    /* A residual at round-off that cannot reach the tight tolerance is fine. */
    if (rc == LV_ENEWTON && st.residual_norm <= 1e-12 * (1.0 + lv_vnorm_inf(nq, q0))) rc = 0;
    if (rc == LV_ENEWTON || rc == LV_EDIVERGE || rc == LV_ESINGULAR) rc = LV_EINCONSISTENT;
  }
  if (rc && q0) memcpy(it->state.q, q0, (size_t)nq * sizeof(double));
  lv_newton_free(nw);
  free(q0);
  free(c.delta);
  free(c.mu);
  free(c.tmp);
  return rc;
}

/* [M G^T; G 0] [v; mu] = [M v0; 0]: the M-orthogonal projection onto G v = 0. */
static int project_velocities(lv_integrator *it) {
  const lv_model *m = it->model;
  int nv = lv_model_nv(m), n = nv + lv_model_nc(m);
  lv_linsol *ls = NULL;
  double *b = lv_calloc((size_t)n, sizeof(double));
  int rc = b ? lv_linsol_new(&ls, it->resolved_kind, n, it->linsol_threshold) : LV_ENOMEM;
  if (!rc) rc = lv_linsol_begin(ls);
  if (!rc) rc = assemble_saddle(m, it->state.q, it->state.q, ls);
  if (!rc) rc = lv_linsol_factor(ls);
  if (!rc) rc = lv_model_mass_apply(m, it->state.q, it->state.v, b);
  if (!rc) rc = lv_linsol_solve(ls, b);
  if (!rc) memcpy(it->state.v, b, (size_t)nv * sizeof(double));
  if (rc == LV_ESINGULAR) rc = LV_EINCONSISTENT;
  lv_linsol_free(ls);
  free(b);
  return rc;
}

int lv_integrator_saddle_regular(lv_integrator *it) {
  const lv_model *m = it->model;
  lv_linsol *ls = NULL;
  int rc = lv_linsol_new(&ls, it->resolved_kind, lv_model_nv(m) + lv_model_nc(m), it->linsol_threshold);
  if (!rc) rc = lv_linsol_begin(ls);
  if (!rc) rc = assemble_saddle(m, it->state.q, it->state.q, ls);
  if (!rc) rc = lv_linsol_factor(ls);
  lv_linsol_free(ls);
  return rc == 0 ? 1 : rc == LV_ESINGULAR ? 0 : -1;
}

static int residual_norms(const lv_model *m, const lv_state *s, double *gn, double *gvn) {
  int nc = lv_model_nc(m);
  *gn = *gvn = 0.0;
  if (nc == 0) return 0;
  double *r = lv_calloc((size_t)nc, sizeof(double));
  if (!r) return LV_ENOMEM;
  int rc = lv_model_constraints(m, s->q, r);
  if (!rc) *gn = lv_vnorm_inf(nc, r);
  if (!rc) rc = lv_model_G_apply(m, s->q, s->v, r);
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
    LV_CHECK(project_positions(it));
    it->stats.projected = 1;
  }
  double gn2;
  LV_CHECK(residual_norms(m, &it->state, &gn2, &gvn));
  if (gvn > tol || it->stats.projected) {
    LV_CHECK(project_velocities(it));
    it->stats.projected = 1;
  }
  return 0;
}
