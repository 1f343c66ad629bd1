/* Newton's method with full, simplified (one Jacobian per solve) or modified
 * (frozen across solves) iteration, a relative residual test and an
 * optional residual-based damping for globalisation.
 *
 * What "converged" means must not change with h.  Schemes scale their rows
 * by powers of h to keep the Newton matrix O(1) (generalized-alpha divides
 * its force balance by beta' ~ 1/h^2; the VI and EM rows are positions),
 * so an absolute test on the stored rows loosens as h shrinks: at h = 1e-6
 * the heavy top's predictor passed with force residuals ~ 1 and no
 * correction at all (0.29 iterations per step, energy error 7.7e-5 where
 * 3.7e-12 is right; VI-S at h = 1e-7 ended 8.6e-2 off).  Two rules:
 *  - only an iterate reached by at least one correction passes.  The first
 *    correction of full and simplified Newton is an exact Newton step from
 *    the predictor, so an accepted step has been solved rather than
 *    guessed, with the square of the predictor's error; the cost is one
 *    iteration per step where the predictor alone would have passed (tiny
 *    h only);
 *  - a problem may give its rows units (lv_newton_set_units): row i then
 *    passes with |r_i| <= res_tol u_i, in the units of the quantity its
 *    correction moves.  EM uses it (velocity): the rule above was not
 *    enough there (energy error 4e-9 at h = 1e-7), at the price of a third
 *    iteration at h = 1e-3 (doc/guide.md).  Generalized-alpha does
 *    not: force units take a third simplified-Newton iteration at h = 1e-3
 *    (7-14% fewer steps per second, beyond check_sigma's budget of 2.5
 *    iterations per step) without changing any result there, and the rule
 *    above already holds full and simplified Newton to the scheme's order
 *    down to h = 1e-7 (tests/check_convergence.c).
 * The relative round-off test (lv_newton_set_scale) judges a row against
 * the rounding of its own terms, which no unit changes. */
#include <float.h>
#include "lv_internal.h"

struct lv_newton {
  int n;
  lv_linsol *ls;
  lv_newton_options opt;
  double *r, *dx, *w;
  double *s;        /* scale of the residual components, from scale_fn */
  double *u;        /* units of the residual components, from units_fn */
  lv_newton_scale_fn scale_fn;
  lv_newton_scale_fn units_fn;
  int have_factor;  /* a factorisation from an earlier iteration is usable */
  int r_fresh;      /* r holds the residual at the problem's current iterate (no update since) */
};

/* res_rtol = 16 DBL_EPSILON: a few ulps of the largest term, with room for
 * the rounding of the sum. */
void lv_newton_options_default(lv_newton_options *o) { *o = (lv_newton_options)LV_NEWTON_OPTIONS_INIT; }

void lv_newton_problem_init(lv_newton_problem *pb, int (*residual)(void *, double *),
                            int (*jacobian)(void *, lv_linsol *), int (*update)(void *, const double *),
                            void *ctx, int n) {
  if (pb) *pb = (lv_newton_problem)LV_NEWTON_PROBLEM_INIT(residual, jacobian, update, ctx, n);
}

int lv_newton_new(lv_newton **out, int n, lv_linsol_kind kind) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (n < 1) return LV_EINPUT;
  lv_newton *nw = lv_calloc(1, sizeof *nw);
  if (!nw) return LV_ENOMEM;
  nw->n = n;
  lv_newton_options_default(&nw->opt);
  int rc = lv_linsol_new(&nw->ls, kind, n, 0);
  nw->r = lv_calloc((size_t)n, sizeof(double));
  nw->dx = lv_calloc((size_t)n, sizeof(double));
  nw->s = lv_calloc((size_t)n, sizeof(double));
  nw->u = lv_calloc((size_t)n, sizeof(double));
  if (rc || !nw->r || !nw->dx || !nw->s || !nw->u) {
    lv_newton_free(nw);
    return rc ? rc : LV_ENOMEM;
  }
  *out = nw;
  return 0;
}

void lv_newton_free(lv_newton *nw) {
  if (!nw) return;
  lv_linsol_free(nw->ls);
  free(nw->r);
  free(nw->dx);
  free(nw->w);
  free(nw->s);
  free(nw->u);
  free(nw);
}

lv_newton_options *lv_newton_opts(lv_newton *nw) { return &nw->opt; }
lv_linsol *lv_newton_linsol(lv_newton *nw) { return nw->ls; }
void lv_newton_invalidate(lv_newton *nw) { nw->have_factor = 0; }

int lv_newton_factorises_first(const lv_newton *nw, int reuse) {
  return !reuse || nw->opt.kind != LV_NEWTON_MODIFIED || !nw->have_factor;
}
void lv_newton_set_scale(lv_newton *nw, lv_newton_scale_fn scale) {
  if (nw) nw->scale_fn = scale;
}
void lv_newton_set_units(lv_newton *nw, lv_newton_scale_fn units) {
  if (nw) nw->units_fn = units;
}

/* Evaluates the residual; *norm is its max-norm (the convergence test),
 * *norm2 its Euclidean norm (the merit function of the damped iteration:
 * the Newton direction is a descent direction for |r|_2^2, not for the
 * max-norm, so backtracking on the max-norm rejects good steps). */
static int eval_residual2(lv_newton *nw, const lv_newton_problem *pb, lv_newton_stats *st, double *norm,
                          double *norm2) {
  int rc = pb->residual(pb->ctx, nw->r);
  st->residual_evals++;
  if (rc) return rc;
  /* finiteness and the max-norm in one pass (issue 18: a third of this
   * function's cost on a 9-row problem was the second pass) */
  double m = 0.0;
  for (int i = 0; i < nw->n; i++) {
    double a = fabs(nw->r[i]);
    if (!(a <= DBL_MAX)) return LV_ENONFINITE;
    if (a > m) m = a;
  }
  *norm = m;
  if (norm2) *norm2 = sqrt(lv_vdot(nw->n, nw->r, nw->r));
  return 0;
}

static int eval_residual(lv_newton *nw, const lv_newton_problem *pb, lv_newton_stats *st, double *norm) {
  return eval_residual2(nw, pb, st, norm, NULL);
}

/* max_i |r_i| / max(res_tol u_i, res_rtol s_i): the residual in units of
 * its componentwise tolerance (<= 1: converged).  u_i = 1 without a units
 * callback, s_i = 0 without a scale, so the plain test is ||r||_inf /
 * res_tol (rnorm, already known: a per-component loop there cost 5% of
 * the steps per second of bench_genalpha --perf). */
static double residual_ratio(const lv_newton *nw, double rnorm, int have_units, int have_scale) {
  const lv_newton_options *o = &nw->opt;
  if (!have_units && !have_scale) return rnorm / o->res_tol;
  double q = 0.0;
  for (int i = 0; i < nw->n; i++) {
    double t = have_units ? o->res_tol * nw->u[i] : o->res_tol;
    if (have_scale) t = fmax(t, o->res_rtol * fabs(nw->s[i]));
    double a = fabs(nw->r[i]) / t;
    if (a > q) q = a;
  }
  return q;
}

static int factorize(lv_newton *nw, const lv_newton_problem *pb, lv_newton_stats *st) {
  nw->have_factor = 0;
  LV_CHECK(lv_linsol_begin(nw->ls));
  LV_CHECK(pb->jacobian(pb->ctx, nw->ls));
  LV_CHECK(lv_linsol_factor(nw->ls));
  st->factorizations++;
  nw->have_factor = 1;
  return 0;
}

int lv_newton_solve(lv_newton *nw, const lv_newton_problem *pb, int reuse, lv_newton_stats *stats) {
  lv_newton_stats st;
  memset(&st, 0, sizeof st);
  if (!nw || !pb || pb->n != nw->n || !pb->residual || !pb->jacobian || !pb->update) return LV_EINPUT;
  const lv_newton_options *o = &nw->opt;
  int n = nw->n, rc = 0;
  int full = o->kind == LV_NEWTON_FULL;
  if (!reuse || full || o->kind == LV_NEWTON_SIMPLIFIED) nw->have_factor = 0;
  double rnorm = 0.0, rmin = HUGE_VAL, dprev = 0.0, rprev = HUGE_VAL;
  double rbest = HUGE_VAL; /* the residual's best, lowered by tenths (stall test) */
  double dmax = 0.0;       /* the largest correction of this solve (stall test) */
  int since_min = 0;       /* corrected iterates since rbest was last lowered */
  int refactor = !nw->have_factor;
  double tol_pair[2] = {o->atol, o->rtol};
  nw->r_fresh = 0;

  double r2 = 0.0; /* Euclidean norm of the current residual (damping) */
  int have_scale = 0; /* nw->s holds the problem's residual scale for this solve */
  int have_units = 0; /* nw->u holds the problem's residual units for this solve */
  if (o->res_tol > 0 && nw->units_fn) {
    rc = nw->units_fn(pb->ctx, nw->u);
    if (rc) goto done;
    for (int i = 0; i < n; i++)
      if (!(nw->u[i] > 0.0) || !isfinite(nw->u[i])) { rc = LV_ENONFINITE; goto done; }
    have_units = 1;
  }
  /* w (weights, damped corrections) comes with the first solve that needs
   * it: one n-vector less for the schemes that use neither (EM, VI-A: 4 MB
   * on the chain at N = 1e5) */
  if ((pb->weights || o->damping) && !nw->w && !(nw->w = lv_calloc((size_t)n, sizeof(double)))) {
    rc = LV_ENOMEM;
    goto done;
  }
  int reduce = o->stop == LV_NEWTON_STOP_REDUCTION;
  double r0 = 0.0, rlast = 0.0; /* reduction test: the reference residual, the previous one */
  for (;;) {
    rc = eval_residual2(nw, pb, &st, &rnorm, (o->damping || reduce) ? &r2 : NULL); /* r2: damping, reduction */
    if (rc) break;
    nw->r_fresh = 1;
    st.residual_norm = rnorm;
    /* Only a corrected iterate can pass (see the file comment): the
     * predictor is judged, and corrected, like any other iterate. */
    int corrected = st.iterations >= 1;
    if (reduce) {
      /* Exudyn's test (lv_newton.h), nothing else: the reference is the
       * predictor's residual (at least 2 atol), or the first corrected
       * one where that is larger */
      int k = st.iterations;
      double rr = r2; /* the norm the test judges */
      if (have_units) { /* the equations in their own units (lv_newton.h) */
        double q = 0.0;
        for (int i = 0; i < n; i++) q += (nw->r[i] / nw->u[i]) * (nw->r[i] / nw->u[i]);
        rr = sqrt(q);
      }
      if (k == 0) r0 = rlast = fmax(rr, 2.0 * o->atol);
      if (k == 1 && rr > r0) r0 = rlast = rr;
      if (k >= 1 && (rr <= o->rtol * r0 || rr <= o->atol)) break;
      if (k >= 1 && !full) {
        /* refactorise beyond max_frozen corrections of this solve, and
         * from the third on where the residual contracts slower than
         * reuse_rate */
        if (o->max_frozen > 0 && k > o->max_frozen) refactor = 1;
        if (k > 2 && rr > o->reuse_rate * rlast) refactor = 1;
      }
      if (k >= 1) rlast = rr;
    } else { /* the default tests */
      if (o->res_tol > 0 && corrected) {
        double unit_ratio = residual_ratio(nw, rnorm, have_units, 0);
        if (unit_ratio <= 1.0) { /* converged */
          st.residual_ratio = unit_ratio;
          break;
        }
      }
      /* The scale is taken after the first correction (the predictor is
       * hardly ever within round-off of the solution) and taken again where
       * the residual stops halving: the first correction can leave a term
       * far from its final size (EM's multiplier a stays 0 after the first
       * correction from Delta = 0, 5e-3 at the solution), and a stalled
       * residual is judged against the rounding of the iterate it stalled
       * at.  Refreshing only at a stall keeps the cost off the iterations
       * that converge. */
      if (o->res_tol > 0 && o->res_rtol > 0 && nw->scale_fn && st.iterations >= 1 &&
          (!have_scale || rnorm > 0.5 * rprev)) {
        rc = nw->scale_fn(pb->ctx, nw->s);
        if (rc) break;
        if (!lv_all_finite(n, nw->s)) { rc = LV_ENONFINITE; break; }
        have_scale = 1;
      }
      double ratio = o->res_tol > 0 ? residual_ratio(nw, rnorm, have_units, have_scale) : HUGE_VAL;
      st.residual_ratio = o->res_tol > 0 ? ratio : 0.0;
      if (ratio <= 1.0 && corrected) { /* converged by the relative part of the test */
        st.scaled = 1;
        break;
      }
      /* Round-off floor: a residual within 100x of the tolerance that no
       * longer halves per iteration cannot be reduced further; accept it
       * rather than report a failure that is only about the last digits. */
      if (st.iterations >= 2 && ratio <= 100.0 && rnorm > 0.5 * rprev) break;
    }
    rprev = rnorm;
    if (rnorm < rmin) rmin = rnorm;
    /* Stall: LV_NEWTON_STALL corrections without lowering the residual by
     * a tenth below its best, while it stays within 4x of it (growing is
     * the divergence test's business) and while the corrections are a
     * millionth of the largest of this solve: the iteration has converged
     * in x but not in the residual, and further corrections only repeat
     * the round-off (chain N = 1e5 before EM's scale: 35 more iterations
     * of 2 s each, none below 8.3e-12, increments 2e-9 after 1.4e-2).  A
     * residual that wanders with O(1) corrections (a step too large for
     * the iteration) is not a stall. */
    if (rnorm <= 0.9 * rbest) {
      rbest = rnorm;
      since_min = 0;
    } else if (rnorm > 4.0 * rbest || st.increment_norm > 1e-6 * dmax) {
      since_min = 0;
    } else if (corrected && ++since_min >= LV_NEWTON_STALL) {
      st.stalled = 1;
      rc = LV_ENEWTON;
      break;
    }
    if (rnorm > o->divergence * rmin && rnorm > 1.0) { rc = LV_EDIVERGE; break; }
    if (st.iterations >= o->max_iter) { rc = LV_ENEWTON; break; }

    if (full || refactor || !nw->have_factor) {
      rc = factorize(nw, pb, &st);
      if (rc) break;
      refactor = 0;
    }
    for (int i = 0; i < n; i++) nw->dx[i] = -nw->r[i];
    rc = lv_linsol_solve(nw->ls, nw->dx);
    if (rc) break;
    /* The weights are taken at the iterate before the update, like the
     * usual WRMS tests of implicit integrators. */
    int have_w = pb->weights && pb->weights(pb->ctx, tol_pair, nw->w) == 0;
    nw->r_fresh = 0;
    rc = pb->update(pb->ctx, nw->dx);
    if (rc) break;
    st.iterations++;

    if (o->damping) {
      /* Backtracking on the residual max-norm: shorten the correction by
       * halves while it does not decrease.  Additive and exponential
       * updates along one direction compose exactly, so stepping back by
       * -alpha/2 dx realises the shortened correction. */
      /* Armijo condition on |r|_2: sufficient decrease along the Newton
       * direction, whose directional derivative of |r|_2 is -|r|_2. */
      double alpha = 1.0, rnew = 0.0, rnew2 = 0.0;
      rc = eval_residual2(nw, pb, &st, &rnew, &rnew2);
      int tries = 0;
      while ((rc == LV_ENONFINITE || (!rc && rnew2 > (1.0 - 1e-4 * alpha) * r2)) && tries < 12) {
        alpha *= 0.5;
        for (int i = 0; i < n; i++) nw->w[i] = -alpha * nw->dx[i];
        rc = pb->update(pb->ctx, nw->w);
        if (rc) break;
        rc = eval_residual2(nw, pb, &st, &rnew, &rnew2);
        tries++;
        st.damped++;
      }
      if (rc) break;
      for (int i = 0; i < n; i++) nw->dx[i] *= alpha;
      have_w = 0; /* weights were overwritten; fall back to the residual test */
    }

    double dnorm = lv_vnorm_inf(n, nw->dx);
    st.increment_norm = dnorm;
    if (dnorm > dmax) dmax = dnorm;
    st.contraction = dprev > 0 ? dnorm / dprev : 0.0;
    if (!full && !reduce && dprev > 0 && st.contraction > o->reuse_rate) refactor = 1;
    dprev = dnorm;
    if (have_w && !reduce) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += (nw->dx[i] * nw->w[i]) * (nw->dx[i] * nw->w[i]);
      if (sqrt(s / n) <= 1.0) break; /* converged on the increment */
    }
  }
done:
  if (rc == LV_ESINGULAR || rc == LV_ENONFINITE) nw->have_factor = 0;
  if (stats) *stats = st;
  return rc;
}

int lv_newton_polish(lv_newton *nw, const lv_newton_problem *pb, int max_corrections, lv_newton_stats *stats) {
  lv_newton_polish_policy p = {max_corrections, LV_POLISH_RESIDUAL, 0.5, NULL, NULL, 0.0, 1, 0, 0};
  return lv_newton_polish_with(nw, pb, &p, stats);
}

/* The one post-convergence polish (issue 19): corrections with the kept
 * factorisation, stopped by the policy's measure (lv_internal.h). */
int lv_newton_polish_with(lv_newton *nw, const lv_newton_problem *pb, lv_newton_polish_policy *p,
                          lv_newton_stats *stats) {
  if (!nw || !pb || !p || pb->n != nw->n) return LV_EINPUT;
  p->rolled_back = 0;
  if (!nw->have_factor) return 0; /* nothing to polish with */
  if (p->measure != LV_POLISH_RESIDUAL && !p->x) return LV_EINPUT;
  lv_newton_stats st;
  memset(&st, 0, sizeof st);
  int n = nw->n, rc = 0;
  double prev = HUGE_VAL;
  /* The residual a converged solve ended with is the one at the iterate
   * being polished: taken instead of evaluated again when the caller says
   * nothing has changed since (reuse_residual). */
  int have_r = p->reuse_residual && nw->r_fresh;
  nw->r_fresh = 0;
  if (p->measure == LV_POLISH_RESIDUAL) {
    double rnorm = 0.0;
    for (int k = 0; k < p->max_corrections; k++) {
      rc = eval_residual(nw, pb, &st, &rnorm);
      if (rc) break;
      /* stop at the round-off floor: no halving means no further digits */
      if (rnorm == 0.0 || rnorm > p->gain * prev) break;
      prev = rnorm;
      for (int i = 0; i < n; i++) nw->dx[i] = -nw->r[i];
      rc = lv_linsol_solve(nw->ls, nw->dx);
      if (rc) break;
      rc = pb->update(pb->ctx, nw->dx);
      if (rc) break;
      st.iterations++;
    }
  } else if (p->measure == LV_POLISH_INCREMENT) {
    for (int k = 0; k < p->max_corrections; k++) {
      if (!have_r) {
        rc = pb->residual(pb->ctx, nw->r);
        if (rc) break;
        st.residual_evals++;
      }
      have_r = 0;
      rc = lv_linsol_solve(nw->ls, nw->r);
      if (rc) break;
      double dn = lv_vnorm_inf(n, nw->r);
      if (!(dn <= p->gain * prev)) break; /* no longer contracting */
      int changed = 0;
      for (int i = 0; i < n; i++) {
        nw->dx[i] = -nw->r[i];
        if (p->x[i] + nw->dx[i] != p->x[i]) changed = 1;
      }
      rc = pb->update(pb->ctx, nw->dx);
      if (rc) break;
      st.iterations++;
      if (!changed) break; /* round-off: the iterate no longer moves */
      prev = dn;
    }
  } else { /* LV_POLISH_CHECKED: the corrections go through r, so dx can hold the copy */
    double *xsave = p->xsave ? p->xsave : nw->dx;
    rc = have_r ? 0 : pb->residual(pb->ctx, nw->r);
    if (!rc && !have_r) st.residual_evals++;
    double r0 = rc ? 0.0 : lv_vnorm_inf(n, nw->r);
    for (int k = 0; k < p->max_corrections && !rc; k++) {
      memcpy(xsave, p->x, (size_t)n * sizeof(double));
      if (lv_linsol_solve(nw->ls, nw->r)) break;
      for (int i = 0; i < n; i++) nw->r[i] = -nw->r[i];
      pb->update(pb->ctx, nw->r);
      rc = pb->residual(pb->ctx, nw->r);
      if (rc) break;
      st.residual_evals++;
      double r1 = lv_vnorm_inf(n, nw->r);
      if (!(r1 <= fmax(r0, p->floor))) { /* worse than converged: undone */
        memcpy(p->x, xsave, (size_t)n * sizeof(double));
        p->rolled_back = 1;
        break;
      }
      st.iterations++;
      if (stats) stats->residual_norm = r1;
      if (r1 > p->gain * r0) break; /* at the rounding floor */
      r0 = r1;
    }
  }
  if (stats) {
    if (p->count_iterations) stats->iterations += st.iterations;
    stats->residual_evals += st.residual_evals;
  }
  return rc;
}
