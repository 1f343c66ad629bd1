/* Sparse back-end: SuiteSparse KLU, symbolic analysis reused, numeric
 * refactorisation with the kept pivot order.
 *
 * Why a second sparse back-end: the Newton matrices of a chain or a
 * multibody system factorise with O(n) fill and a few flops per entry, and
 * on them UMFPACK's numeric phase is dominated by its frontal-matrix
 * bookkeeping (bench_scale: ~0.3 ms for n = 400, 2300 flops), while KLU's
 * refactorisation (klu_refactor: same pivot sequence, no search) is 10-30x
 * cheaper -- KLU is what SUNDIALS pairs with IDA for the same reason.
 *
 * Assembly bookkeeping is the same as in umfpack.c: every assembly is the
 * sequence of its add calls; the pattern is the position sequence of the
 * assembly that was last analysed; a matching sequence reuses the analysis.
 * After a fresh analysis the first factorisation searches pivots
 * (klu_factor); later ones reuse them (klu_refactor) unless the pivots went
 * bad, which klu_rcond (min/max |U_ii|) shows: then klu_factor again with
 * the same analysis.  The CSC arrays stay untouched between factor and the
 * next factor because solve refines against them. */
#include <float.h>
#include <limits.h>
#include <klu.h>
#include "linsol_impl.h"

struct lv_klu_data {
  int *ci, *cj;
  double *cv;
  size_t cnt, cap;
  int match, oom;

  int *ri, *rj, *map;
  size_t rcnt;
  int have_pattern;

  int *Ap, *Ai;
  double *Ax;
  int nnz;
  klu_common common;
  klu_symbolic *sym;
  klu_numeric *num;
  double rcond_fresh; /* of the last factorisation with a pivot search */

  double *x, *r; /* solve scratch: solution and residual for refinement */
};

int lv_klu_create(lv_linsol *ls) {
  size_t n = (size_t)ls->n;
  lv_klu_data *d = lv_calloc(1, sizeof *d);
  if (d == NULL) return LV_ENOMEM;
  ls->be.klu = d;
  klu_defaults(&d->common);
  d->match = 1;
  d->cap = 4 * n + 16;
  d->ci = malloc(d->cap * sizeof(int));
  d->cj = malloc(d->cap * sizeof(int));
  d->cv = malloc(d->cap * sizeof(double));
  d->Ap = lv_calloc(n + 1, sizeof(int));
  d->x = lv_calloc(n, sizeof(double));
  d->r = lv_calloc(n, sizeof(double));
  if (!d->ci || !d->cj || !d->cv || !d->Ap || !d->x || !d->r) {
    lv_klu_destroy(ls);
    return LV_ENOMEM;
  }
  return 0;
}

static void free_factors(lv_klu_data *d) {
  if (d->num) klu_free_numeric(&d->num, &d->common);
  if (d->sym) klu_free_symbolic(&d->sym, &d->common);
  d->num = NULL;
  d->sym = NULL;
}

void lv_klu_destroy(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  if (d == NULL) return;
  free_factors(d);
  free(d->ci);
  free(d->cj);
  free(d->cv);
  free(d->ri);
  free(d->rj);
  free(d->map);
  free(d->Ap);
  free(d->Ai);
  free(d->Ax);
  free(d->x);
  free(d->r);
  free(d);
  ls->be.klu = NULL;
}

void lv_klu_begin(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  d->cnt = 0;
  d->match = 1;
  d->oom = 0;
}

static int grow(lv_klu_data *d) {
  size_t cap = 2 * d->cap;
  int *ci = realloc(d->ci, cap * sizeof(int));
  if (ci == NULL) return LV_ENOMEM;
  d->ci = ci;
  int *cj = realloc(d->cj, cap * sizeof(int));
  if (cj == NULL) return LV_ENOMEM;
  d->cj = cj;
  double *cv = realloc(d->cv, cap * sizeof(double));
  if (cv == NULL) return LV_ENOMEM;
  d->cv = cv;
  d->cap = cap;
  return 0;
}

int lv_klu_add(lv_linsol *ls, int i, int j, double v) {
  lv_klu_data *d = ls->be.klu;
  if (d->cnt == d->cap && grow(d) != 0) {
    d->oom = 1;
    return LV_ENOMEM;
  }
  size_t k = d->cnt++;
  d->ci[k] = i;
  d->cj[k] = j;
  d->cv[k] = v;
  if (d->match && (k >= d->rcnt || d->ri[k] != i || d->rj[k] != j)) d->match = 0;
  return 0;
}

static int klu_status(const klu_common *c) {
  if (c->status == KLU_OUT_OF_MEMORY) return LV_ENOMEM;
  if (c->status == KLU_SINGULAR) return LV_ESINGULAR;
  return LV_ELINSOL;
}

/* Record the pattern, build CSC + add -> slot map (two stable counting
 * sorts, O(cnt + n)), analyse. */
static int build_pattern(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  const int n = ls->n;
  const size_t cnt = d->cnt;

  d->have_pattern = 0;
  free_factors(d);
  if (cnt > (size_t)INT_MAX) return LV_ELINSOL;

  int *ri = realloc(d->ri, (cnt ? cnt : 1) * sizeof(int));
  if (ri == NULL) return LV_ENOMEM;
  d->ri = ri;
  int *rj = realloc(d->rj, (cnt ? cnt : 1) * sizeof(int));
  if (rj == NULL) return LV_ENOMEM;
  d->rj = rj;
  int *map = realloc(d->map, (cnt ? cnt : 1) * sizeof(int));
  if (map == NULL) return LV_ENOMEM;
  d->map = map;
  memcpy(ri, d->ci, cnt * sizeof(int));
  memcpy(rj, d->cj, cnt * sizeof(int));
  d->rcnt = cnt;

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
  for (size_t t = 0; t < cnt; t++) {
    int k = ord1[t];
    ord2[count[rj[k]]++] = k;
  }

  free(d->Ai);
  free(d->Ax);
  d->Ai = lv_calloc(cnt, sizeof(int));
  d->Ax = NULL;
  if (d->Ai == NULL) {
    rc = LV_ENOMEM;
    goto out;
  }
  int nnz = 0, pi = -1, pj = -1;
  memset(d->Ap, 0, ((size_t)n + 1) * sizeof(int));
  for (size_t t = 0; t < cnt; t++) {
    int k = ord2[t];
    if (ri[k] != pi || rj[k] != pj) {
      pi = ri[k];
      pj = rj[k];
      d->Ai[nnz++] = pi;
      d->Ap[pj + 1]++;
    }
    map[k] = nnz - 1;
  }
  for (int j = 0; j < n; j++) d->Ap[j + 1] += d->Ap[j];
  d->nnz = nnz;
  d->Ax = lv_calloc((size_t)nnz, sizeof(double));
  if (d->Ax == NULL) {
    rc = LV_ENOMEM;
    goto out;
  }

  ls->stats.symbolic++;
  d->sym = klu_analyze(n, d->Ap, d->Ai, &d->common);
  if (d->sym == NULL) {
    rc = klu_status(&d->common);
    goto out;
  }
  d->have_pattern = 1;
  d->match = 1;
  ls->stats.nnz = nnz;
out:
  free(count);
  free(ord1);
  free(ord2);
  return rc;
}

/* klu_factor with the current analysis (a pivot search). */
static int factor_fresh(lv_klu_data *d) {
  if (d->num) klu_free_numeric(&d->num, &d->common);
  d->num = klu_factor(d->Ap, d->Ai, d->Ax, d->sym, &d->common);
  if (d->num == NULL) return klu_status(&d->common);
  if (!klu_rcond(d->sym, d->num, &d->common)) return klu_status(&d->common);
  d->rcond_fresh = d->common.rcond;
  return 0;
}

int lv_klu_factor(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  if (d->oom) return LV_ENOMEM;
  int fresh = 0;
  if (!(d->have_pattern && d->match && d->cnt == d->rcnt)) {
    int rc = build_pattern(ls);
    if (rc != 0) return rc;
    fresh = 1;
  }
  memset(d->Ax, 0, (size_t)d->nnz * sizeof(double));
  for (size_t k = 0; k < d->cnt; k++) d->Ax[d->map[k]] += d->cv[k];
  ls->stats.numeric++;

  int rc = 0;
  if (fresh || d->num == NULL) {
    rc = factor_fresh(d);
  } else {
    /* Reuse the pivot order.  It was chosen for an earlier matrix; if the
     * new one has drifted far enough that a kept pivot became small (rcond
     * down by 10^3 against the last pivot search), search again. */
    int ok = klu_refactor(d->Ap, d->Ai, d->Ax, d->sym, d->num, &d->common) &&
             klu_rcond(d->sym, d->num, &d->common);
    if (!ok || !(d->common.rcond >= 1e-3 * d->rcond_fresh)) rc = factor_fresh(d);
  }
  if (rc != 0) {
    if (d->num) klu_free_numeric(&d->num, &d->common);
    d->num = NULL;
    return rc;
  }
  double rcond = d->common.rcond;
  ls->rcond = isfinite(rcond) ? rcond : 0.0;
  /* like UMFPACK's: min/max |U_ii|, not a condition estimate, hence eps */
  if (!(rcond >= DBL_EPSILON)) {
    klu_free_numeric(&d->num, &d->common);
    d->num = NULL;
    return LV_ESINGULAR;
  }
  return 0;
}

/* y = A x with the factorised values (CSC). */
static void csc_matvec(const lv_klu_data *d, int n, const double *x, double *y) {
  memset(y, 0, (size_t)n * sizeof(double));
  for (int j = 0; j < n; j++)
    for (int p = d->Ap[j]; p < d->Ap[j + 1]; p++) y[d->Ai[p]] += d->Ax[p] * x[j];
}

int lv_klu_solve(lv_linsol *ls, double *b) {
  lv_klu_data *d = ls->be.klu;
  const int n = ls->n;
  memcpy(d->x, b, (size_t)n * sizeof(double));
  ls->stats.solves++;
  if (!klu_solve(d->sym, d->num, n, 1, d->x, &d->common)) return klu_status(&d->common);
  /* One step of iterative refinement (UMFPACK does up to two): the kept
   * pivot order of a refactorisation can cost digits, and dense and sparse
   * runs must agree to round-off. */
  csc_matvec(d, n, d->x, d->r);
  for (int i = 0; i < n; i++) d->r[i] = b[i] - d->r[i];
  if (!klu_solve(d->sym, d->num, n, 1, d->r, &d->common)) return klu_status(&d->common);
  for (int i = 0; i < n; i++) d->x[i] += d->r[i];
  if (!lv_all_finite(n, d->x)) return LV_ESINGULAR;
  memcpy(b, d->x, (size_t)n * sizeof(double));
  return 0;
}

void lv_klu_matvec(const lv_linsol *ls, const double *x, double *y) {
  const lv_klu_data *d = ls->be.klu;
  memset(y, 0, (size_t)ls->n * sizeof(double));
  for (size_t k = 0; k < d->cnt; k++) y[d->ci[k]] += d->cv[k] * x[d->cj[k]];
}
