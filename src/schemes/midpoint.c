/* Implicit midpoint rule for unconstrained systems, the baseline users
 * compare against (Hairer-Lubich-Wanner I.1, VI.4).  Constant mass matrix,
 * linear space.
 *
 *   q_{n+1} = q_n + h v_mid,   M (v_{n+1} - v_n) = h ( -dV(q_mid) + f(t_mid, q_mid, v_mid) ),
 *   q_mid = (q_n + q_{n+1})/2 = q_n + h/4 (v_n + v_{n+1}),  v_mid = (v_n + v_{n+1})/2.
 *
 * Newton in v_{n+1} alone (q_{n+1} is explicit in it).
 *
 * Constrained models are refused (LV_ENOTIMPL).  Projecting the
 * unconstrained step onto g = 0 and G v = 0 was tried and measured: it
 * ignores the constraint force, so the speed loses O(h^2) per step and the
 * pendulum converges with order 0.89.  A second-order projected midpoint
 * needs the index-1 formulation (lambda from the acceleration-level
 * constraint inside every residual); RATTLE is the constrained baseline. */
#include "lv_internal.h"
#include "schemes/spmat.h"

typedef struct {
  const lv_model *m;
  int d;              /* nv of the model */
  lv_state *s;
  double h, t;
  lv_newton *nw;
  double *v1, *qm, *vm, *tmp, *tmp2;
  lv_spm Mc;          /* M, captured at the first Newton matrix (constant: the scheme's precondition) */
  int mc_valid;
} midpoint;

/* q_mid and v_mid of the current iterate. */
static void mid_points(midpoint *P) {
  int d = P->d;
  for (int i = 0; i < d; i++) {
    P->vm[i] = 0.5 * (P->s->v[i] + P->v1[i]);
    P->qm[i] = P->s->q[i] + 0.5 * P->h * P->vm[i];
  }
}

static int mp_residual(void *ctx, double *r) {
  midpoint *P = ctx;
  const lv_model *m = P->m;
  int d = P->d;
  mid_points(P);
  for (int i = 0; i < d; i++) P->tmp[i] = P->v1[i] - P->s->v[i];
  LV_CHECK(lv_model_mass_apply(m, P->s->q, P->tmp, r));
  LV_CHECK(lv_model_grad_potential(m, P->qm, P->tmp));
  LV_CHECK(lv_model_force(m, P->t + 0.5 * P->h, P->qm, P->vm, P->tmp2));
  for (int i = 0; i < d; i++) r[i] += P->h * (P->tmp[i] - P->tmp2[i]);
  return 0;
}

/* d r / d v1 = M + h^2/4 d2V(q_mid) - h (h/4 df/dq + 1/2 df/dv), written
 * into the solver's assembly by block sinks (one add per entry; a
 * non-finite entry named by lv_model_matrix_flagged), M replayed from one
 * capture in its callback's order. */
static int mp_jacobian(void *ctx, lv_linsol *ls) {
  midpoint *P = ctx;
  const lv_model *m = P->m;
  int d = P->d;
  mid_points(P);
  lv_assembly *A = lv_linsol_assembly(ls);
  LV_CHECK(lv_spm_mass_matrix_once(m, P->s->q, &P->Mc, &P->mc_valid, 1));
  lv_blk_seq(A, &P->Mc, 0, 0, 1.0, 0, NULL);
  lv_blk_sink b;
  double hh = 0.25 * P->h * P->h;
  LV_CHECK(lv_model_matrix_flagged(m, LV_MX_D2V, 0.0, P->qm, NULL, NULL, lv_blk(&b, A, 0, 0, d, d, hh, 0, NULL), &b.bad));
  if (lv_model_has_force(m)) {
    double tm = P->t + 0.5 * P->h;
    LV_CHECK(lv_model_matrix_flagged(m, LV_MX_FORCE_DQ, tm, P->qm, P->vm, NULL, lv_blk(&b, A, 0, 0, d, d, -hh, 0, NULL),
                                     &b.bad));
    LV_CHECK(lv_model_matrix_flagged(m, LV_MX_FORCE_DV, tm, P->qm, P->vm, NULL,
                                     lv_blk(&b, A, 0, 0, d, d, -0.5 * P->h, 0, NULL), &b.bad));
  }
  return 0;
}

static int mp_update(void *ctx, const double *dx) {
  midpoint *P = ctx;
  for (int i = 0; i < P->d; i++) P->v1[i] += dx[i];
  return 0;
}

static void mp_destroy(lv_stepper *st) {
  midpoint *P = st->priv;
  if (!P) return;
  lv_newton_free(P->nw);
  lv_spm_free(&P->Mc);
  free(P->v1);
  free(P->qm);
  free(P->vm);
  free(P->tmp);
  free(P->tmp2);
  free(P);
  st->priv = NULL;
}

static const lv_param_info mp_options[] = {{NULL, NULL, NULL}};

static int mp_create(lv_stepper *st) {
  if (lv_kv_check(st->options, mp_options, NULL)) return LV_EUNKNOWN;
  const lv_model *m = st->model;
  int d = lv_model_nv(m);
  midpoint *P = lv_calloc(1, sizeof *P);
  if (!P) return LV_ENOMEM;
  st->priv = P;
  P->m = m;
  P->d = d;
  P->s = st->state;
  P->v1 = lv_calloc((size_t)d, sizeof(double));
  P->qm = lv_calloc((size_t)d, sizeof(double));
  P->vm = lv_calloc((size_t)d, sizeof(double));
  P->tmp = lv_calloc((size_t)d, sizeof(double));
  P->tmp2 = lv_calloc((size_t)d, sizeof(double));
  lv_spm_init_grouped(&P->Mc, 0);
  if (!P->v1 || !P->qm || !P->vm || !P->tmp || !P->tmp2) return LV_ENOMEM;
  LV_CHECK(lv_newton_new(&P->nw, d, st->linsol_kind));
  st->linsol = lv_newton_linsol(P->nw);
  st->newton_solver = P->nw; /* the integrator invalidates it on a new h */
  return 0;
}

static int mp_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  midpoint *P = st->priv;
  const lv_model *m = P->m;
  lv_state *s = st->state;
  int d = P->d;
  P->h = h;
  P->t = s->t;
  memcpy(P->v1, s->v, (size_t)d * sizeof(double));
  *lv_newton_opts(P->nw) = st->newton;
  lv_newton_problem pb = {mp_residual, mp_jacobian, mp_update, NULL, P, d};
  int rc = lv_newton_solve(P->nw, &pb, 1, ns);
  if (!rc) rc = lv_newton_polish(P->nw, &pb, 1, ns);
  if (rc) return rc;
  for (int i = 0; i < d; i++) s->q[i] += 0.5 * h * (s->v[i] + P->v1[i]);
  memcpy(s->v, P->v1, (size_t)d * sizeof(double));
  return lv_model_mass_apply(m, s->q, s->v, s->p);
}

const lv_scheme_type lv_scheme_midpoint = {
    "midpoint",
    "implicit midpoint rule, order 2, for unconstrained models (constrained ones: use rattle)",
    "symplectic; quadratic invariants (e.g. angular momentum of a central force) exact; energy bounded",
    2,
    LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_CONSERVATIVE | LV_SCHEME_UNCONSTRAINED,
    mp_options,
    mp_create,
    NULL,
    mp_step,
    mp_destroy,
    NULL,
    NULL,
    NULL,
    NULL, /* history: none besides the state (checkpoints, issue 17) */
};
