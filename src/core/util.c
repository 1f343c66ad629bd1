/* Small numeric and system helpers. */
#define _POSIX_C_SOURCE 199309L
#include <time.h>
#include "lv_internal.h"

void *lv_calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }

double lv_wall_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double lv_vnorm_inf(int n, const double *x) {
  double m = 0.0;
  for (int i = 0; i < n; i++) {
    double a = fabs(x[i]);
    if (a > m || a != a) m = a;
    if (m != m) return m;
  }
  return m;
}

double lv_vdot(int n, const double *x, const double *y) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

void lv_dense_matvec(int rows, int cols, const double *A, const double *x, double *y) {
  for (int i = 0; i < rows; i++) y[i] = 0.0;
  for (int j = 0; j < cols; j++) {
    double xj = x[j];
    const double *c = A + (size_t)j * rows;
    for (int i = 0; i < rows; i++) y[i] += c[i] * xj;
  }
}

void lv_dense_matvec_t(int rows, int cols, const double *A, const double *x, double *y) {
  for (int j = 0; j < cols; j++) {
    const double *c = A + (size_t)j * rows;
    double s = 0.0;
    for (int i = 0; i < rows; i++) s += c[i] * x[i];
    y[j] = s;
  }
}

