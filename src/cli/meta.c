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

int cli_meta_run(FILE *f, const cli_run *r, const lv_model *m) {
  cli_meta_begin(f, "run");
  cli_meta_model(f, r);
  cli_meta_scheme(f, r->scheme, &r->opts);
  cli_meta_settings(f, r);
  /* a resumed run's rows start at the checkpoint, not at t = 0 (issue 17) */
  if (r->resume[0]) cli_meta_put(f, "resumed_from", r->resume);
  cli_meta_units(f, r, m, 0); /* issue 17 */
  return cli_meta_end(f, r->out);
}

int cli_meta_end(FILE *f, const char *path) {
  errno = 0;
  if (fflush(f) != 0 || ferror(f)) {
    int e = cli_rows_errno(f, errno);
    cli_error("cannot write %s: %s.", path && path[0] ? path : "the CSV output", strerror(e ? e : EIO));
    return CLI_FAILED;
  }
  return CLI_OK;
}

/* ------------------------------------------------------------------ units
 * SI units of the built-in models' columns (issue 17), written as metadata
 * ("# unit.t = s", "# unit.q1..q3 = m", ...) so that livens plot labels its
 * axes.  A multiplier's unit is the energy's over its constraint's (J for a
 * dimensionless constraint, N for one in metres).  "1" marks a
 * dimensionless entry (a rotation-matrix or director entry).  Models whose
 * quantities carry no units (four-particle), plugins, system files and
 * formulations not listed here (directors, multibody) say nothing rather
 * than guess; the gamma and p columns are left out. */

/* n consecutive entries of unit u; a list repeats to fill its group, and
 * ends with {0, NULL}. */
typedef struct {
  int n;
  const char *u;
} useg;

static const useg U_M[] = {{1, "m"}, {0, NULL}}, U_MS[] = {{1, "m/s"}, {0, NULL}}, U_N[] = {{1, "N"}, {0, NULL}},
                  U_J[] = {{1, "J"}, {0, NULL}}, U_NM[] = {{1, "N/m"}, {0, NULL}},
                  U_BODY_Q[] = {{3, "m"}, {9, "1"}, {0, NULL}},          /* (x, R) */
    U_BODY_V[] = {{3, "m/s"}, {3, "rad/s"}, {0, NULL}},                  /* (u or U, Omega) */
    U_R[] = {{9, "1"}, {0, NULL}}, U_OMEGA[] = {{3, "rad/s"}, {0, NULL}}, /* SO(3) */
    U_UDQ_Q[] = {{4, "1"}, {4, "m"}, {0, NULL}},                         /* (r, d = x r / 2) */
    U_EP_Q[] = {{3, "m"}, {4, "1"}, {0, NULL}}, U_EP_V[] = {{3, "m/s"}, {4, "1/s"}, {0, NULL}},
    U_EP_L[] = {{3, "N"}, {1, "J"}, {0, NULL}},
    U_CTB_Q[] = {{3, "m"}, {3, "rad"}, {0, NULL}}, U_CTB_V[] = {{3, "m/s"}, {3, "rad/s"}, {0, NULL}},
    U_SC_L[] = {{3, "N"}, {2, "J"}, {3, "N"}, {3, "N"}, {1, "J"}, {2, "N"}, {3, "J"}, {0, NULL}},
    U_GT_V[] = {{3, "m/s"}, {9, "1/s"}, {0, NULL}};

typedef struct {
  const char *model, *formulation; /* formulation NULL: any */
  const char *momentum, *g, *gv;   /* NULL: not given (mixed or none) */
  const useg *q, *v, *lambda;
} model_units;

static const model_units UNITS[] = {
    {"pendulum3d", NULL, "J s", "1", "1/s", U_M, U_MS, U_J}, /* g = (|q|^2/l^2 - 1)/2 */
    {"pendulum2d", NULL, "J s", "m²", "m²/s", U_M, U_MS, U_NM}, /* g = (|q|^2 - l^2)/2 */
    {"chain", NULL, "J s", "m", "m/s", U_M, U_MS, U_N},       /* g = (|d|^2 - l^2)/(2l) */
    {"rigid-chain", NULL, "J s", "m", "m/s", U_BODY_Q, U_BODY_V, U_N},
    {"heavy-top", "r3so3", "J s", "m", "m/s", U_BODY_Q, U_BODY_V, U_N},
    {"heavy-top", "se3", "J s", "m", "m/s", U_BODY_Q, U_BODY_V, U_N},
    {"heavy-top", "udq", "J s", "m", "m/s", U_UDQ_Q, U_BODY_V, U_N},
    {"heavy-top", "so3", "J s", NULL, NULL, U_R, U_OMEGA, NULL},
    {"heavy-top", "directors", NULL, NULL, NULL, NULL, NULL, NULL},
    {"heavy-top-ep", NULL, "J s", NULL, NULL, U_EP_Q, U_EP_V, U_EP_L}, /* joint (m), norm (1) */
    {"heavy-top-ctb", NULL, "J s", "m", "m/s", U_CTB_Q, U_CTB_V, U_N},
    {"rotor", NULL, "J s", NULL, NULL, U_BODY_Q, U_BODY_V, NULL},
    {"slider-crank", "r3so3", "J s", NULL, NULL, U_BODY_Q, U_BODY_V, U_SC_L}, /* points (m), axes (1) */
    {"slider-crank", "directors", NULL, NULL, NULL, NULL, NULL, NULL},
    {"gyro-top", NULL, "J s", "1", "1/s", U_BODY_Q, U_GT_V, U_J}, /* (phi, d1, d2, d3); g dimensionless */
    {"double-pendulum", NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"kapitza", NULL, NULL, NULL, NULL, U_M, U_MS, NULL}, /* g in m and m², lambda in N and N/m */
};

/* The row of a run's model, or NULL when it has no units. */
static const model_units *units_of(const cli_run *r) {
  if (r->model_lib[0] || cli_is_system_file(r->model)) return NULL;
  const char *form = NULL;
  for (const lv_param_info *p = cli_model_params(r->model); p && p->name; p++)
    if (!strcmp(p->name, "formulation")) form = cli_kv_get(&r->params, "formulation", p->default_value);
  for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++)
    if (!strcmp(UNITS[i].model, r->model) && (!UNITS[i].formulation || (form && !strcmp(UNITS[i].formulation, form))))
      return &UNITS[i];
  return NULL;
}

/* Unit of entry i (0-based) of a group of n under pattern @p s, NULL when
 * the pattern does not tile the group. */
static const char *unit_at(const useg *s, int n, int i) {
  int period = 0;
  for (const useg *p = s; p && p->u; p++) period += p->n;
  if (!period || n % period) return NULL;
  int k = i % period;
  for (const useg *p = s; p->u; p++) {
    if (k < p->n) return p->u;
    k -= p->n;
  }
  return NULL;
}

/* The one unit of every entry of the group, or NULL. */
static const char *unit_common(const useg *s, int n) {
  const char *u = n > 0 ? unit_at(s, n, 0) : NULL;
  for (int i = 1; i < n && u; i++)
    if (strcmp(unit_at(s, n, i), u) != 0) u = NULL;
  return u;
}

/* "# unit.q1..q3 = m" for each run of equal units; nothing when the
 * pattern does not fit or there would be more than 64 lines. */
static void put_group(FILE *f, const char *name, const useg *s, int n) {
  if (!s || n <= 0 || !unit_at(s, n, 0)) return;
  int runs = 1;
  for (int i = 1; i < n; i++) runs += strcmp(unit_at(s, n, i), unit_at(s, n, i - 1)) != 0;
  if (runs > 64) return;
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && !strcmp(unit_at(s, n, j + 1), unit_at(s, n, i))) j++;
    char key[64];
    if (j > i) snprintf(key, sizeof key, "unit.%s%d..%s%d", name, i + 1, name, j + 1);
    else snprintf(key, sizeof key, "unit.%s%d", name, i + 1);
    cli_meta_put(f, key, unit_at(s, n, i));
    i = j + 1;
  }
}

void cli_meta_units(FILE *f, const cli_run *r, const lv_model *m, int convergence) {
  const model_units *u = units_of(r);
  if (!u || !m) return;
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  if (convergence) {
    const char *eq = nq == nv ? unit_common(u->q, nq) : NULL; /* a Lie group's: mixed */
    cli_meta_put(f, "unit.h", "s");
    if (eq) cli_meta_put(f, "unit.err_q", eq);
    if (unit_common(u->v, nv)) cli_meta_put(f, "unit.err_v", unit_common(u->v, nv));
    if (nc && unit_common(u->lambda, nc)) cli_meta_put(f, "unit.err_lambda", unit_common(u->lambda, nc));
    return;
  }
  cli_meta_put(f, "unit.t", "s");
  cli_meta_put(f, "unit.energy", "J");
  if (u->momentum && lv_model_nsym(m) > 0) cli_meta_put(f, "unit.momentum", u->momentum);
  if (nc && u->g) cli_meta_put(f, "unit.g_norm", u->g);
  if (nc && u->gv) cli_meta_put(f, "unit.gv_norm", u->gv);
  put_group(f, "q", u->q, nq);
  put_group(f, "v", u->v, nv);
  if (nc) put_group(f, "lambda", u->lambda, nc);
}
