/* The scalable chain models and the sparse path: exact derivatives of
 * `chain` and `rigid-chain`, dense and sparse back-ends on the same
 * trajectory, one symbolic analysis per run, the N = 1000 chain for 100
 * steps (also under the sanitizers), the automatic back-end choice. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

static lv_model *make(const char *name, int N, const char *extra_key, const char *extra_val) {
  char nbuf[32];
  snprintf(nbuf, sizeof nbuf, "%d", N);
  const char *keys[2] = {"N", extra_key}, *vals[2] = {nbuf, extra_val};
  lv_kv kv = {extra_key ? 2 : 1, keys, vals};
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create(name, &kv, &m), 0);
  return m;
}

/* A state off the initial one, so the check sees general q, v and not a
 * symmetric special case: q perturbed, v random. */
static void perturbed(const lv_model *m, double *q, double *v, unsigned long long seed) {
  unsigned long long s = tu_seed(seed);
  int nq = lv_model_nq(m), nv = lv_model_nv(m);
  double *dq = calloc((size_t)nv, sizeof(double));
  for (int i = 0; i < nv; i++) dq[i] = 0.1 * tu_rand(&s);
  ck_assert_int_eq(lv_space_compose_exp(lv_model_space(m), lv_model_q0(m), 1.0, dq, q), 0);
  for (int i = 0; i < nv; i++) v[i] = tu_rand(&s);
  (void)nq;
  free(dq);
}

static void check_model_derivs(const char *name, int N, int expect_force) {
  lv_model *m = make(name, N, NULL, NULL);
  int nq = lv_model_nq(m), nv = lv_model_nv(m);
  double *q = calloc((size_t)nq, sizeof(double)), *v = calloc((size_t)nv, sizeof(double));
  perturbed(m, q, v, 7);
  lv_check_result r;
  int rc = lv_model_check_derivatives(m, q, v, 1e-6, NULL, &r);
  ck_assert_msg(rc == 0, "%s: %d of %d derivatives failed (dV %g d2V %g G %g H %g Z %g dfdq %g dfdv %g)", name,
                r.failed, r.checked, r.err_dV, r.err_d2V, r.err_G, r.err_hessian, r.err_curvature, r.err_df_dq,
                r.err_df_dv);
  /* every derivative is supplied, so every one was compared */
  ck_assert_int_eq(r.checked, expect_force ? 7 : 5);
  free(q);
  free(v);
  lv_model_free(m);
}

START_TEST(test_chain_derivatives) { check_model_derivs("chain", 12, 0); }
END_TEST

START_TEST(test_rigid_chain_derivatives) { check_model_derivs("rigid-chain", 6, 1); }
END_TEST

/* The derivative check compares against finite differences; it would also
 * pass for a model whose g is itself wrong.  So check g and the initial
 * state directly: links of length l, consistent velocities, and a real
 * angular momentum about the vertical. */
START_TEST(test_initial_state) {
  const char *names[2] = {"chain", "rigid-chain"};
  for (int k = 0; k < 2; k++) {
    lv_model *m = make(names[k], 25, NULL, NULL);
    int nc = lv_model_nc(m), nv = lv_model_nv(m);
    ck_assert_int_eq(nc, k ? 75 : 25);
    double *g = calloc((size_t)nc, sizeof(double)), *p = calloc((size_t)nv, sizeof(double));
    double *xi = calloc((size_t)nv, sizeof(double));
    ck_assert_int_eq(lv_model_constraints(m, lv_model_q0(m), g), 0);
    ck_assert_double_lt(tu_norm_inf(nc, g), 1e-14);
    ck_assert_int_eq(lv_model_G_apply(m, lv_model_q0(m), lv_model_v0(m), g), 0);
    ck_assert_double_lt(tu_norm_inf(nc, g), 1e-13);
    ck_assert_int_eq(lv_model_mass_apply(m, lv_model_q0(m), lv_model_v0(m), p), 0);
    ck_assert_int_eq(lv_model_symmetry(m, 0, lv_model_q0(m), xi), 0);
    double J = 0;
    for (int i = 0; i < nv; i++) J += p[i] * xi[i];
    ck_assert_msg(fabs(J) > 1.0, "%s: angular momentum %g", names[k], J);
    free(g);
    free(p);
    free(xi);
    lv_model_free(m);
  }
  /* a wrong parameter is an error, not a silently clamped value */
  lv_model *m = NULL;
  const char *key[1] = {"N"}, *val[1] = {"0"};
  lv_kv kv = {1, key, val};
  ck_assert_int_eq(lv_model_create("chain", &kv, &m), LV_EINPUT);
  const char *key2[1] = {"links"}, *val2[1] = {"3"};
  lv_kv kv2 = {1, key2, val2};
  ck_assert_int_eq(lv_model_create("rigid-chain", &kv2, &m), LV_EUNKNOWN);
}
END_TEST

/* Run @p scheme on @p m with back-end @p kind for @p steps steps; copy out
 * q, v and the stats. */
static void run(const lv_model *m, const char *scheme, double h, int steps, lv_linsol_kind kind, double *q,
                double *v, lv_integrator_stats *st) {
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, scheme, h), 0);
  ck_assert_int_eq(lv_integrator_set_linsol(it, kind, 0), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  for (int n = 0; n < steps; n++) ck_assert_int_eq(lv_integrator_step(it), 0);
  const lv_state *s = lv_integrator_state(it);
  if (q) memcpy(q, s->q, (size_t)lv_model_nq(m) * sizeof(double));
  if (v) memcpy(v, s->v, (size_t)lv_model_nv(m) * sizeof(double));
  lv_integrator_get_stats(it, st);
  lv_integrator_free(it);
}

/* N = 50: dense LU and UMFPACK solve the same equations, so the trajectories
 * agree to round-off amplified by the (chaotic) dynamics over 200 steps. */
START_TEST(test_dense_vs_sparse) {
  lv_model *m = make("chain", 50, "angle", "60");
  int nq = lv_model_nq(m);
  double *q[2], *v[2];
  lv_integrator_stats st[2];
  for (int k = 0; k < 2; k++) {
    q[k] = calloc((size_t)nq, sizeof(double));
    v[k] = calloc((size_t)nq, sizeof(double));
    run(m, "rattle", 0.01, 200, k ? LV_LINSOL_UMFPACK : LV_LINSOL_DENSE, q[k], v[k], &st[k]);
  }
  ck_assert_int_eq(st[0].linsol, LV_LINSOL_DENSE);
  ck_assert_int_eq(st[1].linsol, LV_LINSOL_UMFPACK);
  ck_assert_int_eq(st[0].symbolic, 0);
  ck_assert_int_eq(st[1].symbolic, 1);
  /* the motion is not trivial: the chain has moved */
  ck_assert_double_gt(tu_max_abs_diff(nq, q[0], lv_model_q0(m)), 1.0);
  double dq = tu_max_abs_diff(nq, q[0], q[1]), dv = tu_max_abs_diff(nq, v[0], v[1]);
  ck_assert_msg(dq < 1e-10 && dv < 1e-10, "dense vs sparse: |dq| = %g, |dv| = %g", dq, dv);
  for (int k = 0; k < 2; k++) {
    free(q[k]);
    free(v[k]);
  }
  lv_model_free(m);
}
END_TEST

/* N = 1000, 100 steps on the sparse path (chosen automatically at this
 * size): constraints hold, the pattern is analysed once, and modified Newton
 * reuses factorisations (fewer factorisations than iterations). */
START_TEST(test_large_chain) {
  lv_model *m = make("chain", 1000, "angle", "60");
  int nq = lv_model_nq(m), nc = lv_model_nc(m);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  lv_newton_options o;
  lv_newton_options_default(&o);
  o.kind = LV_NEWTON_MODIFIED;
  ck_assert_int_eq(lv_integrator_set_newton(it, &o), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  lv_diag *d;
  ck_assert_int_eq(lv_diag_new(&d, m, 0), 0);
  lv_diag_point pt;
  ck_assert_int_eq(lv_diag_record(d, lv_integrator_state(it), &pt), 0);
  double J0 = pt.momentum[0];
  for (int n = 0; n < 100; n++) {
    ck_assert_int_eq(lv_integrator_step(it), 0);
    ck_assert_int_eq(lv_diag_record(d, lv_integrator_state(it), &pt), 0);
  }
  lv_diag_summary sum;
  lv_diag_get_summary(d, &sum);
  ck_assert_msg(sum.max_g < 1e-10, "max |g| %g", sum.max_g);
  ck_assert_msg(sum.max_gv < 1e-10, "max |Gv| %g", sum.max_gv);
  ck_assert_msg(fabs(pt.momentum[0] - J0) < 1e-9 * (1 + fabs(J0)), "J %g -> %g", J0, pt.momentum[0]);
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  ck_assert_int_eq(st.steps, 100);
  ck_assert_int_eq(st.linsol, LV_LINSOL_UMFPACK);
  ck_assert_int_eq(st.symbolic, 1);
  ck_assert_msg(st.factorizations < st.newton_iterations + st.steps, "factorisations %ld, iterations %ld",
                st.factorizations, st.newton_iterations);
  (void)nq, (void)nc;
  lv_diag_free(d);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* LV_LINSOL_AUTO picks by n = nv + nc against the threshold, and a user
 * threshold overrides the default. */
START_TEST(test_auto_choice) {
  lv_model *small = make("chain", 5, NULL, NULL), *big = make("chain", 40, NULL, NULL); /* n = 20, 160 */
  lv_integrator_stats st;
  run(small, "rattle", 0.01, 3, LV_LINSOL_AUTO, NULL, NULL, &st);
  ck_assert_int_eq(st.linsol, LV_LINSOL_DENSE);
  run(big, "rattle", 0.01, 3, LV_LINSOL_AUTO, NULL, NULL, &st);
  ck_assert_int_eq(st.linsol, LV_LINSOL_UMFPACK);
  ck_assert_int_eq(st.symbolic, 1);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, big, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_set_linsol(it, LV_LINSOL_AUTO, 1000), 0);
  lv_integrator_get_stats(it, &st);
  ck_assert_int_eq(st.linsol, LV_LINSOL_AUTO); /* not decided before init */
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_step(it), 0);
  lv_integrator_get_stats(it, &st);
  ck_assert_int_eq(st.linsol, LV_LINSOL_DENSE);
  ck_assert_int_eq(st.symbolic, 0);
  lv_integrator_free(it);
  lv_model_free(small);
  lv_model_free(big);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("chain");
  TCase *tc = tcase_create("chain");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_chain_derivatives);
  tcase_add_test(tc, test_rigid_chain_derivatives);
  tcase_add_test(tc, test_initial_state);
  tcase_add_test(tc, test_dense_vs_sparse);
  tcase_add_test(tc, test_large_chain);
  tcase_add_test(tc, test_auto_choice);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
