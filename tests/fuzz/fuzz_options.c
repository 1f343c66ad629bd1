/* libFuzzer harness: the command-line option parser.  The input is split
 * at NUL bytes into argv; any argv must give CLI_OK or CLI_USAGE. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  char *argv[66];
  int argc = 0;
  argv[argc++] = (char *)"run";
  for (size_t i = 0; i <= size && argc < 64;) {
    argv[argc++] = buf + i;
    size_t n = strlen(buf + i);
    i += n + 1;
  }
  argv[argc] = NULL;
  cli_args a;
  memset(&a, 0, sizeof a);
  cli_run_defaults(&a.run);
  int rc = cli_parse_args(argc, argv, &a, "run");
  if (rc != CLI_OK && rc != CLI_USAGE) abort();
  if (rc == CLI_OK) {
    /* positive, or 0 for "the model's default" (issue 17) */
    if (!(a.run.h >= 0) || !(a.run.t_end >= 0) || a.run.every < 1) abort();
    char *items[32];
    char copy[sizeof a.steps];
    memcpy(copy, a.steps, sizeof copy);
    int n = cli_split_list(copy, items, 32);
    for (int k = 0; k < n; k++) {
      double h;
      (void)cli_parse_positive(items[k], "step", &h);
    }
  }
  cli_kv_free(&a.run.params);
  cli_kv_free(&a.run.opts);
  free(buf);
  return 0;
}
