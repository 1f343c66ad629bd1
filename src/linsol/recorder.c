/* The position-sequence recorder: see recorder.h. */
#include "recorder.h"
#include <limits.h>
#include "lv_internal.h"

int lv_recorder_init(lv_recorder *r, size_t cap) {
  memset(r, 0, sizeof *r);
  if (cap == 0) return 0;
  r->ci = malloc(cap * sizeof(int));
  r->cj = malloc(cap * sizeof(int));
  r->cv = malloc(cap * sizeof(double));
  if (!r->ci || !r->cj || !r->cv) return LV_ENOMEM;
  r->cap = cap;
  return 0;
}

void lv_recorder_free(lv_recorder *r) {
  free(r->ci);
  free(r->cj);
  free(r->cv);
  free(r->ri);
  free(r->rj);
  free(r->map);
  memset(r, 0, sizeof *r);
}

int lv_recorder_grow_(lv_recorder *r) {
  size_t cap = r->cap ? 2 * r->cap : 64;
  int *ci = realloc(r->ci, cap * sizeof(int));
  if (ci == NULL) return LV_ENOMEM;
  r->ci = ci;
  int *cj = realloc(r->cj, cap * sizeof(int));
  if (cj == NULL) return LV_ENOMEM;
  r->cj = cj;
  double *cv = realloc(r->cv, cap * sizeof(double));
  if (cv == NULL) return LV_ENOMEM;
  r->cv = cv;
  r->cap = cap;
  return 0;
}

/* Add k left the recorded sequence: the positions before it were the
 * recorded ones. */
void lv_recorder_leave_(lv_recorder *r, size_t k) {
  if (k > 0) {
    memcpy(r->ci, r->ri, k * sizeof(int));
    memcpy(r->cj, r->rj, k * sizeof(int));
  }
  r->match = 0;
  r->mis = k;
}

/* The running sequence becomes the recording: keys in ptr, the other index
 * in idx, the add -> slot map.  Merged: two stable counting sorts (by the
 * other index, then by the key) and duplicates merged, O(cnt + nkeys +
 * nother); grouped: one counting pass. */
static int record(lv_recorder *r, int by_col, int merge, int nkeys, int nother, int **ptr, int **idx, int *nnz) {
  const size_t cnt = r->cnt;
  lv_recorder_forget(r); /* no valid recording until the end */
  if (cnt > (size_t)INT_MAX) return LV_ELINSOL; /* the int APIs' limit */
  size_t c1 = cnt ? cnt : 1;
  int *ri = realloc(r->ri, c1 * sizeof(int));
  if (ri == NULL) return LV_ENOMEM;
  r->ri = ri;
  int *rj = realloc(r->rj, c1 * sizeof(int));
  if (rj == NULL) return LV_ENOMEM;
  r->rj = rj;
  int *map = realloc(r->map, c1 * sizeof(int));
  if (map == NULL) return LV_ENOMEM;
  r->map = map;
  if (cnt > 0) {
    memcpy(ri, r->ci, cnt * sizeof(int));
    memcpy(rj, r->cj, cnt * sizeof(int));
  }
  int *p = realloc(*ptr, ((size_t)nkeys + 1) * sizeof(int));
  if (p == NULL) return LV_ENOMEM;
  *ptr = p;
  int *x = realloc(*idx, c1 * sizeof(int));
  if (x == NULL) return LV_ENOMEM;
  *idx = x;
  const int *key = by_col ? rj : ri, *oth = by_col ? ri : rj;
  memset(p, 0, ((size_t)nkeys + 1) * sizeof(int));
  if (!merge) {
    for (size_t k = 0; k < cnt; k++) p[key[k] + 1]++;
    for (int g = 0; g < nkeys; g++) p[g + 1] += p[g];
    /* p[g] is the cursor of key g while filling, then the end of g */
    for (size_t k = 0; k < cnt; k++) {
      int s = p[key[k]]++;
      map[k] = s;
      x[s] = oth[k];
    }
    for (int g = nkeys; g > 0; g--) p[g] = p[g - 1];
    p[0] = 0;
    *nnz = (int)cnt;
  } else {
    int nmax = nkeys > nother ? nkeys : nother;
    int *count = lv_calloc((size_t)nmax + 1, sizeof(int));
    int *ord1 = lv_calloc(c1, sizeof(int)), *ord2 = lv_calloc(c1, sizeof(int));
    if (!count || !ord1 || !ord2) {
      free(count);
      free(ord1);
      free(ord2);
      return LV_ENOMEM;
    }
    for (size_t k = 0; k < cnt; k++) count[oth[k] + 1]++;
    for (int o = 0; o < nother; o++) count[o + 1] += count[o];
    for (size_t k = 0; k < cnt; k++) ord1[count[oth[k]]++] = (int)k;
    memset(count, 0, ((size_t)nkeys + 1) * sizeof(int));
    for (size_t k = 0; k < cnt; k++) count[key[k] + 1]++;
    for (int g = 0; g < nkeys; g++) count[g + 1] += count[g];
    for (size_t s = 0; s < cnt; s++) {
      int k = ord1[s];
      ord2[count[key[k]]++] = k;
    }
    int nz = 0, lk = -1, lo = -1;
    for (size_t s = 0; s < cnt; s++) {
      int k = ord2[s];
      if (key[k] != lk || oth[k] != lo) {
        lk = key[k];
        lo = oth[k];
        x[nz++] = lo;
        p[lk + 1]++;
      }
      map[k] = nz - 1;
    }
    for (int g = 0; g < nkeys; g++) p[g + 1] += p[g];
    *nnz = nz;
    free(count);
    free(ord1);
    free(ord2);
  }
  return 0;
}

int lv_recorder_finish(lv_recorder *r, int by_col, int merge, int nkeys, int nother, int **ptr, int **idx,
                       double **val, int *nnz) {
  if (r->oom) return LV_ENOMEM;
  if (r->match && r->cnt == r->rcnt) return 0; /* the values are in their slots */
  /* a shorter sequence that matched so far: its positions are the recorded ones */
  if (r->match) lv_recorder_leave_(r, r->cnt);
  LV_CHECK(record(r, by_col, merge, nkeys, nother, ptr, idx, nnz));
  size_t z = *nnz ? (size_t)*nnz : 1;
  double *v = realloc(*val, z * sizeof(double));
  if (v == NULL) return LV_ENOMEM;
  *val = v;
  memset(v, 0, z * sizeof(double));
  for (size_t k = 0; k < r->cnt; k++) v[r->map[k]] += r->cv[k];
  r->rcnt = r->cnt;
  r->version = ++r->recorded;
  r->match = 1;
  r->mis = r->cnt;
  return 0;
}
