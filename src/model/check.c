/* lv_model_check_derivatives: supplied derivatives against finite differences. */
#include "model/model_impl.h"

/* Deviation of the supplied derivative a from the finite difference ref
 * (step h) beyond the finite difference's own error, estimated from ref2
 * (step 2h): central differences err ~ c h^2, so |ref - ref2| ~ 3 |c| h^2
 * and 2 |ref - ref2| bounds ref's error with a margin.  Without that
 * allowance a derivative that is exactly zero (a spring at rest) reads as
 * "wrong" by the truncation error alone.  Scaled by the magnitude of the
 * derivative (floored so an all-zero derivative compares absolutely). */
static double rel_dev(int n, const double *a, const double *ref, const double *ref2) {
  double d = 0.0, s = 0.0;
  for (int i = 0; i < n; i++) {
    double e = fabs(a[i] - ref[i]) - 2.0 * fabs(ref[i] - ref2[i]);
    if (e > d || e != e) d = e;
    if (fabs(ref[i]) > s) s = fabs(ref[i]);
  }
  return d / (s > 1e-6 ? s : 1e-6);
}

static void report(FILE *log, const char *what, double err, double tol, lv_check_result *r, double *slot) {
  *slot = err;
  r->checked++;
  int bad = !(err <= tol);
  if (bad) r->failed++;
  if (log) fprintf(log, "%-31s rel. deviation beyond the FD error %.3e  %s\n", what, err, bad ? "FAIL" : "ok");
}

/* Fill a dense block through a sink-writing evaluator. */
#define DENSE_EVAL(buf, rows, cols, call)                        \
  do {                                                           \
    memset(buf, 0, (size_t)(rows) * (size_t)(cols) * sizeof(double)); \
    lv_sink s_ = lv_sink_dense(buf, rows, rows, cols);           \
    lv_sink *S = &s_;                                            \
    rc = (call);                                                 \
  } while (0)

int lv_model_check_derivatives(const lv_model *m, const double *q, const double *v, double tol,
                               FILE *log, lv_check_result *res) {
  lv_check_result r;
  memset(&r, 0, sizeof r);
  r.err_dV = r.err_d2V = r.err_G = r.err_hessian = r.err_curvature = r.err_df_dq = r.err_df_dv = r.err_drive = -1.0;
  if (!m) return LV_EINPUT;
  if (!q) q = m->q0;
  if (!v) v = m->v0;
  if (tol <= 0) tol = 1e-6;
  int nv = m->nv, nc = m->nc, nq = m->nq;
  size_t big = (size_t)nv * (size_t)(nv > nc ? nv : nc);
  double *A = lv_calloc(big, sizeof(double));
  double *B = lv_calloc(big, sizeof(double));
  double *C = lv_calloc(big, sizeof(double)); /* finite differences with twice the step */
  double *w = lv_calloc((size_t)nv, sizeof(double));
  double *gam = lv_calloc((size_t)(nc ? nc : 1), sizeof(double));
  double *qp = lv_calloc((size_t)nq, sizeof(double));
  double *qm = lv_calloc((size_t)nq, sizeof(double));
  double *e = lv_calloc((size_t)nv, sizeof(double)); /* unit direction */
  int rc = (!A || !B || !C || !w || !gam || !qp || !qm || !e) ? LV_ENOMEM : 0;
  /* Fixed pseudo-random directions so a check is reproducible. */
  unsigned long long st = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < nv; i++) {
    st ^= st << 13; st ^= st >> 7; st ^= st << 17;
    w[i] = (double)(st >> 11) / 9007199254740992.0 - 0.5;
  }
  for (int i = 0; i < nc; i++) {
    st ^= st << 13; st ^= st >> 7; st ^= st << 17;
    gam[i] = (double)(st >> 11) / 9007199254740992.0 - 0.5;
  }

  if (!rc && m->V && m->dV) {
    rc = lv_model_grad_potential(m, q, A);
    for (int k = 1; k <= 2 && !rc; k++) {
      double *D = k == 1 ? B : C;
      for (int j = 0; j < nv && !rc; j++) {
        double vp, vm, eps = k * lv_fd_step_dir(m->space, q, j);
        e[j] = 1.0;
        rc = lv_space_compose_exp(m->space, q, eps, e, qp);
        if (!rc) rc = lv_space_compose_exp(m->space, q, -eps, e, qm);
        e[j] = 0.0;
        if (!rc) rc = lv_model_potential(m, qp, &vp);
        if (!rc) rc = lv_model_potential(m, qm, &vm);
        D[j] = (vp - vm) / (2 * eps);
      }
    }
    if (!rc && nv > 0) report(log, "dV (gradient of V)", rel_dev(nv, A, B, C), tol, &r, &r.err_dV);
  }
  if (!rc && m->d2V) {
    DENSE_EVAL(A, nv, nv, lv_model_hess_potential(m, q, S));
    if (!rc) DENSE_EVAL(B, nv, nv, lv_fd_hess_potential(m, q, S, 1.0));
    if (!rc) DENSE_EVAL(C, nv, nv, lv_fd_hess_potential(m, q, S, 2.0));
    if (!rc) report(log, "d2V (Hessian of V)", rel_dev(nv * nv, A, B, C), tol, &r, &r.err_d2V);
  }
  if (!rc && nc > 0 && m->G) {
    DENSE_EVAL(A, nc, nv, lv_model_constraint_jac(m, q, S));
    if (!rc) DENSE_EVAL(B, nc, nv, lv_fd_constraint_jac(m, q, S, 1.0));
    if (!rc) DENSE_EVAL(C, nc, nv, lv_fd_constraint_jac(m, q, S, 2.0));
    if (!rc) report(log, "G (constraint Jacobian)", rel_dev(nc * nv, A, B, C), tol, &r, &r.err_G);
  }
  if (!rc && nc > 0 && m->g_hessian) {
    DENSE_EVAL(A, nv, nv, lv_model_constraint_hessian(m, q, gam, S));
    if (!rc) DENSE_EVAL(B, nv, nv, lv_fd_constraint_hessian(m, q, gam, S, 1.0));
    if (!rc) DENSE_EVAL(C, nv, nv, lv_fd_constraint_hessian(m, q, gam, S, 2.0));
    if (!rc) report(log, "D(G^T gamma) (constr. Hessian)", rel_dev(nv * nv, A, B, C), tol, &r, &r.err_hessian);
  }
  if (!rc && nc > 0 && m->g_curvature) {
    DENSE_EVAL(A, nc, nv, lv_model_constraint_curvature(m, q, w, S));
    if (!rc) DENSE_EVAL(B, nc, nv, lv_fd_constraint_curvature(m, q, w, S, 1.0));
    if (!rc) DENSE_EVAL(C, nc, nv, lv_fd_constraint_curvature(m, q, w, S, 2.0));
    if (!rc) report(log, "D(G w) (constr. curvature)", rel_dev(nc * nv, A, B, C), tol, &r, &r.err_curvature);
  }
  if (!rc && m->force_dq) {
    DENSE_EVAL(A, nv, nv, lv_model_force_dq(m, 0.0, q, v, S));
    if (!rc) DENSE_EVAL(B, nv, nv, lv_fd_force_dq(m, 0.0, q, v, S, 1.0));
    if (!rc) DENSE_EVAL(C, nv, nv, lv_fd_force_dq(m, 0.0, q, v, S, 2.0));
    if (!rc) report(log, "df/dq (force Jacobian)", rel_dev(nv * nv, A, B, C), tol, &r, &r.err_df_dq);
  }
  if (!rc && m->force_dv) {
    DENSE_EVAL(A, nv, nv, lv_model_force_dv(m, 0.0, q, v, S));
    if (!rc) DENSE_EVAL(B, nv, nv, lv_fd_force_dv(m, 0.0, q, v, S, 1.0));
    if (!rc) DENSE_EVAL(C, nv, nv, lv_fd_force_dv(m, 0.0, q, v, S, 2.0));
    if (!rc) report(log, "df/dv (force Jacobian)", rel_dev(nv * nv, A, B, C), tol, &r, &r.err_df_dv);
  }
  if (!rc && nc > 0 && m->drive) {
    /* c' against central differences of c, c'' against those of c', at
     * t = 0 and t = 1 (c has no state to take a time from) */
    double *dr = lv_calloc(4 * (size_t)nc, sizeof(double));
    double *a = dr, *b = dr + nc, *cp = dr + 2 * nc, *cm = dr + 3 * nc, worst = 0.0;
    double *b2 = B; /* nv x max(nv, nc) >= nc */
    if (!dr) rc = LV_ENOMEM;
    for (int k = 0; k < 4 && !rc; k++) {
      double t = k < 2 ? 0.0 : 1.0, eps0 = 6e-6 * (1.0 + fabs(t));
      int order = 1 + k % 2;
      rc = lv_model_driving(m, t, order, a);
      for (int s = 1; s <= 2 && !rc; s++) {
        double eps = s * eps0, *D = s == 1 ? b : b2;
        rc = lv_model_driving(m, t + eps, order - 1, cp);
        if (!rc) rc = lv_model_driving(m, t - eps, order - 1, cm);
        for (int i = 0; i < nc && !rc; i++) D[i] = (cp[i] - cm[i]) / (2 * eps);
      }
      if (!rc) {
        double e = rel_dev(nc, a, b, b2);
        if (e > worst || e != e) worst = e;
      }
    }
    if (!rc) report(log, "c', c'' (driving constraints)", worst, tol, &r, &r.err_drive);
    free(dr);
  }
  free(A);
  free(B);
  free(C);
  free(w);
  free(gam);
  free(qp);
  free(qm);
  free(e);
  if (res) *res = r;
  if (rc) return rc;
  return r.failed ? LV_EINPUT : 0;
}
