/* The one assembly path of every matrix an lv_linsol factorises (internal,
 * not installed).
 *
 * A scheme writes each entry of its Newton matrix once, with
 * lv_assembly_add (or through lv_linsol_add / an lv_linsol_sink, which end
 * here); the back-end decided at creation where the entries land:
 *
 *   dense   a column-major n x n array D, zeroed by begin;
 *   sparse  a CSC pattern (Ap, Ai) and its values Ax, cached by the
 *           position-sequence recorder (recorder.h): the pattern is the
 *           set of positions of the first assembly, fixed until an
 *           assembly writes a different position sequence; meanwhile each
 *           add goes straight into its slot, and a new sequence is
 *           recorded by lv_assembly_finish (duplicates merged, rows
 *           ascending in each column), which the back-end then analyses
 *           again.
 *
 * No caller branches on the back-end: the schemes only add entries, the
 * back-ends only read D, or Ap/Ai/Ax after lv_assembly_finish.  The values
 * are summed per slot in add order, so a scheme that adds the same terms in
 * the same order gets the same bits whatever structure sits above it. */
#ifndef LIVENS_LINSOL_ASSEMBLY_H
#define LIVENS_LINSOL_ASSEMBLY_H

#include <math.h>
#include <stddef.h>
#include "livens/lv_status.h"
#include "recorder.h"

typedef struct lv_assembly lv_assembly;
struct lv_assembly {
  int n;
  int dense;     /* entries land in D (else in the CSC pattern) */
  int nonfinite; /* a NaN/Inf was added since begin: the factorisation must fail */
  double *D;     /* dense: n x n column-major */
  /* sparse */
  lv_recorder rec; /* the add sequence; rec.version changes with the pattern (0: none) */
  int *Ap, *Ai;    /* CSC, n + 1 and nnz */
  double *Ax;      /* the values being assembled, one per slot */
  int nnz;
};

/* An empty assembly of an n x n matrix, dense or sparse.  Status 0 or
 * LV_ENOMEM (the assembly can be freed either way). */
int lv_assembly_init(lv_assembly *a, int n, int dense);
void lv_assembly_free(lv_assembly *a);

/* Start an assembly: every value zero, the pattern kept. */
void lv_assembly_begin(lv_assembly *a);

/* Accumulate v at (i, j), 0 <= i, j < n (not checked here: lv_linsol_add
 * checks for the public API; the schemes' own writers know their bounds).
 * Status 0 or LV_ENOMEM. */
static inline int lv_assembly_add(lv_assembly *a, int i, int j, double v) {
  if (!isfinite(v)) a->nonfinite = 1;
  if (a->dense) {
    a->D[(size_t)i + (size_t)j * (size_t)a->n] += v;
    return 0;
  }
  return lv_recorder_add(&a->rec, a->Ax, i, j, v);
}

/* Sparse: complete the assembly.  If its position sequence is the recorded
 * one, Ax already holds the values; otherwise the sequence becomes the
 * pattern (rec.version changes) and Ax is summed from the kept values.
 * Status: 0, LV_ENOMEM (also for an add lost earlier), LV_ELINSOL (more
 * than INT_MAX adds).  Dense: nothing to do. */
int lv_assembly_finish(lv_assembly *a);

/* y = A x for the values assembled so far (sparse: the slots' sums of the
 * adds on the recorded sequence, then the adds off it in add order). */
void lv_assembly_matvec(const lv_assembly *a, const double *x, double *y);

/* y = A x for the CSC pattern with values @p vals (one per slot). */
void lv_assembly_csc_matvec(const lv_assembly *a, const double *vals, const double *x, double *y);

#endif
