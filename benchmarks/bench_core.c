/* Core performance benchmarks: dense LAPACK vs UMFPACK on saddle-point
 * matrices, and UMFPACK refactorisation with and without symbolic reuse.
 * A measurement program, not a test: it asserts nothing about time.
 * Build with `make benchmarks`, run ./benchmarks/bench_core. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "livens/livens.h"
#include "benchutil.h"

static unsigned long long rng_next(unsigned long long *s) {
  unsigned long long x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static double rng_unif(unsigned long long *s) { /* [-1, 1) */
  return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ------------------------------------------------------------ test matrix */

/* [[M, B^T], [B, 0]] as a sequence of add calls; total size n, m = n/4
 * constraints.  M is pentadiagonal and diagonally dominant (SPD), each row of
 * B has a dominant entry in a column of its own plus two small ones nearby --
 * the sparsity of a chain of bodies with joint constraints.  Two value sets over
 * one pattern, so successive assemblies are real refactorisations. */
typedef struct {
  int n, cnt;
  int *i, *j;
  double *v[2];
} trip;

static void put(trip *t, int i, int j, double v0, double v1) {
  t->i[t->cnt] = i;
  t->j[t->cnt] = j;
  t->v[0][t->cnt] = v0;
  t->v[1][t->cnt] = v1;
  t->cnt++;
}

static int make_saddle(trip *t, int n) {
  int m = n / 4, nx = n - m;
  size_t cap = (size_t)5 * nx + (size_t)6 * m;
  unsigned long long s = 12345;
  t->n = n;
  t->cnt = 0;
  t->i = malloc(cap * sizeof(int));
  t->j = malloc(cap * sizeof(int));
  t->v[0] = malloc(cap * sizeof(double));
  t->v[1] = malloc(cap * sizeof(double));
  if (!t->i || !t->j || !t->v[0] || !t->v[1]) return -1;
  for (int i = 0; i < nx; i++) {
    for (int k = -2; k <= 2; k++) {
      int j = i + k;
      if (j < 0 || j >= nx) continue;
      if (k == 0) {
        put(t, i, i, 6.0 + rng_unif(&s), 6.0 + rng_unif(&s));
      } else {
        /* symmetric: the value depends on the unordered pair only */
        double a = 0.5 * sin(1.0 + i + j), b = 0.5 * cos(2.0 + i + j);
        put(t, i, j, a, b);
      }
    }
  }
  for (int q = 0; q < m; q++) {
    /* the small entries sit near the dominant one: joints couple
     * neighbouring bodies, and random long-range columns would turn the
     * graph into an expander with dense-like fill */
    int c[3];
    c[0] = (int)((long)q * nx / m);
    for (int e = 1; e < 3; e++) {
      int cj = c[0] + (int)(rng_next(&s) % 9) - 4;
      c[e] = cj < 0 ? 0 : cj >= nx ? nx - 1 : cj;
    }
    for (int e = 0; e < 3; e++) {
      double a = e == 0 ? 2.0 + fabs(rng_unif(&s)) : 0.3 * rng_unif(&s);
      double b = e == 0 ? 2.0 + fabs(rng_unif(&s)) : 0.3 * rng_unif(&s);
      put(t, nx + q, c[e], a, b);
      put(t, c[e], nx + q, a, b);
    }
  }
  return 0;
}

static void free_trip(trip *t) {
  free(t->i);
  free(t->j);
  free(t->v[0]);
  free(t->v[1]);
}

static void assemble(lv_linsol *ls, const trip *t, int set) {
  lv_linsol_begin(ls);
  const double *v = t->v[set];
  for (int k = 0; k < t->cnt; k++) lv_linsol_add(ls, t->i[k], t->j[k], v[k]);
}

/* ------------------------------------------------------------- measurements */

enum { MODE_SOLVE, MODE_REFACTOR, MODE_SCRATCH };

typedef struct {
  lv_linsol_kind kind;
  const trip *t;
  lv_linsol *ls;
  double *b, *x;
  int set, status;
} job;

/* One repetition.  MODE_SOLVE: a Newton iteration's linear-algebra cost on
 * a fixed pattern (assemble, factor, solve).  MODE_REFACTOR: assemble and
 * factor with the symbolic analysis reused.  MODE_SCRATCH: the same from a
 * fresh solver, so the symbolic analysis is redone. */
static void run_once(job *jb, int mode) {
  int n = jb->t->n;
  if (mode == MODE_SCRATCH) {
    lv_linsol *ls = NULL;
    if (lv_linsol_new(&ls, jb->kind, n, 0) != 0) {
      jb->status = LV_ENOMEM;
      return;
    }
    assemble(ls, jb->t, jb->set);
    int rc = lv_linsol_factor(ls);
    if (rc != 0) jb->status = rc;
    lv_linsol_free(ls);
  } else {
    assemble(jb->ls, jb->t, jb->set);
    int rc = lv_linsol_factor(jb->ls);
    if (rc == 0 && mode == MODE_SOLVE) {
      memcpy(jb->x, jb->b, (size_t)n * sizeof(double));
      rc = lv_linsol_solve(jb->ls, jb->x);
    }
    if (rc != 0) jb->status = rc;
  }
  jb->set ^= 1;
}

/* Seconds per repetition: one warm-up, then repeat for at least min_time. */
static double measure(job *jb, int mode, double min_time) {
  run_once(jb, mode);
  int reps = 0;
  double t0 = bu_wall(), t;
  do {
    run_once(jb, mode);
    reps++;
    t = bu_wall() - t0;
  } while (t < min_time && reps < 1000000);
  return t / reps;
}

/* ||A x - b||_inf / ||b||_inf for the last solve of jb (values of set^1). */
static double residual(job *jb) {
  int n = jb->t->n;
  double *y = malloc((size_t)n * sizeof(double));
  if (y == NULL) return NAN;
  lv_linsol_matvec(jb->ls, jb->x, y);
  double r = 0.0, bn = 0.0;
  for (int i = 0; i < n; i++) {
    r = fmax(r, fabs(y[i] - jb->b[i]));
    bn = fmax(bn, fabs(jb->b[i]));
  }
  free(y);
  return r / bn;
}

static void bench_linsol(void) {
  static const int sizes[] = {10, 30, 100, 300, 1000, 3000, 10000};
  const double min_time = 0.3, dense_budget = 10.0;
  double last_dense = 0.0;
  int last_n = 0;

  printf("Saddle-point [[M, B^T], [B, 0]], m = n/4 constraints, M pentadiagonal SPD.\n");
  printf("asm+fac+sol: assembly + numeric factorisation + solve, pattern reused\n");
  printf("umf refac: assembly + factor, symbolic reused; umf scratch: new solver,\n");
  printf("assembly, symbolic + numeric factor.  Times in microseconds.\n\n");
  printf("%6s %7s | %12s %12s %9s | %11s %12s %8s | %9s %9s\n", "n", "nnz",
         "dense", "umfpack", "d/u", "umf refac", "umf scratch", "scr/ref",
         "res dense", "res umf");
  printf("%6s %7s | %12s %12s %9s | %11s %12s %8s | %9s %9s\n", "", "",
         "asm+fac+sol", "asm+fac+sol", "", "", "", "", "", "");

  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int n = sizes[k];
    trip t;
    if (make_saddle(&t, n) != 0) {
      printf("%6d  out of memory\n", n);
      free_trip(&t);
      continue;
    }
    double *b = malloc((size_t)n * sizeof(double));
    double *x = malloc((size_t)n * sizeof(double));
    unsigned long long s = 99;
    for (int i = 0; i < n; i++) b[i] = rng_unif(&s);

    /* UMFPACK */
    job ju = {LV_LINSOL_UMFPACK, &t, NULL, b, x, 0, 0};
    lv_linsol_new(&ju.ls, LV_LINSOL_UMFPACK, n, 0);
    double tu = measure(&ju, MODE_SOLVE, min_time);
    double res_u = residual(&ju);
    double tref = measure(&ju, MODE_REFACTOR, min_time);
    double tscr = measure(&ju, MODE_SCRATCH, min_time);
    lv_linsol_stats st;
    lv_linsol_get_stats(ju.ls, &st);

    /* Dense, unless the cubic extrapolation from the previous size says it
     * would blow the time budget (or the n^2 arrays cannot be allocated). */
    double td = NAN, res_d = NAN;
    double est = last_n ? last_dense * pow((double)n / last_n, 3.0) : 0.0;
    job jd = {LV_LINSOL_DENSE, &t, NULL, b, x, 0, 0};
    if (est * 3.0 < dense_budget && lv_linsol_new(&jd.ls, LV_LINSOL_DENSE, n, 0) == 0) {
      td = measure(&jd, MODE_SOLVE, min_time);
      res_d = residual(&jd);
      last_dense = td;
      last_n = n;
      lv_linsol_free(jd.ls);
    }

    char dbuf[32], rbuf[32], resbuf[32];
    if (isnan(td)) {
      snprintf(dbuf, sizeof dbuf, "skipped");
      snprintf(rbuf, sizeof rbuf, "-");
      snprintf(resbuf, sizeof resbuf, "-");
    } else {
      snprintf(dbuf, sizeof dbuf, "%.1f", 1e6 * td);
      snprintf(rbuf, sizeof rbuf, "%.2f", td / tu);
      snprintf(resbuf, sizeof resbuf, "%.1e", res_d);
    }
    printf("%6d %7ld | %12s %12.1f %9s | %11.1f %12.1f %8.2f | %9s %9.1e", n, st.nnz,
           dbuf, 1e6 * tu, rbuf, 1e6 * tref, 1e6 * tscr, tscr / tref, resbuf, res_u);
    if (ju.status || jd.status)
      printf("  (status: umfpack %s, dense %s)", lv_status_name(ju.status),
             lv_status_name(jd.status));
    printf("\n");
    fflush(stdout);

    lv_linsol_free(ju.ls);
    free(b);
    free(x);
    free_trip(&t);
  }
  printf("\n");
}

/* ----------------------------------------------------------------- RATTLE */

/* TO BE FILLED IN BY THE LEAD: RATTLE on the 3-D pendulum. */
/* RATTLE on the 3D pendulum, h = 0.01, 10^5 steps, with each back-end:
 * steps per second and Newton work per step, plus the energy and momentum
 * figures of the same runs (so speed is never reported without accuracy). */
static void bench_rattle_pendulum(void) {
  printf("RATTLE on pendulum3d, h = 0.01, T = 1000 (10^5 steps)\n");
  printf("%-8s %12s %12s %12s %12s %12s\n", "linsol", "steps/s", "us/step", "newton/step", "max|dE|/E0",
         "max|dJ3|");
  double sps[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    lv_model *m = NULL;
    lv_integrator *it = NULL;
    lv_diag *d = NULL;
    if (lv_model_create("pendulum3d", NULL, &m) || lv_integrator_new(&it, m, "rattle", 0.01) ||
        lv_integrator_set_linsol(it, k ? LV_LINSOL_UMFPACK : LV_LINSOL_DENSE, 0) || lv_diag_new_for(&d, it)) {
      printf("setup failed\n");
      return;
    }
    lv_diag_writer w = LV_DIAG_WRITER_INIT(d, NULL);
    lv_integrator_set_output(it, lv_diag_output, &w);
    int rc = lv_integrator_init(it, 0.0, NULL, NULL);
    if (!rc) rc = lv_integrator_run_until(it, 1000.0);
    lv_integrator_stats st;
    lv_diag_summary su;
    lv_integrator_get_stats(it, &st);
    lv_diag_get_summary(d, &su);
    sps[k] = st.steps / st.wall_time;
    printf("%-8s %12.4g %12.3f %12.2f %12.3e %12.3e%s\n", k ? "umfpack" : "dense", sps[k], 1e6 / sps[k],
           (double)st.newton_iterations / st.steps, su.max_rel_energy_error, su.max_momentum_error,
           rc ? "  (FAILED)" : "");
    lv_diag_free(d);
    lv_integrator_free(it);
    lv_model_free(m);
  }
  printf("dense/umfpack speed ratio on this 4x4 system: %.2f (the wall time includes the per-step diagnostics)\n",
         sps[0] / sps[1]);
}

int main(void) {
  bu_blas_single_thread();
  printf("livens %s core benchmarks\n\n", lv_version());
  bench_linsol();
  bench_rattle_pendulum();
  return 0;
}
