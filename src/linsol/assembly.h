/* The one assembly path of every matrix an lv_linsol factorises (internal,
 * not installed).
 *
 * A scheme writes each entry of its Newton matrix once, with
 * lv_assembly_add (or through lv_linsol_add / an lv_linsol_sink, which end
 * here); the back-end decided at creation where the entries land:
 *
 *   dense   a column-major n x n array D, zeroed by begin;
 *   sparse  a CSC pattern (Ap, Ai) and its values Ax.  The pattern is the
 *           set of positions of the first assembly; it is fixed until an
 *           assembly writes a different position sequence.  Later
 *           assemblies write each value straight into its cached slot: add
 *           number k compares its position with the recorded k-th one and
 *           accumulates into Ax[map[k]].  The comparison is what lets a
 *           scheme assemble in any order it likes, provided it is the same
 *           order every time; a mismatch is not an error, it makes
 *           lv_assembly_finish record the new sequence as the pattern
 *           (duplicates merged, rows ascending in each column), which the
 *           back-end then analyses again.  Every add's value is kept too
 *           (cv), so a mismatch half-way needs no replay.
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

typedef struct lv_assembly lv_assembly;
struct lv_assembly {
  int n;
  int dense;     /* entries land in D (else in the CSC pattern) */
  int nonfinite; /* a NaN/Inf was added since begin: the factorisation must fail */
  double *D;     /* dense: n x n column-major */
  /* sparse: the running assembly */
  size_t cnt, cap; /* adds so far, capacity of ci/cj/cv */
  int *ci, *cj;    /* positions of the adds made off the recorded sequence */
  double *cv;      /* value of every add */
  int match;       /* every add so far hit the recorded position of its index */
  size_t mis;      /* index of the first add off the recorded sequence */
  int oom;         /* an add was lost for lack of memory: the assembly is incomplete */
  /* sparse: the recorded pattern */
  int *ri, *rj, *map; /* position sequence of the recorded assembly, slot of each add */
  size_t rcnt;
  int *Ap, *Ai; /* CSC, n + 1 and nnz */
  double *Ax;   /* the values being assembled, one per slot */
  int nnz;
  long version;  /* changes whenever a new pattern is recorded; 0: none */
  long recorded; /* patterns recorded so far */
};

/* An empty assembly of an n x n matrix, dense or sparse.  Status 0 or
 * LV_ENOMEM (the assembly can be freed either way). */
int lv_assembly_init(lv_assembly *a, int n, int dense);
void lv_assembly_free(lv_assembly *a);

/* Start an assembly: every value zero, the pattern kept. */
void lv_assembly_begin(lv_assembly *a);

int lv_assembly_grow_(lv_assembly *a);
void lv_assembly_mismatch_(lv_assembly *a, size_t k);

/* Accumulate v at (i, j), 0 <= i, j < n (not checked here: lv_linsol_add
 * checks for the public API; the schemes' own writers know their bounds).
 * Status 0 or LV_ENOMEM. */
static inline int lv_assembly_add(lv_assembly *a, int i, int j, double v) {
  if (!isfinite(v)) a->nonfinite = 1;
  if (a->dense) {
    a->D[(size_t)i + (size_t)j * (size_t)a->n] += v;
    return 0;
  }
  size_t k = a->cnt;
  if (k == a->cap && lv_assembly_grow_(a) != 0) {
    a->oom = 1;
    return LV_ENOMEM;
  }
  a->cnt = k + 1;
  a->cv[k] = v;
  if (a->match) {
    if (k < a->rcnt && a->ri[k] == i && a->rj[k] == j) {
      a->Ax[a->map[k]] += v;
      return 0;
    }
    lv_assembly_mismatch_(a, k);
  }
  a->ci[k] = i;
  a->cj[k] = j;
  return 0;
}

/* Sparse: complete the assembly.  If its position sequence is the recorded
 * one, Ax already holds the values; otherwise the sequence becomes the
 * pattern (version changes) and Ax is summed from the kept values.
 * Status: 0, LV_ENOMEM (also for an add lost earlier), LV_ELINSOL (more
 * than INT_MAX adds).  Dense: nothing to do. */
int lv_assembly_finish(lv_assembly *a);

/* y = A x for the values assembled so far (in add order, sparse). */
void lv_assembly_matvec(const lv_assembly *a, const double *x, double *y);

/* y = A x for the CSC pattern with values @p vals (one per slot). */
void lv_assembly_csc_matvec(const lv_assembly *a, const double *vals, const double *x, double *y);

#endif
