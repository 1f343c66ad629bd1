/* livens theory genalpha: what seeds 000 and 002 derive about the
 * generalized-alpha method, computed for one rho_inf (src/theory/
 * genalpha_theory.c), each number next to the paper's where the paper
 * prints one for that rho_inf.
 *
 *   livens theory genalpha [--rho-inf R] [--index 3|2] [--sigma S|optimal] */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "theory/genalpha_theory.h"

static const char theory_usage[] =
    "usage: livens theory genalpha [--rho-inf R] [--index 3|2] [--sigma S|optimal]\n"
    "  R in [0, 1] (default 0.9); --index 2: the stabilised index-2 recursion (59);\n"
    "  --sigma: also the local-error coefficients of that sigma (default: 1 and optimal)\n";

/* the paper's number for this rho_inf, if it prints one */
static const char *paper_at(double rho, const double *rhos, const char *const *vals, int n) {
  for (int i = 0; i < n; i++)
    if (fabs(rho - rhos[i]) < 1e-12) return vals[i];
  return NULL;
}

static void print_mat(const char *name, int n, const double *A) {
  for (int i = 0; i < n; i++) {
    printf("  %-14s [", i == 0 ? name : "");
    for (int j = 0; j < n; j++) printf(" %12.8g", A[i * n + j] + 0.0); /* + 0.0: no "-0" */
    printf(" ]\n");
  }
}

static void section_params(const lv_ga_params *p) {
  printf("Chung-Hulbert parameters (52)\n");
  printf("  alpha_m   = %.10g\n  alpha_f   = %.10g\n  beta      = %.10g\n  gamma     = %.10g\n", p->am, p->af,
         p->beta, p->gam);
  printf("  Delta alpha = alpha_m - alpha_f = %.10g;  gamma - (1/2 - Delta alpha) = %.3g (order condition (12))\n",
         p->dalpha, p->gam - (0.5 - p->dalpha));
  printf("  C_q = 1 - 6 beta - 3 Delta alpha = %.10g (ABC15 (17); HAG (41) prints C_q/6 = %.10g)\n", p->cq,
         p->cq / 6.0);
  printf("  sigma_opt = gamma/(3 beta) = %.10g;  beta/gamma = %.10g;  1/3 - beta/gamma = %.10g (HAG (42))\n\n",
         p->sigma_opt, p->beta / p->gam, 1.0 / 3.0 - p->beta / p->gam);
}

static int section_index3(const lv_ga_params *p) {
  double Tp[9], T0[9], A[9], C[9], X[9], J[9], c[3], wr[3], wi[3];
  lv_ga_index3_tmats(p, Tp, T0);
  int rc = lv_ga_amplification(3, Tp, T0, A);
  if (rc) return rc;
  double rho = p->rho;
  printf("Index 3: error recursion (45)-(46), E_n = (r^B, S lambda, B a)\n");
  print_mat("T+ =", 3, Tp);
  print_mat("T0 =", 3, T0);
  print_mat("T+^-1 T0 =", 3, A);
  lv_ga_amplification_closed(rho, C);
  double d = 0.0;
  for (int i = 0; i < 9; i++) d = fmax(d, fabs(A[i] - C[i]));
  printf("  closed form [[-1+(1-r)^2/2, 0, (1-r)^2/4], [(2-r)(1+r)^2, -r, r(1-r^2)/2], [-(1+r)^2, 0, "
         "1-2r-(1-r)^2/2]]:\n  max |LAPACK - closed form| = %.2g\n",
         d);
  lv_ga_charpoly3(A, c);
  printf("  det(z - T+^-1 T0) = z^3 %+.10g z^2 %+.10g z %+.10g;  (z + rho)^3 = z^3 %+.10g z^2 %+.10g z %+.10g\n",
         c[2] + 0.0, c[1] + 0.0, c[0] + 0.0, 3 * rho, 3 * rho * rho, rho * rho * rho);
  rc = lv_ga_eigenvalues(3, A, wr, wi);
  if (rc) return rc;
  printf("  eigenvalues (LAPACK dgeev; a triple root to ~eps^(1/3)):");
  for (int i = 0; i < 3; i++) printf(" %.8g%+.2gi", wr[i] + 0.0, wi[i] + 0.0);
  printf("\n");
  lv_ga_jordan(rho, X, J);
  double XJ[9], AX[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      XJ[i * 3 + j] = AX[i * 3 + j] = 0.0;
      for (int k = 0; k < 3; k++) {
        XJ[i * 3 + j] += X[i * 3 + k] * J[k * 3 + j];
        AX[i * 3 + j] += A[i * 3 + k] * X[k * 3 + j];
      }
    }
  d = 0.0;
  for (int i = 0; i < 9; i++) d = fmax(d, fabs(XJ[i] - AX[i]));
  printf("  Jordan form T+^-1 T0 = X J X^-1, J = Jordan block of mu = -rho, X (entry (1,2) corrected from ABC15's):\n");
  print_mat("X =", 3, X);
  printf("  max |X J - T+^-1 T0 X| = %.2g%s\n", d, rho >= 1.0 ? " (X is singular at rho-inf = 1: no Jordan basis)" : "");
  if (rho >= 1.0) {
    printf("  rho-inf = 1: -1 is a defective eigenvalue, the powers grow without bound (no maximum)\n\n");
    return 0;
  }
  lv_ga_powers pw;
  rc = lv_ga_power_study(3, A, 1, lv_ga_power_horizon(rho), &pw);
  if (rc) return rc;
  static const double pr[2] = {0.9, 0.6};
  static const char *const pv[2] = {"34.3 at n = 14", "7.4 at n = 3"};
  const char *paper = paper_at(rho, pr, pv, 2);
  printf("  max_n ||(T+^-1 T0)^n||_2 = %.6g at n = %d", pw.max_norm, pw.argmax);
  printf(paper ? "   [ABC15: %s]\n" : "\n", paper);
  double fit = lv_ga_amp_fit(rho);
  printf("  fit 0.9/(1 - rho^(1/4)) = %.6g, relative error %+.2f %%   [ABC15: < 3 %% for rho in [0.3, 0.99]]\n",
         fit, 100.0 * (fit / pw.max_norm - 1.0));
  int cn;
  double cinf = lv_ga_cinf(rho, &cn);
  static const double cr[3] = {0.6, 0.9, 0.99};
  static const char *const cv[3] = {"2.2", "28.5", "2.7e3"};
  paper = paper_at(rho, cr, cv, 3);
  printf("  c_inf = max_n n(n-1) rho^(n-2)/2 = %.6g at n = %d", cinf, cn);
  printf(paper ? "   [ABC15: %s]\n" : "\n", paper);
  printf("  second row of (T+^-1 T0)^n (it carries lambda): max_n |entry| = %.4g (n = %d), %.4g (n = %d), %.4g (n = %d)",
         pw.row_max[0], pw.row_arg[0], pw.row_max[1], pw.row_arg[1], pw.row_max[2], pw.row_arg[2]);
  if (fabs(rho - 0.9) < 1e-12) printf("   [ABC15: 31.91, 0.81, 0.31]");
  printf("\n  ratio first/third = %.4g (ABC15: > 100 makes a perturbed v0 matter more than a0 for rho >= 0.9)\n\n",
         pw.row_max[0] / pw.row_max[2]);
  return 0;
}

static int section_index2(const lv_ga_params *p) {
  double Tp[4], T0[4], A[4], wr[2], wi[2];
  lv_ga_index2_tmats(p, Tp, T0);
  int rc = lv_ga_amplification(2, Tp, T0, A);
  if (rc) return rc;
  rc = lv_ga_eigenvalues(2, A, wr, wi);
  if (rc) return rc;
  double rho = p->rho, e0 = -p->am / (1.0 - p->am);
  printf("Index 2 (stabilised, GGL (58)): T = blockdiag(-alpha_m/(1-alpha_m), T+^-1 T0), (59)\n");
  print_mat("T+ =", 2, Tp);
  print_mat("T0 =", 2, T0);
  print_mat("T+^-1 T0 =", 2, A);
  printf("  eigenvalues: -alpha_m/(1-alpha_m) = %.10g; of T+^-1 T0 (LAPACK): %.10g%+.2gi, %.10g%+.2gi\n", e0, wr[0],
         wi[0], wr[1], wi[1]);
  printf("  ABC15 Remark 4: -(2r-1)/(2-r) = %.10g, -r = %.10g, -(3r-1)/(3-r) = %.10g\n",
         -(2 * rho - 1) / (2 - rho), -rho, -(3 * rho - 1) / (3 - rho));
  double sr = fmax(fabs(e0), fmax(hypot(wr[0], wi[0]), hypot(wr[1], wi[1])));
  printf("  spectral radius rho(T) = %.10g\n", sr);
  if (rho < 1.0) {
    lv_ga_powers pw;
    rc = lv_ga_power_study(2, A, 0, lv_ga_power_horizon(rho), &pw);
    if (rc) return rc;
    printf("  max_n ||(T+^-1 T0)^n||_2 = %.6g at n = %d", pw.max_norm, pw.argmax);
    printf(fabs(rho - 0.9) < 1e-12 ? "   [independent prototype: 0.92 at n = 1]\n" : "\n");
  }
  printf("\n");
  return 0;
}

static void sigma_row(const lv_ga_params *p, const char *name, double s) {
  double mi1 = lv_ga_mu_impl(p, s, 1.0), mih = lv_ga_mu_impl(p, s, 0.5), me = lv_ga_mu_exact(p, s);
  printf("  %-22s %10.6f %12.6f %12.6f %12.6f %12.6f %12.6f\n", name, s, me, 1.0 / 12.0 - me, mi1, mih,
         1.0 / 12.0 - mi1);
}

static int section_sigma(const lv_ga_params *p, int have_sigma, double sigma) {
  printf("sigma-modified methods (HAG): local error l^q = C_q/6 h^3 v'' + (1/12 - mu) h^3 v^ v' + O(h^4)\n");
  printf("  %-22s %10s %12s %12s %12s %12s %12s\n", "", "sigma", "mu exact", "Lie coef", "mu_impl f=1",
         "mu_impl f=.5", "Lie f=1");
  sigma_row(p, "geom1 (sigma 0)", 0.0);
  sigma_row(p, "Algorithm 1 (sigma 1)", 1.0);
  sigma_row(p, "Algorithm 2 (optimal)", p->sigma_opt);
  if (have_sigma) sigma_row(p, "--sigma", sigma);
  printf("  (mu exact = sigma beta/(4 gamma); mu_impl: the paper's simplified corrector with predictor factor f,\n"
         "   derived for livens, doc/schemes.md; f = 1 as printed in HAG (84), f = 1/2 consistent with (29))\n");
  double s = have_sigma ? sigma : p->sigma_opt, c = 1.0 - s;
  printf("  P^-1 series (65), sigma = %.6g: P^-1 = I %+.10g theta^ %+.10g theta^2 + O(|theta|^3)\n", s, 0.5 * c,
         0.25 * c * c - c / 6.0);
  printf("  the theta^3 term it leaves out: c(1-c)(1-3c)/24 = %.6g, c = 1 - sigma (0 for sigma in {0, 2/3, 1}: "
         "then the error is O(|theta|^4))\n",
         lv_ga_pinv_k3(s));
  const double u[3] = {1.0 / sqrt(14.0), 2.0 / sqrt(14.0), 3.0 / sqrt(14.0)};
  double prev = 0.0;
  printf("  |series - (sigma I + (1-sigma) T)^-1|_max on SO(3), theta = |theta| (1,2,3)/sqrt(14):\n");
  for (double t = 0.4; t > 0.003; t *= 0.5) {
    double th[3] = {t * u[0], t * u[1], t * u[2]}, S[9], E[9], d = 0.0;
    lv_ga_pinv_series(s, th, S);
    int rc = lv_ga_pinv_exact(s, th, E);
    if (rc) return rc;
    for (int i = 0; i < 9; i++) d = fmax(d, fabs(S[i] - E[i]));
    if (prev > 0.0 && d > 0.0)
      printf("    |theta| = %-6g %.4e  (halving ratio %.3g, order %.2f)\n", t, d, prev / d, log2(prev / d));
    else
      printf("    |theta| = %-6g %.4e\n", t, d);
    prev = d;
  }
  return 0;
}

int cmd_theory(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(theory_usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  if (strcmp(argv[1], "genalpha") != 0) {
    cli_error("unknown theory '%s' (theories: genalpha).", argv[1]);
    return CLI_USAGE;
  }
  enum { O_RHO = 1, O_INDEX, O_SIGMA };
  static const struct option lo[] = {{"rho-inf", required_argument, 0, O_RHO},
                                     {"index", required_argument, 0, O_INDEX},
                                     {"sigma", required_argument, 0, O_SIGMA},
                                     {0, 0, 0, 0}};
  double rho = 0.9, sigma = 0.0;
  int index = 3, have_sigma = 0, sigma_opt = 0, c;
  char *end;
  opterr = 0;
  optind = 1;
  argc--, argv++; /* getopt starts after "genalpha" */
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    errno = 0;
    switch (c) {
      case O_RHO:
        rho = strtod(optarg, &end);
        if (end == optarg || *end || errno || !(rho >= 0.0 && rho <= 1.0)) {
          cli_error("--rho-inf must be a number in [0, 1], got '%s'.", optarg);
          return CLI_USAGE;
        }
        break;
      case O_INDEX:
        if (strcmp(optarg, "3") == 0)
          index = 3;
        else if (strcmp(optarg, "2") == 0)
          index = 2;
        else {
          cli_error("--index must be 3 or 2, got '%s'.", optarg);
          return CLI_USAGE;
        }
        break;
      case O_SIGMA:
        have_sigma = 1;
        if (strcmp(optarg, "optimal") == 0) {
          sigma_opt = 1;
          break;
        }
        sigma = strtod(optarg, &end);
        if (end == optarg || *end || errno || !isfinite(sigma)) {
          cli_error("--sigma must be a finite number or 'optimal', got '%s'.", optarg);
          return CLI_USAGE;
        }
        break;
      default:
        cli_error("theory genalpha: unknown or incomplete option '%s' (options: --rho-inf, --index, --sigma).",
                  argv[optind - 1]);
        return CLI_USAGE;
    }
  }
  if (optind < argc) {
    cli_error("theory genalpha takes no positional argument (got '%s').", argv[optind]);
    return CLI_USAGE;
  }
  lv_ga_params p;
  lv_ga_params_ch(rho, &p); /* rho was checked above */
  if (sigma_opt) sigma = p.sigma_opt;
  printf("livens theory genalpha: rho-inf = %g, index %d\n"
         "(ABC15: Arnold, Brüls & Cardona, Numer. Math. 129 (2015) 149-179; HAG: Holzinger, Arnold & Gerstmayr,\n"
         " sigma-modified Lie group generalized-alpha methods; equation numbers are theirs; doc/references.md)\n\n",
         rho, index);
  section_params(&p);
  int rc = index == 3 ? section_index3(&p) : section_index2(&p);
  if (!rc) rc = section_sigma(&p, have_sigma, sigma);
  if (rc) {
    cli_error("theory genalpha: LAPACK failed (%s).", lv_strerror(rc));
    return CLI_FAILED;
  }
  return CLI_OK;
}
