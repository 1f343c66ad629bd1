/* The scalable chain models and the sparse path: exact derivatives of
 * `chain` and `rigid-chain`, dense and both sparse back-ends (UMFPACK, KLU)
 * on the same trajectory, the KLU back-end's own contract, one symbolic analysis per run, the N = 1000 chain for 100
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

/* N = 50: dense LU, UMFPACK and KLU solve the same equations, so the
 * trajectories agree to round-off amplified by the dynamics over 200 steps. */
START_TEST(test_dense_vs_sparse) {
  lv_model *m = make("chain", 50, "angle", "60");
  int nq = lv_model_nq(m);
  const lv_linsol_kind kinds[3] = {LV_LINSOL_DENSE, LV_LINSOL_UMFPACK, LV_LINSOL_KLU};
  double *q[3], *v[3];
  lv_integrator_stats st[3];
  for (int k = 0; k < 3; k++) {
    q[k] = calloc((size_t)nq, sizeof(double));
    v[k] = calloc((size_t)nq, sizeof(double));
    run(m, "rattle", 0.01, 200, kinds[k], q[k], v[k], &st[k]);
    ck_assert_int_eq(st[k].linsol, kinds[k]);
    ck_assert_int_eq(st[k].symbolic, k ? 1 : 0); /* sparse: analysed once in 200 steps */
  }
  /* the motion is not trivial: the chain has moved */
  ck_assert_double_gt(tu_max_abs_diff(nq, q[0], lv_model_q0(m)), 1.0);
  for (int k = 1; k < 3; k++) {
    double dq = tu_max_abs_diff(nq, q[0], q[k]), dv = tu_max_abs_diff(nq, v[0], v[k]);
    ck_assert_msg(dq < 1e-10 && dv < 1e-10, "dense vs %s: |dq| = %g, |dv| = %g",
                  lv_linsol_kind_name(kinds[k]), dq, dv);
  }
  for (int k = 0; k < 3; k++) {
    free(q[k]);
    free(v[k]);
  }
  lv_model_free(m);
}
END_TEST

/* The Lie group families: the rigid chain in (R^3 x SO(3))^N under
 * generalized-alpha (index 3 and GGL index 2) on all three back-ends --
 * same trajectory, constraints at every node, one analysis per run -- and
 * the particle chain under generalized-alpha (its linear-space form). */
START_TEST(test_lie_group_schemes) {
  if (!lv_scheme_find("genalpha")) {
    fprintf(stderr, "check_chain: genalpha not registered in this build, Lie group runs skipped\n");
    return;
  }
  const lv_linsol_kind kinds[3] = {LV_LINSOL_DENSE, LV_LINSOL_UMFPACK, LV_LINSOL_KLU};
  const char *index[2] = {"3", "2"};
  lv_model *m = make("rigid-chain", 8, NULL, NULL);
  int nq = lv_model_nq(m), nc = lv_model_nc(m);
  for (int ix = 0; ix < 2; ix++) {
    double *q[3];
    for (int k = 0; k < 3; k++) {
      q[k] = calloc((size_t)nq, sizeof(double));
      lv_integrator *it;
      ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 0.005), 0);
      ck_assert_int_eq(lv_integrator_set_option(it, "index", index[ix]), 0);
      ck_assert_int_eq(lv_integrator_set_linsol(it, kinds[k], 0), 0);
      ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
      double gmax = 0, *g = calloc((size_t)nc, sizeof(double));
      for (int n = 0; n < 100; n++) {
        ck_assert_int_eq(lv_integrator_step(it), 0);
        ck_assert_int_eq(lv_model_constraints(m, lv_integrator_state(it)->q, g), 0);
        if (tu_norm_inf(nc, g) > gmax) gmax = tu_norm_inf(nc, g);
      }
      ck_assert_msg(gmax < 1e-10, "index %s, %s: max |g| = %g", index[ix], lv_linsol_kind_name(kinds[k]), gmax);
      lv_integrator_stats st;
      lv_integrator_get_stats(it, &st);
      ck_assert_int_eq(st.linsol, kinds[k]);
      if (k) ck_assert_int_eq(st.symbolic, 1);
      memcpy(q[k], lv_integrator_state(it)->q, (size_t)nq * sizeof(double));
      free(g);
      lv_integrator_free(it);
    }
    ck_assert_double_gt(tu_max_abs_diff(nq, q[0], lv_model_q0(m)), 0.1); /* it moved */
    for (int k = 1; k < 3; k++)
      ck_assert_msg(tu_max_abs_diff(nq, q[0], q[k]) < 1e-10, "index %s: dense vs %s %g", index[ix],
                    lv_linsol_kind_name(kinds[k]), tu_max_abs_diff(nq, q[0], q[k]));
    for (int k = 0; k < 3; k++) free(q[k]);
  }
  lv_model_free(m);

  lv_model *c = make("chain", 50, "angle", "60");
  int nc3 = lv_model_nq(c);
  double *qa = calloc((size_t)nc3, sizeof(double)), *qb = calloc((size_t)nc3, sizeof(double));
  lv_integrator_stats sa, sb;
  run(c, "genalpha", 0.01, 10, LV_LINSOL_DENSE, qa, NULL, &sa);
  run(c, "genalpha", 0.01, 10, LV_LINSOL_KLU, qb, NULL, &sb);
  ck_assert_int_eq(sb.symbolic, 1);
  ck_assert_msg(tu_max_abs_diff(nc3, qa, qb) < 1e-10, "chain genalpha dense vs klu %g", tu_max_abs_diff(nc3, qa, qb));
  free(qa);
  free(qb);
  lv_model_free(c);
}
END_TEST

/* The other families on the chain's sparse path as they land: dense and
 * KLU runs of the same steps agree, and the sparse pattern is analysed
 * once.  Few steps: vi-* and em still do dense nv x nv work per step. */
START_TEST(test_other_schemes) {
  const char *names[4] = {"vi-a", "vi-b", "em", "em-g"};
  lv_model *m = make("chain", 50, "angle", "60");
  int nq = lv_model_nq(m);
  double *qa = calloc((size_t)nq, sizeof(double)), *qb = calloc((size_t)nq, sizeof(double));
  for (int s = 0; s < 4; s++) {
    if (!lv_scheme_find(names[s])) {
      fprintf(stderr, "check_chain: %s not registered in this build, skipped\n", names[s]);
      continue;
    }
    lv_integrator_stats sa, sb;
    run(m, names[s], 0.01, 5, LV_LINSOL_DENSE, qa, NULL, &sa);
    run(m, names[s], 0.01, 5, LV_LINSOL_KLU, qb, NULL, &sb);
    ck_assert_int_eq(sb.linsol, LV_LINSOL_KLU);
    ck_assert_int_eq(sb.symbolic, 1);
    ck_assert_double_gt(tu_max_abs_diff(nq, qa, lv_model_q0(m)), 1e-3);
    ck_assert_msg(tu_max_abs_diff(nq, qa, qb) < 1e-10, "%s: dense vs klu %g", names[s],
                  tu_max_abs_diff(nq, qa, qb));
  }
  free(qa);
  free(qb);
  lv_model_free(m);
}
END_TEST

/* The KLU back-end on its own: solves against dense LU on a random sparse
 * saddle-point matrix, keeps the analysis while the positions repeat, and
 * re-searches pivots when kept ones go bad. */
static void saddle(lv_linsol *ls, int n, unsigned long long seed, double diag) {
  unsigned long long s = tu_seed(seed);
  int m = n / 4, d = n - m;
  lv_linsol_begin(ls);
  for (int i = 0; i < d; i++) {
    ck_assert_int_eq(lv_linsol_add(ls, i, i, diag + tu_rand(&s)), 0);
    if (i) {
      double a = 0.3 * tu_rand(&s);
      ck_assert_int_eq(lv_linsol_add(ls, i, i - 1, a), 0);
      ck_assert_int_eq(lv_linsol_add(ls, i - 1, i, a), 0);
    }
  }
  for (int k = 0; k < m; k++) {
    int c = (3 * k) % d;
    double g = 1.0 + 0.5 * tu_rand(&s), h = 0.3 * tu_rand(&s);
    ck_assert_int_eq(lv_linsol_add(ls, d + k, c, g), 0);
    ck_assert_int_eq(lv_linsol_add(ls, c, d + k, g), 0);
    ck_assert_int_eq(lv_linsol_add(ls, d + k, (c + 1) % d, h), 0);
    ck_assert_int_eq(lv_linsol_add(ls, (c + 1) % d, d + k, h), 0);
  }
}

START_TEST(test_klu_backend) {
  const int n = 60;
  lv_linsol *dn, *kl;
  ck_assert_int_eq(lv_linsol_new(&dn, LV_LINSOL_DENSE, n, 0), 0);
  ck_assert_int_eq(lv_linsol_new(&kl, LV_LINSOL_KLU, n, 0), 0);
  ck_assert_int_eq(lv_linsol_kind_of(kl), LV_LINSOL_KLU);
  ck_assert_str_eq(lv_linsol_kind_name(LV_LINSOL_KLU), "klu");
  double b[60], x1[60], x2[60], Ax[60];
  unsigned long long s = tu_seed(3);
  /* same positions, new values, and diagonals that shrink towards zero so
   * that the pivot order chosen for the first matrix goes bad */
  const double diag[5] = {4.0, 3.0, 1e-3, 4.0, 1e-9};
  for (int r = 0; r < 5; r++) {
    saddle(dn, n, 11 + r, diag[r]);
    saddle(kl, n, 11 + r, diag[r]);
    ck_assert_int_eq(lv_linsol_factor(dn), 0);
    ck_assert_int_eq(lv_linsol_factor(kl), 0);
    for (int i = 0; i < n; i++) b[i] = x1[i] = x2[i] = tu_rand(&s);
    ck_assert_int_eq(lv_linsol_solve(dn, x1), 0);
    ck_assert_int_eq(lv_linsol_solve(kl, x2), 0);
    ck_assert_msg(tu_rel_err(n, x2, x1) < 1e-11, "round %d: klu vs dense %g", r, tu_rel_err(n, x2, x1));
    ck_assert_int_eq(lv_linsol_matvec(kl, x2, Ax), 0);
    ck_assert_double_lt(tu_max_abs_diff(n, Ax, b), 1e-12 * (1 + tu_norm_inf(n, b)));
  }
  lv_linsol_stats st;
  lv_linsol_get_stats(kl, &st);
  ck_assert_int_eq(st.symbolic, 1);
  ck_assert_int_eq(st.numeric, 5);
  /* a new position: a new analysis */
  saddle(kl, n, 20, 4.0);
  ck_assert_int_eq(lv_linsol_add(kl, 0, n - 1, 0.5), 0);
  ck_assert_int_eq(lv_linsol_factor(kl), 0);
  lv_linsol_get_stats(kl, &st);
  ck_assert_int_eq(st.symbolic, 2);
  /* begin/add keep the factorisation usable (modified Newton) */
  saddle(kl, n, 21, 4.0);
  for (int i = 0; i < n; i++) x2[i] = 1.0;
  ck_assert_int_eq(lv_linsol_solve(kl, x2), 0);
  /* singular: a zero row */
  lv_linsol *z;
  ck_assert_int_eq(lv_linsol_new(&z, LV_LINSOL_KLU, 3, 0), 0);
  lv_linsol_begin(z);
  lv_linsol_add(z, 0, 0, 1.0);
  lv_linsol_add(z, 1, 1, 1.0);
  lv_linsol_add(z, 2, 2, 0.0);
  ck_assert_int_eq(lv_linsol_factor(z), LV_ESINGULAR);
  ck_assert_int_eq(lv_linsol_solve(z, x2), LV_EINPUT); /* nothing usable */
  lv_linsol_free(z);
  lv_linsol_free(dn);
  lv_linsol_free(kl);
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
  tcase_add_test(tc, test_klu_backend);
  tcase_add_test(tc, test_lie_group_schemes);
  tcase_add_test(tc, test_other_schemes);
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
