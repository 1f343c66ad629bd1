/* Small sparse-matrix kit of the schemes' Newton-matrix assembly (internal,
 * not installed).  It lives with the schemes: it captures model callbacks
 * (model layer) and writes into the solver's assembly (linsol layer).
 *
 * The VI and EM schemes reduce their discrete equations to d+2m unknowns,
 * so their Newton matrices contain products such as H M^-1 H, H M^-1 G^T,
 * G M^-1 G^T of model matrices.  Formed densely they cost O(d^3) per
 * Newton iteration; here each factor is captured from its model callback
 * into a CSR matrix whose pattern is learnt once (the callback's position
 * sequence is fixed by the sink contract of lv_model.h), products and
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
 * matrix. */
#ifndef LIVENS_SPMAT_H
#define LIVENS_SPMAT_H

#include "lv_internal.h"
#include "linsol/assembly.h"

typedef struct lv_spm lv_spm;
struct lv_spm {
  lv_sink sink; /* capture sink (first member: the add callback casts back) */
  int nrows, ncols;
  int nnz;          /* merged positions */
  int *rp, *ci;     /* CSR: row i holds slots rp[i] .. rp[i+1]-1, columns ascending */
  double *val;
  long version;     /* changes whenever the pattern does; 0: no pattern yet */
  /* capture: the add sequence of the running capture, and of the pattern */
  int *ti, *tj;
  double *tv;
  size_t tcnt, tcap;
  int *pi, *pj, *map; /* recorded positions, and the slot each add lands in */
  size_t pcnt;
  int match, bad;
  /* transposes and products: the operands and versions the pattern was built from */
  const lv_spm *opA, *opB;
  long verA, verB;
  int *perm;   /* transpose: slot in this matrix of each operand slot */
  double *acc; /* product: dense accumulator of one row (ncols) */
  int *mark;
};

/* An empty nrows x ncols matrix (no allocation yet). */
void lv_spm_init(lv_spm *A, int nrows, int ncols);
void lv_spm_free(lv_spm *A);

/* Capture a callback's entries: lv_spm_begin returns the sink to pass to
 * the callback, lv_spm_end merges them into the matrix (same position
 * sequence as the pattern: values only; otherwise a new pattern). */
lv_sink *lv_spm_begin(lv_spm *A);
int lv_spm_end(lv_spm *A, int callback_status);

/* G(q) of the model's constraints captured into G (k x d): the capture
 * every scheme on the sparse path repeats at its moving points. */
int lv_spm_constraint_jac(const lv_model *m, const double *q, lv_spm *G);

/* T = A^T, C = A B (pattern rebuilt only when an operand's changed). */
int lv_spm_transpose(lv_spm *T, const lv_spm *A);
int lv_spm_product(lv_spm *C, const lv_spm *A, const lv_spm *B);

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

#endif
