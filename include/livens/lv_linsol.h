/** @file lv_linsol.h
 *  Matrix assembly and linear solvers (dense LAPACK LU, sparse UMFPACK LU,
 *  sparse KLU).
 *
 *  Every matrix livens builds -- Newton matrices of the schemes, mass
 *  matrices, constraint Jacobians written by model callbacks -- goes through
 *  an lv_sink: a small value type whose add() accumulates one entry.
 *  A sink may write into a dense array, into a linear solver's matrix, or be
 *  a *view* of another sink (row/column offset, scale factor, transpose), so
 *  the same model callback fills a block of a dense 9x9 Newton matrix or of a
 *  sparse 10^6 x 10^6 one.
 *
 *  An @ref lv_linsol owns one square matrix.  Its sparsity pattern is the set
 *  of (i, j) positions added during the first assembly; later assemblies that
 *  add the same positions in the same order reuse it, so UMFPACK's symbolic
 *  analysis runs once per pattern.  An assembly with a different sequence of
 *  positions is accepted and triggers a new symbolic analysis (counted in the
 *  statistics).
 */
#ifndef LIVENS_LV_LINSOL_H
#define LIVENS_LV_LINSOL_H

#include "lv_export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Entry sink.  Fields are implementation details; use the constructors. */
typedef struct lv_sink lv_sink;
/** The entry sink itself: a value type (copy it freely; views point to
 *  their parent).  Build it with lv_sink_dense(), lv_sink_view(),
 *  lv_sink_null() or lv_linsol_sink() and write through lv_sink_add(). */
struct lv_sink {
  int (*add)(lv_sink *s, int i, int j, double v); /**< accumulate v at (i, j) */
  void *target;  /**< dense array, lv_linsol, or parent sink */
  int row0, col0;  /**< offset added to (i, j) (after transposition) */
  int nrows, ncols; /**< extent of the block, for bounds checks */
  int ld;          /**< leading dimension of a dense column-major target */
  int transpose;   /**< non-zero: (i, j) is written at (j, i) */
  double scale;    /**< every value is multiplied by this */
  /** optional: add a whole dense block at once, as add would take its
   *  entries (see lv_sink_add_block); NULL: one add per entry.  The
   *  library's own fall back to one add per entry when add is no longer
   *  the one they were set with (a copy of the sink whose add was
   *  replaced) */
  int (*add_block)(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda);
};
/** @var lv_sink::row0
 *   offset added to the row index
 *  @var lv_sink::col0
 *   offset added to the column index
 *  @var lv_sink::nrows
 *   rows of the block (bounds check of i)
 *  @var lv_sink::ncols
 *   columns of the block (bounds check of j) */

/** Accumulate @p v at block position (@p i, @p j).  Returns 0 or LV_EINPUT
 *  (index outside the block). */
static inline int lv_sink_add(lv_sink *s, int i, int j, double v) {
  return s->add(s, i, j, v);
}

/** lv_sink_add_block without a sink's add_block: one lv_sink_add per
 *  entry, row by row.  The same as lv_sink_add_block on every sink. */
static inline int lv_sink_add_block_each(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a,
                                         int lda) {
  for (int r = 0; r < nrows; r++)
    for (int c = 0; c < ncols; c++) {
      int rc = s->add(s, i0 + r, j0 + c, a[(size_t)r * (size_t)lda + (size_t)c]);
      if (rc) return rc;
    }
  return 0;
}

/** Accumulate the @p nrows x @p ncols block @p a (row-major: entry (r, c)
 *  at a[r * lda + c]) at block positions (@p i0 + r, @p j0 + c): exactly
 *  lv_sink_add of every entry, row by row and along each row, in that order
 *  -- the same sums, and on an index outside the sink the same status
 *  after the same entries.  Structural zeros are entries like any other
 *  (they become part of a sparse pattern).  The library's own Newton-matrix
 *  and capture sinks take the block in one call, which saves the call per
 *  entry (multibody models write their 3 x 3 and joint blocks this way). */
static inline int lv_sink_add_block(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a,
                                    int lda) {
  if (s->add_block) return s->add_block(s, i0, j0, nrows, ncols, a, lda);
  return lv_sink_add_block_each(s, i0, j0, nrows, ncols, a, lda);
}

/** Sink accumulating into a dense column-major nrows x ncols array with
 *  leading dimension @p ld (entry (i,j) at a[i + j*ld]).  The array is not
 *  zeroed. */
LV_API lv_sink lv_sink_dense(double *a, int ld, int nrows, int ncols);

/** View of @p parent: entry (i, j) of the view, 0 <= i < nrows, 0 <= j < ncols,
 *  is added to parent entry (row0 + i, col0 + j) -- or (row0 + j, col0 + i)
 *  if @p transpose -- multiplied by @p scale.  @p nrows, @p ncols are the
 *  view's own extent (before transposition). */
LV_API lv_sink lv_sink_view(lv_sink *parent, int row0, int col0, int nrows, int ncols,
                            double scale, int transpose);

/** Sink that discards everything (used to count or to skip a block). */
LV_API lv_sink lv_sink_null(int nrows, int ncols);

/** Back-end of a linear solver. */
typedef enum {
  LV_LINSOL_AUTO = 0,  /**< dense below the size threshold, LV_LINSOL_SPARSE above */
  LV_LINSOL_DENSE = 1, /**< LAPACK dgetrf/dgetrs (OpenBLAS) */
  LV_LINSOL_UMFPACK = 2, /**< SuiteSparse UMFPACK, symbolic analysis reused */
  /** SuiteSparse KLU, symbolic analysis reused, numeric refactorisation
   *  with the kept pivot order (a new pivot search when a kept pivot has
   *  become small).  On the Newton matrices of chains of particles or
   *  bodies (O(n) fill, few flops per entry) its numeric phase is 10-30x
   *  cheaper than UMFPACK's (benchmarks/bench_scale); UMFPACK's frontal
   *  method pays off where fill is heavy (2D/3D meshes). */
  LV_LINSOL_KLU = 3,
  /** KLU or UMFPACK, chosen at the first factorisation from KLU's analysis
   *  of the assembled pattern: KLU while the predicted factorisation flops
   *  per entry of L + U are at most 100 (chains, trees, small loops),
   *  UMFPACK above (heavy fill: nets, meshes).  Deterministic (values are
   *  not read), so a resumed or repeated run uses the same back-end; the
   *  figure is in lv_linsol_stats.flops_per_entry. */
  LV_LINSOL_SPARSE = 4
} lv_linsol_kind;

/** Default size n at or above which LV_LINSOL_AUTO takes the sparse path
 *  (LV_LINSOL_SPARSE: KLU or UMFPACK by the pattern).  Measured in
 *  instructions per step of the multibody layer's models (callgrind) once
 *  KLU became the sparse path's usual back-end, n = nv + nc: at n <= 22
 *  dense ahead for every scheme (heavy top, four particles, gyroscopic top,
 *  double pendulum in R^3 x SO(3): by 10-37 %); at n = 24 (chain, 6
 *  particles) dense ahead for VI-A and EM by 24-28 %, behind for RATTLE by
 *  12 %; at n = 27 (rigid chain, 3 bodies) generalized-alpha index 3 dense
 *  ahead by 9 %, index 2 (a 36 x 36 Newton matrix) KLU by 29 %; from n =
 *  28 on KLU ahead for every scheme measured, by 1.5-2.8x once the Newton
 *  matrix exceeds the in-house small LU's 32 rows (LAPACK's dgetrf above:
 *  rigid chain, slider-crank, double pendulum in directors, the chain).
 *  For a Newton matrix whose factors fill in completely (a dense pattern)
 *  KLU takes 1.4-1.7x LAPACK's instructions at n = 40-56: such a model
 *  sets --linsol dense.  (It was 64 while the sparse path was UMFPACK.) */
#define LV_LINSOL_AUTO_THRESHOLD 26

/** Opaque linear solver owning one square matrix: created by
 *  lv_linsol_new(), assembled with lv_linsol_begin() / lv_linsol_add(),
 *  factorised by lv_linsol_factor(), freed by lv_linsol_free(). */
typedef struct lv_linsol lv_linsol;

/** Counters since creation. */
typedef struct {
  long symbolic;   /**< symbolic analyses (UMFPACK, KLU; always 0 for dense) */
  long numeric;    /**< numeric factorisations */
  long solves;     /**< triangular solves */
  long nnz;        /**< entries in the current pattern (n*n for dense) */
  double flops_per_entry; /**< LV_LINSOL_SPARSE: the predicted flops per
                               entry of L + U that chose the back-end; -1
                               when the back-end was not chosen so */
} lv_linsol_stats;

/** Create a solver for n x n matrices.  LV_LINSOL_AUTO resolves to DENSE if
 *  n < @p threshold (pass 0 for LV_LINSOL_AUTO_THRESHOLD), LV_LINSOL_SPARSE
 *  otherwise.
 *  Status: LV_EINPUT (n < 1 or unknown kind), LV_ENOMEM. */
LV_API int lv_linsol_new(lv_linsol **out, lv_linsol_kind kind, int n, int threshold);
/** Free the solver, its matrix and factorisation (NULL: no-op). */
LV_API void lv_linsol_free(lv_linsol *ls);

/** The back-end actually used (never LV_LINSOL_AUTO; LV_LINSOL_SPARSE only
 *  before the first factorisation has chosen KLU or UMFPACK). */
LV_API lv_linsol_kind lv_linsol_kind_of(const lv_linsol *ls);
/** "dense", "umfpack", "klu", "sparse" or "auto". */
LV_API const char *lv_linsol_kind_name(lv_linsol_kind kind);

/** Set the number of threads of the BLAS/LAPACK library (OpenBLAS), for the
 *  whole process.  The dense systems of multibody models are small (n up to
 *  a few hundred): threaded LU brings nothing there, and on a loaded machine
 *  its spinning threads made dense factorisations 2.6x slower (RATTLE on the
 *  100-particle chain, n = 400).  The livens program and the benchmarks
 *  call this with 1; a library user decides for their process (or sets
 *  OPENBLAS_NUM_THREADS).  Status: 0, or LV_ENOTIMPL when the BLAS in use
 *  has no such control. */
LV_API int lv_blas_set_threads(int nthreads);
/** The dimension n of the n x n matrix.  @p ls must not be NULL. */
LV_API int lv_linsol_size(const lv_linsol *ls);

/** Start a new assembly: all values become zero.  The pattern is kept. */
LV_API int lv_linsol_begin(lv_linsol *ls);
/** Accumulate v at (i, j) of the matrix being assembled.  Returns LV_EINPUT
 *  for an index out of range, LV_ENONFINITE for a NaN/Inf value (and the
 *  next lv_linsol_factor fails with it too), LV_ENOMEM.  Neither begin nor
 *  add invalidates the last successful factorisation, so modified Newton
 *  can keep solving with it while the next matrix is assembled. */
LV_API int lv_linsol_add(lv_linsol *ls, int i, int j, double v);
/** A sink adding into the whole matrix (offset 0, scale 1). */
LV_API lv_sink lv_linsol_sink(lv_linsol *ls);

/** Factorise the assembled matrix.  Status: LV_ESINGULAR (zero pivot, or
 *  negligible pivot: dense 1-norm rcond estimate below n * DBL_EPSILON,
 *  UMFPACK min/max |U_ii| below DBL_EPSILON), LV_ENONFINITE (NaN/Inf
 *  entry), LV_ELINSOL, LV_ENOMEM.  A failed factorisation invalidates the
 *  previous one. */
LV_API int lv_linsol_factor(lv_linsol *ls);

/** Solve A x = b with the last factorisation; @p b is overwritten by x only
 *  on success.  Status: LV_EINPUT (not factorised), LV_ENONFINITE (b not
 *  finite), LV_ESINGULAR (non-finite solution), LV_ELINSOL. */
LV_API int lv_linsol_solve(lv_linsol *ls, double *b);

/** y = A x with the currently assembled values (for residual checks);
 *  x and y must not alias. */
LV_API int lv_linsol_matvec(const lv_linsol *ls, const double *x, double *y);

/** Estimated reciprocal condition number of the last factorisation (1-norm
 *  for dense, UMFPACK's estimate for sparse); 0 if unknown. */
LV_API double lv_linsol_rcond(const lv_linsol *ls);

/** Copy the counters since creation into @p stats (NULL @p ls or
 *  @p stats: no-op). */
LV_API void lv_linsol_get_stats(const lv_linsol *ls, lv_linsol_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
