/* Diagnostics and the getters around them: a NULL argument is a status or a
 * documented value, never a crash (issue 14, section 3). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include "livens/livens.h"
#include "testutil.h"
#include "diag/shortest.h"
#include "lv_internal.h" /* lv_mbs_model_has_columns */

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

/* ------------------------------------------------ the CSV rows' numbers */

/* The text of x reads back to x bit for bit; it is laid out as %.17g lays
 * out its own (fixed point for a decimal exponent from -4 to 16, else
 * d.ddde+XX with two exponent digits at least); with double-conversion it
 * has the fewest digits that do so: rounded to one digit fewer (glibc's
 * %.*e, correctly rounded), x no longer reads back. */
static void check_number(double x) {
  char buf[LV_CSV_NUMBER_BUF + 8];
  int n = lv_csv_number(buf, x);
  ck_assert_int_eq(n, (int)strlen(buf));
  ck_assert_msg(n > 0 && n < LV_CSV_NUMBER_BUF, "%a: length %d", x, n);
  char *end;
  double y = strtod(buf, &end);
  ck_assert_msg(*end == '\0' && memcmp(&x, &y, sizeof x) == 0, "%a printed as '%s', reads back as %a", x, buf, y);
  /* digits and decimal exponent of the text */
  const char *p = buf + (buf[0] == '-'), *e = strchr(p, 'e');
  int nd = 0, first = -1, pos = 0, point = -1;
  for (const char *c = p; *c && c != e; c++) {
    if (*c == '.') {
      point = pos;
      continue;
    }
    if (*c != '0' && first < 0) first = pos;
    if (first >= 0) nd++;
    pos++;
  }
  if (point < 0) point = pos;
  if (first < 0) return; /* a zero: "0" or "-0" */
  /* trailing zeros of an integer written in full are not digits of x */
  if (!e) {
    const char *c = p + strlen(p) - 1;
    while (point == pos && c > p && *c == '0') nd--, c--;
  }
  int X = e ? atoi(e + 1) : point - first - 1;
  if (e) {
    ck_assert_msg(X < -4 || X >= 17, "'%s': exponent %d is written in fixed point by %%.17g", buf, X);
    ck_assert_msg(strlen(e + 2) >= 2 && (e[1] == '+' || e[1] == '-'), "'%s': exponent not as %%.17g writes it", buf);
  } else {
    ck_assert_msg(X >= -4 && X < 17, "'%s': exponent %d is written as d.ddde+XX by %%.17g", buf, X);
  }
  ck_assert_msg(nd <= 17, "'%s': %d digits", buf, nd);
#ifdef LV_HAVE_DCONV
  if (nd > 1) {
    char shorter[64];
    snprintf(shorter, sizeof shorter, "%.*e", nd - 2, x);
    double z = strtod(shorter, NULL);
    ck_assert_msg(memcmp(&x, &z, sizeof x) != 0, "'%s' is not the shortest: '%s' reads back to %a too", buf, shorter, x);
  }
#endif
}

START_TEST(test_csv_numbers) {
  const double special[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 1.0 / 3.0, 2.0 / 3.0, 1e-5, 1e-4, 9.9999e-5,
                            1.2345e-5, 1e16, 1e17, 1.5e16, 9.999999999999999e16, 123456789012345678.0, 1e22, 1e23,
                            DBL_MAX, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN, 5e-324, 4.9e-324, 1.7976931348623157e308,
                            1.00000762939453125, 0.070000000000000007, 100.0, 5435.696790865547, -319.525988166,
                            9007199254740993.0, 9007199254740992.0, 1e100, 1e-100, 1e300, 1e-300, 2.5e-5, 7e-5};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) check_number(special[i]);
  /* every exponent: random bit patterns (finite ones) */
  uint64_t st = 88172645463325252u;
  for (int i = 0; i < 200000; i++) {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    double x;
    memcpy(&x, &st, sizeof x);
    if (isfinite(x)) check_number(x);
  }
  /* and values of the size a simulation writes, at every scale */
  for (int i = 0; i < 100000; i++) {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    double x = ldexp((double)(st >> 11) / 9007199254740992.0, (int)(st % 80) - 40);
    check_number(i & 1 ? -x : x);
  }
  /* what %.17g writes for the non-finite values */
  char buf[LV_CSV_NUMBER_BUF], ref[64];
  const double nf[] = {INFINITY, -INFINITY, NAN};
  for (int i = 0; i < 3; i++) {
    lv_csv_number(buf, nf[i]);
    snprintf(ref, sizeof ref, "%.17g", nf[i]);
    ck_assert_str_eq(buf, ref);
  }
#ifdef LV_HAVE_DCONV
  /* the layout, for a few values written out */
  const struct { double x; const char *s; } want[] = {
      {0.1, "0.1"}, {-0.0, "-0"}, {1e-5, "1e-05"}, {1e-4, "0.0001"}, {1.5e16, "15000000000000000"},
      {1e17, "1e+17"}, {5e-324, "5e-324"}, {DBL_MAX, "1.7976931348623157e+308"}, {150.0, "150"},
      {-4.61538, "-4.61538"}, {1e100, "1e+100"}, {0.070000000000000007, "0.07"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    lv_csv_number(buf, want[i].x);
    ck_assert_str_eq(buf, want[i].s);
  }
#endif
}
END_TEST

/* A row's q and pose columns are each number's text as lv_csv_number
 * writes it: the poses that are the coordinates themselves (R^3 x SO(3))
 * take the q columns' text, the others (Euler parameters: R computed) are
 * written anew; both against the poses computed here. */
START_TEST(test_csv_pose_columns) {
  const char *models[] = {"heavy-top", "heavy-top-ep", "rigid-chain"};
  for (int k = 0; k < 3; k++) {
    lv_model *m = NULL;
    ck_assert_int_eq(lv_model_create(models[k], NULL, &m), 0);
    lv_integrator *it = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    for (int n = 0; n < 5; n++) ck_assert_int_eq(lv_integrator_step(it), 0);
    lv_diag *d = NULL;
    ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
    lv_diag_point pt;
    const lv_state *st = lv_integrator_state(it);
    ck_assert_int_eq(lv_diag_eval(d, st, &pt), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(lv_diag_csv_row(f, it, &pt), 0);
    fclose(f);
    /* the row's fields */
    int nf = 1;
    for (char *c = buf; *c; c++)
      if (*c == ',') *c = '\0', nf++;
    const char **fld = malloc(sizeof *fld * (size_t)nf);
    ck_assert_ptr_nonnull(fld);
    fld[0] = buf;
    for (int i = 1, j = 0; i < nf; j++)
      if (buf[j] == '\0') fld[i++] = buf + j + 1;
    char *nl = strchr(fld[nf - 1], '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    char want[LV_CSV_NUMBER_BUF];
    int nq = lv_model_nq(m), ne = lv_mbs_model_elements(m), npose = 0;
    for (int i = 0; i < nq; i++) {
      lv_csv_number(want, st->q[i]);
      ck_assert_str_eq(fld[1 + i], want);
    }
    /* the poses are the row's last columns, element by element */
    int col = nf;
    for (int id = 1; id < ne; id++) {
      int rigid = 0;
      if (lv_mbs_model_has_columns(m, id) && !lv_mbs_model_element(m, id, NULL, &rigid)) col -= rigid ? 12 : 3;
    }
    for (int id = 1; id < ne; id++) {
      int rigid = 0;
      double x[3], R[9];
      if (!lv_mbs_model_has_columns(m, id) || lv_mbs_model_element(m, id, NULL, &rigid)) continue;
      ck_assert_int_eq(lv_mbs_model_pose(m, id, st->q, x, R), 0);
      for (int i = 0; i < (rigid ? 12 : 3); i++, npose++) {
        lv_csv_number(want, i < 3 ? x[i] : R[i - 3]);
        ck_assert_msg(strcmp(fld[col++], want) == 0, "%s element %d pose %d: '%s', want '%s'", models[k], id, i,
                      fld[col - 1], want);
      }
    }
    ck_assert_int_eq(col, nf);
    ck_assert_int_gt(npose, 0);
    free(fld);
    free(buf);
    lv_diag_free(d);
    lv_integrator_free(it);
    lv_model_free(m);
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
  tc = tu_tcase(s, "numbers", 0.5);
  tcase_add_test(tc, test_csv_numbers);
  tcase_add_test(tc, test_csv_pose_columns);
  return tu_run_suite(s);
}
