/** @file livens.h
 *  Umbrella header of livens: structure-preserving time integration of
 *  constrained mechanical systems.
 */
#ifndef LIVENS_LIVENS_H
#define LIVENS_LIVENS_H

#include "lv_status.h"
#include "lv_linsol.h"
#include "lv_space.h"
#include "lv_model.h"
#include "lv_newton.h"
#include "lv_scheme.h"
#include "lv_integrator.h"
#include "lv_diag.h"
#include "lv_dgrad.h"
#include "lv_mbs.h"

#define LIVENS_VERSION_MAJOR 0
#define LIVENS_VERSION_MINOR 1

/** Library version string, e.g. "0.1.0". */
const char *lv_version(void);

#endif
