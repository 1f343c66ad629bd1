/* libFuzzer harness: `livens plot` on an arbitrary CSV.  The input is the
 * CSV (overlaid with itself, in any format, with --y, as its first byte
 * says); plot must return 0, 1 or 2 and never crash, whatever the header and
 * rows.  The gnuplot script is written to a private temporary directory and
 * gnuplot is never run (LIVENS_PLOT_NO_EXEC).  The same bytes are also read
 * as a converge --reference CSV of pendulum3d (src/cli/reference.c), which
 * must return 0, 1 or 2 and leave nothing to free on failure. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static char dir[] = "/tmp/livens-fuzz-plot-XXXXXX";
static lv_model *model;
static cli_run run;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (!mkdtemp(dir) || chdir(dir) != 0) abort();
  setenv("LIVENS_PLOT_NO_EXEC", "1", 1);
  cli_run_defaults(&run);
  strcpy(run.model, "pendulum3d");
  if (cli_make_model(&run, &model)) abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen("in.csv", "wb");
  if (!f) abort();
  fwrite(data, 1, size, f);
  fclose(f);
  /* the first byte picks the format, a second file and --y (issue 17) */
  static const char *const fmt[] = {"png", "svg", "pdf", "tex"};
  const char *files[2] = {"in.csv", "in.csv"};
  unsigned sel = size ? data[0] : 0;
  int rc = cli_plot_files(files, 1 + (sel >> 2 & 1), "out.png", fmt[sel & 3], sel & 8 ? "t,energy,lam1" : NULL);
  if (rc < 0 || rc > 2) abort();
  /* the reference reader on the same bytes (issue 17) */
  cli_reference ref;
  rc = cli_reference_read("in.csv", &run, model, &ref);
  if (rc < 0 || rc > 2 || (rc && (ref.t || ref.x))) abort();
  if (!rc && (ref.n < 1 || cli_reference_find(&ref, ref.t[ref.n - 1]) < 0)) abort();
  cli_reference_free(&ref);
  return 0;
}
