/* Internal definition of lv_linsol, shared by the front end (linsol.c) and
 * the back-ends (dense.c, umfpack.c).  Not installed. */
#ifndef LIVENS_LINSOL_IMPL_H
#define LIVENS_LINSOL_IMPL_H

#include "lv_internal.h"
#include "assembly.h"

typedef struct lv_dense_data lv_dense_data;
typedef struct lv_umf_data lv_umf_data;
typedef struct lv_klu_data lv_klu_data;

struct lv_linsol {
  lv_linsol_kind kind; /* back-end, never LV_LINSOL_AUTO; LV_LINSOL_SPARSE
                         until the first factorisation chooses */
  int n;
  /* The matrix being assembled: dense array or CSC pattern, as the back-end
   * chose at creation (assembly.h).  Its nonfinite flag (a NaN/Inf was added
   * since the last begin) makes factor fail with LV_ENONFINITE even for a
   * caller ignoring the add() status, instead of factorising garbage. */
  lv_assembly as;
  /* The last lv_linsol_factor succeeded; solve refuses to run otherwise, so a
   * failed factorisation can never be used by accident.  A begin() does not
   * clear it: modified Newton may keep solving with an older factorisation
   * while the next matrix is being assembled. */
  int factored;
  double rcond; /* of the last factorisation attempt, 0 if unknown */
  /* Dense, small path: the matrix of the last factorisation, whose 1-norm a
   * later rcond may still need, is as.D itself, not yet kept by the
   * back-end (lv_dense_keep_a0 before the assembly changes). */
  int a0_in_as;
  lv_linsol_stats stats;
  union {
    lv_dense_data *dense;
    lv_umf_data *umf;
    lv_klu_data *klu;
  } be;
};

/* Back-end entry points.  The front end owns the assembly (ls->as) and has
 * already validated the indices, the finiteness of the values and the
 * factored state; factor reads the assembly (after lv_assembly_finish for
 * a sparse one), and the back-ends update ls->rcond and ls->stats
 * themselves. */
int lv_dense_create(lv_linsol *ls);
void lv_dense_destroy(lv_linsol *ls);
int lv_dense_factor(lv_linsol *ls);
double lv_dense_rcond(lv_linsol *ls);
int lv_dense_solve(lv_linsol *ls, double *b);
/* ls->a0_in_as: the factorised matrix moves from as.D to the back-end, by
 * exchanging the two arrays (swap: a begin() zeroes as.D next) or by a copy. */
void lv_dense_keep_a0(lv_linsol *ls, int swap);
/* The small dense kernels' instruction set on x86-64 (GCC): -1 not asked
 * yet, 0 SSE2, 1 AVX (the same bits either way).  Tests set it to compare
 * the two; nothing else writes it. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define LV_SMALL_AVX 1
extern int lv_dense_small_avx;
#endif

int lv_umf_create(lv_linsol *ls);
void lv_umf_destroy(lv_linsol *ls);
int lv_umf_factor(lv_linsol *ls);
int lv_umf_solve(lv_linsol *ls, double *b);

/* Estimate from KLU's analysis of the assembled pattern alone (values not
 * read, nothing kept): factorisation flops and entries of L + U, for the
 * choice of LV_LINSOL_SPARSE (linsol.c). */
int lv_klu_estimate(const lv_linsol *ls, double *flops, double *lunz);

int lv_klu_create(lv_linsol *ls);
void lv_klu_destroy(lv_linsol *ls);
int lv_klu_factor(lv_linsol *ls);
int lv_klu_solve(lv_linsol *ls, double *b);

#endif
