/* libFuzzer harness: run-description files (INI through inih + our
 * handler).  Any input must give CLI_OK or CLI_USAGE, never a crash, and a
 * CLI_OK result must hold a sane run description. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  cli_run r;
  cli_run_defaults(&r);
  int rc = cli_parse_runfile_string(text, "fuzz.ini", &r);
  if (rc != CLI_OK && rc != CLI_USAGE) abort();
  if (rc == CLI_OK) {
    /* h and t_end are positive, or 0 for "the model's default" (issue 17) */
    if (!(r.h >= 0) || !(r.t_end >= 0) || r.every < 1 || r.halving < 0 || r.halving > 30) abort();
    if (strlen(r.model) >= sizeof r.model || strlen(r.scheme) >= sizeof r.scheme) abort();
    /* the parameters must be usable by the model layer */
    lv_kv kv = cli_kv_view(&r.params);
    double x;
    for (int i = 0; i < kv.n; i++) (void)lv_kv_double(&kv, kv.keys[i], 0.0, &x);
  }
  cli_kv_free(&r.params);
  cli_kv_free(&r.opts);
  free(text);
  return 0;
}
