/* The divergence guard's cost (issue 14): per-step CPU time of the same run
 * with the guard on and off, alternated, so both see the same machine.
 * The guard evaluates the energy and the constraint residuals after every
 * accepted step; this measures what that costs next to the step itself.
 * A measurement program, not a test.  Build with `make benchmarks`:
 *   ./benchmarks/bench_guard [rounds] [out.csv]
 *   ./benchmarks/bench_guard --one MODEL SCHEME STEPS on|off   (for callgrind:
 *     valgrind --tool=callgrind; instructions per step from two step counts) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "benchutil.h"

typedef struct {
  const char *model, *param, *value, *scheme;
  double h;
  long steps;
} bcase;

static const bcase cases[] = {
    {"four-particle", NULL, NULL, "vi-a", 1e-3, 20000},
    {"four-particle", NULL, NULL, "em", 1e-3, 20000},
    {"heavy-top", NULL, NULL, "genalpha", 1e-3, 20000},
    {"heavy-top", NULL, NULL, "bliedf2", 1e-3, 20000},
    {"chain", "N", "1000", "em", 1e-2, 50},
};

/* CPU seconds of `steps` steps; -1 on failure. */
static double run(const bcase *c, long steps, int guard) {
  const char *k[1] = {c->param}, *v[1] = {c->value};
  lv_kv kv = {c->param ? 1 : 0, k, v};
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  double t = -1.0;
  if (lv_model_create(c->model, &kv, &m)) return -1.0;
  if (!lv_integrator_new(&it, m, c->scheme, c->h) && !lv_integrator_set_divergence_guard(it, guard, 0, 0) &&
      !lv_integrator_init(it, 0.0, NULL, NULL))
    t = bu_time_steps(it, steps);
  lv_integrator_free(it);
  lv_model_free(m);
  return t;
}

int main(int argc, char **argv) {
  lv_blas_set_threads(1);
  if (argc == 6 && strcmp(argv[1], "--one") == 0) {
    bcase c = {argv[2], NULL, NULL, argv[3], 1e-3, atol(argv[4])};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      if (strcmp(cases[i].model, c.model) == 0 && strcmp(cases[i].scheme, c.scheme) == 0) c = cases[i];
    c.steps = atol(argv[4]);
    double t = run(&c, c.steps, strcmp(argv[5], "on") == 0);
    return t < 0 ? 1 : 0;
  }
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (rounds < 1 || rounds > 99) rounds = 5;
  const char *out = argc > 2 ? argv[2] : "bench_guard.csv";
  FILE *f = fopen(out, "w");
  if (!f) {
    perror(out);
    return 1;
  }
  fprintf(f, "model,scheme,h,steps,us_per_step_off,us_per_step_on,ratio\n");
  printf("%-14s %-9s %8s %14s %14s %8s\n", "model", "scheme", "steps", "off us/step", "on us/step", "on/off");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bcase *c = &cases[i];
    double on[99], off[99];
    for (int r = 0; r < rounds; r++) { /* alternated: drift of the machine hits both */
      off[r] = run(c, c->steps, 0);
      on[r] = run(c, c->steps, 1);
    }
    qsort(on, (size_t)rounds, sizeof on[0], bu_cmp_double);
    qsort(off, (size_t)rounds, sizeof off[0], bu_cmp_double);
    double a = off[rounds / 2] / (double)c->steps * 1e6, b = on[rounds / 2] / (double)c->steps * 1e6;
    printf("%-14s %-9s %8ld %14.3f %14.3f %8.3f\n", c->model, c->scheme, c->steps, a, b, b / a);
    if (fprintf(f, "%s,%s,%g,%ld,%.6g,%.6g,%.4f\n", c->model, c->scheme, c->h, c->steps, a, b, b / a) < 0) {
      perror(out);
      return 1;
    }
  }
  if (fclose(f)) {
    perror(out);
    return 1;
  }
  printf("(median of %d alternated rounds, CPU time; CSV: %s)\n", rounds, out);
  return 0;
}
