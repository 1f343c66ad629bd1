/** @file lv_dgrad.h
 *  Discrete gradients: the building block of the energy-momentum schemes
 *  `em` and `em-g` (Kinon, Betsch & Schneider 2023, §5; Gonzalez 1996), exposed for users who
 *  write their own conserving schemes.
 *
 *  A discrete gradient D^G f(x, y) of a scalar f is a vector with
 *    directionality   f(y) - f(x) = D^G f(x, y) . (y - x)        (exactly),
 *    consistency      D^G f(x, y) = Df((x+y)/2) + O(|y - x|^2).
 *  The energy of a scheme written with it is conserved to round-off.
 *  Two constructions are provided:
 *
 *  - Gonzalez' midpoint discrete gradient, from values and the gradient at
 *    the midpoint z = (x+y)/2:
 *      D^G f = Df(z) + [f(y) - f(x) - Df(z).(y-x)] / |y-x|^2 (y-x).
 *    The bracket is O(|y-x|^3) and vanishes identically for f at most
 *    quadratic, so for such f the midpoint gradient Df(z) is used as is.
 *    When |y-x| -> 0 the bracket drowns in round-off and the quotient would
 *    amplify that noise without bound; the correction is therefore applied
 *    only when the bracket exceeds the rounding level of its own terms,
 *    which keeps directionality exact to round-off for every |y-x|.
 *
 *  - The invariant-based (G-equivariant) discrete gradient for potentials
 *    written through quadratic invariants, V(q) = sum_i Vt_i(pi_i(q))
 *    (lv_model_set_invariants):
 *      D^G V = sum_i c_i Dpi_i(z),   c_i ~ [Vt_i(pi_i(y)) - Vt_i(pi_i(x))] / (pi_i(y) - pi_i(x)).
 *    Because every pi_i is quadratic, pi_i(y) - pi_i(x) = Dpi_i(z).(y-x)
 *    exactly (directionality), and because every pi_i is invariant under the
 *    symmetry group, Dpi_i(z) . xi z = 0 for every generator xi, so
 *    D^G V . xi z = 0 (orthogonality: momentum maps are conserved exactly).
 *    The quotient c_i is computed without dividing by a small number: for
 *    |Delta pi| <= 1e-4 (|pi(x)| + |pi(y)|) Simpson's rule
 *    (Vt'(a) + 4 Vt'(m) + Vt'(b)) / 6 (m the mean of the invariants), exact
 *    for Vt up to cubic and otherwise off by |Delta pi|^5 |Vt^(5)| / 2880,
 *    far below round-off; above that Vt'(m) plus the rounding-guarded
 *    correction, as for Gonzalez' form.  For Vt quadratic in pi (springs
 *    1/2 k (pi - l^2)^2) both give Vt'(m) = k (m - l^2): the division-free
 *    exact form, with no flag from the model.
 *
 *  Constraints g and the secondary constraints g^v(q, p) = G(q) M^-1 p are
 *  treated per component the same way: midpoint derivatives (exact for
 *  quadratic g and the bilinear g^v they induce), Gonzalez' correction for
 *  non-quadratic components.
 *
 *  Symmetry.  Gonzalez' correction along y - x is not orthogonal to the
 *  symmetry generators, so with it momentum maps would only be conserved
 *  approximately.  For a model with symmetry generators (lv_model_set_
 *  symmetries) the correction is taken along w = P (y - x) instead, P the
 *  orthogonal projector off span{xi_k((x+y)/2)}, with the bracket divided
 *  by w . (y - x): directionality is unchanged, and for every f invariant
 *  under the group D^G f . xi_k((x+y)/2) = Df(z) . xi_k(z) = 0, i.e. the
 *  orthogonality conditions (85) hold for Gonzalez' forms of V, g and g^v
 *  too.  (For a pure group motion of a point, w = 0 and so is the
 *  bracket; the rounding guard then keeps the midpoint gradient.)
 *
 *  An lv_dgrad object classifies a model once when created: potential via
 *  invariants, Gonzalez, or exactly quadratic (midpoint), and whether the
 *  constraints are quadratic, by probing pairs of points near q0.  It also
 *  checks that supplied invariants are quadratic and reproduce V.
 */
#ifndef LIVENS_LV_DGRAD_H
#define LIVENS_LV_DGRAD_H

#include "lv_export.h"

#include "lv_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the discrete gradient of the potential is formed. */
typedef enum {
  LV_DGRAD_NONE = 0,      /**< the model has no potential */
  LV_DGRAD_MIDPOINT = 1,  /**< V at most quadratic: Dv((x+y)/2) is exact */
  LV_DGRAD_GONZALEZ = 2,  /**< Gonzalez' midpoint discrete gradient */
  LV_DGRAD_INVARIANT = 3  /**< invariant-based, from lv_model_set_invariants */
} lv_dgrad_kind;

/** Gonzalez' discrete gradient of a scalar f on R^n from fx = f(x),
 *  fy = f(y) and dfz = Df((x+y)/2), corrected along y - x (no symmetry
 *  projection: there is no model here); result in @p out (may alias dfz).
 *  Directionality holds to the rounding level of the inputs for every
 *  |y - x|, including y = x.  Status: LV_EINPUT (n < 1, NULL pointers). */
LV_API int lv_dgrad_gonzalez(int n, const double *x, const double *y, double fx, double fy,
                             const double *dfz, double *out);

/** The one-dimensional discrete derivative (Greenspan quotient)
 *  c ~ [f(b) - f(a)] / (b - a) of a scalar function f of one variable, from
 *  fa = f(a), fb = f(b), dfa = f'(a), dfm = f'((a+b)/2), dfb = f'(b).
 *  c (b - a) = f(b) - f(a) holds to round-off, c = dfm for f quadratic, and
 *  no division by a small b - a happens (see the file comment). */
LV_API double lv_dgrad_quotient(double a, double b, double fa, double fb, double dfa, double dfm,
                                double dfb);

/** Opaque discrete-gradient evaluator of one model: created by
 *  lv_dgrad_new(), freed by lv_dgrad_free(). */
typedef struct lv_dgrad lv_dgrad;

/** Create the discrete-gradient machinery for @p model (not owned; must
 *  outlive the object) on a linear space.  Classifies the potential and the
 *  constraints (see the file comment).  Status: LV_ENOTIMPL (Lie group
 *  space), LV_EINPUT (invariants that are not quadratic or do not reproduce
 *  V, dV), LV_ENOMEM, evaluation errors. */
LV_API int lv_dgrad_new(lv_dgrad **out, const lv_model *model);
/** Free the object (NULL: no-op); the model is not freed. */
LV_API void lv_dgrad_free(lv_dgrad *dg);

/** How the discrete gradient of the potential is formed, as classified at
 *  creation.  @p dg must not be NULL. */
LV_API lv_dgrad_kind lv_dgrad_potential_kind(const lv_dgrad *dg);
/** Non-zero if every constraint component is (numerically) at most
 *  quadratic, so midpoint derivatives of g and g^v are exact. */
LV_API int lv_dgrad_constraints_quadratic(const lv_dgrad *dg);

/** D^G V(x, y) (nv).  Status: evaluation errors. */
LV_API int lv_dgrad_potential(lv_dgrad *dg, const double *x, const double *y, double *out);
/** D^G V(x, y) and its Jacobian with respect to y, dense nv x nv
 *  column-major (overwritten).  Exact for the midpoint and invariant forms
 *  (the derivative of the difference quotients); for Gonzalez' form it
 *  uses the model's Hessian of V and leaves out the change of the orbit
 *  projector with the midpoint (exact for models without symmetries). */
LV_API int lv_dgrad_potential_jacobian(lv_dgrad *dg, const double *x, const double *y, double *out,
                                       double *jac);
/** D^G g(x, y): m x nv, dense column-major (row k is the discrete gradient
 *  of g_k). */
LV_API int lv_dgrad_constraints(lv_dgrad *dg, const double *x, const double *y, double *out);
/** Discrete derivatives of g^v(q, p) = G(q) M^-1 p between (x, px) and
 *  (y, py): @p dq and @p dp are m x nv dense column-major with
 *    g^v(y, py) - g^v(x, px) = dq (y - x) + dp (py - px)
 *  to round-off; dp = G(z) M^-1 and dq = D_q(G(q) w)(z) (w = M^-1 (px+py)/2)
 *  plus Gonzalez' correction for non-quadratic g.  Needs a constant mass
 *  matrix (LV_ENOTIMPL otherwise). */
LV_API int lv_dgrad_velocity_constraints(lv_dgrad *dg, const double *x, const double *px,
                                         const double *y, const double *py, double *dq, double *dp);

#ifdef __cplusplus
}
#endif
#endif
