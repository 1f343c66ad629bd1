/* Scheme options: one way to read a keyword or on/off option and one
 * sentence for every refusal, written to the stepper's detail as
 *   "<scheme>: KEY = VALUE is not accepted: ACCEPTED"
 * so a user learns the option, the value given and what is accepted. */
#include <stdio.h>
#include <string.h>
#include "lv_internal.h"

int lv_opt_refuse(lv_stepper *st, const char *scheme, const char *key, const char *accepted) {
  snprintf(st->detail, sizeof st->detail, "%s: %s = %s is not accepted: %s", scheme, key,
           lv_kv_string(st->options, key, ""), accepted);
  return LV_EINPUT;
}

int lv_opt_choice(lv_stepper *st, const char *scheme, const char *key, const char *const *choices, int def,
                  int *out) {
  const char *s = lv_kv_string(st->options, key, NULL);
  if (!s) {
    *out = def;
    return 0;
  }
  char accepted[160] = "";
  size_t len = 0;
  for (int i = 0; choices[i]; i++) {
    if (strcmp(s, choices[i]) == 0) {
      *out = i;
      return 0;
    }
    int w = snprintf(accepted + len, sizeof accepted - len, "%s'%s'", i == 0 ? "" : choices[i + 1] ? ", " : " or ",
                     choices[i]);
    if (w > 0 && (size_t)w < sizeof accepted - len) len += (size_t)w;
  }
  return lv_opt_refuse(st, scheme, key, accepted);
}

int lv_opt_onoff(lv_stepper *st, const char *scheme, const char *key, int def, int *out) {
  static const char *const onoff[] = {"off", "on", NULL};
  return lv_opt_choice(st, scheme, key, onoff, def, out);
}

int lv_opt_double(lv_stepper *st, const char *scheme, const char *key, double def, double *out,
                  const char *accepted) {
  if (lv_kv_double(st->options, key, def, out) || !isfinite(*out)) return lv_opt_refuse(st, scheme, key, accepted);
  return 0;
}
