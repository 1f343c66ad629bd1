/* libFuzzer harness: the whole program entry.  The first input byte picks a
 * subcommand (run, compare, converge, plot, check, list, --version, --help,
 * or an unknown one); the rest is split at NUL bytes into its arguments.
 * main() must return 0, 1 or 2, never crash.
 *
 * Bounded so a smoke run stays fast and harmless: it runs in a private
 * temporary directory, arguments naming absolute paths or '..' are dropped
 * (nothing is written outside), --param is dropped (a model with N = 1e9
 * bodies is a resource question, not a parsing one), --model-lib is
 * dropped (loading a library runs its code by design), and a 50 ms timer sets
 * the program's own stop flag (SIGPROF, CPU time: libFuzzer owns SIGALRM), so a long run ends as if Ctrl-C was pressed.
 * plot writes its gnuplot script but never runs gnuplot
 * (LIVENS_PLOT_NO_EXEC). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "cli.h"

int livens_main(int argc, char **argv);

static void on_alarm(int sig) {
  (void)sig;
  cli_interrupted = 1;
}

static char dir[] = "/tmp/livens-fuzz-main-XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (!mkdtemp(dir) || chdir(dir) != 0) abort();
  setenv("LIVENS_PLOT_NO_EXEC", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  /* a run CSV and a run file to point arguments at */
  FILE *f = fopen("a.csv", "w");
  if (f) {
    fputs("t,energy,g_norm,gv_norm,momentum1\n0,1,0,0,1\n1,1.1,1e-9,1e-9,1\n", f);
    fclose(f);
  }
  f = fopen("a.ini", "w");
  if (f) {
    fputs("[run]\nmodel = pendulum3d\nscheme = rattle\nstep = 0.01\nt-end = 0.02\n", f);
    fclose(f);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *cmds[] = {"run", "compare", "converge", "plot", "check", "list", "--version", "--help", "bogus"};
  if (size < 1) return 0;
  char *buf = malloc(size);
  if (!buf) return 0;
  memcpy(buf, data + 1, size - 1);
  buf[size - 1] = '\0';
  char *argv[68];
  int argc = 0;
  argv[argc++] = (char *)"livens";
  argv[argc++] = (char *)cmds[data[0] % (sizeof cmds / sizeof cmds[0])];
  for (size_t i = 0; i < size - 1 && argc < 64;) {
    char *a = buf + i;
    i += strlen(a) + 1;
    if (a[0] == '/' || strstr(a, "..") || strncmp(a, "--param", 7) == 0 || strstr(a, "demo") ||
        strstr(a, "model-lib"))
      continue;
    argv[argc++] = a;
  }
  argv[argc] = NULL;
  /* the program's messages are not what is tested here: run.sh passes
   * -close_fd_mask=3, which closes the program's stdout and stderr while
   * libFuzzer and the sanitizers keep reporting on a copy of stderr (a
   * dup2 to /dev/null here would hide a crash's report too) */
  cli_interrupted = 0;
  struct itimerval t = {{0, 0}, {0, 50000}}, off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &t, NULL);
  int rc = livens_main(argc, argv);
  setitimer(ITIMER_PROF, &off, NULL);
  if (rc < 0 || rc > 2) abort();
  free(buf);
  return 0;
}
