/* The integrator as a state machine: the divergence guard (a blown-up run
 * is never reported ok) and what a refused init leaves behind. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

static lv_model *builtin(const char *name) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create(name, NULL, &m), 0);
  return m;
}

/* Issue 14 reproducer: genalpha on the gyro top at h = 1e-3 reaches
 * max|dE|/E0 = 1e5 and |Gv| = 3e4 by t = 0.5 and used to finish with status
 * 0.  The guard stops it; switched off, the old behaviour returns from the
 * papers' Newton start (guess=constant: status 0, which also shows the
 * guard is what catches it); from the default extrapolated start Newton
 * itself fails on the way (LV_ENEWTON), and only the guard names the
 * divergence. */
START_TEST(test_gyro_top_genalpha_diverges) {
  lv_model *m = builtin("gyro-top");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  int rc = lv_integrator_run_until(it, 0.5);
  char buf[512];
  ck_assert_int_eq(rc, LV_EDIVERGED);
  ck_assert_int_eq(lv_integrator_error_detail(it, buf, sizeof buf), LV_EDIVERGED);
  ck_assert_msg(strstr(buf, "diverged at t = ") && strstr(buf, "exceeds the bound"), "detail: %s", buf);
  double t_stop = lv_integrator_state(it)->t;
  ck_assert_msg(t_stop > 0.0 && t_stop < 0.5, "stopped at t = %g", t_stop);
  /* No state to continue from. */
  ck_assert_int_eq(lv_integrator_step(it), LV_EINPUT);
  lv_integrator_free(it);

  for (int constant = 0; constant < 2; constant++) {
    ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
    if (constant) ck_assert_int_eq(lv_integrator_set_option(it, "guess", "constant"), 0);
    ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 0, 0, 0), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    rc = lv_integrator_run_until(it, 0.5);
    if (constant)
      ck_assert_int_eq(rc, 0);
    else
      ck_assert_msg(rc != 0 && rc != LV_EDIVERGED, "unguarded, default start: status %d", rc);
    lv_integrator_free(it);
  }
  lv_model_free(m);
}
END_TEST

/* Issue 14 reproducer: RATTLE at h = 1 on four-particle with 30 halvings
 * converged to spurious roots (energy error 6.6e4) and returned 0. */
START_TEST(test_four_particle_rattle_halving_diverges) {
  lv_model *m = builtin("four-particle");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 1.0), 0);
  ck_assert_int_eq(lv_integrator_set_halving(it, 30), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 20.0), LV_EDIVERGED);
  char buf[512];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "energy error"), "detail: %s", buf);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* The bounds are settable: RATTLE's energy error on the pendulum (~1e-4 at
 * h = 0.01) trips a bound of 1e-9 but not the default; invalid bounds are
 * refused. */
START_TEST(test_guard_settable) {
  lv_model *m = builtin("pendulum3d");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, -1.0, 0), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, 0, NAN), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.5), 0);
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, 1e-9, 0), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.5), LV_EDIVERGED);
  char buf[512];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "relative energy error") && strstr(buf, "1e-09"), "detail: %s", buf);
  /* The same tight bound on the constraints: RATTLE keeps g and Gv at
   * round-off, so only the energy bound trips. */
  ck_assert_int_eq(lv_integrator_set_divergence_guard(it, 1, 0, 1e-9), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 0.5), 0);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

static int unit_mass(const double *q, lv_sink *s, void *user) {
  (void)q;
  (void)user;
  return lv_sink_add(s, 0, 0, 1.0);
}

/* A free particle at 1e308 moving at 1e308: one step overflows the
 * position to Inf while every callback stays finite. */
START_TEST(test_nonfinite_state) {
  lv_space *sp;
  ck_assert_int_eq(lv_space_new_rn(&sp, 1), 0);
  lv_model *m;
  ck_assert_int_eq(lv_model_new(&m, "free", sp, 0), 0);
  ck_assert_int_eq(lv_model_set_mass(m, unit_mass, 1), 0);
  double q0 = 1e308, v0 = 1e308;
  ck_assert_int_eq(lv_model_set_initial(m, &q0, &v0), 0);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "midpoint", 1.0), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  int rc = lv_integrator_step(it);
  char buf[512];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(rc == LV_EDIVERGED && strstr(buf, "NaN or Inf"), "status %d, detail: %s", rc, buf);
  ck_assert(isfinite(lv_integrator_state(it)->q[0]));
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* Issue 14: a re-init refused in check mode used to leave a half-overwritten
 * state (|q|^2 - 1 = -0.75... from q = (2, 0, 0)) that the next step
 * advanced with status 0.  Now steps are refused until an init succeeds. */
START_TEST(test_refused_reinit) {
  lv_model *m = builtin("pendulum3d");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(lv_integrator_step(it), 0);
  ck_assert_int_eq(lv_integrator_set_init_mode(it, LV_INIT_CHECK, 1e-10), 0);
  double q[3] = {2, 0, 0}, v[3] = {0, 0, 0};
  ck_assert_int_eq(lv_integrator_init(it, 0.0, q, v), LV_EINCONSISTENT);
  ck_assert_int_eq(lv_integrator_step(it), LV_EINPUT);
  char buf[512];
  ck_assert_int_eq(lv_integrator_error_detail(it, buf, sizeof buf), LV_EINPUT);
  ck_assert_msg(strstr(buf, "lv_integrator_init"), "detail: %s", buf);
  ck_assert_int_eq(lv_integrator_run_until(it, 1.0), LV_EINPUT);
  /* A successful init makes it usable again. */
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(lv_integrator_step(it), 0);
  const double *qs = lv_integrator_state(it)->q;
  double r2 = qs[0] * qs[0] + qs[1] * qs[1] + qs[2] * qs[2];
  ck_assert_msg(fabs(r2 - 1.0) < 1e-12, "|q|^2 - 1 = %g", r2 - 1.0);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* A 1-D oscillator with an applied force that can be made to return NaN
 * for t beyond a threshold (LV_ENONFINITE: a failure halving retries). */
typedef struct {
  double nan_after; /* NaN for t > nan_after */
  int nan_count;    /* NaNs left to return (negative: unlimited) */
} osc_user;

static int osc_V(const double *q, double *out, void *user) {
  (void)user;
  *out = 0.5 * q[0] * q[0];
  return 0;
}
static int osc_dV(const double *q, double *out, void *user) {
  (void)user;
  out[0] = q[0];
  return 0;
}
static int osc_force(double t, const double *q, const double *v, double *out, void *user) {
  osc_user *u = user;
  out[0] = -0.1 * v[0] + 0.0 * q[0];
  if (t > u->nan_after && u->nan_count != 0) {
    out[0] = NAN;
    if (u->nan_count > 0) u->nan_count--;
  }
  return 0;
}

static lv_model *oscillator(osc_user *u) {
  lv_space *sp;
  ck_assert_int_eq(lv_space_new_rn(&sp, 1), 0);
  lv_model *m;
  ck_assert_int_eq(lv_model_new(&m, "osc", sp, 0), 0);
  ck_assert_int_eq(lv_model_set_user(m, u, NULL), 0);
  ck_assert_int_eq(lv_model_set_mass(m, unit_mass, 1), 0);
  ck_assert_int_eq(lv_model_set_potential(m, osc_V, osc_dV, NULL), 0);
  ck_assert_int_eq(lv_model_set_force(m, osc_force, NULL, NULL), 0);
  double q0 = 1.0, v0 = 0.3;
  ck_assert_int_eq(lv_model_set_initial(m, &q0, &v0), 0);
  return m;
}

/* A spherical pendulum whose constraint Hessian can be made to write NaN
 * at (1, 1) or an entry outside its 3 x 3 block, and whose G a NaN at
 * (0, 2).  The Newton matrix and G's capture take the callbacks without a
 * finiteness wrapper per entry and evaluate them again through the checked
 * path when something went wrong: the step must still fail with the
 * callback and the entry named. */
static int sph_fault; /* 0: none, 1: NaN at (1, 1), 2: entry (3, 0); 3: G's (0, 2) NaN */
static int sph_mass(const double *q, lv_sink *s, void *user) {
  (void)q;
  (void)user;
  for (int i = 0; i < 3; i++) lv_sink_add(s, i, i, 1.0);
  return 0;
}
static int sph_V(const double *q, double *out, void *user) {
  (void)user;
  *out = 9.81 * q[2];
  return 0;
}
static int sph_dV(const double *q, double *out, void *user) {
  (void)q;
  (void)user;
  out[0] = out[1] = 0.0;
  out[2] = 9.81;
  return 0;
}
static int sph_g(const double *q, double *out, void *user) {
  (void)user;
  out[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - 1.0);
  return 0;
}
static int sph_G(const double *q, lv_sink *s, void *user) {
  (void)user;
  for (int j = 0; j < 3; j++) lv_sink_add(s, 0, j, j == 2 && sph_fault == 3 ? NAN : q[j]);
  return 0;
}
static int sph_H(const double *q, const double *gamma, lv_sink *s, void *user) {
  (void)q;
  (void)user;
  for (int i = 0; i < 3; i++) lv_sink_add(s, i, i, i == 1 && sph_fault == 1 ? NAN : gamma[0]);
  if (sph_fault == 2) lv_sink_add(s, 3, 0, 1.0); /* status ignored */
  return 0;
}
static int sph_Z(const double *q, const double *w, lv_sink *s, void *user) {
  (void)q;
  (void)user;
  for (int j = 0; j < 3; j++) lv_sink_add(s, 0, j, w[j]);
  return 0;
}

START_TEST(test_newton_block_fault_named) {
  static const char *const schemes[] = {"genalpha", "bliedf2"};
  lv_space *sp;
  ck_assert_int_eq(lv_space_new_rn(&sp, 3), 0);
  lv_model *m;
  ck_assert_int_eq(lv_model_new(&m, "spherical", sp, 1), 0);
  ck_assert_int_eq(lv_model_set_mass(m, sph_mass, 1), 0);
  ck_assert_int_eq(lv_model_set_potential(m, sph_V, sph_dV, NULL), 0);
  ck_assert_int_eq(lv_model_set_constraints(m, sph_g, sph_G, sph_H, sph_Z), 0);
  double q0[3] = {1, 0, 0}, v0[3] = {0, 1, 0};
  ck_assert_int_eq(lv_model_set_initial(m, q0, v0), 0);
  for (int sc = 0; sc < 2; sc++)
    for (int fault = 1; fault <= 3; fault++) {
      sph_fault = 0;
      lv_integrator *it;
      ck_assert_int_eq(lv_integrator_new(&it, m, schemes[sc], 0.01), 0);
      ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
      for (int i = 0; i < 3; i++) ck_assert_int_eq(lv_integrator_step(it), 0);
      sph_fault = fault;
      int rc = lv_integrator_step(it);
      char buf[512];
      lv_integrator_error_detail(it, buf, sizeof buf);
      if (fault == 1)
        ck_assert_msg(rc == LV_ENONFINITE && strstr(buf, "constraint Hessian") && strstr(buf, "(2, 2)") /* 1-based */,
                      "%s: status %s, detail: %s", schemes[sc], lv_status_name(rc), buf);
      else if (fault == 3)
        ck_assert_msg(rc == LV_ENONFINITE && strstr(buf, "model's G callback") && strstr(buf, "(1, 3)"),
                      "%s: status %s, detail: %s", schemes[sc], lv_status_name(rc), buf);
      else
        ck_assert_msg(rc != 0 && strstr(buf, "constraint Hessian") && strstr(buf, "(4, 1)"),
                      "%s: status %s, detail: %s", schemes[sc], lv_status_name(rc), buf);
      lv_integrator_free(it);
    }
  sph_fault = 0;
  lv_model_free(m);
}
END_TEST

/* A halved step whose second half fails fails as a whole: the state and
 * genalpha's history (a, v') must both go back, so that the next step is
 * bit-for-bit the first step of a fresh run.  Used to restore only the
 * state, leaving a and v' of t = 0.05. */
START_TEST(test_failed_halving_restores_history) {
  osc_user u = {0.075, -1};
  lv_model *m = oscillator(&u);
  lv_integrator *it, *ref;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 0.1), 0);
  ck_assert_int_eq(lv_integrator_set_halving(it, 1), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_step(it), LV_ENONFINITE);
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  ck_assert_int_eq(st.halvings, 1); /* the first half was taken, then undone */
  ck_assert_double_eq(lv_integrator_state(it)->t, 0.0);
  u.nan_count = 0;
  ck_assert_int_eq(lv_integrator_step(it), 0);
  ck_assert_int_eq(lv_integrator_step(it), 0);
  ck_assert_int_eq(lv_integrator_new(&ref, m, "genalpha", 0.1), 0);
  ck_assert_int_eq(lv_integrator_init(ref, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_step(ref), 0);
  ck_assert_int_eq(lv_integrator_step(ref), 0);
  const lv_state *a = lv_integrator_state(it), *b = lv_integrator_state(ref);
  ck_assert_msg(a->q[0] == b->q[0] && a->v[0] == b->v[0], "q %.17g vs %.17g, v %.17g vs %.17g", a->q[0], b->q[0],
                a->v[0], b->v[0]);
  lv_integrator_free(it);
  lv_integrator_free(ref);
  lv_model_free(m);
}
END_TEST

/* A step that succeeds only halved, then steps at the full size again, is
 * the run that took the two half steps and then full steps from the start
 * (genalpha: the new-h hook refreshes beta', gamma' and the matrix). */
START_TEST(test_halving_then_continuing) {
  osc_user u = {0.075, 1}; /* the full step's first evaluation at t = 0.1 fails once */
  lv_model *m = oscillator(&u);
  lv_integrator *it, *ref;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 0.1), 0);
  ck_assert_int_eq(lv_integrator_set_halving(it, 3), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(lv_integrator_step(it), 0);
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  ck_assert_int_eq(st.halvings, 1);
  ck_assert_int_eq(u.nan_count, 0);
  ck_assert_int_eq(lv_integrator_new(&ref, m, "genalpha", 0.05), 0);
  ck_assert_int_eq(lv_integrator_init(ref, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_step(ref), 0);
  ck_assert_int_eq(lv_integrator_step(ref), 0);
  ck_assert_int_eq(lv_integrator_set_step(ref, 0.1), 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(lv_integrator_step(ref), 0);
  const lv_state *a = lv_integrator_state(it), *b = lv_integrator_state(ref);
  ck_assert_double_eq_tol(a->t, 0.4, 1e-15);
  ck_assert_double_eq_tol(b->t, 0.4, 1e-15);
  ck_assert_msg(fabs(a->q[0] - b->q[0]) <= 1e-14 && fabs(a->v[0] - b->v[0]) <= 1e-14,
                "q %.17g vs %.17g, v %.17g vs %.17g", a->q[0], b->q[0], a->v[0], b->v[0]);
  lv_integrator_free(it);
  lv_integrator_free(ref);
  lv_model_free(m);
}
END_TEST

/* A step-size change is handled once, by the integrator: it invalidates the
 * factorisation that modified Newton keeps (stepper.newton_solver).  With
 * refactorisation on slow contraction switched off (reuse_rate 0.99), steps
 * at one h share one factorisation, and the first step at a new h must make
 * a new one.  (RATTLE uses the same path, but its polish refactorises every
 * step, so its counts show nothing.) */
START_TEST(test_new_step_refactorises) {
  const char *schemes[] = {"vi-a", "vi-s", "em", "em-g"};
  lv_model *m = builtin("four-particle");
  for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++) {
    lv_integrator *it;
    ck_assert_int_eq(lv_integrator_new(&it, m, schemes[s], 1e-3), 0);
    lv_newton_options o;
    lv_integrator_get_newton(it, &o);
    o.kind = LV_NEWTON_MODIFIED;
    o.reuse_rate = 0.99;
    ck_assert_int_eq(lv_integrator_set_newton(it, &o), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    lv_integrator_stats st;
    long f[4];
    for (int k = 0; k < 4; k++) {
      if (k == 3) ck_assert_int_eq(lv_integrator_set_step(it, 2e-3), 0);
      ck_assert_int_eq(lv_integrator_step(it), 0);
      lv_integrator_get_stats(it, &st);
      f[k] = st.factorizations;
    }
    ck_assert_msg(f[0] >= 1 && f[2] == f[1], "%s: factorisations %ld %ld %ld at one h", schemes[s], f[0], f[1], f[2]);
    ck_assert_msg(f[3] == f[2] + 1, "%s: %ld factorisations in the first step at a new h", schemes[s], f[3] - f[2]);
    lv_integrator_free(it);
  }
  lv_model_free(m);
}
END_TEST

/* BLieDF keeps a multistep history: halving is refused, not half done. */
/* A scheme written outside the library (lv_scheme.h) runs through
 * lv_integrator_new_with_type: Stormer-Verlet on a harmonic oscillator
 * q'' = -w^2 q, using only the public model API.  It must reach order 2
 * against cos(w t) and keep the energy bounded (symplectic), and the
 * integrator must refuse an incomplete table. */
typedef struct { double a; } verlet_priv; /* the acceleration at the current node */

static int vo_mass(const double *q, lv_sink *M, void *u) { (void)q, (void)u; return lv_sink_add(M, 0, 0, 2.0); }
static int vo_V(const double *q, double *V, void *u) { (void)u; *V = 0.5 * 8.0 * q[0] * q[0]; return 0; }
static int vo_dV(const double *q, double *g, void *u) { (void)u; g[0] = 8.0 * q[0]; return 0; }
static int vo_d2V(const double *q, lv_sink *H, void *u) { (void)q, (void)u; return lv_sink_add(H, 0, 0, 8.0); }

static int verlet_accel(const lv_stepper *st, double *a) {
  double g, m;
  lv_sink ms = lv_sink_dense(&m, 1, 1, 1);
  m = 0.0;
  int rc = lv_model_mass(st->model, st->state->q, &ms);
  if (!rc) rc = lv_model_grad_potential(st->model, st->state->q, &g);
  if (rc) return rc;
  *a = -g / m;
  return 0;
}
static int verlet_create(lv_stepper *st) {
  st->priv = calloc(1, sizeof(verlet_priv));
  return st->priv ? 0 : LV_ENOMEM;
}
static int verlet_init(lv_stepper *st) { return verlet_accel(st, &((verlet_priv *)st->priv)->a); }
static int verlet_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  verlet_priv *P = st->priv;
  lv_state *s = st->state;
  (void)ns;
  double vh = s->v[0] + 0.5 * h * P->a;
  s->q[0] += h * vh;
  int rc = verlet_accel(st, &P->a);
  if (rc) return rc;
  s->v[0] = vh + 0.5 * h * P->a;
  s->p[0] = 2.0 * s->v[0];
  return 0;
}
static void verlet_destroy(lv_stepper *st) { free(st->priv), st->priv = NULL; }

static const lv_scheme_type verlet = {
    .name = "verlet-test", .description = "Stormer-Verlet, written outside the library", .conserves = "symplectic",
    .order = 2, .flags = LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_UNCONSTRAINED,
    .options = NULL, .create = verlet_create, .init = verlet_init, .step = verlet_step, .destroy = verlet_destroy};

START_TEST(test_scheme_from_outside) {
  lv_space *sp = NULL;
  ck_assert_int_eq(lv_space_new_rn(&sp, 1), 0);
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_new(&m, "oscillator", sp, 0), 0);
  ck_assert_int_eq(lv_model_set_mass(m, vo_mass, 1), 0);
  ck_assert_int_eq(lv_model_set_potential(m, vo_V, vo_dV, vo_d2V), 0);
  const double q0 = 1.0, v0 = 0.0, w = 2.0; /* w^2 = k / m = 8 / 2 */
  ck_assert_int_eq(lv_model_set_initial(m, &q0, &v0), 0);
  double hs[3] = {0.02, 0.01, 0.005}, err[3];
  for (int k = 0; k < 3; k++) {
    lv_integrator *it = NULL;
    ck_assert_int_eq(lv_integrator_new_with_type(&it, m, &verlet, hs[k]), 0);
    ck_assert_ptr_eq(lv_integrator_scheme(it), &verlet);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    lv_diag *d = NULL;
    ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
    double emax = 0.0, E0 = 0.0;
    int n = (int)lround(5.0 / hs[k]);
    for (int i = 0; i < n; i++) {
      ck_assert_int_eq(lv_integrator_step(it), 0);
      lv_diag_point pt;
      ck_assert_int_eq(lv_diag_eval(d, lv_integrator_state(it), &pt), 0);
      if (i == 0) E0 = 4.0; /* V(q0) = 1/2 8 1^2, at rest */
      emax = fmax(emax, fabs(pt.energy - E0) / E0);
    }
    const lv_state *s = lv_integrator_state(it);
    ck_assert_double_eq_tol(s->t, 5.0, 1e-12);
    err[k] = fabs(s->q[0] - cos(w * s->t));
    /* Verlet's modified energy: |dE|/E = O((w h)^2), no drift */
    ck_assert_msg(emax < (w * hs[k]) * (w * hs[k]), "h = %g: energy error %g", hs[k], emax);
    lv_diag_free(d);
    lv_integrator_free(it);
  }
  double p = tu_fit_order(3, hs, err);
  ck_assert_msg(fabs(p - 2.0) < 0.05, "fitted order %g (errors %g %g %g)", p, err[0], err[1], err[2]);
  /* an incomplete table, and a model the scheme's flags exclude */
  lv_scheme_type broken = verlet;
  broken.step = NULL;
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new_with_type(&it, m, &broken, 0.01), LV_EINPUT);
  ck_assert_ptr_null(it);
  ck_assert_int_eq(lv_integrator_new_with_type(&it, m, NULL, 0.01), LV_EINPUT);
  lv_model *pend = builtin("pendulum3d");
  ck_assert_int_eq(lv_integrator_new_with_type(&it, pend, &verlet, 0.01), LV_ENOTIMPL);
  lv_model_free(pend);
  lv_model_free(m);
}
END_TEST

START_TEST(test_bliedf_refuses_halving) {
  lv_model *m = builtin("pendulum3d");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "bliedf2", 0.01), 0);
  ck_assert_int_eq(lv_integrator_set_halving(it, 2), LV_ENOTIMPL);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* lv_scheme_unmet_requirement names the reason lv_integrator_new refuses a
 * model, for every scheme and a model of each kind: Lie group with
 * configuration-dependent mass (heavy-top), applied forces (slider-crank),
 * driving constraints (kapitza), constrained on R^n (pendulum3d). */
START_TEST(test_unmet_requirement) {
  const char *models[] = {"heavy-top", "slider-crank", "kapitza", "pendulum3d", "four-particle"};
  const lv_scheme_type *const *reg = lv_scheme_registry();
  int refusals = 0;
  for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
    lv_model *m = builtin(models[k]);
    for (int i = 0; reg[i]; i++) {
      char why[256] = "x";
      unsigned u = lv_scheme_unmet_requirement(reg[i], m, why, sizeof why);
      lv_integrator *it = NULL;
      int rc = lv_integrator_new(&it, m, reg[i]->name, 0.01);
      ck_assert_msg((rc == LV_ENOTIMPL) == (u != 0), "%s on %s: rc %d, unmet %#x", reg[i]->name, models[k], rc, u);
      ck_assert_msg(u == 0 || (u & reg[i]->flags) || u == LV_SCHEME_DRIVEN, "%s: flag %#x", reg[i]->name, u);
      ck_assert_msg((u != 0) == (why[0] != '\0'), "%s on %s: '%s'", reg[i]->name, models[k], why);
      refusals += u != 0;
      lv_integrator_free(it);
    }
    lv_model_free(m);
  }
  ck_assert_int_gt(refusals, 10);
  lv_model *top = builtin("heavy-top"), *kap = builtin("kapitza");
  char why[16];
  ck_assert_uint_eq(lv_scheme_unmet_requirement(lv_scheme_find("vi-a"), top, why, sizeof why), LV_SCHEME_LINEAR_SPACE);
  ck_assert_str_eq(why, "it needs a cons"); /* truncated to the buffer, terminated */
  ck_assert_uint_eq(lv_scheme_unmet_requirement(lv_scheme_find("rattle"), kap, NULL, 0), LV_SCHEME_DRIVEN);
  ck_assert_uint_eq(lv_scheme_unmet_requirement(lv_scheme_find("genalpha"), kap, why, sizeof why), 0);
  ck_assert_str_eq(why, "");
  ck_assert_uint_eq(lv_scheme_unmet_requirement(NULL, kap, why, sizeof why), 0);
  lv_model_free(top);
  lv_model_free(kap);
}
END_TEST

int main(void) {
  Suite *s = suite_create("integrator");
  TCase *tc = tu_tcase(s, "core", 0.02);
  tcase_add_test(tc, test_scheme_from_outside);
  tcase_add_test(tc, test_gyro_top_genalpha_diverges);
  tcase_add_test(tc, test_four_particle_rattle_halving_diverges);
  tcase_add_test(tc, test_guard_settable);
  tcase_add_test(tc, test_nonfinite_state);
  tcase_add_test(tc, test_refused_reinit);
  tcase_add_test(tc, test_failed_halving_restores_history);
  tcase_add_test(tc, test_halving_then_continuing);
  tcase_add_test(tc, test_bliedf_refuses_halving);
  tcase_add_test(tc, test_unmet_requirement);
  tcase_add_test(tc, test_new_step_refactorises);
  tcase_add_test(tc, test_newton_block_fault_named);
  return tu_run_suite(s);
}
