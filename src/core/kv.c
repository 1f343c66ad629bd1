/* Textual key/value parameters (model --param, scheme --opt). */
#include <errno.h>
#include "lv_internal.h"

static const char *kv_find(const lv_kv *kv, const char *key) {
  if (!kv || !key) return NULL;
  /* The last occurrence wins, like repeated command-line options. */
  for (int i = kv->n - 1; i >= 0; i--)
    if (kv->keys[i] && strcmp(kv->keys[i], key) == 0) return kv->values[i];
  return NULL;
}

int lv_kv_double(const lv_kv *kv, const char *key, double def, double *out) {
  if (!out) return LV_EINPUT;
  const char *s = kv_find(kv, key);
  if (!s) { *out = def; return 0; }
  char *end = NULL;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x)) return LV_EINPUT;
  *out = x;
  return 0;
}

int lv_kv_int(const lv_kv *kv, const char *key, int def, int *out) {
  if (!out) return LV_EINPUT;
  const char *s = kv_find(kv, key);
  if (!s) { *out = def; return 0; }
  char *end = NULL;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE || x < -2147483647L || x > 2147483647L)
    return LV_EINPUT;
  *out = (int)x;
  return 0;
}

const char *lv_kv_string(const lv_kv *kv, const char *key, const char *def) {
  const char *s = kv_find(kv, key);
  return s ? s : def;
}

int lv_kv_check(const lv_kv *kv, const lv_param_info *info, const char **bad) {
  if (!kv) return 0;
  for (int i = 0; i < kv->n; i++) {
    int found = 0;
    for (const lv_param_info *p = info; p && p->name; p++)
      if (kv->keys[i] && strcmp(kv->keys[i], p->name) == 0) { found = 1; break; }
    if (!found) {
      if (bad) *bad = kv->keys[i];
      return LV_EUNKNOWN;
    }
  }
  return 0;
}

void lv_kv_init(lv_kv *kv, int n, const char **keys, const char **values) {
  if (kv) *kv = (lv_kv)LV_KV_INIT(n, keys, values);
}
