/* Define your own model in 50 lines: a particle constrained to the
 * paraboloid z = (x^2 + y^2)/2 under gravity, integrated with RATTLE.  The
 * Hessian of V and the constraint Jacobian are left out: livens forms them
 * by finite differences.  Build against the installed library:
 *   cc own_model.c $(pkg-config --cflags --libs livens) */
#include <stdio.h>
#include <livens/livens.h>

static int mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  /* lv_sink_add refuses entries outside the block (and NaN/Inf): pass its
   * status on, so the run stops with the callback and entry named. */
  for (int i = 0; i < 3; i++) {
    int rc = lv_sink_add(M, i, i, 1.0);
    if (rc) return rc;
  }
  return 0;
}
static int V(const double *q, double *out, void *u) { (void)u; *out = 9.81 * q[2]; return 0; }
static int dV(const double *q, double *g, void *u) {
  (void)q, (void)u;
  g[0] = g[1] = 0.0, g[2] = 9.81;
  return 0;
}
static int g(const double *q, double *out, void *u) {
  (void)u;
  out[0] = q[2] - 0.5 * (q[0] * q[0] + q[1] * q[1]);
  return 0;
}
/* Rotation about e3 is a symmetry: J = e3 . (q x p). */
static int xi(int k, const double *q, double *out, void *u) {
  (void)k, (void)u;
  out[0] = -q[1], out[1] = q[0], out[2] = 0.0;
  return 0;
}

int main(void) {
  lv_space *sp = NULL;
  lv_model *m = NULL;
  lv_integrator *it = NULL;
  lv_diag *d = NULL;
  double q0[3] = {1.0, 0.0, 0.5}, v0[3] = {0.0, 2.0, 0.0};
  int rc = lv_space_new_rn(&sp, 3);
  if (!rc) rc = lv_model_new(&m, "paraboloid", sp, 1);
  if (!rc) rc = lv_model_set_mass(m, mass, 1);
  if (!rc) rc = lv_model_set_potential(m, V, dV, NULL);     /* Hessian by finite differences */
  if (!rc) rc = lv_model_set_constraints(m, g, NULL, NULL, NULL); /* G too */
  if (!rc) rc = lv_model_set_symmetries(m, 1, xi);
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  if (!rc) rc = lv_integrator_new(&it, m, "rattle", 0.005);
  if (!rc) rc = lv_diag_new_for(&d, it);
  lv_diag_writer w = LV_DIAG_WRITER_INIT(d, NULL);
  if (!rc) rc = lv_integrator_set_output(it, lv_diag_output, &w);
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
  if (!rc) rc = lv_integrator_run_until(it, 20.0);
  lv_diag_summary s;
  if (!rc) lv_diag_get_summary(d, &s);
  if (!rc) printf("paraboloid: max rel. energy error %.3e, |dJ3| %.3e, max|g| %.3e\n", s.max_rel_energy_error,
                  s.max_momentum_error, s.max_g);
  else fprintf(stderr, "own_model: %s\n", lv_strerror(rc));
  lv_diag_free(d);
  lv_integrator_free(it);
  if (m) lv_model_free(m); else lv_space_free(sp);
  return rc ? 1 : 0;
}
