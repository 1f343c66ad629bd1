/* The table of schemes selectable by name. */
#include "lv_internal.h"

extern const lv_scheme_type lv_scheme_rattle;
extern const lv_scheme_type lv_scheme_midpoint;
extern const lv_scheme_type lv_scheme_em, lv_scheme_em_g;
extern const lv_scheme_type lv_scheme_vi_s, lv_scheme_vi_a, lv_scheme_vi_b;
extern const lv_scheme_type lv_scheme_genalpha;
extern const lv_scheme_type lv_scheme_bliedf1, lv_scheme_bliedf2, lv_scheme_bliedf3, lv_scheme_bliedf4;
extern const lv_scheme_type lv_scheme_rattlie;

static const lv_scheme_type *const schemes[] = {
    &lv_scheme_rattle,
    &lv_scheme_midpoint,
    &lv_scheme_vi_s,
    &lv_scheme_vi_a,
    &lv_scheme_vi_b,
    &lv_scheme_genalpha,
    &lv_scheme_bliedf1,
    &lv_scheme_bliedf2,
    &lv_scheme_bliedf3,
    &lv_scheme_bliedf4,
    &lv_scheme_em,
    &lv_scheme_em_g,
    &lv_scheme_rattlie,
    NULL,
};

const lv_scheme_type *const *lv_scheme_registry(void) { return schemes; }

const lv_scheme_type *lv_scheme_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; schemes[i]; i++)
    if (strcmp(schemes[i]->name, name) == 0) return schemes[i];
  return NULL;
}
