/* Soak: a long run (default 10^7 steps) of the conservative schemes on the
 * four-particle system, reporting memory at start and end (no growth) and
 * the energy-error envelope per decade of steps (bounded, no drift).
 *
 *   bench_soak [STEPS] [SCHEME,...]        defaults: 10000000 vi-a,em
 *
 * Schemes or models this build does not have are reported and skipped
 * (falls back to rattle on pendulum3d when four-particle is missing). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "livens/livens.h"
#include "benchutil.h"

/* Resident set size now, in kB (from /proc), and the peak from getrusage. */
static long rss_now_kb(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * 4;
}

static long rss_peak_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

typedef struct {
  lv_diag *d;
  long n;
  double E0;
  double env[16]; /* max |E - E0|/|E0| over steps in [10^k, 10^(k+1)) */
  long rss_at_1e3;
} soak;

static int out(const lv_integrator *it, lv_output_event ev, void *ctx) {
  soak *s = ctx;
  if (ev == LV_OUTPUT_FINAL) return 0;
  lv_diag_point pt;
  if (lv_diag_eval(s->d, lv_integrator_state(it), &pt)) return 1;
  if (ev == LV_OUTPUT_INIT) s->E0 = pt.energy;
  double e = fabs(pt.energy - s->E0) / fabs(s->E0);
  int k = s->n < 10 ? 0 : (int)floor(log10((double)s->n));
  if (k > 15) k = 15;
  if (e > s->env[k]) s->env[k] = e;
  if (s->n == 1000) s->rss_at_1e3 = rss_now_kb();
  s->n++;
  return 0;
}

int main(int argc, char **argv) {
  bu_blas_single_thread();
  long steps = argc > 1 ? atol(argv[1]) : 10000000L;
  char list[256] = "vi-a,em";
  if (argc > 2) snprintf(list, sizeof list, "%s", argv[2]);
  if (steps < 10) steps = 10;
  const char *model_name = "four-particle";
  lv_model *probe = NULL;
  if (lv_model_create(model_name, NULL, &probe)) model_name = "pendulum3d";
  lv_model_free(probe);
  double h = 0.01;
  printf("soak: %s, h = %g, %ld steps per scheme\n", model_name, h, steps);
  printf("%-8s %10s %10s %10s %12s %10s   energy envelope max|E-E0|/|E0| per decade of steps\n", "scheme",
         "rss@1e3", "rss end", "peak", "max|dE|/E0", "steps/s");
  for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    const char *scheme = tok;
    if (!lv_scheme_find(scheme)) {
      printf("%-8s not in this build, skipped\n", scheme);
      continue;
    }
    lv_model *m = NULL;
    lv_integrator *it = NULL;
    soak s;
    memset(&s, 0, sizeof s);
    if (lv_model_create(model_name, NULL, &m) || lv_integrator_new(&it, m, scheme, h) ||
        lv_diag_new_for(&s.d, it)) {
      printf("%-8s cannot run %s, skipped\n", scheme, model_name);
      lv_integrator_free(it);
      lv_model_free(m);
      continue;
    }
    lv_integrator_set_output(it, out, &s);
    int rc = lv_integrator_init(it, 0.0, NULL, NULL);
    while (!rc && s.n <= steps) rc = lv_integrator_step(it);
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    double emax = 0;
    for (int k = 0; k < 16; k++) emax = fmax(emax, s.env[k]);
    printf("%-8s %8ldkB %8ldkB %8ldkB %12.3e %10.4g  ", scheme, s.rss_at_1e3, rss_now_kb(), rss_peak_kb(), emax,
           st.steps / st.wall_time);
    for (int k = 0; k < 16 && pow(10, k) <= (double)s.n; k++) printf(" 1e%d:%.2e", k, s.env[k]);
    printf("%s\n", rc ? "  (FAILED)" : "");
    if (rc) printf("         stopped: %s\n", lv_strerror(rc));
    lv_diag_free(s.d);
    lv_integrator_free(it);
    lv_model_free(m);
  }
  return 0;
}
