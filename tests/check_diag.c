/* Diagnostics and the getters around them: a NULL argument is a status or a
 * documented value, never a crash (issue 14, section 3). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

START_TEST(test_null_getters) {
  lv_diag_summary sum;
  memset(&sum, 0xff, sizeof sum);
  lv_diag_get_summary(NULL, &sum);
  ck_assert_double_eq(sum.max_g, 0.0);
  ck_assert_double_eq(sum.max_momentum_error, 0.0);
  lv_diag_get_summary(NULL, NULL);
  lv_diag_reset(NULL);
  ck_assert_int_eq(lv_diag_eval(NULL, NULL, NULL), LV_EINPUT);
  ck_assert_int_eq(lv_diag_record(NULL, NULL, NULL), LV_EINPUT);
  ck_assert_int_ne(lv_diag_output(NULL, LV_OUTPUT_STEP, NULL), 0);

  ck_assert_ptr_null(lv_integrator_model(NULL));
  ck_assert_ptr_null(lv_integrator_scheme(NULL));
  ck_assert_ptr_null(lv_integrator_state(NULL));
  ck_assert_ptr_null(lv_integrator_last_newton(NULL));
  ck_assert(isnan(lv_integrator_step_size(NULL)));
  lv_integrator_stats st;
  memset(&st, 0xff, sizeof st);
  lv_integrator_get_stats(NULL, &st);
  ck_assert_int_eq((int)st.steps, 0);
  lv_integrator_get_stats(NULL, NULL);

  ck_assert_int_eq(lv_model_nq(NULL), LV_EINPUT);
  ck_assert_int_eq(lv_model_nv(NULL), LV_EINPUT);
  ck_assert_int_eq(lv_model_nc(NULL), LV_EINPUT);
  ck_assert_int_eq(lv_model_nsym(NULL), LV_EINPUT);
  ck_assert_int_eq(lv_model_mass_constant(NULL), LV_EINPUT);
  ck_assert_int_eq(lv_model_has_force(NULL), 0);
  ck_assert_ptr_null(lv_model_name(NULL));
  ck_assert_ptr_null(lv_model_space(NULL));
  ck_assert_ptr_null(lv_model_q0(NULL));
  ck_assert_ptr_null(lv_model_v0(NULL));
  ck_assert_ptr_null(lv_model_user(NULL));

  double x = 7.0;
  int k = 7;
  ck_assert_int_eq(lv_kv_double(NULL, "a", 1.5, &x), 0);
  ck_assert_double_eq(x, 1.5);
  ck_assert_int_eq(lv_kv_double(NULL, NULL, 2.5, &x), 0);
  ck_assert_double_eq(x, 2.5);
  ck_assert_int_eq(lv_kv_double(NULL, "a", 1.5, NULL), LV_EINPUT);
  ck_assert_int_eq(lv_kv_int(NULL, NULL, 3, &k), 0);
  ck_assert_int_eq(k, 3);
  ck_assert_int_eq(lv_kv_int(NULL, "a", 3, NULL), LV_EINPUT);
  ck_assert_str_eq(lv_kv_string(NULL, NULL, "d"), "d");
  ck_assert_int_eq(lv_kv_check(NULL, NULL, NULL), 0);
  const char *keys[] = {"a"}, *vals[] = {"2"};
  lv_kv kv = {1, keys, vals};
  ck_assert_int_eq(lv_kv_double(&kv, NULL, 4.0, &x), 0);
  ck_assert_double_eq(x, 4.0);
  ck_assert_int_eq(lv_kv_double(&kv, "a", 4.0, &x), 0);
  ck_assert_double_eq(x, 2.0);
}
END_TEST

/* Run pendulum3d (parameters @p kv) under RATTLE, h = 1e-2, for @p steps
 * steps, every state recorded; its summary in @p sum and the step count the
 * integrator reports. */
static long run_recorded(const lv_kv *kv, int steps, lv_diag_summary *sum) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", kv, &m), 0);
  ck_assert_int_gt(lv_model_nq(m), 0);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 1e-2), 0);
  ck_assert_ptr_eq(lv_integrator_model(it), m);
  ck_assert_ptr_nonnull(lv_integrator_scheme(it));
  lv_diag *d = NULL;
  ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
  lv_diag_writer w = LV_DIAG_WRITER_INIT(d, NULL);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_diag_output(it, LV_OUTPUT_INIT, &w), 0);
  for (int i = 0; i < steps; i++) {
    ck_assert_int_eq(lv_integrator_step(it), 0);
    ck_assert_int_eq(lv_diag_output(it, LV_OUTPUT_STEP, &w), 0);
  }
  lv_diag_get_summary(d, sum);
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  lv_diag_free(d);
  lv_integrator_free(it);
  lv_model_free(m);
  return st.steps;
}

/* The getters on a live integrator still answer, and a recorded run gives a
 * summary that is not the all-zero NULL answer. */
START_TEST(test_live_summary) {
  lv_diag_summary sum;
  ck_assert_int_eq((int)run_recorded(NULL, 5, &sum), 5);
  ck_assert_double_gt(sum.max_rel_energy_error, 0.0);
  ck_assert_double_lt(sum.max_rel_energy_error, 1e-2);
}
END_TEST

/* lv_diag_new_for takes the state layout from the integrator's scheme (issue
 * 19; lv_diag_new's has_p flag, given wrong, silently changed the energy).
 * pendulum3d (M = I, V = 9.81 q3, g = (|q|^2 - 1)/2) at a hand-made state
 * whose p is not M v: a scheme without momenta reads v, one with reads p. */
START_TEST(test_layout_from_integrator) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  double q[3] = {0, 0.6, -0.8}, v[3] = {0.6, 0.3, 0}, p[3] = {0.3, 0, 0}, lam[1] = {0}, gam[1] = {0};
  lv_state s = {.t = 0.0, .q = q, .v = v, .p = p, .lambda = lam, .gamma = gam};
  const double V = 9.81 * -0.8;
  struct {
    const char *scheme;
    double energy, momentum, gp;
  } c[2] = {
      /* no momenta: E = v.v/2 + V, J = e3.(q x v), gp = gv = |q.v| */
      {"rattle", 0.5 * (0.36 + 0.09) + V, 0.0 * 0.3 - 0.6 * 0.6, 0.18},
      /* momenta: H = p.p/2 + V, J = e3.(q x p), gp = |q.p| */
      {"em", 0.5 * 0.09 + V, -0.6 * 0.3, 0.0},
  };
  for (int k = 0; k < 2; k++) {
    lv_integrator *it = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, c[k].scheme, 0.01), 0);
    ck_assert_int_eq((lv_integrator_scheme(it)->flags & LV_SCHEME_HAS_P) != 0, k == 1);
    lv_diag *d = NULL;
    ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
    lv_integrator_free(it); /* the diagnostics keep the model, not the integrator */
    lv_diag_point pt;
    ck_assert_int_eq(lv_diag_eval(d, &s, &pt), 0);
    ck_assert_double_eq_tol(pt.energy, c[k].energy, 1e-14);
    ck_assert_double_eq_tol(pt.momentum[0], c[k].momentum, 1e-15);
    ck_assert_double_eq_tol(pt.gv_norm, 0.18, 1e-15);
    ck_assert_double_eq_tol(pt.gp_norm, c[k].gp, 1e-15);
    lv_diag_free(d);
  }
  lv_diag *d = (lv_diag *)&s; /* not NULL: a refused call must clear it */
  ck_assert_int_eq(lv_diag_new_for(&d, NULL), LV_EINPUT);
  ck_assert_ptr_null(d);
  ck_assert_int_eq(lv_diag_new_for(NULL, NULL), LV_EINPUT);
  lv_model_free(m);
}
END_TEST

/* The writer's initialiser and init function give the documented defaults. */
START_TEST(test_writer_init) {
  lv_diag *d = (lv_diag *)&d; /* any non-NULL pointer: not dereferenced */
  lv_diag_writer a = LV_DIAG_WRITER_INIT(d, stderr), b;
  memset(&b, 0xff, sizeof b);
  lv_diag_writer_init(&b, d, stderr);
  ck_assert_ptr_eq(a.diag, d);
  ck_assert_ptr_eq(a.csv, stderr);
  ck_assert_int_eq(a.every, 1);
  ck_assert_int_eq((int)a.count, 0);
  ck_assert_ptr_eq(b.diag, a.diag);
  ck_assert_ptr_eq(b.csv, a.csv);
  ck_assert_int_eq(b.every, a.every);
  ck_assert_int_eq((int)b.count, (int)a.count);
  lv_diag_writer_init(NULL, d, NULL); /* no-op */
}
END_TEST

/* A run that starts with E0 = 0 (pendulum3d at rest, horizontal, on the
 * potential's zero level) has no relative energy error: the summary says
 * NaN instead of |E - E0| / 1e-300 (once ~1e297 next to status ok), and
 * the absolute error is the figure. */
START_TEST(test_zero_initial_energy) {
  const char *keys[] = {"vy0"}, *vals[] = {"0"};
  lv_kv kv = {1, keys, vals};
  lv_diag_summary sum;
  ck_assert_int_eq((int)run_recorded(&kv, 20, &sum), 20);
  ck_assert_double_eq(sum.energy0, 0.0);
  ck_assert(isnan(sum.max_rel_energy_error));
  ck_assert(isnan(sum.energy_drift_rate));
  /* the pendulum falls: RATTLE's energy error is O(h^2), far above round-off */
  ck_assert_double_gt(sum.max_abs_energy_error, 1e-8);
  ck_assert_double_lt(sum.max_abs_energy_error, 1e-1);
}
END_TEST

/* The summary of an output writer records, for each step, the divergence
 * guard's evaluation of the same state instead of evaluating again: with
 * the guard on and off the summaries are the same bit for bit, for a scheme
 * without momenta (genalpha), one with (vi-a), and a writer whose layout
 * is not the guard's (it evaluates itself). */
static void summary_run(const char *model, const char *scheme, int guard, int layout, lv_diag_summary *sum) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create(model, NULL, &m), 0);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, scheme, 1e-3), 0);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, guard, 0.0, 0.0), 0);
  lv_diag *d = NULL;
  if (layout < 0)
    ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
  else {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    ck_assert_int_eq(lv_diag_new(&d, m, layout), 0); /* a layout of its own on purpose */
#pragma GCC diagnostic pop
  }
  lv_diag_writer w = LV_DIAG_WRITER_INIT(d, NULL);
  ck_assert_int_eq(lv_integrator_set_output(it, lv_diag_output, &w), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.05), 0);
  lv_diag_get_summary(d, sum);
  ck_assert_int_eq((int)sum->samples, 51);
  lv_diag_free(d);
  lv_integrator_free(it);
  lv_model_free(m);
}

START_TEST(test_summary_reuses_guard) {
  static const struct {
    const char *model, *scheme;
    int layout; /* -1: the integrator's (lv_diag_new_for) */
  } cases[] = {{"heavy-top", "genalpha", -1}, {"four-particle", "vi-a", -1}, {"heavy-top", "genalpha", 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    lv_diag_summary on, off;
    summary_run(cases[c].model, cases[c].scheme, 1, cases[c].layout, &on);
    summary_run(cases[c].model, cases[c].scheme, 0, cases[c].layout, &off);
    ck_assert_msg(on.max_rel_energy_error > 0.0 && on.max_momentum_error >= 0.0, "%s: empty summary",
                  cases[c].scheme);
    const double a[] = {on.energy0, on.max_abs_energy_error, on.max_rel_energy_error, on.max_energy_increment,
                        on.energy_drift_rate, on.max_momentum_error, on.max_g, on.max_gv, on.max_gp};
    const double b[] = {off.energy0, off.max_abs_energy_error, off.max_rel_energy_error, off.max_energy_increment,
                        off.energy_drift_rate, off.max_momentum_error, off.max_g, off.max_gv, off.max_gp};
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++)
      ck_assert_msg(a[k] == b[k], "%s %s layout %d: summary field %zu %.17g with the guard, %.17g without",
                    cases[c].model, cases[c].scheme, cases[c].layout, k, a[k], b[k]);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("diag");
  TCase *tc = tu_tcase(s, "core", 0.01);
  tcase_add_test(tc, test_null_getters);
  tcase_add_test(tc, test_live_summary);
  tcase_add_test(tc, test_zero_initial_energy);
  tcase_add_test(tc, test_layout_from_integrator);
  tcase_add_test(tc, test_writer_init);
  tcase_add_test(tc, test_summary_reuses_guard);
  return tu_run_suite(s);
}
