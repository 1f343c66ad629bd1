/* Formulation maps of the multibody layer: for each formulation, the
 * position of a body-fixed point and the direction of a body-fixed axis as
 * functions of the element's coordinates, with exact first and second
 * derivatives.  Joints (mbs.c) are written once on these maps.
 *
 *   ground      y = X (point or axis given in space), no coordinates.
 *   particle    q = x, y = x (points at X = 0 only), D = I.
 *   planar particle  q = (x, y), y = (x, y, 0), D = [e1 e2] (3 x 2).
 *   directors   q = (phi, d1, d2, d3), y = [phi] + X_k d_k: LINEAR in q,
 *               D = [I | X1 I | X2 I | X3 I] ([0 | ...] for an axis),
 *               second derivatives vanish.
 *   directors of a planar body (its Euler tensor E = 1/2 tr(J) I - J has
 *               E_cc = 0: a lamina normal to body axis c, such as the
 *               heavy top's disk): q = (phi, d_a, d_b), (a, b, c) cyclic,
 *               d_c = d_a x d_b, so y = [phi] + X_a d_a + X_b d_b
 *               + X_c d_a x d_b is BILINEAR: D = [I | X_a I - X_c d_b~ |
 *               X_b I + X_c d_a~], D_q(D^T l) has the blocks
 *               (a, b) = -X_c l~, (b, a) = X_c l~, and
 *               D_q(D w) = [0 | -X_c w_b~ | X_c w_a~].  Still at most
 *               quadratic, and the mass blockdiag(m, E_a, E_b) is regular.
 *   r3so3       q = (x, R), v = (u, Omega) left-trivialised:
 *               y = [x] + R X, D = [I | -R X~] ([0 | -R X~] for an axis),
 *               D_q(D^T l) = [0 0; 0 X~ (R^T l)~],
 *               D_q(D w)   = [0 | R (X~ w_Omega)~]
 *               (the heavy top's chess/curv of tests/ref_heavy_top.c).
 *   se3         q = (x, R) in SE(3), v = (U, Omega), x' = R U (body frame):
 *               D = [R | -R X~] ([0 | -R A~] for an axis),
 *               D_q(D^T l) = [0 (R^T l)~; 0 X~ (R^T l)~] (the (R^T l)~ block
 *               for points only), D_q(D w) = [0 | -R c~],
 *               c = [w_U] - X x w_Omega.
 *   euler-parameters, cardan  q = (x, p) in R^7, (x, phi) in R^6 with
 *               v = q': form_vec.c. */
#include "mbs/mbs_impl.h"


void mbs_elem_dims(mbs_formulation f, const mbs_elem *e, int *nq, int *nv) {
  mbs_kind k = e->kind;
  if (k == MBS_GROUND) {
    *nq = *nv = 0;
  } else if (k == MBS_PARTICLE) {
    *nq = *nv = e->pdim;
  } else if (f == MBS_DIRECTORS) {
    *nq = *nv = e->rb->planar ? 9 : 12;
  } else if (MBS_VEC(f)) {
    mbs_vec_dims(f, nq, nv);
  } else {
    *nq = 12;
    *nv = 6;
  }
}

void mbs_map(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t, double y[3],
             double *D) {
  const double *X = t->X;
  int pt = !t->axis, nv = e->nv;
  switch (e->kind) {
    case MBS_GROUND:
      memcpy(y, X, 3 * sizeof(double));
      return;
    case MBS_PARTICLE: /* joints only reach points at X = 0 */
      for (int i = 0; i < 3; i++) y[i] = i < nv ? qb[i] : 0.0;
      if (!D) return;
      memset(D, 0, (size_t)(3 * nv) * sizeof(double));
      for (int i = 0; i < nv; i++) D[i * nv + i] = 1.0;
      return;
    case MBS_BODY:
      break;
  }
  if (MBS_VEC(f)) {
    double Dl[3 * MBS_NV_MAX];
    mbs_vec_map(f, e, qb, t, y, D ? D : Dl);
    return;
  }
  /* the Lie group forms' rigid body (nv = 6) writes all of D below */
  if (D && !(nv == 6 && f != MBS_DIRECTORS)) memset(D, 0, (size_t)(3 * nv) * sizeof(double));
  if (f == MBS_DIRECTORS) {
    int nd = e->rb->planar ? 2 : 3;
    for (int i = 0; i < 3; i++) {
      y[i] = pt ? qb[i] : 0.0;
      if (pt && D) D[i * nv + i] = 1.0;
      for (int k = 0; k < nd; k++) {
        y[i] += X[e->rb->ax[k]] * qb[3 + 3 * k + i];
        if (D) D[i * nv + 3 + 3 * k + i] = X[e->rb->ax[k]];
      }
    }
    double xc = e->rb->planar ? X[e->rb->ax[2]] : 0.0;
    if (xc != 0.0) {
      const double *da = qb + 3, *db = qb + 6;
      double c[3], A[9], B[9];
      mbs_cross3(da, db, c);
      for (int i = 0; i < 3; i++) y[i] += xc * c[i];
      if (!D) return;
      lv_hat3(db, A);
      lv_hat3(da, B);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          D[i * nv + 3 + j] -= xc * A[3 * i + j];
          D[i * nv + 6 + j] += xc * B[3 * i + j];
        }
    }
  } else {
    /* R and X in locals: the stores into y and D may alias them as far
     * as the compiler knows (the same sums in the same order) */
    const double *R = qb + 3, X0 = X[0], X1 = X[1], X2 = X[2];
    double R0 = R[0], R1 = R[1], R2 = R[2], R3 = R[3], R4 = R[4], R5 = R[5], R6 = R[6], R7 = R[7], R8 = R[8];
    double y0 = (pt ? qb[0] : 0.0) + R0 * X0 + R1 * X1 + R2 * X2;
    double y1 = (pt ? qb[1] : 0.0) + R3 * X0 + R4 * X1 + R5 * X2;
    double y2 = (pt ? qb[2] : 0.0) + R6 * X0 + R7 * X1 + R8 * X2;
    y[0] = y0, y[1] = y1, y[2] = y2;
    if (!D) return;
    if (nv == 6) { /* the translational block, zeros included (no memset above) */
      if (pt && f == MBS_SE3) {
        D[0] = R0, D[1] = R1, D[2] = R2, D[6] = R3, D[7] = R4, D[8] = R5, D[12] = R6, D[13] = R7, D[14] = R8;
      } else {
        double one = pt && f == MBS_R3SO3 ? 1.0 : 0.0;
        D[0] = one, D[1] = 0.0, D[2] = 0.0, D[6] = 0.0, D[7] = one, D[8] = 0.0, D[12] = 0.0, D[13] = 0.0, D[14] = one;
      }
    } else
      for (int i = 0; i < 3; i++) {
        if (pt && f == MBS_R3SO3) D[i * nv + i] = 1.0;
        if (pt && f == MBS_SE3)
          for (int j = 0; j < 3; j++) D[i * nv + j] = R[3 * i + j]; /* x' = R U */
      }
    /* -R X~ : column j is -R (X x e_j) = R (e_j x X), e_1 x X = (0, -X3, X2), ... */
    double *D0 = D + 3, *D1 = D + nv + 3, *D2 = D + 2 * nv + 3;
    D0[0] = R2 * X1 - R1 * X2, D0[1] = R0 * X2 - R2 * X0, D0[2] = R1 * X0 - R0 * X1;
    D1[0] = R5 * X1 - R4 * X2, D1[1] = R3 * X2 - R5 * X0, D1[2] = R4 * X0 - R3 * X1;
    D2[0] = R8 * X1 - R7 * X2, D2[1] = R6 * X2 - R8 * X0, D2[2] = R7 * X0 - R6 * X1;
  }
}


void mbs_map_hess(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                  const double l[3], double s, double *Hb, int ld) {
  if (e->kind != MBS_BODY) return;
  if (MBS_VEC(f)) {
    mbs_vec_map_hess(f, e, qb, t, l, s, Hb, ld);
    return;
  }
  if (f == MBS_DIRECTORS) { /* linear maps, but for the planar body's d_a x d_b */
    double xc = e->rb->planar ? t->X[e->rb->ax[2]] : 0.0, L[9];
    if (xc == 0.0) return;
    lv_hat3(l, L);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        Hb[(3 + i) * ld + 6 + j] -= s * xc * L[3 * i + j];
        Hb[(6 + i) * ld + 3 + j] += s * xc * L[3 * i + j];
      }
    return;
  }
  const double *R = qb + 3, *X = t->X;
  double r[3], A[9], B[9];
  for (int i = 0; i < 3; i++) r[i] = R[i] * l[0] + R[3 + i] * l[1] + R[6 + i] * l[2];
  lv_hat3(X, A);
  lv_hat3(r, B);
  if (f == MBS_SE3 && !t->axis) /* the U rows R^T l turn with R */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Hb[i * ld + 3 + j] += s * B[3 * i + j];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      Hb[(3 + i) * ld + 3 + j] += s * (A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j]);
}

/* mbs_map_hess's rotation block (X~ r~)_ij = sum_k X~_ik r~_kj with the
 * terms in which either hat matrix gives its zero entry left out: those are
 * +-0 (l finite), and adding +-0 changes a partial sum only when that sum
 * is zero, so each entry's sum is mbs_map_hess's or, where that is a zero,
 * a zero -- and s times a zero added to an entry that is not -0 leaves it
 * as it is.  The same block, bit for bit, with 12 products instead of 27
 * and no hat matrices; the other formulations and se3's U rows as there. */
void mbs_map_hess_nz(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                     const double l[3], double s, double *Hb, int ld) {
  if (e->kind != MBS_BODY || MBS_VEC(f) || f == MBS_DIRECTORS || (f == MBS_SE3 && !t->axis)) {
    mbs_map_hess(f, e, qb, t, l, s, Hb, ld);
    return;
  }
  const double *R = qb + 3, X0 = t->X[0], X1 = t->X[1], X2 = t->X[2];
  double r[3];
  for (int i = 0; i < 3; i++) r[i] = R[i] * l[0] + R[3 + i] * l[1] + R[6 + i] * l[2];
  const double r0 = r[0], r1 = r[1], r2 = r[2];
  /* X~ = [0 -X2 X1; X2 0 -X0; -X1 X0 0], r~ likewise; the terms in k order */
  double *H0 = Hb + 3 * ld + 3, *H1 = H0 + ld, *H2 = H1 + ld;
  H0[0] += s * ((-X2) * r2 + X1 * (-r1));
  H0[1] += s * (X1 * r0);
  H0[2] += s * ((-X2) * (-r0));
  H1[0] += s * ((-X0) * (-r1));
  H1[1] += s * (X2 * (-r2) + (-X0) * r0);
  H1[2] += s * (X2 * r1);
  H2[0] += s * (X0 * r2);
  H2[1] += s * ((-X1) * (-r2));
  H2[2] += s * ((-X1) * r1 + X0 * (-r0));
}

void mbs_map_curv(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                  const double *w, double *C, int ld) {
  if (e->kind != MBS_BODY) return;
  if (MBS_VEC(f)) {
    mbs_vec_map_curv(f, e, qb, t, w, C, ld);
    return;
  }
  if (f == MBS_DIRECTORS) {
    double xc = e->rb->planar ? t->X[e->rb->ax[2]] : 0.0, A[9], B[9];
    if (xc == 0.0) return;
    lv_hat3(w + 6, A);
    lv_hat3(w + 3, B);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        C[i * ld + 3 + j] -= xc * A[3 * i + j];
        C[i * ld + 6 + j] += xc * B[3 * i + j];
      }
    return;
  }
  const double *R = qb + 3;
  double c[3], A[9];
  mbs_cross3(t->X, w + 3, c); /* -c of the file comment for r3so3 */
  if (f == MBS_SE3 && !t->axis)
    for (int i = 0; i < 3; i++) c[i] -= w[i];
  lv_hat3(c, A);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[i * ld + 3 + j] += R[3 * i] * A[j] + R[3 * i + 1] * A[3 + j] + R[3 * i + 2] * A[6 + j];
}

void mbs_directors(const mbs_elem *e, const double *qb, double d[3][3]) {
  if (!e->rb->planar) {
    for (int k = 0; k < 3; k++) memcpy(d[k], qb + 3 + 3 * k, 3 * sizeof(double));
    return;
  }
  memcpy(d[e->rb->ax[0]], qb + 3, 3 * sizeof(double));
  memcpy(d[e->rb->ax[1]], qb + 6, 3 * sizeof(double));
  mbs_cross3(qb + 3, qb + 6, d[e->rb->ax[2]]);
}

void mbs_elem_initial(mbs_formulation f, const mbs_elem *e, double *qb, double *vb) {
  if (e->kind == MBS_GROUND) return;
  memcpy(qb, e->x0, (size_t)mbs_ntrans(e) * sizeof(double));
  memcpy(vb, e->v0, (size_t)mbs_ntrans(e) * sizeof(double));
  if (e->kind == MBS_PARTICLE) return;
  if (MBS_VEC(f)) { /* lv_mbs_add_body checked that the orientation is regular */
    mbs_vec_initial(f, e, qb, vb);
    return;
  }
  if (f == MBS_DIRECTORS) {
    double w[3], d[3];
    if (e->rb->w0s)
      memcpy(w, e->rb->w0, sizeof w);
    else
      for (int i = 0; i < 3; i++) w[i] = e->rb->R0[3 * i] * e->rb->W0[0] + e->rb->R0[3 * i + 1] * e->rb->W0[1] + e->rb->R0[3 * i + 2] * e->rb->W0[2];
    for (int k = 0; k < (e->rb->planar ? 2 : 3); k++) {
      for (int i = 0; i < 3; i++) d[i] = e->rb->R0[3 * i + e->rb->ax[k]];
      memcpy(qb + 3 + 3 * k, d, sizeof d);
      mbs_cross3(w, d, vb + 3 + 3 * k);
    }
  } else {
    memcpy(qb + 3, e->rb->R0, 9 * sizeof(double));
    memcpy(vb + 3, e->rb->W0, 3 * sizeof(double));
    if (f == MBS_SE3) /* U = R^T x' */
      for (int i = 0; i < 3; i++) vb[i] = e->rb->R0[i] * e->v0[0] + e->rb->R0[3 + i] * e->v0[1] + e->rb->R0[6 + i] * e->v0[2];
  }
}

void mbs_elem_pose(mbs_formulation f, const mbs_elem *e, const double *qb, double x[3], double R[9]) {
  static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (e->kind == MBS_GROUND) {
    if (x) memset(x, 0, 3 * sizeof(double));
    if (R) memcpy(R, I, sizeof I);
    return;
  }
  if (x)
    for (int i = 0; i < 3; i++) x[i] = i < mbs_ntrans(e) ? qb[i] : 0.0; /* a planar particle: z = 0 */
  if (!R) return;
  if (e->kind == MBS_PARTICLE)
    memcpy(R, I, sizeof I);
  else if (MBS_VEC(f))
    mbs_vec_pose_rot(f, e, qb, R);
  else if (f == MBS_DIRECTORS) {
    double d[3][3];
    mbs_directors(e, qb, d);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) R[3 * i + k] = d[k][i];
  } else
    memcpy(R, qb + 3, 9 * sizeof(double));
}

/* ------------------------------------------- orientations for initial data */

int lv_mbs_rotation_axis_angle(const double axis[3], double angle, double R[9]) {
  if (!axis || !R || !isfinite(angle)) return LV_EINPUT;
  double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  if (!(n > 0) || !isfinite(n)) return LV_EINPUT;
  double psi[3] = {angle * axis[0] / n, angle * axis[1] / n, angle * axis[2] / n};
  lv_so3_exp(psi, R);
  return 0;
}

int lv_mbs_rotation_cardan(const char *seq, const double angles[3], double R[9]) {
  if (!seq || !angles || !R || strlen(seq) != 3) return LV_EINPUT;
  double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int k = 0; k < 3; k++) {
    if (seq[k] < 'x' || seq[k] > 'z' || (k > 0 && seq[k] == seq[k - 1]) || !isfinite(angles[k])) return LV_EINPUT;
    double psi[3] = {0, 0, 0}, E[9], P[9];
    psi[seq[k] - 'x'] = angles[k];
    lv_so3_exp(psi, E);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) P[3 * i + j] = A[3 * i] * E[j] + A[3 * i + 1] * E[3 + j] + A[3 * i + 2] * E[6 + j];
    memcpy(A, P, sizeof A);
  }
  memcpy(R, A, sizeof A);
  return 0;
}
