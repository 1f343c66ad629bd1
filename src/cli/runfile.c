/* Run description files: INI, parsed by inih (libinih).
 *
 *   [run]
 *   model  = four-particle
 *   scheme = vi-a
 *   step   = 0.01
 *   t-end  = 10
 *   out    = run.csv        ; optional
 *   every  = 1              ; optional
 *   halving = 0             ; optional
 *   linsol = auto|dense|umfpack|klu   ; optional
 *   newton = default|full|simplified|modified ; optional
 *   [param]                 ; model parameters by name
 *   k24 = 500
 *   [opt]                   ; scheme options by name
 *   theta = 0.5
 *
 * Unknown sections and keys are errors, reported with their line. */
#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

typedef struct {
  cli_run *r;
  const char *path;
  int failed;
} ctx;

static int parse_number(const char *s, double *x) {
  char *end;
  errno = 0;
  *x = strtod(s, &end);
  return end != s && *end == '\0' && errno == 0 && *x == *x;
}

static int handler(void *user, const char *section, const char *name, const char *value, int lineno) {
  ctx *c = user;
  cli_run *r = c->r;
  double x;
  if (c->failed) return 0;
  if (strcmp(section, "run") == 0) {
    if (strcmp(name, "model") == 0 || strcmp(name, "scheme") == 0) {
      char *dst = name[0] == 'm' ? r->model : r->scheme;
      if (strlen(value) >= sizeof r->model) goto bad;
      strcpy(dst, value);
    } else if (strcmp(name, "step") == 0) {
      if (!parse_number(value, &x) || !(x > 0)) goto bad;
      r->h = x;
    } else if (strcmp(name, "t-end") == 0) {
      if (!parse_number(value, &x) || !(x > 0)) goto bad;
      r->t_end = x;
    } else if (strcmp(name, "out") == 0) {
      if (strlen(value) >= sizeof r->out) goto bad;
      strcpy(r->out, value);
    } else if (strcmp(name, "every") == 0) {
      if (!parse_number(value, &x) || x < 1 || x > 1e9 || x != (int)x) goto bad;
      r->every = (int)x;
    } else if (strcmp(name, "halving") == 0) {
      if (!parse_number(value, &x) || x < 0 || x > 30 || x != (int)x) goto bad;
      r->halving = (int)x;
    } else if (strcmp(name, "linsol") == 0) {
      if (strcmp(value, "auto") == 0) r->linsol = LV_LINSOL_AUTO;
      else if (strcmp(value, "dense") == 0) r->linsol = LV_LINSOL_DENSE;
      else if (strcmp(value, "umfpack") == 0) r->linsol = LV_LINSOL_UMFPACK;
      else if (strcmp(value, "klu") == 0) r->linsol = LV_LINSOL_KLU;
      else goto bad;
    } else if (strcmp(name, "newton") == 0) {
      if (cli_parse_newton_kind(value, &r->newton_kind)) goto bad;
    } else {
      cli_error("%s:%d: unknown key '%s' in [run].", c->path, lineno, name);
      c->failed = 1;
      return 0;
    }
    return 1;
  }
  if (strcmp(section, "param") == 0 || strcmp(section, "opt") == 0) {
    if (cli_kv_set(section[0] == 'p' ? &r->params : &r->opts, name, value)) {
      c->failed = 1;
      return 0;
    }
    return 1;
  }
  cli_error("%s:%d: unknown section [%s] (expected [run], [param], [opt]).", c->path, lineno, section);
  c->failed = 1;
  return 0;
bad:
  cli_error("%s:%d: invalid value '%s' for '%s'.", c->path, lineno, value, name);
  c->failed = 1;
  return 0;
}

/* inih calls the handler without a line number unless built with
 * INI_HANDLER_LINENO; track lines ourselves through a reader that reads
 * either a file or a string. */
typedef struct {
  FILE *f;
  const char *text; /* when f is NULL */
  int line;
  ctx *c;
} reader;

static char *read_line(char *str, int num, void *stream) {
  reader *rd = stream;
  char *s = NULL;
  if (rd->f) {
    s = fgets(str, num, rd->f);
  } else if (*rd->text && num > 1) {
    int k = 0;
    while (rd->text[k] && rd->text[k] != '\n' && k < num - 2) k++;
    if (rd->text[k] == '\n') k++;
    memcpy(str, rd->text, (size_t)k);
    str[k] = '\0';
    rd->text += k;
    s = str;
  }
  if (s) rd->line++;
  return s;
}

static int handler_noline(void *user, const char *section, const char *name, const char *value) {
  reader *rd = user;
  return handler(rd->c, section, name, value, rd->line);
}

static int parse(reader *rd, const char *name) {
  int rc = ini_parse_stream(read_line, rd, handler_noline, rd);
  if (rd->c->failed) return CLI_USAGE;
  if (rc > 0) {
    cli_error("%s:%d: syntax error.", name, rc);
    return CLI_USAGE;
  }
  if (rc < 0) {
    cli_error("cannot parse run file '%s'.", name);
    return CLI_USAGE;
  }
  return CLI_OK;
}

int cli_load_runfile(const char *path, cli_run *r) {
  FILE *f = fopen(path, "r");
  if (!f) {
    cli_error("cannot read run file '%s'.", path);
    return CLI_USAGE;
  }
  ctx c = {r, path, 0};
  reader rd = {f, NULL, 0, &c};
  int rc = parse(&rd, path);
  fclose(f);
  return rc;
}

int cli_parse_runfile_string(const char *text, const char *name, cli_run *r) {
  ctx c = {r, name, 0};
  reader rd = {NULL, text, 0, &c};
  return parse(&rd, name);
}
