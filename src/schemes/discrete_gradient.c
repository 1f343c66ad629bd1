/* Discrete gradients (see lv_dgrad.h for the mathematics and guarantees).
 *
 * Rounding guards.  Every discrete gradient here is "midpoint derivative +
 * correction", where the correction is a bracket (a Taylor remainder of
 * size O(|y-x|^3)) divided by |y-x|^2 or by Delta pi.  Computed brackets
 * carry the rounding errors of their terms; dividing those by a small
 * number would turn round-off into an O(1) force.  Two guards:
 *   - a bracket below DG_NOISE * eps * (sum of the magnitudes of its terms)
 *     is round-off and is dropped (the directionality defect left behind is
 *     then itself at the rounding level);
 *   - one-dimensional quotients switch to Simpson's rule for
 *     |Delta pi| <= DG_SMALL (|a| + |b|), which never divides at all.
 * The magnitude of a scalar function's terms is estimated as
 * |f(x)| + |f(y)| + sum_i |Df_i(z)| (|z_i| + |Delta_i|): the last sum stands
 * in for the internal cancellation of f itself (a constraint
 * 1/2 (|x|^2 - 1) is ~0 but is computed from terms of size |x|^2).
 *
 * Classification.  lv_dgrad_new probes the model once at three pairs of
 * points near q0 (a quarter of the configuration's scale apart; a model
 * that cannot be evaluated there is classified as general): a bracket
 * below 1e-11 of its terms' magnitude at such separations means the
 * function is quadratic, the midpoint derivative is exact and no
 * correction is ever computed.  A function misclassified that way would
 * have third derivatives ~1e-11 of its scale; its directionality defect at
 * a step of 1/100 of that scale is then ~6e-16 relative: round-off. */
#include <float.h>
#include "schemes/discrete_gradient.h"

#define DG_NOISE 16.0
#define DG_SMALL 1e-4
/* Below this relative |Delta pi| the derivative of the quotient is formed by
 * a separate central difference of Vt' instead of from Vt'(b) - Vt'(a). */
#define DG_FD_SWITCH 1e-6
/* Tolerances of the classification probes (relative to the magnitudes of
 * the terms): a bracket this small at O(1) separations means "quadratic". */
#define DG_PROBE_TOL 1e-11
#define DG_PROBE_PAIRS 3

double lv_dg_coef(double bracket, double scale, double dd) {
  if (!(dd > 0.0) || !isfinite(bracket)) return 0.0;
  if (fabs(bracket) <= DG_NOISE * DBL_EPSILON * scale) return 0.0;
  double c = bracket / dd;
  return isfinite(c) ? c : 0.0;
}

double lv_dg_quot(double a, double b, double fa, double fb, double dfa, double dfm, double dfb,
                  double *cp, int *needs_fd) {
  double dl = b - a, s = fabs(a) + fabs(b);
  if (needs_fd) *needs_fd = 0;
  if (dl == 0.0 || fabs(dl) <= DG_SMALL * s) {
    /* Simpson's rule for (1/dl) int_a^b f'(t) dt. */
    double c = (dfa + 4.0 * dfm + dfb) / 6.0;
    if (cp) {
      if (fabs(dl) > DG_FD_SWITCH * s) {
        *cp = (dfb - dfa) / (2.0 * dl); /* ~ f''(m)/2, the derivative of c in b */
      } else {
        *cp = 0.0;
        if (needs_fd) *needs_fd = 1;
      }
    }
    return c;
  }
  double r = fb - fa - dfm * dl;
  double scale = fabs(fa) + fabs(fb) + fabs(dfm) * (s + fabs(dl));
  double c = dfm;
  if (fabs(r) > DG_NOISE * DBL_EPSILON * scale) c += r / dl;
  if (cp) *cp = (dfb - c) / dl; /* exact derivative of (f(b) - f(a)) / (b - a) */
  return c;
}

double lv_dgrad_quotient(double a, double b, double fa, double fb, double dfa, double dfm,
                         double dfb) {
  return lv_dg_quot(a, b, fa, fb, dfa, dfm, dfb, NULL, NULL);
}

int lv_dgrad_gonzalez(int n, const double *x, const double *y, double fx, double fy,
                      const double *dfz, double *out) {
  if (n < 1 || !x || !y || !dfz || !out) return LV_EINPUT;
  double br = fy - fx, scale = fabs(fx) + fabs(fy), dd = 0.0;
  for (int i = 0; i < n; i++) {
    double dl = y[i] - x[i], z = 0.5 * (x[i] + y[i]);
    br -= dfz[i] * dl;
    scale += fabs(dfz[i]) * (fabs(z) + fabs(dl));
    dd += dl * dl;
  }
  double beta = lv_dg_coef(br, scale, dd);
  for (int i = 0; i < n; i++) out[i] = dfz[i] + beta * (y[i] - x[i]);
  return 0;
}

/* -------------------------------------------------------- group orbits */

void lv_dg_mgs(int d, int nb, const double *B, double *v, double *c) {
  if (c)
    for (int j = 0; j < nb; j++) c[j] = 0.0;
  for (int pass = 0; pass < 2; pass++)
    for (int j = 0; j < nb; j++) {
      const double *b = B + (size_t)j * d;
      double cj = lv_vdot(d, b, v);
      if (c) c[j] += cj;
      for (int i = 0; i < d; i++) v[i] -= cj * b[i];
    }
}

int lv_dg_orbit(lv_dgrad *dg, const double *z, const double *dl, double *w) {
  int d = dg->d;
  dg->nxb = 0;
  memcpy(w, dl, (size_t)d * sizeof(double));
  for (int k = 0; k < dg->nsym; k++) {
    double *e = dg->xb + (size_t)dg->nxb * d;
    LV_CHECK(lv_model_symmetry(dg->m, k, z, e));
    double n0 = sqrt(lv_vdot(d, e, e));
    if (!(n0 > 0.0)) continue;
    lv_dg_mgs(d, dg->nxb, dg->xb, e, NULL);
    double n1 = sqrt(lv_vdot(d, e, e));
    if (!(n1 > 1e-10 * n0)) continue; /* dependent on the earlier ones here */
    for (int i = 0; i < d; i++) e[i] /= n1;
    dg->nxb++;
  }
  lv_dg_mgs(d, dg->nxb, dg->xb, w, NULL);
  return 0;
}

void lv_dg_add_projector(const lv_dgrad *dg, double s, double *B) {
  int d = dg->d;
  if (s == 0.0) return;
  for (int j = 0; j < d; j++) {
    B[(size_t)j + (size_t)j * d] += s;
    for (int k = 0; k < dg->nxb; k++) {
      const double *b = dg->xb + (size_t)k * d;
      double f = s * b[j];
      if (f == 0.0) continue;
      for (int i = 0; i < d; i++) B[(size_t)i + (size_t)j * d] -= f * b[i];
    }
  }
}

/* ------------------------------------------------------------------ sinks */

/* Records the entries of a matrix callback as triplets.  In the first
 * (growing) pass it learns the positions; afterwards it only accepts the
 * same positions in the same order (the sink contract of lv_model.h). */
typedef struct {
  lv_sink s;
  int n, cap, fixed, bad;
  int nonfinite; /* a non-finite value was added (lv_model_matrix_flagged's flag) */
  int *row, *col;
  double *val;
} cap_sink;

LV_ALWAYS_INLINE int cap_add1(lv_sink *s, int i, int j, double v) {
  cap_sink *c = (cap_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  if (!isfinite(v)) {
    c->bad = LV_ENONFINITE;
    c->nonfinite = 1;
    return LV_ENONFINITE;
  }
  if (c->fixed) {
    if (c->n >= c->cap || c->row[c->n] != i || c->col[c->n] != j) {
      c->bad = LV_EPATTERN;
      return LV_EPATTERN;
    }
    c->val[c->n++] = v;
    return 0;
  }
  if (c->n == c->cap) {
    int nc = c->cap ? 2 * c->cap : 64;
    int *r = realloc(c->row, (size_t)nc * sizeof *r);
    if (r) c->row = r;
    int *cc = realloc(c->col, (size_t)nc * sizeof *cc);
    if (cc) c->col = cc;
    double *vv = realloc(c->val, (size_t)nc * sizeof *vv);
    if (vv) c->val = vv;
    if (!r || !cc || !vv) {
      c->bad = LV_ENOMEM;
      return LV_ENOMEM;
    }
    c->cap = nc;
  }
  c->row[c->n] = i;
  c->col[c->n] = j;
  c->val[c->n++] = v;
  return 0;
}

static int cap_add(lv_sink *s, int i, int j, double v) { return cap_add1(s, i, j, v); }

/* lv_sink_add_block: cap_add of each entry in the block's order, inlined */
LV_SINK_ADD_BLOCK_INLINE(static, cap_add_block, cap_add1, cap_add)

static void cap_init(cap_sink *c, int nrows, int ncols) {
  memset(c, 0, sizeof *c);
  c->s.add = cap_add;
  c->s.add_block = cap_add_block;
  c->s.target = c;
  c->s.nrows = nrows;
  c->s.ncols = ncols;
  c->s.scale = 1.0;
}

/* ------------------------------------------------------- model evaluation */

/* The invariants through the model layer, which checks the results and
 * records a failure like every other evaluation. */
static int inv_eval(const lv_dgrad *dg, const double *q, double *pi) {
  return lv_model_invariants(dg->m, q, pi);
}

static int vt_eval(const lv_dgrad *dg, const double *pi, double *vt, double *dvt) {
  return lv_model_invariant_potential(dg->m, pi, vt, dvt);
}

/* Invariant gradients at q into vals, in the learnt triplet order (the
 * capture checks each value itself: the callback without the model's
 * finiteness wrapper, which names a non-finite entry on a rerun). */
static int dpi_eval(const lv_dgrad *dg, const double *q, double *vals) {
  cap_sink c;
  cap_init(&c, dg->ninv, dg->d);
  c.fixed = 1;
  c.cap = dg->nnz;
  c.row = dg->trow;
  c.col = dg->tcol;
  c.val = vals;
  int rc = lv_model_matrix_flagged(dg->m, LV_MX_DINV, 0.0, q, NULL, NULL, &c.s, &c.nonfinite);
  if (c.bad) return c.bad;
  if (rc) return rc;
  return c.n == dg->nnz ? 0 : LV_EPATTERN;
}

static int dense_hess_V(const lv_dgrad *dg, const double *q, double *H) {
  int d = dg->d;
  memset(H, 0, (size_t)d * d * sizeof(double));
  lv_sink s = lv_sink_dense(H, d, d, d);
  return lv_model_hess_potential(dg->m, q, &s);
}

/* ------------------------------------------------------------- potential */

int lv_dg_begin(lv_dgrad *dg, const double *x) {
  memcpy(dg->x, x, (size_t)dg->d * sizeof(double));
  dg->pot_valid = 0;
  switch (dg->pot) {
    case LV_DGRAD_GONZALEZ:
      return lv_model_potential(dg->m, x, &dg->Vx);
    case LV_DGRAD_INVARIANT:
      LV_CHECK(inv_eval(dg, x, dg->pia));
      LV_CHECK(vt_eval(dg, dg->pia, dg->vta, dg->dvta));
      /* Dpi(x): a stepping scheme starts where its last accepted iterate
       * ended, whose gradients ty already holds */
      if (dg->ty_valid && memcmp(x, dg->ylast, (size_t)dg->d * sizeof(double)) == 0) {
        memcpy(dg->tx, dg->ty, (size_t)dg->nnz * sizeof(double));
        return 0;
      }
      dg->ty_valid = 0;
      return dpi_eval(dg, x, dg->tx);
    default:
      return 0;
  }
}

static int pot_invariant(lv_dgrad *dg, const double *y, double *out, double *jac, lv_sink *sj) {
  int d = dg->d, n = dg->ninv;
  int any_fd = 0;
  if (dg->pot_valid && memcmp(y, dg->ylast, (size_t)d * sizeof(double)) == 0) {
    /* the same y as the last call (EM: the Jacobian at the iterate whose
     * residual was just evaluated): the same values, already formed */
    for (int i = 0; i < n; i++) any_fd |= dg->small_fd[i];
  } else {
    dg->pot_valid = 0;
    LV_CHECK(inv_eval(dg, y, dg->pib));
    for (int i = 0; i < n; i++) dg->pim[i] = 0.5 * (dg->pia[i] + dg->pib[i]);
    LV_CHECK(vt_eval(dg, dg->pib, dg->vtb, dg->dvtb));
    LV_CHECK(vt_eval(dg, dg->pim, dg->vtm, dg->dvtm));
    for (int i = 0; i < n; i++) {
      int fd = 0;
      dg->c[i] = lv_dg_quot(dg->pia[i], dg->pib[i], dg->vta[i], dg->vtb[i], dg->dvta[i], dg->dvtm[i],
                            dg->dvtb[i], &dg->cp[i], &fd);
      dg->small_fd[i] = fd;
      any_fd |= fd;
    }
    /* Dpi is affine (quadratic invariants, check_invariants), so its value
     * at the midpoint is the mean of those at x and y: one evaluation per
     * iterate, at y, which the Newton matrix takes too (c_i' Dpi_i(z)
     * Dpi_i(y)^T) and the next step's start (lv_dg_begin) */
    dg->ty_valid = 0;
    LV_CHECK(dpi_eval(dg, y, dg->ty));
    for (int e = 0; e < dg->nnz; e++) dg->tz[e] = 0.5 * (dg->tx[e] + dg->ty[e]);
    memcpy(dg->ylast, y, (size_t)d * sizeof(double));
    dg->pot_valid = 1;
    dg->ty_valid = 1;
  }
  memset(out, 0, (size_t)d * sizeof(double));
  for (int e = 0; e < dg->nnz; e++) out[dg->tcol[e]] += dg->c[dg->trow[e]] * dg->tz[e];
  if (!jac && !sj) return 0;

  if (any_fd) {
    /* f''(m)/2 by a central difference of Vt' (exact for quadratic Vt). */
    double *dvp = dg->dvte, *dvm = dg->dvte + n;
    for (int i = 0; i < n; i++) {
      double sc = fmax(fabs(dg->pim[i]), fmax(fabs(dg->pia[i]), fabs(dg->pib[i])));
      dg->eps[i] = 6e-6 * (sc > 0.0 ? sc : 1.0);
      dg->pie[i] = dg->pim[i] + dg->eps[i];
    }
    LV_CHECK(vt_eval(dg, dg->pie, dg->vte, dvp));
    for (int i = 0; i < n; i++) dg->pie[i] = dg->pim[i] - dg->eps[i];
    LV_CHECK(vt_eval(dg, dg->pie, dg->vte, dvm));
    for (int i = 0; i < n; i++)
      if (dg->small_fd[i]) dg->cp[i] = 0.25 * (dvp[i] - dvm[i]) / dg->eps[i];
  }
  if (sj) {
    /* the same entries, every one of them (zeros too: a fixed pattern) */
    for (int i = 0; i < n; i++) {
      double ci = dg->cp[i];
      for (int a = dg->tptr[i]; a < dg->tptr[i + 1]; a++) {
        int ea = dg->tperm[a];
        double za = ci * dg->tz[ea];
        for (int b = dg->tptr[i]; b < dg->tptr[i + 1]; b++) {
          int eb = dg->tperm[b];
          LV_CHECK(lv_sink_add(sj, dg->tcol[ea], dg->tcol[eb], za * dg->ty[eb]));
        }
      }
    }
    for (int e = 0; e < dg->nh; e++)
      LV_CHECK(lv_sink_add(sj, dg->hr[e], dg->hc[e], 0.5 * dg->c[dg->hinv[e]] * dg->hval[e]));
    return 0;
  }
  memset(jac, 0, (size_t)d * d * sizeof(double));
  /* d/dy [c_i Dpi_i(z)] = c_i' Dpi_i(z) Dpi_i(y)^T + c_i/2 D^2 pi_i */
  for (int i = 0; i < n; i++) {
    double ci = dg->cp[i];
    if (ci == 0.0) continue;
    for (int a = dg->tptr[i]; a < dg->tptr[i + 1]; a++) {
      int ea = dg->tperm[a];
      double za = ci * dg->tz[ea];
      size_t r = (size_t)dg->tcol[ea];
      for (int b = dg->tptr[i]; b < dg->tptr[i + 1]; b++) {
        int eb = dg->tperm[b];
        jac[r + (size_t)dg->tcol[eb] * d] += za * dg->ty[eb];
      }
    }
  }
  for (int e = 0; e < dg->nh; e++)
    jac[(size_t)dg->hr[e] + (size_t)dg->hc[e] * d] += 0.5 * dg->c[dg->hinv[e]] * dg->hval[e];
  return 0;
}

static int pot_gonzalez(lv_dgrad *dg, const double *y, double *out, double *jac, lv_sink *sj) {
  int d = dg->d;
  double Vy, *w = dg->wo;
  LV_CHECK(lv_model_potential(dg->m, y, &Vy));
  LV_CHECK(lv_model_grad_potential(dg->m, dg->z, out)); /* dV(z) */
  LV_CHECK(lv_dg_orbit(dg, dg->z, dg->dl, w));
  double br = Vy - dg->Vx, scale = fabs(Vy) + fabs(dg->Vx), ww = lv_vdot(d, w, dg->dl);
  for (int i = 0; i < d; i++) {
    br -= out[i] * dg->dl[i];
    scale += fabs(out[i]) * (fabs(dg->z[i]) + fabs(dg->dl[i]));
  }
  double beta = lv_dg_coef(br, scale, ww);
  if (jac) memcpy(dg->w1, out, (size_t)d * sizeof(double)); /* keep dV(z) */
  for (int i = 0; i < d; i++) out[i] += beta * w[i];
  if (sj) {
    /* 1/2 D2V(z) + beta I: the sparse part of the dense form below.  The
     * rank-<= nsym+1 rest (beta times the orbit projection, w grad(beta)^T)
     * is dense; it is O(|y - x|) and enters the Newton matrix times h^2,
     * so leaving it out only slows the contraction, never moves the
     * solution. */
    lv_sink half = lv_sink_view(sj, 0, 0, d, d, 0.5, 0);
    LV_CHECK(lv_model_hess_potential(dg->m, dg->z, &half));
    for (int i = 0; i < d; i++) LV_CHECK(lv_sink_add(sj, i, i, beta));
    return 0;
  }
  if (!jac) return 0;
  if (!dg->H && !(dg->H = lv_calloc((size_t)d * d, sizeof(double)))) return LV_ENOMEM;
  LV_CHECK(dense_hess_V(dg, dg->z, dg->H));
  for (size_t i = 0; i < (size_t)d * d; i++) jac[i] = 0.5 * dg->H[i];
  if (beta == 0.0) return 0;
  /* d/dy [beta w] with w = P (y - x), P the orbit projector (its change
   * with z is left out: it only slows Newton's contraction):
   *   beta P + w grad(beta)^T,
   *   grad(beta) = [dV(y) - dV(z) - 1/2 D2V(z) (y-x)] / (w.dl) - 2 beta w / (w.dl) */
  LV_CHECK(lv_model_grad_potential(dg->m, y, dg->w2));
  lv_dense_matvec(d, d, dg->H, dg->dl, dg->wv);
  for (int i = 0; i < d; i++) dg->w2[i] = (dg->w2[i] - dg->w1[i] - 0.5 * dg->wv[i]) / ww - 2.0 * beta * w[i] / ww;
  lv_dg_add_projector(dg, beta, jac);
  for (int j = 0; j < d; j++)
    for (int i = 0; i < d; i++) jac[(size_t)i + (size_t)j * d] += w[i] * dg->w2[j];
  return 0;
}

int lv_dg_pot(lv_dgrad *dg, const double *y, double *out, double *jac) {
  int d = dg->d;
  for (int i = 0; i < d; i++) {
    dg->dl[i] = y[i] - dg->x[i];
    dg->z[i] = dg->x[i] + 0.5 * dg->dl[i];
  }
  switch (dg->pot) {
    case LV_DGRAD_INVARIANT:
      return pot_invariant(dg, y, out, jac, NULL);
    case LV_DGRAD_GONZALEZ:
      return pot_gonzalez(dg, y, out, jac, NULL);
    case LV_DGRAD_MIDPOINT:
      LV_CHECK(lv_model_grad_potential(dg->m, dg->z, out));
      if (jac) {
        LV_CHECK(dense_hess_V(dg, dg->z, jac));
        for (size_t i = 0; i < (size_t)d * d; i++) jac[i] *= 0.5;
      }
      return 0;
    default:
      memset(out, 0, (size_t)d * sizeof(double));
      if (jac) memset(jac, 0, (size_t)d * d * sizeof(double));
      return 0;
  }
}

int lv_dg_pot_sink(lv_dgrad *dg, const double *y, double *out, lv_sink *jac) {
  int d = dg->d;
  for (int i = 0; i < d; i++) {
    dg->dl[i] = y[i] - dg->x[i];
    dg->z[i] = dg->x[i] + 0.5 * dg->dl[i];
  }
  switch (dg->pot) {
    case LV_DGRAD_INVARIANT:
      return pot_invariant(dg, y, out, NULL, jac);
    case LV_DGRAD_GONZALEZ:
      return pot_gonzalez(dg, y, out, NULL, jac);
    case LV_DGRAD_MIDPOINT: {
      LV_CHECK(lv_model_grad_potential(dg->m, dg->z, out));
      lv_sink half = lv_sink_view(jac, 0, 0, d, d, 0.5, 0);
      return lv_model_hess_potential(dg->m, dg->z, &half);
    }
    default:
      memset(out, 0, (size_t)d * sizeof(double));
      return 0;
  }
}

/* -------------------------------------------------------------- creation */

static unsigned long long rng_next(unsigned long long *s) {
  unsigned long long x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static double rng_unit(unsigned long long *s) {
  return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Probe point k (0 <= k < 2*DG_PROBE_PAIRS): q0 plus a perturbation of a
 * quarter of the configuration's scale, reproducible (fixed seed). */
static void probe_point(const lv_dgrad *dg, int k, double *q) {
  const double *q0 = lv_model_q0(dg->m);
  int d = dg->d;
  double s = 1.0 + lv_vnorm_inf(d, q0);
  unsigned long long st = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)(k + 1) * 0xD1B54A32D192ED03ULL;
  for (int i = 0; i < 4; i++) rng_next(&st);
  for (int i = 0; i < d; i++) q[i] = q0[i] + 0.25 * s * rng_unit(&st);
}

/* Is V at most quadratic (midpoint gradient exact)? */
static int probe_potential(lv_dgrad *dg, int *quadratic) {
  int d = dg->d;
  *quadratic = 1;
  for (int k = 0; k < DG_PROBE_PAIRS && *quadratic; k++) {
    probe_point(dg, 2 * k, dg->w1);
    probe_point(dg, 2 * k + 1, dg->w2);
    double Vx, Vy;
    for (int i = 0; i < d; i++) dg->z[i] = 0.5 * (dg->w1[i] + dg->w2[i]);
    int rc = lv_model_potential(dg->m, dg->w1, &Vx);
    if (!rc) rc = lv_model_potential(dg->m, dg->w2, &Vy);
    if (!rc) rc = lv_model_grad_potential(dg->m, dg->z, dg->wv);
    if (rc == LV_ECALLBACK || rc == LV_ENONFINITE) { /* not evaluable there: assume the general case */
      *quadratic = 0;
      return 0;
    }
    if (rc) return rc;
    double br = Vy - Vx, scale = fabs(Vx) + fabs(Vy);
    for (int i = 0; i < d; i++) {
      double dl = dg->w2[i] - dg->w1[i];
      br -= dg->wv[i] * dl;
      scale += fabs(dg->wv[i]) * (fabs(dg->z[i]) + fabs(dl));
    }
    if (fabs(br) > DG_PROBE_TOL * scale) *quadratic = 0;
  }
  return 0;
}

/* y[i] += |a| x[j] for every entry a at (i, j): the rounding scale of a
 * matrix-vector product. */
typedef struct {
  lv_sink s;
  const double *x;
  double *y;
} abs_sink;

static int abs_add(lv_sink *s, int i, int j, double a) {
  abs_sink *as = (abs_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  as->y[i] += fabs(a) * as->x[j];
  return 0;
}

static lv_sink *abs_sink_init(abs_sink *as, int nrows, int ncols, const double *x, double *y) {
  memset(as, 0, sizeof *as);
  as->s.add = abs_add;
  as->s.nrows = nrows;
  as->s.ncols = ncols;
  as->s.scale = 1.0;
  as->x = x;
  as->y = y;
  return &as->s;
}

/* Are all constraint components at most quadratic? */
static int probe_constraints(lv_dgrad *dg, int *quadratic) {
  int d = dg->d, nc = dg->nc;
  *quadratic = 1;
  for (int k = 0; k < DG_PROBE_PAIRS && *quadratic; k++) {
    probe_point(dg, 2 * k, dg->w1);
    probe_point(dg, 2 * k + 1, dg->w2);
    for (int i = 0; i < d; i++) dg->z[i] = 0.5 * (dg->w1[i] + dg->w2[i]);
    /* matrix-free (G(z) dl and |G(z)| (|z| + |dl|) through sinks): O(nnz),
     * so a 10^5-link chain is classified without a dense m x d Jacobian */
    for (int i = 0; i < d; i++) {
      dg->dl[i] = dg->w2[i] - dg->w1[i];
      dg->wv[i] = fabs(dg->z[i]) + fabs(dg->dl[i]);
    }
    int rc = lv_model_constraints(dg->m, dg->w1, dg->gx);
    if (!rc) rc = lv_model_constraints(dg->m, dg->w2, dg->gy);
    if (!rc) rc = lv_model_G_apply(dg->m, dg->z, dg->dl, dg->gvz);
    abs_sink as;
    if (!rc) {
      memset(dg->zd, 0, (size_t)nc * sizeof(double));
      rc = lv_model_constraint_jac(dg->m, dg->z, abs_sink_init(&as, nc, d, dg->wv, dg->zd));
    }
    if (rc == LV_ECALLBACK || rc == LV_ENONFINITE) {
      *quadratic = 0;
      return 0;
    }
    if (rc) return rc;
    for (int c = 0; c < nc; c++) {
      double br = dg->gy[c] - dg->gx[c] - dg->gvz[c];
      double scale = fabs(dg->gx[c]) + fabs(dg->gy[c]) + dg->zd[c];
      if (fabs(br) > DG_PROBE_TOL * scale) *quadratic = 0;
    }
  }
  return 0;
}

/* Learn the triplet pattern of Dpi, group it by invariant, and form the
 * constant Hessians of the invariants by differences of Dpi (exact up to
 * rounding for quadratic invariants, whatever the step). */
static int setup_invariants(lv_dgrad *dg) {
  const lv_model *m = dg->m;
  int d = dg->d, n = dg->ninv;
  cap_sink c;
  cap_init(&c, n, d);
  int rc = lv_model_invariant_jac(m, lv_model_q0(m), &c.s);
  if (c.bad || rc) {
    free(c.row);
    free(c.col);
    free(c.val);
    return c.bad ? c.bad : rc;
  }
  dg->nnz = c.n;
  dg->trow = c.row;
  dg->tcol = c.col;
  free(c.val);
  size_t nz = (size_t)(c.n > 0 ? c.n : 1);
  dg->tz = lv_calloc(nz, sizeof(double));
  dg->ty = lv_calloc(nz, sizeof(double));
  dg->tx = lv_calloc(nz, sizeof(double));
  dg->tperm = lv_calloc(nz, sizeof(int));
  dg->tptr = lv_calloc((size_t)n + 1, sizeof(int));
  if (!dg->trow || !dg->tz || !dg->ty || !dg->tx || !dg->tperm || !dg->tptr) return LV_ENOMEM;
  for (int e = 0; e < dg->nnz; e++) dg->tptr[dg->trow[e] + 1]++;
  for (int i = 0; i < n; i++) dg->tptr[i + 1] += dg->tptr[i];
  int *fill = lv_calloc((size_t)n, sizeof(int));
  if (!fill) return LV_ENOMEM;
  for (int e = 0; e < dg->nnz; e++) dg->tperm[dg->tptr[dg->trow[e]] + fill[dg->trow[e]]++] = e;
  free(fill);

  /* Hessians: column j from Dpi(q0 + s_j e_j) - Dpi(q0). */
  const double *q0 = lv_model_q0(m);
  LV_CHECK(dpi_eval(dg, q0, dg->tz));
  memcpy(dg->w1, q0, (size_t)d * sizeof(double));
  int cap = 0;
  for (int j = 0; j < d; j++) {
    double s = 1.0 + fabs(q0[j]);
    dg->w1[j] = q0[j] + s;
    s = dg->w1[j] - q0[j]; /* the step actually taken */
    rc = dpi_eval(dg, dg->w1, dg->ty);
    dg->w1[j] = q0[j];
    if (rc) return rc;
    for (int e = 0; e < dg->nnz; e++) {
      double diff = (dg->ty[e] - dg->tz[e]) / s;
      if (fabs(diff) <= 64.0 * DBL_EPSILON * (fabs(dg->ty[e]) + fabs(dg->tz[e])) / s) continue;
      if (dg->nh == cap) {
        cap = cap ? 2 * cap : 64;
        int *a = realloc(dg->hinv, (size_t)cap * sizeof *a);
        if (a) dg->hinv = a;
        int *b = realloc(dg->hr, (size_t)cap * sizeof *b);
        if (b) dg->hr = b;
        int *cc = realloc(dg->hc, (size_t)cap * sizeof *cc);
        if (cc) dg->hc = cc;
        double *v = realloc(dg->hval, (size_t)cap * sizeof *v);
        if (v) dg->hval = v;
        if (!a || !b || !cc || !v) return LV_ENOMEM;
      }
      dg->hinv[dg->nh] = dg->trow[e];
      dg->hr[dg->nh] = dg->tcol[e];
      dg->hc[dg->nh] = j;
      dg->hval[dg->nh] = diff;
      dg->nh++;
    }
  }
  return 0;
}

/* The invariants must be quadratic (else directionality fails) and must
 * reproduce the model's V and dV (else the scheme would conserve a
 * different energy than the one reported). */
static int check_invariants(lv_dgrad *dg) {
  int d = dg->d, n = dg->ninv;
  for (int k = 0; k < DG_PROBE_PAIRS; k++) {
    probe_point(dg, 2 * k, dg->w1);
    probe_point(dg, 2 * k + 1, dg->w2);
    for (int i = 0; i < d; i++) dg->z[i] = 0.5 * (dg->w1[i] + dg->w2[i]);
    int rc = inv_eval(dg, dg->w1, dg->pia);
    if (!rc) rc = inv_eval(dg, dg->w2, dg->pib);
    if (!rc) rc = dpi_eval(dg, dg->z, dg->tz);
    if (rc == LV_ECALLBACK || rc == LV_ENONFINITE) continue; /* not evaluable at this pair */
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
      double br = dg->pib[i] - dg->pia[i], scale = fabs(dg->pia[i]) + fabs(dg->pib[i]);
      for (int a = dg->tptr[i]; a < dg->tptr[i + 1]; a++) {
        int e = dg->tperm[a], j = dg->tcol[e];
        double dl = dg->w2[j] - dg->w1[j];
        br -= dg->tz[e] * dl;
        scale += fabs(dg->tz[e]) * (fabs(dg->z[j]) + fabs(dl));
      }
      if (fabs(br) > DG_PROBE_TOL * scale) return LV_EINPUT; /* not quadratic */
    }
    /* V = sum Vt(pi) and dV = sum Vt'(pi) Dpi at the first probe point */
    double V;
    rc = lv_model_potential(dg->m, dg->w1, &V);
    if (!rc) rc = vt_eval(dg, dg->pia, dg->vta, dg->dvta);
    if (rc == LV_ECALLBACK || rc == LV_ENONFINITE) continue;
    if (rc) return rc;
    double sum = 0.0, mag = fabs(V);
    for (int i = 0; i < n; i++) sum += dg->vta[i], mag += fabs(dg->vta[i]);
    if (lv_model_has_potential(dg->m) && fabs(sum - V) > 1e-10 * mag) return LV_EINPUT;
    if (lv_model_has_potential(dg->m)) { /* V and dV come together */
      rc = lv_model_grad_potential(dg->m, dg->w1, dg->wv);
      if (!rc) rc = dpi_eval(dg, dg->w1, dg->ty);
      if (rc == LV_ECALLBACK || rc == LV_ENONFINITE) continue;
      if (rc) return rc;
      memset(dg->w2, 0, (size_t)d * sizeof(double));
      double gmag = lv_vnorm_inf(d, dg->wv);
      for (int e = 0; e < dg->nnz; e++) {
        dg->w2[dg->tcol[e]] += dg->dvta[dg->trow[e]] * dg->ty[e];
        gmag = fmax(gmag, fabs(dg->dvta[dg->trow[e]] * dg->ty[e]));
      }
      for (int i = 0; i < d; i++)
        if (fabs(dg->w2[i] - dg->wv[i]) > 1e-8 * gmag) return LV_EINPUT;
    }
  }
  return 0;
}

void lv_dgrad_free(lv_dgrad *dg) {
  if (!dg) return;
  lv_mass_op_free(&dg->mass);
  double **arr[] = {&dg->x,   &dg->pia,  &dg->vta,  &dg->dvta, &dg->tz,
                    &dg->ty, &dg->tx,  &dg->hval, &dg->z,    &dg->dl,   &dg->w1,   &dg->w2,   &dg->H,
                    &dg->pib, &dg->pim,  &dg->pie,  &dg->vtb,  &dg->dvtb, &dg->vtm,  &dg->dvtm,
                    &dg->vte, &dg->dvte, &dg->c,    &dg->cp,   &dg->eps,  &dg->gx,   &dg->gy,
                    &dg->Gz,  &dg->Gx,   &dg->Gy,   &dg->Zb,   &dg->vx,   &dg->vy,   &dg->wv,
                    &dg->gvz,  &dg->zd,   &dg->wo,   &dg->xb, &dg->ylast};
  for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) free(*arr[i]);
  free(dg->trow);
  free(dg->tcol);
  free(dg->tperm);
  free(dg->tptr);
  free(dg->hinv);
  free(dg->hr);
  free(dg->hc);
  free(dg->small_fd);
  free(dg);
}

int lv_dgrad_new(lv_dgrad **out, const lv_model *m) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (!m) return LV_EINPUT;
  if (!lv_space_is_linear(lv_model_space(m))) return LV_ENOTIMPL;
  lv_dgrad *dg = lv_calloc(1, sizeof *dg);
  if (!dg) return LV_ENOMEM;
  dg->m = m;
  int d = dg->d = lv_model_nv(m), nc = dg->nc = lv_model_nc(m), n = dg->ninv = lv_model_ninv(m);
  dg->nsym = lv_model_nsym(m);
  size_t nn = (size_t)(n > 0 ? n : 1);
  size_t mm = (size_t)(nc > 0 ? nc : 1);
  struct {
    double **p;
    size_t len;
  } al[] = {{&dg->x, d},      {&dg->pia, nn},  {&dg->vta, nn},
            {&dg->dvta, nn}, {&dg->z, d},       {&dg->dl, d},     {&dg->w1, d},    {&dg->w2, d},
            {&dg->pib, nn},    {&dg->pim, nn},   {&dg->pie, nn},  {&dg->vtb, nn},
            {&dg->dvtb, nn}, {&dg->vtm, nn},    {&dg->dvtm, nn},  {&dg->vte, nn},  {&dg->dvte, 2 * nn},
            {&dg->c, nn},    {&dg->cp, nn},     {&dg->eps, nn},   {&dg->gx, mm},   {&dg->gy, mm},
            {&dg->vx, d},
            {&dg->vy, d},    {&dg->wv, d},      {&dg->gvz, mm},
            {&dg->zd, mm},   {&dg->wo, d},      {&dg->ylast, d},      {&dg->xb, (size_t)(dg->nsym > 0 ? dg->nsym : 1) * d}};
  int rc = 0;
  for (size_t i = 0; i < sizeof al / sizeof al[0] && !rc; i++) {
    *al[i].p = lv_calloc(al[i].len, sizeof(double));
    if (!*al[i].p) rc = LV_ENOMEM;
  }
  dg->small_fd = lv_calloc(nn, sizeof(int));
  if (!rc && !dg->small_fd) rc = LV_ENOMEM;

  dg->mass_const = lv_model_mass_constant(m);

  /* Classify the potential. */
  if (!rc) {
    if (n > 0) {
      dg->pot = LV_DGRAD_INVARIANT;
      rc = setup_invariants(dg);
      if (!rc) rc = check_invariants(dg);
    } else if (!lv_model_has_potential(m)) {
      dg->pot = LV_DGRAD_NONE;
    } else {
      int quad = 0;
      rc = probe_potential(dg, &quad);
      dg->pot = quad ? LV_DGRAD_MIDPOINT : LV_DGRAD_GONZALEZ;
    }
  }
  dg->con_quad = 1;
  if (!rc && nc > 0) rc = probe_constraints(dg, &dg->con_quad);
  /* Probing may have recorded an evaluation failure far from q0; it says
   * nothing about the integration. */
  lv_model_clear_error(m);
  /* w1, w2 and wv served the probes above; afterwards only Gonzalez'
   * potential uses them (and lv_dgrad_velocity_constraints wv, allocated
   * there on need): three d-vectors, 72 bytes per particle of the chain,
   * no longer held through the run. */
  if (!rc && dg->pot != LV_DGRAD_GONZALEZ) {
    free(dg->w1);
    free(dg->w2);
    free(dg->wv);
    dg->w1 = dg->w2 = dg->wv = NULL;
  }
  /* Likewise gvz and zd served the constraint probe only, and gx, gy
   * afterwards only the corrections of non-quadratic constraints
   * (lv_dgrad_constraints): four constraint-vectors, 32 bytes per particle
   * of the chain. */
  if (!rc) {
    free(dg->gvz);
    free(dg->zd);
    dg->gvz = dg->zd = NULL;
    if (dg->con_quad) {
      free(dg->gx);
      free(dg->gy);
      dg->gx = dg->gy = NULL;
    }
  }
  if (rc) {
    lv_dgrad_free(dg);
    return rc;
  }
  *out = dg;
  return 0;
}

/* Dense M and M^-1 on first use: d x d each, so only the dense paths (and
 * lv_dgrad_velocity_constraints, whose outputs are dense) pay for them. */
int lv_dg_dense_mass(lv_dgrad *dg) {
  if (dg->mass.M) return 0;
  if (!dg->mass_const) return LV_ENOTIMPL;
  int rc = lv_mass_op_init(&dg->mass, dg->m, lv_model_q0(dg->m), LV_MASS_DENSE);
  if (rc) lv_mass_op_free(&dg->mass);
  return rc;
}

lv_dgrad_kind lv_dgrad_potential_kind(const lv_dgrad *dg) { return dg->pot; }
int lv_dgrad_constraints_quadratic(const lv_dgrad *dg) { return dg->con_quad; }

/* ------------------------------------------------------- public functions */

int lv_dgrad_potential(lv_dgrad *dg, const double *x, const double *y, double *out) {
  if (!dg || !x || !y || !out) return LV_EINPUT;
  LV_CHECK(lv_dg_begin(dg, x));
  return lv_dg_pot(dg, y, out, NULL);
}

int lv_dgrad_potential_jacobian(lv_dgrad *dg, const double *x, const double *y, double *out,
                                double *jac) {
  if (!dg || !x || !y || !out || !jac) return LV_EINPUT;
  LV_CHECK(lv_dg_begin(dg, x));
  return lv_dg_pot(dg, y, out, jac);
}

int lv_dgrad_constraints(lv_dgrad *dg, const double *x, const double *y, double *out) {
  if (!dg || !x || !y || !out) return LV_EINPUT;
  int d = dg->d, nc = dg->nc;
  if (nc == 0) return 0;
  for (int i = 0; i < d; i++) {
    dg->dl[i] = y[i] - x[i];
    dg->z[i] = x[i] + 0.5 * dg->dl[i];
  }
  LV_CHECK(lv_model_constraint_jac_dense(dg->m, dg->z, out));
  if (dg->con_quad) return 0;
  LV_CHECK(lv_model_constraints(dg->m, x, dg->gx));
  LV_CHECK(lv_model_constraints(dg->m, y, dg->gy));
  LV_CHECK(lv_dg_orbit(dg, dg->z, dg->dl, dg->wo));
  double ww = lv_vdot(d, dg->wo, dg->dl);
  for (int c = 0; c < nc; c++) {
    double br = dg->gy[c] - dg->gx[c], scale = fabs(dg->gx[c]) + fabs(dg->gy[c]);
    for (int i = 0; i < d; i++) {
      double G = out[c + (size_t)i * nc];
      br -= G * dg->dl[i];
      scale += fabs(G) * (fabs(dg->z[i]) + fabs(dg->dl[i]));
    }
    double beta = lv_dg_coef(br, scale, ww);
    for (int i = 0; i < d; i++) out[c + (size_t)i * nc] += beta * dg->wo[i];
  }
  return 0;
}

int lv_dgrad_velocity_constraints(lv_dgrad *dg, const double *x, const double *px,
                                  const double *y, const double *py, double *dq, double *dp) {
  if (!dg || !x || !px || !y || !py || !dq || !dp) return LV_EINPUT;
  if (!dg->mass_const) return LV_ENOTIMPL;
  int d = dg->d, nc = dg->nc;
  if (nc == 0) return 0;
  LV_CHECK(lv_dg_dense_mass(dg));
  size_t md = (size_t)nc * (size_t)d;
  if (!dg->Gz) dg->Gz = lv_calloc(md, sizeof(double));
  if (!dg->Gx) dg->Gx = lv_calloc(md, sizeof(double));
  if (!dg->Gy) dg->Gy = lv_calloc(md, sizeof(double));
  if (!dg->wv) dg->wv = lv_calloc((size_t)d, sizeof(double));
  if (!dg->Gz || !dg->Gx || !dg->Gy || !dg->wv) return LV_ENOMEM;
  const lv_model *m = dg->m;
  for (int i = 0; i < d; i++) {
    dg->dl[i] = y[i] - x[i];
    dg->z[i] = x[i] + 0.5 * dg->dl[i];
  }
  lv_dense_matvec(d, d, dg->mass.Minv, px, dg->vx);
  lv_dense_matvec(d, d, dg->mass.Minv, py, dg->vy);
  for (int i = 0; i < d; i++) dg->wv[i] = 0.5 * (dg->vx[i] + dg->vy[i]);
  /* dp = G(z) M^-1 (M^-1 symmetric: row c of dp is (M^-1 G_c(z)^T)^T) */
  LV_CHECK(lv_model_constraint_jac_dense(m, dg->z, dg->Gz));
  memset(dp, 0, (size_t)nc * (size_t)d * sizeof(double));
  for (int j = 0; j < d; j++)
    for (int k = 0; k < d; k++) {
      double a = dg->mass.Minv[k + (size_t)j * d];
      if (a == 0.0) continue;
      for (int c = 0; c < nc; c++) dp[c + (size_t)j * nc] += dg->Gz[c + (size_t)k * nc] * a;
    }
  /* dq = Z(z; w) = D_q (G(q) w) at z */
  memset(dq, 0, (size_t)nc * (size_t)d * sizeof(double));
  lv_sink s = lv_sink_dense(dq, nc, nc, d);
  LV_CHECK(lv_model_constraint_curvature(m, dg->z, dg->wv, &s));
  if (dg->con_quad) return 0;
  /* Gonzalez correction per component of the bilinear-in-p remainder:
   * g^v(y,py) - g^v(x,px) - G(z) M^-1 (py-px) - Z(z;w) (y-x). */
  LV_CHECK(lv_model_constraint_jac_dense(m, x, dg->Gx));
  LV_CHECK(lv_model_constraint_jac_dense(m, y, dg->Gy));
  LV_CHECK(lv_dg_orbit(dg, dg->z, dg->dl, dg->wo));
  double ww = lv_vdot(d, dg->wo, dg->dl);
  for (int c = 0; c < nc; c++) {
    double br = 0.0, scale = 0.0;
    for (int i = 0; i < d; i++) {
      size_t ci = c + (size_t)i * nc;
      double t1 = dg->Gy[ci] * dg->vy[i], t2 = dg->Gx[ci] * dg->vx[i];
      double t3 = dg->Gz[ci] * (dg->vy[i] - dg->vx[i]), t4 = dq[ci] * dg->dl[i];
      br += t1 - t2 - t3 - t4;
      scale += fabs(t1) + fabs(t2) + fabs(t3) + fabs(t4);
    }
    double beta = lv_dg_coef(br, scale, ww);
    for (int i = 0; i < d; i++) dq[c + (size_t)i * nc] += beta * dg->wo[i];
  }
  return 0;
}
