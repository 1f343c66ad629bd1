/* Generalized-alpha theory (src/theory/genalpha_theory.c) against the
 * numbers seeds 000 and 002 print: spec 000_001 §6.A claims A2-A7 and spec
 * 002 §7 claims 1, 3 and 5 (the mu_impl formula); and, in the tcase
 * "local-error", the one-step local error of the genalpha scheme itself
 * with fitted constants: claim 4 (exact sigma scheme) and claim 5 (the mu
 * of the paper's Algorithms 1/2, measured).  Paper numbers are given with the
 * digits the papers print and compared at that precision; identities
 * (closed forms, characteristic polynomials, Jordan form) to round-off.
 * Set GA_VERBOSE=1 to print the computed numbers. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "livens/livens.h"
#include "testutil.h"
#include "theory/genalpha_theory.h"
#include "whitebox.h" /* lv_ga_rotvec_compose */

static int verbose(void) { return getenv("GA_VERBOSE") != NULL; }

static lv_ga_params params(double rho) {
  lv_ga_params p;
  ck_assert_int_eq(lv_ga_params_ch(rho, &p), 0);
  return p;
}

static void amp3(double rho, double A[9]) {
  lv_ga_params p = params(rho);
  double Tp[9], T0[9];
  lv_ga_index3_tmats(&p, Tp, T0);
  ck_assert_int_eq(lv_ga_amplification(3, Tp, T0, A), 0);
}

static void mul3(const double *A, const double *B, double *C) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      C[i * 3 + j] = 0.0;
      for (int k = 0; k < 3; k++) C[i * 3 + j] += A[i * 3 + k] * B[k * 3 + j];
    }
}

/* ---- seed 002 claim 1 (and 000 A1): Chung-Hulbert parameters ---- */
START_TEST(test_params) {
  /* spec 002 §2.1, six decimals: rho, alpha_m, alpha_f, gamma, beta, beta/gamma, sigma_opt, C_q = (..)/6 */
  static const double tab[6][8] = {
      {0.0, -1.0, 0.0, 1.5, 1.0, 0.666667, 0.5, -0.333333},
      {0.5, 0.0, 0.333333, 0.833333, 0.444444, 0.533333, 0.625, -0.111111},
      {0.65, 0.181818, 0.393939, 0.712121, 0.367309, 0.515796, 0.646250, -0.094582},
      {0.875, 0.4, 0.466667, 0.566667, 0.284444, 0.501961, 0.6640625, -0.084444},
      {0.9, 0.421053, 0.473684, 0.552632, 0.277008, 0.501253, 0.665, -0.084026},
      {1.0, 0.5, 0.5, 0.5, 0.25, 0.5, 0.666667, -0.083333},
  };
  for (int r = 0; r < 6; r++) {
    double rho = tab[r][0];
    lv_ga_params p = params(rho);
    double got[7] = {p.am, p.af, p.gam, p.beta, p.beta / p.gam, p.sigma_opt, p.cq / 6.0};
    for (int j = 0; j < 7; j++)
      ck_assert_msg(fabs(got[j] - tab[r][j + 1]) <= 5.1e-7, "rho %g column %d: %.9f, spec table %.6f", rho, j,
                    got[j], tab[r][j + 1]);
    /* closed forms (spec 000 §2.2, 002 §2.1) to round-off */
    double ex[6] = {(3.0 - rho) / (2.0 * (1.0 + rho)), 1.0 / ((1.0 + rho) * (1.0 + rho)),
                    2.0 / ((1.0 + rho) * (3.0 - rho)), (3.0 - rho) * (1.0 + rho) / 6.0,
                    -2.0 * (rho * rho - rho + 1.0) / ((1.0 + rho) * (1.0 + rho)), (rho - 1.0) / (rho + 1.0)};
    double gv[6] = {p.gam, p.beta, p.beta / p.gam, p.sigma_opt, p.cq, p.dalpha};
    for (int j = 0; j < 6; j++)
      ck_assert_msg(fabs(gv[j] - ex[j]) <= 1e-12 * fmax(1.0, fabs(ex[j])), "rho %g closed form %d", rho, j);
    ck_assert(fabs(p.gam - (0.5 - p.dalpha)) < 1e-15); /* order condition (12) */
  }
  /* (42): |1/3 - beta/gamma| < 1/3 on (0, 1], = 1/3 at rho = 0 */
  for (int i = 1; i <= 1000; i++) {
    lv_ga_params p = params(i / 1000.0);
    ck_assert(fabs(1.0 / 3.0 - p.beta / p.gam) < 1.0 / 3.0);
  }
  lv_ga_params p0 = params(0.0);
  ck_assert(fabs(fabs(1.0 / 3.0 - p0.beta / p0.gam) - 1.0 / 3.0) < 1e-15);
  lv_ga_params bad;
  ck_assert_int_eq(lv_ga_params_ch(1.5, &bad), LV_EINPUT);
  ck_assert_int_eq(lv_ga_params_ch(NAN, &bad), LV_EINPUT);
}
END_TEST

/* ---- seed 000 A2: T+^-1 T0, its eigenvalues and Jordan form ---- */
START_TEST(test_a2_amplification) {
  const double rhos[] = {0.3, 0.6, 0.9};
  for (int r = 0; r < 3; r++) {
    double rho = rhos[r], A[9], C[9], X[9], J[9], XJ[9], AX[9], c[3], wr[3], wi[3];
    amp3(rho, A);
    lv_ga_amplification_closed(rho, C);
    for (int i = 0; i < 9; i++)
      ck_assert_msg(fabs(A[i] - C[i]) <= 1e-14 * fmax(1.0, fabs(C[i])), "rho %g entry %d: %.17g vs %.17g", rho,
                    i, A[i], C[i]);
    /* characteristic polynomial (z + rho)^3 */
    lv_ga_charpoly3(A, c);
    ck_assert_msg(fabs(c[2] - 3 * rho) < 1e-14 && fabs(c[1] - 3 * rho * rho) < 1e-14 &&
                      fabs(c[0] - rho * rho * rho) < 1e-14,
                  "rho %g: char. poly %g %g %g", rho, c[2], c[1], c[0]);
    /* LAPACK: a triple eigenvalue is found to about eps^(1/3) */
    ck_assert_int_eq(lv_ga_eigenvalues(3, A, wr, wi), 0);
    for (int i = 0; i < 3; i++)
      ck_assert_msg(hypot(wr[i] + rho, wi[i]) < 1e-4, "rho %g: eigenvalue %g%+gi", rho, wr[i], wi[i]);
    /* X J = A X with the corrected X; the seed's printed X fails it */
    lv_ga_jordan(rho, X, J);
    mul3(X, J, XJ);
    mul3(A, X, AX);
    ck_assert_msg(tu_max_abs_diff(9, XJ, AX) < 1e-14, "rho %g: X J - A X = %g", rho, tu_max_abs_diff(9, XJ, AX));
    double mu = -rho;
    X[1] = 0.5 * (1.0 + mu) / (1.0 - mu * mu); /* as printed in the seed (L697) */
    mul3(X, J, XJ);
    mul3(A, X, AX);
    ck_assert_msg(tu_max_abs_diff(9, XJ, AX) > 1e-2, "the seed's X should not be a Jordan basis");
    if (verbose()) printf("A2 rho %.1f: |LAPACK - closed| %.1e, eig %.6f %.6f %.6f\n", rho, tu_max_abs_diff(9, A, C), wr[0], wr[1], wr[2]);
  }
}
END_TEST

/* ---- seed 000 A3/A5: max_n ||(T+^-1 T0)^n||_2 and its fit ---- */
START_TEST(test_a3_a5_peak) {
  double A[9];
  lv_ga_powers pw;
  amp3(0.9, A);
  ck_assert_int_eq(lv_ga_power_study(3, A, 1, lv_ga_power_horizon(0.9), &pw), 0);
  if (verbose()) printf("A3 rho 0.9: max %.4f at n = %d (paper 34.3 at 14)\n", pw.max_norm, pw.argmax);
  ck_assert_msg(fabs(pw.max_norm - 34.3) < 0.05 && pw.argmax == 14, "rho 0.9: %g at %d", pw.max_norm, pw.argmax);
  amp3(0.6, A);
  ck_assert_int_eq(lv_ga_power_study(3, A, 1, lv_ga_power_horizon(0.6), &pw), 0);
  if (verbose()) printf("A3 rho 0.6: max %.4f at n = %d (paper 7.4 at 3)\n", pw.max_norm, pw.argmax);
  ck_assert_msg(fabs(pw.max_norm - 7.4) < 0.05 && pw.argmax == 3, "rho 0.6: %g at %d", pw.max_norm, pw.argmax);
  /* the horizon is long enough: the norm has decayed far below the peak */
  ck_assert(pw.last_norm < 0.05 * pw.max_norm);
  /* A5: 0.9/(1 - rho^(1/4)) within 3 % at the rho of spec 000 §3.6's table;
   * on a 0.01 grid of [0.3, 0.99] the integer argmax makes the error saw
   * up to 3.22 % (rho = 0.53), above the paper's "< 3 %": bounded by 3.5 %. */
  const double tabr[7] = {0.3, 0.5, 0.6, 0.8, 0.9, 0.95, 0.99};
  for (int i = 0; i < 7; i++) {
    amp3(tabr[i], A);
    ck_assert_int_eq(lv_ga_power_study(3, A, 1, lv_ga_power_horizon(tabr[i]), &pw), 0);
    double rel = fabs(lv_ga_amp_fit(tabr[i]) / pw.max_norm - 1.0);
    ck_assert_msg(rel < 0.03, "rho %g: fit error %g", tabr[i], rel);
  }
  double worst = 0.0, wr = 0.0;
  for (int i = 30; i <= 99; i++) {
    double rho = i / 100.0;
    amp3(rho, A);
    ck_assert_int_eq(lv_ga_power_study(3, A, 1, lv_ga_power_horizon(rho), &pw), 0);
    ck_assert(pw.last_norm < 0.1 * pw.max_norm);
    double rel = fabs(lv_ga_amp_fit(rho) / pw.max_norm - 1.0);
    if (rel > worst) worst = rel, wr = rho;
  }
  if (verbose()) printf("A5 worst relative error of the fit on the 0.01 grid of [0.3, 0.99]: %.4f at rho %.2f\n", worst, wr);
  ck_assert_msg(worst < 0.035 && worst > 0.03, "fit error %g", worst);
}
END_TEST

/* ---- seed 000 A4: c_inf ---- */
START_TEST(test_a4_cinf) {
  const double rho[3] = {0.6, 0.9, 0.99}, paper[3] = {2.2, 28.5, 2.7e3}, tol[3] = {0.05, 0.05, 50};
  for (int i = 0; i < 3; i++) {
    int n;
    double c = lv_ga_cinf(rho[i], &n);
    if (verbose()) printf("A4 rho %.2f: c_inf %.4f at n = %d (paper %g)\n", rho[i], c, n, paper[i]);
    ck_assert_msg(fabs(c - paper[i]) < tol[i], "rho %g: c_inf %g, paper %g", rho[i], c, paper[i]);
    /* the maximum is interior: both neighbours are smaller */
    double f = 0.5 * n * (n - 1) * pow(rho[i], n - 2);
    ck_assert(fabs(f - c) < 1e-12 * c);
    ck_assert(0.5 * (n + 1) * n * pow(rho[i], n - 1) <= c && 0.5 * (n - 1) * (n - 2) * pow(rho[i], n - 3) <= c);
  }
}
END_TEST

/* ---- seed 000 A6: second row of (T+^-1 T0)^n for rho = 0.9 ---- */
START_TEST(test_a6_second_row) {
  double A[9], P[9], Q[9];
  lv_ga_powers pw;
  amp3(0.9, A);
  ck_assert_int_eq(lv_ga_power_study(3, A, 1, lv_ga_power_horizon(0.9), &pw), 0);
  /* entries at given n, by repeated products */
  double e16 = 0, e2 = 0;
  for (int i = 0; i < 9; i++) P[i] = A[i];
  for (int n = 2; n <= 16; n++) {
    mul3(P, A, Q);
    for (int i = 0; i < 9; i++) P[i] = Q[i];
    if (n == 2) e2 = fabs(P[4]);
    if (n == 16) e16 = fabs(P[3]);
  }
  if (verbose())
    printf("A6 rho 0.9 second row: max |.| %.4f (n = %d; %.4f at n = 16), %.4f (n = %d; %.4f at n = 2), %.4f (n = %d); "
           "paper 31.91, 0.81, 0.31\n",
           pw.row_max[0], pw.row_arg[0], e16, pw.row_max[1], pw.row_arg[1], e2, pw.row_max[2], pw.row_arg[2]);
  ck_assert_msg(fabs(pw.row_max[0] - 31.91) < 0.05, "entry (2,1): %g", pw.row_max[0]);
  ck_assert_msg(fabs(e16 - 31.91) < 0.005, "entry (2,1) at n = 16: %g", e16);
  ck_assert_msg(fabs(e2 - 0.81) < 1e-12, "entry (2,2) at n = 2: %g", e2);     /* = rho^2 */
  ck_assert_msg(fabs(pw.row_max[1] - 0.9) < 1e-12 && pw.row_arg[1] == 1, "entry (2,2): %g", pw.row_max[1]);
  ck_assert_msg(fabs(pw.row_max[2] - 0.31) < 0.005, "entry (2,3): %g", pw.row_max[2]);
  ck_assert(pw.row_max[0] / pw.row_max[2] > 100.0);
}
END_TEST

/* ---- seed 000 A9: Example 2, the driving constraint q = t^3 ----
 * k = m = 1, M = 1, no forces, g(q) - c(t) = q - t^3 (lv_model_set_driving),
 * so lambda = -v' = -6 t (M v' = -G^T lambda).  Exact start at t0 = 1:
 * q0 = 1, v0 = 3; start=a0 gives a0 = v'(t0) + Delta_alpha h v''(t0) =
 * v'(t0 + Delta_alpha h) exactly (v' is linear, so the central difference
 * is exact).  The local errors are l^v = l^a = 0, l^q = C_q h^3, and the
 * error recursion E_{n+1} = T+^-1 T0 E_n with E_0 = (C_q h, 0, 0) is exact:
 * e_n^lambda = C_q h [(T+^-1 T0)^n]_{2,1}, a first-order error. */
static int ex2_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  return lv_sink_add(M, 0, 0, 1.0);
}
static int ex2_g(const double *q, double *g, void *u) {
  (void)u;
  g[0] = q[0];
  return 0;
}
static int ex2_G(const double *q, lv_sink *G, void *u) {
  (void)q, (void)u;
  return lv_sink_add(G, 0, 0, 1.0);
}
static int ex2_zero(const double *q, const double *w, lv_sink *s, void *u) {
  (void)q, (void)w, (void)u;
  return lv_sink_add(s, 0, 0, 0.0);
}
static int ex2_drive(double t, int order, double *c, void *u) {
  (void)u;
  c[0] = order == 0 ? t * t * t : order == 1 ? 3.0 * t * t : 6.0 * t;
  return 0;
}

static lv_model *ex2_model(void) {
  lv_space *sp = NULL;
  lv_model *m = NULL;
  ck_assert_int_eq(lv_space_new_rn(&sp, 1), 0);
  ck_assert_int_eq(lv_model_new(&m, "example2", sp, 1), 0);
  ck_assert_int_eq(lv_model_set_mass(m, ex2_mass, 1), 0);
  ck_assert_int_eq(lv_model_set_constraints(m, ex2_g, ex2_G, ex2_zero, ex2_zero), 0);
  ck_assert_int_eq(lv_model_set_driving(m, ex2_drive), 0);
  return m;
}

/* N steps of size h from t0 = 1 (exact start); e[n] = lambda(t_n) - lambda_n
 * for n = 0 .. N, and the largest |q_n - t_n^3| and |v_n - 3 t_n^2|. */
static void ex2_run(const char *rho, const char *index, const char *start, double h, int N, double *e, double *eq,
                    double *ev) {
  lv_model *m = ex2_model();
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", h), 0);
  ck_assert_int_eq(lv_integrator_set_option(it, "rho-inf", rho), 0);
  ck_assert_int_eq(lv_integrator_set_option(it, "index", index), 0);
  ck_assert_int_eq(lv_integrator_set_option(it, "start", start), 0);
  const double q0 = 1.0, v0 = 3.0;
  ck_assert_int_eq(lv_integrator_init(it, 1.0, &q0, &v0), 0);
  const lv_state *s = lv_integrator_state(it);
  *eq = *ev = 0.0;
  for (int n = 0; n <= N; n++) {
    if (n > 0) ck_assert_int_eq(lv_integrator_step(it), 0);
    double t = 1.0 + n * h; /* the integrator's t is the sum of the steps */
    ck_assert_msg(fabs(s->t - t) < 1e-12, "t_%d = %.17g", n, s->t);
    e[n] = -6.0 * t - s->lambda[0];
    *eq = fmax(*eq, fabs(s->q[0] - t * t * t));
    *ev = fmax(*ev, fabs(s->v[0] - 3.0 * t * t));
  }
  lv_integrator_free(it);
  lv_model_free(m);
}

START_TEST(test_a9_example2) {
  enum { N = 200 };
  double e[N + 1], eq, ev;
  const char *rhos[2] = {"0.9", "0.6"};
  const double paper_max[2] = {0.16099, 0.040493}, paper_half_ulp[2] = {5e-6, 5e-7};
  const double h = 1e-2;
  for (int r = 0; r < 2; r++) {
    lv_ga_params p = params(atof(rhos[r]));
    double A[9], P[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Q[9];
    amp3(p.rho, A);
    ex2_run(rhos[r], "3", "a0", h, N, e, &eq, &ev);
    ck_assert_msg(fabs(e[0]) < 1e-12, "lambda(t0): error %g", e[0]);
    double pred[N + 1], emax = 0.0, pmax = 0.0, rel = 0.0, dev = 0.0;
    int nmax = 0;
    for (int n = 1; n <= N; n++) {
      mul3(P, A, Q);
      for (int i = 0; i < 9; i++) P[i] = Q[i];
      pred[n] = p.cq * h * P[3]; /* C_q h [(T+^-1 T0)^n]_{2,1} */
      pmax = fmax(pmax, fabs(pred[n]));
      if (fabs(e[n]) > emax) emax = fabs(e[n]), nmax = n;
    }
    /* Relative 1e-6 over the transient (|prediction| >= 5 % of its peak),
     * and 1e-6 of the peak beyond it: lambda = -v' carries the round-off
     * of q ~ t^3 times beta' ~ 1/(beta h^2), ~1e-11 per step, which the
     * same recursion adds up (1.4e-8 after 200 steps at rho 0.9) while the
     * transient itself decays below it. */
    for (int n = 1; n <= N; n++) {
      double d = fabs(e[n] - pred[n]);
      dev = fmax(dev, d);
      if (fabs(pred[n]) >= 0.05 * pmax) rel = fmax(rel, d / fabs(pred[n]));
    }
    if (verbose())
      printf("A9 rho %s h %g: max |e_lambda| %.6f at n = %d (paper %.6g; C_q h max|[A^n]_21| %.6f), e_1 %.6f, "
             "deviation from C_q h [A^n]_21: relative %.1e over the transient, max %.1e (n <= %d); "
             "max |q - t^3| %.1e, max |v - 3t^2| %.2e\n",
             rhos[r], h, emax, nmax, paper_max[r], pmax, e[1], rel, dev, N, eq, ev);
    ck_assert_msg(rel < 1e-6, "rho %s: e_lambda deviates from C_q h [A^n]_21 by %.2e relative", rhos[r], rel);
    ck_assert_msg(dev < 1e-6 * pmax, "rho %s: e_lambda deviates from C_q h [A^n]_21 by %.2e", rhos[r], dev);
    /* the paper's numbers, to the digits printed */
    ck_assert_msg(fabs(emax - paper_max[r]) <= paper_half_ulp[r], "rho %s: max |e_lambda| %.7f vs %g", rhos[r], emax,
                  paper_max[r]);
    if (r == 0) ck_assert_msg(fabs(e[1] - (-0.020020)) < 5e-7, "e_1^lambda %.8f vs -0.020020", e[1]);
    ck_assert_msg(eq < 1e-12, "q - t^3: %g", eq); /* g(q) = c(t) at every node */
  }
  /* order 1 in h: the peak over t in [1, 3] is C_q h max_n |[A^n]_21| */
  double hs[4] = {2e-2, 1e-2, 5e-3, 2.5e-3}, em[4], evm[4];
  static double eb[801];
  for (int i = 0; i < 4; i++) {
    int n = (int)(2.0 / hs[i] + 0.5);
    ex2_run("0.9", "3", "a0", hs[i], n, eb, &eq, &evm[i]);
    em[i] = 0.0;
    for (int j = 0; j <= n; j++) em[i] = fmax(em[i], fabs(eb[j]));
  }
  double ord = tu_fit_order(4, hs, em), ordv = tu_fit_order(4, hs, evm);
  if (verbose())
    printf("A9 order in h (rho 0.9, t in [1, 3]): lambda %.4f (max |e| %.4g .. %.4g), v %.4f\n", ord, em[0], em[3],
           ordv);
  ck_assert_msg(fabs(ord - 1.0) < 0.02, "order of max |e_lambda|: %g", ord);
  ck_assert_msg(ordv > 1.9, "order of max |e_v|: %g", ordv); /* q and v stay second order */
}
END_TEST

/* The stabilised index-2 method (58) on Example 2, G v = c'(t) imposed:
 * q, v and (l^v = 0 for the cubic, a0 exact) a are exact at every node,
 * so lambda is exact to round-off -- no transient, where index 3 has
 * max |e_lambda| = 0.161 at h = 1e-2 (seed 000 Theorem 2: the index-2
 * transient carries no h^-1 r_0^B term). */
START_TEST(test_a9_example2_index2) {
  double hs[3] = {2e-2, 1e-2, 5e-3}, em, eq, ev;
  static double eb[401];
  for (int i = 0; i < 3; i++) {
    int n = (int)(2.0 / hs[i] + 0.5);
    ex2_run("0.9", "2", "perturbed", hs[i], n, eb, &eq, &ev);
    em = 0.0;
    for (int j = 0; j <= n; j++) em = fmax(em, fabs(eb[j]));
    if (verbose())
      printf("A9 index 2 (rho 0.9, t in [1, 3], h %g): max |e_lambda| %.2e, max |q - t^3| %.1e, max |v - 3t^2| %.1e\n",
             hs[i], em, eq, ev);
    ck_assert_msg(em < 1e-9, "index 2, h %g: max |e_lambda| %g", hs[i], em);
    ck_assert_msg(eq < 1e-12 && ev < 1e-12, "index 2, h %g: q - t^3 %g, v - 3t^2 %g", hs[i], eq, ev);
  }
}
END_TEST

/* ---- seed 000 A7: the index-2 recursion (59) ---- */
START_TEST(test_a7_index2) {
  for (int i = 0; i <= 20; i++) {
    double rho = i / 20.0 * 0.99;
    lv_ga_params p = params(rho);
    double Tp[4], T0[4], A[4], wr[2], wi[2];
    lv_ga_index2_tmats(&p, Tp, T0);
    ck_assert_int_eq(lv_ga_amplification(2, Tp, T0, A), 0);
    ck_assert_int_eq(lv_ga_eigenvalues(2, A, wr, wi), 0);
    double e1 = -rho, e2 = -(3 * rho - 1) / (3 - rho);
    double lo = fmin(wr[0], wr[1]), hi = fmax(wr[0], wr[1]);
    ck_assert_msg(fabs(wi[0]) + fabs(wi[1]) < 1e-7 && fabs(lo - fmin(e1, e2)) < 1e-7 && fabs(hi - fmax(e1, e2)) < 1e-7,
                  "rho %g: eigenvalues %g %g, expected %g %g", rho, wr[0], wr[1], e1, e2);
    double e0 = -p.am / (1 - p.am);
    ck_assert(fabs(e0 + (2 * rho - 1) / (2 - rho)) < 1e-14);
    double sr = fmax(fabs(e0), fmax(fabs(e1), fabs(e2)));
    ck_assert(sr < 1.0);
  }
  lv_ga_params p = params(0.9);
  double Tp[4], T0[4], A[4];
  lv_ga_powers pw;
  lv_ga_index2_tmats(&p, Tp, T0);
  ck_assert_int_eq(lv_ga_amplification(2, Tp, T0, A), 0);
  ck_assert_int_eq(lv_ga_power_study(2, A, 0, lv_ga_power_horizon(0.9), &pw), 0);
  if (verbose()) printf("A7 rho 0.9 index 2: max ||(T+^-1 T0)^n|| %.4f at n = %d (spec 0.92 at 1)\n", pw.max_norm, pw.argmax);
  ck_assert_msg(fabs(pw.max_norm - 0.92) < 0.005 && pw.argmax == 1, "%g at %d", pw.max_norm, pw.argmax);
}
END_TEST

/* ---- seed 002 claim 5: mu_impl of Algorithms 1 (sigma 1) and 2 (sigma_opt) ---- */
START_TEST(test_mu_impl) {
  /* spec 002 §4.4 table: rho, Alg 1 f=1, Alg 1 f=1/2, Alg 2 f=1, Alg 2 f=1/2 */
  static const double tab[3][5] = {
      {0.9, 0.250942, 0.188428, 0.166877, 0.125304},
      {0.65, 0.262196, 0.199118, 0.169444, 0.128680},
      {1.0, 0.25, 0.1875, 0.166667, 0.125},
  };
  for (int r = 0; r < 3; r++) {
    lv_ga_params p = params(tab[r][0]);
    double got[4] = {lv_ga_mu_impl(&p, 1.0, 1.0), lv_ga_mu_impl(&p, 1.0, 0.5), lv_ga_mu_impl(&p, p.sigma_opt, 1.0),
                     lv_ga_mu_impl(&p, p.sigma_opt, 0.5)};
    for (int j = 0; j < 4; j++)
      ck_assert_msg(fabs(got[j] - tab[r][j + 1]) < 5.1e-7, "rho %g case %d: %.7f vs %.6f", tab[r][0], j, got[j],
                    tab[r][j + 1]);
  }
  /* exact scheme: sigma_opt removes the Lie term, mu = 1/12; sigma = 0 has none */
  lv_ga_params p = params(0.9);
  ck_assert(fabs(lv_ga_mu_exact(&p, p.sigma_opt) - 1.0 / 12.0) < 1e-15);
  ck_assert(lv_ga_mu_exact(&p, 0.0) == 0.0 && lv_ga_mu_impl(&p, 0.0, 1.0) == 0.0);
  ck_assert(fabs(lv_ga_mu_exact(&p, 1.0) - 0.125313) < 5e-7);
}
END_TEST

/* ---- seed 002 claim 3: the P^-1 series (65) ---- */
static double pinv_err(double sigma, double s) {
  const double u[3] = {1.0 / sqrt(14.0), 2.0 / sqrt(14.0), 3.0 / sqrt(14.0)};
  double th[3] = {s * u[0], s * u[1], s * u[2]}, S[9], E[9];
  lv_ga_pinv_series(sigma, th, S);
  ck_assert_int_eq(lv_ga_pinv_exact(sigma, th, E), 0);
  return tu_max_abs_diff(9, S, E);
}

/* Claim 3 says: error O(|theta|^3), halving |theta| divides it by 8 +- 10 %
 * for sigma in {0, gamma/(3 beta)}.  The theta~^3 coefficient k3 of the
 * exact P^-1 is zero at sigma = 0 (P^-1 = T^-1, whose series has no odd term
 * beyond the first), so there the ratio is 16, and nearly zero at sigma_opt
 * (rho 0.9: k3 = -4.6e-5), where the ratio is 16 until |theta| ~ 0.02 and
 * then 8.  Asserted: O(|theta|^3) for all; ratio 8 +- 10 % where k3 is not
 * small (sigma = 0.5) and for sigma_opt below |theta| = 0.0125; 16 +- 10 %
 * for sigma = 0; the limit of err/|theta|^3 equals |k3| max|u_i|
 * (theta~^3 = -|theta|^2 theta~); sigma = 1 exact (P = I). */
START_TEST(test_pinv_series) {
  lv_ga_params p = params(0.9);
  const double sig[4] = {0.0, p.sigma_opt, 0.5, 1.0};
  const double umax = 3.0 / sqrt(14.0);
  for (int k = 0; k < 4; k++) {
    double e[9], s = 0.4, th[9];
    for (int i = 0; i < 9; i++, s *= 0.5) th[i] = s, e[i] = pinv_err(sig[k], s);
    if (verbose())
      printf("claim 3 sigma %.4f: k3 %.3e; err %.3e .. %.3e; ratios %.2f %.2f %.2f %.2f %.2f %.2f; err/|theta|^3 at %.4g: %.4e\n",
             sig[k], lv_ga_pinv_k3(sig[k]), e[0], e[6], e[0] / e[1], e[1] / e[2], e[2] / e[3], e[3] / e[4],
             e[4] / e[5], e[5] / e[6], th[6], e[6] / pow(th[6], 3));
    for (int i = 0; i < 9; i++) ck_assert(e[i] <= 1e-2 * pow(th[i], 3) + 1e-15); /* O(|theta|^3) */
    if (k == 0)
      for (int i = 0; i < 5; i++) ck_assert_msg(fabs(e[i] / e[i + 1] - 16.0) < 1.6, "sigma 0 ratio %g", e[i] / e[i + 1]);
    if (k == 1) {
      ck_assert_msg(fabs(e[0] / e[1] - 16.0) < 1.6, "sigma_opt ratio at 0.4: %g", e[0] / e[1]);
      ck_assert_msg(fabs(e[6] / e[7] - 8.0) < 0.8, "sigma_opt ratio at 0.00625: %g", e[6] / e[7]);
    }
    if (k == 2)
      for (int i = 0; i < 6; i++) ck_assert_msg(fabs(e[i] / e[i + 1] - 8.0) < 0.8, "sigma 0.5 ratio %g", e[i] / e[i + 1]);
    if (k == 1 || k == 2)
      ck_assert_msg(fabs(e[7] / pow(th[7], 3) / (fabs(lv_ga_pinv_k3(sig[k])) * umax) - 1.0) < 0.1,
                    "sigma %g: err/|theta|^3 = %g, |k3| max u = %g", sig[k], e[7] / pow(th[7], 3),
                    fabs(lv_ga_pinv_k3(sig[k])) * umax);
    if (k == 3)
      for (int i = 0; i < 9; i++) ck_assert(e[i] == 0.0);
  }
}
END_TEST

/* ------------------------------------------------------------------ */
/* One-step local error of the sigma methods (seed 002 claims 4 and 5, spec
 * 002 §4.3-§4.4): the unconstrained heavy top on SO(3) (model heavy-top,
 * formulation so3: J_O W' + W x J_O W = -m g0 X x R^T e3), R0 = exp(0.3,
 * -0.2, 0.5), W0 = (1, 15, -2); one genalpha step of size h from exact data
 * (a0 = v'(t0 + dalpha h) + O(h^2) by start = a0, (57)); the error
 * l = log(R0^T R(h)) - log(R0^T R1), divided by h^3, extrapolated from
 * h = 1e-3 and 5e-4 (Richardson: the O(h^4) term goes), is fitted to
 * c1 v'' + c2 v x v'.  The exact solution: classical RK4 with h/400
 * sub-steps on (R, W); v', v'' at t0 in closed form. */
static const double LE_JO[3] = {15.234375, 0.46875, 15.234375}, LE_X[3] = {0.0, 1.0, 0.0};
static const double LE_M = 15.0, LE_G = 9.81;

static void le_cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* W' of the reduced top at (R, W); R row-major */
static void le_wdot(const double R[9], const double W[3], double Wd[3]) {
  double L[3], c[3], r[3] = {R[6], R[7], R[8]}, g[3]; /* r = R^T e3 */
  for (int i = 0; i < 3; i++) L[i] = LE_JO[i] * W[i];
  le_cross(W, L, c);
  le_cross(LE_X, r, g);
  for (int i = 0; i < 3; i++) Wd[i] = (-c[i] - LE_M * LE_G * g[i]) / LE_JO[i];
}

static void le_rhs(const double y[12], double dy[12]) {
  const double *R = y, *W = y + 9;
  for (int i = 0; i < 3; i++) { /* R' = R W~ */
    dy[3 * i + 0] = R[3 * i + 1] * W[2] - R[3 * i + 2] * W[1];
    dy[3 * i + 1] = R[3 * i + 2] * W[0] - R[3 * i + 0] * W[2];
    dy[3 * i + 2] = R[3 * i + 0] * W[1] - R[3 * i + 1] * W[0];
  }
  le_wdot(R, W, dy + 9);
}

static void le_exact(const double R0[9], const double W0[3], double h, double R[9]) {
  double y[12], k[4][12], z[12];
  for (int i = 0; i < 9; i++) y[i] = R0[i];
  for (int i = 0; i < 3; i++) y[9 + i] = W0[i];
  const int n = 400;
  double s = h / n;
  for (int st = 0; st < n; st++) {
    le_rhs(y, k[0]);
    for (int i = 0; i < 12; i++) z[i] = y[i] + 0.5 * s * k[0][i];
    le_rhs(z, k[1]);
    for (int i = 0; i < 12; i++) z[i] = y[i] + 0.5 * s * k[1][i];
    le_rhs(z, k[2]);
    for (int i = 0; i < 12; i++) z[i] = y[i] + s * k[2][i];
    le_rhs(z, k[3]);
    for (int i = 0; i < 12; i++) y[i] += s / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
  }
  for (int i = 0; i < 9; i++) R[i] = y[i];
}

/* theta with exp(theta~) = A^T B (A, B rotations, small angle) */
static void le_log_rel(const double A[9], const double B[9], double th[3]) {
  double C[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      C[3 * i + j] = 0.0;
      for (int l = 0; l < 3; l++) C[3 * i + j] += A[3 * l + i] * B[3 * l + j];
    }
  double w[3] = {0.5 * (C[7] - C[5]), 0.5 * (C[2] - C[6]), 0.5 * (C[3] - C[1])};
  double sn = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]), cs = 0.5 * (C[0] + C[4] + C[8] - 1.0);
  double phi = atan2(sn, cs), f = sn > 0.0 ? phi / sn : 1.0;
  for (int i = 0; i < 3; i++) th[i] = f * w[i];
}

static void le_rodrigues(const double p[3], double R[9]) {
  double phi = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), a = sin(phi) / phi, b = (1 - cos(phi)) / (phi * phi);
  double K[9] = {0, -p[2], p[1], p[2], 0, -p[0], -p[1], p[0], 0}, K2[9];
  mul3(K, K, K2);
  for (int i = 0; i < 9; i++) R[i] = (i % 4 == 0 ? 1.0 : 0.0) + a * K[i] + b * K2[i];
}

/* l(h)/h^3 of one genalpha step with the given options */
static void le_step(lv_model *m, const double R0[9], const double W0[3], double h, const char *const *opt,
                    double out[3]) {
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", h), 0);
  for (int i = 0; opt[i]; i += 2) ck_assert_int_eq(lv_integrator_set_option(it, opt[i], opt[i + 1]), 0);
  ck_assert_int_eq(lv_integrator_set_option(it, "start", "a0"), 0);
  lv_newton_options no;
  lv_newton_options_default(&no);
  no.res_tol = 1e-16;
  no.atol = 1e-18;
  no.rtol = 1e-15;
  ck_assert_int_eq(lv_integrator_set_newton(it, &no), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, R0, W0), 0);
  ck_assert_int_eq(lv_integrator_step(it), 0);
  double Rx[9], te[3], tn[3];
  le_exact(R0, W0, h, Rx);
  le_log_rel(R0, Rx, te);
  le_log_rel(R0, lv_integrator_state(it)->q, tn);
  for (int i = 0; i < 3; i++) out[i] = (te[i] - tn[i]) / (h * h * h);
  lv_integrator_free(it);
}

/* fitted (c1, c2) and the relative residual of the fit */
static void le_fit(lv_model *m, const char *const *opt, double *c1, double *c2, double *res) {
  const double p0[3] = {0.3, -0.2, 0.5}, W0[3] = {1.0, 15.0, -2.0};
  double R0[9], Wd[3], Wdd[3], b[3], e1[3], e2[3], A[3];
  le_rodrigues(p0, R0);
  le_wdot(R0, W0, Wd);
  /* W'' = J_O^-1 (-W' x J_O W - W x J_O W' - m g0 X x (R^T e3)'), (R^T e3)' = -W x R^T e3 */
  double L[3], Ld[3], c[3], d[3], r[3] = {R0[6], R0[7], R0[8]}, rd[3], g[3];
  for (int i = 0; i < 3; i++) L[i] = LE_JO[i] * W0[i], Ld[i] = LE_JO[i] * Wd[i];
  le_cross(Wd, L, c);
  le_cross(W0, Ld, d);
  le_cross(W0, r, rd);
  for (int i = 0; i < 3; i++) rd[i] = -rd[i];
  le_cross(LE_X, rd, g);
  for (int i = 0; i < 3; i++) Wdd[i] = (-c[i] - d[i] - LE_M * LE_G * g[i]) / LE_JO[i];
  le_cross(W0, Wd, b); /* v^ v' = v x v' on SO(3) */
  le_step(m, R0, W0, 1e-3, opt, e1);
  le_step(m, R0, W0, 5e-4, opt, e2);
  for (int i = 0; i < 3; i++) A[i] = 2.0 * e2[i] - e1[i];
  /* least squares A ~ c1 Wdd + c2 b */
  double aa = 0, ab = 0, bb = 0, ya = 0, yb = 0;
  for (int i = 0; i < 3; i++) {
    aa += Wdd[i] * Wdd[i], ab += Wdd[i] * b[i], bb += b[i] * b[i];
    ya += A[i] * Wdd[i], yb += A[i] * b[i];
  }
  double det = aa * bb - ab * ab;
  *c1 = (ya * bb - yb * ab) / det;
  *c2 = (yb * aa - ya * ab) / det;
  double r2 = 0, n2 = 0;
  for (int i = 0; i < 3; i++) {
    double e = A[i] - *c1 * Wdd[i] - *c2 * b[i];
    r2 += e * e, n2 += A[i] * A[i];
  }
  *res = sqrt(r2 / n2);
}

static lv_model *le_model(void) {
  lv_model *m = NULL;
  const char *k[1] = {"formulation"}, *v[1] = {"so3"};
  lv_kv kv = {1, k, v};
  ck_assert_int_eq(lv_model_create("heavy-top", &kv, &m), 0);
  return m;
}

/* Claim 4: the exact discrete scheme, sigma in {0, 1, gamma/(3 beta)}, rho
 * in {0.65, 0.9, 1}: (c1, c2) = (C_q/6, (1/3 - sigma beta/gamma)/4) within
 * 2 % (absolute 5e-4 for the zero). */
START_TEST(test_local_error_exact) {
  const char *rhos[3] = {"0.65", "0.9", "1"}, *sig[3] = {"0", "1", "optimal"};
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) {
      lv_model *m = le_model();
      const char *opt[] = {"rho-inf", rhos[r], "sigma", sig[k], "corrector", "exact", NULL};
      double c1, c2, res;
      le_fit(m, opt, &c1, &c2, &res);
      lv_ga_params p = params(atof(rhos[r]));
      double s = k == 0 ? 0.0 : k == 1 ? 1.0 : p.sigma_opt;
      double w1 = p.cq / 6.0, w2 = 0.25 * (1.0 / 3.0 - s * p.beta / p.gam);
      if (verbose())
        printf("claim 4 rho %-4s sigma %-7s: c1 %.5f (C_q/6 %.5f)  c2 %+.5f (%+.5f)  fit residual %.1e\n", rhos[r],
               sig[k], c1, w1, c2, w2, res);
      ck_assert_msg(fabs(c1 / w1 - 1.0) < 0.02, "rho %s sigma %s: c1 %g vs %g", rhos[r], sig[k], c1, w1);
      ck_assert_msg(k == 2 ? fabs(c2) < 5e-4 : fabs(c2 / w2 - 1.0) < 0.02, "rho %s sigma %s: c2 %g vs %g", rhos[r],
                    sig[k], c2, w2);
      ck_assert(res < 1e-3);
      lv_model_free(m);
    }
}
END_TEST

/* Claim 5: the paper's corrector, Alg 1 (sigma 1) and Alg 2 (sigma_opt),
 * predictor factor f in {1, 1/2}: mu = 1/12 - c2 within 1 % of mu_impl. */
START_TEST(test_local_error_paper) {
  const char *rhos[3] = {"0.65", "0.9", "1"}, *sig[2] = {"1", "optimal"}, *fs[2] = {"1", "0.5"};
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 2; k++)
      for (int f = 0; f < 2; f++) {
        lv_model *m = le_model();
        const char *opt[] = {"rho-inf", rhos[r], "sigma", sig[k], "corrector", "paper", "predictor-factor", fs[f], NULL};
        double c1, c2, res;
        le_fit(m, opt, &c1, &c2, &res);
        lv_ga_params p = params(atof(rhos[r]));
        double s = k == 0 ? 1.0 : p.sigma_opt, mu = 1.0 / 12.0 - c2, want = lv_ga_mu_impl(&p, s, atof(fs[f]));
        if (verbose())
          printf("claim 5 rho %-4s Alg %d f %-3s: mu %.5f (mu_impl %.6f)  c1 %.5f (C_q/6 %.5f)  residual %.1e\n", rhos[r],
                 k + 1, fs[f], mu, want, c1, p.cq / 6.0, res);
        ck_assert_msg(fabs(mu / want - 1.0) < 0.01, "rho %s Alg %d f %s: mu %g vs %g", rhos[r], k + 1, fs[f], mu, want);
        ck_assert_msg(fabs(c1 / (p.cq / 6.0) - 1.0) < 0.02, "c1 %g", c1);
        lv_model_free(m);
      }
}
END_TEST

/* ---- seed 002 claim 2: the LGT composition of rotation vectors (A.7) ---- */
START_TEST(test_rotvec_compose) {
  /* spec 002 §1.4, the paper's (Exudyn's) unit tests: psi0, theta, psi, |psi| */
  const double pi = 3.14159265358979323846, r3 = pi / sqrt(3.0);
  const double tab[5][10] = {
      {1, 2, 3, 0.1, 0.2, 0.3, 1.1, 2.2, 3.3, 4.115823125451335},
      {r3, r3, r3, r3, r3, r3, 0, 0, 0, 0},
      {0.814723686393179, 0.905791937075619, 0.126986816293506, 0.913375856139019, 0.632359246225410,
       0.097540404999410, 1.723793103824437, 1.555433894116284, 0.047932757694710, 2.322312384891114},
      {0, 0, 0, 0.278498218867048, 0.546881519204984, 0.957506835434298, 0.278498218867048, 0.546881519204984,
       0.957506835434298, 1.137303826540416},
      {0.957166948242946, 0.485375648722841, 0.800280468888800, 0, 0, 0, 0.957166948242946, 0.485375648722841,
       0.800280468888800, 1.338733325224524},
  };
  for (int t = 0; t < 5; t++) {
    double psi[3];
    lv_ga_rotvec_compose(tab[t], tab[t] + 3, psi);
    double e = 0.0, n = sqrt(psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2]);
    for (int i = 0; i < 3; i++) e = fmax(e, fabs(psi[i] - tab[t][6 + i]));
    if (verbose()) printf("claim 2 <> test %d: |psi - psi_ref| %.1e, |psi| %.15f (ref %.15f)\n", t + 1, e, n, tab[t][9]);
    ck_assert_msg(e <= 2e-14 && fabs(n - tab[t][9]) <= 2e-14, "<> test %d: error %g, |psi| %.16g", t + 1, e, n);
  }
  /* R(psi0 <> theta) = R(psi0) exp(theta~) on random data, components up to 1.7 */
  unsigned long long x = 12345;
  double worst = 0.0;
  for (int k = 0; k < 2000; k++) {
    double a[3], b[3], c[3], Ra[9], Rb[9], Rc[9], RaRb[9];
    for (int i = 0; i < 6; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      double u = ((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0) * 1.7;
      if (i < 3)
        a[i] = u;
      else
        b[i - 3] = u;
    }
    lv_ga_rotvec_compose(a, b, c);
    lv_so3_exp(a, Ra);
    lv_so3_exp(b, Rb);
    lv_so3_exp(c, Rc);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        RaRb[3 * i + j] = 0.0;
        for (int l = 0; l < 3; l++) RaRb[3 * i + j] += Ra[3 * i + l] * Rb[3 * l + j];
      }
    for (int i = 0; i < 9; i++) worst = fmax(worst, fabs(Rc[i] - RaRb[i]));
  }
  if (verbose()) printf("claim 2 <>: max |R(psi0 <> theta) - R(psi0) exp(theta~)| = %.1e over 2000 pairs\n", worst);
  ck_assert_msg(worst < 1e-13, "R(psi0 <> theta) differs from R(psi0) exp(theta~) by %g", worst);
}
END_TEST

int main(void) {
  Suite *s = suite_create("theory");
  TCase *tc = tu_tcase(s, "genalpha", 0.1);
  tcase_add_test(tc, test_params);
  tcase_add_test(tc, test_rotvec_compose);
  tcase_add_test(tc, test_a2_amplification);
  tcase_add_test(tc, test_a3_a5_peak);
  tcase_add_test(tc, test_a4_cinf);
  tcase_add_test(tc, test_a6_second_row);
  tcase_add_test(tc, test_a7_index2);
  tcase_add_test(tc, test_a9_example2);
  tcase_add_test(tc, test_a9_example2_index2);
  tcase_add_test(tc, test_mu_impl);
  tcase_add_test(tc, test_pinv_series);
  TCase *le = tu_tcase(s, "local-error", 0.1);
  tcase_add_test(le, test_local_error_exact);
  tcase_add_test(le, test_local_error_paper);
  return tu_run_suite(s);
}
