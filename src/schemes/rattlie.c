/* RATTLie (Hante & Arnold, "RATTLie: a variational Lie group integration
 * scheme for constrained mechanical systems", J. Comput. Appl. Math. 2021;
 * the public Fortran suite's RATTLie module): RATTLE on a Lie group
 * (products of R^k, SO(3), S^3, R^3 x SO(3), SE(3)), symplectic and second
 * order, with the left-trivialised momentum p = M v.  Constant mass matrix;
 * conservative models (the model's force must be the inertial term of the
 * group, see below).
 *
 * The discrete Lagrangian of one step, with v_h = v_{n+1/2} and
 * q_{n+1} = q_n o exp(h v_h~),
 *   L_d = h v_h^T M v_h / 2 - h/2 (V(q_n) + V(q_{n+1})),
 * and the multipliers of g at both ends give (left-trivialised discrete
 * Legendre transforms; T(w) = dexp_{-w} as in lv_space.h):
 *
 *   T(-h v_h)^{-T} M v_h = p_n - h/2 dV(q_n) - h/2 G(q_n)^T lambda_n,   (1)
 *   g(q_{n+1}) = 0,                                                     (2)
 *   p_{n+1} = T(h v_h)^{-T} M v_h - h/2 dV(q_{n+1}) - h/2 G(q_{n+1})^T gamma_{n+1},  (3)
 *   G(q_{n+1}) M^{-1} p_{n+1} = 0.                                      (4)
 *
 * On R^k, T = I and (1)-(4) are RATTLE (rattle.c).  The Coriolis/gyroscopic
 * term of the Euler-Poincare equations M v' = ad_v^T M v - dV - G^T lambda
 * is not evaluated: it comes out of T^{-T} (its first-order term is
 * h/2 ad^T).  This is why the model's applied force f(t, q, v) must be
 * exactly that inertial term (ad_v^T M v; the heavy top and rigid-chain
 * models write it there for the other schemes): create() compares them at
 * two velocities and refuses any other force, which the discrete equations
 * would otherwise drop (LV_ENOTIMPL, with the deviation in the detail).
 *
 * The transposes: for every factor, ad_w^T = -P ad_w P with P = I except on
 * SE(3), where P swaps the translational and rotational triples; hence
 * T(w)^T = P T(-w) P and T(-h v_h)^{-T} = P T(h v_h)^{-1} P, so only the
 * space's T^{-1} and its derivative are needed.
 *
 * Stage 1, (1)-(2), is solved by Newton in (v_h, s = h/2 lambda_n):
 *   r_v = P T(h v_h)^{-1} P M v_h - p_n + h/2 dV(q_n) + G(q_n)^T s   (momentum),
 *   r_c = g(q_n o exp(h v_h~)) / h                                   (velocity),
 *   J = [P (T^{-1} P M + h D_u(T(u)^{-1} P M v_h)),  G(q_n)^T;
 *        G(q_{n+1}) T(h v_h),                         0       ],
 * an O(1) matrix for every h; the convergence test gives r_c the unit 1/h,
 * so it always reads |g(q_{n+1})| <= res_tol.  Stage 2, (3)-(4), is one
 * linear saddle-point solve [M G^T; G 0] [v_{n+1}; h/2 gamma] = [rhs; 0] at
 * q_{n+1}.
 *
 * Multipliers: lambda_n and gamma_{n+1} are first-order approximations of
 * lambda(t_n), lambda(t_{n+1}).  By default (multipliers=node) the state's
 * lambda is the multiplier of the index-1 equations at the new node,
 * second order like q and v, from the stage-2 factorisation (the same
 * matrix); multipliers=rattle puts the scheme's own lambda_n there instead
 * (it belongs to t_n = t - h).  gamma always holds gamma_{n+1}.
 *
 * Cost per step: the Newton iterations of stage 1 (one (nv + m) saddle-type
 * factorisation each, full Newton), one factorisation of [M G^T; G 0] and
 * two solves with it. */
#include "lv_internal.h"
#include "model/saddle.h"
#include "schemes/history.h"
#include "schemes/spmat.h"

typedef struct {
  const lv_model *m;
  int nq, d, k;       /* nq, nv and nc of the model */
  const lv_space *sp;
  lv_state *s;
  double h;
  int rattle_mult;    /* multipliers=rattle */
  lv_newton *nw;
  lv_saddle *vel;     /* stage 2 and node values: [M G^T; G 0] */
  /* Per tangent index k: start and size of the block of T that holds row k
   * (its factor; size 1 for R^k, where T = I), and the permutation P. */
  int *fo, *fn, *perm;
  int nonlin;         /* some factor is not R^k */
  double *Ti, *Tb;    /* rows of the blocks of T(h v_h)^{-1} and T(h v_h), 6 per index */
  double *vh;         /* stage-1 iterate v_{n+1/2} */
  double *sl;         /* s = h/2 lambda_n */
  double *q1;         /* q_n o exp(h v_h~) at the iterate */
  double *dvn;        /* dV(q_n) */
  double *tmp, *tmp2, *x, *b;
  double *acc;        /* v' at the node (predictor) */
  double *rhs, *gam, *v1, *p1; /* stage 2: right-hand side (nv + m), gamma_{n+1}, v_{n+1}, M v_{n+1} */
  double *saved;      /* acc at the last save */
} rattlie;

/* y = P x (y may not alias x). */
static void perm_apply(const rattlie *R, const double *x, double *y) {
  for (int i = 0; i < R->d; i++) y[i] = x[R->perm[i]];
}

/* Rows of the blocks of T(u) (inv = 0) or T(u)^{-1} (inv = 1) into out
 * (6 per index: out[6 k + c] = T_{k, fo[k] + c}), by applying the operator
 * to the sum of the c-th unit vectors of all Lie group factors at once
 * (the operator is block diagonal): six products whatever the size. */
static int tangent_blocks(rattlie *R, const double *u, int inv, double *out) {
  int d = R->d;
  for (int k = 0; k < d; k++) {
    for (int c = 0; c < 6; c++) out[6 * k + c] = 0.0;
    if (R->fn[k] == 1) out[6 * k] = 1.0;
  }
  if (!R->nonlin) return 0;
  for (int c = 0; c < 6; c++) {
    int any = 0;
    for (int k = 0; k < d; k++) {
      int on = R->fn[k] > 1 && k - R->fo[k] == c;
      R->x[k] = on ? 1.0 : 0.0;
      any |= on;
    }
    if (!any) break;
    if (inv)
      LV_CHECK(lv_space_tangent_inv_apply(R->sp, u, R->x, R->tmp2));
    else
      LV_CHECK(lv_space_tangent_apply(R->sp, u, R->x, R->tmp2));
    for (int k = 0; k < d; k++)
      if (R->fn[k] > 1 && c < R->fn[k]) out[6 * k + c] = R->tmp2[k];
  }
  return 0;
}

/* r_v = P T(h v_h)^{-1} P M v_h  (into y; uses x, tmp2). */
static int momentum_term(rattlie *R, const double *u, const double *vh, double *y) {
  LV_CHECK(lv_model_mass_apply(R->m, R->s->q, vh, R->tmp2));
  perm_apply(R, R->tmp2, R->x);
  LV_CHECK(lv_space_tangent_inv_apply(R->sp, u, R->x, R->tmp2));
  perm_apply(R, R->tmp2, y);
  return 0;
}

static void scaled(int n, double a, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i];
}

static int stage1_residual(void *ctx, double *r) {
  rattlie *R = ctx;
  const lv_model *m = R->m;
  int d = R->d;
  double h = R->h;
  scaled(d, h, R->vh, R->b);
  LV_CHECK(momentum_term(R, R->b, R->vh, r));
  LV_CHECK(lv_model_GT_apply(m, R->s->q, R->sl, R->tmp));
  for (int i = 0; i < d; i++) r[i] += R->tmp[i] - R->s->p[i] + 0.5 * h * R->dvn[i];
  LV_CHECK(lv_space_compose_exp(R->sp, R->s->q, h, R->vh, R->q1));
  LV_CHECK(lv_model_constraints(m, R->q1, r + d));
  for (int i = 0; i < R->k; i++) r[d + i] /= h;
  return 0;
}

/* Round-off scale of the rows: |M| |v_h| (T^{-1} is O(1)) + |p_n| +
 * h/2 |dV| + |G^T| |s| for r_v; |G(q_{n+1})| |q_{n+1}|_max / h for r_c
 * (a constraint value sums terms of the size of the coordinates). */
static int stage1_scale(void *ctx, double *sc) {
  rattlie *R = ctx;
  const lv_model *m = R->m;
  int d = R->d, k = R->k;
  LV_CHECK(lv_model_mass_apply_abs(m, R->s->q, R->vh, sc));
  LV_CHECK(lv_model_GT_apply_abs(m, R->s->q, R->sl, R->tmp));
  for (int i = 0; i < d; i++) sc[i] += R->tmp[i] + fabs(R->s->p[i]) + 0.5 * R->h * fabs(R->dvn[i]);
  if (!k) return 0;
  double qm = 1.0;
  for (int i = 0; i < R->nq; i++) qm = fmax(qm, fabs(R->q1[i]));
  for (int i = 0; i < d; i++) R->tmp[i] = qm;
  LV_CHECK(lv_model_G_apply_abs(m, R->q1, R->tmp, sc + d));
  for (int i = 0; i < k; i++) sc[d + i] /= R->h;
  return 0;
}

/* Momentum rows in momentum, constraint rows in length / h. */
static int stage1_units(void *ctx, double *u) {
  rattlie *R = ctx;
  int d = R->d;
  for (int i = 0; i < d; i++) u[i] = 1.0;
  for (int i = 0; i < R->k; i++) u[d + i] = 1.0 / R->h;
  return 0;
}

/* Sinks that multiply what a model or space callback writes by a block of
 * T or T^{-1} and permute rows, before passing it on. */
typedef struct {
  lv_sink base;
  lv_sink *parent;
  rattlie *R;
  const double *blk;
  double scale;
  int row0;
} blk_sink;

/* Entry (k, j) of M: adds P_i T^{-1}_{i, P k} M_kj to row P i, column j,
 * for i in the block of P k (the block of k). */
static int left_mass_add(lv_sink *s, int k, int j, double a) {
  blk_sink *b = (blk_sink *)s;
  const rattlie *R = b->R;
  int pk = R->perm[k], o = R->fo[pk];
  for (int c = 0; c < R->fn[pk]; c++) {
    int i = o + c;
    LV_CHECK(lv_sink_add(b->parent, R->perm[i], j, b->blk[6 * i + (pk - o)] * a));
  }
  return 0;
}

/* Entry (i, j) of D: to row P i, scaled. */
static int perm_rows_add(lv_sink *s, int i, int j, double a) {
  blk_sink *b = (blk_sink *)s;
  return lv_sink_add(b->parent, b->R->perm[i], j, b->scale * a);
}

/* Entry (r, k) of G: adds G_rk T_{k, j} to (row0 + r, j) for j in the block of k. */
static int right_tangent_add(lv_sink *s, int r, int k, double a) {
  blk_sink *b = (blk_sink *)s;
  const rattlie *R = b->R;
  for (int c = 0; c < R->fn[k]; c++)
    LV_CHECK(lv_sink_add(b->parent, b->row0 + r, R->fo[k] + c, b->blk[6 * k + c] * a));
  return 0;
}

static blk_sink make_sink(int (*add)(lv_sink *, int, int, double), lv_sink *parent, rattlie *R,
                          const double *blk, double scale, int row0, int nr, int nc) {
  blk_sink b;
  memset(&b, 0, sizeof b);
  b.base.add = add;
  b.base.nrows = nr;
  b.base.ncols = nc;
  b.base.scale = 1.0;
  b.parent = parent;
  b.R = R;
  b.blk = blk;
  b.scale = scale;
  b.row0 = row0;
  return b;
}

static int stage1_jacobian(void *ctx, lv_linsol *ls) {
  rattlie *R = ctx;
  const lv_model *m = R->m;
  int d = R->d, k = R->k;
  double h = R->h;
  /* the blocks' sinks pass their entries to a block sink over the whole
   * matrix, which adds them to the solver's assembly (a non-finite product
   * fails the factorisation, as lv_linsol_add's status did the assembly) */
  lv_assembly *As = lv_linsol_assembly(ls);
  lv_blk_sink whole, gb;
  lv_sink *A = lv_blk(&whole, As, 0, 0, d + k, d + k, 1.0, 0, NULL);
  scaled(d, h, R->vh, R->b);
  /* P T^{-1} P M */
  LV_CHECK(tangent_blocks(R, R->b, 1, R->Ti));
  blk_sink s1 = make_sink(left_mass_add, A, R, R->Ti, 1.0, 0, d, d);
  LV_CHECK(lv_model_mass(m, R->s->q, &s1.base));
  /* h P D_u(T(u)^{-1} x), x = P M v_h */
  if (R->nonlin) {
    LV_CHECK(lv_model_mass_apply(m, R->s->q, R->vh, R->tmp));
    perm_apply(R, R->tmp, R->x);
    blk_sink s2 = make_sink(perm_rows_add, A, R, NULL, h, 0, d, d);
    LV_CHECK(lv_space_tangent_inv_deriv(R->sp, R->b, R->x, R->tmp2, &s2.base));
  }
  if (!k) return 0;
  LV_CHECK(lv_model_matrix_flagged(m, LV_MX_G, 0.0, R->s->q, NULL, NULL, lv_blk(&gb, As, 0, d, k, d, 1.0, 1, NULL), &gb.bad));
  /* G(q_{n+1}) T(h v_h) */
  LV_CHECK(lv_space_compose_exp(R->sp, R->s->q, h, R->vh, R->q1));
  LV_CHECK(tangent_blocks(R, R->b, 0, R->Tb));
  blk_sink s3 = make_sink(right_tangent_add, A, R, R->Tb, 1.0, d, k, d);
  return lv_model_constraint_jac(m, R->q1, &s3.base);
}

static int stage1_update(void *ctx, const double *dx) {
  rattlie *R = ctx;
  int d = R->d;
  for (int i = 0; i < d; i++) R->vh[i] += dx[i];
  for (int i = 0; i < R->k; i++) R->sl[i] += dx[d + i];
  return 0;
}

static void rattlie_destroy(lv_stepper *st) {
  rattlie *R = st->priv;
  if (!R) return;
  lv_newton_free(R->nw);
  lv_saddle_free(R->vel);
  free(R->fo);
  free(R->fn);
  free(R->perm);
  free(R->Ti);
  free(R->Tb);
  free(R->vh);
  free(R->sl);
  free(R->q1);
  free(R->dvn);
  free(R->tmp);
  free(R->tmp2);
  free(R->x);
  free(R->b);
  free(R->acc);
  free(R->rhs);
  free(R->gam);
  free(R->v1);
  free(R->p1);
  free(R->saved);
  free(R);
  st->priv = NULL;
}

static const lv_param_info rattlie_options[] = {
    {"multipliers", "node",
     "node (lambda: index-1 multiplier at t_{n+1}, order 2) or rattle (lambda: the scheme's own lambda_n, "
     "which belongs to t_n = t - h); gamma holds gamma_{n+1} in both"},
    {NULL, NULL, NULL},
};

/* The discrete equations carry the inertial term ad_v^T M v themselves; a
 * model force that differs from it (an applied force, or a missing
 * gyroscopic term) would be dropped silently.  Compared at q0 with v0 and
 * a fixed generic velocity, at the initial (t, q) (create runs after the
 * integrator has made them consistent).  inertial = -P ad_v (P M v).
 * The generic velocity is tried at two later times too, so an applied
 * load that vanishes at t0 (a ramp or a sine starting there, issue 15's
 * multibody loads) is not taken for the inertial term. */
static int check_force(lv_stepper *st, rattlie *R) {
  const lv_model *m = R->m;
  int d = R->d;
  const double *q0 = st->state->q, *v0 = st->state->v, t0 = st->state->t;
  double worst = 0.0;
  int worst_i = -1;
  for (int trial = 0; trial < 4; trial++) {
    double *v = R->vh, tt = t0 + (trial == 2 ? 0.7316 : trial == 3 ? 97.31 : 0.0);
    for (int i = 0; i < d; i++) v[i] = trial == 0 ? v0[i] : 0.3 + 0.7 * sin(1.7 * i + 0.4);
    LV_CHECK(lv_model_mass_apply(m, q0, v, R->tmp));
    perm_apply(R, R->tmp, R->x);
    LV_CHECK(lv_space_ad(R->sp, v, R->x, R->tmp2));
    perm_apply(R, R->tmp2, R->tmp); /* -inertial */
    if (lv_model_has_force(m))
      LV_CHECK(lv_model_force(m, tt, q0, v, R->b));
    else
      memset(R->b, 0, (size_t)d * sizeof(double));
    double sc = 0.0;
    for (int i = 0; i < d; i++) sc = fmax(sc, fmax(fabs(R->b[i]), fabs(R->tmp[i])));
    for (int i = 0; i < d; i++) {
      double e = fabs(R->b[i] + R->tmp[i]) / (sc + 1e-300);
      if (e > worst) worst = e, worst_i = i;
    }
  }
  if (worst > 1e-10) {
    snprintf(st->detail, sizeof st->detail,
             "rattlie: the model's force is not the inertial term ad_v^T M v of its space (relative deviation %.3g "
             "in component %d at the initial configuration): conservative models only",
             worst, worst_i + 1);
    return LV_ENOTIMPL;
  }
  return 0;
}

static int rattlie_create(lv_stepper *st) {
  const lv_model *m = st->model;
  LV_CHECK(lv_kv_check(st->options, rattlie_options, NULL));
  rattlie *R = lv_calloc(1, sizeof *R);
  if (!R) return LV_ENOMEM;
  st->priv = R;
  R->m = m;
  R->sp = lv_model_space(m);
  R->s = st->state;
  static const char *const multipliers[] = {"node", "rattle", NULL};
  LV_CHECK(lv_opt_choice(st, "rattlie", "multipliers", multipliers, 0, &R->rattle_mult));
  int d = R->d = lv_model_nv(m), k = R->k = lv_model_nc(m), n = d + k;
  R->nq = lv_model_nq(m);
  R->fo = lv_calloc((size_t)d, sizeof(int));
  R->fn = lv_calloc((size_t)d, sizeof(int));
  R->perm = lv_calloc((size_t)d, sizeof(int));
  R->Ti = lv_calloc((size_t)d * 6, sizeof(double));
  R->Tb = lv_calloc((size_t)d * 6, sizeof(double));
  R->vh = lv_calloc((size_t)d, sizeof(double));
  R->sl = lv_calloc((size_t)k, sizeof(double));
  R->q1 = lv_calloc((size_t)R->nq, sizeof(double));
  R->dvn = lv_calloc((size_t)d, sizeof(double));
  R->tmp = lv_calloc((size_t)d, sizeof(double));
  R->tmp2 = lv_calloc((size_t)d, sizeof(double));
  R->x = lv_calloc((size_t)d, sizeof(double));
  R->b = lv_calloc((size_t)n, sizeof(double));
  R->acc = lv_calloc((size_t)d, sizeof(double));
  R->rhs = lv_calloc((size_t)n, sizeof(double));
  R->gam = lv_calloc((size_t)k, sizeof(double));
  R->v1 = lv_calloc((size_t)d, sizeof(double));
  R->p1 = lv_calloc((size_t)d, sizeof(double));
  if (!R->fo || !R->fn || !R->perm || !R->Ti || !R->Tb || !R->vh || !R->sl || !R->q1 || !R->dvn || !R->tmp ||
      !R->tmp2 || !R->x || !R->b || !R->acc ||
      !R->rhs || !R->gam || !R->v1 || !R->p1)
    return LV_ENOMEM;
  for (int f = 0; f < lv_space_nfactors(R->sp); f++) {
    lv_factor_kind kind;
    int qo, nq, vo, nv;
    LV_CHECK(lv_space_factor(R->sp, f, &kind, &qo, &nq, &vo, &nv));
    for (int c = 0; c < nv; c++) {
      int i = vo + c;
      R->fo[i] = kind == LV_FACTOR_RN ? i : vo;
      R->fn[i] = kind == LV_FACTOR_RN ? 1 : nv;
      R->perm[i] = kind == LV_FACTOR_SE3 ? vo + (c + 3) % 6 : i;
      if (nv > 6 && kind != LV_FACTOR_RN) return LV_EINPUT;
    }
    if (kind != LV_FACTOR_RN) R->nonlin = 1;
  }
  LV_CHECK(check_force(st, R));
  LV_CHECK(lv_newton_new(&R->nw, n, st->linsol_kind));
  lv_newton_set_scale(R->nw, stage1_scale);
  lv_newton_set_units(R->nw, stage1_units);
  *lv_newton_opts(R->nw) = st->newton;
  LV_CHECK(lv_saddle_new(&R->vel, m, st->linsol_kind, st->linsol_threshold));
  st->linsol = lv_newton_linsol(R->nw);
  return 0;
}

/* v' and lambda at (t, q, v) from the index-1 equations, with [M G^T; G 0]
 * at q factorised in R->vel: acc and lambda (NULL: not stored), neither
 * written unless both are finite. */
static int node_values(rattlie *R, double t, const double *q, const double *v, double *lambda) {
  int d = R->d, k = R->k;
  LV_CHECK(lv_saddle_accelerations_factored(R->vel, t, q, v, R->b, R->b + d));
  if (!lv_all_finite(d + k, R->b)) return LV_ENONFINITE;
  memcpy(R->acc, R->b, (size_t)d * sizeof(double));
  if (lambda && k) memcpy(lambda, R->b + d, (size_t)k * sizeof(double));
  return 0;
}

static int rattlie_init(lv_stepper *st) {
  rattlie *R = st->priv;
  lv_state *s = st->state;
  LV_CHECK(lv_saddle_factor(R->vel, s->q));
  LV_CHECK(node_values(R, s->t, s->q, s->v, s->lambda));
  if (R->k) memcpy(s->gamma, s->lambda, (size_t)R->k * sizeof(double));
  return 0;
}

static int rattlie_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  rattlie *R = st->priv;
  const lv_model *m = R->m;
  lv_state *s = st->state;
  int d = R->d, k = R->k;
  R->h = h;
  LV_CHECK(lv_model_grad_potential(m, s->q, R->dvn));
  /* Predictor: v_h = v_n + h/2 v'_n, lambda_n = the multiplier at the node
   * (both O(h^2) off). */
  for (int i = 0; i < d; i++) R->vh[i] = s->v[i] + 0.5 * h * R->acc[i];
  double lam_scale = 0.5 * h;
  for (int i = 0; i < k; i++) R->sl[i] = lam_scale * (R->rattle_mult ? s->gamma[i] : s->lambda[i]);

  lv_newton_problem pb = {stage1_residual, stage1_jacobian, stage1_update, NULL, R, d + k};
  *lv_newton_opts(R->nw) = st->newton;
  int rc = lv_newton_solve(R->nw, &pb, 1, ns);
  if (!rc) rc = lv_newton_polish(R->nw, &pb, 1, ns);
  if (rc) return rc;

  /* Stage 2 at q_{n+1}: [M G^T; G 0] [v1; h/2 gamma] = [T(h v_h)^{-T} M v_h - h/2 dV(q_{n+1}); 0],
   * T(h v_h)^{-T} = P T(-h v_h)^{-1} P. */
  double *rhs = R->rhs;
  LV_CHECK(lv_space_compose_exp(R->sp, s->q, h, R->vh, R->q1));
  for (int i = 0; i < d; i++) R->b[i] = -h * R->vh[i];
  LV_CHECK(momentum_term(R, R->b, R->vh, rhs));
  LV_CHECK(lv_model_grad_potential(m, R->q1, R->tmp));
  for (int i = 0; i < d; i++) rhs[i] -= 0.5 * h * R->tmp[i];
  for (int i = 0; i < k; i++) rhs[d + i] = 0.0;
  LV_CHECK(lv_saddle_factor(R->vel, R->q1));
  ns->factorizations++;
  LV_CHECK(lv_saddle_solve(R->vel, rhs));
  if (!lv_all_finite(d + k, rhs)) return LV_ENONFINITE;
  for (int i = 0; i < k; i++) R->gam[i] = 2.0 * rhs[d + i] / h;
  memcpy(R->v1, rhs, (size_t)d * sizeof(double));
  LV_CHECK(lv_model_mass_apply(m, R->q1, R->v1, R->p1));
  /* Node values (the last evaluation that can fail: acc is only a
   * predictor, so its being overwritten by a failed step is harmless),
   * then commit. */
  LV_CHECK(node_values(R, s->t + h, R->q1, R->v1, rhs + d));
  memcpy(s->q, R->q1, (size_t)R->nq * sizeof(double));
  memcpy(s->v, R->v1, (size_t)d * sizeof(double));
  memcpy(s->p, R->p1, (size_t)d * sizeof(double));
  for (int i = 0; i < k; i++) {
    s->lambda[i] = R->rattle_mult ? 2.0 * R->sl[i] / h : rhs[d + i];
    s->gamma[i] = R->gam[i];
  }
  return 0;
}

/* The predictor's acceleration is the only private history. */
static int rattlie_save(lv_stepper *st) {
  rattlie *R = st->priv;
  int d = R->d;
  if (!R->saved && !(R->saved = lv_calloc((size_t)d, sizeof(double)))) return LV_ENOMEM;
  memcpy(R->saved, R->acc, (size_t)d * sizeof(double));
  return 0;
}

static void rattlie_restore(lv_stepper *st) {
  rattlie *R = st->priv;
  if (R->saved) memcpy(R->acc, R->saved, (size_t)R->d * sizeof(double));
}

/* Checkpoints (issue 17): the predictor's acceleration, as save. */
static size_t rattlie_history(lv_stepper *st, double *buf, int dir) {
  rattlie *R = st->priv;
  lv_hist hs = {buf, 0, dir};
  lv_hist_doubles(&hs, R->acc, (size_t)R->d);
  return hs.n;
}

/* A modified-Newton factorisation belongs to one step size. */
static void rattlie_new_h(lv_stepper *st, double h) {
  (void)h;
  rattlie *R = st->priv;
  if (R && R->nw) lv_newton_invalidate(R->nw);
}

const lv_scheme_type lv_scheme_rattlie = {
    "rattlie",
    "RATTLie (Hante & Arnold 2021): RATTLE on Lie groups (R^3xSO(3), SE(3), products), symmetric, symplectic, order 2",
    "symplectic; momentum maps of symmetries; g(q) = 0 and G(q) v = 0 at every node; energy bounded (no drift)",
    2,
    LV_SCHEME_HAS_GAMMA | LV_SCHEME_CONSTANT_MASS,
    rattlie_options,
    rattlie_create,
    rattlie_init,
    rattlie_step,
    rattlie_destroy,
    rattlie_save,
    rattlie_restore,
    rattlie_new_h,
    rattlie_history,
};
