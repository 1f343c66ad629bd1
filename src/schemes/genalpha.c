/* Lie group generalized-alpha (Brüls-Cardona 2010; analysis Arnold-Brüls-
 * Cardona 2015 = seed 000, velocity projection seed 001).  Spec:
 * spec/000_001_genalpha.md, equation numbers (9), (56)-(58) are the papers'.
 *
 * Model convention (lv_model.h): M v' = -dV + f - G^T lambda, so the papers'
 * force vector is g = dV - f and B = G.  One step t_n -> t_{n+1}:
 *
 *   q_{n+1} = q_n o exp(h Dq~)
 *   Dq      = v_n - [G(q_n)^T eta] + (1/2 - beta) h a_n + beta h a_{n+1}
 *   v_{n+1} = v_n + (1 - gamma) h a_n + gamma h a_{n+1}
 *   (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) vd_{n+1} + alpha_f vd_n
 *   M vd_{n+1} + dV - f + G^T lambda_{n+1} = 0,   g(q_{n+1}) = c(t_{n+1})
 *   [index 2 only:  G(q_{n+1}) v_{n+1} = c'(t_{n+1})]
 * (c = 0 unless the model has driving constraints, lv_model_set_driving;
 * the spec's §8 item 9: the Newton matrix does not change, and the start
 * and projections take c'' and c' through the saddle-point module).
 *
 * Newton runs in (Dx, [zeta,] dlambda^) with Dx = h d(Dq), zeta = h d(eta),
 * dlambda = beta' dlambda^.  The iteration matrix is the spec's S_t (§2.6)
 * with its first block row divided by beta', so that block stays O(1) as
 * h -> 0 (unscaled, cond grows like h^-4).  The index-2 velocity row G v = 0
 * is left unscaled, unlike the spec's division by gamma': row scaling does
 * not change the Newton steps, only what the solver's residual test means,
 * and unscaled it bounds |G v| itself (scaled by 1/gamma', |G v| ~ 2e-9
 * passed the test at h = 2.5e-4).  The price is a condition number growing
 * like 1/h (rcond ~ h/13 on the heavy top), harmless down to h = 1e-7.  The
 * residual test thus reads |r|/beta' (a position-increment size), |g(q)|,
 * |G v| <= res_tol; the increment test is the spec's weighted RMS of
 * (Dx, zeta, dlambda) against (h Dq, h eta, lambda).
 *
 * K_t T and G T are products with the block-diagonal tangent operator
 * T(h Dq).  They are formed entry by entry through product sinks and an
 * assembly cache, so the same code fills a dense or a sparse (UMFPACK)
 * matrix, and the pattern stays what the model's callbacks write.
 *
 * Pseudo-acceleration a and vd = v' are private; the state carries q, v,
 * lambda and (index 2) eta in state->gamma (zero for index 3).
 *
 * This file holds the step: predictor, Newton residual, iteration matrix,
 * update and weights, commit, the history kept between steps, and the
 * scheme table.  The sigma-modification is in genalpha_sigma.c, the
 * starting values and projections in genalpha_start.c, options and life
 * cycle in genalpha_setup.c; the shared state in genalpha_impl.h. */
#include <float.h>
#include "genalpha_impl.h"
#include "schemes/history.h"

/* M(q_{n+1}) of the current iterate (once if constant). */
static int iterate_mass(genalpha *g) {
  return lv_spm_mass_matrix_once(g->m, g->q1, &g->Mc, &g->mc_valid, g->mass_constant);
}

/* G(q_{n+1}) and M(q_{n+1}) of the current iterate, one callback each. */
static int iterate_matrices(genalpha *g) {
  LV_CHECK(iterate_mass(g));
  if (!g->g1_valid && g->nc > 0) {
    LV_CHECK(lv_spm_constraint_jac(g->m, g->q1, &g->G1));
    g->g1_valid = 1;
  }
  return 0;
}

/* A captured matrix's last adds, replayed into another capture (the same
 * positions and values in the same order as its callback wrote them). */
static int replay_capture(void *ctx, lv_sink *s) {
  const lv_recorder *r = &((const lv_spm *)ctx)->rec;
  for (size_t c = 0; c < r->rcnt; c++) LV_CHECK(s->add(s, r->ri[c], r->rj[c], r->cv[c]));
  return 0;
}

/* B_n = G(q_n) for index 2.  The previous step's last residual captured
 * G at its converged iterate, which the commit made q_n: replayed when q_n
 * is still that iterate, bit for bit (the callback otherwise). */
static int capture_bn(genalpha *g, const double *qn) {
  if (g->g1_valid && memcmp(g->q1, qn, (size_t)g->nq * sizeof(double)) == 0)
    return lv_spm_fill(&g->Bn, g->nc, g->nv, replay_capture, &g->G1);
  return lv_spm_constraint_jac(g->m, qn, &g->Bn);
}

/* ---- Newton problem ---- */

static int ga_residual(void *ctx, double *r) {
  genalpha *g = ctx;
  const lv_model *m = g->m;
  int d = g->nv, k = g->nc;
  /* G is captured where the Newton matrix needs it too (the predictor,
   * g->g1_wanted); elsewhere G^T lambda (and index 2's G v) come straight
   * from the model (lv_model_GT_apply_add, accumulated into r, and
   * lv_model_G_apply), which sum the same terms in the same order as the
   * captured G's replay.  Index 2's B_n of the next step is then G(q_n)
   * from the callback rather than a replay: the same values. */
  int capture_g = k > 0 && (g->g1_valid || g->g1_wanted);
  LV_CHECK(capture_g ? iterate_matrices(g) : iterate_mass(g));
  memset(r, 0, (size_t)d * sizeof(double));
  lv_spm_seq_matvec(&g->Mc, g->vd1, r, 0);
  /* r + dV - f in one pass (the same sums in the same order) */
  const double *dv = NULL, *f = NULL;
  if (g->has_dV) LV_CHECK(lv_model_grad_potential(m, g->q1, (double *)(dv = g->tmp)));
  if (g->has_force) LV_CHECK(lv_model_force(m, g->t1, g->q1, g->v1, (double *)(f = g->tmp2)));
  if (dv && f) {
    for (int i = 0; i < d; i++) r[i] = (r[i] + dv[i]) - f[i];
  } else if (dv) {
    for (int i = 0; i < d; i++) r[i] += dv[i];
  } else if (f) {
    for (int i = 0; i < d; i++) r[i] -= f[i];
  }
  if (capture_g) {
    lv_spm_seq_matvec(&g->G1, g->lam1, r, 1);
  } else if (k > 0) {
    LV_CHECK(lv_model_GT_apply_add(m, g->q1, g->lam1, r));
  }
  double sb = 1.0 / g->bp;
  for (int i = 0; i < d; i++) r[i] *= sb;
  if (k > 0 && g->driven) LV_CHECK(lv_model_constraints_at(m, g->t1, g->q1, r + d, g->drv)); /* g(q) - c(t) */
  if (k > 0 && !g->driven) LV_CHECK(lv_model_constraints(m, g->q1, r + d));
  if (g->index == 2 && k > 0) {
    double *rv = r + d + k;
    if (capture_g) {
      memset(rv, 0, (size_t)k * sizeof(double));
      lv_spm_seq_matvec(&g->G1, g->v1, rv, 0);
    } else {
      LV_CHECK(lv_model_G_apply(m, g->q1, g->v1, rv));
    }
    if (g->driven) { /* G v = c'(t) */
      LV_CHECK(lv_model_driving(m, g->t1, 1, g->drv));
      for (int i = 0; i < k; i++) rv[i] -= g->drv[i];
    }
    for (int i = 0; i < k; i++) rv[i] *= g->s3;
  }
  g->r_last = r;
  return 0;
}

/* Every block of the scaled iteration matrix into the solver's assembly. */
static int assemble(genalpha *g, lv_assembly *A) {
  const lv_model *m = g->m;
  int d = g->nv, k = g->nc;
  double sb = 1.0 / g->bp, cg = g->gp / g->bp;
  lv_blk_sink b;
  /* (1,1): M + (gamma'/beta') C_t + (1/beta') K_t T,  C_t = -df/dv,
   * K_t = D_q(M vd) + d2V - df/dq + D_q(G^T lambda). */
  lv_blk_seq(A, &g->Mc, 0, 0, 1.0, 0, NULL);
  /* index 2 needs C_t twice (here and times B_n^T): one callback, captured
   * and replayed in its order, so both blocks get the callback's bits */
  int cdv = g->has_force && g->index == 2 && k > 0;
  if (cdv) {
    LV_CHECK(lv_spm_model_matrix(&g->Cdv, d, d, m, LV_MX_FORCE_DV, g->t1, g->q1, g->v1, NULL));
    lv_blk_seq(A, &g->Cdv, 0, 0, -cg, 0, NULL);
  } else if (g->has_force) {
    LV_CHECK(lv_model_matrix_flagged(m, LV_MX_FORCE_DV, g->t1, g->q1, g->v1, NULL, lv_blk(&b, A, 0, 0, d, d, -cg, 0, NULL), &b.bad));
  }
  if (g->has_dV) LV_CHECK(lv_model_matrix_flagged(m, LV_MX_D2V, 0.0, g->q1, NULL, NULL, lv_blk(&b, A, 0, 0, d, d, sb, 0, g->Tf), &b.bad));
  if (g->has_force) LV_CHECK(lv_model_matrix_flagged(m, LV_MX_FORCE_DQ, g->t1, g->q1, g->v1, NULL, lv_blk(&b, A, 0, 0, d, d, -sb, 0, g->Tf), &b.bad));
  /* newton-matrix=exudyn (ablation) leaves out what Exudyn's Jacobian
   * (CSystem::JacobianODE2RHS, JacobianAE: only C_q and C_q^T; the mass
   * matrix times beta') does not contain */
  int all = !g->nmat_exudyn;
  if (k > 0 && all) LV_CHECK(lv_model_matrix_flagged(m, LV_MX_HESSIAN, 0.0, g->q1, NULL, g->lam1, lv_blk(&b, A, 0, 0, d, d, sb, 0, g->Tf), &b.bad));
  if (!g->mass_constant && all)
    LV_CHECK(lv_fd_mass_dq(m, g->q1, g->vd1, lv_blk(&b, A, 0, 0, d, d, sb, 0, g->Tf), 1.0));
  if (k == 0) return 0;
  int cl = g->index == 2 ? d + k : d; /* column of the lambda block */
  lv_blk_seq(A, &g->G1, 0, cl, 1.0, 1, NULL); /* G^T */
  lv_blk_seq(A, &g->G1, d, 0, 1.0, 0, g->Tf); /* G T */
  if (g->index != 2) return 0;
  /* (1,zeta): (M + (gamma'/beta') C_t) B_n^T */
  lv_blk_seq(A, &g->Mc, 0, d, 1.0, 0, &g->Bn);
  if (cdv) lv_blk_seq(A, &g->Cdv, 0, d, -cg, 0, &g->Bn);
  /* (3,1): s3 (gamma' G + Z(q; v) T);  (3,zeta): s3 gamma' G B_n^T */
  double s3 = g->s3, sgp = g->s3 * g->gp;
  lv_blk_seq(A, &g->G1, d + k, 0, sgp, 0, NULL);
  if (all) LV_CHECK(lv_model_matrix_flagged(m, LV_MX_CURVATURE, 0.0, g->q1, NULL, g->v1, lv_blk(&b, A, d + k, 0, k, d, s3, 0, g->Tf), &b.bad));
  lv_blk_seq(A, &g->G1, d + k, d, sgp, 0, &g->Bn);
  return 0;
}

static int ga_jacobian(void *ctx, lv_linsol *ls) {
  genalpha *g = ctx;
  for (int i = 0; i < g->nv; i++) g->hdq[i] = g->h * g->dq[i];
  g->Tf = &g->T;
  if (g->sigma != 0.0) { /* sigma-scheme: T -> F (exact) or P (paper) */
    LV_CHECK(ga_sigma_newton_tangent(g));
  } else if (lv_space_is_linear(g->sp)) {
    /* on R^n T = I (lv_space_tangent writes 1.0 on the diagonal): the
     * blocks times T are the blocks themselves, bit for bit (v * 1.0 ==
     * v), without building T and going through its rows, as BLieDF */
    g->Tf = NULL;
  } else {
    LV_CHECK(lv_spm_tangent(g->sp, g->hdq, &g->T));
  }
  LV_CHECK(iterate_matrices(g));
  return assemble(g, lv_linsol_assembly(ls));
}

static int ga_update(void *ctx, const double *dx) {
  genalpha *g = ctx;
  int d = g->nv, k = g->nc;
  const double *y = dx;
  if (g->index == 2 && k > 0) {
    /* the velocity-level correction is Dx + B_n^T zeta */
    memcpy(g->bnz, dx, (size_t)d * sizeof(double));
    ga_bn_t_apply(g, dx + d, g->bnz);
    y = g->bnz;
    for (int i = 0; i < k; i++) g->eta[i] += dx[d + i] / g->h;
  }
  double ih = 1.0 / g->h;
  if (g->sigma != 0.0 && !g->corr_paper) { /* issue 6: theta += Phi Dx, then sigma_state */
    LV_CHECK(ga_sigma_update(g, dx, y));
  } else if (g->corr_paper) { /* issue 6: see genalpha_sigma.c */
    LV_CHECK(ga_sigma_paper_update(g, dx, y));
  } else {
    for (int i = 0; i < d; i++) {
      g->dq[i] += dx[i] * ih;
      g->v1[i] += g->gp * y[i];
      g->vd1[i] += g->bp * y[i];
    }
  }
  const double *dl = dx + (g->index == 2 ? d + k : d);
  for (int i = 0; i < k; i++) g->lam1[i] += g->bp * dl[i];
  g->g1_valid = 0;
  g->g1_wanted = 0; /* simplified Newton forms its matrix at the predictor only */
  g->r_last = NULL;
  g->mc_valid = g->mc_valid && g->mass_constant;
  return lv_space_compose_exp(g->sp, g->s->q, g->h, g->dq, g->q1);
}

/* Round-off scale (lv_newton_set_scale), on a linear space (q1 has nv
 * components): the error that positions known only to eps |q1| leave in
 * each row, as em_scale and RATTLE's stage1_scale judge theirs.
 *  - the force rows (times 1/beta'): |M| |vd1| + |G^T| |lambda| (the
 *    rounding of the sums) + |H(q1; lambda)| |q1| + |d2V| |q1| (their
 *    q-derivatives);
 *  - g(q1): |G(q1)| |q1|;
 *  - index 2, s3 G(q1) v1: s3 (|G| |v1| + |Z(q1; v1)| |q1|).
 * Far from the origin they exceed the absolute tolerance whatever Newton
 * does: the chain at N = 10^6 (positions up to 10^6, multipliers up to
 * 10^7) leaves g at 1e-10 and took 40 iterations to fail its first step;
 * N = 10^4 with links of length 100 fails the same way.  Near the origin
 * (every other built-in model) they stay below res_tol / res_rtol and the
 * test is the absolute one as before.  Lie group spaces keep the absolute
 * test (no scale set). */
static int ga_scale(void *ctx, double *sc) {
  genalpha *g = ctx;
  const lv_model *m = g->m;
  int d = g->nv, k = g->nc;
  double *t = g->tmp2;
  LV_CHECK(lv_model_mass_apply_abs(m, g->q1, g->vd1, sc));
  if (g->has_dV) {
    LV_CHECK(lv_model_hess_potential_apply_abs(m, g->q1, g->q1, t));
    for (int i = 0; i < d; i++) sc[i] += t[i];
  }
  if (k > 0) {
    LV_CHECK(lv_model_GT_apply_abs(m, g->q1, g->lam1, t));
    for (int i = 0; i < d; i++) sc[i] += t[i];
    LV_CHECK(lv_model_hessian_apply_abs(m, g->q1, g->lam1, g->q1, t));
    for (int i = 0; i < d; i++) sc[i] += t[i];
  }
  double sb = 1.0 / g->bp;
  for (int i = 0; i < d; i++) sc[i] *= sb;
  if (k == 0) return 0;
  LV_CHECK(lv_model_G_apply_abs(m, g->q1, g->q1, sc + d));
  if (g->index == 2) {
    double *sv = sc + d + k;
    LV_CHECK(lv_model_G_apply_abs(m, g->q1, g->v1, sv));
    LV_CHECK(lv_model_curvature_apply_abs(m, g->q1, g->v1, g->q1, t));
    for (int i = 0; i < k; i++) sv[i] = g->s3 * (sv[i] + t[i]);
  }
  return 0;
}

/* newton-start=exudyn with the residual-reduction test: the rows' units
 * (lv_newton_set_units), so that the test measures the residual Exudyn
 * measures, ||[M v' + g + B^T lambda; Phi (; B v)]||_2 in forces and
 * constraint values, taken before its force rows are scaled by h^2 beta
 * (ComputeNewtonResidual): here they are divided by beta'. */
static int ga_units(void *ctx, double *u) {
  genalpha *g = ctx;
  int d = g->nv, k = g->nc;
  for (int i = 0; i < d; i++) u[i] = 1.0 / g->bp;
  for (int i = 0; i < k; i++) u[d + i] = 1.0;
  if (g->index == 2)
    for (int i = 0; i < k; i++) u[d + k + i] = g->s3;
  return 0;
}

int ga_set_scale(genalpha *g) {
  if (lv_space_is_linear(g->sp) && g->nq == g->nv) lv_newton_set_scale(g->nw, ga_scale);
  return 0;
}

/* WRMS weights of the spec (§2.6): Dx against h Dq, zeta against h eta,
 * dlambda = beta' dlambda^ against lambda. */
static int ga_weights(void *ctx, const double *tol, double *w) {
  genalpha *g = ctx;
  int d = g->nv, k = g->nc;
  double at = tol[0], rt = tol[1];
  for (int i = 0; i < d; i++) w[i] = 1.0 / (at + rt * fabs(g->h * g->dq[i]));
  int o = d;
  if (g->index == 2 && k > 0) {
    for (int i = 0; i < k; i++) w[o + i] = 1.0 / (at + rt * fabs(g->h * g->eta[i]));
    o += k;
  }
  for (int i = 0; i < k; i++) w[o + i] = g->bp / (at + rt * fabs(g->lam1[i]));
  return 0;
}

/* Whether this step's Newton start extrapolates (guess option): the
 * history holds the last three steps' v', lambda, eta at this h.  At
 * h = 1e-3 on the heavy top (index 3) the constant start leaves a residual
 * of 2e-10 to 6e-10 after the first correction, the quadratic extrapolation
 * 4e-15 to 3e-13 (median 1.5e-13), below the 1e-12 tolerance: one simplified
 * Newton iteration per step instead of two.  Extrapolation follows a smooth
 * solution; where the multipliers alternate from step to step (the chain at
 * h = 0.01) it overshoots, hence auto's per-step choice, and a solve that
 * fails from an extrapolated start is repeated from the constant one. */
static int ga_guess_extrapolates(const genalpha *g, double h) {
  if (g->guess == GUESS_CONSTANT || g->start_pending || g->hist_n < 2 || g->hist_h != h) return 0;
  return g->guess == GUESS_EXTRAPOLATE || g->guess_extrap;
}

static inline double dmax(double a, double b) { return a > b ? a : b; }

/* *older takes *old's buffer, *old the former *older's with x copied in. */
static void ga_rotate(double **older, double **old, const double *x, int n) {
  double *freed = *older;
  *older = *old;
  *old = freed;
  memcpy(freed, x, (size_t)n * sizeof(double));
}

/* At the commit of a step of size h (v', lambda, eta of step n still in
 * g->vd, s->lambda, s->gamma; the solution in g->vd1, g->lam1, g->eta):
 * auto's choice for the next step, then the history shifted by one step.
 * A start's distance from the solution is max(|v'_{n+1} - start|_inf /
 * |v'_{n+1}|_inf, the same for lambda): relative per block, as the two
 * have different units.  One pass for both starts (libm's fmax is a call
 * per element: twice the cost). */
static void ga_keep_guess_history(genalpha *g, double h) {
  if (g->guess == GUESS_CONSTANT) return;
  int d = g->nv, k = g->nc;
  const double *lam = g->s->lambda, *eta = g->s->gamma;
  if (g->hist_h != h) g->hist_n = 0;
  if (g->guess == GUESS_AUTO && g->hist_n >= 2) {
    double sv = DBL_MIN, xv = 0.0, cv = 0.0, sl = DBL_MIN, xl = 0.0, cl = 0.0;
    for (int i = 0; i < d; i++) {
      double y = g->vd1[i], ex = 3.0 * (g->vd[i] - g->vdp[i]) + g->vdpp[i];
      sv = dmax(sv, fabs(y)), xv = dmax(xv, fabs(y - ex)), cv = dmax(cv, fabs(y - g->vd[i]));
    }
    for (int i = 0; i < k; i++) {
      double y = g->lam1[i], ex = 3.0 * (lam[i] - g->lamp[i]) + g->lampp[i];
      sl = dmax(sl, fabs(y)), xl = dmax(xl, fabs(y - ex)), cl = dmax(cl, fabs(y - lam[i]));
    }
    /* extrapolate where that came at most half as far: near 1 the two
     * alternate in the lead from step to step, and the extrapolation's
     * misses cost more than its hits save (the chain, N = 1000, gravity
     * 98.1, h = 0.01: 8.75 iterations per step with "closer", 7.62 with
     * "half as far", as from the constant start) */
    g->guess_extrap = dmax(xv / sv, xl / sl) < 0.5 * dmax(cv / sv, cl / sl);
  }
  /* shifted by rotating the two buffers: step n-1's becomes n-2's, and
   * step n is copied into the freed one (one copy per vector, not two) */
  ga_rotate(&g->vdpp, &g->vdp, g->vd, d);
  ga_rotate(&g->lampp, &g->lamp, lam, k);
  if (g->index == 2) ga_rotate(&g->etapp, &g->etap, eta, k);
  g->hist_h = h;
  if (g->hist_n < 2) g->hist_n++;
}

/* The step's parameters and the predictor: the first Newton iterate. */
static int ga_predict(genalpha *g, lv_stepper *st, double h, int allow_extrapolation) {
  lv_state *s = st->state;
  int d = g->nv, k = g->nc;
  double am = g->am, af = g->af, be = g->beta, ga = g->gam;
  g->h = h;
  g->t1 = s->t + h;
  g->bp = (1.0 - am) / (be * h * h * (1.0 - af));
  g->gp = ga / (be * h);
  g->s3 = 1.0;
  g->vn = s->v;
  g->an = g->a;
  if (g->start_pending) {
    LV_CHECK(ga_perturbed_start(g, h));
    g->g1_valid = 0; /* q1 served as scratch there */
    g->vn = g->vstart;
    g->an = g->astart;
  }
  const double *vn = g->vn, *an = g->an;
  /* Without projections the saddle-point factorisation is needed only by
   * the start (consistent v'0, perturbed starting values): free it before
   * the first Newton matrix is factorised (the chain at N = 10^6: 1 kB per
   * particle of a peak of 4.4 kB).  A restart after a halving makes it
   * again. */
  if (!g->project_every && g->nproj == 0) lv_saddle_release(g->saddle);

  /* Predictor: v'_{n+1} = v'_n (constant acceleration), lambda_{n+1} =
   * lambda_n, eta = eta_{n-1}, or (guess=extrapolate, auto) their
   * quadratic extrapolation; the rest from the linear relations, so that
   * every Newton iterate satisfies (9b)-(9d) exactly. */
  int ex = allow_extrapolation && ga_guess_extrapolates(g, h);
  g->extrapolated = ex;
  for (int i = 0; i < d; i++) {
    g->vd1[i] = ex ? 3.0 * (g->vd[i] - g->vdp[i]) + g->vdpp[i] : g->vd[i];
    g->a1[i] = (af * g->vd[i] - am * an[i] + (1.0 - af) * g->vd1[i]) / (1.0 - am);
    g->v1[i] = vn[i] + h * (1.0 - ga) * an[i] + ga * h * g->a1[i];
    g->dq[i] = vn[i] + (0.5 - be) * h * an[i] + be * h * g->a1[i];
  }
  for (int i = 0; i < k; i++) g->lam1[i] = ex ? 3.0 * (s->lambda[i] - g->lamp[i]) + g->lampp[i] : s->lambda[i];
  if (g->index == 2 && k > 0) {
    LV_CHECK(capture_bn(g, s->q));
    for (int i = 0; i < k; i++) g->eta[i] = ex ? 3.0 * (s->gamma[i] - g->etap[i]) + g->etapp[i] : s->gamma[i];
    memset(g->bnz, 0, (size_t)d * sizeof(double));
    ga_bn_t_apply(g, g->eta, g->bnz);
    for (int i = 0; i < d; i++) g->dq[i] -= g->bnz[i];
  }
  if (g->nstart_exudyn) {
    /* newton-start=exudyn (ablation): the start of Exudyn's
     * CSolverImplicitSecondOrderTimeInt (v1.11.0), the code behind the
     * paper's iteration counts.  Per step it (CSolverBase::Newton) sets
     * lambda = 0 ("zero Lagrange multipliers as start guess"), then
     * (ComputeNewtonUpdate, initial) a_{n+1} = (alpha_f v'_n - alpha_m a_n) /
     * (1 - alpha_m), v_{n+1} = v_n + h (1 - gamma) a_n + h gamma a_{n+1},
     * theta = h v_n + h^2 (1/2 - beta) a_n + h^2 beta a_{n+1} and v'_{n+1} = 0,
     * q_{n+1} = q_n o exp(theta) (sigma = 1 first multiplies the rotation
     * part by I - (1/2)(h beta/gamma) w^, w the predicted body angular
     * velocity: ga_sigma_predict); the same after a restart of modified
     * Newton.  Every step, also the first, starts there, whatever the
     * previous step converged to.  Exudyn's index 2 has no eta (velocity
     * constraints only); livens' stabilised index 2 starts it at 0 as well,
     * with the other algebraic unknowns. */
    for (int i = 0; i < d; i++) {
      g->vd1[i] = 0.0;
      g->a1[i] = (af * g->vd[i] - am * an[i]) / (1.0 - am);
      g->v1[i] = vn[i] + h * (1.0 - ga) * an[i] + ga * h * g->a1[i];
      g->dq[i] = vn[i] + (0.5 - be) * h * an[i] + be * h * g->a1[i];
    }
    memset(g->lam1, 0, (size_t)k * sizeof(double));
    if (g->index == 2 && k > 0) {
      memset(g->eta, 0, (size_t)k * sizeof(double));
      memset(g->bnz, 0, (size_t)d * sizeof(double));
    }
  }
  if (g->corr_paper || g->sigma != 0.0) LV_CHECK(ga_sigma_predict(g));
  LV_CHECK(lv_space_compose_exp(g->sp, s->q, h, g->dq, g->q1));
  g->g1_valid = 0; /* new iterate */
  g->g1_wanted = 1; /* the Newton matrix is formed here */
  g->r_last = NULL;
  g->mc_valid = g->mc_valid && g->mass_constant;
  return 0;
}

static int ga_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  genalpha *g = st->priv;
  const lv_model *m = g->m;
  lv_state *s = st->state;
  int d = g->nv, k = g->nc;
  double am = g->am, af = g->af;
  st->cnorm_known = 0;
  LV_CHECK(ga_predict(g, st, h, 1));
  const double *an = g->an;

  lv_newton_problem pb = {ga_residual, ga_jacobian, ga_update, ga_weights, g, g->N};
  *lv_newton_opts(g->nw) = st->newton;
  if (g->nstart_exudyn) /* Exudyn's residual norm for its test only (ga_units) */
    lv_newton_set_units(g->nw, st->newton.stop == LV_NEWTON_STOP_REDUCTION ? ga_units : NULL);
  int rc = lv_newton_solve(g->nw, &pb, 1, ns);
  if (g->extrapolated && lv_newton_failed(rc)) {
    /* Once more from the constant start: an extrapolation can land where
     * Newton does not converge although the constant start does (the chain,
     * N = 1000, gravity 98.1, h = 0.01: step 28 under guess=auto).  auto
     * then starts the next step from the constant start too. */
    lv_newton_stats again;
    memset(&again, 0, sizeof again);
    g->guess_extrap = 0;
    LV_CHECK(ga_predict(g, st, h, 0));
    rc = lv_newton_solve(g->nw, &pb, 0, &again);
    lv_newton_stats_add_restart(ns, &again);
  }
  LV_CHECK(rc);

  if (g->sigma != 0.0 && !g->corr_paper) ga_sigma_keep_correction(g);
  /* (9d) for a_{n+1} */
  for (int i = 0; i < d; i++) g->a1[i] = (af * g->vd[i] - am * an[i] + (1.0 - af) * g->vd1[i]) / (1.0 - am);

  /* Velocity projection [P2]: only v changes; a, v', lambda, q are kept. */
  int next;
  int proj = ga_projection_due(g, h, &next);
  if (proj && k > 0) {
    LV_CHECK(lv_saddle_project_v_at(g->saddle, g->t1, g->q1, g->v1)); /* onto G v = c'(t_{n+1}) */
    ns->factorizations++;
  }
  /* The divergence guard's max|g| and max|G v|: the last residual's rows
   * when Newton stopped on it (no update since), g(q1) and, index 2 with
   * an unprojected v1, G(q1) v1 (s3 = 1) -- the values lv_diag_eval would
   * compute, through the same callbacks at the same q1 and v1. */
  if (g->r_last && k > 0 && !g->driven) {
    st->cnorm[0] = lv_vnorm_inf(k, g->r_last + d);
    st->cnorm_known = 1;
    if (g->index == 2 && !proj && g->s3 == 1.0) {
      st->cnorm[1] = lv_vnorm_inf(k, g->r_last + d + k);
      st->cnorm_known |= 2;
    }
  }

  /* commit (p = M v first: the only evaluation that can still fail; a
   * constant M is the one captured, replayed in the callback's order) */
  if (g->mass_constant && g->mc_valid) {
    memset(g->tmp, 0, (size_t)d * sizeof(double));
    lv_spm_seq_matvec(&g->Mc, g->v1, g->tmp, 0);
  } else {
    LV_CHECK(lv_model_mass_apply(m, g->q1, g->v1, g->tmp));
  }
  ga_keep_guess_history(g, h);
  memcpy(s->p, g->tmp, (size_t)d * sizeof(double));
  memcpy(s->q, g->q1, (size_t)g->nq * sizeof(double));
  memcpy(s->v, g->v1, (size_t)d * sizeof(double));
  memcpy(s->lambda, g->lam1, (size_t)k * sizeof(double));
  if (g->index == 2) memcpy(s->gamma, g->eta, (size_t)k * sizeof(double));
  memcpy(g->a, g->a1, (size_t)d * sizeof(double));
  memcpy(g->vd, g->vd1, (size_t)d * sizeof(double));
  g->next_proj = next;
  g->start_pending = 0;
  return 0;
}

/* White-box check for the tests (tests/whitebox.h): the Newton matrix J at the
 * predictor of a step of size h from the current state, and Jfd, its
 * columns by central differences of the residual along the update
 * (predictor, matrix, update(+-eps e_j), residual), both N x N
 * column-major.  Every quantity the update takes from the Newton matrix
 * (Phi etc.) is the predictor's, as in the first Newton iteration.  The
 * state is not changed. */
int lv_genalpha_newton_fd(lv_stepper *st, double h, double eps, double *J, double *Jfd, int *n) {
  genalpha *g = st->priv;
  int N = g->N, rc = 0;
  *n = N;
  lv_linsol *ls = NULL;
  double *dx = lv_calloc((size_t)N, sizeof(double)), *rp = lv_calloc((size_t)N, sizeof(double)),
         *rm = lv_calloc((size_t)N, sizeof(double));
  if (!dx || !rp || !rm) rc = LV_ENOMEM;
  if (!rc) rc = lv_linsol_new(&ls, LV_LINSOL_DENSE, N, 0);
  if (!rc) rc = ga_predict(g, st, h, 1);
  if (!rc) rc = lv_linsol_begin(ls);
  if (!rc) rc = ga_jacobian(g, ls);
  for (int j = 0; j < N && !rc; j++) {
    memset(dx, 0, (size_t)N * sizeof(double));
    dx[j] = 1.0;
    rc = lv_linsol_matvec(ls, dx, J + (size_t)j * (size_t)N);
    for (int sgn = -1; sgn <= 1 && !rc; sgn += 2) {
      dx[j] = sgn * eps;
      rc = ga_predict(g, st, h, 1);
      if (!rc) rc = lv_linsol_begin(ls);
      if (!rc) rc = ga_jacobian(g, ls);
      if (!rc) rc = ga_update(g, dx);
      if (!rc) rc = ga_residual(g, sgn < 0 ? rm : rp);
    }
    for (int i = 0; i < N && !rc; i++) Jfd[i + (size_t)j * (size_t)N] = (rp[i] - rm[i]) / (2.0 * eps);
  }
  lv_linsol_free(ls);
  free(dx);
  free(rp);
  free(rm);
  return rc;
}

/* The identity into an lv_spm (the tangent block of the "simplified" matrix). */
static int fill_identity(void *ctx, lv_sink *s) {
  (void)ctx;
  for (int i = 0; i < s->nrows; i++) LV_CHECK(lv_sink_add(s, i, i, 1.0));
  return 0;
}

/* White-box check for the tests (tests/whitebox.h; spec 002 claim 6): the
 * Newton matrix of a step of size h from the current state, N x N
 * column-major, at the predictor or at the iterate x = (h Dq, v_{n+1},
 * v'_{n+1}, lambda_{n+1}) (3 nv + nc; the paper corrector and sigma = 0
 * only: the exact corrector's v is a function of theta), with the
 * scheme's own tangent block (T, P or F) or, if simplified, the identity
 * in its place (the paper's "simplified Jacobian").  The state is not
 * changed. */
int lv_genalpha_newton_matrix(lv_stepper *st, double h, const double *x, int simplified, double *J, int *n) {
  genalpha *g = st->priv;
  int N = g->N, d = g->nv, k = g->nc, rc = 0;
  *n = N;
  if (x && g->sigma != 0.0 && !g->corr_paper) return LV_EINPUT;
  lv_linsol *ls = NULL;
  double *e = lv_calloc((size_t)N, sizeof(double));
  if (!e) rc = LV_ENOMEM;
  if (!rc) rc = lv_linsol_new(&ls, LV_LINSOL_DENSE, N, 0);
  if (!rc) rc = ga_predict(g, st, h, 1);
  if (!rc && x) {
    for (int i = 0; i < d; i++) g->dq[i] = x[i] / h;
    memcpy(g->v1, x + d, (size_t)d * sizeof(double));
    memcpy(g->vd1, x + 2 * d, (size_t)d * sizeof(double));
    memcpy(g->lam1, x + 3 * d, (size_t)k * sizeof(double));
    g->g1_valid = 0;
    g->mc_valid = g->mc_valid && g->mass_constant;
    rc = lv_space_compose_exp(g->sp, st->state->q, h, g->dq, g->q1);
  }
  if (!rc) rc = lv_linsol_begin(ls);
  if (!rc && !simplified) rc = ga_jacobian(g, ls);
  if (!rc && simplified) {
    for (int i = 0; i < d; i++) g->hdq[i] = g->h * g->dq[i];
    rc = lv_spm_fill(&g->T, d, d, fill_identity, NULL);
    g->Tf = &g->T;
    if (!rc) rc = iterate_matrices(g);
    if (!rc) rc = assemble(g, lv_linsol_assembly(ls));
  }
  for (int j = 0; j < N && !rc; j++) {
    memset(e, 0, (size_t)N * sizeof(double));
    e[j] = 1.0;
    rc = lv_linsol_matvec(ls, e, J + (size_t)j * (size_t)N);
  }
  lv_linsol_free(ls);
  free(e);
  return rc;
}

/* What a step carries to the next besides the state: a, v', the sigma
 * corrector of the last step, the projection schedule, the pending start. */
static int ga_save(lv_stepper *st) {
  genalpha *g = st->priv;
  size_t d = (size_t)g->nv;
  if (!g->saved && !(g->saved = lv_calloc(3 * d + 1, sizeof(double)))) return LV_ENOMEM;
  memcpy(g->saved, g->a, d * sizeof(double));
  memcpy(g->saved + d, g->vd, d * sizeof(double));
  memcpy(g->saved + 2 * d, g->dqc, d * sizeof(double));
  g->saved_next_proj = g->next_proj;
  g->saved_start_pending = g->start_pending;
  return 0;
}

static void ga_restore(lv_stepper *st) {
  genalpha *g = st->priv;
  size_t d = (size_t)g->nv;
  if (!g->saved) return;
  memcpy(g->a, g->saved, d * sizeof(double));
  memcpy(g->vd, g->saved + d, d * sizeof(double));
  memcpy(g->dqc, g->saved + 2 * d, d * sizeof(double));
  g->next_proj = g->saved_next_proj;
  g->start_pending = g->saved_start_pending;
  g->mc_valid = g->g1_valid = 0;
  g->hist_n = 0; /* a retry with a new h: constant starts until the history is whole again */
}

/* Checkpoints (issue 17): the history of ga_save.  The int after it was
 * "the next solve must refactorise" before the integrator took over the
 * step-size change (st->newton_solver): always 0, kept so that
 * checkpoints keep their layout. */
static size_t ga_history(lv_stepper *st, double *buf, int dir) {
  genalpha *g = st->priv;
  size_t d = (size_t)g->nv;
  lv_hist hs = {buf, 0, dir};
  lv_hist_doubles(&hs, g->a, d);
  lv_hist_doubles(&hs, g->vd, d);
  lv_hist_doubles(&hs, g->dqc, d);
  lv_hist_int(&hs, &g->next_proj);
  lv_hist_int(&hs, &g->start_pending);
  int was_h_new = 0;
  lv_hist_int(&hs, &was_h_new);
  /* the guess option's history: extrapolation after a resume as without */
  lv_hist_doubles(&hs, g->vdp, d);
  lv_hist_doubles(&hs, g->vdpp, d);
  lv_hist_doubles(&hs, g->lamp, (size_t)g->nc);
  lv_hist_doubles(&hs, g->lampp, (size_t)g->nc);
  lv_hist_doubles(&hs, g->etap, (size_t)g->nc);
  lv_hist_doubles(&hs, g->etapp, (size_t)g->nc);
  lv_hist_doubles(&hs, &g->hist_h, 1);
  lv_hist_int(&hs, &g->hist_n);
  lv_hist_int(&hs, &g->guess_extrap);
  if (dir == LV_HISTORY_READ) {
    if (g->hist_n < 0 || g->hist_n > 2) g->hist_n = 0;
    g->guess_extrap = g->guess_extrap != 0;
    if (g->next_proj < 0 || g->next_proj > g->nproj) g->next_proj = g->nproj;
    g->mc_valid = g->g1_valid = 0;
  }
  return hs.n;
}

const lv_scheme_type lv_scheme_genalpha = {
    "genalpha",
    "Lie group generalized-alpha (Brüls & Cardona 2010; equation numbers of Arnold, Brüls & Cardona 2015): "
    "index 3, stabilised index 2 (GGL), "
    "velocity projection; order 2",
    "g(q) = 0 at every node (to the Newton tolerance); index=2 also G(q) v = 0; numerical "
    "dissipation of high frequencies (rho-inf)",
    2,
    LV_SCHEME_HAS_GAMMA | LV_SCHEME_SIMPLIFIED_NEWTON | LV_SCHEME_DRIVEN,
    ga_options,
    ga_create,
    ga_init,
    ga_step,
    ga_destroy,
    ga_save,
    ga_restore,
    NULL, /* a new h: the integrator invalidates st->newton_solver */
    ga_history,
};
