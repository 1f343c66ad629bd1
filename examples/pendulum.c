/* The README's example: RATTLE on the 3D pendulum through the installed
 * library.  Build: cc pendulum.c $(pkg-config --cflags --libs livens) */
#include <stdio.h>
#include <livens/livens.h>

int main(void) {
  lv_model *model = NULL;
  lv_integrator *it = NULL;
  lv_diag *diag = NULL;
  const char *keys[] = {"l"}, *values[] = {"1.0"};
  lv_kv params = LV_KV_INIT(1, keys, values);
  int rc = lv_model_create("pendulum3d", &params, &model);
  if (!rc) rc = lv_integrator_new(&it, model, "rattle", 0.01);
  if (!rc) rc = lv_diag_new_for(&diag, it);
  lv_diag_writer out = LV_DIAG_WRITER_INIT(diag, NULL);   /* summary only, no CSV */
  if (!rc) rc = lv_integrator_set_output(it, lv_diag_output, &out);
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);  /* model's initial values */
  if (!rc) rc = lv_integrator_run_until(it, 100.0);
  if (rc) {
    fprintf(stderr, "livens: %s\n", lv_strerror(rc));
  } else {
    lv_diag_summary s;
    lv_diag_get_summary(diag, &s);
    printf("max rel. energy error %.3e, momentum error %.3e, max |g| %.3e\n",
           s.max_rel_energy_error, s.max_momentum_error, s.max_g);
  }
  lv_diag_free(diag);
  lv_integrator_free(it);
  lv_model_free(model);
  return rc ? 1 : 0;
}
