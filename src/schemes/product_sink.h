/* Recorded factors, product sinks and the cached assembly of a Newton
 * matrix: the internal toolkit the generalized-alpha (genalpha.c) and BLieDF
 * (bliedf.c) schemes use to form products such as K_t T, G T or M B_n^T
 * entry by entry from the model's sink callbacks, so that one code fills a
 * dense or a sparse matrix with the pattern the callbacks write.
 *
 * lv_rfac     a sparse matrix recorded from a callback, grouped by one index
 *             (the key), so an entry A(r, key) can be expanded into
 *             A(r, key) F(key, o) for every o.
 * lv_prod_sink  a sink writing A F into a parent sink, entry by entry.
 * lv_acache   the cached assembly of a whole Newton matrix: positions are
 *             recorded once, later assemblies add into a fixed list of
 *             unique entries (or into a dense scratch).
 * lv_blk      a sink for one block of an lv_acache, optionally transposed or
 *             multiplied on the right by an lv_rfac. */
#ifndef LIVENS_PRODUCT_SINK_H
#define LIVENS_PRODUCT_SINK_H

#include <string.h>
#include "lv_internal.h"

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

/* Cached assembly of a Newton matrix.  Every entry, whatever callback or
 * recorded factor it comes from, is accumulated here first: the first
 * assembly records the sequence of positions and merges duplicates into a
 * list of unique entries; later assemblies replay that sequence with one
 * indexed add per entry and hand the unique entries to the linear solver in a
 * fixed order (so a sparse back-end keeps its pattern).  With a dense
 * back-end, D (N x N, column-major) replaces the bookkeeping. */
typedef struct {
  int n, cap;          /* recorded calls */
  int *ci, *cj;        /* position of each call */
  double *cv;          /* value of each call (recording pass only) */
  int *slot;           /* call -> unique entry */
  int nu;              /* unique entries */
  int *ui, *uj;
  double *uv;          /* accumulated values */
  int count, built, bad, err;
  double *D;           /* dense back-end: an N x N column-major scratch instead */
  int N;
} lv_acache;

int lv_acache_init(lv_acache *A, int cap);
/* The N x N dense scratch (dense back-end). */
int lv_acache_dense(lv_acache *A, int N);
void lv_acache_free(lv_acache *A);
void lv_acache_record(lv_acache *A, int c, int i, int j, double v); /* recording pass of emit */
int lv_acache_build(lv_acache *A, int N); /* unique entries after a recording pass */

/* Accumulate v at (i, j). */
static inline void lv_acache_emit(lv_acache *A, int i, int j, double v) {
  if (A->D) { /* dense back-end: the position bookkeeping is not needed */
    A->D[i + (size_t)j * (size_t)A->N] += v;
    return;
  }
  int c = A->count++;
  if (A->built) {
    if (c < A->n && A->ci[c] == i && A->cj[c] == j)
      A->uv[A->slot[c]] += v;
    else
      A->bad = 1;
    return;
  }
  lv_acache_record(A, c, i, j, v);
}

/* Assemble through @p fn (which writes every block into A) and hand the
 * matrix to @p ls; records the pattern on the first call and again whenever
 * a callback changes it. */
static inline int lv_acache_assemble(lv_acache *A, int N, int (*fn)(void *ctx), void *ctx, lv_linsol *ls) {
  if (A->D) {
    /* A dense matrix has no pattern to keep: accumulate in place and hand
     * over the nonzero entries. */
    memset(A->D, 0, (size_t)N * (size_t)N * sizeof(double));
    A->err = 0;
    LV_CHECK(fn(ctx));
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        double v = A->D[i + (size_t)j * (size_t)N];
        if (v != 0.0) LV_CHECK(lv_linsol_add(ls, i, j, v));
      }
    return 0;
  }
  for (int attempt = 0; attempt < 2; attempt++) {
    A->count = 0;
    A->bad = 0;
    A->err = 0;
    if (A->built)
      for (int u = 0; u < A->nu; u++) A->uv[u] = 0.0;
    LV_CHECK(fn(ctx));
    if (A->err) return A->err;
    if (A->built && (A->bad || A->count != A->n)) {
      A->built = 0; /* some callback changed its pattern: record again */
      continue;
    }
    if (!A->built) LV_CHECK(lv_acache_build(A, N));
    for (int u = 0; u < A->nu; u++) LV_CHECK(lv_linsol_add(ls, A->ui[u], A->uj[u], A->uv[u]));
    return 0;
  }
  return LV_EPATTERN;
}

/* Sink for one block of the Newton matrix: entry (i, j, v) of the block
 * becomes scale * v at (r0 + i, c0 + j) (transposed: (r0 + j, c0 + i)), or,
 * with a right factor F, the entries scale * v * F(j, l) at (r0 + i, c0 + l):
 * the product of the block with F (the tangent operator, or B_n^T). */
typedef struct {
  lv_sink sink;
  lv_acache *A;
  int r0, c0, transpose;
  double scale;
  const lv_rfac *F;
} lv_blk_sink;

static inline void lv_blk_put(lv_acache *A, int r0, int c0, double scale, int transpose, const lv_rfac *F,
                              int i, int j, double v) {
  v *= scale;
  if (F) {
    for (int t = F->ptr[j]; t < F->ptr[j + 1]; t++) lv_acache_emit(A, r0 + i, c0 + F->idx[t], v * F->val[t]);
  } else if (transpose) {
    lv_acache_emit(A, r0 + j, c0 + i, v);
  } else {
    lv_acache_emit(A, r0 + i, c0 + j, v);
  }
}

int lv_blk_add(lv_sink *s, int i, int j, double v); /* the sink's add */

static inline lv_sink *lv_blk(lv_blk_sink *b, lv_acache *A, int r0, int c0, int nrows, int ncols, double scale,
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
static inline void lv_blk_rfac(lv_acache *A, const lv_rfac *M, int r0, int c0, double scale, int transpose,
                               const lv_rfac *F) {
  for (int c = 0; c < M->n; c++) {
    int i = M->by_col ? M->ro[c] : M->rk[c], j = M->by_col ? M->rk[c] : M->ro[c];
    lv_blk_put(A, r0, c0, scale, transpose, F, i, j, M->rv[c]);
  }
}

#endif
