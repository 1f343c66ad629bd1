/* Scaling of one step with the problem size for the GGL variational
 * integrators and the energy-momentum schemes, on the `chain` model (the
 * RATTLE / generalized-alpha / BLieDF tables are in bench_scale).
 *
 *   1. per-step cost vs N (N = 10, 100, 1000, 10^4) for VI-A and EM on the
 *      sparse path (KLU and UMFPACK back-ends, full Newton), the dense path
 *      where it fits (N <= 100), Newton iterations and factorisations per
 *      step, max RSS growth; the ratio cost(10^4)/cost(10^3) (linear: 10,
 *      target below 12) and the same per Newton iteration, which separates
 *      the linear algebra from a change of the iteration count with N;
 *   2. dense and sparse paths on the same trajectory (N = 50);
 *   3. (--all) the same per-step table for VI-S, VI-B and EM-G.
 *
 * Every size runs in its own forked child, so RSS is per size and a failure
 * at one size does not end the others.  A measurement program, not a test.
 * The dense column goes through OpenBLAS's threaded dgetrf from n ~ 200 on;
 * on a loaded machine its spinning threads make it many times slower
 * (OPENBLAS_NUM_THREADS=1 for steady dense timings).
 *
 *   bench_scale_vi [--quick] [--all] [--sizes N1,N2,..] [--dense-max N]
 *                  [--min-steps K] [--klu-only] [--csv FILE]
 *
 * --quick shortens the timing windows; --sizes replaces the list of N;
 * --dense-max is the largest N run on the dense path (default 100; dense
 * VI/EM steps are O(N^3)); --min-steps is the least number of timed steps
 * (default 3; 1 for slow baselines); --klu-only skips UMFPACK. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "livens/livens.h"
#include "benchutil.h"

typedef struct {
  int ok, rc;
  double per_step; /* seconds per step, excluding the first step */
  double iters;    /* Newton iterations per step */
  double facts;    /* factorisations per step */
  long symbolic;
  long rss_kb; /* max RSS growth of the child */
  int linsol;
  long steps;
} sample;

/* Every size is measured over the same window of the motion (steps 2 ..
 * MAX_STEPS + 1 at most, from the horizontal start), so Newton iteration
 * counts compare. */
#define MAX_STEPS 200

/* Build the chain, take a warm-up step (symbolic analysis, first
 * allocations), then steps until @p budget seconds have passed (at least
 * @p min_steps, at most MAX_STEPS). */
static sample measure(const char *scheme, int N, lv_linsol_kind kind, double budget, int min_steps) {
  sample s;
  memset(&s, 0, sizeof s);
  long rss0 = bu_maxrss_kb();
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  if ((s.rc = bu_make_chain(N, NULL, &m))) return s;
  if ((s.rc = lv_integrator_new(&it, m, scheme, 0.01))) goto out;
  lv_integrator_set_linsol(it, kind, 0);
  if ((s.rc = lv_integrator_init(it, 0.0, NULL, NULL)) || (s.rc = lv_integrator_step(it))) goto out;
  lv_integrator_stats a, b;
  lv_integrator_get_stats(it, &a);
  double t0 = bu_wall(), t = t0;
  long n = 0;
  while (n < min_steps || (t - t0 < budget && n < MAX_STEPS)) {
    if ((s.rc = lv_integrator_step(it))) goto out;
    n++;
    t = bu_wall();
  }
  lv_integrator_get_stats(it, &b);
  s.ok = 1;
  s.steps = n;
  s.per_step = (t - t0) / (double)n;
  s.iters = (double)(b.newton_iterations - a.newton_iterations) / (double)n;
  s.facts = (double)(b.factorizations - a.factorizations) / (double)n;
  s.symbolic = b.symbolic;
  s.linsol = b.linsol;
  s.rss_kb = bu_maxrss_kb() - rss0;
out:
  lv_integrator_free(it);
  lv_model_free(m);
  return s;
}

typedef struct {
  const char *scheme;
  int N;
  lv_linsol_kind kind;
  double budget;
  int min_steps;
} job;

static void run_job(const void *ctx, void *out) {
  const job *j = ctx;
  *(sample *)out = measure(j->scheme, j->N, j->kind, j->budget, j->min_steps);
}

/* measure() in a forked child (own peak RSS; a failure ends only its size). */
static sample measure_child(const char *scheme, int N, lv_linsol_kind kind, double budget, int min_steps) {
  job j = {scheme, N, kind, budget, min_steps};
  sample s;
  bu_in_child(run_job, &j, &s, sizeof s);
  return s;
}

static const char *kname(int k) { return lv_linsol_kind_name((lv_linsol_kind)k); }

static void fmt(char *buf, size_t n, const sample *s, int what) {
  if (!s->ok) {
    snprintf(buf, n, s->rc ? "err %d" : "-", s->rc);
    return;
  }
  if (what == 0) snprintf(buf, n, "%.3e", s->per_step);
  else if (what == 1) snprintf(buf, n, "%.2f", s->iters);
  else if (what == 2) snprintf(buf, n, "%.2f", s->facts);
  else snprintf(buf, n, "%.1f", s->rss_kb / 1024.0);
}

static void csv_row(FILE *csv, const char *scheme, int N, const sample *s) {
  if (!s->ok) return;
  fprintf(csv, "cost,%s,%d,%s,%.6e,%.3f,%.3f,%ld,%ld,%ld\n", scheme, N, kname(s->linsol), s->per_step, s->iters,
          s->facts, s->symbolic, s->rss_kb, s->steps);
}

/* Table 1 for one scheme; returns nothing, prints the ratios. */
static int min_steps = 3, klu_only = 0;

static void cost_table(FILE *csv, const char *scheme, const int *Ns, int nN, int dense_max, double budget) {
  if (!lv_scheme_find(scheme)) {
    printf("%s: not registered in this build\n\n", scheme);
    return;
  }
  printf("== %s: per-step cost vs N, chain (horizontal start), h = 0.01, full Newton, steps 2..%d ==\n", scheme,
         MAX_STEPS + 1);
  printf("%7s %7s | %10s %5s | %10s %5s %5s %4s %8s | %10s %5s %8s\n", "N", "n", "dense s", "it", "klu s", "it",
         "fact", "symb", "RSS MiB", "umf s", "it", "RSS MiB");
  double klu[8], kit[8], umf[8], uit[8];
  for (int i = 0; i < nN; i++) {
    int N = Ns[i];
    sample d = {0}, k, u;
    if (N <= dense_max) d = measure_child(scheme, N, LV_LINSOL_DENSE, budget, min_steps);
    k = measure_child(scheme, N, LV_LINSOL_KLU, budget, min_steps);
    if (!klu_only) u = measure_child(scheme, N, LV_LINSOL_UMFPACK, budget, min_steps);
    else memset(&u, 0, sizeof u);
    klu[i] = k.ok ? k.per_step : NAN;
    kit[i] = k.ok ? k.iters : NAN;
    umf[i] = u.ok ? u.per_step : NAN;
    uit[i] = u.ok ? u.iters : NAN;
    char b[12][24];
    fmt(b[0], 24, &d, 0), fmt(b[1], 24, &d, 1);
    fmt(b[2], 24, &k, 0), fmt(b[3], 24, &k, 1), fmt(b[4], 24, &k, 2), fmt(b[5], 24, &k, 3);
    fmt(b[6], 24, &u, 0), fmt(b[7], 24, &u, 1), fmt(b[8], 24, &u, 3);
    printf("%7d %7d | %10s %5s | %10s %5s %5s %4ld %8s | %10s %5s %8s\n", N, strcmp(scheme, "em-g") ? 5 * N : 4 * N, b[0], b[1], b[2], b[3], b[4],
           k.symbolic, b[5], b[6], b[7], b[8]);
    csv_row(csv, scheme, N, &d);
    csv_row(csv, scheme, N, &k);
    csv_row(csv, scheme, N, &u);
  }
  /* The absolute residual tolerance (1e-12) is below the round-off of g at
   * coordinates ~ N l, so the longest chains take one more Newton iteration
   * at the round-off floor: the per-iteration ratio separates that from the
   * cost of the linear algebra. */
  for (int i = 1; i < nN; i++) {
    if (Ns[i] != 10 * Ns[i - 1]) continue;
    printf("cost(%d)/cost(%d) (linear: 10): klu %.2f (per Newton iteration %.2f), umfpack %.2f (per iteration "
           "%.2f)\n",
           Ns[i], Ns[i - 1], klu[i] / klu[i - 1], (klu[i] / kit[i]) / (klu[i - 1] / kit[i - 1]), umf[i] / umf[i - 1],
           (umf[i] / uit[i]) / (umf[i - 1] / uit[i - 1]));
  }
  printf("\n");
}

/* Study 2: dense and sparse paths on the same trajectory. */
static void agreement(FILE *csv, const char *scheme, int N, int steps) {
  if (!lv_scheme_find(scheme)) return;
  const lv_linsol_kind kinds[3] = {LV_LINSOL_DENSE, LV_LINSOL_KLU, LV_LINSOL_UMFPACK};
  lv_model *m = NULL;
  double *q[3] = {NULL, NULL, NULL}, *v[3] = {NULL, NULL, NULL};
  int ok = bu_make_chain(N, "60", &m) == 0, d = 3 * N;
  for (int k = 0; k < 3 && ok; k++) {
    lv_integrator *it = NULL;
    ok = lv_integrator_new(&it, m, scheme, 0.01) == 0 && lv_integrator_set_linsol(it, kinds[k], 0) == 0 &&
         lv_integrator_init(it, 0.0, NULL, NULL) == 0;
    for (int s = 0; s < steps && ok; s++) ok = lv_integrator_step(it) == 0;
    if (ok) {
      const lv_state *st = lv_integrator_state(it);
      q[k] = malloc((size_t)d * sizeof(double));
      v[k] = malloc((size_t)d * sizeof(double));
      memcpy(q[k], st->q, (size_t)d * sizeof(double));
      memcpy(v[k], st->v, (size_t)d * sizeof(double));
    }
    lv_integrator_free(it);
  }
  if (ok) {
    double moved = 0;
    for (int i = 0; i < d; i++) moved = fmax(moved, fabs(q[0][i] - lv_model_q0(m)[i]));
    for (int k = 1; k < 3; k++) {
      double dq = 0, dv = 0;
      for (int i = 0; i < d; i++) {
        dq = fmax(dq, fabs(q[0][i] - q[k][i]));
        dv = fmax(dv, fabs(v[0][i] - v[k][i]));
      }
      printf("%-5s N = %d, %d steps (max |q - q0| = %.2f): max |q_dense - q_%s| = %.3e, |v_dense - v_%s| = %.3e\n",
             scheme, N, steps, moved, kname(kinds[k]), dq, kname(kinds[k]), dv);
      fprintf(csv, "agreement,%s,%d,dense-vs-%s,%.3e,%.3e,,,,%d\n", scheme, N, kname(kinds[k]), dq, dv, steps);
    }
  } else {
    printf("%-5s dense vs sparse: a run failed\n", scheme);
  }
  for (int k = 0; k < 3; k++) {
    free(q[k]);
    free(v[k]);
  }
  lv_model_free(m);
}

int main(int argc, char **argv) {
  bu_blas_single_thread();
  setvbuf(stdout, NULL, _IOLBF, 0);
  int quick = 0, all = 0, dense_max = 100;
  int Ns[8] = {10, 100, 1000, 10000}, nN = 4;
  const char *csv_path = "bench_scale_vi.csv";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--all") == 0)
      all = 1;
    else if (strcmp(argv[i], "--klu-only") == 0)
      klu_only = 1;
    else if (strcmp(argv[i], "--min-steps") == 0 && i + 1 < argc)
      min_steps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--dense-max") == 0 && i + 1 < argc)
      dense_max = atoi(argv[++i]);
    else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      nN = 0;
      for (char *p = argv[++i]; *p && nN < 8;) {
        Ns[nN++] = (int)strtol(p, &p, 10);
        if (*p == ',') p++;
        else break;
      }
    } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
      csv_path = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s [--quick] [--all] [--sizes N1,N2,..] [--dense-max N] [--min-steps K] [--klu-only] "
              "[--csv FILE]\n",
              argv[0]);
      return 2;
    }
  }
  FILE *csv = fopen(csv_path, "w");
  if (!csv) {
    perror(csv_path);
    return 1;
  }
  fprintf(csv, "study,scheme,N,backend,per_step_s,newton_iters_per_step,factorizations_per_step,symbolic,rss_kb,"
               "steps\n");
  double budget = quick ? 0.5 : 2.0;
  const char *main_schemes[2] = {"vi-a", "em"}, *more[3] = {"vi-s", "vi-b", "em-g"};
  for (int s = 0; s < 2; s++) cost_table(csv, main_schemes[s], Ns, nN, dense_max, budget);
  printf("== dense vs sparse paths on the same trajectory: chain N = 50 (start at 60 deg), h = 0.01 ==\n");
  for (int s = 0; s < 2; s++) agreement(csv, main_schemes[s], 50, quick ? 100 : 300);
  printf("\n");
  if (all) {
    for (int s = 0; s < 3; s++) cost_table(csv, more[s], Ns, nN, dense_max, budget);
    for (int s = 0; s < 3; s++) agreement(csv, more[s], 50, quick ? 100 : 300);
  }
  fclose(csv);
  printf("CSV: %s\n", csv_path);
  return 0;
}
