/* Internal side of the discrete-gradient toolkit (public part: lv_dgrad.h).
 * The energy-momentum schemes (em.c) evaluate the discrete gradient of V
 * many times per step between a fixed start point x and a moving Newton
 * iterate y, so the start-point quantities are cached once per step
 * (lv_dg_begin) and the iterate is evaluated with lv_dg_pot.  Constraint
 * corrections are computed by the scheme itself from lv_dg_coef. */
#ifndef LIVENS_DISCRETE_GRADIENT_H
#define LIVENS_DISCRETE_GRADIENT_H

#include "lv_internal.h"
#include "livens/lv_dgrad.h"
#include "schemes/mass_op.h"

struct lv_dgrad {
  const lv_model *m;
  int d, nc, ninv;
  lv_dgrad_kind pot;
  int con_quad;        /* every g_k at most quadratic (midpoint exact) */
  int mass_const;      /* the model's mass matrix is constant (see mass below) */
  /* start point (lv_dg_begin) */
  double *x;
  double Vx;
  double *pia, *vta, *dvta; /* invariants at x, Vt and Vt' there */
  /* invariant gradients as triplets in the callback's fixed order */
  int nnz;
  int *trow, *tcol;
  double *tz, *ty;          /* values at z = (x+y)/2 and at y */
  double *tx;               /* values at x (lv_dg_begin); tz = (tx + ty)/2, the invariants being quadratic */
  int *tperm, *tptr;        /* triplets grouped by invariant (CSR-like) */
  /* constant Hessians of the (quadratic) invariants, as triplets */
  int nh;
  int *hinv, *hr, *hc;
  double *hval;
  /* work */
  double *z, *dl, *w1, *w2, *H;
  double *pib, *pim, *pie, *vtb, *dvtb, *vtm, *dvtm, *vte, *dvte, *c, *cp, *eps;
  int *small_fd;
  /* the invariant form's quantities at y (pib .. cp, small_fd, tz) were
   * formed for ylast since the last lv_dg_begin: a Jacobian at the iterate
   * whose residual was just evaluated takes them instead of forming them
   * again */
  int pot_valid;
  double *ylast;
  /* ty holds the invariant gradients at ylast (kept across lv_dg_begin: the
   * next step's x is the last step's accepted y, whose tx is then ty) */
  int ty_valid;
  double *gx, *gy, *Gz, *Gx, *Gy, *Zb, *vx, *vy, *wv, *gvz, *zd;
  /* orthonormal basis of the group orbit's tangent span{xi_k(z)} */
  int nsym, nxb;
  double *xb, *wo;
  /* constant mass matrix in dense form (mass.M, mass.Minv d x d
   * column-major), formed on first use by lv_dg_dense_mass (mass.M NULL
   * until then); last, as it is large and cold */
  lv_mass_op mass;
};

/* Rounding-guarded Gonzalez coefficient: bracket / dd if the bracket is
 * above the rounding level of its terms (scale = sum of their magnitudes),
 * else 0.  dd = |y - x|^2. */
double lv_dg_coef(double bracket, double scale, double dd);

/* One-dimensional discrete derivative with its derivative with respect to
 * b (cp); *needs_fd is set when cp could not be formed without cancellation
 * and the caller must supply f''(m)/2 itself. */
double lv_dg_quot(double a, double b, double fa, double fb, double dfa, double dfm, double dfb,
                  double *cp, int *needs_fd);

/* v -= sum_j (b_j . v) b_j over the nb orthonormal d-vectors of B (stored
 * one after the other), in two passes (modified Gram-Schmidt: one pass
 * loses orthogonality for nearly dependent vectors, e.g. rotations about a
 * point near z); c (nb, may be NULL) gets each b_j . v summed over both
 * passes, so that v_in = v_out + sum_j c_j b_j. */
void lv_dg_mgs(int d, int nb, const double *B, double *v, double *c);

/* w = the part of dl orthogonal to span{xi_k(z)} over the model's symmetry
 * generators (w = dl without generators); the basis stays in dg->xb.
 * Gonzalez' correction along w instead of dl keeps D^G f . xi(z) = 0 for
 * every f invariant under the group, so momentum maps survive the
 * correction (along dl they would not). */
int lv_dg_orbit(lv_dgrad *dg, const double *z, const double *dl, double *w);
/* B (d x d, column-major) += s (I - sum_k xb_k xb_k^T): s times the
 * projector of the last lv_dg_orbit. */
void lv_dg_add_projector(const lv_dgrad *dg, double s, double *B);

/* Cache the start-point quantities of the potential at x. */
int lv_dg_begin(lv_dgrad *dg, const double *x);
/* D^G V(x, y) with x from lv_dg_begin; jac (dense d x d, column-major,
 * overwritten) if not NULL. */
int lv_dg_pot(lv_dgrad *dg, const double *y, double *out, double *jac);
/* The same with the Jacobian added into a sink, in a fixed position
 * sequence, in O(nnz) (sparse assembly).  For Gonzalez' form only the
 * sparse part 1/2 D2V(z) + beta I is written (see pot_gonzalez). */
int lv_dg_pot_sink(lv_dgrad *dg, const double *y, double *out, lv_sink *jac);
/* dg->mass in dense form from the model's constant mass matrix, on first
 * call (LV_ENOTIMPL without one; LV_EINPUT, LV_ESINGULAR for a bad one). */
int lv_dg_dense_mass(lv_dgrad *dg);

#endif
