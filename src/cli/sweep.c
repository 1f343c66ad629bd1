/* livens sweep FILE: parameter studies (issue 21).
 *
 * A study file is a run file (INI, read by runfile.c through inih, with its
 * line checks) with three more sections:
 *
 *   [run] [param] [opt]      the base run, as in a run file (no 'out')
 *   [axes]                   what varies, one axis per line:
 *     scheme     = vi-s, vi-b, em          a list
 *     step       = 0.04, 0.05              numbers: a list, or
 *     step       = lin:0.01:0.1:10         10 values, linear, ends included
 *     t-end      = log:1:1000:4            4 values, geometric
 *     param.NAME = list or range           a model parameter
 *     opt.NAME   = list or range           a scheme option (applied to the
 *                                          schemes that have it)
 *     sample     = N                       N perturbed initial conditions
 *     variant    = A, B                    named bundles of settings:
 *   [variant A]                            scheme, step, t-end, param.K,
 *     opt.sigma = 1                        opt.K (none of them an axis)
 *   [sweep]
 *     out      = DIR                       output directory (default:
 *                                          the file's name + "-sweep")
 *     case-csv = no | yes                  each case's CSV in DIR
 *     combine  = grid | zip                full grid (default), or the
 *                                          i-th values of every axis
 *   [perturb]                              with a sample axis
 *     seed = 42                            (default: chosen, kept in DIR/seed)
 *     q = 1e-3                             uniform in [-q, q] per tangent
 *                                          direction: q0 o exp(dq)
 *     v = 1e-3                             uniform in [-v, v] per velocity
 *
 * Each case is one run through cli_make_model / cli_execute (common.c).
 * Its result (the case's spec, status and summary figures) is written
 * atomically to DIR/case-NNNNNN.res; a rerun skips every case whose result
 * file is complete and describes the same case, and redoes the others.
 * When every case has its result, DIR/summary.csv and DIR/summary.json are
 * written (atomically too).  A failed case is a row with its status. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "sweep.h"

#define SWEEP_MAX_CASES 1000000L /* the summary holds every case in memory */
#define SWEEP_RESULT_MAX 65536

typedef enum { AX_SCHEME, AX_STEP, AX_TEND, AX_PARAM, AX_OPT, AX_SAMPLE, AX_VARIANT } axis_kind;

/* A named bundle of settings, one value of the variant axis: scheme, step,
 * t-end, param.K, opt.K ([variant NAME] sections). */
typedef struct {
  char *name;
  cli_kv set;
} sweep_variant;

typedef struct {
  axis_kind kind;
  char *name;        /* column name: scheme, step, t-end, param.K, opt.K, sample */
  const char *key;   /* K for param./opt. (inside name) */
  char **values;
  int n, cap; /* values held, and room for */
} sweep_axis;

struct sweep_study {
  const char *path;
  cli_run base;
  sweep_axis *axes;
  int naxes;
  int zip;
  long ncases;
  char *outdir;
  int case_csv;
  int sample_axis;    /* index of the sample axis, -1 if none */
  int variant_axis;   /* index of the variant axis, -1 if none */
  sweep_variant *variants;
  int nvariants;
  int seed_given;
  uint64_t seed;
  double pq, pv;
  int perturb_given;
};

/* ------------------------------------------------------------ utilities */

/* malloc'd printf; NULL (message printed) when out of memory. */
static char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  if (!s) {
    cli_error("out of memory.");
    return NULL;
  }
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int parse_num(const char *s, double *x) {
  char *end;
  errno = 0;
  *x = strtod(s, &end);
  return end != s && *end == '\0' && errno == 0 && isfinite(*x);
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
  return s;
}

static void axis_free(sweep_axis *a) {
  for (int i = 0; i < a->n; i++) free(a->values[i]);
  free(a->values);
  free(a->name);
}

static void study_free(sweep_study *s) {
  for (int i = 0; i < s->nvariants; i++) {
    free(s->variants[i].name);
    cli_kv_free(&s->variants[i].set);
  }
  free(s->variants);
  for (int i = 0; i < s->naxes; i++) axis_free(&s->axes[i]);
  free(s->axes);
  free(s->outdir);
  cli_kv_free(&s->base.params);
  cli_kv_free(&s->base.opts);
}

/* ------------------------------------------------------------ the study file */

/* The room doubles: an axis of 10^6 samples (the limit) made one
 * reallocation per value, which copies the whole array under
 * AddressSanitizer (the study fuzz harness spent minutes on one input). */
static int push_value(sweep_axis *a, const char *v) {
  if (a->n == a->cap) {
    int cap = a->cap ? 2 * a->cap : 8;
    char **g = realloc(a->values, sizeof *g * (size_t)cap);
    if (!g) return cli_error("out of memory."), CLI_FAILED;
    a->values = g;
    a->cap = cap;
  }
  if (!(a->values[a->n] = xprintf("%s", v))) return CLI_FAILED;
  a->n++;
  return CLI_OK;
}

/* lin:A:B:N or log:A:B:N -> N values; a comma list otherwise. */
static int axis_values(sweep_axis *a, const char *value, int numeric, const char *path, int lineno) {
  int islin = strncmp(value, "lin:", 4) == 0, islog = strncmp(value, "log:", 4) == 0;
  if (islin || islog) {
    char *copy = xprintf("%s", value + 4);
    if (!copy) return CLI_FAILED;
    char *parts[4];
    int np = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ":", &save); t && np < 4; t = strtok_r(NULL, ":", &save)) parts[np++] = t;
    double lo, hi, cnt;
    int ok = np == 3 && !strtok_r(NULL, ":", &save) && parse_num(trim(parts[0]), &lo) &&
             parse_num(trim(parts[1]), &hi) && parse_num(trim(parts[2]), &cnt) && cnt >= 1 && cnt <= 100000 &&
             cnt == floor(cnt) && (!islog || (lo > 0 && hi > 0));
    free(copy);
    if (!ok) {
      cli_error("%s:%d: '%s' for '%s' must be %s:START:STOP:COUNT (COUNT a whole number from 1 to 100000%s).",
                path, lineno, value, a->name, islin ? "lin" : "log", islog ? ", START and STOP positive" : "");
      return CLI_USAGE;
    }
    int n = (int)cnt;
    for (int i = 0; i < n; i++) {
      double f = n == 1 ? 0.0 : (double)i / (n - 1), x;
      if (islin) x = lo + f * (hi - lo);
      else x = exp(log(lo) + f * (log(hi) - log(lo)));
      if (i == 0) x = lo;
      if (i == n - 1 && n > 1) x = hi;
      /* 15 digits: log:0.01:0.04:3 gives 0.02, not 0.019999999999999997;
       * the case runs with exactly the value written in the summary */
      char b[40];
      if (i == 0 || i == n - 1) sw_fmt_double(b, sizeof b, x);
      else snprintf(b, sizeof b, "%.15g", x);
      if (push_value(a, b)) return CLI_FAILED;
    }
    return CLI_OK;
  }
  char *copy = xprintf("%s", value);
  if (!copy) return CLI_FAILED;
  int rc = CLI_OK;
  const char *p = copy;
  for (;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    char *item = trim((char *)p);
    double x;
    if (!*item) {
      cli_error("%s:%d: empty item in the list for '%s'.", path, lineno, a->name);
      rc = CLI_USAGE;
    } else if (numeric && !parse_num(item, &x)) {
      cli_error("%s:%d: '%s' in the list for '%s' is not a number.", path, lineno, item, a->name);
      rc = CLI_USAGE;
    } else
      rc = push_value(a, item);
    if (rc || !comma) break;
    p = comma + 1;
  }
  free(copy);
  return rc;
}

static int yesno(const char *v, int *x) {
  if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1")) *x = 1;
  else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0")) *x = 0;
  else return -1;
  return 0;
}

static int study_section(void *user, const char *section, const char *name, const char *value, const char *path,
                         int lineno) {
  sweep_study *s = user;
  double x;
  if (strcmp(section, "sweep") == 0) {
    if (strcmp(name, "out") == 0) {
      if (!*value) return cli_error("%s:%d: 'out' needs a directory name.", path, lineno), 0;
      free(s->outdir);
      return (s->outdir = xprintf("%s", value)) != NULL;
    }
    if (strcmp(name, "case-csv") == 0) {
      if (yesno(value, &s->case_csv))
        return cli_error("%s:%d: case-csv must be yes or no, got '%s'.", path, lineno, value), 0;
      return 1;
    }
    if (strcmp(name, "combine") == 0) {
      if (strcmp(value, "grid") == 0) s->zip = 0;
      else if (strcmp(value, "zip") == 0) s->zip = 1;
      else return cli_error("%s:%d: combine must be grid or zip, got '%s'.", path, lineno, value), 0;
      return 1;
    }
    cli_error("%s:%d: unknown key '%s' in [sweep] (out, case-csv, combine).", path, lineno, name);
    return 0;
  }
  if (strcmp(section, "perturb") == 0) {
    s->perturb_given = 1;
    if (strcmp(name, "seed") == 0) {
      char *end;
      errno = 0;
      unsigned long long v = strtoull(value, &end, 10);
      if (end == value || *end || errno || value[0] == '-')
        return cli_error("%s:%d: seed must be a whole number from 0 to 2^64-1, got '%s'.", path, lineno, value),
               0;
      s->seed = v;
      s->seed_given = 1;
      return 1;
    }
    if (strcmp(name, "q") == 0 || strcmp(name, "v") == 0) {
      if (!parse_num(value, &x) || x < 0)
        return cli_error("%s:%d: '%s' must be a non-negative number, got '%s'.", path, lineno, name, value), 0;
      *(name[0] == 'q' ? &s->pq : &s->pv) = x;
      return 1;
    }
    cli_error("%s:%d: unknown key '%s' in [perturb] (seed, q, v).", path, lineno, name);
    return 0;
  }
  if (strncmp(section, "variant ", 8) == 0 && section[8]) {
    const char *vn = section + 8;
    sweep_variant *v = NULL;
    for (int i = 0; i < s->nvariants; i++)
      if (strcmp(s->variants[i].name, vn) == 0) v = &s->variants[i];
    if (!v) {
      sweep_variant *g = realloc(s->variants, sizeof *g * (size_t)(s->nvariants + 1));
      if (!g) return cli_error("out of memory."), 0;
      s->variants = g;
      v = &s->variants[s->nvariants];
      memset(v, 0, sizeof *v);
      if (!(v->name = xprintf("%s", vn))) return 0;
      s->nvariants++;
    }
    int ok = 1;
    if (strcmp(name, "scheme") == 0)
      ok = lv_scheme_find(value) && strlen(value) < sizeof s->base.scheme;
    else if (strcmp(name, "step") == 0 || strcmp(name, "t-end") == 0)
      ok = parse_num(value, &x) && x > 0;
    else if (!((strncmp(name, "param.", 6) == 0 && name[6]) || (strncmp(name, "opt.", 4) == 0 && name[4]))) {
      cli_error("%s:%d: unknown key '%s' in [variant %s] (scheme, step, t-end, param.NAME, opt.NAME).", path,
                lineno, name, vn);
      return 0;
    }
    if (!ok) return cli_error("%s:%d: invalid value '%s' for '%s'.", path, lineno, value, name), 0;
    return cli_kv_set(&v->set, name, value) == CLI_OK;
  }
  if (strcmp(section, "axes") == 0) {
    sweep_axis a;
    memset(&a, 0, sizeof a);
    int numeric = 0;
    if (strcmp(name, "scheme") == 0) a.kind = AX_SCHEME;
    else if (strcmp(name, "step") == 0) a.kind = AX_STEP, numeric = 1;
    else if (strcmp(name, "t-end") == 0) a.kind = AX_TEND, numeric = 1;
    else if (strcmp(name, "sample") == 0) a.kind = AX_SAMPLE;
    else if (strcmp(name, "variant") == 0) a.kind = AX_VARIANT;
    else if (strncmp(name, "param.", 6) == 0 && name[6]) a.kind = AX_PARAM;
    else if (strncmp(name, "opt.", 4) == 0 && name[4]) a.kind = AX_OPT;
    else {
      cli_error("%s:%d: unknown axis '%s' (scheme, step, t-end, param.NAME, opt.NAME, sample, variant).", path, lineno,
                name);
      return 0;
    }
    if (!(a.name = xprintf("%s", name))) return 0;
    a.key = a.kind == AX_PARAM ? a.name + 6 : a.kind == AX_OPT ? a.name + 4 : NULL;
    int rc;
    if (a.kind == AX_SAMPLE) {
      if (!parse_num(value, &x) || x < 1 || x > 1000000 || x != floor(x)) {
        cli_error("%s:%d: sample must be the number of perturbed initial conditions (1 to 1000000), got '%s'.",
                  path, lineno, value);
        rc = CLI_USAGE;
      } else {
        rc = CLI_OK;
        for (long i = 0; i < (long)x && !rc; i++) {
          char b[24];
          snprintf(b, sizeof b, "%ld", i);
          rc = push_value(&a, b);
        }
      }
    } else
      rc = axis_values(&a, value, numeric, path, lineno);
    for (int i = 0; i < a.n && !rc; i++) {
      double h;
      if (a.kind == AX_SCHEME && !lv_scheme_find(a.values[i])) {
        cli_error("%s:%d: unknown scheme '%s' (see 'livens list').", path, lineno, a.values[i]);
        rc = CLI_USAGE;
      } else if (a.kind == AX_SCHEME && strlen(a.values[i]) >= sizeof s->base.scheme) {
        cli_error("%s:%d: scheme name too long.", path, lineno);
        rc = CLI_USAGE;
      } else if ((a.kind == AX_STEP || a.kind == AX_TEND) && (parse_num(a.values[i], &h), !(h > 0))) {
        cli_error("%s:%d: every %s must be positive, got %s.", path, lineno, name, a.values[i]);
        rc = CLI_USAGE;
      }
    }
    sweep_axis *g = rc ? NULL : realloc(s->axes, sizeof *g * (size_t)(s->naxes + 1));
    if (!g) {
      if (!rc) cli_error("out of memory.");
      axis_free(&a);
      return 0;
    }
    s->axes = g;
    s->axes[s->naxes++] = a;
    return 1;
  }
  return -1;
}

static int scheme_has_option(const char *scheme, const char *opt) {
  const lv_scheme_type *t = lv_scheme_find(scheme);
  for (const lv_param_info *p = t ? t->options : NULL; p && p->name; p++)
    if (strcmp(p->name, opt) == 0) return 1;
  return 0;
}

/* The variant axis names defined variants, each used; their settings name
 * no other axis and exist in the model / the schemes they apply to. */
static int variants_check(const sweep_study *s, const lv_model_info *info, const sweep_axis *schemes) {
  const char *p = s->path;
  const sweep_axis *va = s->variant_axis >= 0 ? &s->axes[s->variant_axis] : NULL;
  if (!va && s->nvariants)
    return cli_error("%s: [variant %s] is defined but there is no variant axis (variant = NAME,... in [axes]).", p,
                     s->variants[0].name), 1;
  for (int i = 0; va && i < va->n; i++) {
    int found = 0;
    for (int k = 0; k < s->nvariants; k++) found |= strcmp(s->variants[k].name, va->values[i]) == 0;
    for (int j = 0; j < i; j++)
      if (strcmp(va->values[j], va->values[i]) == 0)
        return cli_error("%s: variant '%s' appears twice on the variant axis.", p, va->values[i]), 1;
    if (!found) return cli_error("%s: variant '%s' has no [variant %s] section.", p, va->values[i], va->values[i]), 1;
  }
  for (int k = 0; k < s->nvariants; k++) {
    const sweep_variant *v = &s->variants[k];
    int used = 0;
    for (int i = 0; va && i < va->n; i++) used |= strcmp(va->values[i], v->name) == 0;
    if (!used) return cli_error("%s: [variant %s] is not on the variant axis.", p, v->name), 1;
    const char *own = NULL;
    for (int j = 0; j < v->set.n; j++)
      if (strcmp(v->set.keys[j], "scheme") == 0) own = v->set.values[j];
    for (int j = 0; j < v->set.n; j++) {
      const char *key = v->set.keys[j];
      for (int i = 0; i < s->naxes; i++)
        if (strcmp(s->axes[i].name, key) == 0)
          return cli_error("%s: [variant %s] sets '%s', which is also an axis.", p, v->name, key), 1;
      const char *bad = NULL;
      if (strncmp(key, "param.", 6) == 0) {
        const char *pk = key + 6;
        lv_kv one = {1, &pk, &pk};
        if (lv_kv_check(&one, info->params, &bad))
          return cli_error("%s: model '%s' has no parameter '%s' (see 'livens list').", p, s->base.model, pk), 1;
      } else if (strncmp(key, "opt.", 4) == 0) {
        int known = own ? scheme_has_option(own, key + 4) : !schemes && scheme_has_option(s->base.scheme, key + 4);
        for (int i = 0; !own && schemes && i < schemes->n && !known; i++)
          known = scheme_has_option(schemes->values[i], key + 4);
        if (!known)
          return cli_error("%s: [variant %s] sets option '%s', which %s%s%s (see 'livens list').", p, v->name, key + 4,
                           own ? "scheme '" : "no scheme of the sweep has", own ? own : "",
                           own ? "' does not have" : ""), 1;
      }
    }
  }
  return 0;
}

/* Cross-checks once the whole file is read; CLI_USAGE with a message. */
static int study_check(sweep_study *s) {
  const char *p = s->path;
  if (s->base.out[0]) return cli_error("%s: 'out' in [run] is not used by a sweep (each case's CSV: case-csv = yes "
                                       "in [sweep]).", p), CLI_USAGE;
  if (s->naxes == 0) return cli_error("%s: no [axes] section: a sweep needs at least one axis.", p), CLI_USAGE;
  const lv_model_info *info = NULL;
  for (const lv_model_info *const *m = lv_model_registry(); *m; m++)
    if (strcmp((*m)->name, s->base.model) == 0) info = *m;
  if (!info && cli_is_system_file(s->base.model)) info = cli_find_model(s->base.model); /* issue 15 */
  if (!info) return cli_error("%s: unknown model '%s' (see 'livens list').", p, s->base.model), CLI_USAGE;
  lv_kv kv = cli_kv_view(&s->base.params);
  const char *bad = NULL;
  if (lv_kv_check(&kv, info->params, &bad))
    return cli_error("%s: model '%s' has no parameter '%s' (see 'livens list').", p, s->base.model, bad),
           CLI_USAGE;
  if (!lv_scheme_find(s->base.scheme))
    return cli_error("%s: unknown scheme '%s' (see 'livens list').", p, s->base.scheme), CLI_USAGE;
  const sweep_axis *schemes = NULL;
  s->sample_axis = -1;
  s->variant_axis = -1;
  for (int i = 0; i < s->naxes; i++) {
    sweep_axis *a = &s->axes[i];
    for (int j = 0; j < i; j++)
      if (s->axes[j].kind == a->kind && (a->kind == AX_SCHEME || a->kind == AX_SAMPLE))
        return cli_error("%s: two '%s' axes.", p, a->name), CLI_USAGE;
    if (a->kind == AX_SCHEME) schemes = a;
    if (a->kind == AX_SAMPLE) s->sample_axis = i;
    if (a->kind == AX_VARIANT) s->variant_axis = i;
    if (a->kind == AX_PARAM) {
      const char *key = a->key;
      lv_kv one = {1, &key, &key};
      if (lv_kv_check(&one, info->params, &bad))
        return cli_error("%s: model '%s' has no parameter '%s' (see 'livens list').", p, s->base.model, a->key),
               CLI_USAGE;
    }
  }
  /* an option no scheme of the sweep has is a typo */
  for (int k = 0; k < s->base.opts.n + s->naxes; k++) {
    const char *opt = k < s->base.opts.n ? s->base.opts.keys[k] : s->axes[k - s->base.opts.n].key;
    if (k >= s->base.opts.n && s->axes[k - s->base.opts.n].kind != AX_OPT) continue;
    int known = schemes ? 0 : scheme_has_option(s->base.scheme, opt);
    for (int i = 0; schemes && i < schemes->n && !known; i++) known = scheme_has_option(schemes->values[i], opt);
    for (int v = 0; v < s->nvariants && !known; v++) /* schemes the variants set */
      for (int j = 0; j < s->variants[v].set.n && !known; j++)
        if (strcmp(s->variants[v].set.keys[j], "scheme") == 0) known = scheme_has_option(s->variants[v].set.values[j], opt);
    if (!known) return cli_error("%s: no scheme of the sweep has option '%s' (see 'livens list').", p, opt), CLI_USAGE;
  }
  if (variants_check(s, info, schemes)) return CLI_USAGE;
  if (s->sample_axis >= 0 && !(s->pq > 0 || s->pv > 0))
    return cli_error("%s: the sample axis needs a perturbation: q or v > 0 in [perturb].", p), CLI_USAGE;
  if (s->sample_axis < 0 && s->perturb_given)
    return cli_error("%s: [perturb] needs a sample axis (sample = N in [axes]).", p), CLI_USAGE;
  long n = 1;
  for (int i = 0; i < s->naxes; i++) {
    if (s->zip) {
      if (s->axes[i].n != s->axes[0].n)
        return cli_error("%s: combine = zip needs axes of equal length ('%s' has %d values, '%s' %d).", p,
                         s->axes[0].name, s->axes[0].n, s->axes[i].name, s->axes[i].n), CLI_USAGE;
      n = s->axes[0].n;
    } else if ((n *= s->axes[i].n) > SWEEP_MAX_CASES)
      return cli_error("%s: the grid has more than %ld cases.", p, SWEEP_MAX_CASES), CLI_USAGE;
  }
  s->ncases = n;
  return CLI_OK;
}

/* ------------------------------------------------------------ cases */

/* Index into each axis of case idx (the last axis varies fastest). */
static int axis_pos(const sweep_study *s, long idx, int axis) {
  if (s->zip) return (int)idx;
  for (int i = s->naxes - 1; i > axis; i--) idx /= s->axes[i].n;
  return (int)(idx % s->axes[axis].n);
}

static const char *axis_value(const sweep_study *s, long idx, int axis) {
  return s->axes[axis].values[axis_pos(s, idx, axis)];
}

/* The case's run: the base with the axis values (params/opts freshly owned;
 * free with cli_kv_free).  *sample is -1 without a sample axis. */
static int case_run(const sweep_study *s, long idx, cli_run *r, long *sample) {
  *r = s->base;
  memset(&r->params, 0, sizeof r->params);
  memset(&r->opts, 0, sizeof r->opts);
  *sample = -1;
  for (int i = 0; i < s->naxes; i++) {
    const char *v = axis_value(s, idx, i);
    switch (s->axes[i].kind) {
      case AX_SCHEME: strcpy(r->scheme, v), r->scheme_auto = 0; break; /* length checked when read */
      case AX_STEP: r->h = strtod(v, NULL); break;
      case AX_TEND: r->t_end = strtod(v, NULL); break;
      case AX_SAMPLE: *sample = strtol(v, NULL, 10); break;
      default: break;
    }
  }
  /* the variant's settings, and the list of parameter/option overrides */
  const sweep_variant *var = NULL;
  if (s->variant_axis >= 0)
    for (int k = 0; k < s->nvariants; k++)
      if (strcmp(s->variants[k].name, axis_value(s, idx, s->variant_axis)) == 0) var = &s->variants[k];
  int nvar = var ? var->set.n : 0, nover = 0;
  const char **okey = malloc(sizeof *okey * (size_t)(s->naxes + nvar + 1));
  const char **oval = malloc(sizeof *oval * (size_t)(s->naxes + nvar + 1));
  axis_kind *okind = malloc(sizeof *okind * (size_t)(s->naxes + nvar + 1));
  if (!okey || !oval || !okind) {
    free(okey), free(oval), free(okind);
    return cli_error("out of memory."), CLI_FAILED;
  }
  for (int i = 0; i < s->naxes; i++)
    if (s->axes[i].kind == AX_PARAM || s->axes[i].kind == AX_OPT) {
      okind[nover] = s->axes[i].kind;
      okey[nover] = s->axes[i].key;
      oval[nover++] = axis_value(s, idx, i);
    }
  for (int j = 0; j < nvar; j++) {
    const char *k = var->set.keys[j], *v = var->set.values[j];
    if (strcmp(k, "scheme") == 0) strcpy(r->scheme, v), r->scheme_auto = 0; /* length checked when read */
    else if (strcmp(k, "step") == 0) r->h = strtod(v, NULL);
    else if (strcmp(k, "t-end") == 0) r->t_end = strtod(v, NULL);
    else {
      int isp = k[0] == 'p';
      okind[nover] = isp ? AX_PARAM : AX_OPT;
      okey[nover] = k + (isp ? 6 : 4);
      oval[nover++] = v;
    }
  }
  int rc = CLI_OK;
  /* base settings nothing overrides, then the overrides */
  for (int pass = 0; pass < 2 && !rc; pass++) {
    const cli_kv *b = pass == 0 ? &s->base.params : &s->base.opts;
    cli_kv *dst = pass == 0 ? &r->params : &r->opts;
    axis_kind kind = pass == 0 ? AX_PARAM : AX_OPT;
    for (int k = 0; k < b->n && !rc; k++) {
      int over = 0;
      for (int i = 0; i < nover; i++)
        if (okind[i] == kind && strcmp(okey[i], b->keys[k]) == 0) over = 1;
      if (!over && (kind == AX_PARAM || scheme_has_option(r->scheme, b->keys[k])))
        rc = cli_kv_set(dst, b->keys[k], b->values[k]);
    }
    for (int i = 0; i < nover && !rc; i++)
      if (okind[i] == kind && (kind == AX_PARAM || scheme_has_option(r->scheme, okey[i])))
        rc = cli_kv_set(dst, okey[i], oval[i]);
  }
  free(okey), free(oval), free(okind);
  if (rc) {
    cli_kv_free(&r->params);
    cli_kv_free(&r->opts);
  }
  return rc;
}

/* A value in a spec: '|' and '\\' escaped, so no two cases share a spec. */
static void spec_str(FILE *f, const char *v) {
  for (; *v; v++) {
    if (*v == '|' || *v == '\\') fputc('\\', f);
    fputc(*v, f);
  }
}

/* Everything that determines the case's result, one line: a result file
 * with another spec belongs to another study and is redone. */
static char *case_spec(const sweep_study *s, const cli_run *r, long sample) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return cli_error("out of memory."), NULL;
  fprintf(f, "model=%s|scheme=%s|h=%a|t_end=%a|every=%d|halving=%d|linsol=%d|newton_tol=%a|newton=%d", r->model,
          r->scheme, r->h, r->t_end, r->every, r->halving, (int)r->linsol, r->newton_tol, r->newton_kind);
  for (int k = 0; k < r->params.n + r->opts.n; k++) {
    const cli_kv *kv = k < r->params.n ? &r->params : &r->opts;
    int j = k < r->params.n ? k : k - r->params.n;
    fputs(kv == &r->params ? "|param:" : "|opt:", f);
    spec_str(f, kv->keys[j]);
    fputc('=', f);
    spec_str(f, kv->values[j]);
  }
  if (sample >= 0)
    fprintf(f, "|sample=%ld|seed=%llu|pq=%a|pv=%a", sample, (unsigned long long)s->seed, s->pq, s->pv);
  fprintf(f, "|csv=%d", s->case_csv);
  if (fclose(f) != 0 || !buf) {
    free(buf);
    cli_error("out of memory.");
    return NULL;
  }
  return buf;
}

static char *spec_of(const sweep_study *s, long idx) {
  cli_run r;
  long sample;
  if (case_run(s, idx, &r, &sample)) return NULL;
  char *spec = case_spec(s, &r, sample);
  cli_kv_free(&r.params);
  cli_kv_free(&r.opts);
  return spec;
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static double uniform_pm1(uint64_t *x) { return (double)(splitmix64(x) >> 11) * 0x1.0p-52 - 1.0; }

/* Initial values of sample k: q0 o exp(dq), v0 + dv with every component
 * uniform in [-pq, pq] and [-pv, pv], from a generator seeded by the
 * study's seed and k alone (so any rank draws the same numbers). */
static int perturb(const sweep_study *s, lv_model *m, long sample) {
  int nq = lv_model_nq(m), nv = lv_model_nv(m);
  double *q = malloc(sizeof(double) * (size_t)nq), *v = malloc(sizeof(double) * (size_t)nv),
         *dq = malloc(sizeof(double) * (size_t)nv);
  int rc = LV_ENOMEM;
  if (q && v && dq) {
    uint64_t st = s->seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(sample + 1));
    for (int i = 0; i < nv; i++) dq[i] = s->pq * uniform_pm1(&st);
    for (int i = 0; i < nv; i++) v[i] = lv_model_v0(m)[i] + s->pv * uniform_pm1(&st);
    rc = lv_space_compose_exp(lv_model_space(m), lv_model_q0(m), 1.0, dq, q);
    if (!rc) rc = lv_model_set_initial(m, q, v);
  }
  free(q);
  free(v);
  free(dq);
  return rc;
}

static char *case_path(const sweep_study *s, long idx, const char *ext) {
  return xprintf("%s/case-%06ld.%s", s->outdir, idx, ext);
}

static char *tmp_path(const sweep_study *s, const char *name) {
  return xprintf("%s/.%s.tmp.%ld", s->outdir, name, (long)getpid());
}

char *sweep_run_case(const sweep_study *s, long idx, int *interrupted, int *fatal) {
  *interrupted = *fatal = 0;
  double t0 = now();
  cli_run r;
  long sample;
  if (case_run(s, idx, &r, &sample)) return *fatal = 1, NULL;
  char *spec = case_spec(s, &r, sample), *csvpath = NULL, *csvtmp = NULL, *text = NULL;
  FILE *csv = NULL;
  cli_result res;
  memset(&res, 0, sizeof res);
  lv_model *model = NULL;
  const char *status = NULL;
  if (!spec) goto fail;
  int rc = cli_make_model(&r, &model);
  if (rc == CLI_USAGE) status = "invalid-input";
  else if (rc) goto fail;
  if (!status && sample >= 0 && (rc = perturb(s, model, sample)) != 0) {
    cli_error("case %ld: perturbing the initial values failed: %s.", idx, lv_strerror(rc));
    status = lv_status_name(rc);
  }
  if (!status && s->case_csv) {
    char name[48];
    snprintf(name, sizeof name, "case-%06ld.csv", idx);
    if (!(csvpath = case_path(s, idx, "csv")) || !(csvtmp = tmp_path(s, name))) goto fail;
    if (!(csv = fopen(csvtmp, "w"))) {
      cli_error("cannot write '%s': %s.", csvtmp, strerror(errno));
      goto fail;
    }
  }
  if (!status) {
    /* the same metadata lines as `livens run --out` (CSV metadata, issue 17) */
    rc = csv ? cli_meta_run(csv, &r, model) : 0;
    if (!rc) rc = cli_execute(&r, model, csv, 0, &res);
    if (rc == CLI_USAGE) status = "invalid-input";
    else status = res.status ? lv_status_name(res.status) : "ok";
  }
  if (cli_interrupted) {
    *interrupted = 1;
    if (csv) fclose(csv), csv = NULL;
    if (csvtmp) unlink(csvtmp);
    goto done;
  }
  if (csv) {
    int bad = ferror(csv) || fflush(csv) != 0 || fsync(fileno(csv)) != 0;
    int err = errno;
    if (fclose(csv) != 0 && !bad) bad = 1, err = errno;
    csv = NULL;
    if (bad || rename(csvtmp, csvpath) != 0) {
      cli_error("cannot write '%s': %s.", csvpath, strerror(bad ? err : errno));
      unlink(csvtmp);
      goto fail;
    }
  }
  {
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) goto fail;
    const lv_diag_summary *d = &res.sum;
    fprintf(f, "livens-sweep-case 1\ncase %ld\nspec %s\nstatus %s\n", idx, spec, status);
    fprintf(f, "t_final %.17g\nsteps %ld\nnewton_iterations %ld\nfailed_solves %ld\nhalvings %ld\n", res.t_final,
            res.st.steps, res.st.newton_iterations, res.st.failed_solves, res.st.halvings);
    fprintf(f, "max_rel_energy_error %.17g\nmax_abs_energy_error %.17g\nenergy_drift_rate %.17g\n",
            d->max_rel_energy_error, d->max_abs_energy_error, d->energy_drift_rate);
    fprintf(f, "max_momentum_error %.17g\nmax_g %.17g\nmax_gv %.17g\nmax_gp %.17g\n", d->max_momentum_error,
            d->max_g, d->max_gv, d->max_gp);
    fprintf(f, "wall_time %.17g\nend\n", now() - t0);
    if (fclose(f) != 0 || !text) {
      free(text);
      text = NULL;
      goto fail;
    }
  }
  goto done;
fail:
  *fatal = 1;
  if (csv) fclose(csv);
  if (csvtmp) unlink(csvtmp);
done:
  cli_result_free(&res);
  lv_model_free(model);
  cli_kv_free(&r.params);
  cli_kv_free(&r.opts);
  free(spec);
  free(csvpath);
  free(csvtmp);
  return text;
}

/* ------------------------------------------------------------ result files */

typedef struct {
  char status[64];
  double t_final, rel, abs_, drift, mom, g, gv, gp, wall;
  long steps, newton, failed, halvings;
} case_result;

/* Parse a result text; 1 if complete (and, with @p spec, of that case). */
static int parse_result(const char *text, long idx, const char *spec, case_result *cr) {
  memset(cr, 0, sizeof *cr);
  int have = 0, end = 0;
  const char *p = text;
  if (strncmp(p, "livens-sweep-case 1\n", 20) != 0) return 0;
  while (*p) {
    size_t len = strcspn(p, "\n");
    const char *sp = memchr(p, ' ', len);
    if (len == 3 && strncmp(p, "end", 3) == 0) end = 1;
    if (sp) {
      size_t kl = (size_t)(sp - p);
      const char *v = sp + 1;
      size_t vl = len - kl - 1;
#define KEY(k) (kl == sizeof(k) - 1 && strncmp(p, k, kl) == 0)
      if (KEY("case")) {
        if (strtol(v, NULL, 10) != idx) return 0;
        have |= 1;
      } else if (KEY("spec")) {
        if (spec && (vl != strlen(spec) || strncmp(v, spec, vl) != 0)) return 0;
        have |= 2;
      } else if (KEY("status")) {
        if (vl == 0 || vl >= sizeof cr->status) return 0;
        memcpy(cr->status, v, vl);
        cr->status[vl] = '\0';
        have |= 4;
      }
#define NUM(k, field)                           \
  else if (KEY(k)) {                            \
    cr->field = strtod(v, NULL);                \
    have |= 8;                                  \
  }
#define INT(k, field)                           \
  else if (KEY(k)) cr->field = strtol(v, NULL, 10);
      NUM("t_final", t_final) NUM("max_rel_energy_error", rel) NUM("max_abs_energy_error", abs_)
      NUM("energy_drift_rate", drift) NUM("max_momentum_error", mom) NUM("max_g", g) NUM("max_gv", gv)
      NUM("max_gp", gp) NUM("wall_time", wall) INT("steps", steps) INT("newton_iterations", newton)
      INT("failed_solves", failed) INT("halvings", halvings)
#undef KEY
#undef NUM
#undef INT
    }
    p += len + (p[len] == '\n');
  }
  return end && have == 15;
}

/* The text of a file of at most SWEEP_RESULT_MAX bytes, or NULL. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *b = malloc(SWEEP_RESULT_MAX + 1);
  size_t n = b ? fread(b, 1, SWEEP_RESULT_MAX, f) : 0;
  int bad = !b || ferror(f) || n == SWEEP_RESULT_MAX;
  fclose(f);
  if (bad) {
    free(b);
    return NULL;
  }
  b[n] = '\0';
  if (strlen(b) != n) {
    free(b);
    return NULL;
  }
  return b;
}

/* 1 if case idx has a complete result of this study (read into *cr). */
static int read_result(const sweep_study *s, long idx, case_result *cr, int *stale) {
  *stale = 0;
  char *path = case_path(s, idx, "res"), *text = path ? slurp(path) : NULL, *spec = NULL;
  int ok = 0;
  if (text) {
    spec = spec_of(s, idx);
    ok = spec && parse_result(text, idx, spec, cr);
    *stale = !ok;
  }
  free(path);
  free(text);
  free(spec);
  return ok;
}

/* Write text to path through a temporary file in the same directory, with
 * every write, the flush, fsync and close checked, then rename. */
static int write_atomic(const sweep_study *s, const char *path, const char *name, const char *text) {
  char *tmp = tmp_path(s, name);
  if (!tmp) return CLI_FAILED;
  FILE *f = fopen(tmp, "w");
  int rc = CLI_OK;
  if (!f) {
    cli_error("cannot write '%s': %s.", tmp, strerror(errno));
    rc = CLI_FAILED;
  } else {
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n || fflush(f) != 0 || fsync(fileno(f)) != 0;
    int err = errno;
    if (fclose(f) != 0 && !bad) bad = 1, err = errno;
    if (bad || rename(tmp, path) != 0) {
      cli_error("cannot write '%s': %s.", path, strerror(bad ? err : errno));
      unlink(tmp);
      rc = CLI_FAILED;
    }
  }
  free(tmp);
  return rc;
}

/* "scheme=vi-s step=0.05" of case idx (malloc'd). */
static char *axes_label(const sweep_study *s, long idx) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  for (int i = 0; i < s->naxes; i++) fprintf(f, "%s%s=%s", i ? " " : "", s->axes[i].name, axis_value(s, idx, i));
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

int sweep_commit(const sweep_study *s, long idx, const char *text, const char *who, int rank) {
  char *path = case_path(s, idx, "res");
  char name[48];
  snprintf(name, sizeof name, "case-%06ld.res", idx);
  int rc = path ? write_atomic(s, path, name, text) : CLI_FAILED;
  free(path);
  if (rc) return rc;
  case_result cr;
  char *label = axes_label(s, idx), *line = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&line, &len);
  if (f && parse_result(text, idx, NULL, &cr)) {
    /* one line in one write: rank 0's two threads both commit */
    fprintf(f, "case %ld/%ld [%s]: %s", idx + 1, s->ncases, label ? label : "", cr.status);
    if (strcmp(cr.status, "ok") != 0 && strcmp(cr.status, "invalid-input") != 0)
      fprintf(f, " at t = %.6g", cr.t_final);
    fprintf(f, ", max|dE|/E0 = %.3e, %.3f s", cr.rel, cr.wall);
    if (who) fprintf(f, " (%s %d)", who, rank);
    fputc('\n', f);
  }
  if (f && fclose(f) == 0 && line) {
    fputs(line, stdout);
    fflush(stdout);
  }
  free(line);
  free(label);
  return CLI_OK;
}

/* ------------------------------------------------------------ the summary */

static void summary_csv(const sweep_study *s, FILE *f, const case_result *all) {
  fputs("case", f);
  for (int i = 0; i < s->naxes; i++) {
    fputc(',', f);
    sw_csv_field(f, s->axes[i].name);
  }
  if (s->sample_axis >= 0) fputs(",seed", f);
  fputs(",status,t_final,steps,newton_iterations,failed_solves,halvings,max_rel_energy_error,"
        "max_abs_energy_error,energy_drift_rate,max_momentum_error,max_g,max_gv,max_gp,wall_time\n", f);
  for (long c = 0; c < s->ncases; c++) {
    const case_result *r = &all[c];
    fprintf(f, "%ld", c);
    for (int i = 0; i < s->naxes; i++) {
      fputc(',', f);
      sw_csv_field(f, axis_value(s, c, i));
    }
    if (s->sample_axis >= 0) fprintf(f, ",%llu", (unsigned long long)s->seed);
    fputc(',', f);
    sw_csv_field(f, r->status);
    double x[] = {r->t_final, r->rel, r->abs_, r->drift, r->mom, r->g, r->gv, r->gp, r->wall};
    char b[40];
    sw_fmt_double(b, sizeof b, x[0]);
    fprintf(f, ",%s,%ld,%ld,%ld,%ld", b, r->steps, r->newton, r->failed, r->halvings);
    for (int k = 1; k < 9; k++) {
      sw_fmt_double(b, sizeof b, x[k]);
      fprintf(f, ",%s", b);
    }
    fputc('\n', f);
  }
}

static void json_axis_value(FILE *f, const sweep_study *s, int axis, const char *v) {
  double x;
  if (s->axes[axis].kind != AX_SCHEME && s->axes[axis].kind != AX_VARIANT && parse_num(v, &x)) sw_json_number(f, x);
  else sw_json_string(f, v);
}

static void summary_json(const sweep_study *s, FILE *f, const case_result *all) {
  fputs("{\n  \"study\": ", f);
  sw_json_string(f, s->path);
  fputs(",\n  \"model\": ", f);
  sw_json_string(f, s->base.model);
  fputs(",\n  \"base\": {\"scheme\": ", f);
  sw_json_string(f, s->base.scheme);
  fputs(", \"step\": ", f);
  sw_json_number(f, s->base.h);
  fputs(", \"t_end\": ", f);
  sw_json_number(f, s->base.t_end);
  for (int pass = 0; pass < 2; pass++) {
    const cli_kv *kv = pass ? &s->base.opts : &s->base.params;
    fputs(pass ? ", \"opt\": {" : ", \"param\": {", f);
    for (int k = 0; k < kv->n; k++) {
      fputs(k ? ", " : "", f);
      sw_json_string(f, kv->keys[k]);
      fputs(": ", f);
      sw_json_string(f, kv->values[k]);
    }
    fputc('}', f);
  }
  fprintf(f, "},\n  \"combine\": \"%s\",\n  \"axes\": [", s->zip ? "zip" : "grid");
  for (int i = 0; i < s->naxes; i++) {
    fputs(i ? ", " : "", f);
    sw_json_string(f, s->axes[i].name);
  }
  fputs("],\n", f);
  if (s->nvariants) {
    fputs("  \"variants\": {", f);
    for (int k = 0; k < s->nvariants; k++) {
      fputs(k ? ", " : "", f);
      sw_json_string(f, s->variants[k].name);
      fputs(": {", f);
      for (int j = 0; j < s->variants[k].set.n; j++) {
        fputs(j ? ", " : "", f);
        sw_json_string(f, s->variants[k].set.keys[j]);
        fputs(": ", f);
        sw_json_string(f, s->variants[k].set.values[j]);
      }
      fputc('}', f);
    }
    fputs("},\n", f);
  }
  if (s->sample_axis >= 0) {
    fprintf(f, "  \"perturb\": {\"seed\": %llu, \"q\": ", (unsigned long long)s->seed);
    sw_json_number(f, s->pq);
    fputs(", \"v\": ", f);
    sw_json_number(f, s->pv);
    fputs("},\n", f);
  }
  fprintf(f, "  \"ncases\": %ld,\n  \"cases\": [\n", s->ncases);
  for (long c = 0; c < s->ncases; c++) {
    const case_result *r = &all[c];
    fprintf(f, "    {\"case\": %ld", c);
    for (int i = 0; i < s->naxes; i++) {
      fputs(", ", f);
      sw_json_string(f, s->axes[i].name);
      fputs(": ", f);
      json_axis_value(f, s, i, axis_value(s, c, i));
    }
    fputs(", \"status\": ", f);
    sw_json_string(f, r->status);
    const char *names[] = {"t_final", "max_rel_energy_error", "max_abs_energy_error", "energy_drift_rate",
                           "max_momentum_error", "max_g", "max_gv", "max_gp", "wall_time"};
    double x[] = {r->t_final, r->rel, r->abs_, r->drift, r->mom, r->g, r->gv, r->gp, r->wall};
    for (int k = 0; k < 9; k++) {
      fprintf(f, ", \"%s\": ", names[k]);
      sw_json_number(f, x[k]);
      if (k == 0)
        fprintf(f, ", \"steps\": %ld, \"newton_iterations\": %ld, \"failed_solves\": %ld, \"halvings\": %ld",
                r->steps, r->newton, r->failed, r->halvings);
    }
    fprintf(f, "}%s\n", c + 1 < s->ncases ? "," : "");
  }
  fputs("  ]\n}\n", f);
}

static int write_summary(const sweep_study *s, int *nfailed) {
  case_result *all = malloc(sizeof *all * (size_t)s->ncases);
  if (!all) return cli_error("out of memory."), CLI_FAILED;
  *nfailed = 0;
  for (long c = 0; c < s->ncases; c++) {
    int stale;
    if (!read_result(s, c, &all[c], &stale)) {
      cli_error("case %ld has no complete result in '%s' (was it removed while the sweep ran?).", c, s->outdir);
      free(all);
      return CLI_FAILED;
    }
    if (strcmp(all[c].status, "ok") != 0) (*nfailed)++;
  }
  int rc = CLI_OK;
  for (int j = 0; j < 2 && !rc; j++) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
      rc = CLI_FAILED;
      break;
    }
    if (j == 0) summary_csv(s, f, all);
    else summary_json(s, f, all);
    if (fclose(f) != 0 || !text) rc = CLI_FAILED;
    char *path = rc ? NULL : xprintf("%s/summary.%s", s->outdir, j ? "json" : "csv");
    if (!rc) rc = path ? write_atomic(s, path, j ? "summary.json" : "summary.csv", text) : CLI_FAILED;
    free(path);
    free(text);
  }
  free(all);
  return rc;
}

/* ------------------------------------------------------------ the output directory */

/* Create (one level) and lock the output directory; remove the temporary
 * files a killed sweep left.  The lock (fcntl, released when the process
 * ends) keeps two sweeps from writing one directory. */
static int prepare_dir(const sweep_study *s, int *lockfd) {
  struct stat st;
  if (mkdir(s->outdir, 0777) != 0 && errno != EEXIST)
    return cli_error("cannot create the output directory '%s': %s.", s->outdir, strerror(errno)), CLI_USAGE;
  if (stat(s->outdir, &st) != 0 || !S_ISDIR(st.st_mode))
    return cli_error("the output '%s' is not a directory.", s->outdir), CLI_USAGE;
  char *lock = xprintf("%s/.lock", s->outdir);
  if (!lock) return CLI_FAILED;
  *lockfd = open(lock, O_RDWR | O_CREAT, 0666);
  if (*lockfd < 0) {
    cli_error("cannot write '%s': %s.", lock, strerror(errno));
    free(lock);
    return CLI_FAILED;
  }
  free(lock);
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fcntl(*lockfd, F_SETLK, &fl) != 0)
    return cli_error("another sweep is writing '%s' (it holds the lock on its .lock file).", s->outdir), CLI_USAGE;
  DIR *d = opendir(s->outdir);
  if (!d) return cli_error("cannot read '%s': %s.", s->outdir, strerror(errno)), CLI_FAILED;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) {
      char *p = xprintf("%s/%s", s->outdir, e->d_name);
      if (p) unlink(p);
      free(p);
    }
  closedir(d);
  return CLI_OK;
}

/* The seed of the perturbations: the file's, else the one a first run
 * chose and kept in DIR/seed (so a rerun continues the same study); a new
 * one is chosen only when @p create. */
static int choose_seed(sweep_study *s, int create) {
  if (s->sample_axis < 0 || s->seed_given) return CLI_OK;
  char *path = xprintf("%s/seed", s->outdir);
  if (!path) return CLI_FAILED;
  char *text = slurp(path);
  int rc = CLI_OK;
  char *end = NULL;
  if (text) {
    errno = 0;
    s->seed = strtoull(text, &end, 10);
    if (end == text || (*end && *end != '\n') || errno) {
      cli_error("'%s' does not hold a seed (a whole number); remove it to choose a new one.", path);
      rc = CLI_USAGE;
    }
  } else if (create) {
    uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    x ^= (uint64_t)(now() * 1e9);
    s->seed = splitmix64(&x) >> 1;
    char b[32];
    snprintf(b, sizeof b, "%llu\n", (unsigned long long)s->seed);
    rc = write_atomic(s, path, "seed", b);
    if (!rc) printf("perturbation seed %llu (chosen; kept in %s)\n", (unsigned long long)s->seed, path);
  }
  free(text);
  free(path);
  return rc;
}

/* ------------------------------------------------------------ the command */

static const char sweep_usage[] =
    "'sweep' needs one study FILE (usage: livens sweep FILE [--out DIR] [--jobs N] [--list]).";

int cli_sweep(int argc, char **argv) {
  int rank = 0, size = 1;
  sweep_mpi_start(&rank, &size);
  if (size < 0) {
    cli_error("this livens was built without MPI, so under mpirun every process would run the whole sweep: run it "
              "without mpirun, or build with configure --with-mpi.");
    return CLI_USAGE;
  }
  static const struct option lo[] = {{"out", required_argument, 0, 'o'},
                                     {"list", no_argument, 0, 'l'},
                                     {"jobs", required_argument, 0, 'j'},
                                     {0, 0, 0, 0}};
  const char *outarg = NULL;
  int list = 0, jobs = 1, c, rc = CLI_OK;
  opterr = 0;
  optind = 1;
  while (!rc && (c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    if (c == 'o' && optarg[0]) outarg = optarg;
    else if (c == 'l') list = 1;
    else if (c == 'j') {
      char *end;
      errno = 0;
      long v = strtol(optarg, &end, 10);
      if (end == optarg || *end || errno || v < 1 || v > 1024)
        cli_error("--jobs must be an integer in [1, 1024], got '%s'.", optarg), rc = CLI_USAGE;
      else jobs = (int)v;
    }
    else if (c == 'o') cli_error("--out needs a directory name, got an empty one."), rc = CLI_USAGE;
    else cli_error("unknown or incomplete option '%s' for 'sweep' (see 'livens --help').", argv[optind - 1]), rc = CLI_USAGE;
  }
  if (!rc && optind != argc - 1) cli_error("%s", sweep_usage), rc = CLI_USAGE;
  if (!rc && jobs > 1 && size > 1)
    cli_error("--jobs starts a local pool; under mpirun the ranks are the pool: use one or the other."), rc = CLI_USAGE;
  sweep_study s;
  memset(&s, 0, sizeof s);
  s.sample_axis = s.variant_axis = -1;
  cli_run_defaults(&s.base);
  if (!rc) {
    s.path = argv[optind];
    rc = cli_load_runfile_ex(s.path, &s.base, study_section, &s);
  }
  if (!rc && (s.base.checkpoint[0] || s.base.resume[0])) { /* issue 17: one file per run, not per sweep */
    cli_error("%s: checkpoint and resume apply to 'run' only, not to a sweep.", s.path);
    rc = CLI_USAGE;
  }
  if (!rc) rc = study_check(&s);
  if (!rc && outarg) {
    free(s.outdir);
    if (!(s.outdir = xprintf("%s", outarg))) rc = CLI_FAILED;
  }
  if (!rc && !s.outdir) {
    /* the file's name without directory and .ini, in the current directory */
    const char *base = strrchr(s.path, '/') ? strrchr(s.path, '/') + 1 : s.path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".ini") == 0) n -= 4;
    if (!(s.outdir = xprintf("%.*s-sweep", (int)n, base))) rc = CLI_FAILED;
  }
  int lockfd = -1;
  long *pending = NULL, npending = 0, ndone = 0, nstale = 0;
  if (!rc && rank == 0 && list) {
    rc = choose_seed(&s, 0);
    for (long i = 0; i < s.ncases && !rc; i++) {
      char *label = axes_label(&s, i);
      case_result cr;
      int stale;
      int done = read_result(&s, i, &cr, &stale);
      printf("case %ld/%ld [%s]%s\n", i + 1, s.ncases, label ? label : "",
             done ? " complete" : stale ? " stale" : "");
      free(label);
    }
  } else if (!rc && rank == 0) {
    rc = prepare_dir(&s, &lockfd);
    if (!rc) rc = choose_seed(&s, 1);
    if (!rc && !(pending = malloc(sizeof *pending * (size_t)s.ncases))) cli_error("out of memory."), rc = CLI_FAILED;
    for (long i = 0; i < s.ncases && !rc; i++) {
      case_result cr;
      int stale;
      if (read_result(&s, i, &cr, &stale)) ndone++;
      else {
        pending[npending++] = i;
        nstale += stale;
      }
    }
    if (!rc)
      printf("sweep %s: %ld cases (%s of %d axes) into %s: %ld complete, %ld to run\n", s.path, s.ncases,
             s.zip ? "zip" : "grid", s.naxes, s.outdir, ndone, npending);
    if (!rc && nstale) printf("%ld result files describe another case or are damaged: redone\n", nstale);
    fflush(stdout);
  } else if (!rc && s.case_csv && mkdir(s.outdir, 0777) != 0 && errno != EEXIST) {
    /* a rank on another machine writes its cases' CSVs there */
    cli_error("cannot create the output directory '%s': %s.", s.outdir, strerror(errno));
    rc = CLI_FAILED;
  }
  /* every rank stops if one cannot start; the workers take rank 0's seed */
  if (size > 1 && !list) {
    if (!sweep_mpi_agree(rc == CLI_OK)) rc = rc ? rc : CLI_FAILED;
    else sweep_mpi_bcast_u64(&s.seed);
  }
  long run = 0;
  int interrupted = 0;
  struct sigaction sa, oldint, oldterm;
  memset(&sa, 0, sizeof sa);
  /* Between cases (cli_execute has its own handler inside one) SIGINT and
   * SIGTERM only mark the sweep interrupted: no case starts after them. */
  sa.sa_handler = cli_note_signal;
  sigaction(SIGINT, &sa, &oldint);
  sigaction(SIGTERM, &sa, &oldterm);
  if (!rc && !list) {
    if (size > 1 && rank == 0) rc = sweep_mpi_serve(&s, pending, npending, &run);
    else if (jobs > 1 && npending > 0) rc = sweep_pool_serve(&s, pending, npending, jobs, &run);
    else if (size > 1) rc = sweep_mpi_work(&s);
    else
      for (long k = 0; k < npending && !rc; k++) {
        int fatal;
        if (cli_interrupted) {
          rc = CLI_FAILED;
          break;
        }
        char *text = sweep_run_case(&s, pending[k], &interrupted, &fatal);
        if (interrupted) rc = CLI_FAILED;
        else if (!text) rc = CLI_FAILED;
        else if (!(rc = sweep_commit(&s, pending[k], text, NULL, 0))) run++;
        free(text);
      }
    if (rank == 0) {
      int nfailed = 0;
      if (!rc) rc = write_summary(&s, &nfailed);
      if (!rc)
        printf("sweep done: %ld cases, %ld run now, %ld complete before (skipped), %d not ok; summary: %s/summary.csv, "
               "%s/summary.json\n", s.ncases, run, ndone, nfailed, s.outdir, s.outdir);
      else
        cli_error("sweep stopped: %ld cases run now, %ld of %ld complete; rerun 'livens sweep %s' to finish.", run,
                  ndone + run, s.ncases, s.path);
    }
  }
  cli_signals_restore(&oldint, &oldterm);
  if (lockfd >= 0) close(lockfd);
  free(pending);
  study_free(&s);
  sweep_mpi_stop();
  return rc;
}
