/* Forces of the multibody layer (issue 15; src/mbs/forces.c): torsional
 * springs and dampers about revolute axes, applied forces and torques as
 * functions of time.
 *
 * What is asserted:
 * - exact derivatives in every formulation: the library's checker
 *   (lv_model_check_derivatives, what `livens check` runs) finds dV, d2V
 *   (torsional springs), df/dq and df/dv (torsional dampers, forces at
 *   body points, torques; callbacks and built-in time functions) equal to
 *   central finite differences at generic configurations, body-body and
 *   body-ground, full and planar (lamina) director bodies;
 * - a torsional pendulum (a body on a revolute joint at its centre of
 *   mass, torsional spring k, no gravity) oscillates with the period
 *   2 pi sqrt(J/k) to 1e-4 relative, under EM in directors (energy
 *   conserved to 1e-12 relative) and under genalpha in r3so3; with a
 *   torsional damper it follows the damped oscillator's closed form to
 *   1e-5 (genalpha, directors and r3so3);
 * - a constant torque tau spins up a free rotor with angular acceleration
 *   tau/J (angular velocity and angle at t = 1), under genalpha in
 *   directors (to 1e-6 relative) and r3so3 (1e-12), and a constant force
 *   at the centre of mass accelerates it by F/m;
 * - bushings (per-axis spring-dampers, lv_mbs_add_bushing): exact dV,
 *   d2V, df/dq, df/dv as above, body-ground, body-body, body-particle;
 *   the rotor of models/rotor.c rebuilt with them in r3so3 gives the
 *   hand-written model's motion (check_sigma test_rotor_forms);
 * - the built-in time functions (constant, sine, step, ramp) and the
 *   refusals of bad loads and torsion elements;
 * - the heavy top's spin momentum in directors: RATTLE and VI-A keep it
 *   to round-off (<= 1e-12), so the momentum map and its generator are
 *   right; EM with the paper's midpoint constraint gradients
 *   (momentum=midpoint) has a consistent O(h^2) error (fitted slope
 *   2 +- 0.1 over h = 2e-3, 1e-3, 5e-4) while it keeps the vertical
 *   momentum to 1e-12: its momentum proof needs D^G g . xi(z) = 0 at the
 *   midpoint z ((85c)), and the orthonormality rows are only equivariant
 *   under the body rotation, so G(z) xi(z) = O(g(z)) = O(h^2) there; with
 *   momentum=projected EM keeps both to 1e-12 at every h (doc/mbs.md). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

static const double O3[3] = {0, 0, 0};
static const double PI = 3.14159265358979323846;

/* R b */
static void rmul(const double R[9], const double b[3], double c[3]) {
  for (int i = 0; i < 3; i++) c[i] = R[3 * i] * b[0] + R[3 * i + 1] * b[1] + R[3 * i + 2] * b[2];
}
static void rtmul(const double R[9], const double b[3], double c[3]) {
  for (int i = 0; i < 3; i++) c[i] = R[i] * b[0] + R[3 + i] * b[1] + R[6 + i] * b[2];
}

static int wobble(double t, void *user, double out[3]) {
  const double *a = user;
  out[0] = a[0] * cos(t + 0.3);
  out[1] = a[1] + 0.5 * t;
  out[2] = a[2] * sin(2.0 * t + 1.0);
  return 0;
}

/* ================================================== derivative checks */

/* Two bodies (a full inertia and a lamina, so both director kinds) on
 * revolute joints, torsional springs and dampers body-body and
 * body-ground, forces at body points and on a particle, torques from a
 * callback and from every built-in function. */
START_TEST(test_derivatives) {
  const char *form = lv_mbs_formulations()[_i];
  lv_mbs *s;
  ck_assert_int_eq(lv_mbs_new(&s, form), 0);
  double J1[9] = {2.0, 0.1, -0.2, 0.1, 2.5, 0.15, -0.2, 0.15, 3.0}, J2[3] = {1.0, 2.5, 1.5};
  double R1[9], R2[9], psi1[3] = {0.4, -0.2, 0.3}, psi2[3] = {-1.1, 0.55, 0.3};
  lv_so3_exp(psi1, R1);
  lv_so3_exp(psi2, R2);
  double x1[3] = {0.3, -0.2, 0.5}, x2[3] = {1.1, 0.4, -0.3}, v0[3] = {0.1, -0.2, 0.3}, w0[3] = {1.0, 2.0, -0.5};
  int b1, b2, p;
  ck_assert_int_eq(lv_mbs_add_body(s, 2.0, J1, NULL, x1, R1, v0, w0, LV_MBS_BODY_FRAME, &b1), 0);
  ck_assert_int_eq(lv_mbs_add_body(s, 3.0, NULL, J2, x2, R2, v0, w0, LV_MBS_BODY_FRAME, &b2), 0);
  ck_assert_int_eq(lv_mbs_add_particle(s, 0.7, x2, v0, &p), 0);
  /* axes: Aa on b1, Ab on b2 the same space direction initially */
  double Aa[3] = {0.3, 1.0, -0.2}, Ab[3], Ag[3], w[3], Xa[3] = {0.2, -0.3, 0.4}, Xb[3] = {-0.5, 0.1, 0.25};
  rmul(R1, Aa, w);
  rtmul(R2, w, Ab);
  memcpy(Ag, w, sizeof Ag);
  ck_assert_msg(lv_mbs_add_revolute(s, b1, Xa, Aa, b2, Xb, Ab) == 0, "%s", lv_mbs_error(s));
  ck_assert_msg(lv_mbs_add_torsional_spring(s, b1, Aa, b2, Ab, 7.0, 0.4) == 0, "%s", lv_mbs_error(s));
  ck_assert_msg(lv_mbs_add_torsional_spring(s, LV_MBS_GROUND, Ag, b1, Aa, 3.0, -1.0) == 0, "%s", lv_mbs_error(s));
  ck_assert_msg(lv_mbs_add_torsional_damper(s, b2, Ab, b1, Aa, 2.0) == 0, "%s", lv_mbs_error(s));
  ck_assert_msg(lv_mbs_add_torsional_damper(s, b2, Ab, LV_MBS_GROUND, Ag, 1.5) == 0, "%s", lv_mbs_error(s));
  double amp[3] = {1.0, -2.0, 0.7};
  ck_assert_int_eq(lv_mbs_add_force(s, b1, Xa, wobble, amp), 0);
  double Xo[3] = {0.1, 0.2, 0.6}; /* off the lamina's plane too */
  ck_assert_int_eq(lv_mbs_add_force(s, b2, Xo, wobble, amp), 0);
  ck_assert_int_eq(lv_mbs_add_force(s, p, O3, wobble, amp), 0);
  ck_assert_int_eq(lv_mbs_add_torque(s, b1, wobble, amp), 0);
  lv_mbs_profile pr = {LV_MBS_SINE, {0.5, 1.5, -2.0}, 0.7, 0.9, 0, 0};
  ck_assert_int_eq(lv_mbs_add_torque_profile(s, b2, &pr), 0);
  pr.kind = LV_MBS_RAMP, pr.t0 = -1.0, pr.t1 = 2.0;
  ck_assert_int_eq(lv_mbs_add_force_profile(s, b2, Xb, &pr), 0);
  /* bushings body-body (off the lamina's plane) and body-particle */
  const double kb[3] = {40.0, 0.0, 25.0}, cb[3] = {1.5, 3.0, 0.0};
  ck_assert_msg(lv_mbs_add_bushing(s, b1, Xa, b2, Xo, kb, cb) == 0, "%s", lv_mbs_error(s));
  ck_assert_msg(lv_mbs_add_bushing(s, p, O3, b2, Xb, cb, kb) == 0, "%s", lv_mbs_error(s));
  lv_model *m;
  ck_assert_msg(lv_mbs_build(s, "forces", &m) == 0, "%s", lv_mbs_error(s));
  lv_mbs_free(s);
  ck_assert(lv_model_has_force(m));
  unsigned long long st = tu_seed(4321 + (unsigned long long)_i);
  double q[96], v[96];
  for (int rep = 0; rep < 3; rep++) {
    tu_generic_state(m, &st, q, v);
    lv_check_result res;
    int rc = lv_model_check_derivatives(m, q, v, 1e-6, NULL, &res);
    fprintf(stderr, "forces, %s: dV %.2e, d2V %.2e, df/dq %.2e, df/dv %.2e\n", form, res.err_dV, res.err_d2V,
            res.err_df_dq, res.err_df_dv);
    ck_assert_msg(rc == 0 && res.failed == 0, "%s: dV %.2e, d2V %.2e, G %.2e, H %.2e, Z %.2e, df/dq %.2e, df/dv %.2e (rc %d)",
                  form, res.err_dV, res.err_d2V, res.err_G, res.err_hessian, res.err_curvature, res.err_df_dq,
                  res.err_df_dv, rc);
    ck_assert(res.err_dV >= 0 && res.err_d2V >= 0 && res.err_df_dq >= 0 && res.err_df_dv >= 0);
  }
  lv_model_free(m);
}
END_TEST

/* One element at a time, so a wrong term cannot hide behind another's
 * magnitude: torsional spring alone, damper alone, torque alone, a bushing
 * (lv_mbs_add_bushing: per-axis springs and dampers) alone. */
START_TEST(test_derivatives_single) {
  int nf = 0;
  while (lv_mbs_formulations()[nf]) nf++;
  const char *form = lv_mbs_formulations()[_i % nf];
  int what = _i / nf;
  lv_mbs *s;
  ck_assert_int_eq(lv_mbs_new(&s, form), 0);
  double J1[9] = {2.0, 0.1, -0.2, 0.1, 2.5, 0.15, -0.2, 0.15, 3.0}, R1[9], psi1[3] = {0.4, -0.2, 0.3};
  lv_so3_exp(psi1, R1);
  double x1[3] = {0.3, -0.2, 0.5}, Aa[3] = {0.3, 1.0, -0.2}, Ag[3];
  int b1;
  ck_assert_int_eq(lv_mbs_add_body(s, 2.0, J1, NULL, x1, R1, NULL, NULL, LV_MBS_BODY_FRAME, &b1), 0);
  rmul(R1, Aa, Ag);
  ck_assert_int_eq(lv_mbs_add_revolute(s, LV_MBS_GROUND, x1, Ag, b1, O3, Aa), 0);
  double amp[3] = {1.0, -2.0, 0.7};
  if (what == 0) ck_assert_int_eq(lv_mbs_add_torsional_spring(s, LV_MBS_GROUND, Ag, b1, Aa, 5.0, 0.3), 0);
  if (what == 1) ck_assert_int_eq(lv_mbs_add_torsional_damper(s, LV_MBS_GROUND, Ag, b1, Aa, 5.0), 0);
  if (what == 2) ck_assert_int_eq(lv_mbs_add_torque(s, b1, wobble, amp), 0);
  const double kb[3] = {30.0, 10.0, 0.0}, cb[3] = {0.0, 2.0, 4.0}, Xk[3] = {0.2, -0.4, 0.3};
  if (what == 3) ck_assert_int_eq(lv_mbs_add_bushing(s, b1, Xk, LV_MBS_GROUND, x1, kb, cb), 0);
  lv_model *m;
  ck_assert_int_eq(lv_mbs_build(s, "single", &m), 0);
  lv_mbs_free(s);
  unsigned long long st = tu_seed(99 + (unsigned long long)_i);
  double q[32], v[32];
  tu_generic_state(m, &st, q, v);
  lv_check_result res;
  int rc = lv_model_check_derivatives(m, q, v, 1e-7, NULL, &res);
  ck_assert_msg(rc == 0 && res.failed == 0, "%s element %d: dV %.2e, d2V %.2e, df/dq %.2e, df/dv %.2e", form, what,
                res.err_dV, res.err_d2V, res.err_df_dq, res.err_df_dv);
  if (what == 0 || what == 3) ck_assert(res.err_d2V >= 0);
  if (what != 0) ck_assert(res.err_df_dq >= 0);
  lv_model_free(m);
}
END_TEST

/* ================================================ torsional pendulum */

/* A body with principal moments (2, 2.5, J3) on a revolute joint to the
 * ground about the space z axis through its centre of mass, spring k with
 * rest angle theta0, started at theta = 0 at rest: theta(t) = theta0 (1 -
 * cos(w t)), w = sqrt(k / J3). */
static lv_model *torsional_pendulum(const char *form, double J3, double k, double theta0) {
  lv_mbs *s;
  ck_assert_int_eq(lv_mbs_new(&s, form), 0);
  double Jd[3] = {2.0, 2.5, J3}, ez[3] = {0, 0, 1};
  int b;
  ck_assert_int_eq(lv_mbs_add_body(s, 1.5, NULL, Jd, O3, NULL, NULL, NULL, LV_MBS_BODY_FRAME, &b), 0);
  ck_assert_int_eq(lv_mbs_add_revolute(s, LV_MBS_GROUND, O3, ez, b, O3, ez), 0);
  ck_assert_int_eq(lv_mbs_add_torsional_spring(s, LV_MBS_GROUND, ez, b, ez, k, theta0), 0);
  lv_model *m;
  ck_assert_int_eq(lv_mbs_build(s, "torsional-pendulum", &m), 0);
  lv_mbs_free(s);
  return m;
}

/* Period from the crossings of theta0 (upward and downward, interpolated
 * linearly between steps) over n steps of h; max relative energy error. */
static void measure_period(lv_model *m, const char *scheme, double h, long n, double theta0, double *period,
                           double *maxE) {
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, scheme, h), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  lv_diag *d;
  ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
  lv_diag_point pt;
  ck_assert_int_eq(lv_diag_eval(d, lv_integrator_state(it), &pt), 0);
  double E0 = pt.energy, R[9], prev = -theta0, tprev = 0.0, first = -1, last = -1;
  int ncross = 0;
  *maxE = 0;
  for (long i = 0; i < n; i++) {
    ck_assert_int_eq(lv_integrator_step(it), 0);
    const lv_state *x = lv_integrator_state(it);
    ck_assert_int_eq(lv_mbs_model_pose(m, 1, x->q, NULL, R), 0);
    double u = atan2(R[3], R[0]) - theta0;
    if ((prev < 0) != (u < 0)) {
      double tc = tprev + (x->t - tprev) * prev / (prev - u);
      if (first < 0) first = tc;
      last = tc;
      ncross++;
    }
    prev = u, tprev = x->t;
    ck_assert_int_eq(lv_diag_eval(d, x, &pt), 0);
    *maxE = fmax(*maxE, fabs(pt.energy - E0) / fabs(E0));
  }
  ck_assert_int_ge(ncross, 3);
  *period = 2.0 * (last - first) / (ncross - 1);
  lv_diag_free(d);
  lv_integrator_free(it);
}

START_TEST(test_torsional_pendulum) {
  const char *forms[2] = {"directors", "r3so3"}, *schemes[2] = {"em", "genalpha"};
  double J3 = 3.0, k = 4.0, theta0 = 0.8, T = 2.0 * PI * sqrt(J3 / k), h = T / 2000.0, period, maxE;
  lv_model *m = torsional_pendulum(forms[_i], J3, k, theta0);
  measure_period(m, schemes[_i], h, 6000, theta0, &period, &maxE);
  fprintf(stderr, "torsional pendulum %s %s, h = T/2000, 3 periods: period %.10f vs 2 pi sqrt(J/k) = %.10f "
          "(rel %.2e), max |dE|/E %.2e\n", forms[_i], schemes[_i], period, T, fabs(period - T) / T, maxE);
  ck_assert_msg(fabs(period - T) <= 1e-4 * T, "period %.10f, expected %.10f", period, T);
  if (_i == 0) ck_assert_msg(maxE <= 1e-12, "EM energy %.3e", maxE);
  lv_model_free(m);
}
END_TEST

/* The torsional pendulum with a torsional damper c as well: J u'' + c u' +
 * k u = 0, u = theta - theta0, u(0) = -theta0, u'(0) = 0, so
 * u(t) = -theta0 exp(-s t) (cos(wd t) + s/wd sin(wd t)), s = c/(2J),
 * wd = sqrt(k/J - s^2); genalpha at h = 1e-3 against it at t = 2, in
 * directors and r3so3. */
START_TEST(test_damped_torsional_pendulum) {
  const char *form = _i == 0 ? "directors" : "r3so3";
  double J3 = 3.0, k = 4.0, c = 0.9, theta0 = 0.8, T = 2.0;
  lv_mbs *s;
  ck_assert_int_eq(lv_mbs_new(&s, form), 0);
  double Jd[3] = {2.0, 2.5, J3}, ez[3] = {0, 0, 1};
  int b;
  ck_assert_int_eq(lv_mbs_add_body(s, 1.5, NULL, Jd, O3, NULL, NULL, NULL, LV_MBS_BODY_FRAME, &b), 0);
  ck_assert_int_eq(lv_mbs_add_revolute(s, LV_MBS_GROUND, O3, ez, b, O3, ez), 0);
  ck_assert_int_eq(lv_mbs_add_torsional_spring(s, LV_MBS_GROUND, ez, b, ez, k, theta0), 0);
  ck_assert_int_eq(lv_mbs_add_torsional_damper(s, LV_MBS_GROUND, ez, b, ez, c), 0);
  lv_model *m;
  ck_assert_int_eq(lv_mbs_build(s, "damped", &m), 0);
  lv_mbs_free(s);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, T), 0);
  double R[9];
  ck_assert_int_eq(lv_mbs_model_pose(m, b, lv_integrator_state(it)->q, NULL, R), 0);
  double sg = c / (2.0 * J3), wd = sqrt(k / J3 - sg * sg);
  double exact = theta0 - theta0 * exp(-sg * T) * (cos(wd * T) + sg / wd * sin(wd * T)), th = atan2(R[3], R[0]);
  fprintf(stderr, "damped torsional pendulum %s genalpha h=1e-3, t=2: theta %.10f, exact %.10f (diff %.2e)\n", form, th,
          exact, fabs(th - exact));
  ck_assert_msg(fabs(th - exact) <= 1e-5, "theta %.10f, exact %.10f", th, exact);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* ====================================================== spin-up rotor */

static int const_torque(double t, void *user, double out[3]) {
  (void)t;
  memcpy(out, user, 3 * sizeof(double));
  return 0;
}

/* A free body (no joint, no gravity), principal moments (2, 2.5, J3)
 * with body axis 3 along space z, a constant torque tau about z (through
 * the callback in directors, the built-in constant in r3so3) and a
 * constant force F at the centre of mass: omega_z(1) = tau/J3, the angle
 * 1/2 tau/J3, the centre of mass at 1/2 F/m. */
START_TEST(test_spin_up) {
  const char *form = _i == 0 ? "directors" : "r3so3";
  double J3 = 3.0, tau[3] = {0, 0, 1.2}, F[3] = {0.3, -0.6, 0.9}, mass = 1.5;
  lv_mbs *s;
  ck_assert_int_eq(lv_mbs_new(&s, form), 0);
  double Jd[3] = {2.0, 2.5, J3};
  int b;
  ck_assert_int_eq(lv_mbs_add_body(s, mass, NULL, Jd, O3, NULL, NULL, NULL, LV_MBS_BODY_FRAME, &b), 0);
  lv_mbs_profile pc = {LV_MBS_CONSTANT, {0, 0, 1.2}, 0, 0, 0, 0}, pf = {LV_MBS_CONSTANT, {0.3, -0.6, 0.9}, 0, 0, 0, 0};
  if (_i == 0)
    ck_assert_int_eq(lv_mbs_add_torque(s, b, const_torque, tau), 0);
  else
    ck_assert_int_eq(lv_mbs_add_torque_profile(s, b, &pc), 0);
  ck_assert_int_eq(lv_mbs_add_force_profile(s, b, O3, &pf), 0);
  lv_model *m;
  ck_assert_int_eq(lv_mbs_build(s, "rotor", &m), 0);
  lv_mbs_free(s);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_run_until(it, 1.0), 0);
  const lv_state *x = lv_integrator_state(it);
  double R[9], xc[3], wz;
  ck_assert_int_eq(lv_mbs_model_pose(m, b, x->q, xc, R), 0);
  if (_i == 0) /* omega_z = d1' . d2 */
    wz = x->v[3] * x->q[6] + x->v[4] * x->q[7] + x->v[5] * x->q[8];
  else
    wz = x->v[5];
  double ang = atan2(R[3], R[0]), a = tau[2] / J3;
  fprintf(stderr, "spin-up %s genalpha h=1e-3: omega(1) %.12f vs tau/J %.12f (rel %.2e), angle %.12f vs %.12f "
          "(rel %.2e), x %.3e off\n", form, wz, a, fabs(wz - a) / a, ang, 0.5 * a, fabs(ang - 0.5 * a) / (0.5 * a),
          fabs(xc[0] - 0.5 * F[0] / mass) + fabs(xc[1] - 0.5 * F[1] / mass) + fabs(xc[2] - 0.5 * F[2] / mass));
  /* r3so3: exact to round-off (constant acceleration, one fixed axis);
   * directors: the Cartesian directors' genalpha error, measured 4e-8 */
  double tol = _i == 0 ? 1e-6 : 1e-12;
  ck_assert_msg(fabs(wz - a) <= tol * a, "omega %.12f, expected %.12f", wz, a);
  ck_assert_msg(fabs(ang - 0.5 * a) <= tol * 0.5 * a, "angle %.12f, expected %.12f", ang, 0.5 * a);
  for (int i = 0; i < 3; i++) ck_assert_msg(fabs(xc[i] - 0.5 * F[i] / mass) <= 1e-8, "x[%d] %.12f", i, xc[i]);
  /* a conserving scheme refuses the forced model */
  lv_integrator *em = NULL;
  if (_i == 0) ck_assert_int_eq(lv_integrator_new(&em, m, "em", 1e-3), LV_ENOTIMPL);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* ================================================ profiles, refusals */

START_TEST(test_profiles) {
  double o[3];
  lv_mbs_profile p = {LV_MBS_CONSTANT, {1, -2, 3}, 0, 0, 0, 0};
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 7.0, o), 0);
  ck_assert(o[0] == 1 && o[1] == -2 && o[2] == 3);
  p.kind = LV_MBS_SINE, p.frequency = 2.0, p.phase = 0.5;
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 0.3, o), 0);
  ck_assert(fabs(o[1] + 2 * sin(2 * PI * 2.0 * 0.3 + 0.5)) < 1e-15);
  p.kind = LV_MBS_STEP, p.t0 = 1.0;
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 0.999, o), 0);
  ck_assert(o[0] == 0 && o[2] == 0);
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 1.0, o), 0);
  ck_assert(o[0] == 1 && o[2] == 3);
  p.kind = LV_MBS_RAMP, p.t0 = 1.0, p.t1 = 3.0;
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 0.5, o), 0);
  ck_assert(o[2] == 0);
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 2.5, o), 0);
  ck_assert(fabs(o[2] - 2.25) < 1e-15);
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 4.0, o), 0);
  ck_assert(o[2] == 3);
  p.t1 = 1.0; /* empty ramp */
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 4.0, o), LV_EINPUT);
  p.kind = (lv_mbs_profile_kind)9;
  ck_assert_int_eq(lv_mbs_profile_eval(&p, 4.0, o), LV_EINPUT);
}
END_TEST

START_TEST(test_refusals) {
  lv_mbs *s;
  ck_assert_int_eq(lv_mbs_new(&s, "directors"), 0);
  double Jd[3] = {1, 1, 1}, ez[3] = {0, 0, 1}, ex[3] = {1, 0, 0}, amp[3] = {1, 1, 1};
  int b, p;
  ck_assert_int_eq(lv_mbs_add_body(s, 1.0, NULL, Jd, O3, NULL, NULL, NULL, LV_MBS_BODY_FRAME, &b), 0);
  ck_assert_int_eq(lv_mbs_add_particle(s, 1.0, ez, NULL, &p), 0);
  ck_assert_int_eq(lv_mbs_add_torsional_spring(s, LV_MBS_GROUND, ez, b, ex, 1.0, 0.0), LV_EINPUT);
  ck_assert_ptr_nonnull(strstr(lv_mbs_error(s), "torsional spring 0: axis_a and axis_b"));
  ck_assert_int_eq(lv_mbs_add_torsional_spring(s, LV_MBS_GROUND, ez, b, ez, -1.0, 0.0), LV_EINPUT);
  ck_assert_int_eq(lv_mbs_add_torsional_spring(s, LV_MBS_GROUND, ez, b, ez, 1.0, 4.0), LV_EINPUT);
  ck_assert_ptr_nonnull(strstr(lv_mbs_error(s), "rest angle"));
  ck_assert_int_eq(lv_mbs_add_torsional_damper(s, p, ez, b, ez, 1.0), LV_EINPUT);
  ck_assert_ptr_nonnull(strstr(lv_mbs_error(s), "particle"));
  ck_assert_int_eq(lv_mbs_add_torsional_damper(s, b, ez, b, ez, 1.0), LV_EINPUT);
  ck_assert_int_eq(lv_mbs_add_torque(s, p, wobble, amp), LV_EINPUT);
  ck_assert_int_eq(lv_mbs_add_torque(s, LV_MBS_GROUND, wobble, amp), LV_EINPUT);
  ck_assert_int_eq(lv_mbs_add_force(s, p, ez, wobble, amp), LV_EINPUT);
  ck_assert_int_eq(lv_mbs_add_force(s, b, ez, NULL, amp), LV_EINPUT);
  lv_mbs_profile bad = {LV_MBS_RAMP, {1, 1, 1}, 0, 0, 2.0, 1.0};
  ck_assert_int_eq(lv_mbs_add_force_profile(s, b, ez, &bad), LV_EINPUT);
  ck_assert_ptr_nonnull(strstr(lv_mbs_error(s), "ramp"));
  ck_assert_int_eq(lv_mbs_add_torsional_spring(NULL, 0, ez, b, ez, 1.0, 0.0), LV_EINPUT);
  lv_mbs_free(s);
}
END_TEST

/* RATTLie holds only the inertial force: it refuses a load, also one that
 * vanishes at t0 (a ramp from 0, a sine of phase 0), which it used to take
 * for the inertial term and drop. */
START_TEST(test_rattlie_refuses_loads) {
  lv_mbs_profile ps[2] = {{LV_MBS_RAMP, {0, 0, 1}, 0, 0, 0.0, 1.0}, {LV_MBS_SINE, {0, 0, 1}, 1.0, 0.0, 0, 0}};
  lv_mbs *s;
  ck_assert_int_eq(lv_mbs_new(&s, "r3so3"), 0);
  double Jd[3] = {1, 2, 3};
  int b;
  ck_assert_int_eq(lv_mbs_add_body(s, 1.0, NULL, Jd, O3, NULL, NULL, NULL, LV_MBS_BODY_FRAME, &b), 0);
  if (_i == 0)
    ck_assert_int_eq(lv_mbs_add_torque_profile(s, b, &ps[0]), 0);
  else
    ck_assert_int_eq(lv_mbs_add_force_profile(s, b, O3, &ps[1]), 0);
  lv_model *m;
  ck_assert_int_eq(lv_mbs_build(s, "load", &m), 0);
  lv_mbs_free(s);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), LV_ENOTIMPL);
  lv_integrator_free(it);
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0); /* which runs it */
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* ===================================== heavy top: the spin momentum */

static lv_model *heavy_top_04(void) {
  const char *keys[2] = {"formulation", "J2"}, *vals[2] = {"directors", "0.4"};
  lv_kv kv = {2, keys, vals};
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("heavy-top", &kv, &m), 0);
  ck_assert_int_eq(lv_model_nsym(m), 2); /* vertical, spin */
  return m;
}

/* max relative change of momentum maps 0 (vertical) and 1 (spin) over n
 * steps of h, into dJ[2] (EM with the option momentum=mom when mom is not
 * NULL) */
static void max_dJ(lv_model *m, const char *scheme, const char *mom, double h, long n, double dJ[2]) {
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, scheme, h), 0);
  if (mom) ck_assert_int_eq(lv_integrator_set_option(it, "momentum", mom), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  lv_diag *d;
  ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
  lv_diag_point pt;
  ck_assert_int_eq(lv_diag_eval(d, lv_integrator_state(it), &pt), 0);
  double J0[2] = {pt.momentum[0], pt.momentum[1]};
  dJ[0] = dJ[1] = 0.0;
  for (long i = 0; i < n; i++) {
    ck_assert_int_eq(lv_integrator_step(it), 0);
    ck_assert_int_eq(lv_diag_eval(d, lv_integrator_state(it), &pt), 0);
    for (int k = 0; k < 2; k++) dJ[k] = fmax(dJ[k], fabs(pt.momentum[k] - J0[k]) / fabs(J0[k]));
  }
  lv_diag_free(d);
  lv_integrator_free(it);
}

START_TEST(test_heavy_top_spin) {
  lv_model *m = heavy_top_04();
  double r[2], va[2], hs[3] = {2e-3, 1e-3, 5e-4}, e[3][2], ep[3][2], es[3];
  max_dJ(m, "rattle", NULL, 1e-3, 2000, r);
  max_dJ(m, "vi-a", NULL, 1e-3, 2000, va);
  double eg[2], egp[2]; /* EM-G (primary constraints only) alike */
  max_dJ(m, "em-g", NULL, 1e-3, 2000, eg);
  max_dJ(m, "em-g", "projected", 1e-3, 2000, egp);
  for (int i = 0; i < 3; i++) {
    long n = (long)(2.0 / hs[i] + 0.5);
    max_dJ(m, "em", NULL, hs[i], n, e[i]);
    max_dJ(m, "em", "projected", hs[i], n, ep[i]);
    es[i] = e[i][1];
  }
  double slope = tu_fit_order(3, hs, es);
  fprintf(stderr, "heavy top directors, spin momentum over t = 2: RATTLE %.2e, VI-A %.2e (h = 1e-3); EM midpoint (default) "
          "%.3e %.3e %.3e for h = 2e-3, 1e-3, 5e-4 (slope %.2f), vertical %.1e %.1e %.1e; EM projected "
          "spin %.1e %.1e %.1e, vertical %.1e %.1e %.1e\n", r[1], va[1], es[0], es[1], es[2], slope, e[0][0],
          e[1][0], e[2][0], ep[0][1], ep[1][1], ep[2][1], ep[0][0], ep[1][0], ep[2][0]);
  fprintf(stderr, "EM-G spin at h = 1e-3: midpoint %.3e, projected %.3e (vertical %.1e)\n", eg[1], egp[1], egp[0]);
  ck_assert_msg(r[1] <= 1e-12 && va[1] <= 1e-12, "RATTLE %.3e, VI-A %.3e", r[1], va[1]);
  ck_assert_msg(eg[1] > 1e-7 && egp[1] <= 1e-12 && egp[0] <= 1e-12, "EM-G spin %.3e, projected %.3e, vertical %.3e",
                eg[1], egp[1], egp[0]);
  ck_assert_msg(fabs(slope - 2.0) <= 0.1, "EM midpoint spin error slope %.3f", slope);
  for (int i = 0; i < 3; i++) {
    ck_assert_msg(e[i][0] <= 1e-12, "EM midpoint vertical %.3e", e[i][0]);
    ck_assert_msg(ep[i][1] <= 1e-12 && ep[i][0] <= 1e-12, "EM projected: spin %.3e, vertical %.3e", ep[i][1],
                  ep[i][0]);
  }
  lv_model_free(m);
}
END_TEST

static Suite *mbsforce_suite(void) {
  Suite *s = suite_create("mbsforce");
  int nf = 0;
  while (lv_mbs_formulations()[nf]) nf++;
  TCase *tc = tu_tcase(s, "derivatives", 0.1);
  tcase_add_loop_test(tc, test_derivatives, 0, nf);
  tcase_add_loop_test(tc, test_derivatives_single, 0, 4 * nf);
  tcase_add_test(tc, test_profiles);
  tcase_add_test(tc, test_refusals);
  tc = tu_tcase(s, "dynamics", 1.0);
  tcase_add_loop_test(tc, test_torsional_pendulum, 0, 2);
  tcase_add_loop_test(tc, test_spin_up, 0, 2);
  tcase_add_loop_test(tc, test_damped_torsional_pendulum, 0, 2);
  tcase_add_loop_test(tc, test_rattlie_refuses_loads, 0, 2);
  tc = tu_tcase(s, "spin", 3.0);
  tcase_add_test(tc, test_heavy_top_spin);
  return s;
}

int main(void) { return tu_run_suite(mbsforce_suite()); }
