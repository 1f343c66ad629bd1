/* Small sparse-matrix kit of the schemes' Newton-matrix assembly (internal,
 * not installed).  It lives with the schemes: it captures model callbacks
 * (model layer) and writes into the solver's assembly (linsol layer).
 *
 * The VI and EM schemes reduce their discrete equations to d+2m unknowns,
 * so their Newton matrices contain products such as H M^-1 H, H M^-1 G^T,
 * G M^-1 G^T of model matrices.  Formed densely they cost O(d^3) per
 * Newton iteration; here each factor is captured from its model callback
 * into a CSR matrix whose pattern is learnt once by the position-sequence
 * recorder that also caches the solver's assembly (linsol/recorder.h: the
 * callback's position sequence is fixed by the sink contract of
 * lv_model.h, a different one is recorded anew), products and
 * transposes get their pattern once (symbolically, so structural zeros stay
 * in it) and then only their values, and the results are written term by
 * term into the solver's assembly (lv_spm_put, linsol/assembly.h): the
 * Newton matrix keeps one pattern and UMFPACK / KLU analyse it once per
 * run.  Cost per use: O(entries + flops of the product), never O(d^2).
 *
 * Patterns follow their operands: every matrix carries a version that
 * changes when its pattern does (a callback that wrote a different position
 * sequence), and a product or transpose rebuilds its own pattern when an
 * operand's version moved.  A pattern change reaches the linear solver as a
 * new position sequence, i.e. one more symbolic analysis, never a wrong
 * matrix.
 *
 * The same capture serves the generalized-alpha (genalpha*.c) and BLieDF
 * (bliedf.c) schemes, which form products such as K_t T, G T or M B_n^T
 * entry by entry from the model's callbacks: there a matrix is captured in
 * a grouped layout (lv_spm_init_grouped) -- one slot per add, nothing
 * merged, the adds grouped by row (LV_SPM_BY_ROW: CSR) or by column
 * (LV_SPM_BY_COL: CSR of the transpose) in call order -- so that an entry
 * A(r, key) expands into A(r, key) F(key, o) for every o with the same
 * sums as the callback's own sequence (lv_blk below).  The call-order
 * sequence (rec.ri, rec.rj, rec.cv) serves too (lv_spm_seq_matvec,
 * lv_blk_seq); a merged capture keeps no values but its slots' (rec.keep
 * is set for the grouped layouts only). */
#ifndef LIVENS_SPMAT_H
#define LIVENS_SPMAT_H

#include <string.h>
#include "lv_internal.h"
#include "linsol/assembly.h"

/* Layouts: merged CSR (the default), or grouped (see above). */
enum { LV_SPM_MERGED = 0, LV_SPM_BY_ROW = 1, LV_SPM_BY_COL = 2 };

/* A merged capture's recording of at least LV_SPM_CODE_MIN adds is coded
 * (rec.pos_min; the recorder's own default is LV_RECORDER_KEEP_POS):
 * positions are kept (12 bytes per add) up to 192 kB, inside a core's L2.
 * With 2^16 the chain's G captures (6 adds per particle) kept theirs up to
 * N = 10922: 2.9 MB read at every Newton iteration at N = 10^4 under EM,
 * where the iteration's data no longer fits the last-level cache.  The
 * solvers' assemblies keep 2^16: coding generalized-alpha's 27 adds per
 * particle at N = 10^3 cost 4 % more instructions for nothing. */
enum { LV_SPM_CODE_MIN = 1 << 14 };

typedef struct lv_spm lv_spm;
struct lv_spm {
  lv_sink sink; /* capture sink (first member: the add callback casts back) */
  int nrows, ncols;
  int nnz;          /* merged positions (grouped: adds) */
  int *rp, *ci;     /* CSR: row i holds slots rp[i] .. rp[i+1]-1, columns ascending;
                     * grouped: key g holds slots rp[g] .. rp[g+1]-1 in call order,
                     * ci the other index (BY_COL: the row) */
  double *val;
  int group;        /* LV_SPM_MERGED, LV_SPM_BY_ROW, LV_SPM_BY_COL */
  int nodup;        /* grouped, no (key, other) position twice: replay assigns the slots */
  long version;     /* changes whenever the pattern does; 0: no pattern yet (captured: rec.version) */
  int bad;          /* the running capture failed (an add out of bounds, no memory) */
  int flag;         /* the running capture met a non-finite value or an add out of bounds */
  lv_recorder rec;  /* capture: the add sequence, cached (linsol/recorder.h) */
  /* the model whose G, H or Z callback (vkind: LV_MX_G, LV_MX_HESSIAN,
   * LV_MX_CURVATURE), or the space whose tangent (vkind -1), made the recording (rec.version
   * vver): lv_spm_constraint_jac, lv_spm_model_matrix and lv_spm_tangent
   * then take that source's values into the slots */
  const void *vsrc;
  int vkind;
  long vver;
  /* transposes and products: the operands and versions the pattern was built from */
  const lv_spm *opA, *opB;
  long verA, verB;
  int *perm;   /* transpose: slot in this matrix of each operand slot; gathered (below): the
                * operand's slot of each slot of this matrix */
  int gather;  /* a transpose pattern (lv_spm_transpose_pattern): no values of its own */
  double *acc; /* product: dense accumulator of one row (ncols) */
  int *mark;
  /* lv_spm_share_acc: a caller's accumulator of acc_len entries, used as acc
   * (and not freed) by a product of at most acc_len columns */
  double *acc_ext;
  int acc_len;
  /* lv_spm_product_put of a large product keeps no pattern (rp, ci NULL):
   * each row's columns are marked (tmark, ncols bytes, zero between rows)
   * and listed (list, room for the longest row) as the row is summed */
  unsigned char *tmark;
  int *list;
  /* lv_spm_product_put of a small product (at most LV_SPM_PLAN_MAX
   * multiply-adds): slot s of C sums the terms t = pl_p[s] .. pl_p[s+1]-1,
   * A's entry pl_a[t] times B's value pl_b[t] (through the transpose map
   * when B is a transpose pattern) times dg[pl_k[t]], in the order the row
   * accumulation adds them */
  int *pl_p, *pl_a, *pl_b, *pl_k;
};

enum { LV_SPM_PLAN_MAX = 1 << 12 };

/* An empty nrows x ncols matrix (no allocation yet). */
void lv_spm_init(lv_spm *A, int nrows, int ncols);
void lv_spm_free(lv_spm *A);
/* Product C takes @p acc (@p len doubles, all zero) as its row accumulator
 * instead of one of its own when it has at most @p len columns.  Every
 * product leaves its accumulator zero, so the products of one stepper,
 * formed one after the other, can share one (EM and the VI schemes: five
 * to eight d-vectors fewer, 12 MB on the chain at N = 1e5).  Set after
 * lv_spm_init; acc must outlive C's products. */
void lv_spm_share_acc(lv_spm *C, double *acc, int len);

/* Capture a callback's entries: lv_spm_begin returns the sink to pass to
 * the callback, lv_spm_end merges them into the matrix (same position
 * sequence as the pattern: values only; otherwise a new pattern). */
lv_sink *lv_spm_begin(lv_spm *A);
int lv_spm_end(lv_spm *A, int callback_status);

/* An empty matrix in a grouped layout (@p by_col: LV_SPM_BY_COL, else
 * LV_SPM_BY_ROW); its shape is set by lv_spm_fill.  Grouped matrices are
 * for the lv_blk sinks, lv_spm_seq_matvec and their group arrays, not for
 * lv_spm_transpose / lv_spm_product / lv_spm_put (LV_EINPUT). */
void lv_spm_init_grouped(lv_spm *A, int by_col);

/* Capture @p fn's entries into @p A, nrows x ncols as the callback sees
 * them: lv_spm_end(A, fn(ctx, lv_spm_begin(A))).  A merged matrix must keep
 * its shape (LV_EINPUT); a grouped one takes the new shape (a new key count:
 * a new pattern). */
typedef int (*lv_spm_fill_fn)(void *ctx, lv_sink *s);
int lv_spm_fill(lv_spm *A, int nrows, int ncols, lv_spm_fill_fn fn, void *ctx);

/* The captures every scheme repeats at its moving points, each a
 * lv_spm_fill of one callback: G(q) of the model's constraints (k x d),
 * the mass matrix M(q) (d x d), the space's tangent operator T(w)
 * (nv x nv). */
int lv_spm_constraint_jac(const lv_model *m, const double *q, lv_spm *G);
/* lv_spm_fill of a model matrix of lv_model_matrix_flagged (which, at t, q,
 * v; x: gamma or w) without the finiteness wrapper per entry: the capture
 * flags a non-finite value and the checked evaluator names it. */
int lv_spm_model_matrix(lv_spm *A, int nrows, int ncols, const lv_model *m, int which, double t, const double *q,
                        const double *v, const double *x);
int lv_spm_mass_matrix(const lv_model *m, const double *q, lv_spm *M);
/* lv_spm_mass_matrix unless *valid says M already holds it; then *valid =
 * keep (the scheme's "M is constant": captured once and replayed, else
 * captured again at the next call).  Inline: the schemes ask at every
 * residual. */
static inline int lv_spm_mass_matrix_once(const lv_model *m, const double *q, lv_spm *M, int *valid, int keep) {
  if (*valid) return 0;
  LV_CHECK(lv_spm_mass_matrix(m, q, M));
  *valid = keep;
  return 0;
}
int lv_spm_tangent(const lv_space *sp, const double *w, lv_spm *T);

/* T = A^T, C = A B (pattern rebuilt only when an operand's changed). */
int lv_spm_transpose(lv_spm *T, const lv_spm *A);
int lv_spm_product(lv_spm *C, const lv_spm *A, const lv_spm *B);

/* The pattern of T = A^T without values: each of T's slots maps to its
 * entry of A (perm), whose values are read there -- by
 * lv_spm_product_put_diag only.  Rebuilt only when A's pattern changed.
 * 8 bytes per entry fewer than lv_spm_transpose while T serves as a right
 * factor only. */
int lv_spm_transpose_pattern(lv_spm *T, const lv_spm *A);

/* Free the values of a transpose or product of at least
 * LV_RECORDER_KEEP_POS entries (nothing for a capture or a smaller
 * matrix); its next lv_spm_transpose / lv_spm_product makes them again,
 * the pattern kept.  For the operands that serve one Newton matrix's
 * assembly only: 8 bytes per entry fewer while the matrix is factorised. */
void lv_spm_drop_values(lv_spm *C);

/* lv_spm_put(S, r0, c0, A B, scale, rowscale, 0) without keeping the
 * values of A B: @p C holds the product's pattern (rebuilt as by
 * lv_spm_product) and one row of values at a time.  The same bits as
 * lv_spm_product then lv_spm_put, 8 bytes per entry of A B less for a
 * product that serves that one term only.  A product of at least
 * LV_RECORDER_KEEP_POS multiply-adds keeps no pattern either: each row's
 * columns are collected as the row is summed (the same columns and bits,
 * in the order first touched; 4 bytes per entry and per row less, e.g. 200
 * bytes per particle of the chain under VI-A and EM, for a mark and a
 * test per multiply-add).  Status as lv_spm_put. */
int lv_spm_product_put(lv_assembly *S, int r0, int c0, lv_spm *C, const lv_spm *A, const lv_spm *B, double scale,
                       const double *rowscale);

/* lv_spm_product_put(S, r0, c0, C, A, diag(dg) B, scale, rowscale) without
 * forming diag(dg) B: row k of B times dg[k] as it is used, the same bits
 * as lv_spm_product of the diagonal lv_spm then lv_spm_product_put (a
 * diagonal M^-1 times G^T or H: its values and pattern, 12 bytes per entry,
 * not kept).  @p B may be a transpose pattern (lv_spm_transpose_pattern,
 * current); @p dg NULL: B itself.  Status as lv_spm_put. */
int lv_spm_product_put_diag(lv_assembly *S, int r0, int c0, lv_spm *C, const lv_spm *A, const double *dg,
                            const lv_spm *B, double scale, const double *rowscale);

/* The values of a diagonal square matrix (its pattern exactly the
 * diagonal, entry i in slot i), else NULL. */
const double *lv_spm_diag_values(const lv_spm *A);

/* The d x d identity (sparse). */
int lv_spm_identity(lv_spm *A, int d);

/* y = alpha A x (+ y if @p acc); y = alpha A^T x (+ y if @p acc);
 * y += |A| |x| (rounding scales).  x and y must not alias. */
void lv_spm_matvec(const lv_spm *A, double alpha, const double *x, int acc, double *y);
void lv_spm_matvec_t(const lv_spm *A, double alpha, const double *x, int acc, double *y);
void lv_spm_absmatvec(const lv_spm *A, const double *x, double *y);

/* Write the term scale * A (or scale * A^T if @p transpose), row r of the
 * block also times rowscale[r] if @p rowscale is not NULL, at (r0, c0) of
 * the assembly @p S: every pattern entry once, zeros too (the position
 * sequence is the pattern's), in row order of A.  Each value is formed as
 * (scale * rowscale[r]) * a, so that terms summed into one position give
 * the same bits whatever the back-end.  Status: LV_EINPUT (the block does
 * not fit), LV_ENOMEM. */
int lv_spm_put(lv_assembly *S, int r0, int c0, const lv_spm *A, double scale, const double *rowscale,
               int transpose);

/* The constant mass matrix M of @p m at @p q into @p M, and its inverse into
 * @p Mi, formed block by block over the connected components of M's pattern
 * (a diagonal M gives a diagonal Mi; a block-diagonal one, e.g. rigid
 * bodies in director coordinates, its block inverses).  diag receives
 * diag(M).  Status: LV_EINPUT (a diagonal entry not positive), LV_ESINGULAR
 * (a singular block), LV_ENOTIMPL (a block larger than @p maxblock: M^-1
 * is not sparse, the caller should assemble densely), LV_ENOMEM. */
int lv_spm_mass(const lv_model *m, const double *q, int maxblock, lv_spm *M, lv_spm *Mi, double *diag);

/* y += A x (transposed: y += A^T x) over the last capture's adds in call
 * order (the callback's own summation order; any layout). */
static inline void lv_spm_seq_matvec(const lv_spm *A, const double *x, double *y, int transposed) {
  const int *pi = A->rec.ri, *pj = A->rec.rj;
  const double *tv = A->rec.cv;
  size_t n = A->rec.rcnt;
  if (transposed)
    for (size_t c = 0; c < n; c++) y[pj[c]] += tv[c] * x[pi[c]];
  else
    for (size_t c = 0; c < n; c++) y[pi[c]] += tv[c] * x[pj[c]];
}

/* Sink for one block of the Newton matrix: entry (i, j, v) of the block
 * becomes scale * v at (r0 + i, c0 + j) (transposed: (r0 + j, c0 + i)), or,
 * with a right factor F (grouped by row), the entries scale * v * F(j, l)
 * at (r0 + i, c0 + l): the product of the block with F (the tangent
 * operator, or B_n^T). */
typedef struct {
  lv_sink sink;
  lv_assembly *A;
  int r0, c0, transpose;
  double scale;
  const lv_spm *F;
  int bad; /* a non-finite value or an entry outside the block was added */
  const double *rowscale; /* lv_blk_rows: row i of the block also times rowscale[i] */
  double *D0;             /* lv_blk_rows on the dense back-end: the block's (0, 0) in A->D */
} lv_blk_sink;

/* The dense back-end's adds written out: the same values added to the same
 * entries of D in the same order as through lv_assembly_add, the
 * finiteness test one sum per call instead of a branch per add (x - x is
 * +0 for a finite x, NaN otherwise). */
LV_ALWAYS_INLINE void lv_blk_put_dense(lv_assembly *A, int r0, int c0, int transpose, const lv_spm *F, int i, int j,
                                    double v) {
  const size_t n = (size_t)A->n;
  if (F) {
    double *Di = A->D + (size_t)(r0 + i) + (size_t)c0 * n, chk = 0.0;
    const int *ci = F->ci;
    const double *fv = F->val;
    for (int t = F->rp[j], te = F->rp[j + 1]; t < te; t++) {
      double x = v * fv[t];
      chk += x - x;
      Di[(size_t)ci[t] * n] += x;
    }
    if (chk != 0.0) A->nonfinite = 1;
    return;
  }
  if (!isfinite(v)) A->nonfinite = 1;
  if (transpose)
    A->D[(size_t)(r0 + j) + (size_t)(c0 + i) * n] += v;
  else
    A->D[(size_t)(r0 + i) + (size_t)(c0 + j) * n] += v;
}

LV_ALWAYS_INLINE void lv_blk_put(lv_assembly *A, int r0, int c0, double scale, int transpose, const lv_spm *F,
                              int i, int j, double v) {
  v *= scale;
  if (A->dense) {
    lv_blk_put_dense(A, r0, c0, transpose, F, i, j, v);
    return;
  }
  if (F) {
    for (int t = F->rp[j]; t < F->rp[j + 1]; t++) lv_assembly_add(A, r0 + i, c0 + F->ci[t], v * F->val[t]);
  } else if (transpose) {
    lv_assembly_add(A, r0 + j, c0 + i, v);
  } else {
    lv_assembly_add(A, r0 + i, c0 + j, v);
  }
}

int lv_blk_add(lv_sink *s, int i, int j, double v); /* the sink's add */
int lv_blk_add_dense(lv_sink *s, int i, int j, double v); /* the same on the dense back-end */
/* their lv_sink_add_block: the adds of the block's entries in its order,
 * without a call per entry */
int lv_blk_add_block(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda);
int lv_blk_add_block_dense(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda);

static inline lv_sink *lv_blk(lv_blk_sink *b, lv_assembly *A, int r0, int c0, int nrows, int ncols, double scale,
                              int transpose, const lv_spm *F) {
  /* every other field zero, without a memset call */
  *b = (lv_blk_sink){.sink = {.add = A->dense ? lv_blk_add_dense : lv_blk_add, .nrows = nrows, .ncols = ncols,
                              .scale = 1.0, .add_block = A->dense ? lv_blk_add_block_dense : lv_blk_add_block},
                     .A = A, .r0 = r0, .c0 = c0, .transpose = transpose, .scale = scale, .F = F};
  return &b->sink;
}

/* Sink for one block whose row i is also scaled by rowscale[i]: entry
 * (i, j, v) becomes (scale * rowscale[i]) * v at (r0 + i, c0 + j), the
 * value lv_spm_put(A, r0, c0, X, scale, rowscale, 0) writes for an entry v
 * of a captured X.  For a model matrix that enters the Newton matrix as
 * that one term (VI-A's d2V and H(q; a), the momentum rows scaled by
 * D^-1): written as the callback adds it, without a capture and a put
 * (a position the callback adds twice gets two terms instead of their
 * sum: the same matrix up to round-off). */
int lv_blk_add_rows(lv_sink *s, int i, int j, double v);
int lv_blk_add_rows_dense(lv_sink *s, int i, int j, double v); /* the same on the dense back-end, rowscale set */
int lv_blk_add_block_rows(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda);
int lv_blk_add_block_rows_dense(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda);
static inline lv_sink *lv_blk_rows(lv_blk_sink *b, lv_assembly *A, int r0, int c0, int nrows, int ncols,
                                   double scale, const double *rowscale) {
  int dn = A->dense && rowscale;
  *b = (lv_blk_sink){.sink = {.add = dn ? lv_blk_add_rows_dense : lv_blk_add_rows, .nrows = nrows, .ncols = ncols,
                              .scale = 1.0, .add_block = dn ? lv_blk_add_block_rows_dense : lv_blk_add_block_rows},
                     .A = A, .r0 = r0, .c0 = c0, .scale = scale, .rowscale = rowscale,
                     .D0 = dn ? A->D + (size_t)r0 + (size_t)c0 * (size_t)A->n : NULL};
  return &b->sink;
}

/* The adds (ri[c], rj[c], cv[c]), c < cnt, in order into a block of the
 * Newton matrix, as lv_blk_put each (the call-order sequence of a capture,
 * or of BLieDF's own recorder).  On the dense back-end the branches and
 * F's arrays are taken out of the loop and the finiteness flag is one sum
 * (x - x is +0 for a finite x): the same values added to the same entries
 * in the same order. */
static inline void lv_blk_adds(lv_assembly *A, const int *ri, const int *rj, const double *cv, size_t cnt, int r0,
                               int c0, double scale, int transpose, const lv_spm *F) {
  if (A->dense && !F) {
    const size_t n = (size_t)A->n, rs = transpose ? n : 1, cs = transpose ? 1 : n; /* strides of i and j */
    double *D0 = A->D + (size_t)r0 + (size_t)c0 * n, chk = 0.0;
    for (size_t c = 0; c < cnt; c++) {
      double x = scale * cv[c];
      chk += x - x;
      D0[(size_t)ri[c] * rs + (size_t)rj[c] * cs] += x;
    }
    if (chk != 0.0) A->nonfinite = 1;
    return;
  }
  if (A->dense) { /* F's row rj[c] times the entry, at row ri[c] (transpose plays no part, as in lv_blk_put) */
    const size_t n = (size_t)A->n;
    double *D0 = A->D + (size_t)r0 + (size_t)c0 * n, chk = 0.0;
    const int *fp = F->rp, *fc = F->ci;
    const double *fv = F->val;
    for (size_t c = 0; c < cnt; c++) {
      double v = scale * cv[c], *Di = D0 + ri[c];
      for (int t = fp[rj[c]], te = fp[rj[c] + 1]; t < te; t++) {
        double x = v * fv[t];
        chk += x - x;
        Di[(size_t)fc[t] * n] += x;
      }
    }
    if (chk != 0.0) A->nonfinite = 1;
    return;
  }
  for (size_t c = 0; c < cnt; c++) lv_blk_put(A, r0, c0, scale, transpose, F, ri[c], rj[c], cv[c]);
}

/* The same for a matrix already captured (no callback): its last capture's
 * adds in call order. */
static inline void lv_blk_seq(lv_assembly *A, const lv_spm *M, int r0, int c0, double scale, int transpose,
                              const lv_spm *F) {
  const lv_recorder *r = &M->rec;
  lv_blk_adds(A, r->ri, r->rj, r->cv, r->rcnt, r0, c0, scale, transpose, F);
}

#endif
