/* Run a comparison: the 3D pendulum under every registered scheme that can
 * take it, one line each -- the everyday question "which conserves what?".
 * Build against the installed library:
 *   cc compare.c $(pkg-config --cflags --libs livens) */
#include <stdio.h>
#include <livens/livens.h>

int main(void) {
  printf("%-12s %12s %12s %12s %12s\n", "scheme", "max|dE|/E0", "max|dJ3|", "max|g|", "max|Gv|");
  int failures = 0;
  for (const lv_scheme_type *const *t = lv_scheme_registry(); *t; t++) {
    lv_model *m = NULL;
    lv_integrator *it = NULL;
    lv_diag *d = NULL;
    if (lv_model_create("pendulum3d", NULL, &m)) return 1;
    int rc = lv_integrator_new(&it, m, (*t)->name, 0.01);
    if (rc == LV_ENOTIMPL) { /* e.g. needs a Lie group model */
      lv_model_free(m);
      continue;
    }
    if (!rc) rc = lv_diag_new_for(&d, it);
    lv_diag_writer w = LV_DIAG_WRITER_INIT(d, NULL);
    if (!rc) rc = lv_integrator_set_output(it, lv_diag_output, &w);
    if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
    if (!rc) rc = lv_integrator_run_until(it, 10.0);
    if (!rc) {
      lv_diag_summary s;
      lv_diag_get_summary(d, &s);
      printf("%-12s %12.3e %12.3e %12.3e %12.3e\n", (*t)->name, s.max_rel_energy_error, s.max_momentum_error,
             s.max_g, s.max_gv);
    } else {
      printf("%-12s failed: %s\n", (*t)->name, lv_strerror(rc));
      failures++;
    }
    lv_diag_free(d);
    lv_integrator_free(it);
    lv_model_free(m);
  }
  return failures ? 1 : 0;
}
