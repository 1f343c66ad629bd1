/* Test hooks: library functions that only the tests call (white-box
 * access to a stepper, reference computations of a paper's claims).  Not
 * installed and not part of src/lv_internal.h; they are hidden in
 * liblivens.so (no LV_API): the unit suites link the convenience library
 * liblivens_internal.la (TESTS_LDADD in Makefile.am), which has them. */
#ifndef LIVENS_TESTS_WHITEBOX_H
#define LIVENS_TESTS_WHITEBOX_H

#include "livens/livens.h"

/* src/schemes/genalpha.c: the genalpha Newton matrix J at the predictor and
 * its columns Jfd by central differences (step eps) of the residual along
 * the update, both N x N column-major; *n = N.  The state is not changed. */
int lv_genalpha_newton_fd(lv_stepper *st, double h, double eps, double *J, double *Jfd, int *n);

/* src/schemes/genalpha.c: the genalpha Newton matrix (N x N column-major,
 * *n = N) of a step of size h from the current state, at the predictor (x
 * NULL) or at the iterate x = (h Dq, v_{n+1}, v'_{n+1}, lambda_{n+1}) (3 nv
 * + nc; sigma = 0 or corrector=paper only, else LV_EINPUT), with the
 * scheme's tangent block (T, P = sigma I + (1 - sigma) T, or the exact
 * corrector's F) or, if simplified, the identity in its place (spec 002
 * claim 6).  The state is not changed. */
int lv_genalpha_newton_matrix(lv_stepper *st, double h, const double *x, int simplified, double *J, int *n);

/* src/schemes/bliedf.c: the number of group logarithms a BLieDF stepper has
 * evaluated (spec 004 T18); st must be a BLieDF stepper's (-1 if it has
 * no state yet). */
long lv_bliedf_log_calls(const lv_stepper *st);

/* src/schemes/bliedf.c: the factorisations of the saddle-point matrix
 * (RKMK4 stages, projections, (56)) the last RKMK4 start of a BLieDF
 * stepper made; -1 if it has no state yet. */
long lv_bliedf_start_factorizations(const lv_stepper *st);

/* src/schemes/bliedf.c: the BDF coefficients alpha_0..alpha_k and the
 * increment coefficients gamma_1..gamma_k the BLieDF stepper of order k
 * uses (its tables; spec 004 §1.1), k = 1..4 (LV_EINPUT otherwise). */
int lv_bliedf_coefficients(int k, const double **alpha, const double **gamma);

/* src/theory/genalpha_theory.c: seed 002's composition of rotation
 * vectors psi = psi0 <> theta (the rotational local-global transition map
 * (A.7), spec 002 §1.4): the rotation vector of R(psi0) exp(theta~), through the product of the unit
 * quaternions of psi0 and theta.  |psi| lies in [0, 2 pi] and is not wrapped
 * to <= pi, except within 1e-7 of 2 pi, where the same rotation is written
 * as (w - 2 pi) n (a total rotation of 2 pi, the identity, gives ~0).  livens'
 * schemes never need it (they compose on the group); it is here so that the
 * paper's unit tests (spec 002 claim 2) can be run. */
void lv_ga_rotvec_compose(const double psi0[3], const double theta[3], double psi[3]);

#endif
