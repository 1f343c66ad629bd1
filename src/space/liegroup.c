/* Per-factor Lie group primitives: SO(3), S^3, SE(3) and unit dual
 * quaternions: exponential, log,
 * tangent operator T = dexp_{-v} and its inverse.
 *
 * Accuracy: every coefficient function below has a removable singularity at
 * phi = 0 and most of them are a difference of nearly equal terms for small
 * phi.  They are evaluated by their Taylor series (in x = phi^2) for phi < 1,
 * where the series converges to full precision within the listed terms, and
 * by the closed form above 1, where the cancellation costs at most a few
 * ulps.  The matrices are then written as alpha I + beta psi~ + gamma psi psi^T
 * (using psi~^2 = psi psi^T - phi^2 I) so that no further cancellation occurs
 * on the diagonal. */
#include <float.h>
#include "lv_internal.h"
#include "liegroup.h"

/* Taylor coefficients in x = phi^2 (generated with exact rational arithmetic;
 * each list stops where the next term is below 2e-18 of the first at phi = 1). */
/* (phi - sin phi) / phi^3 = sum (-1)^k x^k / (2k+3)! */
static const double SER_C[] = {
    0.16666666666666666, -0.0083333333333333332, 0.00019841269841269841,
    -2.7557319223985893e-06, 2.505210838544172e-08, -1.6059043836821613e-10,
    7.6471637318198164e-13, -2.8114572543455206e-15, 8.2206352466243295e-18};
/* (1 - (phi/2) cot(phi/2)) / phi^2 = sum_n>=1 (-1)^(n+1) B_2n x^(n-1) / (2n)! */
static const double SER_D[] = {
    0.083333333333333329, 0.0013888888888888889, 3.3068783068783071e-05,
    8.2671957671957675e-07, 2.08767569878681e-08, 5.2841901386874932e-10,
    1.3382536530684679e-11, 3.3896802963225827e-13, 8.5860620562778452e-15,
    2.1748686985580619e-16, 5.5090028283602295e-18};
/* d'(phi) / phi for d above: sum_n>=1 2n D_n x^(n-1), D_n = SER_D[n] (derivative
 * of T^{-1}, lv_so3_tangent_inv_deriv) */
static const double SER_DP[] = {
    0.0027777777777777779, 0.00013227513227513228, 4.9603174603174603e-06,
    1.670140559029448e-07, 5.2841901386874934e-09, 1.6059043836821613e-10,
    4.745552414851616e-12, 1.3737699290044552e-13, 3.914763657404511e-15,
    1.1018005656720459e-16, 3.069982230878755e-18, 8.483296895110721e-20};
/* (2(1 - cos phi)/phi^2 - sin phi/phi) / phi^2 = sum_k>=1 (-1)^(k+1) 2k x^(k-1) / (2k+2)! */
static const double SER_F[] = {
    0.083333333333333329, -0.0055555555555555558, 0.00014880952380952382,
    -2.2045855379188711e-06, 2.08767569878681e-08, -1.376489471727567e-10,
    6.6912682653423392e-13, -2.499073114973796e-15, 7.398571721961897e-18};
/* ((1 - cos phi)/phi^2 - 3 (phi - sin phi)/phi^3) / phi^2 = sum_k>=1 (-1)^k 2k x^(k-1) / (2k+3)! */
static const double SER_E[] = {
    -0.016666666666666666, 0.00079365079365079365, -1.6534391534391536e-05,
    2.0041686708353376e-07, -1.6059043836821615e-09, 9.1765964781837793e-12,
    -3.936040156083729e-14, 1.3153016394598927e-16, -3.5231293914104271e-19};

/* A rotation angle within this distance of pi is reported as "at pi". */
#define PI_TOL (8.0 * DBL_EPSILON)

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static double horner(const double *c, int n, double x) {
  double s = c[n - 1];
  for (int i = n - 2; i >= 0; i--) s = s * x + c[i];
  return s;
}

/* sin(t)/t; the series only avoids 0/0 (sin is accurate to an ulp). */
static double sinc(double t) {
  if (fabs(t) < 1e-4) {
    double x = t * t;
    return 1.0 - x / 6.0 * (1.0 - x / 20.0);
  }
  return sin(t) / t;
}

static double norm3(const double a[3]) {
  return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

static double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The last angle's a and b, per thread: a generalized-alpha step takes the
 * exponential and the tangent operator of the same increment (predictor,
 * Newton matrix), and the two sines are most of either.  The values are
 * those computed for that angle. */
static _Thread_local struct {
  double phi, a, b;
  int valid;
} coef_memo;

/* a = sin phi / phi, b = (1 - cos phi)/phi^2, c = (phi - sin phi)/phi^3
 * (c not computed if NULL: exp needs a and b only).  b for 1e-4 <= phi < 1
 * as a^2 / (1 + cos phi) = sin^2 / (phi^2 (1 + cos)), free of cancellation
 * there, and what lv_so3_exp computes from its sincos without a second
 * sine; elsewhere in the half-angle form. */
static void so3_coef(double phi, double *a, double *b, double *c) {
  if (coef_memo.valid && coef_memo.phi == phi) {
    *a = coef_memo.a;
    *b = coef_memo.b;
  } else {
    *a = sinc(phi);
    if (phi >= 1e-4 && phi < 1.0) { /* lv_so3_exp's form (the same bits whichever computes it first) */
      *b = *a * *a / (1.0 + cos(phi));
    } else { /* Half-angle form: free of cancellation for every phi. */
      double s = sinc(0.5 * phi);
      *b = 0.5 * s * s;
    }
    coef_memo.phi = phi;
    coef_memo.a = *a;
    coef_memo.b = *b;
    coef_memo.valid = 1;
  }
  if (!c) return;
  if (phi < 1.0)
    *c = horner(SER_C, NELEM(SER_C), phi * phi);
  else
    *c = (phi - sin(phi)) / (phi * phi * phi);
}

/* d = (1 - (phi/2) cot(phi/2)) / phi^2, the psi~^2 coefficient of T^{-1}. */
static double so3_coef_inv(double phi) {
  if (phi < 1.0) return horner(SER_D, NELEM(SER_D), phi * phi);
  double t = 0.5 * phi;
  return (1.0 - t / tan(t)) / (phi * phi);
}

/* d and e = d'(phi)/phi (the derivative of T^{-1}).  The series are cut
 * where the tail falls below 1e-17 of the leading term (the largest x for
 * n terms of e, computed from the exact coefficients; d's tail is smaller
 * still): at the angles of a time step, |psi| ~ 1e-2, 4 terms instead of
 * 12.  Above 1: d' = ((t / sin^2 t - cot t) / 2 - 2 (1 - t cot t) / phi) / phi^2
 * with t = phi/2; the difference loses about two digits near phi = 1 (e is
 * 0.0029 there against terms of 0.17), which only Newton matrices see. */
static const double XMAX[] = {5.4e-5, 1.5e-3, 1.1e-2, 4.2e-2, 0.11, 0.22, 0.39, 0.62, 0.90};
static int ser_terms(double x) {
  int n = 3;
  while (n < 12 && x > XMAX[n - 3]) n++;
  return n;
}

/* d alone with the cut series */
static double so3_coef_inv_fast(double phi) {
  if (phi >= 1.0) return so3_coef_inv(phi);
  int n = ser_terms(phi * phi);
  return horner(SER_D, n < NELEM(SER_D) ? n : NELEM(SER_D), phi * phi);
}

static void so3_coef_inv_d(double phi, double *d, double *e) {
  double x = phi * phi;
  if (phi < 1.0) {
    int n = ser_terms(x);
    *d = horner(SER_D, n < NELEM(SER_D) ? n : NELEM(SER_D), x);
    *e = horner(SER_DP, n, x);
    return;
  }
  double t = 0.5 * phi, st = sin(t), cot = cos(t) / st;
  *d = so3_coef_inv(phi);
  *e = (0.5 * (t / (st * st) - cot) - 2.0 * phi * *d) / (x * phi);
}

/* ------------------------------------------------------------ helpers */

/* The 3 x 3 helpers below read their operands into locals first: the
 * operands may alias the result, and the loops were neither unrolled nor
 * free of reloads (the same sums in the same order). */
void lv_lg_mat3_mul(const double A[9], const double B[9], double C[9]) {
  const double b0 = B[0], b1 = B[1], b2 = B[2], b3 = B[3], b4 = B[4], b5 = B[5], b6 = B[6], b7 = B[7], b8 = B[8];
  double t[9];
  for (int i = 0; i < 3; i++) {
    const double a0 = A[3 * i], a1 = A[3 * i + 1], a2 = A[3 * i + 2];
    t[3 * i] = a0 * b0 + a1 * b3 + a2 * b6;
    t[3 * i + 1] = a0 * b1 + a1 * b4 + a2 * b7;
    t[3 * i + 2] = a0 * b2 + a1 * b5 + a2 * b8;
  }
  memcpy(C, t, sizeof t);
}

void lv_lg_mat3_tmul(const double A[9], const double B[9], double C[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
  memcpy(C, t, sizeof t);
}

void lv_lg_mat3_vec(const double A[9], const double x[3], double y[3]) {
  double t[3];
  for (int i = 0; i < 3; i++) t[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
  y[0] = t[0];
  y[1] = t[1];
  y[2] = t[2];
}

void lv_lg_mat3_tvec(const double A[9], const double x[3], double y[3]) {
  double t[3];
  for (int i = 0; i < 3; i++) t[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
  y[0] = t[0];
  y[1] = t[1];
  y[2] = t[2];
}

void lv_lg_cross(const double a[3], const double b[3], double c[3]) {
  double t0 = a[1] * b[2] - a[2] * b[1];
  double t1 = a[2] * b[0] - a[0] * b[2];
  double t2 = a[0] * b[1] - a[1] * b[0];
  c[0] = t0;
  c[1] = t1;
  c[2] = t2;
}

/* M = alpha I + beta psi~ + gamma psi psi^T */
static void so3_combo(const double psi[3], double alpha, double beta, double gamma,
                      double M[9]) {
  const double p0 = psi[0], p1 = psi[1], p2 = psi[2];
  const double g0 = gamma * p0, g1 = gamma * p1, g2 = gamma * p2;
  M[0] = g0 * p0 + alpha;
  M[1] = g0 * p1 - beta * p2;
  M[2] = g0 * p2 + beta * p1;
  M[3] = g1 * p0 + beta * p2;
  M[4] = g1 * p1 + alpha;
  M[5] = g1 * p2 - beta * p0;
  M[6] = g2 * p0 - beta * p1;
  M[7] = g2 * p1 + beta * p0;
  M[8] = g2 * p2 + alpha;
}

/* y = alpha x + beta psi x x + gamma psi (psi . x); y may alias x. */
static void so3_combo_apply(const double psi[3], double alpha, double beta,
                            double gamma, const double x[3], double y[3]) {
  double cx[3];
  lv_lg_cross(psi, x, cx);
  double g = gamma * dot3(psi, x);
  for (int i = 0; i < 3; i++) y[i] = alpha * x[i] + beta * cx[i] + g * psi[i];
}

/* ------------------------------------------------------------ SO(3) */

void lv_hat3(const double a[3], double A[9]) {
  A[0] = 0.0;
  A[1] = -a[2];
  A[2] = a[1];
  A[3] = a[2];
  A[4] = 0.0;
  A[5] = -a[0];
  A[6] = -a[1];
  A[7] = a[0];
  A[8] = 0.0;
}

/* Rodrigues with psi~^2 = psi psi^T - phi^2 I: R = cos phi I + a psi~ + b psi psi^T.
 * A new angle takes sin phi and cos phi from one sincos (glibc's sincos
 * gives the values of sin and cos: the same code), a = sin phi / phi as
 * sinc computes it; b and the memo as so3_coef. */
void lv_so3_exp(const double psi[3], double R[9]) {
  double phi = norm3(psi), a, b, cs;
  if ((coef_memo.valid && coef_memo.phi == phi) || phi < 1e-4) {
    so3_coef(phi, &a, &b, NULL);
    cs = cos(phi);
  } else {
    double sn;
#if defined(__GNUC__) && !defined(__clang__) /* clang has no __builtin_sincos */
    __builtin_sincos(phi, &sn, &cs);
#else
    sn = sin(phi), cs = cos(phi);
#endif
    a = sn / phi;
    if (phi < 1.0) { /* so3_coef's a^2 / (1 + cos phi): no second sine */
      b = a * a / (1.0 + cs);
    } else {
      double s = sinc(0.5 * phi);
      b = 0.5 * s * s;
    }
    coef_memo.phi = phi;
    coef_memo.a = a;
    coef_memo.b = b;
    coef_memo.valid = 1;
  }
  so3_combo(psi, cs, a, b, R);
}

/* T = I - b psi~ + c psi~^2 = a I - b psi~ + c psi psi^T (1 - c phi^2 = a). */
void lv_so3_tangent(const double psi[3], double T[9]) {
  double phi = norm3(psi), a, b, c;
  so3_coef(phi, &a, &b, &c);
  so3_combo(psi, a, -b, c, T);
}

/* alpha I + psi~ / 2 + d psi psi^T, d by the cut series (so3_coef_inv_fast) */
static void so3_tinv_mat(const double p[3], double alpha, double d, double Ti[9]) {
  const double a[3] = {d * p[0], d * p[1], d * p[2]};
  const double T[9] = {a[0] * p[0] + alpha, a[0] * p[1] - 0.5 * p[2], a[0] * p[2] + 0.5 * p[1],
                       a[1] * p[0] + 0.5 * p[2], a[1] * p[1] + alpha, a[1] * p[2] - 0.5 * p[0],
                       a[2] * p[0] - 0.5 * p[1], a[2] * p[1] + 0.5 * p[0], a[2] * p[2] + alpha};
  memcpy(Ti, T, sizeof T);
}

void lv_lg_so3_tangent_inv(const double psi[3], double Ti[9]) {
  const double p[3] = {psi[0], psi[1], psi[2]};
  double phi = norm3(p), d = so3_coef_inv_fast(phi);
  so3_tinv_mat(p, 1.0 - d * phi * phi, d, Ti);
}

void lv_so3_tangent_inv(const double psi[3], double Ti[9]) { lv_lg_so3_tangent_inv(psi, Ti); }

void lv_lg_so3_tangent_apply(const double psi[3], const double x[3], double y[3]) {
  double phi = norm3(psi), a, b, c;
  so3_coef(phi, &a, &b, &c);
  so3_combo_apply(psi, a, -b, c, x, y);
}

void lv_lg_so3_tangent_tr_apply(const double psi[3], const double x[3], double y[3]) {
  double phi = norm3(psi), a, b, c;
  so3_coef(phi, &a, &b, &c);
  so3_combo_apply(psi, a, b, c, x, y);
}

void lv_lg_so3_tangent_inv_apply(const double psi[3], const double x[3], double y[3]) {
  double phi = norm3(psi), d = so3_coef_inv(phi);
  so3_combo_apply(psi, 1.0 - d * phi * phi, 0.5, d, x, y);
}

/* y = T^{-1}(psi) x = x + psi x x / 2 + d psi x (psi x x).  With
 * s = psi . x and z = psi x (psi x x) = s psi - phi^2 x:
 *   D = dy/dpsi = -x~ / 2 + d (s I + psi x^T - 2 x psi^T) + e z psi^T,
 * e = d'(phi) / phi (d(d)/dpsi = e psi^T).  D row-major; D and Ti are
 * optional (NULL), Ti = T^{-1}(psi) from the same coefficients. */
void lv_lg_so3_tangent_inv_deriv(const double psi[3], const double x0[3], double y[3], double D[9], double Ti[9]) {
  /* local copies: y may alias x0, and D may alias neither */
  const double x[3] = {x0[0], x0[1], x0[2]}, p[3] = {psi[0], psi[1], psi[2]};
  double phi = norm3(p), d, e = 0.0;
  if (D)
    so3_coef_inv_d(phi, &d, &e);
  else
    d = so3_coef_inv_fast(phi);
  double s = dot3(p, x), p2 = phi * phi, c[3];
  lv_lg_cross(p, x, c);
  double alpha = 1.0 - d * phi * phi, g = d * s; /* as lv_lg_so3_tangent_inv */
  for (int i = 0; i < 3; i++) y[i] = alpha * x[i] + 0.5 * c[i] + g * p[i];
  if (Ti) so3_tinv_mat(p, alpha, d, Ti);
  if (!D) return;
  const double a[3] = {d * p[0], d * p[1], d * p[2]};
  /* D_ij = a_i x_j + b_i p_j + g delta_ij - x~_ij / 2 with a = d p,
   * b = e z - 2 d x */
  double b[3];
  for (int i = 0; i < 3; i++) b[i] = e * (s * p[i] - p2 * x[i]) - 2.0 * d * x[i];
  double M[9] = {a[0] * x[0] + b[0] * p[0] + g, a[0] * x[1] + b[0] * p[1] + 0.5 * x[2],
                 a[0] * x[2] + b[0] * p[2] - 0.5 * x[1], a[1] * x[0] + b[1] * p[0] - 0.5 * x[2],
                 a[1] * x[1] + b[1] * p[1] + g, a[1] * x[2] + b[1] * p[2] + 0.5 * x[0],
                 a[2] * x[0] + b[2] * p[0] + 0.5 * x[1], a[2] * x[1] + b[2] * p[1] - 0.5 * x[0],
                 a[2] * x[2] + b[2] * p[2] + g};
  memcpy(D, M, sizeof M);
}

void lv_so3_tangent_inv_deriv(const double psi[3], const double x[3], double y[3], double D[9], double Ti[9]) {
  lv_lg_so3_tangent_inv_deriv(psi, x, y, D, Ti);
}

void lv_lg_so3_tangent_inv_tr_apply(const double psi[3], const double x[3], double y[3]) {
  double phi = norm3(psi), d = so3_coef_inv(phi);
  so3_combo_apply(psi, 1.0 - d * phi * phi, -0.5, d, x, y);
}

/* The angle comes from atan2(sin, cos), accurate at both ends.  Away from pi
 * the axis is the skew part of R (sin phi n); near pi that part vanishes and
 * loses relative accuracy, so the axis is taken from the symmetric part
 * cos phi I + (1 - cos phi) n n^T and only its sign from the skew part. */
int lv_lg_so3_log(const double R[9], double psi[3]) {
  double v[3] = {0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1])};
  double c = 0.5 * (R[0] + R[4] + R[8] - 1.0);
  if (c > -0.5) {
    double s = norm3(v);
    if (s == 0.0) {
      psi[0] = psi[1] = psi[2] = 0.0;
      return 0;
    }
    double k = atan2(s, c) / s;
    psi[0] = k * v[0];
    psi[1] = k * v[1];
    psi[2] = k * v[2];
    return 0;
  }
  double omc = 1.0 - c;
  double S[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) S[3 * i + j] = 0.5 * (R[3 * i + j] + R[3 * j + i]);
  int p = 0;
  if (S[4] > S[3 * p + p]) p = 1;
  if (S[8] > S[3 * p + p]) p = 2;
  double n[3];
  double np2 = (S[3 * p + p] - c) / omc;
  double np = sqrt(np2 > 0.0 ? np2 : 0.0);
  for (int j = 0; j < 3; j++) n[j] = (j == p) ? np : S[3 * p + j] / (omc * np);
  double nn = norm3(n);
  for (int j = 0; j < 3; j++) n[j] /= nn;
  double s = dot3(n, v);
  if (s < 0.0) {
    s = -s;
    for (int j = 0; j < 3; j++) n[j] = -n[j];
  }
  double phi = atan2(s, c);
  for (int j = 0; j < 3; j++) psi[j] = phi * n[j];
  /* s = sin(phi) ~ pi - phi: within a few ulps of pi the sign of the axis
   * is round-off in R, so the branch is arbitrary. */
  return s <= PI_TOL;
}

void lv_so3_log(const double R[9], double psi[3]) { (void)lv_lg_so3_log(R, psi); }

static double det3(const double A[9]) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* Polar factor: Newton's iteration R <- (R + R^{-T})/2 while far from
 * orthogonal (it converges for any nonsingular R), then the inverse-free
 * Newton-Schulz step R <- R (3I - R^T R)/2, which converges quadratically once
 * ||R^T R - I|| < 1 and is what removes the usual round-off drift. */
int lv_lg_so3_normalize(double R[9]) {
  if (!lv_all_finite(9, R)) return LV_EINPUT;
  double det = det3(R);
  if (!(det > 0.0)) return LV_EINPUT;
  for (int it = 0; it < 100; it++) {
    double E[9], err = 0.0;
    lv_lg_mat3_tmul(R, R, E);
    E[0] -= 1.0;
    E[4] -= 1.0;
    E[8] -= 1.0;
    for (int i = 0; i < 9; i++)
      if (fabs(E[i]) > err) err = fabs(E[i]);
    if (err <= 4.0 * DBL_EPSILON) return 0;
    if (err < 0.25) {
      double M[9];
      for (int i = 0; i < 9; i++) M[i] = -0.5 * E[i];
      M[0] += 1.0;
      M[4] += 1.0;
      M[8] += 1.0;
      lv_lg_mat3_mul(R, M, R);
    } else {
      det = det3(R);
      if (!(det > 0.0) || !isfinite(det)) return LV_EINPUT;
      /* R^{-T} = cof(R) / det */
      double C[9] = {R[4] * R[8] - R[5] * R[7], R[5] * R[6] - R[3] * R[8],
                     R[3] * R[7] - R[4] * R[6], R[2] * R[7] - R[1] * R[8],
                     R[0] * R[8] - R[2] * R[6], R[1] * R[6] - R[0] * R[7],
                     R[1] * R[5] - R[2] * R[4], R[2] * R[3] - R[0] * R[5],
                     R[0] * R[4] - R[1] * R[3]};
      for (int i = 0; i < 9; i++) R[i] = 0.5 * (R[i] + C[i] / det);
    }
  }
  /* Round-off can keep err a few ulps above the threshold: the matrix is
   * orthogonal to working precision by then. */
  return 0;
}

/* ------------------------------------------------------------ S^3 */

void lv_lg_quat_mul(const double p[4], const double q[4], double r[4]) {
  double t0 = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3];
  double t1 = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2];
  double t2 = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1];
  double t3 = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0];
  r[0] = t0;
  r[1] = t1;
  r[2] = t2;
  r[3] = t3;
}

void lv_lg_quat_exp(const double omega[3], double q[4]) {
  double half = 0.5 * norm3(omega);
  double k = 0.5 * sinc(half);
  q[0] = cos(half);
  q[1] = k * omega[0];
  q[2] = k * omega[1];
  q[3] = k * omega[2];
}

int lv_lg_quat_log(const double q[4], double omega[3]) {
  double w = q[0], v[3] = {q[1], q[2], q[3]};
  if (w < 0.0) {
    w = -w;
    v[0] = -v[0];
    v[1] = -v[1];
    v[2] = -v[2];
  }
  double s = norm3(v);
  if (s == 0.0) {
    omega[0] = omega[1] = omega[2] = 0.0;
    return 0;
  }
  double k = 2.0 * atan2(s, w) / s;
  omega[0] = k * v[0];
  omega[1] = k * v[1];
  omega[2] = k * v[2];
  /* pi - angle ~ 2 w / s: same tolerance as for SO(3). */
  return 2.0 * w <= PI_TOL * s;
}

void lv_lg_quat_to_rot(const double q[4], double R[9]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1.0 - 2.0 * (y * y + z * z);
  R[1] = 2.0 * (x * y - w * z);
  R[2] = 2.0 * (x * z + w * y);
  R[3] = 2.0 * (x * y + w * z);
  R[4] = 1.0 - 2.0 * (x * x + z * z);
  R[5] = 2.0 * (y * z - w * x);
  R[6] = 2.0 * (x * z - w * y);
  R[7] = 2.0 * (y * z + w * x);
  R[8] = 1.0 - 2.0 * (x * x + y * y);
}

/* Shepperd: the largest of 4 w^2, 4 x^2, 4 y^2, 4 z^2 (from the trace and
 * the diagonal) is taken by a square root, the others from off-diagonal
 * sums and differences, so no component is found from a small difference. */
void lv_lg_quat_from_rot(const double R[9], double q[4]) {
  double t = R[0] + R[4] + R[8], c[4] = {t, R[0], R[4], R[8]};
  int p = 0;
  for (int i = 1; i < 4; i++)
    if (c[i] > c[p]) p = i;
  double r[4];
  if (p == 0) {
    double s = sqrt(1.0 + t);
    r[0] = 0.5 * s;
    s = 0.5 / s;
    r[1] = (R[7] - R[5]) * s;
    r[2] = (R[2] - R[6]) * s;
    r[3] = (R[3] - R[1]) * s;
  } else {
    int i = p - 1, j = (i + 1) % 3, k = (i + 2) % 3;
    double s = sqrt(fmax(0.0, 1.0 + R[4 * i] - R[4 * j] - R[4 * k]));
    r[1 + i] = 0.5 * s;
    s = 0.5 / s;
    r[0] = (R[3 * k + j] - R[3 * j + k]) * s;
    r[1 + j] = (R[3 * j + i] + R[3 * i + j]) * s;
    r[1 + k] = (R[3 * k + i] + R[3 * i + k]) * s;
  }
  double sg = r[0] < 0.0 ? -1.0 : 1.0;
  for (int i = 0; i < 4; i++) q[i] = sg * r[i];
}

int lv_lg_quat_normalize(double q[4]) {
  if (!lv_all_finite(4, q)) return LV_EINPUT;
  double m = fabs(q[0]);
  for (int i = 1; i < 4; i++)
    if (fabs(q[i]) > m) m = fabs(q[i]);
  if (m == 0.0) return LV_EINPUT;
  /* Scale first so that the sum of squares cannot under- or overflow. */
  double s = 0.0, t[4];
  for (int i = 0; i < 4; i++) {
    t[i] = q[i] / m;
    s += t[i] * t[i];
  }
  s = sqrt(s);
  for (int i = 0; i < 4; i++) q[i] = t[i] / s;
  return 0;
}

/* ------------------------------------------------------------ SE(3) */

/* exp(w~) = (T(psi)^T U, exp(psi~)). */
void lv_lg_se3_exp(const double w[6], double x[3], double R[9]) {
  const double *U = w, *psi = w + 3;
  double phi = norm3(psi), a, b, c;
  so3_coef(phi, &a, &b, &c);
  so3_combo(psi, cos(phi), a, b, R);
  so3_combo_apply(psi, a, b, c, U, x);
}

int lv_lg_se3_log(const double x[3], const double R[9], double w[6]) {
  double psi[3];
  int at_pi = lv_lg_so3_log(R, psi);
  lv_lg_so3_tangent_inv_tr_apply(psi, x, w);
  w[3] = psi[0];
  w[4] = psi[1];
  w[5] = psi[2];
  return at_pi;
}

/* Coefficients of the coupling block T_Upsi (spec 000_001 section 2.7):
 * T_Upsi = -b U~ + c (U~psi~ + psi~U~) + (psi.U) (f psi~ + e psi~^2), with b, c
 * as in so3_coef, f = (2b - a)/phi^2, e = (b - 3c)/phi^2. */
static void se3_coef(double phi, double *a, double *b, double *c, double *e,
                     double *f) {
  so3_coef(phi, a, b, c);
  double x = phi * phi;
  if (phi < 1.0) {
    *f = horner(SER_F, NELEM(SER_F), x);
    *e = horner(SER_E, NELEM(SER_E), x);
  } else {
    *f = (2.0 * *b - *a) / x;
    *e = (*b - 3.0 * *c) / x;
  }
}

/* y = T_Upsi x, using U~psi~ + psi~U~ = U psi^T + psi U^T - 2 (U.psi) I. */
static void se3_coupling_apply(const double U[3], const double psi[3], double phi,
                               double b, double c, double e, double f,
                               const double x[3], double y[3]) {
  double up = dot3(U, psi), ux[3], px[3];
  lv_lg_cross(U, x, ux);
  lv_lg_cross(psi, x, px);
  double cu = c * dot3(psi, x), cp = c * dot3(U, x) + up * e * dot3(psi, x);
  double alpha = -2.0 * c * up - up * e * phi * phi;
  double beta = up * f;
  for (int i = 0; i < 3; i++)
    y[i] = alpha * x[i] - b * ux[i] + beta * px[i] + cu * U[i] + cp * psi[i];
}

void lv_lg_se3_tangent(const double w[6], double T[36]) {
  const double *U = w, *psi = w + 3;
  double phi = norm3(psi), a, b, c, e, f;
  se3_coef(phi, &a, &b, &c, &e, &f);
  double Tr[9];
  so3_combo(psi, a, -b, c, Tr);
  for (int i = 0; i < 36; i++) T[i] = 0.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      T[6 * i + j] = Tr[3 * i + j];
      T[6 * (i + 3) + j + 3] = Tr[3 * i + j];
    }
  for (int j = 0; j < 3; j++) {
    double ej[3] = {0.0, 0.0, 0.0}, col[3];
    ej[j] = 1.0;
    se3_coupling_apply(U, psi, phi, b, c, e, f, ej, col);
    for (int i = 0; i < 3; i++) T[6 * i + j + 3] = col[i];
  }
}

void lv_lg_se3_tangent_apply(const double w[6], const double x[6], double y[6]) {
  const double *U = w, *psi = w + 3;
  double phi = norm3(psi), a, b, c, e, f;
  se3_coef(phi, &a, &b, &c, &e, &f);
  double y1[3], y2[3], cpl[3];
  so3_combo_apply(psi, a, -b, c, x, y1);
  se3_coupling_apply(U, psi, phi, b, c, e, f, x + 3, cpl);
  so3_combo_apply(psi, a, -b, c, x + 3, y2);
  for (int i = 0; i < 3; i++) {
    y[i] = y1[i] + cpl[i];
    y[3 + i] = y2[i];
  }
}

/* Block back-substitution in [[T, T_Upsi], [0, T]] y = x. */
void lv_lg_se3_tangent_inv_apply(const double w[6], const double x[6], double y[6]) {
  const double *U = w, *psi = w + 3;
  double phi = norm3(psi), a, b, c, e, f;
  se3_coef(phi, &a, &b, &c, &e, &f);
  double d = so3_coef_inv(phi), alpha = 1.0 - d * phi * phi;
  double y2[3], r[3];
  so3_combo_apply(psi, alpha, 0.5, d, x + 3, y2);
  se3_coupling_apply(U, psi, phi, b, c, e, f, y2, r);
  for (int i = 0; i < 3; i++) r[i] = x[i] - r[i];
  so3_combo_apply(psi, alpha, 0.5, d, r, y);
  y[3] = y2[0];
  y[4] = y2[1];
  y[5] = y2[2];
}

/* ad_w = [[psi~, U~], [0, psi~]]. */
void lv_lg_se3_ad_apply(const double w[6], const double x[6], double y[6]) {
  double a[3], b[3], c[3];
  lv_lg_cross(w + 3, x, a);
  lv_lg_cross(w, x + 3, b);
  lv_lg_cross(w + 3, x + 3, c);
  for (int i = 0; i < 3; i++) {
    y[i] = a[i] + b[i];
    y[3 + i] = c[i];
  }
}

/* ------------------------------------------------------------ unit dual quaternions */

void lv_lg_udq_mul(const double a[8], const double b[8], double c[8]) {
  double r[4], d1[4], d2[4];
  lv_lg_quat_mul(a, b, r);
  lv_lg_quat_mul(a, b + 4, d1);
  lv_lg_quat_mul(a + 4, b, d2);
  for (int i = 0; i < 4; i++) {
    c[i] = r[i];
    c[4 + i] = d1[i] + d2[i];
  }
}

/* d = x r / 2 for the pure quaternion x */
static void udq_dual(const double x[3], const double r[4], double d[4]) {
  const double xq[4] = {0.0, x[0], x[1], x[2]};
  lv_lg_quat_mul(xq, r, d);
  for (int i = 0; i < 4; i++) d[i] *= 0.5;
}

/* x = 2 d r* (its scalar part, 2 r . d, is zero on the group) */
static void udq_trans(const double q[8], double x[3]) {
  const double rc[4] = {q[0], -q[1], -q[2], -q[3]};
  double t[4];
  lv_lg_quat_mul(q + 4, rc, t);
  x[0] = 2.0 * t[1];
  x[1] = 2.0 * t[2];
  x[2] = 2.0 * t[3];
}

void lv_lg_udq_exp(const double w[6], double q[8]) {
  double x[3];
  lv_lg_quat_exp(w + 3, q);
  lv_lg_so3_tangent_tr_apply(w + 3, w, x);
  udq_dual(x, q, q + 4);
}

int lv_lg_udq_log(const double q[8], double w[6]) {
  double p[8], x[3];
  double sg = q[0] < 0.0 ? -1.0 : 1.0; /* q and -q are the same pose */
  for (int i = 0; i < 8; i++) p[i] = sg * q[i];
  int at_pi = lv_lg_quat_log(p, w + 3);
  udq_trans(p, x);
  lv_lg_so3_tangent_inv_tr_apply(w + 3, x, w);
  return at_pi;
}

void lv_lg_udq_pose(const double q[8], double x[3], double R[9]) {
  lv_lg_quat_to_rot(q, R);
  udq_trans(q, x);
}

void lv_lg_udq_from_pose(const double x[3], const double R[9], double q[8]) {
  lv_lg_quat_from_rot(R, q);
  udq_dual(x, q, q + 4);
}

int lv_lg_udq_normalize(double q[8]) {
  if (!lv_all_finite(8, q)) return LV_EINPUT;
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(n > 0.0) || !isfinite(n)) return LV_EINPUT;
  for (int i = 0; i < 8; i++) q[i] /= n;
  double rd = q[0] * q[4] + q[1] * q[5] + q[2] * q[6] + q[3] * q[7];
  for (int i = 0; i < 4; i++) q[4 + i] -= rd * q[i];
  return 0;
}
