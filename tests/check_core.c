/* Status codes, parameter parsing, and bad input to the integrator:
 * every case returns a named status, none crashes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"
#include "config.h" /* PACKAGE_VERSION: configure's, read from lv_version.h */

START_TEST(test_status_strings) {
  int codes[] = {LV_SUCCESS, LV_EINPUT, LV_ENOMEM, LV_ESINGULAR, LV_ENEWTON, LV_EDIVERGE, LV_ECALLBACK,
                 LV_ENONFINITE, LV_EINCONSISTENT, LV_EUNKNOWN, LV_ENOTIMPL, LV_ELINSOL, LV_ESTEPMIN, LV_EIO,
                 LV_EPATTERN, LV_ESTOPPED};
  int n = sizeof codes / sizeof codes[0];
  for (int i = 0; i < n; i++) {
    ck_assert_ptr_nonnull(lv_strerror(codes[i]));
    ck_assert_int_gt((int)strlen(lv_strerror(codes[i])), 5);
    ck_assert_str_ne(lv_status_name(codes[i]), "LV_E?");
    for (int j = 0; j < i; j++) ck_assert_str_ne(lv_strerror(codes[i]), lv_strerror(codes[j]));
  }
  ck_assert_str_eq(lv_strerror(-999), "unknown status code");
}
END_TEST

START_TEST(test_kv) {
  const char *k[] = {"a", "b", "a", "n"}, *v[] = {"1.5", "x", "2.5e-3", "12"};
  lv_kv kv = {4, k, v};
  double x;
  int i;
  ck_assert_int_eq(lv_kv_double(&kv, "a", 0, &x), 0);
  ck_assert_double_eq(x, 2.5e-3); /* last one wins */
  ck_assert_int_eq(lv_kv_double(&kv, "b", 0, &x), LV_EINPUT);
  ck_assert_int_eq(lv_kv_double(&kv, "zz", 7, &x), 0);
  ck_assert_double_eq(x, 7);
  ck_assert_int_eq(lv_kv_int(&kv, "n", 0, &i), 0);
  ck_assert_int_eq(i, 12);
  ck_assert_int_eq(lv_kv_int(&kv, "a", 0, &i), LV_EINPUT);
  const lv_param_info info[] = {{"a", "0", ""}, {"b", "0", ""}, {NULL, NULL, NULL}};
  const char *bad = NULL;
  ck_assert_int_eq(lv_kv_check(&kv, info, &bad), LV_EUNKNOWN);
  ck_assert_str_eq(bad, "n");
  const char *kn[] = {"x"}, *vn[] = {"nan"};
  lv_kv nan_kv = {1, kn, vn};
  ck_assert_int_eq(lv_kv_double(&nan_kv, "x", 0, &x), LV_EINPUT);
}
END_TEST

START_TEST(test_integrator_bad_input) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.0), LV_EINPUT);
  ck_assert_ptr_null(it);
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", -0.1), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", NAN), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", INFINITY), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_new(&it, m, "no-such-scheme", 0.1), LV_EUNKNOWN);
  ck_assert_int_eq(lv_integrator_new(&it, NULL, "rattle", 0.1), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_new(&it, m, NULL, 0.1), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.1), 0);
  ck_assert_int_eq(lv_integrator_set_option(it, "no-such-option", "1"), LV_EUNKNOWN);
  ck_assert_int_eq(lv_integrator_step(it), LV_EINPUT); /* not initialised */
  ck_assert_int_eq(lv_integrator_set_step(it, -1), LV_EINPUT);
  double qnan[3] = {NAN, 0, 0}, v0[3] = {0, 1, 0};
  ck_assert_int_eq(lv_integrator_init(it, 0.0, qnan, v0), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_set_linsol(it, (lv_linsol_kind)7, 0), LV_EINPUT);
  lv_integrator_free(it);
  lv_model_free(m);

  /* required callbacks */
  lv_space *sp;
  ck_assert_int_eq(lv_space_new_rn(&sp, 2), 0);
  ck_assert_int_eq(lv_model_new(&m, "empty", sp, 1), 0);
  ck_assert_int_eq(lv_model_set_mass(m, NULL, 1), LV_EINPUT);
  ck_assert_int_eq(lv_model_set_constraints(m, NULL, NULL, NULL, NULL), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.1), LV_EINPUT); /* no mass, no g */
  ck_assert_int_eq(lv_model_new(&(lv_model *){NULL}, "x", NULL, 0), LV_EINPUT);
  lv_model_free(m);
}
END_TEST

/* A pendulum whose gradient callback returns NaN (or an error) on its
 * 37th call. */
typedef struct {
  int calls, bad_at, mode;
} faulty;
static int f_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) lv_sink_add(M, i, i, 1.0);
  return 0;
}
static int f_V(const double *q, double *V, void *u) {
  (void)u;
  *V = 9.81 * q[2];
  return 0;
}
static int f_dV(const double *q, double *g, void *u) {
  faulty *f = u;
  (void)q;
  g[0] = g[1] = 0;
  g[2] = 9.81;
  if (++f->calls == f->bad_at) {
    if (f->mode == 0) g[1] = NAN;
    else return 1;
  }
  return 0;
}
static int f_dV_plain(const double *q, double *g, void *u) {
  (void)q, (void)u;
  g[0] = g[1] = 0;
  g[2] = 9.81;
  return 0;
}
static int f_g(const double *q, double *g, void *u) {
  (void)u;
  g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - 1);
  return 0;
}

/* A damped oscillator (constant mass, applied force): the conservative
 * schemes refuse it instead of dropping the force, the others run it. */
static int damp_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  return lv_sink_add(M, 0, 0, 1.0);
}
static int damp_force(double t, const double *q, const double *v, double *f, void *u) {
  (void)t, (void)u;
  f[0] = -q[0] - 0.1 * v[0];
  return 0;
}
START_TEST(test_conservative_schemes_refuse_forces) {
  lv_space *sp;
  lv_model *m;
  ck_assert_int_eq(lv_space_new_rn(&sp, 1), 0);
  ck_assert_int_eq(lv_model_new(&m, "damped", sp, 0), 0);
  lv_model_set_mass(m, damp_mass, 1);
  ck_assert_int_eq(lv_model_set_force(m, damp_force, NULL, NULL), 0);
  double q0[1] = {1}, v0[1] = {0};
  lv_model_set_initial(m, q0, v0);
  const char *refuse[] = {"rattle", "midpoint", "vi-a", "vi-s", "vi-b", "em", "em-g"};
  for (size_t i = 0; i < sizeof refuse / sizeof refuse[0]; i++) {
    lv_integrator *it = NULL;
    ck_assert_msg(lv_integrator_new(&it, m, refuse[i], 0.01) == LV_ENOTIMPL, "%s accepted a force", refuse[i]);
    ck_assert(it == NULL);
  }
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 0.01), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 1.0), 0);
  /* damped: the amplitude decays like exp(-0.05 t) */
  const lv_state *s = lv_integrator_state(it);
  double E = 0.5 * (s->q[0] * s->q[0] + s->v[0] * s->v[0]);
  ck_assert_msg(E < 0.5 && E > 0.5 * exp(-0.2), "energy %g", E);
  lv_integrator_free(it);
  lv_model_free(m); /* owns sp */
}
END_TEST

START_TEST(test_callback_faults) {
  for (int mode = 0; mode < 2; mode++) {
    lv_space *sp;
    lv_model *m;
    ck_assert_int_eq(lv_space_new_rn(&sp, 3), 0);
    ck_assert_int_eq(lv_model_new(&m, "faulty", sp, 1), 0);
    faulty f = {0, 37, mode};
    lv_model_set_user(m, &f, NULL);
    lv_model_set_mass(m, f_mass, 1);
    lv_model_set_potential(m, f_V, f_dV, NULL);
    lv_model_set_constraints(m, f_g, NULL, NULL, NULL);
    double q0[3] = {1, 0, 0}, v0[3] = {0, 1, 0};
    lv_model_set_initial(m, q0, v0);
    lv_integrator *it;
    ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    int rc = lv_integrator_run_until(it, 10.0);
    ck_assert_int_eq(rc, mode == 0 ? LV_ENONFINITE : LV_ECALLBACK);
    char detail[256];
    ck_assert_int_eq(lv_integrator_error_detail(it, detail, sizeof detail), rc);
    ck_assert_msg(strstr(detail, "dV callback") != NULL, "detail: %s", detail);
    if (mode == 0) ck_assert_msg(strstr(detail, "component 2") != NULL, "detail: %s", detail);
    const char *cb;
    int row;
    ck_assert_int_eq(lv_model_last_error(m, &cb, &row, NULL), rc);
    ck_assert_str_eq(cb, "dV");
    const lv_state *s = lv_integrator_state(it);
    /* the state is the last accepted one: finite and on the constraint */
    ck_assert(isfinite(s->q[0]) && isfinite(s->q[1]) && isfinite(s->q[2]));
    ck_assert_double_gt(s->t, 0.05); /* dV runs 3x per step: 2 stages + the node multiplier */
    ck_assert_double_lt(s->t, 0.3);
    lv_integrator_free(it);
    lv_model_free(m);
  }
}
END_TEST

/* Degenerate models: redundant constraints, a mass matrix with a zero
 * block.  Both make the Newton matrix singular: a named status with a
 * hint, never NaN results. */
typedef struct {
  int redundant, zero_block;
} degen;
static int d_mass(const double *q, lv_sink *M, void *u) {
  const degen *d = u;
  (void)q;
  for (int i = 0; i < 3; i++) lv_sink_add(M, i, i, d->zero_block && i == 2 ? 0.0 : 1.0);
  return 0;
}
static int d_g(const double *q, double *g, void *u) {
  const degen *d = u;
  g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - 1);
  if (d->redundant) g[1] = 2.0 * g[0]; /* a multiple of g1 */
  return 0;
}
static int d_G(const double *q, lv_sink *G, void *u) {
  const degen *d = u;
  for (int j = 0; j < 3; j++) lv_sink_add(G, 0, j, q[j]);
  for (int j = 0; j < 3 && d->redundant; j++) lv_sink_add(G, 1, j, 2.0 * q[j]);
  return 0;
}

START_TEST(test_singular_models) {
  for (int kind = 0; kind < 2; kind++) {
    lv_space *sp;
    lv_model *m;
    ck_assert_int_eq(lv_space_new_rn(&sp, 3), 0);
    ck_assert_int_eq(lv_model_new(&m, "degenerate", sp, kind == 0 ? 2 : 1), 0);
    degen d = {kind == 0, kind == 1};
    lv_model_set_user(m, &d, NULL);
    lv_model_set_mass(m, d_mass, 1);
    lv_model_set_potential(m, f_V, f_dV_plain, NULL);
    lv_model_set_constraints(m, d_g, d_G, NULL, NULL);
    double q0[3] = {1, 0, 0}, v0[3] = {0, 1, 0};
    lv_model_set_initial(m, q0, v0);
    lv_integrator *it;
    ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
    int rc = lv_integrator_init(it, 0.0, NULL, NULL);
    if (rc == 0) rc = lv_integrator_step(it);
    ck_assert_int_eq(rc, LV_ESINGULAR);
    char detail[256];
    lv_integrator_error_detail(it, detail, sizeof detail);
    ck_assert_msg(strstr(detail, "redundant constraints") && strstr(detail, "zero mass"), "%s", detail);
    const lv_state *s = lv_integrator_state(it);
    ck_assert(isfinite(s->q[0]) && isfinite(s->v[1]));
    lv_integrator_free(it);
    lv_model_free(m);
  }
}
END_TEST

/* Initial values off the constraint in check mode: the detail gives the
 * figures. */
START_TEST(test_inconsistent_detail) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_set_init_mode(it, LV_INIT_CHECK, 1e-8), 0);
  double q0[3] = {1.1, 0, 0}, v0[3] = {0, 1, 0};
  ck_assert_int_eq(lv_integrator_init(it, 0.0, q0, v0), LV_EINCONSISTENT);
  char detail[256];
  lv_integrator_error_detail(it, detail, sizeof detail);
  ck_assert_msg(strstr(detail, "max|g(q0)| = 1.050e-01") && strstr(detail, "check mode"), "%s", detail);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* A scheme whose create fails on an option value after allocating: the
 * integrator releases it (the sanitizer build's leak check fails if not). */
START_TEST(test_create_failure_releases) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  const char *cases[][3] = {{"vi-a", "theta", "7"}, {"em", "guess", "psychic"}, {"genalpha", "rho-inf", "-3"}};
  for (int i = 0; i < 3; i++) {
    if (!lv_scheme_find(cases[i][0])) continue;
    lv_integrator *it;
    ck_assert_int_eq(lv_integrator_new(&it, m, cases[i][0], 0.01), 0);
    ck_assert_int_eq(lv_integrator_set_option(it, cases[i][1], cases[i][2]), 0);
    int rc = lv_integrator_init(it, 0.0, NULL, NULL);
    ck_assert_msg(rc == LV_EINPUT || rc == LV_EUNKNOWN, "%s %s=%s gave %s", cases[i][0], cases[i][1],
                  cases[i][2], lv_status_name(rc));
    lv_integrator_free(it);
  }
  lv_model_free(m);
}
END_TEST

/* The version in one place (issue 19): the library's string, the header's
 * numbers and configure's PACKAGE_VERSION agree. */
START_TEST(test_version_one_place) {
  char buf[64];
  snprintf(buf, sizeof buf, "%d.%d.%d", LIVENS_VERSION_MAJOR, LIVENS_VERSION_MINOR, LIVENS_VERSION_PATCH);
  ck_assert_str_eq(lv_version(), buf);
  ck_assert_str_eq(lv_version(), LIVENS_VERSION_STRING);
  ck_assert_str_eq(lv_version(), PACKAGE_VERSION);
}
END_TEST

int main(void) {
  Suite *s = suite_create("core");
  TCase *tc = tu_tcase(s, "core", 0.01);
  tcase_add_test(tc, test_status_strings);
  tcase_add_test(tc, test_kv);
  tcase_add_test(tc, test_integrator_bad_input);
  tcase_add_test(tc, test_callback_faults);
  tcase_add_test(tc, test_conservative_schemes_refuse_forces);
  tcase_add_test(tc, test_singular_models);
  tcase_add_test(tc, test_inconsistent_detail);
  tcase_add_test(tc, test_create_failure_releases);
  tcase_add_test(tc, test_version_one_place);
  return tu_run_suite(s);
}
