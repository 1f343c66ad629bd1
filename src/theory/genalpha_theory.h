/* What seeds 000 (Arnold-Brüls-Cardona 2015) and 002 (Holzinger-Arnold-
 * Gerstmayr) derive about the generalized-alpha method, computed: the
 * Chung-Hulbert parameters (52), the error-propagation matrices T+, T0 of
 * the index-3 (46) and index-2 (59) recursions, their powers (transient
 * amplification), c_inf, the local-error coefficients mu of the sigma
 * methods and of the paper's Algorithms 1/2 (spec 002 §4.4), and the P^-1
 * series (65).  Spec: spec/000_001_genalpha.md §3.4-§3.7, spec/
 * 002_sigma_genalpha.md §2.1, §3.2, §4.4.  Used by `livens theory genalpha`
 * and tests/check_theory.c.  Not installed.
 *
 * Matrices are row-major.  Eigenvalues, solves and 2-norms go through
 * LAPACK (dgeev, dgesv, dgesvd). */
#ifndef LIVENS_THEORY_GENALPHA_H
#define LIVENS_THEORY_GENALPHA_H

/** Generalized-alpha parameters and the quantities the papers derive from them. */
typedef struct {
  double rho;       /**< spectral radius at infinity rho_inf */
  double am, af;    /**< alpha_m, alpha_f */
  double beta, gam; /**< beta, gamma */
  double dalpha;    /**< Delta alpha = alpha_m - alpha_f */
  double cq;        /**< seed 000's C_q = 1 - 6 beta - 3 Delta alpha (seed 002's (41) is cq / 6) */
  double sigma_opt; /**< gamma / (3 beta): removes the Lie term of seed 002 (40) */
} lv_ga_params;

/** Chung-Hulbert parameters (52) of rho_inf: LV_EINPUT unless 0 <= rho <= 1. */
int lv_ga_params_ch(double rho, lv_ga_params *p);

/** T+ and T0 (3x3) of the index-3 recursion (46). */
void lv_ga_index3_tmats(const lv_ga_params *p, double Tp[9], double T0[9]);
/** T+ and T0 (2x2) of the index-2 recursion (59). */
void lv_ga_index2_tmats(const lv_ga_params *p, double Tp[4], double T0[4]);

/** A = T+^-1 T0 (n x n, n <= 8) by LAPACK dgesv.  LV_ESINGULAR if T+ is
 * singular, LV_EINPUT for n out of range. */
int lv_ga_amplification(int n, const double *Tp, const double *T0, double *A);

/** Closed form of T+^-1 T0 (46) for Chung-Hulbert parameters (spec 000 §3.4). */
void lv_ga_amplification_closed(double rho, double A[9]);

/** Jordan decomposition T+^-1 T0 = X J X^-1 for Chung-Hulbert parameters:
 * J the 3x3 Jordan block of mu = -rho, X as in seed 000 §4.1 with its entry
 * (1,2) corrected to (1+mu)/(2(1-mu)) (spec 000 §0.1 item 2). */
void lv_ga_jordan(double rho, double X[9], double J[9]);

/** Characteristic polynomial det(z I - A) = z^3 + c[2] z^2 + c[1] z + c[0]. */
void lv_ga_charpoly3(const double A[9], double c[3]);

/** Eigenvalues wr + i wi of A (n x n, n <= 8) by LAPACK dgeev.
 * LV_ELINSOL if dgeev fails. */
int lv_ga_eigenvalues(int n, const double *A, double *wr, double *wi);

/** Spectral norm ||A||_2 (n x n, n <= 8) by LAPACK dgesvd. */
int lv_ga_norm2(int n, const double *A, double *nrm);

/** What the powers A^k, k = 1 .. nmax, of an n x n matrix do. */
typedef struct {
  double max_norm; /**< max_k ||A^k||_2 */
  int argmax;      /**< the k where it is reached (first one) */
  double row_max[8]; /**< max_k |[A^k]_{row,j}| for each column j */
  int row_arg[8];    /**< the k of each */
  double last_norm;  /**< ||A^nmax||_2 */
} lv_ga_powers;

/** Powers A^1 .. A^nmax of A (n x n, n <= 8): the largest spectral norm and,
 * for row `row` (0-based), the largest modulus of each entry. */
int lv_ga_power_study(int n, const double *A, int row, int nmax, lv_ga_powers *out);

/** A number of powers that reaches every maximum of lv_ga_power_study for a
 * Jordan block of -rho (rho < 1): beyond it n^2 rho^n only decreases. */
int lv_ga_power_horizon(double rho);

/** c_inf = max_n n (n-1) rho^(n-2) / 2 (seed 000 §4.1), with its argmax n;
 * for rho = 0 the value is 1 (n = 2). */
double lv_ga_cinf(double rho, int *argmax);

/** Seed 000's empirical fit max_n ||(T+^-1 T0)^n||_2 ~ 0.9 / (1 - rho^(1/4)). */
double lv_ga_amp_fit(double rho);

/** mu of the exact sigma scheme: the local error's Lie coefficient is
 * 1/12 - mu, mu = sigma beta / (4 gamma) (spec 002 (40)). */
double lv_ga_mu_exact(const lv_ga_params *p, double sigma);

/** mu of the paper's simplified corrector (Algs 1-3) with predictor factor
 * f (spec 002 §4.4): sigma { f (beta/gamma) [1/2 - (gamma - beta)(1 - kappa)]
 * + (beta/2)(1 - kappa) }, 1 - kappa = (1 - alpha_f)/(1 - alpha_m). */
double lv_ga_mu_impl(const lv_ga_params *p, double sigma, double f);

/** The truncated series (65) of P^-1(theta), P = sigma I + (1 - sigma) T(theta)
 * on SO(3): I + c/2 theta~ + (c^2/4 - c/6) theta~^2, c = 1 - sigma (3x3). */
void lv_ga_pinv_series(double sigma, const double theta[3], double Pi[9]);

/** Coefficient k3 of theta~^3 in the Taylor series of P^-1(theta) (the first
 * term (65) leaves out): c (1 - c)(1 - 3c) / 24, c = 1 - sigma.  Zero for
 * sigma = 0 (P^-1 = T^-1: its error is O(|theta|^4)), sigma = 1 and
 * sigma = 2/3, and small near sigma_opt = gamma/(3 beta) -> 2/3. */
double lv_ga_pinv_k3(double sigma);

/** P^-1(theta) itself, P built from the SO(3) tangent operator and inverted
 * by LAPACK dgesv.  LV_ESINGULAR if P is singular. */
int lv_ga_pinv_exact(double sigma, const double theta[3], double Pi[9]);

#endif
