/* The per-factor operations table: everything the space and the schemes
 * know about one kind of factor (issue 19, item 3).  Not installed.
 *
 * Each lv_factor_kind is one lv_group entry (group.c); space.c and the
 * schemes loop over factors and call the entry, so adding a Lie group is a
 * new entry in group.c (primitives in liegroup.c), a value of lv_factor_kind
 * and its tests: no switch over kinds anywhere else.
 *
 * Conventions: a factor's configuration is nq doubles, its tangent nv
 * doubles (for R^k both are the run-time size n, passed to every function;
 * the Lie groups ignore n).  The tangent operator T(v) is the identity
 * outside one "Lie block", tangent rows/columns rb .. rb + rk - 1 of the
 * factor (rk = 0: T = I); the block functions act on that block alone and
 * take pointers to its first entry (th + rb, x + rb).  Matrices are
 * row-major. */
#ifndef LIVENS_SPACE_GROUP_H
#define LIVENS_SPACE_GROUP_H

#include "livens/lv_space.h"

struct lv_sink;

/** Largest Lie block (SE(3)): schemes size their per-factor slots by it. */
#define LV_GROUP_MAXBLK 6

typedef struct lv_group {
  const char *name; /* "SO(3)"; "R" for R^k (the space writes R^k) */
  int power_parens; /* a power is written "(name)^n" rather than "name^n" */
  int nq, nv;       /* sizes; 0 for R^k (sized by n) */
  int rb, rk;       /* the Lie block within the factor's tangent */
  /* rk x rk: 0 where T, T^-1, the derivative D and the schemes' products
   * of them (block upper triangular for SE(3)) are structurally zero and
   * not written; NULL: the whole block is written. */
  const unsigned char *pattern;

  /* ---- group maps (space.c) ---- */
  void (*identity)(double *q, int n);
  /* qo = q o exp(h v~); qo may alias q */
  void (*compose_exp)(const double *q, double h, const double *v, double *qo, int n);
  /* v = log(q0^-1 q1); returns 1 when a rotation angle is within round-off of pi */
  int (*log)(const double *q0, const double *q1, double *v, int n);
  /* T(v) added into the sink at rows/columns o.. (the positions of
   * lv_space_tangent: independent of v) */
  int (*tangent)(const double *v, struct lv_sink *T, int o, int n);
  /* the entries tangent adds, in its order, into out (NULL: none
   * written); returns their count (lv_space_tangent_values) */
  int (*tangent_values)(const double *v, double *out, int n);
  /* y = T(v) x, y = T(v)^-1 x (y may alias x) */
  void (*tangent_apply)(const double *v, const double *x, double *y, int n);
  void (*tangent_inv_apply)(const double *v, const double *x, double *y, int n);
  /* y = T(v)^-1 x and D = d(T(w)^-1 x)/dw at v added into the sink at o.. */
  int (*tangent_inv_deriv)(const double *v, const double *x, double *y, struct lv_sink *D, int o,
                           int n);
  /* y = ad_v x */
  void (*ad)(const double *v, const double *x, double *y, int n);
  /* remove round-off drift; LV_EINPUT for a degenerate configuration */
  int (*normalize)(double *q, int n);
  /* size of the coordinates that tangent direction j (0 <= j < nv) moves,
   * 0 for a rotation: the finite-difference step scale (model/fd.c) */
  double (*dir_scale)(const double *q, int j, int n);
  /* the rigid-body pose (x, R) of the configuration (x = 0 for a pure
   * rotation) and back; NULL for R^k */
  void (*pose)(const double *q, double x[3], double R[9]);
  void (*set_pose)(const double x[3], const double R[9], double *q);

  /* ---- block algebra for the schemes (rk x rk, at the Lie block) ---- */
  /* Ti = T(th)^-1; LV_ESINGULAR */
  int (*blk_tinv)(const double *th, double *Ti);
  /* y = T(th)^-1 x (y may alias x) and D = d(T(th)^-1 x)/dth, written
   * whole (zeros included) */
  void (*blk_tinv_deriv)(const double *th, const double *x, double *y, double *D);
  /* X = A^-1; LV_ESINGULAR */
  int (*blk_inv)(const double *A, double *X);
  /* b <- A^-1 b (one right-hand side); A is kept; LV_ESINGULAR */
  int (*blk_solve)(const double *A, double *b);
  /* C = A B (C may not alias A or B) */
  void (*blk_mul)(const double *A, const double *B, double *C);
} lv_group;

/** The table entry of a kind; NULL for a value that is not a kind. */
const lv_group *lv_group_of(lv_factor_kind kind);
/** The table entry of factor i (NULL if out of range). */
const lv_group *lv_space_factor_group(const lv_space *sp, int i);
/** The values lv_space_tangent(sp, v, T) adds, in its order, into out (a
 *  factor's only where all of them fit in cap); returns their count.  A
 *  capture holding the recording of this space's tangent takes them into
 *  its slots without a sink add per entry (lv_spm_tangent). */
size_t lv_space_tangent_values(const lv_space *sp, const double *v, double *out, size_t cap);
/** The finite-difference scale of tangent direction j: the largest size of
 *  the coordinates it moves, at least 1 (1 for rotations). */
double lv_space_dir_scale(const lv_space *sp, const double *q, int j);

#endif
