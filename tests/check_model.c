#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <string.h>
/* Model interface: derivative checker, finite-difference fallbacks,
 * registry parameters, consistent initialisation, diagnostics. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include "livens/livens.h"
#include "model/saddle.h" /* the saddle-point module (internal) */
#include "testutil.h"

/* A particle on the sphere |q| = 1 in a quadratic potential with a cubic
 * term, so every derivative is non-trivial.  wrong_G scales the Jacobian by
 * 1.01 to play a buggy model. */
typedef struct {
  int wrong_G;
} sph;

static int mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) lv_sink_add(M, i, i, 2.0);
  return 0;
}
static int V(const double *q, double *out, void *u) {
  (void)u;
  *out = 0.5 * (q[0] * q[0] + 2 * q[1] * q[1]) + q[0] * q[1] * q[2];
  return 0;
}
static int dV(const double *q, double *g, void *u) {
  (void)u;
  g[0] = q[0] + q[1] * q[2];
  g[1] = 2 * q[1] + q[0] * q[2];
  g[2] = q[0] * q[1];
  return 0;
}
static int d2V(const double *q, lv_sink *H, void *u) {
  (void)u;
  double h[9] = {1, q[2], q[1], q[2], 2, q[0], q[1], q[0], 0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) lv_sink_add(H, i, j, h[3 * i + j]);
  return 0;
}
static int g(const double *q, double *r, void *u) {
  (void)u;
  r[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - 1.0);
  r[1] = q[0] * q[1] - 0.1; /* a second, non-linear constraint */
  return 0;
}
static int G(const double *q, lv_sink *J, void *u) {
  const sph *s = u;
  double f = s->wrong_G ? 1.01 : 1.0;
  for (int j = 0; j < 3; j++) lv_sink_add(J, 0, j, f * q[j]);
  lv_sink_add(J, 1, 0, q[1]);
  lv_sink_add(J, 1, 1, q[0]);
  lv_sink_add(J, 1, 2, 0.0);
  return 0;
}
static int Hg(const double *q, const double *gam, lv_sink *H, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) lv_sink_add(H, i, i, gam[0]);
  lv_sink_add(H, 0, 1, gam[1]);
  lv_sink_add(H, 1, 0, gam[1]);
  return 0;
}
static int Zg(const double *q, const double *w, lv_sink *Z, void *u) {
  (void)q, (void)u;
  for (int j = 0; j < 3; j++) lv_sink_add(Z, 0, j, w[j]);
  lv_sink_add(Z, 1, 0, w[1]);
  lv_sink_add(Z, 1, 1, w[0]);
  return 0;
}

/* analytic: 1 every derivative supplied, 0 none (all by finite
 * differences), 2 only G supplied (Hessian/curvature by differences of it). */
static lv_model *make(int analytic, int wrong_G) {
  lv_space *sp;
  lv_model *m;
  ck_assert_int_eq(lv_space_new_rn(&sp, 3), 0);
  ck_assert_int_eq(lv_model_new(&m, "sphere", sp, 2), 0);
  sph *s = calloc(1, sizeof *s);
  s->wrong_G = wrong_G;
  lv_model_set_user(m, s, free);
  lv_model_set_mass(m, mass, 1);
  ck_assert_int_eq(lv_model_set_potential(m, V, dV, analytic == 1 ? d2V : NULL), 0);
  ck_assert_int_eq(lv_model_set_constraints(m, g, analytic ? G : NULL, analytic == 1 ? Hg : NULL,
                                            analytic == 1 ? Zg : NULL),
                   0);
  double q0[3] = {0.6, 0.3, 0.7}, v0[3] = {0.1, -0.2, 0.3};
  lv_model_set_initial(m, q0, v0);
  return m;
}

START_TEST(test_checker) {
  lv_model *good = make(1, 0), *bad = make(1, 1);
  lv_check_result r;
  ck_assert_int_eq(lv_model_check_derivatives(good, NULL, NULL, 1e-6, NULL, &r), 0);
  ck_assert_int_eq(r.checked, 5); /* dV, d2V, G, hessian, curvature */
  ck_assert_int_eq(r.failed, 0);
  ck_assert_double_lt(r.err_G, 1e-8);
  ck_assert_double_lt(r.err_d2V, 1e-8);
  ck_assert_int_eq(lv_model_check_derivatives(bad, NULL, NULL, 1e-6, NULL, &r), LV_EINPUT);
  ck_assert_int_ge(r.failed, 1);
  ck_assert_double_gt(r.err_G, 1e-3);
  lv_model_free(good);
  lv_model_free(bad);
}
END_TEST

/* Finite-difference fallbacks agree with the analytic derivatives. */
START_TEST(test_fd_fallback) {
  lv_model *a = make(1, 0), *f = make(0, 0), *f2 = make(2, 0);
  double q[3] = {0.3, -0.5, 0.8}, w[3] = {0.2, 0.7, -0.4}, gam[2] = {1.5, -0.5};
  double A[9], B[9];
  lv_sink sa, sb;
#define CMP(rows, call_a, call_b)                         \
  memset(A, 0, sizeof A);                                 \
  memset(B, 0, sizeof B);                                 \
  sa = lv_sink_dense(A, rows, rows, 3);                   \
  sb = lv_sink_dense(B, rows, rows, 3);                   \
  ck_assert_int_eq(call_a, 0);                            \
  ck_assert_int_eq(call_b, 0);                            \
  ck_assert_double_lt(tu_max_abs_diff(rows * 3, A, B), 1e-8);
  CMP(3, lv_model_hess_potential(a, q, &sa), lv_model_hess_potential(f, q, &sb));
  CMP(2, lv_model_constraint_jac(a, q, &sa), lv_model_constraint_jac(f, q, &sb));
  CMP(3, lv_model_constraint_hessian(a, q, gam, &sa), lv_model_constraint_hessian(f2, q, gam, &sb));
  CMP(2, lv_model_constraint_curvature(a, q, w, &sa), lv_model_constraint_curvature(f2, q, w, &sb));
  lv_model_free(f2);
  lv_model_free(a);
  lv_model_free(f);
}
END_TEST


/* A body far from the origin (positions ~1e3) whose constraint depends on its
 * rotation: g = R_02 + 1e-6 x0^2/2 on R^3 x SO(3).  The FD Jacobian must be
 * accurate per component; a step scaled by max|q| for every direction gave
 * the rotation columns a 6e-3 rad step and an error ~1e-5. */
static int far_g(const double *q, double *r, void *u) {
  (void)u;
  r[0] = q[3 + 2] + 0.5e-6 * q[0] * q[0];
  return 0;
}
static int far_G(const double *q, lv_sink *J, void *u) {
  (void)u;
  const double *R = q + 3; /* row-major; d/dh R exp(h w^) = R w^ */
  lv_sink_add(J, 0, 0, 1e-6 * q[0]);
  lv_sink_add(J, 0, 3, -R[1]);
  lv_sink_add(J, 0, 4, R[0]);
  return 0;
}
static int far_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 6; i++) lv_sink_add(M, i, i, 1.0);
  return 0;
}
static lv_model *make_far(int analytic) {
  lv_space *sp;
  lv_model *m;
  ck_assert_int_eq(lv_space_new(&sp), 0);
  ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_R3SO3, 0), 0);
  ck_assert_int_eq(lv_model_new(&m, "far", sp, 1), 0);
  lv_model_set_mass(m, far_mass, 1);
  ck_assert_int_eq(lv_model_set_constraints(m, far_g, analytic ? far_G : NULL, NULL, NULL), 0);
  return m;
}
START_TEST(test_fd_per_component) {
  lv_model *a = make_far(1), *f = make_far(0);
  double q[12] = {1000.0, -800.0, 500.0}, psi[3] = {0.3, -0.4, 0.5};
  lv_so3_exp(psi, q + 3);
  double A[6] = {0}, B[6] = {0};
  lv_sink sa = lv_sink_dense(A, 1, 1, 6), sb = lv_sink_dense(B, 1, 1, 6);
  ck_assert_int_eq(lv_model_constraint_jac(a, q, &sa), 0);
  ck_assert_int_eq(lv_model_constraint_jac(f, q, &sb), 0);
  for (int j = 0; j < 6; j++) ck_assert_double_lt(fabs(A[j] - B[j]), 1e-9);
  lv_model_free(a);
  lv_model_free(f);
}
END_TEST

/* dV without V: EM/EM-G use differences of V and ran a pendulum without
 * gravity with status 0.  The model must refuse it. */
START_TEST(test_potential_needs_V) {
  lv_space *sp;
  lv_model *m;
  ck_assert_int_eq(lv_space_new_rn(&sp, 3), 0);
  ck_assert_int_eq(lv_model_new(&m, "dV-only", sp, 0), 0);
  ck_assert_int_eq(lv_model_set_potential(m, NULL, dV, NULL), LV_EINPUT);
  ck_assert_int_eq(lv_model_set_potential(m, NULL, dV, d2V), LV_EINPUT);
  ck_assert_int_eq(lv_model_set_potential(m, V, dV, NULL), 0);
  ck_assert_int_eq(lv_model_set_potential(m, NULL, NULL, NULL), 0);
  lv_model_free(m);
}
END_TEST

/* A mass callback that writes (3,3) of a 3x3 block and ignores
 * lv_sink_add's status: the entry used to be dropped and the run said ok. */
static int mass_spill(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) lv_sink_add(M, i, i, 2.0);
  lv_sink_add(M, 3, 3, 1.0);
  return 0;
}
START_TEST(test_sink_outside_block) {
  lv_model *m = make(1, 0);
  lv_model_set_mass(m, mass_spill, 1);
  double q[3] = {0.6, 0.3, 0.7}, A[9] = {0};
  lv_sink s = lv_sink_dense(A, 3, 3, 3);
  ck_assert_int_eq(lv_model_mass(m, q, &s), LV_EINPUT);
  const char *cb = NULL;
  int row = -1, col = -1;
  ck_assert_int_eq(lv_model_last_error(m, &cb, &row, &col), LV_EINPUT);
  ck_assert_ptr_nonnull(cb);
  ck_assert_int_eq(row, 3);
  ck_assert_int_eq(col, 3);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 1e-2), 0);
  int rc = lv_integrator_init(it, 0.0, NULL, NULL);
  if (!rc) rc = lv_integrator_step(it);
  ck_assert_int_eq(rc, LV_EINPUT);
  char buf[300];
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "(4, 4)") && strstr(buf, "outside"), "detail: %s", buf);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* Blocks through the checked evaluators (lv_sink_add_block on the finite
 * wrapper, forwarded to the dense sink's block add when every entry is
 * finite and inside): the same matrix as one add per entry, and a bad
 * block still names its first bad entry in row-major order. */
static int block_mode;
static int mass_block(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  /* 3 x 3, leading dimension 4 (the fourth column is not part of it) */
  double B[12] = {2.0, 0.25, -0.5, 99.0, 0.75, 3.0, 0.125, 99.0, -1.5, 0.375, 4.0, 99.0};
  if (block_mode == 0) return lv_sink_add_block(M, 0, 0, 3, 3, B, 4);
  if (block_mode == 1) { /* the same entries one by one */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        int rc = lv_sink_add(M, i, j, B[4 * i + j]);
        if (rc) return rc;
      }
    return 0;
  }
  if (block_mode == 2) {
    B[4 * 1 + 2] = NAN;
    return lv_sink_add_block(M, 0, 0, 3, 3, B, 4);
  }
  return lv_sink_add_block(M, 1, 1, 2, 3, B, 4); /* (1, 3) and (2, 3) outside */
}
START_TEST(test_sink_blocks) {
  lv_model *m = make(1, 0);
  lv_model_set_mass(m, mass_block, 1);
  double q[3] = {0.6, 0.3, 0.7}, A[9], E[9];
  const char *cb = NULL;
  int row = -1, col = -1;
  for (int tr = 0; tr < 2; tr++) { /* transposed: entry by entry */
    memset(A, 0, sizeof A), memset(E, 0, sizeof E);
    lv_sink sa = lv_sink_dense(A, 3, 3, 3), se = lv_sink_dense(E, 3, 3, 3);
    sa.transpose = se.transpose = tr;
    sa.scale = se.scale = 1.5;
    block_mode = 0;
    ck_assert_int_eq(lv_model_mass(m, q, &sa), 0);
    block_mode = 1;
    ck_assert_int_eq(lv_model_mass(m, q, &se), 0);
    ck_assert_mem_eq(A, E, sizeof A);
  }
  block_mode = 2;
  lv_sink sa = lv_sink_dense(A, 3, 3, 3);
  ck_assert_int_eq(lv_model_mass(m, q, &sa), LV_ENONFINITE);
  ck_assert_int_eq(lv_model_last_error(m, &cb, &row, &col), LV_ENONFINITE);
  ck_assert_str_eq(cb, "mass");
  ck_assert_int_eq(row, 1);
  ck_assert_int_eq(col, 2);
  block_mode = 3;
  ck_assert_int_eq(lv_model_mass(m, q, &sa), LV_EINPUT);
  ck_assert_int_eq(lv_model_last_error(m, &cb, &row, &col), LV_EINPUT);
  ck_assert_int_eq(row, 1);
  ck_assert_int_eq(col, 3);
  /* the dense sink's own block add: offsets and scale as per entry, a
   * block reaching outside refused */
  double D[16] = {0}, F[16] = {0}, B[6] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  lv_sink sd = lv_sink_dense(D, 4, 3, 3), sf = lv_sink_dense(F, 4, 3, 3);
  sd.row0 = sf.row0 = 1, sd.col0 = sf.col0 = 1, sd.scale = sf.scale = -0.5;
  ck_assert_int_eq(lv_sink_add_block(&sd, 1, 0, 2, 3, B, 3), 0);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) ck_assert_int_eq(lv_sink_add(&sf, 1 + i, j, B[3 * i + j]), 0);
  ck_assert_mem_eq(D, F, sizeof D);
  ck_assert_int_eq(lv_sink_add_block(&sd, 2, 0, 2, 3, B, 3), LV_EINPUT);
  lv_model_free(m);
}
END_TEST

/* The matrix-free products call the callback without the per-entry
 * finite wrapper and check y once: an entry outside the block (status
 * ignored) and a non-finite entry must still be named as by the checked
 * evaluators, and a clean product must equal the dense matrix's. */
static int mass_nan(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  lv_sink_add(M, 0, 0, 2.0);
  lv_sink_add(M, 1, 2, NAN);
  lv_sink_add(M, 2, 2, 3.0);
  return 0;
}
START_TEST(test_products_checked) {
  lv_model *m = make(1, 0);
  double q[3] = {0.6, 0.3, 0.7}, x[3] = {0.5, -1.25, 2.0}, y[3], r[3], A[9] = {0};
  const char *cb = NULL;
  int row = -1, col = -1;
  /* clean: y = M x and |M| |x| against the dense M */
  ck_assert_int_eq(lv_model_mass_dense(m, q, A), 0);
  for (int ab = 0; ab < 2; ab++) {
    for (int i = 0; i < 3; i++) {
      r[i] = 0.0;
      for (int j = 0; j < 3; j++) r[i] += ab ? fabs(A[i + 3 * j]) * fabs(x[j]) : A[i + 3 * j] * x[j];
    }
    ck_assert_int_eq(ab ? lv_model_mass_apply_abs(m, q, x, y) : lv_model_mass_apply(m, q, x, y), 0);
    for (int i = 0; i < 3; i++) ck_assert_double_eq_tol(y[i], r[i], 1e-15 * (1.0 + fabs(r[i])));
  }
  /* outside the block, status ignored */
  lv_model_set_mass(m, mass_spill, 1);
  for (int ab = 0; ab < 2; ab++) {
    ck_assert_int_eq(ab ? lv_model_mass_apply_abs(m, q, x, y) : lv_model_mass_apply(m, q, x, y), LV_EINPUT);
    ck_assert_int_eq(lv_model_last_error(m, &cb, &row, &col), LV_EINPUT);
    ck_assert_str_eq(cb, "mass");
    ck_assert_int_eq(row, 3);
    ck_assert_int_eq(col, 3);
  }
  /* a NaN entry, status ignored: named with its place even where x is 0 */
  lv_model_set_mass(m, mass_nan, 1);
  x[2] = 0.0;
  for (int ab = 0; ab < 2; ab++) {
    ck_assert_int_eq(ab ? lv_model_mass_apply_abs(m, q, x, y) : lv_model_mass_apply(m, q, x, y), LV_ENONFINITE);
    ck_assert_int_eq(lv_model_last_error(m, &cb, &row, &col), LV_ENONFINITE);
    ck_assert_str_eq(cb, "mass");
    ck_assert_int_eq(row, 1);
    ck_assert_int_eq(col, 2);
  }
  lv_model_free(m);
}
END_TEST

/* genalpha beta = -1 ran "ok" with |Gv| = 121: refused, with the range named. */
START_TEST(test_genalpha_beta_range) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-2), 0);
  int rc = lv_integrator_set_option(it, "beta", "-1");
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
  ck_assert_int_eq(rc, LV_EINPUT);
  char buf[300];
  ck_assert_int_eq(lv_integrator_error_detail(it, buf, sizeof buf), LV_EINPUT);
  ck_assert_msg(strstr(buf, "beta = -1 is not accepted: a number > 0"), "detail: %s", buf);
  lv_integrator_free(it);
  ck_assert_int_eq(lv_integrator_new(&it, m, "vi-a", 1e-2), 0);
  rc = lv_integrator_set_option(it, "theta", "2");
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
  ck_assert_int_eq(rc, LV_EINPUT);
  lv_integrator_error_detail(it, buf, sizeof buf);
  ck_assert_msg(strstr(buf, "theta = 2") && strstr(buf, "(0, 1)"), "detail: %s", buf);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

START_TEST(test_registry_params) {
  lv_model *m = NULL;
  const char *k1[] = {"l"}, *v1[] = {"2.5"};
  lv_kv kv = {1, k1, v1};
  ck_assert_int_eq(lv_model_create("pendulum3d", &kv, &m), 0);
  double g0[1];
  double q[3] = {2.5, 0, 0};
  ck_assert_int_eq(lv_model_constraints(m, q, g0), 0);
  ck_assert_double_lt(fabs(g0[0]), 1e-15);
  lv_model_free(m);
  const char *k2[] = {"lenght"}, *v2[] = {"2"};
  lv_kv bad = {1, k2, v2};
  ck_assert_int_eq(lv_model_create("pendulum3d", &bad, &m), LV_EUNKNOWN);
  ck_assert_ptr_null(m);
  const char *v3[] = {"two"};
  lv_kv badv = {1, k1, v3};
  ck_assert_int_eq(lv_model_create("pendulum3d", &badv, &m), LV_EINPUT);
  ck_assert_int_eq(lv_model_create("no-such-model", NULL, &m), LV_EUNKNOWN);
  lv_check_result r;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  ck_assert_int_eq(lv_model_check_derivatives(m, NULL, NULL, 0, NULL, &r), 0);
  ck_assert_int_eq(r.failed, 0);
  lv_model_free(m);
}
END_TEST

/* Inconsistent initial values: projected onto both constraint levels, or
 * reported with LV_EINCONSISTENT in check mode. */
START_TEST(test_consistent_init) {
  lv_model *m = make(1, 0);
  double q0[3] = {0.5, 0.3, 0.9}, v0[3] = {1, 1, 1};
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_set_init_mode(it, LV_INIT_CHECK, 1e-10), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, q0, v0), LV_EINCONSISTENT);
  ck_assert_int_eq(lv_integrator_set_init_mode(it, LV_INIT_PROJECT, 1e-10), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, q0, v0), 0);
  lv_integrator_stats st;
  lv_integrator_get_stats(it, &st);
  ck_assert_int_eq(st.projected, 1);
  ck_assert_double_gt(st.init_g_norm, 1e-3);
  const lv_state *s = lv_integrator_state(it);
  double r[2];
  lv_model_constraints(m, s->q, r);
  ck_assert_double_lt(tu_norm_inf(2, r), 1e-13);
  lv_model_G_apply(m, s->q, s->v, r);
  ck_assert_double_lt(tu_norm_inf(2, r), 1e-13);
  /* the projected point is the M-closest: q - q0 is in the range of G^T, so
   * it is orthogonal to the constraint's tangent (the cross product of the
   * two rows of G at the projected point, to first order) */
  ck_assert_double_lt(fabs(s->q[0] - q0[0]), 0.5);
  ck_assert_int_eq(lv_integrator_set_init_mode(it, LV_INIT_PROJECT, -1), LV_EINPUT);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

/* Driving constraints (lv_model_set_driving): the sphere model with its
 * second constraint driven, q0 q1 - 0.1 = c(t) = 0.05 sin 2t (the first row
 * not).  The interface, the refusal by every scheme without
 * LV_SCHEME_DRIVEN, the initial projection onto g(q) = c(t0),
 * G v = c'(t0), and generalized-alpha (index 3 with projections, index 2)
 * keeping g(q) = c(t) and G v = c'(t) along the run. */
static int drive(double t, int order, double *c, void *u) {
  (void)u;
  c[0] = 0.0;
  c[1] = order == 0 ? 0.05 * sin(2 * t) : order == 1 ? 0.1 * cos(2 * t) : -0.2 * sin(2 * t);
  if (t > 1e3) c[1] = NAN; /* for the non-finite check */
  return 0;
}

/* the same with c'' 1 % off, for the derivative check */
static int drive_wrong(double t, int order, double *c, void *u) {
  int rc = drive(t, order, c, u);
  if (order == 2) c[1] *= 1.01;
  return rc;
}

START_TEST(test_driving) {
  lv_model *m = make(1, 0), *free_particle = NULL;
  lv_space *sp;
  ck_assert_int_eq(lv_space_new_rn(&sp, 2), 0);
  ck_assert_int_eq(lv_model_new(&free_particle, "free", sp, 0), 0);
  ck_assert_int_eq(lv_model_set_driving(free_particle, drive), LV_EINPUT); /* nothing to drive */
  ck_assert_int_eq(lv_model_has_driving(free_particle), 0);
  lv_model_free(free_particle);
  ck_assert_int_eq(lv_model_set_driving(NULL, drive), LV_EINPUT);
  double c[2] = {1, 1};
  ck_assert_int_eq(lv_model_has_driving(m), 0);
  ck_assert_int_eq(lv_model_driving(m, 0.3, 0, c), 0);
  ck_assert(c[0] == 0.0 && c[1] == 0.0); /* scleronomic: c = 0 */
  lv_check_result cr;
  ck_assert_int_eq(lv_model_set_driving(m, drive_wrong), 0);
  ck_assert_int_eq(lv_model_check_derivatives(m, NULL, NULL, 0, NULL, &cr), LV_EINPUT);
  ck_assert_int_eq(cr.failed, 1);
  ck_assert_double_gt(cr.err_drive, 1e-3);
  ck_assert_int_eq(lv_model_set_driving(m, drive), 0);
  ck_assert_int_eq(lv_model_check_derivatives(m, NULL, NULL, 0, NULL, &cr), 0);
  ck_assert(cr.err_drive >= 0.0 && cr.err_drive < 1e-6);
  ck_assert_int_eq(lv_model_has_driving(m), 1);
  ck_assert_int_eq(lv_model_driving(m, 0.3, 3, c), LV_EINPUT);
  ck_assert_int_eq(lv_model_driving(m, 0.3, 1, c), 0);
  ck_assert_double_eq_tol(c[1], 0.1 * cos(0.6), 1e-16);
  ck_assert_int_eq(lv_model_driving(m, 2e3, 0, c), LV_ENONFINITE);
  const char *cb = NULL;
  int row = -2, col = -2;
  ck_assert_int_eq(lv_model_last_error(m, &cb, &row, &col), LV_ENONFINITE);
  ck_assert_str_eq(cb, "driving c");
  ck_assert_int_eq(row, 1);

  /* every scheme without LV_SCHEME_DRIVEN refuses the model */
  int accepted = 0;
  for (const lv_scheme_type *const *r = lv_scheme_registry(); *r; r++) {
    lv_integrator *it = NULL;
    int rc = lv_integrator_new(&it, m, (*r)->name, 0.01);
    int driven = ((*r)->flags & LV_SCHEME_DRIVEN) != 0;
    ck_assert_msg(rc == (driven ? 0 : LV_ENOTIMPL), "%s: status %d", (*r)->name, rc);
    accepted += rc == 0;
    lv_integrator_free(it);
  }
  ck_assert_int_eq(accepted, 1); /* genalpha */

  const char *opts[3][4] = {{"index", "3", "projection", "off"},
                            {"index", "3", "projection", "on"},
                            {"index", "2", "projection", "off"}};
  for (int k = 0; k < 3; k++) {
    lv_integrator *it = NULL;
    ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 0.01), 0);
    for (int j = 0; j < 4; j += 2) ck_assert_int_eq(lv_integrator_set_option(it, opts[k][j], opts[k][j + 1]), 0);
    double q0[3] = {0.6, 0.3, 0.7}, v0[3] = {0.1, -0.2, 0.3}, t0 = 0.3;
    ck_assert_int_eq(lv_integrator_init(it, t0, q0, v0), 0);
    lv_integrator_stats st;
    lv_integrator_get_stats(it, &st);
    ck_assert_int_eq(st.projected, 1);
    lv_diag *d = NULL;
    ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
    const lv_state *s = lv_integrator_state(it);
    double r[2];
    for (int n = 0; n <= 50; n++) {
      if (n > 0) ck_assert_int_eq(lv_integrator_step(it), 0);
      /* g(q) - c(t) and G v - c'(t) by hand, and as the diagnostics say */
      ck_assert_int_eq(lv_model_constraints(m, s->q, r), 0);
      ck_assert_int_eq(lv_model_driving(m, s->t, 0, c), 0);
      double gn = fmax(fabs(r[0] - c[0]), fabs(r[1] - c[1]));
      ck_assert_int_eq(lv_model_G_apply(m, s->q, s->v, r), 0);
      ck_assert_int_eq(lv_model_driving(m, s->t, 1, c), 0);
      double gvn = fmax(fabs(r[0] - c[0]), fabs(r[1] - c[1]));
      lv_diag_point pt;
      ck_assert_int_eq(lv_diag_eval(d, s, &pt), 0);
      ck_assert_double_eq_tol(pt.g_norm, gn, 1e-15);
      ck_assert_double_eq_tol(pt.gv_norm, gvn, 1e-15);
      ck_assert_msg(gn < 1e-11, "%s=%s: |g - c| %g at t = %g", opts[k][0], opts[k][1], gn, s->t);
      /* the velocity constraint holds where the scheme imposes it */
      if (n == 0 || k > 0) ck_assert_msg(gvn < 1e-11, "case %d: |G v - c'| %g at t = %g", k, gvn, s->t);
    }
    /* index 3 without projection: G v = c'(t) to O(h^2) only, but it
     * follows c' (a scleronomic reading would leave |G v| ~ |c'| = 0.1) */
    if (k == 0) {
      ck_assert_int_eq(lv_model_G_apply(m, s->q, s->v, r), 0);
      ck_assert_int_eq(lv_model_driving(m, s->t, 1, c), 0);
      ck_assert_double_lt(fabs(r[1] - c[1]), 1e-3);
    }
    lv_diag_free(d);
    lv_integrator_free(it);
  }
  lv_model_free(m);
}
END_TEST

/* The built-in driven model, Kapitza's pendulum: its derivatives, and the
 * physics the driving constraint must reproduce (an independent check):
 * started 0.3 rad from upright, the bob stays up when A^2 omega^2 >
 * 2 g l (defaults 0.1^2 60^2 = 36 > 19.6), swinging within the initial
 * angle, and falls below the support when omega = 30 (9 < 19.6). */
static double kapitza_min_height(const char *omega, const char *index) {
  lv_model *m = NULL;
  const char *k[] = {"omega"}, *v[] = {omega};
  lv_kv kv = {1, k, v};
  ck_assert_int_eq(lv_model_create("kapitza", &kv, &m), 0);
  lv_check_result cr;
  ck_assert_int_eq(lv_model_check_derivatives(m, NULL, NULL, 0, NULL, &cr), 0);
  ck_assert_int_eq(cr.failed, 0);
  ck_assert_int_eq(cr.checked, 6); /* dV, d2V, G, Hessian, curvature, c' and c'': all exact */
  ck_assert(cr.err_drive >= 0.0 && cr.err_drive < 1e-6);
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, "genalpha", 1e-3), 0);
  ck_assert_int_eq(lv_integrator_set_option(it, "index", index), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  const lv_state *s = lv_integrator_state(it);
  double hmin = 1.0, c[3];
  for (int n = 0; n < 5000; n++) {
    ck_assert_int_eq(lv_integrator_step(it), 0);
    ck_assert_int_eq(lv_model_driving(m, s->t, 0, c), 0);
    ck_assert_double_lt(fabs(s->q[1] - c[1]), 1e-12); /* the support follows ys = A cos(omega t) */
    hmin = fmin(hmin, s->q[3] - s->q[1]);            /* bob above support, l = 1 */
  }
  lv_integrator_free(it);
  lv_model_free(m);
  return hmin;
}

START_TEST(test_kapitza) {
  double up3 = kapitza_min_height("60", "3"), up2 = kapitza_min_height("60", "2"),
         down = kapitza_min_height("30", "3");
  if (getenv("LV_TEST_VERBOSE"))
    printf("kapitza: min (y - ys) over t in [0, 5]: omega 60: %.4f (index 3), %.4f (index 2); omega 30: %.4f\n", up3,
           up2, down);
  ck_assert_msg(up3 > 0.9 && up2 > 0.9, "omega 60: the bob left the upright (%g, %g)", up3, up2);
  ck_assert_msg(down < 0.0, "omega 30: the bob stayed up (%g)", down);
}
END_TEST

/* Diagnostics: energy and momentum of a known state; CSV header columns. */
START_TEST(test_diag) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("pendulum3d", NULL, &m), 0);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "em", 0.1), 0); /* a scheme with momenta p */
  lv_diag *d;
  ck_assert_int_eq(lv_diag_new_for(&d, it), 0);
  lv_integrator_free(it); /* the diagnostics need the model only */
  double q[3] = {0, 0.6, -0.8}, v[3] = {0.3, 0, 0}, p[3] = {0.3, 0, 0}, lam[1] = {0}, gam[1] = {0};
  lv_state s = {0.0, q, v, p, lam, gam};
  lv_diag_point pt;
  ck_assert_int_eq(lv_diag_eval(d, &s, &pt), 0);
  ck_assert_double_eq_tol(pt.energy, 0.5 * 0.09 + 9.81 * -0.8, 1e-14);
  ck_assert_double_eq_tol(pt.momentum[0], -0.6 * 0.3, 1e-15); /* e3.(q x p) */
  ck_assert_double_lt(pt.g_norm, 1e-15);
  ck_assert_double_lt(pt.gv_norm, 1e-15);
  lv_diag_free(d);

  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.1), 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(lv_diag_csv_header(f, it), 0);
  fclose(f);
  ck_assert_str_eq(buf, "t,q1,q2,q3,v1,v2,v3,lambda1,energy,momentum1,g_norm,gv_norm,newton_iters\n");
  free(buf);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

static double dotv(int n, const double *a, const double *b) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* The saddle-point module (model/saddle.h) on the heavy top (R^3 x SO(3),
 * a spherical joint: nv = 6, nc = 3), each operation against the equations
 * it solves: project_q lands on g = 0 at the M-closest point (u^T M(q0)
 * delta = 0 for every u in ker G(q*), which an iterated projection misses
 * at O(|delta|^2) = 1e-3 here), to round-off with to_roundoff; project_v
 * gives G v* = 0 with v - v* M-orthogonal to ker G; accelerations satisfy
 * the index-1 equations; shift gives G dv = G w, dv M-orthogonal to ker G. */
START_TEST(test_saddle) {
  lv_model *m = NULL;
  ck_assert_int_eq(lv_model_create("heavy-top", NULL, &m), 0);
  const lv_space *sp = lv_model_space(m);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  ck_assert(nq == 12 && nv == 6 && nc == 3);
  lv_saddle *S = NULL;
  ck_assert_int_eq(lv_saddle_new(&S, m, LV_LINSOL_DENSE, 0), 0);
  double q0[12], q[12], qr[12], delta[6], Md[6], g[3];
  double w[6] = {0.01, -0.02, 0.015, 0.02, 0.01, -0.01};
  ck_assert_int_eq(lv_space_compose_exp(sp, lv_model_q0(m), 1.0, w, q0), 0);
  ck_assert_int_eq(lv_model_constraints(m, q0, g), 0);
  ck_assert_double_gt(tu_norm_inf(nc, g), 1e-3);
  /* positions */
  memcpy(q, q0, sizeof q);
  memcpy(qr, q0, sizeof qr);
  ck_assert_int_eq(lv_saddle_project_q(S, q, 0), 0);
  ck_assert_int_eq(lv_model_constraints(m, q, g), 0);
  double g_tol = tu_norm_inf(nc, g);
  ck_assert_double_lt(g_tol, 1e-13);
  ck_assert_int_eq(lv_saddle_project_q(S, qr, 1), 0);
  ck_assert_int_eq(lv_model_constraints(m, qr, g), 0);
  ck_assert_double_le(tu_norm_inf(nc, g), g_tol);
  ck_assert_double_lt(tu_norm_inf(nc, g), 1e-15);
  ck_assert_int_eq(lv_space_log(sp, q0, qr, delta), 0);
  ck_assert_int_eq(lv_model_mass_apply(m, q0, delta, Md), 0);
  double u[6], v[6] = {1.0, 2.0, -1.0, 0.5, 3.0, -2.0}, r[6], gv[3];
  for (int trial = 0; trial < 2; trial++) { /* two directions u in ker G(q*) */
    for (int i = 0; i < nv; i++) u[i] = trial ? v[i] : v[(i + 2) % nv] - v[i];
    ck_assert_int_eq(lv_saddle_project_v(S, qr, u), 0);
    ck_assert_double_lt(fabs(dotv(nv, u, Md)), 1e-13 * sqrt(dotv(nv, u, u) * dotv(nv, Md, Md)));
  }
  /* velocities: u = P v from the last trial */
  ck_assert_int_eq(lv_model_G_apply(m, qr, u, gv), 0);
  ck_assert_double_lt(tu_norm_inf(nc, gv), 1e-13 * tu_norm_inf(nv, v));
  for (int i = 0; i < nv; i++) r[i] = v[i] - u[i];
  double Mu[6];
  ck_assert_int_eq(lv_model_mass_apply(m, qr, u, Mu), 0);
  ck_assert_double_lt(fabs(dotv(nv, r, Mu)), 1e-13 * sqrt(dotv(nv, r, r) * dotv(nv, Mu, Mu)) + 1e-300);
  ck_assert_double_gt(tu_norm_inf(nv, r), 1e-3); /* v was not in ker G: the projection did something */
  /* accelerations at (q*, u): M vd + dV - f + G^T lam = 0, G vd + Z(q; u) u = 0 */
  double vd[6], lam[3], a[6], b[6], z[3];
  ck_assert_int_eq(lv_saddle_accelerations(S, 0.0, qr, u, vd, lam), 0);
  ck_assert_int_eq(lv_model_mass_apply(m, qr, vd, a), 0);
  ck_assert_int_eq(lv_model_grad_potential(m, qr, b), 0);
  for (int i = 0; i < nv; i++) a[i] += b[i];
  ck_assert_int_eq(lv_model_force(m, 0.0, qr, u, b), 0);
  for (int i = 0; i < nv; i++) a[i] -= b[i];
  ck_assert_int_eq(lv_model_GT_apply(m, qr, lam, b), 0);
  for (int i = 0; i < nv; i++) a[i] += b[i];
  ck_assert_double_lt(tu_norm_inf(nv, a), 1e-11 * (1.0 + tu_norm_inf(nc, lam)));
  ck_assert_int_eq(lv_model_G_apply(m, qr, vd, gv), 0);
  ck_assert_int_eq(lv_model_curvature_apply(m, qr, u, u, z), 0);
  for (int i = 0; i < nc; i++) gv[i] += z[i];
  ck_assert_double_lt(tu_norm_inf(nc, gv), 1e-11 * (1.0 + tu_norm_inf(nv, vd)));
  /* shift with the factorisation at q* (left by accelerations) */
  double dv[6], gw[3];
  ck_assert_int_eq(lv_saddle_shift(S, qr, w, dv), 0);
  ck_assert_int_eq(lv_model_G_apply(m, qr, dv, gv), 0);
  ck_assert_int_eq(lv_model_G_apply(m, qr, w, gw), 0);
  for (int i = 0; i < nc; i++) ck_assert_double_eq_tol(gv[i], gw[i], 1e-14);
  ck_assert_int_eq(lv_model_mass_apply(m, qr, dv, b), 0);
  ck_assert_double_lt(fabs(dotv(nv, b, u)), 1e-13 * sqrt(dotv(nv, b, b) * dotv(nv, u, u)));
  /* a consistent q stays where it is */
  memcpy(q, qr, sizeof q);
  ck_assert_int_eq(lv_saddle_project_q(S, q, 0), 0);
  for (int i = 0; i < nq; i++) ck_assert_double_eq_tol(q[i], qr[i], 1e-15);
  lv_saddle_free(S);
  lv_model_free(m);
}
END_TEST

/* The initialisers of the structs a model's user or a plugin fills
 * (issue 19): LV_KV_INIT and lv_kv_init agree and are read back by the
 * lv_kv helpers; a table of LV_PARAM_INFO rows ends at LV_PARAM_INFO_END
 * (lv_kv_check accepts its names and refuses another); an
 * LV_MODEL_INFO_INIT description builds its model. */
static const lv_param_info init_params[] = {LV_PARAM_INFO("l", "1", "rod length"),
                                            LV_PARAM_INFO("m", "1", "mass"), LV_PARAM_INFO_END};
static int init_create(const lv_kv *kv, lv_model **out) { return lv_model_create("pendulum3d", kv, out); }
static const lv_model_info init_info = LV_MODEL_INFO_INIT("p3", "pendulum3d again", init_params, init_create);

START_TEST(test_public_initialisers) {
  const char *keys[] = {"l", "m"}, *values[] = {"2.5", "3"};
  lv_kv a = LV_KV_INIT(2, keys, values), b;
  memset(&b, 0xff, sizeof b);
  lv_kv_init(&b, 2, keys, values);
  lv_kv_init(NULL, 2, keys, values); /* no-op */
  ck_assert_int_eq(a.n, 2);
  ck_assert_int_eq(b.n, 2);
  ck_assert_ptr_eq(a.keys, keys);
  ck_assert_ptr_eq(b.values, values);
  double l = 0.0;
  ck_assert_int_eq(lv_kv_double(&b, "l", 1.0, &l), 0);
  ck_assert_double_eq(l, 2.5);
  ck_assert_str_eq(lv_kv_string(&a, "m", "?"), "3");
  /* the table: three rows, the last all NULL */
  ck_assert_str_eq(init_params[1].name, "m");
  ck_assert_str_eq(init_params[1].default_value, "1");
  ck_assert_str_eq(init_params[1].doc, "mass");
  ck_assert_ptr_null(init_params[2].name);
  const char *bad = NULL;
  ck_assert_int_eq(lv_kv_check(&a, init_params, &bad), 0);
  const char *k2[] = {"l", "length"}, *v2[] = {"1", "2"};
  lv_kv c = LV_KV_INIT(2, k2, v2);
  ck_assert_int_eq(lv_kv_check(&c, init_params, &bad), LV_EUNKNOWN);
  ck_assert_str_eq(bad, "length");
  /* the description */
  ck_assert_str_eq(init_info.name, "p3");
  ck_assert_str_eq(init_info.description, "pendulum3d again");
  ck_assert_ptr_eq(init_info.params, init_params);
  lv_model *m = NULL;
  ck_assert_int_eq(init_info.create(&a, &m), 0);
  ck_assert_int_eq(lv_model_nq(m), 3);
  lv_model_free(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("model");
  TCase *tc = tu_tcase(s, "core", 0.01);
  tcase_add_test(tc, test_checker);
  tcase_add_test(tc, test_fd_fallback);
  tcase_add_test(tc, test_fd_per_component);
  tcase_add_test(tc, test_potential_needs_V);
  tcase_add_test(tc, test_sink_outside_block);
  tcase_add_test(tc, test_sink_blocks);
  tcase_add_test(tc, test_products_checked);
  tcase_add_test(tc, test_genalpha_beta_range);
  tcase_add_test(tc, test_registry_params);
  tcase_add_test(tc, test_consistent_init);
  tcase_add_test(tc, test_diag);
  tcase_add_test(tc, test_driving);
  tcase_add_test(tc, test_kapitza);
  tcase_add_test(tc, test_saddle);
  tcase_add_test(tc, test_public_initialisers);
  return tu_run_suite(s);
}
