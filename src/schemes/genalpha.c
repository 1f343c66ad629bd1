/* Lie group generalized-alpha (Brüls-Cardona 2010; analysis Arnold-Brüls-
 * Cardona 2015 = seed 000, velocity projection seed 001).  Spec:
 * spec/000_001_genalpha.md, equation numbers (9), (56)-(58) are the papers'.
 *
 * Model convention (lv_model.h): M v' = -dV + f - G^T lambda, so the papers'
 * force vector is g = dV - f and B = G.  One step t_n -> t_{n+1}:
 *
 *   q_{n+1} = q_n o exp(h Dq~)
 *   Dq      = v_n - [G(q_n)^T eta] + (1/2 - beta) h a_n + beta h a_{n+1}
 *   v_{n+1} = v_n + (1 - gamma) h a_n + gamma h a_{n+1}
 *   (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) vd_{n+1} + alpha_f vd_n
 *   M vd_{n+1} + dV - f + G^T lambda_{n+1} = 0,   g(q_{n+1}) = 0
 *   [index 2 only:  G(q_{n+1}) v_{n+1} = 0]
 *
 * Newton runs in (Dx, [zeta,] dlambda^) with Dx = h d(Dq), zeta = h d(eta),
 * dlambda = beta' dlambda^.  The iteration matrix is the spec's S_t (§2.6)
 * with its first block row divided by beta', so that block stays O(1) as
 * h -> 0 (unscaled, cond grows like h^-4).  The index-2 velocity row G v = 0
 * is left unscaled, unlike the spec's division by gamma': row scaling does
 * not change the Newton steps, only what the solver's residual test means,
 * and unscaled it bounds |G v| itself (scaled by 1/gamma', |G v| ~ 2e-9
 * passed the test at h = 2.5e-4).  The price is a condition number growing
 * like 1/h (rcond ~ h/13 on the heavy top), harmless down to h = 1e-7.  The
 * residual test thus reads |r|/beta' (a position-increment size), |g(q)|,
 * |G v| <= res_tol; the increment test is the spec's weighted RMS of
 * (Dx, zeta, dlambda) against (h Dq, h eta, lambda).
 *
 * K_t T and G T are products with the block-diagonal tangent operator
 * T(h Dq).  They are formed entry by entry through product sinks and an
 * assembly cache, so the same code fills a dense or a sparse (UMFPACK)
 * matrix, and the pattern stays what the model's callbacks write.
 *
 * Pseudo-acceleration a and vd = v' are private; the state carries q, v,
 * lambda and (index 2) eta in state->gamma (zero for index 3). */
#include <float.h>
#include "lv_internal.h"
#include "product_sink.h"
#include "schemes/history.h"
#include "space/group.h"


/* ------------------------------------------------------------------ */

/* START_A0: (57) only, v0 = v(t0) (the public Lie group suite's default;
 * keeps the first-order transient, spec 000 §3.8, B9) */
/* START_NO_COMMUTATOR: ablation, (56)+(57) with ad_{v0} v'0 dropped from l0
 * (spec 000 C13: the transient comes back, order 1) */
typedef enum { START_STANDARD = 0, START_PERTURBED = 1, START_A0 = 2, START_NO_COMMUTATOR = 3 } start_kind;

typedef struct {
  const lv_model *m;
  lv_state *s;
  int nv, nq, nc, index, N;   /* N = Newton system size */
  /* method parameters */
  double am, af, beta, gam;
  start_kind start;
  int project_every;
  int nproj, next_proj;       /* projection times (sorted) and the next pending one */
  double *proj_t;
  /* private state */
  double *a, *vd;             /* pseudo-acceleration, v' */
  int start_pending;          /* perturbed start not yet applied (needs h) */
  /* the step being solved */
  double h, t1, bp, gp;       /* step, t_{n+1}, beta', gamma' */
  double s3;                  /* scale of the index-2 velocity-constraint row (1, see top) */
  const double *vn, *an;      /* v_n, a_n used by this step (perturbed start may replace them) */
  double *q1, *v1, *vd1, *a1, *lam1, *eta, *dq;
  double *hdq, *tmp, *tmp2;   /* scratch, nv */
  double *bnz;                /* B_n^T zeta, nv */
  double *vstart, *astart;    /* perturbed starting values */
  lv_rfac T;                     /* tangent operator T(h Dq) */
  lv_rfac Bn;                    /* G(q_n), keyed by column: rows of B_n^T */
  lv_rfac G1;                    /* G(q_{n+1}) at the current iterate */
  lv_rfac Mc;                    /* M (recorded once if constant, else per iterate) */
  int g1_valid, mc_valid;
  lv_newton *nw;
  lv_linsol *kkt;             /* [M G^T; G 0]: (7), the start, projections */
  double *kb;                 /* its right-hand side, nv + nc */
  int h_new;                  /* new_h since the last solve: the factorisation is stale */
  double *saved;              /* a, v', dqc at the last save (halving), 3 nv */
  int saved_next_proj, saved_start_pending;
  /* sigma-modification (issue 6, spec 002): see the block before ga_residual */
  double sigma, pfac;         /* sigma; predictor factor f of the paper's corrector */
  int corr_paper;             /* 1: the paper's simplified corrector (Algs 1-3); 2: the same with the
                                 previous-acceleration predictor (ablation, spec 002 §4.4) */
  double *dql;                /* paper corrector: theta_lin / h (the linear part of theta) */
  double *dqc;                /* exact corrector: (theta - theta_lin) / h of the last step */
  /* exact corrector: per factor f its Lie block (space/group.h), the
   * velocity indices rb[f] .. rb[f] + rk[f] - 1 (rk = 0 for R^k), its
   * operations grp[f], and k x k row-major slots for T^-1 and
   * D = d(T^-1(theta) v)/dtheta there (36 doubles each) */
  int *vfac, *rb, *rk;         /* factor of each velocity index; block start, size */
  const lv_group **grp;        /* the factor's operations table */
  double *tiblk, *dblk;        /* 36 nfactors each */
  double *phblk;               /* Phi = dtheta/dx of the last Newton matrix, 36 nfactors */
  double *xblk;                /* (I - c D)^-1 of the last Newton matrix (index 2), 36 nfactors */
  double *bne;                 /* B_n^T eta (index 2; zero for index 3) */
  double *wacc;                /* index 2: one row of the zeta columns of F, nc (fill_fmat) */
  int *wmark, *wlist;          /* its positions: marks and list, nc each */
  double *sbase;               /* per step: v*, b, v'b (sigma_step_init), 3 nv */
  double s_ihg, s_ka;          /* per step: 1 / (h gamma), (1 - alpha_m) / (1 - alpha_f) */
} genalpha;

/* ---- small fills for lv_rfac ---- */
typedef struct {
  const lv_space *sp;
  const double *w;
} tan_ctx;
static int fill_tangent(void *ctx, lv_sink *s) {
  tan_ctx *c = ctx;
  return lv_space_tangent(c->sp, c->w, s);
}
typedef struct {
  const lv_model *m;
  const double *q;
} jac_ctx;
static int fill_jac(void *ctx, lv_sink *s) {
  jac_ctx *c = ctx;
  return lv_model_constraint_jac(c->m, c->q, s);
}
static int fill_mass(void *ctx, lv_sink *s) {
  jac_ctx *c = ctx;
  return lv_model_mass(c->m, c->q, s);
}

/* G(q_{n+1}) and M(q_{n+1}) of the current iterate, one callback each. */
static int iterate_matrices(genalpha *g) {
  if (!g->mc_valid) {
    jac_ctx jc = {g->m, g->q1};
    LV_CHECK(lv_rfac_fill(&g->Mc, g->nv, g->nv, fill_mass, &jc));
    g->mc_valid = g->m->mass_constant;
  }
  if (!g->g1_valid && g->nc > 0) {
    jac_ctx jc = {g->m, g->q1};
    LV_CHECK(lv_rfac_fill(&g->G1, g->nc, g->nv, fill_jac, &jc));
    g->g1_valid = 1;
  }
  return 0;
}

/* ---- the saddle-point solver [M G^T; G 0] at q ---- */
static int kkt_factor(genalpha *g, const double *q) {
  LV_CHECK(lv_linsol_begin(g->kkt));
  lv_sink A = lv_linsol_sink(g->kkt);
  LV_CHECK(lv_model_saddle(g->m, q, q, q, &A));
  return lv_linsol_factor(g->kkt);
}

/* (7): consistent v' and lambda at (t, q, v):
 *   [M G^T; G 0] [vd; lambda] = [f - dV; -Z(q; v) v]. */
static int accelerations(genalpha *g, double t, const double *q, const double *v, double *vd,
                         double *lam) {
  int d = g->nv, k = g->nc;
  LV_CHECK(kkt_factor(g, q));
  LV_CHECK(lv_model_consistent_accelerations(g->m, g->kkt, t, q, v, g->kb, g->tmp));
  memcpy(vd, g->kb, (size_t)d * sizeof(double));
  if (lam && k > 0) memcpy(lam, g->kb + d, (size_t)k * sizeof(double));
  return 0;
}

/* M-orthogonal projection of v onto ker G(q) (seed 001 (7)):
 *   [M G^T; G 0] [v*; mu] = [M v; 0]. */
static int project_velocity(genalpha *g, const double *q, double *v) {
  int d = g->nv, k = g->nc;
  if (k == 0) return 0;
  LV_CHECK(kkt_factor(g, q));
  LV_CHECK(lv_model_mass_apply(g->m, q, v, g->kb));
  memset(g->kb + d, 0, (size_t)k * sizeof(double));
  LV_CHECK(lv_linsol_solve(g->kkt, g->kb));
  memcpy(v, g->kb, (size_t)d * sizeof(double));
  return 0;
}

/* ---- sigma-modification (issue 6; spec 002 §2, §3, §4.4) ----
 *
 * theta = h Dq is the increment q_n^-1 q_{n+1}.  The sigma-scheme replaces
 * theta = theta_lin (the plain relation above) by (12)-(16) with (16) used
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
  int d = g->nv, nf = lv_space_nfactors(g->m->space);
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

/* P = sigma I + (1 - sigma) T(w) into an lv_rfac. */
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
  const lv_rfac *B = &g->Bn;
  for (int a = 0; a < k; a++) {
    int nl = 0;
    for (int b = 0; b < k; b++) {
      double e = E[a * k + b];
      for (int t = B->ptr[o + b]; t < B->ptr[o + b + 1]; t++) {
        int r = B->idx[t];
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
  int nf = lv_space_nfactors(g->m->space);
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
static int sigma_paper_update(genalpha *g, const double *y) {
  int d = g->nv;
  double h = g->h;
  for (int i = 0; i < d; i++) g->hdq[i] = h * g->dq[i];
  LV_CHECK(lv_space_tangent_inv_apply(g->m->space, g->hdq, y, g->tmp2));
  for (int i = 0; i < d; i++) g->dq[i] += (g->sigma * g->tmp2[i] + (1.0 - g->sigma) * y[i]) / h;
  return 0;
}

/* Leading Lie-group coefficient of the local error in theta (multiplies
 * h^3 ad_v v'), used by the perturbed start: 1/12 for sigma = 0. */
static double sigma_lie_coef(const genalpha *g) {
  double bg = g->beta / g->gam;
  if (!g->corr_paper) return 1.0 / 12.0 - 0.25 * g->sigma * bg;
  double k1 = (1.0 - g->af) / (1.0 - g->am); /* 1 - kappa */
  return 1.0 / 12.0 - g->sigma * (g->pfac * bg * (0.5 - (g->gam - g->beta) * k1) + 0.5 * g->beta * k1);
}

/* ---- Newton problem ---- */

static int ga_residual(void *ctx, double *r) {
  genalpha *g = ctx;
  const lv_model *m = g->m;
  int d = g->nv, k = g->nc;
  LV_CHECK(iterate_matrices(g));
  memset(r, 0, (size_t)d * sizeof(double));
  lv_rfac_matvec(&g->Mc, g->vd1, r, 0);
  if (m->dV) {
    LV_CHECK(lv_model_grad_potential(m, g->q1, g->tmp));
    for (int i = 0; i < d; i++) r[i] += g->tmp[i];
  }
  if (m->force) {
    LV_CHECK(lv_model_force(m, g->t1, g->q1, g->v1, g->tmp));
    for (int i = 0; i < d; i++) r[i] -= g->tmp[i];
  }
  if (k > 0) lv_rfac_matvec(&g->G1, g->lam1, r, 1);
  double sb = 1.0 / g->bp;
  for (int i = 0; i < d; i++) r[i] *= sb;
  if (k > 0) LV_CHECK(lv_model_constraints(m, g->q1, r + d));
  if (g->index == 2 && k > 0) {
    double *rv = r + d + k;
    memset(rv, 0, (size_t)k * sizeof(double));
    lv_rfac_matvec(&g->G1, g->v1, rv, 0);
    for (int i = 0; i < k; i++) rv[i] *= g->s3;
  }
  return 0;
}

/* Every block of the scaled iteration matrix into the solver's assembly. */
static int assemble(genalpha *g, lv_assembly *A) {
  const lv_model *m = g->m;
  int d = g->nv, k = g->nc;
  double sb = 1.0 / g->bp, cg = g->gp / g->bp;
  lv_blk_sink b;
  /* (1,1): M + (gamma'/beta') C_t + (1/beta') K_t T,  C_t = -df/dv,
   * K_t = D_q(M vd) + d2V - df/dq + D_q(G^T lambda). */
  lv_blk_rfac(A, &g->Mc, 0, 0, 1.0, 0, NULL);
  if (m->force) LV_CHECK(lv_model_force_dv(m, g->t1, g->q1, g->v1, lv_blk(&b, A, 0, 0, d, d, -cg, 0, NULL)));
  if (m->dV) LV_CHECK(lv_model_hess_potential(m, g->q1, lv_blk(&b, A, 0, 0, d, d, sb, 0, &g->T)));
  if (m->force) LV_CHECK(lv_model_force_dq(m, g->t1, g->q1, g->v1, lv_blk(&b, A, 0, 0, d, d, -sb, 0, &g->T)));
  if (k > 0) LV_CHECK(lv_model_constraint_hessian(m, g->q1, g->lam1, lv_blk(&b, A, 0, 0, d, d, sb, 0, &g->T)));
  if (!m->mass_constant) LV_CHECK(lv_fd_mass_dq(m, g->q1, g->vd1, lv_blk(&b, A, 0, 0, d, d, sb, 0, &g->T), 1.0));
  if (k == 0) return 0;
  int cl = g->index == 2 ? d + k : d; /* column of the lambda block */
  lv_blk_rfac(A, &g->G1, 0, cl, 1.0, 1, NULL); /* G^T */
  lv_blk_rfac(A, &g->G1, d, 0, 1.0, 0, &g->T); /* G T */
  if (g->index != 2) return 0;
  /* (1,zeta): (M + (gamma'/beta') C_t) B_n^T */
  lv_blk_rfac(A, &g->Mc, 0, d, 1.0, 0, &g->Bn);
  if (m->force) LV_CHECK(lv_model_force_dv(m, g->t1, g->q1, g->v1, lv_blk(&b, A, 0, d, d, d, -cg, 0, &g->Bn)));
  /* (3,1): s3 (gamma' G + Z(q; v) T);  (3,zeta): s3 gamma' G B_n^T */
  double s3 = g->s3, sgp = g->s3 * g->gp;
  lv_blk_rfac(A, &g->G1, d + k, 0, sgp, 0, NULL);
  LV_CHECK(lv_model_constraint_curvature(m, g->q1, g->v1, lv_blk(&b, A, d + k, 0, k, d, s3, 0, &g->T)));
  lv_blk_rfac(A, &g->G1, d + k, d, sgp, 0, &g->Bn);
  return 0;
}

static int ga_jacobian(void *ctx, lv_linsol *ls) {
  genalpha *g = ctx;
  for (int i = 0; i < g->nv; i++) g->hdq[i] = g->h * g->dq[i];
  if (g->sigma != 0.0 && !g->corr_paper) { /* exact sigma-scheme: T -> F */
    fmat_ctx fc = {g, g->hdq};
    int nz = g->index == 2 ? g->nc : 0; /* index 2: F has the zeta columns too */
    LV_CHECK(lv_rfac_fill(&g->T, g->nv, g->nv + nz, fill_fmat, &fc));
  } else if (g->sigma != 0.0) { /* paper: T -> P, the "full Jacobian" (67) */
    pmat_ctx pc = {g->m->space, g->hdq, g->sigma};
    LV_CHECK(lv_rfac_fill(&g->T, g->nv, g->nv, fill_pmat, &pc));
  } else {
    tan_ctx tc = {g->m->space, g->hdq};
    LV_CHECK(lv_rfac_fill(&g->T, g->nv, g->nv, fill_tangent, &tc));
  }
  LV_CHECK(iterate_matrices(g));
  return assemble(g, lv_linsol_assembly(ls));
}

/* y += B_n^T z from the recorded G(q_n). */
static void bn_t_apply(const genalpha *g, const double *z, double *y) {
  const lv_rfac *F = &g->Bn;
  for (int c = 0; c < F->nkey; c++)
    for (int t = F->ptr[c]; t < F->ptr[c + 1]; t++) y[c] += F->val[t] * z[F->idx[t]];
}

static int ga_update(void *ctx, const double *dx) {
  genalpha *g = ctx;
  int d = g->nv, k = g->nc;
  const double *y = dx;
  if (g->index == 2 && k > 0) {
    /* the velocity-level correction is Dx + B_n^T zeta */
    memcpy(g->bnz, dx, (size_t)d * sizeof(double));
    bn_t_apply(g, dx + d, g->bnz);
    y = g->bnz;
    for (int i = 0; i < k; i++) g->eta[i] += dx[d + i] / g->h;
  }
  double ih = 1.0 / g->h;
  if (g->sigma != 0.0 && !g->corr_paper) { /* issue 6: theta += Phi Dx, then sigma_state */
    if (g->index == 2 && k > 0) { /* eta was updated above */
      memset(g->bne, 0, (size_t)d * sizeof(double));
      bn_t_apply(g, g->eta, g->bne);
    }
    int nf = lv_space_nfactors(g->m->space);
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
  } else if (g->corr_paper) { /* issue 6: see the sigma block */
    for (int i = 0; i < d; i++) {
      g->dql[i] += dx[i] * ih;
      g->v1[i] += g->gp * y[i];
      g->vd1[i] += g->bp * y[i];
    }
    LV_CHECK(sigma_paper_update(g, dx));
  } else {
    for (int i = 0; i < d; i++) {
      g->dq[i] += dx[i] * ih;
      g->v1[i] += g->gp * y[i];
      g->vd1[i] += g->bp * y[i];
    }
  }
  const double *dl = dx + (g->index == 2 ? d + k : d);
  for (int i = 0; i < k; i++) g->lam1[i] += g->bp * dl[i];
  g->g1_valid = 0;
  g->mc_valid = g->mc_valid && g->m->mass_constant;
  return lv_space_compose_exp(g->m->space, g->s->q, g->h, g->dq, g->q1);
}

/* WRMS weights of the spec (§2.6): Dx against h Dq, zeta against h eta,
 * dlambda = beta' dlambda^ against lambda. */
static int ga_weights(void *ctx, const double *tol, double *w) {
  genalpha *g = ctx;
  int d = g->nv, k = g->nc;
  double at = tol[0], rt = tol[1];
  for (int i = 0; i < d; i++) w[i] = 1.0 / (at + rt * fabs(g->h * g->dq[i]));
  int o = d;
  if (g->index == 2 && k > 0) {
    for (int i = 0; i < k; i++) w[o + i] = 1.0 / (at + rt * fabs(g->h * g->eta[i]));
    o += k;
  }
  for (int i = 0; i < k; i++) w[o + i] = g->bp / (at + rt * fabs(g->lam1[i]));
  return 0;
}

/* ---- options ---- */

static const lv_param_info ga_options[] = {
    {"index", "3", "3: index-3 formulation (9); 2: stabilised index-2 (GGL) formulation (58)"},
    {"rho-inf", "0.9", "spectral radius at infinity, in [0, 1]: Chung-Hulbert parameters (52)"},
    {"alpha-m", "", "override alpha_m (default from rho-inf)"},
    {"alpha-f", "", "override alpha_f (default from rho-inf)"},
    {"beta", "", "override beta (default from rho-inf)"},
    {"gamma", "", "override gamma (default from rho-inf)"},
    {"start", "perturbed",
     "standard: v0 = v(t0), a0 = v'(t0); perturbed: (56)+(57) for index 3 (removes the first-order "
     "transient in lambda), (57) only for index 2; a0: (57) only, v0 = v(t0) (the public Lie group "
     "suite's default; for index 3 the transient stays); perturbed-no-commutator: "
     "ablation, (56)+(57) without the commutator ad_v v' in l0 (the transient "
     "reappears, at half its size)"},
    {"projection", "off", "on: M-orthogonal velocity projection onto G v = 0 after every step"},
    {"projection-times", "", "comma-separated times t* after which v is projected (Arnold, Cardona & Brüls 2015 "
        "report)"},
    {"sigma", "0",
     "sigma-modification of Holzinger, Arnold & Gerstmayr (their equation numbers below): a number, or optimal = "
     "gamma/(3 beta); 0 is the original method "
     "(geom1), 1 the simple variant"},
    {"corrector", "exact",
     "with sigma: exact (Newton on the full residual of the discrete scheme (11)-(19)) or paper "
     "(the simplified corrector of Algs 1-3: a different O(h^3) method); "
     "paper-previous-acceleration: ablation, the paper's corrector predicting v'_{n+1} = v'_n, "
     "lambda_{n+1} = lambda_n instead of zero (unstable at h = 1e-3 on the heavy top)"},
    {"predictor-factor", "1",
     "corrector=paper only: f in theta_p = (I - f sigma (h beta/gamma) v^) theta_lin; 1 as printed "
     "(84), 0.5 consistent with (29)"},
    {NULL, NULL, NULL},
};

static int parse_times(const char *s, double **out, int *n) {
  *out = NULL;
  *n = 0;
  if (!s || !*s) return 0;
  int cnt = 1;
  for (const char *p = s; *p; p++)
    if (*p == ',') cnt++;
  double *t = lv_calloc((size_t)cnt, sizeof(double));
  if (!t) return LV_ENOMEM;
  const char *p = s;
  for (int i = 0; i < cnt; i++) {
    char *end = NULL;
    t[i] = strtod(p, &end);
    if (end == p || !isfinite(t[i]) || (*end != ',' && *end != '\0')) {
      free(t);
      return LV_EINPUT;
    }
    p = end + (*end == ',');
  }
  /* insertion sort: a handful of times */
  for (int i = 1; i < cnt; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  *out = t;
  *n = cnt;
  return 0;
}

/* Rule for method parameters: values where the scheme is not defined (the
 * step equations divide by beta, gamma, 1 - alpha_m, 1 - alpha_f; rho-inf is
 * a spectral radius in [0, 1]) are refused with the range in the detail;
 * defined but unstable values (Chung-Hulbert: alpha_m <= alpha_f <= 1/2,
 * beta >= 1/4 + (alpha_f - alpha_m)/2) are allowed, because users study them
 * on purpose. */
static int parse_options(genalpha *g, const lv_kv *kv, char *detail, size_t n) {
  LV_CHECK(lv_kv_check(kv, ga_options, NULL));
/* one sentence naming the option, the value given and what is accepted */
#define REFUSE(key, accepted)                                                                  \
  do {                                                                                         \
    snprintf(detail, n, "genalpha: %s = %s is not accepted: %s", key, lv_kv_string(kv, key, ""), \
             accepted);                                                                        \
    return LV_EINPUT;                                                                          \
  } while (0)
  if (lv_kv_int(kv, "index", 3, &g->index) || (g->index != 3 && g->index != 2))
    REFUSE("index", "3 (index-3 formulation) or 2 (stabilised index 2)");
  const char *sig = lv_kv_string(kv, "sigma", "0");
  int sig_opt = strcmp(sig, "optimal") == 0;
  if (!sig_opt && (lv_kv_double(kv, "sigma", 0.0, &g->sigma) || !isfinite(g->sigma)))
    REFUSE("sigma", "a finite number or 'optimal'");
  const char *co = lv_kv_string(kv, "corrector", "exact");
  if (strcmp(co, "paper") == 0)
    g->corr_paper = 1;
  else if (strcmp(co, "paper-previous-acceleration") == 0)
    g->corr_paper = 2;
  else if (strcmp(co, "exact") != 0)
    REFUSE("corrector", "'exact', 'paper' or 'paper-previous-acceleration' (an ablation)");
  if (lv_kv_double(kv, "predictor-factor", 1.0, &g->pfac) || !isfinite(g->pfac))
    REFUSE("predictor-factor", "a finite number");

  double rho;
  if (lv_kv_double(kv, "rho-inf", 0.9, &rho)) REFUSE("rho-inf", "a number in [0, 1]");
  if (!(rho >= 0.0 && rho <= 1.0)) {
    snprintf(detail, n, "genalpha: rho-inf = %g is outside its range [0, 1]", rho);
    return LV_EINPUT;
  }
  /* Chung-Hulbert (52) */
  g->am = (2.0 * rho - 1.0) / (rho + 1.0);
  g->af = rho / (rho + 1.0);
  g->gam = 0.5 + g->af - g->am;
  g->beta = 0.25 * (g->gam + 0.5) * (g->gam + 0.5);
  LV_CHECK(lv_kv_double(kv, "alpha-m", g->am, &g->am));
  LV_CHECK(lv_kv_double(kv, "alpha-f", g->af, &g->af));
  LV_CHECK(lv_kv_double(kv, "beta", g->beta, &g->beta));
  LV_CHECK(lv_kv_double(kv, "gamma", g->gam, &g->gam));
  /* the step equations divide by these */
  if (!(g->beta > 0.0)) {
    snprintf(detail, n, "genalpha: beta = %g is outside its range beta > 0 (stable for beta >= 1/4 + (alpha-f - alpha-m)/2)", g->beta);
    return LV_EINPUT;
  }
  if (!(g->gam > 0.0)) {
    snprintf(detail, n, "genalpha: gamma = %g is outside its range gamma > 0 (second order for gamma = 1/2 + alpha-f - alpha-m)", g->gam);
    return LV_EINPUT;
  }
  if (!(g->am < 1.0) || !(g->af < 1.0)) {
    snprintf(detail, n, "genalpha: alpha-m = %g, alpha-f = %g are outside their range alpha < 1 (stable for alpha-m <= alpha-f <= 1/2)", g->am, g->af);
    return LV_EINPUT;
  }
  if (sig_opt) g->sigma = g->gam / (3.0 * g->beta); /* removes the Lie term of (40) */

  const char *st = lv_kv_string(kv, "start", "perturbed");
  if (strcmp(st, "standard") == 0)
    g->start = START_STANDARD;
  else if (strcmp(st, "perturbed") == 0)
    g->start = START_PERTURBED;
  else if (strcmp(st, "a0") == 0)
    g->start = START_A0;
  else if (strcmp(st, "perturbed-no-commutator") == 0)
    g->start = START_NO_COMMUTATOR;
  else
    REFUSE("start", "'perturbed', 'standard', 'a0' or 'perturbed-no-commutator' (an ablation)");

  const char *pr = lv_kv_string(kv, "projection", NULL);
  if (pr && strcmp(pr, "on") != 0 && strcmp(pr, "off") != 0) REFUSE("projection", "'on' or 'off'");
  g->project_every = pr && strcmp(pr, "on") == 0;
  int rc = parse_times(lv_kv_string(kv, "projection-times", NULL), &g->proj_t, &g->nproj);
  if (rc == LV_EINPUT) REFUSE("projection-times", "a comma-separated list of finite times");
  if (rc) return rc;
  /* an explicit "projection" contradicts a list of times */
  if (pr && g->nproj > 0) REFUSE("projection", "not together with projection-times (they contradict)");
  return 0;
#undef REFUSE
}

/* ---- scheme table functions ---- */

static void ga_destroy(lv_stepper *st) {
  genalpha *g = st->priv;
  if (!g) return;
  lv_newton_free(g->nw);
  free(g->saved);
  lv_linsol_free(g->kkt);
  lv_rfac_free(&g->T);
  lv_rfac_free(&g->Bn);
  lv_rfac_free(&g->G1);
  lv_rfac_free(&g->Mc);
  free(g->vfac);
  free(g->rb);
  free(g->rk);
  free(g->grp);
  free(g->wacc);
  free(g->wmark);
  free(g->wlist);
  double *bufs[] = {g->a,   g->vd,  g->q1,  g->v1,  g->vd1,    g->a1,     g->lam1, g->eta,
                    g->dq,  g->hdq, g->tmp, g->tmp2, g->bnz,   g->vstart, g->astart,
                    g->kb, g->proj_t, g->dql, g->tiblk, g->dblk, g->phblk, g->xblk, g->bne, g->sbase, g->dqc};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
  free(g);
  st->priv = NULL;
}

static int create_body(lv_stepper *st, genalpha *g) {
  const lv_model *m = st->model;
  g->m = m;
  g->s = st->state;
  g->nv = m->nv;
  g->nq = m->nq;
  g->nc = m->nc;
  LV_CHECK(parse_options(g, st->options, st->detail, sizeof st->detail));
  int d = g->nv, k = g->nc;
  g->N = d + (g->index == 2 ? 2 * k : k);
  size_t sd = (size_t)d, sk = (size_t)k;
  g->a = lv_calloc(sd, sizeof(double));
  g->vd = lv_calloc(sd, sizeof(double));
  g->q1 = lv_calloc((size_t)g->nq, sizeof(double));
  g->v1 = lv_calloc(sd, sizeof(double));
  g->vd1 = lv_calloc(sd, sizeof(double));
  g->a1 = lv_calloc(sd, sizeof(double));
  g->lam1 = lv_calloc(sk, sizeof(double));
  g->eta = lv_calloc(sk, sizeof(double));
  g->dq = lv_calloc(sd, sizeof(double));
  g->hdq = lv_calloc(sd, sizeof(double));
  g->tmp = lv_calloc(sd, sizeof(double));
  g->tmp2 = lv_calloc(sd, sizeof(double));
  g->bnz = lv_calloc(sd, sizeof(double));
  g->vstart = lv_calloc(sd, sizeof(double));
  g->astart = lv_calloc(sd, sizeof(double));
  g->kb = lv_calloc(sd + sk, sizeof(double));
  g->dql = lv_calloc(sd, sizeof(double));
  g->dqc = lv_calloc(sd, sizeof(double));
  if (!g->dqc) return LV_ENOMEM;
  int nf = lv_space_nfactors(m->space);
  g->tiblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->dblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->phblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->xblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->bne = lv_calloc(sd, sizeof(double));
  g->wacc = lv_calloc(sk, sizeof(double));
  g->wmark = lv_calloc(sk, sizeof(int));
  g->wlist = lv_calloc(sk, sizeof(int));
  if (!g->wacc || !g->wmark || !g->wlist) return LV_ENOMEM;
  g->sbase = lv_calloc(3 * sd, sizeof(double));
  g->vfac = lv_calloc(sd + 1, sizeof(int));
  g->rb = lv_calloc((size_t)nf + 1, sizeof(int));
  g->rk = lv_calloc((size_t)nf + 1, sizeof(int));
  g->grp = lv_calloc((size_t)nf + 1, sizeof *g->grp);
  if (!g->grp) return LV_ENOMEM;
  if (!g->dql || !g->tiblk || !g->dblk || !g->phblk || !g->xblk || !g->bne || !g->sbase || !g->vfac || !g->rb || !g->rk) return LV_ENOMEM;
  for (int f = 0; f < nf; f++) {
    int vo, nv;
    LV_CHECK(lv_space_factor(m->space, f, NULL, NULL, NULL, &vo, &nv));
    for (int i = 0; i < nv; i++) g->vfac[vo + i] = f;
    g->grp[f] = lv_space_factor_group(m->space, f);
    g->rb[f] = vo + g->grp[f]->rb;
    g->rk[f] = g->grp[f]->rk;
    for (int a = 0; a < g->rk[f]; a++) /* before any Newton matrix */
      g->phblk[36 * f + a * g->rk[f] + a] = g->xblk[36 * f + a * g->rk[f] + a] = 1.0;
  }
  if (!g->a || !g->vd || !g->q1 || !g->v1 || !g->vd1 || !g->a1 || !g->lam1 || !g->eta || !g->dq ||
      !g->hdq || !g->tmp || !g->tmp2 || !g->bnz || !g->vstart || !g->astart || !g->kb)
    return LV_ENOMEM;
  LV_CHECK(lv_rfac_init(&g->T, d, 0, 6 * d));
  LV_CHECK(lv_rfac_init(&g->Bn, d, 1, 4 * d));
  LV_CHECK(lv_rfac_init(&g->G1, k, 0, 4 * d));
  LV_CHECK(lv_rfac_init(&g->Mc, d, 0, 4 * d));
  LV_CHECK(lv_newton_new(&g->nw, g->N, st->linsol_kind));
  *lv_newton_opts(g->nw) = st->newton;
  LV_CHECK(lv_linsol_new(&g->kkt, st->linsol_kind, d + k, st->linsol_threshold));
  st->linsol = lv_newton_linsol(g->nw);
  return 0;
}

static int ga_create(lv_stepper *st) {
  genalpha *g = lv_calloc(1, sizeof *g);
  if (!g) return LV_ENOMEM;
  st->priv = g;
  int rc = create_body(st, g);
  if (rc) ga_destroy(st); /* the integrator only destroys what was created */
  return rc;
}

static int ga_init(lv_stepper *st) {
  genalpha *g = st->priv;
  lv_state *s = st->state;
  /* (7); a0 = v'(t0) until the first step knows h (perturbed start). */
  LV_CHECK(accelerations(g, s->t, s->q, s->v, g->vd, s->lambda));
  memcpy(g->a, g->vd, (size_t)g->nv * sizeof(double));
  memset(s->gamma, 0, (size_t)g->nc * sizeof(double));
  g->start_pending = g->start == START_PERTURBED || g->start == START_A0 || g->start == START_NO_COMMUTATOR;
  g->next_proj = 0;
  g->mc_valid = g->g1_valid = 0;
  memset(g->dqc, 0, (size_t)g->nv * sizeof(double)); /* sigma: no previous correction */
  return 0;
}

/* Perturbed starting values [P1 §4.2] for step h:
 *   v''(t0) by central differences with s = 1 from (7) at
 *     q_+- = q0 o exp(+-h v0 + h^2/2 v'0),  v_+- = v0 +- h v'0,  t0 +- h;
 *   a0 = v'0 + (alpha_m - alpha_f) h v''0                                (57)
 *   index 3: l0 = h^3/12 (2 C_q v''0 + ad_{v0} v'0),
 *            v0 += Dv with [M G^T; G 0][Dv; .] = [0; G l0 / h]           (56)
 * The index-2 method keeps v0 (it must start on G v = 0, spec §3.7), and
 * so does start = a0 (only (57)). */
static int perturbed_start(genalpha *g, double h) {
  const lv_model *m = g->m;
  const lv_state *s = g->s;
  int d = g->nv, k = g->nc;
  double *vdd = g->astart; /* v''0, turned into a0 below */
  double *w = g->hdq, *vp = g->v1, *qp = g->q1, *vdp = g->vd1, *vdm = g->tmp2;
  for (int sgn = -1; sgn <= 1; sgn += 2) {
    for (int i = 0; i < d; i++) {
      w[i] = sgn * h * s->v[i] + 0.5 * h * h * g->vd[i];
      vp[i] = s->v[i] + sgn * h * g->vd[i];
    }
    LV_CHECK(lv_space_compose_exp(m->space, s->q, 1.0, w, qp));
    LV_CHECK(accelerations(g, s->t + sgn * h, qp, vp, sgn < 0 ? vdm : vdp, NULL));
  }
  for (int i = 0; i < d; i++) vdd[i] = (vdp[i] - vdm[i]) / (2.0 * h);
  memcpy(g->vstart, s->v, (size_t)d * sizeof(double));
  if (g->index == 3 && k > 0 && (g->start == START_PERTURBED || g->start == START_NO_COMMUTATOR)) {
    double cq = 1.0 - 6.0 * g->beta - 3.0 * (g->am - g->af);
    LV_CHECK(lv_space_ad(m->space, s->v, g->vd, g->tmp));
    double lie = g->sigma != 0.0 || g->corr_paper ? 12.0 * sigma_lie_coef(g) : 1.0; /* 1: sigma = 0 as before */
    if (g->start == START_NO_COMMUTATOR) lie = 0.0; /* ablation */
    for (int i = 0; i < d; i++) g->tmp[i] = h * h / 12.0 * (2.0 * cq * vdd[i] + lie * g->tmp[i]); /* l0 / h */
    LV_CHECK(kkt_factor(g, s->q));
    memset(g->kb, 0, (size_t)d * sizeof(double));
    LV_CHECK(lv_model_G_apply(m, s->q, g->tmp, g->kb + d));
    LV_CHECK(lv_linsol_solve(g->kkt, g->kb));
    for (int i = 0; i < d; i++) g->vstart[i] += g->kb[i];
  }
  for (int i = 0; i < d; i++) g->astart[i] = g->vd[i] + (g->am - g->af) * h * vdd[i];
  return 0;
}

/* The step's parameters and the predictor: the first Newton iterate. */
static int ga_predict(genalpha *g, lv_stepper *st, double h) {
  const lv_model *m = g->m;
  lv_state *s = st->state;
  int d = g->nv, k = g->nc;
  double am = g->am, af = g->af, be = g->beta, ga = g->gam;
  g->h = h;
  g->t1 = s->t + h;
  g->bp = (1.0 - am) / (be * h * h * (1.0 - af));
  g->gp = ga / (be * h);
  g->s3 = 1.0;
  g->vn = s->v;
  g->an = g->a;
  if (g->start_pending) {
    LV_CHECK(perturbed_start(g, h));
    g->vn = g->vstart;
    g->an = g->astart;
  }
  const double *vn = g->vn, *an = g->an;

  /* Predictor: v'_{n+1} = v'_n (constant acceleration), lambda_{n+1} =
   * lambda_n, eta = eta_{n-1}; the rest from the linear relations, so that
   * every Newton iterate satisfies (9b)-(9d) exactly. */
  for (int i = 0; i < d; i++) {
    g->vd1[i] = g->vd[i];
    g->a1[i] = (af * g->vd[i] - am * an[i] + (1.0 - af) * g->vd1[i]) / (1.0 - am);
    g->v1[i] = vn[i] + h * (1.0 - ga) * an[i] + ga * h * g->a1[i];
    g->dq[i] = vn[i] + (0.5 - be) * h * an[i] + be * h * g->a1[i];
  }
  memcpy(g->lam1, s->lambda, (size_t)k * sizeof(double));
  if (g->index == 2 && k > 0) {
    jac_ctx jc = {m, s->q};
    LV_CHECK(lv_rfac_fill(&g->Bn, k, d, fill_jac, &jc));
    memcpy(g->eta, s->gamma, (size_t)k * sizeof(double));
    memset(g->bnz, 0, (size_t)d * sizeof(double));
    bn_t_apply(g, g->eta, g->bnz);
    for (int i = 0; i < d; i++) g->dq[i] -= g->bnz[i];
  }
  if (g->corr_paper) {
    /* Algs 1-3 lines 1-6: zero-acceleration predictor, then the sigma
     * correction of theta_lin (84) with the predictor factor f.  The
     * ablation corr_paper = 2 keeps the previous-acceleration predictor
     * above (v'_n, lambda_n). */
    if (g->corr_paper == 1) {
      for (int i = 0; i < d; i++) {
        g->vd1[i] = 0.0;
        g->a1[i] = (af * g->vd[i] - am * an[i]) / (1.0 - am);
        g->v1[i] = vn[i] + h * (1.0 - ga) * an[i] + ga * h * g->a1[i];
        g->dq[i] += be * h * (g->a1[i] - (af * g->vd[i] - am * an[i] + (1.0 - af) * g->vd[i]) / (1.0 - am));
      }
      memset(g->lam1, 0, (size_t)k * sizeof(double));
    }
    memcpy(g->dql, g->dq, (size_t)d * sizeof(double));
    LV_CHECK(lv_space_ad(m->space, g->v1, g->dql, g->tmp));
    double c = g->pfac * g->sigma * h * be / ga;
    for (int i = 0; i < d; i++) g->dq[i] -= c * g->tmp[i];
  } else if (g->sigma != 0.0) {
    /* theta = theta_lin + the last step's correction theta - theta_lin;
     * a_{n+1} etc. follow */
    if (g->index == 2 && k > 0)
      memcpy(g->bne, g->bnz, (size_t)d * sizeof(double));
    else
      memset(g->bne, 0, (size_t)d * sizeof(double));
    for (int i = 0; i < d; i++) g->dq[i] += g->dqc[i];
    sigma_step_init(g);
    LV_CHECK(sigma_state(g));
  }
  LV_CHECK(lv_space_compose_exp(m->space, s->q, h, g->dq, g->q1));
  g->g1_valid = 0; /* new iterate */
  g->mc_valid = g->mc_valid && m->mass_constant;
  return 0;
}

static int ga_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  genalpha *g = st->priv;
  const lv_model *m = g->m;
  lv_state *s = st->state;
  int d = g->nv, k = g->nc;
  double am = g->am, af = g->af, be = g->beta;
  LV_CHECK(ga_predict(g, st, h));
  const double *vn = g->vn, *an = g->an;

  lv_newton_problem pb = {ga_residual, ga_jacobian, ga_update, ga_weights, g, g->N};
  *lv_newton_opts(g->nw) = st->newton;
  if (g->h_new) lv_newton_invalidate(g->nw); /* beta', gamma' changed */
  g->h_new = 0;
  LV_CHECK(lv_newton_solve(g->nw, &pb, 1, ns));

  if (g->sigma != 0.0 && !g->corr_paper) /* (theta - theta_lin) / h */
    for (int i = 0; i < d; i++)
      g->dqc[i] = g->dq[i] - (vn[i] - g->bne[i] + (0.5 - be) * h * an[i] + be * h * g->a1[i]);
  /* (9d) for a_{n+1} */
  for (int i = 0; i < d; i++) g->a1[i] = (af * g->vd[i] - am * an[i] + (1.0 - af) * g->vd1[i]) / (1.0 - am);

  /* Velocity projection [P2]: only v changes; a, v', lambda, q are kept. */
  int proj = g->project_every;
  int next = g->next_proj;
  while (next < g->nproj && g->proj_t[next] < g->t1 - 0.5 * h) next++; /* times already passed */
  if (next < g->nproj && g->proj_t[next] <= g->t1 + 0.5 * h) {
    proj = 1;
    next++;
  }
  if (proj && k > 0) {
    LV_CHECK(project_velocity(g, g->q1, g->v1));
    ns->factorizations++;
  }

  /* commit (p = M v first: the only evaluation that can still fail) */
  LV_CHECK(lv_model_mass_apply(m, g->q1, g->v1, g->tmp));
  memcpy(s->p, g->tmp, (size_t)d * sizeof(double));
  memcpy(s->q, g->q1, (size_t)g->nq * sizeof(double));
  memcpy(s->v, g->v1, (size_t)d * sizeof(double));
  memcpy(s->lambda, g->lam1, (size_t)k * sizeof(double));
  if (g->index == 2) memcpy(s->gamma, g->eta, (size_t)k * sizeof(double));
  memcpy(g->a, g->a1, (size_t)d * sizeof(double));
  memcpy(g->vd, g->vd1, (size_t)d * sizeof(double));
  g->next_proj = next;
  g->start_pending = 0;
  return 0;
}

/* White-box check for the tests (tests/whitebox.h): the Newton matrix J at the
 * predictor of a step of size h from the current state, and Jfd, its
 * columns by central differences of the residual along the update
 * (predictor, matrix, update(+-eps e_j), residual), both N x N
 * column-major.  Every quantity the update takes from the Newton matrix
 * (Phi etc.) is the predictor's, as in the first Newton iteration.  The
 * state is not changed. */
int lv_genalpha_newton_fd(lv_stepper *st, double h, double eps, double *J, double *Jfd, int *n) {
  genalpha *g = st->priv;
  int N = g->N, rc = 0;
  *n = N;
  lv_linsol *ls = NULL;
  double *dx = lv_calloc((size_t)N, sizeof(double)), *rp = lv_calloc((size_t)N, sizeof(double)),
         *rm = lv_calloc((size_t)N, sizeof(double));
  if (!dx || !rp || !rm) rc = LV_ENOMEM;
  if (!rc) rc = lv_linsol_new(&ls, LV_LINSOL_DENSE, N, 0);
  if (!rc) rc = ga_predict(g, st, h);
  if (!rc) rc = lv_linsol_begin(ls);
  if (!rc) rc = ga_jacobian(g, ls);
  for (int j = 0; j < N && !rc; j++) {
    memset(dx, 0, (size_t)N * sizeof(double));
    dx[j] = 1.0;
    rc = lv_linsol_matvec(ls, dx, J + (size_t)j * (size_t)N);
    for (int sgn = -1; sgn <= 1 && !rc; sgn += 2) {
      dx[j] = sgn * eps;
      rc = ga_predict(g, st, h);
      if (!rc) rc = lv_linsol_begin(ls);
      if (!rc) rc = ga_jacobian(g, ls);
      if (!rc) rc = ga_update(g, dx);
      if (!rc) rc = ga_residual(g, sgn < 0 ? rm : rp);
    }
    for (int i = 0; i < N && !rc; i++) Jfd[i + (size_t)j * (size_t)N] = (rp[i] - rm[i]) / (2.0 * eps);
  }
  lv_linsol_free(ls);
  free(dx);
  free(rp);
  free(rm);
  return rc;
}

static void ga_new_h(lv_stepper *st, double h) {
  (void)h;
  genalpha *g = st->priv;
  g->h_new = 1;
}

/* What a step carries to the next besides the state: a, v', the sigma
 * corrector of the last step, the projection schedule, the pending start. */
static int ga_save(lv_stepper *st) {
  genalpha *g = st->priv;
  size_t d = (size_t)g->nv;
  if (!g->saved && !(g->saved = lv_calloc(3 * d + 1, sizeof(double)))) return LV_ENOMEM;
  memcpy(g->saved, g->a, d * sizeof(double));
  memcpy(g->saved + d, g->vd, d * sizeof(double));
  memcpy(g->saved + 2 * d, g->dqc, d * sizeof(double));
  g->saved_next_proj = g->next_proj;
  g->saved_start_pending = g->start_pending;
  return 0;
}

static void ga_restore(lv_stepper *st) {
  genalpha *g = st->priv;
  size_t d = (size_t)g->nv;
  if (!g->saved) return;
  memcpy(g->a, g->saved, d * sizeof(double));
  memcpy(g->vd, g->saved + d, d * sizeof(double));
  memcpy(g->dqc, g->saved + 2 * d, d * sizeof(double));
  g->next_proj = g->saved_next_proj;
  g->start_pending = g->saved_start_pending;
  g->mc_valid = g->g1_valid = 0;
}

/* Checkpoints (issue 17): the history of ga_save, and whether the next
 * solve must refactorise (h_new). */
static size_t ga_history(lv_stepper *st, double *buf, int dir) {
  genalpha *g = st->priv;
  size_t d = (size_t)g->nv;
  lv_hist hs = {buf, 0, dir};
  lv_hist_doubles(&hs, g->a, d);
  lv_hist_doubles(&hs, g->vd, d);
  lv_hist_doubles(&hs, g->dqc, d);
  lv_hist_int(&hs, &g->next_proj);
  lv_hist_int(&hs, &g->start_pending);
  lv_hist_int(&hs, &g->h_new);
  if (dir == LV_HISTORY_READ) {
    if (g->next_proj < 0 || g->next_proj > g->nproj) g->next_proj = g->nproj;
    g->mc_valid = g->g1_valid = 0;
  }
  return hs.n;
}

const lv_scheme_type lv_scheme_genalpha = {
    "genalpha",
    "Lie group generalized-alpha (Brüls & Cardona 2010; equation numbers of Arnold, Brüls & Cardona 2015): "
    "index 3, stabilised index 2 (GGL), "
    "velocity projection; order 2",
    "g(q) = 0 at every node (to the Newton tolerance); index=2 also G(q) v = 0; numerical "
    "dissipation of high frequencies (rho-inf)",
    2,
    LV_SCHEME_HAS_GAMMA | LV_SCHEME_SIMPLIFIED_NEWTON,
    ga_options,
    ga_create,
    ga_init,
    ga_step,
    ga_destroy,
    ga_save,
    ga_restore,
    ga_new_h,
    ga_history,
};
