/* Shared scaffolding of the benchmark programs (not installed): clocks,
 * peak memory, the chain model, single-threaded BLAS. */
#ifndef LIVENS_BENCHUTIL_H
#define LIVENS_BENCHUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include "livens/livens.h"

static inline double bu_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall-clock seconds (monotonic). */
static inline double bu_wall(void) { return bu_clock(CLOCK_MONOTONIC); }

/* CPU seconds of the process: on a shared machine wall time also counts the
 * time other processes hold the cores. */
static inline double bu_cpu(void) { return bu_clock(CLOCK_PROCESS_CPUTIME_ID); }

/* CPU seconds of the calling thread (excludes BLAS helper threads). */
static inline double bu_thread_cpu(void) { return bu_clock(CLOCK_THREAD_CPUTIME_ID); }

/* CPU seconds of @p steps steps of an initialised integrator; -1 if a step
 * fails before that. */
static inline double bu_time_steps(lv_integrator *it, long steps) {
  double t0 = bu_cpu();
  long n = 0;
  while (n < steps && lv_integrator_step(it) == 0) n++;
  return n == steps ? bu_cpu() - t0 : -1.0;
}

/* qsort comparison of doubles (medians of repeated timings). */
static inline int bu_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Peak resident set size of this process, KiB (Linux). */
static inline long bu_maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* The `chain` model with N particles and one more parameter @p key set to
 * @p value (@p value NULL: that parameter's default). */
static inline int bu_make_chain_with(int N, const char *key, const char *value, lv_model **m) {
  char nb[32];
  snprintf(nb, sizeof nb, "%d", N);
  const char *k[2] = {"N", key}, *v[2] = {nb, value};
  lv_kv kv = {value ? 2 : 1, k, v};
  return lv_model_create("chain", &kv, m);
}

/* The `chain` model with N particles; @p angle NULL: its default start. */
static inline int bu_make_chain(int N, const char *angle, lv_model **m) {
  return bu_make_chain_with(N, "angle", angle, m);
}

/* Run fn(ctx, out) in a forked child and copy its result (size bytes) back
 * through a pipe, so every measurement has its own peak RSS and a crash or
 * failure at one size does not end the others.  On any failure *out is
 * zeroed and -1 returned. */
static inline int bu_in_child(void (*fn)(const void *ctx, void *out), const void *ctx, void *out, size_t size) {
  memset(out, 0, size);
  int fd[2];
  fflush(NULL);
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    close(fd[0]);
    fn(ctx, out);
    ssize_t w = write(fd[1], out, size);
    close(fd[1]);
    _exit(w == (ssize_t)size ? 0 : 1);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], out, size);
  close(fd[0]);
  int st;
  waitpid(pid, &st, 0);
  if (got != (ssize_t)size) {
    memset(out, 0, size);
    return -1;
  }
  return 0;
}

/* Single-threaded BLAS unless OPENBLAS_NUM_THREADS says otherwise (see
 * lv_blas_set_threads in lv_linsol.h). */
static inline void bu_blas_single_thread(void) {
  if (!getenv("OPENBLAS_NUM_THREADS")) lv_blas_set_threads(1);
}

#endif
