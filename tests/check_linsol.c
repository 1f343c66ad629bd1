/* Check suite of the linear-solver layer: dense and UMFPACK back-ends, the
 * assembly interface (pattern reuse) and the entry sinks. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"
#include "linsol/assembly.h"
#include "linsol/linsol_impl.h"

/* ------------------------------------------------------------------ helpers */

/* A matrix as the sequence of add calls that assembles it. */
typedef struct {
  int n, cnt, cap;
  int *i, *j;
  double *v;
} trip;

static void trip_init(trip *t, int n) {
  t->n = n;
  t->cnt = 0;
  t->cap = 16;
  t->i = malloc((size_t)t->cap * sizeof(int));
  t->j = malloc((size_t)t->cap * sizeof(int));
  t->v = malloc((size_t)t->cap * sizeof(double));
  ck_assert(t->i && t->j && t->v);
}

static void trip_add(trip *t, int i, int j, double v) {
  if (t->cnt == t->cap) {
    t->cap *= 2;
    t->i = realloc(t->i, (size_t)t->cap * sizeof(int));
    t->j = realloc(t->j, (size_t)t->cap * sizeof(int));
    t->v = realloc(t->v, (size_t)t->cap * sizeof(double));
    ck_assert(t->i && t->j && t->v);
  }
  t->i[t->cnt] = i;
  t->j[t->cnt] = j;
  t->v[t->cnt] = v;
  t->cnt++;
}

static void trip_free(trip *t) {
  free(t->i);
  free(t->j);
  free(t->v);
}

/* y = A x computed straight from the add sequence: the reference that
 * lv_linsol_matvec is checked against. */
static void trip_matvec(const trip *t, const double *x, double *y) {
  for (int r = 0; r < t->n; r++) y[r] = 0.0;
  for (int k = 0; k < t->cnt; k++) y[t->i[k]] += t->v[k] * x[t->j[k]];
}

enum {
  SADDLE_DUP_ROW = 1, /* constraint row 1 := constraint row 0 */
  SADDLE_COMB_ROW = 2 /* constraint row 2 := row 0 - 0.75 row 1 (N >= 9) */
};

/* Saddle-point matrix [[A, B^T], [B, 0]] of total size N with m = N/3
 * constraints.  A is symmetric, strictly diagonally dominant with diagonal
 * >= 1 + off-diagonal row sum (so SPD with eigenvalues >= 1); row r of B has
 * an entry of magnitude >= 2 in a column of its own and two entries of
 * magnitude <= 0.4 elsewhere, so the square submatrix of B on those columns
 * is diagonally dominant and B has full rank.  The structure depends on
 * @p sseed only and the values on @p vseed only, so two calls with the same
 * sseed produce the same add sequence with different values.  Diagonal
 * entries of A are added in two halves to exercise duplicate summation. */
static trip saddle(int N, unsigned long long sseed, unsigned long long vseed,
                   int flags) {
  unsigned long long s = tu_seed(sseed), r = tu_seed(vseed);
  int m = N / 3, nx = N - m;
  trip t;
  trip_init(&t, N);
  double *rowsum = calloc((size_t)nx, sizeof(double));
  int *col = malloc((size_t)nx * sizeof(int));
  ck_assert(rowsum && col);

  for (int i = 0; i < nx; i++) {
    for (int e = 0; e < 2; e++) {
      int j = tu_randint(&s, nx);
      if (j == i) continue;
      double v = 0.5 * tu_rand(&r);
      trip_add(&t, i, j, v);
      trip_add(&t, j, i, v);
      rowsum[i] += fabs(v);
      rowsum[j] += fabs(v);
    }
  }
  for (int i = 0; i < nx; i++) {
    double d = rowsum[i] + 1.0 + fabs(tu_rand(&r));
    trip_add(&t, i, i, 0.5 * d);
    trip_add(&t, i, i, 0.5 * d);
  }

  for (int i = 0; i < nx; i++) col[i] = i;
  for (int i = nx - 1; i > 0; i--) {
    int k = tu_randint(&s, i + 1), tmp = col[i];
    col[i] = col[k];
    col[k] = tmp;
  }
  int c0[3], c1[3];
  double v0[3], v1[3];
  for (int q = 0; q < m; q++) {
    int c[3];
    double v[3];
    if ((flags & SADDLE_DUP_ROW) && q == 1) {
      memcpy(c, c0, sizeof c);
      memcpy(v, v0, sizeof v);
    } else {
      double d = 2.0 + fabs(tu_rand(&r));
      c[0] = col[q];
      v[0] = tu_rand(&r) < 0 ? -d : d;
      for (int e = 1; e < 3; e++) {
        c[e] = tu_randint(&s, nx);
        v[e] = 0.4 * tu_rand(&r);
      }
    }
    if (q == 0) {
      memcpy(c0, c, sizeof c);
      memcpy(v0, v, sizeof v);
    }
    if (q == 1) {
      memcpy(c1, c, sizeof c);
      memcpy(v1, v, sizeof v);
    }
    if ((flags & SADDLE_COMB_ROW) && q == 2) {
      /* Added entry by entry, so coinciding columns are summed with
       * rounding: the matrix is singular only up to O(eps), which is what
       * a dependent constraint looks like in floating point. */
      for (int e = 0; e < 3; e++) {
        trip_add(&t, nx + q, c0[e], v0[e]);
        trip_add(&t, c0[e], nx + q, v0[e]);
        trip_add(&t, nx + q, c1[e], -0.75 * v1[e]);
        trip_add(&t, c1[e], nx + q, -0.75 * v1[e]);
      }
      continue;
    }
    for (int e = 0; e < 3; e++) {
      trip_add(&t, nx + q, c[e], v[e]);
      trip_add(&t, c[e], nx + q, v[e]);
    }
  }
  free(rowsum);
  free(col);
  return t;
}

static void assemble(lv_linsol *ls, const trip *t) {
  ck_assert_int_eq(lv_linsol_begin(ls), 0);
  for (int k = 0; k < t->cnt; k++)
    ck_assert_int_eq(lv_linsol_add(ls, t->i[k], t->j[k], t->v[k]), 0);
}

static double *rand_vec(int n, unsigned long long seed) {
  unsigned long long s = tu_seed(seed);
  double *x = malloc((size_t)n * sizeof(double));
  ck_assert_ptr_nonnull(x);
  for (int i = 0; i < n; i++) x[i] = tu_rand(&s);
  return x;
}

static lv_linsol *new_solver(lv_linsol_kind kind, int n) {
  lv_linsol *ls = NULL;
  ck_assert_int_eq(lv_linsol_new(&ls, kind, n, 0), 0);
  ck_assert_ptr_nonnull(ls);
  return ls;
}

/* Assemble t into a fresh solver of the given kind, factor and solve for b;
 * returns x (caller frees). */
static double *solve_with(lv_linsol_kind kind, const trip *t, const double *b) {
  lv_linsol *ls = new_solver(kind, t->n);
  assemble(ls, t);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  double *x = malloc((size_t)t->n * sizeof(double));
  ck_assert_ptr_nonnull(x);
  memcpy(x, b, (size_t)t->n * sizeof(double));
  ck_assert_int_eq(lv_linsol_solve(ls, x), 0);
  lv_linsol_free(ls);
  return x;
}

/* every test below runs on every back-end: one singularity rule for all */
#define NKINDS 3
static const lv_linsol_kind kinds[NKINDS] = {LV_LINSOL_DENSE, LV_LINSOL_UMFPACK, LV_LINSOL_KLU};

/* ------------------------------------------- 1. dense and UMFPACK agree */

static const int agree_sizes[] = {5, 10, 50, 200, 1000, 2000};

START_TEST(test_dense_umfpack_agree) {
  const int N = agree_sizes[_i];
  trip t = saddle(N, 1000 + (unsigned)N, 2000 + (unsigned)N, 0);
  double *b = rand_vec(N, 77 + (unsigned)N);
  double *y = malloc((size_t)N * sizeof(double));
  double *yref = malloc((size_t)N * sizeof(double));
  double *x[NKINDS];
  ck_assert(y && yref);

  for (int s = 0; s < NKINDS; s++) {
    lv_linsol *ls = new_solver(kinds[s], N);
    ck_assert_int_eq(lv_linsol_kind_of(ls), kinds[s]);
    assemble(ls, &t);
    ck_assert_int_eq(lv_linsol_factor(ls), 0);
    ck_assert(lv_linsol_rcond(ls) > 0.0);
    x[s] = malloc((size_t)N * sizeof(double));
    ck_assert_ptr_nonnull(x[s]);
    memcpy(x[s], b, (size_t)N * sizeof(double));
    ck_assert_int_eq(lv_linsol_solve(ls, x[s]), 0);

    /* matvec must reproduce the assembled matrix (duplicates summed) ... */
    ck_assert_int_eq(lv_linsol_matvec(ls, x[s], y), 0);
    trip_matvec(&t, x[s], yref);
    ck_assert_double_le(tu_rel_err(N, y, yref), 1e-14);
    /* ... and then the residual of the solution is meaningful. */
    double res = tu_rel_err(N, y, b);
    /* KLU's threshold pivoting (tol 1e-3, chosen for sparsity) without
     * refinement is less accurate on these random saddle matrices: measured
     * residuals 1.6e-10, 1.3e-6, 4.6e-8 at N = 200, 1000, 2000 where dense
     * LU and UMFPACK stay below 1e-10.  Its bound says what it reaches. */
    double bound = kinds[s] == LV_LINSOL_KLU ? 1e-5 : 1e-10;
    ck_assert_msg(res < bound, "%s N=%d: residual %g", lv_linsol_kind_name(kinds[s]), N, res);

    lv_linsol_stats st;
    lv_linsol_get_stats(ls, &st);
    ck_assert_int_eq(st.numeric, 1);
    ck_assert_int_eq(st.solves, 1);
    lv_linsol_free(ls);
  }
  for (int s = 1; s < NKINDS; s++) {
    double d = tu_rel_err(N, x[s], x[0]);
    double dmax = kinds[s] == LV_LINSOL_KLU ? 1e-5 : 1e-12;
    ck_assert_msg(d < dmax, "N=%d: dense vs %s %g", N, lv_linsol_kind_name(kinds[s]), d);
  }

  for (int s = 0; s < NKINDS; s++) free(x[s]);
  free(y);
  free(yref);
  free(b);
  trip_free(&t);
}
END_TEST

/* ----------------------------------------------------- 2. singular matrices */

/* 6x6 matrix whose row 3 is zero: either absent from the pattern or present
 * with explicit zero values (a numerically, not structurally, zero row). */
static trip zero_row(int explicit_zeros) {
  trip t;
  trip_init(&t, 6);
  for (int i = 0; i < 6; i++) {
    if (i == 3) {
      if (explicit_zeros) {
        trip_add(&t, 3, 3, 0.0);
        trip_add(&t, 3, 1, 0.0);
      }
      continue;
    }
    trip_add(&t, i, i, 2.0 + i);
    trip_add(&t, i, (i + 1) % 6, 0.5);
  }
  return t;
}

/* Factor must fail with LV_ESINGULAR, and solve must then refuse without
 * touching b -- even though an older, valid factorisation exists. */
static void check_singular(lv_linsol_kind kind, const trip *bad) {
  const int N = bad->n;
  trip good = saddle(N, 5, 6, 0);
  lv_linsol *ls = new_solver(kind, N);
  assemble(ls, &good);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);

  assemble(ls, bad);
  int rc = lv_linsol_factor(ls);
  ck_assert_msg(rc == LV_ESINGULAR, "%s: factor returned %s", lv_linsol_kind_name(kind),
                lv_status_name(rc));
  ck_assert(lv_linsol_rcond(ls) < 1e-15);

  double *b = rand_vec(N, 9);
  double *b0 = malloc((size_t)N * sizeof(double));
  ck_assert_ptr_nonnull(b0);
  memcpy(b0, b, (size_t)N * sizeof(double));
  ck_assert_int_ne(lv_linsol_solve(ls, b), 0);
  ck_assert_int_eq(memcmp(b, b0, (size_t)N * sizeof(double)), 0);
  /* a second failed factor and solve: still refused */
  ck_assert_int_eq(lv_linsol_factor(ls), LV_ESINGULAR);
  ck_assert_int_ne(lv_linsol_solve(ls, b), 0);
  ck_assert_int_eq(memcmp(b, b0, (size_t)N * sizeof(double)), 0);

  /* recovery: a good matrix factorises again on the same object */
  assemble(ls, &good);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  ck_assert_int_eq(lv_linsol_solve(ls, b), 0);
  ck_assert(tu_norm_inf(N, b) > 0.0);

  free(b);
  free(b0);
  lv_linsol_free(ls);
  trip_free(&good);
}

/* Two identical constraint rows usually cancel exactly (zero pivot); a
 * combination of two rows leaves pivots of rounding size, caught only by the
 * rcond threshold. */
START_TEST(test_singular_dependent_constraints) {
  const int flags[2] = {SADDLE_DUP_ROW, SADDLE_COMB_ROW};
  for (int s = 0; s < NKINDS; s++)
    for (int f = 0; f < 2; f++)
      for (int N = 9; N <= 500; N *= 7) {
        trip t = saddle(N, 31 + (unsigned)N, 32, flags[f]);
        check_singular(kinds[s], &t);
        trip_free(&t);
      }
}
END_TEST

/* The issue-14 reproducer: a 3x3 matrix whose last pivot is one rounding
 * unit (pivot ratio 2.2e-16).  KLU used to accept it while dense LU and
 * UMFPACK rejected it; every back-end must now say LV_ESINGULAR. */
static trip near_singular_3x3(void) {
  trip t;
  trip_init(&t, 3);
  trip_add(&t, 0, 0, 1.0);
  trip_add(&t, 1, 1, 1.0);
  trip_add(&t, 1, 2, 1.0);
  trip_add(&t, 2, 1, 1.0);
  trip_add(&t, 2, 2, 1.0 + DBL_EPSILON);
  return t;
}

START_TEST(test_singular_one_rule) {
  for (int s = 0; s < NKINDS; s++) {
    trip t = near_singular_3x3();
    lv_linsol *ls = new_solver(kinds[s], 3);
    assemble(ls, &t);
    int rc = lv_linsol_factor(ls);
    ck_assert_msg(rc == LV_ESINGULAR, "%s: factor returned %s, rcond %g", lv_linsol_kind_name(kinds[s]),
                  lv_status_name(rc), lv_linsol_rcond(ls));
    lv_linsol_free(ls);
    trip_free(&t);
  }
}
END_TEST

START_TEST(test_singular_zero_row) {
  for (int s = 0; s < NKINDS; s++)
    for (int e = 0; e < 2; e++) {
      trip t = zero_row(e);
      check_singular(kinds[s], &t);
      trip_free(&t);
    }
}
END_TEST

START_TEST(test_solve_before_factor) {
  for (int s = 0; s < 2; s++) {
    lv_linsol *ls = new_solver(kinds[s], 4);
    double b[4] = {1, 2, 3, 4};
    ck_assert_int_eq(lv_linsol_solve(ls, b), LV_EINPUT);
    ck_assert_int_eq(lv_linsol_add(ls, 0, 0, 1.0), 0);
    ck_assert_int_eq(lv_linsol_solve(ls, b), LV_EINPUT);
    ck_assert_double_eq(b[3], 4.0);
    /* an empty pattern is singular, not an error of the back-end */
    ck_assert_int_eq(lv_linsol_begin(ls), 0);
    ck_assert_int_eq(lv_linsol_factor(ls), LV_ESINGULAR);
    lv_linsol_free(ls);
  }
}
END_TEST

/* ------------------------------------------------------- 3. non-finite data */

/* Policy: lv_linsol_add reports a NaN/Inf value at once with LV_ENONFINITE,
 * and -- for callers that ignore add's status -- lv_linsol_factor also
 * returns LV_ENONFINITE until the next lv_linsol_begin.  A non-finite
 * right-hand side makes solve return LV_ENONFINITE and leave b alone. */
/* The BLAS thread control: rejected counts, and with OpenBLAS (what the
 * project installs) it is available; dense results do not depend on it. */
START_TEST(test_blas_threads) {
  ck_assert_int_eq(lv_blas_set_threads(0), LV_EINPUT);
  int rc = lv_blas_set_threads(1);
  ck_assert_msg(rc == 0 || rc == LV_ENOTIMPL, "status %d", rc);
  double x[2][300];
  for (int t = 0; t < 2; t++) {
    if (rc == 0) ck_assert_int_eq(lv_blas_set_threads(t ? 2 : 1), 0);
    lv_linsol *ls;
    int n = 300;
    ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_DENSE, n, 0), 0);
    lv_linsol_begin(ls);
    for (int i = 0; i < n; i++) {
      ck_assert_int_eq(lv_linsol_add(ls, i, i, 4.0 + i % 3), 0);
      if (i > 0) ck_assert_int_eq(lv_linsol_add(ls, i, i - 1, -1.0), 0);
      if (i + 7 < n) ck_assert_int_eq(lv_linsol_add(ls, i, i + 7, 0.5), 0);
    }
    ck_assert_int_eq(lv_linsol_factor(ls), 0);
    for (int i = 0; i < n; i++) x[t][i] = sin(i + 1.0);
    ck_assert_int_eq(lv_linsol_solve(ls, x[t]), 0);
    lv_linsol_free(ls);
  }
  if (rc == 0) lv_blas_set_threads(1);
  for (int i = 0; i < 300; i++) ck_assert_double_eq_tol(x[0][i], x[1][i], 1e-13);
}
END_TEST

/* KLU keeps the pivot order of the last pivot search while the pivots stay
 * good (rcond within 10 of the fresh one), refines the solution when they
 * have degraded (10 .. 10^3), and searches again beyond: on each path the
 * solution agrees with dense LU.  One diagonal entry of a diagonally
 * dominant band matrix is shrunk by 2, 200 and 10^5 (rcond ratios 1.0,
 * 0.03, 8e-6). */
START_TEST(test_klu_kept_pivots) {
  const int n = 200;
  const double shrink[4] = {1.0, 2.0, 200.0, 1e5};
  lv_linsol *klu, *dense;
  ck_assert_int_eq(lv_linsol_new(&klu, LV_LINSOL_KLU, n, 0), 0);
  ck_assert_int_eq(lv_linsol_new(&dense, LV_LINSOL_DENSE, n, 0), 0);
  double rc0 = 0.0;
  for (int c = 0; c < 4; c++) {
    lv_linsol *ls[2] = {klu, dense};
    double x[2][200];
    for (int b = 0; b < 2; b++) {
      lv_linsol_begin(ls[b]);
      for (int i = 0; i < n; i++) {
        double dii = 4.0 + sin(i + 1.0);
        if (i == n / 2) dii /= shrink[c];
        ck_assert_int_eq(lv_linsol_add(ls[b], i, i, dii), 0);
        if (i > 0) ck_assert_int_eq(lv_linsol_add(ls[b], i, i - 1, -1.0 / (1.0 + c)), 0);
        if (i + 3 < n) ck_assert_int_eq(lv_linsol_add(ls[b], i, i + 3, 0.7), 0);
      }
      ck_assert_int_eq(lv_linsol_factor(ls[b]), 0);
      for (int i = 0; i < n; i++) x[b][i] = cos(0.1 * i);
      ck_assert_int_eq(lv_linsol_solve(ls[b], x[b]), 0);
    }
    if (c == 0) rc0 = lv_linsol_rcond(klu);
    double ratio = lv_linsol_rcond(klu) / rc0;
    if (c == 2) ck_assert_msg(ratio > 1e-3 && ratio < 0.1, "refinement path not reached: rcond ratio %g", ratio);
    if (c == 3) ck_assert_msg(ratio < 1e-3, "fresh pivot search not reached: rcond ratio %g", ratio);
    double err = 0.0, xmax = 0.0;
    for (int i = 0; i < n; i++) {
      err = fmax(err, fabs(x[0][i] - x[1][i]));
      xmax = fmax(xmax, fabs(x[1][i]));
    }
    ck_assert_msg(err <= 1e-13 * xmax, "shrink %g (rcond %g of fresh %g): klu - dense = %g", shrink[c],
                  lv_linsol_rcond(klu), rc0, err);
    if (c == 2) {
      /* solve refines against the factorised values also while the next
       * matrix is assembled (modified Newton): after a begin and other
       * values (off the recorded sequence from the second add on), and
       * after a second begin, the same solution bit for bit */
      for (int again = 0; again < 2; again++) {
        lv_linsol_begin(klu);
        for (int i = 0; i < n; i++) ck_assert_int_eq(lv_linsol_add(klu, i, i, 1.0 + i), 0);
        double y[200];
        for (int i = 0; i < n; i++) y[i] = cos(0.1 * i);
        ck_assert_int_eq(lv_linsol_solve(klu, y), 0);
        for (int i = 0; i < n; i++)
          ck_assert_msg(y[i] == x[0][i], "begin %d, row %d: %.17g vs %.17g", again, i, y[i], x[0][i]);
      }
    }
  }
  lv_linsol_stats st;
  lv_linsol_get_stats(klu, &st);
  ck_assert_int_eq(st.symbolic, 1);
  lv_linsol_free(klu);
  lv_linsol_free(dense);
}
END_TEST

START_TEST(test_nonfinite) {
  const double bad[2] = {NAN, INFINITY};
  const int N = 12;
  trip t = saddle(N, 41, 42, 0);
  double *b = rand_vec(N, 43);
  double *x = malloc((size_t)N * sizeof(double));
  ck_assert_ptr_nonnull(x);
  for (int s = 0; s < 2; s++)
    for (int q = 0; q < 2; q++) {
      lv_linsol *ls = new_solver(kinds[s], N);
      assemble(ls, &t);
      ck_assert_int_eq(lv_linsol_factor(ls), 0);
      assemble(ls, &t);
      ck_assert_int_eq(lv_linsol_add(ls, 2, 2, bad[q]), LV_ENONFINITE);
      ck_assert_int_eq(lv_linsol_factor(ls), LV_ENONFINITE);
      memcpy(x, b, (size_t)N * sizeof(double));
      ck_assert_int_ne(lv_linsol_solve(ls, x), 0);
      ck_assert_int_eq(memcmp(x, b, (size_t)N * sizeof(double)), 0);

      /* through a sink too */
      lv_sink root = lv_linsol_sink(ls);
      assemble(ls, &t);
      ck_assert_int_eq(lv_sink_add(&root, 0, 1, bad[q]), LV_ENONFINITE);
      ck_assert_int_eq(lv_linsol_factor(ls), LV_ENONFINITE);

      /* begin clears the condition */
      assemble(ls, &t);
      ck_assert_int_eq(lv_linsol_factor(ls), 0);
      memcpy(x, b, (size_t)N * sizeof(double));
      x[3] = bad[q];
      ck_assert_int_eq(lv_linsol_solve(ls, x), LV_ENONFINITE);
      ck_assert(x[3] != x[3] || isinf(x[3]));
      ck_assert_double_eq(x[4], b[4]);
      memcpy(x, b, (size_t)N * sizeof(double));
      ck_assert_int_eq(lv_linsol_solve(ls, x), 0);
      for (int i = 0; i < N; i++) ck_assert(isfinite(x[i]));
      lv_linsol_free(ls);
    }
  free(x);
  free(b);
  trip_free(&t);
}
END_TEST

/* --------------------------------------------------------- 4. pattern reuse */

static void check_solution(lv_linsol *ls, const trip *t, const double *b) {
  const int N = t->n;
  double *x = malloc((size_t)N * sizeof(double));
  double *y = malloc((size_t)N * sizeof(double));
  ck_assert(x && y);
  memcpy(x, b, (size_t)N * sizeof(double));
  ck_assert_int_eq(lv_linsol_solve(ls, x), 0);
  double *xd = solve_with(LV_LINSOL_DENSE, t, b);
  ck_assert_double_le(tu_rel_err(N, x, xd), 1e-12);
  trip_matvec(t, x, y);
  ck_assert_double_le(tu_rel_err(N, y, b), 1e-12);
  free(xd);
  free(x);
  free(y);
}

START_TEST(test_pattern_reuse) {
  const int N = 60;
  trip t1 = saddle(N, 51, 1, 0);
  trip t2 = saddle(N, 51, 2, 0); /* same positions, new values */
  trip t3 = saddle(N, 52, 3, 0); /* different positions */
  trip t4 = saddle(N, 52, 4, 0);
  double *b = rand_vec(N, 50);
  lv_linsol_stats st;

  lv_linsol *ls = new_solver(LV_LINSOL_UMFPACK, N);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 0);
  ck_assert_int_eq(st.numeric, 0);

  assemble(ls, &t1);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  check_solution(ls, &t1, b);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 1);
  ck_assert_int_eq(st.numeric, 1);
  long nnz1 = st.nnz;
  ck_assert_int_lt(nnz1, t1.cnt); /* the split diagonals were merged */

  assemble(ls, &t2);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  check_solution(ls, &t2, b);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 1);
  ck_assert_int_eq(st.numeric, 2);
  ck_assert_int_eq(st.solves, 2);
  ck_assert_int_eq(st.nnz, nnz1);

  assemble(ls, &t3);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  check_solution(ls, &t3, b);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 2);
  ck_assert_int_eq(st.numeric, 3);
  long nnz3 = st.nnz;

  assemble(ls, &t4); /* the new pattern is now the reference */
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  check_solution(ls, &t4, b);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 2);
  ck_assert_int_eq(st.numeric, 4);

  /* the same add sequence with one extra add at the end: a new pattern, in
   * which the explicit zero is kept (the (2,2) block of a saddle matrix has
   * no entries, so (N-1, N-1) is new) */
  assemble(ls, &t4);
  ck_assert_int_eq(lv_linsol_add(ls, N - 1, N - 1, 0.0), 0);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  check_solution(ls, &t4, b);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 3);
  ck_assert_int_eq(st.nnz, nnz3 + 1);

  /* a prefix of the recorded sequence (one add fewer): also a new pattern */
  assemble(ls, &t4);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 4);
  ck_assert_int_eq(st.nnz, nnz3);
  check_solution(ls, &t4, b);

  /* factoring twice without a new assembly does not re-analyse */
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  lv_linsol_get_stats(ls, &st);
  ck_assert_int_eq(st.symbolic, 4);

  lv_linsol_free(ls);
  free(b);
  trip_free(&t1);
  trip_free(&t2);
  trip_free(&t3);
  trip_free(&t4);
}
END_TEST

/* Positions, not values, define the pattern: an entry added as 0.0 stays,
 * and a later assembly may give it a non-zero value without re-analysis. */
START_TEST(test_pattern_explicit_zero) {
  lv_linsol *ls = new_solver(LV_LINSOL_UMFPACK, 3);
  lv_linsol_stats st;
  double b[3];
  for (int pass = 0; pass < 2; pass++) {
    ck_assert_int_eq(lv_linsol_begin(ls), 0);
    ck_assert_int_eq(lv_linsol_add(ls, 0, 0, 2.0), 0);
    ck_assert_int_eq(lv_linsol_add(ls, 1, 1, 4.0), 0);
    ck_assert_int_eq(lv_linsol_add(ls, 2, 2, 8.0), 0);
    ck_assert_int_eq(lv_linsol_add(ls, 0, 2, pass ? 1.0 : 0.0), 0);
    ck_assert_int_eq(lv_linsol_factor(ls), 0);
    lv_linsol_get_stats(ls, &st);
    ck_assert_int_eq(st.nnz, 4);
    ck_assert_int_eq(st.symbolic, 1);
    b[0] = 2.0 + (pass ? 1.0 : 0.0);
    b[1] = 4.0;
    b[2] = 8.0;
    ck_assert_int_eq(lv_linsol_solve(ls, b), 0);
    for (int i = 0; i < 3; i++) ck_assert_double_eq_tol(b[i], 1.0, 1e-15);
  }
  lv_linsol_free(ls);
}
END_TEST

/* A begin/add sequence does not disturb the last factorisation (modified
 * Newton solves with it while the next matrix is assembled); only the next
 * factor replaces it. */
START_TEST(test_factor_survives_assembly) {
  const int N = 40;
  trip t1 = saddle(N, 61, 1, 0), t2 = saddle(N, 61, 2, 0), t3 = saddle(N, 62, 3, 0);
  double *b = rand_vec(N, 60);
  for (int s = 0; s < 2; s++) {
    lv_linsol *ls = new_solver(kinds[s], N);
    assemble(ls, &t1);
    ck_assert_int_eq(lv_linsol_factor(ls), 0);
    assemble(ls, &t2);
    check_solution(ls, &t1, b);
    assemble(ls, &t3); /* even a different pattern */
    check_solution(ls, &t1, b);
    ck_assert_int_eq(lv_linsol_factor(ls), 0);
    check_solution(ls, &t3, b);
    lv_linsol_free(ls);
  }
  free(b);
  trip_free(&t1);
  trip_free(&t2);
  trip_free(&t3);
}
END_TEST

/* ------------------------------------------------------------------ 5. sinks */

/* Column c of the assembled matrix, through matvec with e_c. */
static void get_dense(lv_linsol *ls, int n, double *A) {
  double *e = calloc((size_t)n, sizeof(double));
  ck_assert_ptr_nonnull(e);
  for (int c = 0; c < n; c++) {
    e[c] = 1.0;
    ck_assert_int_eq(lv_linsol_matvec(ls, e, A + (size_t)c * n), 0);
    e[c] = 0.0;
  }
  free(e);
}

START_TEST(test_sink_views) {
  enum { N = 7 };
  for (int s = 0; s < 2; s++) {
    double ref[N * N] = {0}, got[N * N];
    lv_linsol *ls = new_solver(kinds[s], N);
    ck_assert_int_eq(lv_linsol_begin(ls), 0);
    lv_sink root = lv_linsol_sink(ls);
    /* 3x4 block at (2,1), scaled by 2 */
    lv_sink v1 = lv_sink_view(&root, 2, 1, 3, 4, 2.0, 0);
    /* 2x3 block written transposed at (1,3), scaled by -0.5:
     * view (i,j) -> matrix (1+j, 3+i) */
    lv_sink v2 = lv_sink_view(&root, 1, 3, 2, 3, -0.5, 1);
    /* view of a view: 2x2, transposed, at (1,1) of v1, scaled by 3 */
    lv_sink v3 = lv_sink_view(&v1, 1, 1, 2, 2, 3.0, 1);

    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) {
        double v = 1 + i + 10 * j;
        ck_assert_int_eq(lv_sink_add(&v1, i, j, v), 0);
        ref[(2 + i) + (1 + j) * N] += 2.0 * v;
      }
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) {
        double v = 100 + i + 10 * j;
        ck_assert_int_eq(lv_sink_add(&v2, i, j, v), 0);
        ref[(1 + j) + (3 + i) * N] += -0.5 * v;
      }
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) {
        double v = 1000 + i + 10 * j;
        ck_assert_int_eq(lv_sink_add(&v3, i, j, v), 0);
        /* v3 (i,j) -> v1 (1+j, 1+i) scaled 3 -> matrix (2+1+j, 1+1+i) scaled 6 */
        ref[(3 + j) + (2 + i) * N] += 6.0 * v;
      }
    ck_assert_int_eq(lv_sink_add(&root, 6, 0, 0.25), 0);
    ref[6] += 0.25;

    /* out of range through views: rejected, nothing written */
    ck_assert_int_eq(lv_sink_add(&v1, 3, 0, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_sink_add(&v1, 0, 4, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_sink_add(&v1, -1, 0, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_sink_add(&v2, 2, 0, 1.0), LV_EINPUT); /* i >= nrows */
    ck_assert_int_eq(lv_sink_add(&v2, 0, 3, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_sink_add(&v3, 2, 0, 1.0), LV_EINPUT);
    /* a view reaching past the matrix: caught by the solver's own check */
    lv_sink v4 = lv_sink_view(&root, 5, 5, 4, 4, 1.0, 0);
    ck_assert_int_eq(lv_sink_add(&v4, 1, 1, 1.0), 0);
    ref[6 + 6 * N] += 1.0;
    ck_assert_int_eq(lv_sink_add(&v4, 2, 0, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_sink_add(&v4, 0, 3, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_sink_add(&root, N, 0, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_sink_add(&root, 0, -1, 1.0), LV_EINPUT);

    get_dense(ls, N, got);
    for (int k = 0; k < N * N; k++)
      ck_assert_msg(got[k] == ref[k], "%s: entry (%d,%d) = %g, expected %g",
                    lv_linsol_kind_name(kinds[s]), k % N, k / N, got[k], ref[k]);
    lv_linsol_free(ls);
  }
}
END_TEST

/* --------------------------------------------------- 6. arguments and AUTO */

START_TEST(test_add_out_of_range) {
  for (int s = 0; s < 2; s++) {
    lv_linsol *ls = new_solver(kinds[s], 3);
    ck_assert_int_eq(lv_linsol_size(ls), 3);
    ck_assert_int_eq(lv_linsol_begin(ls), 0);
    ck_assert_int_eq(lv_linsol_add(ls, 3, 0, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_linsol_add(ls, 0, 3, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_linsol_add(ls, -1, 0, 1.0), LV_EINPUT);
    ck_assert_int_eq(lv_linsol_add(ls, 0, -1, 1.0), LV_EINPUT);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(lv_linsol_add(ls, i, i, 1.0), 0);
    /* the rejected adds left no trace: the matrix is the identity */
    double A[9];
    get_dense(ls, 3, A);
    for (int k = 0; k < 9; k++) ck_assert_double_eq(A[k], k % 4 == 0 ? 1.0 : 0.0);
    ck_assert_int_eq(lv_linsol_factor(ls), 0);
    ck_assert_double_eq_tol(lv_linsol_rcond(ls), 1.0, 1e-12);
    lv_linsol_free(ls);
  }
}
END_TEST

/* The dense small path keeps the factorised matrix in the assembly until
 * the assembly changes (a begin exchanges the arrays, an add copies it):
 * the lazy rcond of that factorisation must still see its matrix, not the
 * one assembled since (whose 1-norm here is 100 times larger). */
static void add_rcond_matrix(lv_linsol *ls, double scale) {
  static const double A[16] = {4, 1, 0, 2, -1, 5, 1, 0, 0, 2, 6, 1, 1, 0, -2, 3};
  for (int k = 0; k < 16; k++) ck_assert_int_eq(lv_linsol_add(ls, k % 4, k / 4, scale * A[k]), 0);
}

START_TEST(test_dense_rcond_after_reassembly) {
  lv_linsol *ref = new_solver(LV_LINSOL_DENSE, 4), *ls = new_solver(LV_LINSOL_DENSE, 4);
  ck_assert_int_eq(lv_linsol_begin(ref), 0);
  add_rcond_matrix(ref, 1.0);
  ck_assert_int_eq(lv_linsol_factor(ref), 0);
  double rc = lv_linsol_rcond(ref);
  ck_assert(rc > 0.05 && rc < 1.0);
  for (int way = 0; way < 2; way++) {
    ck_assert_int_eq(lv_linsol_begin(ls), 0);
    add_rcond_matrix(ls, 1.0);
    ck_assert_int_eq(lv_linsol_factor(ls), 0);
    if (way == 0) ck_assert_int_eq(lv_linsol_begin(ls), 0); /* the arrays exchanged */
    add_rcond_matrix(ls, way == 0 ? 100.0 : 99.0);        /* way 1: added without a begin (a copy) */
    ck_assert_double_eq(lv_linsol_rcond(ls), rc);
    double M[16];
    get_dense(ls, 4, M); /* the assembly holds the new matrix */
    ck_assert_double_eq(M[0], 400.0);
  }
  lv_linsol_free(ref);
  lv_linsol_free(ls);
}
END_TEST

START_TEST(test_new_arguments) {
  lv_linsol *ls = (lv_linsol *)&ls; /* must be reset to NULL on failure */
  ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_DENSE, 0, 0), LV_EINPUT);
  ck_assert_ptr_null(ls);
  ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_UMFPACK, -4, 0), LV_EINPUT);
  ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_AUTO, 0, 0), LV_EINPUT);
  ck_assert_int_eq(lv_linsol_new(&ls, (lv_linsol_kind)7, 5, 0), LV_EINPUT);
  ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_AUTO, 5, -1), LV_EINPUT);
  ck_assert_int_eq(lv_linsol_new(NULL, LV_LINSOL_DENSE, 5, 0), LV_EINPUT);
  ck_assert_ptr_null(ls);
  lv_linsol_free(NULL);

  ck_assert_str_eq(lv_linsol_kind_name(LV_LINSOL_DENSE), "dense");
  ck_assert_str_eq(lv_linsol_kind_name(LV_LINSOL_UMFPACK), "umfpack");
}
END_TEST

START_TEST(test_auto_threshold) {
  struct { int n, threshold; lv_linsol_kind want; } c[] = {
      {1, 0, LV_LINSOL_DENSE},
      {LV_LINSOL_AUTO_THRESHOLD - 1, 0, LV_LINSOL_DENSE},
      {LV_LINSOL_AUTO_THRESHOLD, 0, LV_LINSOL_SPARSE},
      {LV_LINSOL_AUTO_THRESHOLD + 1, 0, LV_LINSOL_SPARSE},
      {9, 10, LV_LINSOL_DENSE},
      {10, 10, LV_LINSOL_SPARSE},
      {500, 1000, LV_LINSOL_DENSE},
      {1, 1, LV_LINSOL_SPARSE},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    lv_linsol *ls = NULL;
    ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_AUTO, c[k].n, c[k].threshold), 0);
    ck_assert_msg(lv_linsol_kind_of(ls) == c[k].want, "n=%d threshold=%d: got %s", c[k].n,
                  c[k].threshold, lv_linsol_kind_name(lv_linsol_kind_of(ls)));
    ck_assert_int_eq(lv_linsol_size(ls), c[k].n);
    lv_linsol_free(ls);
  }
}
END_TEST

/* LV_LINSOL_SPARSE reads the pattern, not the values: a path graph (a
 * chain: tridiagonal, no fill, ~3 flops per factor entry) goes to KLU and a
 * 7-point Laplacian on an m x m x m grid (nested-dissection fronts of ~m^2)
 * to UMFPACK; the choice holds for other values on the same pattern, is
 * reported, and the solves agree with another back-end's (dense for the
 * path, KLU for the grid).  Shifted diagonals keep both non-singular. */
static void sparse_fill(lv_linsol *ls, int m, int dim, double shift) {
  int n = dim == 3 ? m * m * m : m;
  ck_assert_int_eq(lv_linsol_begin(ls), 0);
  for (int i = 0; i < n; i++) {
    ck_assert_int_eq(lv_linsol_add(ls, i, i, 6.5 + shift + 1e-3 * i), 0);
    int nb[6] = {-1, -1, -1, -1, -1, -1};
    if (dim == 3) {
      int x = i % m, y = (i / m) % m, z = i / (m * m);
      if (x > 0) nb[0] = i - 1;
      if (x + 1 < m) nb[1] = i + 1;
      if (y > 0) nb[2] = i - m;
      if (y + 1 < m) nb[3] = i + m;
      if (z > 0) nb[4] = i - m * m;
      if (z + 1 < m) nb[5] = i + m * m;
    } else {
      if (i > 0) nb[0] = i - 1;
      if (i + 1 < n) nb[1] = i + 1;
    }
    for (int k = 0; k < 6; k++)
      if (nb[k] >= 0) ck_assert_int_eq(lv_linsol_add(ls, i, nb[k], -1.0 - 0.1 * shift * (k + 1)), 0);
  }
}

START_TEST(test_sparse_choice) {
  struct { int m, dim; lv_linsol_kind want, ref; } c[] = {
      {500, 1, LV_LINSOL_KLU, LV_LINSOL_DENSE},
      {14, 3, LV_LINSOL_UMFPACK, LV_LINSOL_KLU},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    int n = c[k].dim == 3 ? c[k].m * c[k].m * c[k].m : c[k].m;
    for (int rep = 0; rep < 2; rep++) { /* two value sets on one pattern */
      lv_linsol *ls = NULL, *ref = NULL;
      ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_SPARSE, n, 0), 0);
      ck_assert_int_eq(lv_linsol_new(&ref, c[k].ref, n, 0), 0);
      ck_assert_int_eq(lv_linsol_kind_of(ls), LV_LINSOL_SPARSE);
      lv_linsol_stats st;
      lv_linsol_get_stats(ls, &st);
      ck_assert(st.flops_per_entry == -1.0);
      sparse_fill(ls, c[k].m, c[k].dim, rep);
      sparse_fill(ref, c[k].m, c[k].dim, rep);
      ck_assert_int_eq(lv_linsol_factor(ls), 0);
      ck_assert_int_eq(lv_linsol_factor(ref), 0);
      lv_linsol_get_stats(ls, &st);
      ck_assert_msg(lv_linsol_kind_of(ls) == c[k].want, "dim %d n=%d: chose %s at %.3g flops per entry", c[k].dim,
                    n, lv_linsol_kind_name(lv_linsol_kind_of(ls)), st.flops_per_entry);
      ck_assert(c[k].want == LV_LINSOL_KLU ? st.flops_per_entry <= 100.0 : st.flops_per_entry > 100.0);
      double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
      ck_assert(b && x);
      for (int i = 0; i < n; i++) b[i] = x[i] = sin(0.37 * i);
      ck_assert_int_eq(lv_linsol_solve(ls, b), 0);
      ck_assert_int_eq(lv_linsol_solve(ref, x), 0);
      ck_assert_double_le(tu_rel_err(n, b, x), 1e-12);
      /* a second factorisation keeps the back-end and its analysis */
      sparse_fill(ls, c[k].m, c[k].dim, rep + 0.5);
      ck_assert_int_eq(lv_linsol_factor(ls), 0);
      ck_assert_int_eq(lv_linsol_kind_of(ls), c[k].want);
      lv_linsol_get_stats(ls, &st);
      ck_assert_int_eq(st.symbolic, 1);
      free(b);
      free(x);
      lv_linsol_free(ls);
      lv_linsol_free(ref);
    }
  }
  /* freed before any factorisation: no back-end to release */
  lv_linsol *ls = NULL;
  ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_SPARSE, 100, 0), 0);
  lv_linsol_free(ls);
  ck_assert_str_eq(lv_linsol_kind_name(LV_LINSOL_SPARSE), "sparse");
}
END_TEST

/* ------------------------------------------------------------ assembly */

/* Value at (i, j) of a finished assembly, dense or CSC. */
static double asm_at(const lv_assembly *a, int i, int j) {
  if (a->dense) return a->D[i + (size_t)j * a->n];
  for (int p = a->Ap[j]; p < a->Ap[j + 1]; p++)
    if (a->Ai[p] == i) return a->Ax[p];
  return 0.0;
}

/* A random add sequence with repeated positions, written into a dense and
 * a sparse assembly: the sparse pattern is the set of positions, columns
 * with rows ascending, and every slot holds the same bits as the dense
 * entry (both sum their adds in add order). */
static void asm_fill(lv_assembly *a, int n, int nadd, unsigned seed, int shift) {
  unsigned x = seed;
  for (int k = 0; k < nadd; k++) {
    x = x * 1103515245u + 12345u;
    int i = (int)((x >> 8) % (unsigned)n), j = (int)((x >> 4) % 3u);
    j = (i + j + shift) % n;
    double v = (double)((x >> 16) % 1000u) / 7.0 - 60.0;
    ck_assert_int_eq(lv_assembly_add(a, i, j, v), 0);
  }
}

START_TEST(test_assembly_dense_sparse_bits) {
  const int n = 23, nadd = 200;
  lv_assembly dn, sp;
  ck_assert_int_eq(lv_assembly_init(&dn, n, 1), 0);
  ck_assert_int_eq(lv_assembly_init(&sp, n, 0), 0);
  for (int round = 0; round < 3; round++) {
    /* round 1 replays round 0's add sequence (its values then go straight
     * into the cached slots); round 2 writes other positions */
    lv_assembly_begin(&dn);
    lv_assembly_begin(&sp);
    unsigned seed = 7u;
    asm_fill(&dn, n, nadd, seed, round == 2);
    asm_fill(&sp, n, nadd, seed, round == 2);
    long v0 = sp.rec.version;
    ck_assert_int_eq(lv_assembly_finish(&sp), 0);
    ck_assert_int_eq(lv_assembly_finish(&dn), 0);
    if (round == 1) ck_assert_int_eq(sp.rec.version, v0); /* the same sequence keeps the pattern */
    if (round != 1) ck_assert(sp.rec.version != v0);     /* a new one replaces it */
    ck_assert_int_eq(sp.rec.match, 1);
    int nz = 0;
    for (int j = 0; j < n; j++) {
      for (int p = sp.Ap[j]; p < sp.Ap[j + 1]; p++) {
        if (p > sp.Ap[j]) ck_assert_int_lt(sp.Ai[p - 1], sp.Ai[p]);
        nz++;
      }
      for (int i = 0; i < n; i++) {
        double dv = asm_at(&dn, i, j), sv = asm_at(&sp, i, j);
        ck_assert(memcmp(&dv, &sv, sizeof dv) == 0 || (dv == 0.0 && sv == 0.0));
      }
    }
    ck_assert_int_eq(nz, sp.nnz);
    ck_assert_int_lt(sp.nnz, nadd); /* duplicates merged */
    /* matvec of the assembled values agrees with the dense one */
    double x[23], yd[23], ys[23];
    for (int i = 0; i < n; i++) x[i] = 1.0 + i;
    lv_assembly_matvec(&dn, x, yd);
    lv_assembly_matvec(&sp, x, ys);
    for (int i = 0; i < n; i++) ck_assert_double_eq_tol(yd[i], ys[i], 1e-12 * (1 + fabs(yd[i])));
  }
  lv_assembly_free(&dn);
  lv_assembly_free(&sp);
}
END_TEST

/* A sequence that leaves the recorded one half-way (or stops early) is
 * recorded anew, with every value kept; matvec is right meanwhile. */
START_TEST(test_assembly_mismatch) {
  lv_assembly a;
  ck_assert_int_eq(lv_assembly_init(&a, 3, 0), 0);
  lv_assembly_begin(&a);
  lv_assembly_add(&a, 0, 0, 1.0);
  lv_assembly_add(&a, 1, 1, 2.0);
  lv_assembly_add(&a, 0, 0, 3.0);
  ck_assert_int_eq(lv_assembly_finish(&a), 0);
  ck_assert_int_eq(a.nnz, 2);
  ck_assert(asm_at(&a, 0, 0) == 4.0 && asm_at(&a, 1, 1) == 2.0);
  long v1 = a.rec.version;

  lv_assembly_begin(&a); /* same first two positions, then a new one */
  lv_assembly_add(&a, 0, 0, 5.0);
  lv_assembly_add(&a, 1, 1, 6.0);
  ck_assert_int_eq(a.rec.match, 1);
  lv_assembly_add(&a, 2, 0, 7.0);
  ck_assert_int_eq(a.rec.match, 0);
  double x[3] = {1.0, 10.0, 100.0}, y[3];
  lv_assembly_matvec(&a, x, y);
  ck_assert(y[0] == 5.0 && y[1] == 60.0 && y[2] == 7.0);
  ck_assert_int_eq(lv_assembly_finish(&a), 0);
  ck_assert(a.rec.version != v1);
  ck_assert_int_eq(a.nnz, 3);
  ck_assert(asm_at(&a, 0, 0) == 5.0 && asm_at(&a, 1, 1) == 6.0 && asm_at(&a, 2, 0) == 7.0);
  long v2 = a.rec.version;

  lv_assembly_begin(&a); /* a prefix of the recorded sequence */
  lv_assembly_add(&a, 0, 0, 1.5);
  lv_assembly_add(&a, 1, 1, 2.5);
  ck_assert_int_eq(lv_assembly_finish(&a), 0);
  ck_assert(a.rec.version != v2);
  ck_assert_int_eq(a.nnz, 2);
  ck_assert(asm_at(&a, 0, 0) == 1.5 && asm_at(&a, 1, 1) == 2.5 && asm_at(&a, 2, 0) == 0.0);
  long v3 = a.rec.version;

  lv_assembly_begin(&a); /* the same prefix again: values straight into the slots */
  lv_assembly_add(&a, 0, 0, -1.0);
  lv_assembly_add(&a, 1, 1, -2.0);
  ck_assert(a.Ax[0] == -1.0 && a.Ax[1] == -2.0);
  ck_assert_int_eq(lv_assembly_finish(&a), 0);
  ck_assert_int_eq(a.rec.version, v3);

  /* more adds than the initial capacity, with a non-finite one flagged */
  lv_assembly_begin(&a);
  for (int k = 0; k < 1000; k++) lv_assembly_add(&a, k % 3, (k / 3) % 3, 1.0);
  ck_assert_int_eq(a.nonfinite, 0);
  lv_assembly_add(&a, 2, 2, NAN);
  ck_assert_int_eq(a.nonfinite, 1);
  ck_assert_int_eq(lv_assembly_finish(&a), 0);
  ck_assert_int_eq(a.nnz, 9);
  ck_assert(asm_at(&a, 1, 0) == 111.0);
  lv_assembly_free(&a);
}
END_TEST

/* ------------------------------------------------ position-sequence recorder */

/* The recorder alone (linsol/recorder.h), as the assembly and the schemes'
 * captures use it, in the three layouts (merged by column, grouped by row,
 * grouped by column): a sequence, its replay, one that leaves it half-way,
 * the first one back, a prefix, the prefix again, an empty one, the first
 * one again.  After every finish the pattern and its values are checked
 * against a construction of their own from the add list (the slots of a
 * key: merged, the distinct other indices ascending with their adds summed
 * in add order; grouped, the adds in add order), every slot a replay
 * returns must hold the add's position, and the recording must change
 * exactly when the sequence differs from the previous one. */
enum { REC_NR = 5, REC_NC = 4, REC_LEN = 40 };

static void rec_check(const lv_recorder *r, int by_col, int merge, const int *ai, const int *aj, const double *av,
                      int n, const int *ptr, const int *idx, const double *val, int nnz) {
  int nk = by_col ? REC_NC : REC_NR, no = by_col ? REC_NR : REC_NC, slot = 0;
  ck_assert_int_eq(ptr[0], 0);
  for (int g = 0; g < nk; g++) {
    if (merge) {
      for (int o = 0; o < no; o++) {
        double sum = 0.0;
        int hit = 0;
        for (int k = 0; k < n; k++)
          if ((by_col ? aj[k] : ai[k]) == g && (by_col ? ai[k] : aj[k]) == o) {
            sum += av[k];
            hit = 1;
          }
        if (!hit) continue;
        ck_assert_int_eq(idx[slot], o);
        ck_assert(memcmp(&val[slot], &sum, sizeof sum) == 0);
        slot++;
      }
    } else {
      for (int k = 0; k < n; k++) {
        if ((by_col ? aj[k] : ai[k]) != g) continue;
        double one = 0.0 + av[k];
        ck_assert_int_eq(idx[slot], (by_col ? ai[k] : aj[k]));
        ck_assert(memcmp(&val[slot], &one, sizeof one) == 0);
        slot++;
      }
    }
    ck_assert_int_eq(ptr[g + 1], slot);
  }
  ck_assert_int_eq(nnz, slot);
  ck_assert_int_eq((int)r->rcnt, n);
}

START_TEST(test_recorder) {
  static const int by_cols[3] = {1, 0, 1}, merges[3] = {1, 0, 0};
  int by_col = by_cols[_i % 3], merge = merges[_i % 3];
  /* the sequences: base (positions repeat), base left at add 17, base,
   * the other one again but abandoned before its finish (its positions
   * must not leak into the next), base's first 25 adds, the same, none,
   * base */
  int bi[REC_LEN], bj[REC_LEN], oi[REC_LEN], oj[REC_LEN];
  unsigned x = 12345u;
  for (int k = 0; k < REC_LEN; k++) {
    x = x * 1103515245u + 12345u;
    bi[k] = (int)((x >> 8) % REC_NR);
    bj[k] = (int)((x >> 12) % REC_NC);
    x = x * 1103515245u + 12345u;
    oi[k] = k < 17 ? bi[k] : (int)((x >> 8) % REC_NR);
    oj[k] = k < 17 ? bj[k] : (bj[k] + 1) % REC_NC; /* add 17 on differs */
  }
  static const int lens[9] = {REC_LEN, REC_LEN, REC_LEN, REC_LEN, REC_LEN, 25, 25, 0, REC_LEN};
  static const int other[9] = {0, 0, 1, 0, 1, 0, 0, 0, 0}, abandon[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
  /* still on the recording after the adds: a replay, or a prefix of it */
  static const int on_after[9] = {0, 1, 0, 0, 0, 1, 1, 1, 0};
  lv_recorder r;
  ck_assert_int_eq(lv_recorder_init(&r, 3), 0); /* small: the sequences grow it */
  /* cases 3..5: positions read from the slots, as for a large recording;
   * 6..8: every value kept (the grouped captures' mode) */
  if (_i / 3 == 1) r.pos_min = 1;
  if (_i / 3 == 2) r.keep = 1;
  int *ptr = NULL, *idx = NULL, nnz = 0, pn = -1, po = -1;
  double *val = NULL;
  long ver = 0;
  for (int round = 0; round < 9; round++) {
    const int *ai = other[round] ? oi : bi, *aj = other[round] ? oj : bj;
    int n = lens[round];
    double av[REC_LEN];
    int on = lv_recorder_begin(&r);
    ck_assert_int_eq(on, round > 0);
    if (on) memset(val, 0, (size_t)nnz * sizeof(double));
    for (int k = 0; k < n; k++) {
      x = x * 1103515245u + 12345u;
      av[k] = (double)((x >> 9) % 2001u) / 16.0 - 62.5; /* zeros and -0 sums included */
      ck_assert_int_eq(lv_recorder_add(&r, val, ai[k], aj[k], av[k]), 0);
      if (r.match) { /* a replayed add: its slot holds its position */
        int key = by_col ? aj[k] : ai[k], s = lv_recorder_slot(&r, (size_t)k);
        ck_assert(ptr[key] <= s && s < ptr[key + 1]);
        ck_assert_int_eq(idx[s], (by_col ? ai[k] : aj[k]));
      }
      /* every position so far, on the recording or off it */
      int ki, kj;
      lv_recorder_pos(&r, (size_t)k / 2, &ki, &kj);
      ck_assert(ki == ai[k / 2] && kj == aj[k / 2]);
    }
    ck_assert_int_eq(r.match, on_after[round]);
    if (abandon[round]) continue;
    int same = round > 0 && n == pn && other[round] == po;
    ck_assert_int_eq(lv_recorder_replayed(&r), same);
    if (!same)
      ck_assert_int_eq(lv_recorder_record(&r, by_col, merge, by_col ? REC_NC : REC_NR, by_col ? REC_NR : REC_NC,
                                           &ptr, &idx, &val, &nnz),
                       0);
    if (same)
      ck_assert_int_eq(r.version, ver);
    else
      ck_assert(r.version != ver && r.version != 0);
    ver = r.version;
    rec_check(&r, by_col, merge, ai, aj, av, n, ptr, idx, val, nnz);
    pn = n;
    po = other[round];
  }
  lv_recorder_forget(&r);
  ck_assert_int_eq(lv_recorder_begin(&r), 0);
  lv_recorder_free(&r);
  free(ptr);
  free(idx);
  free(val);
}
END_TEST

/* ------------------------------------------------ small dense path (issue 18) */

/* The dense back-end factors small n (LV_DENSE_SMALL in dense.c, 32 today)
 * with its own unblocked LU, larger n with dgetrf; LAPACK's dgetrf/dgetrs
 * on the same matrix is the independent reference for both. */
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
                    const int *ipiv, double *b, const int *ldb, int *info, size_t trans_len);
extern void dgecon_(const char *norm, const int *n, const double *a, const int *lda, const double *anorm,
                    double *rcond, double *work, int *iwork, int *info, size_t norm_len);

static double norm1(int n, const double *A) {
  double m = 0.0;
  for (int j = 0; j < n; j++) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += fabs(A[i + j * n]);
    m = fmax(m, s);
  }
  return m;
}

static double urand(unsigned *st) {
  *st = *st * 1103515245u + 12345u;
  return ((double)((*st >> 8) & 0xffffff) / 16777216.0) * 2.0 - 1.0;
}

/* Column-major A: random (kind 0), or the saddle point [M G^T; G 0] of a
 * Newton matrix with m = n - c positions and c constraints (kind 1), whose
 * zero block forces row interchanges. */
static void small_matrix(int kind, int n, unsigned seed, double *A) {
  unsigned st = seed;
  for (int k = 0; k < n * n; k++) A[k] = urand(&st);
  if (kind == 1) {
    int c = n / 3, m = n - c;
    for (int i = 0; i < m; i++) {
      A[i + i * n] += 4.0; /* M well conditioned */
      for (int j = m; j < n; j++) A[i + j * n] = A[j + i * n]; /* G^T = G' */
    }
    for (int i = m; i < n; i++)
      for (int j = m; j < n; j++) A[i + j * n] = 0.0;
  }
}

/* A dense solver with the column-major A assembled and factorised, x
 * overwritten by A^-1 x. */
static lv_linsol *dense_solve(int n, const double *A, double *x) {
  lv_linsol *ls = NULL;
  ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_DENSE, n, 0), 0);
  lv_linsol_begin(ls);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) ck_assert_int_eq(lv_linsol_add(ls, i, j, A[i + j * n]), 0);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  ck_assert_int_eq(lv_linsol_solve(ls, x), 0);
  return ls;
}

static const int small_sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 31, 32}; /* every unrolled size */

START_TEST(test_dense_small_vs_lapack) {
  const int n = small_sizes[_i];
  double *A = malloc(sizeof(double) * (size_t)(n * n)), *b = malloc(sizeof(double) * (size_t)n);
  double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
  int *ipiv = malloc(sizeof(int) * (size_t)n);
  ck_assert(A && b && x && y && ipiv);
  for (int kind = 0; kind < 2; kind++) {
    if (kind == 1 && n < 3) continue;
    for (unsigned seed = 1; seed <= 20; seed++) {
      small_matrix(kind, n, seed * 7919u + (unsigned)n, A);
      unsigned st = seed;
      for (int i = 0; i < n; i++) b[i] = x[i] = urand(&st);
      lv_linsol *ls = dense_solve(n, A, x);
      /* the estimate is asked for after the assembly restarted with other
       * values (as modified Newton may): it must still be the factorised
       * matrix's (the small path sums its 1-norm only on demand) */
      lv_linsol_begin(ls);
      ck_assert_int_eq(lv_linsol_add(ls, 0, 0, 1e6), 0);
      double rc = lv_linsol_rcond(ls);
      lv_linsol_free(ls);

      int info = 0, one = 1;
      double anorm = norm1(n, A), rc_ref = 0.0;
      dgetrf_(&n, &n, A, &n, ipiv, &info);
      ck_assert_int_eq(info, 0);
      {
        double *wk = malloc(sizeof(double) * (size_t)(4 * n));
        int *iw = malloc(sizeof(int) * (size_t)n);
        ck_assert(wk && iw);
        dgecon_("1", &n, A, &n, &anorm, &rc_ref, wk, iw, &info, 1);
        free(wk);
        free(iw);
        ck_assert_int_eq(info, 0);
      }
      /* LAPACK's estimate on dgetrf's factors: the same up to the rounding
       * of two LU orders */
      ck_assert_msg(fabs(rc - rc_ref) <= 1e-8 * rc_ref, "n %d kind %d seed %u: rcond %.17g, dgecon %.17g", n,
                    kind, seed, rc, rc_ref);
      memcpy(y, b, sizeof(double) * (size_t)n);
      dgetrs_("N", &n, &one, A, &n, ipiv, y, &n, &info, 1);
      ck_assert_int_eq(info, 0);
      double dmax = 0.0, ymax = 0.0;
      for (int i = 0; i < n; i++) {
        dmax = fmax(dmax, fabs(x[i] - y[i]));
        ymax = fmax(ymax, fabs(y[i]));
      }
      /* relative to the solution, and to its sensitivity: rounding in two
       * LU orders differs by ~ eps / rcond */
      double tol = 1e-14 * fmax(1.0, 1e-2 / (rc > 0 ? rc : 1e-300));
      ck_assert_msg(dmax <= tol * ymax, "n %d kind %d seed %u: |x - x_lapack| %.3g, |x| %.3g, rcond %.3g", n,
                    kind, seed, dmax, ymax, rc);
    }
  }
  free(A);
  free(b);
  free(x);
  free(y);
  free(ipiv);
}
END_TEST

/* The AVX build of the small kernels (x86-64) against the SSE2 build:
 * the same multiplies and subtractions lane by lane, so the solutions must
 * agree bit for bit, on every unrolled size and the generic ones. */
START_TEST(test_dense_small_avx_bits) {
#ifdef LV_SMALL_AVX
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx")) {
    fprintf(stderr, "test_dense_small_avx_bits: no AVX on this CPU, the SSE2 kernels alone run\n");
    return;
  }
  const int n = small_sizes[_i];
  double *A = malloc(sizeof(double) * (size_t)(n * n)), *x[2];
  x[0] = malloc(sizeof(double) * (size_t)n);
  x[1] = malloc(sizeof(double) * (size_t)n);
  ck_assert(A && x[0] && x[1]);
  for (int kind = 0; kind < 2; kind++) {
    if (kind == 1 && n < 3) continue;
    for (unsigned seed = 1; seed <= 10; seed++) {
      small_matrix(kind, n, seed * 104729u + (unsigned)n, A);
      for (int isa = 0; isa < 2; isa++) {
        lv_dense_small_avx = isa;
        unsigned st = seed;
        for (int i = 0; i < n; i++) x[isa][i] = urand(&st);
        lv_linsol_free(dense_solve(n, A, x[isa]));
      }
      for (int i = 0; i < n; i++)
        ck_assert_msg(memcmp(&x[0][i], &x[1][i], sizeof(double)) == 0,
                      "n %d kind %d seed %u: x[%d] SSE2 %.17g, AVX %.17g", n, kind, seed, i, x[0][i], x[1][i]);
    }
  }
  lv_dense_small_avx = -1;
  free(A);
  free(x[0]);
  free(x[1]);
#endif
}
END_TEST

/* A zero pivot on the small path falls back to LAPACK, which still decides
 * singular and nonsingular the same way as before: a rank-deficient 9 x 9
 * is refused, the same matrix with one row made independent is solved. */
START_TEST(test_dense_small_fallback) {
  const int n = 9;
  double A[81];
  unsigned st = 5;
  for (int k = 0; k < 81; k++) A[k] = urand(&st);
  for (int j = 0; j < n; j++) A[8 + j * n] = A[0 + j * n] + A[1 + j * n]; /* row 8 = row 0 + row 1 */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) A[8 + 8 * n] += 1.0;
    lv_linsol *ls = NULL;
    ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_DENSE, n, 0), 0);
    lv_linsol_begin(ls);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) lv_linsol_add(ls, i, j, A[i + j * n]);
    int rc = lv_linsol_factor(ls);
    if (pass == 0) {
      ck_assert_int_eq(rc, LV_ESINGULAR);
    } else {
      ck_assert_int_eq(rc, 0);
      double x[9], b[9], r[9];
      for (int i = 0; i < n; i++) x[i] = b[i] = urand(&st);
      ck_assert_int_eq(lv_linsol_solve(ls, x), 0);
      lv_linsol_matvec(ls, x, r);
      for (int i = 0; i < n; i++) ck_assert(fabs(r[i] - b[i]) < 1e-12);
    }
    lv_linsol_free(ls);
  }
  /* a leading zero that needs a row interchange is not a bad pivot */
  double P[4] = {0.0, 1.0, 1.0, 0.0}, x[2] = {3.0, 4.0};
  lv_linsol *ls = NULL;
  ck_assert_int_eq(lv_linsol_new(&ls, LV_LINSOL_DENSE, 2, 0), 0);
  lv_linsol_begin(ls);
  for (int k = 0; k < 4; k++) lv_linsol_add(ls, k % 2, k / 2, P[k]);
  ck_assert_int_eq(lv_linsol_factor(ls), 0);
  ck_assert_int_eq(lv_linsol_solve(ls, x), 0);
  ck_assert(x[0] == 4.0 && x[1] == 3.0);
  lv_linsol_free(ls);
}
END_TEST

/* ------------------------------------------------------------------- suite */

static Suite *linsol_suite(void) {
  Suite *s = suite_create("linsol");
  TCase *tc;

  tc = tu_tcase(s, "agree", 0.5);
  tcase_add_loop_test(tc, test_dense_umfpack_agree, 0,
                      (int)(sizeof agree_sizes / sizeof agree_sizes[0]));

  tc = tu_tcase(s, "singular", 0.12);
  tcase_add_test(tc, test_singular_dependent_constraints);
  tcase_add_test(tc, test_singular_zero_row);
  tcase_add_test(tc, test_singular_one_rule);
  tcase_add_test(tc, test_solve_before_factor);

  tc = tu_tcase(s, "nonfinite", 0.02);
  tcase_add_test(tc, test_nonfinite);
  tcase_add_test(tc, test_blas_threads);
  tcase_add_test(tc, test_klu_kept_pivots);

  tc = tu_tcase(s, "pattern", 0.01);
  tcase_add_test(tc, test_pattern_reuse);
  tcase_add_test(tc, test_pattern_explicit_zero);
  tcase_add_test(tc, test_factor_survives_assembly);

  tc = tu_tcase(s, "sink", 0.01);
  tcase_add_test(tc, test_sink_views);

  tc = tu_tcase(s, "args", 0.5);
  tcase_add_test(tc, test_sparse_choice);
  tcase_add_test(tc, test_add_out_of_range);
  tcase_add_test(tc, test_dense_rcond_after_reassembly);
  tcase_add_test(tc, test_new_arguments);
  tcase_add_test(tc, test_auto_threshold);

  tc = tu_tcase(s, "assembly", 0.05);
  tcase_add_test(tc, test_assembly_dense_sparse_bits);
  tcase_add_test(tc, test_assembly_mismatch);
  tcase_add_loop_test(tc, test_recorder, 0, 9);

  tc = tu_tcase(s, "small", 0.1);
  tcase_add_loop_test(tc, test_dense_small_vs_lapack, 0, (int)(sizeof small_sizes / sizeof small_sizes[0]));
  tcase_add_loop_test(tc, test_dense_small_avx_bits, 0, (int)(sizeof small_sizes / sizeof small_sizes[0]));
  tcase_add_test(tc, test_dense_small_fallback);
  return s;
}

int main(void) {
  return tu_run_suite(linsol_suite());
}
