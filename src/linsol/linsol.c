/* Linear solver front end: argument checks shared by both back-ends, then
 * dispatch.  Keeping the checks here means dense and UMFPACK report the same
 * status for the same mistake. */
#include "linsol_impl.h"

int lv_linsol_new(lv_linsol **out, lv_linsol_kind kind, int n, int threshold) {
  if (out == NULL) return LV_EINPUT;
  *out = NULL;
  if (n < 1 || threshold < 0) return LV_EINPUT;
  if (kind == LV_LINSOL_AUTO) {
    if (threshold == 0) threshold = LV_LINSOL_AUTO_THRESHOLD;
    kind = n < threshold ? LV_LINSOL_DENSE : LV_LINSOL_SPARSE;
  }
  if (kind != LV_LINSOL_DENSE && kind != LV_LINSOL_UMFPACK && kind != LV_LINSOL_KLU && kind != LV_LINSOL_SPARSE)
    return LV_EINPUT;

  lv_linsol *ls = lv_calloc(1, sizeof *ls);
  if (ls == NULL) return LV_ENOMEM;
  ls->kind = kind;
  ls->n = n;
  ls->stats.flops_per_entry = -1.0;
  int rc = lv_assembly_init(&ls->as, n, kind == LV_LINSOL_DENSE);
  if (rc == 0)
    rc = kind == LV_LINSOL_DENSE     ? lv_dense_create(ls)
         : kind == LV_LINSOL_KLU     ? lv_klu_create(ls)
         : kind == LV_LINSOL_UMFPACK ? lv_umf_create(ls)
                                     : 0; /* SPARSE: the back-end comes with the first factorisation */
  if (rc != 0) {
    lv_assembly_free(&ls->as);
    free(ls);
    return rc;
  }
  *out = ls;
  return 0;
}

void lv_linsol_free(lv_linsol *ls) {
  if (ls == NULL) return;
  if (ls->kind == LV_LINSOL_DENSE)
    lv_dense_destroy(ls);
  else if (ls->kind == LV_LINSOL_KLU)
    lv_klu_destroy(ls);
  else if (ls->kind == LV_LINSOL_UMFPACK)
    lv_umf_destroy(ls);
  lv_assembly_free(&ls->as);
  free(ls);
}

lv_linsol_kind lv_linsol_kind_of(const lv_linsol *ls) { return ls->kind; }

const char *lv_linsol_kind_name(lv_linsol_kind kind) {
  switch (kind) {
    case LV_LINSOL_AUTO: return "auto";
    case LV_LINSOL_DENSE: return "dense";
    case LV_LINSOL_UMFPACK: return "umfpack";
    case LV_LINSOL_KLU: return "klu";
    case LV_LINSOL_SPARSE: return "sparse";
  }
  return "unknown";
}

int lv_linsol_size(const lv_linsol *ls) { return ls->n; }

int lv_linsol_begin(lv_linsol *ls) {
  if (ls == NULL) return LV_EINPUT;
  if (ls->a0_in_as) lv_dense_keep_a0(ls, 1);
  lv_assembly_begin(&ls->as);
  return 0;
}

int lv_linsol_add(lv_linsol *ls, int i, int j, double v) {
  if (ls == NULL || i < 0 || j < 0 || i >= ls->n || j >= ls->n) return LV_EINPUT;
  if (ls->a0_in_as) lv_dense_keep_a0(ls, 0);
  /* The entry is still stored (the position belongs to the pattern, and
   * matvec then shows the NaN honestly); the flag makes factor fail. */
  LV_CHECK(lv_assembly_add(&ls->as, i, j, v));
  return isfinite(v) ? 0 : LV_ENONFINITE;
}

/* Root sink of a solver.  It honours every field of the sink (not just the
 * target) so that a caller who builds a sink by hand from this one still
 * gets offset/scale/transpose semantics identical to lv_sink_dense. */
static int linsol_sink_add(lv_sink *s, int i, int j, double v) {
  if (s->transpose) { int t = i; i = j; j = t; }
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  return lv_linsol_add((lv_linsol *)s->target, s->row0 + i, s->col0 + j, s->scale * v);
}

lv_sink lv_linsol_sink(lv_linsol *ls) {
  lv_sink s;
  s.add = linsol_sink_add;
  s.target = ls;
  s.row0 = s.col0 = 0;
  s.nrows = s.ncols = ls->n;
  s.ld = 0;
  s.transpose = 0;
  s.scale = 1.0;
  s.add_block = NULL;
  return s;
}

/* LV_LINSOL_SPARSE: KLU or UMFPACK, decided once, on the first assembled
 * pattern, from KLU's analysis of it (no values read: the same pattern
 * always gives the same back-end, so a run, its resume from a checkpoint
 * and a rerun factorise with the same code).
 *
 * The figure is the predicted factorisation flops per entry of L + U: the
 * average length of the column updates, i.e. how dense the fronts are.
 * UMFPACK's frontal method does those updates with dense BLAS on the
 * fronts; KLU's left-looking sparse columns pay per entry but refactorise
 * with kept pivots.  Measured on the schemes' real Newton matrices
 * (benchmarks/bench_sparse_choice.sh, CPU time of whole runs): chains of
 * particles (3 flops per entry) and of rigid bodies (8) run 2.3-2.9x faster
 * with KLU, a 40 x 40 net of rods with closed loops is even at 82 (RATTLE,
 * KLU 0.86x) and 2x faster with UMFPACK at 130 (generalized-alpha), 7-25x
 * at 245-446 (EM's reduced matrices).  Hence the crossover at 100. */
#define LV_SPARSE_KLU_MAX_FLOPS_PER_ENTRY 100.0

static int choose_sparse(lv_linsol *ls) {
  LV_CHECK(lv_assembly_finish(&ls->as));
  double flops = 0.0, lunz = 0.0;
  LV_CHECK(lv_klu_estimate(ls, &flops, &lunz));
  double per_entry = lunz > 0 ? flops / lunz : 0.0;
  lv_linsol_kind kind = per_entry <= LV_SPARSE_KLU_MAX_FLOPS_PER_ENTRY ? LV_LINSOL_KLU : LV_LINSOL_UMFPACK;
  int rc = kind == LV_LINSOL_KLU ? lv_klu_create(ls) : lv_umf_create(ls);
  if (rc) return rc;
  ls->kind = kind;
  ls->stats.flops_per_entry = per_entry;
  return 0;
}

int lv_linsol_factor(lv_linsol *ls) {
  if (ls == NULL) return LV_EINPUT;
  /* Invalidate first: whatever happens below, a failed attempt must not
   * leave an older factorisation usable by solve. */
  ls->factored = 0;
  ls->rcond = 0.0;
  if (ls->as.nonfinite) return LV_ENONFINITE;
  if (ls->kind == LV_LINSOL_SPARSE) LV_CHECK(choose_sparse(ls));
  int rc = ls->kind == LV_LINSOL_DENSE ? lv_dense_factor(ls)
           : ls->kind == LV_LINSOL_KLU  ? lv_klu_factor(ls)
                                        : lv_umf_factor(ls);
  if (rc == 0) ls->factored = 1;
  return rc;
}

int lv_linsol_solve(lv_linsol *ls, double *b) {
  if (ls == NULL || b == NULL || !ls->factored) return LV_EINPUT;
  /* A non-finite right-hand side is the caller's data, not a property of the
   * matrix, so it gets its own status instead of LV_ESINGULAR. */
  if (!lv_all_finite(ls->n, b)) return LV_ENONFINITE;
  return ls->kind == LV_LINSOL_DENSE ? lv_dense_solve(ls, b)
         : ls->kind == LV_LINSOL_KLU  ? lv_klu_solve(ls, b)
                                      : lv_umf_solve(ls, b);
}

int lv_linsol_matvec(const lv_linsol *ls, const double *x, double *y) {
  if (ls == NULL || x == NULL || y == NULL) return LV_EINPUT;
  lv_assembly_matvec(&ls->as, x, y);
  return 0;
}

double lv_linsol_rcond(const lv_linsol *ls) {
  /* The dense back-end skips the estimate when the pivots clear the matrix;
   * compute it now (caching it is invisible to the caller). */
  if (ls->rcond == -1.0 && ls->kind == LV_LINSOL_DENSE) {
    double r = lv_dense_rcond((lv_linsol *)ls);
    return r < 0 ? 0.0 : r;
  }
  return ls->rcond;
}

void lv_linsol_get_stats(const lv_linsol *ls, lv_linsol_stats *stats) {
  if (ls == NULL || stats == NULL) return;
  *stats = ls->stats;
}

lv_assembly *lv_linsol_assembly(lv_linsol *ls) { return &ls->as; }
