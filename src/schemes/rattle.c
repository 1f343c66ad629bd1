/* RATTLE (Andersen 1983; Hairer-Lubich-Wanner VII.1.4): the symmetric,
 * symplectic, second-order baseline with constraints on both levels.
 * Constant mass matrix, linear configuration space.
 *
 *   p_half = p_n - h/2 (dV(q_n) + G(q_n)^T lambda)
 *   q_{n+1} = q_n + h M^{-1} p_half,         g(q_{n+1}) = 0
 *   p_{n+1} = p_half - h/2 (dV(q_{n+1}) + G(q_{n+1})^T mu)
 *   G(q_{n+1}) M^{-1} p_{n+1} = 0
 *
 * Stage 1 is solved by Newton in (q_{n+1}, s = h^2/2 lambda): scaling the
 * multiplier by h^2/2 keeps the Newton matrix [M, G(q_n)^T; G(q_{n+1}), 0]
 * O(1) as h -> 0.  Stage 2 is one linear saddle-point solve in
 * (v_{n+1}, h/2 mu) with the matrix [M, G^T; G, 0] at q_{n+1}: same pattern,
 * so a sparse back-end analyses it once.
 *
 * The multipliers lambda and mu of the scheme are first-order
 * approximations of lambda(t): each is biased by O(h) towards its half
 * step.  The state's lambda is instead the multiplier of the
 * acceleration-level equations at the node,
 *   [M G^T; G 0] [a; lambda] = [-dV(q_{n+1}); -D_q(G v) v]  at (q_{n+1}, v_{n+1}),
 * second order like q and v, and one extra solve with the stage-2
 * factorisation (the same matrix).  mu is kept as the next Newton guess. */
#include "lv_internal.h"
#include "schemes/history.h"
#include "schemes/spmat.h"

typedef struct {
  const lv_model *m;
  int d, k;           /* nv and nc of the model */
  lv_state *s;
  double h;
  lv_newton *nw;
  lv_linsol *vel;     /* stage-2 saddle-point solver */
  double *q1;         /* stage-1 iterate */
  double *sl;         /* s = h^2/2 lambda */
  double *c;          /* M q_n + h p_n - h^2/2 dV(q_n): the constant part of stage 1 */
  double *tmp, *b;
  double *mu;         /* stage-2 multiplier of the last step (next guess) */
  double *vprev;      /* v_{n-1}, for the predictor */
  double hprev;       /* the step that led from v_{n-1} to v_n (either sign); 0: no history */
  double *saved;      /* vprev, mu at the last save (halving), nv + nc */
  double saved_hprev;
  lv_spm Mc;          /* M, captured at the first saddle-point matrix (constant: RATTLE's precondition) */
  int mc_valid;
} rattle;

static int stage1_residual(void *ctx, double *r) {
  rattle *R = ctx;
  const lv_model *m = R->m;
  int d = R->d;
  /* r_q = M q1 - c + G(q_n)^T s */
  LV_CHECK(lv_model_mass_apply(m, R->s->q, R->q1, r));
  LV_CHECK(lv_model_GT_apply(m, R->s->q, R->sl, R->tmp));
  for (int i = 0; i < d; i++) r[i] += R->tmp[i] - R->c[i];
  return lv_model_constraints(m, R->q1, r + d);
}

/* Magnitude of the terms of each stage-1 residual component: |M| |q1| +
 * |c| + |G(q_n)^T| |s| for r_q, and |G(q1)| |q1| for g(q1), whose round-off
 * comes from q1 being known only to eps |q1|.  Far from the origin (a
 * 10^4-link chain reaches |q| ~ 10^4) these floors exceed the absolute
 * tolerance 1e-12, and the relative residual test of lv_newton accepts
 * them instead of spending an iteration that gains no digit. */
static int stage1_scale(void *ctx, double *sc) {
  rattle *R = ctx;
  const lv_model *m = R->m;
  int d = R->d;
  LV_CHECK(lv_model_mass_apply_abs(m, R->s->q, R->q1, sc));
  LV_CHECK(lv_model_GT_apply_abs(m, R->s->q, R->sl, R->tmp));
  for (int i = 0; i < d; i++) sc[i] += R->tmp[i] + fabs(R->c[i]);
  return lv_model_G_apply_abs(m, R->q1, R->q1, sc + d);
}

/* [M, G(qT)^T; G(qG), 0] into the solver's assembly: lv_model_saddle's
 * blocks, entries and order, written by block sinks (one add per entry)
 * instead of through the checked wrapper, a view and the solver's sink
 * (three calls per entry); a non-finite entry is named as there
 * (lv_model_matrix_flagged).  The constant M is captured once and replayed
 * in its callback's order. */
static int saddle(rattle *R, const double *qT, const double *qG, lv_linsol *ls) {
  const lv_model *m = R->m;
  int d = R->d, k = R->k;
  lv_assembly *A = lv_linsol_assembly(ls);
  LV_CHECK(lv_spm_mass_matrix_once(m, qT, &R->Mc, &R->mc_valid, 1));
  lv_blk_seq(A, &R->Mc, 0, 0, 1.0, 0, NULL);
  if (k == 0) return 0;
  lv_blk_sink b;
  LV_CHECK(lv_model_matrix_flagged(m, LV_MX_G, 0.0, qT, NULL, NULL, lv_blk(&b, A, 0, d, k, d, 1.0, 1, NULL), &b.bad));
  return lv_model_matrix_flagged(m, LV_MX_G, 0.0, qG, NULL, NULL, lv_blk(&b, A, d, 0, k, d, 1.0, 0, NULL), &b.bad);
}

static int stage1_jacobian(void *ctx, lv_linsol *ls) {
  rattle *R = ctx;
  return saddle(R, R->s->q, R->q1, ls);
}

static int stage1_update(void *ctx, const double *dx) {
  rattle *R = ctx;
  int d = R->d;
  for (int i = 0; i < d; i++) R->q1[i] += dx[i];
  for (int i = 0; i < R->k; i++) R->sl[i] += dx[d + i];
  return 0;
}

static void rattle_destroy(lv_stepper *st) {
  rattle *R = st->priv;
  if (!R) return;
  lv_newton_free(R->nw);
  lv_linsol_free(R->vel);
  lv_spm_free(&R->Mc);
  free(R->saved);
  free(R->q1);
  free(R->sl);
  free(R->c);
  free(R->tmp);
  free(R->b);
  free(R->mu);
  free(R->vprev);
  free(R);
  st->priv = NULL;
}

static int rattle_create(lv_stepper *st) {
  const lv_model *m = st->model;
  const lv_param_info none[] = {{NULL, NULL, NULL}};
  if (lv_kv_check(st->options, none, NULL)) return LV_EUNKNOWN;
  rattle *R = lv_calloc(1, sizeof *R);
  if (!R) return LV_ENOMEM;
  st->priv = R;
  R->m = m;
  R->s = st->state;
  int d = R->d = lv_model_nv(m), k = R->k = lv_model_nc(m), n = d + k;
  R->q1 = lv_calloc((size_t)d, sizeof(double));
  R->sl = lv_calloc((size_t)k, sizeof(double));
  R->c = lv_calloc((size_t)d, sizeof(double));
  R->tmp = lv_calloc((size_t)d, sizeof(double));
  R->b = lv_calloc((size_t)n, sizeof(double));
  R->mu = lv_calloc((size_t)k, sizeof(double));
  R->vprev = lv_calloc((size_t)d, sizeof(double));
  lv_spm_init_grouped(&R->Mc, 0);
  if (!R->q1 || !R->sl || !R->c || !R->tmp || !R->b || (k && !R->mu) || !R->vprev) return LV_ENOMEM;
  LV_CHECK(lv_newton_new(&R->nw, n, st->linsol_kind));
  lv_newton_set_scale(R->nw, stage1_scale);
  *lv_newton_opts(R->nw) = st->newton;
  LV_CHECK(lv_linsol_new(&R->vel, st->linsol_kind, n, st->linsol_threshold));
  st->linsol = lv_newton_linsol(R->nw);
  st->newton_solver = R->nw; /* the integrator invalidates it on a new h */
  return 0;
}

/* lambda at the node from the acceleration-level equations, with the
 * matrix [M G(q)^T; G(q) 0] factorised in R->vel (b: scratch, d + k). */
static int node_multiplier(rattle *R, const double *q, const double *v, double *lambda) {
  const lv_model *m = R->m;
  int d = R->d, k = R->k;
  LV_CHECK(lv_model_grad_potential(m, q, R->b));
  for (int i = 0; i < d; i++) R->b[i] = -R->b[i];
  LV_CHECK(lv_model_curvature_apply(m, q, v, v, R->b + d));
  for (int i = 0; i < k; i++) R->b[d + i] = -R->b[d + i];
  LV_CHECK(lv_linsol_solve(R->vel, R->b));
  if (!lv_all_finite(d + k, R->b)) return LV_ENONFINITE;
  memcpy(lambda, R->b + d, (size_t)k * sizeof(double));
  return 0;
}

static int rattle_init(lv_stepper *st) {
  /* p = M v is set by the integrator; the node multiplier of the initial
   * state is also the first Newton guess. */
  rattle *R = st->priv;
  R->hprev = 0.0;
  if (R->k == 0) return 0;
  LV_CHECK(lv_linsol_begin(R->vel));
  LV_CHECK(saddle(R, st->state->q, st->state->q, R->vel));
  LV_CHECK(lv_linsol_factor(R->vel));
  LV_CHECK(node_multiplier(R, st->state->q, st->state->v, st->state->lambda));
  memcpy(R->mu, st->state->lambda, (size_t)R->k * sizeof(double));
  return 0;
}

static int rattle_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  rattle *R = st->priv;
  const lv_model *m = R->m;
  lv_state *s = st->state;
  int d = R->d, k = R->k;
  R->h = h;
  /* Stage 1 constant part and explicit guess q1 = q + h v. */
  LV_CHECK(lv_model_grad_potential(m, s->q, R->tmp));
  LV_CHECK(lv_model_mass_apply(m, s->q, s->q, R->c));
  for (int i = 0; i < d; i++) R->c[i] += h * s->p[i] - 0.5 * h * h * R->tmp[i];
  /* Predictor q_n + h v_n + h^2/2 a with a = (v_n - v_{n-1}) / h_prev, the
   * acceleration of the last step: O(h^3) off instead of O(h^2), which
   * saves a Newton iteration (the constraints are quadratic in q, so the
   * first correction leaves |change of a link vector|^2 / 2l). */
  double c2 = R->hprev != 0.0 ? 0.5 * h * h / R->hprev : 0.0;
  for (int i = 0; i < d; i++) R->q1[i] = s->q[i] + h * s->v[i] + c2 * (s->v[i] - R->vprev[i]);
  for (int i = 0; i < k; i++) R->sl[i] = 0.5 * h * h * R->mu[i];

  lv_newton_problem pb = {stage1_residual, stage1_jacobian, stage1_update, NULL, R, d + k};
  *lv_newton_opts(R->nw) = st->newton;
  int rc = lv_newton_solve(R->nw, &pb, 1, ns);
  if (!rc) rc = lv_newton_polish(R->nw, &pb, 1, ns);
  if (rc) return rc;

  /* p_half = p - h/2 dV(q) - G(q)^T s / h.  Equal to M (q1 - q) / h at the
   * solution, but without subtracting two nearby positions: far from the
   * origin (a drifting centre of mass at |q| ~ 250) that difference loses
   * digits every step and the momentum maps random-walk by 1e-9 over 10^5
   * steps. */
  double *phalf = R->b;
  LV_CHECK(lv_model_grad_potential(m, s->q, R->tmp));
  for (int i = 0; i < d; i++) phalf[i] = s->p[i] - 0.5 * h * R->tmp[i];
  LV_CHECK(lv_model_GT_apply(m, s->q, R->sl, R->tmp));
  for (int i = 0; i < d; i++) phalf[i] -= R->tmp[i] / h;
  /* Stage 2: [M G^T; G 0] [v1; h/2 mu] = [p_half - h/2 dV(q1); 0]. */
  LV_CHECK(lv_model_grad_potential(m, R->q1, R->tmp));
  for (int i = 0; i < d; i++) R->b[i] = phalf[i] - 0.5 * h * R->tmp[i];
  for (int i = 0; i < k; i++) R->b[d + i] = 0.0;
  LV_CHECK(lv_linsol_begin(R->vel));
  LV_CHECK(saddle(R, R->q1, R->q1, R->vel));
  LV_CHECK(lv_linsol_factor(R->vel));
  ns->factorizations++;
  LV_CHECK(lv_linsol_solve(R->vel, R->b));
  if (!lv_all_finite(d + k, R->b)) return LV_ENONFINITE;

  /* Commit (the node multiplier first: it is the last step that can fail). */
  for (int i = 0; i < k; i++) R->mu[i] = 2.0 * R->b[d + i] / h;
  memcpy(R->tmp, R->b, (size_t)d * sizeof(double)); /* v_{n+1} */
  if (k) LV_CHECK(node_multiplier(R, R->q1, R->tmp, s->lambda));
  memcpy(s->q, R->q1, (size_t)d * sizeof(double));
  memcpy(R->vprev, s->v, (size_t)d * sizeof(double));
  R->hprev = h;
  memcpy(s->v, R->tmp, (size_t)d * sizeof(double));
  LV_CHECK(lv_model_mass_apply(m, s->q, s->v, s->p));
  return 0;
}

/* The predictor's v_{n-1}, h_{n-1} and the multiplier guess are history. */
static int rattle_save(lv_stepper *st) {
  rattle *R = st->priv;
  int d = R->d, k = R->k;
  if (!R->saved && !(R->saved = lv_calloc((size_t)(d + k) + 1, sizeof(double)))) return LV_ENOMEM;
  memcpy(R->saved, R->vprev, (size_t)d * sizeof(double));
  if (k) memcpy(R->saved + d, R->mu, (size_t)k * sizeof(double));
  R->saved_hprev = R->hprev;
  return 0;
}

static void rattle_restore(lv_stepper *st) {
  rattle *R = st->priv;
  int d = R->d, k = R->k;
  if (!R->saved) return;
  memcpy(R->vprev, R->saved, (size_t)d * sizeof(double));
  if (k) memcpy(R->mu, R->saved + d, (size_t)k * sizeof(double));
  R->hprev = R->saved_hprev;
}

/* Checkpoints (issue 17): the same history as save/restore. */
static size_t rattle_history(lv_stepper *st, double *buf, int dir) {
  rattle *R = st->priv;
  lv_hist hs = {buf, 0, dir};
  lv_hist_doubles(&hs, R->vprev, (size_t)R->d);
  lv_hist_doubles(&hs, R->mu, (size_t)R->k);
  lv_hist_doubles(&hs, &R->hprev, 1);
  return hs.n;
}

static const lv_param_info rattle_options[] = {{NULL, NULL, NULL}};

const lv_scheme_type lv_scheme_rattle = {
    "rattle",
    "RATTLE (Andersen 1983): symmetric, symplectic, order 2; constraints on position and velocity level",
    "symplectic; momentum maps of linear symmetries; g(q) = 0 and G(q)M^-1 p = 0 at every node; "
    "energy bounded (no drift)",
    2,
    LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_CONSERVATIVE,
    rattle_options,
    rattle_create,
    rattle_init,
    rattle_step,
    rattle_destroy,
    rattle_save,
    rattle_restore,
    NULL,
    rattle_history,
};
