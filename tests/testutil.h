/* Helpers shared by the Check suites.  Header-only (static inline) so each
 * test program stays a single translation unit.  Append new helpers; do not
 * change the behaviour of existing ones, other suites depend on them. */
#ifndef LIVENS_TESTUTIL_H
#define LIVENS_TESTUTIL_H

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "livens/livens.h"

/* xorshift64*: reproducible across platforms and libc versions, unlike
 * rand().  The state must be non-zero; tu_seed guarantees that. */
static inline unsigned long long tu_seed(unsigned long long seed) {
  return seed ? seed : 0x9E3779B97F4A7C15ULL;
}

static inline unsigned long long tu_next(unsigned long long *s) {
  unsigned long long x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [-1, 1]. */
static inline double tu_rand(unsigned long long *s) {
  return (double)(tu_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Uniform integer in [0, n). */
static inline int tu_randint(unsigned long long *s, int n) {
  return (int)(tu_next(s) % (unsigned long long)n);
}

/* max_i |x_i - y_i| */
static inline double tu_max_abs_diff(int n, const double *x, const double *y) {
  double m = 0.0;
  for (int i = 0; i < n; i++) {
    double d = fabs(x[i] - y[i]);
    if (d > m || d != d) m = d;
  }
  return m;
}

/* max_i |x_i| */
static inline double tu_norm_inf(int n, const double *x) {
  double m = 0.0;
  for (int i = 0; i < n; i++) {
    double a = fabs(x[i]);
    if (a > m || a != a) m = a;
  }
  return m;
}

/* ||x - y||_inf / max(||y||_inf, tiny): relative error of x against the
 * reference y. */
static inline double tu_rel_err(int n, const double *x, const double *y) {
  double r = tu_norm_inf(n, y);
  return tu_max_abs_diff(n, x, y) / (r > 1e-300 ? r : 1e-300);
}

/* Least-squares slope of log(err) against log(h): the fitted order of
 * convergence over n step sizes. */
static inline double tu_fit_order(int n, const double *h, const double *err) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double x = log(h[i]), y = log(err[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* Rotation matrix (row-major) of Cardan/Tait-Bryan angles for the axis
 * sequence seq ("xyz": R = Rx(phi1) Ry(phi2) Rz(phi3)), the convention of
 * the heavy-top-ctb model; written independently of the model. */
static inline void tu_rot_seq(const char *seq, const double phi[3], double R[9]) {
  double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int k = 0; k < 3; k++) {
    int a = seq[k] - 'x', b = (a + 1) % 3, d = (a + 2) % 3;
    double c = cos(phi[k]), s = sin(phi[k]), E[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, P[9];
    E[4 * a] = 1.0;
    E[4 * b] = c, E[3 * b + d] = -s, E[3 * d + b] = s, E[4 * d] = c;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) P[3 * i + j] = A[3 * i] * E[j] + A[3 * i + 1] * E[3 + j] + A[3 * i + 2] * E[6 + j];
    for (int i = 0; i < 9; i++) A[i] = P[i];
  }
  for (int i = 0; i < 9; i++) R[i] = A[i];
}

/* sqrt(sum_i x_i^2), summed in index order */
static inline double tu_norm2(int n, const double *x) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

/* n classical RK4 steps of size h for y' = f(y), dim(y) <= 32: the
 * independent reference integrator of the convergence tests. */
static inline void tu_rk4(void (*f)(const double *y, double *dy), int dim, double *y, double h, long n) {
  double k1[32], k2[32], k3[32], k4[32], t[32];
  for (long s = 0; s < n; s++) {
    f(y, k1);
    for (int i = 0; i < dim; i++) t[i] = y[i] + 0.5 * h * k1[i];
    f(t, k2);
    for (int i = 0; i < dim; i++) t[i] = y[i] + 0.5 * h * k2[i];
    f(t, k3);
    for (int i = 0; i < dim; i++) t[i] = y[i] + h * k3[i];
    f(t, k4);
    for (int i = 0; i < dim; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
}

/* The pendulum3d model (m = l = 1, gravity 9.81 along -e3) as an ODE in
 * y = (q, v), index-1 form with lambda from the acceleration-level
 * constraint:  q'' = -9.81 e3 - lambda q,  lambda = (|v|^2 - 9.81 q3) / |q|^2. */
static inline void tu_pendulum3d_rhs(const double *y, double *f) {
  const double grav = 9.81, *q = y, *v = y + 3;
  double lam = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - grav * q[2]) / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
  for (int i = 0; i < 3; i++) f[i] = v[i], f[3 + i] = -lam * q[i];
  f[5] -= grav;
}

/* y = (q, v)(T) of pendulum3d from its default initial data q = e1, v = e2,
 * by n RK4 steps. */
static inline void tu_pendulum3d_reference(double T, long n, double *y) {
  const double y0[6] = {1, 0, 0, 0, 1, 0};
  for (int i = 0; i < 6; i++) y[i] = y0[i];
  tu_rk4(tu_pendulum3d_rhs, 6, y, T / n, n);
}

/* The central quartic potential V = |q|^2/2 + |q|^4/4 on R^3 and its
 * gradient, in lv_model's callback form: the unconstrained test model of the
 * midpoint-rule suites (rotation-invariant, so angular momentum is a
 * quadratic invariant; not quadratic, so energy is not kept exactly). */
static inline int tu_quartic_V(const double *q, double *V, void *u) {
  (void)u;
  double r2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
  *V = 0.5 * r2 + 0.25 * r2 * r2;
  return 0;
}
static inline int tu_quartic_dV(const double *q, double *g, void *u) {
  (void)u;
  double r2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
  for (int i = 0; i < 3; i++) g[i] = (1.0 + r2) * q[i];
  return 0;
}

/* Run every test of s with the given fork status (CK_NOFORK: suites whose
 * tests share state computed once), free the runner and return the exit
 * status. */
static inline int tu_run_suite_fork(Suite *s, enum fork_status fork) {
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, fork);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Run every test of s (forking unless CK_FORK=no), free the runner and
 * return the exit status: the tail of every suite's main(). */
static inline int tu_run_suite(Suite *s) { return tu_run_suite_fork(s, CK_FORK_GETENV); }

/* A generic configuration and velocity for model @p m (derivative checks
 * away from rest states): every coordinate uniform in [-1, 1], the
 * rotation of every R^3 x SO(3) or SE(3) factor random on SO(3). */
static inline void tu_generic_state(const lv_model *m, unsigned long long *st, double *q, double *v) {
  const lv_space *sp = lv_model_space(m);
  for (int i = 0; i < lv_model_nq(m); i++) q[i] = tu_rand(st);
  for (int i = 0; i < lv_model_nv(m); i++) v[i] = tu_rand(st);
  for (int f = 0; f < lv_space_nfactors(sp); f++) {
    lv_factor_kind k;
    int qo, nq, vo, nv;
    ck_assert_int_eq(lv_space_factor(sp, f, &k, &qo, &nq, &vo, &nv), 0);
    if (k == LV_FACTOR_R3SO3 || k == LV_FACTOR_SE3) {
      double psi[3] = {2 * tu_rand(st), 2 * tu_rand(st), 2 * tu_rand(st)};
      lv_so3_exp(psi, q + qo + 3);
    }
  }
}

/* ---- test cases with timeouts from their run time (issue 19) ----------
 * Every suite builds its test cases with tu_tcase and runs with
 * tu_run_suite.  @p cpu is the CPU time, in seconds, of the slowest test of
 * the case as measured (run the suite with TU_TIMES=1: each test prints
 * "tu-time TEST SECONDS" to stderr; round up).  Check's per-test timeout is
 * then ten times that, at least TU_TIMEOUT_FLOOR seconds, scaled by the
 * machine's load when it has more runnable work than processors (a test's
 * wall time grows with the load, its CPU time does not).  Check's
 * CK_TIMEOUT_MULTIPLIER scales on top (sanitizer builds). */
#define TU_TIMEOUT_FLOOR 10.0

/* max(1, 1-minute load average / online processors); 1 where unknown. */
static inline double tu_load_factor(void) {
  double load = 0.0;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = 0.0;
    fclose(f);
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  double r = n > 0 ? load / (double)n : 1.0;
  return r > 1.0 ? r : 1.0;
}

static inline double *tu_time_start_(void) {
  static double t0;
  return &t0;
}
static inline void tu_time_setup_(void) { *tu_time_start_() = (double)clock() / CLOCKS_PER_SEC; }
static inline void tu_time_teardown_(void) {
  if (getenv("TU_TIMES"))
    fprintf(stderr, "tu-time %s %.3f\n", tcase_name(), (double)clock() / CLOCKS_PER_SEC - *tu_time_start_());
}

/* A test case named @p name of suite @p s whose slowest test took @p cpu
 * CPU seconds; timeout 10 cpu (>= TU_TIMEOUT_FLOOR) times the load factor. */
static inline TCase *tu_tcase(Suite *s, const char *name, double cpu) {
  TCase *tc = tcase_create(name);
  double t = 10.0 * cpu;
  if (t < TU_TIMEOUT_FLOOR) t = TU_TIMEOUT_FLOOR;
  tcase_set_timeout(tc, t * tu_load_factor());
  tcase_add_checked_fixture(tc, tu_time_setup_, tu_time_teardown_);
  suite_add_tcase(s, tc);
  return tc;
}

#endif
