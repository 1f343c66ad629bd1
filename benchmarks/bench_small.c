/* Small systems near the flop limit (issue 18, target 1): steps per second
 * and microseconds per step of the heavy top (generalized-alpha index 3 and
 * 2, BLieDF k = 2 index 3 and 2) and of the four particles (VI-A, EM), all
 * at h = 1e-3 with the library's defaults (divergence guard on, dense
 * back-end), through the public API only, without output.
 * A measurement program, not a test.  Build with `make benchmarks`:
 *   ./benchmarks/bench_small [rounds] [out.csv]
 *   ./benchmarks/bench_small --one CASE STEPS   (for callgrind: CASE is the
 *     row number printed by the table; instructions per step from the
 *     difference of two step counts, e.g. 10^4 and 10^3)
 * Wall and CPU time are unreliable on a shared machine: the median and the
 * least of `rounds` runs are printed, and callgrind counts are the figures the issue
 * tracks (prof: valgrind --tool=callgrind ./bench_small --one 0 10000). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "benchutil.h"

typedef struct {
  const char *label, *model, *scheme, *opt, *value;
  long steps;
} scase;

static const scase cases[] = {
    {"heavy-top genalpha index 3", "heavy-top", "genalpha", NULL, NULL, 20000},
    {"heavy-top genalpha index 2", "heavy-top", "genalpha", "index", "2", 20000},
    {"heavy-top bliedf2 index 3", "heavy-top", "bliedf2", NULL, NULL, 20000},
    {"heavy-top bliedf2 index 2", "heavy-top", "bliedf2", "index", "2", 20000},
    {"four-particle vi-a", "four-particle", "vi-a", NULL, NULL, 20000},
    {"four-particle em", "four-particle", "em", NULL, NULL, 20000},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* CPU seconds of `steps` steps at h = 1e-3; -1 on failure. */
static double run(const scase *c, long steps) {
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  double t = -1.0;
  if (lv_model_create(c->model, NULL, &m)) return -1.0;
  if (!lv_integrator_new(&it, m, c->scheme, 1e-3) && (!c->opt || !lv_integrator_set_option(it, c->opt, c->value)) &&
      !lv_integrator_init(it, 0.0, NULL, NULL))
    t = bu_time_steps(it, steps);
  lv_integrator_free(it);
  lv_model_free(m);
  return t;
}

int main(int argc, char **argv) {
  lv_blas_set_threads(1);
  if (argc == 4 && strcmp(argv[1], "--one") == 0) {
    int k = atoi(argv[2]);
    long steps = atol(argv[3]);
    if (k < 0 || k >= NCASES || steps < 1) {
      fprintf(stderr, "bench_small --one CASE STEPS: CASE in 0..%d, STEPS >= 1\n", NCASES - 1);
      return 2;
    }
    return run(&cases[k], steps) < 0 ? 1 : 0;
  }
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (rounds < 1 || rounds > 99) rounds = 5;
  const char *out = argc > 2 ? argv[2] : "bench_small.csv";
  FILE *f = fopen(out, "w");
  if (!f) {
    perror(out);
    return 1;
  }
  fprintf(f, "case,model,scheme,option,h,steps,us_per_step,steps_per_s,us_per_step_least\n");
  printf("%2s %-28s %8s %12s %14s %12s\n", "#", "case", "steps", "us/step", "steps/s", "least us");
  for (int i = 0; i < NCASES; i++) {
    const scase *c = &cases[i];
    double t[99];
    int bad = 0;
    for (int r = 0; r < rounds; r++) {
      t[r] = run(c, c->steps);
      if (t[r] < 0) bad = 1;
    }
    if (bad) {
      printf("%2d %-28s failed\n", i, c->label);
      continue;
    }
    qsort(t, (size_t)rounds, sizeof t[0], bu_cmp_double);
    double us = t[rounds / 2] / (double)c->steps * 1e6, sps = us > 0 ? 1e6 / us : 0.0;
    double least = t[0] / (double)c->steps * 1e6;
    printf("%2d %-28s %8ld %12.3f %14.4g %12.3f\n", i, c->label, c->steps, us, sps, least);
    if (fprintf(f, "%s,%s,%s,%s%s%s,1e-3,%ld,%.6g,%.6g,%.6g\n", c->label, c->model, c->scheme, c->opt ? c->opt : "",
                c->opt ? "=" : "", c->opt ? c->value : "", c->steps, us, sps, least) < 0) {
      perror(out);
      return 1;
    }
  }
  if (fclose(f)) {
    perror(out);
    return 1;
  }
  printf("(median and least of %d runs, CPU time: the load of a shared machine only adds, so the least is the\n"
         " closest to the code's own cost, as bench_ida keeps it; callgrind counts are the figures; CSV: %s)\n",
         rounds, out);
  return 0;
}
