/* Status codes and their sentences. */
#include "lv_internal.h"

static const struct {
  int code;
  const char *name;
  const char *text;
} table[] = {
    {LV_SUCCESS, "LV_SUCCESS", "success"},
    {LV_EINPUT, "LV_EINPUT", "invalid argument or option value"},
    {LV_ENOMEM, "LV_ENOMEM", "out of memory"},
    {LV_ESINGULAR, "LV_ESINGULAR",
     "the Newton matrix is singular (redundant constraints or a zero mass?)"},
    {LV_ENEWTON, "LV_ENEWTON",
     "the Newton iteration did not converge within the iteration limit"},
    {LV_EDIVERGE, "LV_EDIVERGE", "the Newton iteration diverged"},
    {LV_ECALLBACK, "LV_ECALLBACK", "a model callback reported an error"},
    {LV_ENONFINITE, "LV_ENONFINITE",
     "a model callback returned NaN or infinity"},
    {LV_EINCONSISTENT, "LV_EINCONSISTENT",
     "the initial values violate the constraints beyond the tolerance"},
    {LV_EUNKNOWN, "LV_EUNKNOWN", "unknown scheme, model, parameter or option name"},
    {LV_ENOTIMPL, "LV_ENOTIMPL",
     "this feature is not available for this model, space or scheme"},
    {LV_ELINSOL, "LV_ELINSOL", "the linear solver failed"},
    {LV_ESTEPMIN, "LV_ESTEPMIN",
     "the step size fell below its minimum after repeated halving"},
    {LV_EIO, "LV_EIO", "a file could not be opened or written"},
    {LV_EPATTERN, "LV_EPATTERN",
     "a matrix entry was assembled outside the fixed sparsity pattern"},
    {LV_ESTOPPED, "LV_ESTOPPED", "the run was stopped on request"},
    {LV_EDIVERGED, "LV_EDIVERGED",
     "the solution diverged (non-finite state, or energy or constraint error beyond the guard's bound)"},
};

const char *lv_strerror(int status) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].code == status) return table[i].text;
  return "unknown status code";
}

const char *lv_status_name(int status) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].code == status) return table[i].name;
  return "LV_E?";
}

const char *lv_version(void) { return LIVENS_VERSION_STRING; }
