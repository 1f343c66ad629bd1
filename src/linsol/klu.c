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
 * Assembly bookkeeping is shared with umfpack.c (triplets.h): every
 * assembly is the sequence of its add calls; the pattern is the position
 * sequence of the assembly that was last analysed; a matching sequence
 * reuses the analysis.
 * After a fresh analysis the first factorisation searches pivots
 * (klu_factor); later ones reuse them (klu_refactor) unless the pivots went
 * bad, which klu_rcond (min/max |U_ii|) shows: then klu_factor again with
 * the same analysis.  The CSC arrays stay untouched between factor and the
 * next factor because solve refines against them. */
#include <float.h>
#include <klu.h>
#include "linsol_impl.h"
#include "triplets.h"

struct lv_klu_data {
  lv_triplets t;
  int have_pattern; /* t's recorded pattern and sym are consistent */
  klu_common common;
  klu_symbolic *sym;
  klu_numeric *num;
  double rcond_fresh; /* of the last factorisation with a pivot search */
  int refine;         /* solve refines: kept pivots have degraded (see lv_klu_factor) */
  double *x, *r;      /* solve scratch: solution and residual for refinement */
};

int lv_klu_create(lv_linsol *ls) {
  size_t n = (size_t)ls->n;
  lv_klu_data *d = lv_calloc(1, sizeof *d);
  if (d == NULL) return LV_ENOMEM;
  ls->be.klu = d;
  klu_defaults(&d->common);
  int rc = lv_triplets_init(&d->t, ls->n);
  d->x = lv_calloc(n, sizeof(double));
  d->r = lv_calloc(n, sizeof(double));
  if (rc || !d->x || !d->r) {
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
  lv_triplets_free(&d->t);
  free(d->x);
  free(d->r);
  free(d);
  ls->be.klu = NULL;
}

void lv_klu_begin(lv_linsol *ls) { lv_triplets_begin(&ls->be.klu->t); }

int lv_klu_add(lv_linsol *ls, int i, int j, double v) { return lv_triplets_add(&ls->be.klu->t, i, j, v); }

static int klu_status(const klu_common *c) {
  if (c->status == KLU_OUT_OF_MEMORY) return LV_ENOMEM;
  if (c->status == KLU_SINGULAR) return LV_ESINGULAR;
  return LV_ELINSOL;
}

/* Record the current assembly's pattern and analyse it. */
static int build_pattern(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  d->have_pattern = 0;
  free_factors(d);
  LV_CHECK(lv_triplets_record(&d->t));
  ls->stats.symbolic++;
  d->sym = klu_analyze(ls->n, d->t.Ap, d->t.Ai, &d->common);
  if (d->sym == NULL) return klu_status(&d->common);
  d->have_pattern = 1;
  ls->stats.nnz = d->t.nnz;
  return 0;
}

/* klu_factor with the current analysis (a pivot search). */
static int factor_fresh(lv_klu_data *d) {
  if (d->num) klu_free_numeric(&d->num, &d->common);
  d->num = klu_factor(d->t.Ap, d->t.Ai, d->t.Ax, d->sym, &d->common);
  if (d->num == NULL) return klu_status(&d->common);
  if (!klu_rcond(d->sym, d->num, &d->common)) return klu_status(&d->common);
  d->rcond_fresh = d->common.rcond;
  return 0;
}

int lv_klu_factor(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  if (d->t.oom) return LV_ENOMEM;
  int fresh = 0;
  if (!(d->have_pattern && lv_triplets_same_pattern(&d->t))) {
    int rc = build_pattern(ls);
    if (rc != 0) return rc;
    fresh = 1;
  }
  lv_triplets_values(&d->t);
  ls->stats.numeric++;

  int rc = 0;
  d->refine = 0;
  if (fresh || d->num == NULL) {
    rc = factor_fresh(d);
  } else {
    /* Reuse the pivot order.  It was chosen for an earlier matrix; if the
     * new one has drifted far enough that a kept pivot became small (rcond
     * down by 10^3 against the last pivot search), search again.  Between
     * 10^-1 and 10^-3 the kept pivots are used with one step of iterative
     * refinement in solve; above 10^-1 they are as good as a fresh search
     * and refinement would only cost a matvec and a second solve (20 % of
     * a RATTLE step on the chain, with no digit gained: dense and KLU
     * trajectories agree to 5e-14 either way). */
    int ok = klu_refactor(d->t.Ap, d->t.Ai, d->t.Ax, d->sym, d->num, &d->common) &&
             klu_rcond(d->sym, d->num, &d->common);
    if (!ok || !(d->common.rcond >= 1e-3 * d->rcond_fresh))
      rc = factor_fresh(d);
    else
      d->refine = d->common.rcond < 0.1 * d->rcond_fresh;
  }
  if (rc != 0) {
    if (d->num) klu_free_numeric(&d->num, &d->common);
    d->num = NULL;
    return rc;
  }
  double rcond = d->common.rcond;
  ls->rcond = isfinite(rcond) ? rcond : 0.0;
  /* One singularity rule for every back-end (dense.c, umfpack.c): reject
   * when the reciprocal condition figure is below n eps.  klu_rcond is only
   * min/max |U_ii|, cheap but pessimistic under pivot growth (a well-posed
   * saddle matrix of check_chain has it below 60 eps), so below the
   * threshold the 1-norm condition estimate klu_condest -- the quantity
   * dense.c takes from LAPACK's dgecon -- decides; it costs a few solves,
   * paid only by such matrices.  Before this rule a 3x3 matrix with pivot
   * ratio 2.2e-16 (condition ~1e16), which dense LU and UMFPACK reject, was
   * accepted (issue 14).  The negated tests catch NaN. */
  const double threshold = (double)ls->n * DBL_EPSILON;
  int singular = !(rcond >= threshold);
  if (singular && klu_condest(d->t.Ap, d->t.Ax, d->sym, d->num, &d->common))
    singular = !(1.0 / d->common.condest >= threshold);
  if (singular) {
    klu_free_numeric(&d->num, &d->common);
    d->num = NULL;
    return LV_ESINGULAR;
  }
  return 0;
}

int lv_klu_solve(lv_linsol *ls, double *b) {
  lv_klu_data *d = ls->be.klu;
  const int n = ls->n;
  memcpy(d->x, b, (size_t)n * sizeof(double));
  ls->stats.solves++;
  if (!klu_solve(d->sym, d->num, n, 1, d->x, &d->common)) return klu_status(&d->common);
  if (d->refine) {
    /* One step of iterative refinement: degraded kept pivots can cost
     * digits, and dense and sparse runs must agree to round-off. */
    lv_triplets_csc_matvec(&d->t, d->x, d->r);
    for (int i = 0; i < n; i++) d->r[i] = b[i] - d->r[i];
    if (!klu_solve(d->sym, d->num, n, 1, d->r, &d->common)) return klu_status(&d->common);
    for (int i = 0; i < n; i++) d->x[i] += d->r[i];
  }
  if (!lv_all_finite(n, d->x)) return LV_ESINGULAR;
  memcpy(b, d->x, (size_t)n * sizeof(double));
  return 0;
}

void lv_klu_matvec(const lv_linsol *ls, const double *x, double *y) { lv_triplets_matvec(&ls->be.klu->t, x, y); }
