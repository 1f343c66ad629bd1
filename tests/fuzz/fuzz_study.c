/* libFuzzer harness: study files and their result files (livens sweep FILE).
 * The input up to its first NUL byte is the study file (a run file with
 * [axes], [variant ...], [sweep] and [perturb] sections); what follows, if
 * anything, is the result file of the first case (DIR/case-000000.res),
 * which a rerun reads back to skip finished cases.  The program runs as
 * `livens sweep study.ini --list`, which reads both and runs nothing; it
 * must return 0, 1 or 2, never crash.
 *
 * Bounded like the main harness: a private temporary directory, and inputs
 * naming a model library are skipped (loading one runs its code by design). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int livens_main(int argc, char **argv);

static char dir[] = "/tmp/livens-fuzz-study-XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (!mkdtemp(dir) || chdir(dir) != 0) abort();
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("LIVENS_PLOT_NO_EXEC", "1", 1);
  return 0;
}

static int has(const uint8_t *d, size_t n, const char *s) {
  size_t k = strlen(s);
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(d + i, s, k) == 0) return 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (has(data, size, "model-lib") || has(data, size, "model_lib")) return 0;
  const uint8_t *nul = memchr(data, 0, size);
  size_t ns = nul ? (size_t)(nul - data) : size;
  FILE *f = fopen("study.ini", "wb");
  if (!f) abort();
  if (ns && fwrite(data, 1, ns, f) != ns) abort();
  fclose(f);
  /* the default output directory of study.ini */
  mkdir("study-sweep", 0777);
  unlink("study-sweep/case-000000.res");
  if (nul) {
    f = fopen("study-sweep/case-000000.res", "wb");
    if (!f) abort();
    size_t nr = size - ns - 1;
    if (nr && fwrite(nul + 1, 1, nr, f) != nr) abort();
    fclose(f);
  }
  char *argv[] = {"livens", "sweep", "study.ini", "--list", NULL};
  /* the program's output: closed by run.sh's -close_fd_mask=3 (libFuzzer
   * and the sanitizers report on their own copy of stderr) */
  int rc = livens_main(4, argv);
  if (rc < 0 || rc > 2) abort();
  return 0;
}
