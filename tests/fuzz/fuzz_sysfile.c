/* libFuzzer harness: system files (issue 15; YAML through libyaml + the
 * reader of src/mbs/sysfile.c).  Any input must give a model or a named
 * status with a non-empty sentence naming the file, never a crash; a model
 * that is built must evaluate at its initial state without a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lv_internal.h"
#include "mbs/mbs_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[512];
  lv_model *m = NULL;
  int rc = lv_mbs_load_buffer(data, size, "fuzz.yaml", NULL, &m, why, sizeof why);
  if (rc != 0 && rc != LV_EINPUT && rc != LV_EUNKNOWN && rc != LV_ENOMEM) abort();
  if (rc != 0 && (m || strncmp(why, "fuzz.yaml", 9) != 0)) abort();
  if (rc == 0) {
    if (!m) abort();
    int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
    double V = 0, *g = calloc((size_t)nv + (size_t)nc + 1, sizeof *g);
    if (g) {
      (void)lv_model_potential(m, lv_model_q0(m), &V);
      (void)lv_model_grad_potential(m, lv_model_q0(m), g);
      if (nc) (void)lv_model_constraints(m, lv_model_q0(m), g);
      free(g);
    }
    (void)nq;
    lv_model_free(m);
  }
  return 0;
}
