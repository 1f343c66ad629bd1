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
 * The assembly (ls->as, assembly.h) keeps the CSC pattern; an assembly
 * with the recorded position sequence keeps its version and reuses the
 * analysis.
 * After a fresh analysis the first factorisation searches pivots
 * (klu_factor, on the row-scaled matrix); later ones reuse them
 * (klu_refactor, unscaled: see refactor_unscaled) unless the pivots went
 * bad, which min/max |U_ii| of the row-scaled matrix (scaled_rcond) shows:
 * then klu_factor again with the same analysis.  KLU factorises the assembly's values (Ax) in place;
 * only when solve is to refine (degraded kept pivots) are they copied (Fx),
 * since solve refines against them while the next matrix may be being
 * assembled.  Not copying them otherwise saves 8 bytes per entry (the chain
 * at 10^6 particles: 480 MB under VI-A). */
#include <float.h>
#include <klu.h>
#include "linsol_impl.h"

struct lv_klu_data {
  long sym_version; /* the assembly pattern sym was analysed for; 0: none */
  double *Fx;       /* values of the last factorised matrix when solve refines, one per slot;
                     * allocated on first need */
  klu_common common;
  klu_symbolic *sym;
  klu_numeric *num;
  double rcond_fresh; /* of the last factorisation with a pivot search */
  int refine;         /* solve refines: kept pivots have degraded (see lv_klu_factor) */
  double *x, *r;      /* solve scratch: solution, and residual for refinement (allocated with Fx) */
};

int lv_klu_create(lv_linsol *ls) {
  size_t n = (size_t)ls->n;
  lv_klu_data *d = lv_calloc(1, sizeof *d);
  if (d == NULL) return LV_ENOMEM;
  ls->be.klu = d;
  klu_defaults(&d->common);
  d->x = lv_calloc(n, sizeof(double)); /* r comes with the first refinement */
  if (!d->x) {
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
  free(d->Fx);
  free(d->x);
  free(d->r);
  free(d);
  ls->be.klu = NULL;
}

static int klu_status(const klu_common *c) {
  if (c->status == KLU_OUT_OF_MEMORY) return LV_ENOMEM;
  if (c->status == KLU_SINGULAR) return LV_ESINGULAR;
  return LV_ELINSOL;
}

/* Analyse the assembly's (new) pattern. */
static int build_pattern(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  const lv_assembly *a = &ls->as;
  d->sym_version = 0;
  free_factors(d);
  free(d->Fx);
  d->Fx = NULL;
  ls->stats.symbolic++;
  d->sym = klu_analyze(ls->n, a->Ap, a->Ai, &d->common);
  if (d->sym == NULL) return klu_status(&d->common);
  d->sym_version = a->rec.version;
  ls->stats.nnz = a->nnz;
  return 0;
}

int lv_klu_estimate(const lv_linsol *ls, double *flops, double *lunz) {
  const lv_assembly *a = &ls->as;
  klu_common c;
  klu_defaults(&c);
  klu_symbolic *sym = klu_analyze(ls->n, a->Ap, a->Ai, &c);
  if (sym == NULL) return klu_status(&c);
  *flops = sym->est_flops;
  *lunz = sym->lnz + sym->unz;
  klu_free_symbolic(&sym, &c);
  return 0;
}

/* min/max over the pivots of |u_kk| / r_k, r_k = max_j |a_ij| of pivot k's
 * row i (1 for a zero row): KLU's klu_rcond of the factors of the
 * row-scaled matrix, whose U is diag(r)^-1 U, computed from A's own factors
 * (below) -- the figure the degradation and singularity tests have always
 * used; the unscaled min/max |u_kk| drifts with the rows' magnitudes (a
 * resumed heavy-top run met it 10x below its own fresh value where the
 * straight run did not, so the two refined differently).  0 for a zero or
 * NaN pivot.  Uses the solve scratch x (n). */
static double scaled_rcond(lv_klu_data *d, const lv_assembly *a, int n) {
  double *r = d->x;
  const double *U = d->num->Udiag, *Ax = a->Ax;
  const int *P = d->num->Pnum, *Ai = a->Ai;
  memset(r, 0, (size_t)n * sizeof(double));
  for (int p = 0, nnz = a->nnz; p < nnz; p++) {
    double v = fabs(Ax[p]), *ri = r + Ai[p];
    *ri = v > *ri ? v : *ri; /* a NaN entry leaves r_i, its pivot NaN */
  }
  double umin = HUGE_VAL, umax = 0.0;
  for (int k = 0; k < n; k++) {
    double rk = r[P[k]];
    double u = fabs(U[k]) / (rk > 0.0 ? rk : 1.0);
    umin = u < umin ? u : umin;
    umax = u > umax ? u : umax;
    if (u != u) return 0.0;
  }
  return n == 0 ? 1.0 : umin > 0.0 ? umin / umax : 0.0;
}

/* klu_refactor without row scaling: the kept pivot order, the factors of
 * A itself.  KLU's row scaling (max |a_ij| per row, klu_scale) serves the
 * pivot search, which a refactorisation does not make; recomputing it for
 * every matrix (klu_scale, a division per entry) was a fifth of the
 * refactorisation (chain N = 100 under BLieDF k = 4: ~60000 of ~1.05e6
 * instructions per step).  Without it the factors differ from the scaled
 * ones by round-off only (as dense and KLU factors do) and klu_solve
 * applies no scaling (klu_refactor frees Rs); common.rcond is set to
 * scaled_rcond. */
static int refactor_unscaled(lv_klu_data *d, const lv_assembly *a, int n) {
  int scale = d->common.scale;
  d->common.scale = -1; /* no scaling, and no index check: the assembly's CSC is valid */
  int ok = klu_refactor(a->Ap, a->Ai, a->Ax, d->sym, d->num, &d->common);
  d->common.scale = scale;
  if (ok) d->common.rcond = scaled_rcond(d, a, n);
  return ok;
}

/* klu_factor with the current analysis: a pivot search on the row-scaled
 * matrix (KLU's default), then the unscaled refactorisation of the same
 * matrix with those pivots, so that every factorisation solve uses is
 * unscaled alike (the pivot search costs one refactorisation more). */
static int factor_fresh(lv_klu_data *d, const lv_assembly *a, int n) {
  if (d->num) klu_free_numeric(&d->num, &d->common);
  d->num = klu_factor(a->Ap, a->Ai, a->Ax, d->sym, &d->common);
  if (d->num == NULL) return klu_status(&d->common);
  if (!refactor_unscaled(d, a, n)) return klu_status(&d->common);
  d->rcond_fresh = d->common.rcond;
  return 0;
}

int lv_klu_factor(lv_linsol *ls) {
  lv_klu_data *d = ls->be.klu;
  const lv_assembly *a = &ls->as;
  LV_CHECK(lv_assembly_finish(&ls->as));
  int fresh = 0;
  if (!(d->sym && d->sym_version == a->rec.version)) {
    int rc = build_pattern(ls);
    if (rc != 0) return rc;
    fresh = 1;
  }
  ls->stats.numeric++;

  int rc = 0;
  d->refine = 0;
  if (fresh || d->num == NULL) {
    rc = factor_fresh(d, a, ls->n);
  } else {
    /* Reuse the pivot order.  It was chosen for an earlier matrix; if the
     * new one has drifted far enough that a kept pivot became small (rcond
     * down by 10^3 against the last pivot search), search again.  Between
     * 10^-1 and 10^-3 the kept pivots are used with one step of iterative
     * refinement in solve; above 10^-1 they are as good as a fresh search
     * and refinement would only cost a matvec and a second solve (20 % of
     * a RATTLE step on the chain, with no digit gained: dense and KLU
     * trajectories agree to 5e-14 either way). */
    int ok = refactor_unscaled(d, a, ls->n);
    if (!ok || !(d->common.rcond >= 1e-3 * d->rcond_fresh))
      rc = factor_fresh(d, a, ls->n);
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
  if (singular && klu_condest(a->Ap, a->Ax, d->sym, d->num, &d->common))
    singular = !(1.0 / d->common.condest >= threshold);
  if (singular) {
    klu_free_numeric(&d->num, &d->common);
    d->num = NULL;
    return LV_ESINGULAR;
  }
  if (d->refine) {
    if (d->Fx == NULL) d->Fx = lv_calloc(a->nnz ? (size_t)a->nnz : 1, sizeof(double));
    if (d->r == NULL) d->r = lv_calloc((size_t)ls->n, sizeof(double));
    if (d->Fx == NULL || d->r == NULL) {
      klu_free_numeric(&d->num, &d->common);
      d->num = NULL;
      return LV_ENOMEM;
    }
    memcpy(d->Fx, a->Ax, (size_t)a->nnz * sizeof(double));
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
    lv_assembly_csc_matvec(&ls->as, d->Fx, d->x, d->r);
    for (int i = 0; i < n; i++) d->r[i] = b[i] - d->r[i];
    if (!klu_solve(d->sym, d->num, n, 1, d->r, &d->common)) return klu_status(&d->common);
    for (int i = 0; i < n; i++) d->x[i] += d->r[i];
  }
  if (!lv_all_finite(n, d->x)) return LV_ESINGULAR;
  memcpy(b, d->x, (size_t)n * sizeof(double));
  return 0;
}
