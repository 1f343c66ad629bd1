/* Scaling of one step with the problem size, on the `chain` model.
 *
 *   1. per-step cost vs N (N = 10 .. 10^5) for the dense and the sparse
 *      (UMFPACK) back-end (dense only where it fits in time and memory),
 *      with full and modified Newton on the sparse path; the ratio
 *      cost(10^4)/cost(10^3) (linear scaling: 10; target below 12); the
 *      same with the relative residual test of lv_newton off (the previous
 *      default), for a before/after in one run;
 *   2. memory: max RSS of a child process that builds and runs one size,
 *      minus the same child's RSS before it built anything;
 *   3. dense and sparse back-ends on the same trajectory (N = 50);
 *   4. the dense/sparse crossover on real Newton matrices (chain under every
 *      registered scheme that runs on it), which LV_LINSOL_AUTO_THRESHOLD
 *      in lv_linsol.h should follow;
 *   5. (--default) the default path as a user gets it (automatic linear
 *      solver, each scheme's own Newton defaults) for RATTLE, VI-A, EM and
 *      generalized-alpha at N = 10^3 and 10^4: CPU time per step over the
 *      same window of the motion, in this process's forked children,
 *      alternating the sizes and keeping each one's least time; the ratio
 *      cost(10^4)/cost(10^3) (linear: 10) per step and per Newton iteration;
 *   6. (--ga-iterations) generalized-alpha's Newton iterations per step at
 *      N = 10^2 .. 10^4 and gravity 0.981 .. 98.1, simplified and full
 *      Newton: the growth with N is the tension's (doc/performance.md).
 *
 * Every size runs in its own forked child, so RSS is per size and a
 * failure at one size does not end the others.  A measurement program,
 * not a test.  Usage: bench_scale [--quick] [--crossover | --cost | --default |
 * --ga-iterations] [--csv FILE] (default bench_scale.csv), or bench_scale --one
 * SCHEME N STEPS (see run_one).  --quick stops at
 * N = 10^4 and shortens the runs; --crossover runs study 4 only, --cost
 * studies 1-3 only, --default study 5 only, --ga-iterations study 6 only
 * (the last two are skipped by the other modes).
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
#include "benchutil.h"

/* Timings are CPU time of the (child) process (bu_cpu): on a shared machine
 * wall time counts the time other processes hold the cores, and ratios
 * between sizes measured at different moments then say more about the load
 * than about livens.  (BLAS threads, if any, add their CPU time: the dense
 * column counts all the work it causes.) */
static int make_chain(int N, lv_model **m) { return bu_make_chain(N, NULL, m); }

typedef struct {
  int ok;
  double per_step;   /* seconds per step over the window */
  double iters;      /* Newton iterations per step */
  double facts;      /* factorisations per step */
  double per_step_s, iters_s, facts_s; /* the same over its first WIN_SHORT steps */
  long symbolic;
  long rss_kb;       /* max RSS growth of the child */
  int linsol;
  long steps;        /* window length */
  int reps;          /* times the window was run */
} sample;

/* The measured window is steps 2 .. 1 + W of the same motion for every N,
 * so the Newton iteration counts compare: the chain's tension, hence the
 * stiffness of the step equations and the iterations per step, grows with
 * t and with N, and a window that ends earlier for the larger (slower) N
 * flatters it.  RATTLE, like Stoermer-Verlet, is stable only for
 * h omega < 2, and the fastest waves of a hanging chain have omega ~
 * 2 sqrt(T / (m l)) with the tension T growing with N and t: at h = 0.01
 * the 10^4 chain reaches that limit at t ~ 1.3 s (Newton then fails), the
 * 10^5 chain at t ~ 0.17 s (max lambda ~ 2e4 by t = 0.4; h = 0.005 runs
 * on).  Hence W = WIN_LONG (t <= 1.01 s) up to N = 10^4 and WIN_SHORT
 * (t <= 0.11 s) for 10^5; every run also records its first WIN_SHORT
 * steps, so cost(10^5)/cost(10^4) compares equal windows too. */
#define WIN_LONG 100
#define WIN_SHORT 10

/* One measurement in the calling process: build the chain, take a warm-up
 * step (symbolic analysis, first allocations, untimed), then the W steps
 * of the window; small problems repeat the whole run (fresh integrator)
 * until @p budget seconds of stepping have been timed. */
static sample measure(const char *scheme, int N, lv_linsol_kind kind, lv_newton_kind nk, double res_tol,
                      double res_rtol, int W, double budget) {
  sample s;
  memset(&s, 0, sizeof s);
  long rss0 = bu_maxrss_kb();
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  if (make_chain(N, &m)) return s;
  double tw = 0, ts = 0;
  long iw = 0, fw = 0, is = 0, fs = 0;
  int reps = 0;
  do {
    if (lv_integrator_new(&it, m, scheme, 0.01)) goto out;
    lv_newton_options o;
    lv_newton_options_default(&o);
    o.kind = nk;
    if (res_tol > 0) o.res_tol = res_tol;
    if (res_rtol >= 0) o.res_rtol = res_rtol;
    lv_integrator_set_newton(it, &o);
    lv_integrator_set_linsol(it, kind, 0);
    if (lv_integrator_init(it, 0.0, NULL, NULL) || lv_integrator_step(it)) goto out;
    lv_integrator_stats a, b;
    lv_integrator_get_stats(it, &a);
    double t0 = bu_cpu();
    for (int n = 1; n <= W; n++) {
      if (lv_integrator_step(it)) goto out;
      if (n == WIN_SHORT || (n == W && W < WIN_SHORT)) {
        lv_integrator_get_stats(it, &b);
        ts += bu_cpu() - t0;
        is += b.newton_iterations - a.newton_iterations;
        fs += b.factorizations - a.factorizations;
      }
    }
    tw += bu_cpu() - t0;
    lv_integrator_get_stats(it, &b);
    iw += b.newton_iterations - a.newton_iterations;
    fw += b.factorizations - a.factorizations;
    s.symbolic = b.symbolic;
    s.linsol = b.linsol;
    lv_integrator_free(it);
    it = NULL;
    reps++;
  } while (tw < budget);
  int ws = W < WIN_SHORT ? W : WIN_SHORT;
  s.ok = 1;
  s.steps = W;
  s.reps = reps;
  s.per_step = tw / ((double)W * reps);
  s.iters = (double)iw / ((double)W * reps);
  s.facts = (double)fw / ((double)W * reps);
  s.per_step_s = ts / ((double)ws * reps);
  s.iters_s = (double)is / ((double)ws * reps);
  s.facts_s = (double)fs / ((double)ws * reps);
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
  lv_newton_kind nk;
  double res_tol, res_rtol;
  int W;
  double budget;
} job;

static void run_job(const void *ctx, void *out) {
  const job *j = ctx;
  *(sample *)out = measure(j->scheme, j->N, j->kind, j->nk, j->res_tol, j->res_rtol, j->W, j->budget);
}

/* measure() in a forked child (own peak RSS; a failure ends only its size). */
static sample measure_child(const char *scheme, int N, lv_linsol_kind kind, lv_newton_kind nk, double res_tol,
                            double res_rtol, int W, double budget) {
  job j = {scheme, N, kind, nk, res_tol, res_rtol, W, budget};
  sample s;
  bu_in_child(run_job, &j, &s, sizeof s);
  return s;
}

static const char *kname(int k) { return lv_linsol_kind_name((lv_linsol_kind)k); }

/* Study 5: the default path.  The window is steps DEF_SKIP + 1 ..
 * DEF_SKIP + DEF_W (t in (0.2, 0.4]), the window `make bench` has always
 * reported, after untimed steps that include the start-up (projection,
 * symbolic analysis, first factorisation).  No Newton or linear-solver
 * option is set: generalized-alpha keeps its simplified Newton, the others
 * full Newton, and LV_LINSOL_AUTO chooses the back-end. */
#define DEF_SKIP 20
#define DEF_W 20
#define DEF_REPS 3

typedef struct {
  int ok;
  double per_step; /* CPU seconds per step over the window */
  double iters;    /* Newton iterations per step over the window */
  int linsol;      /* the back-end LV_LINSOL_AUTO chose */
} dsample;

typedef struct {
  const char *scheme;
  int N;
} djob;

/* The chain of N links under `scheme` at h = 0.01 with every default,
 * initialised: study 5's and run_one's integration. */
static int open_default(const char *scheme, int N, lv_model **m, lv_integrator **it) {
  int rc = make_chain(N, m);
  if (!rc) rc = lv_integrator_new(it, *m, scheme, 0.01);
  if (!rc) rc = lv_integrator_init(*it, 0.0, NULL, NULL);
  return rc;
}

static void run_default(const void *ctx, void *out) {
  const djob *j = ctx;
  dsample *d = out;
  memset(d, 0, sizeof *d);
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  lv_integrator_stats a, b;
  if (open_default(j->scheme, j->N, &m, &it)) goto out;
  for (int n = 0; n < DEF_SKIP; n++)
    if (lv_integrator_step(it)) goto out;
  lv_integrator_get_stats(it, &a);
  double t0 = bu_cpu();
  for (int n = 0; n < DEF_W; n++)
    if (lv_integrator_step(it)) goto out;
  d->per_step = (bu_cpu() - t0) / DEF_W;
  lv_integrator_get_stats(it, &b);
  d->iters = (double)(b.newton_iterations - a.newton_iterations) / DEF_W;
  d->linsol = b.linsol;
  d->ok = 1;
out:
  lv_integrator_free(it);
  lv_model_free(m);
}

/* --one SCHEME N STEPS: the default path of study 5 in this process, init
 * and STEPS steps, for benchmarks/callgrind_scale.sh, which differences the
 * instruction counts of 20 and 40 steps into study 5's window (CPU time on
 * a shared machine moved the window's 10^4/10^3 ratio by up to 2x between
 * consecutive runs; the instruction count does not move). */
static int run_one(const char *scheme, int N, int steps) {
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  lv_integrator_stats st;
  int rc = open_default(scheme, N, &m, &it);
  for (int n = 0; !rc && n < steps; n++) rc = lv_integrator_step(it);
  if (!rc) {
    lv_integrator_get_stats(it, &st);
    printf("%s N=%d steps=%d newton_iterations=%ld linsol=%s\n", scheme, N, steps, (long)st.newton_iterations,
           kname(st.linsol));
  } else {
    fprintf(stderr, "%s N=%d: failed (%s)\n", scheme, N, lv_status_name(rc));
  }
  lv_integrator_free(it);
  lv_model_free(m);
  return rc ? 1 : 0;
}

static void study_default(FILE *csv) {
  static const char *schemes[] = {"rattle", "vi-a", "em", "genalpha"};
  static const int Ns[2] = {1000, 10000};
  printf("== default path: chain, h = 0.01, automatic linear solver, each scheme's Newton defaults ==\n");
  printf("(CPU s per step over steps %d..%d; least of %d runs per size, sizes alternated)\n", DEF_SKIP + 1,
         DEF_SKIP + DEF_W, DEF_REPS);
  printf("%-9s | %8s %12s %6s | %8s %12s %6s | %8s %10s\n", "scheme", "linsol", "10^3 s/step", "iters", "linsol",
         "10^4 s/step", "iters", "ratio", "per iter");
  for (int si = 0; si < (int)(sizeof schemes / sizeof schemes[0]); si++) {
    dsample best[2];
    memset(best, 0, sizeof best);
    int failed = 0;
    for (int rep = 0; rep < DEF_REPS && !failed; rep++)
      for (int k = 0; k < 2; k++) {
        djob j = {schemes[si], Ns[k]};
        dsample d;
        if (bu_in_child(run_default, &j, &d, sizeof d) || !d.ok) {
          failed = 1;
          break;
        }
        if (!best[k].ok || d.per_step < best[k].per_step) best[k] = d;
      }
    if (failed) {
      printf("%-9s | run failed\n", schemes[si]);
      continue;
    }
    double ratio = best[1].per_step / best[0].per_step;
    double per_it = (best[1].per_step / best[1].iters) / (best[0].per_step / best[0].iters);
    printf("%-9s | %8s %12.4e %6.2f | %8s %12.4e %6.2f | %8.2f %10.2f\n", schemes[si], kname(best[0].linsol),
           best[0].per_step, best[0].iters, kname(best[1].linsol), best[1].per_step, best[1].iters, ratio, per_it);
    for (int k = 0; k < 2; k++)
      fprintf(csv, "default,%s,%d,%d,%s,default,%.6e,%.3f,,,,%d\n", schemes[si], Ns[k], 4 * Ns[k],
              kname(best[k].linsol), best[k].per_step, best[k].iters, DEF_W);
  }
  printf("\n");
}

/* Study 6 (--ga-iterations): why generalized-alpha's Newton iterations per
 * step grow from N = 10^3 to 10^4 where the other schemes' do not
 * (doc/performance.md).  The tension near the support is about N m g; its
 * stiffness against the Newton matrix's inertia term is N g beta h^2 / l.
 * Varying the gravity separates it from N: iterations per step over the
 * first 40 steps (t <= 0.4, h = 0.01), simplified (the default) and full
 * Newton, automatic linear solver. */
typedef struct {
  int N;
  const char *gravity;
} gcase;

static int ga_iterations_run(int N, const char *gravity, lv_newton_kind nk, double *iters, long *facts) {
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  int rc = bu_make_chain_with(N, "gravity", gravity, &m);
  if (!rc) rc = lv_integrator_new(&it, m, "genalpha", 0.01);
  if (!rc) {
    lv_newton_options o;
    lv_newton_options_default(&o);
    o.kind = nk;
    rc = lv_integrator_set_newton(it, &o);
  }
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
  for (int n = 0; n < 40 && !rc; n++) rc = lv_integrator_step(it);
  if (!rc) {
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    *iters = (double)st.newton_iterations / 40.0;
    *facts = st.factorizations;
  }
  lv_integrator_free(it);
  lv_model_free(m);
  return rc;
}

static int study_ga_iterations(FILE *csv) {
  static const gcase cases[] = {{1000, "0.981"}, {10000, "0.981"}, {1000, "9.81"},
                                {10000, "9.81"}, {100, "98.1"},   {1000, "98.1"}};
  static const lv_newton_kind kinds[2] = {LV_NEWTON_SIMPLIFIED, LV_NEWTON_FULL};
  printf("== generalized-alpha on the chain: Newton iterations per step, h = 0.01, t <= 0.4 (40 steps) ==\n");
  printf("%7s %8s %12s | %11s %11s\n", "N", "gravity", "N g b h^2/l", "simplified", "full");
  int failed = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double it[2] = {0, 0};
    long f[2] = {0, 0};
    int ok = 1;
    for (int k = 0; k < 2; k++)
      if (ga_iterations_run(cases[c].N, cases[c].gravity, kinds[k], &it[k], &f[k])) ok = 0;
    /* beta of rho-inf = 0.9 (the scheme's default): 1 / (1 + 0.9)^2 */
    double group = cases[c].N * atof(cases[c].gravity) * 1e-4 / (1.9 * 1.9);
    if (!ok) {
      printf("%7d %8s %12.3g | run failed\n", cases[c].N, cases[c].gravity, group);
      failed = 1;
      continue;
    }
    printf("%7d %8s %12.3g | %11.2f %11.2f\n", cases[c].N, cases[c].gravity, group, it[0], it[1]);
    for (int k = 0; k < 2; k++)
      fprintf(csv, "ga_iterations_gravity_%s,genalpha,%d,%d,auto,%s,,%.3f,%.3f,,,40\n", cases[c].gravity,
              cases[c].N, 4 * cases[c].N, k ? "full" : "simplified", it[k], f[k] / 40.0);
  }
  printf("\n");
  return failed;
}

int main(int argc, char **argv) {
  bu_blas_single_thread();
  setvbuf(stdout, NULL, _IOLBF, 0); /* tables appear as they are measured, also in a pipe */
  int quick = 0, only_cross = 0, no_cross = 0, only_default = 0, only_ga = 0;
  const char *csv_path = "bench_scale.csv";
  if (argc == 5 && strcmp(argv[1], "--one") == 0) {
    int N = atoi(argv[3]), steps = atoi(argv[4]);
    if (N < 1 || steps < 0) {
      fprintf(stderr, "usage: %s --one SCHEME N STEPS\n", argv[0]);
      return 2;
    }
    return run_one(argv[2], N, steps);
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--crossover") == 0)
      only_cross = 1;
    else if (strcmp(argv[i], "--cost") == 0)
      no_cross = 1;
    else if (strcmp(argv[i], "--default") == 0)
      only_default = 1;
    else if (strcmp(argv[i], "--ga-iterations") == 0)
      only_ga = 1;
    else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
      csv_path = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s [--quick] [--crossover | --cost | --default | --ga-iterations] [--csv FILE]\n"
              "       %s --one SCHEME N STEPS\n",
              argv[0], argv[0]);
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
  if (only_default) {
    study_default(csv);
    fclose(csv);
    printf("CSV: %s\n", csv_path);
    return 0;
  }
  if (only_ga) {
    int failed = study_ga_iterations(csv);
    if (fclose(csv)) {
      perror(csv_path);
      return 1;
    }
    printf("CSV: %s\n", csv_path);
    return failed;
  }

  /* ---------------------------------------------------------- 1 and 2 */
  const int Ns[5] = {10, 100, 1000, 10000, 100000};
  int nN = quick ? 4 : 5;
  int Wn[5];
  for (int i = 0; i < 5; i++) Wn[i] = quick || Ns[i] > 10000 ? WIN_SHORT : WIN_LONG;
  printf("== per-step cost vs N: chain (horizontal start), RATTLE, h = 0.01, default Newton options ==\n");
  printf("(CPU s per step; window: steps 2..%d for N <= 10^4, 2..%d for 10^5; small N repeat the window for %.1f s)\n",
         Wn[0] + 1, WIN_SHORT + 1, budget);
  printf("%8s %8s | %12s %6s | %12s %6s %6s %5s %10s | %12s %6s %6s | %12s %6s %10s | %12s %6s\n", "N", "n",
         "dense s/step", "iters", "umf s/step", "iters", "facts", "symb", "RSS MiB", "umf+mod s", "iters", "facts",
         "klu s/step", "iters", "RSS MiB", "klu+mod s", "iters");
  sample U[5], K[5], KM[5];
  memset(U, 0, sizeof U);
  memset(K, 0, sizeof K);
  memset(KM, 0, sizeof KM);
  for (int i = 0; i < nN && !only_cross; i++) {
    int N = Ns[i], n = 4 * N;
    sample d = {0}, um;
    /* Dense LU is O(n^3) per factorisation and O(n^2) memory: at n = 4000 a
     * step takes seconds (3 steps only), beyond that it does not fit. */
    if (N <= 1000)
      d = measure_child("rattle", N, LV_LINSOL_DENSE, LV_NEWTON_FULL, 0, -1, N == 1000 ? 3 : Wn[i],
                        N == 1000 ? 0.0 : budget);
    U[i] = measure_child("rattle", N, LV_LINSOL_UMFPACK, LV_NEWTON_FULL, 0, -1, Wn[i], budget);
    um = measure_child("rattle", N, LV_LINSOL_UMFPACK, LV_NEWTON_MODIFIED, 0, -1, Wn[i], budget);
    K[i] = measure_child("rattle", N, LV_LINSOL_KLU, LV_NEWTON_FULL, 0, -1, Wn[i], budget);
    KM[i] = measure_child("rattle", N, LV_LINSOL_KLU, LV_NEWTON_MODIFIED, 0, -1, Wn[i], budget);
    char dbuf[40] = "-", dib[16] = "-";
    if (d.ok) {
      snprintf(dbuf, sizeof dbuf, "%.3e", d.per_step);
      snprintf(dib, sizeof dib, "%.2f", d.iters);
    }
    printf("%8d %8d | %12s %6s | %12.3e %6.2f %6.2f %5ld %10.2f | %12.3e %6.2f %6.2f | %12.3e %6.2f %10.2f | %12.3e "
           "%6.2f\n",
           N, n, dbuf, dib, U[i].per_step, U[i].iters, U[i].facts, U[i].symbolic, U[i].rss_kb / 1024.0, um.per_step,
           um.iters, um.facts, K[i].per_step, K[i].iters, K[i].rss_kb / 1024.0, KM[i].per_step, KM[i].iters);
    const sample *all[5] = {&d, &U[i], &um, &K[i], &KM[i]};
    const char *nk[5] = {"full", "full", "modified", "full", "modified"};
    for (int k = 0; k < 5; k++)
      if (all[k]->ok)
        fprintf(csv, "cost,rattle,%d,%d,%s,%s,%.6e,%.3f,%.3f,%ld,%ld,%ld\n", N, n, kname(all[k]->linsol), nk[k],
                all[k]->per_step, all[k]->iters, all[k]->facts, all[k]->symbolic, all[k]->rss_kb, all[k]->steps);
    fflush(stdout);
  }
  if (!only_cross) {
    /* failed runs have ok = 0: print NaN rather than a ratio of zeros */
#define PS(x) ((x).ok ? (x).per_step : NAN)
#define PSS(x) ((x).ok ? (x).per_step_s : NAN)
    printf("cost(10^4)/cost(10^3), steps 2..%d (linear: 10, target < 12): umfpack %.2f, klu %.2f, klu+modified "
           "%.2f\n",
           Wn[3] + 1, PS(U[3]) / PS(U[2]), PS(K[3]) / PS(K[2]), PS(KM[3]) / PS(KM[2]));
    printf("  Newton iterations per step 10^3 -> 10^4: umfpack %.2f -> %.2f, klu %.2f -> %.2f\n", U[2].iters,
           U[3].iters, K[2].iters, K[3].iters);
    /* The cost per factorisation separates the linear algebra from the
     * number of Newton iterations per step. */
    printf("  per factorisation: umfpack %.2f, klu %.2f\n", (PS(U[3]) / U[3].facts) / (PS(U[2]) / U[2].facts),
           (PS(K[3]) / K[3].facts) / (PS(K[2]) / K[2].facts));
    if (Wn[3] != WIN_SHORT)
      printf("cost(10^4)/cost(10^3), steps 2..%d: umfpack %.2f, klu %.2f, klu+modified %.2f\n", WIN_SHORT + 1,
             PSS(U[3]) / PSS(U[2]), PSS(K[3]) / PSS(K[2]), PSS(KM[3]) / PSS(KM[2]));
    printf("cost(10^3)/cost(10^2), steps 2..%d: umfpack %.2f, klu %.2f\n", Wn[2] + 1, PS(U[2]) / PS(U[1]),
           PS(K[2]) / PS(K[1]));
    if (!quick) {
      printf("cost(10^5)/cost(10^4), steps 2..%d: umfpack %.2f, klu %.2f, klu+modified %.2f\n", WIN_SHORT + 1,
             PSS(U[4]) / PSS(U[3]), PSS(K[4]) / PSS(K[3]), PSS(KM[4]) / PSS(KM[3]));
      printf("  Newton iterations per step 10^4 -> 10^5 (steps 2..%d): %.2f -> %.2f; per factorisation: umfpack "
             "%.2f, klu %.2f\n",
             WIN_SHORT + 1, U[3].iters_s, U[4].iters_s, (PSS(U[4]) / U[4].facts_s) / (PSS(U[3]) / U[3].facts_s),
             (PSS(K[4]) / K[4].facts_s) / (PSS(K[3]) / K[3].facts_s));
    }
    printf("RSS growth 10^4/10^3 (linear: 10): umfpack %.2f, klu %.2f", (double)U[3].rss_kb / U[2].rss_kb,
           (double)K[3].rss_kb / K[2].rss_kb);
    if (!quick)
      printf("; 10^5/10^4: umfpack %.2f, klu %.2f", (double)U[4].rss_kb / U[3].rss_kb,
             (double)K[4].rss_kb / K[3].rss_kb);
    printf("\n\n");

    /* The same with the relative residual test off (res_rtol = 0: the
     * absolute 1e-12 alone, the default before it): coordinates ~ N l put
     * the round-off of the stage-1 residual above 1e-12 from N ~ 10^3 on,
     * and Newton then ends one iteration later at the round-off floor.
     * Measured in this run, so the before/after ratios share the load. */
    printf("== the same, absolute residual test only (res_rtol = 0, res_tol = 1e-12: the previous default) ==\n");
    printf("%8s | %12s %6s | %12s %6s | %12s %6s\n", "N", "umf s/step", "iters", "klu s/step", "iters",
           "klu+mod s", "iters");
    sample A[3][5];
    memset(A, 0, sizeof A);
    for (int i = 2; i < nN; i++) {
      A[0][i] = measure_child("rattle", Ns[i], LV_LINSOL_UMFPACK, LV_NEWTON_FULL, 1e-12, 0.0, Wn[i], budget);
      A[1][i] = measure_child("rattle", Ns[i], LV_LINSOL_KLU, LV_NEWTON_FULL, 1e-12, 0.0, Wn[i], budget);
      A[2][i] = measure_child("rattle", Ns[i], LV_LINSOL_KLU, LV_NEWTON_MODIFIED, 1e-12, 0.0, Wn[i], budget);
      printf("%8d | %12.3e %6.2f | %12.3e %6.2f | %12.3e %6.2f\n", Ns[i], A[0][i].per_step, A[0][i].iters,
             A[1][i].per_step, A[1][i].iters, A[2][i].per_step, A[2][i].iters);
      const char *nk[3] = {"full-absolute", "full-absolute", "modified-absolute"};
      for (int k = 0; k < 3; k++)
        if (A[k][i].ok)
          fprintf(csv, "cost,rattle,%d,%d,%s,%s,%.6e,%.3f,%.3f,%ld,%ld,%ld\n", Ns[i], 4 * Ns[i],
                  kname(A[k][i].linsol), nk[k], A[k][i].per_step, A[k][i].iters, A[k][i].facts, A[k][i].symbolic,
                  A[k][i].rss_kb, A[k][i].steps);
    }
    printf("cost(10^4)/cost(10^3), steps 2..%d: umfpack %.2f, klu %.2f, klu+modified %.2f\n", Wn[3] + 1,
           PS(A[0][3]) / PS(A[0][2]), PS(A[1][3]) / PS(A[1][2]), PS(A[2][3]) / PS(A[2][2]));
    if (Wn[3] != WIN_SHORT)
      printf("cost(10^4)/cost(10^3), steps 2..%d: umfpack %.2f, klu %.2f, klu+modified %.2f\n", WIN_SHORT + 1,
             PSS(A[0][3]) / PSS(A[0][2]), PSS(A[1][3]) / PSS(A[1][2]), PSS(A[2][3]) / PSS(A[2][2]));
    if (!quick)
      printf("cost(10^5)/cost(10^4), steps 2..%d: umfpack %.2f, klu %.2f, klu+modified %.2f\n", WIN_SHORT + 1,
             PSS(A[0][4]) / PSS(A[0][3]), PSS(A[1][4]) / PSS(A[1][3]), PSS(A[2][4]) / PSS(A[2][3]));
    printf("default vs absolute-only, per step (same run): N = 10^3 umfpack %.2f, klu %.2f; N = 10^4 umfpack "
           "%.2f, klu %.2f\n\n",
           PS(U[2]) / PS(A[0][2]), PS(K[2]) / PS(A[1][2]), PS(U[3]) / PS(A[0][3]), PS(K[3]) / PS(A[1][3]));
#undef PS
#undef PSS
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
    int ok = bu_make_chain(N, "60", &m) == 0;
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
  if (no_cross) {
    fclose(csv);
    printf("CSV: %s\n", csv_path);
    return 0;
  }
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
      double bx = quick ? 0.1 : 0.4;
      sample d = measure_child(schemes[si], Nx[j], LV_LINSOL_DENSE, LV_NEWTON_FULL, 0, -1, WIN_SHORT, bx);
      sample u = measure_child(schemes[si], Nx[j], LV_LINSOL_UMFPACK, LV_NEWTON_FULL, 0, -1, WIN_SHORT, bx);
      sample kl = measure_child(schemes[si], Nx[j], LV_LINSOL_KLU, LV_NEWTON_FULL, 0, -1, WIN_SHORT, bx);
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
