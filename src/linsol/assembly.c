/* The one assembly path of the linear solvers: see assembly.h. */
#include "assembly.h"
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
  /* the recorder's arrays come with the first add: a solver that never
   * assembles (the diagnostics' mass matrix of a run without output) holds
   * nothing but Ap */
  lv_recorder_init(&a->rec, 0);
  a->Ap = lv_calloc((size_t)n + 1, sizeof(int));
  return a->Ap ? 0 : LV_ENOMEM;
}

void lv_assembly_free(lv_assembly *a) {
  free(a->D);
  lv_recorder_free(&a->rec);
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
  if (lv_recorder_begin(&a->rec) && a->nnz) memset(a->Ax, 0, (size_t)a->nnz * sizeof(double));
}

int lv_assembly_finish(lv_assembly *a) {
  if (a->dense || lv_recorder_replayed(&a->rec)) return 0;
  return lv_recorder_record(&a->rec, 1, 1, a->n, a->n, &a->Ap, &a->Ai, &a->Ax, &a->nnz);
}

void lv_assembly_matvec(const lv_assembly *a, const double *x, double *y) {
  const int n = a->n;
  if (a->dense) {
    lv_dense_matvec(n, n, a->D, x, y);
    return;
  }
  memset(y, 0, (size_t)n * sizeof(double));
  /* the adds made on the recording are in their slots (the recorder keeps
   * no value of theirs), those off it in the recorder's kept values */
  const lv_recorder *r = &a->rec;
  size_t on = r->match ? r->cnt : r->mis;
  if (on > 0)
    for (int j = 0; j < n; j++)
      for (int p = a->Ap[j]; p < a->Ap[j + 1]; p++) y[a->Ai[p]] += a->Ax[p] * x[j];
  for (size_t k = on; k < r->cnt; k++) y[r->ci[k]] += r->cv[k] * x[r->cj[k]];
}

void lv_assembly_csc_matvec(const lv_assembly *a, const double *vals, const double *x, double *y) {
  memset(y, 0, (size_t)a->n * sizeof(double));
  for (int j = 0; j < a->n; j++)
    for (int p = a->Ap[j]; p < a->Ap[j + 1]; p++) y[a->Ai[p]] += vals[p] * x[j];
}
