/* Assembly bookkeeping shared by the sparse back-ends: see triplets.h. */
#include "triplets.h"
#include <limits.h>
#include "lv_internal.h"

int lv_triplets_init(lv_triplets *t, int n) {
  memset(t, 0, sizeof *t);
  t->n = n;
  t->match = 1;
  t->cap = 4 * (size_t)n + 16;
  t->ci = malloc(t->cap * sizeof(int));
  t->cj = malloc(t->cap * sizeof(int));
  t->cv = malloc(t->cap * sizeof(double));
  t->Ap = lv_calloc((size_t)n + 1, sizeof(int));
  return (t->ci && t->cj && t->cv && t->Ap) ? 0 : LV_ENOMEM;
}

void lv_triplets_free(lv_triplets *t) {
  free(t->ci);
  free(t->cj);
  free(t->cv);
  free(t->ri);
  free(t->rj);
  free(t->map);
  free(t->Ap);
  free(t->Ai);
  free(t->Ax);
  memset(t, 0, sizeof *t);
}

int lv_triplets_grow(lv_triplets *t) {
  size_t cap = 2 * t->cap;
  int *ci = realloc(t->ci, cap * sizeof(int));
  if (ci == NULL) return LV_ENOMEM;
  t->ci = ci;
  int *cj = realloc(t->cj, cap * sizeof(int));
  if (cj == NULL) return LV_ENOMEM;
  t->cj = cj;
  double *cv = realloc(t->cv, cap * sizeof(double));
  if (cv == NULL) return LV_ENOMEM;
  t->cv = cv;
  t->cap = cap;
  return 0;
}

int lv_triplets_record(lv_triplets *t) {
  const int n = t->n;
  const size_t cnt = t->cnt;
  t->rcnt = 0; /* no valid pattern until the end */
  if (cnt > (size_t)INT_MAX) return LV_ELINSOL; /* the int APIs' limit */

  int *ri = realloc(t->ri, (cnt ? cnt : 1) * sizeof(int));
  if (ri == NULL) return LV_ENOMEM;
  t->ri = ri;
  int *rj = realloc(t->rj, (cnt ? cnt : 1) * sizeof(int));
  if (rj == NULL) return LV_ENOMEM;
  t->rj = rj;
  int *map = realloc(t->map, (cnt ? cnt : 1) * sizeof(int));
  if (map == NULL) return LV_ENOMEM;
  t->map = map;
  memcpy(ri, t->ci, cnt * sizeof(int));
  memcpy(rj, t->cj, cnt * sizeof(int));

  /* Two stable counting sorts (by row, then by column) put the add calls in
   * CSC order with rows ascending in each column. */
  int *count = lv_calloc((size_t)n + 1, sizeof(int));
  int *ord1 = lv_calloc(cnt, sizeof(int));
  int *ord2 = lv_calloc(cnt, sizeof(int));
  int rc = 0;
  if (!count || !ord1 || !ord2) {
    rc = LV_ENOMEM;
    goto out;
  }
  for (size_t k = 0; k < cnt; k++) count[ri[k] + 1]++;
  for (int i = 0; i < n; i++) count[i + 1] += count[i];
  for (size_t k = 0; k < cnt; k++) ord1[count[ri[k]]++] = (int)k;
  memset(count, 0, ((size_t)n + 1) * sizeof(int));
  for (size_t k = 0; k < cnt; k++) count[rj[k] + 1]++;
  for (int j = 0; j < n; j++) count[j + 1] += count[j];
  for (size_t s = 0; s < cnt; s++) {
    int k = ord1[s];
    ord2[count[rj[k]]++] = k;
  }

  /* Merge duplicates: consecutive equal positions share one slot.  Ai is
   * sized for the worst case (no duplicates). */
  free(t->Ai);
  free(t->Ax);
  t->Ai = lv_calloc(cnt, sizeof(int));
  t->Ax = NULL;
  if (t->Ai == NULL) {
    rc = LV_ENOMEM;
    goto out;
  }
  int nnz = 0, pi = -1, pj = -1;
  memset(t->Ap, 0, ((size_t)n + 1) * sizeof(int));
  for (size_t s = 0; s < cnt; s++) {
    int k = ord2[s];
    if (ri[k] != pi || rj[k] != pj) {
      pi = ri[k];
      pj = rj[k];
      t->Ai[nnz++] = pi;
      t->Ap[pj + 1]++;
    }
    map[k] = nnz - 1;
  }
  for (int j = 0; j < n; j++) t->Ap[j + 1] += t->Ap[j];
  t->nnz = nnz;
  t->Ax = lv_calloc((size_t)nnz, sizeof(double));
  if (t->Ax == NULL) {
    rc = LV_ENOMEM;
    goto out;
  }
  t->rcnt = cnt;
  t->match = 1;
out:
  free(count);
  free(ord1);
  free(ord2);
  return rc;
}

void lv_triplets_values(lv_triplets *t) {
  memset(t->Ax, 0, (size_t)t->nnz * sizeof(double));
  for (size_t k = 0; k < t->cnt; k++) t->Ax[t->map[k]] += t->cv[k];
}

void lv_triplets_matvec(const lv_triplets *t, const double *x, double *y) {
  memset(y, 0, (size_t)t->n * sizeof(double));
  for (size_t k = 0; k < t->cnt; k++) y[t->ci[k]] += t->cv[k] * x[t->cj[k]];
}

void lv_triplets_csc_matvec(const lv_triplets *t, const double *x, double *y) {
  memset(y, 0, (size_t)t->n * sizeof(double));
  for (int j = 0; j < t->n; j++)
    for (int p = t->Ap[j]; p < t->Ap[j + 1]; p++) y[t->Ai[p]] += t->Ax[p] * x[j];
}
