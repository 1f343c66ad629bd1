/* Seed 001 Lemma 1 (spec 000_001 §6.E, E1): for a constant positive
 * semi-definite M (k x k, rank r) and a full-rank B (m x k) with (12)
 * (M positive definite on ker B, k - r <= m), the constructive proof builds
 * U, Q, Lambda-bar, B-bar with
 *
 *   [M B^T; B 0] = [U 0; 0 Q] [0 0 0 I; 0 Lb Bb^T 0; 0 Bb 0 0; I 0 0 0] [U^T 0; 0 Q^T]   (13)
 *
 * (blocks k-r, r, m-(k-r), k-r).  The test follows the proof's five steps
 * with LAPACK (dsyev for the eigenvectors of M, dgeqrf/dorgqr for the QR of
 * B U^N) on random matrices and checks (13) to 1e-12 relative, that
 * Lambda-bar is non-singular and B-bar has full rank m-(k-r).  This is the
 * decomposition behind seed 001's convergence proof for rank-deficient mass
 * matrices; livens never forms it (the KKT solves handle singular M, E2 in
 * check_genalpha), so the test pins the paper's algebra, not library code.
 * A negative case (B vanishing on ker M, (12) violated) must make B U^N
 * rank-deficient. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                   double *work, const int *lwork, int *info, size_t, size_t);
extern void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
                    const int *lwork, int *info);
extern void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau,
                    double *work, const int *lwork, int *info);
extern void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a, const int *lda,
                    double *s, double *u, const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork,
                    int *info, size_t, size_t);

#define MAXN 24
/* column-major: A[i + n*j] */
#define AT(A, ld, i, j) (A)[(i) + (size_t)(ld) * (j)]

static unsigned long long rng = 88172645463325252ULL;
static double urand(void) { return tu_rand(&rng); }

/* C (n x p) = A (n x q) B (q x p), all column-major */
static void mul(int n, int q, int p, const double *A, const double *B, double *C) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < p; j++) {
      double s = 0.0;
      for (int l = 0; l < q; l++) s += AT(A, n, i, l) * AT(B, q, l, j);
      AT(C, n, i, j) = s;
    }
}

static void transpose(int n, int p, const double *A, double *At) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < p; j++) AT(At, p, j, i) = AT(A, n, i, j);
}

/* singular values of A (n x p), descending */
static void svals(int n, int p, const double *A, double *s) {
  double a[MAXN * MAXN], work[8 * MAXN], dummy[1];
  int lwork = 8 * MAXN, one = 1, info;
  memcpy(a, A, (size_t)(n * p) * sizeof(double));
  dgesvd_("N", "N", &n, &p, a, &n, s, dummy, &one, dummy, &one, work, &lwork, &info, 1, 1);
  ck_assert_int_eq(info, 0);
}

/* Lemma 1 for M = A A^T (A k x r) and B (m x k); returns the relative
 * residual of (13); *bun_min = smallest singular value of B U^N. */
static double lemma1(int k, int m, int r, const double *A, const double *B, double *bun_min, double *lb_min,
                     double *bb_min) {
  int p = k - r, mp = m - p; /* sizes of the ker M block and of B-bar's rows */
  double M[MAXN * MAXN], At[MAXN * MAXN];
  transpose(k, r, A, At);
  mul(k, r, k, A, At, M);
  /* step 1: eigenvectors of M, ascending eigenvalues: the first p span ker M */
  double E[MAXN * MAXN], mu[MAXN], work[64 * MAXN];
  int lwork = 64 * MAXN, info;
  memcpy(E, M, sizeof(double) * (size_t)(k * k));
  dsyev_("V", "U", &k, E, &k, mu, work, &lwork, &info, 1, 1);
  ck_assert_int_eq(info, 0);
  const double *UN = E, *UR = E + (size_t)k * p;
  /* step 2: B U^N, full column rank p by (12) */
  double BUN[MAXN * MAXN], BUR[MAXN * MAXN], s[MAXN];
  mul(m, k, p, B, UN, BUN);
  mul(m, k, r, B, UR, BUR);
  *bun_min = INFINITY;
  if (p > 0) {
    svals(m, p, BUN, s);
    *bun_min = s[p - 1];
  }
  /* step 3: full QR B U^N = Qb (Rb; 0), Q = Qb [0 Rb; I 0] */
  double Qb[MAXN * MAXN], tau[MAXN], Rb[MAXN * MAXN];
  memset(Qb, 0, sizeof Qb);
  for (int j = 0; j < p; j++)
    for (int i = 0; i < m; i++) AT(Qb, m, i, j) = AT(BUN, m, i, j);
  if (p > 0) {
    dgeqrf_(&m, &p, Qb, &m, tau, work, &lwork, &info);
    ck_assert_int_eq(info, 0);
  }
  for (int i = 0; i < p; i++)
    for (int j = 0; j < p; j++) AT(Rb, p, i, j) = i <= j ? AT(Qb, m, i, j) : 0.0;
  int kq = p;
  dorgqr_(&m, &m, &kq, Qb, &m, tau, work, &lwork, &info);
  ck_assert_int_eq(info, 0);
  double P[MAXN * MAXN], Q[MAXN * MAXN];
  memset(P, 0, sizeof P);
  for (int i = 0; i < p; i++) /* rows 0..p-1: [0 Rb] */
    for (int j = 0; j < p; j++) AT(P, m, i, mp + j) = AT(Rb, p, i, j);
  for (int i = 0; i < mp; i++) AT(P, m, p + i, i) = 1.0; /* rows p..m-1: [I 0] */
  mul(m, m, m, Qb, P, Q);
  /* step 4: (B^R; B^N) = Q^-1 B U^R, Q^-1 = P^-1 Qb^T with P^-1 = [0 I; Rb^-1 0] */
  double QtB[MAXN * MAXN], Qbt[MAXN * MAXN], BRN[MAXN * MAXN];
  transpose(m, m, Qb, Qbt);
  mul(m, m, r, Qbt, BUR, QtB); /* rows 0..p-1: Rb-part, rows p..m-1 */
  for (int j = 0; j < r; j++) {
    for (int i = 0; i < mp; i++) AT(BRN, m, i, j) = AT(QtB, m, p + i, j); /* B^R = B-bar */
    for (int i = p - 1; i >= 0; i--) { /* B^N = Rb^-1 (first p rows), back substitution */
      double x = AT(QtB, m, i, j);
      for (int l = i + 1; l < p; l++) x -= AT(Rb, p, i, l) * AT(BRN, m, mp + l, j);
      AT(BRN, m, mp + i, j) = x / AT(Rb, p, i, i);
    }
  }
  /* step 5: U = (U^N U^R) [I 0; (B^N)^T I] */
  double U[MAXN * MAXN];
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < p; j++) {
      double x = AT(E, k, i, j);
      for (int l = 0; l < r; l++) x += AT(UR, k, i, l) * AT(BRN, m, mp + j, l);
      AT(U, k, i, j) = x;
    }
    for (int j = 0; j < r; j++) AT(U, k, i, p + j) = AT(UR, k, i, j);
  }
  /* (13): the middle matrix D, blocks (p, r, mp, p) */
  int n = k + m;
  double D[MAXN * MAXN], L[MAXN * MAXN], Lt[MAXN * MAXN], T[MAXN * MAXN], K[MAXN * MAXN], KKT[MAXN * MAXN];
  memset(D, 0, sizeof D);
  memset(L, 0, sizeof L);
  for (int i = 0; i < p; i++) AT(D, n, i, p + r + mp + i) = AT(D, n, p + r + mp + i, i) = 1.0;
  for (int i = 0; i < r; i++) AT(D, n, p + i, p + i) = mu[p + i];
  for (int i = 0; i < mp; i++)
    for (int j = 0; j < r; j++) AT(D, n, p + r + i, p + j) = AT(D, n, p + j, p + r + i) = AT(BRN, m, i, j);
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) AT(L, n, i, j) = AT(U, k, i, j);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) AT(L, n, k + i, k + j) = AT(Q, m, i, j);
  transpose(n, n, L, Lt);
  mul(n, n, n, L, D, T);
  mul(n, n, n, T, Lt, K);
  memset(KKT, 0, sizeof KKT);
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) AT(KKT, n, i, j) = AT(M, k, i, j);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < k; j++) AT(KKT, n, k + i, j) = AT(KKT, n, j, k + i) = AT(B, m, i, j);
  double err = 0.0, scale = 0.0;
  for (int i = 0; i < n * n; i++) err = fmax(err, fabs(K[i] - KKT[i])), scale = fmax(scale, fabs(KKT[i]));
  /* Lambda-bar non-singular, B-bar of full rank mp */
  *lb_min = INFINITY;
  for (int i = 0; i < r; i++) *lb_min = fmin(*lb_min, fabs(mu[p + i]));
  *bb_min = INFINITY;
  if (mp > 0) {
    double Bb[MAXN * MAXN];
    for (int i = 0; i < mp; i++)
      for (int j = 0; j < r; j++) AT(Bb, mp, i, j) = AT(BRN, m, i, j);
    svals(mp, r, Bb, s);
    *bb_min = s[mp - 1];
  }
  return err / scale;
}

START_TEST(test_lemma1) {
  /* (k, m, r): k - r <= m, including full-rank M (k = r) and M = 0 on a
   * subspace as large as B allows (k - r = m) */
  const int cases[][3] = {{6, 3, 4}, {6, 3, 3}, {10, 4, 7}, {5, 2, 5}, {8, 5, 4}, {12, 6, 9}, {7, 3, 4}};
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
    int k = cases[c][0], m = cases[c][1], r = cases[c][2];
    for (int rep = 0; rep < 20; rep++) {
      double A[MAXN * MAXN], B[MAXN * MAXN];
      for (int i = 0; i < k * r; i++) A[i] = urand();
      for (int i = 0; i < m * k; i++) B[i] = urand();
      double bun, lb, bb, res = lemma1(k, m, r, A, B, &bun, &lb, &bb);
      if (getenv("LV_TEST_VERBOSE") && rep == 0)
        printf("E1 k=%d m=%d r=%d: (13) residual %.2e, min sv(B U^N) %.3f, min |Lambda| %.3f, min sv(B-bar) %.3f\n", k,
               m, r, res, bun, lb, bb);
      ck_assert_msg(res <= 1e-12, "k=%d m=%d r=%d: (13) residual %.3e", k, m, r, res);
      ck_assert_msg(lb > 1e-8 && bb > 1e-8 && bun > 1e-8, "k=%d m=%d r=%d: rank lost (%g %g %g)", k, m, r, lb, bb, bun);
    }
  }
  /* (12) violated: B annihilates a direction of ker M, so B U^N loses rank */
  int k = 6, m = 3, r = 4;
  double A[MAXN * MAXN], B[MAXN * MAXN];
  for (int i = 0; i < k * r; i++) A[i] = urand();
  for (int i = 0; i < m * k; i++) B[i] = urand();
  /* n in ker M: n orthogonal to the columns of A; B := B (I - n n^T) */
  double Ev[MAXN * MAXN], At[MAXN * MAXN], M[MAXN * MAXN], mu[MAXN], work[64 * MAXN];
  int lwork = 64 * MAXN, info;
  transpose(k, r, A, At);
  mul(k, r, k, A, At, M);
  memcpy(Ev, M, sizeof(double) * (size_t)(k * k));
  dsyev_("V", "U", &k, Ev, &k, mu, work, &lwork, &info, 1, 1);
  ck_assert_int_eq(info, 0);
  for (int i = 0; i < m; i++) {
    double d = 0.0;
    for (int j = 0; j < k; j++) d += AT(B, m, i, j) * Ev[j];
    for (int j = 0; j < k; j++) AT(B, m, i, j) -= d * Ev[j];
  }
  double bun, lb, bb;
  (void)lemma1(k, m, r, A, B, &bun, &lb, &bb);
  ck_assert_msg(bun < 1e-12, "(12) violated but B U^N has smallest singular value %g", bun);
}
END_TEST

int main(void) {
  Suite *s = suite_create("lemma1");
  TCase *tc = tu_tcase(s, "lemma1", 0.1);
  tcase_add_test(tc, test_lemma1);
  return tu_run_suite(s);
}
