/* Generalized-alpha, options and life cycle: the option table and its
 * parser (method parameters, start, projection, sigma), create and destroy
 * (all storage of a run is allocated here; a step allocates nothing).  The
 * step: genalpha.c; the shared state: genalpha_impl.h. */
#include "genalpha_impl.h"

/* ---- options ---- */

const lv_param_info ga_options[] = {
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
    {"projection", "off", "on: M-orthogonal velocity projection onto G v = 0 (G v = c'(t) for driving constraints) "
        "after every step"},
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
    {"guess", "auto",
     "the Newton start of v'_{n+1}, lambda_{n+1} (and eta at index 2): constant = the last step's values (the "
     "papers' predictor); extrapolate = their quadratic extrapolation through the last three steps of the same "
     "h (constant until there are three); auto = the extrapolation where it came at most half as far as the "
     "constant start from the last step's solution (index 3; index 2 takes constant, where extrapolation "
     "saved no iteration); a solve that fails from an extrapolation is repeated from the constant start.  "
     "Changes the iteration counts, not the converged step; sigma = 0 with the exact corrector and newton-start=scheme "
     "only (auto means constant otherwise)"},
    {"newton-start", "scheme",
     "ablation, the start of each step's Newton iteration: scheme (v'_{n+1}, lambda_{n+1}, eta by the guess "
     "option; the paper corrector: v'_{n+1} = 0, lambda_{n+1} = 0) or exudyn (as the paper's "
     "software, Exudyn, does: v'_{n+1} = 0 and lambda_{n+1} = eta = 0 every step, theta from the "
     "zero-acceleration predictor, for sigma != 0 with the exact corrector times "
     "(I - (sigma/2)(h beta/gamma) v^); with the residual-reduction Newton test the residual norm is "
     "then taken in the equations' own units (forces, constraint values), before the h^2 scaling of "
     "the force rows, as Exudyn does).  Changes the Newton iteration counts, not the converged "
     "step of the exact schemes"},
    {"newton-matrix", "full",
     "ablation: full (the Newton matrix of the residual) or exudyn (without the terms the paper's "
     "software does not form and the paper neglects: D_q(M(q) v') and D_q(G^T lambda) in K_t, and for "
     "index 2 the curvature Z = D_q(G(q) v); Newton then converges linearly).  Changes the iteration "
     "counts, not the converged step"},
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
static int parse_options(genalpha *g, lv_stepper *st) {
  const lv_kv *kv = st->options;
  const char *me = "genalpha";
  LV_CHECK(lv_kv_check(kv, ga_options, NULL));
  if (lv_kv_int(kv, "index", 3, &g->index) || (g->index != 3 && g->index != 2))
    return lv_opt_refuse(st, me, "index", "3 (index-3 formulation) or 2 (stabilised index 2)");
  int sig_opt = strcmp(lv_kv_string(kv, "sigma", "0"), "optimal") == 0;
  if (!sig_opt) LV_CHECK(lv_opt_double(st, me, "sigma", 0.0, &g->sigma, "a finite number or 'optimal'"));
  /* index = corr_paper: 2 is the ablation predicting v'_{n+1} = v'_n */
  static const char *const correctors[] = {"exact", "paper", "paper-previous-acceleration", NULL};
  LV_CHECK(lv_opt_choice(st, me, "corrector", correctors, 0, &g->corr_paper));
  LV_CHECK(lv_opt_double(st, me, "predictor-factor", 1.0, &g->pfac, "a finite number"));
  static const char *const nmats[] = {"full", "exudyn", NULL};
  LV_CHECK(lv_opt_choice(st, me, "newton-matrix", nmats, 0, &g->nmat_exudyn));
  static const char *const nstarts[] = {"scheme", "exudyn", NULL};
  LV_CHECK(lv_opt_choice(st, me, "newton-start", nstarts, 0, &g->nstart_exudyn));
  if (g->nstart_exudyn && g->corr_paper == 2)
    return lv_opt_refuse(st, me, "newton-start",
                         "scheme with corrector=paper-previous-acceleration (exudyn starts from zero)");
  static const char *const guesses[] = {"auto", "constant", "extrapolate", NULL};
  LV_CHECK(lv_opt_choice(st, me, "guess", guesses, GUESS_AUTO, &g->guess));
  int plain = g->sigma == 0.0 && !sig_opt && !g->corr_paper && !g->nstart_exudyn;
  if (g->guess == GUESS_EXTRAPOLATE && !plain)
    return lv_opt_refuse(st, me, "guess",
                         "auto or constant with sigma != 0, a paper corrector or newton-start=exudyn (they set "
                         "the start themselves)");
  if (g->guess == GUESS_AUTO && (!plain || g->index == 2)) g->guess = GUESS_CONSTANT;

  double rho;
  LV_CHECK(lv_opt_double(st, me, "rho-inf", 0.9, &rho, "a number in [0, 1]"));
  if (!(rho >= 0.0 && rho <= 1.0)) return lv_opt_refuse(st, me, "rho-inf", "a number in [0, 1]");
  /* Chung-Hulbert (52) */
  g->am = (2.0 * rho - 1.0) / (rho + 1.0);
  g->af = rho / (rho + 1.0);
  g->gam = 0.5 + g->af - g->am;
  g->beta = 0.25 * (g->gam + 0.5) * (g->gam + 0.5);
  /* the defaults from rho-inf lie inside these ranges, so a refusal names
   * a value the user gave; the step equations divide by beta, gamma,
   * 1 - alpha-m and 1 - alpha-f */
  static const char alpha_ok[] = "a number < 1 (stable for alpha-m <= alpha-f <= 1/2)";
  static const char beta_ok[] = "a number > 0 (stable for beta >= 1/4 + (alpha-f - alpha-m)/2)";
  static const char galpha_ok[] = "a number > 0 (second order for gamma = 1/2 + alpha-f - alpha-m)";
  LV_CHECK(lv_opt_double(st, me, "alpha-m", g->am, &g->am, alpha_ok));
  LV_CHECK(lv_opt_double(st, me, "alpha-f", g->af, &g->af, alpha_ok));
  LV_CHECK(lv_opt_double(st, me, "beta", g->beta, &g->beta, beta_ok));
  LV_CHECK(lv_opt_double(st, me, "gamma", g->gam, &g->gam, galpha_ok));
  if (!(g->beta > 0.0)) return lv_opt_refuse(st, me, "beta", beta_ok);
  if (!(g->gam > 0.0)) return lv_opt_refuse(st, me, "gamma", galpha_ok);
  if (!(g->am < 1.0)) return lv_opt_refuse(st, me, "alpha-m", alpha_ok);
  if (!(g->af < 1.0)) return lv_opt_refuse(st, me, "alpha-f", alpha_ok);
  if (sig_opt) g->sigma = g->gam / (3.0 * g->beta); /* removes the Lie term of (40) */

  /* choice index = start_kind */
  static const char *const starts[] = {"standard", "perturbed", "a0", "perturbed-no-commutator", NULL};
  int start;
  LV_CHECK(lv_opt_choice(st, me, "start", starts, START_PERTURBED, &start));
  g->start = (start_kind)start;

  LV_CHECK(lv_opt_onoff(st, me, "projection", 0, &g->project_every));
  int rc = parse_times(lv_kv_string(kv, "projection-times", NULL), &g->proj_t, &g->nproj);
  if (rc == LV_EINPUT) return lv_opt_refuse(st, me, "projection-times", "a comma-separated list of finite times");
  if (rc) return rc;
  /* an explicit "projection" contradicts a list of times */
  if (lv_kv_string(kv, "projection", NULL) && g->nproj > 0)
    return lv_opt_refuse(st, me, "projection", "not together with projection-times (they contradict)");
  return 0;
}

/* ---- scheme table functions ---- */

void ga_destroy(lv_stepper *st) {
  genalpha *g = st->priv;
  if (!g) return;
  lv_newton_free(g->nw);
  free(g->saved);
  lv_saddle_free(g->saddle);
  lv_spm_free(&g->T);
  lv_spm_free(&g->Bn);
  lv_spm_free(&g->G1);
  lv_spm_free(&g->Mc);
  lv_spm_free(&g->Cdv);
  free(g->vfac);
  free(g->rb);
  free(g->rk);
  free(g->grp);
  free(g->wacc);
  free(g->drv);
  free(g->wmark);
  free(g->wlist);
  double *bufs[] = {g->a,   g->vd,  g->q1,  g->v1,  g->vd1,    g->a1,     g->lam1, g->eta,
                    g->dq,  g->hdq, g->tmp, g->tmp2, g->bnz,   g->vstart, g->astart,
                    g->proj_t, g->dql, g->tiblk, g->dblk, g->phblk, g->xblk, g->bne, g->sbase, g->dqc,
                    g->vdp, g->vdpp, g->lamp, g->lampp, g->etap, g->etapp};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
  free(g);
  st->priv = NULL;
}

static int create_body(lv_stepper *st, genalpha *g) {
  const lv_model *m = st->model;
  g->m = m;
  g->s = st->state;
  g->nv = lv_model_nv(m);
  g->nq = lv_model_nq(m);
  g->nc = lv_model_nc(m);
  g->sp = lv_model_space(m);
  g->mass_constant = lv_model_mass_constant(m);
  g->has_force = lv_model_has_force(m);
  g->has_dV = lv_model_has_potential(m);
  g->driven = lv_model_has_driving(m);
  LV_CHECK(parse_options(g, st));
  int d = g->nv, k = g->nc;
  g->N = d + (g->index == 2 ? 2 * k : k);
  size_t sd = (size_t)d, sk = (size_t)k;
  g->a = lv_calloc(sd, sizeof(double));
  g->vd = lv_calloc(sd, sizeof(double));
  g->vdp = lv_calloc(sd, sizeof(double));
  g->vdpp = lv_calloc(sd, sizeof(double));
  g->lamp = lv_calloc(sk, sizeof(double));
  g->lampp = lv_calloc(sk, sizeof(double));
  g->etap = lv_calloc(sk, sizeof(double));
  g->etapp = lv_calloc(sk, sizeof(double));
  if (!g->vdp || !g->vdpp || !g->lamp || !g->lampp || !g->etap || !g->etapp) return LV_ENOMEM;
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
  g->dql = lv_calloc(sd, sizeof(double));
  g->dqc = lv_calloc(sd, sizeof(double));
  if (!g->dqc) return LV_ENOMEM;
  int nf = lv_space_nfactors(g->sp);
  g->tiblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->dblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->phblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->xblk = lv_calloc(36 * (size_t)nf, sizeof(double));
  g->bne = lv_calloc(sd, sizeof(double));
  g->wacc = lv_calloc(sk, sizeof(double));
  g->drv = lv_calloc(sk, sizeof(double));
  if (!g->drv) return LV_ENOMEM;
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
    LV_CHECK(lv_space_factor(g->sp, f, NULL, NULL, NULL, &vo, &nv));
    for (int i = 0; i < nv; i++) g->vfac[vo + i] = f;
    g->grp[f] = lv_space_factor_group(g->sp, f);
    g->rb[f] = vo + g->grp[f]->rb;
    g->rk[f] = g->grp[f]->rk;
    for (int a = 0; a < g->rk[f]; a++) /* before any Newton matrix */
      g->phblk[36 * f + a * g->rk[f] + a] = g->xblk[36 * f + a * g->rk[f] + a] = 1.0;
  }
  if (!g->a || !g->vd || !g->q1 || !g->v1 || !g->vd1 || !g->a1 || !g->lam1 || !g->eta || !g->dq ||
      !g->hdq || !g->tmp || !g->tmp2 || !g->bnz || !g->vstart || !g->astart)
    return LV_ENOMEM;
  lv_spm_init_grouped(&g->T, 0);
  lv_spm_init_grouped(&g->Bn, 1);
  lv_spm_init_grouped(&g->G1, 0);
  lv_spm_init_grouped(&g->Mc, 0);
  lv_spm_init_grouped(&g->Cdv, 0);
  LV_CHECK(lv_newton_new(&g->nw, g->N, st->linsol_kind));
  *lv_newton_opts(g->nw) = st->newton;
  LV_CHECK(ga_set_scale(g));
  LV_CHECK(lv_saddle_new(&g->saddle, m, st->linsol_kind, st->linsol_threshold));
  st->linsol = lv_newton_linsol(g->nw);
  st->newton_solver = g->nw; /* the integrator invalidates it on a new h (beta', gamma' change) */
  return 0;
}

int ga_create(lv_stepper *st) {
  genalpha *g = lv_calloc(1, sizeof *g);
  if (!g) return LV_ENOMEM;
  st->priv = g;
  int rc = create_body(st, g);
  if (rc) ga_destroy(st); /* the integrator only destroys what was created */
  return rc;
}
