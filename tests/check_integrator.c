/* The integrator as a state machine: the divergence guard (a blown-up run
 * is never reported ok) and what a refused init leaves behind. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

static lv_model *builtin(const char *name) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create(name, NULL, &m), 0);
  return m;
}

/* Issue 14 reproducer: genalpha on the gyro top at h = 1e-3 reaches
 * max|dE|/E0 = 1e5 and |Gv| = 3e4 by t = 0.5 and used to finish with status
 * 0.  The guard stops it; switched off, the old behaviour returns (which
 * also shows the guard is what catches it). */
START_TEST(test_gyro_top_genalpha_diverges) {
  lv_model *m = builtin("gyro-top");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  int rc = lv_integrator_run_until(it, 0.5);
  char buf[512];
  ck_assert_int_eq(rc, LV_EDIVERGED);
  ck_assert_int_eq(lv_integrator_error_detail(it, buf, sizeof buf), LV_EDIVERGED);
  ck_assert_msg(strstr(buf, "diverged at t = ") && strstr(buf, "exceeds the bound"), "detail: %s", buf);
  double t_stop = lv_integrator_state(it)->t;
  ck_assert_msg(t_stop > 0.0 && t_stop < 0.5, "stopped at t = %g", t_stop);
  /* No state to continue from. */
  ck_assert_int_eq(lv_integrator_step(it), LV_EINPUT);
  lv_integrator_free(it);

  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 0, 0, 0), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.5), 0);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* Issue 14 reproducer: RATTLE at h = 1 on four-particle with 30 halvings
 * converged to spurious roots (energy error 6.6e4) and returned 0. */
START_TEST(test_four_particle_rattle_halving_diverges) {
  lv_model *m = builtin("four-particle");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 1.0), 0);
  ck_assert_int_eq(lv_integrator_set_halving(it, 30), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 20.0), LV_EDIVERGED);
  char buf[512];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "energy error"), "detail: %s", buf);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* The bounds are settable: RATTLE's energy error on the pendulum (~1e-4 at
 * h = 0.01) trips a bound of 1e-9 but not the default; invalid bounds are
 * refused. */
START_TEST(test_guard_settable) {
  lv_model *m = builtin("pendulum3d");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, -1.0, 0), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, 0, NAN), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.5), 0);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, 1e-9, 0), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.5), LV_EDIVERGED);
  char buf[512];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "relative energy error") && strstr(buf, "1e-09"), "detail: %s", buf);
  /* The same tight bound on the constraints: RATTLE keeps g and Gv at
   * round-off, so only the energy bound trips. */
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, 0, 1e-9), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.5), 0);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

static int unit_mass(const double *q, lv_sink *s, void *user) {
  (void)q;
  (void)user;
  return lv_sink_add(s, 0, 0, 1.0);
}

/* A free particle at 1e308 moving at 1e308: one step overflows the
 * position to Inf while every callback stays finite. */
START_TEST(test_nonfinite_state) {
  lv_space *sp;
  ck_assert_int_eq(lv_space_new_rn(&sp, 1), 0);
  lv_model *m;
  ck_assert_int_eq(lv_model_new(&m, "free", sp, 0), 0);
  ck_assert_int_eq(lv_model_set_mass(m, unit_mass, 1), 0);
  double q0 = 1e308, v0 = 1e308;
  ck_assert_int_eq(lv_model_set_initial(m, &q0, &v0), 0);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "midpoint", 1.0), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  int rc = lv_integrator_step(it);
  char buf[512];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(rc == LV_EDIVERGED && strstr(buf, "NaN or Inf"), "status %d, detail: %s", rc, buf);
  ck_assert(isfinite(lv_integrator_state(it)->q[0]));
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* Issue 14: a re-init refused in check mode used to leave a half-overwritten
 * state (|q|^2 - 1 = -0.75... from q = (2, 0, 0)) that the next step
 * advanced with status 0.  Now steps are refused until an init succeeds. */
START_TEST(test_refused_reinit) {
  lv_model *m = builtin("pendulum3d");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(lv_integrator_step(it), 0);
  ck_assert_int_eq(lv_integrator_set_init_mode(it, LV_INIT_CHECK, 1e-10), 0);
  double q[3] = {2, 0, 0}, v[3] = {0, 0, 0};
  ck_assert_int_eq(lv_integrator_init(it, 0.0, q, v), LV_EINCONSISTENT);
  ck_assert_int_eq(lv_integrator_step(it), LV_EINPUT);
  char buf[512];
  ck_assert_int_eq(lv_integrator_error_detail(it, buf, sizeof buf), LV_EINPUT);
  ck_assert_msg(strstr(buf, "lv_integrator_init"), "detail: %s", buf);
  ck_assert_int_eq(lv_integrator_run_until(it, 1.0), LV_EINPUT);
  /* A successful init makes it usable again. */
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(lv_integrator_step(it), 0);
  const double *qs = lv_integrator_state(it)->q;
  double r2 = qs[0] * qs[0] + qs[1] * qs[1] + qs[2] * qs[2];
  ck_assert_msg(fabs(r2 - 1.0) < 1e-12, "|q|^2 - 1 = %g", r2 - 1.0);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("integrator");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_gyro_top_genalpha_diverges);
  tcase_add_test(tc, test_four_particle_rattle_halving_diverges);
  tcase_add_test(tc, test_guard_settable);
  tcase_add_test(tc, test_nonfinite_state);
  tcase_add_test(tc, test_refused_reinit);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
