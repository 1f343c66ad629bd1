/* converge --reference FILE.csv (issue 17): the reference solution of a
 * convergence study read from a CSV instead of computed by a finer run.
 *
 * The file is a livens run CSV of the same model (any scheme, any step, any
 * output selection) or any CSV whose header names the columns t, q1..qNQ,
 * v1..vNV and, optionally, lambda1..lambdaNC of the model; other columns are
 * ignored, '#' lines are comments.  Where the file carries livens metadata
 * ("# model = ...", "# param.K = V", "# kind = ..."), it must describe the
 * same model with the same parameters: a reference of another system would
 * give errors that mean nothing, so that is a usage error, like a missing
 * column, a column beyond the model's dimensions (q4 for a model with three
 * coordinates), a field that is not a finite number or times that do not
 * increase.  Every message is one sentence naming the file (and the line).
 *
 * Hostile input: lines are read with getline (no fixed line buffer), every
 * field is parsed with strtod and checked to its end, the stored rows are
 * capped (1.6 GB), and no file text reaches a format string. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* "q12" -> prefix "q", index 12; 0 if @p s is not PREFIX + positive decimal. */
static long col_index(const char *s, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(s, prefix, n) != 0 || s[n] < '1' || s[n] > '9') return 0;
  char *end;
  errno = 0;
  long k = strtol(s + n, &end, 10);
  return (*end || errno || k > 100000000) ? 0 : k;
}

/* Trim spaces and the line end in place. */
static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = '\0';
  return s;
}

/* A metadata value as written by cli_meta_put, unescaped in place. */
static void unescape(char *s) {
  char *o = s;
  for (; *s; s++) {
    if (*s != '\\' || !s[1]) {
      *o++ = *s;
      continue;
    }
    s++;
    if (*s == 'n') *o++ = '\n';
    else if (*s == 'r') *o++ = '\r';
    else if (*s == 'x' && s[1] && s[2]) {
      char hex[3] = {s[1], s[2], 0}, *e;
      long v = strtol(hex, &e, 16);
      if (*e || v <= 0) *o++ = '?';
      else *o++ = (char)v;
      s += 2;
    } else *o++ = *s;
  }
  *o = '\0';
}

/* The same value, as numbers when both are numbers. */
static int same_value(const char *a, const char *b) {
  char *ea, *eb;
  double x = strtod(a, &ea), y = strtod(b, &eb);
  if (ea != a && eb != b && !*ea && !*eb && isfinite(x) && isfinite(y))
    return fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y));
  return strcmp(a, b) == 0;
}

/* One "# key = value" line against the run; CLI_OK or CLI_USAGE. */
static int check_meta(char *line, const char *path, const cli_run *r, cli_reference *ref) {
  char *s = line + 1, *eq = strstr(s, " = ");
  if (!eq) return CLI_OK; /* a plain comment */
  *eq = '\0';
  char *key = trim(s), *val = eq + 3;
  size_t n = strcspn(val, "\r\n");
  val[n] = '\0';
  unescape(val);
  if (!strcmp(key, "kind") && strcmp(val, "run") != 0) {
    cli_error("the reference '%s' is not a run CSV (its metadata says kind = %.40s).", path, val);
    return CLI_USAGE;
  }
  if (!strcmp(key, "model") && strcmp(val, r->model) != 0) {
    cli_error("the reference '%s' is a run of model '%.200s', not of '%s'.", path, val, r->model);
    return CLI_USAGE;
  }
  if (!strncmp(key, "param.", 6)) {
    const char *name = key + 6, *dflt = NULL;
    const lv_param_info *p = cli_model_params(r->model);
    for (; p && p->name; p++)
      if (!strcmp(p->name, name)) dflt = p->default_value ? p->default_value : "";
    if (!dflt) {
      cli_error("the reference '%s' sets parameter '%.100s', which model '%s' does not have.", path, name, r->model);
      return CLI_USAGE;
    }
    const char *mine = cli_kv_get(&r->params, name, dflt);
    if (!same_value(val, mine)) {
      cli_error("the reference '%s' was computed with %.100s = %.100s, this study uses %.100s = %.100s.", path, name,
                val, name, mine);
      return CLI_USAGE;
    }
  }
  if (!strcmp(key, "h")) {
    char *e;
    double h = strtod(val, &e);
    if (e != val && !*e && isfinite(h) && h > 0) ref->h = h;
  }
  if (!strcmp(key, "scheme") && strlen(val) < sizeof ref->scheme) strcpy(ref->scheme, val);
  return CLI_OK;
}

int cli_reference_read(const char *path, const cli_run *r, const lv_model *m, cli_reference *ref) {
  memset(ref, 0, sizeof *ref);
  ref->nq = lv_model_nq(m), ref->nv = lv_model_nv(m), ref->nc = lv_model_nc(m);
  FILE *in = fopen(path, "r");
  if (!in) {
    cli_error("cannot read the reference '%s': %s.", path, strerror(errno));
    return CLI_USAGE;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  long lineno = 0, ncol = 0, *map = NULL; /* map[k]: column of state entry k, or of t for k = dim */
  int rc = CLI_OK;
  while ((got = getline(&line, &cap, in)) > 0 && line[0] == '#' && !rc) {
    lineno++;
    rc = check_meta(line, path, r, ref);
  }
  if (rc) goto done;
  if (got <= 0) {
    cli_error("the reference '%s' has no header line (t, q1, ...).", path);
    rc = CLI_USAGE;
    goto done;
  }
  lineno++;
  /* the header: where t, q_k, v_k, lambda_k are */
  long dim = ref->nq + ref->nv + ref->nc;
  if (!(map = malloc(sizeof *map * (size_t)(dim + 1)))) {
    cli_error("out of memory.");
    rc = CLI_FAILED;
    goto done;
  }
  for (long k = 0; k <= dim; k++) map[k] = -1;
  int nlam = 0;
  {
    char *save = NULL;
    for (char *tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save), ncol++) {
      char *name = trim(tok);
      static const char *const pre[3] = {"q", "v", "lambda"};
      const long size[3] = {ref->nq, ref->nv, ref->nc}, off[3] = {0, ref->nq, ref->nq + ref->nv};
      if (!strcmp(name, "t")) map[dim] = ncol;
      for (int g = 0; g < 3; g++) {
        long k = col_index(name, pre[g]);
        if (!k) continue;
        if (k > size[g]) {
          cli_error("the reference '%s' has a column %.40s, but model '%s' has only %ld (%s1..%s%ld): it is not a "
                    "solution of this model.",
                    path, name, r->model, size[g], pre[g], pre[g], size[g]);
          rc = CLI_USAGE;
          goto done;
        }
        map[off[g] + k - 1] = ncol;
        nlam += g == 2;
      }
    }
  }
  {
    /* t, every q and v; lambda all or none */
    const char *missing = NULL;
    char what[40];
    if (map[dim] < 0) missing = "t";
    for (long k = 0; k < ref->nq + ref->nv && !missing; k++)
      if (map[k] < 0) {
        snprintf(what, sizeof what, "%s%ld", k < ref->nq ? "q" : "v", k < ref->nq ? k + 1 : k - ref->nq + 1);
        missing = what;
      }
    for (long k = 0; k < ref->nc && !missing && nlam; k++)
      if (map[ref->nq + ref->nv + k] < 0) snprintf(what, sizeof what, "lambda%ld", k + 1), missing = what;
    if (missing) {
      cli_error("the reference '%s' has no column '%s' (it needs t, q1..q%d, v1..v%d and optionally lambda1..lambda%d "
                "of model '%s').",
                path, missing, ref->nq, ref->nv, ref->nc, r->model);
      rc = CLI_USAGE;
      goto done;
    }
  }
  if (!nlam) { /* no lambda: t moves down to the new end of the map */
    map[ref->nq + ref->nv] = map[dim];
    ref->nc = 0, dim = ref->nq + ref->nv;
  }
  /* the rows */
  char **f = malloc(sizeof *f * (size_t)ncol);
  long cap_rows = 0;
  if (!f) {
    cli_error("out of memory.");
    rc = CLI_FAILED;
    goto done;
  }
  while (!rc && (got = getline(&line, &cap, in)) > 0) {
    lineno++;
    if (line[0] == '#') continue;
    if (!trim(line)[0]) continue;
    long n = 0;
    char *s = line;
    while (n < ncol) {
      f[n++] = s;
      char *c = strchr(s, ',');
      if (!c) break;
      *c = '\0';
      s = c + 1;
    }
    if (n != ncol || strchr(s, ',')) {
      cli_error("the reference '%s', line %ld, does not have the header's %ld fields.", path, lineno, ncol);
      rc = CLI_USAGE;
      break;
    }
    if (ref->n == cap_rows) {
      long c2 = cap_rows ? 2 * cap_rows : 256;
      if ((double)c2 * (double)(dim + 1) > 2e8) {
        cli_error("the reference '%s' is too large (more than 1.6 GB of states).", path);
        rc = CLI_FAILED;
        break;
      }
      double *t = realloc(ref->t, sizeof *t * (size_t)c2);
      if (t) ref->t = t;
      double *x = t ? realloc(ref->x, sizeof *x * (size_t)(c2 * dim + 1)) : NULL;
      if (!t || !x) {
        cli_error("out of memory.");
        rc = CLI_FAILED;
        break;
      }
      ref->x = x;
      cap_rows = c2;
    }
    double *x = ref->x + ref->n * dim;
    for (long k = 0; k <= dim && !rc; k++) {
      char *txt = trim(f[map[k]]), *end;
      double v = strtod(txt, &end);
      if (end == txt || *end || !isfinite(v)) {
        cli_error("the reference '%s', line %ld: '%.40s' is not a finite number.", path, lineno, txt);
        rc = CLI_USAGE;
      } else if (k == dim) ref->t[ref->n] = v;
      else x[k] = v;
    }
    if (!rc && ref->n > 0 && !(ref->t[ref->n] > ref->t[ref->n - 1])) {
      cli_error("the reference '%s', line %ld: the times do not increase (%g after %g).", path, lineno,
                ref->t[ref->n], ref->t[ref->n - 1]);
      rc = CLI_USAGE;
    }
    if (!rc) ref->n++;
  }
  free(f);
  if (!rc && ref->n == 0) {
    cli_error("the reference '%s' has no data rows.", path);
    rc = CLI_USAGE;
  }
done:
  if (!rc && ferror(in)) {
    cli_error("cannot read the reference '%s'.", path);
    rc = CLI_USAGE;
  }
  fclose(in);
  free(line);
  free(map);
  if (rc) cli_reference_free(ref);
  return rc;
}

long cli_reference_find(const cli_reference *ref, double t) {
  long lo = 0, hi = ref->n - 1;
  double tol = 1e-9 * fmax(1.0, fabs(t));
  while (lo <= hi) {
    long mid = lo + (hi - lo) / 2;
    if (fabs(ref->t[mid] - t) <= tol) return mid;
    if (ref->t[mid] < t) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

void cli_reference_free(cli_reference *ref) {
  free(ref->t);
  free(ref->x);
  ref->t = ref->x = NULL;
  ref->n = 0;
}
