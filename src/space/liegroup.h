/* Per-factor Lie group primitives shared by space.c and liegroup.c.  Not
 * installed.  3-vectors, 3x3 row-major matrices; 6-vectors of SE(3) are
 * ordered (U, psi) (translation first). */
#ifndef LIVENS_SPACE_LIEGROUP_H
#define LIVENS_SPACE_LIEGROUP_H

/* 3x3 / 3-vector helpers. */
void lv_lg_mat3_mul(const double A[9], const double B[9], double C[9]);  /* C = A B   */
void lv_lg_mat3_tmul(const double A[9], const double B[9], double C[9]); /* C = A^T B */
void lv_lg_mat3_vec(const double A[9], const double x[3], double y[3]);  /* y = A x   */
void lv_lg_mat3_tvec(const double A[9], const double x[3], double y[3]); /* y = A^T x */
void lv_lg_cross(const double a[3], const double b[3], double c[3]);     /* c = a x b */

/* SO(3).  lv_lg_so3_log returns 1 when the angle is within round-off of pi
 * (the sign of the axis is then not determined by R), 0 otherwise. */
int lv_lg_so3_log(const double R[9], double psi[3]);
void lv_lg_so3_tangent_inv(const double psi[3], double Ti[9]);
/* y = T(psi) x, y = T(psi)^T x, y = T(psi)^{-1} x, y = T(psi)^{-T} x.
 * y may alias x. */
void lv_lg_so3_tangent_apply(const double psi[3], const double x[3], double y[3]);
void lv_lg_so3_tangent_tr_apply(const double psi[3], const double x[3], double y[3]);
void lv_lg_so3_tangent_inv_apply(const double psi[3], const double x[3], double y[3]);
void lv_lg_so3_tangent_inv_tr_apply(const double psi[3], const double x[3], double y[3]);
/* y = T(psi)^{-1} x and D = d(T(psi)^{-1} x)/dpsi (row-major); Ti, if not
 * NULL, = T(psi)^{-1}. */
void lv_lg_so3_tangent_inv_deriv(const double psi[3], const double x[3], double y[3], double D[9], double Ti[9]);
/* Nearest rotation (polar factor).  LV_EINPUT if R is singular, a
 * reflection or not finite. */
int lv_lg_so3_normalize(double R[9]);

/* S^3, unit quaternions (w, x, y, z), Hamilton product. */
void lv_lg_quat_mul(const double p[4], const double q[4], double r[4]);
/* Quaternion of the rotation exp(omega~): (cos(|omega|/2), sin(|omega|/2) omega/|omega|). */
void lv_lg_quat_exp(const double omega[3], double q[4]);
/* omega with exp(omega~) = rotation of q, taking the sign of q with w >= 0
 * (shortest rotation, |omega| <= pi).  Returns 1 at a half-turn (w ~ 0). */
int lv_lg_quat_log(const double q[4], double omega[3]);
void lv_lg_quat_to_rot(const double q[4], double R[9]);
/* The unit quaternion of a rotation matrix, w >= 0 (Shepperd's method). */
void lv_lg_quat_from_rot(const double R[9], double q[4]);
int lv_lg_quat_normalize(double q[4]);

/* SE(3): (x, R) with (x1,R1)(x2,R2) = (x1 + R1 x2, R1 R2), w = (U, psi). */
void lv_lg_se3_exp(const double w[6], double x[3], double R[9]);
/* w = log((x, R)); returns 1 at a rotation angle of pi. */
int lv_lg_se3_log(const double x[3], const double R[9], double w[6]);
/* T_SE3(w), 6x6 row-major. */
void lv_lg_se3_tangent(const double w[6], double T[36]);
/* y = T_SE3(w) x, y = T_SE3(w)^{-1} x, y = ad_w x.  y may alias x. */
void lv_lg_se3_tangent_apply(const double w[6], const double x[6], double y[6]);
void lv_lg_se3_tangent_inv_apply(const double w[6], const double x[6], double y[6]);
void lv_lg_se3_ad_apply(const double w[6], const double x[6], double y[6]);

/* Unit dual quaternions q = (r, d), r a unit quaternion, d its dual part
 * with r . d = 0: the pose (x, R(r)) with d = x r / 2 (x a pure
 * quaternion), product (r1, d1)(r2, d2) = (r1 r2, r1 d2 + d1 r2), the
 * double cover of SE(3).  Tangent w = (U, psi) as for SE(3) (the same
 * algebra and coordinates, so T, T^-1 and ad are SE(3)'s). */
void lv_lg_udq_mul(const double a[8], const double b[8], double c[8]); /* c may alias a, b */
/* exp(w~): r = exp(psi~) as a quaternion, x = T(psi)^T U */
void lv_lg_udq_exp(const double w[6], double q[8]);
/* w = log(q) of the sign of q with r_w >= 0; returns 1 at a rotation angle of pi */
int lv_lg_udq_log(const double q[8], double w[6]);
/* (x, R) of q and back */
void lv_lg_udq_pose(const double q[8], double x[3], double R[9]);
void lv_lg_udq_from_pose(const double x[3], const double R[9], double q[8]);
/* r <- r/|r|, d <- d/|r| - (r . d) r: the nearest unit dual quaternion
 * to first order.  LV_EINPUT for a zero or non-finite q. */
int lv_lg_udq_normalize(double q[8]);

#endif
