/* Dense back-end: LAPACK LU with partial pivoting (OpenBLAS).
 *
 * The assembled matrix (ls->as.D) and its factors LU are separate arrays: dgetrf
 * overwrites its input, but matvec must see the assembled values, and a
 * begin()/add() sequence must not destroy a factorisation that modified
 * Newton is still solving with. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <float.h>
#include <stdint.h>
#include "linsol_impl.h"

#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int num_threads);
#endif

int lv_blas_set_threads(int nthreads) {
  if (nthreads < 1) return LV_EINPUT;
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
  openblas_set_num_threads(nthreads);
  return 0;
#else
  return LV_ENOTIMPL;
#endif
}

/* Fortran LAPACK prototypes.  The trailing size_t is the hidden length of a
 * CHARACTER argument in the gfortran (and ifort) calling convention; reference
 * LAPACK built with gfortran >= 8 may rely on it, and an extra argument is
 * harmless for implementations written in C. */
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda,
                    int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs,
                    const double *a, const int *lda, const int *ipiv, double *b,
                    const int *ldb, int *info, size_t trans_len);
extern void dgecon_(const char *norm, const int *n, const double *a,
                    const int *lda, const double *anorm, double *rcond,
                    double *work, int *iwork, int *info, size_t norm_len);

/* Small-matrix path (issue 18).  For n <= LV_DENSE_SMALL the Newton matrix
 * of a small model (heavy top: 9 x 9, index 2 12 x 12) costs a few
 * hundred flops, and OpenBLAS's dgetrf/dgetrs spent ~8k instructions of
 * driver overhead (argument checks, thread dispatch, blocked recursion) on
 * them per call.  These are dgetf2's and dgetrs's unblocked algorithms
 * written out: right-looking LU with partial pivoting (the first row of
 * largest modulus, as idamax), ipiv 1-based as LAPACK's, so the factors are
 * interchangeable with dgetrf's (dgecon reads them unchanged).
 * Up to n = 32: on four-particle, VI-S, VI-A and EM steps cost 0.69x,
 * 0.78x and 0.81x the instructions of dgetrf's path (callgrind); sizes 1 .. 16 also have unrolled instances (below).  The
 * other rounding of the LU moves single long runs near a stability limit
 * (VI-S at h = 0.04 on four-particle, 86 % of its linear limit, diverges
 * at t = 832 instead of staying bounded to T = 1000); ensembles of
 * perturbed starts behave alike on both paths (test_sweep). */
#define LV_DENSE_SMALL 32

struct lv_dense_data {
  double *LU;  /* dgetrf factors of the last successful factorisation */
  int *ipiv;
  double *work; /* 4n: dgecon workspace, and the solve's scratch vector */
  int *iwork;   /* n: dgecon */
  double anorm; /* 1-norm of the last factorised matrix, for a lazy dgecon */
  double *A0;   /* n <= LV_DENSE_SMALL: the last matrix factorised by the small path */
  int anorm_pending; /* anorm not computed yet: the 1-norm of A0 when dgecon needs it */
};

int lv_dense_create(lv_linsol *ls) {
  size_t n = (size_t)ls->n;
  if (n > SIZE_MAX / sizeof(double) / n) return LV_ENOMEM;
  lv_dense_data *d = lv_calloc(1, sizeof *d);
  if (d == NULL) return LV_ENOMEM;
  d->LU = lv_calloc(n * n, sizeof(double));
  d->ipiv = lv_calloc(n, sizeof(int));
  d->work = lv_calloc(4 * n, sizeof(double));
  d->iwork = lv_calloc(n, sizeof(int));
  if (n <= LV_DENSE_SMALL) d->A0 = lv_calloc(n * n, sizeof(double));
  ls->be.dense = d;
  if (!d->LU || !d->ipiv || !d->work || !d->iwork || (n <= LV_DENSE_SMALL && !d->A0)) {
    lv_dense_destroy(ls);
    return LV_ENOMEM;
  }
  ls->stats.nnz = (long)n * (long)n;
  return 0;
}

void lv_dense_destroy(lv_linsol *ls) {
  lv_dense_data *d = ls->be.dense;
  if (d == NULL) return;
  free(d->LU);
  free(d->ipiv);
  free(d->work);
  free(d->iwork);
  free(d->A0);
  free(d);
  ls->be.dense = NULL;
}


#if defined(__GNUC__)
#define SMALL_INLINE static inline __attribute__((always_inline))
#else
#define SMALL_INLINE static inline
#endif
/* two doubles in one SSE2 / NEON register where GCC's vector extension
 * exists (unaligned loads through memcpy) */
#if defined(__GNUC__)
typedef double small_v2 __attribute__((vector_size(16)));
#define SMALL_V2 small_v2
#endif
#define SMALL_FN(x) small_##x##_any
#define SMALL_UNROLL
#include "linsol/dense_small.h"
#undef SMALL_FN
#undef SMALL_UNROLL
#define SMALL_FN(x) small_##x##_k
#if defined(__GNUC__) && !defined(__clang__)
#define SMALL_UNROLL _Pragma("GCC unroll 16")
#else
#define SMALL_UNROLL
#endif
#include "linsol/dense_small.h"

/* The kernels above instantiated for each n <= 16: with the
 * size a constant the compiler unrolls the short inner loops (a 9 x 9 LU
 * took 1.6k instructions through the generic loops, mostly loop control;
 * the 16 x 16 Newton matrix of VI-A and EM on four particles 11.3k, now
 * 4.5k with the paired updates of small_axpy); the operations and their
 * order are the same for every n, so the factors are the generic kernel's
 * bit for bit. */
#define SMALL_CASES(F, ...) \
  switch (n) {              \
    case 1: F(1, __VA_ARGS__); \
    case 2: F(2, __VA_ARGS__); \
    case 3: F(3, __VA_ARGS__); \
    case 4: F(4, __VA_ARGS__); \
    case 5: F(5, __VA_ARGS__); \
    case 6: F(6, __VA_ARGS__); \
    case 7: F(7, __VA_ARGS__); \
    case 8: F(8, __VA_ARGS__); \
    case 9: F(9, __VA_ARGS__); \
    case 10: F(10, __VA_ARGS__); \
    case 11: F(11, __VA_ARGS__); \
    case 12: F(12, __VA_ARGS__); \
    case 13: F(13, __VA_ARGS__); \
    case 14: F(14, __VA_ARGS__); \
    case 15: F(15, __VA_ARGS__); \
    case 16: F(16, __VA_ARGS__); \
    default: break;         \
  }
_Static_assert(LV_DENSE_SMALL >= 16, "sizes above 16 take the generic kernels");
/* one case of SMALL_CASES: the kernel fn at the constant size N */
#define GETF2_N(N, fn, a, ipiv) return fn(N, a, ipiv)
#define GETRS_N(N, fn, a, ipiv, x) \
  do {                             \
    fn(N, a, ipiv, x);             \
    return;                        \
  } while (0)

/* On x86-64 with GCC, the unrolled kernels once more compiled for AVX:
 * four lanes of the same multiply and subtract (AVX without FMA, and
 * ISO C does not contract), so the factors and solutions are the SSE2
 * kernels' bit for bit with about a third fewer instructions on the 16 x 16
 * Newton matrix of four particles.  Chosen at run time when the CPU and
 * the operating system support AVX (lv_dense_small_avx). */
#ifdef LV_SMALL_AVX
#undef SMALL_FN
#define SMALL_FN(x) small_##x##_avx
typedef double small_v4 __attribute__((vector_size(32)));
#define SMALL_V4 small_v4
#pragma GCC push_options
#pragma GCC target("avx")
#include "linsol/dense_small.h"
/* and the generic loops (17 <= n <= LV_DENSE_SMALL) */
#undef SMALL_FN
#undef SMALL_UNROLL
#define SMALL_FN(x) small_##x##_any_avx
#define SMALL_UNROLL
#include "linsol/dense_small.h"
static int small_getf2_v4(int n, double *restrict a, int *restrict ipiv) {
  SMALL_CASES(GETF2_N, small_getf2_avx, a, ipiv)
  return small_getf2_any_avx(n, a, ipiv);
}
static void small_getrs_v4(int n, const double *restrict a, const int *restrict ipiv, double *restrict x) {
  SMALL_CASES(GETRS_N, small_getrs_avx, a, ipiv, x)
  small_getrs_any_avx(n, a, ipiv, x);
}
#pragma GCC pop_options
#undef SMALL_V4

/* -1 until the first factorisation asks the CPU (racing threads store the
 * same answer) */
int lv_dense_small_avx = -1;

static int small_use_avx(void) {
  int u = __atomic_load_n(&lv_dense_small_avx, __ATOMIC_RELAXED);
  if (u < 0) {
    __builtin_cpu_init();
    u = __builtin_cpu_supports("avx") ? 1 : 0;
    __atomic_store_n(&lv_dense_small_avx, u, __ATOMIC_RELAXED);
  }
  return u;
}
#endif

static int small_getf2(int n, double *restrict a, int *restrict ipiv) {
#ifdef LV_SMALL_AVX
  if (small_use_avx()) return small_getf2_v4(n, a, ipiv);
#endif
  SMALL_CASES(GETF2_N, small_getf2_k, a, ipiv)
  return small_getf2_any(n, a, ipiv);
}
static void small_getrs(int n, const double *restrict a, const int *restrict ipiv, double *restrict x) {
#ifdef LV_SMALL_AVX
  if (small_use_avx()) {
    small_getrs_v4(n, a, ipiv, x);
    return;
  }
#endif
  SMALL_CASES(GETRS_N, small_getrs_k, a, ipiv, x)
  small_getrs_any(n, a, ipiv, x);
}

void lv_dense_keep_a0(lv_linsol *ls, int swap) {
  lv_dense_data *d = ls->be.dense;
  if (swap) {
    double *t = d->A0;
    d->A0 = ls->as.D;
    ls->as.D = t;
  } else {
    memcpy(d->A0, ls->as.D, (size_t)ls->n * (size_t)ls->n * sizeof(double));
  }
  ls->a0_in_as = 0;
}

int lv_dense_factor(lv_linsol *ls) {
  lv_dense_data *d = ls->be.dense;
  const int n = ls->n;
  const size_t nn = (size_t)n * (size_t)n;
  int info = 0;
  ls->stats.numeric++;
  double umin = HUGE_VAL, umax = 0.0;
  d->anorm_pending = 0;
  ls->a0_in_as = 0;
  if (n <= LV_DENSE_SMALL) {
    /* The 1-norm only feeds dgecon, which the pivot screen below makes
     * rare: keep the matrix (the assembly may be restarted while these
     * factors are in use) and sum it when an estimate is asked for.  The
     * assembly holds finite entries only (lv_linsol_factor), so the norm's
     * finiteness test of the LAPACK path is left out here (it fails only
     * when a column's sum overflows).  The matrix stays in the assembly
     * until that changes (ls->a0_in_as): a begin() exchanges the arrays
     * instead of a copy here per factorisation. */
    memcpy(d->LU, ls->as.D, nn * sizeof(double));
    if (!small_getf2(n, d->LU, d->ipiv)) {
      for (int i = 0; i < n; i++) {
        double u = fabs(d->LU[(size_t)i + (size_t)i * (size_t)n]);
        if (u < umin) umin = u;
        if (u > umax) umax = u;
      }
      if (umax > 0 && umin / umax > sqrt(DBL_EPSILON)) {
        d->anorm_pending = 1;
        ls->a0_in_as = 1;
        ls->rcond = -1.0; /* not computed yet */
        return 0;
      }
    }
  }
  /* dgecon needs the 1-norm of the original matrix, which dgetrf destroys. */
  double anorm = 0.0;
  for (int j = 0; j < n; j++) {
    const double *c = ls->as.D + (size_t)j * (size_t)n;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += fabs(c[i]);
    if (s > anorm) anorm = s;
  }
  /* A large matrix, or a bad pivot on the small path: LAPACK decides, with
   * the same screen and dgecon estimate as always. */
  memcpy(d->LU, ls->as.D, nn * sizeof(double));
  dgetrf_(&n, &n, d->LU, &n, d->ipiv, &info);
  if (info < 0) return LV_ELINSOL;
  if (info > 0) return LV_ESINGULAR; /* exactly zero pivot */

  d->anorm = anorm;
  /* dgecon costs several triangular solves: for a small Newton matrix
   * (VI-A on four particles, 16 x 16) it was a third of the whole step.
   * Screen with the O(n) ratio of the extreme pivots first: a matrix that
   * is singular in exact arithmetic leaves a pivot of rounding size, so a
   * ratio above sqrt(eps) clears it, and only a suspicious ratio pays for
   * the estimate.  lv_linsol_rcond computes the estimate on demand. */
  umin = HUGE_VAL;
  umax = 0.0;
  for (int i = 0; i < n; i++) {
    double u = fabs(d->LU[(size_t)i + (size_t)i * (size_t)n]);
    if (u < umin) umin = u;
    if (u > umax) umax = u;
  }
  if (umax > 0 && umin / umax > sqrt(DBL_EPSILON) && isfinite(anorm)) {
    ls->rcond = -1.0; /* not computed yet */
    return 0;
  }
  double rcond = lv_dense_rcond(ls);
  if (rcond < -1.5) return LV_ELINSOL;
  /* A matrix that is singular in exact arithmetic usually leaves a pivot of
   * rounding size rather than an exact zero; its estimated rcond is then
   * O(eps) or less.  The factor n absorbs the growth of rounding errors in
   * the LU of a nonsingular matrix, so that threshold does not reject
   * genuinely (if poorly) conditioned systems.  The negated comparison also
   * catches a NaN estimate. */
  if (!(rcond >= (double)n * DBL_EPSILON)) return LV_ESINGULAR;
  return 0;
}

/* dgecon on the last factorisation; stores and returns the estimate (-2 on
 * a LAPACK argument error). */
double lv_dense_rcond(lv_linsol *ls) {
  lv_dense_data *d = ls->be.dense;
  const int n = ls->n;
  int info = 0;
  double rcond = 0.0;
  if (d->anorm_pending) { /* the small path's matrix, as in lv_dense_factor */
    double anorm = 0.0;
    for (int j = 0; j < n; j++) {
      const double *c = (ls->a0_in_as ? ls->as.D : d->A0) + (size_t)j * (size_t)n;
      double s = 0.0;
      for (int i = 0; i < n; i++) s += fabs(c[i]);
      if (s > anorm) anorm = s;
    }
    d->anorm = anorm;
    d->anorm_pending = 0;
  }
  dgecon_("1", &n, d->LU, &n, &d->anorm, &rcond, d->work, d->iwork, &info, 1);
  if (info != 0) return -2.0;
  ls->rcond = rcond;
  return rcond;
}

int lv_dense_solve(lv_linsol *ls, double *b) {
  lv_dense_data *d = ls->be.dense;
  const int n = ls->n, one = 1;
  int info = 0;
  /* Solve in scratch so that b is only overwritten by a finite solution. */
  memcpy(d->work, b, (size_t)n * sizeof(double));
  ls->stats.solves++;
  if (n <= LV_DENSE_SMALL) {
    small_getrs(n, d->LU, d->ipiv, d->work);
  } else {
    dgetrs_("N", &n, &one, d->LU, &n, d->ipiv, d->work, &n, &info, 1);
    if (info != 0) return LV_ELINSOL;
  }
  if (!lv_all_finite(n, d->work)) return LV_ESINGULAR;
  memcpy(b, d->work, (size_t)n * sizeof(double));
  return 0;
}
