/* JSON output of the livens program (issue 17): string escaping, numbers,
 * and the summary of one run as one object.  Small and self-contained so
 * other subcommands (compare --out, sweep) reuse it.
 *
 * Strings are user text (model names, parameter values, file names): every
 * byte that JSON does not allow raw is escaped (quote, backslash, control
 * bytes), and bytes that are not well-formed UTF-8 become U+FFFD, so the
 * output always parses whatever the input. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>
#include "cli.h"

int cli_utf8_len(const char *p) {
  const unsigned char *s = (const unsigned char *)p;
  if (s[0] < 0x80) return 1;
  int n;
  unsigned min;
  unsigned cp;
  if (s[0] >= 0xc2 && s[0] <= 0xdf) n = 2, min = 0x80, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef) n = 3, min = 0x800, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4) n = 4, min = 0x10000, cp = s[0] & 0x07;
  else return 0;
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

void cli_json_string(FILE *f, const char *s) {
  fputc('"', f);
  while (s && *s) {
    unsigned char c = (unsigned char)*s;
    int n = cli_utf8_len(s);
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c), s++;
    else if (c == '\n') fputs("\\n", f), s++;
    else if (c == '\t') fputs("\\t", f), s++;
    else if (c == '\r') fputs("\\r", f), s++;
    else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c), s++;
    else if (n == 0) fputs("\\ufffd", f), s++;
    else fwrite(s, 1, (size_t)n, f), s += n;
  }
  fputc('"', f);
}

void cli_json_number(FILE *f, double x) {
  if (isfinite(x)) fprintf(f, "%.17g", x);
  else fputs("null", f);
}

/* "key": value pairs, comma-separated by the caller's counter. */
static void key(FILE *f, int *first, const char *k) {
  fputs(*first ? "\n  " : ",\n  ", f);
  *first = 0;
  cli_json_string(f, k);
  fputs(": ", f);
}

static void num(FILE *f, int *first, const char *k, double x) {
  key(f, first, k);
  cli_json_number(f, x);
}

static void str(FILE *f, int *first, const char *k, const char *v) {
  key(f, first, k);
  cli_json_string(f, v);
}

/* {"name": "value", ...} of every model parameter (given or default), or
 * of the scheme options (all, given or default). */
static void kv_object(FILE *f, const lv_param_info *info, const cli_kv *given) {
  fputc('{', f);
  int n = 0;
  for (const lv_param_info *p = info; p && p->name; p++, n++) {
    if (n) fputs(", ", f);
    cli_json_string(f, p->name);
    fputs(": ", f);
    cli_json_string(f, cli_kv_get(given, p->name, p->default_value));
  }
  fputc('}', f);
}

int cli_json_summary(FILE *f, const cli_run *r, const cli_result *res) {
  int first = 1;
  fputc('{', f);
  str(f, &first, "livens_version", lv_version());
  str(f, &first, "model", r->model);
  key(f, &first, "params");
  kv_object(f, cli_model_params(r->model), &r->params);
  str(f, &first, "scheme", r->scheme);
  key(f, &first, "options");
  const lv_scheme_type *t = lv_scheme_find(r->scheme);
  kv_object(f, t ? t->options : NULL, &r->opts);
  num(f, &first, "h", r->h);
  num(f, &first, "t_end", r->t_end);
  num(f, &first, "t_final", res->t_final);
  str(f, &first, "status", res->status ? lv_status_name(res->status) : "ok");
  num(f, &first, "energy0", res->sum.energy0);
  num(f, &first, "max_rel_energy_error", res->sum.max_rel_energy_error);
  num(f, &first, "max_abs_energy_error", res->sum.max_abs_energy_error);
  num(f, &first, "energy_drift_rate", res->sum.energy_drift_rate);
  num(f, &first, "max_momentum_error", res->sum.max_momentum_error);
  num(f, &first, "max_g", res->sum.max_g);
  num(f, &first, "max_gv", res->sum.max_gv);
  num(f, &first, "max_gp", res->sum.max_gp);
  num(f, &first, "samples", (double)res->sum.samples);
  num(f, &first, "steps", (double)res->st.steps);
  num(f, &first, "newton_iterations", (double)res->st.newton_iterations);
  num(f, &first, "factorizations", (double)res->st.factorizations);
  num(f, &first, "failed_solves", (double)res->st.failed_solves);
  num(f, &first, "halvings", (double)res->st.halvings);
  num(f, &first, "wall_time", res->st.wall_time);
  str(f, &first, "linsol", lv_linsol_kind_name(res->st.linsol));
  num(f, &first, "sparse_flops_per_entry", res->st.sparse_flops_per_entry);
  key(f, &first, "projected");
  fputs(res->st.projected ? "true" : "false", f);
  fputs("\n}\n", f);
  return ferror(f) ? CLI_FAILED : CLI_OK;
}
