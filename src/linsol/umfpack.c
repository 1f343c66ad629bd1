/* Sparse back-end: SuiteSparse UMFPACK (int API), symbolic analysis reused.
 *
 * Every assembly is stored as the sequence of its (i, j, v) add calls.  The
 * pattern is the sequence of positions of the assembly that was last
 * factorised with a fresh symbolic analysis ("recorded" below).  While adds
 * arrive we only compare their position with the recorded one at the same
 * index -- a cheap test that lets the scheme code assemble in whatever order
 * it likes, provided it is the same order every time.  The decision whether
 * the pattern changed is taken at factor time, because only then is the
 * assembly known to be complete; keeping the current triplets means a
 * mismatch discovered half-way needs no replay.
 *
 * The CSC arrays (Ap, Ai, Ax) are written only by factor and then stay
 * untouched until the next factor: UMFPACK's iterative refinement in solve
 * reads them and must see the matrix that was factorised, even if a new
 * assembly has begun meanwhile. */
#include <float.h>
#include <limits.h>
#include <umfpack.h>
#include "linsol_impl.h"

struct lv_umf_data {
  /* current assembly, in add order */
  int *ci, *cj;
  double *cv;
  size_t cnt, cap;
  int match; /* every add so far hit the recorded position of its index */
  int oom;   /* an add was lost for lack of memory: the assembly is incomplete */

  /* recorded pattern: positions of the add calls, and where each one lands */
  int *ri, *rj, *map;
  size_t rcnt;
  int have_pattern; /* ri/rj/map/Ap/Ai/Symbolic are mutually consistent */

  int *Ap, *Ai;
  double *Ax;
  int nnz;
  void *Symbolic, *Numeric;
  double Control[UMFPACK_CONTROL], Info[UMFPACK_INFO];

  double *x, *W; /* solve output, wsolve workspace (5n: with refinement) */
  int *Wi;
};

int lv_umf_create(lv_linsol *ls) {
  size_t n = (size_t)ls->n;
  lv_umf_data *d = lv_calloc(1, sizeof *d);
  if (d == NULL) return LV_ENOMEM;
  ls->be.umf = d;
  umfpack_di_defaults(d->Control);
  d->Control[UMFPACK_PRL] = 0; /* the library never prints */
  d->match = 1;
  d->cap = 4 * n + 16;
  d->ci = malloc(d->cap * sizeof(int));
  d->cj = malloc(d->cap * sizeof(int));
  d->cv = malloc(d->cap * sizeof(double));
  d->Ap = lv_calloc(n + 1, sizeof(int));
  d->x = lv_calloc(n, sizeof(double));
  d->W = lv_calloc(5 * n, sizeof(double));
  d->Wi = lv_calloc(n, sizeof(int));
  if (!d->ci || !d->cj || !d->cv || !d->Ap || !d->x || !d->W || !d->Wi) {
    lv_umf_destroy(ls);
    return LV_ENOMEM;
  }
  return 0;
}

static void free_factors(lv_umf_data *d) {
  if (d->Numeric) umfpack_di_free_numeric(&d->Numeric);
  if (d->Symbolic) umfpack_di_free_symbolic(&d->Symbolic);
  d->Numeric = d->Symbolic = NULL;
}

void lv_umf_destroy(lv_linsol *ls) {
  lv_umf_data *d = ls->be.umf;
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
  free(d->W);
  free(d->Wi);
  free(d);
  ls->be.umf = NULL;
}

void lv_umf_begin(lv_linsol *ls) {
  lv_umf_data *d = ls->be.umf;
  d->cnt = 0;
  d->match = 1;
  d->oom = 0;
}

static int grow(lv_umf_data *d) {
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

int lv_umf_add(lv_linsol *ls, int i, int j, double v) {
  lv_umf_data *d = ls->be.umf;
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

static int umf_status(int status) {
  return status == UMFPACK_ERROR_out_of_memory ? LV_ENOMEM : LV_ELINSOL;
}

/* Record the current assembly's positions as the pattern, build the CSC
 * structure with the add -> slot map, and run the symbolic analysis. */
static int build_pattern(lv_linsol *ls) {
  lv_umf_data *d = ls->be.umf;
  const int n = ls->n;
  const size_t cnt = d->cnt;

  d->have_pattern = 0;
  free_factors(d);
  if (cnt > (size_t)INT_MAX) return LV_ELINSOL; /* UMFPACK's int API limit */

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

  /* Two stable counting sorts (by row, then by column) put the add calls in
   * CSC order with rows ascending in each column, in O(cnt + n). */
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

  /* Merge duplicates: consecutive equal positions share one slot.  Ai is
   * sized for the worst case (no duplicates) and trimmed afterwards. */
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

  /* Values are passed as NULL: UMFPACK would use them only for statistics,
   * and the analysis must depend on positions alone because it is reused
   * for every later assembly with the same positions. */
  ls->stats.symbolic++;
  int status = umfpack_di_symbolic(n, n, d->Ap, d->Ai, NULL, &d->Symbolic,
                                   d->Control, d->Info);
  if (status != UMFPACK_OK) {
    if (d->Symbolic) umfpack_di_free_symbolic(&d->Symbolic);
    d->Symbolic = NULL;
    rc = umf_status(status);
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

int lv_umf_factor(lv_linsol *ls) {
  lv_umf_data *d = ls->be.umf;
  if (d->oom) return LV_ENOMEM;
  if (!(d->have_pattern && d->match && d->cnt == d->rcnt)) {
    int rc = build_pattern(ls);
    if (rc != 0) return rc;
  }
  memset(d->Ax, 0, (size_t)d->nnz * sizeof(double));
  for (size_t k = 0; k < d->cnt; k++) d->Ax[d->map[k]] += d->cv[k];

  if (d->Numeric) umfpack_di_free_numeric(&d->Numeric);
  d->Numeric = NULL;
  ls->stats.numeric++;
  int status = umfpack_di_numeric(d->Ap, d->Ai, d->Ax, d->Symbolic, &d->Numeric,
                                  d->Control, d->Info);
  if (status < 0) {
    if (d->Numeric) umfpack_di_free_numeric(&d->Numeric);
    d->Numeric = NULL;
    return umf_status(status);
  }
  double rcond = d->Info[UMFPACK_RCOND];
  ls->rcond = isfinite(rcond) ? rcond : 0.0;
  /* UMFPACK's rcond is only min|U_ii| / max|U_ii| of the scaled matrix, not
   * a condition estimate, hence the plain eps threshold; a singular-matrix
   * warning means an exactly zero pivot.  The negated test catches NaN. */
  if (status == UMFPACK_WARNING_singular_matrix || !(rcond >= DBL_EPSILON)) {
    umfpack_di_free_numeric(&d->Numeric);
    d->Numeric = NULL;
    return LV_ESINGULAR;
  }
  return 0;
}

int lv_umf_solve(lv_linsol *ls, double *b) {
  lv_umf_data *d = ls->be.umf;
  int status = umfpack_di_wsolve(UMFPACK_A, d->Ap, d->Ai, d->Ax, d->x, b,
                                 d->Numeric, d->Control, d->Info, d->Wi, d->W);
  ls->stats.solves++;
  if (status == UMFPACK_WARNING_singular_matrix) return LV_ESINGULAR;
  if (status < 0) return umf_status(status);
  if (!lv_all_finite(ls->n, d->x)) return LV_ESINGULAR;
  memcpy(b, d->x, (size_t)ls->n * sizeof(double));
  return 0;
}

void lv_umf_matvec(const lv_linsol *ls, const double *x, double *y) {
  const lv_umf_data *d = ls->be.umf;
  memset(y, 0, (size_t)ls->n * sizeof(double));
  for (size_t k = 0; k < d->cnt; k++) y[d->ci[k]] += d->cv[k] * x[d->cj[k]];
}
