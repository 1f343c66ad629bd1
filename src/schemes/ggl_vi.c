/* GGL variational integrators (seed 003 §4; spec/003_ggl_vi.md §2.1-2.3, §4):
 * discrete Euler-Lagrange equations of discrete GGL action sums, for a
 * constant mass matrix M on R^d with L = 1/2 v.Mv - V(q).
 *
 *   vi-a  one-stage theta VI, Option A (eq. (79)): both constraint levels at
 *         q^{n+theta} = (1-theta) q^n + theta q^{n+1}, theta in (0,1), default 1/2.
 *   vi-b  one-stage theta VI, Option B (eq. (82)): g(q^{n+1}) = 0 and
 *         G(q^{n+theta}) v^{n+1} = 0, theta in [0,1], vartheta in (0,1),
 *         default (1, 1/2).
 *   vi-s  first-order VI (eq. (55)), the GGL analogue of symplectic Euler.
 *
 * One theta-family residual serves vi-a and vi-b; they differ only in the
 * discrete constraint g_d and its derivatives D_1 g_d, D_2 g_d (eqs. (77),
 * (80)), which enter through a handful of terms below.  vi-s has its own
 * residual but the same helpers, scaling and solve.
 *
 * ---- Reduction of the theta family (3d+2m -> d+2m unknowns) ----
 * (76a) gives v^{n+1} explicitly from q^{n+1} and gamma, (76b) gives p^{n+1}
 * explicitly from (q^{n+1}, v^{n+1}, lambda, gamma), so only (76c), (76d),
 * (76e) remain, in the unknowns
 *     x = ( dq = q^{n+1} - q^n,  a = h^2 lambda^n,  b = h gamma^n ).
 * With u = h v^{n+1} = dq - M^-1 G(qt)^T b and
 *     h p^{n+1} = h p^n - h^2 dV(qt) - Gl^T a - H(qt; b) u,
 *     Gl = G(qt) (A),  (1-vartheta) G(q^n) + vartheta G(q^{n+1}) (B),
 * the residual is
 *     F1 = D^-1 [ M u - theta h p^n - (1-theta) h p^{n+1} + Gc^T a ]      (h x (76c))
 *     Fg = g(qt) (A),  g(q^{n+1}) (B)                                    ((79d), (82d))
 *     Fv = G(qt) u                                                       (h x (76e))
 * with Gc = 0 (A), theta (1-vartheta) G(q^n) - (1-theta) vartheta G(q^{n+1}) (B)
 * and D = diag(M).  Why these unknowns and rows: lambda moves q^{n+1} at
 * O(h^2) and gamma at O(h), so a and b are the position-level displacements
 * they cause, and every block of the Newton matrix is O(1) as h -> 0 (its
 * limit [[M, c G^T, -G^T], [G, 0, 0], [G, 0, -G M^-1 G^T]] is nonsingular
 * whenever c = (1-theta) (A) or (1-vartheta) (B) is non-zero -- which is why
 * theta = 1 for A and vartheta = 1 for B are rejected: lambda then drops out
 * of the equations entirely).  Solving for the increment dq rather than
 * q^{n+1} keeps v^{n+1} = u / h free of the cancellation q^{n+1} - q^n,
 * which matters at the small steps of convergence studies.  The rows are in
 * position units (D^-1 scales the momentum balance), so the max-norm
 * residual test means the same for the metre-sized centre of mass of the
 * top and for its directors with "masses" 2.65e-4.
 * For Option B, g(q^{n+1}) = 0 is imposed as printed in (82d) rather than
 * as (1-vartheta) g(q^n) + vartheta g(q^{n+1}) = 0: the two agree for
 * consistent data, and the printed form cannot amplify round-off in g by
 * (1-vartheta)/vartheta per step.
 *
 * ---- Reduction of VI-S (3d+2m -> d+2m) ----
 * (55b)+(55c) give M v^n = p^n - h dV(q^n) - h G(q^n)^T lambda^n, so
 * v^n, qbar = q^n + h v^n and q^{n+1} = qbar + h M^-1 G(qbar)^T gamma^{n+1}
 * are explicit; the unknowns are x = (P = h p^{n+1}, a = h^2 lambda^n,
 * b = h gamma^{n+1}) and the residual
 *     F1 = D^-1 [ h M v^n - P - H(qbar; b) M^-1 P ]    (h x (55c))
 *     Fg = g(q^{n+1})                                 ((55d))
 *     Fv = G(qbar) M^-1 P                             (h x (55e))
 *
 * ---- Newton matrix ----
 * Analytic, from the model's M, d2V, G, constraint Hessian H(q; w) and
 * curvature Z(q; w) (the model layer supplies finite differences for any
 * it lacks).  Terms with third derivatives of g (D_q of H(q; b) u) are left
 * out: they vanish for the quadratic constraints of every built-in model,
 * and otherwise they are O(h^2) relative perturbations that only slow the
 * Newton contraction slightly, never change the solution.
 * Unlike RATTLE's, these discrete equations themselves contain the
 * constraint Hessian (the sum_k gamma_k D^2 g_k terms of (55b), (76b)): a
 * model that leaves it to finite differences gets a residual accurate only
 * to that approximation, and the momentum maps then hold to ~1e-13 per
 * step instead of round-off (measured on a skewed pendulum).
 * One assembly whatever the linear solver: every factor (G, H, Z, M) is
 * captured from its model callback into a fixed-pattern sparse matrix
 * (d2V and H(q; a), which enter one term each, are written into the
 * assembly as their callbacks add them: lv_blk_rows),
 * M^-1 is formed once block by block over the components of M's pattern
 * (diagonal for particles; a dense M^-1 when a component exceeds
 * LV_MASS_MAX_BLOCK, mass_op.h), the products Hb M^-1 Hb, Hb M^-1 G^T,
 * G M^-1 Hb, G M^-1 G^T get their pattern once and then only their values
 * (schemes/spmat.h), and each term is written once into the solver's
 * assembly (linsol/assembly.h), which sums the terms of a position in the
 * order they come and lands them in a dense array or a fixed CSC pattern
 * as the back-end chose: O(nnz) per iteration and memory, one pattern, one
 * symbolic analysis per run (chain: 54N entries, LU fill 100N at every N).
 * Dense and sparse back-ends thus factorise the same matrix, bit for bit
 * (tests/check_chain.c compares their trajectories).
 *
 * After Newton has converged, corrections with the last factorisation are
 * applied (one after a full Newton solve, as metis does; several after a
 * modified one): the discrete equations, and with them the momentum maps,
 * then hold to round-off rather than to the residual tolerance, which
 * matters over 10^5 steps.  They count as residual evaluations, not as
 * Newton iterations.
 *
 * ---- Stability of the theta family away from 1/2 ----
 * The paper allows theta in (0,1) for A and vartheta in (0,1] for B, but
 * the multipliers of consecutive steps share the nodes: for B the node
 * q^{n+1} receives vartheta lambda^n + (1-vartheta) lambda^{n+1}, which the
 * constraints pin to the physical force, so lambda has the parasitic root
 * -vartheta/(1-vartheta); for A the root is -theta/(1-theta), and the
 * nodes themselves drift off g = 0 with the root -(1-theta)/theta.  All
 * are neutral (period-2 oscillations, as in the paper's Figs. 4/5) at 1/2
 * and grow beyond, so only VI-A with theta = 1/2 and VI-B with
 * vartheta <= 1/2 are usable; the others are accepted (they are the
 * paper's schemes) but blow up within tens of steps (tests/check_vi.c).
 *
 * ---- What the state holds after a step t^n -> t^{n+1} ----
 * vi-a, vi-b: q^{n+1}, v^{n+1}, p^{n+1}; lambda = lambda^n and gamma =
 *   gamma^n, the multipliers of the interval [t^n, t^{n+1}] (they act at
 *   q^{n+theta}; for B lambda also at the nodes q^n, q^{n+1}).
 * vi-s: q^{n+1}, p^{n+1}; v = v^n, the velocity *at t^n* solved in this
 *   step, lambda = lambda^n (it multiplies G(q^n)), gamma = gamma^{n+1}
 *   (it acts at qbar).  This is the index shift of eq. (55): v and lambda
 *   lag one step behind q and p.  Diagnostics of G(q) v therefore mix time
 *   levels for vi-s; use G(q) M^-1 p.
 */
#include "lv_internal.h"
#include "schemes/mass_op.h"

typedef enum { VI_S = 0, VI_A = 1, VI_B = 2 } vi_kind;
enum { VI_GUESS_SIMPLE, VI_GUESS_ADVANCED, VI_GUESS_TAYLOR, VI_GUESS_AUTO };

typedef struct {
  vi_kind kind;
  double theta, vtheta;
  int guess; /* VI_GUESS_SIMPLE, _ADVANCED or (theta family) _TAYLOR, _AUTO */
  const lv_model *m;
  lv_state *s;
  int d, k, n;
  double h;
  lv_newton *nw;
  /* iterate and results */
  double *x;
  /* per-step constants */
  double *c0; /* VI-S only (with y below; one entry otherwise: 48 bytes per particle of the chain) */
  /* cache of the current iterate (valid between residual and update) */
  int cached;
  double *qt, *q1, *u, *hp1, *y, *w, *tmp;
  double *acc; /* the products' row accumulator (lv_spm_share_acc), max(d, k) */
  /* every matrix in fixed-pattern sparse form (schemes/spmat.h) */
  lv_spm sG0, sG0T, sMiG0T;       /* G(q^n) (VI-B, VI-S) */
  lv_spm sGt, sGtT, sMiGtT, sG1;  /* G(qt), G(q1) at the iterate */
  lv_spm sHb, sZ, sMiHb, sHbMi;   /* H(qt; b), Z, M^-1 Hb, Hb M^-1 */
  lv_spm sP11, sP13, sP31, sP33, sX, sA1, sA2, sC1; /* products */
  lv_spm sI;                      /* identity */
  /* constant mass matrix: M, M^-1 (sparse form), rs = 1/diag(M) */
  lv_mass_op mass;
  /* M^-1's values when it is diagonal (particles), else NULL: the theta
   * family's products M^-1 Hb and M^-1 G(qt)^T are then not formed, their
   * rows scaled as used (lv_spm_product_put_diag) */
  const double *mid;
} vi;

/* ------------------------------------------------------------ theta family */

/* Everything the residual and the Newton matrix share, at the iterate x. */
static int ab_eval(vi *V) {
  if (V->cached) return 0;
  const lv_model *m = V->m;
  int d = V->d, k = V->k;
  const double *q = V->s->q, *p = V->s->p;
  const double *dq = V->x, *a = V->x + d, *b = V->x + d + k;
  double th = V->theta, h = V->h;
  for (int i = 0; i < d; i++) {
    V->qt[i] = q[i] + th * dq[i];
    V->q1[i] = q[i] + dq[i];
  }
  LV_CHECK(lv_spm_constraint_jac(m, V->qt, &V->sGt));
  if (V->kind == VI_B && th != 1.0) LV_CHECK(lv_spm_constraint_jac(m, V->q1, &V->sG1));
  const lv_spm *G1 = th == 1.0 ? &V->sGt : &V->sG1;
  /* u = h v^{n+1} = dq - M^-1 G(qt)^T b */
  lv_spm_matvec_t(&V->sGt, 1.0, b, 0, V->tmp);
  lv_mass_inv_mul(&V->mass, V->tmp, V->w);
  for (int i = 0; i < d; i++) V->u[i] = dq[i] - V->w[i];
  /* h p^{n+1} = h p - h^2 dV(qt) - Gl^T a - H(qt; b) u */
  LV_CHECK(lv_model_grad_potential(m, V->qt, V->tmp));
  LV_CHECK(lv_model_hessian_apply(m, V->qt, b, V->u, V->w));
  for (int i = 0; i < d; i++) V->hp1[i] = h * p[i] - h * h * V->tmp[i] - V->w[i];
  if (V->kind == VI_A) {
    lv_spm_matvec_t(&V->sGt, 1.0, a, 0, V->tmp);
  } else {
    lv_spm_matvec_t(&V->sG0, 1.0 - V->vtheta, a, 0, V->tmp);
    lv_spm_matvec_t(G1, V->vtheta, a, 1, V->tmp);
  }
  for (int i = 0; i < d; i++) V->hp1[i] -= V->tmp[i];
  V->cached = 1;
  return 0;
}

static int ab_residual(void *ctx, double *r) {
  vi *V = ctx;
  LV_CHECK(ab_eval(V));
  int d = V->d, k = V->k;
  double th = V->theta, h = V->h;
  const double *p = V->s->p, *a = V->x + d;
  lv_mass_mul(&V->mass, V->u, r);
  for (int i = 0; i < d; i++) r[i] -= th * h * p[i] + (1.0 - th) * V->hp1[i];
  if (V->kind == VI_B) {
    /* + Gc^T a = theta (1-vt) G(q)^T a - (1-theta) vt G(q1)^T a */
    double vt = V->vtheta;
    lv_spm_matvec_t(&V->sG0, th * (1.0 - vt), a, 0, V->tmp);
    lv_spm_matvec_t(th == 1.0 ? &V->sGt : &V->sG1, -(1.0 - th) * vt, a, 1, V->tmp);
    for (int i = 0; i < d; i++) r[i] += V->tmp[i];
  }
  for (int i = 0; i < d; i++) r[i] *= V->mass.rs[i];
  if (k == 0) return 0;
  LV_CHECK(lv_model_constraints(V->m, V->kind == VI_A ? V->qt : V->q1, r + d));
  lv_spm_matvec(&V->sGt, 1.0, V->u, 0, r + d + k);
  return 0;
}

/* Round-off scale of the theta family's rows (lv_newton_set_scale): the
 * constraint rows g(qt) (A), g(q1) (B) are evaluated at positions known
 * only to eps |q|, so they carry |G(q)| |q| of rounding, as RATTLE's
 * stage 1 does; it comes from the G captured at the iterate (no model
 * call).  Far from the origin this floor is above the absolute tolerance:
 * on the chain at N = 1e4 (|q| up to 1e4) the constraint rows stall at
 * 3e-12 after the fourth correction, and a fifth iteration was spent only
 * to reach the round-off-floor acceptance (4 iterations per step at
 * N = 1e3, 5 at 1e4); at N = 1e6 g cannot go below 1e-10 and VI-A's first
 * step failed after 40 iterations (now 5.5 per step).  The momentum and
 * velocity rows keep the absolute test (scale 0): their rounding stays
 * below it there, and a scale for them (as em_scale) cost VI-A 8 % per
 * step on four-particle for no iteration saved.  VI-S has no scale. */
static int ab_scale(void *ctx, double *sc) {
  vi *V = ctx;
  LV_CHECK(ab_eval(V));
  int d = V->d, k = V->k;
  memset(sc, 0, (size_t)V->n * sizeof(double));
  if (k == 0) return 0;
  /* G(qt) for A, G(q1) for B (G(qt) when theta = 1) */
  const double *qg = V->kind == VI_A ? V->qt : V->q1;
  const lv_spm *G = V->kind == VI_A || V->theta == 1.0 ? &V->sGt : &V->sG1;
  for (int i = 0; i < d; i++) V->tmp[i] = fabs(qg[i]);
  lv_spm_absmatvec(G, V->tmp, sc + d);
  return 0;
}

/* Coefficients that are fixed for the run (theta) decide which blocks
 * exist, so the terms, and with them the merged pattern, are the same in
 * every assembly. */
static int ab_jacobian(void *ctx, lv_linsol *ls) {
  vi *V = ctx;
  LV_CHECK(ab_eval(V));
  const lv_model *m = V->m;
  int d = V->d, k = V->k;
  double th = V->theta, h = V->h, c1 = th * (1.0 - th);
  const double *a = V->x + d, *b = V->x + d + k;
  lv_assembly *S = lv_linsol_assembly(ls);

  /* The blocks are written in an order that keeps few of the operands made
   * for this matrix alive at once (M^-1 Hb, then G(qt)^T and M^-1 G(qt)^T,
   * each freed after its last use): the run's peak memory comes while the
   * Newton matrix is assembled.  Only the terms of one block share
   * positions, and within a block the order is the equations' own, so the
   * sums are those of any block order. */

  /* dF1/ddq = D^-1 [ M + (1-2 theta) Hb + theta (1-theta) (h^2 d2V(qt) + [A] H(qt; a) - Hb M^-1 Hb) ] */
  LV_CHECK(lv_spm_put(S, 0, 0, &V->mass.sM, 1.0, V->mass.rs, 0));
  if (1.0 - 2.0 * th != 0.0) {
    LV_CHECK(lv_spm_model_matrix(&V->sHb, d, d, m, LV_MX_HESSIAN, 0.0, V->qt, NULL, b));
    LV_CHECK(lv_spm_put(S, 0, 0, &V->sHb, 1.0 - 2.0 * th, V->mass.rs, 0));
  }
  if (c1 != 0.0) {
    /* d2V(qt) and H(qt; a) serve this one term each: written as the
     * callbacks add them (lv_blk_rows), no capture (a capture and a put
     * cost 2.5 times as much on four particles) */
    lv_blk_sink bk;
    LV_CHECK(lv_model_matrix_flagged(m, LV_MX_D2V, 0.0, V->qt, NULL, NULL,
                                     lv_blk_rows(&bk, S, 0, 0, d, d, c1 * h * h, V->mass.rs), &bk.bad));
    if (V->kind == VI_A)
      LV_CHECK(lv_model_matrix_flagged(m, LV_MX_HESSIAN, 0.0, V->qt, NULL, a,
                                       lv_blk_rows(&bk, S, 0, 0, d, d, c1, V->mass.rs), &bk.bad));
  }
  if (1.0 - 2.0 * th == 0.0)
    LV_CHECK(lv_spm_model_matrix(&V->sHb, d, d, m, LV_MX_HESSIAN, 0.0, V->qt, NULL, b));
  const double *mid = V->mid;
  if (!mid && (c1 != 0.0 || th != 0.0)) LV_CHECK(lv_spm_product(&V->sMiHb, &V->mass.sMi, &V->sHb));
  if (c1 != 0.0)
    LV_CHECK(mid ? lv_spm_product_put_diag(S, 0, 0, &V->sP11, &V->sHb, mid, &V->sHb, -c1, V->mass.rs)
                 : lv_spm_product_put(S, 0, 0, &V->sP11, &V->sHb, &V->sMiHb, -c1, V->mass.rs));
  if (k == 0) return 0;

  /* dFv/ddq = theta Z(qt; u) + G(qt) - theta G(qt) M^-1 Hb */
  LV_CHECK(lv_spm_model_matrix(&V->sZ, k, d, m, LV_MX_CURVATURE, 0.0, V->qt, NULL, V->u));
  LV_CHECK(lv_spm_put(S, d + k, 0, &V->sGt, 1.0, NULL, 0));
  if (th != 0.0) {
    LV_CHECK(lv_spm_put(S, d + k, 0, &V->sZ, th, NULL, 0));
    LV_CHECK(mid ? lv_spm_product_put_diag(S, d + k, 0, &V->sP31, &V->sGt, mid, &V->sHb, -th, NULL)
                 : lv_spm_product_put(S, d + k, 0, &V->sP31, &V->sGt, &V->sMiHb, -th, NULL));
  }
  lv_spm_drop_values(&V->sMiHb);

  /* dF1/da = D^-1 (1-theta) G(qt)^T (A),  D^-1 (1-vartheta) G(q)^T (B) */
  double ca = V->kind == VI_A ? 1.0 - th : 1.0 - V->vtheta;
  LV_CHECK(lv_spm_put(S, 0, d, V->kind == VI_A ? &V->sGt : &V->sG0, ca, V->mass.rs, 1));

  /* dFg/ddq = theta G(qt) (A),  G(q1) (B) */
  if (V->kind == VI_A)
    LV_CHECK(lv_spm_put(S, d, 0, &V->sGt, th, NULL, 0));
  else
    LV_CHECK(lv_spm_put(S, d, 0, th == 1.0 ? &V->sGt : &V->sG1, 1.0, NULL, 0));

  /* dF1/db = D^-1 [ -G(qt)^T + (1-theta) (Z(qt; u)^T - Hb M^-1 G(qt)^T) ] */
  if (mid) {
    LV_CHECK(lv_spm_transpose_pattern(&V->sGtT, &V->sGt)); /* M^-1 G(qt)^T = diag(mid) G(qt)^T */
  } else {
    LV_CHECK(lv_spm_transpose(&V->sGtT, &V->sGt));
    LV_CHECK(lv_spm_product(&V->sMiGtT, &V->mass.sMi, &V->sGtT));
    lv_spm_drop_values(&V->sGtT);
  }
  LV_CHECK(lv_spm_put(S, 0, d + k, &V->sGt, -1.0, V->mass.rs, 1));
  if (1.0 - th != 0.0) {
    LV_CHECK(lv_spm_put(S, 0, d + k, &V->sZ, 1.0 - th, V->mass.rs, 1));
    LV_CHECK(mid ? lv_spm_product_put_diag(S, 0, d + k, &V->sP13, &V->sHb, mid, &V->sGtT, -(1.0 - th), V->mass.rs)
                 : lv_spm_product_put(S, 0, d + k, &V->sP13, &V->sHb, &V->sMiGtT, -(1.0 - th), V->mass.rs));
  }

  /* dFv/db = -G(qt) M^-1 G(qt)^T */
  LV_CHECK(mid ? lv_spm_product_put_diag(S, d + k, d + k, &V->sP33, &V->sGt, mid, &V->sGtT, -1.0, NULL)
               : lv_spm_product_put(S, d + k, d + k, &V->sP33, &V->sGt, &V->sMiGtT, -1.0, NULL));
  lv_spm_drop_values(&V->sMiGtT);
  return 0;
}

/* ------------------------------------------------------------ VI-S */

static int s_eval(vi *V) {
  if (V->cached) return 0;
  const lv_model *m = V->m;
  int d = V->d, k = V->k;
  const double *q = V->s->q;
  const double *P = V->x, *a = V->x + d, *b = V->x + d + k;
  /* y = h M v^n = c0 - G(q)^T a;  u = h v^n;  qt = qbar = q + h v^n */
  lv_spm_matvec_t(&V->sG0, 1.0, a, 0, V->tmp);
  for (int i = 0; i < d; i++) V->y[i] = V->c0[i] - V->tmp[i];
  lv_mass_inv_mul(&V->mass, V->y, V->u);
  for (int i = 0; i < d; i++) V->qt[i] = q[i] + V->u[i];
  LV_CHECK(lv_spm_constraint_jac(m, V->qt, &V->sGt));
  /* q^{n+1} = qbar + M^-1 G(qbar)^T b */
  lv_spm_matvec_t(&V->sGt, 1.0, b, 0, V->tmp);
  lv_mass_inv_mul(&V->mass, V->tmp, V->w);
  for (int i = 0; i < d; i++) V->q1[i] = V->qt[i] + V->w[i];
  /* hp1 holds M^-1 P here */
  lv_mass_inv_mul(&V->mass, P, V->hp1);
  V->cached = 1;
  return 0;
}

static int s_residual(void *ctx, double *r) {
  vi *V = ctx;
  LV_CHECK(s_eval(V));
  int d = V->d, k = V->k;
  const double *P = V->x, *b = V->x + d + k;
  LV_CHECK(lv_model_hessian_apply(V->m, V->qt, b, V->hp1, V->w));
  for (int i = 0; i < d; i++) r[i] = V->mass.rs[i] * (V->y[i] - P[i] - V->w[i]);
  if (k == 0) return 0;
  LV_CHECK(lv_model_constraints(V->m, V->q1, r + d));
  lv_spm_matvec(&V->sGt, 1.0, V->hp1, 0, r + d + k);
  return 0;
}

static int s_jacobian(void *ctx, lv_linsol *ls) {
  vi *V = ctx;
  LV_CHECK(s_eval(V));
  const lv_model *m = V->m;
  int d = V->d, k = V->k;
  const double *b = V->x + d + k;
  lv_assembly *S = lv_linsol_assembly(ls);

  /* dF1/dP = -D^-1 (I + Hb M^-1) */
  LV_CHECK(lv_spm_model_matrix(&V->sHb, d, d, m, LV_MX_HESSIAN, 0.0, V->qt, NULL, b));
  LV_CHECK(lv_spm_product(&V->sHbMi, &V->sHb, &V->mass.sMi));
  LV_CHECK(lv_spm_put(S, 0, 0, &V->sI, -1.0, V->mass.rs, 0));
  LV_CHECK(lv_spm_put(S, 0, 0, &V->sHbMi, -1.0, V->mass.rs, 0));
  if (k == 0) return 0;

  /* dF1/da = -D^-1 G(q)^T,  dF1/db = -D^-1 Z(qbar; M^-1 P)^T */
  LV_CHECK(lv_spm_put(S, 0, d, &V->sG0, -1.0, V->mass.rs, 1));
  LV_CHECK(lv_spm_model_matrix(&V->sZ, k, d, m, LV_MX_CURVATURE, 0.0, V->qt, NULL, V->hp1));
  LV_CHECK(lv_spm_put(S, 0, d + k, &V->sZ, -1.0, V->mass.rs, 1));

  /* dFg/da = -G(q1) M^-1 G(q)^T - G(q1) (M^-1 Hb) M^-1 G(q)^T,  dFg/db = G(q1) M^-1 G(qbar)^T */
  LV_CHECK(lv_spm_constraint_jac(m, V->q1, &V->sG1));
  LV_CHECK(lv_spm_product(&V->sMiHb, &V->mass.sMi, &V->sHb));
  LV_CHECK(lv_spm_product(&V->sX, &V->sMiHb, &V->sMiG0T));
  LV_CHECK(lv_spm_product(&V->sA1, &V->sG1, &V->sMiG0T));
  LV_CHECK(lv_spm_product(&V->sA2, &V->sG1, &V->sX));
  LV_CHECK(lv_spm_put(S, d, d, &V->sA1, -1.0, NULL, 0));
  LV_CHECK(lv_spm_put(S, d, d, &V->sA2, -1.0, NULL, 0));
  LV_CHECK(lv_spm_transpose(&V->sGtT, &V->sGt));
  LV_CHECK(lv_spm_product(&V->sMiGtT, &V->mass.sMi, &V->sGtT));
  LV_CHECK(lv_spm_product(&V->sP33, &V->sG1, &V->sMiGtT));
  LV_CHECK(lv_spm_put(S, d, d + k, &V->sP33, 1.0, NULL, 0));

  /* dFv/dP = G(qbar) M^-1 = (M^-1 G(qbar)^T)^T,  dFv/da = -Z M^-1 G(q)^T */
  LV_CHECK(lv_spm_put(S, d + k, 0, &V->sMiGtT, 1.0, NULL, 1));
  LV_CHECK(lv_spm_product(&V->sC1, &V->sZ, &V->sMiG0T));
  LV_CHECK(lv_spm_put(S, d + k, d, &V->sC1, -1.0, NULL, 0));
  return 0;
}

static int vi_update(void *ctx, const double *dx) {
  vi *V = ctx;
  for (int i = 0; i < V->n; i++) V->x[i] += dx[i];
  V->cached = 0;
  return 0;
}

/* ------------------------------------------------------------ life cycle */

static void vi_destroy(lv_stepper *st) {
  vi *V = st->priv;
  if (!V) return;
  lv_newton_free(V->nw);
  double **arrs[] = {&V->x, &V->c0, &V->qt, &V->q1, &V->u, &V->hp1, &V->y, &V->w, &V->tmp, &V->acc};
  for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) free(*arrs[i]);
  lv_mass_op_free(&V->mass);
  lv_spm *sps[] = {&V->sG0,  &V->sG0T, &V->sMiG0T, &V->sGt,  &V->sGtT, &V->sMiGtT, &V->sG1,  &V->sHb,
                   &V->sZ,   &V->sMiHb, &V->sHbMi, &V->sP11, &V->sP13, &V->sP31,   &V->sP33, &V->sX,
                   &V->sA1,  &V->sA2,  &V->sC1,    &V->sI};
  for (size_t i = 0; i < sizeof sps / sizeof sps[0]; i++) lv_spm_free(sps[i]);
  free(V);
  st->priv = NULL;
}

#define VI_THETA_GUESS_HELP                                                                              \
  "Newton start: simple = previous step's values; advanced = q^{n+1} = q^n + h v^n; taylor = q^{n+1} = q^n + " \
  "h v^n + h^2/2 M^-1 (-dV(q^n) - G(q^n)^T lambda^n), a failed solve restarting once from simple; auto = " \
  "taylor where its h^2 term is at most 1% of h v^n (max-norms; h omega below about 0.02), otherwise advanced"
static const lv_param_info vi_s_options[] = {
    {"guess", "simple",
     "Newton start: simple = previous step's values; advanced = predicted p^{n+1} = M v^n "
     "(q^{n+1} is not an unknown of the reduced VI-S system)"},
    {NULL, NULL, NULL}};
static const lv_param_info vi_a_options[] = {
    {"theta", "0.5",
     "constraint and force evaluation point q^{n+theta}, in (0,1); 0.5 is VI-A (order 2); other values are "
     "unstable (multiplier root -theta/(1-theta), node-drift root -(1-theta)/theta)"},
    {"guess", "auto", VI_THETA_GUESS_HELP},
    {NULL, NULL, NULL}};
static const lv_param_info vi_b_options[] = {
    {"theta", "1", "force and velocity-constraint evaluation point q^{n+theta}, in [0,1]"},
    {"vartheta", "0.5",
     "weight of G(q^{n+1}) in the trapezoidal constraint force, in (0,1); above 0.5 unstable (multiplier "
     "root -vartheta/(1-vartheta))"},
    {"guess", "auto", VI_THETA_GUESS_HELP},
    {NULL, NULL, NULL}};

static int vi_create(lv_stepper *st, vi_kind kind) {
  const lv_model *m = st->model;
  const lv_param_info *opts = kind == VI_S ? vi_s_options : kind == VI_A ? vi_a_options : vi_b_options;
  LV_CHECK(lv_kv_check(st->options, opts, NULL));
  double theta = kind == VI_B ? 1.0 : 0.5, vtheta = 0.5;
  const char *name = kind == VI_S ? "vi-s" : kind == VI_A ? "vi-a" : "vi-b";
  if (kind != VI_S) LV_CHECK(lv_opt_double(st, name, "theta", theta, &theta, "a number"));
  if (kind == VI_B) LV_CHECK(lv_opt_double(st, name, "vartheta", vtheta, &vtheta, "a number"));
  /* Refused only where the scheme is undefined; the README's unstable
   * values (VI-A away from theta = 1/2, VI-B for vartheta > 1/2) stay
   * allowed, since users study them on purpose. */
  if (kind == VI_A && !(theta > 0.0 && theta < 1.0))
    return lv_opt_refuse(st, name, "theta", "a number in (0, 1) (stable only at theta = 1/2)");
  if (kind == VI_B && !(theta >= 0.0 && theta <= 1.0)) return lv_opt_refuse(st, name, "theta", "a number in [0, 1]");
  if (kind == VI_B && !(vtheta > 0.0 && vtheta < 1.0))
    return lv_opt_refuse(st, name, "vartheta", "a number in (0, 1) (stable only for vartheta <= 1/2)");
  static const char *const guesses[] = {"simple", "advanced", "taylor", "auto", NULL};
  static const char *const guesses_s[] = {"simple", "advanced", NULL};
  int guess;
  LV_CHECK(lv_opt_choice(st, name, "guess", kind == VI_S ? guesses_s : guesses,
                         kind == VI_S ? VI_GUESS_SIMPLE : VI_GUESS_AUTO, &guess));
  /* The discrete action has no non-conservative forces (that would be a
   * discrete Lagrange-d'Alembert principle): refuse rather than drop them. */
  if (lv_model_has_force(m)) return LV_ENOTIMPL;
  if (!lv_model_mass_constant(m) || !lv_space_is_linear(lv_model_space(m))) return LV_ENOTIMPL;

  vi *V = lv_calloc(1, sizeof *V);
  if (!V) return LV_ENOMEM;
  st->priv = V;
  V->kind = kind;
  V->theta = kind == VI_S ? 0.0 : theta;
  V->vtheta = vtheta;
  V->guess = guess;
  V->m = m;
  V->s = st->state;
  int d = lv_model_nv(m), k = lv_model_nc(m), n = d + 2 * k;
  V->d = d;
  V->k = k;
  V->n = n;
  LV_CHECK(lv_newton_new(&V->nw, n, st->linsol_kind));
  if (kind != VI_S) lv_newton_set_scale(V->nw, ab_scale);
  *lv_newton_opts(V->nw) = st->newton;
  st->linsol = lv_newton_linsol(V->nw);
  st->newton_solver = V->nw; /* the integrator invalidates it on a new h */
  lv_spm *sps[] = {&V->sG0,  &V->sG0T, &V->sMiG0T, &V->sGt,  &V->sGtT, &V->sMiGtT, &V->sG1,  &V->sHb,
                   &V->sZ,   &V->sMiHb, &V->sHbMi, &V->sP11, &V->sP13, &V->sP31,   &V->sP33, &V->sX,
                   &V->sA1,  &V->sA2,  &V->sC1,    &V->sI};
  for (size_t i = 0; i < sizeof sps / sizeof sps[0]; i++) lv_spm_init(sps[i], d, d);
  lv_spm_init(&V->sG0, k, d);
  lv_spm_init(&V->sGt, k, d);
  lv_spm_init(&V->sG1, k, d);
  lv_spm_init(&V->sZ, k, d);
  LV_CHECK(lv_mass_op_init(&V->mass, m, st->state->q, LV_MASS_SPARSE));
  V->mid = lv_spm_diag_values(&V->mass.sMi);
  struct {
    double **p;
    size_t len;
  } al[] = {{&V->x, n},  {&V->c0, kind == VI_S ? d : 1}, {&V->qt, d},  {&V->q1, d},
            {&V->u, d},  {&V->hp1, d}, {&V->y, kind == VI_S ? d : 1}, {&V->w, d},  {&V->tmp, d},
            {&V->acc, (size_t)(d > k ? d : k)}};
  for (size_t i = 0; i < sizeof al / sizeof al[0]; i++) {
    *al[i].p = lv_calloc(al[i].len, sizeof(double));
    if (!*al[i].p) return LV_ENOMEM;
  }
  lv_spm *prods[] = {&V->sMiG0T, &V->sMiGtT, &V->sMiHb, &V->sHbMi, &V->sP11, &V->sP13,
                     &V->sP31,   &V->sP33,   &V->sX,    &V->sA1,   &V->sA2,  &V->sC1};
  for (size_t i = 0; i < sizeof prods / sizeof prods[0]; i++) lv_spm_share_acc(prods[i], V->acc, d > k ? d : k);
  return kind == VI_S ? lv_spm_identity(&V->sI, d) : 0;
}

static int vi_s_create(lv_stepper *st) { return vi_create(st, VI_S); }
static int vi_a_create(lv_stepper *st) { return vi_create(st, VI_A); }
static int vi_b_create(lv_stepper *st) { return vi_create(st, VI_B); }

static int vi_init(lv_stepper *st) {
  /* p^0 = M v^0 is set by the integrator; the multipliers have no initial
   * value in the discrete equations and start at zero as Newton guesses. */
  (void)st;
  return 0;
}

/* Newton start of the theta family's dq = q^{n+1} - q^n: 0 (simple, the
 * previous step's values), h v^n (advanced) or the Taylor polynomial
 * h v^n + h^2/2 v'^n with the state's acceleration
 * v'^n = M^-1 (-dV(q^n) - G(q^n)^T lambda^n) (taylor): O(h^3) from the
 * solution where h v^n is O(h^2) and 0 is O(h).  Four particles at h = 1e-3
 * under VI-A: 2.00 Newton iterations per step from 0, 1.56 from h v^n, 1.00
 * from the Taylor start.  A solve that fails from it restarts once from 0
 * (vi_step).  Alone it is not the default: near the stability limit the
 * h^2 term can lead Newton to another root of the discrete equations (four
 * particles, VI-A, h = 0.25: the motion left the one from 0 or h v^n at
 * t = 9 and blew up there, where from those starts it blows up at t = 58,
 * the paper's figure); EM, whose start it is by default, kept the
 * trajectory of its other starts to round-off up to t = 50 at h = 0.3, 0.5
 * and 0.675.  The default (auto) takes the Taylor start only where its h^2
 * term is at most 1 % of h v^n in the max-norm, i.e. h |v'| / (2 |v|) <=
 * 0.01, roughly h omega <= 0.02 for an oscillation: there the three starts
 * lie within the same small neighbourhood of the step's root.  Four
 * particles: that ratio is 2.5e-4 ... 1.3e-3 at h = 1e-3 and 0.04 ... 0.26
 * at h = 0.25, so auto is the Taylor start at the one and h v^n at the
 * other.  Sets *taylor when the Taylor start was taken. */
static int theta_guess(vi *V, int guess, int *taylor) {
  const lv_state *s = V->s;
  int d = V->d, k = V->k;
  double h = V->h;
  *taylor = 0;
  for (int i = 0; i < d; i++) V->x[i] = guess != VI_GUESS_SIMPLE ? h * s->v[i] : 0.0;
  if (guess == VI_GUESS_TAYLOR || guess == VI_GUESS_AUTO) {
    LV_CHECK(lv_model_grad_potential(V->m, s->q, V->tmp));
    if (k > 0) LV_CHECK(lv_model_GT_apply_add(V->m, s->q, s->lambda, V->tmp));
    lv_mass_inv_mul(&V->mass, V->tmp, V->w);
    if (guess == VI_GUESS_AUTO) {
      /* inline maxima (libm's fmax is a call per element), written so that
       * a NaN is kept: NaN in w fails the test below, h v^n then (fmax
       * would have dropped it, and the Taylor start would have failed its
       * solve first) */
      double dmax = 0.0, wmax = 0.0;
      for (int i = 0; i < d; i++) {
        double xa = fabs(V->x[i]), wa = fabs(V->w[i]);
        if (!(xa <= dmax)) dmax = xa;
        if (!(wa <= wmax)) wmax = wa;
      }
      if (!(0.5 * h * h * wmax <= 0.01 * dmax)) return 0;
    }
    for (int i = 0; i < d; i++) V->x[i] -= 0.5 * h * h * V->w[i];
    *taylor = 1;
  }
  return 0;
}

static int vi_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  vi *V = st->priv;
  const lv_model *m = V->m;
  lv_state *s = st->state;
  int d = V->d, k = V->k;
  V->h = h;
  double *a = V->x + d, *b = V->x + d + k;
  int taylor = 0; /* the Newton start was the Taylor polynomial (theta_guess) */
  if (k > 0 && V->kind != VI_A) LV_CHECK(lv_spm_constraint_jac(m, s->q, &V->sG0)); /* VI-A never uses G(q^n) */
  for (int i = 0; i < k; i++) {
    a[i] = h * h * s->lambda[i];
    b[i] = h * s->gamma[i];
  }
  lv_newton_problem pb;
  if (V->kind == VI_S) {
    /* c0 = h p - h^2 dV(q);  M^-1 G(q)^T */
    LV_CHECK(lv_model_grad_potential(m, s->q, V->tmp));
    for (int i = 0; i < d; i++) V->c0[i] = h * s->p[i] - h * h * V->tmp[i];
    LV_CHECK(lv_spm_transpose(&V->sG0T, &V->sG0));
    LV_CHECK(lv_spm_product(&V->sMiG0T, &V->mass.sMi, &V->sG0T));
    if (V->guess == VI_GUESS_ADVANCED) {
      /* P = h M v^n at the guessed lambda: exact up to the O(h^2 gamma) term */
      lv_spm_matvec_t(&V->sG0, 1.0, a, 0, V->tmp);
      for (int i = 0; i < d; i++) V->x[i] = V->c0[i] - V->tmp[i];
    } else {
      for (int i = 0; i < d; i++) V->x[i] = h * s->p[i];
    }
    pb = (lv_newton_problem){s_residual, s_jacobian, vi_update, NULL, V, V->n};
  } else {
    LV_CHECK(theta_guess(V, V->guess, &taylor));
    pb = (lv_newton_problem){ab_residual, ab_jacobian, vi_update, NULL, V, V->n};
  }
  V->cached = 0;
  *lv_newton_opts(V->nw) = st->newton;
  int rc = lv_newton_solve(V->nw, &pb, 1, ns);
  if (taylor && lv_newton_failed(rc)) {
    /* once more from the previous step's values (see theta_guess) */
    lv_newton_stats ns2;
    memset(&ns2, 0, sizeof ns2);
    for (int i = 0; i < k; i++) {
      a[i] = h * h * s->lambda[i];
      b[i] = h * s->gamma[i];
    }
    LV_CHECK(theta_guess(V, VI_GUESS_SIMPLE, &taylor));
    V->cached = 0;
    rc = lv_newton_solve(V->nw, &pb, 0, &ns2);
    lv_newton_stats_add_restart(ns, &ns2);
  }
  if (rc) return rc;
  /* Without an iteration there may be no factorisation of this system.
   * Not skipped when the residual norm is already tiny: that norm is
   * dominated by g(q), whose rounding floor (~1e-16) is far above that of
   * the momentum rows (~eps |dq|), and a momentum-row defect delta costs
   * M delta / h in p every step. */
  if (ns->iterations > 0) {
    /* Simplified-Newton corrections with the last factorisation until they
     * stop contracting or no longer change the iterate (round-off).  The
     * residual norm cannot tell: it is dominated by the rounding of g(q)
     * (~1e-16) while the momentum rows still carry defects far above their
     * own rounding level, each worth M delta / h in p.  After a
     * quadratically converging solve one correction suffices; modified
     * Newton converges linearly, stops anywhere below its tolerance (or at
     * its round-off-floor acceptance, up to 100x the tolerance) and needs
     * several.  A modified solve may have used a factorisation from an
     * earlier step even when it took a single iteration (no contraction
     * rate to go by). */
    int many = st->newton.kind == LV_NEWTON_MODIFIED || ns->contraction > 1e-3;
    lv_newton_polish_policy pol = {many ? 12 : 1, LV_POLISH_INCREMENT, 0.5, V->x, NULL, 0.0, 0, 0, 1};
    LV_CHECK(lv_newton_polish_with(V->nw, &pb, &pol, ns));
  }

  /* The final iterate's derived quantities, then commit. */
  if (V->kind == VI_S) {
    LV_CHECK(s_eval(V));
    for (int i = 0; i < d; i++) {
      s->v[i] = V->u[i] / h;
      s->p[i] = V->x[i] / h;
    }
    memcpy(s->q, V->q1, (size_t)d * sizeof(double));
  } else {
    LV_CHECK(ab_eval(V));
    for (int i = 0; i < d; i++) {
      s->v[i] = V->u[i] / h;
      s->p[i] = V->hp1[i] / h;
    }
    memcpy(s->q, V->q1, (size_t)d * sizeof(double));
  }
  for (int i = 0; i < k; i++) {
    s->lambda[i] = a[i] / (h * h);
    s->gamma[i] = b[i] / h;
  }
  return 0;
}

const lv_scheme_type lv_scheme_vi_s = {
    "vi-s",
    "GGL variational integrator VI-S (Kinon, Betsch & Schneider 2023, eq. (55)): first order, GGL analogue of "
    "symplectic Euler",
    "symplectic (on G(q^n) dq = 0); momentum maps of symmetries of L, g and g^v; energy not conserved "
    "(bounded oscillation); g(q) = 0 at every node; velocity constraint only at qbar = q^n + h v^n "
    "(G(qbar) M^-1 p^{n+1} = 0), not at the nodes in general; state v and lambda are those of t^n",
    1,
    LV_SCHEME_HAS_P | LV_SCHEME_HAS_GAMMA | LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_CONSERVATIVE,
    vi_s_options,
    vi_s_create,
    vi_init,
    vi_step,
    vi_destroy,
    NULL,
    NULL,
    NULL,
    NULL, /* history: none besides the state (checkpoints, issue 17) */
};

const lv_scheme_type lv_scheme_vi_a = {
    "vi-a",
    "GGL variational integrator VI-A (Kinon, Betsch & Schneider 2023, eq. (79)): one-stage theta VI, intermediate "
    "constraint "
    "evaluation; order 2 at theta = 0.5",
    "symplectic (on all of R^2d); momentum maps of symmetries of L, g and g^v; energy not conserved (bounded "
    "oscillation); g(q^{n+theta}) = 0 and G(q^{n+theta}) v^{n+1} = 0 at the intermediate point, not at the nodes",
    2,
    LV_SCHEME_HAS_P | LV_SCHEME_HAS_GAMMA | LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_CONSERVATIVE,
    vi_a_options,
    vi_a_create,
    vi_init,
    vi_step,
    vi_destroy,
    NULL,
    NULL,
    NULL,
    NULL, /* history: none besides the state (checkpoints, issue 17) */
};

const lv_scheme_type lv_scheme_vi_b = {
    "vi-b",
    "GGL variational integrator VI-B (Kinon, Betsch & Schneider 2023, eq. (82)): one-stage theta VI, trapezoidal "
    "constraint "
    "evaluation; order 1 at theta = 1",
    "symplectic (on G(q^n) dq = 0); momentum maps of symmetries of L, g and g^v; energy not conserved "
    "(bounded oscillation); g(q) = 0 at every node; G(q^{n+theta}) v^{n+1} = 0, i.e. G(q^{n+1}) v^{n+1} = 0 "
    "at the nodes for theta = 1 (in the velocity v, not G M^-1 p)",
    1,
    LV_SCHEME_HAS_P | LV_SCHEME_HAS_GAMMA | LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_CONSERVATIVE,
    vi_b_options,
    vi_b_create,
    vi_init,
    vi_step,
    vi_destroy,
    NULL,
    NULL,
    NULL,
    NULL, /* history: none besides the state (checkpoints, issue 17) */
};
