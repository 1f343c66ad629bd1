/* sigma-modified Lie group generalized-alpha (issue 6): heavy top (spec
 * §5.1, index 3, rho-inf = 0.65, t = 1): error |x - x_ref| vs step size for
 * sigma = 0, 1, gamma/(3 beta), exact and paper correctors; Newton
 * iterations per step; per-step cost of sigma = 1 vs sigma = 0 in the same
 * run (interleaved repetitions, best of 5).  Usage: bench_sigma [reps] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "livens/livens.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* returns 0 and x(T), iterations/step, seconds/step */
static int run(double h, double T, const char *sigma, const char *corr, const char *f, double x[3], double *its,
               double *sps) {
  lv_model *m = NULL;
  if (lv_model_create("heavy-top", NULL, &m)) return -1;
  lv_integrator *it = NULL;
  int rc = lv_integrator_new(&it, m, "genalpha", h);
  const char *o[] = {"rho-inf", "0.65", "sigma", sigma, "corrector", corr, "predictor-factor", f, NULL};
  for (int i = 0; !rc && o[i]; i += 2) rc = lv_integrator_set_option(it, o[i], o[i + 1]);
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
  int N = (int)(T / h + 0.5);
  double t0 = now();
  for (int n = 0; n < N && !rc; n++) rc = lv_integrator_step(it);
  double t1 = now();
  if (!rc) {
    memcpy(x, lv_integrator_state(it)->q, 3 * sizeof(double));
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    *its = (double)st.newton_iterations / (double)st.steps;
    *sps = (t1 - t0) / N;
  }
  lv_integrator_free(it);
  lv_model_free(m);
  return rc;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  double xr[3], its, sps;
  if (run(2.5e-5, 1.0, "optimal", "exact", "1", xr, &its, &sps)) return 1;
  const double H[5] = {2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4};
  const char *var[][3] = {{"0", "exact", "1"},   {"1", "exact", "1"},   {"optimal", "exact", "1"},
                          {"1", "paper", "1"},   {"optimal", "paper", "1"}, {"1", "paper", "0.5"},
                          {"optimal", "paper", "0.5"}};
  printf("heavy top, index 3, rho-inf 0.65, |x(1) - x_ref(1)| [m], reference exact sigma_opt h = 2.5e-5\n");
  printf("%-9s %-6s %-4s", "sigma", "corr", "f");
  for (int k = 0; k < 5; k++) printf(" %10g", H[k]);
  printf("  order  it/step(1e-3)\n");
  for (size_t v = 0; v < sizeof var / sizeof var[0]; v++) {
    double e[5], it1 = 0, sl = 0, sx = 0, sxx = 0, sxy = 0;
    int ok = 0;
    printf("%-9s %-6s %-4s", var[v][0], var[v][1], var[v][2]);
    for (int k = 0; k < 5; k++) {
      double x[3];
      if (run(H[k], 1.0, var[v][0], var[v][1], var[v][2], x, &its, &sps)) {
        printf(" %10s", "fail");
        continue;
      }
      e[k] = sqrt(pow(x[0] - xr[0], 2) + pow(x[1] - xr[1], 2) + pow(x[2] - xr[2], 2));
      if (k == 1) it1 = its;
      printf(" %10.4e", e[k]);
      double lx = log(H[k]), ly = log(e[k]);
      sx += lx, sl += ly, sxx += lx * lx, sxy += lx * ly, ok++;
    }
    double p = ok > 1 ? (ok * sxy - sx * sl) / (ok * sxx - sx * sx) : NAN;
    printf("  %5.3f  %.2f\n", p, it1);
  }
  /* per-step cost, h = 1e-4 over 1 s, interleaved, best of reps */
  const char *cv[][3] = {{"0", "exact", "1"}, {"1", "exact", "1"}, {"1", "paper", "1"}, {"optimal", "exact", "1"}};
  double best[4] = {INFINITY, INFINITY, INFINITY, INFINITY}, bits[4] = {0};
  for (int r = 0; r < reps; r++)
    for (int v = 0; v < 4; v++) {
      double x[3];
      if (run(1e-4, 1.0, cv[v][0], cv[v][1], cv[v][2], x, &its, &sps) == 0 && sps < best[v]) best[v] = sps, bits[v] = its;
    }
  printf("\nper-step cost, h = 1e-4, 10000 steps, best of %d:\n", reps);
  for (int v = 0; v < 4; v++)
    printf("  sigma=%-8s corrector=%-5s %.3f us/step  %.2f it/step  ratio to sigma=0: %.3f\n", cv[v][0], cv[v][1],
           1e6 * best[v], bits[v], best[v] / best[0]);
  return 0;
}
