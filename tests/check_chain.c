/* The scalable chain models and the sparse path: exact derivatives of
 * `chain` and `rigid-chain`, dense and both sparse back-ends (UMFPACK, KLU)
 * on the same trajectory (RATTLE, the Lie group families, VI and EM), the
 * KLU back-end's own contract, one symbolic analysis per run, the N = 1000
 * chain for 100 RATTLE steps and 10 VI-A / EM steps (also under the
 * sanitizers), the automatic back-end choice, RATTLE's relative residual
 * test on a chain far from the origin. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

#define LV_CHECK_T(expr)        \
  do {                          \
    int rc_ = (expr);           \
    if (rc_ != 0) return rc_;   \
  } while (0)

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

/* The VI and EM families: the dense path (blocks formed densely, dense LU)
 * and the sparse path (every factor captured from its model callback into
 * a fixed-pattern sparse matrix, products formed sparsely, the Newton
 * matrix added entry by entry into KLU / UMFPACK) solve the same equations.
 * So on N = 50 (n = 250) they give the same trajectory to round-off
 * amplified by the dynamics, Newton takes the same iterations (a wrong or
 * missing block would make the contraction linear and cost iterations),
 * and the sparse pattern is analysed once per run.  VI-A and EM over 100
 * steps (the chain has moved by metres), the others over 20. */
START_TEST(test_vi_em_dense_vs_sparse) {
  const char *names[5] = {"vi-a", "em", "vi-s", "vi-b", "em-g"};
  const int steps[5] = {100, 100, 20, 20, 20};
  const lv_linsol_kind kinds[3] = {LV_LINSOL_DENSE, LV_LINSOL_KLU, LV_LINSOL_UMFPACK};
  lv_model *m = make("chain", 50, "angle", "60");
  int nq = lv_model_nq(m);
  double *q[3], *v[3];
  for (int k = 0; k < 3; k++) {
    q[k] = calloc((size_t)nq, sizeof(double));
    v[k] = calloc((size_t)nq, sizeof(double));
  }
  for (int s = 0; s < 5; s++) {
    if (!lv_scheme_find(names[s])) {
      fprintf(stderr, "check_chain: %s not registered in this build, skipped\n", names[s]);
      continue;
    }
    lv_integrator_stats st[3];
    for (int k = 0; k < 3; k++) {
      run(m, names[s], 0.01, steps[s], kinds[k], q[k], v[k], &st[k]);
      ck_assert_int_eq(st[k].linsol, kinds[k]);
      ck_assert_int_eq(st[k].symbolic, k ? 1 : 0);
    }
    ck_assert_double_gt(tu_max_abs_diff(nq, q[0], lv_model_q0(m)), steps[s] == 100 ? 1.0 : 0.05); /* it moved */
    for (int k = 1; k < 3; k++) {
      double dq = tu_max_abs_diff(nq, q[0], q[k]), dv = tu_max_abs_diff(nq, v[0], v[k]);
      ck_assert_msg(dq < 1e-10 && dv < 1e-10, "%s: dense vs %s: |dq| = %g, |dv| = %g", names[s],
                    lv_linsol_kind_name(kinds[k]), dq, dv);
      ck_assert_msg(labs(st[k].newton_iterations - st[0].newton_iterations) <= 2,
                    "%s: Newton iterations dense %ld, %s %ld", names[s], st[0].newton_iterations,
                    lv_linsol_kind_name(kinds[k]), st[k].newton_iterations);
    }
  }
  for (int k = 0; k < 3; k++) {
    free(q[k]);
    free(v[k]);
  }
  lv_model_free(m);
}
END_TEST

/* The Newton matrix itself, assembled by the dense and the sparse path at
 * the same iterate: a scheme driven through its lv_scheme_type with one
 * Newton iteration allowed assembles at its starting guess and stops
 * (LV_ENEWTON, or LV_EDIVERGE), leaving that matrix in its solver.  The state is generic
 * -- q off the constraint manifold, random v, multipliers of order one --
 * so that every block is of its own size (in a consistent motion gamma is
 * ~0 and the H(q; h gamma) products would be invisible), and the advanced
 * guess moves q^{n+1} off q^n.  Compared through A x for a random x, row by
 * row against the magnitudes of the row's terms. */
static void newton_matvec(const lv_model *m, const char *scheme, const char *theta, lv_linsol_kind kind,
                          const double *x, double *Ax, double *absAx, int *n) {
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  lv_state s;
  s.t = 0.0;
  s.q = calloc((size_t)nq, sizeof(double));
  s.v = calloc((size_t)nv, sizeof(double));
  s.p = calloc((size_t)nv, sizeof(double));
  s.lambda = calloc((size_t)nc, sizeof(double));
  s.gamma = calloc((size_t)nc, sizeof(double));
  perturbed(m, s.q, s.v, 21);
  unsigned long long sd = tu_seed(22);
  for (int i = 0; i < nc; i++) {
    s.lambda[i] = 10.0 * tu_rand(&sd);
    s.gamma[i] = 10.0 * tu_rand(&sd);
  }
  ck_assert_int_eq(lv_model_mass_apply(m, s.q, s.v, s.p), 0);
  const char *keys[2] = {"guess", "theta"}, *vals[2] = {"advanced", theta};
  lv_kv opts = {theta ? 2 : 1, keys, vals};
  lv_stepper st;
  memset(&st, 0, sizeof st);
  st.model = m;
  st.state = &s;
  st.options = &opts;
  st.linsol_kind = kind;
  lv_newton_options_default(&st.newton);
  st.newton.max_iter = 1;
  const lv_scheme_type *T = lv_scheme_find(scheme);
  ck_assert_ptr_nonnull(T);
  ck_assert_int_eq(T->create(&st), 0);
  ck_assert_int_eq(T->init(&st), 0);
  lv_newton_stats ns;
  memset(&ns, 0, sizeof ns);
  int rc = T->step(&st, 0.05, &ns); /* from a state this far off, the one iteration may also diverge */
  ck_assert_msg(rc == LV_ENEWTON || rc == LV_EDIVERGE, "%s: step status %d", scheme, rc);
  ck_assert_int_eq(ns.factorizations, 1);
  *n = lv_linsol_size(st.linsol);
  ck_assert_int_eq(lv_linsol_matvec(st.linsol, x, Ax), 0);
  if (absAx) {
    /* |A| |x|, the rounding scale of each row, column by column (small n) */
    double *ax = calloc((size_t)*n, sizeof(double)), *e = calloc((size_t)*n, sizeof(double));
    memset(absAx, 0, (size_t)*n * sizeof(double));
    for (int j = 0; j < *n; j++) {
      e[j] = 1.0;
      ck_assert_int_eq(lv_linsol_matvec(st.linsol, e, ax), 0);
      e[j] = 0.0;
      for (int i = 0; i < *n; i++) absAx[i] += fabs(ax[i] * x[j]);
    }
    free(ax);
    free(e);
  }
  T->destroy(&st);
  free(s.q);
  free(s.v);
  free(s.p);
  free(s.lambda);
  free(s.gamma);
}

START_TEST(test_vi_em_newton_matrix) {
  const char *names[7] = {"vi-a", "vi-a", "vi-b", "vi-b", "vi-s", "em", "em-g"};
  const char *theta[7] = {NULL, "0.3", NULL, "0.6", NULL, NULL, NULL};
  const lv_linsol_kind kinds[2] = {LV_LINSOL_KLU, LV_LINSOL_UMFPACK};
  lv_model *m = make("chain", 12, NULL, NULL);
  int nmax = 5 * 12;
  double *x = calloc((size_t)nmax, sizeof(double)), *y0 = calloc((size_t)nmax, sizeof(double));
  double *y1 = calloc((size_t)nmax, sizeof(double)), *ay = calloc((size_t)nmax, sizeof(double));
  unsigned long long sd = tu_seed(5);
  for (int i = 0; i < nmax; i++) x[i] = tu_rand(&sd);
  for (int s = 0; s < 7; s++) {
    if (!lv_scheme_find(names[s])) continue;
    int n0, n1;
    newton_matvec(m, names[s], theta[s], LV_LINSOL_DENSE, x, y0, ay, &n0);
    double big = tu_norm_inf(n0, ay);
    ck_assert_double_gt(big, 1.0);
    for (int k = 0; k < 2; k++) {
      newton_matvec(m, names[s], theta[s], kinds[k], x, y1, NULL, &n1);
      ck_assert_int_eq(n1, n0);
      double worst = 0;
      for (int i = 0; i < n0; i++) worst = fmax(worst, fabs(y1[i] - y0[i]) / (ay[i] + 1e-300));
      /* summation order only: a few ulps of the row's terms (measured
       * <= 7e-16; a block off by a factor gives 0.05 .. 1) */
      ck_assert_msg(worst < 4 * n0 * DBL_EPSILON, "%s (theta %s), %s: max row error %g of the row's |A| |x|", names[s],
                    theta[s] ? theta[s] : "default", lv_linsol_kind_name(kinds[k]), worst);
    }
  }
  free(x);
  free(y0);
  free(y1);
  free(ay);
  lv_model_free(m);
}
END_TEST

/* A non-diagonal constant mass matrix on the chain: the particles in pairs
 * (2j, 2j+1) with coordinate a of one coupled to coordinate a of the other
 * (0.5) and x coupled to y within each particle (0.3), diagonal 2: SPD,
 * block diagonal with 6 x 6 blocks (3 x 3 for an unpaired last particle).
 * With "wide" the pairs are also coupled to their successors, which makes
 * M one connected block of size 3N. */
static int coupled_mass_impl(int N, int wide, lv_sink *M) {
  for (int k = 0; k < N; k++)
    for (int a = 0; a < 3; a++) {
      int i = 3 * k + a;
      LV_CHECK_T(lv_sink_add(M, i, i, 2.0));
      int mate = k % 2 ? k - 1 : k + 1;
      if (mate < N) LV_CHECK_T(lv_sink_add(M, i, 3 * mate + a, 0.5));
      if (a < 2) LV_CHECK_T(lv_sink_add(M, i, 3 * k + 1 - a, 0.3));
      if (wide && k + 2 < N && k % 2 == 1) {
        LV_CHECK_T(lv_sink_add(M, i, 3 * (k + 1) + a, 0.2));
        LV_CHECK_T(lv_sink_add(M, 3 * (k + 1) + a, i, 0.2));
      }
    }
  return 0;
}
static int coupled_N;
static int coupled_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  return coupled_mass_impl(coupled_N, 0, M);
}
static int coupled_mass_wide(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  return coupled_mass_impl(coupled_N, 1, M);
}

/* M^-1 formed block by block (and, for a mass matrix whose one block
 * exceeds the limit, the dense inverse captured as a sparse matrix): the
 * one assembly gives the dense and the KLU back-end the same Newton matrix
 * and the same trajectory. */
START_TEST(test_vi_em_block_mass) {
  const char *names[3] = {"vi-a", "vi-s", "em"};
  for (int wide = 0; wide < 2; wide++) {
    coupled_N = wide ? 30 : 7;
    lv_model *m = make("chain", coupled_N, "angle", "60");
    ck_assert_int_eq(lv_model_set_mass(m, wide ? coupled_mass_wide : coupled_mass, 1), 0);
    int nq = lv_model_nq(m), n0, n1, nmax = 5 * coupled_N;
    double *x = calloc((size_t)nmax, sizeof(double)), *y0 = calloc((size_t)nmax, sizeof(double));
    double *y1 = calloc((size_t)nmax, sizeof(double)), *ay = calloc((size_t)nmax, sizeof(double));
    double *qa = calloc((size_t)nq, sizeof(double)), *qb = calloc((size_t)nq, sizeof(double));
    unsigned long long sd = tu_seed(9);
    for (int i = 0; i < nmax; i++) x[i] = tu_rand(&sd);
    for (int s = 0; s < 3; s++) {
      if (!lv_scheme_find(names[s])) continue;
      newton_matvec(m, names[s], NULL, LV_LINSOL_DENSE, x, y0, ay, &n0);
      newton_matvec(m, names[s], NULL, LV_LINSOL_KLU, x, y1, NULL, &n1);
      ck_assert_int_eq(n0, n1);
      double worst = 0;
      for (int i = 0; i < n0; i++) worst = fmax(worst, fabs(y1[i] - y0[i]) / (ay[i] + 1e-300));
      /* rows as long as n with the wide mass (M^-1 dense): bound by n ulps */
      ck_assert_msg(worst < 4 * n0 * DBL_EPSILON, "%s, %s mass: Newton matrix row error %g", names[s], wide ? "wide" : "block",
                    worst);
      lv_integrator_stats sa, sb;
      run(m, names[s], 0.01, 30, LV_LINSOL_DENSE, qa, NULL, &sa);
      run(m, names[s], 0.01, 30, LV_LINSOL_KLU, qb, NULL, &sb);
      ck_assert_int_eq(sb.symbolic, 1);
      ck_assert_double_gt(tu_max_abs_diff(nq, qa, lv_model_q0(m)), 0.01);
      ck_assert_msg(tu_max_abs_diff(nq, qa, qb) < 1e-10, "%s, %s mass: dense vs klu %g", names[s],
                    wide ? "wide" : "block", tu_max_abs_diff(nq, qa, qb));
      ck_assert_int_eq(sa.newton_iterations, sb.newton_iterations);
    }
    free(x);
    free(y0);
    free(y1);
    free(ay);
    free(qa);
    free(qb);
    lv_model_free(m);
  }
}
END_TEST

/* VI-A and EM on the N = 1000 chain (n = 5000; the dense path would need
 * ~600 MB and seconds per step), back-end chosen automatically: the sparse
 * assembly keeps one pattern, Newton converges quadratically (3 iterations
 * per step measured), and what the schemes conserve holds on the large
 * system -- the vertical angular momentum for both (|J| ~ 3e5), the energy
 * and both constraint levels at the nodes for EM (measured: relative energy
 * error 1e-15, |J - J0| 5e-10, |g| 2e-13 at coordinates ~ 1e3).  Few steps:
 * this also runs under the sanitizers. */
START_TEST(test_vi_em_large_chain) {
  const char *names[2] = {"vi-a", "em"};
  lv_model *m = make("chain", 1000, "angle", "60");
  for (int s = 0; s < 2; s++) {
    if (!lv_scheme_find(names[s])) continue;
    lv_integrator *it;
    ck_assert_int_eq(lv_integrator_new(&it, m, names[s], 0.01), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    lv_diag *d;
    ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
    lv_diag_point pt;
    ck_assert_int_eq(lv_diag_record(d, lv_integrator_state(it), &pt), 0);
    double J0 = pt.momentum[0];
    for (int n = 0; n < 10; n++) {
      ck_assert_int_eq(lv_integrator_step(it), 0);
      ck_assert_int_eq(lv_diag_record(d, lv_integrator_state(it), &pt), 0);
    }
    lv_diag_summary sum;
    lv_diag_get_summary(d, &sum);
    ck_assert_double_gt(fabs(J0), 1e5);
    ck_assert_msg(sum.max_momentum_error < 1e-13 * fabs(J0), "%s: |J - J0| = %g", names[s], sum.max_momentum_error);
    if (s == 1) {
      ck_assert_msg(sum.max_rel_energy_error < 1e-13, "em: relative energy error %g", sum.max_rel_energy_error);
      ck_assert_msg(sum.max_g < 1e-11 && sum.max_gp < 1e-11, "em: |g| %g, |G M^-1 p| %g", sum.max_g, sum.max_gp);
    }
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    ck_assert_int_eq(st.linsol, LV_LINSOL_KLU); /* LV_LINSOL_SPARSE on a chain */
    ck_assert_int_eq(st.symbolic, 1);
    ck_assert_msg(st.newton_iterations <= 4 * st.steps, "%s: %ld Newton iterations in %ld steps", names[s],
                  st.newton_iterations, st.steps);
    lv_diag_free(d);
    lv_integrator_free(it);
  }
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
  ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
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
  ck_assert_int_eq(st.linsol, LV_LINSOL_KLU); /* LV_LINSOL_SPARSE on a chain */
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
/* RATTLE on a chain whose coordinates reach 10^4 (200 links of 50 m,
 * horizontal start; the 10^4-link chain of bench_scale in 1/50 of the
 * unknowns): the stage-1 residual's round-off floor, ~eps |q|, is then
 * above 1e-12, the default absolute tolerance.  With the relative
 * residual test (lv_newton_set_scale, RATTLE's default) Newton stops at
 * that floor instead of iterating on it: fewer iterations than the
 * absolute test alone, the same trajectory to well below the tolerances
 * that matter, the constraints held to round-off of the coordinates. */
START_TEST(test_far_chain_residual_scale) {
  const char *keys[3] = {"N", "l", "angle"}, *vals[3] = {"200", "50", "90"};
  lv_kv kv = {3, keys, vals};
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("chain", &kv, &m), 0);
  int nq = lv_model_nq(m), nc = lv_model_nc(m);
  double *q[2], qmax = 0;
  long iters[2];
  for (int k = 0; k < 2; k++) {
    lv_integrator *it = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
    ck_assert_int_eq(lv_integrator_set_linsol(it, LV_LINSOL_KLU, 0), 0);
    lv_newton_options o;
    lv_integrator_get_newton(it, &o);
    if (k == 1) o.res_rtol = 0.0; /* absolute test only */
    ck_assert_int_eq(lv_integrator_set_newton(it, &o), 0);
    ck_assert_int_eq(lv_integrator_set_halving(it, 0), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    for (int n = 0; n < 40; n++) ck_assert_int_eq(lv_integrator_step(it), 0);
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    iters[k] = st.newton_iterations;
    q[k] = malloc((size_t)nq * sizeof(double));
    memcpy(q[k], lv_integrator_state(it)->q, (size_t)nq * sizeof(double));
    lv_integrator_free(it);
  }
  qmax = tu_norm_inf(nq, q[0]);
  ck_assert_double_gt(qmax, 9000.0);
  ck_assert_msg(iters[0] < iters[1], "iterations: relative test %ld, absolute %ld", iters[0], iters[1]);
  double dq = 0;
  for (int i = 0; i < nq; i++) dq = fmax(dq, fabs(q[0][i] - q[1][i]));
  ck_assert_msg(dq <= 1e-10, "|q_relative - q_absolute| = %g", dq);
  double *g = calloc((size_t)nc, sizeof(double));
  ck_assert_int_eq(lv_model_constraints(m, q[0], g), 0);
  /* |g_k| <= a few eps |q| (|d_k| / l = 1): the links are as exact as the
   * coordinates can place them */
  ck_assert_msg(tu_norm_inf(nc, g) <= 16.0 * 2.22e-16 * qmax, "max |g| = %g at max |q| = %g", tu_norm_inf(nc, g),
                qmax);
  free(g);
  free(q[0]);
  free(q[1]);
  lv_model_free(m);
}
END_TEST

START_TEST(test_auto_choice) {
  lv_model *small = make("chain", 5, NULL, NULL), *big = make("chain", 40, NULL, NULL); /* n = 20, 160 */
  lv_integrator_stats st;
  run(small, "rattle", 0.01, 3, LV_LINSOL_AUTO, NULL, NULL, &st);
  ck_assert_int_eq(st.linsol, LV_LINSOL_DENSE);
  run(big, "rattle", 0.01, 3, LV_LINSOL_AUTO, NULL, NULL, &st);
  ck_assert_int_eq(st.linsol, LV_LINSOL_KLU); /* LV_LINSOL_SPARSE on a chain */
  ck_assert_msg(st.sparse_flops_per_entry >= 0 && st.sparse_flops_per_entry <= 100, "%g flops per entry",
                st.sparse_flops_per_entry);
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

/* EM on a chain of 3e4 particles (d = 9e4) takes a step: its creation
 * used to allocate two d x d arrays (65 GB) for pieces only a Gonzalez
 * potential or non-quadratic constraints use, and ended in LV_ENOMEM. */
START_TEST(test_em_large_chain_memory) {
  lv_model *m = make("chain", 30000, "angle", "60");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "em", 0.01), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  lv_diag *d;
  ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
  lv_diag_point pt;
  ck_assert_int_eq(lv_diag_record(d, lv_integrator_state(it), &pt), 0);
  ck_assert_int_eq(lv_integrator_step(it), 0);
  ck_assert_int_eq(lv_diag_record(d, lv_integrator_state(it), &pt), 0);
  lv_diag_summary sum;
  lv_diag_get_summary(d, &sum);
  ck_assert_msg(sum.max_rel_energy_error < 1e-12, "relative energy error %g", sum.max_rel_energy_error);
  lv_diag_free(d);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("chain");
  TCase *tc = tu_tcase(s, "chain", 1.5);
  tcase_add_test(tc, test_chain_derivatives);
  tcase_add_test(tc, test_rigid_chain_derivatives);
  tcase_add_test(tc, test_initial_state);
  tcase_add_test(tc, test_dense_vs_sparse);
  tcase_add_test(tc, test_klu_backend);
  tcase_add_test(tc, test_lie_group_schemes);
  tcase_add_test(tc, test_vi_em_newton_matrix);
  tcase_add_test(tc, test_vi_em_dense_vs_sparse);
  tcase_add_test(tc, test_vi_em_block_mass);
  tcase_add_test(tc, test_vi_em_large_chain);
  tcase_add_test(tc, test_large_chain);
  tcase_add_test(tc, test_auto_choice);
  tcase_add_test(tc, test_far_chain_residual_scale);
  tc = tu_tcase(s, "large", 4.0);
  tcase_add_test(tc, test_em_large_chain_memory);
  return s;
}

int main(void) {
  return tu_run_suite(suite());
}
