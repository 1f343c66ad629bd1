/* The constant mass matrix M of the reduced GGL schemes (ggl_vi.c, em.c),
 * in the form their Newton-matrix assembly uses (internal, not installed).
 *
 * Why one object: the VI and EM schemes reduce their equations the same
 * way (position-level unknowns, momentum rows scaled by D^-1 = diag(M)^-1)
 * and need the same things from M: products M x and M^-1 x, the row
 * scaling, and fixed-pattern sparse M, M^-1 for their Newton-matrix
 * assembly (schemes/spmat.h).
 * Written once here, the two schemes cannot drift apart in how M is formed,
 * inverted or applied -- which the dense vs sparse agreement tests of both
 * rely on.  The discrete-gradient toolkit keeps its dense M^-1 (for
 * lv_dgrad_velocity_constraints) in one too.
 *
 *   sparse form  (LV_MASS_SPARSE, the VI and EM schemes) M and M^-1 as
 *                fixed-pattern matrices: M^-1 block by block (lv_spm_mass)
 *                when every connected block of M's pattern has at most
 *                LV_MASS_MAX_BLOCK rows, else the dense inverse below
 *                captured entry by entry (M^-1 is then not sparse);
 *   dense form   (LV_MASS_DENSE) M once (it is constant), M^-1 as
 *                1/diag(M) if M is diagonal, else by dense LU.
 *
 * The products are static inline: they sit in the schemes' innermost loops
 * (several per Newton iteration on ~10 us steps). */
#ifndef LIVENS_MASS_OP_H
#define LIVENS_MASS_OP_H

#include "lv_internal.h"
#include "schemes/spmat.h"

/* Largest connected block of M for which the sparse form is built (a rigid
 * body in director coordinates has 12). */
#define LV_MASS_MAX_BLOCK 64

/* The form lv_mass_op_init builds. */
enum { LV_MASS_DENSE = 0, LV_MASS_SPARSE = 1 };

typedef struct {
  int d;
  int sparse;       /* sparse form: sM, sMi are set (M and Minv only if M^-1 is not sparse) */
  int diag;         /* dense form: M is diagonal (M^-1 x = rs .* x) */
  double *md;       /* diag(M), positive */
  double *rs;       /* 1 / diag(M): the row scaling D^-1 of the momentum rows */
  double *M, *Minv; /* dense form: d x d, column-major (Minv's diagonal set also when diag) */
  const double *sdM, *sdMi; /* sparse form of a diagonal M: the values of sM and sMi (else NULL) */
  lv_spm sM, sMi;   /* sparse form (last: large, and not touched by the dense form) */
} lv_mass_op;

/* M of the constant-mass model @p m (evaluated at @p q) in the @p form
 * LV_MASS_SPARSE or LV_MASS_DENSE.  Status: LV_EINPUT
 * (a diagonal entry not positive), LV_ESINGULAR, LV_ENOMEM.  @p mo can be
 * freed with lv_mass_op_free whatever the status; a zero-filled lv_mass_op
 * can be freed too. */
int lv_mass_op_init(lv_mass_op *mo, const lv_model *m, const double *q, int form);
void lv_mass_op_free(lv_mass_op *mo);

/* y = A x for A = M (sparse S, its diagonal values sdg or NULL; diagonal dg,
 * dense D) or A = M^-1.  A diagonal S is applied as lv_spm_matvec sums
 * its one entry per row, 0.0 + a x (the same bits, -0.0 included). */
static inline void lv_mass_op_apply_(const lv_mass_op *mo, const lv_spm *S, const double *sdg, const double *dg,
                                     const double *D, const double *x, double *y) {
  int d = mo->d;
  if (mo->sparse && sdg) {
    for (int i = 0; i < d; i++) y[i] = 0.0 + sdg[i] * x[i];
  } else if (mo->sparse) {
    lv_spm_matvec(S, 1.0, x, 0, y);
  } else if (mo->diag) {
    for (int i = 0; i < d; i++) y[i] = dg[i] * x[i];
  } else {
    lv_dense_matvec(d, d, D, x, y);
  }
}

/* y = M x */
static inline void lv_mass_mul(const lv_mass_op *mo, const double *x, double *y) {
  lv_mass_op_apply_(mo, &mo->sM, mo->sdM, mo->md, mo->M, x, y);
}

/* y = M^-1 x */
static inline void lv_mass_inv_mul(const lv_mass_op *mo, const double *x, double *y) {
  lv_mass_op_apply_(mo, &mo->sMi, mo->sdMi, mo->rs, mo->Minv, x, y);
}

#endif
