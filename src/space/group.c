/* The per-factor operations table (group.h): one lv_group entry per kind
 * of factor.  The entries are thin adapters over the primitives of
 * liegroup.c; the arithmetic of every operation is that of the switch
 * statements it replaces (space.c, genalpha.c before issue 19), so results
 * are bit for bit unchanged. */
#include <float.h>
#include "lv_internal.h"
#include "liegroup.h"
#include "group.h"

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* Add a 3x3 row-major block at (r0, c0), all nine entries (zeros included)
 * so that the sparsity pattern does not depend on v. */
static int add_block3(lv_sink *T, int r0, int c0, const double *B, int ldb) {
  return lv_sink_add_block(T, r0, c0, 3, 3, B, ldb);
}

static void copy_n(const double *x, double *y, int n) {
  if (y != x) memmove(y, x, (size_t)n * sizeof *y);
}

static double max_abs3(const double *x) {
  return fmax(fabs(x[0]), fmax(fabs(x[1]), fabs(x[2])));
}

/* ------------------------------------------------------------ block algebra */

/* 3x3 row-major helpers for the rotation blocks (fixed size: unrolled). */
#define COF3(A)                                                                                           \
  {(A)[4] * (A)[8] - (A)[5] * (A)[7], (A)[2] * (A)[7] - (A)[1] * (A)[8], (A)[1] * (A)[5] - (A)[2] * (A)[4], \
   (A)[5] * (A)[6] - (A)[3] * (A)[8], (A)[0] * (A)[8] - (A)[2] * (A)[6], (A)[2] * (A)[3] - (A)[0] * (A)[5], \
   (A)[3] * (A)[7] - (A)[4] * (A)[6], (A)[1] * (A)[6] - (A)[0] * (A)[7], (A)[0] * (A)[4] - (A)[1] * (A)[3]}
/* X = A^-1 (adjugate) */
static int inv3(const double *restrict A, double *restrict X) {
  const double C[9] = COF3(A);
  double det = A[0] * C[0] + A[1] * C[3] + A[2] * C[6];
  if (det == 0.0 || !isfinite(det)) return LV_ESINGULAR;
  double id = 1.0 / det;
  X[0] = id * C[0], X[1] = id * C[1], X[2] = id * C[2];
  X[3] = id * C[3], X[4] = id * C[4], X[5] = id * C[5];
  X[6] = id * C[6], X[7] = id * C[7], X[8] = id * C[8];
  return 0;
}
/* b <- A^-1 b */
static int solve3(const double *restrict A, double *restrict b) {
  const double C[9] = COF3(A);
  double det = A[0] * C[0] + A[1] * C[3] + A[2] * C[6];
  if (det == 0.0 || !isfinite(det)) return LV_ESINGULAR;
  double id = 1.0 / det, b0 = b[0], b1 = b[1], b2 = b[2];
  b[0] = id * (C[0] * b0 + C[1] * b1 + C[2] * b2);
  b[1] = id * (C[3] * b0 + C[4] * b1 + C[5] * b2);
  b[2] = id * (C[6] * b0 + C[7] * b1 + C[8] * b2);
  return 0;
}
/* C = A B */
static void mul3(const double *restrict A, const double *restrict B, double *restrict C) {
  for (int i = 0; i < 3; i++) {
    const double a0 = A[3 * i], a1 = A[3 * i + 1], a2 = A[3 * i + 2];
    C[3 * i] = a0 * B[0] + a1 * B[3] + a2 * B[6];
    C[3 * i + 1] = a0 * B[1] + a1 * B[4] + a2 * B[7];
    C[3 * i + 2] = a0 * B[2] + a1 * B[5] + a2 * B[8];
  }
}

/* k x k row-major A, k x nrhs row-major B: B <- A^-1 B (Gauss-Jordan,
 * partial pivoting; A is destroyed). */
static int small_solve(int k, double *A, double *B, int nrhs) {
  for (int p = 0; p < k; p++) {
    int r = p;
    for (int i = p + 1; i < k; i++)
      if (fabs(A[i * k + p]) > fabs(A[r * k + p])) r = i;
    if (A[r * k + p] == 0.0) return LV_ESINGULAR;
    if (r != p) {
      for (int j = 0; j < k; j++) {
        double t = A[p * k + j];
        A[p * k + j] = A[r * k + j];
        A[r * k + j] = t;
      }
      for (int j = 0; j < nrhs; j++) {
        double t = B[p * nrhs + j];
        B[p * nrhs + j] = B[r * nrhs + j];
        B[r * nrhs + j] = t;
      }
    }
    double ip = 1.0 / A[p * k + p];
    for (int j = 0; j < k; j++) A[p * k + j] *= ip;
    for (int j = 0; j < nrhs; j++) B[p * nrhs + j] *= ip;
    for (int i = 0; i < k; i++) {
      double l = A[i * k + p];
      if (i == p || l == 0.0) continue;
      for (int j = 0; j < k; j++) A[i * k + j] -= l * A[p * k + j];
      for (int j = 0; j < nrhs; j++) B[i * nrhs + j] -= l * B[p * nrhs + j];
    }
  }
  return 0;
}

static int inv6(const double *A, double *X) {
  double W[36];
  memcpy(W, A, sizeof W);
  for (int a = 0; a < 36; a++) X[a] = a % 7 == 0;
  return small_solve(6, W, X, 6);
}
static int solve6(const double *A, double *b) {
  double W[36];
  memcpy(W, A, sizeof W);
  return small_solve(6, W, b, 1);
}
static void mul6(const double *A, const double *B, double *C) {
  for (int a = 0; a < 6; a++)
    for (int b = 0; b < 6; b++) {
      double t = 0.0;
      for (int l = 0; l < 6; l++) t += A[a * 6 + l] * B[l * 6 + b];
      C[a * 6 + b] = t;
    }
}

/* ------------------------------------------------------------ R^k */

static void rn_identity(double *q, int n) {
  for (int j = 0; j < n; j++) q[j] = 0.0;
}
static void rn_compose_exp(const double *q, double h, const double *v, double *qo, int n) {
  for (int j = 0; j < n; j++) qo[j] = q[j] + h * v[j];
}
static int rn_log(const double *a, const double *b, double *v, int n) {
  for (int j = 0; j < n; j++) v[j] = b[j] - a[j];
  return 0;
}
static int rn_tangent(const double *v, lv_sink *T, int o, int n) {
  (void)v;
  for (int j = 0; j < n; j++) LV_CHECK(lv_sink_add(T, o + j, o + j, 1.0));
  return 0;
}
static int rn_tangent_values(const double *v, double *out, int n) {
  (void)v;
  for (int j = 0; out && j < n; j++) out[j] = 1.0;
  return n;
}
static void rn_tangent_apply(const double *v, const double *x, double *y, int n) {
  (void)v;
  copy_n(x, y, n);
}
static int rn_tangent_inv_deriv(const double *v, const double *x, double *y, lv_sink *D, int o,
                                int n) {
  (void)v, (void)D, (void)o;
  copy_n(x, y, n);
  return 0;
}
static void rn_ad(const double *v, const double *x, double *y, int n) {
  (void)v, (void)x;
  for (int j = 0; j < n; j++) y[j] = 0.0;
}
static int rn_normalize(double *q, int n) {
  (void)q, (void)n;
  return 0;
}
static double rn_dir_scale(const double *q, int j, int n) {
  (void)n;
  return fabs(q[j]);
}

/* ------------------------------------------------------------ rotations: SO(3), S^3 */

/* The tangent of a rotation (SO(3), S^3, the rotation of R^3 x SO(3)). */
static int so3_tangent(const double *v, lv_sink *T, int o, int n) {
  (void)n;
  double M[9];
  lv_so3_tangent(v, M);
  return add_block3(T, o, o, M, 3);
}
static int so3_tangent_values(const double *v, double *out, int n) {
  (void)n;
  if (out) lv_so3_tangent(v, out);
  return 9;
}
static void so3_tangent_apply(const double *v, const double *x, double *y, int n) {
  (void)n;
  lv_lg_so3_tangent_apply(v, x, y);
}
static void so3_tangent_inv_apply(const double *v, const double *x, double *y, int n) {
  (void)n;
  lv_lg_so3_tangent_inv_apply(v, x, y);
}
static int so3_tangent_inv_deriv(const double *v, const double *x, double *y, lv_sink *D, int o,
                                 int n) {
  (void)n;
  double M[9];
  lv_lg_so3_tangent_inv_deriv(v, x, y, M, NULL);
  return add_block3(D, o, o, M, 3);
}
static void so3_ad(const double *v, const double *x, double *y, int n) {
  (void)n;
  lv_lg_cross(v, x, y);
}
static double rot_dir_scale(const double *q, int j, int n) {
  (void)q, (void)j, (void)n;
  return 0.0;
}
static int so3_blk_tinv(const double *th, double *Ti) {
  lv_lg_so3_tangent_inv(th, Ti);
  return 0;
}
static void so3_blk_tinv_deriv(const double *th, const double *x, double *y, double *D) {
  lv_lg_so3_tangent_inv_deriv(th, x, y, D, NULL);
}

static void so3_identity(double *q, int n) {
  (void)n;
  memcpy(q, I3, sizeof I3);
}
static void so3_compose_exp(const double *q, double h, const double *v, double *qo, int n) {
  (void)n;
  double w[3], R[9];
  for (int j = 0; j < 3; j++) w[j] = h * v[j];
  lv_so3_exp(w, R);
  lv_lg_mat3_mul(q, R, qo);
}
static int so3_log(const double *a, const double *b, double *v, int n) {
  (void)n;
  double R[9];
  lv_lg_mat3_tmul(a, b, R);
  return lv_lg_so3_log(R, v);
}
static int so3_normalize(double *q, int n) {
  (void)n;
  return lv_lg_so3_normalize(q);
}
static void so3_pose(const double *q, double x[3], double R[9]) {
  x[0] = x[1] = x[2] = 0.0;
  memcpy(R, q, 9 * sizeof *R);
}
static void so3_set_pose(const double x[3], const double R[9], double *q) {
  (void)x;
  memcpy(q, R, 9 * sizeof *q);
}

static void s3_identity(double *q, int n) {
  (void)n;
  q[0] = 1.0;
  q[1] = q[2] = q[3] = 0.0;
}
static void s3_compose_exp(const double *q, double h, const double *v, double *qo, int n) {
  (void)n;
  double w[3], dq[4];
  for (int j = 0; j < 3; j++) w[j] = h * v[j];
  lv_lg_quat_exp(w, dq);
  lv_lg_quat_mul(q, dq, qo);
}
static int s3_log(const double *a, const double *b, double *v, int n) {
  (void)n;
  double ac[4] = {a[0], -a[1], -a[2], -a[3]}, p[4];
  lv_lg_quat_mul(ac, b, p);
  return lv_lg_quat_log(p, v);
}
static int s3_normalize(double *q, int n) {
  (void)n;
  return lv_lg_quat_normalize(q);
}
static void s3_pose(const double *q, double x[3], double R[9]) {
  x[0] = x[1] = x[2] = 0.0;
  lv_lg_quat_to_rot(q, R);
}
static void s3_set_pose(const double x[3], const double R[9], double *q) {
  (void)x;
  lv_lg_quat_from_rot(R, q);
}

/* ------------------------------------------------------------ R^3 x SO(3) */

static void r3so3_identity(double *q, int n) {
  (void)n;
  q[0] = q[1] = q[2] = 0.0;
  memcpy(q + 3, I3, sizeof I3);
}
static void r3so3_compose_exp(const double *q, double h, const double *v, double *qo, int n) {
  (void)n;
  double w[3], R[9];
  for (int j = 0; j < 3; j++) qo[j] = q[j] + h * v[j];
  for (int j = 0; j < 3; j++) w[j] = h * v[3 + j];
  lv_so3_exp(w, R);
  lv_lg_mat3_mul(q + 3, R, qo + 3);
}
static int r3so3_log(const double *a, const double *b, double *v, int n) {
  (void)n;
  double R[9];
  for (int j = 0; j < 3; j++) v[j] = b[j] - a[j];
  lv_lg_mat3_tmul(a + 3, b + 3, R);
  return lv_lg_so3_log(R, v + 3);
}
static int r3so3_tangent(const double *v, lv_sink *T, int o, int n) {
  (void)n;
  double M[9];
  for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(T, o + j, o + j, 1.0));
  lv_so3_tangent(v + 3, M);
  return add_block3(T, o + 3, o + 3, M, 3);
}
static int r3so3_tangent_values(const double *v, double *out, int n) {
  (void)n;
  if (out) {
    out[0] = out[1] = out[2] = 1.0;
    lv_so3_tangent(v + 3, out + 3);
  }
  return 12;
}
static void r3so3_tangent_apply(const double *v, const double *x, double *y, int n) {
  (void)n;
  for (int j = 0; j < 3; j++) y[j] = x[j];
  lv_lg_so3_tangent_apply(v + 3, x + 3, y + 3);
}
static void r3so3_tangent_inv_apply(const double *v, const double *x, double *y, int n) {
  (void)n;
  for (int j = 0; j < 3; j++) y[j] = x[j];
  lv_lg_so3_tangent_inv_apply(v + 3, x + 3, y + 3);
}
static int r3so3_tangent_inv_deriv(const double *v, const double *x, double *y, lv_sink *D, int o,
                                   int n) {
  (void)n;
  double M[9];
  for (int j = 0; j < 3; j++) y[j] = x[j];
  lv_lg_so3_tangent_inv_deriv(v + 3, x + 3, y + 3, M, NULL);
  return add_block3(D, o + 3, o + 3, M, 3);
}
static void r3so3_ad(const double *v, const double *x, double *y, int n) {
  (void)n;
  lv_lg_cross(v + 3, x + 3, y + 3);
  for (int j = 0; j < 3; j++) y[j] = 0.0;
}
/* R^3 x SO(3) and SE(3): the rotation is stored after x */
static int xr_normalize(double *q, int n) {
  (void)n;
  return lv_lg_so3_normalize(q + 3);
}
static double xr_dir_scale(const double *q, int j, int n) {
  (void)n;
  return j < 3 ? max_abs3(q) : 0.0;
}
static void xr_pose(const double *q, double x[3], double R[9]) {
  memcpy(x, q, 3 * sizeof *x);
  memcpy(R, q + 3, 9 * sizeof *R);
}
static void xr_set_pose(const double x[3], const double R[9], double *q) {
  memcpy(q, x, 3 * sizeof *q);
  memcpy(q + 3, R, 9 * sizeof *q);
}

/* ------------------------------------------------------------ SE(3) */

static void se3_compose_exp(const double *q, double h, const double *v, double *qo, int n) {
  (void)n;
  double w[6], R[9], x[3];
  for (int j = 0; j < 6; j++) w[j] = h * v[j];
  lv_lg_se3_exp(w, x, R);
  lv_lg_mat3_vec(q + 3, x, x);
  for (int j = 0; j < 3; j++) qo[j] = q[j] + x[j];
  lv_lg_mat3_mul(q + 3, R, qo + 3);
}
static int se3_log(const double *a, const double *b, double *v, int n) {
  (void)n;
  /* q0^{-1} q1 = (R0^T (x1 - x0), R0^T R1) */
  double R[9], x[3];
  for (int j = 0; j < 3; j++) x[j] = b[j] - a[j];
  lv_lg_mat3_tvec(a + 3, x, x);
  lv_lg_mat3_tmul(a + 3, b + 3, R);
  return lv_lg_se3_log(x, R, v);
}
/* The lower-left block is structurally zero and is not added. */
static int se3_tangent(const double *v, lv_sink *T, int o, int n) {
  (void)n;
  double M[36];
  lv_lg_se3_tangent(v, M);
  LV_CHECK(add_block3(T, o, o, M, 6));
  LV_CHECK(add_block3(T, o, o + 3, M + 3, 6));
  return add_block3(T, o + 3, o + 3, M + 21, 6);
}
static int se3_tangent_values(const double *v, double *out, int n) {
  (void)n;
  if (out) { /* se3_tangent's three 3 x 3 blocks of M, row by row */
    double M[36];
    lv_lg_se3_tangent(v, M);
    static const int at[3] = {0, 3, 21};
    for (int b = 0; b < 3; b++)
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) out[9 * b + 3 * r + c] = M[at[b] + 6 * r + c];
  }
  return 27;
}
static void se3_tangent_apply(const double *v, const double *x, double *y, int n) {
  (void)n;
  lv_lg_se3_tangent_apply(v, x, y);
}
static void se3_tangent_inv_apply(const double *v, const double *x, double *y, int n) {
  (void)n;
  lv_lg_se3_tangent_inv_apply(v, x, y);
}

/* y = T^-1 x, the translational rows B (3 x 6) of D and its rotational
 * block Dr (3 x 3): the rotational rows y_psi = T_SO3(psi)^{-1} x_psi are
 * analytic; the translational rows y_U = T^{-1}(x_U - T_Upsi y_psi) by
 * central differences (linear in U, so exact there up to round-off;
 * relative error ~1e-10 in the psi columns). */
static void se3_inv_deriv_parts(const double *w, const double *x0, double *y, double B[18],
                                double Dr[9]) {
  double w1[6], yp[6], ym[6], x[6];
  memcpy(x, x0, sizeof x); /* y may alias x0 */
  lv_lg_se3_tangent_inv_apply(w, x, y);
  lv_lg_so3_tangent_inv_deriv(w + 3, x + 3, yp + 3, Dr, NULL);
  for (int j = 0; j < 6; j++) {
    double st = cbrt(DBL_EPSILON) * fmax(1.0, fabs(w[j]));
    memcpy(w1, w, sizeof w1);
    w1[j] = w[j] + st;
    st = w1[j] - w[j];
    lv_lg_se3_tangent_inv_apply(w1, x, yp);
    w1[j] = w[j] - st;
    lv_lg_se3_tangent_inv_apply(w1, x, ym);
    for (int i = 0; i < 3; i++) B[6 * i + j] = (yp[i] - ym[i]) / (2.0 * st);
  }
}
static int se3_tangent_inv_deriv(const double *v, const double *x, double *y, lv_sink *D, int o,
                                 int n) {
  (void)n;
  double B[18], Dr[9];
  se3_inv_deriv_parts(v, x, y, B, Dr);
  LV_CHECK(add_block3(D, o, o, B, 6));
  LV_CHECK(add_block3(D, o, o + 3, B + 3, 6));
  return add_block3(D, o + 3, o + 3, Dr, 3);
}
static void se3_ad(const double *v, const double *x, double *y, int n) {
  (void)n;
  lv_lg_se3_ad_apply(v, x, y);
}
/* The 6 x 6 blocks are accumulated onto zeros (0.0 + t) over the written
 * positions, as the sink-based gathering they replace did. */
static int se3_blk_tinv(const double *th, double *Ti) {
  double M[36], A[36];
  lv_lg_se3_tangent(th, M);
  for (int a = 0; a < 36; a++) A[a] = (a / 6 >= 3 && a % 6 < 3) ? 0.0 : 0.0 + M[a];
  for (int a = 0; a < 36; a++) Ti[a] = a % 7 == 0;
  return small_solve(6, A, Ti, 6);
}
static void se3_blk_tinv_deriv(const double *th, const double *x, double *y, double *D) {
  double B[18], Dr[9];
  se3_inv_deriv_parts(th, x, y, B, Dr);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 6; j++) {
      D[6 * i + j] = 0.0 + B[6 * i + j];
      D[6 * (i + 3) + j] = j < 3 ? 0.0 : 0.0 + Dr[3 * i + j - 3];
    }
}
static const unsigned char SE3_PATTERN[36] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                              0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1};

/* ------------------------------------------------------------ unit dual quaternions */

static void udq_identity(double *q, int n) {
  (void)n;
  for (int i = 0; i < 8; i++) q[i] = i == 0;
}
static void udq_compose_exp(const double *q, double h, const double *v, double *qo, int n) {
  (void)n;
  double w[6], e[8];
  for (int j = 0; j < 6; j++) w[j] = h * v[j];
  lv_lg_udq_exp(w, e);
  lv_lg_udq_mul(q, e, qo);
}
static int udq_log(const double *a, const double *b, double *v, int n) {
  (void)n;
  /* q0^-1 = (r0*, d0*) on the group */
  const double ai[8] = {a[0], -a[1], -a[2], -a[3], a[4], -a[5], -a[6], -a[7]};
  double p[8];
  lv_lg_udq_mul(ai, b, p);
  return lv_lg_udq_log(p, v);
}
static int udq_normalize(double *q, int n) {
  (void)n;
  return lv_lg_udq_normalize(q);
}
static double udq_dir_scale(const double *q, int j, int n) {
  (void)n;
  double x[3], R[9];
  if (j >= 3) return 0.0;
  lv_lg_udq_pose(q, x, R);
  return max_abs3(x);
}

/* ------------------------------------------------------------ the table */

/* Rotation groups share the tangent maps of SO(3) (S^3 is its double
 * cover, with the same algebra and coordinates). */
#define ROTATION_TANGENT                                                                  \
  .rb = 0, .rk = 3, .tangent = so3_tangent, .tangent_values = so3_tangent_values,       \
  .tangent_apply = so3_tangent_apply,                                                    \
  .tangent_inv_apply = so3_tangent_inv_apply, .tangent_inv_deriv = so3_tangent_inv_deriv, \
  .ad = so3_ad, .dir_scale = rot_dir_scale
#define ROTATION_BLOCKS                                                                  \
  .blk_tinv = so3_blk_tinv, .blk_tinv_deriv = so3_blk_tinv_deriv, .blk_inv = inv3,       \
  .blk_solve = solve3, .blk_mul = mul3

static const lv_group GROUPS[] = {
    [LV_FACTOR_RN] = {.name = "R", .identity = rn_identity, .compose_exp = rn_compose_exp,
                      .log = rn_log, .tangent = rn_tangent, .tangent_values = rn_tangent_values,
                      .tangent_apply = rn_tangent_apply,
                      .tangent_inv_apply = rn_tangent_apply,
                      .tangent_inv_deriv = rn_tangent_inv_deriv, .ad = rn_ad,
                      .normalize = rn_normalize, .dir_scale = rn_dir_scale},
    [LV_FACTOR_SO3] = {.name = "SO(3)", .nq = 9, .nv = 3, ROTATION_TANGENT, ROTATION_BLOCKS,
                       .identity = so3_identity, .compose_exp = so3_compose_exp, .log = so3_log,
                       .normalize = so3_normalize, .pose = so3_pose, .set_pose = so3_set_pose},
    [LV_FACTOR_S3] = {.name = "S^3", .power_parens = 1, .nq = 4, .nv = 3, ROTATION_TANGENT,
                      ROTATION_BLOCKS, .identity = s3_identity, .compose_exp = s3_compose_exp,
                      .log = s3_log, .normalize = s3_normalize, .pose = s3_pose,
                      .set_pose = s3_set_pose},
    [LV_FACTOR_R3SO3] = {.name = "R^3xSO(3)", .power_parens = 1, .nq = 12, .nv = 6, .rb = 3, .rk = 3,
                         ROTATION_BLOCKS, .identity = r3so3_identity,
                         .compose_exp = r3so3_compose_exp, .log = r3so3_log,
                         .tangent = r3so3_tangent, .tangent_values = r3so3_tangent_values,
                         .tangent_apply = r3so3_tangent_apply,
                         .tangent_inv_apply = r3so3_tangent_inv_apply,
                         .tangent_inv_deriv = r3so3_tangent_inv_deriv, .ad = r3so3_ad,
                         .normalize = xr_normalize, .dir_scale = xr_dir_scale, .pose = xr_pose,
                         .set_pose = xr_set_pose},
    [LV_FACTOR_SE3] = {.name = "SE(3)", .nq = 12, .nv = 6, .rb = 0, .rk = 6,
                       .pattern = SE3_PATTERN, .identity = r3so3_identity,
                       .compose_exp = se3_compose_exp, .log = se3_log, .tangent = se3_tangent,
                       .tangent_values = se3_tangent_values, .tangent_apply = se3_tangent_apply,
                       .tangent_inv_apply = se3_tangent_inv_apply,
                       .tangent_inv_deriv = se3_tangent_inv_deriv, .ad = se3_ad,
                       .normalize = xr_normalize, .dir_scale = xr_dir_scale, .pose = xr_pose,
                       .set_pose = xr_set_pose, .blk_tinv = se3_blk_tinv,
                       .blk_tinv_deriv = se3_blk_tinv_deriv, .blk_inv = inv6, .blk_solve = solve6,
                       .blk_mul = mul6},
    /* the double cover of SE(3): SE(3)'s algebra, coordinates and blocks */
    [LV_FACTOR_UDQ] = {.name = "UDQ", .nq = 8, .nv = 6, .rb = 0, .rk = 6, .pattern = SE3_PATTERN,
                       .identity = udq_identity, .compose_exp = udq_compose_exp, .log = udq_log,
                       .tangent = se3_tangent, .tangent_values = se3_tangent_values,
                       .tangent_apply = se3_tangent_apply,
                       .tangent_inv_apply = se3_tangent_inv_apply,
                       .tangent_inv_deriv = se3_tangent_inv_deriv, .ad = se3_ad,
                       .normalize = udq_normalize, .dir_scale = udq_dir_scale,
                       .pose = lv_lg_udq_pose, .set_pose = lv_lg_udq_from_pose,
                       .blk_tinv = se3_blk_tinv, .blk_tinv_deriv = se3_blk_tinv_deriv,
                       .blk_inv = inv6, .blk_solve = solve6, .blk_mul = mul6},
};

const lv_group *lv_group_of(lv_factor_kind kind) {
  if ((int)kind < 0 || (size_t)kind >= sizeof GROUPS / sizeof GROUPS[0]) return NULL;
  return GROUPS[kind].name ? &GROUPS[kind] : NULL;
}
