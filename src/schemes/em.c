/* Energy-momentum schemes (seed 003 §5; spec/003_ggl_vi.md §2.4, §2.5, §4)
 * for a constant mass matrix M on R^d with L = 1/2 v.Mv - V(q).
 *
 *   em    GGL energy-momentum scheme, eq. (84), v eliminated (metis EMS_ggl):
 *           q1 - q = h M^-1 p_mid + h (D^G_p g^v)^T gamma
 *           p1 - p = -h D^G V - h (D^G g)^T lambda - h (D^G_q g^v)^T gamma
 *           g(q1) = 0,   G(q1) M^-1 p1 = 0
 *         with D^G_p g^v = G(z) M^-1, D^G_q g^v = D_q(G(q) w)(z),
 *         z = (q+q1)/2, w = M^-1 p_mid (midpoint derivatives: exact for
 *         quadratic g, see discrete_gradient.c for the general case).
 *   em-g  Gonzalez (1999), primary constraints only (metis EMS_std):
 *           q1 - q = h M^-1 p_mid,  p1 - p = -h D^G V - h (D^G g)^T lambda,
 *           g(q1) = 0.
 * D^G V is the invariant-based discrete gradient (126) when the model
 * provides invariants, else Gonzalez' (or the exact midpoint gradient for a
 * V that is at most quadratic): lv_dgrad decides once per integration.
 *
 * ---- Reduction (2d+2m -> d+2m unknowns) ----
 * The first equation is linear in p1, so p1 is explicit:
 *   p_mid = M u / h,   u = Delta - M^-1 G(z)^T b,   Delta = q1 - q,
 * with the scaled multipliers a = h^2/2 lambda, b = h gamma.  Substituting
 * it into the momentum balance (times h/2) and the velocity constraint
 * (times h/2) leaves, in the unknowns x = (Delta, a, b),
 *   F1 = D^-1 [ M u - h p + h^2/2 D^G V + G(z)^T a + 1/2 H(z; b) u ]
 *   Fg = g(q + Delta)
 *   Fv = G(q + Delta) (u - h/2 M^-1 p)
 * (H(q; b) = D_q(G^T b), so h/2 (D^G_q g^v)^T gamma = 1/2 H(z; b) u), and
 * for em-g x = (Delta, a), u = Delta, no Fv.  This is the same system the
 * GGL variational integrators of ggl_vi.c solve (d+2m, position-level
 * unknowns), so their costs compare like with like, and every block of
 * the Newton matrix is O(1) as h -> 0: lambda moves q1 at O(h^2), gamma
 * at O(h), and a, b are exactly those displacements.  The limit matrix
 * [[M, G^T, -G^T], [G, 0, 0], [G, 0, -G M^-1 G^T]] is nonsingular for G of
 * full rank.  (For em-g it is the RATTLE-like [[M, G^T], [G, 0]].)  Solving
 * for Delta rather than q1 keeps p1 = 2 M u / h - p free of the
 * cancellation q1 - q.  D = diag(M) puts F1 in position units, so one
 * residual tolerance means the same for every row.
 *
 * ---- Newton matrix ----
 * Analytic:
 *   dF1/dDelta = D^-1 [ M + h^2/2 J_V + 1/2 H(z;a) - 1/4 H(z;b) M^-1 H(z;b) ]
 *   dF1/da     = D^-1 G(z)^T
 *   dF1/db     = D^-1 [ -G(z)^T + 1/2 Z(z;u)^T - 1/2 H(z;b) M^-1 G(z)^T ]
 *   dFg/dDelta = G(q1)
 *   dFv/dDelta = Z(q1; u - h/2 v) + G(q1) (I - 1/2 M^-1 H(z;b)),
 *   dFv/db     = -G(q1) M^-1 G(z)^T
 * with J_V = d(D^G V)/dq1 from the toolkit (the derivative of the
 * difference quotients: analytic for the invariant and midpoint forms).
 * Left out: third derivatives of g (they vanish for quadratic constraints,
 * i.e. for every built-in model), the rank-one parts of the Gonzalez
 * corrections of non-quadratic constraints and the change of the orbit
 * projector with z (see discrete_gradient.c): they only make Newton's
 * contraction linear with an O(h) rate, never change the solution, and
 * the polishing below restores round-off accuracy.
 *
 * One assembly whatever the linear solver (as in ggl_vi.c): the factors
 * are captured from the model callbacks as fixed-pattern sparse matrices
 * (J_V of the invariant form, H(z; a) and Z(q1; w), which enter one term
 * each, are written into the assembly as they are added: lv_blk_rows),
 * M^-1 formed block by block once, the products formed sparsely, and each
 * term written once into the solver's assembly, which lands it in a dense
 * array or a fixed CSC pattern: O(nnz) per iteration and memory for the
 * usual models.  The parts of the exact matrix that are dense by nature --
 * Gonzalez' correction in J_V (orbit-projected, rank one), and for
 * non-quadratic constraints the rank-k terms Delta beta^T, h/2 Delta
 * betav^T and the orbit projector in s P -- are written as dense blocks
 * for every back-end: O(d^2) per iteration, but only for such models (no
 * built-in one); a sparse back-end used to leave them out, at up to 48 %
 * more Newton iterations (tests/check_em.c).
 *
 * After convergence one more correction is applied with the last
 * factorisation (as metis does, and as ggl_vi.c does), so the discrete
 * equations -- and with them energy, momentum maps and both constraints --
 * hold to round-off rather than to the Newton tolerance; it is kept unless
 * it pushes the residual above max(converged residual, tolerance).
 *
 * ---- Large steps ----
 * Every accepted step satisfies the discrete equations to the Newton
 * tolerance, so energy, momentum maps and constraints hold whatever h; a
 * solve that does not converge is reported (LV_ENEWTON, LV_EDIVERGE,
 * LV_ESINGULAR) with the state of the last accepted step.  At very large
 * steps the two Newton starts fail at different steps (four particles,
 * h = 0.675: plain Newton stops near t = 77 from the simple guess and
 * t = 53 from the advanced one), so option retry=on restarts a failed
 * solve once from the other guess; with it, or with the integrator's step
 * halving, the run reaches t = 1000 (benchmarks/bench_em).
 *
 * ---- Momentum maps: midpoint or projected constraint gradients ----
 * The momentum proof needs (85): every constraint row's discrete gradient
 * orthogonal to every generator at the midpoint.  Midpoint gradients give
 * that for rows invariant under the symmetry and for linear ones; a
 * quadratic row that is only equivariant (directors' orthonormality rows
 * under a body rotation) leaves G(z) xi(z) = O(g(z)) = O(h^2), and the
 * momentum map moves at O(h^2).  Option momentum=projected corrects the
 * constraint force along the generators made orthogonal to Delta (so
 * (86), and the energy, stay exact) until (85) holds at every iterate
 * (em_symproject); its Newton matrix carries the correction's derivative
 * by forward differences (em_symjac).  Default: midpoint, the paper's
 * scheme.
 *
 * ---- State after a step t^n -> t^{n+1} ----
 * q^{n+1}, p^{n+1}, v = M^-1 p^{n+1}; lambda = lambda^{n+1}, gamma =
 * gamma^{n+1}: the multipliers of the interval [t^n, t^{n+1}] (they carry
 * the superscript n+1 in (84)). */
#include "schemes/discrete_gradient.h"
#include "schemes/mass_op.h"

typedef enum { EM_GGL = 0, EM_G = 1 } em_kind;
enum { EM_GUESS_SIMPLE, EM_GUESS_ADVANCED, EM_GUESS_TAYLOR };

typedef struct {
  em_kind kind;
  int guess, retry; /* guess: EM_GUESS_SIMPLE, _ADVANCED or _TAYLOR */
  const lv_model *m;
  lv_state *s;
  int d, k, n;
  double h;
  lv_newton *nw;
  lv_dgrad *dg;
  double *x;
  /* per step */
  double *v0, *gx, *gvx;  /* M^-1 p, and (non-quadratic g only) g(q), G(q) v */
  /* cache at the iterate */
  int cached;
  int gz_valid; /* sGz holds G(z) of the iterate (em_gz): captured where a matrix or O(nnz) pass needs it */
  double *y, *z, *u, *DGV, *tmp, *tmp2, *w;
  double *r_last; /* the residual em_residual last wrote, while x has not moved since (else NULL) */
  double *beta, *betav;   /* Gonzalez coefficients of g and g^v (non-quadratic g) */
  double *wo;             /* their direction: Delta projected off the group orbit */
  /* Jacobian scratch for the dense-by-nature terms: d x max(d, k) */
  double *B;
  double *acc; /* the products' row accumulator (lv_spm_share_acc), max(d, k) */
  /* every matrix in fixed-pattern sparse form (schemes/spmat.h) */
  lv_spm sGz, sGzT, sMiGzT, sGy, sHb, sMiHb, sP11, sP13, sP31, sP33;
  lv_spm sJV, sZu, sI; /* D(D^G V) of Gonzalez' form, Z(z; u), identity */
  lv_spm sPr, sWa, sWb;          /* s (P - I), Delta beta^T, h/2 Delta betav^T (non-quadratic g) */
  /* M, M^-1 (sparse form), rs = 1/diag(M) */
  lv_mass_op mass;
  /* M^-1's values when it is diagonal (particles), else NULL: M^-1 H(z;b)
   * and M^-1 G(z)^T are then not formed, their rows scaled as used
   * (lv_spm_product_put_diag) */
  const double *mid;
  /* symmetry-projected constraint gradients (option momentum, em_symproject) */
  int symproj, ns;
  double *sf;  /* the constraint force of F1: G(z)^T a (+ 1/2 H(z; b) u), d; then z + u, d */
  double *sxi; /* the generators xi_j(z) off Delta, then the orthonormal basis e_r: 2 ns x d */
  double *sR;  /* R[j ns + r] = e_r . xi_j, ns x ns; then the right-hand sides and mu: 2 ns */
  int *scol;   /* the generator that gave basis vector r */
  double *sc0, *sJc; /* the correction at the iterate (d) and its derivative in x (d x n, column-major) */
  lv_spm sJ;
} em;

/* ------------------------------------------------------------ residual */

/* y = G(z)^T x straight from the model (lv_model_GT_apply_add), as the
 * residual needs it at every iterate: sGz's capture (em_gz) is made only
 * where a Newton matrix or a pass over its entries follows.  The model
 * sums the terms of each column in its callback's order, the captured
 * matrix in ascending rows: the same bits for a callback that writes its
 * rows in order, each position once (the multibody layer and the built-in
 * models), the same values to round-off otherwise. */
static int gz_transpose_apply(em *E, const double *x, double *y) {
  memset(y, 0, (size_t)E->d * sizeof(double));
  return lv_model_GT_apply_add(E->m, E->z, x, y);
}

/* sGz = G(z) at the iterate (em_eval done), captured once per iterate. */
static int em_gz(em *E) {
  if (!E->gz_valid) {
    LV_CHECK(lv_spm_constraint_jac(E->m, E->z, &E->sGz));
    E->gz_valid = 1;
  }
  return 0;
}

/* Everything residual and Newton matrix share, at the iterate x. */
static int em_eval(em *E) {
  if (E->cached) return 0;
  int d = E->d, k = E->k;
  const double *q = E->s->q, *dl = E->x, *b = E->x + d + k;
  for (int i = 0; i < d; i++) {
    E->y[i] = q[i] + dl[i];
    E->z[i] = q[i] + 0.5 * dl[i];
  }
  memcpy(E->u, dl, (size_t)d * sizeof(double));
  E->gz_valid = 0;
  if (k > 0) {
    if (E->kind == EM_GGL) { /* u = Delta - M^-1 G(z)^T b */
      LV_CHECK(gz_transpose_apply(E, b, E->tmp));
      lv_mass_inv_mul(&E->mass, E->tmp, E->w);
      for (int i = 0; i < d; i++) E->u[i] -= E->w[i];
    }
  }
  LV_CHECK(lv_dg_pot(E->dg, E->y, E->DGV, NULL));
  E->cached = 1;
  return 0;
}

/* Gonzalez coefficients for non-quadratic constraints: beta_c for g_c and
 * betav_c for g^v_c (see lv_dgrad_constraints / _velocity_constraints),
 * from the sparse G(z), G(y): O(nnz). */
static int em_corrections(em *E, const double *gy) {
  const lv_model *m = E->m;
  int d = E->d, k = E->k;
  double h = E->h;
  const double *dl = E->x;
  LV_CHECK(em_gz(E));
  LV_CHECK(lv_dg_orbit(E->dg, E->z, dl, E->wo));
  double dd = lv_vdot(d, E->wo, dl);
  double *br = E->tmp2, *sc = E->tmp2 + k, *zd = E->tmp2 + 2 * k, *t = E->w, *v1 = E->tmp;
  for (int i = 0; i < d; i++) t[i] = fabs(E->z[i]) + fabs(dl[i]);
  lv_spm_matvec(&E->sGz, 1.0, dl, 0, br);
  for (int c = 0; c < k; c++) sc[c] = fabs(gy[c]) + fabs(E->gx[c]);
  lv_spm_absmatvec(&E->sGz, t, sc);
  for (int c = 0; c < k; c++) E->beta[c] = lv_dg_coef(gy[c] - E->gx[c] - br[c], sc[c], dd);
  if (E->kind != EM_GGL) return 0;
  /* remainder of g^v: G(y) v1 - G(q) v0 - G(z) (v1 - v0) - Z(z; w) Delta,
   * v1 = 2u/h - v0, w = u/h */
  for (int i = 0; i < d; i++) v1[i] = 2.0 * E->u[i] / h - E->v0[i];
  LV_CHECK(lv_spm_constraint_jac(m, E->y, &E->sGy));
  for (int i = 0; i < d; i++) t[i] = v1[i] - E->v0[i];
  lv_spm_matvec(&E->sGy, 1.0, v1, 0, br);
  lv_spm_matvec(&E->sGz, -1.0, t, 1, br);
  for (int c = 0; c < k; c++) br[c] -= E->gvx[c], sc[c] = fabs(E->gvx[c]);
  lv_spm_absmatvec(&E->sGy, v1, sc);
  lv_spm_absmatvec(&E->sGz, t, sc);
  for (int i = 0; i < d; i++) t[i] = E->u[i] / h;
  LV_CHECK(lv_model_curvature_apply(m, E->z, t, dl, zd));
  for (int c = 0; c < k; c++) E->betav[c] = lv_dg_coef(br[c] - zd[c], sc[c] + fabs(zd[c]), dd);
  return 0;
}

/* Symmetry-projected constraint gradients (option momentum; see the file
 * comment).  f = G(z)^T a + 1/2 H(z; b) u is the constraint force of F1:
 * the multipliers times the q-derivatives of the rows of g and (h/2 of)
 * g^v at the midpoint.  It is replaced by f - sum_r mu_r e_r, with e_r an
 * orthonormal basis of the generators xi_j(z) made orthogonal to Delta,
 * Zp_j = xi_j - (xi_j . Delta / |Delta|^2) Delta, so that the
 * directionality (86) is untouched, and mu chosen so that, generator by
 * generator, the orthogonality (85b, c) holds at every iterate:
 *   f . xi_j(z) + 1/2 (G(z)^T b) . A_j u = 0,
 * where A_j u = xi_j(z + u) - xi_j(z) is the generator's linear part
 * applied to u (the p-part of the cotangent lift, -A_j^T p = A_j p for the
 * rotations and translations a model declares, which commute with M).
 * mu solves a triangular system with diagonal |Zp_j| after the earlier
 * generators; a generator whose Zp_j is below 1e-10 of |xi_j| there gives
 * no basis vector (its condition is left to the others).
 * (A "bounded" variant, whose right-hand side subtracts the derivative
 * along (Delta q, Delta p) so that mu is an orthogonal projection, was
 * tried: it is equal at the solution, but away from it that derivative is
 * large and the correction turned with Delta so fast that Newton left its
 * basin on the heavy top at the first step.) */
static int em_symproject(em *E, double *f) {
  const lv_model *m = E->m;
  int d = E->d, k = E->k, ns = E->ns, nb = 0, ggl = E->kind == EM_GGL;
  const double *dl = E->x, *b = E->x + d + k;
  double *xi = E->sxi, *e = E->sxi + (size_t)ns * d, *R = E->sR, *rhs = R + (size_t)ns * ns, *mu = rhs + ns;
  double *zu = E->sf + d, *gb = E->tmp, *au = E->w;
  double dd = lv_vdot(d, dl, dl);
  if (ggl) {
    LV_CHECK(em_gz(E));
    lv_spm_matvec_t(&E->sGz, 1.0, b, 0, gb); /* G(z)^T b */
    for (int i = 0; i < d; i++) zu[i] = E->z[i] + E->u[i];
  }
  for (int j = 0; j < ns; j++) {
    double *x = xi + (size_t)j * d, *ec = e + (size_t)nb * d;
    LV_CHECK(lv_model_symmetry(m, j, E->z, x));
    rhs[j] = lv_vdot(d, f, x);
    if (ggl) {
      LV_CHECK(lv_model_symmetry(m, j, zu, au));
      double s = 0.0;
      for (int i = 0; i < d; i++) s += gb[i] * (au[i] - x[i]);
      rhs[j] += 0.5 * s;
    }
    double al = dd > 0.0 ? lv_vdot(d, x, dl) / dd : 0.0;
    for (int i = 0; i < d; i++) x[i] -= al * dl[i];
    memcpy(ec, x, (size_t)d * sizeof(double));
    double n0 = sqrt(lv_vdot(d, x, x));
    lv_dg_mgs(d, nb, e, ec, R + (size_t)j * ns);
    double n1 = sqrt(lv_vdot(d, ec, ec));
    if (!(n0 > 0.0) || !(n1 > 1e-10 * n0)) continue;
    for (int i = 0; i < d; i++) ec[i] /= n1;
    R[(size_t)j * ns + nb] = n1;
    E->scol[nb++] = j;
  }
  /* e_r . xi_j = e_r . Zp_j = R[j, r] (r <= r(j)): forward substitution */
  for (int r = 0; r < nb; r++) {
    int j = E->scol[r];
    double s = rhs[j];
    for (int i = 0; i < r; i++) s -= R[(size_t)j * ns + i] * mu[i];
    mu[r] = s / R[(size_t)j * ns + r];
    const double *er = e + (size_t)r * d;
    for (int i = 0; i < d; i++) f[i] -= mu[r] * er[i];
  }
  return 0;
}

/* f = G(z)^T a (+ 1/2 H(z; b) u for em): F1's constraint force at the
 * iterate, before projection (em_eval done) */
static int em_constraint_force(em *E, double *f) {
  int d = E->d, k = E->k;
  LV_CHECK(em_gz(E));
  lv_spm_matvec_t(&E->sGz, 1.0, E->x + d, 0, f);
  if (E->kind == EM_GGL) {
    LV_CHECK(lv_model_hessian_apply(E->m, E->z, E->x + d + k, E->u, E->w));
    for (int i = 0; i < d; i++) f[i] += 0.5 * E->w[i];
  }
  return 0;
}

/* c = the projected constraint force minus the unprojected one at x (d) */
static int em_symcorr(em *E, double *c) {
  int d = E->d;
  LV_CHECK(em_eval(E));
  LV_CHECK(em_constraint_force(E, E->sf));
  memcpy(c, E->sf, (size_t)d * sizeof(double));
  LV_CHECK(em_symproject(E, E->sf));
  for (int i = 0; i < d; i++) c[i] = E->sf[i] - c[i];
  return 0;
}

/* The correction's derivative for the Newton matrix, by forward differences
 * in each unknown (models up to EM_SYMJAC_MAX unknowns; larger ones do
 * without it).  Where Delta nearly lies in the span of the generators (a
 * spinning top: the spin dominates the step) the basis vector that carries
 * the correction turns fast with Delta: on the heavy top in directors
 * (J2 = 0.4, h = 1e-3) Newton without this block took 5.13 iterations per
 * step and stalled (LV_ENEWTON) at step 1558; with it 4.05 over 1e5 steps
 * (the midpoint scheme 3.00: the differences leave a relative error of
 * ~1e-5, so the last correction before round-off needs one iteration more;
 * central differences measured the same, 4.06).  It costs n evaluations
 * of the correction per factorisation.  The block only shapes the
 * iteration: the solution is the discrete equations' whatever it is. */
#define EM_SYMJAC_MAX 256
static int em_symjac(em *E) {
  int d = E->d, k = E->k, n = E->n;
  LV_CHECK(em_symcorr(E, E->sc0));
  for (int j = 0; j < n; j++) {
    /* step: 1e-7 of the unknown plus the rms of its block (Delta, a, b) */
    int lo = j < d ? 0 : j < d + k ? d : d + k, hi = j < d ? d : j < d + k ? d + k : n;
    double xj = E->x[j], dx = 1e-7 * (fabs(xj) + sqrt(lv_vdot(hi - lo, E->x + lo, E->x + lo) / (hi - lo)));
    if (!(dx > 0.0)) dx = 1e-12;
    double *col = E->sJc + (size_t)j * d;
    E->x[j] = xj + dx;
    E->cached = 0;
    int rc = em_symcorr(E, col);
    E->x[j] = xj;
    E->cached = 0;
    LV_CHECK(rc);
    for (int i = 0; i < d; i++) col[i] = (col[i] - E->sc0[i]) / dx;
  }
  return em_eval(E);
}

static int em_residual(void *ctx, double *r) {
  em *E = ctx;
  E->r_last = NULL;
  LV_CHECK(em_eval(E));
  const lv_model *m = E->m;
  int d = E->d, k = E->k;
  double h = E->h;
  const double *p = E->s->p, *a = E->x + d, *b = E->x + d + k;
  /* F1 = D^-1 [ M u - h p + h^2/2 D^G V + G(z)^T a + 1/2 H(z; b) u ] */
  lv_mass_mul(&E->mass, E->u, r);
  for (int i = 0; i < d; i++) r[i] += 0.5 * h * h * E->DGV[i] - h * p[i];
  if (k > 0) {
    if (E->symproj) { /* the constraint force, projected */
      LV_CHECK(em_constraint_force(E, E->sf));
      LV_CHECK(em_symproject(E, E->sf));
      for (int i = 0; i < d; i++) r[i] += E->sf[i];
    } else { /* the same terms, added to r one by one (the paper's scheme, as before) */
      LV_CHECK(gz_transpose_apply(E, a, E->w));
      for (int i = 0; i < d; i++) r[i] += E->w[i];
      if (E->kind == EM_GGL) {
        LV_CHECK(lv_model_hessian_apply(E->m, E->z, b, E->u, E->w));
        for (int i = 0; i < d; i++) r[i] += 0.5 * E->w[i];
      }
    }
    LV_CHECK(lv_model_constraints(m, E->y, r + d));
    if (!lv_dgrad_constraints_quadratic(E->dg)) {
      /* + w (beta . a) + h/2 w (betav . b) */
      LV_CHECK(em_corrections(E, r + d));
      double s = lv_vdot(k, E->beta, a);
      if (E->kind == EM_GGL) s += 0.5 * h * lv_vdot(k, E->betav, b);
      for (int i = 0; i < d; i++) r[i] += s * E->wo[i];
    }
  }
  for (int i = 0; i < d; i++) r[i] *= E->mass.rs[i];
  if (E->kind == EM_GGL && k > 0) {
    /* Fv = G(q1) (u - h/2 v0) */
    for (int i = 0; i < d; i++) E->w[i] = E->u[i] - 0.5 * h * E->v0[i];
    LV_CHECK(lv_model_G_apply(m, E->y, E->w, r + d + k));
  }
  E->r_last = r;
  return 0;
}

/* Residual units (lv_newton_set_units): a correction of Delta by dD moves
 * p^{n+1} = 2 M u / h - p by 2 M dD / h, so every row is judged as the
 * velocity its correction implies, h/2 of a row per unit: F1 (position
 * units) and Fv (G times a position) directly, g through the position
 * change normal to the constraint.  In position units a step at h = 1e-6
 * passed after one correction with velocity defects ~ 1e-6 (pendulum:
 * energy error 2e-9 for em-g, 4e-10 for em at 1e-7, against 3e-14 solved
 * to round-off).  The rounding of g (em_scale) is below that unit once h
 * is small. */
static int em_units(void *ctx, double *u) {
  em *E = ctx;
  for (int i = 0; i < E->n; i++) u[i] = 0.5 * E->h;
  return 0;
}

/* Round-off scale (lv_newton_set_scale): the error that the rounding of
 * the positions leaves in each row.  q1 = q + Delta and z = (q + q1)/2 are
 * known only to eps |q1|, eps |z|, so
 *  - g(q1) carries |G(q1)| |q1|;
 *  - F1's G(z)^T a carries |H(z; a)| |z| (its z-derivative is H(z; a)),
 *    in F1's units (times D^-1);
 *  - Fv = G(q1) w carries |Z(q1; w)| |q1|, w = u - h/2 M^-1 p.
 * Far from the origin these dominate: chain N = 1e5 (positions up to 1e5,
 * a ~ 0.05) leaves F1 rows at 5.6e-13, 110 times the velocity unit at
 * h = 1e-2, however often Newton corrects, while eps |H| |z| ~ 1e-12.
 * The other terms of F1 (M u, h p, h^2/2 D^G V) are O(h |v|) and round
 * far below their unit. */
static int em_scale(void *ctx, double *sc) {
  em *E = ctx;
  int d = E->d, k = E->k;
  memset(sc, 0, (size_t)E->n * sizeof(double));
  const double *a = E->x + d, *p = E->s->p;
  double h = E->h, *t = E->w;
  /* the terms of F1 and the rounding that positions known to eps |q|
   * leave in the force term: M u, h p, h^2/2 (|D^G V| + |d2V| |q1|) */
  LV_CHECK(lv_model_mass_apply_abs(E->m, E->y, E->u, sc));
  LV_CHECK(lv_model_hess_potential_apply_abs(E->m, E->y, E->y, t));
  for (int i = 0; i < d; i++) sc[i] += h * fabs(p[i]) + 0.5 * h * h * (fabs(E->DGV[i]) + t[i]);
  if (k > 0) {
    LV_CHECK(lv_model_hessian_apply_abs(E->m, E->z, a, E->z, t));
    for (int i = 0; i < d; i++) sc[i] += t[i];
  }
  for (int i = 0; i < d; i++) sc[i] *= E->mass.rs[i];
  if (k == 0) return 0;
  LV_CHECK(lv_model_G_apply_abs(E->m, E->y, E->y, sc + d));
  if (E->kind == EM_GGL) {
    double *sv = sc + d + k;
    for (int i = 0; i < d; i++) E->w[i] = E->u[i] - 0.5 * E->h * E->v0[i];
    LV_CHECK(lv_model_curvature_apply_abs(E->m, E->y, E->w, E->y, sv));
    /* and the rounding of w = u - h/2 v0 = Delta - M^-1 G(z)^T b - h/2 v0
     * and of the product G w: |G(q1)| (|u| + h/2 |v0| + D^-1 (|G(z)^T| |b|
     * + |H(z; b)| |z|)).  With multipliers of 10^7 (the chain at
     * N = 10^6) Fv stalled at 5e-12, 10^3 times its tolerance, while its
     * curvature term alone allowed 2e-21. */
    const double *b = E->x + d + k;
    LV_CHECK(lv_model_hessian_apply_abs(E->m, E->z, b, E->z, E->tmp));
    LV_CHECK(lv_model_GT_apply_abs(E->m, E->z, b, t));
    for (int i = 0; i < d; i++)
      E->tmp[i] = E->mass.rs[i] * (E->tmp[i] + t[i]) + fabs(E->u[i]) + 0.5 * E->h * fabs(E->v0[i]);
    LV_CHECK(lv_model_G_apply_abs(E->m, E->y, E->tmp, t));
    for (int i = 0; i < k; i++) sv[i] += t[i];
  }
  return 0;
}

/* dense d x c block B (column-major) into the fixed-pattern matrix S, every
 * entry (zeros too: the pattern must not depend on the values) */
static int capture_dense(lv_spm *S, int r, int c, const double *B) {
  lv_sink *s = lv_spm_begin(S);
  int rc = 0;
  for (int i = 0; i < r && !rc; i++)
    for (int j = 0; j < c && !rc; j++) rc = lv_sink_add(s, i, j, B[i + (size_t)j * r]);
  return lv_spm_end(S, rc);
}

/* B (d x c) = f wo x^T */
static void outer(int d, int c, double f, const double *wo, const double *x, double *B) {
  for (int j = 0; j < c; j++)
    for (int i = 0; i < d; i++) B[i + (size_t)j * d] = f * wo[i] * x[j];
}

/* D[0:d, 0:d] += scale rowscale_i B_ij (B d x d column-major) in a dense
 * assembly, as lv_spm_put writes a captured block (its zeros add nothing) */
static void add_dense_rows(lv_assembly *S, int d, const double *B, double scale, const double *rowscale) {
  size_t n = (size_t)S->n;
  int bad = 0;
  /* column by column (B and D are column-major: both read in order);
   * every entry is added once, so the order of the entries does not
   * change a bit */
  for (int j = 0; j < d; j++) {
    const double *b = B + (size_t)j * d;
    double *col = S->D + (size_t)j * n;
    for (int i = 0; i < d; i++) {
      double v = (scale * rowscale[i]) * b[i];
      bad |= !isfinite(v);
      col[i] += v;
    }
  }
  if (bad) S->nonfinite = 1;
}

/* The Newton matrix, each term written once into the solver's assembly. */
/* E->B on first use: d x max(d, k) doubles. */
static int ensure_B(em *E) {
  if (E->B) return 0;
  size_t big = (size_t)E->d * (size_t)(E->d > E->k ? E->d : E->k);
  E->B = lv_calloc(big, sizeof(double));
  return E->B ? 0 : LV_ENOMEM;
}

static int em_jacobian(void *ctx, lv_linsol *ls) {
  em *E = ctx;
  LV_CHECK(em_eval(E));
  const lv_model *m = E->m;
  int d = E->d, k = E->k, ggl = E->kind == EM_GGL;
  if (k > 0) LV_CHECK(em_gz(E));
  double h = E->h;
  const double *a = E->x + d, *b = E->x + d + k;
  int nonquad = k > 0 && !lv_dgrad_constraints_quadratic(E->dg);
  lv_assembly *S = lv_linsol_assembly(ls);
  if (nonquad) LV_CHECK(ensure_B(E));

  /* dF1/dDelta = D^-1 [ M + h^2/2 J_V + 1/2 H(z;a) - 1/4 H(z;b) M^-1 H(z;b) (+ s P) ] */
  LV_CHECK(lv_spm_put(S, 0, 0, &E->mass.sM, 1.0, E->mass.rs, 0));
  if (E->dg->pot == LV_DGRAD_GONZALEZ) { /* J_V has a dense orbit-projected rank-one part */
    LV_CHECK(ensure_B(E));
    LV_CHECK(lv_dg_pot(E->dg, E->y, E->DGV, E->B));
    LV_CHECK(capture_dense(&E->sJV, d, d, E->B));
    LV_CHECK(lv_spm_put(S, 0, 0, &E->sJV, 0.5 * h * h, E->mass.rs, 0));
  } else if (S->dense && E->dg->pot == LV_DGRAD_INVARIANT) {
    /* J_V formed dense (a few invariants' 6 x 6 blocks) and added the way
     * lv_spm_put adds a capture of it, the same sums in the same order:
     * the capture's sink cost about 40 instructions an entry */
    LV_CHECK(ensure_B(E));
    LV_CHECK(lv_dg_pot(E->dg, E->y, E->DGV, E->B));
    add_dense_rows(S, d, E->B, 0.5 * h * h, E->mass.rs);
  } else {
    /* J_V on a sparse back-end, and H(z; a), serve this one term each:
     * written as they are added (lv_blk_rows), without a capture and a put */
    lv_blk_sink bk;
    LV_CHECK(lv_dg_pot_sink(E->dg, E->y, E->DGV, lv_blk_rows(&bk, S, 0, 0, d, d, 0.5 * h * h, E->mass.rs)));
    if (bk.bad) return LV_ENONFINITE;
  }
  if (k == 0) return 0;
  lv_blk_sink bk;
  LV_CHECK(lv_model_matrix_flagged(m, LV_MX_HESSIAN, 0.0, E->z, NULL, a,
                                   lv_blk_rows(&bk, S, 0, 0, d, d, 0.5, E->mass.rs), &bk.bad));
  if (ggl) {
    LV_CHECK(lv_spm_model_matrix(&E->sHb, d, d, m, LV_MX_HESSIAN, 0.0, E->z, NULL, b));
    if (E->mid) {
      LV_CHECK(lv_spm_product_put_diag(S, 0, 0, &E->sP11, &E->sHb, E->mid, &E->sHb, -0.25, E->mass.rs));
    } else {
      LV_CHECK(lv_spm_product(&E->sMiHb, &E->mass.sMi, &E->sHb));
      LV_CHECK(lv_spm_product_put(S, 0, 0, &E->sP11, &E->sHb, &E->sMiHb, -0.25, E->mass.rs));
    }
  }
  if (nonquad) {
    double sc = lv_vdot(k, E->beta, a) + (ggl ? 0.5 * h * lv_vdot(k, E->betav, b) : 0.0);
    LV_CHECK(lv_spm_put(S, 0, 0, &E->sI, sc, E->mass.rs, 0));
    if (E->dg->nxb > 0) { /* s P = s I + s (P - I), P the projector off the group orbit */
      memset(E->B, 0, (size_t)d * d * sizeof(double));
      lv_dg_add_projector(E->dg, sc, E->B);
      for (int i = 0; i < d; i++) E->B[i + (size_t)i * d] -= sc;
      LV_CHECK(capture_dense(&E->sPr, d, d, E->B));
      LV_CHECK(lv_spm_put(S, 0, 0, &E->sPr, 1.0, E->mass.rs, 0));
    }
  }

  if (E->symproj && E->n <= EM_SYMJAC_MAX) {
    LV_CHECK(em_symjac(E));
    LV_CHECK(capture_dense(&E->sJ, d, E->n, E->sJc));
    LV_CHECK(lv_spm_put(S, 0, 0, &E->sJ, 1.0, E->mass.rs, 0));
  }

  /* dF1/da = D^-1 (G(z)^T + Delta beta^T),  dFg/dDelta = G(q1) */
  LV_CHECK(lv_spm_put(S, 0, d, &E->sGz, 1.0, E->mass.rs, 1));
  if (nonquad) {
    outer(d, k, 1.0, E->wo, E->beta, E->B);
    LV_CHECK(capture_dense(&E->sWa, d, k, E->B));
    LV_CHECK(lv_spm_put(S, 0, d, &E->sWa, 1.0, E->mass.rs, 0));
  }
  LV_CHECK(lv_spm_constraint_jac(m, E->y, &E->sGy));
  LV_CHECK(lv_spm_put(S, d, 0, &E->sGy, 1.0, NULL, 0));
  if (!ggl) return 0;

  /* The last blocks in an order that keeps few of the operands made for
   * this matrix alive at once (M^-1 H(z;b), then G(z)^T and M^-1 G(z)^T,
   * each freed after its last use): the run's peak memory comes while the
   * Newton matrix is assembled.  Only the terms of one block share
   * positions, and within a block the order is the equations' own, so the
   * sums are those of any block order. */

  /* dFv/dDelta = Z(q1; u - h/2 v0) + G(q1) - 1/2 G(q1) M^-1 H(z;b) */
  for (int i = 0; i < d; i++) E->w[i] = E->u[i] - 0.5 * h * E->v0[i];
  /* Z(q1; w), one term: written as it is added (Z(z; u) below is captured) */
  LV_CHECK(lv_model_matrix_flagged(m, LV_MX_CURVATURE, 0.0, E->y, NULL, E->w,
                                   lv_blk_rows(&bk, S, d + k, 0, k, d, 1.0, NULL), &bk.bad));
  LV_CHECK(lv_spm_put(S, d + k, 0, &E->sGy, 1.0, NULL, 0));
  const double *mid = E->mid;
  LV_CHECK(mid ? lv_spm_product_put_diag(S, d + k, 0, &E->sP31, &E->sGy, mid, &E->sHb, -0.5, NULL)
               : lv_spm_product_put(S, d + k, 0, &E->sP31, &E->sGy, &E->sMiHb, -0.5, NULL));
  lv_spm_drop_values(&E->sMiHb);

  /* dF1/db = D^-1 [ -G(z)^T + 1/2 Z(z;u)^T - 1/2 H(z;b) M^-1 G(z)^T + h/2 Delta betav^T ] */
  LV_CHECK(lv_spm_put(S, 0, d + k, &E->sGz, -1.0, E->mass.rs, 1));
  LV_CHECK(lv_spm_model_matrix(&E->sZu, k, d, m, LV_MX_CURVATURE, 0.0, E->z, NULL, E->u));
  LV_CHECK(lv_spm_put(S, 0, d + k, &E->sZu, 0.5, E->mass.rs, 1));
  if (mid) {
    LV_CHECK(lv_spm_transpose_pattern(&E->sGzT, &E->sGz)); /* M^-1 G(z)^T = diag(mid) G(z)^T */
    LV_CHECK(lv_spm_product_put_diag(S, 0, d + k, &E->sP13, &E->sHb, mid, &E->sGzT, -0.5, E->mass.rs));
  } else {
    LV_CHECK(lv_spm_transpose(&E->sGzT, &E->sGz));
    LV_CHECK(lv_spm_product(&E->sMiGzT, &E->mass.sMi, &E->sGzT));
    lv_spm_drop_values(&E->sGzT);
    LV_CHECK(lv_spm_product_put(S, 0, d + k, &E->sP13, &E->sHb, &E->sMiGzT, -0.5, E->mass.rs));
  }
  if (nonquad) {
    outer(d, k, 0.5 * h, E->wo, E->betav, E->B);
    LV_CHECK(capture_dense(&E->sWb, d, k, E->B));
    LV_CHECK(lv_spm_put(S, 0, d + k, &E->sWb, 1.0, E->mass.rs, 0));
  }

  /* dFv/db = -G(q1) M^-1 G(z)^T */
  LV_CHECK(mid ? lv_spm_product_put_diag(S, d + k, d + k, &E->sP33, &E->sGy, mid, &E->sGzT, -1.0, NULL)
               : lv_spm_product_put(S, d + k, d + k, &E->sP33, &E->sGy, &E->sMiGzT, -1.0, NULL));
  lv_spm_drop_values(&E->sMiGzT);
  return 0;
}

static int em_update(void *ctx, const double *dx) {
  em *E = ctx;
  for (int i = 0; i < E->n; i++) E->x[i] += dx[i];
  E->cached = 0;
  E->r_last = NULL;
  return 0;
}

/* ------------------------------------------------------------ life cycle */

static void em_destroy(lv_stepper *st) {
  em *E = st->priv;
  if (!E) return;
  lv_newton_free(E->nw);
  lv_dgrad_free(E->dg);
  double **arrs[] = {&E->x, &E->v0,   &E->gx,  &E->gvx, &E->y, &E->z,
                     &E->u, &E->DGV,  &E->tmp,   &E->tmp2,  &E->w,    &E->beta, &E->betav, &E->B, &E->wo, &E->acc,
                     &E->sf, &E->sxi, &E->sR, &E->sc0, &E->sJc};
  for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) free(*arrs[i]);
  free(E->scol);
  lv_spm_free(&E->sJ);
  lv_mass_op_free(&E->mass);
  lv_spm *sps[] = {&E->sGz,  &E->sGzT, &E->sMiGzT, &E->sGy, &E->sHb, &E->sMiHb, &E->sP11, &E->sP13, &E->sP31,
                   &E->sP33, &E->sJV,  &E->sZu,    &E->sI,  &E->sPr, &E->sWa,   &E->sWb};
  for (size_t i = 0; i < sizeof sps / sizeof sps[0]; i++) lv_spm_free(sps[i]);
  free(E);
  st->priv = NULL;
}

/* EM starts from q^n + h v^n: from Delta = 0 the first correction takes the
 * step's whole change of the multipliers at once, and on a long chain (the
 * tension terms H(z; a) grow with lambda ~ N m g) it overshoots: at
 * N = 1e6 its first iterate's Newton matrix had pivot ratio 9e-10 and
 * condition 2.9e12 (LV_ESINGULAR in the second step), while every iterate
 * from q^n + h v^n keeps 2.5e-7 .. 4.9e-7 and converges in 5 iterations
 * (at N = 1e5 4 instead of 5).  EM now starts from the Taylor polynomial
 * (em_guess), which is closer still.  EM-G keeps Delta = 0: at tiny steps a
 * start that is already within round-off leaves one correction whose
 * rounding biases the energy (pendulum, h = 1e-7, t = 2e-3: 9.9e-14 from
 * q^n, 9.6e-13 from q^n + h v^n, 1.5e-11 from the Taylor start), and far
 * from the origin (check_em) its energy error went from below 1e-9 to
 * 1.2e-9 from q^n + h v^n. */
#define EM_GUESS_HELP                                                                                     \
  "Newton start: simple = q^{n+1} := q^n; advanced = q^{n+1} := q^n + h v^n; taylor = q^{n+1} := q^n + h v^n " \
  "+ h^2/2 M^-1 (-dV(q^n) - G(q^n)^T lambda^n), a failed solve restarting once from advanced"
#define EM_OPT_RETRY \
  {"retry", "off",                                                                                          \
   "on: after a failed Newton solve restart once (more) from the other guess (simple; advanced after simple) " \
   "before reporting it"}
#define EM_OPT_MOMENTUM                                                                                          \
  {"momentum", "midpoint",                                                                                       \
   "constraint gradients: midpoint = the paper's (84), exact momentum maps where every constraint row is "      \
   "invariant (or linear); projected = corrected orthogonally to Delta so that every declared momentum map "   \
   "is kept, also of symmetries under which a quadratic row is only equivariant (a body-axis spin in directors)"}
static const lv_param_info em_options[] = {
    {"guess", "taylor", EM_GUESS_HELP}, EM_OPT_RETRY, EM_OPT_MOMENTUM, {NULL, NULL, NULL}};
static const lv_param_info em_g_options[] = {
    {"guess", "simple", EM_GUESS_HELP}, EM_OPT_RETRY, EM_OPT_MOMENTUM, {NULL, NULL, NULL}};

static int em_create(lv_stepper *st, em_kind kind) {
  const lv_model *m = st->model;
  LV_CHECK(lv_kv_check(st->options, kind == EM_GGL ? em_options : em_g_options, NULL));
  static const char *const guesses[] = {"simple", "advanced", "taylor", NULL};
  const char *name = kind == EM_GGL ? "em" : "em-g";
  int guess, retry;
  LV_CHECK(lv_opt_choice(st, name, "guess", guesses, kind == EM_GGL ? EM_GUESS_TAYLOR : EM_GUESS_SIMPLE, &guess));
  LV_CHECK(lv_opt_onoff(st, name, "retry", 0, &retry));
  static const char *const moms[] = {"midpoint", "projected", NULL};
  int projected;
  LV_CHECK(lv_opt_choice(st, name, "momentum", moms, 0, &projected));
  /* Applied forces would break the energy balance the scheme is built on:
   * refuse rather than drop them silently. */
  if (lv_model_has_force(m)) return LV_ENOTIMPL;
  if (!lv_model_mass_constant(m) || !lv_space_is_linear(lv_model_space(m))) return LV_ENOTIMPL;

  em *E = lv_calloc(1, sizeof *E);
  if (!E) return LV_ENOMEM;
  st->priv = E;
  E->kind = kind;
  E->guess = guess;
  E->retry = retry;
  E->m = m;
  E->s = st->state;
  int d = lv_model_nv(m), k = lv_model_nc(m);
  int n = kind == EM_GGL ? d + 2 * k : d + k;
  E->d = d;
  E->k = k;
  E->n = n;
  LV_CHECK(lv_dgrad_new(&E->dg, m));
  /* projected constraint gradients need the midpoint ones to be exact
   * along Delta (quadratic g): the Gonzalez corrections of non-quadratic
   * rows are not orthogonal to Delta's complement in the way em_symproject
   * assumes, so such models are refused rather than given a scheme whose
   * energy or momentum proof would not hold */
  E->ns = lv_model_nsym(m);
  if (projected && !(k == 0 || lv_dgrad_constraints_quadratic(E->dg)))
    return lv_opt_refuse(st, name, "momentum",
                         "'midpoint' only: this model's constraints are not quadratic, and the projection needs "
                         "midpoint gradients that are exact along the step");
  E->symproj = projected && k > 0 && E->ns > 0;
  LV_CHECK(lv_newton_new(&E->nw, n, st->linsol_kind));
  lv_newton_set_units(E->nw, em_units);
  lv_newton_set_scale(E->nw, em_scale);
  *lv_newton_opts(E->nw) = st->newton;
  st->linsol = lv_newton_linsol(E->nw);
  st->newton_solver = E->nw; /* the integrator invalidates it on a new h */
  lv_spm *sps[] = {&E->sGz,  &E->sGzT, &E->sMiGzT, &E->sGy, &E->sHb, &E->sMiHb, &E->sP11, &E->sP13, &E->sP31,
                   &E->sP33, &E->sJV,  &E->sZu,    &E->sI,  &E->sPr, &E->sWa,   &E->sWb};
  for (size_t i = 0; i < sizeof sps / sizeof sps[0]; i++) lv_spm_init(sps[i], d, d);
  lv_spm_init(&E->sGz, k, d);
  lv_spm_init(&E->sGy, k, d);
  lv_spm_init(&E->sZu, k, d);
  lv_spm_init(&E->sWa, d, k);
  lv_spm_init(&E->sWb, d, k);
  LV_CHECK(lv_mass_op_init(&E->mass, m, st->state->q, LV_MASS_SPARSE));
  E->mid = lv_spm_diag_values(&E->mass.sMi);
  /* tmp2 holds three k-vectors; B (d x max(d, k), dense) only the dense
   * pieces of a Gonzalez potential or non-quadratic constraints, so it is
   * allocated when first needed (ensure_B): a d^2 array at creation made EM
   * fail with LV_ENOMEM from chain N = 3e4 on. */
  size_t kk = (size_t)(k > 0 ? k : 1);
  /* g(q), g^v(q), beta, betav, their direction wo and em_corrections'
   * scratch tmp2 serve non-quadratic constraints only (one entry each
   * otherwise: 7k + d doubles less, 8 MB on the chain at N = 1e5) */
  int nq = k > 0 && !lv_dgrad_constraints_quadratic(E->dg);
  size_t kq = nq ? kk : 1, dq = nq ? (size_t)d : 1;
  /* the identity serves the s P term of non-quadratic constraints only
   * (84 bytes per particle of the chain otherwise) */
  if (nq) LV_CHECK(lv_spm_identity(&E->sI, d));
  struct {
    double **p;
    size_t len;
  } al[] = {{&E->x, n},     {&E->v0, d},      {&E->gx, kq},
            {&E->gvx, kq},  {&E->y, d},     {&E->z, d},      {&E->u, d},     {&E->DGV, d},     {&E->tmp, d},
            {&E->tmp2, 3 * kq}, {&E->w, d},    {&E->beta, kq},  {&E->betav, kq}, {&E->wo, dq},
            {&E->acc, (size_t)(d > k ? d : k)}};
  for (size_t i = 0; i < sizeof al / sizeof al[0]; i++) {
    *al[i].p = lv_calloc(al[i].len, sizeof(double));
    if (!*al[i].p) return LV_ENOMEM;
  }
  if (E->symproj) {
    size_t ns = (size_t)E->ns;
    E->sf = lv_calloc(2 * (size_t)d, sizeof(double));
    E->sxi = lv_calloc(2 * ns * (size_t)d, sizeof(double));
    E->sR = lv_calloc(ns * ns + 2 * ns, sizeof(double));
    E->scol = lv_calloc(ns, sizeof(int));
    E->sc0 = lv_calloc((size_t)d, sizeof(double));
    E->sJc = lv_calloc((size_t)d * (size_t)n, sizeof(double));
    if (!E->sf || !E->sxi || !E->sR || !E->scol || !E->sc0 || !E->sJc) return LV_ENOMEM;
    lv_spm_init(&E->sJ, d, n);
  }
  lv_spm *prods[] = {&E->sMiHb, &E->sMiGzT, &E->sP11, &E->sP13, &E->sP31, &E->sP33};
  for (size_t i = 0; i < sizeof prods / sizeof prods[0]; i++) lv_spm_share_acc(prods[i], E->acc, d > k ? d : k);
  return 0;
}

static int em_ggl_create(lv_stepper *st) { return em_create(st, EM_GGL); }
static int em_g_create(lv_stepper *st) { return em_create(st, EM_G); }

static int em_init(lv_stepper *st) {
  /* p^0 = M v^0 is set by the integrator; the multipliers are Newton
   * guesses only and start at zero. */
  (void)st;
  return 0;
}

/* Newton start: Delta = 0 (simple), h v^n (advanced) or the Taylor
 * polynomial h v^n + h^2/2 v'^n with the acceleration of the state,
 * v'^n = M^-1 (-dV(q^n) - G(q^n)^T lambda^n) (taylor); multipliers from the
 * previous step, rescaled to this h (after a halving h changes).  The
 * Taylor start is O(h^3) from the solution where h v^n is O(h^2): on the
 * chain at N = 1e4 the velocity rows of the top links were left at 1e-14
 * after three corrections from h v^n, twice their tolerance, and a fourth
 * was needed from t = 0.27 on (3.50 iterations per step against 3.00 at
 * N = 1e3); from the Taylor start 2.98 and 2.96. */
static int em_guess(em *E, int guess) {
  const lv_state *s = E->s;
  int d = E->d, k = E->k;
  double h = E->h, *dl = E->x, *a = E->x + d, *b = E->x + d + k;
  for (int i = 0; i < d; i++) dl[i] = guess != EM_GUESS_SIMPLE ? h * E->v0[i] : 0.0;
  if (guess == EM_GUESS_TAYLOR) {
    double *f = E->w, *acc = E->tmp;
    LV_CHECK(lv_model_grad_potential(E->m, s->q, f));
    if (k > 0) LV_CHECK(lv_model_GT_apply_add(E->m, s->q, s->lambda, f));
    lv_mass_inv_mul(&E->mass, f, acc);
    for (int i = 0; i < d; i++) dl[i] -= 0.5 * h * h * acc[i];
  }
  for (int i = 0; i < k; i++) a[i] = 0.5 * h * h * s->lambda[i];
  if (E->kind == EM_GGL)
    for (int i = 0; i < k; i++) b[i] = h * s->gamma[i];
  E->cached = 0;
  E->r_last = NULL;
  return 0;
}

static int em_step(lv_stepper *st, double h, lv_newton_stats *ns) {
  em *E = st->priv;
  const lv_model *m = E->m;
  lv_state *s = st->state;
  int d = E->d, k = E->k, n = E->n;
  E->h = h;
  /* p is the state; v = M^-1 p is re-derived every step so that rounding
   * cannot make the two drift apart over 10^7 steps. */
  lv_mass_inv_mul(&E->mass, s->p, E->v0);
  LV_CHECK(lv_dg_begin(E->dg, s->q));
  if (k > 0 && !lv_dgrad_constraints_quadratic(E->dg)) {
    LV_CHECK(lv_model_constraints(m, s->q, E->gx));
    LV_CHECK(lv_model_G_apply(m, s->q, E->v0, E->gvx));
  }
  double *a = E->x + d, *b = E->x + d + k;
  st->cnorm_known = 0;
  E->r_last = NULL;
  LV_CHECK(em_guess(E, E->guess));
  lv_newton_problem pb = {em_residual, em_jacobian, em_update, NULL, E, n};
  *lv_newton_opts(E->nw) = st->newton;
  int rc = lv_newton_solve(E->nw, &pb, 1, ns);
  /* Restarts after a failed solve: from the Taylor start always once from
   * q^n + h v^n (at steps near the stability limit the h^2 term can throw
   * the start off: four-particle, h = 0.675, failed at t = 6.08 from it
   * alone), and with retry=on once more from the other of simple and
   * advanced.  At large steps the two starts fail at different steps
   * (four-particle, h = 0.675: each alone fails before t = 80, alternating
   * reaches T = 1000 without halving). */
  int tries[2], ntries = 0;
  if (E->guess == EM_GUESS_TAYLOR) tries[ntries++] = EM_GUESS_ADVANCED;
  if (E->retry) tries[ntries++] = E->guess == EM_GUESS_SIMPLE ? EM_GUESS_ADVANCED : EM_GUESS_SIMPLE;
  for (int t = 0; t < ntries && lv_newton_failed(rc); t++) {
    lv_newton_stats ns2;
    memset(&ns2, 0, sizeof ns2);
    LV_CHECK(em_guess(E, tries[t]));
    rc = lv_newton_solve(E->nw, &pb, 0, &ns2);
    lv_newton_stats_add_restart(ns, &ns2);
  }
  if (rc) return rc;

  /* Polish with the last factorisation (see the file comment).  With an
   * exact Newton matrix one correction reaches round-off; for
   * non-quadratic constraints (or Gonzalez' form of V) the matrix is only
   * approximate, the contraction linear, and up to three more are applied
   * while they still gain a factor 4 (bead on a quartic surface: without
   * them the momentum balance is left at 1e-14 and the energy drifts
   * 4e-15 per step). */
  if (ns->iterations > 0) {
    int exact = lv_dgrad_constraints_quadratic(E->dg) && lv_dgrad_potential_kind(E->dg) != LV_DGRAD_GONZALEZ &&
                !E->symproj;
    /* The max-norm at this level is dominated by the rounding of g(q1)
     * (q1 can only move in ulps), so "not worse than converged" (up to the
     * tolerance) is the test for keeping a correction, not r1 <= r0:
     * rejecting on noise would leave the velocity constraint 100x above
     * round-off (measured on four-particle). */
    lv_newton_polish_policy pol = {exact ? 1 : 4, LV_POLISH_CHECKED, 0.25, E->x, NULL, st->newton.res_tol, 0, 0, 1};
    LV_CHECK(lv_newton_polish_with(E->nw, &pb, &pol, ns));
    if (pol.rolled_back) E->cached = 0, E->r_last = NULL;
  }
  LV_CHECK(em_eval(E));
  /* The divergence guard's max|g|: rows d..d+k of the last residual are
   * g(q1) itself (the same callback at the q1 committed below), when that
   * residual was evaluated at the final iterate (no update or roll-back
   * since) -- lv_diag_eval would compute the same value again. */
  if (E->r_last && k > 0 && !lv_model_has_driving(m)) {
    st->cnorm[0] = lv_vnorm_inf(k, E->r_last + d);
    st->cnorm_known = 1;
  }

  /* Commit: p1 = 2 M u / h - p, v1 = M^-1 p1. */
  lv_mass_mul(&E->mass, E->u, E->w);
  for (int i = 0; i < d; i++) s->p[i] = 2.0 * E->w[i] / h - s->p[i];
  memcpy(s->q, E->y, (size_t)d * sizeof(double));
  lv_mass_inv_mul(&E->mass, s->p, s->v);
  for (int i = 0; i < k; i++) s->lambda[i] = 2.0 * a[i] / (h * h);
  if (E->kind == EM_GGL)
    for (int i = 0; i < k; i++) s->gamma[i] = b[i] / h;
  return 0;
}

const lv_scheme_type lv_scheme_em = {
    "em",
    "GGL energy-momentum scheme EM (Kinon, Betsch & Schneider 2023, eq. (84)): discrete gradients, primary and "
    "secondary "
    "constraints; order 2 in q and p, 1 in lambda",
    "not symplectic; momentum maps of symmetries of V under which g is invariant or linear (exact; with "
    "momentum=projected of every declared symmetry); energy exact (eq. (89)); "
    "g(q) = 0 and G(q) M^-1 p = 0 at every node",
    2,
    LV_SCHEME_HAS_P | LV_SCHEME_HAS_GAMMA | LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_CONSERVATIVE,
    em_options,
    em_ggl_create,
    em_init,
    em_step,
    em_destroy,
    NULL,
    NULL,
    NULL,
    NULL, /* history: none besides the state (checkpoints, issue 17) */
};

const lv_scheme_type lv_scheme_em_g = {
    "em-g",
    "Gonzalez (1999) energy-momentum scheme EM-G: discrete gradients, primary constraints only; "
    "order 2 in q and p, 1 in lambda",
    "not symplectic; momentum maps of symmetries of V under which g is invariant or linear (exact; with "
    "momentum=projected of every declared symmetry); energy exact; g(q) = 0 at every "
    "node; velocity constraint G(q) M^-1 p = 0 not enforced (violated at O(h^2))",
    2,
    LV_SCHEME_HAS_P | LV_SCHEME_CONSTANT_MASS | LV_SCHEME_LINEAR_SPACE | LV_SCHEME_CONSERVATIVE,
    em_g_options,
    em_g_create,
    em_init,
    em_step,
    em_destroy,
    NULL,
    NULL,
    NULL,
    NULL, /* history: none besides the state (checkpoints, issue 17) */
};
