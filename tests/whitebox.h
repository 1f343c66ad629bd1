/* Test hooks: library functions that only white-box tests call.  Not
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

#endif
