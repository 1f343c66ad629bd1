/* Assembly bookkeeping shared by the sparse back-ends (umfpack.c, klu.c).
 *
 * Every assembly is stored as the sequence of its (i, j, v) add calls.  The
 * pattern is the sequence of positions of the assembly that was last
 * analysed ("recorded").  While adds arrive we only compare their position
 * with the recorded one at the same index -- a cheap test that lets the
 * scheme code assemble in whatever order it likes, provided it is the same
 * order every time.  Whether the pattern changed is decided at factor time,
 * when the assembly is known to be complete; keeping the current triplets
 * means a mismatch discovered half-way needs no replay.
 *
 * The CSC arrays (Ap, Ai, Ax) are written only at factor time
 * (lv_triplets_record, lv_triplets_values) and then stay untouched until
 * the next factorisation: the back-ends' iterative refinement reads them
 * and must see the matrix that was factorised, even if a new assembly has
 * begun meanwhile.  Not installed. */
#ifndef LIVENS_LINSOL_TRIPLETS_H
#define LIVENS_LINSOL_TRIPLETS_H

#include <stddef.h>
#include "livens/lv_status.h"

typedef struct {
  int n;
  /* current assembly, in add order */
  int *ci, *cj;
  double *cv;
  size_t cnt, cap;
  int match; /* every add so far hit the recorded position of its index */
  int oom;   /* an add was lost for lack of memory: the assembly is incomplete */
  /* recorded pattern: positions of the add calls, and the CSC slot of each */
  int *ri, *rj, *map;
  size_t rcnt;
  /* CSC of the recorded pattern, rows ascending in each column, duplicates merged */
  int *Ap, *Ai;
  double *Ax;
  int nnz;
} lv_triplets;

int lv_triplets_init(lv_triplets *t, int n);
void lv_triplets_free(lv_triplets *t);

static inline void lv_triplets_begin(lv_triplets *t) {
  t->cnt = 0;
  t->match = 1;
  t->oom = 0;
}

int lv_triplets_grow(lv_triplets *t);

static inline int lv_triplets_add(lv_triplets *t, int i, int j, double v) {
  if (t->cnt == t->cap && lv_triplets_grow(t) != 0) {
    t->oom = 1;
    return LV_ENOMEM;
  }
  size_t k = t->cnt++;
  t->ci[k] = i;
  t->cj[k] = j;
  t->cv[k] = v;
  if (t->match && (k >= t->rcnt || t->ri[k] != i || t->rj[k] != j)) t->match = 0;
  return 0;
}

/* The current assembly has the recorded positions in the recorded order. */
static inline int lv_triplets_same_pattern(const lv_triplets *t) {
  return t->match && t->cnt == t->rcnt;
}

/* Record the current assembly's positions as the pattern and build the CSC
 * structure and the add -> slot map: two stable counting sorts (by row,
 * then by column), O(cnt + n).  Status: 0, LV_ENOMEM, LV_ELINSOL (more than
 * INT_MAX entries). */
int lv_triplets_record(lv_triplets *t);

/* Ax from the current assembly (after a matching or fresh record). */
void lv_triplets_values(lv_triplets *t);

/* y = A x for the current assembly (triplets). */
void lv_triplets_matvec(const lv_triplets *t, const double *x, double *y);

/* y = A x for the values in Ax (the last factorised matrix). */
void lv_triplets_csc_matvec(const lv_triplets *t, const double *x, double *y);

#endif
