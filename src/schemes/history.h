/* Helpers for lv_scheme_type.history (checkpoints, issue 17): one function
 * per scheme lists its history fields once, and the same list counts,
 * writes and reads them. */
#ifndef LIVENS_SCHEMES_HISTORY_H
#define LIVENS_SCHEMES_HISTORY_H

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

static inline void lv_hist_int(lv_hist *h, int *x) {
  double v = (double)*x;
  lv_hist_doubles(h, &v, 1);
  if (h->dir == LV_HISTORY_READ) *x = (int)v;
}

static inline void lv_hist_long(lv_hist *h, long *x) {
  double v = (double)*x;
  lv_hist_doubles(h, &v, 1);
  if (h->dir == LV_HISTORY_READ) *x = (long)v;
}

#endif
