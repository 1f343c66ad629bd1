/* Central finite differences along the space's retraction q o exp(+-eps e_j):
 * the fallback for every derivative a model does not supply.  These write
 * dense blocks (every position, even zeros) so sparse patterns stay fixed;
 * a large model should supply its derivatives. */
#include <float.h>
#include "model/model_impl.h"
#include "space/group.h"

/* The step along tangent direction j is scaled by the size of the coordinate
 * that direction moves, not by max|q|: a rotation must get ~6e-6 rad even when
 * positions are 1e3 (a scale of 1e3 for every direction made the rotation
 * columns of an FD Jacobian wrong in the third digit).  Rotation directions
 * (SO(3), S^3, the rotation half of R^3xSO(3) and SE(3)) have scale 1; a
 * translation of a rigid body (R^3xSO(3), SE(3), ...) is scaled by the
 * largest position component of its body (SE(3)'s translation is in the
 * body frame).  The scale is the factor's own: dir_scale of its entry in
 * space/group.h. */
double lv_fd_step_dir(const lv_space *sp, const double *q, int j) {
  return cbrt(DBL_EPSILON) * lv_space_dir_scale(sp, q, j);
}

/* Evaluates a vector-valued function of q at q o exp(+-eps e_j) and writes
 * the difference quotient as column j of an nout x nv block. */
typedef int (*vec_of_q)(const lv_model *m, const double *q, const void *arg, double *out);

static int fd_columns(const lv_model *m, const double *q, vec_of_q f, const void *arg, int nout,
                      lv_sink *out, double mult) {
  int nq = m->nq, nv = m->nv;
  double *qp = lv_calloc((size_t)nq, sizeof(double));
  double *qm = lv_calloc((size_t)nq, sizeof(double));
  double *e = lv_calloc((size_t)nv, sizeof(double));
  double *fp = lv_calloc((size_t)nout, sizeof(double));
  double *fm = lv_calloc((size_t)nout, sizeof(double));
  int rc = (!qp || !qm || !e || !fp || !fm) ? LV_ENOMEM : 0;
  for (int j = 0; j < nv && !rc; j++) {
    double eps = mult * lv_fd_step_dir(m->space, q, j);
    e[j] = 1.0;
    rc = lv_space_compose_exp(m->space, q, eps, e, qp);
    if (!rc) rc = lv_space_compose_exp(m->space, q, -eps, e, qm);
    e[j] = 0.0;
    if (!rc) rc = f(m, qp, arg, fp);
    if (!rc) rc = f(m, qm, arg, fm);
    for (int i = 0; i < nout && !rc; i++) rc = lv_sink_add(out, i, j, (fp[i] - fm[i]) / (2.0 * eps));
  }
  free(qp);
  free(qm);
  free(e);
  free(fp);
  free(fm);
  return rc;
}

static int f_dV(const lv_model *m, const double *q, const void *arg, double *out) {
  (void)arg;
  return lv_model_grad_potential(m, q, out);
}
static int f_g(const lv_model *m, const double *q, const void *arg, double *out) {
  (void)arg;
  return lv_model_constraints(m, q, out);
}
static int f_GTg(const lv_model *m, const double *q, const void *arg, double *out) {
  return lv_model_GT_apply(m, q, (const double *)arg, out);
}
static int f_Gw(const lv_model *m, const double *q, const void *arg, double *out) {
  return lv_model_G_apply(m, q, (const double *)arg, out);
}

int lv_fd_hess_potential(const lv_model *m, const double *q, lv_sink *H, double mult) {
  return fd_columns(m, q, f_dV, NULL, m->nv, H, mult);
}
int lv_fd_constraint_jac(const lv_model *m, const double *q, lv_sink *G, double mult) {
  return fd_columns(m, q, f_g, NULL, m->nc, G, mult);
}
int lv_fd_constraint_hessian(const lv_model *m, const double *q, const double *gamma, lv_sink *H, double mult) {
  return fd_columns(m, q, f_GTg, gamma, m->nv, H, mult);
}
int lv_fd_constraint_curvature(const lv_model *m, const double *q, const double *w, lv_sink *Z, double mult) {
  return fd_columns(m, q, f_Gw, w, m->nc, Z, mult);
}

typedef struct {
  double t;
  const double *v;
} force_arg;
static int f_force_q(const lv_model *m, const double *q, const void *arg, double *out) {
  const force_arg *a = arg;
  return lv_model_force(m, a->t, q, a->v, out);
}

int lv_fd_force_dq(const lv_model *m, double t, const double *q, const double *v, lv_sink *K, double mult) {
  force_arg a = {t, v};
  return fd_columns(m, q, f_force_q, &a, m->nv, K, mult);
}

/* df/dv: v lives in a linear space, so plain differences. */
int lv_fd_force_dv(const lv_model *m, double t, const double *q, const double *v, lv_sink *C, double mult) {
  int nv = m->nv;
  double *vp = lv_calloc((size_t)nv, sizeof(double));
  double *fp = lv_calloc((size_t)nv, sizeof(double));
  double *fm = lv_calloc((size_t)nv, sizeof(double));
  int rc = (!vp || !fp || !fm) ? LV_ENOMEM : 0;
  if (!rc) memcpy(vp, v, (size_t)nv * sizeof(double));
  for (int j = 0; j < nv && !rc; j++) {
    double eps = mult * cbrt(DBL_EPSILON) * fmax(1.0, fabs(v[j])); /* per component, as for q */
    vp[j] = v[j] + eps;
    rc = lv_model_force(m, t, q, vp, fp);
    vp[j] = v[j] - eps;
    if (!rc) rc = lv_model_force(m, t, q, vp, fm);
    vp[j] = v[j];
    for (int i = 0; i < nv && !rc; i++) rc = lv_sink_add(C, i, j, (fp[i] - fm[i]) / (2.0 * eps));
  }
  free(vp);
  free(fp);
  free(fm);
  return rc;
}

int lv_fd_mass_dq(const lv_model *m, const double *q, const double *a, lv_sink *K, double mult) {
  int nv = m->nv;
  double *e = lv_calloc((size_t)nv, sizeof(double));
  double *qp = lv_calloc((size_t)m->nq, sizeof(double));
  double *yp = lv_calloc((size_t)nv, sizeof(double));
  double *ym = lv_calloc((size_t)nv, sizeof(double));
  int rc = (!e || !qp || !yp || !ym) ? LV_ENOMEM : 0;
  for (int j = 0; j < nv && !rc; j++) {
    double eps = mult * lv_fd_step_dir(m->space, q, j);
    e[j] = 1.0;
    rc = lv_space_compose_exp(m->space, q, eps, e, qp);
    if (!rc) rc = lv_model_mass_apply(m, qp, a, yp);
    if (!rc) rc = lv_space_compose_exp(m->space, q, -eps, e, qp);
    if (!rc) rc = lv_model_mass_apply(m, qp, a, ym);
    e[j] = 0.0;
    for (int i = 0; i < nv && !rc; i++) rc = lv_sink_add(K, i, j, (yp[i] - ym[i]) / (2.0 * eps));
  }
  free(e);
  free(qp);
  free(yp);
  free(ym);
  return rc;
}
