/** @file lv_status.h
 *  Status codes returned by every livens function that can fail.
 *
 *  Convention: 0 is success, negative values are errors.  User callbacks
 *  return 0 on success and any non-zero value to stop the current step; the
 *  library then reports LV_ECALLBACK.
 */
#ifndef LIVENS_LV_STATUS_H
#define LIVENS_LV_STATUS_H

#include "lv_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes: 0 (LV_SUCCESS) or a negative error; lv_strerror() and
 *  lv_status_name() describe each. */
enum lv_status {
  /** success */
  LV_SUCCESS = 0,
  LV_EINPUT = -1,        /**< invalid argument or option value */
  LV_ENOMEM = -2,        /**< memory allocation failed */
  LV_ESINGULAR = -3,     /**< Newton / saddle-point matrix is singular */
  LV_ENEWTON = -4,       /**< Newton iteration did not converge within the limit */
  LV_EDIVERGE = -5,      /**< Newton iteration diverged (residual grew) */
  LV_ECALLBACK = -6,     /**< a user callback returned non-zero */
  LV_ENONFINITE = -7,    /**< a callback produced NaN or Inf */
  LV_EINCONSISTENT = -8, /**< initial values violate the constraints beyond tolerance */
  LV_EUNKNOWN = -9,      /**< unknown scheme, model, parameter or option name */
  LV_ENOTIMPL = -10,     /**< feature not available for this model/space/scheme */
  LV_ELINSOL = -11,      /**< linear solver back-end failure other than singularity */
  LV_ESTEPMIN = -12,     /**< step size fell below the minimum after halving */
  LV_EIO = -13,          /**< file could not be opened or written */
  LV_EPATTERN = -14,     /**< matrix assembly used an entry outside the fixed pattern */
  LV_ESTOPPED = -15,     /**< run stopped on request (signal or output callback) */
  LV_EDIVERGED = -16     /**< the divergence guard stopped a blown-up run */
};

/** One-sentence, human-readable description of a status code. Never NULL. */
LV_API const char *lv_strerror(int status);

/** Symbolic name of a status code ("LV_ENEWTON"). Never NULL. */
LV_API const char *lv_status_name(int status);

#ifdef __cplusplus
}
#endif
#endif
