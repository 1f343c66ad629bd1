/* Newton solver: quadratic convergence, modified Newton, damping, failures. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "lv_internal.h" /* lv_newton_polish_with (internal) */
#include "testutil.h"

/* F(x) = (x0^2 + x1^2 - 4, exp(x0) + x1 - 1): two roots, regular Jacobian. */
typedef struct {
  double x[2];
  double hist[64];
  int nh;
  int nan_at;   /* evaluation index at which the residual becomes NaN (-1: never) */
  int singular; /* assemble a singular Jacobian */
  double floor; /* |offset| of r0, alternating in sign per evaluation: a residual floor */
  int evals;
} prob;

static int res(void *ctx, double *r) {
  prob *p = ctx;
  r[0] = p->x[0] * p->x[0] + p->x[1] * p->x[1] - 4.0;
  r[1] = exp(p->x[0]) + p->x[1] - 1.0;
  if (p->floor > 0) r[0] += (p->evals % 2 ? -p->floor : p->floor);
  if (p->evals++ == p->nan_at) r[1] = NAN;
  if (p->nh < 64) p->hist[p->nh++] = fmax(fabs(r[0]), fabs(r[1]));
  return 0;
}

static int jac(void *ctx, lv_linsol *ls) {
  prob *p = ctx;
  if (p->singular) {
    lv_linsol_add(ls, 0, 0, 1.0);
    lv_linsol_add(ls, 0, 1, 2.0);
    lv_linsol_add(ls, 1, 0, 2.0);
    lv_linsol_add(ls, 1, 1, 4.0);
    return 0;
  }
  lv_linsol_add(ls, 0, 0, 2 * p->x[0]);
  lv_linsol_add(ls, 0, 1, 2 * p->x[1]);
  lv_linsol_add(ls, 1, 0, exp(p->x[0]));
  lv_linsol_add(ls, 1, 1, 1.0);
  return 0;
}

static int upd(void *ctx, const double *dx) {
  prob *p = ctx;
  p->x[0] += dx[0];
  p->x[1] += dx[1];
  return 0;
}

static void prob_init(prob *p, double x0, double x1) {
  p->x[0] = x0;
  p->x[1] = x1;
  p->nh = 0;
  p->nan_at = -1;
  p->singular = 0;
  p->floor = 0.0;
  p->evals = 0;
}

START_TEST(test_quadratic) {
  for (int kind = 0; kind < 2; kind++) {
    lv_newton *nw;
    ck_assert_int_eq(lv_newton_new(&nw, 2, kind ? LV_LINSOL_UMFPACK : LV_LINSOL_DENSE), 0);
    lv_newton_opts(nw)->res_tol = 1e-14;
    prob p;
    prob_init(&p, 1.0, -1.0);
    lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
    lv_newton_stats st;
    ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
    ck_assert_double_le(st.residual_norm, 1e-14);
    /* Quadratic convergence: r_{k+1} <= C r_k^2 with a moderate C once in
     * the basin, and the ratio r_{k+1}/r_k itself shrinks. */
    int checked = 0;
    for (int k = 1; k + 1 < p.nh; k++) {
      if (p.hist[k] > 1e-2 || p.hist[k + 1] < 1e-13) continue;
      double c = p.hist[k + 1] / (p.hist[k] * p.hist[k]);
      ck_assert_msg(c < 10.0, "r_{k+1}/r_k^2 = %g at k = %d", c, k);
      ck_assert_double_lt(p.hist[k + 1] / p.hist[k], 0.5 * p.hist[k] / p.hist[k - 1] + 1e-3);
      checked++;
    }
    ck_assert_int_ge(checked, 1);
    ck_assert_int_eq(st.factorizations, st.iterations);
    lv_newton_free(nw);
  }
}
END_TEST

START_TEST(test_modified) {
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
  lv_newton_options *o = lv_newton_opts(nw);
  o->kind = LV_NEWTON_MODIFIED;
  o->res_tol = 1e-13;
  o->reuse_rate = 0.5;
  prob p;
  prob_init(&p, -1.8, 0.8);
  lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
  lv_newton_stats st;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
  ck_assert_int_lt(st.factorizations, st.iterations);
  /* second solve from a nearby start reuses the kept factorisation */
  p.x[0] += 1e-3;
  lv_newton_stats st2;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 1, &st2), 0);
  ck_assert_int_eq(st2.factorizations, 0);
  ck_assert_double_le(st2.residual_norm, 1e-13);
  lv_newton_free(nw);
}
END_TEST

START_TEST(test_failures) {
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
  prob p;
  lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
  lv_newton_stats st;
  prob_init(&p, 1.0, -1.0);
  lv_newton_opts(nw)->max_iter = 2;
  lv_newton_opts(nw)->res_tol = 1e-15;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), LV_ENEWTON);
  ck_assert_int_eq(st.iterations, 2);
  lv_newton_opts(nw)->max_iter = 40;
  prob_init(&p, 1.0, -1.0);
  p.singular = 1;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), LV_ESINGULAR);
  prob_init(&p, 1.0, -1.0);
  p.nan_at = 2;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), LV_ENONFINITE);
  ck_assert_int_eq(lv_newton_new(&(lv_newton *){NULL}, 0, LV_LINSOL_DENSE), LV_EINPUT);
  lv_newton_free(nw);
}
END_TEST

/* A residual with a floor no correction removes (an offset of 1e-10 that
 * flips sign with every evaluation, as round-off does): the solve stops as
 * stalled after LV_NEWTON_STALL flat corrections, not after max_iter, and
 * says how far above its tolerance it stalled. */
START_TEST(test_stall) {
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
  prob p;
  lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
  lv_newton_stats st;
  prob_init(&p, 1.0, -1.0);
  p.floor = 1e-10;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), LV_ENEWTON);
  ck_assert_int_eq(st.stalled, 1);
  ck_assert_int_lt(st.iterations, 20);
  ck_assert_msg(st.residual_ratio > 100.0 && st.residual_ratio < 1e3, "ratio %g", st.residual_ratio);
  /* max_iter reached on a converging iteration is not a stall */
  prob_init(&p, 1.0, -1.0);
  lv_newton_opts(nw)->max_iter = 2;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), LV_ENEWTON);
  ck_assert_int_eq(st.stalled, 0);
  /* without the floor the same solve converges */
  lv_newton_opts(nw)->max_iter = 40;
  prob_init(&p, 1.0, -1.0);
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
  ck_assert_int_eq(st.stalled, 0);
  ck_assert(st.residual_ratio <= 1.0);
  lv_newton_free(nw);
}
END_TEST

/* A solve accepted at a loose tolerance: not yet at round-off. */
static void loose_solve(lv_newton *nw, prob *p, const lv_newton_problem *pb, lv_newton_stats *st) {
  lv_newton_opts(nw)->res_tol = 1e-4;
  prob_init(p, 1.0, -1.0);
  ck_assert_int_eq(lv_newton_solve(nw, pb, 0, st), 0);
  double r[2];
  res(p, r);
  ck_assert_double_gt(fmax(fabs(r[0]), fabs(r[1])), 1e-12);
}

/* Polishing: a solve accepted at a loose tolerance is brought to round-off
 * by corrections with the kept factorisation. */
START_TEST(test_polish) {
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
  prob p;
  lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
  lv_newton_stats st;
  loose_solve(nw, &p, &pb, &st);
  double r[2];
  int it0 = st.iterations;
  ck_assert_int_eq(lv_newton_polish(nw, &pb, 5, &st), 0);
  res(&p, r);
  ck_assert_double_lt(fmax(fabs(r[0]), fabs(r[1])), 1e-14);
  ck_assert_int_gt(st.iterations, it0);
  ck_assert_int_le(st.iterations, it0 + 5);

  /* The other policies (lv_newton_polish_with): INCREMENT reaches round-off
   * and ends when the iterate no longer moves, without counting iterations;
   * CHECKED undoes a correction that makes the residual worse than before
   * (a residual floor alternating in sign: the correction aimed at +f meets
   * -f, |r| doubles), x restored bit for bit, and keeps it when the floor
   * parameter tolerates it. */
  loose_solve(nw, &p, &pb, &st);
  it0 = st.iterations;
  int ev0 = st.residual_evals;
  lv_newton_polish_policy inc = {12, LV_POLISH_INCREMENT, 0.5, p.x, NULL, 0.0, 0, 0, 0};
  ck_assert_int_eq(lv_newton_polish_with(nw, &pb, &inc, &st), 0);
  res(&p, r);
  ck_assert_double_lt(fmax(fabs(r[0]), fabs(r[1])), 1e-14);
  ck_assert_int_eq(st.iterations, it0);
  ck_assert_int_gt(st.residual_evals, ev0 + 1);
  ck_assert_int_lt(st.residual_evals, ev0 + 12); /* stopped early: x no longer moved */
  ck_assert_int_eq(inc.rolled_back, 0);
  /* at the root, a floor of 1e-6 alternating in sign */
  p.floor = 1e-6;
  double x0[2] = {p.x[0], p.x[1]}, xs[2];
  lv_newton_polish_policy chk = {4, LV_POLISH_CHECKED, 0.25, p.x, xs, 0.0, 0, 0, 0};
  ck_assert_int_eq(lv_newton_polish_with(nw, &pb, &chk, &st), 0);
  ck_assert_int_eq(chk.rolled_back, 1);
  ck_assert(p.x[0] == x0[0] && p.x[1] == x0[1]);
  /* without xsave the copy is kept in the solver's own vector: the same */
  lv_newton_polish_policy chk0 = {4, LV_POLISH_CHECKED, 0.25, p.x, NULL, 0.0, 0, 0, 0};
  ck_assert_int_eq(lv_newton_polish_with(nw, &pb, &chk0, &st), 0);
  ck_assert_int_eq(chk0.rolled_back, 1);
  ck_assert(p.x[0] == x0[0] && p.x[1] == x0[1]);
  chk.floor = 1e-5; /* residuals up to 1e-5 are not "worse" */
  ck_assert_int_eq(lv_newton_polish_with(nw, &pb, &chk, &st), 0);
  ck_assert_int_eq(chk.rolled_back, 0);
  ck_assert(p.x[0] != x0[0] || p.x[1] != x0[1]);
  ck_assert_double_lt(st.residual_norm, 1e-5);
  ck_assert_double_gt(st.residual_norm, 1e-6); /* 2e-6: one correction, kept, then at the floor */
  /* a policy needing x without one is refused */
  lv_newton_polish_policy bad = {4, LV_POLISH_CHECKED, 0.25, NULL, xs, 0.0, 0, 0, 0};
  ck_assert_int_eq(lv_newton_polish_with(nw, &pb, &bad, &st), LV_EINPUT);
  lv_newton_free(nw);
}
END_TEST

/* atan(x) = 0 from x0 = 3: plain Newton overshoots and diverges, the damped
 * (globalised) iteration converges. */
static double ax;
static int ares(void *c, double *r) { (void)c; r[0] = atan(ax); return 0; }
static int ajac(void *c, lv_linsol *ls) { (void)c; return lv_linsol_add(ls, 0, 0, 1.0 / (1.0 + ax * ax)); }
static int aupd(void *c, const double *dx) { (void)c; ax += dx[0]; return 0; }

START_TEST(test_damping) {
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 1, LV_LINSOL_DENSE), 0);
  lv_newton_problem pb = {ares, ajac, aupd, NULL, NULL, 1};
  lv_newton_stats st;
  ax = 3.0;
  int rc = lv_newton_solve(nw, &pb, 0, &st);
  ck_assert(rc == LV_EDIVERGE || rc == LV_ENEWTON || rc == LV_ENONFINITE || rc == LV_ESINGULAR);
  lv_newton_opts(nw)->damping = 1;
  ax = 3.0;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
  ck_assert_double_lt(fabs(ax), 1e-12);
  ck_assert_int_gt(st.damped, 0);
  lv_newton_free(nw);
}
END_TEST

/* A unit distance from the point (X, 0), far from the origin:
 *   r0 = ((x0 - X)^2 + x1^2 - 1) / 2,   r1 = x1 - 0.75 (x0 - X),
 * solution x0 = X + 0.8, x1 = 0.6.  The iterate x0 is known only to
 * ulp(X), so the residual cannot go below ~ eps X: for X >= 1e6 that floor
 * is above the absolute tolerance 1e-12.  Its scale (the magnitudes of the
 * terms, as lv_newton_set_scale asks) is |x0 - X| (|x0| + |X|) + x1^2 for
 * r0 and |x1| + 0.75 (|x0| + |X|) for r1. */
typedef struct {
  double X, x[2];
  int scale_calls;
} far_prob;

static int far_res(void *ctx, double *r) {
  far_prob *p = ctx;
  double u = p->x[0] - p->X;
  r[0] = 0.5 * (u * u + p->x[1] * p->x[1] - 1.0);
  r[1] = p->x[1] - 0.75 * u;
  return 0;
}

static int far_jac(void *ctx, lv_linsol *ls) {
  far_prob *p = ctx;
  lv_linsol_add(ls, 0, 0, p->x[0] - p->X);
  lv_linsol_add(ls, 0, 1, p->x[1]);
  lv_linsol_add(ls, 1, 0, -0.75);
  lv_linsol_add(ls, 1, 1, 1.0);
  return 0;
}

static int far_upd(void *ctx, const double *dx) {
  far_prob *p = ctx;
  p->x[0] += dx[0];
  p->x[1] += dx[1];
  return 0;
}

static int far_scale(void *ctx, double *s) {
  far_prob *p = ctx;
  double u = fabs(p->x[0] - p->X), a = fabs(p->x[0]) + fabs(p->X);
  s[0] = u * a + p->x[1] * p->x[1] + 1.0;
  s[1] = fabs(p->x[1]) + 0.75 * a;
  p->scale_calls++;
  return 0;
}

/* Solve from (X + 1, 0.3); returns the status, fills stats. */
static int far_solve(double X, int with_scale, double res_rtol, far_prob *p, lv_newton_stats *st) {
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
  if (with_scale) lv_newton_set_scale(nw, far_scale);
  lv_newton_opts(nw)->res_rtol = res_rtol;
  p->X = X;
  p->x[0] = X + 1.0;
  p->x[1] = 0.3;
  p->scale_calls = 0;
  lv_newton_problem pb = {far_res, far_jac, far_upd, NULL, p, 2};
  int rc = lv_newton_solve(nw, &pb, 0, st);
  lv_newton_free(nw);
  return rc;
}

/* The relative residual test: a problem whose round-off floor grows with
 * |x| converges in the iterations of the same problem at the origin, where
 * the absolute test alone needs extra iterations or fails; at the origin
 * the scale changes nothing and the residual meets 1e-12. */
START_TEST(test_relative_residual) {
  lv_newton_options def;
  lv_newton_options_default(&def);
  ck_assert_double_eq(def.res_tol, 1e-12);
  ck_assert(def.res_rtol > 0 && def.res_rtol <= 1e-14);

  /* reference: the same problem at the origin, absolute test */
  far_prob p;
  lv_newton_stats st0, st;
  ck_assert_int_eq(far_solve(0.0, 0, def.res_rtol, &p, &st0), 0);
  ck_assert_double_le(st0.residual_norm, 1e-12);
  ck_assert_int_eq(st0.scaled, 0);
  ck_assert_int_ge(st0.iterations, 4); /* a real iteration, not a lucky start */

  /* at the origin with the scale: identical iterations, still <= 1e-12 */
  ck_assert_int_eq(far_solve(0.0, 1, def.res_rtol, &p, &st), 0);
  ck_assert_int_eq(st.iterations, st0.iterations);
  ck_assert_double_le(st.residual_norm, 1e-12);
  ck_assert_int_eq(st.scaled, 0);
  ck_assert_int_eq(p.scale_calls, 1); /* once per solve, after the first correction */

  const double Xs[3] = {1e6, 1e7, 1e8};
  for (int k = 0; k < 3; k++) {
    double X = Xs[k], floor_est = DBL_EPSILON * X;
    /* with the scale: at most the iterations of the origin (one fewer
     * where the origin needs its last iteration only to get from the floor
     * of X down to 1e-12), accepted by the relative part, the residual
     * within a few ulps of X and the solution right to ulp(X) */
    ck_assert_int_eq(far_solve(X, 1, def.res_rtol, &p, &st), 0);
    ck_assert_msg(st.iterations <= st0.iterations && st.iterations >= st0.iterations - 1,
                  "X = %g: %d iterations (origin: %d)", X, st.iterations, st0.iterations);
    ck_assert_int_eq(st.scaled, 1);
    ck_assert_int_eq(p.scale_calls, 1);
    ck_assert_double_gt(st.residual_norm, 1e-12);
    ck_assert_double_le(st.residual_norm, 16.0 * floor_est);
    ck_assert_double_le(fabs((p.x[0] - X) - 0.8), 4.0 * floor_est);
    ck_assert_double_le(fabs(p.x[1] - 0.6), 4.0 * floor_est);
    int scaled_iters = st.iterations;
    /* absolute test only (res_rtol = 0): the floor is above 1e-12, so the
     * solve pays at least one more iteration (stopping by the stagnation
     * rule within 100 res_tol) or, with the floor beyond that, fails */
    int rc = far_solve(X, 1, 0.0, &p, &st);
    ck_assert_msg(rc == LV_ENEWTON || (rc == 0 && st.iterations > scaled_iters),
                  "X = %g: absolute test rc %d after %d iterations (relative: %d)", X, rc, st.iterations,
                  scaled_iters);
    ck_assert_int_eq(st.scaled, 0);
  }
}
END_TEST

/* A small problem with a scale is held to res_tol exactly: the relative
 * part only acts where res_rtol s_i exceeds res_tol. */
static int small_scale(void *ctx, double *s) {
  prob *p = ctx;
  s[0] = p->x[0] * p->x[0] + p->x[1] * p->x[1] + 4.0;
  s[1] = exp(p->x[0]) + fabs(p->x[1]) + 1.0;
  return 0;
}

START_TEST(test_relative_small) {
  const double tols[2] = {1e-12, 1e-14};
  for (int t = 0; t < 2; t++) {
    lv_newton *nw;
    ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
    lv_newton_set_scale(nw, small_scale);
    lv_newton_opts(nw)->res_tol = tols[t];
    /* with res_tol 1e-14 the default res_rtol would pass residuals up to
     * 16 eps s ~ 2e-14 here; a user asking for 1e-14 sets res_rtol below
     * res_tol / max s */
    if (t == 1) lv_newton_opts(nw)->res_rtol = 1e-16;
    prob p;
    prob_init(&p, 1.0, -1.0);
    lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
    lv_newton_stats st;
    ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
    ck_assert_double_le(st.residual_norm, tols[t]);
    ck_assert_int_eq(st.scaled, 0);
    lv_newton_free(nw);
  }
}
END_TEST

/* The options' initialiser and lv_newton_options_default agree, and give the
 * defaults lv_newton.h documents. */
START_TEST(test_options_init) {
  lv_newton_options a = LV_NEWTON_OPTIONS_INIT, b;
  memset(&b, 0xff, sizeof b);
  lv_newton_options_default(&b);
  const lv_newton_options *o[2] = {&a, &b};
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(o[k]->kind, LV_NEWTON_FULL);
    ck_assert_int_eq(o[k]->max_iter, 40);
    ck_assert_double_eq(o[k]->res_tol, 1e-12);
    ck_assert_double_eq(o[k]->res_rtol, 16.0 * DBL_EPSILON);
    ck_assert_double_eq(o[k]->atol, 1e-12);
    ck_assert_double_eq(o[k]->rtol, 1e-8);
    ck_assert_double_eq(o[k]->reuse_rate, 0.3);
    ck_assert_double_eq(o[k]->divergence, 1e8);
    ck_assert_int_eq(o[k]->damping, 0);
    ck_assert_int_eq(o[k]->stop, LV_NEWTON_STOP_DEFAULT);
    ck_assert_int_eq(o[k]->max_frozen, 0);
  }
}
END_TEST

/* The residual-reduction test (Exudyn's): the solve stops at the first
 * corrected iterate with |r|_2 <= rtol r_ref or |r|_2 <= atol, r_ref the
 * first residual or the one after the first correction where larger, and
 * at no other; counted here by an independent Newton loop on the same
 * problem (2 x 2, Cramer's rule).  max_frozen: modified Newton refactorises
 * at every correction beyond max_frozen. */
static void indep_newton(double *x, double *r) {
  double J[4] = {2 * x[0], 2 * x[1], exp(x[0]), 1.0}, d = J[0] * J[3] - J[1] * J[2];
  double dx0 = -(r[0] * J[3] - J[1] * r[1]) / d, dx1 = -(J[0] * r[1] - J[2] * r[0]) / d;
  x[0] += dx0, x[1] += dx1;
}

START_TEST(test_stop_reduction) {
  const double rtols[3] = {1e-2, 1e-5, 1e-9}, x0[2][2] = {{1.0, -1.0}, {-0.5, 1.5}};
  for (int c = 0; c < 6; c++) {
    /* independent count; from (-0.5, 1.5) the first correction raises the
     * residual (1.86 -> 2.98), so r_ref is the residual after it */
    const double *xs = x0[c / 3], rt = rtols[c % 3];
    double x[2] = {xs[0], xs[1]}, r[2], rref = 0.0;
    int its = 0, adapted = 0;
    for (;;) {
      r[0] = x[0] * x[0] + x[1] * x[1] - 4.0, r[1] = exp(x[0]) + x[1] - 1.0;
      double n2 = sqrt(r[0] * r[0] + r[1] * r[1]);
      if (its == 0) rref = n2;
      if (its == 1 && n2 > rref) rref = n2, adapted = 1;
      if (its > 0 && (n2 <= rt * rref || n2 <= 1e-300)) break;
      indep_newton(x, r);
      its++;
    }
    ck_assert_int_eq(adapted, c / 3);
    lv_newton *nw;
    ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
    lv_newton_options *o = lv_newton_opts(nw);
    o->stop = LV_NEWTON_STOP_REDUCTION;
    o->rtol = rt;
    o->atol = 1e-300;
    prob p;
    prob_init(&p, xs[0], xs[1]);
    lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
    lv_newton_stats st;
    ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
    ck_assert_int_eq(st.iterations, its);
    ck_assert_double_lt(fabs(p.x[0] - x[0]), 1e-12);
    if (c % 3 == 0) ck_assert_int_lt(its, 4);
    if (c % 3 == 2) ck_assert_int_gt(its, 3);
    lv_newton_free(nw);
  }
  /* max_frozen: modified Newton (contraction rule off) factorises once,
   * then at every correction beyond max_frozen */
  for (int mf = 1; mf <= 3; mf++) {
    lv_newton *nw;
    ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
    lv_newton_options *o = lv_newton_opts(nw);
    o->kind = LV_NEWTON_MODIFIED;
    o->stop = LV_NEWTON_STOP_REDUCTION;
    o->reuse_rate = 1e9;
    o->rtol = 1e-12;
    o->atol = 1e-300;
    o->max_frozen = mf;
    prob p;
    prob_init(&p, -1.8, 0.8);
    lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
    lv_newton_stats st;
    ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
    ck_assert_int_gt(st.iterations, mf + 1);
    ck_assert_int_eq(st.factorizations, 1 + st.iterations - (mf + 1));
    lv_newton_free(nw);
  }
}
END_TEST

/* The problem's initialiser and lv_newton_problem_init set each field by
 * name (weights NULL), and a problem built so solves: F = 0 at the root of
 * x0^2 + x1^2 = 4, exp(x0) + x1 = 1 near (1, -1), checked independently. */
START_TEST(test_problem_init) {
  prob p;
  prob_init(&p, 1.0, -1.0);
  lv_newton_problem a = LV_NEWTON_PROBLEM_INIT(res, jac, upd, &p, 2), b;
  memset(&b, 0xff, sizeof b);
  lv_newton_problem_init(&b, res, jac, upd, &p, 2);
  lv_newton_problem_init(NULL, res, jac, upd, &p, 2); /* no-op */
  const lv_newton_problem *o[2] = {&a, &b};
  for (int k = 0; k < 2; k++) {
    ck_assert_ptr_eq((void *)o[k]->residual, (void *)res);
    ck_assert_ptr_eq((void *)o[k]->jacobian, (void *)jac);
    ck_assert_ptr_eq((void *)o[k]->update, (void *)upd);
    ck_assert_ptr_null((void *)o[k]->weights);
    ck_assert_ptr_eq(o[k]->ctx, &p);
    ck_assert_int_eq(o[k]->n, 2);
  }
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
  lv_newton_opts(nw)->res_tol = 1e-14;
  lv_newton_stats st;
  ck_assert_int_eq(lv_newton_solve(nw, &b, 0, &st), 0);
  ck_assert_double_le(fabs(p.x[0] * p.x[0] + p.x[1] * p.x[1] - 4.0), 1e-13);
  ck_assert_double_le(fabs(exp(p.x[0]) + p.x[1] - 1.0), 1e-13);
  lv_newton_free(nw);
}
END_TEST

int main(void) {
  Suite *s = suite_create("newton");
  TCase *tc = tu_tcase(s, "core", 0.01);
  tcase_add_test(tc, test_quadratic);
  tcase_add_test(tc, test_modified);
  tcase_add_test(tc, test_failures);
  tcase_add_test(tc, test_stall);
  tcase_add_test(tc, test_damping);
  tcase_add_test(tc, test_polish);
  tcase_add_test(tc, test_relative_residual);
  tcase_add_test(tc, test_relative_small);
  tcase_add_test(tc, test_options_init);
  tcase_add_test(tc, test_stop_reduction);
  tcase_add_test(tc, test_problem_init);
  return tu_run_suite(s);
}
