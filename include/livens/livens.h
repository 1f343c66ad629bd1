/** @file livens.h
 *  Umbrella header of livens: structure-preserving time integration of
 *  constrained mechanical systems.
 */
#ifndef LIVENS_LIVENS_H
#define LIVENS_LIVENS_H

#include "lv_export.h"

#include "lv_status.h"
#include "lv_linsol.h"
#include "lv_space.h"
#include "lv_model.h"
#include "lv_newton.h"
#include "lv_scheme.h"
#include "lv_integrator.h"
#include "lv_diag.h"
#include "lv_dgrad.h"
#include "lv_version.h"
#include "lv_mbs.h"

/** Library version string, "MAJOR.MINOR.PATCH" (LIVENS_VERSION_STRING of the
 *  library's build; compare with the header's to detect a mismatch). */
LV_API const char *lv_version(void);

#endif
