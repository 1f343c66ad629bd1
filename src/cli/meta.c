/* Metadata of every CSV the livens program writes (issue 17): '#' comment
 * lines before the column header, one "# key = value" per line, naming the
 * program version, the kind of file, the model with every parameter (given
 * or default), the scheme with every option, and the run settings.  Readers
 * (livens plot, numpy.loadtxt, pandas with comment='#') skip them; livens
 * plot takes its titles and legends from them.
 *
 * A value is user text: a backslash, a newline, a carriage return or any
 * other control byte is written as an escape (\\, \n, \r, \xHH), so a value
 * can never end its comment line and start a row. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include "cli.h"

const char *cli_kv_get(const cli_kv *l, const char *key, const char *dflt) {
  for (int i = l ? l->n - 1 : -1; i >= 0; i--)
    if (strcmp(l->keys[i], key) == 0) return l->values[i];
  return dflt;
}

const lv_param_info *cli_model_params(const char *model) {
  const lv_model_info *m = cli_find_model(model);
  return m ? m->params : NULL;
}

void cli_meta_put(FILE *f, const char *key, const char *value) {
  fprintf(f, "# %s = ", key);
  for (const unsigned char *s = (const unsigned char *)(value ? value : ""); *s; s++) {
    if (*s == '\\') fputs("\\\\", f);
    else if (*s == '\n') fputs("\\n", f);
    else if (*s == '\r') fputs("\\r", f);
    else if (*s < 0x20 || *s == 0x7f) fprintf(f, "\\x%02x", *s);
    else fputc(*s, f);
  }
  fputc('\n', f);
}

void cli_meta_num(FILE *f, const char *key, double x) {
  char b[40];
  snprintf(b, sizeof b, "%.17g", x);
  cli_meta_put(f, key, b);
}

static const char *newton_name(int k) {
  switch (k) {
    case LV_NEWTON_FULL: return "full";
    case LV_NEWTON_SIMPLIFIED: return "simplified";
    case LV_NEWTON_MODIFIED: return "modified";
    default: return "default";
  }
}

void cli_meta_begin(FILE *f, const char *kind) {
  cli_meta_put(f, "livens", lv_version());
  cli_meta_put(f, "kind", kind);
}

void cli_meta_model(FILE *f, const cli_run *r) {
  char k[300];
  cli_meta_put(f, "model", r->model);
  if (r->model_lib[0]) cli_meta_put(f, "model-lib", r->model_lib);
  for (const lv_param_info *p = cli_model_params(r->model); p && p->name; p++) {
    snprintf(k, sizeof k, "param.%s", p->name);
    cli_meta_put(f, k, cli_kv_get(&r->params, p->name, p->default_value));
  }
}

void cli_meta_scheme(FILE *f, const char *scheme, const cli_kv *opts) {
  char k[300];
  cli_meta_put(f, "scheme", scheme);
  const lv_scheme_type *t = lv_scheme_find(scheme);
  for (const lv_param_info *p = t ? t->options : NULL; p && p->name; p++) {
    snprintf(k, sizeof k, "opt.%s", p->name);
    cli_meta_put(f, k, cli_kv_get(opts, p->name, p->default_value));
  }
}

void cli_meta_settings(FILE *f, const cli_run *r) {
  cli_meta_num(f, "h", r->h);
  cli_meta_num(f, "t_end", r->t_end);
  if (r->output_dt > 0) cli_meta_num(f, "output_dt", r->output_dt);
  else if (r->output_times[0]) cli_meta_put(f, "output_times", r->output_times);
  else {
    char b[24];
    snprintf(b, sizeof b, "%d", r->every);
    cli_meta_put(f, "every", b);
  }
  cli_meta_put(f, "linsol", lv_linsol_kind_name(r->linsol));
  cli_meta_put(f, "newton", newton_name(r->newton_kind));
  if (r->newton_tol > 0) cli_meta_num(f, "newton_tol", r->newton_tol);
  else cli_meta_put(f, "newton_tol", "default");
  char b[24];
  snprintf(b, sizeof b, "%d", r->halving);
  cli_meta_put(f, "halving", b);
}

int cli_meta_run(FILE *f, const cli_run *r) {
  cli_meta_begin(f, "run");
  cli_meta_model(f, r);
  cli_meta_scheme(f, r->scheme, &r->opts);
  cli_meta_settings(f, r);
  /* a resumed run's rows start at the checkpoint, not at t = 0 (issue 17) */
  if (r->resume[0]) cli_meta_put(f, "resumed_from", r->resume);
  return cli_meta_end(f, r->out);
}

int cli_meta_end(FILE *f, const char *path) {
  errno = 0;
  if (fflush(f) != 0 || ferror(f)) {
    cli_error("cannot write %s: %s.", path && path[0] ? path : "the CSV output", strerror(errno ? errno : EIO));
    return CLI_FAILED;
  }
  return CLI_OK;
}
