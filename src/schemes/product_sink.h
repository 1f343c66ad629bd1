/* Recorded factors and product sinks: the internal toolkit the
 * generalized-alpha (genalpha.c) and BLieDF (bliedf.c) schemes use to form
 * products such as K_t T, G T or M B_n^T entry by entry from the model's
 * sink callbacks, so that one code fills a dense or a sparse matrix with the
 * pattern the callbacks write (the solver's assembly, linsol/assembly.h,
 * decides which).
 *
 * lv_rfac     a sparse matrix recorded from a callback, grouped by one index
 *             (the key), so an entry A(r, key) can be expanded into
 *             A(r, key) F(key, o) for every o.
 * lv_prod_sink  a sink writing A F into a parent sink, entry by entry.
 * lv_blk      a sink for one block of a solver's assembly, optionally
 *             transposed or multiplied on the right by an lv_rfac. */
#ifndef LIVENS_PRODUCT_SINK_H
#define LIVENS_PRODUCT_SINK_H

#include <string.h>
#include "lv_internal.h"
#include "linsol/assembly.h"

/* The pattern is recorded on the first fill and replayed afterwards
 * (callbacks must write the same positions in the same order, lv_model.h);
 * a changed pattern is recorded again. */
typedef struct {
  int nkey, by_col;   /* key = column index (by_col) or row index of the callback's matrix */
  int n, cap;         /* recorded entries, capacity */
  int *rk, *ro;       /* key and other index of each call, in call order */
  double *rv;         /* value of each call */
  int *ptr;           /* nkey + 1 */
  int *idx, *pos;     /* other index grouped by key; call -> grouped slot */
  double *val;        /* values grouped by key */
  int built, bad, count;
  int nodup;          /* no position is written twice: val can be filled in place */
  int err;
} lv_rfac;

typedef int (*lv_rfac_fill_fn)(void *ctx, lv_sink *s);

int lv_rfac_init(lv_rfac *F, int nkey, int by_col, int cap);
void lv_rfac_free(lv_rfac *F);

/* The parts of the step's hot path are inline below (a scheme calls them a
 * few times per Newton matrix with constant arguments); the rest is in
 * product_sink.c. */
typedef struct {
  lv_sink sink;
  lv_rfac *F;
} lv_rfac_sink;
int lv_rfac_add(lv_sink *s, int i, int j, double v); /* the sink's add */
void lv_rfac_build(lv_rfac *F);                      /* group a recorded pattern by key */

/* Run @p fn into the factor (nrows x ncols as the callback sees it) and
 * gather the values (val grouped by key; rv in call order). */
static inline int lv_rfac_fill(lv_rfac *F, int nrows, int ncols, lv_rfac_fill_fn fn, void *ctx) {
  for (int attempt = 0; attempt < 2; attempt++) {
    lv_rfac_sink rs;
    memset(&rs, 0, sizeof rs);
    rs.sink.add = lv_rfac_add;
    rs.sink.nrows = nrows;
    rs.sink.ncols = ncols;
    rs.sink.scale = 1.0;
    rs.F = F;
    F->count = 0;
    F->bad = 0;
    F->err = 0;
    int rc = fn(ctx, &rs.sink);
    if (F->err) return F->err;
    if (rc) return rc;
    if (F->built && (F->bad || F->count != F->n)) {
      F->built = 0; /* the callback changed its pattern: record it again */
      continue;
    }
    if (F->built && F->nodup) return 0; /* filled in place by lv_rfac_add */
    if (!F->built) lv_rfac_build(F);
    for (int t = 0; t < F->n; t++) F->val[t] = 0.0;
    for (int c = 0; c < F->n; c++) F->val[F->pos[c]] += F->rv[c];
    return 0;
  }
  return LV_EPATTERN;
}

/* y += M x (transposed: y += M^T x) for a recorded matrix. */
static inline void lv_rfac_matvec(const lv_rfac *M, const double *x, double *y, int transposed) {
  for (int c = 0; c < M->n; c++) {
    int i = M->by_col ? M->ro[c] : M->rk[c], j = M->by_col ? M->rk[c] : M->ro[c];
    if (transposed)
      y[j] += M->rv[c] * x[i];
    else
      y[i] += M->rv[c] * x[j];
  }
}

/* Product sink: entry (i, key, a) of A becomes the entries
 * (i, o, scale a F(key, o)) of A F in the parent sink. */
typedef struct {
  lv_sink sink;
  lv_sink *parent;
  const lv_rfac *F;
} lv_prod_sink;

int lv_prod_add(lv_sink *s, int i, int key, double a); /* the sink's add */

static inline lv_sink *lv_prod_init(lv_prod_sink *p, lv_sink *parent, const lv_rfac *F, int nrows,
                                    int ncols, double scale) {
  memset(p, 0, sizeof *p);
  p->sink.add = lv_prod_add;
  p->sink.nrows = nrows;
  p->sink.ncols = ncols;
  p->sink.scale = scale;
  p->parent = parent;
  p->F = F;
  return &p->sink;
}

/* Sink for one block of the Newton matrix: entry (i, j, v) of the block
 * becomes scale * v at (r0 + i, c0 + j) (transposed: (r0 + j, c0 + i)), or,
 * with a right factor F, the entries scale * v * F(j, l) at (r0 + i, c0 + l):
 * the product of the block with F (the tangent operator, or B_n^T). */
typedef struct {
  lv_sink sink;
  lv_assembly *A;
  int r0, c0, transpose;
  double scale;
  const lv_rfac *F;
} lv_blk_sink;

static inline void lv_blk_put(lv_assembly *A, int r0, int c0, double scale, int transpose, const lv_rfac *F,
                              int i, int j, double v) {
  v *= scale;
  if (F) {
    for (int t = F->ptr[j]; t < F->ptr[j + 1]; t++) lv_assembly_add(A, r0 + i, c0 + F->idx[t], v * F->val[t]);
  } else if (transpose) {
    lv_assembly_add(A, r0 + j, c0 + i, v);
  } else {
    lv_assembly_add(A, r0 + i, c0 + j, v);
  }
}

int lv_blk_add(lv_sink *s, int i, int j, double v); /* the sink's add */

static inline lv_sink *lv_blk(lv_blk_sink *b, lv_assembly *A, int r0, int c0, int nrows, int ncols, double scale,
                              int transpose, const lv_rfac *F) {
  memset(b, 0, sizeof *b);
  b->sink.add = lv_blk_add;
  b->sink.nrows = nrows;
  b->sink.ncols = ncols;
  b->sink.scale = 1.0;
  b->A = A;
  b->r0 = r0;
  b->c0 = c0;
  b->scale = scale;
  b->transpose = transpose;
  b->F = F;
  return &b->sink;
}

/* The same for a matrix already recorded in an lv_rfac (no callback). */
static inline void lv_blk_rfac(lv_assembly *A, const lv_rfac *M, int r0, int c0, double scale, int transpose,
                               const lv_rfac *F) {
  for (int c = 0; c < M->n; c++) {
    int i = M->by_col ? M->ro[c] : M->rk[c], j = M->by_col ? M->rk[c] : M->ro[c];
    lv_blk_put(A, r0, c0, scale, transpose, F, i, j, M->rv[c]);
  }
}

#endif
