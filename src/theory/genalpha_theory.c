/* Generalized-alpha theory of seeds 000 and 002, computed (see the header).
 * Equation numbers are the papers'. */
#include "theory/genalpha_theory.h"
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "livens/lv_status.h"
#include "space/liegroup.h"

/* Fortran LAPACK prototypes; the trailing size_t arguments are the hidden
 * CHARACTER lengths of the gfortran convention (see src/linsol/dense.c). */
extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
                   int *info);
extern void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda, double *wr,
                   double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr, double *work,
                   const int *lwork, int *info, size_t jobvl_len, size_t jobvr_len);
extern void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a, const int *lda,
                    double *s, double *u, const int *ldu, double *vt, const int *ldvt, double *work,
                    const int *lwork, int *info, size_t jobu_len, size_t jobvt_len);

#define NMAX 8

/* row-major r x c -> column-major */
static void to_colmajor(int n, const double *A, double *C) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) C[j * n + i] = A[i * n + j];
}

static void matmul(int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
      C[i * n + j] = s;
    }
}

int lv_ga_params_ch(double rho, lv_ga_params *p) {
  if (!(rho >= 0.0 && rho <= 1.0)) return LV_EINPUT;
  p->rho = rho;
  p->am = (2.0 * rho - 1.0) / (rho + 1.0);
  p->af = rho / (rho + 1.0);
  p->gam = 0.5 + p->af - p->am;
  p->beta = 0.25 * (p->gam + 0.5) * (p->gam + 0.5);
  p->dalpha = p->am - p->af;
  p->cq = 1.0 - 6.0 * p->beta - 3.0 * p->dalpha;
  p->sigma_opt = p->gam / (3.0 * p->beta);
  return 0;
}

void lv_ga_index3_tmats(const lv_ga_params *p, double Tp[9], double T0[9]) {
  const double tp[9] = {0.0, 0.0, -p->beta, 1.0, 0.0, -p->gam, 0.0, 1.0 - p->af, 1.0 - p->am};
  const double t0[9] = {1.0, 0.0, 0.5 - p->beta, 1.0, 0.0, 1.0 - p->gam, 0.0, -p->af, -p->am};
  memcpy(Tp, tp, sizeof tp);
  memcpy(T0, t0, sizeof t0);
}

void lv_ga_index2_tmats(const lv_ga_params *p, double Tp[4], double T0[4]) {
  const double tp[4] = {0.0, -p->gam, 1.0 - p->af, 1.0 - p->am};
  const double t0[4] = {0.0, 1.0 - p->gam, -p->af, -p->am};
  memcpy(Tp, tp, sizeof tp);
  memcpy(T0, t0, sizeof t0);
}

int lv_ga_amplification(int n, const double *Tp, const double *T0, double *A) {
  if (n < 1 || n > NMAX) return LV_EINPUT;
  double a[NMAX * NMAX], b[NMAX * NMAX];
  int ipiv[NMAX], info = 0;
  to_colmajor(n, Tp, a);
  to_colmajor(n, T0, b);
  dgesv_(&n, &n, a, &n, ipiv, b, &n, &info);
  if (info > 0) return LV_ESINGULAR;
  if (info < 0) return LV_EINPUT;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A[i * n + j] = b[j * n + i];
  return 0;
}

void lv_ga_amplification_closed(double rho, double A[9]) {
  double r1 = 1.0 - rho, p1 = 1.0 + rho;
  A[0] = -1.0 + 0.5 * r1 * r1;
  A[1] = 0.0;
  A[2] = 0.25 * r1 * r1;
  A[3] = (2.0 - rho) * p1 * p1;
  A[4] = -rho;
  A[5] = 0.5 * rho * (1.0 - rho * rho);
  A[6] = -p1 * p1;
  A[7] = 0.0;
  A[8] = 1.0 - 2.0 * rho - 0.5 * r1 * r1;
}

void lv_ga_jordan(double rho, double X[9], double J[9]) {
  double mu = -rho;
  const double x[9] = {0.0, (1.0 + mu) / (2.0 * (1.0 - mu)), -1.0 / ((1.0 - mu) * (1.0 - mu)),
                       1.0 - mu * mu, -(2.0 + mu), 0.0,
                       0.0, 1.0, 0.0};
  const double j[9] = {mu, 1.0, 0.0, 0.0, mu, 1.0, 0.0, 0.0, mu};
  memcpy(X, x, sizeof x);
  memcpy(J, j, sizeof j);
}

void lv_ga_charpoly3(const double A[9], double c[3]) {
  double tr = A[0] + A[4] + A[8];
  double m2 = A[0] * A[4] - A[1] * A[3] + A[0] * A[8] - A[2] * A[6] + A[4] * A[8] - A[5] * A[7];
  double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
               A[2] * (A[3] * A[7] - A[4] * A[6]);
  c[2] = -tr;
  c[1] = m2;
  c[0] = -det;
}

int lv_ga_eigenvalues(int n, const double *A, double *wr, double *wi) {
  if (n < 1 || n > NMAX) return LV_EINPUT;
  double a[NMAX * NMAX], work[8 * NMAX], dummy[1];
  int lwork = 8 * NMAX, one = 1, info = 0;
  to_colmajor(n, A, a);
  dgeev_("N", "N", &n, a, &n, wr, wi, dummy, &one, dummy, &one, work, &lwork, &info, 1, 1);
  return info == 0 ? 0 : LV_ELINSOL;
}

int lv_ga_norm2(int n, const double *A, double *nrm) {
  if (n < 1 || n > NMAX) return LV_EINPUT;
  double a[NMAX * NMAX], s[NMAX], work[16 * NMAX], dummy[1];
  int lwork = 16 * NMAX, one = 1, info = 0;
  to_colmajor(n, A, a);
  dgesvd_("N", "N", &n, &n, a, &n, s, dummy, &one, dummy, &one, work, &lwork, &info, 1, 1);
  if (info != 0) return LV_ELINSOL;
  *nrm = s[0];
  return 0;
}

int lv_ga_power_study(int n, const double *A, int row, int nmax, lv_ga_powers *out) {
  if (n < 1 || n > NMAX || row < 0 || row >= n || nmax < 1) return LV_EINPUT;
  double P[NMAX * NMAX], Q[NMAX * NMAX];
  memset(out, 0, sizeof *out);
  memcpy(P, A, (size_t)(n * n) * sizeof(double));
  for (int k = 1; k <= nmax; k++) {
    double nr;
    int rc = lv_ga_norm2(n, P, &nr);
    if (rc) return rc;
    if (nr > out->max_norm) {
      out->max_norm = nr;
      out->argmax = k;
    }
    for (int j = 0; j < n; j++) {
      double e = fabs(P[row * n + j]);
      if (e > out->row_max[j]) {
        out->row_max[j] = e;
        out->row_arg[j] = k;
      }
    }
    out->last_norm = nr;
    if (k < nmax) {
      matmul(n, P, A, Q);
      memcpy(P, Q, (size_t)(n * n) * sizeof(double));
    }
  }
  return 0;
}

int lv_ga_power_horizon(double rho) {
  if (!(rho > 0.0)) return 10;
  if (rho >= 1.0) return 1000000;
  double n = 20.0 + 12.0 / -log(rho);
  return n > 1e6 ? 1000000 : (int)n;
}

double lv_ga_cinf(double rho, int *argmax) {
  double best = 0.0;
  int arg = 2;
  if (rho >= 1.0) {
    if (argmax) *argmax = 0;
    return INFINITY;
  }
  int nmax = lv_ga_power_horizon(rho);
  for (int n = 2; n <= nmax; n++) {
    double c = 0.5 * n * (n - 1) * pow(rho, n - 2);
    if (c > best) {
      best = c;
      arg = n;
    }
  }
  if (argmax) *argmax = arg;
  return best;
}

double lv_ga_amp_fit(double rho) { return 0.9 / (1.0 - pow(rho, 0.25)); }

double lv_ga_mu_exact(const lv_ga_params *p, double sigma) { return 0.25 * sigma * p->beta / p->gam; }

double lv_ga_mu_impl(const lv_ga_params *p, double sigma, double f) {
  double k1 = (1.0 - p->af) / (1.0 - p->am); /* 1 - kappa */
  double bg = p->beta / p->gam;
  return sigma * (f * bg * (0.5 - (p->gam - p->beta) * k1) + 0.5 * p->beta * k1);
}

static void skew(const double t[3], double S[9]) {
  S[0] = 0.0, S[1] = -t[2], S[2] = t[1];
  S[3] = t[2], S[4] = 0.0, S[5] = -t[0];
  S[6] = -t[1], S[7] = t[0], S[8] = 0.0;
}

void lv_ga_pinv_series(double sigma, const double theta[3], double Pi[9]) {
  double c = 1.0 - sigma, S[9], S2[9];
  skew(theta, S);
  matmul(3, S, S, S2);
  double a1 = 0.5 * c, a2 = 0.25 * c * c - c / 6.0;
  for (int i = 0; i < 9; i++) Pi[i] = a1 * S[i] + a2 * S2[i] + (i % 4 == 0 ? 1.0 : 0.0);
}

double lv_ga_pinv_k3(double sigma) {
  double c = 1.0 - sigma;
  return c * (1.0 - c) * (1.0 - 3.0 * c) / 24.0;
}

int lv_ga_pinv_exact(double sigma, const double theta[3], double Pi[9]) {
  double P[9], e[3], col[3];
  for (int j = 0; j < 3; j++) {
    e[0] = e[1] = e[2] = 0.0;
    e[j] = 1.0;
    lv_lg_so3_tangent_apply(theta, e, col); /* column j of T(theta) */
    for (int i = 0; i < 3; i++) P[i * 3 + j] = (1.0 - sigma) * col[i] + (i == j ? sigma : 0.0);
  }
  const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  return lv_ga_amplification(3, P, I, Pi);
}

/* sin(x)/x, 1 at x = 0 (Taylor below 1e-4: the error is x^4/120 < 1e-18) */
static double sinc(double x) { return fabs(x) < 1e-4 ? 1.0 - x * x / 6.0 : sin(x) / x; }

/* declared in tests/whitebox.h: only the tests call it */
void lv_ga_rotvec_compose(const double a[3], const double b[3], double psi[3]) {
  double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), nb = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
  double c0 = cos(0.5 * na), c1 = cos(0.5 * nb), s0 = sinc(0.5 * na), s1 = sinc(0.5 * nb);
  /* the unit quaternion of v is (cos(|v|/2), sinc(|v|/2) v / 2): x is the
   * scalar part of the product, rho twice its vector part */
  double x = c0 * c1 - 0.25 * s0 * s1 * (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
  const double pi = 3.14159265358979323846;
  double rho[3] = {s0 * c1 * a[0] + c0 * s1 * b[0] + 0.5 * s0 * s1 * (a[1] * b[2] - a[2] * b[1]),
                   s0 * c1 * a[1] + c0 * s1 * b[1] + 0.5 * s0 * s1 * (a[2] * b[0] - a[0] * b[2]),
                   s0 * c1 * a[2] + c0 * s1 * b[2] + 0.5 * s0 * s1 * (a[0] * b[1] - a[1] * b[0])};
  double nr = sqrt(rho[0] * rho[0] + rho[1] * rho[1] + rho[2] * rho[2]);
  /* the angle 2 acos(x) in [0, 2 pi], from both parts of the quaternion:
   * the paper's pi - 2 atan2(x, sqrt(1 - x^2)) loses half the digits near
   * x = -1 (4e-8 in its unit test 2) */
  double w = 2.0 * atan2(0.5 * nr, x);
  /* rho = 2 sin(w/2) n vanishes at w = 0 and w = 2 pi; near 2 pi the
   * rounding (of cos(pi/2), say) leaves it ~1e-16 with an arbitrary
   * direction, so there the same rotation is written as (w - 2 pi) n, which
   * is ~0 whatever n is (seed 002's unit test 2: psi0 = theta = pi n gives 0) */
  if (nr == 0.0) {
    psi[0] = psi[1] = psi[2] = 0.0;
    return;
  }
  double ang = 2.0 * pi - w < 1e-7 ? w - 2.0 * pi : w;
  for (int i = 0; i < 3; i++) psi[i] = ang * rho[i] / nr;
}

