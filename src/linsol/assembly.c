/* The one assembly path of the linear solvers: see assembly.h. */
#include "assembly.h"
#include <limits.h>
#include <stdint.h>
#include "lv_internal.h"

int lv_assembly_init(lv_assembly *a, int n, int dense) {
  memset(a, 0, sizeof *a);
  a->n = n;
  a->dense = dense;
  if (dense) {
    size_t nn = (size_t)n;
    if (nn > SIZE_MAX / sizeof(double) / nn) return LV_ENOMEM;
    a->D = lv_calloc(nn * nn, sizeof(double));
    return a->D ? 0 : LV_ENOMEM;
  }
  /* ci/cj/cv come with the first add (lv_assembly_grow_): a solver that
   * never assembles (the diagnostics' mass matrix of a run without output)
   * holds nothing but Ap */
  a->Ap = lv_calloc((size_t)n + 1, sizeof(int));
  return a->Ap ? 0 : LV_ENOMEM;
}

void lv_assembly_free(lv_assembly *a) {
  free(a->D);
  free(a->ci);
  free(a->cj);
  free(a->cv);
  free(a->ri);
  free(a->rj);
  free(a->map);
  free(a->Ap);
  free(a->Ai);
  free(a->Ax);
  memset(a, 0, sizeof *a);
}

void lv_assembly_begin(lv_assembly *a) {
  a->nonfinite = 0;
  if (a->dense) {
    memset(a->D, 0, (size_t)a->n * (size_t)a->n * sizeof(double));
    return;
  }
  a->cnt = 0;
  a->oom = 0;
  a->match = a->version != 0;
  a->mis = 0;
  if (a->match && a->nnz) memset(a->Ax, 0, (size_t)a->nnz * sizeof(double));
}

int lv_assembly_grow_(lv_assembly *a) {
  size_t cap = a->cap ? 2 * a->cap : (size_t)a->n + 16;
  int *ci = realloc(a->ci, cap * sizeof(int));
  if (ci == NULL) return LV_ENOMEM;
  a->ci = ci;
  int *cj = realloc(a->cj, cap * sizeof(int));
  if (cj == NULL) return LV_ENOMEM;
  a->cj = cj;
  double *cv = realloc(a->cv, cap * sizeof(double));
  if (cv == NULL) return LV_ENOMEM;
  a->cv = cv;
  a->cap = cap;
  return 0;
}

/* Add k left the recorded sequence: the positions before it were the
 * recorded ones. */
void lv_assembly_mismatch_(lv_assembly *a, size_t k) {
  memcpy(a->ci, a->ri, k * sizeof(int));
  memcpy(a->cj, a->rj, k * sizeof(int));
  a->match = 0;
  a->mis = k;
}

/* The current position sequence becomes the pattern: CSC with rows
 * ascending in each column and duplicates merged, and the add -> slot map.
 * Two stable counting sorts (by row, then by column), O(cnt + n). */
static int record(lv_assembly *a) {
  const int n = a->n;
  const size_t cnt = a->cnt;
  a->rcnt = 0; /* no valid pattern until the end */
  a->version = 0;
  if (cnt > (size_t)INT_MAX) return LV_ELINSOL; /* the int APIs' limit */
  size_t c1 = cnt ? cnt : 1;
  int *ri = realloc(a->ri, c1 * sizeof(int));
  if (ri == NULL) return LV_ENOMEM;
  a->ri = ri;
  int *rj = realloc(a->rj, c1 * sizeof(int));
  if (rj == NULL) return LV_ENOMEM;
  a->rj = rj;
  int *map = realloc(a->map, c1 * sizeof(int));
  if (map == NULL) return LV_ENOMEM;
  a->map = map;
  memcpy(ri, a->ci, cnt * sizeof(int));
  memcpy(rj, a->cj, cnt * sizeof(int));

  int *count = lv_calloc((size_t)n + 1, sizeof(int));
  int *ord1 = lv_calloc(c1, sizeof(int));
  int *ord2 = lv_calloc(c1, sizeof(int));
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
  free(a->Ai);
  free(a->Ax);
  a->Ai = lv_calloc(c1, sizeof(int));
  a->Ax = NULL;
  if (a->Ai == NULL) {
    rc = LV_ENOMEM;
    goto out;
  }
  int nnz = 0, pi = -1, pj = -1;
  memset(a->Ap, 0, ((size_t)n + 1) * sizeof(int));
  for (size_t s = 0; s < cnt; s++) {
    int k = ord2[s];
    if (ri[k] != pi || rj[k] != pj) {
      pi = ri[k];
      pj = rj[k];
      a->Ai[nnz++] = pi;
      a->Ap[pj + 1]++;
    }
    map[k] = nnz - 1;
  }
  for (int j = 0; j < n; j++) a->Ap[j + 1] += a->Ap[j];
  a->nnz = nnz;
  if ((size_t)nnz < cnt) { /* duplicates merged: Ai was sized for every add */
    int *Ai = realloc(a->Ai, (nnz ? (size_t)nnz : 1) * sizeof(int));
    if (Ai) a->Ai = Ai;
  }
  a->Ax = lv_calloc(nnz ? (size_t)nnz : 1, sizeof(double));
  if (a->Ax == NULL) {
    rc = LV_ENOMEM;
    goto out;
  }
  a->rcnt = cnt;
  a->version = ++a->recorded;
out:
  free(count);
  free(ord1);
  free(ord2);
  return rc;
}

int lv_assembly_finish(lv_assembly *a) {
  if (a->dense) return 0;
  if (a->oom) return LV_ENOMEM;
  if (a->match && a->cnt == a->rcnt) return 0;
  /* a shorter assembly that matched so far: its positions are the recorded ones */
  if (a->match) lv_assembly_mismatch_(a, a->cnt);
  LV_CHECK(record(a));
  for (size_t k = 0; k < a->cnt; k++) a->Ax[a->map[k]] += a->cv[k];
  /* The doubling in lv_assembly_grow_ left up to twice the adds' room:
   * fit it to the recorded count, which every later assembly of this
   * pattern repeats (a longer one grows again). */
  if (a->cnt > 0 && a->cnt < a->cap) {
    int *ci = realloc(a->ci, a->cnt * sizeof(int));
    if (ci) a->ci = ci;
    int *cj = realloc(a->cj, a->cnt * sizeof(int));
    if (cj) a->cj = cj;
    double *cv = realloc(a->cv, a->cnt * sizeof(double));
    if (cv) a->cv = cv;
    a->cap = a->cnt; /* a shrink that failed left its array larger: safe */
  }
  a->match = 1;
  a->mis = a->cnt;
  return 0;
}

void lv_assembly_matvec(const lv_assembly *a, const double *x, double *y) {
  const int n = a->n;
  if (a->dense) {
    lv_dense_matvec(n, n, a->D, x, y);
    return;
  }
  memset(y, 0, (size_t)n * sizeof(double));
  for (size_t k = 0; k < a->cnt; k++) {
    int on = a->match || k < a->mis; /* still on the recorded sequence */
    int i = on ? a->ri[k] : a->ci[k], j = on ? a->rj[k] : a->cj[k];
    y[i] += a->cv[k] * x[j];
  }
}

void lv_assembly_csc_matvec(const lv_assembly *a, const double *vals, const double *x, double *y) {
  memset(y, 0, (size_t)a->n * sizeof(double));
  for (int j = 0; j < a->n; j++)
    for (int p = a->Ap[j]; p < a->Ap[j + 1]; p++) y[a->Ai[p]] += vals[p] * x[j];
}
