/* Sparse back-end: SuiteSparse UMFPACK (int API), symbolic analysis reused.
 *
 * The assembly (ls->as, assembly.h) keeps the CSC pattern; an assembly with
 * the recorded position sequence keeps its version and reuses the symbolic
 * analysis.  UMFPACK's iterative refinement in solve reads the values, so
 * those of the factorised matrix are copied (Fx) at factor time. */
#include <float.h>
#include <umfpack.h>
#include "linsol_impl.h"

struct lv_umf_data {
  long sym_version; /* the assembly pattern Symbolic was computed for; 0: none */
  double *Fx;       /* values of the last factorised matrix, one per slot */
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
  d->x = lv_calloc(n, sizeof(double));
  d->W = lv_calloc(5 * n, sizeof(double));
  d->Wi = lv_calloc(n, sizeof(int));
  if (!d->x || !d->W || !d->Wi) {
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
  free(d->Fx);
  free(d->x);
  free(d->W);
  free(d->Wi);
  free(d);
  ls->be.umf = NULL;
}

static int umf_status(int status) {
  return status == UMFPACK_ERROR_out_of_memory ? LV_ENOMEM : LV_ELINSOL;
}

/* Symbolic analysis of the assembly's (new) pattern. */
static int build_pattern(lv_linsol *ls) {
  lv_umf_data *d = ls->be.umf;
  const lv_assembly *a = &ls->as;
  d->sym_version = 0;
  free_factors(d);
  free(d->Fx);
  d->Fx = lv_calloc(a->nnz ? (size_t)a->nnz : 1, sizeof(double));
  if (d->Fx == NULL) return LV_ENOMEM;
  /* Values are passed as NULL: UMFPACK would use them only for statistics,
   * and the analysis must depend on positions alone because it is reused
   * for every later assembly with the same positions. */
  ls->stats.symbolic++;
  int status = umfpack_di_symbolic(ls->n, ls->n, a->Ap, a->Ai, NULL, &d->Symbolic, d->Control, d->Info);
  if (status != UMFPACK_OK) {
    if (d->Symbolic) umfpack_di_free_symbolic(&d->Symbolic);
    d->Symbolic = NULL;
    return umf_status(status);
  }
  d->sym_version = a->rec.version;
  ls->stats.nnz = a->nnz;
  return 0;
}

int lv_umf_factor(lv_linsol *ls) {
  lv_umf_data *d = ls->be.umf;
  const lv_assembly *a = &ls->as;
  LV_CHECK(lv_assembly_finish(&ls->as));
  if (!(d->Symbolic && d->sym_version == a->rec.version)) LV_CHECK(build_pattern(ls));
  memcpy(d->Fx, a->Ax, (size_t)a->nnz * sizeof(double));

  if (d->Numeric) umfpack_di_free_numeric(&d->Numeric);
  d->Numeric = NULL;
  ls->stats.numeric++;
  int status = umfpack_di_numeric(a->Ap, a->Ai, d->Fx, d->Symbolic, &d->Numeric, d->Control, d->Info);
  if (status < 0) {
    if (d->Numeric) umfpack_di_free_numeric(&d->Numeric);
    d->Numeric = NULL;
    return umf_status(status);
  }
  double rcond = d->Info[UMFPACK_RCOND];
  ls->rcond = isfinite(rcond) ? rcond : 0.0;
  /* UMFPACK's rcond is min|U_ii| / max|U_ii| of the scaled matrix, not a
   * condition estimate; the threshold is the one rule of every back-end
   * (n eps, see dense.c and klu.c).  A singular-matrix warning means an
   * exactly zero pivot.  The negated test catches NaN. */
  if (status == UMFPACK_WARNING_singular_matrix || !(rcond >= (double)ls->n * DBL_EPSILON)) {
    umfpack_di_free_numeric(&d->Numeric);
    d->Numeric = NULL;
    return LV_ESINGULAR;
  }
  return 0;
}

int lv_umf_solve(lv_linsol *ls, double *b) {
  lv_umf_data *d = ls->be.umf;
  int status = umfpack_di_wsolve(UMFPACK_A, ls->as.Ap, ls->as.Ai, d->Fx, d->x, b, d->Numeric, d->Control, d->Info,
                                 d->Wi, d->W);
  ls->stats.solves++;
  if (status == UMFPACK_WARNING_singular_matrix) return LV_ESINGULAR;
  if (status < 0) return umf_status(status);
  if (!lv_all_finite(ls->n, d->x)) return LV_ESINGULAR;
  memcpy(b, d->x, (size_t)ls->n * sizeof(double));
  return 0;
}
