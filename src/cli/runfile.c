/* Run description files: INI, parsed by inih (libinih).
 *
 *   [run]
 *   model  = four-particle
 *   scheme = vi-a
 *   step   = 0.01
 *   t-end  = 10
 *   out    = run.csv        ; optional
 *   summary = run.json      ; optional (issue 17)
 *   checkpoint = run.ckpt   ; optional (issue 17, run only), with checkpoint-every = N
 *   resume = run.ckpt       ; optional (issue 17, run only): continue from a checkpoint
 *   model-lib = ./libmine.so ; optional: a model plugin (runs its code)
 *   output-dt = 0.1         ; optional, or output-times = 0.5,1,2
 *   every  = 1              ; optional
 *   halving = 0             ; optional
 *   linsol = auto|dense|umfpack|klu|sparse ; optional
 *   newton = default|full|simplified|modified ; optional
 *   [param]                 ; model parameters by name
 *   k24 = 500
 *   [opt]                   ; scheme options by name
 *   theta = 0.5
 *
 * Unknown sections and keys are errors, reported with their line.
 *
 * Hostile input.  Debian's libinih is built with a fixed line buffer
 * (INI_MAX_LINE 200, INI_ALLOW_REALLOC 0): it cuts a long line and parses
 * the tail as a line of its own, so a commented-out "step = 0.05" at the end
 * of a long line would take effect; and with INI_ALLOW_MULTILINE an indented
 * line silently continues the previous value.  Both are compile-time
 * choices of the system library, so instead of depending on them we read the
 * whole file ourselves (a regular file of at most CLI_RUNFILE_MAX bytes, so
 * /dev/zero, FIFOs and directories are refused before any read) and hand
 * inih one line at a time through ini_parse_stream: comment and blank lines
 * of any length become empty lines, any other line longer than inih's buffer
 * and any indented line are errors with file:line, before inih sees them.
 * Keys given twice are errors too, and so is a file without any setting. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

#define CLI_RUNFILE_MAX (1 << 20)

typedef struct {
  cli_run *r;
  const char *path;
  int failed;
  int settings;   /* handler calls: 0 means an empty run file */
  char **seen;    /* "section\nname" of every key so far */
  int nseen;
  cli_ini_extra extra; /* other sections (sweep files), or NULL */
  void *extra_user;
} ctx;

/* 1 if section/name was given before (then reported); records it. */
static int duplicate(ctx *c, const char *section, const char *name, int lineno) {
  size_t n = strlen(section) + strlen(name) + 2;
  char *k = malloc(n);
  char **grown = realloc(c->seen, sizeof *c->seen * (size_t)(c->nseen + 1));
  if (!k || !grown) {
    free(k);
    if (grown) c->seen = grown;
    cli_error("out of memory reading '%s'.", c->path);
    return 1;
  }
  c->seen = grown;
  snprintf(k, n, "%s\n%s", section, name);
  for (int i = 0; i < c->nseen; i++)
    if (strcmp(c->seen[i], k) == 0) {
      free(k);
      cli_error("%s:%d: '%s' in [%s] is given twice (or continued on an indented line).", c->path, lineno, name,
                section);
      return 1;
    }
  c->seen[c->nseen++] = k;
  return 0;
}

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
  c->settings++;
  if (duplicate(c, section, name, lineno)) {
    c->failed = 1;
    return 0;
  }
  if (strcmp(section, "run") == 0) {
    if (strcmp(name, "model") == 0 || strcmp(name, "scheme") == 0) {
      char *dst = name[0] == 'm' ? r->model : r->scheme;
      if (strlen(value) >= (name[0] == 'm' ? sizeof r->model : sizeof r->scheme)) goto bad;
      strcpy(dst, value);
      if (name[0] == 's') r->scheme_auto = 0;
    } else if (strcmp(name, "step") == 0) {
      if (!parse_number(value, &x) || !(x > 0)) goto bad;
      r->h = x;
    } else if (strcmp(name, "t-end") == 0) {
      if (!parse_number(value, &x) || !(x > 0)) goto bad;
      r->t_end = x;
    } else if (strcmp(name, "out") == 0) {
      if (strlen(value) >= sizeof r->out) goto bad;
      strcpy(r->out, value);
    } else if (strcmp(name, "model-lib") == 0) {
      if (!value[0] || strlen(value) >= sizeof r->model_lib) goto bad;
      strcpy(r->model_lib, value);
    } else if (strcmp(name, "checkpoint") == 0 || strcmp(name, "resume") == 0) { /* issue 17 */
      char *dst = name[0] == 'c' ? r->checkpoint : r->resume;
      if (!value[0] || strlen(value) >= sizeof r->checkpoint) goto bad;
      strcpy(dst, value);
    } else if (strcmp(name, "checkpoint-every") == 0) {
      if (!parse_number(value, &x) || x < 1 || x > 2e9 || x != (long)x) goto bad;
      r->checkpoint_every = (long)x;
    } else if (strcmp(name, "summary") == 0) {
      if (!value[0] || strlen(value) >= sizeof r->summary) goto bad;
      strcpy(r->summary, value);
    } else if (strcmp(name, "output-dt") == 0) {
      if (!parse_number(value, &x) || !(x > 0) || x == HUGE_VAL) goto bad;
      r->output_dt = x;
      r->output_times[0] = '\0';
    } else if (strcmp(name, "output-times") == 0) {
      if (!value[0] || strlen(value) >= sizeof r->output_times) goto bad;
      strcpy(r->output_times, value);
      r->output_dt = 0;
    } else if (strcmp(name, "every") == 0) {
      if (!parse_number(value, &x) || x < 1 || x > 1e9 || x != (int)x) goto bad;
      r->every = (int)x;
    } else if (strcmp(name, "halving") == 0) {
      if (!parse_number(value, &x) || x < 0 || x > 30 || x != (int)x) goto bad;
      r->halving = (int)x;
    } else if (strcmp(name, "linsol") == 0) {
      if (cli_parse_linsol(value, &r->linsol)) goto bad;
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
  if (c->extra) {
    int e = c->extra(c->extra_user, section, name, value, c->path, lineno);
    if (e > 0) return 1;
    if (e == 0) {
      c->failed = 1;
      return 0;
    }
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
 * INI_HANDLER_LINENO; the reader counts lines itself. */
typedef struct {
  const char *text;
  int line;
  ctx *c;
} reader;

static char *read_line(char *str, int num, void *stream) {
  reader *rd = stream;
  if (rd->c->failed || !*rd->text || num < 3) return NULL;
  size_t len = strcspn(rd->text, "\n");
  const char *line = rd->text;
  rd->text += len + (line[len] == '\n');
  rd->line++;
  size_t lead = strspn(line, " \t\r\f\v");
  if (lead >= len || line[lead] == ';' || line[lead] == '#') {
    /* blank or comment: nothing for inih, whatever its length */
    str[0] = '\n';
    str[1] = '\0';
    return str;
  }
  if (lead > 0) {
    cli_error("%s:%d: indented line (a run file line must start in column 1; continuation lines are not "
              "allowed).", rd->c->path, rd->line);
    rd->c->failed = 1;
    return NULL;
  }
  if (len > (size_t)num - 2) {
    cli_error("%s:%d: line longer than %d characters.", rd->c->path, rd->line, num - 2);
    rd->c->failed = 1;
    return NULL;
  }
  memcpy(str, line, len);
  str[len] = '\n';
  str[len + 1] = '\0';
  return str;
}

static int handler_noline(void *user, const char *section, const char *name, const char *value) {
  reader *rd = user;
  return handler(rd->c, section, name, value, rd->line);
}

int cli_parse_runfile_string(const char *text, const char *name, cli_run *r) {
  return cli_parse_runfile_string_ex(text, name, r, NULL, NULL);
}

int cli_parse_runfile_string_ex(const char *text, const char *name, cli_run *r, cli_ini_extra extra,
                                void *extra_user) {
  ctx c = {r, name, 0, 0, NULL, 0, extra, extra_user};
  reader rd = {text, 0, &c};
  int rc = ini_parse_stream(read_line, &rd, handler_noline, &rd), status = CLI_USAGE;
  if (c.failed) {
    /* message printed */
  } else if (rc > 0) {
    cli_error("%s:%d: syntax error.", name, rc);
  } else if (rc < 0) {
    cli_error("cannot parse run file '%s'.", name);
  } else if (c.settings == 0) {
    cli_error("run file '%s' has no settings (it is empty or only comments).", name);
  } else {
    status = CLI_OK;
  }
  for (int i = 0; i < c.nseen; i++) free(c.seen[i]);
  free(c.seen);
  if (status) {
    cli_kv_free(&r->params);
    cli_kv_free(&r->opts);
  }
  return status;
}

int cli_load_runfile(const char *path, cli_run *r) {
  return cli_load_runfile_ex(path, r, NULL, NULL);
}

int cli_load_runfile_ex(const char *path, cli_run *r, cli_ini_extra extra, void *extra_user) {
  /* O_NONBLOCK: opening a FIFO must not wait for a writer */
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) {
    cli_error("cannot read run file '%s': %s.", path, strerror(errno));
    return CLI_USAGE;
  }
  struct stat st;
  char *text = NULL;
  int status = CLI_USAGE;
  if (fstat(fd, &st) != 0) {
    cli_error("cannot read run file '%s': %s.", path, strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    cli_error("run file '%s' is not a regular file.", path);
  } else if (st.st_size > CLI_RUNFILE_MAX) {
    cli_error("run file '%s' is larger than %d bytes.", path, CLI_RUNFILE_MAX);
  } else if (!(text = malloc(CLI_RUNFILE_MAX + 2))) {
    cli_error("out of memory reading '%s'.", path);
  } else {
    /* read to the end, bounded: the file may have grown since fstat */
    size_t n = 0;
    ssize_t k = 0;
    while (n <= CLI_RUNFILE_MAX && (k = read(fd, text + n, CLI_RUNFILE_MAX + 1 - n)) != 0) {
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) break;
      n += (size_t)k;
    }
    text[n] = '\0';
    if (k < 0) cli_error("cannot read run file '%s': %s.", path, strerror(errno));
    else if (n > CLI_RUNFILE_MAX) cli_error("run file '%s' is larger than %d bytes.", path, CLI_RUNFILE_MAX);
    else if (strlen(text) != n) cli_error("run file '%s' contains a NUL byte (it is not a text file).", path);
    else status = cli_parse_runfile_string_ex(text, path, r, extra, extra_user);
  }
  free(text);
  close(fd);
  if (status) {
    cli_kv_free(&r->params);
    cli_kv_free(&r->opts);
  }
  return status;
}
