/* The saddle-point operations of a constrained model (issue 19 item 2): the
 * matrix [M(q) G(q)^T; G(q) 0] ((nv + nc) square) factorised at a
 * configuration, and what the integrator and the schemes do with it,
 *   consistent accelerations  [M G^T; G 0] [v'; lambda] = [f - dV; -Z(q; v) v],
 *   velocity projection       [M G^T; G 0] [v*; mu] = [M v; 0],
 *   velocity shift            [M G^T; G 0] [dv; .] = [0; G w],
 *   position projection       q <- q o exp(delta), the M-closest point on g = 0.
 * One object per user (an integrator's initial projection, a generalized-
 * alpha, BLieDF or RATTLie stepper); all storage is allocated by lv_saddle_new, so
 * the operations allocate nothing -- except the position projection's
 * Newton solver, made by its first use, G's recording (lv_saddle_factor),
 * grown by the first factorisations, and a factorisation released by
 * lv_saddle_release, made again by the next lv_saddle_factor.  Uses only the model's public interface
 * and lv_model_saddle / lv_model_consistent_accelerations.  Not installed. */
#ifndef LIVENS_SADDLE_H
#define LIVENS_SADDLE_H

#include "lv_internal.h"

typedef struct lv_saddle lv_saddle;

/* A saddle-point solver for model m with the linear solver of the given
 * kind (LV_LINSOL_DENSE, _UMFPACK, ...; threshold as lv_linsol_new).
 * LV_ENOMEM, or the linear solver's status. */
int lv_saddle_new(lv_saddle **out, const lv_model *m, lv_linsol_kind kind, int threshold);
void lv_saddle_free(lv_saddle *S);

/* Free the factorisation and the solvers' storage (the saddle matrix's
 * pattern, factors and assembly: about 1 kB per particle of a chain) until
 * the next lv_saddle_factor (or a function that factorises) makes them
 * again; for a caller that needs the saddle only at its start.  Solves
 * without a factorisation since then return LV_EINPUT. */
void lv_saddle_release(lv_saddle *S);

/* Factorisations this object has made since lv_saddle_new: of the saddle
 * matrix (every function that factorises) and of the position
 * projection's Newton matrix. */
long lv_saddle_factorizations(const lv_saddle *S);

/* Assemble and factorise [M(q) G(q)^T; G(q) 0]: 0, LV_ESINGULAR (singular
 * mass or dependent constraints) or an evaluation's status. */
int lv_saddle_factor(lv_saddle *S, const double *q);

/* Factorise at q, then v' (nv) and lambda (nc) consistent with (t, q, v);
 * vd or lam may be NULL (not wanted). */
int lv_saddle_accelerations(lv_saddle *S, double t, const double *q, const double *v, double *vd,
                            double *lam);

/* The same with the factorisation in place (lv_saddle_factor at the same
 * q), for a scheme that has just solved with it (RATTLie's stage 2). */
int lv_saddle_accelerations_factored(lv_saddle *S, double t, const double *q, const double *v, double *vd,
                                     double *lam);

/* Factorise at q, then replace v by its M-orthogonal projection onto
 * ker G(q).  Nothing (no factorisation) when the model has no constraints. */
int lv_saddle_project_v(lv_saddle *S, const double *q, double *v);
/* The same onto G(q) v = c'(t) for a model with driving constraints
 * (lv_model_set_driving); lv_saddle_project_v is this at t = 0, right only
 * for a model without them (the schemes that refuse driven models). */
int lv_saddle_project_v_at(lv_saddle *S, double t, const double *q, double *v);

/* dv (nv) from [M G^T; G 0] [dv; .] = [0; G(q) w] with the factorisation in
 * place (lv_saddle_factor or lv_saddle_accelerations at the same q): the
 * M-smallest velocity change with G dv = G w (the starting-value shifts
 * (56) of generalized-alpha and BLieDF). */
int lv_saddle_shift(lv_saddle *S, const double *q, const double *w, double *dv);

/* b (nv + nc) <- [M G^T; G 0]^-1 b with the factorisation in place. */
int lv_saddle_solve(lv_saddle *S, double *b);

/* Project q onto g(q) = 0: q <- q0 o exp(delta) with delta stationary for
 * |delta|_M^2 / 2 (M at q0) under g(q0 o exp(delta)) = 0, by Newton on
 * [M(q0) delta + G(q)^T mu; g(q)] with the matrix [M(q0) G(q)^T; G(q) 0],
 * to 1e-14 (1 + |q0|) (a residual at round-off below 1e-12 (1 + |q0|) is
 * accepted); to_roundoff: then corrections with the last factorisation
 * while |g| at least halves (lv_newton_polish), down to the round-off
 * floor.  On failure q is unchanged and the status is Newton's
 * (LV_ENEWTON, LV_EDIVERGE, LV_ESINGULAR, ...).  Nothing without
 * constraints. */
int lv_saddle_project_q(lv_saddle *S, double *q, int to_roundoff);
/* The same onto g(q) = c(t) (driving constraints); lv_saddle_project_q is
 * this at t = 0, for models without them. */
int lv_saddle_project_q_at(lv_saddle *S, double t, double *q, int to_roundoff);

#endif
