/* Test reference (tests only, not in the library): the model as it was
 * written by hand before the built-in model was described on the
 * multibody layer (models/four_particle.c); check_mbs.c compares the two.
 */
/* The four-particle system of Gonzalez (1999), seed 003 §6.3 / spec §3.3:
 * four point masses in R^3, q = (q1, q2, q3, q4) in R^12, no gravity.
 *   springs 1-3 and 2-4:  V = 1/2 k13 (|q3-q1|^2 - l13^2)^2 + 1/2 k24 (|q4-q2|^2 - l24^2)^2
 *   rigid bars 1-2, 3-4:  g1 = 1/2 (|q2-q1|^2 / l12^2 - 1),  g2 = 1/2 (|q4-q3|^2 / l34^2 - 1)
 * Six symmetry generators, in this order: translations along e1, e2, e3
 * (momentum maps = total linear momentum L) and rotations about e1, e2, e3
 * (momentum maps = total angular momentum J = sum q_i x p_i).
 * The potential is also given through its quadratic invariants
 * pi_1 = |q3-q1|^2, pi_2 = |q4-q2|^2 (eq. (122); the paper prints
 * pi_2 = |q4-q3|^2, a typo: it must match the spring 2-4 of (116)), for the
 * invariant-based discrete gradient (126) of the energy-momentum schemes. */
#include "lv_internal.h"
#include "models/models.h"
#include "refmodels.h"

typedef struct {
  double mass[4];
  double k13, k24, l13, l24, l12, l34;
} fourp;

static int mass(const double *q, lv_sink *M, void *u) {
  const fourp *F = u;
  (void)q;
  for (int i = 0; i < 12; i++) LV_CHECK(lv_sink_add(M, i, i, F->mass[i / 3]));
  return 0;
}

/* spring between particles i and j (0-based): r = q_j - q_i */
static double spring_c(const double *q, int i, int j, double k, double l, double *r) {
  double s = 0.0;
  for (int c = 0; c < 3; c++) {
    r[c] = q[3 * j + c] - q[3 * i + c];
    s += r[c] * r[c];
  }
  return k * (s - l * l); /* = Vt'(pi) */
}

static int potential(const double *q, double *V, void *u) {
  const fourp *F = u;
  double r[3];
  double e1 = spring_c(q, 0, 2, 1.0, F->l13, r); /* pi_1 - l13^2 */
  double e2 = spring_c(q, 1, 3, 1.0, F->l24, r);
  *V = 0.5 * F->k13 * e1 * e1 + 0.5 * F->k24 * e2 * e2;
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const fourp *F = u;
  double r[3];
  memset(dV, 0, 12 * sizeof(double));
  double c = spring_c(q, 0, 2, F->k13, F->l13, r);
  for (int k = 0; k < 3; k++) {
    dV[6 + k] += 2.0 * c * r[k];
    dV[k] -= 2.0 * c * r[k];
  }
  c = spring_c(q, 1, 3, F->k24, F->l24, r);
  for (int k = 0; k < 3; k++) {
    dV[9 + k] += 2.0 * c * r[k];
    dV[3 + k] -= 2.0 * c * r[k];
  }
  return 0;
}

/* d2/dr2 [1/2 k (|r|^2 - l^2)^2] = 2 c I + 4 k r r^T, in blocks [K -K; -K K] */
static int spring_hess(const double *q, int i, int j, double k, double l, lv_sink *H) {
  double r[3];
  double c = spring_c(q, i, j, k, l, r);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double K = 4.0 * k * r[a] * r[b] + (a == b ? 2.0 * c : 0.0);
      LV_CHECK(lv_sink_add(H, 3 * i + a, 3 * i + b, K));
      LV_CHECK(lv_sink_add(H, 3 * j + a, 3 * j + b, K));
      LV_CHECK(lv_sink_add(H, 3 * i + a, 3 * j + b, -K));
      LV_CHECK(lv_sink_add(H, 3 * j + a, 3 * i + b, -K));
    }
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  const fourp *F = u;
  LV_CHECK(spring_hess(q, 0, 2, F->k13, F->l13, H));
  return spring_hess(q, 1, 3, F->k24, F->l24, H);
}

/* bar k joins particles (2k, 2k+1) */
static double bar_len2(const fourp *F, int k) { return k == 0 ? F->l12 * F->l12 : F->l34 * F->l34; }

static int constr(const double *q, double *g, void *u) {
  const fourp *F = u;
  for (int k = 0; k < 2; k++) {
    double s = 0.0;
    for (int c = 0; c < 3; c++) {
      double r = q[3 * (2 * k + 1) + c] - q[3 * (2 * k) + c];
      s += r * r;
    }
    g[k] = 0.5 * (s / bar_len2(F, k) - 1.0);
  }
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  const fourp *F = u;
  for (int k = 0; k < 2; k++) {
    int i = 2 * k, j = 2 * k + 1;
    double L2 = bar_len2(F, k);
    for (int c = 0; c < 3; c++) {
      double r = (q[3 * j + c] - q[3 * i + c]) / L2;
      LV_CHECK(lv_sink_add(G, k, 3 * i + c, -r));
      LV_CHECK(lv_sink_add(G, k, 3 * j + c, r));
    }
  }
  return 0;
}

static int chess(const double *q, const double *gam, lv_sink *H, void *u) {
  const fourp *F = u;
  (void)q;
  for (int k = 0; k < 2; k++) {
    int i = 2 * k, j = 2 * k + 1;
    double c = gam[k] / bar_len2(F, k);
    for (int a = 0; a < 3; a++) {
      LV_CHECK(lv_sink_add(H, 3 * i + a, 3 * i + a, c));
      LV_CHECK(lv_sink_add(H, 3 * j + a, 3 * j + a, c));
      LV_CHECK(lv_sink_add(H, 3 * i + a, 3 * j + a, -c));
      LV_CHECK(lv_sink_add(H, 3 * j + a, 3 * i + a, -c));
    }
  }
  return 0;
}

static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  const fourp *F = u;
  (void)q;
  for (int k = 0; k < 2; k++) {
    int i = 2 * k, j = 2 * k + 1;
    double L2 = bar_len2(F, k);
    for (int c = 0; c < 3; c++) {
      double dw = (w[3 * j + c] - w[3 * i + c]) / L2;
      LV_CHECK(lv_sink_add(Z, k, 3 * i + c, -dw));
      LV_CHECK(lv_sink_add(Z, k, 3 * j + c, dw));
    }
  }
  return 0;
}

static int sym(int k, const double *q, double *xi, void *u) {
  (void)u;
  for (int i = 0; i < 4; i++) {
    const double *x = q + 3 * i;
    double *o = xi + 3 * i;
    switch (k) {
      case 0: case 1: case 2:
        o[0] = o[1] = o[2] = 0.0;
        o[k] = 1.0;
        break;
      case 3: /* e1 x x */
        o[0] = 0.0, o[1] = -x[2], o[2] = x[1];
        break;
      case 4: /* e2 x x */
        o[0] = x[2], o[1] = 0.0, o[2] = -x[0];
        break;
      case 5: /* e3 x x */
        o[0] = -x[1], o[1] = x[0], o[2] = 0.0;
        break;
      default:
        return 1;
    }
  }
  return 0;
}

/* ---- invariants of the potential ---- */

static int inv(const double *q, double *pi, void *u) {
  (void)u;
  double r[3];
  double s1 = spring_c(q, 0, 2, 1.0, 0.0, r);
  double s2 = spring_c(q, 1, 3, 1.0, 0.0, r);
  pi[0] = s1;
  pi[1] = s2;
  return 0;
}

static int dinv(const double *q, lv_sink *D, void *u) {
  (void)u;
  double r[3];
  spring_c(q, 0, 2, 1.0, 0.0, r);
  for (int c = 0; c < 3; c++) {
    LV_CHECK(lv_sink_add(D, 0, c, -2.0 * r[c]));
    LV_CHECK(lv_sink_add(D, 0, 6 + c, 2.0 * r[c]));
  }
  spring_c(q, 1, 3, 1.0, 0.0, r);
  for (int c = 0; c < 3; c++) {
    LV_CHECK(lv_sink_add(D, 1, 3 + c, -2.0 * r[c]));
    LV_CHECK(lv_sink_add(D, 1, 9 + c, 2.0 * r[c]));
  }
  return 0;
}

static int inv_pot(const double *pi, double *vt, double *dvt, void *u) {
  const fourp *F = u;
  double e1 = pi[0] - F->l13 * F->l13, e2 = pi[1] - F->l24 * F->l24;
  vt[0] = 0.5 * F->k13 * e1 * e1;
  vt[1] = 0.5 * F->k24 * e2 * e2;
  dvt[0] = F->k13 * e1;
  dvt[1] = F->k24 * e2;
  return 0;
}


int ref_four_particle(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  const lv_param_info *params = ref_params("four-particle");
  if (!params) return LV_EUNKNOWN;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  fourp *F = lv_calloc(1, sizeof *F);
  if (!F) return LV_ENOMEM;
  double *fields[] = {&F->mass[0], &F->mass[1], &F->mass[2], &F->mass[3], &F->k13,
                      &F->k24,     &F->l13,     &F->l24,     &F->l12,     &F->l34};
  double x0[24];
  int rc = 0;
  for (int i = 0; i < 10 && !rc; i++) rc = lv_kv_double(kv, params[i].name, atof(params[i].default_value), fields[i]);
  for (int i = 0; i < 24 && !rc; i++) {
    double def = i == 23 ? 2.0 / 1.7 : atof(params[10 + i].default_value);
    rc = lv_kv_double(kv, params[10 + i].name, def, &x0[i]);
  }
  for (int i = 0; i < 4 && !rc; i++)
    if (!(F->mass[i] > 0)) rc = LV_EINPUT;
  if (!rc && (!(F->k13 >= 0) || !(F->k24 >= 0) || !(F->l13 >= 0) || !(F->l24 >= 0) || !(F->l12 > 0) ||
              !(F->l34 > 0)))
    rc = LV_EINPUT;
  if (rc) {
    free(F);
    return rc;
  }
  lv_model *m = NULL;
  LV_CHECK(lv_models_build(&m, "four-particle", 12, 2, F, free, mass, 1, potential, grad, hess, constr, jac,
                           chess, curv, 6, sym, x0, x0 + 12));
  rc = lv_model_set_invariants(m, 2, inv, dinv, inv_pot);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
