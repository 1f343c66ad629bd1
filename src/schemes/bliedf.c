/* BLieDF: the k-step BDF Lie group integrator for (constrained) mechanical
 * systems of Wieloch & Arnold (seed 004; spec/004_bliedf.md, equation
 * numbers are the paper's), k = 1..4.
 *
 * Model convention (lv_model.h): M v' = -dV + f - G^T lambda, i.e. the
 * paper's g = dV - f and B = G.  One step t_n -> t_{n+1} = t_n + h:
 *
 *   q_{n+1} = q_n o exp(h Dq_n~)                                        (23a)
 *   sum_i gamma_i Dq_{n+1-i} = v_{n+1} + h^2 L_k(v_n..v_{n-k+1}; h)     (23b)
 *   (1/h) M(q_{n+1}) sum_i alpha_i v_{n+1-i} = -g - G^T lambda_{n+1}    (23c)
 *   Phi(q_{n+1}) = 0                                                    (23d)
 *
 * L_k is the paper's correction term (22): one commutator ad_{v_n} of a
 * difference quotient of past velocities, so it is explicit.  It vanishes on
 * R^d, where the scheme is the classical BDF for (q, v).
 *
 * Newton.  The iterate is (v_{n+1}, mu = h lambda_{n+1}); from it
 *   d = Dq_n = (v_{n+1} + r_q)/gamma_1,   r_q = h^2 L_k - sum_{i>=2} gamma_i Dq_{n+1-i},
 *   a = (alpha_0 v_{n+1} + r_v)/h,        r_v = sum_{i>=1} alpha_i v_{n+1-i}.
 * Keeping v (not d) as the iterate matters for the round-off floor: the
 * rounding of the relation between d and v then lands in d, which enters q
 * multiplied by h, instead of in v, which the BDF recursion sums over all
 * steps.  Measured on the SO(3) heavy top, k = 4, h = 1.5625e-5: error at
 * t = 2 of 7.7e-10 (as the spec's prototype) instead of 1.7e-9..3.0e-9
 * depending on the predictor.  The correction is computed in the scaled
 * variables of Hante's form (spec §3.5): dx = (delta d, delta mu) with
 * delta v = gamma_1 delta d, residual [h (M a + dV - f) + G^T mu ; Phi / h],
 * iteration matrix
 *   [ alpha_0 gamma_1 M + h gamma_1 C_t + h^2 K_t T    G^T ]
 *   [ G T                                              0   ]
 * with C_t = -df/dv, K_t = D_q(M a + dV - f + G^T lambda) (left-trivialised)
 * and T = T(h d).  Every block is O(1) as h -> 0, so the condition number
 * stays bounded (unscaled it grows like h^-3).  K_t T and G T are formed
 * entry by entry through a product sink, so one code fills dense and sparse
 * (UMFPACK) matrices with the pattern the model's callbacks write.
 *
 * Stabilised index 2 (index=2; not in the paper, derived here in the GGL
 * manner of the generalized-alpha method, spec 000_001 §2.4): an auxiliary
 * multiplier eta enters the kinematic relation and the velocity constraint
 * is imposed at t_{n+1},
 *   sum_i gamma_i Dq_{n+1-i} = v_{n+1} - G(q_n)^T eta_{n+1} + h^2 L_k,
 *   G(q_{n+1}) v_{n+1} = 0.
 * G is frozen at q_n so that d is linear in (v, eta).  Iterate (v, eta, mu),
 * correction (delta d, delta eta, delta mu) with delta v = gamma_1 delta d +
 * G_n^T delta eta, rows [h F; Phi / h; G v]:
 *   [ A11                        (alpha_0 M + h C_t) G_n^T   G^T ]
 *   [ G T                         0                          0   ]
 *   [ gamma_1 G + h Z(q; v) T     G G_n^T                    0   ]
 * again O(1) in every block; at h = 0 it reduces to a non-singular saddle
 * point matrix.  The analytic solution has eta = 0.
 *
 * Starting phase (spec §3.3 option (b)).  The k-1 starting values
 * q_1..q_{k-1}, v_1..v_{k-1} come from the Runge-Kutta-Munthe-Kaas method of
 * order 4 (classical RK4 in the chart q_n o exp(theta), with exact dexp^-1)
 * applied to the index-1 form [M G^T; G 0][v'; lambda] = [f - dV; -Z(q; v) v]
 * with sub-steps.  The number of sub-steps per step grows (1, 2, 3, 4, 6,
 * 8, ..) until the error estimates meet start-tol (relative, in the root mean
 * square of the nodes' components, q and v apart): q from the last run,
 * estimated against the run before (order 4), v Richardson-extrapolated
 * from the last two runs (order 5) and estimated against the extrapolation
 * from the two before (see start_phase), so the start error is at that
 * level whatever h is (an error O(h^{k+1}) is all the theory asks for; this
 * makes it negligible) and a too large sub-step of the explicit method
 * cannot go unnoticed.  (The maximum norm made the sub-steps grow with N on
 * the chain: its error sits in the few links next to the suspension, whose
 * time scale shrinks as N grows; 16, 32, 32 sub-steps at N = 1e2, 1e3, 1e4,
 * h = 5e-3; the RMS norm: 8 for each, 3 with the extrapolation of v.)
 * With the lambda fix (K = k nodes) the first run of one sub-step per node
 * is accepted without the others when its error, estimated at node 2
 * against one RKMK4 step of 2h, is below start-rel (1e-2) times the BDF's
 * own local error at this h (see start_phase): what the theory needs, as a
 * ratio that keeps its meaning whatever h is.  On the chain (h = 5e-3) that
 * is 15 factorisations instead of 50.  A start-tol of one's own turns it
 * off (start-rel = 0 unless given too).  The
 * nodes are projected onto Phi = 0 and G v = 0.
 * Dq_j = log(q_j^{-1} q_{j+1})/h (k-1 logarithms).
 * lambda fix (56): with exact starting velocities lambda loses one order in
 * the transient (Lemma 8); all k starting velocities are shifted by Dv,
 *   [M G^T; G 0](q_{k-1}) [Dv; .] = [0; G(q_{k-1}) l_{k-1} / h],
 * with the leading local error l_{k-1} of (24a) evaluated on the start
 * integrator's q_0..q_k, v_k (spec §4.3, "any k"; k more logarithms).  The
 * spec's §0.1 correction of (56) applies: the right-hand side is G l / h, not
 * G v / h.
 * The paper proves (56) for 2 <= k <= 4; the same construction also
 * repairs k = 1, whose first multiplier is O(1) wrong with exact v_0
 * (measured on the heavy top: 180 at every h without, O(h) with the shift).
 * Index 2 imposes G v = 0 itself and needs no shift (measured: transient
 * lambda of order k with exact starting velocities), so it is not applied.
 * A step-size change (h differs from the history's) restarts the method
 * from the current state: v projected onto G v = 0, new starting phase.
 *
 * All storage is allocated in create(); a step allocates nothing. */
#include <float.h>
#include "lv_internal.h"
#include "schemes/spmat.h"
#include "schemes/history.h"
#include "integrator/integrator_impl.h" /* lv_integrator_set_start_history */
#include "model/saddle.h"

#define KMAX 4
/* Past velocities kept for the Newton predictor, whatever k: a cubic
 * extrapolation is accurate to O(h^4), so the first Newton correction is
 * usually already below the tolerance (with the k-point extrapolation of
 * BDF2, h^2 v'' is 1e-5 relative on the heavy top at h = 1.25e-4 and a
 * second iteration is needed). */
#define NPRED 4

/* BDF coefficients alpha_i (3) and increment coefficients gamma_i =
 * sum_{j<i} alpha_j (5), spec §1.1, k = 1..4 (row k-1). */
static const double ALPHA[KMAX][KMAX + 1] = {
    {1.0, -1.0, 0, 0, 0},
    {1.5, -2.0, 0.5, 0, 0},
    {11.0 / 6.0, -3.0, 1.5, -1.0 / 3.0, 0},
    {25.0 / 12.0, -4.0, 3.0, -4.0 / 3.0, 0.25},
};
static const double GAMMA[KMAX][KMAX] = {
    {1.0, 0, 0, 0},
    {1.5, -0.5, 0, 0},
    {11.0 / 6.0, -7.0 / 6.0, 1.0 / 3.0, 0},
    {25.0 / 12.0, -23.0 / 12.0, 13.0 / 12.0, -0.25},
};
/* Polynomial extrapolation of v_{n+1} from v_n..v_{n-p+1}, p = 1..NPRED. */
static const double EXTRAP[NPRED][NPRED] = {
    {1, 0, 0, 0},
    {2, -1, 0, 0},
    {3, -3, 1, 0},
    {4, -6, 4, -1},
};

/* ------------------------------------------------------------------ */

/* The adds of one callback in call order (a sink that records them): G of
 * the iterate, replayed as G^T mu, G v and into the Newton matrix's blocks
 * with the callback's own sums (lighter than a lv_spm capture, which also
 * keeps a pattern: G is never used through one). */
typedef struct {
  lv_sink sink;
  int *ri, *rj;
  double *rv;
  size_t n, cap;
  int bad;
  int flag; /* a non-finite value or an add out of bounds */
  int full; /* n is the count of a whole, clean recording (rec_values may refill it) */
} rec_sink;

LV_ALWAYS_INLINE int rec_add1(lv_sink *s, int i, int j, double v) {
  rec_sink *r = (rec_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return r->flag = 1, LV_EINPUT;
  if (!isfinite(v)) r->flag = 1;
  if (r->n == r->cap) { /* the first recordings only: the count is the callback's, fixed */
    size_t cap = r->cap ? 2 * r->cap : 64;
    int *ri = realloc(r->ri, cap * sizeof *ri);
    if (ri) r->ri = ri;
    int *rj = ri ? realloc(r->rj, cap * sizeof *rj) : NULL;
    if (rj) r->rj = rj;
    double *rv = rj ? realloc(r->rv, cap * sizeof *rv) : NULL;
    if (!rv) return r->bad = LV_ENOMEM;
    r->rv = rv;
    r->cap = cap;
  }
  r->ri[r->n] = i;
  r->rj[r->n] = j;
  r->rv[r->n++] = s->scale * v;
  return 0;
}

static int rec_add(lv_sink *s, int i, int j, double v) { return rec_add1(s, i, j, v); }

/* lv_sink_add_block: rec_add of each entry in the block's order, inlined */
LV_SINK_ADD_BLOCK_INLINE(static, rec_add_block, rec_add1, rec_add)

static lv_sink *rec_begin(rec_sink *r, int nrows, int ncols) {
  r->sink.add = rec_add;
  r->sink.add_block = rec_add_block;
  r->sink.target = r;
  r->sink.row0 = r->sink.col0 = r->sink.ld = r->sink.transpose = 0;
  r->sink.nrows = nrows;
  r->sink.ncols = ncols;
  r->sink.scale = 1.0;
  r->n = 0;
  r->bad = 0;
  r->flag = 0;
  return &r->sink;
}

/* y += R x (transposed: y += R^T x), the recorded adds in call order: the
 * sums of lv_model_G_apply / lv_model_GT_apply bit for bit */
static void rec_matvec(const rec_sink *r, const double *x, double *y, int transposed) {
  if (transposed)
    for (size_t c = 0; c < r->n; c++) y[r->rj[c]] += r->rv[c] * x[r->ri[c]];
  else
    for (size_t c = 0; c < r->n; c++) y[r->ri[c]] += r->rv[c] * x[r->rj[c]];
}

/* the recorded adds into a block of the Newton matrix, as lv_blk_seq */
static void rec_blk(lv_assembly *A, const rec_sink *r, int r0, int c0, double scale, int transpose,
                    const lv_spm *F) {
  lv_blk_adds(A, r->ri, r->rj, r->rv, r->n, r0, c0, scale, transpose, F);
}

typedef struct {
  const lv_model *m;
  lv_state *s;
  const volatile sig_atomic_t *stop; /* the integrator's stop request (polled in the start-up) */
  int k, nq, nv, nc, index, N;
  /* the model's properties used in the step (its accessors, read once) */
  const lv_space *sp;
  int mass_constant, has_force, has_dV;
  int linear; /* the space is R^n: T(h d) = I, its blocks are written without the product */
  int kc; /* order of the next step: k, or 1, 2, .. during a ramp start */
  /* options */
  int correction, lambda_fix, extrapolate;
  int ramp; /* start=ramp (issue 20): first step BDF1, then orders 2 .. k */
  double start_tol;
  double start_rel; /* accept one sub-step per node below start_rel times the BDF's local error (0: off) */
  const double *al, *ga; /* ALPHA[k-1], GAMMA[k-1] */

  /* history for t_n (valid when hist_h > 0) */
  double hist_h;  /* step size the history belongs to; 0: start pending (new_h) */
  int handout;    /* starting values still to be handed out (1..k-1) */
  int next_node;  /* index of the next starting node to hand out */
  double *dqh;    /* (k-1) x nv: Dq_{n-1}, Dq_{n-2}, ... */
  double *vh;     /* NPRED x nv: v_n, v_{n-1}, ... (k for the method, all for the predictor) */
  double *lh;     /* NPRED x nc: lambda_n, lambda_{n-1}, ... (predictor) */
  int nhist;      /* valid entries of vh, lh (k <= nhist <= NPRED after a start) */
  double *etah;   /* nc: eta_n (index 2 predictor) */

  /* starting phase: nodes 0..K of the start integrator (K = k-1, or k for
   * the lambda fix), two runs for the sub-step doubling */
  int K;
  double *nq_a, *nv_a, *nq_b, *nv_b, *nl; /* (K+1) x nq / nv / nc */
  double *nv_x, *nv_y; /* (K+1) x nv: v extrapolated from the last two runs, and from the two before */
  double *th, *thd, *qs, *vs, *acc, *dth, *dv; /* RKMK4 stage work */
  double *eacc; /* nv: v of the start's step-doubling check */
  long start_substeps;                          /* of the last start (statistics) */
  long start_factors; /* saddle-matrix factorisations of the last start (stages, projections) */
  /* starting values supplied by the user (lv_integrator_set_start_history,
   * issue 20): nodes 1..user_n, used by the first start only */
  int user_n;
  double *user_q, *user_v; /* k x nq, k x nv */
  long nlog; /* group logarithms evaluated (spec 004 T18; the library's only log calls) */

  /* the step being solved */
  double h, t1;
  double *rq, *rv, *L, *d, *eta, *mu, *lam, *q1, *v1, *a1, *hd;
  double *tmp, *tmp2, *bnz;
  lv_spm T;                  /* T(h d), keyed by row */
  lv_spm Bn;                 /* G(q_n), keyed by column (rows of G_n^T) */
  rec_sink G1;               /* G(q_{n+1}) of the iterate (residual and Newton matrix) */
  lv_spm Mc;                 /* M(q_{n+1}); recorded once if the mass is constant */
  int mc_valid;              /* Mc holds the constant mass matrix */
  lv_spm Cv;                 /* df/dv at the iterate (index 2: two blocks use it) */
  /* G(q_{n+1}) is recorded by the residual and reused by the Newton matrix
   * while the iterate is the same: it_id counts the iterates, g1_id is the
   * one G1 belongs to (-1: none) */
  long it_id, g1_id;
  int g1_wanted; /* the next residual is the predictor's, whose G1 the Newton matrix takes */
  lv_newton *nw;
  lv_saddle *saddle; /* [M G^T; G 0]: start, projections, (56) */
  int h_new;      /* the order changed since the last solve (ramp start): the factorisation is stale
                     (a new h: the integrator invalidates st->newton_solver) */
} bliedf;

/* ---- saddle-point solves (the model's saddle-point module, model/saddle.h) ---- */

/* ---- correction term (22) ---- */

/* out = h^2 L_k(v_n, ..., v_{n-k+1}; h) from the history vh (v_n first):
 *   L_3 = 1/12 ad_{v_n} (3 v_n - 4 v_{n-1} + v_{n-2}) / (2h),
 *   L_4 = 1/12 ad_{v_n} (7 v_n - 7 v_{n-1} - 3 v_{n-2} + 3 v_{n-3}) / (4h).
 * The sign holds for left-trivialised velocities with ad_v w = [v~, w~]
 * (spec §3.1); ad_{v_n} v_n = 0 drops the v_n term. */
static int correction_term(const bliedf *B, const double *vh, double h, double *out) {
  int d = B->nv;
  if (!B->correction || B->kc < 3) {
    memset(out, 0, (size_t)d * sizeof(double));
    return 0;
  }
  const double *v0 = vh, *v1 = vh + d, *v2 = vh + 2 * d;
  double *w = B->tmp2;
  double c;
  if (B->kc == 3) {
    for (int i = 0; i < d; i++) w[i] = -4.0 * v1[i] + v2[i];
    c = h / 24.0;
  } else {
    const double *v3 = vh + 3 * d;
    for (int i = 0; i < d; i++) w[i] = -7.0 * v1[i] - 3.0 * v2[i] + 3.0 * v3[i];
    c = h / 48.0;
  }
  if (B->correction == 2) c = -c; /* ablation: the sign of L_k flipped */
  LV_CHECK(lv_space_ad(B->sp, v0, w, out));
  for (int i = 0; i < d; i++) out[i] *= c;
  return 0;
}

/* ---- starting phase ---- */

/* One RKMK4 sub-step of length hs from (t, q, v) to (qo, vo); a0: v' at
 * (t, q, v) if known (NULL: computed). */
static int rk_substep(bliedf *B, double t, const double *q, const double *v, double hs, const double *a0,
                      double *qo, double *vo) {
  const lv_space *sp = B->sp;
  int d = B->nv;
  double *th = B->th, *qs = B->qs, *vs = B->vs, *acc = B->acc, *thd = B->thd;
  double *sth = B->dth, *sv = B->dv; /* weighted sums of theta' and v' */
  static const double cc[4] = {0.0, 0.5, 0.5, 1.0}, bw[4] = {1.0, 2.0, 2.0, 1.0};
  for (int i = 0; i < d; i++) sth[i] = sv[i] = 0.0;
  for (int s = 0; s < 4; s++) {
    /* stage s: theta_s = c_s hs theta'_{s-1}, v_s = v + c_s hs v'_{s-1} */
    if (s == 0) {
      memcpy(qs, q, (size_t)B->nq * sizeof(double));
      memcpy(vs, v, (size_t)d * sizeof(double));
      memcpy(thd, v, (size_t)d * sizeof(double)); /* T(0)^-1 v = v */
    } else {
      for (int i = 0; i < d; i++) {
        th[i] = cc[s] * hs * thd[i];
        vs[i] = v[i] + cc[s] * hs * acc[i];
      }
      LV_CHECK(lv_space_compose_exp(sp, q, 1.0, th, qs));
      LV_CHECK(lv_space_tangent_inv_apply(sp, th, vs, thd));
    }
    if (s == 0 && a0) memcpy(acc, a0, (size_t)d * sizeof(double));
    else LV_CHECK(lv_saddle_accelerations(B->saddle, t + cc[s] * hs, qs, vs, acc, NULL));
    for (int i = 0; i < d; i++) {
      sth[i] += bw[s] * thd[i];
      sv[i] += bw[s] * acc[i];
    }
  }
  for (int i = 0; i < d; i++) {
    th[i] = hs / 6.0 * sth[i];
    vo[i] = v[i] + hs / 6.0 * sv[i];
  }
  return lv_space_compose_exp(sp, q, 1.0, th, qo);
}

/* Nodes t + j h, j = 0..K, with m sub-steps per step; a0 = v' at (t, q, v)
 * (the first stage of every run). */
static int rk_run(bliedf *B, double t, const double *q, const double *v, const double *a0, double h, long msub,
                  double *nq, double *nv) {
  int Q = B->nq, d = B->nv;
  memcpy(nq, q, (size_t)Q * sizeof(double));
  memcpy(nv, v, (size_t)d * sizeof(double));
  double hs = h / (double)msub;
  for (int j = 0; j < B->K; j++) {
    const double *qa = nq + (size_t)j * Q, *va = nv + (size_t)j * d;
    double *qb = nq + (size_t)(j + 1) * Q, *vb = nv + (size_t)(j + 1) * d;
    memcpy(qb, qa, (size_t)Q * sizeof(double));
    memcpy(vb, va, (size_t)d * sizeof(double));
    for (long s = 0; s < msub; s++) {
      /* the start-up can take 2 * 4096 sub-steps per node on a large
       * model: a stop request must not wait for it (Ctrl-C, issue 14) */
      if (B->stop && *B->stop) return LV_ESTOPPED;
      LV_CHECK(rk_substep(B, t + j * h + (double)s * hs, qb, vb, hs, j == 0 && s == 0 ? a0 : NULL, qb, vb));
    }
  }
  return 0;
}

/* Root mean square of x (n entries). */
static double rms(int n, const double *x) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return n > 0 ? sqrt(s / n) : 0.0;
}

/* Root mean square of the relative differences (a_i - b_i) / (1 + |b_i|),
 * the weighted RMS norm of the SUNDIALS codes' error tests: an error
 * confined to a few components of a large model (on the chain, the links
 * next to the suspension, whose time scale shrinks as N grows) does not
 * force sub-steps on all of them.  NaN if any difference is. */
static double rel_diff(int n, const double *a, const double *b) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double e = (a[i] - b[i]) / (1.0 + fabs(b[i]));
    s += e * e;
  }
  return n > 0 ? sqrt(s / n) : 0.0;
}

/* Builds the history at t_n = s->t for step h (spec §3.3): see the file
 * comment.  Nothing in the state changes; on failure the start stays
 * pending. */
static int start_phase(bliedf *B, double h, lv_newton_stats *ns) {
  const lv_state *s = B->s;
  int k = B->k, d = B->nv, Q = B->nq, c = B->nc;
  double *v0 = B->v1; /* the (projected) velocity at t_n */
  memcpy(v0, s->v, (size_t)d * sizeof(double));
  long f0 = lv_saddle_factorizations(B->saddle);
  /* A restart follows BLieDF steps, whose v satisfies G v = 0 only to
   * O(h^k); the start integrator needs consistent values. */
  LV_CHECK(lv_saddle_project_v(B->saddle, s->q, v0));
  /* v'_0 and lambda_0 with the factorisation at q_0 the projection made (none
   * without constraints): the first stage of every RKMK4 run and the
   * history's lambda_0 */
  double *a0 = B->a1;
  if (c > 0) LV_CHECK(lv_saddle_accelerations_factored(B->saddle, s->t, s->q, v0, a0, B->nl));
  else LV_CHECK(lv_saddle_accelerations(B->saddle, s->t, s->q, v0, a0, NULL));
  if (ns) ns->factorizations++;
  int fix = B->lambda_fix && c > 0 && B->index == 3;
  B->kc = k;
  B->al = ALPHA[k - 1];
  B->ga = GAMMA[k - 1];
  B->K = k - 1 + (fix ? 1 : 0);
  long msub = 1;
  if (B->K > 0 && B->user_n >= B->K) {
    /* the user's nodes instead of RKMK4 (projected below like its nodes) */
    memcpy(B->nq_a, s->q, (size_t)Q * sizeof(double));
    memcpy(B->nq_a + Q, B->user_q, (size_t)B->K * Q * sizeof(double));
    memcpy(B->nv_a + d, B->user_v, (size_t)B->K * d * sizeof(double));
    msub = 0;
  } else if (B->K > 0) {
    double *qa = B->nq_a, *va = B->nv_a, *qb = B->nq_b, *vb = B->nv_b, *xa = B->nv_y, *xb = B->nv_x;
    size_t nd = (size_t)(B->K + 1) * d;
    int accepted = 0;
    LV_CHECK(rk_run(B, s->t, s->q, v0, a0, h, msub, qa, va));
    if (B->start_rel > 0.0 && B->K == k && k >= 2) {
      /* One sub-step per node is accepted if its error, estimated at node
       * 2 against one RKMK4 step of 2h (step doubling: (y_h - y_2h) / 15),
       * is below start_rel times the BDF's own local error at this h,
       * l ~ h^{k+1} v^{(k)} / (k+1) ~ h D / (k+1), D the k-th difference of
       * the nodes' v (q; v: against l / h, the size of (56)'s right-hand
       * side).  That is the error the theory allows (spec §4.3: q to
       * O(h^{k+1}), to O(h^{k+2}) for (24a), v to O(h^k)) as a ratio that
       * keeps its meaning whatever h is; RKMK4's error is O(h^5), so the
       * ratio falls as h does.  Never stricter than start-tol.  The lambda
       * fix (K = k nodes) only: its nodes 0..k give D. */
      double *D = B->tmp, *qc = B->q1, *vc = B->eacc;
      for (int i = 0; i < d; i++) D[i] = 0.0;
      for (int j = 0, bc = 1; j <= k; j++) { /* bc = binomial(k, j) */
        double w = ((k - j) % 2 ? -1.0 : 1.0) * bc;
        for (int i = 0; i < d; i++) D[i] += w * va[(size_t)j * d + i];
        bc = bc * (k - j) / (j + 1);
      }
      double l = h / (k + 1) * rms(d, D);
      LV_CHECK(rk_substep(B, s->t, s->q, v0, 2.0 * h, a0, qc, vc));
      double eq1 = 0.0, ev1 = 0.0;
      for (int i = 0; i < Q; i++) eq1 += pow(qa[2 * (size_t)Q + i] - qc[i], 2);
      for (int i = 0; i < d; i++) ev1 += pow(va[2 * (size_t)d + i] - vc[i], 2);
      eq1 = sqrt(eq1 / Q) / 15.0;
      ev1 = sqrt(ev1 / d) / 15.0;
      accepted = eq1 <= fmax(B->start_tol, B->start_rel * l) && ev1 <= fmax(B->start_tol, B->start_rel * l / h);
    }
    if (!accepted) {
    /* Runs with m = 1, 2, 3, 4, 6, 8, 12, .. sub-steps (Bulirsch's
     * sequence).  RKMK4's global error has an expansion in powers of the
     * sub-step from the fourth on, e(m) = a m^-4 + b m^-5 + .., so after the
     * run with m sub-steps (the one before: p, r = (m/p)^4)
     *   q: the run's q, error estimated by |q_m - q_p| / (r - 1);
     *   v: Richardson's extrapolation x_m = v_m + (v_m - v_p) / (r - 1),
     *      error b phi(p, m) with phi(p, m) = m^-5 + (m^-5 - p^-5) / (r - 1),
     *      estimated from the extrapolation before (needs a third run) as
     *      |x_m - x_p| |phi(p, m)| / |phi(p, m) - phi(pp, p)|
     *      (v lives in a vector space; q would need logarithms).
     * On the chain (h = 5e-3) x_3 is about 30 times more accurate than the
     * RKMK4 run with 8 sub-steps the start took before, so start-tol is met
     * by runs of 1, 2, 3 sub-steps: 6 per step instead of 11. */
    double prev = HUGE_VAL;   /* estimate after the previous run */
    long mpp = 0;             /* the sub-steps of the run before the previous one */
    double phip = 0.0;        /* phi of the previous pair */
    for (int run = 2;; run++) {
      long mnext = run == 2 ? 2 : run == 3 ? 3 : 2 * mpp;
      if (mnext > 8192) return LV_ESTEPMIN;
      LV_CHECK(rk_run(B, s->t, s->q, v0, a0, h, mnext, qb, vb));
      double r4 = pow((double)mnext / (double)msub, 4.0);
      double phi = pow((double)mnext, -5.0) + (pow((double)mnext, -5.0) - pow((double)msub, -5.0)) / (r4 - 1.0);
      mpp = msub;
      msub = mnext;
      for (size_t i = 0; i < nd; i++) xb[i] = vb[i] + (vb[i] - va[i]) / (r4 - 1.0);
      /* nodes 1..K: node 0 is the same in all runs */
      double eq = rel_diff(B->K * Q, qa + Q, qb + Q) / (r4 - 1.0);
      double ev = run >= 3 ? rel_diff(B->K * d, xa + d, xb + d) * fabs(phi) / fabs(phi - phip) : HUGE_VAL;
      double evr = rel_diff(B->K * d, va + d, vb + d) / (r4 - 1.0); /* of v_m itself: for the round-off test */
      phip = phi;
      if (!(eq == eq && ev == ev && evr == evr)) return LV_ENONFINITE;
      double est = fmax(eq, ev);
      if (est <= B->start_tol) break;
      /* estimates that shrink by less than half of what order 4 predicts
       * (a quarter for doubling) once tiny are round-off: more sub-steps
       * cannot help */
      double e = fmax(eq, fmin(ev, evr));
      if (e < 1e-10 && e > prev * fmin(0.5, 4.0 / r4)) break;
      prev = e;
      double *t1 = qa, *t2 = va, *t3 = xa;
      qa = qb, va = vb, xa = xb, qb = t1, vb = t2, xb = t3;
    }
    /* the accepted run is in qb, its extrapolated v in xb: make them the "a" buffers */
    if (qb != B->nq_a) memcpy(B->nq_a, qb, (size_t)(B->K + 1) * Q * sizeof(double));
    memcpy(B->nv_a, xb, nd * sizeof(double));
    }
  } else {
    memcpy(B->nq_a, s->q, (size_t)Q * sizeof(double));
  }
  memcpy(B->nv_a, v0, (size_t)d * sizeof(double));
  B->start_substeps = B->K > 0 ? msub : 0;
  double *NQ = B->nq_a, *NV = B->nv_a;
  /* consistent nodes and their multipliers (lambda_0 above), each node's
   * multiplier with the factorisation its velocity projection made; node
   * k - 1 last, so that the saddle stays factorised at q_{k-1} for (56) */
  for (int jj = 1; jj <= B->K; jj++) {
    int j = jj;
    if (B->K == k && k >= 2 && jj >= k - 1) j = jj == k ? k - 1 : k; /* order .., k, k - 1 */
    /* to the round-off floor: the start's increments divide q by h */
    LV_CHECK(lv_saddle_project_q(B->saddle, NQ + (size_t)j * Q, 1));
    LV_CHECK(lv_saddle_project_v(B->saddle, NQ + (size_t)j * Q, NV + (size_t)j * d));
    if (c > 0 && j < k)
      LV_CHECK(lv_saddle_accelerations_factored(B->saddle, s->t + j * h, NQ + (size_t)j * Q, NV + (size_t)j * d,
                                                NULL, B->nl + (size_t)j * c));
    if (ns && c > 0) ns->factorizations++;
  }
  /* increments Dq_j = log(q_j^-1 q_{j+1}) / h, j = 0..k-2; history order
   * is newest first: dqh[i] = Dq_{k-2-i} */
  for (int j = 0; j + 1 < k; j++) {
    double *dq = B->dqh + (size_t)(k - 2 - j) * d;
    LV_CHECK(lv_space_log(B->sp, NQ + (size_t)j * Q, NQ + (size_t)(j + 1) * Q, dq));
    B->nlog++;
    for (int i = 0; i < d; i++) dq[i] /= h;
  }
  /* velocity history, newest first: vh[i] = v_{k-1-i} */
  for (int j = 0; j < k; j++) memcpy(B->vh + (size_t)(k - 1 - j) * d, NV + (size_t)j * d, (size_t)d * sizeof(double));
  for (int j = 0; j < k && c > 0; j++)
    memcpy(B->lh + (size_t)(k - 1 - j) * c, B->nl + (size_t)j * c, (size_t)c * sizeof(double));
  B->nhist = k;
  if (fix) {
    /* l_{k-1}/h = sum_i gamma_i log(q_{k-i}^-1 q_{k+1-i})/h - v_k - h^2 L_k(v_{k-1}..v_0)
     * (24a); the i >= 2 logarithms are the increments just computed. */
    double *l = B->L, *w = B->tmp;
    LV_CHECK(lv_space_log(B->sp, NQ + (size_t)(k - 1) * Q, NQ + (size_t)k * Q, w));
    B->nlog++;
    LV_CHECK(correction_term(B, B->vh, h, l)); /* h^2 L_k from the exact velocities */
    const double *vk = NV + (size_t)k * d;
    for (int i = 0; i < d; i++) {
      double sum = B->ga[0] * w[i] / h;
      for (int j = 1; j < k; j++) sum += B->ga[j] * B->dqh[(size_t)(j - 1) * d + i];
      w[i] = sum - vk[i] - l[i]; /* = l_{k-1} / h */
    }
    const double *qk1 = NQ + (size_t)(k - 1) * Q;
    double *dv = B->tmp2;
    /* factorised at q_{k-1} by the last projection above (k >= 2) */
    if (k == 1) LV_CHECK(lv_saddle_factor(B->saddle, qk1));
    LV_CHECK(lv_saddle_shift(B->saddle, qk1, w, dv));
    for (int j = 0; j < k; j++)
      for (int i = 0; i < d; i++) B->vh[(size_t)j * d + i] += dv[i];
    for (int j = 0; j < k; j++)
      for (int i = 0; i < d; i++) NV[(size_t)j * d + i] += dv[i];
    if (ns && k == 1) ns->factorizations++;
  }
  memset(B->etah, 0, (size_t)c * sizeof(double));
  B->start_factors = lv_saddle_factorizations(B->saddle) - f0;
  B->hist_h = h;
  B->handout = k - 1;
  B->next_node = 1;
  return 0;
}

/* Order ramp-up start (spec §3.3 option (c), as Hante's Fortran BLieDF for
 * k <= 2): no start integrator and no logarithm; the first step is BDF1
 * (Lie group implicit Euler) from (q_0, v_0), the j-th step BDF j, from
 * step k on BDF k, each on the history built so far.  The BDF1 step has a
 * local error O(h^2), so the global order is min(k, 2) (not covered by the
 * paper's theory).  lambda fix: the first step's multiplier is O(1) wrong
 * with the exact v_0 (as for k = 1, see the file comment); v_0 is shifted by
 * (56) with the BDF1 local error l_0 = -h^2/2 v'_0 + O(h^3),
 *   [M G^T; G 0](q_0) [Dv; .] = [0; G(q_0) l_0 / h],
 * and at every order change the history velocities are projected onto
 * G v = 0 (ramp_project).  Measured on the heavy top (R^3 x SO(3), index 3,
 * tests/check_bliedf.c): lambda O(h) in the first steps (32.0 at h = 1e-3,
 * without the shift 180 at every h), order 2 from n = 2k on (k = 2: 3.48,
 * 0.869, 0.217 at h = 1e-3 .. 2.5e-4, as after the RKMK4 start). */
static int start_ramp(bliedf *B, double h, lv_newton_stats *ns) {
  const lv_state *s = B->s;
  int d = B->nv, c = B->nc;
  double *v0 = B->vh, *vd = B->tmp;
  memcpy(v0, s->v, (size_t)d * sizeof(double));
  LV_CHECK(lv_saddle_project_v(B->saddle, s->q, v0));
  LV_CHECK(lv_saddle_accelerations(B->saddle, s->t, s->q, v0, vd, c > 0 ? B->lh : NULL));
  if (ns) ns->factorizations++;
  if (B->lambda_fix && c > 0 && B->index == 3) {
    for (int i = 0; i < d; i++) B->L[i] = -0.5 * h * vd[i]; /* l_0 / h */
    LV_CHECK(lv_saddle_shift(B->saddle, s->q, B->L, B->tmp2)); /* factorised at q_0 by accelerations */
    for (int i = 0; i < d; i++) v0[i] += B->tmp2[i];
  }
  B->nhist = 1;
  B->kc = 1;
  B->al = ALPHA[0];
  B->ga = GAMMA[0];
  memset(B->etah, 0, (size_t)c * sizeof(double));
  B->hist_h = h;
  B->handout = 0;
  B->h_new = 1; /* the Newton matrix scales with the order */
  return 0;
}

/* Ramp start, before the order goes up from kc to kc + 1: the velocities
 * the next step uses, v_{n+1-i} (i = 1 .. kc + 1), each projected
 * M-orthogonally onto G v = 0 at its own configuration (reconstructed
 * backwards from the increments).  A BDF j step leaves G v = O(h^j) (for
 * j = 1 also the (56) shift of v_0); the BDF j+1 step reads that defect,
 * divided by h, as a wrong multiplier: O(1) at the switch from BDF1. */
static int ramp_project(bliedf *B) {
  int d = B->nv, Q = B->nq;
  if (B->nc == 0 || B->index != 3) return 0;
  double *q = B->qs;
  memcpy(q, B->s->q, (size_t)Q * sizeof(double));
  for (int i = 0; i <= B->kc; i++) {
    if (i > 0) LV_CHECK(lv_space_compose_exp(B->sp, q, -B->hist_h, B->dqh + (size_t)(i - 1) * d, q));
    LV_CHECK(lv_saddle_project_v(B->saddle, q, B->vh + (size_t)i * d));
  }
  memcpy(B->s->v, B->vh, (size_t)d * sizeof(double));
  LV_CHECK(lv_model_mass_apply(B->m, B->s->q, B->s->v, B->tmp));
  memcpy(B->s->p, B->tmp, (size_t)d * sizeof(double));
  return 0;
}

/* ---- the BLieDF step: Newton problem ---- */

/* out = G_n^T x from the recorded G(q_n) */
static void gnt_apply(const bliedf *B, const double *x, double *out) {
  const lv_spm *F = &B->Bn;
  for (int col = 0; col < F->ncols; col++) {
    double sum = 0.0;
    for (int t = F->rp[col]; t < F->rp[col + 1]; t++) sum += F->val[t] * x[F->ci[t]];
    out[col] = sum;
  }
}

/* d, a, q of the current iterate (v, eta) */
static int iterate_state(bliedf *B) {
  int d = B->nv;
  const double g1 = B->ga[0], a0 = B->al[0], h = B->h;
  /* one pass (the loads of the scheme's fields once): the same values */
  double *restrict dd = B->d, *restrict a1 = B->a1, *restrict hd = B->hd;
  const double *restrict v1 = B->v1, *restrict rq = B->rq, *restrict rv = B->rv;
  if (B->index == 2 && B->nc > 0) {
    gnt_apply(B, B->eta, B->bnz);
    const double *restrict bz = B->bnz;
    for (int i = 0; i < d; i++) {
      double di = (v1[i] + rq[i] - bz[i]) / g1;
      dd[i] = di;
      a1[i] = (a0 * v1[i] + rv[i]) / h;
      hd[i] = h * di;
    }
  } else {
    for (int i = 0; i < d; i++) {
      double di = (v1[i] + rq[i]) / g1;
      dd[i] = di;
      a1[i] = (a0 * v1[i] + rv[i]) / h;
      hd[i] = h * di;
    }
  }
  B->it_id++; /* a new iterate: G1 no longer belongs to it */
  return lv_space_compose_exp(B->sp, B->s->q, 1.0, B->hd, B->q1);
}

/* y = M(q) x: from the recorded matrix when the mass is constant (its adds
 * in call order, the sums of lv_model_mass_apply bit for bit), else from
 * the model. */
static int mass_apply(const bliedf *B, const double *q, const double *x, double *y) {
  if (!B->mc_valid) return lv_model_mass_apply(B->m, q, x, y);
  memset(y, 0, (size_t)B->nv * sizeof(double));
  lv_spm_seq_matvec(&B->Mc, x, y, 0);
  return 0;
}

/* The recorded adds' values again from the model's G values
 * (lv_model_G_values: the callback's entries in its order, at positions
 * that do not depend on q), after a whole recording of as many: 1 when
 * done (all finite), 0 when the callback must record instead. */
static int rec_values(rec_sink *r, const lv_model *m, const double *q) {
  if (!r->full || r->n == 0 || lv_model_G_values(m, q, r->rv, r->n) != r->n) return 0;
  double chk = 0.0;
  for (size_t c = 0; c < r->n; c++) chk += r->rv[c] - r->rv[c];
  return chk == 0.0;
}

/* G(q_{n+1}) of the current iterate into G1, once per iterate. */
static int g1_record(bliedf *B) {
  if (B->g1_id == B->it_id) return 0;
  B->g1_id = -1;
  if (rec_values(&B->G1, B->m, B->q1)) {
    B->g1_id = B->it_id;
    return 0;
  }
  B->G1.full = 0;
  int rc = lv_model_matrix_flagged(B->m, LV_MX_G, 0.0, B->q1, NULL, NULL, rec_begin(&B->G1, B->nc, B->nv),
                                   &B->G1.flag);
  if (B->G1.bad) return B->G1.bad;
  LV_CHECK(rc);
  B->G1.full = !B->G1.flag;
  B->g1_id = B->it_id;
  return 0;
}

static int bl_residual(void *ctx, double *r) {
  bliedf *B = ctx;
  const lv_model *m = B->m;
  int d = B->nv, k = B->nc;
  double h = B->h;
  LV_CHECK(mass_apply(B, B->q1, B->a1, r));
  /* h (M a + dV - f) in one pass (the same operations in the same order) */
  const double *dv = NULL, *f = NULL;
  if (B->has_dV) LV_CHECK(lv_model_grad_potential(m, B->q1, (double *)(dv = B->tmp)));
  if (B->has_force) LV_CHECK(lv_model_force(m, B->t1, B->q1, B->v1, (double *)(f = B->tmp2)));
  if (dv && f) {
    for (int i = 0; i < d; i++) r[i] = ((r[i] + dv[i]) - f[i]) * h;
  } else if (dv) {
    for (int i = 0; i < d; i++) r[i] = (r[i] + dv[i]) * h;
  } else if (f) {
    for (int i = 0; i < d; i++) r[i] = (r[i] - f[i]) * h;
  } else {
    for (int i = 0; i < d; i++) r[i] *= h;
  }
  if (k == 0) return 0;
  /* G^T mu and G v from the recorded G (the sums of lv_model_GT_apply and
   * lv_model_G_apply bit for bit) where the Newton matrix reuses it (the
   * predictor's iterate); at later iterates from the model's products */
  int rec = B->g1_wanted || B->g1_id == B->it_id;
  B->g1_wanted = 0;
  memset(B->tmp, 0, (size_t)d * sizeof(double));
  if (rec) {
    LV_CHECK(g1_record(B));
    rec_matvec(&B->G1, B->mu, B->tmp, 1);
  } else {
    LV_CHECK(lv_model_GT_apply_add(m, B->q1, B->mu, B->tmp));
  }
  for (int i = 0; i < d; i++) r[i] += B->tmp[i];
  LV_CHECK(lv_model_constraints(m, B->q1, r + d));
  for (int i = 0; i < k; i++) r[d + i] /= h;
  if (B->index == 2) {
    if (rec) {
      memset(r + d + k, 0, (size_t)k * sizeof(double));
      rec_matvec(&B->G1, B->v1, r + d + k, 0);
    } else {
      LV_CHECK(lv_model_G_apply(m, B->q1, B->v1, r + d + k));
    }
  }
  return 0;
}

/* Every block straight into the solver's assembly (lv_blk sinks, as
 * genalpha's assemble); M (once when constant) and G(q1) are recorded once
 * and replayed into every block that uses them (issue 18: the generic view
 * and product sinks, and G evaluated twice or four times, were most of the
 * step). */

static int bl_jacobian(void *ctx, lv_linsol *ls) {
  bliedf *B = ctx;
  const lv_model *m = B->m;
  int d = B->nv, k = B->nc;
  double h = B->h, g1 = B->ga[0], a0 = B->al[0];
  /* on R^n T = I (lv_space_tangent writes 1.0 on the diagonal): the blocks
   * times T are the blocks themselves, bit for bit (v * 1.0 == v), without
   * building T and going through its rows (the chain N = 100: 5 % of a step) */
  const lv_spm *T = B->linear ? NULL : &B->T;
  if (T) LV_CHECK(lv_spm_tangent(B->sp, B->hd, &B->T));
  LV_CHECK(lv_spm_mass_matrix_once(m, B->q1, &B->Mc, &B->mc_valid, B->mass_constant));
  if (k > 0) LV_CHECK(g1_record(B));
  /* index 2 uses df/dv in two blocks: recorded once */
  int cv = B->has_force && B->index == 2 && k > 0;
  if (cv) LV_CHECK(lv_spm_model_matrix(&B->Cv, d, d, m, LV_MX_FORCE_DV, B->t1, B->q1, B->v1, NULL));

  lv_assembly *A = lv_linsol_assembly(ls);
  lv_blk_sink b;
  /* (1,1): alpha_0 gamma_1 M + h gamma_1 C_t + h^2 K_t T */
  lv_blk_seq(A, &B->Mc, 0, 0, a0 * g1, 0, NULL);
  if (cv)
    lv_blk_seq(A, &B->Cv, 0, 0, -h * g1, 0, NULL);
  else if (B->has_force)
    LV_CHECK(lv_model_matrix_flagged(m, LV_MX_FORCE_DV, B->t1, B->q1, B->v1, NULL, lv_blk(&b, A, 0, 0, d, d, -h * g1, 0, NULL), &b.bad));
  if (B->has_dV) LV_CHECK(lv_model_matrix_flagged(m, LV_MX_D2V, 0.0, B->q1, NULL, NULL, lv_blk(&b, A, 0, 0, d, d, h * h, 0, T), &b.bad));
  if (B->has_force)
    LV_CHECK(lv_model_matrix_flagged(m, LV_MX_FORCE_DQ, B->t1, B->q1, B->v1, NULL, lv_blk(&b, A, 0, 0, d, d, -h * h, 0, T), &b.bad));
  if (k > 0) LV_CHECK(lv_model_matrix_flagged(m, LV_MX_HESSIAN, 0.0, B->q1, NULL, B->lam, lv_blk(&b, A, 0, 0, d, d, h * h, 0, T), &b.bad));
  if (!B->mass_constant) LV_CHECK(lv_fd_mass_dq(m, B->q1, B->a1, lv_blk(&b, A, 0, 0, d, d, h * h, 0, T), 1.0));
  if (k == 0) return 0;

  int cmu = B->index == 2 ? d + k : d; /* first column of mu */
  rec_blk(A, &B->G1, 0, cmu, 1.0, 1, NULL); /* G^T */
  rec_blk(A, &B->G1, d, 0, 1.0, 0, T);  /* G T */
  if (B->index != 2) return 0;

  /* (1,eta): (alpha_0 M + h C_t) G_n^T */
  lv_blk_seq(A, &B->Mc, 0, d, a0, 0, &B->Bn);
  if (cv) lv_blk_seq(A, &B->Cv, 0, d, -h, 0, &B->Bn);
  /* (3,1): gamma_1 G + h Z(q; v) T */
  rec_blk(A, &B->G1, d + k, 0, g1, 0, NULL);
  LV_CHECK(lv_model_matrix_flagged(m, LV_MX_CURVATURE, 0.0, B->q1, NULL, B->v1, lv_blk(&b, A, d + k, 0, k, d, h, 0, T), &b.bad));
  /* (3,eta): G G_n^T */
  rec_blk(A, &B->G1, d + k, d, 1.0, 0, &B->Bn);
  return 0;
}

static int bl_update(void *ctx, const double *dx) {
  bliedf *B = ctx;
  int d = B->nv, k = B->nc;
  const double g1 = B->ga[0];
  for (int i = 0; i < d; i++) B->v1[i] += g1 * dx[i];
  const double *dm = dx + d;
  if (B->index == 2 && k > 0) {
    for (int i = 0; i < k; i++) B->eta[i] += dx[d + i];
    gnt_apply(B, dx + d, B->tmp);
    for (int i = 0; i < d; i++) B->v1[i] += B->tmp[i];
    dm += k;
  }
  for (int i = 0; i < k; i++) {
    B->mu[i] += dm[i];
    B->lam[i] = B->mu[i] / B->h;
  }
  return iterate_state(B);
}

/* Increment test on delta d (and eta) relative to the size of the whole
 * vector d, as the spec's ||dv|| <= tol (1 + ||v||) (§3.5): components of a
 * Lie algebra vector that pass through zero would otherwise be held to atol
 * alone.  mu = h lambda gets weight 0: it is linear in the equations, so it
 * is as accurate as d after the solve that produced the last increment,
 * while its own increments stagnate at the index-3 round-off level ~ eps/h^2
 * (spec §3.5). */
static int bl_weights(void *ctx, const double *tol, double *w) {
  bliedf *B = ctx;
  int d = B->nv, k = B->nc;
  double at = tol[0], rt = tol[1];
  double wd = 1.0 / (at + rt * lv_vnorm_inf(d, B->d));
  for (int i = 0; i < d; i++) w[i] = wd;
  int o = d;
  if (B->index == 2 && k > 0) {
    /* eta -> 0 with h: measured against d, whose units G^T eta shares */
    for (int i = 0; i < k; i++) w[o + i] = wd;
    o += k;
  }
  for (int i = 0; i < k; i++) w[o + i] = 0.0;
  return 0;
}

/* Hands out starting node j as the new state. */
static int handout_node(bliedf *B) {
  lv_state *s = B->s;
  int j = B->next_node, Q = B->nq, d = B->nv, c = B->nc;
  const double *q = B->nq_a + (size_t)j * Q, *v = B->nv_a + (size_t)j * d;
  LV_CHECK(mass_apply(B, q, v, B->tmp));
  memcpy(s->p, B->tmp, (size_t)d * sizeof(double));
  memcpy(s->q, q, (size_t)Q * sizeof(double));
  memcpy(s->v, v, (size_t)d * sizeof(double));
  if (c > 0) memcpy(s->lambda, B->nl + (size_t)j * c, (size_t)c * sizeof(double));
  if (c > 0) memset(s->gamma, 0, (size_t)c * sizeof(double));
  B->next_node++;
  B->handout--;
  return 0;
}

static int bl_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  bliedf *B = st->priv;
  const lv_model *m = B->m;
  lv_state *s = st->state;
  int d = B->nv, c = B->nc;
  if (B->hist_h == 0.0) {
    /* first step, or a new step size (bl_new_h) */
    int src = B->ramp && !B->user_n ? start_ramp(B, h, ns) : start_phase(B, h, ns);
    if (!src) B->user_n = 0; /* the user's starting values serve the first start only */
    /* The saddle matrix [M G^T; G 0] serves the start only (and the ramp's
     * projections, released after the last): its factors and pattern, about
     * 1.5 kB per particle of a chain, are freed for the steps, which factorise
     * their own Newton matrix.  A later start factorises it again. */
    if (!src && !(B->ramp && B->kc < B->k)) lv_saddle_release(B->saddle);
    if (src == LV_ESTEPMIN)
      snprintf(st->detail, sizeof st->detail,
               "the RKMK4 start at t = %.9g missed start-tol = %g with 4096 sub-steps (step halving does not "
               "apply to it); a smaller step, a larger start-tol or start=ramp may help",
               st->state->t, B->start_tol);
    if (src) return src;
  }
  int k = B->kc; /* the order of this step */
  if (B->handout > 0) return handout_node(B);

  B->h = h;
  B->t1 = s->t + h;
  /* known parts of (23b) and (23c) */
  LV_CHECK(correction_term(B, B->vh, h, B->L));
  /* history by history over contiguous rows (each entry takes the same
   * operations in the same order as a sum per entry, so the same values;
   * the loops no longer reload the scheme's fields per term) */
  double *restrict rq = B->rq, *restrict rv = B->rv;
  memcpy(rq, B->L, (size_t)d * sizeof(double));
  for (int i = 0; i < d; i++) rv[i] = 0.0;
  for (int j = 1; j < k; j++) {
    const double gj = B->ga[j], *restrict x = B->dqh + (size_t)(j - 1) * d;
    for (int i = 0; i < d; i++) rq[i] -= gj * x[i];
  }
  for (int j = 1; j <= k; j++) {
    const double aj = B->al[j], *restrict x = B->vh + (size_t)(j - 1) * d;
    for (int i = 0; i < d; i++) rv[i] += aj * x[i];
  }
  if (B->index == 2 && c > 0) {
    LV_CHECK(lv_spm_constraint_jac(m, s->q, &B->Bn));
  }
  /* predictor: v_{n+1} and lambda_{n+1} extrapolated from the history */
  int np = B->extrapolate ? B->nhist : 1;
  const double *ex = EXTRAP[np - 1];
  double *restrict v1 = B->v1, *restrict lam = B->lam;
  for (int i = 0; i < d; i++) v1[i] = 0.0;
  for (int i = 0; i < c; i++) lam[i] = 0.0;
  for (int j = 0; j < np; j++) {
    const double e = ex[j], *restrict x = B->vh + (size_t)j * d, *restrict y = B->lh + (size_t)j * c;
    for (int i = 0; i < d; i++) v1[i] += e * x[i];
    for (int i = 0; i < c; i++) lam[i] += e * y[i];
  }
  for (int i = 0; i < c; i++) {
    B->mu[i] = h * lam[i];
    B->eta[i] = B->etah[i];
  }
  LV_CHECK(iterate_state(B));

  lv_newton_problem pb = {bl_residual, bl_jacobian, bl_update, bl_weights, B, B->N};
  *lv_newton_opts(B->nw) = st->newton;
  if (B->h_new) lv_newton_invalidate(B->nw); /* the matrix scales with the order */
  B->h_new = 0;
  /* G recorded at the predictor only when the Newton matrix is made there:
   * modified Newton keeps its factorisation across steps, and its
   * residuals take G^T mu from the model's products (the same sums) */
  B->g1_wanted = lv_newton_factorises_first(B->nw, 1);
  LV_CHECK(lv_newton_solve(B->nw, &pb, 1, ns));

  /* commit: p = M v first, the only evaluation that can still fail */
  LV_CHECK(mass_apply(B, B->q1, B->v1, B->tmp));
  memcpy(s->p, B->tmp, (size_t)d * sizeof(double));
  memcpy(s->q, B->q1, (size_t)B->nq * sizeof(double));
  memcpy(s->v, B->v1, (size_t)d * sizeof(double));
  if (c > 0) {
    memcpy(s->lambda, B->lam, (size_t)c * sizeof(double));
    if (B->index == 2) memcpy(s->gamma, B->eta, (size_t)c * sizeof(double));
    memcpy(B->etah, B->eta, (size_t)c * sizeof(double));
  }
  /* shift the histories (k <= 4 vectors: cheaper than any bookkeeping) */
  if (B->k > 1) {
    memmove(B->dqh + d, B->dqh, (size_t)(B->k - 2) * d * sizeof(double));
    memcpy(B->dqh, B->d, (size_t)d * sizeof(double));
  }
  if (B->nhist < NPRED) B->nhist++;
  memmove(B->vh + d, B->vh, (size_t)(B->nhist - 1) * d * sizeof(double));
  memcpy(B->vh, B->v1, (size_t)d * sizeof(double));
  if (c > 0) {
    memmove(B->lh + c, B->lh, (size_t)(B->nhist - 1) * c * sizeof(double));
    memcpy(B->lh, B->lam, (size_t)c * sizeof(double));
  }
  if (B->kc < B->k) { /* ramp start: the next step one order higher */
    LV_CHECK(ramp_project(B));
    B->kc++;
    B->al = ALPHA[B->kc - 1];
    B->ga = GAMMA[B->kc - 1];
    B->h_new = 1;
    if (B->kc == B->k) lv_saddle_release(B->saddle); /* the last projection (see the start) */
  }
  return 0;
}

/* ---- options, life cycle ---- */

static const lv_param_info bl_options[] = {
    {"index", "3", "3: index-3 formulation (23); 2: stabilised index 2 (GGL, derived; eta in gamma)"},
    {"correction", "on",
     "on: correction term L_k of (22) (k = 3, 4); off: L_k = 0 (order drops to 2); flipped: "
     "ablation, -L_k (the local error drops to O(h^3): a check of the sign convention of ad)"},
    {"lambda-fix", "on",
     "on: shift the starting velocities by (56) (index 3 with constraints): lambda keeps order k in "
     "the transient (without: k-1; for k = 1 the first multiplier does not converge at all); "
     "off: exact starting velocities"},
    {"start", "rkmk4",
     "starting values for the first k-1 steps: rkmk4 = Runge-Kutta-Munthe-Kaas order 4 with "
     "sub-steps added until start-tol is met, projected onto the constraints; ramp = first step "
     "BDF1, then orders 2 .. k (as Hante's public Fortran BLieDF; global order min(k, 2))"},
    {"start-tol", "1e-12", "relative accuracy of the starting values (root mean square over their components)"},
    {"start-rel", "1e-2",
     "accept one RKMK4 sub-step per node when its embedded error estimate is below start-rel times "
     "the BDF's own local error at this h (q; v: that error over h), else sub-steps until start-tol "
     "is met; 0: start-tol only (the default when start-tol is given)"},
    {"predictor", "extrapolate",
     "Newton predictor for v and lambda: extrapolate (cubic through the last 4 values, fewer "
     "right after a start) or last (v_n, lambda_n)"},
    {NULL, NULL, NULL},
};

static int parse_options(bliedf *B, lv_stepper *st, const char *name) {
  const lv_kv *kv = st->options;
  LV_CHECK(lv_kv_check(kv, bl_options, NULL));
  if (lv_kv_int(kv, "index", 3, &B->index) || (B->index != 3 && B->index != 2))
    return lv_opt_refuse(st, name, "index", "3 (index-3 formulation) or 2 (stabilised index 2)");
  static const char *const corrections[] = {"off", "on", "flipped", NULL}; /* 2: ablation, -L_k */
  LV_CHECK(lv_opt_choice(st, name, "correction", corrections, 1, &B->correction));
  LV_CHECK(lv_opt_onoff(st, name, "lambda-fix", 1, &B->lambda_fix));
  static const char *const starts[] = {"rkmk4", "ramp", NULL};
  LV_CHECK(lv_opt_choice(st, name, "start", starts, 0, &B->ramp));
  LV_CHECK(lv_opt_double(st, name, "start-tol", 1e-12, &B->start_tol, "a number in (0, 1)"));
  if (!(B->start_tol > 0.0 && B->start_tol < 1.0)) return lv_opt_refuse(st, name, "start-tol", "a number in (0, 1)");
  /* a start-tol of one's own asks for that accuracy: no relative acceptance unless start-rel is given too */
  double rel_def = lv_kv_string(kv, "start-tol", NULL) ? 0.0 : 1e-2;
  LV_CHECK(lv_opt_double(st, name, "start-rel", rel_def, &B->start_rel, "a number in [0, 1)"));
  if (!(B->start_rel >= 0.0 && B->start_rel < 1.0)) return lv_opt_refuse(st, name, "start-rel", "a number in [0, 1)");
  static const char *const predictors[] = {"last", "extrapolate", NULL};
  return lv_opt_choice(st, name, "predictor", predictors, 1, &B->extrapolate);
}

static void bl_destroy(lv_stepper *st) {
  bliedf *B = st->priv;
  if (!B) return;
  lv_newton_free(B->nw);
  lv_saddle_free(B->saddle);
  lv_spm_free(&B->T);
  lv_spm_free(&B->Bn);
  free(B->G1.ri);
  free(B->G1.rj);
  free(B->G1.rv);
  lv_spm_free(&B->Mc);
  lv_spm_free(&B->Cv);
  double *bufs[] = {B->dqh, B->vh,  B->lh,  B->etah, B->nq_a, B->nv_a, B->nq_b, B->nv_b, B->nv_x, B->nv_y, B->nl,
                    B->th,  B->thd, B->qs,  B->vs,   B->acc,  B->dth,  B->dv,   B->rq,   B->rv,
                    B->L,   B->d,   B->eta, B->mu,   B->lam,  B->q1,   B->v1,   B->a1,   B->hd,
                    B->tmp, B->tmp2, B->bnz, B->user_q, B->user_v, B->eacc};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
  free(B);
  st->priv = NULL;
}

static int bl_create_inner(lv_stepper *st, int k) {
  const lv_model *m = st->model;
  bliedf *B = lv_calloc(1, sizeof *B);
  if (!B) return LV_ENOMEM;
  st->priv = B;
  B->m = m;
  B->s = st->state;
  B->stop = st->stop;
  B->k = k;
  B->nq = lv_model_nq(m);
  B->nv = lv_model_nv(m);
  B->nc = lv_model_nc(m);
  B->sp = lv_model_space(m);
  B->linear = lv_space_is_linear(B->sp);
  B->mass_constant = lv_model_mass_constant(m);
  B->has_force = lv_model_has_force(m);
  B->has_dV = lv_model_has_potential(m);
  B->kc = k;
  B->al = ALPHA[k - 1];
  B->ga = GAMMA[k - 1];
  static const char *const names[] = {"bliedf1", "bliedf2", "bliedf3", "bliedf4"};
  LV_CHECK(parse_options(B, st, names[k - 1]));
  int d = B->nv, c = B->nc, Q = B->nq;
  B->N = d + (B->index == 2 ? 2 * c : c);
  size_t sd = (size_t)d, sc = (size_t)c, sq = (size_t)Q, nodes = (size_t)k + 1;
  B->dqh = lv_calloc((size_t)(k > 1 ? k - 1 : 1) * sd, sizeof(double));
  B->vh = lv_calloc((size_t)NPRED * sd, sizeof(double));
  B->lh = lv_calloc((size_t)NPRED * sc, sizeof(double));
  B->etah = lv_calloc(sc, sizeof(double));
  B->nq_a = lv_calloc(nodes * sq, sizeof(double));
  B->nv_a = lv_calloc(nodes * sd, sizeof(double));
  B->nq_b = lv_calloc(nodes * sq, sizeof(double));
  B->nv_b = lv_calloc(nodes * sd, sizeof(double));
  B->nv_x = lv_calloc(nodes * sd, sizeof(double));
  B->nv_y = lv_calloc(nodes * sd, sizeof(double));
  B->nl = lv_calloc(nodes * sc, sizeof(double));
  double **vecs[] = {&B->th, &B->thd, &B->vs, &B->acc, &B->dth, &B->dv,  &B->rq,   &B->rv,   &B->L,
                     &B->d,  &B->v1,  &B->a1, &B->hd,  &B->tmp, &B->tmp2, &B->bnz, &B->eacc};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) *vecs[i] = lv_calloc(sd, sizeof(double));
  B->qs = lv_calloc(sq, sizeof(double));
  B->q1 = lv_calloc(sq, sizeof(double));
  B->eta = lv_calloc(sc, sizeof(double));
  B->mu = lv_calloc(sc, sizeof(double));
  B->lam = lv_calloc(sc, sizeof(double));
  if (!B->dqh || !B->vh || !B->lh || !B->etah || !B->nq_a || !B->nv_a || !B->nq_b || !B->nv_b ||
      !B->nv_x || !B->nv_y || !B->nl || !B->qs || !B->q1 || !B->eta || !B->mu || !B->lam)
    return LV_ENOMEM;
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
    if (!*vecs[i]) return LV_ENOMEM;
  lv_spm_init_grouped(&B->T, 0);
  lv_spm_init_grouped(&B->Bn, 1);
  lv_spm_init_grouped(&B->Mc, 0);
  lv_spm_init_grouped(&B->Cv, 0);
  B->g1_id = -1;
  LV_CHECK(lv_newton_new(&B->nw, B->N, st->linsol_kind));
  *lv_newton_opts(B->nw) = st->newton;
  LV_CHECK(lv_saddle_new(&B->saddle, m, st->linsol_kind, st->linsol_threshold));
  st->linsol = lv_newton_linsol(B->nw);
  st->newton_solver = B->nw; /* the integrator invalidates it on a new h (the matrix scales with h) */
  return 0;
}

/* The integrator calls destroy only after a successful create, so a failed
 * create (bad option, no memory) releases what it allocated itself. */
static int bl_create(lv_stepper *st, int k) {
  int rc = bl_create_inner(st, k);
  if (rc) bl_destroy(st);
  return rc;
}

static int bl_init(lv_stepper *st) {
  bliedf *B = st->priv;
  lv_state *s = st->state;
  /* lambda(t0) from the index-1 form, for the output at t0; the history
   * needs h and is built by the first step */
  if (B->nc > 0) LV_CHECK(lv_saddle_accelerations(B->saddle, s->t, s->q, s->v, NULL, s->lambda));
  memset(s->gamma, 0, (size_t)B->nc * sizeof(double));
  B->hist_h = 0.0;
  B->handout = 0;
  return 0;
}

/* The fixed-step formulas (increments, difference quotients of (22)) no
 * longer fit a history taken with another step: start again. */
static void bl_new_h(lv_stepper *st, double h) {
  (void)h;
  bliedf *B = st->priv;
  B->hist_h = 0.0;
  B->handout = 0;
}

/* Checkpoints (issue 17): the past steps, the predictor's history, the
 * start-up nodes still to hand out, the order of a ramp start and the
 * user's pending starting values. */
static size_t bl_history(lv_stepper *st, double *buf, int dir) {
  bliedf *B = st->priv;
  size_t d = (size_t)B->nv, c = (size_t)B->nc, Q = (size_t)B->nq, k = (size_t)B->k, nodes = k + 1;
  lv_hist hs = {buf, 0, dir};
  lv_hist_doubles(&hs, &B->hist_h, 1);
  lv_hist_int(&hs, &B->handout);
  lv_hist_int(&hs, &B->next_node);
  lv_hist_int(&hs, &B->kc);
  lv_hist_int(&hs, &B->nhist);
  lv_hist_int(&hs, &B->K);
  lv_hist_int(&hs, &B->h_new);
  lv_hist_long(&hs, &B->start_substeps);
  lv_hist_long(&hs, &B->nlog);
  lv_hist_doubles(&hs, B->dqh, (k > 1 ? k - 1 : 1) * d);
  lv_hist_doubles(&hs, B->vh, NPRED * d);
  lv_hist_doubles(&hs, B->lh, NPRED * c);
  lv_hist_doubles(&hs, B->etah, c);
  lv_hist_doubles(&hs, B->nq_a, nodes * Q);
  lv_hist_doubles(&hs, B->nv_a, nodes * d);
  lv_hist_doubles(&hs, B->nl, nodes * c);
  int un = B->user_n;
  lv_hist_int(&hs, &un);
  if (dir == LV_HISTORY_READ) {
    if (B->kc < 1 || B->kc > B->k) B->kc = B->k;
    if (B->nhist < 1 || B->nhist > NPRED) B->nhist = 1;
    if (B->handout < 0 || B->next_node < 0 || B->handout + B->next_node > B->k + 1) B->handout = 0;
    B->al = ALPHA[B->kc - 1];
    B->ga = GAMMA[B->kc - 1];
    B->user_n = 0;
    if (un > 0 && un <= B->k) {
      if (!B->user_q) B->user_q = lv_calloc(k * Q, sizeof(double));
      if (!B->user_v) B->user_v = lv_calloc(k * d, sizeof(double));
      if (B->user_q && B->user_v) B->user_n = un;
    }
  }
  /* the user's nodes, always k x (nq + nv) numbers so the count is fixed */
  size_t nu = k * (Q + d);
  if (B->user_n > 0 && dir != LV_HISTORY_COUNT) {
    lv_hist_doubles(&hs, B->user_q, k * Q);
    lv_hist_doubles(&hs, B->user_v, k * d);
  } else {
    if (dir == LV_HISTORY_WRITE) memset(buf + hs.n, 0, nu * sizeof(double));
    hs.n += nu;
  }
  return hs.n;
}

static int bl_create1(lv_stepper *st) { return bl_create(st, 1); }
static int bl_create2(lv_stepper *st) { return bl_create(st, 2); }
static int bl_create3(lv_stepper *st) { return bl_create(st, 3); }
static int bl_create4(lv_stepper *st) { return bl_create(st, 4); }

#define BL_CONSERVES                                                                           \
  "g(q) = 0 at every node (to the Newton tolerance); index=2 also G(q) v = 0; the Lie group " \
  "structure exactly; not symplectic, energy decays (BDF damping)"
#define BL_FLAGS (LV_SCHEME_MULTISTEP | LV_SCHEME_HAS_GAMMA | LV_SCHEME_SIMPLIFIED_NEWTON)

const lv_scheme_type lv_scheme_bliedf1 = {
    "bliedf1", "Lie group BDF (BLieDF, Wieloch & Arnold), k = 1 (Lie group implicit Euler): order 1, one Newton solve "
    "per step",
    BL_CONSERVES, 1, BL_FLAGS, bl_options, bl_create1, bl_init, bl_step, bl_destroy, NULL, NULL, bl_new_h, bl_history};
const lv_scheme_type lv_scheme_bliedf2 = {
    "bliedf2", "Lie group BDF (BLieDF, Wieloch & Arnold), k = 2: order 2, one Newton solve per step",
    BL_CONSERVES, 2, BL_FLAGS, bl_options, bl_create2, bl_init, bl_step, bl_destroy, NULL, NULL, bl_new_h, bl_history};
const lv_scheme_type lv_scheme_bliedf3 = {
    "bliedf3", "Lie group BDF (BLieDF, Wieloch & Arnold), k = 3 with correction term L_3: order 3",
    BL_CONSERVES, 3, BL_FLAGS, bl_options, bl_create3, bl_init, bl_step, bl_destroy, NULL, NULL, bl_new_h, bl_history};
const lv_scheme_type lv_scheme_bliedf4 = {
    "bliedf4", "Lie group BDF (BLieDF, Wieloch & Arnold), k = 4 with correction term L_4: order 4",
    BL_CONSERVES, 4, BL_FLAGS, bl_options, bl_create4, bl_init, bl_step, bl_destroy, NULL, NULL, bl_new_h, bl_history};

/* ---- starting values from the user (issue 20) ---- */

int lv_integrator_set_start_history(lv_integrator *it, int n, const double *q, const double *v) {
  if (!it || !q || !v || n < 1 || !it->initialized || !it->created || it->type->destroy != bl_destroy)
    return LV_EINPUT; /* not a BLieDF stepper */
  bliedf *B = it->stepper.priv;
  if (!B || B->hist_h != 0.0 || it->stats.steps > 0) return LV_EINPUT; /* only before the first step */
  int need = B->k - 1 + (B->lambda_fix && B->nc > 0 && B->index == 3 ? 1 : 0);
  if (n < need || n > B->k) return LV_EINPUT;
  size_t Q = (size_t)B->nq, d = (size_t)B->nv;
  if (!B->user_q) B->user_q = lv_calloc((size_t)B->k * Q, sizeof(double));
  if (!B->user_v) B->user_v = lv_calloc((size_t)B->k * d, sizeof(double));
  if (!B->user_q || !B->user_v) return LV_ENOMEM;
  for (size_t i = 0; i < (size_t)n * Q; i++)
    if (!isfinite(q[i])) return LV_EINPUT;
  for (size_t i = 0; i < (size_t)n * d; i++)
    if (!isfinite(v[i])) return LV_EINPUT;
  memcpy(B->user_q, q, (size_t)n * Q * sizeof(double));
  memcpy(B->user_v, v, (size_t)n * d * sizeof(double));
  B->user_n = n;
  return 0;
}

/* White-box count of the group logarithms a BLieDF stepper has evaluated
 * (tests/whitebox.h; spec 004 T18). */
long lv_bliedf_log_calls(const lv_stepper *st) {
  const bliedf *B = st ? st->priv : NULL;
  return B ? B->nlog : -1;
}

/* White-box count of the factorisations (of the saddle-point matrix in
 * the RKMK4 stages, the projections and (56)) the last RKMK4 start of a
 * BLieDF stepper made (tests/whitebox.h): -1 without state. */
long lv_bliedf_start_factorizations(const lv_stepper *st) {
  const bliedf *B = st ? st->priv : NULL;
  return B ? B->start_factors : -1;
}

/* White-box access to the coefficient tables the scheme steps with
 * (tests/whitebox.h; spec 004 T1): row k of ALPHA and GAMMA. */
int lv_bliedf_coefficients(int k, const double **alpha, const double **gamma) {
  if (k < 1 || k > KMAX) return LV_EINPUT;
  *alpha = ALPHA[k - 1];
  *gamma = GAMMA[k - 1];
  return 0;
}
