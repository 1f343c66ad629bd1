/* The saddle-point operations of a constrained model (saddle.h): one
 * factorisation of [M G^T; G 0] at a configuration and the solves the
 * integrator (consistent initial values) and the schemes (generalized-alpha,
 * BLieDF: starts, projections; RATTLie: its stage 2 and node values) make
 * with it. */
#include "model/saddle.h"

struct lv_saddle {
  const lv_model *m;
  const lv_space *sp;
  int nq, nv, nc;
  lv_linsol *ls; /* [M G^T; G 0]; NULL after lv_saddle_release until the next factorisation */
  lv_linsol_kind kind;
  int threshold;
  double *b;     /* right-hand side and solution, nv + nc */
  double *tmp;   /* nv */
  /* position projection (lv_saddle_project_q) */
  lv_newton *nw;     /* made by the first lv_saddle_project_q */
  const double *q0; /* the given configuration (a copy in q0buf) */
  double *q0buf;    /* nq */
  double *q;        /* the iterate q0 o exp(delta) (the caller's array) */
  double t;         /* the time of the driving constraints g(q) = c(t) */
  double *delta;    /* nv */
  double *mu;       /* nc */
  double *drv;      /* c(t) or c'(t) of driving constraints, nc */
  long nfact;       /* factorisations made (lv_saddle_factorizations) */
  /* G's adds in call order (lv_saddle_factor): evaluated once, written into
   * both blocks; grown by the first factorisations, kept */
  lv_sink grec;
  int *gi, *gj;
  double *gv;
  size_t gn, gcap;
  int goom;
};

int lv_saddle_new(lv_saddle **out, const lv_model *m, lv_linsol_kind kind, int threshold) {
  *out = NULL;
  lv_saddle *S = lv_calloc(1, sizeof *S);
  if (!S) return LV_ENOMEM;
  S->m = m;
  S->sp = lv_model_space(m);
  S->nq = lv_model_nq(m);
  S->nv = lv_model_nv(m);
  S->nc = lv_model_nc(m);
  S->kind = kind;
  S->threshold = threshold;
  /* one block: b (nv + nc), tmp, delta (nv each), mu (nc), q0buf (nq), drv (nc) */
  size_t d = (size_t)S->nv, k = (size_t)S->nc, n = d + k;
  double *w = lv_calloc(n + 2 * d + 2 * k + (size_t)S->nq, sizeof(double));
  int rc = w ? lv_linsol_new(&S->ls, kind, (int)n, threshold) : LV_ENOMEM;
  if (w) {
    S->b = w;
    S->tmp = S->b + n;
    S->delta = S->tmp + d;
    S->mu = S->delta + d;
    S->q0buf = S->mu + k;
    S->drv = S->q0buf + S->nq;
  }
  if (rc) {
    lv_saddle_free(S);
    return rc;
  }
  *out = S;
  return 0;
}

void lv_saddle_free(lv_saddle *S) {
  if (!S) return;
  lv_linsol_free(S->ls);
  lv_newton_free(S->nw);
  free(S->b); /* the block of all vectors */
  free(S->gi);
  free(S->gj);
  free(S->gv);
  free(S);
}

void lv_saddle_release(lv_saddle *S) {
  if (!S) return;
  lv_linsol_free(S->ls);
  S->ls = NULL;
  lv_newton_free(S->nw);
  S->nw = NULL;
}

/* The recording sink of G (nc x nv, bounds as lv_model_saddle's views). */
static int grec_add(lv_sink *s, int i, int j, double v) {
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  lv_saddle *S = s->target;
  if (S->gn == S->gcap) {
    size_t cap = S->gcap ? 2 * S->gcap : 256;
    int *gi = realloc(S->gi, cap * sizeof *gi);
    if (gi) S->gi = gi;
    int *gj = gi ? realloc(S->gj, cap * sizeof *gj) : NULL;
    if (gj) S->gj = gj;
    double *gv = gj ? realloc(S->gv, cap * sizeof *gv) : NULL;
    if (!gv) return S->goom = 1, LV_ENOMEM;
    S->gv = gv;
    S->gcap = cap;
  }
  S->gi[S->gn] = i;
  S->gj[S->gn] = j;
  S->gv[S->gn++] = v;
  return 0;
}

/* [M G^T; G 0] at q: lv_model_saddle(q, q, q) entry for entry and in its
 * add order (M, G^T, G; the views' scale 1 leaves every value's bits), with
 * G evaluated once and written into both blocks straight through
 * lv_linsol_add (the BLieDF start on the chain N = 100 makes ~260 of these:
 * the second G evaluation and the view sinks were a third of its cost). */
int lv_saddle_factor(lv_saddle *S, const double *q) {
  if (!S->ls) LV_CHECK(lv_linsol_new(&S->ls, S->kind, S->nv + S->nc, S->threshold));
  LV_CHECK(lv_linsol_begin(S->ls));
  lv_sink A = lv_linsol_sink(S->ls);
  int d = S->nv, k = S->nc;
  if (k == 0) {
    LV_CHECK(lv_model_saddle(S->m, q, q, q, &A));
  } else {
    lv_sink b11 = lv_sink_view(&A, 0, 0, d, d, 1.0, 0);
    LV_CHECK(lv_model_mass(S->m, q, &b11));
    lv_sink *g = &S->grec;
    memset(g, 0, sizeof *g);
    g->add = grec_add;
    g->target = S;
    g->nrows = k;
    g->ncols = d;
    g->scale = 1.0;
    S->gn = 0;
    S->goom = 0;
    int rc = lv_model_constraint_jac(S->m, q, g);
    if (S->goom) return LV_ENOMEM;
    LV_CHECK(rc);
    for (size_t c = 0; c < S->gn; c++) LV_CHECK(lv_linsol_add(S->ls, S->gj[c], d + S->gi[c], S->gv[c]));
    for (size_t c = 0; c < S->gn; c++) LV_CHECK(lv_linsol_add(S->ls, d + S->gi[c], S->gj[c], S->gv[c]));
  }
  S->nfact++;
  return lv_linsol_factor(S->ls);
}

long lv_saddle_factorizations(const lv_saddle *S) { return S->nfact; }

int lv_saddle_accelerations(lv_saddle *S, double t, const double *q, const double *v, double *vd,
                            double *lam) {
  LV_CHECK(lv_saddle_factor(S, q));
  return lv_saddle_accelerations_factored(S, t, q, v, vd, lam);
}

int lv_saddle_accelerations_factored(lv_saddle *S, double t, const double *q, const double *v, double *vd,
                                     double *lam) {
  int d = S->nv, k = S->nc;
  if (!S->ls) return LV_EINPUT; /* not factorised since lv_saddle_release */
  LV_CHECK(lv_model_consistent_accelerations(S->m, S->ls, t, q, v, S->b, S->tmp));
  if (vd) memcpy(vd, S->b, (size_t)d * sizeof(double));
  if (lam && k > 0) memcpy(lam, S->b + d, (size_t)k * sizeof(double));
  return 0;
}

int lv_saddle_project_v(lv_saddle *S, const double *q, double *v) { return lv_saddle_project_v_at(S, 0.0, q, v); }

int lv_saddle_project_v_at(lv_saddle *S, double t, const double *q, double *v) {
  int d = S->nv, k = S->nc;
  if (k == 0) return 0;
  LV_CHECK(lv_saddle_factor(S, q));
  LV_CHECK(lv_model_mass_apply(S->m, q, v, S->b));
  LV_CHECK(lv_model_driving(S->m, t, 1, S->b + d)); /* G v* = c'(t) (0 unless driven) */
  LV_CHECK(lv_linsol_solve(S->ls, S->b));
  memcpy(v, S->b, (size_t)d * sizeof(double));
  return 0;
}

int lv_saddle_shift(lv_saddle *S, const double *q, const double *w, double *dv) {
  int d = S->nv;
  memset(S->b, 0, (size_t)d * sizeof(double));
  LV_CHECK(lv_model_G_apply(S->m, q, w, S->b + d));
  LV_CHECK(lv_linsol_solve(S->ls, S->b));
  memcpy(dv, S->b, (size_t)d * sizeof(double));
  return 0;
}

int lv_saddle_solve(lv_saddle *S, double *b) { return lv_linsol_solve(S->ls, b); }

/* ---- position projection: Newton on the stationarity conditions ---- */

/* r = [ M(q0) delta + G(q)^T mu ; g(q) ]: stationarity of the M-weighted
 * distance |delta|_M^2 / 2 under g(q0 o exp(delta)) = 0 (to first order in
 * delta). */
static int proj_residual(void *ctx, double *r) {
  lv_saddle *S = ctx;
  const lv_model *m = S->m;
  LV_CHECK(lv_model_mass_apply(m, S->q0, S->delta, r));
  LV_CHECK(lv_model_GT_apply(m, S->q, S->mu, S->tmp));
  for (int i = 0; i < S->nv; i++) r[i] += S->tmp[i];
  return lv_model_constraints_at(m, S->t, S->q, r + S->nv, S->drv);
}

/* Simplified Newton matrix (no curvature terms): the projection distance is
 * small, so the iteration still converges fast and robustly. */
static int proj_jacobian(void *ctx, lv_linsol *ls) {
  lv_saddle *S = ctx;
  lv_sink A = lv_linsol_sink(ls);
  return lv_model_saddle(S->m, S->q0, S->q, S->q, &A);
}

static int proj_update(void *ctx, const double *dx) {
  lv_saddle *S = ctx;
  for (int i = 0; i < S->nv; i++) S->delta[i] += dx[i];
  for (int i = 0; i < S->nc; i++) S->mu[i] += dx[S->nv + i];
  return lv_space_compose_exp(S->sp, S->q0, 1.0, S->delta, S->q);
}

int lv_saddle_project_q(lv_saddle *S, double *q, int to_roundoff) { return lv_saddle_project_q_at(S, 0.0, q, to_roundoff); }

int lv_saddle_project_q_at(lv_saddle *S, double t, double *q, int to_roundoff) {
  if (S->nc == 0) return 0;
  S->t = t;
  int n = S->nv + S->nc;
  if (!S->nw) LV_CHECK(lv_newton_new(&S->nw, n, S->kind));
  memcpy(S->q0buf, q, (size_t)S->nq * sizeof(double));
  memset(S->delta, 0, (size_t)S->nv * sizeof(double));
  memset(S->mu, 0, (size_t)S->nc * sizeof(double));
  S->q0 = S->q0buf;
  S->q = q;
  double scale = 1.0 + lv_vnorm_inf(S->nq, S->q0);
  lv_newton_options *o = lv_newton_opts(S->nw);
  o->res_tol = 1e-14 * scale;
  o->max_iter = 50;
  lv_newton_problem pb = {proj_residual, proj_jacobian, proj_update, NULL, S, n};
  lv_newton_stats st;
  int rc = lv_newton_solve(S->nw, &pb, 0, &st);
  S->nfact += st.factorizations;
  /* A residual at round-off that cannot reach the tight tolerance is fine. */
  if (rc == LV_ENEWTON && st.residual_norm <= 1e-12 * scale) rc = 0;
  if (!rc && to_roundoff) rc = lv_newton_polish(S->nw, &pb, 8, &st); /* no factorisation */
  if (rc) memcpy(q, S->q0buf, (size_t)S->nq * sizeof(double));
  return rc;
}
