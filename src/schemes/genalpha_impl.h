/* Generalized-alpha's private state, shared by its files (not installed):
 *   genalpha.c        the step: predictor, Newton residual, iteration matrix,
 *                     update and weights, commit, history, the scheme table;
 *   genalpha_sigma.c  the sigma-modification (issue 6, spec 002): the
 *                     kinematic relation with T^-1 and its Newton matrix;
 *   genalpha_start.c  the starting procedures (standard, perturbed, a0) and
 *                     the projection schedule (the saddle-point solves
 *                     themselves: model/saddle.c);
 *   genalpha_setup.c  options, create and destroy.
 * The method and its notation are described at the top of genalpha.c. */
#ifndef LIVENS_GENALPHA_IMPL_H
#define LIVENS_GENALPHA_IMPL_H

#include "lv_internal.h"
#include "schemes/spmat.h"
#include "space/group.h"
#include "model/saddle.h"

/* START_A0: (57) only, v0 = v(t0) (the public Lie group suite's default;
 * keeps the first-order transient, spec 000 §3.8, B9) */
/* START_NO_COMMUTATOR: ablation, (56)+(57) with ad_{v0} v'0 dropped from l0
 * (spec 000 C13: the transient comes back, order 1) */
enum { GUESS_AUTO = 0, GUESS_CONSTANT = 1, GUESS_EXTRAPOLATE = 2 };

typedef enum { START_STANDARD = 0, START_PERTURBED = 1, START_A0 = 2, START_NO_COMMUTATOR = 3 } start_kind;

typedef struct {
  const lv_model *m;
  lv_state *s;
  int nv, nq, nc, index, N;   /* N = Newton system size */
  /* the model's properties used in the step (its accessors, read once) */
  const lv_space *sp;
  int mass_constant, has_force, has_dV;
  int driven;                 /* driving constraints g(q) - c(t) (lv_model_set_driving) */
  double *drv;                /* c(t_{n+1}) or c'(t_{n+1}), nc */
  /* method parameters */
  double am, af, beta, gam;
  start_kind start;
  int project_every;
  int nproj, next_proj;       /* projection times (sorted) and the next pending one */
  double *proj_t;
  /* private state */
  double *a, *vd;             /* pseudo-acceleration, v' */
  /* guess (the Newton start of the unknowns v'_{n+1}, lambda_{n+1}, eta):
   * GUESS_CONSTANT the last step's values; GUESS_EXTRAPOLATE their
   * quadratic extrapolation through the last three steps of the same h;
   * GUESS_AUTO the extrapolation where it came at most half as far from
   * the last step's solution (genalpha.c, ga_predict and
   * ga_keep_guess_history) */
  int guess;
  double *vdp, *vdpp;         /* v'_{n-1}, v'_{n-2} (after the commit of step n) */
  double *lamp, *lampp;       /* lambda_{n-1}, lambda_{n-2} */
  double *etap, *etapp;       /* eta of the steps n-1, n-2 (index 2) */
  double hist_h;              /* the step size of that history */
  int hist_n;                 /* consecutive committed steps of size hist_h (the history is whole from 2) */
  int guess_extrap;           /* GUESS_AUTO: extrapolate in the next step */
  int extrapolated;           /* this step's predictor extrapolated (a failed solve retries without) */
  int start_pending;          /* perturbed start not yet applied (needs h) */
  /* the step being solved */
  double h, t1, bp, gp;       /* step, t_{n+1}, beta', gamma' */
  double s3;                  /* scale of the index-2 velocity-constraint row (1, see top) */
  const double *vn, *an;      /* v_n, a_n used by this step (perturbed start may replace them) */
  double *q1, *v1, *vd1, *a1, *lam1, *eta, *dq;
  double *hdq, *tmp, *tmp2;   /* scratch, nv */
  double *bnz;                /* B_n^T zeta, nv */
  double *vstart, *astart;    /* perturbed starting values */
  lv_spm T;                      /* tangent operator T(h Dq) */
  const lv_spm *Tf;              /* the q-derivative blocks' right factor in the Newton matrix: &T, or
                                    NULL where T = I (R^n without the sigma-modification) */
  lv_spm Bn;                     /* G(q_n), keyed by column: rows of B_n^T */
  lv_spm G1;                     /* G(q_{n+1}) at the current iterate */
  lv_spm Mc;                     /* M (recorded once if constant, else per iterate) */
  lv_spm Cdv;                    /* df/dv at the iterate (index 2: two blocks of the Newton matrix) */
  int g1_valid, mc_valid;
  int g1_wanted;                 /* the iterate is the predictor, where the Newton matrix needs G1 */
  const double *r_last;          /* the last residual, while it is at the current iterate (else NULL) */
  lv_newton *nw;
  lv_saddle *saddle;          /* [M G^T; G 0]: (7), the start, projections */
  double *saved;              /* a, v', dqc at the last save (halving), 3 nv */
  int saved_next_proj, saved_start_pending;
  /* sigma-modification (issue 6, spec 002): see genalpha_sigma.c */
  double sigma, pfac;         /* sigma; predictor factor f of the paper's corrector */
  int corr_paper;             /* 1: the paper's simplified corrector (Algs 1-3); 2: the same with the
                                 previous-acceleration predictor (ablation, spec 002 §4.4) */
  int nstart_exudyn;          /* newton-start=exudyn (ablation): Exudyn's start of every step's Newton
                                 iteration, v'_{n+1} = lambda = eta = 0 (genalpha.c, ga_predict) */
  int nmat_exudyn;            /* newton-matrix=exudyn (ablation): no D_q(M v'), D_q(G^T lambda), Z in the
                                 Newton matrix (genalpha.c, assemble) */
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

/* y += B_n^T z from the recorded G(q_n). */
static inline void ga_bn_t_apply(const genalpha *g, const double *z, double *y) {
  const lv_spm *F = &g->Bn;
  for (int c = 0; c < F->ncols; c++)
    for (int t = F->rp[c]; t < F->rp[c + 1]; t++) y[c] += F->val[t] * z[F->ci[t]];
}

/* ---- genalpha_sigma.c: the sigma-modification (sigma != 0 or corrector=paper) ---- */
/* Predictor part: theta_lin corrected (paper) or theta = theta_lin + the last
 * step's correction with v, a, v' from it (exact).  After the plain predictor. */
int ga_sigma_predict(genalpha *g);
/* The tangent block of the Newton matrix into g->T: F (exact) or P (paper). */
int ga_sigma_newton_tangent(genalpha *g);
/* Newton updates: exact corrector (theta += Phi Dx, then v, a, v') and the
 * paper's corrector; y is the velocity-level correction (Dx + B_n^T zeta). */
int ga_set_scale(genalpha *g); /* the Newton solver's round-off scale (genalpha.c) */
int ga_sigma_update(genalpha *g, const double *dx, const double *y);
int ga_sigma_paper_update(genalpha *g, const double *dx, const double *y);
/* Exact corrector, after the solve: keep (theta - theta_lin) / h for the
 * next predictor. */
void ga_sigma_keep_correction(genalpha *g);
/* Leading Lie-group coefficient of the local error in theta (1/12 for sigma = 0). */
double ga_sigma_lie_coef(const genalpha *g);

/* ---- genalpha_start.c: starting values and projections ---- */
int ga_init(lv_stepper *st);
/* Perturbed starting values for step h into g->vstart, g->astart. */
int ga_perturbed_start(genalpha *g, double h);
/* Whether the step ending at t_{n+1} = g->t1 projects v (projection=on, or a
 * projection time in (t1 - h/2, t1 + h/2]); *next: the schedule after it. */
int ga_projection_due(const genalpha *g, double h, int *next);

/* ---- genalpha_setup.c: options and life cycle ---- */
extern const lv_param_info ga_options[];
int ga_create(lv_stepper *st);
void ga_destroy(lv_stepper *st);

#endif
