/* Helpers shared by the Check suites.  Header-only (static inline) so each
 * test program stays a single translation unit.  Append new helpers; do not
 * change the behaviour of existing ones, other suites depend on them. */
#ifndef LIVENS_TESTUTIL_H
#define LIVENS_TESTUTIL_H

#include <math.h>
#include <stddef.h>

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

#endif
