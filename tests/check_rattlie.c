/* RATTLie (src/schemes/rattlie.c): the Lie group RATTLE of Hante & Arnold on
 * the heavy top in its three formulations (so3, r3so3, se3) and on the
 * rigid chain.  Asserted:
 *  - order 2 in q, v and the node multiplier lambda (fitted slopes against
 *    a BLieDF(4) reference at a 20x smaller step);
 *  - multipliers=rattle: the scheme's own lambda_n and gamma_{n+1} are
 *    first order, their average (lambda_n + gamma_n)/2 second order;
 *  - the momentum maps of the symmetries (vertical axis; for the symmetric
 *    top also its figure axis) conserved to 1e-12 relative over 10^4 steps;
 *  - energy bounded without drift over 4*10^4 steps (fitted slope);
 *  - at h = 1e-6 every step is solved (energy at round-off);
 *  - on R^n (pendulum3d) it is RATTLE: same q, v, lambda as `rattle`;
 *  - S^3 (quaternions) gives the same motion as SO(3), and so does SE(3)
 *    with the tip constraint as the reduced SO(3) top;
 *  - refusals: a bad option value, a model whose force is not the inertial
 *    term of its group. */
#include <stdio.h>
#include <string.h>
#include "livens/livens.h"
#include "testutil.h"

static lv_model *top(const char *form) {
  const char *keys[] = {"formulation"}, *vals[] = {form};
  lv_kv kv = {1, keys, vals};
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("heavy-top", &kv, &m), 0);
  return m;
}

/* Run scheme with step h to t_end; copy q, v, lambda, gamma (any may be NULL). */
static void run(const lv_model *m, const char *scheme, const char *mult, double h, double t_end, double *q,
                double *v, double *lam, double *gam) {
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, scheme, h), 0);
  if (mult) ck_assert_int_eq(lv_integrator_set_option(it, "multipliers", mult), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  int rc = lv_integrator_run_until(it, t_end);
  char buf[300];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(rc == 0, "%s h=%g: %s", scheme, h, buf);
  const lv_state *s = lv_integrator_state(it);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  if (q) memcpy(q, s->q, (size_t)nq * sizeof(double));
  if (v) memcpy(v, s->v, (size_t)nv * sizeof(double));
  if (lam && nc) memcpy(lam, s->lambda, (size_t)nc * sizeof(double));
  if (gam && nc) memcpy(gam, s->gamma, (size_t)nc * sizeof(double));
  lv_integrator_free(it);
}

#define NH 4
static const double HS[NH] = {2e-3, 1e-3, 5e-4, 2.5e-4};
#define T_END 0.1

START_TEST(test_orders) {
  const char *forms[3] = {"so3", "r3so3", "se3"};
  for (int f = 0; f < 3; f++) {
    lv_model *m = top(forms[f]);
    int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
    double qr[12], vr[6], lr[3] = {0}, q[12], v[6], l[3] = {0};
    run(m, "bliedf4", NULL, HS[NH - 1] / 20, T_END, qr, vr, lr, NULL);
    double eq[NH], ev[NH], el[NH];
    for (int j = 0; j < NH; j++) {
      run(m, "rattlie", NULL, HS[j], T_END, q, v, l, NULL);
      eq[j] = tu_max_abs_diff(nq, q, qr);
      ev[j] = tu_max_abs_diff(nv, v, vr) / tu_norm_inf(nv, vr);
      el[j] = nc ? tu_max_abs_diff(nc, l, lr) / tu_norm_inf(nc, lr) : 1.0;
    }
    double pq = tu_fit_order(NH, HS, eq), pv = tu_fit_order(NH, HS, ev), pl = tu_fit_order(NH, HS, el);
    printf("rattlie %-5s orders over h = 2e-3 .. 2.5e-4: q %.3f  v %.3f  lambda %.3f  (errors at 2.5e-4: %.2e %.2e %.2e)\n",
           forms[f], pq, pv, nc ? pl : 0.0, eq[NH - 1], ev[NH - 1], nc ? el[NH - 1] : 0.0);
    ck_assert_msg(fabs(pq - 2.0) < 0.1, "%s: q order %.3f", forms[f], pq);
    ck_assert_msg(fabs(pv - 2.0) < 0.1, "%s: v order %.3f", forms[f], pv);
    if (nc) ck_assert_msg(fabs(pl - 2.0) < 0.1, "%s: lambda order %.3f", forms[f], pl);
    lv_model_free(m);
  }
}
END_TEST

/* multipliers=rattle: lambda_n (stage 1, at t_n) and gamma_{n+1} are each
 * first order; (lambda_N + gamma_N) / 2 at t_N is second order (Hante &
 * Arnold's approximation of lambda(t_N), which needs step N+1). */
START_TEST(test_rattle_multipliers) {
  const char *forms[2] = {"r3so3", "se3"};
  for (int f = 0; f < 2; f++) {
    lv_model *m = top(forms[f]);
    double lr[3], gam[3], lam[3], avg[3];
    run(m, "bliedf4", NULL, HS[NH - 1] / 20, T_END, NULL, NULL, lr, NULL);
    double eg[NH], el[NH], ea[NH];
    for (int j = 0; j < NH; j++) {
      double h = HS[j];
      lv_integrator *it = NULL;
      ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", h), 0);
      ck_assert_int_eq(lv_integrator_set_option(it, "multipliers", "rattle"), 0);
      ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
      ck_assert_int_eq(lv_integrator_run_until(it, T_END), 0);
      const lv_state *s = lv_integrator_state(it);
      ck_assert(fabs(s->t - T_END) < 1e-12);
      memcpy(gam, s->gamma, sizeof gam); /* gamma_N */
      ck_assert_int_eq(lv_integrator_step(it), 0);
      memcpy(lam, s->lambda, sizeof lam); /* lambda_N, from the step t_N -> t_N + h */
      for (int i = 0; i < 3; i++) avg[i] = 0.5 * (lam[i] + gam[i]);
      double r = tu_norm_inf(3, lr);
      eg[j] = tu_max_abs_diff(3, gam, lr) / r;
      el[j] = tu_max_abs_diff(3, lam, lr) / r;
      ea[j] = tu_max_abs_diff(3, avg, lr) / r;
      lv_integrator_free(it);
    }
    double pg = tu_fit_order(NH, HS, eg), pl = tu_fit_order(NH, HS, el), pa = tu_fit_order(NH, HS, ea);
    printf("rattlie %-5s own multipliers: gamma_N order %.3f, lambda_N order %.3f, (lambda_N + gamma_N)/2 order %.3f\n",
           forms[f], pg, pl, pa);
    ck_assert_msg(fabs(pg - 1.0) < 0.15, "%s: gamma order %.3f", forms[f], pg);
    ck_assert_msg(fabs(pl - 1.0) < 0.15, "%s: lambda_n order %.3f", forms[f], pl);
    ck_assert_msg(fabs(pa - 2.0) < 0.15, "%s: average order %.3f", forms[f], pa);
    lv_model_free(m);
  }
}
END_TEST

/* Figure-axis momentum of the symmetric top (J1 = J3, X on body e2): the
 * body angular momentum about e2, (M v)_rot,2, for every formulation. */
static double figure_momentum(const lv_model *m, const lv_state *s) {
  double p[6];
  ck_assert_int_eq(lv_model_mass_apply(m, s->q, s->v, p), 0);
  return p[lv_model_nv(m) == 3 ? 1 : 4];
}

START_TEST(test_momentum_maps) {
  const char *forms[3] = {"so3", "r3so3", "se3"};
  for (int f = 0; f < 3; f++) {
    lv_model *m = top(forms[f]);
    lv_integrator *it = NULL;
    lv_diag *dg = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", 1e-3), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    ck_assert_int_eq(lv_diag_new_for(&dg, it), 0);
    const lv_state *s = lv_integrator_state(it);
    lv_diag_point pt;
    ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
    double J0 = pt.momentum[0], F0 = figure_momentum(m, s), dJ = 0.0, dF = 0.0, gmax = 0.0;
    for (int n = 0; n < 10000; n++) {
      ck_assert_int_eq(lv_integrator_step(it), 0);
      ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
      dJ = fmax(dJ, fabs(pt.momentum[0] - J0));
      dF = fmax(dF, fabs(figure_momentum(m, s) - F0));
      gmax = fmax(gmax, fmax(pt.g_norm, pt.gv_norm));
    }
    printf("rattlie %-5s 10^4 steps h = 1e-3: vertical |dJ|/|J| %.2e, figure axis %.2e, max |g|, |Gv| %.2e\n",
           forms[f], dJ / fabs(J0), dF / fabs(F0), gmax);
    ck_assert_msg(dJ <= 1e-12 * fabs(J0), "%s: vertical momentum off by %g of %g", forms[f], dJ, J0);
    ck_assert_msg(dF <= 1e-12 * fabs(F0), "%s: figure-axis momentum off by %g of %g", forms[f], dF, F0);
    ck_assert_msg(gmax < 1e-12, "%s: constraints %g", forms[f], gmax);
    lv_diag_free(dg);
    lv_integrator_free(it);
    lv_model_free(m);
  }
}
END_TEST

/* Energy over 4*10^4 steps (t = 80, ~1900 revolutions of the spin): the
 * least-squares slope of (E - E0)/E0 against t, times the run length, is
 * a small fraction of the oscillation, and the second half's largest error
 * is no larger than the first half's (bounded, no drift). */
START_TEST(test_energy_no_drift) {
  const char *forms[2] = {"r3so3", "se3"};
  for (int f = 0; f < 2; f++) {
    lv_model *m = top(forms[f]);
    lv_integrator *it = NULL;
    lv_diag *dg = NULL;
    double h = 2e-3;
    int N = 40000;
    ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", h), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    ck_assert_int_eq(lv_diag_new_for(&dg, it), 0);
    const lv_state *s = lv_integrator_state(it);
    lv_diag_point pt;
    ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
    double E0 = pt.energy, sx = 0, sy = 0, sxx = 0, sxy = 0, max1 = 0, max2 = 0;
    for (int n = 1; n <= N; n++) {
      ck_assert_int_eq(lv_integrator_step(it), 0);
      ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
      double e = (pt.energy - E0) / fabs(E0), t = s->t;
      sx += t, sy += e, sxx += t * t, sxy += t * e;
      if (n <= N / 2)
        max1 = fmax(max1, fabs(e));
      else
        max2 = fmax(max2, fabs(e));
    }
    double slope = (N * sxy - sx * sy) / (N * sxx - sx * sx), T = N * h;
    printf("rattlie %-5s energy over %d steps h = %g: max rel error %.2e (first half) %.2e (second half), "
           "fitted drift %.2e per unit time (%.2e over the run)\n",
           forms[f], N, h, max1, max2, slope, slope * T);
    ck_assert_msg(fabs(slope * T) < 0.05 * max1, "%s: drift %g over the run vs oscillation %g", forms[f], slope * T,
                  max1);
    ck_assert_msg(max2 < 1.5 * max1, "%s: energy error grows: %g then %g", forms[f], max1, max2);
    lv_diag_free(dg);
    lv_integrator_free(it);
    lv_model_free(m);
  }
}
END_TEST

/* On a linear space T = I and RATTLie is RATTLE. */
START_TEST(test_linear_is_rattle) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  double q1[16], v1[16], l1[8], q2[16], v2[16], l2[8];
  ck_assert(nq <= 16 && nc <= 8);
  run(m, "rattle", NULL, 1e-2, 5.0, q1, v1, l1, NULL);
  run(m, "rattlie", NULL, 1e-2, 5.0, q2, v2, l2, NULL);
  double dq = tu_max_abs_diff(nq, q1, q2), dv = tu_max_abs_diff(nv, v1, v2), dl = tu_rel_err(nc, l2, l1);
  ck_assert_msg(dq < 1e-11 && dv < 1e-10 && dl < 1e-10, "pendulum3d: rattlie vs rattle %g %g %g", dq, dv, dl);
  lv_model_free(m);
}
END_TEST

/* The rigid chain (R^3 x SO(3))^N through the sparse path: one symbolic
 * analysis for the whole run, same result as dense, momentum map and
 * constraints at round-off. */
START_TEST(test_rigid_chain) {
  const char *keys[] = {"N"}, *vals[] = {"4"};
  lv_kv kv = {1, keys, vals};
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("rigid-chain", &kv, &m), 0);
  int nq = lv_model_nq(m);
  double q[2][48];
  ck_assert(nq <= 48);
  for (int b = 0; b < 2; b++) {
    lv_integrator *it = NULL;
    lv_diag *dg = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", 2e-3), 0);
    ck_assert_int_eq(lv_integrator_set_linsol(it, b ? LV_LINSOL_UMFPACK : LV_LINSOL_DENSE, 0), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    ck_assert_int_eq(lv_diag_new_for(&dg, it), 0);
    const lv_state *s = lv_integrator_state(it);
    lv_diag_point pt;
    ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
    double J0 = pt.momentum[0], dJ = 0, gmax = 0;
    for (int n = 0; n < 1000; n++) {
      ck_assert_int_eq(lv_integrator_step(it), 0);
      ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
      dJ = fmax(dJ, fabs(pt.momentum[0] - J0));
      gmax = fmax(gmax, fmax(pt.g_norm, pt.gv_norm));
    }
    memcpy(q[b], s->q, (size_t)nq * sizeof(double));
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    if (b) ck_assert_msg(st.symbolic <= 2, "%ld symbolic analyses (stage 1 and stage 2: 2)", st.symbolic);
    ck_assert_msg(dJ <= 1e-12 * fmax(1.0, fabs(J0)), "rigid chain: momentum map off by %g of %g", dJ, J0);
    ck_assert_msg(gmax < 1e-12, "rigid chain: constraints %g", gmax);
    lv_diag_free(dg);
    lv_integrator_free(it);
  }
  ck_assert_msg(tu_max_abs_diff(nq, q[0], q[1]) < 1e-10, "dense vs umfpack %g", tu_max_abs_diff(nq, q[0], q[1]));
  lv_model_free(m);
}
END_TEST

/* Newton's test does not loosen as h shrinks (constraint rows in length
 * units, at least one correction): at h = 1e-6 every step is solved, and the
 * energy error over 200 steps is at round-off, not the predictor's O(h^2). */
START_TEST(test_small_h) {
  const char *forms[2] = {"r3so3", "se3"};
  for (int f = 0; f < 2; f++) {
    lv_model *m = top(forms[f]);
    lv_integrator *it = NULL;
    lv_diag *dg = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", 1e-6), 0);
    ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
    ck_assert_int_eq(lv_diag_new_for(&dg, it), 0);
    const lv_state *s = lv_integrator_state(it);
    lv_diag_point pt;
    ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
    double E0 = pt.energy, de = 0.0;
    for (int n = 0; n < 200; n++) {
      ck_assert_int_eq(lv_integrator_step(it), 0);
      ck_assert_int_eq(lv_diag_eval(dg, s, &pt), 0);
      de = fmax(de, fabs(pt.energy - E0) / fabs(E0));
    }
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    ck_assert_msg(st.newton_iterations >= 200, "%s: %ld Newton iterations for 200 steps", forms[f],
                  (long)st.newton_iterations);
    ck_assert_msg(de < 1e-13, "%s: energy error %g at h = 1e-6", forms[f], de);
    lv_diag_free(dg);
    lv_integrator_free(it);
    lv_model_free(m);
  }
}
END_TEST

/* On SE(3) the tip constraint gives the increment U = V(h Omega)^{-1}
 * (exp(h Omega~) - I) X / h = Omega x X exactly (V(phi) = sum phi~^k/(k+1)!,
 * exp(phi~) - I = phi~ V(phi)), so the SE(3) discrete Lagrangian is the
 * reduced SO(3) one with J_O = J + m(|X|^2 I - X X^T): the two runs are
 * the same motion to round-off. */
START_TEST(test_se3_is_so3) {
  lv_model *a = top("so3"), *b = top("se3");
  double qa[9], va[3], qb[12], vb[6];
  run(a, "rattlie", NULL, 1e-3, 1.0, qa, va, NULL, NULL);
  run(b, "rattlie", NULL, 1e-3, 1.0, qb, vb, NULL, NULL);
  double dR = tu_max_abs_diff(9, qa, qb + 3), dW = tu_max_abs_diff(3, va, vb + 3) / tu_norm_inf(3, va);
  ck_assert_msg(dR < 1e-11 && dW < 1e-11, "so3 vs se3: R %g, Omega %g", dR, dW);
  lv_model_free(a);
  lv_model_free(b);
}
END_TEST

/* Inertia of a free asymmetric body, J = diag(1, 2, 3). */
static int fb_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  static const double J[3] = {1.0, 2.0, 3.0};
  for (int i = 0; i < 3; i++)
    if (lv_sink_add(M, i, i, J[i])) return 1;
  return 0;
}

/* A free asymmetric body with its gyroscopic force, on SO(3) or on S^3
 * (the space's factor kind is the only difference). */
static int fb_force(double t, const double *q, const double *v, double *f, void *u) {
  (void)t, (void)q, (void)u;
  const double L[3] = {1.0 * v[0], 2.0 * v[1], 3.0 * v[2]};
  f[0] = -(v[1] * L[2] - v[2] * L[1]);
  f[1] = -(v[2] * L[0] - v[0] * L[2]);
  f[2] = -(v[0] * L[1] - v[1] * L[0]);
  return 0;
}

static lv_model *free_body(lv_factor_kind kind, int with_force) {
  lv_space *sp = NULL;
  lv_model *m = NULL;
  ck_assert_int_eq(lv_space_new(&sp), 0);
  ck_assert_int_eq(lv_space_add(sp, kind, 0), 0);
  ck_assert_int_eq(lv_model_new(&m, "free-body", sp, 0), 0);
  ck_assert_int_eq(lv_model_set_mass(m, fb_mass, 1), 0);
  if (with_force) ck_assert_int_eq(lv_model_set_force(m, fb_force, NULL, NULL), 0);
  double q0[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, v0[3] = {0.3, 1.0, 0.2};
  if (kind == LV_FACTOR_S3) q0[1] = q0[2] = q0[3] = 0.0; /* (1, 0, 0, 0) */
  ck_assert_int_eq(lv_model_set_initial(m, q0, v0), 0);
  return m;
}

/* The S^3 factor: the same discrete motion as SO(3) (the rotation of the
 * quaternion equals the matrix to round-off), and the spatial angular
 * momentum R J Omega (the left-invariant symmetry) conserved. */
START_TEST(test_s3_is_so3) {
  lv_model *a = free_body(LV_FACTOR_SO3, 1), *b = free_body(LV_FACTOR_S3, 1);
  double qa[9], va[3], qb[4], vb[3];
  run(a, "rattlie", NULL, 1e-2, 10.0, qa, va, NULL, NULL);
  run(b, "rattlie", NULL, 1e-2, 10.0, qb, vb, NULL, NULL);
  double w = qb[0], x = qb[1], y = qb[2], z = qb[3];
  double Rb[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                  2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                  2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
  ck_assert_msg(tu_max_abs_diff(9, qa, Rb) < 1e-12 && tu_max_abs_diff(3, va, vb) < 1e-12,
                "SO(3) vs S^3: R %g, Omega %g", tu_max_abs_diff(9, qa, Rb), tu_max_abs_diff(3, va, vb));
  const double J[3] = {1.0, 2.0, 3.0}, v0[3] = {0.3, 1.0, 0.2};
  double L[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) L[i] += qa[3 * i + j] * J[j] * va[j];
  double L0[3] = {J[0] * v0[0], J[1] * v0[1], J[2] * v0[2]};
  ck_assert_msg(tu_max_abs_diff(3, L, L0) < 1e-13, "spatial angular momentum off by %g", tu_max_abs_diff(3, L, L0));
  lv_model_free(a);
  lv_model_free(b);
}
END_TEST

START_TEST(test_refusals) {
  lv_model *m = top("r3so3");
  lv_integrator *it = NULL;
  char buf[300];
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_set_option(it, "no-such-option", "1"), LV_EUNKNOWN);
  ck_assert_int_eq(lv_integrator_set_option(it, "multipliers", "both"), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), LV_EINPUT);
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "multipliers") && strstr(buf, "both") && strstr(buf, "node") && strstr(buf, "rattle"),
                "detail: %s", buf);
  lv_integrator_free(it);
  lv_model_free(m);

  /* The free body written without its gyroscopic force: its equations say
   * J Omega' = 0, RATTLie would integrate Euler's instead, so it refuses. */
  m = free_body(LV_FACTOR_SO3, 0);
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattlie", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), LV_ENOTIMPL);
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "inertial term"), "detail: %s", buf);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("rattlie");
  TCase *tc = tu_tcase(s, "rattlie", 1.0);
  tcase_add_test(tc, test_refusals);
  tcase_add_test(tc, test_linear_is_rattle);
  tcase_add_test(tc, test_orders);
  tcase_add_test(tc, test_rattle_multipliers);
  tcase_add_test(tc, test_momentum_maps);
  tcase_add_test(tc, test_rigid_chain);
  tcase_add_test(tc, test_small_h);
  tcase_add_test(tc, test_s3_is_so3);
  tcase_add_test(tc, test_se3_is_so3);
  tcase_add_test(tc, test_energy_no_drift);
  return tu_run_suite(s);
}
