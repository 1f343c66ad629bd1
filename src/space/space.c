/* The configuration space: a product of R^k and matrix Lie group factors.
 * Every product-level operation is a loop over the factors, so a chain of
 * 10^5 rigid bodies costs O(N) per call. */
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include "lv_internal.h"
#include "liegroup.h"

typedef struct {
  lv_factor_kind kind;
  int q_off, nq, v_off, nv;
} factor;

struct lv_space {
  factor *f;
  int nf, cap;
  int nq, nv;
  int nonlinear; /* number of non-R^k factors */
  /* The name is kept up to date incrementally: only the text of the last run
   * of identical factors is rewritten on lv_space_add, so building a space of
   * N factors costs O(N) however the factors alternate. */
  char *name;
  size_t name_len, name_cap;
  size_t run_pos; /* where the text of the last run starts */
  int run_count;  /* factors in the last run */
};

static const char *kind_name(lv_factor_kind kind) {
  switch (kind) {
    case LV_FACTOR_SO3: return "SO(3)";
    case LV_FACTOR_S3: return "S^3";
    case LV_FACTOR_R3SO3: return "R^3xSO(3)";
    case LV_FACTOR_SE3: return "SE(3)";
    default: return "R";
  }
}

static void kind_sizes(lv_factor_kind kind, int *nq, int *nv) {
  switch (kind) {
    case LV_FACTOR_SO3: *nq = 9; *nv = 3; break;
    case LV_FACTOR_S3: *nq = 4; *nv = 3; break;
    case LV_FACTOR_R3SO3:
    case LV_FACTOR_SE3: *nq = 12; *nv = 6; break;
    default: *nq = *nv = 0; break;
  }
}

int lv_space_new(lv_space **out) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  lv_space *sp = calloc(1, sizeof *sp);
  if (!sp) return LV_ENOMEM;
  sp->cap = 4;
  sp->f = malloc((size_t)sp->cap * sizeof *sp->f);
  sp->name_cap = 64;
  sp->name = malloc(sp->name_cap);
  if (!sp->f || !sp->name) {
    lv_space_free(sp);
    return LV_ENOMEM;
  }
  sp->name[0] = '\0';
  *out = sp;
  return 0;
}

int lv_space_new_rn(lv_space **out, int n) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (n < 0) return LV_EINPUT;
  lv_space *sp;
  LV_CHECK(lv_space_new(&sp));
  int rc = lv_space_add(sp, LV_FACTOR_RN, n);
  if (rc) {
    lv_space_free(sp);
    return rc;
  }
  *out = sp;
  return 0;
}

void lv_space_free(lv_space *sp) {
  if (!sp) return;
  free(sp->f);
  free(sp->name);
  free(sp);
}

static int name_reserve(lv_space *sp, size_t need) {
  if (need <= sp->name_cap) return 0;
  size_t cap = 2 * sp->name_cap;
  if (cap < need) cap = need;
  char *p = realloc(sp->name, cap);
  if (!p) return LV_ENOMEM;
  sp->name = p;
  sp->name_cap = cap;
  return 0;
}

/* Replace the text of the last run by that of @p last repeated run_count times. */
static int rewrite_run(lv_space *sp, const factor *last) {
  char buf[64];
  if (last->kind == LV_FACTOR_RN)
    snprintf(buf, sizeof buf, "R^%d", last->nq);
  else if (sp->run_count == 1)
    snprintf(buf, sizeof buf, "%s", kind_name(last->kind));
  else if (last->kind == LV_FACTOR_SO3 || last->kind == LV_FACTOR_SE3)
    snprintf(buf, sizeof buf, "%s^%d", kind_name(last->kind), sp->run_count);
  else
    snprintf(buf, sizeof buf, "(%s)^%d", kind_name(last->kind), sp->run_count);
  size_t len = strlen(buf);
  LV_CHECK(name_reserve(sp, sp->run_pos + len + 1));
  memcpy(sp->name + sp->run_pos, buf, len + 1);
  sp->name_len = sp->run_pos + len;
  return 0;
}

int lv_space_add(lv_space *sp, lv_factor_kind kind, int k) {
  if (!sp) return LV_EINPUT;
  int nq, nv;
  switch (kind) {
    case LV_FACTOR_RN:
      if (k < 0) return LV_EINPUT;
      if (k == 0) return 0;
      nq = nv = k;
      break;
    case LV_FACTOR_SO3:
    case LV_FACTOR_S3:
    case LV_FACTOR_R3SO3:
    case LV_FACTOR_SE3:
      kind_sizes(kind, &nq, &nv);
      break;
    default:
      return LV_EINPUT;
  }
  if (sp->nq > INT_MAX - nq) return LV_EINPUT;
  factor *last = sp->nf ? &sp->f[sp->nf - 1] : NULL;

  if (kind == LV_FACTOR_RN && last && last->kind == LV_FACTOR_RN) {
    factor save = *last;
    last->nq += k;
    last->nv += k;
    int rc = rewrite_run(sp, last);
    if (rc) {
      *last = save;
      return rc;
    }
    sp->nq += k;
    sp->nv += k;
    return 0;
  }

  /* Decided before the array may move under last. */
  int same = last && last->kind == kind; /* never RN here */
  int have_last = last != NULL;
  if (sp->nf == sp->cap) {
    if (sp->cap > INT_MAX / 2) return LV_ENOMEM;
    int cap = 2 * sp->cap;
    factor *p = realloc(sp->f, (size_t)cap * sizeof *p);
    if (!p) return LV_ENOMEM;
    sp->f = p;
    sp->cap = cap;
  }
  factor *nf = &sp->f[sp->nf];
  nf->kind = kind;
  nf->q_off = sp->nq;
  nf->nq = nq;
  nf->v_off = sp->nv;
  nf->nv = nv;

  size_t save_pos = sp->run_pos, save_len = sp->name_len;
  int save_count = sp->run_count;
  if (same) {
    sp->run_count++;
  } else {
    if (have_last) {
      if (name_reserve(sp, sp->name_len + 2)) return LV_ENOMEM;
      sp->name[sp->name_len++] = 'x';
      sp->name[sp->name_len] = '\0';
    }
    sp->run_pos = sp->name_len;
    sp->run_count = 1;
  }
  int rc = rewrite_run(sp, nf);
  if (rc) {
    sp->run_pos = save_pos;
    sp->run_count = save_count;
    sp->name_len = save_len;
    sp->name[save_len] = '\0';
    return rc;
  }
  sp->nf++;
  sp->nq += nq;
  sp->nv += nv;
  if (kind != LV_FACTOR_RN) sp->nonlinear++;
  return 0;
}

int lv_space_nq(const lv_space *sp) { return sp ? sp->nq : 0; }
int lv_space_nv(const lv_space *sp) { return sp ? sp->nv : 0; }
int lv_space_nfactors(const lv_space *sp) { return sp ? sp->nf : 0; }
int lv_space_is_linear(const lv_space *sp) { return sp ? sp->nonlinear == 0 : 0; }

const char *lv_space_name(const lv_space *sp) {
  if (!sp) return "";
  return sp->nf ? sp->name : "R^0";
}

int lv_space_factor(const lv_space *sp, int i, lv_factor_kind *kind, int *q_off,
                    int *nq, int *v_off, int *nv) {
  if (!sp || i < 0 || i >= sp->nf) return LV_EINPUT;
  const factor *f = &sp->f[i];
  if (kind) *kind = f->kind;
  if (q_off) *q_off = f->q_off;
  if (nq) *nq = f->nq;
  if (v_off) *v_off = f->v_off;
  if (nv) *nv = f->nv;
  return 0;
}

/* ------------------------------------------------------------ group maps */

int lv_space_compose_exp(const lv_space *sp, const double *q, double h,
                         const double *v, double *q_out) {
  if (!sp || !q || !v || !q_out) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    const double *qi = q + f->q_off, *vi = v + f->v_off;
    double *qo = q_out + f->q_off;
    double w[6], R[9], x[3];
    switch (f->kind) {
      case LV_FACTOR_RN:
        for (int j = 0; j < f->nq; j++) qo[j] = qi[j] + h * vi[j];
        break;
      case LV_FACTOR_SO3:
        for (int j = 0; j < 3; j++) w[j] = h * vi[j];
        lv_so3_exp(w, R);
        lv_lg_mat3_mul(qi, R, qo);
        break;
      case LV_FACTOR_S3: {
        double dq[4];
        for (int j = 0; j < 3; j++) w[j] = h * vi[j];
        lv_lg_quat_exp(w, dq);
        lv_lg_quat_mul(qi, dq, qo);
        break;
      }
      case LV_FACTOR_R3SO3:
        for (int j = 0; j < 3; j++) qo[j] = qi[j] + h * vi[j];
        for (int j = 0; j < 3; j++) w[j] = h * vi[3 + j];
        lv_so3_exp(w, R);
        lv_lg_mat3_mul(qi + 3, R, qo + 3);
        break;
      case LV_FACTOR_SE3:
        for (int j = 0; j < 6; j++) w[j] = h * vi[j];
        lv_lg_se3_exp(w, x, R);
        lv_lg_mat3_vec(qi + 3, x, x);
        for (int j = 0; j < 3; j++) qo[j] = qi[j] + x[j];
        lv_lg_mat3_mul(qi + 3, R, qo + 3);
        break;
    }
  }
  return 0;
}

int lv_space_log(const lv_space *sp, const double *q0, const double *q1,
                 double *v) {
  if (!sp || !q0 || !q1 || !v) return LV_EINPUT;
  int at_pi = 0;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    const double *a = q0 + f->q_off, *b = q1 + f->q_off;
    double *vi = v + f->v_off;
    double R[9], x[3];
    switch (f->kind) {
      case LV_FACTOR_RN:
        for (int j = 0; j < f->nq; j++) vi[j] = b[j] - a[j];
        break;
      case LV_FACTOR_SO3:
        lv_lg_mat3_tmul(a, b, R);
        at_pi |= lv_lg_so3_log(R, vi);
        break;
      case LV_FACTOR_S3: {
        double ac[4] = {a[0], -a[1], -a[2], -a[3]}, p[4];
        lv_lg_quat_mul(ac, b, p);
        at_pi |= lv_lg_quat_log(p, vi);
        break;
      }
      case LV_FACTOR_R3SO3:
        for (int j = 0; j < 3; j++) vi[j] = b[j] - a[j];
        lv_lg_mat3_tmul(a + 3, b + 3, R);
        at_pi |= lv_lg_so3_log(R, vi + 3);
        break;
      case LV_FACTOR_SE3:
        /* q0^{-1} q1 = (R0^T (x1 - x0), R0^T R1) */
        for (int j = 0; j < 3; j++) x[j] = b[j] - a[j];
        lv_lg_mat3_tvec(a + 3, x, x);
        lv_lg_mat3_tmul(a + 3, b + 3, R);
        at_pi |= lv_lg_se3_log(x, R, vi);
        break;
    }
  }
  return at_pi ? LV_EINPUT : 0;
}

int lv_space_identity(const lv_space *sp, double *q) {
  if (!sp || !q) return LV_EINPUT;
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    double *qi = q + f->q_off;
    for (int j = 0; j < f->nq; j++) qi[j] = 0.0;
    switch (f->kind) {
      case LV_FACTOR_SO3: memcpy(qi, I3, sizeof I3); break;
      case LV_FACTOR_S3: qi[0] = 1.0; break;
      case LV_FACTOR_R3SO3:
      case LV_FACTOR_SE3: memcpy(qi + 3, I3, sizeof I3); break;
      default: break;
    }
  }
  return 0;
}

/* ------------------------------------------------------------ tangent */

/* Add a 3x3 row-major block at (r0, c0), all nine entries (zeros included)
 * so that the sparsity pattern does not depend on v. */
static int add_block3(lv_sink *T, int r0, int c0, const double *B, int ldb) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(T, r0 + i, c0 + j, B[ldb * i + j]));
  return 0;
}

int lv_space_tangent(const lv_space *sp, const double *v, struct lv_sink *T) {
  if (!sp || !v || !T) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    const double *vi = v + f->v_off;
    int o = f->v_off;
    double M[36];
    switch (f->kind) {
      case LV_FACTOR_RN:
        for (int j = 0; j < f->nv; j++) LV_CHECK(lv_sink_add(T, o + j, o + j, 1.0));
        break;
      case LV_FACTOR_SO3:
      case LV_FACTOR_S3:
        lv_so3_tangent(vi, M);
        LV_CHECK(add_block3(T, o, o, M, 3));
        break;
      case LV_FACTOR_R3SO3:
        for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(T, o + j, o + j, 1.0));
        lv_so3_tangent(vi + 3, M);
        LV_CHECK(add_block3(T, o + 3, o + 3, M, 3));
        break;
      case LV_FACTOR_SE3:
        /* The lower-left block is structurally zero and is not added. */
        lv_lg_se3_tangent(vi, M);
        LV_CHECK(add_block3(T, o, o, M, 6));
        LV_CHECK(add_block3(T, o, o + 3, M + 3, 6));
        LV_CHECK(add_block3(T, o + 3, o + 3, M + 21, 6));
        break;
    }
  }
  return 0;
}

/* y = T(v) x or T(v)^-1 x factor by factor (y may alias x). */
typedef void (*tangent_fn)(const double *w, const double *x, double *y);

static int tangent_apply(const lv_space *sp, const double *v, const double *x, double *y, tangent_fn so3,
                         tangent_fn se3) {
  if (!sp || !v || !x || !y) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    const double *vi = v + f->v_off, *xi = x + f->v_off;
    double *yi = y + f->v_off;
    switch (f->kind) {
      case LV_FACTOR_RN:
        if (yi != xi) memmove(yi, xi, (size_t)f->nv * sizeof *yi);
        break;
      case LV_FACTOR_SO3:
      case LV_FACTOR_S3:
        so3(vi, xi, yi);
        break;
      case LV_FACTOR_R3SO3:
        for (int j = 0; j < 3; j++) yi[j] = xi[j];
        so3(vi + 3, xi + 3, yi + 3);
        break;
      case LV_FACTOR_SE3:
        se3(vi, xi, yi);
        break;
    }
  }
  return 0;
}

int lv_space_tangent_apply(const lv_space *sp, const double *v, const double *x, double *y) {
  return tangent_apply(sp, v, x, y, lv_lg_so3_tangent_apply, lv_lg_se3_tangent_apply);
}

int lv_space_tangent_inv_apply(const lv_space *sp, const double *v, const double *x, double *y) {
  return tangent_apply(sp, v, x, y, lv_lg_so3_tangent_inv_apply, lv_lg_se3_tangent_inv_apply);
}

/* SE(3): the rotational rows y_psi = T_SO3(psi)^{-1} x_psi are analytic;
 * the translational rows y_U = T^{-1}(x_U - T_Upsi y_psi) by central
 * differences (linear in U, so exact there up to round-off; relative
 * error ~1e-10 in the psi columns). */
static int se3_inv_deriv(const double *w, const double *x0, double *y, lv_sink *D, int o) {
  double Dr[9], w1[6], yp[6], ym[6], B[18], x[6];
  memcpy(x, x0, sizeof x); /* y may alias x0 */
  lv_lg_se3_tangent_inv_apply(w, x, y);
  lv_lg_so3_tangent_inv_deriv(w + 3, x + 3, yp + 3, Dr, NULL);
  for (int j = 0; j < 6; j++) {
    double st = cbrt(DBL_EPSILON) * fmax(1.0, fabs(w[j]));
    memcpy(w1, w, sizeof w1);
    w1[j] = w[j] + st;
    st = w1[j] - w[j];
    lv_lg_se3_tangent_inv_apply(w1, x, yp);
    w1[j] = w[j] - st;
    lv_lg_se3_tangent_inv_apply(w1, x, ym);
    for (int i = 0; i < 3; i++) B[6 * i + j] = (yp[i] - ym[i]) / (2.0 * st);
  }
  LV_CHECK(add_block3(D, o, o, B, 6));
  LV_CHECK(add_block3(D, o, o + 3, B + 3, 6));
  return add_block3(D, o + 3, o + 3, Dr, 3);
}

int lv_space_tangent_inv_deriv(const lv_space *sp, const double *v, const double *x, double *y,
                               struct lv_sink *D) {
  if (!sp || !v || !x || !y || !D) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    const double *vi = v + f->v_off, *xi = x + f->v_off;
    double *yi = y + f->v_off, M[9];
    int o = f->v_off;
    switch (f->kind) {
      case LV_FACTOR_RN:
        if (yi != xi) memmove(yi, xi, (size_t)f->nv * sizeof *yi);
        break;
      case LV_FACTOR_SO3:
      case LV_FACTOR_S3:
        lv_lg_so3_tangent_inv_deriv(vi, xi, yi, M, NULL);
        LV_CHECK(add_block3(D, o, o, M, 3));
        break;
      case LV_FACTOR_R3SO3:
        for (int j = 0; j < 3; j++) yi[j] = xi[j];
        lv_lg_so3_tangent_inv_deriv(vi + 3, xi + 3, yi + 3, M, NULL);
        LV_CHECK(add_block3(D, o + 3, o + 3, M, 3));
        break;
      case LV_FACTOR_SE3:
        LV_CHECK(se3_inv_deriv(vi, xi, yi, D, o));
        break;
    }
  }
  return 0;
}

int lv_space_ad(const lv_space *sp, const double *v, const double *x,
                double *y) {
  if (!sp || !v || !x || !y) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    const double *vi = v + f->v_off, *xi = x + f->v_off;
    double *yi = y + f->v_off;
    switch (f->kind) {
      case LV_FACTOR_RN:
        for (int j = 0; j < f->nv; j++) yi[j] = 0.0;
        break;
      case LV_FACTOR_SO3:
      case LV_FACTOR_S3:
        lv_lg_cross(vi, xi, yi);
        break;
      case LV_FACTOR_R3SO3:
        lv_lg_cross(vi + 3, xi + 3, yi + 3);
        for (int j = 0; j < 3; j++) yi[j] = 0.0;
        break;
      case LV_FACTOR_SE3:
        lv_lg_se3_ad_apply(vi, xi, yi);
        break;
    }
  }
  return 0;
}

int lv_space_normalize(const lv_space *sp, double *q) {
  if (!sp || !q) return LV_EINPUT;
  int status = 0;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    double *qi = q + f->q_off;
    int rc = 0;
    switch (f->kind) {
      case LV_FACTOR_RN: break;
      case LV_FACTOR_SO3: rc = lv_lg_so3_normalize(qi); break;
      case LV_FACTOR_S3: rc = lv_lg_quat_normalize(qi); break;
      case LV_FACTOR_R3SO3:
      case LV_FACTOR_SE3: rc = lv_lg_so3_normalize(qi + 3); break;
    }
    /* Keep going: one degenerate factor should not leave the others drifting. */
    if (rc && !status) status = rc;
  }
  return status;
}
