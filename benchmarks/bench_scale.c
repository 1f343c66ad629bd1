/* Scaling of one step with the problem size, on the `chain` model.
 *
 *   1. per-step cost vs N (N = 10 .. 10^5) for the dense and the sparse
 *      (UMFPACK) back-end (dense only where it fits in time and memory),
 *      with full and modified Newton on the sparse path; the ratio
 *      cost(10^4)/cost(10^3) (linear scaling: 10; target below 12);
 *   2. memory: max RSS of a child process that builds and runs one size,
 *      minus the same child's RSS before it built anything;
 *   3. dense and sparse back-ends on the same trajectory (N = 50);
 *   4. the dense/sparse crossover on real Newton matrices (chain under every
 *      registered scheme that runs on it), which LV_LINSOL_AUTO_THRESHOLD
 *      in lv_linsol.h should follow.
 *
 * Every size runs in its own forked child, so RSS is per size and a
 * failure at one size does not end the others.  A measurement program,
 * not a test.  Usage: bench_scale [--quick] [--csv FILE]  (default
 * bench_scale.csv).  --quick stops at N = 10^4 and shortens the runs;
 * --crossover runs study 4 only.
 *
 * Sparse means both sparse back-ends: UMFPACK (what LV_LINSOL_AUTO picks)
 * and KLU (LV_LINSOL_KLU). */
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

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss; /* kilobytes on Linux */
}

/* The chain with N particles; @p angle NULL: the default horizontal start. */
static int make_chain_at(int N, const char *angle, lv_model **m) {
  char nb[32];
  snprintf(nb, sizeof nb, "%d", N);
  const char *k[2] = {"N", "angle"}, *v[2] = {nb, angle};
  lv_kv kv = {angle ? 2 : 1, k, v};
  return lv_model_create("chain", &kv, m);
}

static int make_chain(int N, lv_model **m) { return make_chain_at(N, NULL, m); }

typedef struct {
  int ok;
  double per_step;   /* seconds per step, excluding the first step */
  double iters;      /* Newton iterations per step */
  double facts;      /* factorisations per step */
  long symbolic;
  long rss_kb;       /* max RSS growth of the child */
  int linsol;
  long steps;
} sample;

/* One measurement in the calling process: build the chain, take a warm-up
 * step (symbolic analysis, first allocations), then steps until @p budget
 * seconds have passed (at least 3, at most max_steps). */
static sample measure(const char *scheme, int N, lv_linsol_kind kind, lv_newton_kind nk, double res_tol,
                      double budget, int max_steps) {
  sample s;
  memset(&s, 0, sizeof s);
  long rss0 = maxrss_kb();
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  if (make_chain(N, &m)) return s;
  if (lv_integrator_new(&it, m, scheme, 0.01)) goto out;
  lv_newton_options o;
  lv_newton_options_default(&o);
  o.kind = nk;
  if (res_tol > 0) o.res_tol = res_tol;
  lv_integrator_set_newton(it, &o);
  lv_integrator_set_linsol(it, kind, 0);
  if (lv_integrator_init(it, 0.0, NULL, NULL) || lv_integrator_step(it)) goto out;
  lv_integrator_stats a, b;
  lv_integrator_get_stats(it, &a);
  double t0 = now(), t = t0;
  long n = 0;
  while (n < 3 || (t - t0 < budget && n < max_steps)) {
    if (lv_integrator_step(it)) goto out;
    n++;
    t = now();
  }
  lv_integrator_get_stats(it, &b);
  s.ok = 1;
  s.steps = n;
  s.per_step = (t - t0) / (double)n;
  s.iters = (double)(b.newton_iterations - a.newton_iterations) / (double)n;
  s.facts = (double)(b.factorizations - a.factorizations) / (double)n;
  s.symbolic = b.symbolic;
  s.linsol = b.linsol;
  s.rss_kb = maxrss_kb() - rss0;
out:
  lv_integrator_free(it);
  lv_model_free(m);
  return s;
}

/* measure() in a forked child, result through a pipe. */
static sample measure_child(const char *scheme, int N, lv_linsol_kind kind, lv_newton_kind nk, double res_tol,
                            double budget, int max_steps) {
  sample s;
  memset(&s, 0, sizeof s);
  int fd[2];
  fflush(NULL);
  if (pipe(fd)) return s;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return s;
  }
  if (pid == 0) {
    close(fd[0]);
    sample r = measure(scheme, N, kind, nk, res_tol, budget, max_steps);
    ssize_t w = write(fd[1], &r, sizeof r);
    close(fd[1]);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], &s, sizeof s);
  close(fd[0]);
  int st;
  waitpid(pid, &st, 0);
  if (got != (ssize_t)sizeof s) memset(&s, 0, sizeof s);
  return s;
}

/* Every size is measured over the same window of the motion, t in
 * [0.01, 0.01 (1 + MAX_STEPS)] at most, so Newton iteration counts compare. */
#define MAX_STEPS 200

static const char *kname(int k) { return lv_linsol_kind_name((lv_linsol_kind)k); }

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* tables appear as they are measured, also in a pipe */
  int quick = 0, only_cross = 0;
  const char *csv_path = "bench_scale.csv";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--crossover") == 0)
      only_cross = 1;
    else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
      csv_path = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--quick] [--crossover] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  FILE *csv = fopen(csv_path, "w");
  if (!csv) {
    perror(csv_path);
    return 1;
  }
  fprintf(csv, "study,scheme,N,n,backend,newton,per_step_s,newton_iters_per_step,factorizations_per_step,"
               "symbolic,rss_kb,steps\n");
  double budget = quick ? 0.5 : 2.0;

  /* ---------------------------------------------------------- 1 and 2 */
  printf("== per-step cost vs N: chain (horizontal start), RATTLE, h = 0.01, steps 2..%d ==\n", MAX_STEPS + 1);
  printf("%8s %8s | %12s %6s | %12s %6s %6s %5s %10s | %12s %6s %6s | %12s %10s %12s\n", "N", "n",
         "dense s/step", "iters", "umf s/step", "iters", "facts", "symb", "RSS MiB", "umf+mod s", "iters", "facts",
         "klu s/step", "RSS MiB", "klu+mod s");
  const int Ns[5] = {10, 100, 1000, 10000, 100000};
  int nN = quick ? 4 : 5;
  double sparse_cost[5] = {0}, rss[5] = {0}, klu_cost[5] = {0}, klum_cost[5] = {0}, klu_rss[5] = {0};
  double klu_facts[5] = {0}, umf_facts[5] = {0};
  for (int i = 0; i < nN && !only_cross; i++) {
    int N = Ns[i], n = 4 * N;
    sample d = {0}, u, um, kl, klm;
    /* Dense LU is O(n^3) per factorisation and O(n^2) memory: at n = 4000 a
     * step takes seconds, beyond that it does not fit. */
    if (N <= 1000) d = measure_child("rattle", N, LV_LINSOL_DENSE, LV_NEWTON_FULL, 0, N == 1000 ? 0.0 : budget, MAX_STEPS);
    u = measure_child("rattle", N, LV_LINSOL_UMFPACK, LV_NEWTON_FULL, 0, budget, MAX_STEPS);
    um = measure_child("rattle", N, LV_LINSOL_UMFPACK, LV_NEWTON_MODIFIED, 0, budget, MAX_STEPS);
    kl = measure_child("rattle", N, LV_LINSOL_KLU, LV_NEWTON_FULL, 0, budget, MAX_STEPS);
    klm = measure_child("rattle", N, LV_LINSOL_KLU, LV_NEWTON_MODIFIED, 0, budget, MAX_STEPS);
    klu_cost[i] = kl.ok ? kl.per_step : NAN;
    klum_cost[i] = klm.ok ? klm.per_step : NAN;
    klu_rss[i] = kl.ok ? (double)kl.rss_kb : NAN;
    klu_facts[i] = kl.ok ? kl.facts : NAN;
    umf_facts[i] = u.ok ? u.facts : NAN;
    sparse_cost[i] = u.ok ? u.per_step : NAN;
    rss[i] = u.ok ? (double)u.rss_kb : NAN;
    char dbuf[40] = "-", dib[16] = "-";
    if (d.ok) {
      snprintf(dbuf, sizeof dbuf, "%.3e", d.per_step);
      snprintf(dib, sizeof dib, "%.2f", d.iters);
    }
    printf("%8d %8d | %12s %6s | %12.3e %6.2f %6.2f %5ld %10.2f | %12.3e %6.2f %6.2f | %12.3e %10.2f %12.3e\n", N,
           n, dbuf, dib, u.per_step, u.iters, u.facts, u.symbolic, u.rss_kb / 1024.0, um.per_step, um.iters, um.facts,
           kl.per_step, kl.rss_kb / 1024.0, klm.per_step);
    const sample *all[5] = {&d, &u, &um, &kl, &klm};
    const char *nk[5] = {"full", "full", "modified", "full", "modified"};
    for (int k = 0; k < 5; k++)
      if (all[k]->ok)
        fprintf(csv, "cost,rattle,%d,%d,%s,%s,%.6e,%.3f,%.3f,%ld,%ld,%ld\n", N, n, kname(all[k]->linsol), nk[k],
                all[k]->per_step, all[k]->iters, all[k]->facts, all[k]->symbolic, all[k]->rss_kb, all[k]->steps);
    fflush(stdout);
  }
  if (!only_cross) {
    printf("cost(10^4)/cost(10^3) (linear: 10, target < 12): umfpack %.2f, klu %.2f, klu+modified %.2f\n",
           sparse_cost[3] / sparse_cost[2], klu_cost[3] / klu_cost[2], klum_cost[3] / klum_cost[2]);
    /* The absolute residual tolerance (1e-12) is below the round-off of a
     * link vector formed from coordinates ~ N l, so long chains end
     * Newton at the round-off floor, one iteration later: the cost per
     * factorisation separates that from the cost of the linear algebra. */
    printf("  per factorisation (Newton iterations grow with N at a fixed absolute tolerance): umfpack %.2f, "
           "klu %.2f\n",
           (sparse_cost[3] / umf_facts[3]) / (sparse_cost[2] / umf_facts[2]),
           (klu_cost[3] / klu_facts[3]) / (klu_cost[2] / klu_facts[2]));
    printf("cost(10^3)/cost(10^2): umfpack %.2f, klu %.2f\n", sparse_cost[2] / sparse_cost[1],
           klu_cost[2] / klu_cost[1]);
    if (!quick)
      printf("cost(10^5)/cost(10^4): umfpack %.2f, klu %.2f\n", sparse_cost[4] / sparse_cost[3],
             klu_cost[4] / klu_cost[3]);
    printf("RSS growth 10^4/10^3 (linear: 10): umfpack %.2f, klu %.2f", rss[3] / rss[2], klu_rss[3] / klu_rss[2]);
    if (!quick) printf("; 10^5/10^4: umfpack %.2f, klu %.2f", rss[4] / rss[3], klu_rss[4] / klu_rss[3]);
    printf("\n\n");

    /* The same with the residual tolerance scaled to the size of the
     * coordinates, 1e-14 (1 + N l): the round-off of g grows like eps N l,
     * and a tolerance below it costs an iteration that says nothing about
     * the linear algebra. */
    printf("== the same, Newton residual tolerance 1e-14 (1 + N l) instead of 1e-12 ==\n");
    printf("%8s | %12s %6s | %12s %6s | %12s %6s\n", "N", "umf s/step", "iters", "klu s/step", "iters",
           "klu+mod s", "iters");
    double sc[3][5] = {{0}};
    for (int i = 2; i < nN; i++) {
      double tol = 1e-14 * (1.0 + Ns[i]);
      sample a = measure_child("rattle", Ns[i], LV_LINSOL_UMFPACK, LV_NEWTON_FULL, tol, budget, MAX_STEPS);
      sample b = measure_child("rattle", Ns[i], LV_LINSOL_KLU, LV_NEWTON_FULL, tol, budget, MAX_STEPS);
      sample c = measure_child("rattle", Ns[i], LV_LINSOL_KLU, LV_NEWTON_MODIFIED, tol, budget, MAX_STEPS);
      sc[0][i] = a.ok ? a.per_step : NAN;
      sc[1][i] = b.ok ? b.per_step : NAN;
      sc[2][i] = c.ok ? c.per_step : NAN;
      printf("%8d | %12.3e %6.2f | %12.3e %6.2f | %12.3e %6.2f\n", Ns[i], a.per_step, a.iters, b.per_step, b.iters,
             c.per_step, c.iters);
      const sample *all[3] = {&a, &b, &c};
      const char *nk[3] = {"full-scaledtol", "full-scaledtol", "modified-scaledtol"};
      for (int k = 0; k < 3; k++)
        if (all[k]->ok)
          fprintf(csv, "cost,rattle,%d,%d,%s,%s,%.6e,%.3f,%.3f,%ld,%ld,%ld\n", Ns[i], 4 * Ns[i],
                  kname(all[k]->linsol), nk[k], all[k]->per_step, all[k]->iters, all[k]->facts, all[k]->symbolic,
                  all[k]->rss_kb, all[k]->steps);
    }
    printf("cost(10^4)/cost(10^3): umfpack %.2f, klu %.2f, klu+modified %.2f", sc[0][3] / sc[0][2],
           sc[1][3] / sc[1][2], sc[2][3] / sc[2][2]);
    if (!quick)
      printf("; cost(10^5)/cost(10^4): umfpack %.2f, klu %.2f, klu+modified %.2f", sc[0][4] / sc[0][3],
             sc[1][4] / sc[1][3], sc[2][4] / sc[2][3]);
    printf("\n\n");
  }

  /* ---------------------------------------------------------- 3 */
  if (!only_cross) {
    const int N = 50, steps = quick ? 200 : 1000;
    lv_model *m = NULL;
    double *q[3] = {NULL, NULL, NULL}, *v[3] = {NULL, NULL, NULL};
    const lv_linsol_kind kinds[3] = {LV_LINSOL_DENSE, LV_LINSOL_UMFPACK, LV_LINSOL_KLU};
    /* Started at 60 degrees: from the horizontal the 50 m chain's free end
     * whips at t ~ 3 s, faster than RATTLE's Newton iteration follows at
     * h = 0.01. */
    int ok = make_chain_at(N, "60", &m) == 0;
    for (int k = 0; k < 3 && ok; k++) {
      lv_integrator *it = NULL;
      ok = lv_integrator_new(&it, m, "rattle", 0.01) == 0 &&
           lv_integrator_set_linsol(it, kinds[k], 0) == 0 &&
           lv_integrator_init(it, 0.0, NULL, NULL) == 0;
      for (int s = 0; s < steps && ok; s++) ok = lv_integrator_step(it) == 0;
      if (ok) {
        const lv_state *st = lv_integrator_state(it);
        q[k] = malloc(3 * N * sizeof(double));
        v[k] = malloc(3 * N * sizeof(double));
        memcpy(q[k], st->q, 3 * N * sizeof(double));
        memcpy(v[k], st->v, 3 * N * sizeof(double));
      }
      lv_integrator_free(it);
    }
    if (ok) {
      printf("== dense vs sparse, chain N = %d (start at 60 deg), RATTLE h = 0.01, %d steps ==\n", N, steps);
      for (int k = 1; k < 3; k++) {
        double dq = 0, dv = 0;
        for (int i = 0; i < 3 * N; i++) {
          dq = fmax(dq, fabs(q[0][i] - q[k][i]));
          dv = fmax(dv, fabs(v[0][i] - v[k][i]));
        }
        printf("max |q_dense - q_%s| = %.3e, max |v_dense - v_%s| = %.3e  (target 1e-10)\n", kname(kinds[k]), dq,
               kname(kinds[k]), dv);
        fprintf(csv, "agreement,rattle,%d,%d,dense-vs-%s,full,%.3e,%.3e,,,,%d\n", N, 4 * N, kname(kinds[k]), dq, dv,
                steps);
      }
      printf("\n");
    } else {
      printf("dense vs sparse: a run failed\n\n");
    }
    for (int k = 0; k < 3; k++) {
      free(q[k]);
      free(v[k]);
    }
    lv_model_free(m);
  }

  /* ---------------------------------------------------------- 4 */
  printf("== dense/sparse crossover on Newton matrices: chain, h = 0.01, full Newton ==\n");
  printf("(n = nv + nc = 4N, the size LV_LINSOL_AUTO decides on; current threshold %d)\n",
         LV_LINSOL_AUTO_THRESHOLD);
  const char *schemes[] = {"rattle", "vi-a", "em", "genalpha", "bliedf2"};
  const int Nx[] = {4, 8, 12, 16, 20, 25, 30, 40, 50, 75, 100};
  const int nx = (int)(sizeof Nx / sizeof Nx[0]);
  for (int si = 0; si < (int)(sizeof schemes / sizeof schemes[0]); si++) {
    if (!lv_scheme_find(schemes[si])) {
      printf("%-9s not registered in this build\n", schemes[si]);
      continue;
    }
    printf("%-9s %6s %12s %12s %12s %8s %8s\n", schemes[si], "n", "dense s", "umf s", "klu s", "umf/dns",
           "klu/dns");
    int cross = -1, crossk = -1;
    for (int j = 0; j < nx; j++) {
      sample d = measure_child(schemes[si], Nx[j], LV_LINSOL_DENSE, LV_NEWTON_FULL, 0, quick ? 0.1 : 0.4, MAX_STEPS);
      sample u = measure_child(schemes[si], Nx[j], LV_LINSOL_UMFPACK, LV_NEWTON_FULL, 0, quick ? 0.1 : 0.4, MAX_STEPS);
      sample kl = measure_child(schemes[si], Nx[j], LV_LINSOL_KLU, LV_NEWTON_FULL, 0, quick ? 0.1 : 0.4, MAX_STEPS);
      if (!d.ok || !u.ok || !kl.ok) {
        printf("%-9s %6d  (run failed: dense %d, umfpack %d, klu %d)\n", "", 4 * Nx[j], d.ok, u.ok, kl.ok);
        continue;
      }
      double r = u.per_step / d.per_step, rk = kl.per_step / d.per_step;
      /* the first size from which on the sparse solver stays faster */
      if (r < 1.0) {
        if (cross < 0) cross = 4 * Nx[j];
      } else {
        cross = -1;
      }
      if (rk < 1.0) {
        if (crossk < 0) crossk = 4 * Nx[j];
      } else {
        crossk = -1;
      }
      printf("%-9s %6d %12.3e %12.3e %12.3e %8.2f %8.2f\n", "", 4 * Nx[j], d.per_step, u.per_step, kl.per_step, r,
             rk);
      fprintf(csv, "crossover,%s,%d,%d,klu,full,%.6e,%.3f,%.3f,%ld,,%ld\n", schemes[si], Nx[j], 4 * Nx[j],
              kl.per_step, kl.iters, kl.facts, kl.symbolic, kl.steps);
      fprintf(csv, "crossover,%s,%d,%d,dense,full,%.6e,%.3f,%.3f,%ld,,%ld\n", schemes[si], Nx[j], 4 * Nx[j],
              d.per_step, d.iters, d.facts, d.symbolic, d.steps);
      fprintf(csv, "crossover,%s,%d,%d,umfpack,full,%.6e,%.3f,%.3f,%ld,,%ld\n", schemes[si], Nx[j], 4 * Nx[j],
              u.per_step, u.iters, u.facts, u.symbolic, u.steps);
    }
    if (cross > 0)
      printf("%-9s UMFPACK faster than dense from n = %d on\n", schemes[si], cross);
    else
      printf("%-9s UMFPACK not faster than dense at the largest n\n", schemes[si]);
    if (crossk > 0)
      printf("%-9s KLU faster than dense from n = %d on\n", schemes[si], crossk);
    else
      printf("%-9s KLU not faster than dense at the largest n\n", schemes[si]);
    fflush(stdout);
  }
  fclose(csv);
  printf("\nCSV: %s\n", csv_path);
  return 0;
}
