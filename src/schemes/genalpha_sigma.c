/* Generalized-alpha, the sigma-modification (issue 6; spec 002 §2, §3,
 * §4.4): the kinematic relation theta = theta_lin + c (T^-1(theta) v - v)
 * with its exact corrector (default) or the paper's simplified corrector
 * (corrector=paper), the predictor parts and Newton matrix block they need
 * (F or P in place of the tangent operator T), and the leading Lie error
 * coefficient the perturbed start uses.  The step around it: genalpha.c;
 * the shared state: genalpha_impl.h. */
#include "genalpha_impl.h"

/* ---- the method ----
 *
 * theta = h Dq is the increment q_n^-1 q_{n+1}.  The sigma-scheme replaces
 * theta = theta_lin (the plain relation of genalpha.c) by (12)-(16) with (16) used
 * to eliminate theta-dot:
 *   theta = theta_lin + c (T^-1(theta) v_{n+1} - v_{n+1}),  c = sigma h beta/gamma,
 * theta_lin = h (v_n - B_n^T eta) + h^2 (1/2 - beta) a_n + h^2 beta a_{n+1}.
 * The eta term keeps the form of the sigma = 0 scheme ([14], no T^-1 on
 * B_n^T eta; spec E13): eta is an auxiliary unknown that vanishes for the
 * exact solution, and sigma = 0 must stay the unmodified method.
 *
 * Exact corrector (default): for a given theta the relation is linear in
 * v_{n+1} (a_{n+1} = (v_{n+1} - v*) / (h gamma), v* = v_n + h (1 - gamma) a_n):
 *   Q v_{n+1} = gamma' (theta - h (v_n - B_n^T eta) - h^2 (1/2 - beta) a_n) + v*,
 *   Q = (1 - sigma) I + sigma T^-1(theta),
 * so theta is the primary variable: every iterate (predictor and Newton
 * updates) sets theta and then v_{n+1}, a_{n+1}, v'_{n+1} from it with one
 * evaluation of T^-1 and a k x k solve per Lie group block (sigma_state),
 * no inner iteration.  The converged
 * step solves (11)-(19) to the Newton tolerance, the kinematic relation to
 * round-off.  The Newton unknown
 * stays Dx of the sigma = 0 scheme; the update is theta += Phi Dx with
 * Phi = dtheta/dy of the linearised relation (variation of T^-1 included,
 * D = d(T^-1(theta) v)/dtheta):
 *   (I - c D) dtheta = (sigma T^-1 + (1 - sigma) I) y = Q y,  Phi = (I - c D)^-1 Q,
 * and the Newton matrix is the sigma = 0 one with T replaced by F = T Phi
 * (fill_fmat).  For index 2, y = Dx + B_n^T zeta: v moves by gamma' y and
 * theta by Phi Dx + (I - c D)^-1 (Q - I) B_n^T zeta, so F has nc more
 * columns, T (I - c D)^-1 (Q - I) B_n^T, that carry zeta into every
 * position-dependent block (K_t, G, Z).  Without them (a term of size
 * sigma |theta| / 2) the heavy top at h = 1e-3 took 4.00 instead of 2.00
 * Newton iterations per step, with the same converged solution.
 *
 * Paper corrector (corrector=paper, spec §3.8 Alg 2 template for every
 * sigma): zero-acceleration predictor v'_{n+1} = 0, lambda = 0 and
 * theta = (I - f sigma (h beta/gamma) v^_{n+1}) theta_lin with the predictor
 * factor f (1 as printed, 1/2 consistent with (29); spec E11); corrector
 * theta += T^-1(theta) x, v += gamma' P^-1 x, v' += beta' P^-1 x.  With the
 * Newton unknown y = P^-1 x of the matrix above this reads
 * theta += (sigma T^-1(theta) + (1 - sigma) I) y, v += gamma' y,
 * v' += beta' y (P taken at the iterate, i.e. assumption (74)).  It does
 * not solve (12)+(16); its leading Lie error coefficient is
 * 1/12 - mu_impl(sigma, f) (spec §4.4) instead of 1/12 - sigma beta/(4 gamma). */

/* The per-factor slots hold the largest Lie block. */
_Static_assert(36 == LV_GROUP_MAXBLK * LV_GROUP_MAXBLK, "genalpha's slots are 36 doubles");

/* Exact corrector, once per step: the parts of the relation that do not
 * change within the step, v* = v_n + h (1 - gamma) a_n,
 * b = h v_n + h^2 (1/2 - beta) a_n (theta_lin without the eta and a_{n+1}
 * terms) and v'b = (alpha_m a_n - alpha_f v'_n) / (1 - alpha_f). */
static void sigma_step_init(genalpha *g) {
  int d = g->nv;
  double h = g->h, be = g->beta, ga = g->gam, ia = 1.0 / (1.0 - g->af);
  double *vs = g->sbase, *b = vs + d, *vdb = b + d;
  for (int i = 0; i < d; i++) {
    vs[i] = g->vn[i] + h * (1.0 - ga) * g->an[i];
    b[i] = h * g->vn[i] + h * h * (0.5 - be) * g->an[i];
    vdb[i] = (g->am * g->an[i] - g->af * g->vd[i]) * ia;
  }
  g->s_ihg = 1.0 / (h * ga);
  g->s_ka = (1.0 - g->am) * ia;
}

/* Exact corrector: v_{n+1}, a_{n+1}, v'_{n+1} from theta = h dq (see the
 * block above).  With a_{n+1} = (v_{n+1} - v*) / (h gamma) the relation is
 *   Q v_{n+1} = gamma' (theta - b + h B_n^T eta) + v*,  gamma' = gamma / (h beta),
 * one evaluation of T^-1 and one k x k solve per Lie group block; outside
 * the blocks Q = I. */
static int sigma_state(genalpha *g) {
  int d = g->nv, nf = lv_space_nfactors(g->sp);
  double h = g->h, sig = g->sigma, gp = g->gp, ihg = g->s_ihg, ka = g->s_ka;
  const double *vs = g->sbase, *b = vs + d, *vdb = b + d;
  double *th = g->hdq, *v = g->v1, *a = g->a1;
  for (int i = 0; i < d; i++) {
    th[i] = h * g->dq[i];
    v[i] = gp * (th[i] - b[i] + h * g->bne[i]) + vs[i];
  }
  for (int f = 0; f < nf; f++) {
    int o = g->rb[f], k = g->rk[f];
    if (k == 0) continue;
    const lv_group *G = g->grp[f];
    double Q[36], *Ti = g->tiblk + 36 * f;
    LV_CHECK(G->blk_tinv(th + o, Ti)); /* kept for the Newton matrix at this iterate */
    for (int x = 0; x < k * k; x++) Q[x] = sig * Ti[x];
    for (int x = 0; x < k; x++) Q[x * k + x] += 1.0 - sig;
    LV_CHECK(G->blk_solve(Q, v + o));
  }
  double chk = 0.0;
  for (int i = 0; i < d; i++) {
    a[i] = (v[i] - vs[i]) * ihg;
    g->vd1[i] = vdb[i] + ka * a[i];
    chk += a[i];
  }
  return isfinite(chk) ? 0 : LV_ENONFINITE;
}

/* P = sigma I + (1 - sigma) T(w) into an lv_spm. */
typedef struct {
  const lv_space *sp;
  const double *w;
  double sigma;
} pmat_ctx;
static int fill_pmat(void *ctx, lv_sink *s) {
  pmat_ctx *c = ctx;
  s->scale = 1.0 - c->sigma;
  LV_CHECK(lv_space_tangent(c->sp, c->w, s));
  s->scale = 1.0;
  for (int i = 0; i < s->nrows; i++) LV_CHECK(lv_sink_add(s, i, i, c->sigma));
  return 0;
}

/* Exact corrector, Newton matrix: the variation of theta with y including
 * that of T^-1 in the kinematic relation,
 *   (I - c D) dtheta = Q y,  D = d(T^-1(theta) v)/dtheta,  Q = sigma T^-1 + (1 - sigma) I,
 * so dq = F y with F = T (I - c D)^-1 Q = ((I - c D) T^-1)^-1 Q: no T
 * itself, T^-1 and D come from the same coefficients; Phi = T^-1 F is kept
 * for the updates.  Without D (F = P = sigma I + (1 - sigma) T) Newton
 * contracts only like c |v| / 2 (6 iterations per step instead of 2 on the
 * heavy top at h = 1e-3).  T and D are block diagonal over the factors;
 * outside the Lie group blocks F = I.  F is written on the pattern of T
 * (for SE(3) without its zero lower-left block: F is block upper
 * triangular like T). */
typedef struct {
  genalpha *g;
  const double *th; /* theta */
} fmat_ctx;

/* Index 2: rows o .. o + k - 1 of the zeta columns of F (columns nv ..
 * nv + nc - 1 of the factor), W = E B_n^T with this factor's block
 * E = T (I - c D)^-1 sigma (T^-1 - I): zeta = h d(eta) moves theta by
 * (I - c D)^-1 (Q - I) B_n^T zeta (ga_update), Q - I = sigma (T^-1 - I).
 * Each row is merged over the block before it is written, in an order fixed
 * by the pattern of B_n, so the factor keeps its pattern and has no
 * repeated positions. */
static int fill_zeta_cols(genalpha *g, lv_sink *s, int o, int k, const double *E) {
  const lv_spm *B = &g->Bn;
  for (int a = 0; a < k; a++) {
    int nl = 0;
    for (int b = 0; b < k; b++) {
      double e = E[a * k + b];
      for (int t = B->rp[o + b]; t < B->rp[o + b + 1]; t++) {
        int r = B->ci[t];
        if (!g->wmark[r]) {
          g->wmark[r] = 1;
          g->wlist[nl++] = r;
          g->wacc[r] = 0.0;
        }
        g->wacc[r] += e * B->val[t];
      }
    }
    for (int l = 0; l < nl; l++) {
      int r = g->wlist[l];
      g->wmark[r] = 0;
      LV_CHECK(lv_sink_add(s, o + a, g->nv + r, g->wacc[r]));
    }
  }
  return 0;
}
static int fill_fmat(void *ctx, lv_sink *s) {
  fmat_ctx *fc = ctx;
  genalpha *g = fc->g;
  int nf = lv_space_nfactors(g->sp);
  double sig = g->sigma, c = sig * g->h * g->beta / g->gam;
  int zeta = g->index == 2 && g->nc > 0; /* the zeta columns too (fill_zeta_cols) */
  for (int f = 0; f < nf; f++) /* D; T^-1 of this iterate is in the slots already (sigma_state) */
    if (g->rk[f]) g->grp[f]->blk_tinv_deriv(fc->th + g->rb[f], g->v1 + g->rb[f], g->tmp2, g->dblk + 36 * f);
  for (int i = 0; i < g->nv; i++) { /* F = I outside the blocks */
    int f = g->vfac[i];
    if (i < g->rb[f] || i >= g->rb[f] + g->rk[f]) LV_CHECK(lv_sink_add(s, i, i, 1.0));
  }
  for (int f = 0; f < nf; f++) {
    int o = g->rb[f], k = g->rk[f];
    if (k == 0) continue;
    const lv_group *G = g->grp[f];
    const double *Ti = g->tiblk + 36 * f, *D = g->dblk + 36 * f;
    double A[36], Y[36], T[36], *X = g->xblk + 36 * f, *Ph = g->phblk + 36 * f;
    /* Phi = (I - c D)^-1 Q = (1 - sig) X + sig X Ti, F = T Phi = Ti^-1 Phi */
    for (int a = 0; a < k * k; a++) A[a] = -c * D[a];
    for (int a = 0; a < k; a++) A[a * k + a] += 1.0;
    LV_CHECK(G->blk_inv(A, X));
    G->blk_mul(X, Ti, Ph);
    for (int a = 0; a < k * k; a++) Ph[a] = (1.0 - sig) * X[a] + sig * Ph[a];
    LV_CHECK(G->blk_inv(Ti, T));
    G->blk_mul(T, Ph, Y);
    for (int a = 0; a < k; a++)
      for (int b = 0; b < k; b++)
        if (!G->pattern || G->pattern[a * k + b]) LV_CHECK(lv_sink_add(s, o + a, o + b, Y[a * k + b]));
    if (zeta) { /* E = T X sigma (T^-1 - I) */
      double S[36], XS[36], E[36];
      for (int a = 0; a < k * k; a++) S[a] = sig * Ti[a];
      for (int a = 0; a < k; a++) S[a * k + a] -= sig;
      G->blk_mul(X, S, XS);
      G->blk_mul(T, XS, E);
      LV_CHECK(fill_zeta_cols(g, s, o, k, E));
    }
  }
  return 0;
}

/* Paper corrector: theta += (sigma T^-1(theta) + (1 - sigma) I) y. */
static int paper_theta_update(genalpha *g, const double *y) {
  int d = g->nv;
  double h = g->h;
  for (int i = 0; i < d; i++) g->hdq[i] = h * g->dq[i];
  LV_CHECK(lv_space_tangent_inv_apply(g->sp, g->hdq, y, g->tmp2));
  for (int i = 0; i < d; i++) g->dq[i] += (g->sigma * g->tmp2[i] + (1.0 - g->sigma) * y[i]) / h;
  return 0;
}

/* Leading Lie-group coefficient of the local error in theta (multiplies
 * h^3 ad_v v'), used by the perturbed start: 1/12 for sigma = 0. */
double ga_sigma_lie_coef(const genalpha *g) {
  double bg = g->beta / g->gam;
  if (!g->corr_paper) return 1.0 / 12.0 - 0.25 * g->sigma * bg;
  double k1 = (1.0 - g->af) / (1.0 - g->am); /* 1 - kappa */
  return 1.0 / 12.0 - g->sigma * (g->pfac * bg * (0.5 - (g->gam - g->beta) * k1) + 0.5 * g->beta * k1);
}

/* ---- the step's sigma parts (called from genalpha.c) ---- */

/* Predictor (after ga_predict's plain one, which gives theta_lin): the
 * paper's theta_p = (I - f sigma (h beta/gamma) v^) theta_lin, or for the
 * exact corrector theta = theta_lin + the last step's correction and
 * v, a, v' from it. */
int ga_sigma_predict(genalpha *g) {
  int d = g->nv, k = g->nc;
  double am = g->am, af = g->af, be = g->beta, ga = g->gam, h = g->h;
  const double *vn = g->vn, *an = g->an;
  if (g->corr_paper) {
    /* Algs 1-3 lines 1-6: zero-acceleration predictor, then the sigma
     * correction of theta_lin (84) with the predictor factor f.  The
     * ablation corr_paper = 2 keeps the previous-acceleration predictor
     * of genalpha.c's ga_predict (v'_n, lambda_n). */
    if (g->corr_paper == 1 && !g->nstart_exudyn) { /* exudyn: done in ga_predict */
      for (int i = 0; i < d; i++) {
        g->vd1[i] = 0.0;
        g->a1[i] = (af * g->vd[i] - am * an[i]) / (1.0 - am);
        g->v1[i] = vn[i] + h * (1.0 - ga) * an[i] + ga * h * g->a1[i];
        g->dq[i] += be * h * (g->a1[i] - (af * g->vd[i] - am * an[i] + (1.0 - af) * g->vd[i]) / (1.0 - am));
      }
      memset(g->lam1, 0, (size_t)k * sizeof(double));
    }
    memcpy(g->dql, g->dq, (size_t)d * sizeof(double));
    LV_CHECK(lv_space_ad(g->sp, g->v1, g->dql, g->tmp));
    double c = g->pfac * g->sigma * h * be / ga;
    for (int i = 0; i < d; i++) g->dq[i] -= c * g->tmp[i];
  } else if (g->sigma != 0.0) {
    /* theta = theta_lin + the last step's correction theta - theta_lin;
     * a_{n+1} etc. follow */
    if (g->index == 2 && k > 0)
      memcpy(g->bne, g->bnz, (size_t)d * sizeof(double));
    else
      memset(g->bne, 0, (size_t)d * sizeof(double));
    if (g->nstart_exudyn) {
      /* newton-start=exudyn: no correction carried over; theta from the
       * zero-acceleration predictor times I - (sigma/2)(h beta/gamma) v^,
       * the factor of Exudyn's sigma = 1 predictor (and the first-order
       * part of the exact relation, T^-1(theta) = I + theta^/2 + ...) */
      memcpy(g->tmp2, g->dq, (size_t)d * sizeof(double));
      LV_CHECK(lv_space_ad(g->sp, g->v1, g->tmp2, g->tmp));
      double c = 0.5 * g->sigma * h * be / ga;
      for (int i = 0; i < d; i++) g->dq[i] -= c * g->tmp[i];
    } else {
      for (int i = 0; i < d; i++) g->dq[i] += g->dqc[i];
    }
    sigma_step_init(g);
    LV_CHECK(sigma_state(g));
  }
  return 0;
}

/* The block that replaces T(h Dq) in the Newton matrix (into g->T, with
 * g->hdq = h Dq set by ga_jacobian): F (exact corrector, fill_fmat) or
 * P = sigma I + (1 - sigma) T (paper, fill_pmat). */
int ga_sigma_newton_tangent(genalpha *g) {
  if (!g->corr_paper) { /* exact sigma-scheme: T -> F */
    fmat_ctx fc = {g, g->hdq};
    int nz = g->index == 2 ? g->nc : 0; /* index 2: F has the zeta columns too */
    LV_CHECK(lv_spm_fill(&g->T, g->nv, g->nv + nz, fill_fmat, &fc));
  } else { /* paper: T -> P, the "full Jacobian" (67) */
    pmat_ctx pc = {g->sp, g->hdq, g->sigma};
    LV_CHECK(lv_spm_fill(&g->T, g->nv, g->nv, fill_pmat, &pc));
  }
  return 0;
}

/* Exact corrector: theta += Phi Dx (+ the B_n^T zeta part, index 2), then
 * v, a, v' from theta (sigma_state). */
int ga_sigma_update(genalpha *g, const double *dx, const double *y) {
  int d = g->nv, k = g->nc;
  double ih = 1.0 / g->h;
  if (g->index == 2 && k > 0) { /* eta was updated by ga_update */
    memset(g->bne, 0, (size_t)d * sizeof(double));
    ga_bn_t_apply(g, g->eta, g->bne);
  }
  int nf = lv_space_nfactors(g->sp);
  for (int i = 0; i < d; i++) {
    int f = g->vfac[i], a = i - g->rb[f];
    if (a < 0 || a >= g->rk[f]) g->dq[i] += dx[i] * ih;
  }
  for (int f = 0; f < nf; f++) {
    int o = g->rb[f], kk = g->rk[f];
    const double *Ph = g->phblk + 36 * f;
    double z[6] = {0, 0, 0, 0, 0, 0};
    if (g->index == 2 && k > 0) {
      /* the B_n^T zeta part of y: (I - c D)^-1 (Q - I) B_n^T zeta, Q - I =
       * sigma (T^-1 - I) at this iterate, so that v moves by gamma' y as
       * the Newton matrix assumes (without it, 2.6 instead of 2.0 Newton
       * iterations per step on the slider-crank, index 2, h = 1e-3) */
      const double *Ti = g->tiblk + 36 * f, *X = g->xblk + 36 * f, *y0 = y + o, *d0 = dx + o;
      double w[6];
      for (int a = 0; a < kk; a++) {
        double t = 0.0;
        for (int b = 0; b < kk; b++) t += Ti[a * kk + b] * (y0[b] - d0[b]);
        w[a] = g->sigma * (t - (y0[a] - d0[a]));
      }
      for (int a = 0; a < kk; a++)
        for (int b = 0; b < kk; b++) z[a] += X[a * kk + b] * w[b];
    }
    for (int a = 0; a < kk; a++) {
      double t = z[a];
      for (int b = 0; b < kk; b++) t += Ph[a * kk + b] * dx[o + b];
      g->dq[o + a] += t * ih;
    }
  }
  LV_CHECK(sigma_state(g));
  return 0;
}

/* Paper corrector: theta_lin and v, v' move linearly, theta through T^-1. */
int ga_sigma_paper_update(genalpha *g, const double *dx, const double *y) {
  int d = g->nv;
  double ih = 1.0 / g->h;
  for (int i = 0; i < d; i++) {
    g->dql[i] += dx[i] * ih;
    g->v1[i] += g->gp * y[i];
    g->vd1[i] += g->bp * y[i];
  }
  LV_CHECK(paper_theta_update(g, dx));
  return 0;
}

/* Exact corrector, after the solve: (theta - theta_lin) / h of this step,
 * the next predictor's starting correction. */
void ga_sigma_keep_correction(genalpha *g) {
  int d = g->nv;
  double h = g->h, be = g->beta;
  const double *vn = g->vn, *an = g->an;
  for (int i = 0; i < d; i++)
    g->dqc[i] = g->dq[i] - (vn[i] - g->bne[i] + (0.5 - be) * h * an[i] + be * h * g->a1[i]);
}
