/* Helpers for lv_scheme_type.history (checkpoints, issue 17): one function
 * per scheme lists its history fields once, and the same list counts,
 * writes and reads them. */
#ifndef LIVENS_SCHEMES_HISTORY_H
#define LIVENS_SCHEMES_HISTORY_H

#include <limits.h>
#include <string.h>
#include "livens/lv_scheme.h"

typedef struct {
  double *buf;
  size_t n;
  int dir;
} lv_hist;

static inline void lv_hist_doubles(lv_hist *h, double *x, size_t n) {
  if (n && h->dir == LV_HISTORY_WRITE) memcpy(h->buf + h->n, x, n * sizeof(double));
  if (n && h->dir == LV_HISTORY_READ) memcpy(x, h->buf + h->n, n * sizeof(double));
  h->n += n;
}

/* Integers travel as doubles.  A file's value that is no integer of the
 * type (NaN, infinite, out of range, fractional: a forged or damaged file
 * with a valid checksum) reads as 0, which every scheme's range checks
 * after the read treat as "nothing pending"; converting it directly would be
 * undefined behaviour. */
static inline void lv_hist_int(lv_hist *h, int *x) {
  double v = (double)*x;
  lv_hist_doubles(h, &v, 1);
  if (h->dir == LV_HISTORY_READ) *x = v >= INT_MIN && v <= INT_MAX && v == (double)(int)v ? (int)v : 0;
}

static inline void lv_hist_long(lv_hist *h, long *x) {
  double v = (double)*x;
  lv_hist_doubles(h, &v, 1);
  /* LONG_MAX is no double: the upper bound is -LONG_MIN, exclusive */
  if (h->dir == LV_HISTORY_READ)
    *x = v >= (double)LONG_MIN && v < -(double)LONG_MIN && v == (double)(long)v ? (long)v : 0;
}

#endif
