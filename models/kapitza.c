/* Kapitza's pendulum: a planar pendulum whose support is moved up and down
 * by a prescribed motion, the built-in example of driving constraints
 * (lv_model_set_driving):
 *   q = (xs, ys, x, y) in R^4 (support, bob),  M = diag(ms, ms, m, m),
 *   V = g0 (ms ys + m y),
 *   g(q) = (xs, ys, ((x - xs)^2 + (y - ys)^2 - l^2) / 2) = c(t) = (0, A cos(omega t), 0).
 * The support's motion is prescribed, so its mass ms only enters the
 * multipliers.  Started upside down, theta0 from the upright position, at
 * rest: for A^2 omega^2 > 2 g0 l (Kapitza's criterion, averaging over the
 * fast drive) the upright position is stable and the bob swings about it;
 * below, it falls. */
#include "lv_internal.h"
#include "models/models.h"

typedef struct {
  double m, ms, l, grav, amp, omega;
} kap;

static int mass(const double *q, lv_sink *M, void *u) {
  const kap *K = u;
  (void)q;
  for (int i = 0; i < 4; i++) LV_CHECK(lv_sink_add(M, i, i, i < 2 ? K->ms : K->m));
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const kap *K = u;
  *V = K->grav * (K->ms * q[1] + K->m * q[3]);
  return 0;
}

static int grad(const double *q, double *dV, void *u) {
  const kap *K = u;
  (void)q;
  dV[0] = dV[2] = 0.0;
  dV[1] = K->grav * K->ms;
  dV[3] = K->grav * K->m;
  return 0;
}

static int hess(const double *q, lv_sink *H, void *u) {
  (void)q, (void)H, (void)u;
  return 0; /* linear potential */
}

static int constr(const double *q, double *g, void *u) {
  const kap *K = u;
  double dx = q[2] - q[0], dy = q[3] - q[1];
  g[0] = q[0];
  g[1] = q[1];
  g[2] = 0.5 * (dx * dx + dy * dy - K->l * K->l);
  return 0;
}

static int jac(const double *q, lv_sink *G, void *u) {
  (void)u;
  double dx = q[2] - q[0], dy = q[3] - q[1];
  LV_CHECK(lv_sink_add(G, 0, 0, 1.0));
  LV_CHECK(lv_sink_add(G, 1, 1, 1.0));
  LV_CHECK(lv_sink_add(G, 2, 0, -dx));
  LV_CHECK(lv_sink_add(G, 2, 1, -dy));
  LV_CHECK(lv_sink_add(G, 2, 2, dx));
  return lv_sink_add(G, 2, 3, dy);
}

/* D_q (G^T gamma) = gamma_3 D^2 g_3, D^2 g_3 = [I -I; -I I] in (support, bob) */
static int chess(const double *q, const double *gam, lv_sink *H, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 4; i++) LV_CHECK(lv_sink_add(H, i, i, gam[2]));
  for (int i = 0; i < 2; i++) {
    LV_CHECK(lv_sink_add(H, i, i + 2, -gam[2]));
    LV_CHECK(lv_sink_add(H, i + 2, i, -gam[2]));
  }
  return 0;
}

/* D_q (G w): only row 3, G_3 w = dx (w_x - w_xs) + dy (w_y - w_ys) */
static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  (void)q, (void)u;
  double a = w[2] - w[0], b = w[3] - w[1];
  LV_CHECK(lv_sink_add(Z, 2, 0, -a));
  LV_CHECK(lv_sink_add(Z, 2, 1, -b));
  LV_CHECK(lv_sink_add(Z, 2, 2, a));
  return lv_sink_add(Z, 2, 3, b);
}

/* c(t) = (0, A cos(omega t), 0) and its first two derivatives, exact */
static int drive(double t, int order, double *c, void *u) {
  const kap *K = u;
  double w = K->omega, ph = w * t;
  c[0] = c[2] = 0.0;
  c[1] = order == 0 ? K->amp * cos(ph) : order == 1 ? -K->amp * w * sin(ph) : -K->amp * w * w * cos(ph);
  return 0;
}

static const lv_param_info params[] = {
    {"m", "1", "mass of the bob"},
    {"support-mass", "1", "mass of the support (its motion is prescribed: it only enters the multipliers)"},
    {"l", "1", "rod length"},
    {"gravity", "9.81", "gravitational acceleration (along -y)"},
    {"amplitude", "0.1", "amplitude A of the support's vertical motion ys = A cos(omega t)"},
    {"omega", "60", "angular frequency omega of the drive (upright stable for A^2 omega^2 > 2 g l)"},
    {"theta0", "0.3", "initial angle from the upright position (rad); bob and support start at rest"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  kap *K = lv_calloc(1, sizeof *K);
  if (!K) return LV_ENOMEM;
  double th;
  int rc = lv_kv_double(kv, "m", 1.0, &K->m);
  if (!rc) rc = lv_kv_double(kv, "support-mass", 1.0, &K->ms);
  if (!rc) rc = lv_kv_double(kv, "l", 1.0, &K->l);
  if (!rc) rc = lv_kv_double(kv, "gravity", 9.81, &K->grav);
  if (!rc) rc = lv_kv_double(kv, "amplitude", 0.1, &K->amp);
  if (!rc) rc = lv_kv_double(kv, "omega", 60.0, &K->omega);
  if (!rc) rc = lv_kv_double(kv, "theta0", 0.3, &th);
  if (!rc && (!(K->m > 0) || !(K->ms > 0) || !(K->l > 0) || !isfinite(K->grav) || !isfinite(K->amp) ||
              !isfinite(K->omega) || !isfinite(th)))
    rc = LV_EINPUT;
  if (rc) {
    free(K);
    return rc;
  }
  double q0[4] = {0.0, K->amp, K->l * sin(th), K->amp + K->l * cos(th)}, v0[4] = {0, 0, 0, 0};
  rc = lv_models_build(out, "kapitza", 4, 3, K, free, mass, 1, potential, grad, hess, constr, jac, chess, curv, 0,
                       NULL, q0, v0);
  if (!rc) rc = lv_model_set_driving(*out, drive);
  if (rc && *out) {
    lv_model_free(*out);
    *out = NULL;
  }
  return rc;
}

const lv_model_info lv_model_kapitza = {
    "kapitza", "Kapitza's pendulum: the support driven up and down, ys = A cos(omega t) (driving constraints: "
    "genalpha only); started near upright",
    params, create};
