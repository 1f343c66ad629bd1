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

/* The getters on a live integrator still answer, and a recorded run gives a
 * summary that is not the all-zero NULL answer. */
START_TEST(test_live_summary) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  ck_assert_int_gt(lv_model_nq(m), 0);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 1e-2), 0);
  ck_assert_ptr_eq(lv_integrator_model(it), m);
  ck_assert_ptr_nonnull(lv_integrator_scheme(it));
  lv_diag *d = NULL;
  ck_assert_int_eq(lv_diag_new(&d, m, 1), 0);
  lv_diag_writer w = {d, NULL, 1, 0};
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_diag_output(it, LV_OUTPUT_INIT, &w), 0);
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(lv_integrator_step(it), 0);
    ck_assert_int_eq(lv_diag_output(it, LV_OUTPUT_STEP, &w), 0);
  }
  lv_diag_summary sum;
  lv_diag_get_summary(d, &sum);
  ck_assert_double_gt(sum.max_rel_energy_error, 0.0);
  ck_assert_double_lt(sum.max_rel_energy_error, 1e-2);
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  ck_assert_int_eq((int)st.steps, 5);
  lv_diag_free(d);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("diag");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_null_getters);
  tcase_add_test(tc, test_live_summary);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
