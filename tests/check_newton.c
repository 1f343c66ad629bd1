/* Newton solver: quadratic convergence, modified Newton, damping, failures. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include "livens/livens.h"
#include "testutil.h"

/* F(x) = (x0^2 + x1^2 - 4, exp(x0) + x1 - 1): two roots, regular Jacobian. */
typedef struct {
  double x[2];
  double hist[64];
  int nh;
  int nan_at;   /* evaluation index at which the residual becomes NaN (-1: never) */
  int singular; /* assemble a singular Jacobian */
  int evals;
} prob;

static int res(void *ctx, double *r) {
  prob *p = ctx;
  r[0] = p->x[0] * p->x[0] + p->x[1] * p->x[1] - 4.0;
  r[1] = exp(p->x[0]) + p->x[1] - 1.0;
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

/* Polishing: a solve accepted at a loose tolerance is brought to round-off
 * by corrections with the kept factorisation. */
START_TEST(test_polish) {
  lv_newton *nw;
  ck_assert_int_eq(lv_newton_new(&nw, 2, LV_LINSOL_DENSE), 0);
  lv_newton_opts(nw)->res_tol = 1e-4;
  prob p;
  prob_init(&p, 1.0, -1.0);
  lv_newton_problem pb = {res, jac, upd, NULL, &p, 2};
  lv_newton_stats st;
  ck_assert_int_eq(lv_newton_solve(nw, &pb, 0, &st), 0);
  double r[2];
  res(&p, r);
  double before = fmax(fabs(r[0]), fabs(r[1]));
  ck_assert_double_gt(before, 1e-12); /* loose: not yet at round-off */
  int it0 = st.iterations;
  ck_assert_int_eq(lv_newton_polish(nw, &pb, 5, &st), 0);
  res(&p, r);
  ck_assert_double_lt(fmax(fabs(r[0]), fabs(r[1])), 1e-14);
  ck_assert_int_gt(st.iterations, it0);
  ck_assert_int_le(st.iterations, it0 + 5);
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

int main(void) {
  Suite *s = suite_create("newton");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_quadratic);
  tcase_add_test(tc, test_modified);
  tcase_add_test(tc, test_failures);
  tcase_add_test(tc, test_damping);
  tcase_add_test(tc, test_polish);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
