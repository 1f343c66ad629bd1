/* Issue 14 §1: no unconverged step is ever accepted.  A Newton test whose
 * meaning changes with h lets the predictor pass once h is small (the
 * generalized-alpha dynamics rows are stored divided by beta' ~ 1/h^2:
 * heavy top, h = 1e-6, 0.29 iterations per step, energy error 7.7e-5 with
 * status ok).  Here every scheme and formulation is swept from h = 1e-3
 * down to 1e-7 on [0, T]: the error of the final state against an
 * independent reference (BLieDF k = 4 at a small step, checked against
 * half as many steps) must fall at the scheme's order until it reaches a
 * round-off floor, which must lie below 1e-9, and it must never rise while
 * the run reports success.  Set CV_VERBOSE=1 for the numbers. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

#define T_END 1e-2 /* 10 steps at h = 1e-3 (BLieDF past its start), 10^5 at 1e-7 */
#define FLOOR 1e-9 /* the round-off floor must lie below this */
#define NH 5
static const double H[NH] = {1e-3, 1e-4, 1e-5, 1e-6, 1e-7};

static int verbose(void) { return getenv("CV_VERBOSE") != NULL; }

/* ---- an unconstrained model on R^3 for the midpoint rule ---- */
static int c_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) lv_sink_add(M, i, i, 1.0 + i);
  return 0;
}

static lv_model *model(const char *name, const char *form) {
  lv_model *m = NULL;
  if (strcmp(name, "central") == 0) {
    lv_space *sp = NULL; /* owned by the model */
    ck_assert_int_eq(lv_space_new_rn(&sp, 3), 0);
    ck_assert_int_eq(lv_model_new(&m, "central", sp, 0), 0);
    lv_model_set_mass(m, c_mass, 1);
    lv_model_set_potential(m, tu_quartic_V, tu_quartic_dV, NULL);
    double q0[3] = {1.0, 0.2, -0.1}, v0[3] = {30.0, 90.0, 40.0};
    lv_model_set_initial(m, q0, v0);
    return m;
  }
  const char *k[1] = {"formulation"}, *v[1] = {form};
  lv_kv kv = {form ? 1 : 0, k, v};
  ck_assert_int_eq(lv_model_create(name, &kv, &m), 0);
  return m;
}
static void model_free(lv_model *m) { lv_model_free(m); }

typedef struct {
  int rc;
  double iters; /* Newton iterations per step */
  int nq, nv;
  double q[64], v[64];
} run_end;

/* opt: NULL-terminated key, value list. */
static run_end run(lv_model *m, const char *scheme, const char *const *opt, double h, double T) {
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, scheme, h), 0);
  for (int i = 0; opt && opt[i]; i += 2) ck_assert_int_eq(lv_integrator_set_option(it, opt[i], opt[i + 1]), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  run_end r;
  memset(&r, 0, sizeof r);
  long N = lround(T / h);
  for (long n = 0; n < N && r.rc == 0; n++) r.rc = lv_integrator_step(it);
  const lv_state *s = lv_integrator_state(it);
  r.nq = lv_model_nq(m);
  r.nv = lv_model_nv(m);
  ck_assert_int_le(r.nq, 64);
  memcpy(r.q, s->q, (size_t)r.nq * sizeof(double));
  memcpy(r.v, s->v, (size_t)r.nv * sizeof(double));
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  r.iters = st.steps > 0 ? (double)st.newton_iterations / (double)st.steps : 0.0;
  lv_integrator_free(it);
  return r;
}

/* |q - q_ref|_inf: q is O(1) in every model (matrix entries for rotations). */
static double error_q(const run_end *a, const run_end *ref) { return tu_max_abs_diff(a->nq, a->q, ref->q); }
/* |v - v_ref|_inf / max(|v_ref|_inf, 1): the top spins at 150. */
static double error_v(const run_end *a, const run_end *ref) {
  return tu_max_abs_diff(a->nv, a->v, ref->v) / fmax(tu_norm_inf(ref->nv, ref->v), 1.0);
}
static double error(const run_end *a, const run_end *ref) { return fmax(error_q(a, ref), error_v(a, ref)); }

/* ---- references, one per model and formulation ---- */
typedef struct {
  const char *model, *form;
  double h;
  run_end r;
  int have;
} reference;
static reference refs[] = {
    {"pendulum3d", NULL, 1e-4, {0}, 0}, {"four-particle", NULL, 2e-5, {0}, 0},
    {"central", NULL, 2e-6, {0}, 0},    {"heavy-top", "so3", 5e-6, {0}, 0},
    {"heavy-top", "r3so3", 5e-6, {0}, 0}, {"heavy-top", "se3", 5e-6, {0}, 0},
};

static const run_end *get_reference(const char *name, const char *form) {
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
    reference *R = &refs[i];
    if (strcmp(R->model, name) != 0 || (form ? !R->form || strcmp(R->form, form) : R->form != NULL)) continue;
    if (!R->have) {
      lv_model *m = model(name, form);
      R->r = run(m, "bliedf4", NULL, R->h, T_END);
      run_end half = run(m, "bliedf4", NULL, 2.0 * R->h, T_END);
      model_free(m);
      ck_assert_int_eq(R->r.rc, 0);
      ck_assert_int_eq(half.rc, 0);
      /* order 4: the reference is ~16x closer than the run at twice its step */
      double e = error(&half, &R->r);
      if (verbose()) printf("reference %s %s: bliedf4 h = %g, difference to 2h %.2e\n", name, form ? form : "", R->h, e);
      ck_assert_msg(e < 1e-10, "reference %s %s not converged: %.2e", name, form ? form : "", e);
      R->have = 1;
    }
    return &R->r;
  }
  ck_abort_msg("no reference for %s", name);
  return NULL;
}

/* ---- the sweep ---- */
typedef struct {
  const char *model, *form, *scheme;
  int order;
  const char *opt[9];
  /* index 3 in the velocities (constraints on positions only): v is
   * differenced from positions known to eps, so its round-off floor grows
   * like eps / h (pendulum, genalpha index 3: |G v| = 1.2e-10, 1.5e-9,
   * 2.3e-8 at h = 1e-5, 1e-6, 1e-7 whatever the Newton tolerance); the
   * sweep judges q, and v only against that floor */
  int index3;
} config;

/* Round-off floor of v for index-3 configurations (see config). */
static double floor_v3(double h) { return fmax(FLOOR, 1e4 * 2.220446049250313e-16 / h); }

/* Errors at H[0..NH-1]; asserts the claim of the file comment. */
static void sweep(const config *c) {
  const run_end *ref = get_reference(c->model, c->form);
  lv_model *m = model(c->model, c->form);
  double e[NH], ev[NH];
  char name[160];
  snprintf(name, sizeof name, "%s%s%s %s", c->model, c->form ? " " : "", c->form ? c->form : "", c->scheme);
  for (int k = 0; c->opt[k]; k += 2) {
    size_t l = strlen(name);
    snprintf(name + l, sizeof name - l, " %s=%s", c->opt[k], c->opt[k + 1]);
  }
  for (int i = 0; i < NH; i++) {
    run_end r = run(m, c->scheme, c->opt, H[i], T_END);
    /* a failure is a named status, never a wrong "ok"; the sweep below
     * only judges runs that report success */
    e[i] = r.rc == 0 ? (c->index3 ? error_q(&r, ref) : error(&r, ref)) : NAN;
    ev[i] = r.rc == 0 ? error_v(&r, ref) : NAN;
    if (verbose())
      printf("%-52s h = %.0e  error %.3e (v %.3e)  %.2f it/step  rc %d\n", name, H[i], e[i], ev[i], r.iters, r.rc);
    ck_assert_msg(r.rc == 0 || i == 0, "%s h = %g: status %d", name, H[i], r.rc);
    if (c->index3 && i > 0)
      ck_assert_msg(ev[i] <= fmax(ev[0], floor_v3(H[i])), "%s: velocity error %.3e at h = %g", name, ev[i], H[i]);
  }
  model_free(m);
  if (verbose()) { /* fitted order over the points above the floor */
    double hh[NH], ee[NH];
    int n = 0;
    for (int i = 0; i < NH; i++)
      if (e[i] > 1e-10) hh[n] = H[i], ee[n++] = e[i];
    if (n >= 2) printf("%-52s fitted order %.2f over %d step sizes\n", name, tu_fit_order(n, hh, ee), n);
  }
  for (int i = 1; i < NH; i++) {
    if (isnan(e[i - 1])) continue;
    /* at the scheme's order (a quarter order of slack, and 2x for the
     * constant) until the floor, and never above the floor below it: a
     * stall or a rise above FLOOR fails */
    double expect = e[i - 1] * 2.0 * pow(H[i] / H[i - 1], c->order - 0.25);
    ck_assert_msg(e[i] <= fmax(expect, FLOOR), "%s: error %.3e at h = %g after %.3e at h = %g (order %d expected)",
                  name, e[i], H[i], e[i - 1], H[i - 1], c->order);
  }
}

#define A(...) {__VA_ARGS__, NULL}

/* The redundant-coordinate models: every scheme that runs them. */
static const config rd[] = {
    {"pendulum3d", NULL, "rattle", 2, {NULL}, 0},
    {"pendulum3d", NULL, "vi-s", 1, {NULL}, 0},
    /* vi-a is order 2 in its node values, but the stored state lags by
     * O(h) (pendulum: error g h / 2 at every h, old code alike) */
    {"pendulum3d", NULL, "vi-a", 1, {NULL}, 0},
    {"pendulum3d", NULL, "vi-b", 1, {NULL}, 0},
    {"pendulum3d", NULL, "em", 2, {NULL}, 0},
    {"pendulum3d", NULL, "em-g", 2, {NULL}, 1},
    {"pendulum3d", NULL, "genalpha", 2, A("index", "3", "start", "standard"), 1},
    {"pendulum3d", NULL, "genalpha", 2, A("index", "2"), 0},
    {"pendulum3d", NULL, "bliedf1", 1, {NULL}, 1},
    {"pendulum3d", NULL, "bliedf2", 2, {NULL}, 1},
    {"pendulum3d", NULL, "bliedf3", 3, {NULL}, 1},
    {"four-particle", NULL, "rattle", 2, {NULL}, 0},
    {"four-particle", NULL, "vi-s", 1, {NULL}, 0},
    {"four-particle", NULL, "vi-a", 1, {NULL}, 0},
    {"four-particle", NULL, "vi-b", 1, {NULL}, 0},
    {"four-particle", NULL, "em", 2, {NULL}, 0},
    {"four-particle", NULL, "em-g", 2, {NULL}, 1},
    {"four-particle", NULL, "genalpha", 2, A("index", "3"), 1},
    {"four-particle", NULL, "genalpha", 2, A("index", "2", "start", "standard"), 0},
    {"four-particle", NULL, "bliedf2", 2, {NULL}, 1},
    {"central", NULL, "midpoint", 2, {NULL}, 0},
};

START_TEST(test_redundant) { sweep(&rd[_i]); }
END_TEST

/* The heavy top in its three Lie group formulations. */
static const char *const forms[3] = {"so3", "r3so3", "se3"};

START_TEST(test_top_genalpha) {
  /* _i = formulation * 4 + index * 2 + start */
  const char *index = (_i / 2) % 2 ? "2" : "3", *start = _i % 2 ? "perturbed" : "standard";
  config c = {"heavy-top", forms[_i / 4], "genalpha", 2, A("index", index, "start", start), _i >= 4 && *index == '3'};
  sweep(&c);
}
END_TEST

START_TEST(test_top_bliedf) {
  static const char *const sch[4] = {"bliedf1", "bliedf2", "bliedf3", "bliedf4"};
  config c = {"heavy-top", forms[_i / 4], sch[_i % 4], _i % 4 + 1, {NULL}, _i >= 4};
  sweep(&c);
}
END_TEST

START_TEST(test_top_sigma) {
  const char *sig = _i % 2 ? "optimal" : "1", *index = _i / 2 ? "2" : "3";
  config c = {"heavy-top", "r3so3", "genalpha", 2, A("index", index, "sigma", sig), *index == '3'};
  sweep(&c);
}
END_TEST

/* ---- the reproducers, directly ---- */

/* max |E - E0| / |E0| and Newton iterations per step over [0, T]. */
static void energy_run(const char *form, const char *const *opt, double h, double T, double *dE, double *ips) {
  lv_model *m = model("heavy-top", form);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", h), 0);
  for (int i = 0; opt[i]; i += 2) ck_assert_int_eq(lv_integrator_set_option(it, opt[i], opt[i + 1]), 0);
  lv_diag *d = NULL;
  ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
  lv_diag_writer w = LV_DIAG_WRITER_INIT(d, NULL);
  lv_integrator_set_output(it, lv_diag_output, &w);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, T), 0);
  lv_diag_summary sum;
  lv_diag_get_summary(d, &sum);
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  *dE = sum.max_rel_energy_error;
  *ips = (double)st.newton_iterations / (double)st.steps;
  lv_diag_free(d);
  lv_integrator_free(it);
  lv_model_free(m);
}

START_TEST(test_reproducers) {
  /* livens run heavy-top --param formulation=so3 --scheme genalpha --opt
   * start=standard --step 1e-6 --t-end 0.05: was 0.29 it/step, 7.7e-5 */
  static const struct {
    const char *form, *index;
    double h;
  } cases[] = {{"so3", "3", 1e-6}, {"r3so3", "3", 2e-6}, {"se3", "2", 1e-6}};
  for (int c = 0; c < 3; c++) {
    const char *opt[] = {"index", cases[c].index, "start", "standard", NULL};
    double dE, ips, dE2, ips2;
    energy_run(cases[c].form, opt, cases[c].h, 0.05, &dE, &ips);
    energy_run(cases[c].form, opt, 2.0 * cases[c].h, 0.05, &dE2, &ips2);
    if (verbose())
      printf("heavy-top %s index %s: h = %g: max|dE|/E0 %.3e, %.2f it/step; 2h: %.3e, %.2f it/step\n",
             cases[c].form, cases[c].index, cases[c].h, dE, ips, dE2, ips2);
    ck_assert_msg(ips >= 1.0, "%s: %.2f Newton iterations per step", cases[c].form, ips);
    /* h^2: a quarter of the error at 2h, with room for round-off */
    ck_assert_msg(dE <= 0.5 * dE2 + 1e-13, "%s: energy error %.3e at h = %g, %.3e at 2h", cases[c].form, dE,
                  cases[c].h, dE2);
    ck_assert_msg(dE < 1e-10, "%s: energy error %.3e", cases[c].form, dE);
  }
}
END_TEST

/* EM and EM-G conserve energy to round-off at every h: in position units
 * their momentum rows and g passed after one correction at h <= 1e-6 with
 * velocity defects ~ 1e-6 (pendulum, t = 2e-3: EM 4e-10 at h = 1e-7, EM-G
 * 2e-9 at 1e-6). */
START_TEST(test_em_energy) {
  static const struct {
    const char *scheme;
    double h;
  } cases[] = {{"em", 1e-7}, {"em-g", 1e-6}, {"em-g", 1e-7}};
  for (int c = 0; c < 3; c++) {
    lv_model *m = model("pendulum3d", NULL);
    lv_integrator *it = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, cases[c].scheme, cases[c].h), 0);
    lv_diag *d = NULL;
    ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
    lv_diag_writer w = LV_DIAG_WRITER_INIT(d, NULL);
    lv_integrator_set_output(it, lv_diag_output, &w);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    ck_assert_int_eq(lv_integrator_run_until(it, 2e-3), 0);
    lv_diag_summary sum;
    lv_diag_get_summary(d, &sum);
    if (verbose()) printf("pendulum3d %s h = %g: max|dE|/E0 %.3e\n", cases[c].scheme, cases[c].h, sum.max_rel_energy_error);
    ck_assert_msg(sum.max_rel_energy_error < 1e-12, "%s h = %g: energy error %.3e", cases[c].scheme, cases[c].h,
                  sum.max_rel_energy_error);
    lv_diag_free(d);
    lv_integrator_free(it);
    lv_model_free(m);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("convergence");
  TCase *tc = tu_tcase(s, "sweep", 1.5); /* run without fork: Check enforces no timeout */
  tcase_add_test(tc, test_reproducers);
  tcase_add_test(tc, test_em_energy);
  tcase_add_loop_test(tc, test_redundant, 0, (int)(sizeof rd / sizeof rd[0]));
  tcase_add_loop_test(tc, test_top_genalpha, 0, 12);
  tcase_add_loop_test(tc, test_top_bliedf, 0, 12);
  tcase_add_loop_test(tc, test_top_sigma, 0, 4);
  return tu_run_suite_fork(s, CK_NOFORK); /* the references are computed once */
}
