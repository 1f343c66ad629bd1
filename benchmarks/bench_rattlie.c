/* RATTLie over long runs (issue 20): the heavy top (default parameters,
 * Omega0 = (0, 150, -4.61538)) in its three formulations, N steps of
 * h = 1e-3.  One line per formulation and scheme: max |E - E0|/E0 over the
 * run and over its last tenth (bounded: the same), the least-squares drift
 * of (E - E0)/E0 per unit time, the vertical and figure-axis momentum maps'
 * largest relative error, Newton iterations per step and CPU seconds per
 * step.  genalpha (rho-inf 0.9) is the non-symplectic contrast.
 * Usage: bench_rattlie [N (default 1000000)] [scheme ...] (default rattlie). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "benchutil.h"

static int bench(const char *form, const char *scheme, long N, double h) {
  const char *keys[] = {"formulation"}, *vals[] = {form};
  lv_kv kv = {1, keys, vals};
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  lv_diag *dg = NULL;
  int rc = lv_model_create("heavy-top", &kv, &m);
  if (!rc) rc = lv_integrator_new(&it, m, scheme, h);
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
  if (!rc) rc = lv_diag_new_for(&dg, it);
  if (rc) {
    fprintf(stderr, "bench_rattlie: %s on %s: %s\n", scheme, form, lv_strerror(rc));
    lv_integrator_free(it);
    lv_model_free(m);
    return rc;
  }
  const lv_state *s = lv_integrator_state(it);
  int nv = lv_model_nv(m), fig = nv == 3 ? 1 : 4;
  double p[6];
  lv_diag_point pt;
  rc = lv_diag_eval(dg, s, &pt);
  if (!rc) rc = lv_model_mass_apply(m, s->q, s->v, p);
  double E0 = pt.energy, J0 = pt.momentum[0], F0 = p[fig];
  double emax = 0, elast = 0, dJ = 0, dF = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  double c0 = bu_cpu();
  long n = 0;
  for (n = 1; n <= N && !rc; n++) {
    rc = lv_integrator_step(it);
    if (!rc) rc = lv_diag_eval(dg, s, &pt);
    if (!rc) rc = lv_model_mass_apply(m, s->q, s->v, p);
    if (rc) break;
    double e = (pt.energy - E0) / fabs(E0), t = s->t;
    sx += t, sy += e, sxx += t * t, sxy += t * e;
    emax = fmax(emax, fabs(e));
    if (n > N - N / 10) elast = fmax(elast, fabs(e));
    dJ = fmax(dJ, fabs(pt.momentum[0] - J0) / fabs(J0));
    dF = fmax(dF, fabs(p[fig] - F0) / fabs(F0));
  }
  double c1 = bu_cpu();
  if (rc) {
    char buf[300];
    lv_integrator_error_detail(it, buf, sizeof buf);
    fprintf(stderr, "bench_rattlie: %s on %s failed at step %ld: %s\n", scheme, form, n, buf);
  } else {
    double slope = (N * sxy - sx * sy) / (N * sxx - sx * sx);
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    printf("heavy-top %-5s %-8s h=%g N=%ld: max|dE|/E0 %.3e (last tenth %.3e), drift %.2e /unit time, "
           "vertical dJ/J %.2e, figure-axis %.2e, Newton %.2f/step, %.2e CPU s/step\n",
           form, scheme, h, N, emax, elast, slope, dJ, dF, (double)st.newton_iterations / (double)N,
           (c1 - c0) / (double)N);
    fflush(stdout);
  }
  lv_diag_free(dg);
  lv_integrator_free(it);
  lv_model_free(m);
  return rc;
}

int main(int argc, char **argv) {
  long N = 1000000;
  if (argc > 1) {
    char *end = NULL;
    N = strtol(argv[1], &end, 10);
    if (!end || *end || N < 10 || N > 100000000) {
      fprintf(stderr, "bench_rattlie: N must be an integer in [10, 1e8], got '%s'\n", argv[1]);
      return 2;
    }
  }
  lv_blas_set_threads(1);
  const char *forms[3] = {"so3", "r3so3", "se3"};
  int bad = 0;
  for (int f = 0; f < 3; f++) {
    if (argc <= 2)
      bad |= bench(forms[f], "rattlie", N, 1e-3) != 0;
    for (int a = 2; a < argc; a++) bad |= bench(forms[f], argv[a], N, 1e-3) != 0;
  }
  return bad;
}
