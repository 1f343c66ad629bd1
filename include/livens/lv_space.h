/** @file lv_space.h
 *  Configuration spaces: products of R^k and matrix Lie groups.
 *
 *  A configuration q is stored as the concatenation of the factors' own
 *  representations (nq doubles in all); a velocity / increment v is a vector
 *  of the Lie algebra in left-trivialised coordinates (nv doubles).
 *  Representations (row-major where a matrix is stored):
 *  - R^k:        k numbers, nq = nv = k;
 *  - SO(3):      rotation matrix R, 9 numbers row-major, nv = 3 (body angular velocity);
 *  - S^3:        unit quaternion (w, x, y, z), 4 numbers, nv = 3 (body angular velocity);
 *  - R^3 x SO(3): (x, R), 12 numbers, nv = 6 = (translation velocity, body angular velocity);
 *  - SE(3):      (x, R), 12 numbers, nv = 6 = (body translational velocity U, body angular velocity);
 *                composition (x1,R1)(x2,R2) = (x1 + R1 x2, R1 R2);
 *  - UDQ:        unit dual quaternion (r, d), 8 numbers: r the unit quaternion
 *                of R (w, x, y, z), d = x r / 2 (x a pure quaternion), so
 *                r . d = 0; nv = 6 = (U, Omega) exactly as SE(3), of which it
 *                is the double cover (same tangent operator).
 *
 *  The fundamental operation of every scheme is the retraction
 *  q_new = q o exp(h v~) (lv_space_compose_exp); on R^k it is q + h v, so the
 *  Lie group schemes reduce to their linear-space forms there.
 */
#ifndef LIVENS_LV_SPACE_H
#define LIVENS_LV_SPACE_H

#include "lv_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kind of a factor of a configuration space (see the file comment for the
 *  representation of each). */
typedef enum {
  LV_FACTOR_RN = 0,   /**< R^k */
  LV_FACTOR_SO3 = 1,  /**< rotation matrices */
  LV_FACTOR_S3 = 2,   /**< unit quaternions */
  LV_FACTOR_R3SO3 = 3,/**< direct product R^3 x SO(3) */
  LV_FACTOR_SE3 = 4,  /**< special Euclidean group */
  LV_FACTOR_UDQ = 5   /**< unit dual quaternions (double cover of SE(3)) */
} lv_factor_kind;

/** Opaque configuration space: a product of factors (lv_factor_kind).
 *  Created by lv_space_new() or lv_space_new_rn(), freed by lv_space_free()
 *  or by the model that owns it. */
typedef struct lv_space lv_space;

/** Empty space; add factors with lv_space_add.  Status: LV_ENOMEM. */
LV_API int lv_space_new(lv_space **out);
/** Convenience: the linear space R^n. */
LV_API int lv_space_new_rn(lv_space **out, int n);
/** Free the space (NULL: no-op).  Do not free a space passed to
 *  lv_model_new(): the model owns it. */
LV_API void lv_space_free(lv_space *sp);

/** Append a factor.  @p k is the dimension for LV_FACTOR_RN (k = 0 adds
 *  nothing) and ignored otherwise.  Adjacent R^k factors are merged.
 *  Status: LV_EINPUT (k < 0, unknown kind), LV_ENOMEM. */
LV_API int lv_space_add(lv_space *sp, lv_factor_kind kind, int k);

LV_API int lv_space_nq(const lv_space *sp);        /**< doubles in a configuration */
LV_API int lv_space_nv(const lv_space *sp);        /**< dimension of the tangent space */
/** Number of factors (after merging adjacent R^k); 0 for a NULL space. */
LV_API int lv_space_nfactors(const lv_space *sp);
/** Kind, representation offset/size and tangent offset/size of factor i. */
LV_API int lv_space_factor(const lv_space *sp, int i, lv_factor_kind *kind, int *q_off,
                           int *nq, int *v_off, int *nv);
/** True if every factor is R^k (the space is linear). */
LV_API int lv_space_is_linear(const lv_space *sp);
/** Short description, e.g. "R^3", "R^3xSO(3)", "(R^3xSO(3))^10". */
LV_API const char *lv_space_name(const lv_space *sp);

/** q_out = q o exp(h v~).  q_out may alias q. */
LV_API int lv_space_compose_exp(const lv_space *sp, const double *q, double h,
                                const double *v, double *q_out);
/** v = log(q0^{-1} q1) (so that q1 = q0 o exp(v~)).  Status: LV_EINPUT if a
 *  rotation angle is within 8 DBL_EPSILON of pi (log not unique); a valid v
 *  with |psi| = pi is written anyway. */
LV_API int lv_space_log(const lv_space *sp, const double *q0, const double *q1,
                        double *v);
/** The identity element. */
LV_API int lv_space_identity(const lv_space *sp, double *q);
/** Tangent operator T(v) (= dexp_{-v}), nv x nv block diagonal, added into
 *  @p T through the sink (scaled by the sink's scale).  The positions
 *  written do not depend on v (whole blocks, zeros included; SE(3) without
 *  its zero lower-left block), so a fixed sparsity pattern holds. */
struct lv_sink;
/** Add the tangent operator T(v) (nv x nv, block diagonal, positions
 *  independent of v) into @p T.  Status: LV_EINPUT (NULL argument), or
 *  the sink's. */
LV_API int lv_space_tangent(const lv_space *sp, const double *v, struct lv_sink *T);
/** y = T(v) x and y = T(v)^{-1} x, without forming the matrix (y may alias x). */
LV_API int lv_space_tangent_apply(const lv_space *sp, const double *v,
                                  const double *x, double *y);
/** y = T(v)^{-1} x (nv), without forming the matrix; y may alias x.
 *  Status: LV_EINPUT (NULL argument). */
LV_API int lv_space_tangent_inv_apply(const lv_space *sp, const double *v,
                                      const double *x, double *y);
/** y = T(v)^{-1} x as lv_space_tangent_inv_apply (to round-off), and the
 *  derivative D = d(T(w)^{-1} x)/dw at w = v (nv x nv, block diagonal),
 *  added into @p D through the sink.  Positions written: the 3x3 rotational
 *  block of each SO(3), S^3 and R^3 x SO(3) factor, and for SE(3) and UDQ the
 *  blocks lv_space_tangent writes; nothing for R^k and the translation of
 *  R^3 x SO(3), where D = 0.  The positions do not depend on v.  SO(3)
 *  blocks are analytic (closed form, series for |psi| < 1); the
 *  translational rows of SE(3) are central differences (relative error
 *  ~1e-10).  y may alias x.  Status: LV_EINPUT, or the sink's. */
LV_API int lv_space_tangent_inv_deriv(const lv_space *sp, const double *v,
                                      const double *x, double *y, struct lv_sink *D);
/** y = ad_v x = [v~, x~] in vector form. */
LV_API int lv_space_ad(const lv_space *sp, const double *v, const double *x,
                       double *y);
/** Re-orthonormalise rotation parts (nearest rotation, polar factor) and
 *  renormalise quaternions (round-off drift over long runs).  LV_EINPUT for
 *  a singular, reflecting or non-finite rotation or a zero quaternion (the
 *  other factors are still normalised). */
LV_API int lv_space_normalize(const lv_space *sp, double *q);

/** The rigid-body pose of factor @p i of configuration @p q: position x
 *  and rotation matrix R (row-major), whatever the factor's representation
 *  (x = 0 for a pure rotation).  Models that read poses this way work in
 *  every formulation of a body.  Status: LV_EINPUT (R^k, bad index). */
LV_API int lv_space_pose(const lv_space *sp, int i, const double *q, double x[3], double R[9]);
/** Write the pose (x, R) into factor @p i of @p q (x is ignored by a pure
 *  rotation; R must be a rotation).  Status: LV_EINPUT (R^k, bad index). */
LV_API int lv_space_set_pose(const lv_space *sp, int i, const double x[3], const double R[9], double *q);

/* Per-factor primitives (3-vectors, 3x3 row-major matrices). */
/** a~ : the skew matrix with a~ b = a x b. */
LV_API void lv_hat3(const double a[3], double A[9]);
/** Rodrigues: R = exp(psi~). */
LV_API void lv_so3_exp(const double psi[3], double R[9]);
/** psi = log(R). */
LV_API void lv_so3_log(const double R[9], double psi[3]);
/** T_SO(3)(psi), 3x3 row-major. */
LV_API void lv_so3_tangent(const double psi[3], double T[9]);
/** T_SO(3)(psi)^{-1}, 3x3 row-major. */
LV_API void lv_so3_tangent_inv(const double psi[3], double Ti[9]);
/** y = T_SO(3)(psi)^{-1} x and, if @p D is not NULL,
 *  D = d(T_SO(3)(psi)^{-1} x)/dpsi, 3x3 row-major (analytic; series in
 *  |psi|^2 below |psi| = 1), and, if @p Ti is not NULL, the matrix
 *  T_SO(3)(psi)^{-1}.  y may alias x. */
LV_API void lv_so3_tangent_inv_deriv(const double psi[3], const double x[3], double y[3], double D[9],
                                     double Ti[9]);

#ifdef __cplusplus
}
#endif
#endif
