/* Tests of the configuration-space layer: R^k, SO(3), S^3, R^3 x SO(3),
 * SE(3), unit dual quaternions and their products.  References are independent of the library's
 * closed forms: matrix series summed in long double, 4x4 homogeneous
 * matrices, finite differences of exp.
 *
 * Set LV_TEST_VERBOSE=1 to print the largest error of each identity. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "space/group.h" /* the operations table (internal) */
#include "testutil.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ------------------------------------------------------------ helpers */

typedef struct {
  uint64_t s;
} rng_t;

static double rnd(rng_t *r) { /* uniform in [-1, 1) */
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return 2.0 * ((double)(r->s >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
}

static void rnd_vec(rng_t *r, int n, double *x) {
  for (int i = 0; i < n; i++) x[i] = rnd(r);
}

/* Random 3-vector of the given length. */
static void rnd_len3(rng_t *r, double len, double v[3]) {
  double n;
  do {
    rnd_vec(r, 3, v);
    n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  } while (n < 0.1 || n > 1.0);
  for (int i = 0; i < 3; i++) v[i] *= len / n;
}

static double norm(int n, const double *x) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

static double maxdiff(int n, const double *a, const double *b) {
  double m = 0.0;
  for (int i = 0; i < n; i++)
    if (fabs(a[i] - b[i]) > m || a[i] != a[i] || b[i] != b[i]) m = fabs(a[i] - b[i]);
  return m;
}

static int verbose(void) {
  const char *e = getenv("LV_TEST_VERBOSE");
  return e && *e && *e != '0';
}

static void report(const char *what, double err) {
  if (verbose()) fprintf(stderr, "  %-58s %.3e\n", what, err);
}

/* The series references are summed in long double, which carries ~3 more
 * digits than double on x86.  Under valgrind (and on platforms where long
 * double is double) it does not, and a reference summed in plain double
 * agrees with the closed forms only to a few ulp more.  Detect that at run
 * time rather than assume it. */
static double series_tol(double tight) {
  volatile long double one = 1.0L, tiny = 1e-18L;
  return (one + tiny != one) ? tight : 4.0 * tight;
}

/* C = A B for n x n row-major long double matrices. */
static void lmatmul(int n, const long double *A, const long double *B, long double *C) {
  long double t[36];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      long double s = 0.0L;
      for (int k = 0; k < n; k++) s += A[n * i + k] * B[n * k + j];
      t[n * i + j] = s;
    }
  memcpy(C, t, (size_t)(n * n) * sizeof *C);
}

/* sum_{j>=0} c_j A^j with c_j = s^j / (j + shift)! summed to convergence
 * (shift 0: exp(sA); shift 1 and s = -1: dexp_{-A}). */
static void lseries(int n, const double *A, int sign, int shift, long double *S) {
  long double term[36], LA[36];
  for (int i = 0; i < n * n; i++) {
    LA[i] = sign * (long double)A[i];
    term[i] = 0.0L;
  }
  for (int i = 0; i < n; i++) term[n * i + i] = 1.0L;
  /* term_0 = I / shift! */
  long double f0 = 1.0L;
  for (int k = 2; k <= shift; k++) f0 *= k;
  for (int i = 0; i < n * n; i++) {
    term[i] /= f0;
    S[i] = term[i];
  }
  for (int j = 1; j < 400; j++) {
    lmatmul(n, term, LA, term);
    long double mt = 0.0L, ms = 0.0L;
    for (int i = 0; i < n * n; i++) {
      term[i] /= (long double)(j + shift);
      S[i] += term[i];
      if (fabsl(term[i]) > mt) mt = fabsl(term[i]);
      if (fabsl(S[i]) > ms) ms = fabsl(S[i]);
    }
    if (j > 5 && mt < 1e-30L * (ms > 1 ? ms : 1)) break;
  }
}

static void hat(const double a[3], double A[9]) { lv_hat3(a, A); }

/* Dense nv x nv matrix (row-major out) of lv_space_tangent. */
static void tangent_dense(const lv_space *sp, const double *v, double *Trow) {
  int n = lv_space_nv(sp);
  double *cm = calloc((size_t)(n * n), sizeof *cm);
  ck_assert_ptr_nonnull(cm);
  lv_sink s = lv_sink_dense(cm, n, n, n);
  ck_assert_int_eq(lv_space_tangent(sp, v, &s), 0);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) Trow[n * i + j] = cm[i + (size_t)j * n];
  free(cm);
}

static lv_space *single(lv_factor_kind kind, int k) {
  lv_space *sp = NULL;
  ck_assert_int_eq(lv_space_new(&sp), 0);
  ck_assert_int_eq(lv_space_add(sp, kind, k), 0);
  return sp;
}

/* 4x4 homogeneous matrix of an SE(3) configuration (x, R). */
static void se3_H(const double *q, double H[16]) {
  memset(H, 0, 16 * sizeof *H);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) H[4 * i + j] = q[3 + 3 * i + j];
    H[4 * i + 3] = q[i];
  }
  H[15] = 1.0;
}

/* w~ = [[psi~, U], [0, 0]] */
static void se3_tilde(const double w[6], double W[16]) {
  double P[9];
  hat(w + 3, P);
  memset(W, 0, 16 * sizeof *W);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) W[4 * i + j] = P[3 * i + j];
    W[4 * i + 3] = w[i];
  }
}

static void matmul(int n, const double *A, const double *B, double *C) {
  double t[36];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += A[n * i + k] * B[n * k + j];
      t[n * i + j] = s;
    }
  memcpy(C, t, (size_t)(n * n) * sizeof *C);
}

/* Random rotation configuration for the space's factors. */
static void rnd_config(rng_t *r, const lv_space *sp, double *q) {
  int nv = lv_space_nv(sp);
  double *v = malloc((size_t)(nv ? nv : 1) * sizeof *v);
  ck_assert_ptr_nonnull(v);
  rnd_vec(r, nv, v);
  for (int i = 0; i < nv; i++) v[i] *= 1.5;
  lv_space_identity(sp, q);
  for (int i = 0; i < lv_space_nfactors(sp); i++) {
    lv_factor_kind k;
    int qo, nqi;
    lv_space_factor(sp, i, &k, &qo, &nqi, NULL, NULL);
    if (k == LV_FACTOR_RN)
      for (int j = 0; j < nqi; j++) q[qo + j] = rnd(r);
  }
  ck_assert_int_eq(lv_space_compose_exp(sp, q, 1.0, v, q), 0);
  free(v);
}

static const double NORMS[] = {1e-12, 1e-8, 1e-4, 1e-2, 0.5, 0.999999, 1.0,
                               1.000001, 2.0, 3.0, M_PI - 1e-6, M_PI - 1e-10};
#define NNORMS ((int)(sizeof NORMS / sizeof NORMS[0]))

/* ------------------------------------------------------------ R^k */

START_TEST(test_rn) {
  lv_space *sp = NULL;
  ck_assert_int_eq(lv_space_new_rn(&sp, 5), 0);
  ck_assert_int_eq(lv_space_nq(sp), 5);
  ck_assert_int_eq(lv_space_nv(sp), 5);
  ck_assert_int_eq(lv_space_nfactors(sp), 1);
  ck_assert(lv_space_is_linear(sp));
  ck_assert_str_eq(lv_space_name(sp), "R^5");

  double q[5] = {1, 2, 3, 4, 5}, v[5] = {0.5, -1, 2, 0, 3}, qo[5], d[5];
  ck_assert_int_eq(lv_space_compose_exp(sp, q, 0.1, v, qo), 0);
  for (int i = 0; i < 5; i++) ck_assert_double_eq(qo[i], q[i] + 0.1 * v[i]);
  double qa[5];
  memcpy(qa, q, sizeof q);
  ck_assert_int_eq(lv_space_compose_exp(sp, qa, 0.1, v, qa), 0); /* aliasing */
  ck_assert(maxdiff(5, qa, qo) == 0.0);
  ck_assert_int_eq(lv_space_log(sp, q, qo, d), 0);
  for (int i = 0; i < 5; i++) ck_assert_double_eq(d[i], qo[i] - q[i]);
  ck_assert_int_eq(lv_space_identity(sp, d), 0);
  for (int i = 0; i < 5; i++) ck_assert_double_eq(d[i], 0.0);

  double T[25], y[5];
  tangent_dense(sp, v, T);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++) ck_assert_double_eq(T[5 * i + j], i == j ? 1.0 : 0.0);
  ck_assert_int_eq(lv_space_tangent_apply(sp, v, q, y), 0);
  ck_assert(maxdiff(5, y, q) == 0.0);
  ck_assert_int_eq(lv_space_tangent_inv_apply(sp, v, q, y), 0);
  ck_assert(maxdiff(5, y, q) == 0.0);
  ck_assert_int_eq(lv_space_ad(sp, v, q, y), 0);
  for (int i = 0; i < 5; i++) ck_assert_double_eq(y[i], 0.0);
  ck_assert_int_eq(lv_space_normalize(sp, qo), 0);

  /* adjacent R^k factors merge */
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_RN, 2), 0);
  ck_assert_int_eq(lv_space_nfactors(sp), 1);
  ck_assert_str_eq(lv_space_name(sp), "R^7");
  ck_assert_int_eq(lv_space_nq(sp), 7);
  lv_space_free(sp);

  ck_assert_int_eq(lv_space_new_rn(&sp, 0), 0);
  ck_assert_int_eq(lv_space_nq(sp), 0);
  ck_assert_str_eq(lv_space_name(sp), "R^0");
  lv_space_free(sp);
}
END_TEST

START_TEST(test_bad_input) {
  lv_space *sp = NULL;
  ck_assert_int_eq(lv_space_new(&sp), 0);
  ck_assert_int_eq(lv_space_add(sp, (lv_factor_kind)7, 0), LV_EINPUT);
  ck_assert_int_eq(lv_space_add(sp, (lv_factor_kind)-1, 3), LV_EINPUT);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_RN, -2), LV_EINPUT);
  ck_assert_int_eq(lv_space_nfactors(sp), 0);
  ck_assert_int_eq(lv_space_nq(sp), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_SO3, 0), 0);
  ck_assert_int_eq(lv_space_add(sp, (lv_factor_kind)6, 0), LV_EINPUT);
  ck_assert_int_eq(lv_space_nfactors(sp), 1);
  ck_assert_str_eq(lv_space_name(sp), "SO(3)");
  lv_factor_kind k;
  ck_assert_int_eq(lv_space_factor(sp, 1, &k, NULL, NULL, NULL, NULL), LV_EINPUT);
  ck_assert_int_eq(lv_space_factor(sp, -1, &k, NULL, NULL, NULL, NULL), LV_EINPUT);
  ck_assert_int_eq(lv_space_add(NULL, LV_FACTOR_SO3, 0), LV_EINPUT);
  lv_space_free(sp);
  ck_assert_int_eq(lv_space_new_rn(&sp, -1), LV_EINPUT);
  ck_assert_ptr_null(sp);
  lv_space_free(NULL);
  ck_assert_int_eq(lv_space_new(NULL), LV_EINPUT);
}
END_TEST

/* ------------------------------------------------------------ products */

START_TEST(test_product_layout) {
  lv_space *sp = NULL;
  ck_assert_int_eq(lv_space_new(&sp), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_RN, 2), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_SO3, 0), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_RN, 1), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_SE3, 0), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_S3, 0), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_R3SO3, 0), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_R3SO3, 0), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_RN, 3), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_RN, 4), 0);
  ck_assert_str_eq(lv_space_name(sp), "R^2xSO(3)xR^1xSE(3)xS^3x(R^3xSO(3))^2xR^7");
  ck_assert_int_eq(lv_space_nfactors(sp), 8);
  ck_assert_int_eq(lv_space_nq(sp), 59);
  ck_assert_int_eq(lv_space_nv(sp), 34);
  ck_assert(!lv_space_is_linear(sp));
  static const lv_factor_kind kinds[8] = {LV_FACTOR_RN, LV_FACTOR_SO3, LV_FACTOR_RN,
                                          LV_FACTOR_SE3, LV_FACTOR_S3, LV_FACTOR_R3SO3,
                                          LV_FACTOR_R3SO3, LV_FACTOR_RN};
  static const int qoff[8] = {0, 2, 11, 12, 24, 28, 40, 52}, nqs[8] = {2, 9, 1, 12, 4, 12, 12, 7};
  static const int voff[8] = {0, 2, 5, 6, 12, 15, 21, 27}, nvs[8] = {2, 3, 1, 6, 3, 6, 6, 7};
  for (int i = 0; i < 8; i++) {
    lv_factor_kind k;
    int a, b, c, d;
    ck_assert_int_eq(lv_space_factor(sp, i, &k, &a, &b, &c, &d), 0);
    ck_assert_int_eq(k, kinds[i]);
    ck_assert_int_eq(a, qoff[i]);
    ck_assert_int_eq(b, nqs[i]);
    ck_assert_int_eq(c, voff[i]);
    ck_assert_int_eq(d, nvs[i]);
  }
  lv_space_free(sp);

  /* names of repeated factors */
  static const struct {
    lv_factor_kind k;
    int n;
    const char *name;
  } cases[] = {{LV_FACTOR_R3SO3, 10, "(R^3xSO(3))^10"}, {LV_FACTOR_SO3, 3, "SO(3)^3"},
               {LV_FACTOR_SE3, 2, "SE(3)^2"},          {LV_FACTOR_S3, 4, "(S^3)^4"},
               {LV_FACTOR_R3SO3, 1, "R^3xSO(3)"},      {LV_FACTOR_SE3, 1, "SE(3)"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ck_assert_int_eq(lv_space_new(&sp), 0);
    for (int i = 0; i < cases[c].n; i++) ck_assert_int_eq(lv_space_add(sp, cases[c].k, 0), 0);
    ck_assert_str_eq(lv_space_name(sp), cases[c].name);
    lv_space_free(sp);
  }
  ck_assert_int_eq(lv_space_new(&sp), 0);
  lv_space_add(sp, LV_FACTOR_RN, 3);
  lv_space_add(sp, LV_FACTOR_SO3, 0);
  ck_assert_str_eq(lv_space_name(sp), "R^3xSO(3)");
  lv_space_add(sp, LV_FACTOR_SO3, 0);
  lv_space_add(sp, LV_FACTOR_RN, 1);
  lv_space_add(sp, LV_FACTOR_SO3, 0);
  ck_assert_str_eq(lv_space_name(sp), "R^3xSO(3)^2xR^1xSO(3)");
  lv_space_free(sp);
}
END_TEST

static lv_space *mixed_space(void) {
  lv_space *sp = NULL;
  ck_assert_int_eq(lv_space_new(&sp), 0);
  lv_space_add(sp, LV_FACTOR_RN, 2);
  lv_space_add(sp, LV_FACTOR_SO3, 0);
  lv_space_add(sp, LV_FACTOR_RN, 1);
  lv_space_add(sp, LV_FACTOR_SE3, 0);
  lv_space_add(sp, LV_FACTOR_S3, 0);
  lv_space_add(sp, LV_FACTOR_R3SO3, 0);
  lv_space_add(sp, LV_FACTOR_R3SO3, 0);
  lv_space_add(sp, LV_FACTOR_RN, 3);
  return sp;
}

/* Every product operation equals the factor-wise operation. */
START_TEST(test_product_ops) {
  rng_t r = {0x9e3779b97f4a7c15ULL};
  lv_space *sp = mixed_space();
  int nq = lv_space_nq(sp), nv = lv_space_nv(sp), nf = lv_space_nfactors(sp);
  double q[64], q1[64], qo[64], qa[64], v[40], x[40], y[40], z[40], w[40], e[40];
  double *T = malloc(sizeof(double) * (size_t)(nv * nv));
  ck_assert_ptr_nonnull(T);
  double err_inv = 0.0, err_apply = 0.0;
  for (int trial = 0; trial < 20; trial++) {
    rnd_config(&r, sp, q);
    rnd_config(&r, sp, q1);
    rnd_vec(&r, nv, v);
    rnd_vec(&r, nv, x);
    double h = 0.3 + trial * 0.1;
    ck_assert_int_eq(lv_space_compose_exp(sp, q, h, v, qo), 0);
    memcpy(qa, q, sizeof(double) * (size_t)nq);
    ck_assert_int_eq(lv_space_compose_exp(sp, qa, h, v, qa), 0);
    ck_assert(maxdiff(nq, qa, qo) == 0.0);
    ck_assert_int_eq(lv_space_log(sp, q, q1, w), 0);
    ck_assert_int_eq(lv_space_tangent_apply(sp, v, x, y), 0);
    ck_assert_int_eq(lv_space_tangent_inv_apply(sp, v, x, z), 0);
    ck_assert_int_eq(lv_space_ad(sp, v, x, e), 0);
    tangent_dense(sp, v, T);
    for (int f = 0; f < nf; f++) {
      lv_factor_kind k;
      int qf, nqf, vf, nvf;
      lv_space_factor(sp, f, &k, &qf, &nqf, &vf, &nvf);
      lv_space *s1 = single(k, nvf);
      double o1[12], w1[6], y1[6], T1[36];
      ck_assert_int_eq(lv_space_compose_exp(s1, q + qf, h, v + vf, o1), 0);
      ck_assert(maxdiff(nqf, o1, qo + qf) == 0.0);
      ck_assert_int_eq(lv_space_log(s1, q + qf, q1 + qf, w1), 0);
      ck_assert(maxdiff(nvf, w1, w + vf) == 0.0);
      lv_space_tangent_apply(s1, v + vf, x + vf, y1);
      ck_assert(maxdiff(nvf, y1, y + vf) == 0.0);
      lv_space_tangent_inv_apply(s1, v + vf, x + vf, y1);
      ck_assert(maxdiff(nvf, y1, z + vf) == 0.0);
      lv_space_ad(s1, v + vf, x + vf, y1);
      ck_assert(maxdiff(nvf, y1, e + vf) == 0.0);
      tangent_dense(s1, v + vf, T1);
      for (int i = 0; i < nv; i++)
        for (int j = vf; j < vf + nvf; j++) {
          double ref = (i >= vf && i < vf + nvf) ? T1[nvf * (i - vf) + (j - vf)] : 0.0;
          ck_assert_double_eq(T[nv * i + j], ref);
        }
      lv_space_free(s1);
    }
    /* T (T^{-1} x) = x and the dense matrix agrees with tangent_apply */
    double t[40];
    ck_assert_int_eq(lv_space_tangent_apply(sp, v, z, t), 0);
    double d = maxdiff(nv, t, x) / norm(nv, x);
    if (d > err_inv) err_inv = d;
    for (int i = 0; i < nv; i++) {
      t[i] = 0.0;
      for (int j = 0; j < nv; j++) t[i] += T[nv * i + j] * x[j];
    }
    d = maxdiff(nv, t, y) / norm(nv, x);
    if (d > err_apply) err_apply = d;
    /* aliasing of y and x in the applies */
    memcpy(t, x, sizeof(double) * (size_t)nv);
    lv_space_tangent_apply(sp, v, t, t);
    ck_assert(maxdiff(nv, t, y) == 0.0);
    memcpy(t, x, sizeof(double) * (size_t)nv);
    lv_space_tangent_inv_apply(sp, v, t, t);
    ck_assert(maxdiff(nv, t, z) == 0.0);
    memcpy(t, x, sizeof(double) * (size_t)nv);
    lv_space_ad(sp, v, t, t);
    ck_assert(maxdiff(nv, t, e) == 0.0);
  }
  report("product: T T^{-1} x = x (rel)", err_inv);
  report("product: dense T x = tangent_apply (rel)", err_apply);
  ck_assert(err_inv < 1e-14);
  ck_assert(err_apply < 1e-14);

  /* identity and log round trip over the product */
  double id[64], ww[40];
  ck_assert_int_eq(lv_space_identity(sp, id), 0);
  rnd_vec(&r, nv, v);
  ck_assert_int_eq(lv_space_compose_exp(sp, id, 1.0, v, q), 0);
  ck_assert_int_eq(lv_space_log(sp, id, q, ww), 0);
  report("product: log(exp(v)) = v (abs)", maxdiff(nv, ww, v));
  ck_assert(maxdiff(nv, ww, v) < 1e-14);
  ck_assert_int_eq(lv_space_log(sp, q, q, ww), 0);
  for (int i = 0; i < nv; i++) ck_assert(fabs(ww[i]) < 1e-15);
  free(T);
  lv_space_free(sp);
}
END_TEST

/* Recording sink: the positions every call adds must not depend on v. */
typedef struct {
  lv_sink base;
  int n, cap;
  int *ij;
} rec_sink;

static int rec_add(lv_sink *s, int i, int j, double v) {
  (void)v;
  rec_sink *r = (rec_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  if (r->n < r->cap) {
    r->ij[2 * r->n] = i;
    r->ij[2 * r->n + 1] = j;
  }
  r->n++;
  return 0;
}

static rec_sink rec_new(int n, int cap) {
  rec_sink r;
  memset(&r, 0, sizeof r);
  r.base.add = rec_add;
  r.base.nrows = r.base.ncols = n;
  r.base.scale = 1.0;
  r.cap = cap;
  r.ij = malloc(sizeof(int) * 2 * (size_t)cap);
  ck_assert_ptr_nonnull(r.ij);
  return r;
}

START_TEST(test_tangent_pattern) {
  lv_space *sp = mixed_space();
  int nv = lv_space_nv(sp);
  double v0[40] = {0}, v1[40];
  rng_t r = {12345};
  rnd_vec(&r, nv, v1);
  rec_sink a = rec_new(nv, 1000), b = rec_new(nv, 1000);
  ck_assert_int_eq(lv_space_tangent(sp, v0, &a.base), 0);
  ck_assert_int_eq(lv_space_tangent(sp, v1, &b.base), 0);
  /* R^2 + 9 + 1 + 27 + 9 + 2 * (3 + 9) + 3 */
  ck_assert_int_eq(a.n, 2 + 9 + 1 + 27 + 9 + 24 + 3);
  ck_assert_int_eq(a.n, b.n);
  ck_assert(memcmp(a.ij, b.ij, sizeof(int) * 2 * (size_t)a.n) == 0);
  /* no position twice */
  for (int k = 0; k < a.n; k++)
    for (int l = k + 1; l < a.n; l++)
      ck_assert(!(a.ij[2 * k] == a.ij[2 * l] && a.ij[2 * k + 1] == a.ij[2 * l + 1]));
  free(a.ij);
  free(b.ij);

  /* sink errors propagate */
  lv_sink small = lv_sink_null(3, 3);
  ck_assert_int_eq(lv_space_tangent(sp, v1, &small), LV_EINPUT);

  /* the sink's scale applies */
  double *M = calloc((size_t)(nv * nv), sizeof *M), *Mr = malloc(sizeof(double) * (size_t)(nv * nv));
  ck_assert_ptr_nonnull(M);
  ck_assert_ptr_nonnull(Mr);
  lv_sink dn = lv_sink_dense(M, nv, nv, nv);
  lv_sink view = lv_sink_view(&dn, 0, 0, nv, nv, -2.0, 0);
  ck_assert_int_eq(lv_space_tangent(sp, v1, &view), 0);
  tangent_dense(sp, v1, Mr);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) ck_assert_double_eq(M[i + j * nv], -2.0 * Mr[nv * i + j]);
  free(M);
  free(Mr);
  lv_space_free(sp);
}
END_TEST

/* ------------------------------------------------------------ SO(3) */

START_TEST(test_so3_exp_log) {
  rng_t r = {0x1234567887654321ULL};
  double e_log = 0.0, e_exp = 0.0, e_orth = 0.0, e_det = 0.0, e_rodr = 0.0;
  for (int k = 0; k < NNORMS; k++) {
    for (int t = 0; t < 50; t++) {
      double psi[3], R[9], p2[3], R2[9], RtR[9];
      rnd_len3(&r, NORMS[k], psi);
      lv_so3_exp(psi, R);
      /* log(exp(psi)) = psi */
      lv_so3_log(R, p2);
      double d = maxdiff(3, p2, psi) / NORMS[k];
      if (d > e_log) e_log = d;
      /* exp(log(R)) = R */
      lv_so3_exp(p2, R2);
      d = maxdiff(9, R2, R);
      if (d > e_exp) e_exp = d;
      /* R^T R = I, det R = 1 */
      double Rt[9];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Rt[3 * i + j] = R[3 * j + i];
      matmul(3, Rt, R, RtR);
      for (int i = 0; i < 3; i++) RtR[4 * i] -= 1.0;
      d = maxdiff(9, RtR, (double[9]){0});
      if (d > e_orth) e_orth = d;
      double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                   R[2] * (R[3] * R[7] - R[4] * R[6]);
      if (fabs(det - 1.0) > e_det) e_det = fabs(det - 1.0);
      /* against the matrix exponential series */
      double P[9];
      long double E[9];
      hat(psi, P);
      lseries(3, P, 1, 0, E);
      for (int i = 0; i < 9; i++)
        if (fabsl(E[i] - R[i]) > e_rodr) e_rodr = (double)fabsl(E[i] - R[i]);
    }
  }
  report("SO(3): log(exp(psi)) = psi (rel), |psi| 1e-12..pi-1e-10", e_log);
  report("SO(3): exp(log(R)) = R (abs)", e_exp);
  report("SO(3): R^T R = I (abs)", e_orth);
  report("SO(3): det R = 1", e_det);
  report("SO(3): Rodrigues = series of exp (abs)", e_rodr);
  ck_assert(e_log < 1e-14);
  ck_assert(e_exp < 1e-14);
  ck_assert(e_orth < 4e-15);
  ck_assert(e_det < 4e-15);
  ck_assert(e_rodr < series_tol(1e-15));

  /* exp(log(R)) = R for rotations not built by lv_so3_exp: products */
  double ex = 0.0;
  for (int t = 0; t < 200; t++) {
    double a[3], b[3], Ra[9], Rb[9], R[9], p[3], R2[9];
    rnd_len3(&r, 3.0 * fabs(rnd(&r)) + 0.01, a);
    rnd_len3(&r, 3.0 * fabs(rnd(&r)) + 0.01, b);
    lv_so3_exp(a, Ra);
    lv_so3_exp(b, Rb);
    matmul(3, Ra, Rb, R);
    lv_so3_log(R, p);
    ck_assert(norm(3, p) <= M_PI + 1e-15);
    lv_so3_exp(p, R2);
    if (maxdiff(9, R2, R) > ex) ex = maxdiff(9, R2, R);
  }
  report("SO(3): exp(log(R1 R2)) = R1 R2 (abs)", ex);
  ck_assert(ex < 1e-14);

  /* exact zero */
  double z[3] = {0, 0, 0}, I[9], p[3];
  lv_so3_exp(z, I);
  for (int i = 0; i < 9; i++) ck_assert_double_eq(I[i], (i % 4 == 0) ? 1.0 : 0.0);
  lv_so3_log(I, p);
  for (int i = 0; i < 3; i++) ck_assert_double_eq(p[i], 0.0);
}
END_TEST

START_TEST(test_so3_near_pi) {
  rng_t r = {42};
  double e = 0.0;
  static const double gaps[] = {1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14};
  for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
    for (int t = 0; t < 50; t++) {
      double psi[3], R[9], p[3];
      rnd_len3(&r, M_PI - gaps[g], psi);
      lv_so3_exp(psi, R);
      lv_so3_log(R, p);
      double d = maxdiff(3, p, psi) / M_PI;
      if (d > e) e = d;
    }
  report("SO(3): log(exp(psi)) = psi, pi - |psi| in 1e-2..1e-14 (rel)", e);
  ck_assert(e < 1e-14);

  /* exactly at pi: the space reports LV_EINPUT and returns a valid branch */
  lv_space *sp = single(LV_FACTOR_SO3, 0);
  double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Rpi[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1}, v[3];
  ck_assert_int_eq(lv_space_log(sp, I, Rpi, v), LV_EINPUT);
  ck_assert(fabs(fabs(v[0]) - M_PI) < 1e-15);
  ck_assert(fabs(v[1]) < 1e-15 && fabs(v[2]) < 1e-15);
  double ax[3] = {2.0 / 3, -1.0 / 3, 2.0 / 3}, Rq[9], R2[9];
  for (int i = 0; i < 3; i++) ax[i] *= M_PI;
  lv_so3_exp(ax, Rq);
  ck_assert_int_eq(lv_space_log(sp, I, Rq, v), LV_EINPUT);
  lv_so3_exp(v, R2);
  ck_assert(maxdiff(9, R2, Rq) < 1e-15);
  ck_assert(fabs(norm(3, v) - M_PI) < 1e-15);
  /* just below pi: no status */
  for (int i = 0; i < 3; i++) ax[i] *= (1.0 - 1e-9);
  lv_so3_exp(ax, Rq);
  ck_assert_int_eq(lv_space_log(sp, I, Rq, v), 0);
  ck_assert(maxdiff(3, v, ax) < 1e-15);
  lv_space_free(sp);
}
END_TEST

START_TEST(test_so3_tangent) {
  rng_t r = {777};
  lv_space *sp = single(LV_FACTOR_SO3, 0);
  double e_ser = 0.0, e_fix = 0.0, e_inv = 0.0, e_sink = 0.0;
  for (int k = 0; k < NNORMS; k++)
    for (int t = 0; t < 30; t++) {
      double psi[3], T[9], Ts[9], P[9], x[3], y[3], z[3];
      long double S[9];
      rnd_len3(&r, NORMS[k], psi);
      lv_so3_tangent(psi, T);
      hat(psi, P);
      lseries(3, P, -1, 1, S);
      for (int i = 0; i < 9; i++)
        if (fabsl(S[i] - T[i]) > e_ser) e_ser = (double)fabsl(S[i] - T[i]);
      /* T(v) v = v */
      lv_space_tangent_apply(sp, psi, psi, y);
      double d = maxdiff(3, y, psi) / NORMS[k];
      if (d > e_fix) e_fix = d;
      for (int i = 0; i < 3; i++) y[i] = T[3 * i] * psi[0] + T[3 * i + 1] * psi[1] + T[3 * i + 2] * psi[2];
      d = maxdiff(3, y, psi) / NORMS[k];
      if (d > e_fix) e_fix = d;
      /* T T^{-1} x = x */
      rnd_vec(&r, 3, x);
      lv_space_tangent_inv_apply(sp, psi, x, z);
      lv_space_tangent_apply(sp, psi, z, y);
      d = maxdiff(3, y, x) / norm(3, x);
      if (d > e_inv) e_inv = d;
      /* sink matrix = lv_so3_tangent */
      tangent_dense(sp, psi, Ts);
      d = maxdiff(9, Ts, T);
      if (d > e_sink) e_sink = d;
    }
  report("SO(3): T closed form = sum (-ad)^j/(j+1)! (abs)", e_ser);
  report("SO(3): T(v) v = v (rel)", e_fix);
  report("SO(3): T T^{-1} x = x (rel)", e_inv);
  report("SO(3): sink T = lv_so3_tangent", e_sink);
  ck_assert(e_ser < 1e-14);
  ck_assert(e_fix < 1e-15);
  ck_assert(e_inv < 1e-14);
  ck_assert(e_sink == 0.0);

  /* small angle: T = I - psi~/2 + psi~^2/6 to 1e-16 */
  double et = 0.0, eo = 0.0;
  for (int t = 0; t < 100; t++) {
    double psi[3], T[9], P[9], P2[9];
    rnd_len3(&r, 1e-9, psi);
    lv_so3_tangent(psi, T);
    hat(psi, P);
    matmul(3, P, P, P2);
    for (int i = 0; i < 9; i++) {
      long double ref = (i % 4 == 0 ? 1.0L : 0.0L) - P[i] / 2.0L + P2[i] / 6.0L;
      double d = (double)fabsl(T[i] - ref);
      if (d > et) et = d;
      if (i % 4 && d / fabs(P[i] / 2.0) > eo) eo = d / fabs(P[i] / 2.0);
    }
  }
  report("SO(3): T at |psi|=1e-9 vs I - psi~/2 + psi~^2/6 (abs)", et);
  report("SO(3): same, off-diagonal (rel)", eo);
  ck_assert(et <= 1e-16);
  ck_assert(eo < 4e-16);

  /* continuity across the series / closed-form switch at phi = 1 */
  double a[3] = {0.6, 0.0, 0.8}, b[3], Ta[9], Tb[9];
  for (int i = 0; i < 3; i++) b[i] = a[i] * (1.0 + 2e-16);
  for (int i = 0; i < 3; i++) a[i] *= (1.0 - 2e-16);
  lv_so3_tangent(a, Ta);
  lv_so3_tangent(b, Tb);
  ck_assert(maxdiff(9, Ta, Tb) < 2e-15);
  lv_space_free(sp);
}
END_TEST

/* D = d(T^{-1}(psi) x)/dpsi (lv_so3_tangent_inv_deriv, analytic) against
 * central differences of lv_space_tangent_inv_apply, step 1e-5 (truncation
 * and round-off both ~1e-10 relative); y the inverse applied to round-off;
 * D(0) = -x~/2 exactly; continuity across the series switch at |psi| = 1. */
START_TEST(test_so3_tangent_inv_deriv) {
  rng_t r = {4242};
  lv_space *sp = single(LV_FACTOR_SO3, 0);
  static const double lens[] = {0.0, 1e-12, 1e-8, 1e-4, 1e-2, 0.5, 0.999999, 1.0, 1.000001, 2.0, 3.0, M_PI, 4.0, 5.5};
  double e_fd = 0.0, e_y = 0.0, e_ti = 0.0;
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
    for (int t = 0; t < 20; t++) {
      double psi[3], x[3], y[3], yr[3], D[9], Dr[9], Ti[9], Tt[9], I3[9];
      rnd_len3(&r, lens[k] > 0 ? lens[k] : 1.0, psi);
      if (lens[k] == 0.0) psi[0] = psi[1] = psi[2] = 0.0;
      rnd_vec(&r, 3, x);
      lv_so3_tangent_inv_deriv(psi, x, y, D, Ti);
      lv_space_tangent_inv_apply(sp, psi, x, yr);
      e_y = fmax(e_y, maxdiff(3, y, yr) / norm(3, yr));
      /* Ti = T^{-1}: T Ti = I, and lv_so3_tangent_inv gives the same */
      lv_so3_tangent(psi, Tt);
      matmul(3, Tt, Ti, I3);
      for (int i = 0; i < 3; i++) I3[4 * i] -= 1.0;
      e_ti = fmax(e_ti, maxdiff(9, I3, (double[9]){0}));
      double Ti2[9];
      lv_so3_tangent_inv(psi, Ti2);
      ck_assert(maxdiff(9, Ti, Ti2) == 0.0);
      for (int j = 0; j < 3; j++) {
        double p1[3], p2[3], y1[3], y2[3], st = 1e-5;
        memcpy(p1, psi, sizeof p1);
        memcpy(p2, psi, sizeof p2);
        p1[j] += st;
        p2[j] -= st;
        lv_space_tangent_inv_apply(sp, p1, x, y1);
        lv_space_tangent_inv_apply(sp, p2, x, y2);
        for (int i = 0; i < 3; i++) Dr[3 * i + j] = (y1[i] - y2[i]) / (p1[j] - p2[j]);
      }
      double scale = 0.0;
      for (int i = 0; i < 9; i++) scale = fmax(scale, fabs(Dr[i]));
      e_fd = fmax(e_fd, maxdiff(9, D, Dr) / scale);
      /* aliasing y = x */
      double xa[3] = {x[0], x[1], x[2]}, Da[9];
      lv_so3_tangent_inv_deriv(psi, xa, xa, Da, NULL);
      ck_assert(maxdiff(3, xa, y) == 0.0 && maxdiff(9, Da, D) == 0.0);
    }
  report("SO(3): d(T^{-1} x)/dpsi vs central differences (rel)", e_fd);
  report("SO(3): its y vs lv_space_tangent_inv_apply (rel)", e_y);
  ck_assert_msg(e_fd < 1e-8, "dT^-1: %.3e", e_fd);
  ck_assert(e_y < 1e-15);
  report("SO(3): its T^{-1} matrix (and lv_so3_tangent_inv), |T Ti - I|", e_ti);
  ck_assert(e_ti < 1e-14);

  /* at psi = 0: D = -x~/2 */
  double z[3] = {0, 0, 0}, x[3] = {0.3, -1.2, 0.7}, y[3], D[9], H[9];
  lv_so3_tangent_inv_deriv(z, x, y, D, NULL);
  hat(x, H);
  for (int i = 0; i < 9; i++) ck_assert_double_eq(D[i], -0.5 * H[i]);

  /* continuity at phi = 1 (series below, closed form above) */
  double a[3] = {0.6, 0.0, 0.8}, b[3], Da[9], Db[9], ya[3], yb[3];
  for (int i = 0; i < 3; i++) b[i] = a[i] * (1.0 + 2e-16);
  for (int i = 0; i < 3; i++) a[i] *= (1.0 - 2e-16);
  lv_so3_tangent_inv_deriv(a, x, ya, Da, NULL);
  lv_so3_tangent_inv_deriv(b, x, yb, Db, NULL);
  report("SO(3): dT^{-1} jump at |psi| = 1", maxdiff(9, Da, Db));
  ck_assert(maxdiff(9, Da, Db) < 1e-14);
  lv_space_free(sp);
}
END_TEST

/* lv_space_tangent_inv_deriv on a product with every kind: y =
 * lv_space_tangent_inv_apply to round-off, D against central differences over the whole
 * space (so zero blocks are checked too), and a pattern independent of v. */
START_TEST(test_tangent_inv_deriv_product) {
  rng_t r = {99};
  lv_space *sp = mixed_space();
  int nv = lv_space_nv(sp);
  double v[40], x[40], y[40], yr[40], y1[40], y2[40], v1[40];
  double *D = calloc((size_t)(nv * nv), sizeof *D), *Dr = calloc((size_t)(nv * nv), sizeof *Dr);
  ck_assert_ptr_nonnull(D);
  ck_assert_ptr_nonnull(Dr);
  double e_fd = 0.0;
  for (int t = 0; t < 10; t++) {
    rnd_vec(&r, nv, v);
    for (int i = 0; i < nv; i++) v[i] *= 1.5;
    rnd_vec(&r, nv, x);
    memset(D, 0, sizeof(double) * (size_t)(nv * nv));
    lv_sink s = lv_sink_dense(D, nv, nv, nv);
    ck_assert_int_eq(lv_space_tangent_inv_deriv(sp, v, x, y, &s), 0);
    ck_assert_int_eq(lv_space_tangent_inv_apply(sp, v, x, yr), 0);
    ck_assert(maxdiff(nv, y, yr) < 1e-15 * norm(nv, yr));
    for (int j = 0; j < nv; j++) {
      double st = 1e-5;
      memcpy(v1, v, sizeof(double) * (size_t)nv);
      v1[j] = v[j] + st;
      lv_space_tangent_inv_apply(sp, v1, x, y1);
      v1[j] = v[j] - st;
      lv_space_tangent_inv_apply(sp, v1, x, y2);
      for (int i = 0; i < nv; i++) Dr[i + j * nv] = (y1[i] - y2[i]) / (2.0 * st);
    }
    double scale = 0.0;
    for (int i = 0; i < nv * nv; i++) scale = fmax(scale, fabs(Dr[i]));
    e_fd = fmax(e_fd, maxdiff(nv * nv, D, Dr) / scale);
  }
  report("product: d(T^{-1} x)/dv vs central differences (rel)", e_fd);
  ck_assert_msg(e_fd < 1e-8, "product dT^-1: %.3e", e_fd);

  rec_sink a = rec_new(nv, 1000), b = rec_new(nv, 1000);
  double v0[40] = {0};
  ck_assert_int_eq(lv_space_tangent_inv_deriv(sp, v0, x, y, &a.base), 0);
  ck_assert_int_eq(lv_space_tangent_inv_deriv(sp, v, x, y, &b.base), 0);
  /* SO(3) 9 + SE(3) 27 + S^3 9 + 2 R^3xSO(3) 9 each */
  ck_assert_int_eq(a.n, 9 + 27 + 9 + 18);
  ck_assert_int_eq(a.n, b.n);
  ck_assert(memcmp(a.ij, b.ij, sizeof(int) * 2 * (size_t)a.n) == 0);
  free(a.ij);
  free(b.ij);
  free(D);
  free(Dr);
  lv_space_free(sp);
}
END_TEST

/* d/de exp((w + e dw)~) at e = 0 equals exp(w~) (T(w) dw)~, checked for each
 * kind by central differences of lv_space_compose_exp from the identity. */
START_TEST(test_dexp_fd) {
  rng_t r = {2024};
  static const lv_factor_kind kinds[4] = {LV_FACTOR_SO3, LV_FACTOR_S3, LV_FACTOR_R3SO3,
                                          LV_FACTOR_SE3};
  static const char *names[4] = {"SO(3)", "S^3", "R^3xSO(3)", "SE(3)"};
  static const double lens[] = {1e-6, 1e-3, 0.3, 1.0, 2.0, 3.0};
  for (int kk = 0; kk < 4; kk++) {
    lv_space *sp = single(kinds[kk], 0);
    int nv = lv_space_nv(sp);
    double emax = 0.0;
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
      for (int t = 0; t < 10; t++) {
        double w[6], dw[6], id[12], qp[12], qm[12], q0[12], wp[6], wm[6], Tdw[6];
        rnd_vec(&r, nv, w);
        rnd_len3(&r, lens[l], w + nv - 3);
        rnd_vec(&r, nv, dw);
        lv_space_identity(sp, id);
        double eps = 1e-5;
        for (int i = 0; i < nv; i++) {
          wp[i] = w[i] + eps * dw[i];
          wm[i] = w[i] - eps * dw[i];
        }
        lv_space_compose_exp(sp, id, 1.0, wp, qp);
        lv_space_compose_exp(sp, id, 1.0, wm, qm);
        lv_space_compose_exp(sp, id, 1.0, w, q0);
        lv_space_tangent_apply(sp, w, dw, Tdw);
        double fd[16], dref[16];
        int n = 0;
        if (kinds[kk] == LV_FACTOR_SO3) {
          double P[9];
          for (int i = 0; i < 9; i++) fd[i] = (qp[i] - qm[i]) / (2 * eps);
          hat(Tdw, P);
          matmul(3, q0, P, dref);
          n = 9;
        } else if (kinds[kk] == LV_FACTOR_S3) {
          /* dq = q (0, T dw / 2) */
          double a[4] = {0, 0.5 * Tdw[0], 0.5 * Tdw[1], 0.5 * Tdw[2]}, *p = q0;
          for (int i = 0; i < 4; i++) fd[i] = (qp[i] - qm[i]) / (2 * eps);
          dref[0] = p[0] * a[0] - p[1] * a[1] - p[2] * a[2] - p[3] * a[3];
          dref[1] = p[0] * a[1] + p[1] * a[0] + p[2] * a[3] - p[3] * a[2];
          dref[2] = p[0] * a[2] - p[1] * a[3] + p[2] * a[0] + p[3] * a[1];
          dref[3] = p[0] * a[3] + p[1] * a[2] - p[2] * a[1] + p[3] * a[0];
          n = 4;
        } else if (kinds[kk] == LV_FACTOR_R3SO3) {
          double P[9];
          for (int i = 0; i < 12; i++) fd[i] = (qp[i] - qm[i]) / (2 * eps);
          for (int i = 0; i < 3; i++) dref[i] = Tdw[i];
          hat(Tdw + 3, P);
          matmul(3, q0 + 3, P, dref + 3);
          n = 12;
        } else {
          double Hp[16], Hm[16], H0[16], W[16];
          se3_H(qp, Hp);
          se3_H(qm, Hm);
          se3_H(q0, H0);
          for (int i = 0; i < 16; i++) fd[i] = (Hp[i] - Hm[i]) / (2 * eps);
          se3_tilde(Tdw, W);
          matmul(4, H0, W, dref);
          n = 16;
        }
        double sc = norm(n, dref) + 1e-300;
        double d = maxdiff(n, fd, dref) / sc;
        if (d > emax) emax = d;
      }
    char buf[96];
    snprintf(buf, sizeof buf, "%s: FD d/de exp((w+e dw)~) = exp(w~)(T dw)~ (rel)", names[kk]);
    report(buf, emax);
    ck_assert_msg(emax < 1e-8, "%s: %g", names[kk], emax);
    lv_space_free(sp);
  }
}
END_TEST

/* ------------------------------------------------------------ S^3 */

static void quat_to_rot(const double *q, double R[9]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double R0[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                  2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                  2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  memcpy(R, R0, sizeof R0);
}

START_TEST(test_s3_vs_so3) {
  rng_t r = {99};
  lv_space *s3 = single(LV_FACTOR_S3, 0), *so3 = single(LV_FACTOR_SO3, 0);
  ck_assert_int_eq(lv_space_nq(s3), 4);
  ck_assert_int_eq(lv_space_nv(s3), 3);
  ck_assert_str_eq(lv_space_name(s3), "S^3");
  double e_comp = 0.0, e_log = 0.0, e_log0 = 0.0, e_unit = 0.0, e_T = 0.0;
  for (int k = 0; k < NNORMS; k++)
    for (int t = 0; t < 20; t++) {
      double q[4], w[3], qn[4], R[9], Rn[9], Rq[9], v[3], v2[3];
      rnd_vec(&r, 4, q);
      double nn = norm(4, q);
      for (int i = 0; i < 4; i++) q[i] /= nn;
      rnd_len3(&r, NORMS[k], w);
      double h = 0.9;
      for (int i = 0; i < 3; i++) w[i] /= h;
      ck_assert_int_eq(lv_space_compose_exp(s3, q, h, w, qn), 0);
      quat_to_rot(q, R);
      ck_assert_int_eq(lv_space_compose_exp(so3, R, h, w, Rn), 0);
      quat_to_rot(qn, Rq);
      double d = maxdiff(9, Rq, Rn);
      if (d > e_comp) e_comp = d;
      if (fabs(norm(4, qn) - 1.0) > e_unit) e_unit = fabs(norm(4, qn) - 1.0);
      /* log(q0^{-1} q1) recovers h w: relative accuracy from the identity,
       * absolute (the storage of qn is) from a general q0 */
      ck_assert_int_eq(lv_space_log(s3, q, qn, v), 0);
      for (int i = 0; i < 3; i++) v2[i] = h * w[i];
      d = maxdiff(3, v, v2);
      if (d > e_log) e_log = d;
      double id[4] = {1, 0, 0, 0}, e1[4], v0[3];
      lv_space_compose_exp(s3, id, h, w, e1);
      ck_assert_int_eq(lv_space_log(s3, id, e1, v0), 0);
      d = maxdiff(3, v0, v2) / NORMS[k];
      if (d > e_log0) e_log0 = d;
      /* and agrees with the SO(3) log */
      double so3v[3];
      ck_assert_int_eq(lv_space_log(so3, R, Rn, so3v), 0);
      ck_assert(maxdiff(3, so3v, v) < 1e-14);
      /* independent of the sign of q1 */
      double qneg[4] = {-qn[0], -qn[1], -qn[2], -qn[3]};
      ck_assert_int_eq(lv_space_log(s3, q, qneg, v2), 0);
      ck_assert(maxdiff(3, v, v2) == 0.0);
      double T1[9], T2[9];
      tangent_dense(s3, w, T1);
      tangent_dense(so3, w, T2);
      if (maxdiff(9, T1, T2) > e_T) e_T = maxdiff(9, T1, T2);
      /* ad = cross product */
      double x[3], y[3], c[3];
      rnd_vec(&r, 3, x);
      lv_space_ad(s3, w, x, y);
      c[0] = w[1] * x[2] - w[2] * x[1];
      c[1] = w[2] * x[0] - w[0] * x[2];
      c[2] = w[0] * x[1] - w[1] * x[0];
      ck_assert(maxdiff(3, y, c) == 0.0);
    }
  report("S^3: rot(q o exp) = R o exp (abs)", e_comp);
  report("S^3: |q| = 1 after compose", e_unit);
  report("S^3: log(q0^{-1} q1) = h w (abs)", e_log);
  report("S^3: log(exp(h w)) = h w (rel)", e_log0);
  ck_assert(e_comp < 1e-14);
  ck_assert(e_unit < 1e-15);
  ck_assert(e_log < 1e-14);
  ck_assert(e_log0 < 1e-14);
  ck_assert(e_T == 0.0);

  /* half turn */
  double q0[4] = {1, 0, 0, 0}, q1[4] = {0, 0, 1, 0}, v[3];
  ck_assert_int_eq(lv_space_log(s3, q0, q1, v), LV_EINPUT);
  ck_assert(fabs(norm(3, v) - M_PI) < 1e-15);
  ck_assert(fabs(fabs(v[1]) - M_PI) < 1e-15);
  /* identity */
  ck_assert_int_eq(lv_space_identity(s3, q0), 0);
  ck_assert(q0[0] == 1.0 && q0[1] == 0.0 && q0[2] == 0.0 && q0[3] == 0.0);
  lv_space_free(s3);
  lv_space_free(so3);
}
END_TEST

/* ------------------------------------------------------------ SE(3) */

START_TEST(test_se3_homogeneous) {
  rng_t r = {31337};
  lv_space *sp = single(LV_FACTOR_SE3, 0);
  ck_assert_int_eq(lv_space_nq(sp), 12);
  ck_assert_int_eq(lv_space_nv(sp), 6);
  ck_assert_str_eq(lv_space_name(sp), "SE(3)");
  double e_exp = 0.0, e_comp = 0.0, e_log = 0.0, e_rt = 0.0;
  for (int k = 0; k < NNORMS; k++)
    for (int t = 0; t < 20; t++) {
      double w[6], id[12], q0[12], q[12], qn[12], H[16], Hq[16], Hn[16], W[16], ref[16];
      long double E[16];
      rnd_vec(&r, 3, w);
      rnd_len3(&r, NORMS[k], w + 3);
      lv_space_identity(sp, id);
      /* closed-form exp against the series of the 4x4 matrix */
      ck_assert_int_eq(lv_space_compose_exp(sp, id, 1.0, w, q0), 0);
      se3_tilde(w, W);
      lseries(4, W, 1, 0, E);
      se3_H(q0, H);
      for (int i = 0; i < 16; i++)
        if (fabsl(E[i] - H[i]) > e_exp) e_exp = (double)fabsl(E[i] - H[i]);
      /* composition = product of homogeneous matrices */
      rnd_config(&r, sp, q);
      double h = 0.7;
      for (int i = 0; i < 6; i++) w[i] /= h;
      ck_assert_int_eq(lv_space_compose_exp(sp, q, h, w, qn), 0);
      se3_H(q, Hq);
      se3_H(qn, Hn);
      matmul(4, Hq, H, ref);
      double d = maxdiff(16, Hn, ref);
      if (d > e_comp) e_comp = d;
      /* log(q^{-1} qn) = h w */
      double v[6], hw[6];
      ck_assert_int_eq(lv_space_log(sp, q, qn, v), 0);
      for (int i = 0; i < 6; i++) hw[i] = h * w[i];
      d = maxdiff(6, v, hw) / norm(6, hw);
      if (d > e_log) e_log = d;
      /* q o exp(log(q^{-1} q1)) = q1 for unrelated q, q1 */
      double q1[12], q2[12];
      rnd_config(&r, sp, q1);
      ck_assert_int_eq(lv_space_log(sp, q, q1, v), 0);
      lv_space_compose_exp(sp, q, 1.0, v, q2);
      d = maxdiff(12, q2, q1);
      if (d > e_rt) e_rt = d;
    }
  report("SE(3): closed-form exp = series of 4x4 exp (abs)", e_exp);
  report("SE(3): H(q o exp(h w~)) = H(q) exp(h w~) (abs)", e_comp);
  report("SE(3): log(q^{-1} q o exp(h w)) = h w (rel)", e_log);
  report("SE(3): q o exp(log(q^{-1} q1)) = q1 (abs)", e_rt);
  ck_assert(e_exp < 1e-14);
  ck_assert(e_comp < 1e-14);
  ck_assert(e_log < 1e-14);
  ck_assert(e_rt < 1e-14);
  lv_space_free(sp);
}
END_TEST

START_TEST(test_se3_tangent) {
  rng_t r = {5150};
  lv_space *sp = single(LV_FACTOR_SE3, 0);
  double e_ser = 0.0, e_fix = 0.0, e_inv = 0.0, e_ad = 0.0;
  for (int k = 0; k < NNORMS; k++)
    for (int t = 0; t < 30; t++) {
      double w[6], T[36], A[36], P[9], Uh[9], x[6], y[6], z[6];
      long double S[36];
      rnd_vec(&r, 3, w);
      rnd_len3(&r, NORMS[k], w + 3);
      tangent_dense(sp, w, T);
      hat(w + 3, P);
      hat(w, Uh);
      memset(A, 0, sizeof A);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          A[6 * i + j] = P[3 * i + j];
          A[6 * (i + 3) + j + 3] = P[3 * i + j];
          A[6 * i + j + 3] = Uh[3 * i + j];
        }
      lseries(6, A, -1, 1, S);
      for (int i = 0; i < 36; i++)
        if (fabsl(S[i] - T[i]) > e_ser) e_ser = (double)fabsl(S[i] - T[i]);
      /* T(w) w = w */
      lv_space_tangent_apply(sp, w, w, y);
      double d = maxdiff(6, y, w) / norm(6, w);
      if (d > e_fix) e_fix = d;
      /* T T^{-1} x = x */
      rnd_vec(&r, 6, x);
      lv_space_tangent_inv_apply(sp, w, x, z);
      lv_space_tangent_apply(sp, w, z, y);
      d = maxdiff(6, y, x) / norm(6, x);
      if (d > e_inv) e_inv = d;
      /* (ad_w x)~ = [w~, x~] */
      double Wm[16], Xm[16], C1[16], C2[16], Y[16];
      lv_space_ad(sp, w, x, y);
      se3_tilde(w, Wm);
      se3_tilde(x, Xm);
      matmul(4, Wm, Xm, C1);
      matmul(4, Xm, Wm, C2);
      for (int i = 0; i < 16; i++) C1[i] -= C2[i];
      se3_tilde(y, Y);
      d = maxdiff(16, Y, C1);
      if (d > e_ad) e_ad = d;
    }
  report("SE(3): T closed form = sum (-ad)^j/(j+1)! (abs, |U|<=1.7)", e_ser);
  report("SE(3): T(w) w = w (rel)", e_fix);
  report("SE(3): T T^{-1} x = x (rel)", e_inv);
  report("SE(3): (ad_w x)~ = [w~, x~] (abs)", e_ad);
  ck_assert(e_ser < 1e-14);
  ck_assert(e_fix < 1e-15);
  ck_assert(e_inv < 1e-14);
  ck_assert(e_ad < 1e-15);
  lv_space_free(sp);
}
END_TEST

/* ------------------------------------------------------------ R^3 x SO(3) */

START_TEST(test_r3so3) {
  rng_t r = {8080};
  lv_space *sp = single(LV_FACTOR_R3SO3, 0), *r3 = NULL, *so3 = single(LV_FACTOR_SO3, 0);
  ck_assert_int_eq(lv_space_new_rn(&r3, 3), 0);
  ck_assert_str_eq(lv_space_name(sp), "R^3xSO(3)");
  ck_assert_int_eq(lv_space_nq(sp), 12);
  ck_assert_int_eq(lv_space_nv(sp), 6);
  for (int t = 0; t < 100; t++) {
    double q[12], q1[12], qn[12], w[6], x[3], R[9], v[6], v1[3], v2[3];
    rnd_config(&r, sp, q);
    rnd_config(&r, sp, q1);
    rnd_vec(&r, 6, w);
    for (int i = 0; i < 6; i++) w[i] *= 2.0;
    ck_assert_int_eq(lv_space_compose_exp(sp, q, 0.8, w, qn), 0);
    lv_space_compose_exp(r3, q, 0.8, w, x);
    lv_space_compose_exp(so3, q + 3, 0.8, w + 3, R);
    ck_assert(maxdiff(3, qn, x) == 0.0);
    ck_assert(maxdiff(9, qn + 3, R) == 0.0);
    ck_assert_int_eq(lv_space_log(sp, q, q1, v), 0);
    lv_space_log(r3, q, q1, v1);
    lv_space_log(so3, q + 3, q1 + 3, v2);
    ck_assert(maxdiff(3, v, v1) == 0.0);
    ck_assert(maxdiff(3, v + 3, v2) == 0.0);
    double T[36], T3[9], y[6], xx[6];
    tangent_dense(sp, w, T);
    lv_so3_tangent(w + 3, T3);
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) {
        double ref = (i < 3 || j < 3) ? (i == j ? 1.0 : 0.0) : T3[3 * (i - 3) + j - 3];
        ck_assert_double_eq(T[6 * i + j], ref);
      }
    rnd_vec(&r, 6, xx);
    lv_space_ad(sp, w, xx, y);
    ck_assert(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
    ck_assert(fabs(y[3] - (w[4] * xx[5] - w[5] * xx[4])) < 1e-15);
    ck_assert(fabs(y[4] - (w[5] * xx[3] - w[3] * xx[5])) < 1e-15);
    ck_assert(fabs(y[5] - (w[3] * xx[4] - w[4] * xx[3])) < 1e-15);
  }
  lv_space_free(sp);
  lv_space_free(r3);
  lv_space_free(so3);
}
END_TEST

/* ------------------------------------------------------------ normalize */

static double orth_err(const double *R) {
  double m = 0.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j] - (i == j);
      if (fabs(s) > m) m = fabs(s);
    }
  return m;
}

START_TEST(test_normalize) {
  rng_t r = {271828};
  lv_space *sp = mixed_space();
  int nq = lv_space_nq(sp);
  double q[64], qp[64], e_orth = 0.0, e_dist = 0.0;
  for (int t = 0; t < 20; t++) {
    rnd_config(&r, sp, q);
    memcpy(qp, q, sizeof(double) * (size_t)nq);
    for (int i = 0; i < nq; i++) qp[i] += 1e-7 * rnd(&r);
    ck_assert_int_eq(lv_space_normalize(sp, qp), 0);
    for (int f = 0; f < lv_space_nfactors(sp); f++) {
      lv_factor_kind k;
      int qo;
      lv_space_factor(sp, f, &k, &qo, NULL, NULL, NULL);
      if (k == LV_FACTOR_SO3 || k == LV_FACTOR_R3SO3 || k == LV_FACTOR_SE3) {
        int o = qo + (k == LV_FACTOR_SO3 ? 0 : 3);
        double e = orth_err(qp + o);
        if (e > e_orth) e_orth = e;
      } else if (k == LV_FACTOR_S3) {
        double e = fabs(norm(4, qp + qo) - 1.0);
        if (e > e_orth) e_orth = e;
      }
    }
    double d = maxdiff(nq, qp, q);
    if (d > e_dist) e_dist = d;
    /* an exact configuration is left (nearly) untouched */
    memcpy(qp, q, sizeof(double) * (size_t)nq);
    ck_assert_int_eq(lv_space_normalize(sp, qp), 0);
    ck_assert(maxdiff(nq, qp, q) < 1e-15);
  }
  report("normalize: orthogonality after 1e-7 perturbation", e_orth);
  ck_assert(e_orth < 1e-15);
  ck_assert(e_dist < 1e-6);

  /* far from orthogonal: R = Q S with S symmetric positive definite gives Q */
  lv_space *so3 = single(LV_FACTOR_SO3, 0);
  double e_polar = 0.0;
  for (int t = 0; t < 50; t++) {
    double Q[9], S[9], R[9], psi[3], B[9];
    rnd_len3(&r, 3.0 * fabs(rnd(&r)), psi);
    lv_so3_exp(psi, Q);
    rnd_vec(&r, 9, B);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) S[3 * i + j] = 0.45 * (B[3 * i + j] + B[3 * j + i]) / 2;
    double sc = 0.1 + 5.0 * fabs(rnd(&r));
    for (int i = 0; i < 3; i++) S[4 * i] += 1.0;
    for (int i = 0; i < 9; i++) S[i] *= sc;
    matmul(3, Q, S, R);
    ck_assert_int_eq(lv_space_normalize(so3, R), 0);
    if (maxdiff(9, R, Q) > e_polar) e_polar = maxdiff(9, R, Q);
  }
  report("normalize: polar factor of Q S (abs)", e_polar);
  ck_assert(e_polar < 1e-13);
  double refl[9] = {1, 0, 0, 0, 1, 0, 0, 0, -1};
  ck_assert_int_eq(lv_space_normalize(so3, refl), LV_EINPUT);
  double nanR[9] = {NAN, 0, 0, 0, 1, 0, 0, 0, 1};
  ck_assert_int_eq(lv_space_normalize(so3, nanR), LV_EINPUT);
  lv_space_free(so3);

  lv_space *s3 = single(LV_FACTOR_S3, 0);
  double qq[4] = {3, 0, 4, 0}, z4[4] = {0, 0, 0, 0};
  ck_assert_int_eq(lv_space_normalize(s3, qq), 0);
  ck_assert(fabs(qq[0] - 0.6) < 1e-16 && fabs(qq[2] - 0.8) < 1e-16);
  ck_assert_int_eq(lv_space_normalize(s3, z4), LV_EINPUT);
  lv_space_free(s3);
  lv_space_free(sp);
}
END_TEST

/* ------------------------------------------------------------ scale */

static int count_add(lv_sink *s, int i, int j, double v) {
  (void)v;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  (*(long *)s->target)++;
  return 0;
}

START_TEST(test_large_chain) {
  const int N = 100000;
  lv_space *sp = NULL;
  ck_assert_int_eq(lv_space_new(&sp), 0);
  for (int i = 0; i < N; i++) ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_R3SO3, 0), 0);
  ck_assert_str_eq(lv_space_name(sp), "(R^3xSO(3))^100000");
  ck_assert_int_eq(lv_space_nfactors(sp), N);
  ck_assert_int_eq(lv_space_nq(sp), 12 * N);
  ck_assert_int_eq(lv_space_nv(sp), 6 * N);
  int qo, vo;
  ck_assert_int_eq(lv_space_factor(sp, N - 1, NULL, &qo, NULL, &vo, NULL), 0);
  ck_assert_int_eq(qo, 12 * (N - 1));
  ck_assert_int_eq(vo, 6 * (N - 1));

  int nq = lv_space_nq(sp), nv = lv_space_nv(sp);
  double *q = malloc(sizeof(double) * (size_t)nq), *q1 = malloc(sizeof(double) * (size_t)nq);
  double *v = malloc(sizeof(double) * (size_t)nv), *w = malloc(sizeof(double) * (size_t)nv);
  ck_assert(q && q1 && v && w);
  rng_t r = {1};
  rnd_vec(&r, nv, v);
  ck_assert_int_eq(lv_space_identity(sp, q), 0);
  ck_assert_int_eq(lv_space_compose_exp(sp, q, 1.0, v, q1), 0);
  ck_assert_int_eq(lv_space_log(sp, q, q1, w), 0);
  ck_assert(maxdiff(nv, v, w) < 1e-14);
  long count = 0;
  lv_sink cs;
  memset(&cs, 0, sizeof cs);
  cs.add = count_add;
  cs.target = &count;
  cs.nrows = cs.ncols = nv;
  cs.scale = 1.0;
  ck_assert_int_eq(lv_space_tangent(sp, v, &cs), 0);
  ck_assert_int_eq(count, 12L * N);
  ck_assert_int_eq(lv_space_tangent_inv_apply(sp, v, v, w), 0);
  ck_assert_int_eq(lv_space_tangent_apply(sp, v, w, w), 0);
  ck_assert(maxdiff(nv, v, w) < 1e-14);
  ck_assert_int_eq(lv_space_normalize(sp, q1), 0);

  /* alternating factors keep the name linear in N */
  lv_space *alt = NULL;
  ck_assert_int_eq(lv_space_new(&alt), 0);
  for (int i = 0; i < N; i++) {
    ck_assert_int_eq(lv_space_add(alt, LV_FACTOR_RN, 1), 0);
    ck_assert_int_eq(lv_space_add(alt, LV_FACTOR_SO3, 0), 0);
  }
  ck_assert_int_eq(lv_space_nfactors(alt), 2 * N);
  ck_assert_int_eq((int)strlen(lv_space_name(alt)), N * 10 - 1); /* "R^1xSO(3)x" */
  lv_space_free(alt);
  free(q);
  free(q1);
  free(v);
  free(w);
  lv_space_free(sp);
}
END_TEST

/* ------------------------------------------------------------ unit dual quaternions */

/* Pose (x, R) of an SE(3) configuration as the 4x4 homogeneous matrix. */
static void pose_H(const double x[3], const double R[9], double H[16]) {
  double q[12];
  memcpy(q, x, 3 * sizeof *q);
  memcpy(q + 3, R, 9 * sizeof *q);
  se3_H(q, H);
}

/* Random UDQ configuration: exp of a random tangent from the identity. */
static void udq_rnd(rng_t *r, const lv_space *sp, double len, double q[8]) {
  double w[6];
  rnd_vec(r, 6, w);
  rnd_len3(r, len, w + 3);
  lv_space_identity(sp, q);
  ck_assert_int_eq(lv_space_compose_exp(sp, q, 1.0, w, q), 0);
}

/* The group: layout, identity, the pose of exp against SE(3)'s exp (an
 * independent 4x4 homogeneous product), the homomorphism to SE(3), log as
 * the inverse of exp, and the unit / orthogonality constraints. */
START_TEST(test_udq_group) {
  rng_t r = {4711};
  lv_space *sp = single(LV_FACTOR_UDQ, 0), *se = single(LV_FACTOR_SE3, 0);
  ck_assert_int_eq(lv_space_nq(sp), 8);
  ck_assert_int_eq(lv_space_nv(sp), 6);
  ck_assert_str_eq(lv_space_name(sp), "UDQ");
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_UDQ, 0), 0);
  ck_assert_str_eq(lv_space_name(sp), "UDQ^2");
  lv_space_free(sp);
  sp = single(LV_FACTOR_UDQ, 0);
  double id[8], x[3], R[9];
  lv_space_identity(sp, id);
  for (int i = 0; i < 8; i++) ck_assert(id[i] == (i == 0));
  static const double lens[] = {1e-9, 1e-4, 0.3, 1.0, 2.5, 3.0};
  double e_exp = 0.0, e_hom = 0.0, e_log = 0.0, e_unit = 0.0;
  for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
    for (int t = 0; t < 20; t++) {
      double w[6], q[8], qs[12], ids[12], H[16], Hs[16];
      rnd_vec(&r, 6, w);
      rnd_len3(&r, lens[l], w + 3);
      ck_assert_int_eq(lv_space_compose_exp(sp, id, 1.0, w, q), 0);
      lv_space_identity(se, ids);
      lv_space_compose_exp(se, ids, 1.0, w, qs);
      ck_assert_int_eq(lv_space_pose(sp, 0, q, x, R), 0);
      pose_H(x, R, H);
      se3_H(qs, Hs);
      e_exp = fmax(e_exp, maxdiff(16, H, Hs));
      /* log(exp(w)) = w (|psi| < pi) */
      double wl[6];
      ck_assert_int_eq(lv_space_log(sp, id, q, wl), 0);
      e_log = fmax(e_log, maxdiff(6, wl, w) / fmax(1.0, norm(6, w)));
      /* |r| = 1, r . d = 0 */
      double rr = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
      double rd = q[0] * q[4] + q[1] * q[5] + q[2] * q[6] + q[3] * q[7];
      e_unit = fmax(e_unit, fmax(fabs(rr - 1.0), fabs(rd)));
      /* pose(a o exp(w)) = H(a) H(exp(w)) and log(a, a o exp(w)) = w */
      double a[8], b[8], Ha[16], Hb[16], HaHs[16], wab[6];
      udq_rnd(&r, sp, 2.0, a);
      lv_space_compose_exp(sp, a, 1.0, w, b);
      lv_space_pose(sp, 0, a, x, R);
      pose_H(x, R, Ha);
      lv_space_pose(sp, 0, b, x, R);
      pose_H(x, R, Hb);
      matmul(4, Ha, Hs, HaHs);
      e_hom = fmax(e_hom, maxdiff(16, Hb, HaHs) / fmax(1.0, norm(16, HaHs)));
      ck_assert_int_eq(lv_space_log(sp, a, b, wab), 0);
      e_log = fmax(e_log, maxdiff(6, wab, w) / fmax(1.0, norm(6, w)));
    }
  report("UDQ: pose(exp w) vs SE(3) exp (4x4)", e_exp);
  report("UDQ: pose(a o exp w) = H(a) H(exp w) (rel)", e_hom);
  report("UDQ: log(a, a o exp w) = w (rel)", e_log);
  report("UDQ: |r| = 1, r.d = 0 after exp", e_unit);
  ck_assert_msg(e_exp < 1e-14, "UDQ exp vs SE(3): %g", e_exp);
  ck_assert_msg(e_hom < 1e-14, "UDQ homomorphism: %g", e_hom);
  ck_assert_msg(e_log < 1e-12, "UDQ log: %g", e_log);
  ck_assert_msg(e_unit < 1e-15, "UDQ unit: %g", e_unit);
  /* q and -q are the same pose: log does not see the sign */
  double q[8], qn[8], w1[6], w2[6];
  udq_rnd(&r, sp, 1.0, q);
  for (int i = 0; i < 8; i++) qn[i] = -q[i];
  lv_space_log(sp, id, q, w1);
  lv_space_log(sp, id, qn, w2);
  ck_assert(maxdiff(6, w1, w2) < 1e-15 * norm(6, w1));
  /* set_pose o pose = identity (up to the sign of the cover) */
  double qp[8];
  lv_space_pose(sp, 0, q, x, R);
  ck_assert_int_eq(lv_space_set_pose(sp, 0, x, R, qp), 0);
  double sgn = q[0] * qp[0] < 0 ? -1.0 : 1.0;
  for (int i = 0; i < 8; i++) ck_assert_double_eq_tol(qp[i], sgn * q[i], 1e-15);
  /* near a half-turn the log reports it */
  double wpi[6] = {0.1, 0.2, 0.3, 0.0, 0.0, M_PI};
  lv_space_compose_exp(sp, id, 1.0, wpi, q);
  ck_assert_int_eq(lv_space_log(sp, id, q, w1), LV_EINPUT);
  /* normalize: drift of |r| and r . d is removed, the pose kept */
  udq_rnd(&r, sp, 2.0, q);
  double H0[16], H1[16];
  lv_space_pose(sp, 0, q, x, R);
  pose_H(x, R, H0);
  for (int i = 0; i < 8; i++) qn[i] = q[i] * (1.0 + 1e-9 * (i + 1));
  ck_assert_int_eq(lv_space_normalize(sp, qn), 0);
  double rr = qn[0] * qn[0] + qn[1] * qn[1] + qn[2] * qn[2] + qn[3] * qn[3];
  double rd = qn[0] * qn[4] + qn[1] * qn[5] + qn[2] * qn[6] + qn[3] * qn[7];
  ck_assert_msg(fabs(rr - 1.0) < 4e-16 && fabs(rd) < 4e-16, "normalize: %g %g", rr - 1.0, rd);
  lv_space_pose(sp, 0, qn, x, R);
  pose_H(x, R, H1);
  ck_assert_msg(maxdiff(16, H0, H1) < 1e-8, "normalize moved the pose by %g", maxdiff(16, H0, H1));
  double bad[8] = {0};
  ck_assert_int_eq(lv_space_normalize(sp, bad), LV_EINPUT);
  lv_space_free(sp);
  lv_space_free(se);
}
END_TEST

/* T, T^-1 and d(T^-1 x)/dv of the new group against finite differences of
 * its own exp and log, which know nothing of the closed forms:
 *   T(w) dw    = d/de log(exp(w)^-1 exp(w + e dw)),
 *   T(w)^-1 x  = d/de log(exp(w) o exp(e x)),
 *   D          = d/dv (T(v)^-1 x) by central differences of T^-1. */
START_TEST(test_udq_tangent_fd) {
  rng_t r = {1815};
  lv_space *sp = single(LV_FACTOR_UDQ, 0);
  static const double lens[] = {1e-6, 1e-3, 0.3, 1.0, 2.0, 3.0};
  double e_t = 0.0, e_ti = 0.0, e_inv = 0.0, e_d = 0.0;
  double id[8];
  lv_space_identity(sp, id);
  for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
    for (int t = 0; t < 10; t++) {
      double w[6], dw[6], wp[6], wm[6], q0[8], qp[8], qm[8], lp[6], lm[6], fd[6], Tdw[6];
      rnd_vec(&r, 6, w);
      rnd_len3(&r, lens[l], w + 3);
      rnd_vec(&r, 6, dw);
      double eps = 1e-5;
      for (int i = 0; i < 6; i++) {
        wp[i] = w[i] + eps * dw[i];
        wm[i] = w[i] - eps * dw[i];
      }
      lv_space_compose_exp(sp, id, 1.0, w, q0);
      lv_space_compose_exp(sp, id, 1.0, wp, qp);
      lv_space_compose_exp(sp, id, 1.0, wm, qm);
      lv_space_log(sp, q0, qp, lp);
      lv_space_log(sp, q0, qm, lm);
      for (int i = 0; i < 6; i++) fd[i] = (lp[i] - lm[i]) / (2 * eps);
      ck_assert_int_eq(lv_space_tangent_apply(sp, w, dw, Tdw), 0);
      e_t = fmax(e_t, maxdiff(6, fd, Tdw) / norm(6, Tdw));
      /* the dense T of lv_space_tangent is the same operator */
      double Tm[36], Tdw2[6];
      tangent_dense(sp, w, Tm);
      for (int i = 0; i < 6; i++) {
        Tdw2[i] = 0.0;
        for (int j = 0; j < 6; j++) Tdw2[i] += Tm[6 * i + j] * dw[j];
      }
      e_t = fmax(e_t, maxdiff(6, Tdw2, Tdw) / norm(6, Tdw));
      /* T^-1 x = d/de log(exp(w) o exp(e x)), log from the identity */
      double x[6], ex[6], Tix[6], back[6];
      rnd_vec(&r, 6, x);
      if (lens[l] > 2.5) continue; /* w + e T^-1 x must stay inside |psi| < pi */
      for (int i = 0; i < 6; i++) ex[i] = x[i];
      lv_space_compose_exp(sp, q0, eps, ex, qp);
      lv_space_compose_exp(sp, q0, -eps, ex, qm);
      lv_space_log(sp, id, qp, lp);
      lv_space_log(sp, id, qm, lm);
      for (int i = 0; i < 6; i++) fd[i] = (lp[i] - lm[i]) / (2 * eps);
      ck_assert_int_eq(lv_space_tangent_inv_apply(sp, w, x, Tix), 0);
      e_ti = fmax(e_ti, maxdiff(6, fd, Tix) / norm(6, Tix));
      lv_space_tangent_apply(sp, w, Tix, back);
      e_inv = fmax(e_inv, maxdiff(6, back, x) / norm(6, x));
      /* D = d(T^-1 x)/dv */
      double D[36] = {0}, Dr[36], y[6], y1[6], y2[6], v1[6];
      lv_sink s = lv_sink_dense(D, 6, 6, 6);
      ck_assert_int_eq(lv_space_tangent_inv_deriv(sp, w, x, y, &s), 0);
      ck_assert(maxdiff(6, y, Tix) < 1e-15 * norm(6, Tix));
      for (int j = 0; j < 6; j++) {
        memcpy(v1, w, sizeof v1);
        v1[j] = w[j] + 1e-5;
        lv_space_tangent_inv_apply(sp, v1, x, y1);
        v1[j] = w[j] - 1e-5;
        lv_space_tangent_inv_apply(sp, v1, x, y2);
        for (int i = 0; i < 6; i++) Dr[i + 6 * j] = (y1[i] - y2[i]) / 2e-5;
      }
      double sc = 0.0;
      for (int i = 0; i < 36; i++) sc = fmax(sc, fabs(Dr[i]));
      e_d = fmax(e_d, maxdiff(36, D, Dr) / sc);
    }
  report("UDQ: T dw vs FD of log(exp(w)^-1 exp(w + e dw)) (rel)", e_t);
  report("UDQ: T^-1 x vs FD of log(exp(w) exp(e x)) (rel)", e_ti);
  report("UDQ: T T^-1 x = x (rel)", e_inv);
  report("UDQ: d(T^-1 x)/dv vs central differences (rel)", e_d);
  ck_assert_msg(e_t < 1e-8, "UDQ T: %g", e_t);
  ck_assert_msg(e_ti < 1e-8, "UDQ T^-1: %g", e_ti);
  ck_assert_msg(e_inv < 1e-13, "UDQ T T^-1: %g", e_inv);
  ck_assert_msg(e_d < 1e-7, "UDQ dT^-1: %g", e_d);
  /* ad_v x = [v, x]: the commutator of the se(3) 4x4 matrices */
  double v[6], x[6], y[6], V[16], X[16], VX[16], XV[16], C[16], Y[16];
  rnd_vec(&r, 6, v);
  rnd_vec(&r, 6, x);
  ck_assert_int_eq(lv_space_ad(sp, v, x, y), 0);
  se3_tilde(v, V);
  se3_tilde(x, X);
  se3_tilde(y, Y);
  matmul(4, V, X, VX);
  matmul(4, X, V, XV);
  for (int i = 0; i < 16; i++) C[i] = VX[i] - XV[i];
  ck_assert(maxdiff(16, C, Y) < 1e-14);
  lv_space_free(sp);
}
END_TEST

/* ------------------------------------------------------------ the operations table */

/* Every entry of the table is complete and its block algebra (what the
 * schemes use: genalpha's exact sigma corrector) agrees with the space-level
 * operations: T = I outside the declared Lie block, T^-1 of the block is the
 * inverse of lv_space_tangent's block, the block derivative is that of
 * lv_space_tangent_inv_deriv, the declared structural zeros are zero, and
 * inv / solve / mul are what they say.  A new group with an inconsistent
 * entry fails here instead of giving silently wrong results. */
START_TEST(test_group_table) {
  rng_t r = {31337};
  int nkinds = 0;
  for (int kind = 0; lv_group_of((lv_factor_kind)kind); kind++) {
    const lv_group *G = lv_group_of((lv_factor_kind)kind);
    nkinds++;
    ck_assert_ptr_nonnull(G->name);
    ck_assert(G->identity && G->compose_exp && G->log && G->tangent && G->tangent_apply &&
              G->tangent_inv_apply && G->tangent_inv_deriv && G->ad && G->normalize && G->dir_scale);
    if (G->nq == 0) { /* R^k */
      ck_assert_int_eq(G->rk, 0);
      continue;
    }
    ck_assert_msg(G->pose && G->set_pose, "%s: no pose", G->name);
    ck_assert_msg(G->rk >= 1 && G->rk <= LV_GROUP_MAXBLK && G->rb >= 0 && G->rb + G->rk <= G->nv,
                  "%s: Lie block %d+%d of %d", G->name, G->rb, G->rk, G->nv);
    ck_assert_msg(G->blk_tinv && G->blk_tinv_deriv && G->blk_inv && G->blk_solve && G->blk_mul,
                  "%s: block algebra missing", G->name);
    lv_space *sp = single((lv_factor_kind)kind, 0);
    ck_assert_ptr_eq(lv_space_factor_group(sp, 0), G);
    int nv = G->nv, k = G->rk, b0 = G->rb;
    double e_out = 0.0, e_inv = 0.0, e_y = 0.0, e_d = 0.0, e_pat = 0.0, e_alg = 0.0;
    for (int t = 0; t < 20; t++) {
      double v[6], x[6], T[36], Dd[36] = {0}, y[6], Ti[36], Db[36], yb[6], P[36];
      rnd_vec(&r, nv, v);
      rnd_len3(&r, 0.1 + 0.1 * t, v + nv - 3);
      rnd_vec(&r, nv, x);
      tangent_dense(sp, v, T);
      lv_sink ds = lv_sink_dense(Dd, nv, nv, nv); /* column-major */
      ck_assert_int_eq(lv_space_tangent_inv_deriv(sp, v, x, y, &ds), 0);
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) {
          int in = i >= b0 && i < b0 + k && j >= b0 && j < b0 + k;
          if (!in) {
            e_out = fmax(e_out, fabs(T[nv * i + j] - (i == j)));
            e_out = fmax(e_out, fabs(Dd[i + nv * j]));
          } else if (G->pattern && !G->pattern[(i - b0) * k + (j - b0)]) {
            e_pat = fmax(e_pat, fmax(fabs(T[nv * i + j]), fabs(Dd[i + nv * j])));
          }
        }
      ck_assert_int_eq(G->blk_tinv(v + b0, Ti), 0);
      G->blk_tinv_deriv(v + b0, x + b0, yb, Db);
      for (int i = 0; i < k; i++) {
        e_y = fmax(e_y, fabs(yb[i] - y[b0 + i]) / norm(nv, y));
        for (int j = 0; j < k; j++) {
          double s = 0.0;
          for (int l = 0; l < k; l++) s += Ti[i * k + l] * T[nv * (b0 + l) + b0 + j];
          e_inv = fmax(e_inv, fabs(s - (i == j)));
          e_d = fmax(e_d, fabs(Db[i * k + j] - Dd[(b0 + i) + nv * (b0 + j)]));
          if (G->pattern && !G->pattern[i * k + j]) e_pat = fmax(e_pat, fmax(fabs(Ti[i * k + j]), fabs(Db[i * k + j])));
        }
      }
      /* inv, solve, mul on a random well-conditioned block */
      double A[36], X[36], B[36], C[36], c[6] = {0}, cb[6];
      rnd_vec(&r, k * k, A);
      rnd_vec(&r, k * k, B);
      for (int i = 0; i < k; i++) A[i * k + i] += 3.0;
      ck_assert_int_eq(G->blk_inv(A, X), 0);
      G->blk_mul(A, X, P);
      G->blk_mul(A, B, C);
      rnd_vec(&r, k, c);
      memcpy(cb, c, (size_t)k * sizeof *cb);
      ck_assert_int_eq(G->blk_solve(A, cb), 0);
      for (int i = 0; i < k; i++) {
        double s = 0.0;
        for (int l = 0; l < k; l++) s += A[i * k + l] * cb[l];
        e_alg = fmax(e_alg, fabs(s - c[i]));
        for (int j = 0; j < k; j++) {
          double m = 0.0;
          for (int l = 0; l < k; l++) m += A[i * k + l] * B[l * k + j];
          e_alg = fmax(e_alg, fmax(fabs(P[i * k + j] - (i == j)), fabs(C[i * k + j] - m)));
        }
      }
    }
    char what[96];
    snprintf(what, sizeof what, "table %s: T^-1 block T block - I", G->name);
    report(what, e_inv);
    snprintf(what, sizeof what, "table %s: block y, D vs the space's", G->name);
    report(what, fmax(e_y, e_d));
    ck_assert_msg(e_out == 0.0, "%s: T != I or D != 0 outside the Lie block (%g)", G->name, e_out);
    ck_assert_msg(e_pat == 0.0, "%s: a structural zero is not zero (%g)", G->name, e_pat);
    ck_assert_msg(e_inv < 1e-13, "%s: blk_tinv is not T^-1 (%g)", G->name, e_inv);
    ck_assert_msg(e_y < 1e-15 && e_d < 1e-13, "%s: blk_tinv_deriv differs (%g %g)", G->name, e_y, e_d);
    ck_assert_msg(e_alg < 1e-13, "%s: block algebra (%g)", G->name, e_alg);
    /* pose of the identity, pose o set_pose */
    double q[12], xx[3], R[9], x2[3], R2[9];
    lv_space_identity(sp, q);
    ck_assert_int_eq(lv_space_pose(sp, 0, q, xx, R), 0);
    for (int i = 0; i < 9; i++) ck_assert(R[i] == (i % 4 == 0));
    for (int i = 0; i < 3; i++) ck_assert(xx[i] == 0.0);
    for (int t = 0; t < 200; t++) { /* every branch of the rotation -> quaternion map */
      rnd_config(&r, sp, q);
      lv_space_pose(sp, 0, q, xx, R);
      ck_assert_int_eq(lv_space_set_pose(sp, 0, xx, R, q), 0);
      lv_space_pose(sp, 0, q, x2, R2);
      ck_assert_msg(maxdiff(3, xx, x2) < 1e-14 && maxdiff(9, R, R2) < 1e-14, "%s: pose o set_pose %g %g",
                    G->name, maxdiff(3, xx, x2), maxdiff(9, R, R2));
    }
    lv_space_free(sp);
  }
  ck_assert_int_eq(nkinds, LV_FACTOR_UDQ + 1);
  lv_space *rn = NULL;
  ck_assert_int_eq(lv_space_new_rn(&rn, 3), 0);
  double q[3] = {0}, x[3], R[9];
  ck_assert_int_eq(lv_space_pose(rn, 0, q, x, R), LV_EINPUT);
  ck_assert_int_eq(lv_space_set_pose(rn, 0, x, R, q), LV_EINPUT);
  ck_assert_int_eq(lv_space_pose(rn, 1, q, x, R), LV_EINPUT);
  lv_space_free(rn);
}
END_TEST

static Suite *space_suite(void) {
  Suite *s = suite_create("space");
  TCase *tc = tu_tcase(s, "core", 0.5);
  tcase_add_test(tc, test_rn);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_product_layout);
  tcase_add_test(tc, test_product_ops);
  tcase_add_test(tc, test_tangent_pattern);
  tcase_add_test(tc, test_so3_exp_log);
  tcase_add_test(tc, test_so3_near_pi);
  tcase_add_test(tc, test_so3_tangent);
  tcase_add_test(tc, test_so3_tangent_inv_deriv);
  tcase_add_test(tc, test_tangent_inv_deriv_product);
  tcase_add_test(tc, test_dexp_fd);
  tcase_add_test(tc, test_s3_vs_so3);
  tcase_add_test(tc, test_se3_homogeneous);
  tcase_add_test(tc, test_se3_tangent);
  tcase_add_test(tc, test_r3so3);
  tcase_add_test(tc, test_normalize);
  tcase_add_test(tc, test_large_chain);
  tcase_add_test(tc, test_udq_group);
  tcase_add_test(tc, test_udq_tangent_fd);
  tcase_add_test(tc, test_group_table);
  return s;
}

int main(void) {
  return tu_run_suite(space_suite());
}
