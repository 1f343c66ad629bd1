/* livens plot: figures from run CSVs or convergence CSVs, drawn by gnuplot
 * (issue 17).  Several files overlay in one figure, one colour per run:
 *
 *   run CSVs:          relative energy error |E - E0|/|E0| (log axis),
 *                      momentum maps J_k - J_k(0), |g|, |Gv| (log axes);
 *                      with --y a,b,... those columns against t, signed;
 *   convergence CSVs:  errors against h on log-log axes per component
 *                      (q, v, lambda), one line per scheme with its fitted
 *                      order in the legend, reference slopes 1 to 4.
 *
 * Titles and legends come from the '#' metadata lines of the CSVs (model,
 * scheme, h, T, parameters and options that differ from the defaults):
 * what all runs share goes to the title, what differs to the legend.  File
 * names never appear in the figure.  The legend sits outside the panels.
 * Axis and panel labels carry the SI units of the "# unit.*" metadata lines
 * (meta.c) when every file gives the same unit; none are invented.
 * Log-axis ranges are fitted to the data (whole decades).  Every row of
 * every file is drawn: nothing is thinned.
 *
 * Formats: PNG (pngcairo), SVG, PDF (pdfcairo) and LaTeX (tikz: one .tex
 * file, to be \input in a document that loads gnuplot-lua-tikz), chosen by
 * --format or by the output's extension.
 *
 * Hostile input: gnuplot scripts are code, and gnuplot also treats file
 * names as code ('<cmd' reads from a pipe, '|cmd' as output writes to one),
 * so no user string reaches gnuplot as a name or as script text.  Every
 * file gnuplot sees lives in a private mkdtemp directory under a generated
 * name (d0.txt, out.png, plot.gp); the figure is renamed to the user's path
 * by us afterwards.  Data files hold numbers we formatted.  User text
 * (metadata values, column names) reaches the script only inside
 * single-quoted strings, where gnuplot expands nothing (no backslash
 * escapes, no `command`, no @macro): a quote is doubled, control bytes and
 * malformed UTF-8 become '?', and the length is capped.  The cairo and svg
 * terminals are noenhanced (tikz has no markup of its own), so no text is
 * read as markup (underscores stay underscores).
 * For LaTeX output the text is LaTeX too, so its special characters are
 * escaped (\textbackslash{}, \_, \{ ...).  gnuplot runs through fork/execvp
 * with the script as a file argument: no shell anywhere.  The script is
 * built in a growing memory buffer, so no user-controlled length meets a
 * fixed buffer.  LIVENS_PLOT_NO_EXEC=1 writes the script without running
 * gnuplot (fuzzing, tests); LIVENS_PLOT_KEEP_SCRIPT=FILE also copies the
 * script there (tests inspect it). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

#define MAXCOLS 4096
#define MAXFILES 32
#define MAXY 8
#define MAXSYM 64
#define MAXSERIES 128

/* Runs gnuplot with @p script (NULL: --version); output to /dev/null.
 * Returns gnuplot's exit status, or -1 if it could not run. */
static int gnuplot_exec(const char *script) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int dn = open("/dev/null", O_RDWR);
    if (dn >= 0) {
      dup2(dn, 0);
      dup2(dn, 1);
      if (!script) dup2(dn, 2);
    }
    char *argv[] = {"gnuplot", script ? (char *)script : "--version", NULL};
    execvp("gnuplot", argv);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int cli_have_gnuplot(void) {
  if (getenv("LIVENS_PLOT_NO_EXEC")) return 1;
  return gnuplot_exec(NULL) == 0;
}

/* Split a CSV line in place; returns the number of fields. */
static int split(char *line, char **f, int max) {
  int n = 0;
  char *s = line;
  while (n < max) {
    f[n++] = s;
    char *c = strchr(s, ',');
    if (!c) break;
    *c = '\0';
    s = c + 1;
  }
  char *nl = strpbrk(f[n - 1], "\r\n");
  if (nl) *nl = '\0';
  return n;
}

static int find(char **names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

/* User text inside a single-quoted gnuplot string (see the top comment),
 * without the quotes.  With @p tex the text is also escaped for LaTeX.  At
 * most 120 characters. */
static void put_text_body(FILE *s, const char *t, int tex) {
  static const char *const texmap[][2] = {{"\\", "\\textbackslash{}"}, {"{", "\\{"}, {"}", "\\}"}, {"$", "\\$"},
                                          {"&", "\\&"}, {"#", "\\#"}, {"^", "\\^{}"}, {"_", "\\_"},
                                          {"%", "\\%"}, {"~", "\\~{}"}};
  size_t n = 0;
  while (*t && n < 120) {
    unsigned char ch = (unsigned char)*t;
    int k = cli_utf8_len(t);
    const char *rep = NULL;
    if (tex)
      for (size_t i = 0; i < sizeof texmap / sizeof texmap[0]; i++)
        if (ch == (unsigned char)texmap[i][0][0]) rep = texmap[i][1];
    if (rep) fputs(rep, s), t++;
    else if (ch == '\'') fputs("''", s), t++;
    else if (ch < 0x20 || ch == 0x7f || k == 0) fputc('?', s), t++;
    else fwrite(t, 1, (size_t)k, s), t += k;
    n++;
  }
  if (*t) fputs("...", s);
}

/* User text as a single-quoted gnuplot string. */
static void put_text(FILE *s, const char *t, int tex) {
  fputc('\'', s);
  put_text_body(s, t, tex);
  fputc('\'', s);
}

/* " [unit]" inside a quoted string; nothing for no unit or "1"
 * (dimensionless). */
static void put_unit(FILE *s, const char *unit, int tex) {
  if (!unit || !unit[0] || !strcmp(unit, "1")) return;
  fputs(" [", s);
  put_text_body(s, unit, tex);
  fputc(']', s);
}

/* dir/name in a new allocation (NULL when out of memory). */
static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Copy file a to b (another file system than the temporary directory). */
static int copy_file(const char *a, const char *b) {
  FILE *in = fopen(a, "rb"), *out = in ? fopen(b, "wb") : NULL;
  char buf[65536];
  size_t k;
  int bad = !out;
  while (!bad && (k = fread(buf, 1, sizeof buf, in)) > 0)
    if (fwrite(buf, 1, k, out) != k) bad = 1;
  if (in) fclose(in);
  if (out && fclose(out) != 0) bad = 1;
  return bad ? -1 : 0;
}

/* Write the script to dir/plot.gp and run gnuplot on it; then move
 * dir/out.EXT to @p dest.  Returns CLI_OK or CLI_FAILED (message printed). */
static int draw(const char *dir, const char *script, size_t len, const char *outname, const char *dest) {
  char *gp = NULL, *out = NULL;
  int status = CLI_FAILED;
  if (!(gp = join(dir, "plot.gp")) || !(out = join(dir, outname))) {
    cli_error("out of memory.");
    goto done;
  }
  FILE *f = fopen(gp, "w");
  if (!f || fwrite(script, 1, len, f) != len || fclose(f) != 0) {
    cli_error("cannot write a temporary gnuplot script.");
    goto done;
  }
  const char *keep = getenv("LIVENS_PLOT_KEEP_SCRIPT");
  if (keep && keep[0] && copy_file(gp, keep) != 0) {
    cli_error("cannot write '%s': %s.", keep, strerror(errno));
    goto done;
  }
  if (getenv("LIVENS_PLOT_NO_EXEC")) {
    status = CLI_OK;
    goto done;
  }
  if (gnuplot_exec(gp) != 0) {
    cli_error("gnuplot failed to draw '%s'.", dest);
    goto done;
  }
  if (rename(out, dest) != 0 && copy_file(out, dest) != 0) {
    cli_error("cannot write '%s': %s.", dest, strerror(errno));
    goto done;
  }
  status = CLI_OK;
done:
  if (gp) unlink(gp);
  if (out) unlink(out);
  free(gp);
  free(out);
  return status;
}

/* The gnuplot runner for other figure writers (sweep_plot.c): their script
 * writes 'out.png' in @p dir. */
int cli_plot_draw(const char *dir, const char *script, size_t len, const char *png) {
  return draw(dir, script, len, "out.png", png);
}

/* A sweep summary (sweep.c, issue 21): its header, after any '#' lines,
 * starts with "case" and has a "status" column. */
static int is_sweep_summary(const char *path) {
  FILE *in = fopen(path, "r");
  if (!in) return 0;
  char buf[4096];
  int yes = 0;
  while (fgets(buf, sizeof buf, in)) {
    if (buf[0] == '#') continue;
    yes = strncmp(buf, "case,", 5) == 0 && (strstr(buf, ",status,") || strstr(buf, ",status\n") ||
                                            strstr(buf, ",status\r"));
    break;
  }
  fclose(in);
  return yes;
}

/* ------------------------------------------------------------------ input */

typedef struct {
  char *key, *value;
} meta_kv;

typedef struct {
  meta_kv *meta;
  int nmeta;
  char *header;
  char **names;
  int ncol;
  int conv;
  long rows;
} csv_file;

static const char *meta_get(const csv_file *c, const char *key) {
  for (int i = 0; i < c->nmeta; i++)
    if (strcmp(c->meta[i].key, key) == 0) return c->meta[i].value;
  return NULL;
}

/* "q12" -> 12 after @p prefix "q"; 0 if @p s is not PREFIX + number. */
static long col_number(const char *s, const char *prefix, size_t n) {
  if (strncmp(s, prefix, n) != 0 || s[n] < '0' || s[n] > '9') return 0;
  char *end;
  long k = strtol(s + n, &end, 10);
  return *end ? 0 : k;
}

/* The unit of column @p col from the metadata (issue 17): "unit.COL",
 * "unit.momentum" for momentumK, or a range "unit.q1..q3"; NULL if none. */
static const char *meta_unit(const csv_file *c, const char *col) {
  char key[128];
  if (!col || strlen(col) > 100) return NULL;
  snprintf(key, sizeof key, "unit.%s", col);
  const char *u = meta_get(c, key);
  if (u) return u;
  if (!strncmp(col, "momentum", 8) && col_number(col, "momentum", 8)) return meta_get(c, "unit.momentum");
  size_t np = strcspn(col, "0123456789");
  long k = col_number(col, col, np);
  if (!np || !k) return NULL;
  for (int i = 0; i < c->nmeta; i++) {
    const char *name = c->meta[i].key, *dots;
    if (strncmp(name, "unit.", 5) != 0 || !(dots = strstr(name + 5, ".."))) continue;
    char lo[120];
    size_t nl = (size_t)(dots - (name + 5));
    if (nl >= sizeof lo) continue;
    memcpy(lo, name + 5, nl);
    lo[nl] = '\0';
    if (strcspn(lo, "0123456789") != np || strncmp(lo, col, np) != 0) continue;
    long a = col_number(lo, col, np), b = col_number(dots + 2, col, np);
    if (a && b && a <= k && k <= b) return c->meta[i].value;
  }
  return NULL;
}

/* The unit of @p col in every one of the @p n files (NULL when one has
 * none or they differ). */
static const char *unit_all(const csv_file *c, int n, const char *col) {
  const char *u = n > 0 ? meta_unit(&c[0], col) : NULL;
  for (int i = 1; i < n && u; i++) {
    const char *w = meta_unit(&c[i], col);
    if (!w || strcmp(w, u) != 0) u = NULL;
  }
  return u;
}

/* "# key = value" (anything else after '#' is a plain comment). */
static int meta_add(csv_file *c, const char *line) {
  if (c->nmeta >= 4096) return 0; /* the rest are comments */
  const char *s = line + 1;
  while (*s == ' ') s++;
  const char *eq = strstr(s, " = ");
  if (!eq || eq == s) return 0;
  size_t nk = (size_t)(eq - s);
  const char *v = eq + 3;
  size_t nv = strcspn(v, "\r\n");
  meta_kv *g = realloc(c->meta, sizeof *g * (size_t)(c->nmeta + 1));
  if (!g) return -1;
  c->meta = g;
  char *k = malloc(nk + 1), *val = malloc(nv + 1);
  if (!k || !val) {
    free(k);
    free(val);
    return -1;
  }
  memcpy(k, s, nk);
  k[nk] = '\0';
  memcpy(val, v, nv);
  val[nv] = '\0';
  c->meta[c->nmeta].key = k;
  c->meta[c->nmeta++].value = val;
  return 0;
}

static void csv_free(csv_file *c) {
  for (int i = 0; i < c->nmeta; i++) free(c->meta[i].key), free(c->meta[i].value);
  free(c->meta);
  free(c->header);
  free(c->names);
  memset(c, 0, sizeof *c);
}

/* Reads the metadata and the header; leaves @p in at the first data row. */
static int read_head(FILE *in, const char *path, csv_file *c, char **line, size_t *cap) {
  ssize_t got;
  while ((got = getline(line, cap, in)) > 0 && (*line)[0] == '#')
    if (meta_add(c, *line)) return cli_error("out of memory."), CLI_FAILED;
  if (got <= 0) return cli_error("'%s' is empty or unreadable.", path), CLI_USAGE;
  if (!(c->header = strdup(*line)) || !(c->names = calloc(MAXCOLS, sizeof *c->names)))
    return cli_error("out of memory."), CLI_FAILED;
  c->ncol = split(c->header, c->names, MAXCOLS);
  c->conv = strcmp(c->names[0], "h") == 0;
  return CLI_OK;
}

/* ---------------------------------------------------------- labels */

/* One label field: "scheme" -> "vi-a", "h" -> "h = 0.01". */
typedef struct {
  char key[64];
  const char *value;
  int dflt; /* a parameter or option at its default: left out of the title */
} field;

/* The fields a legend or title may show: model, scheme, h, t_end and the
 * parameters and options (those at their default marked: the title leaves
 * them out, a legend shows them when another file's value differs). */
static int fields_of(const csv_file *c, field *f, int max) {
  int n = 0;
  const char *model = meta_get(c, "model"), *scheme = meta_get(c, "scheme");
  const lv_param_info *mp = model ? cli_model_params(model) : NULL;
  const lv_scheme_type *st = scheme ? lv_scheme_find(scheme) : NULL;
  int nschemes = 0;
  for (int i = 0; i < c->nmeta; i++) nschemes += !strcmp(c->meta[i].key, "scheme");
  for (int i = 0; i < c->nmeta && n < max; i++) {
    const char *k = c->meta[i].key, *v = c->meta[i].value;
    int show = 0, dflt = 0;
    if (!strcmp(k, "model") || !strcmp(k, "scheme") || !strcmp(k, "h") || !strcmp(k, "t_end") ||
        !strcmp(k, "every") || !strcmp(k, "output_dt") || !strcmp(k, "output_times"))
      show = 1;
    else if (!strncmp(k, "opt.", 4) && nschemes > 1)
      show = 0; /* a convergence table of several schemes: options are theirs */
    else if (!strncmp(k, "param.", 6) || !strncmp(k, "opt.", 4)) {
      const lv_param_info *p = k[0] == 'p' ? mp : (st ? st->options : NULL);
      const char *name = k + (k[0] == 'p' ? 6 : 4);
      show = 1;
      for (; p && p->name; p++)
        if (!strcmp(p->name, name) && p->default_value && !strcmp(p->default_value, v)) dflt = 1;
    }
    if (show && strlen(k) < sizeof f[n].key) {
      strcpy(f[n].key, k);
      f[n].dflt = dflt;
      f[n++].value = v;
    }
  }
  return n;
}

/* Appends "key = value" (or the value alone for model and scheme). */
static void put_field(FILE *s, const field *f, int *first) {
  const char *k = f->key;
  if (!strcmp(k, "every") && !strcmp(f->value, "1")) return;
  if (!*first) fputs(", ", s);
  *first = 0;
  if (!strcmp(k, "model") && cli_is_system_file(f->value) && strrchr(f->value, '/'))
    fputs(strrchr(f->value, '/') + 1, s); /* a system file: its name, not where it lives */
  else if (!strcmp(k, "model") || !strcmp(k, "scheme")) fputs(f->value, s);
  else {
    if (!strncmp(k, "param.", 6)) k += 6;
    else if (!strncmp(k, "opt.", 4)) k += 4;
    else if (!strcmp(k, "t_end")) k = "T";
    else if (!strcmp(k, "every")) k = "every n-th step, n";
    /* h and T as the short number they were given as */
    char *end;
    double x = strtod(f->value, &end);
    if ((!strcmp(f->key, "h") || !strcmp(f->key, "t_end") || !strcmp(f->key, "output_dt")) && end != f->value && !*end)
      fprintf(s, "%s = %.10g", k, x);
    else fprintf(s, "%s = %s", k, f->value);
  }
}

static int same_field(const field *f, int n, const field *g) {
  for (int i = 0; i < n; i++)
    if (!strcmp(f[i].key, g->key)) return !strcmp(f[i].value, g->value);
  return 0;
}

/* @p f holds g's key with another value (absent is not another value). */
static int other_value(const field *f, int n, const field *g) {
  for (int i = 0; i < n; i++)
    if (!strcmp(f[i].key, g->key)) return strcmp(f[i].value, g->value) != 0;
  return 0;
}

/* Title (fields shared by every file) and one legend per file (the fields
 * that differ; a lone file: its scheme; "run k" when nothing tells the
 * files apart or there is no metadata).  Returns malloc'ed strings; NULL
 * entries when out of memory. */
static void make_labels(const csv_file *c, int n, char **title, char **legend) {
  static field f[MAXFILES][128];
  int nf[MAXFILES];
  for (int i = 0; i < n; i++) nf[i] = fields_of(&c[i], f[i], 128);
  size_t len = 0;
  FILE *s = open_memstream(title, &len);
  if (s) {
    int first = 1;
    for (int j = 0; j < nf[0]; j++) {
      int common = 1;
      for (int i = 1; i < n && common; i++) common = same_field(f[i], nf[i], &f[0][j]);
      if (common && !f[0][j].dflt) put_field(s, &f[0][j], &first);
    }
    if (first) fputs("livens", s);
    fclose(s);
  } else *title = NULL;
  for (int i = 0; i < n; i++) {
    s = open_memstream(&legend[i], &len);
    if (!s) {
      legend[i] = NULL;
      continue;
    }
    int first = 1;
    for (int j = 0; j < nf[i]; j++) {
      /* a default shows only against another file's other value of it */
      int common = 1;
      for (int k = 0; k < n && common; k++)
        if (k != i) common = f[i][j].dflt ? !other_value(f[k], nf[k], &f[i][j]) : same_field(f[k], nf[k], &f[i][j]);
      if (!common) put_field(s, &f[i][j], &first);
    }
    for (int j = 0; first && n == 1 && j < nf[i]; j++)
      if (!strcmp(f[i][j].key, "scheme")) put_field(s, &f[i][j], &first);
    if (first) fprintf(s, "run %d", i + 1);
    fclose(s);
  }
}

/* ------------------------------------------------------------ formats */

typedef struct {
  const char *name, *ext, *terminal;
  int tex;
} format;

static const format formats[] = {
    {"png", "png", "pngcairo size 1400,1000 noenhanced font ',11'", 0},
    {"svg", "svg", "svg size 1400,1000 noenhanced font 'sans,13'", 0},
    {"pdf", "pdf", "pdfcairo size 28cm,20cm noenhanced font ',10'", 0},
    {"tex", "tex", "tikz size 16cm,12cm", 1}, /* tikz has no markup to turn off */
};

static const format *format_named(const char *s) {
  if (!strcmp(s, "latex") || !strcmp(s, "tikz")) s = "tex";
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (!strcmp(formats[i].name, s)) return &formats[i];
  return NULL;
}

/* Whole decades around [lo, hi] (positive), for a log axis. */
static void log_range(FILE *sc, const char *axis, double lo, double hi) {
  if (!(lo > 0) || !(hi >= lo) || !isfinite(hi)) {
    fprintf(sc, "set %srange [1e-17:1e-15]\n", axis);
    return;
  }
  double a = pow(10, floor(log10(lo))), b = pow(10, ceil(log10(hi)));
  if (b <= a) b = a * 10;
  fprintf(sc, "set %srange [%.3g:%.3g]\n", axis, a, b);
}

static const char *const colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000", "#8C564B"};
#define NCOLOURS (int)(sizeof colours / sizeof colours[0])

/* A number for a data file: '?' (missing) unless finite, and for a log
 * axis unless positive. */
static void put_num(FILE *o, double x, int positive) {
  if (!isfinite(x) || (positive && !(x > 0))) fputs(" ?", o);
  else fprintf(o, " %.17g", x);
}

typedef struct {
  double lo, hi; /* positive range (log panels) */
} range;

static void grow(range *r, double x) {
  if (isfinite(x) && x > 0) {
    if (!(r->lo > 0) || x < r->lo) r->lo = x;
    if (x > r->hi) r->hi = x;
  }
}

/* Key below the panels, outside every curve. */
static void key_below(FILE *sc) {
  fputs("set key at screen 0.5,0.01 center bottom horizontal box opaque width 1 samplen 3\n", sc);
}

/* ------------------------------------------------------------ run CSVs */

typedef struct {
  int it, ie, ig, iv, ip, nm, im[MAXSYM], iy[MAXY];
} run_cols;

static int run_columns(const csv_file *c, const char *path, char **ys, int ny, run_cols *rc) {
  rc->it = find(c->names, c->ncol, "t");
  rc->ie = find(c->names, c->ncol, "energy");
  rc->ig = find(c->names, c->ncol, "g_norm");
  rc->iv = find(c->names, c->ncol, "gv_norm");
  rc->ip = find(c->names, c->ncol, "gp_norm");
  rc->nm = 0;
  for (int k = 0; k < c->ncol && rc->nm < MAXSYM; k++)
    if (strncmp(c->names[k], "momentum", 8) == 0) rc->im[rc->nm++] = k;
  if (ny) {
    if (rc->it < 0) return cli_error("'%s' has no column t.", path), CLI_USAGE;
    for (int k = 0; k < ny; k++) {
      int j = find(c->names, c->ncol, ys[k]);
      if (j < 0 && strncmp(ys[k], "lam", 3) == 0 && strncmp(ys[k], "lambda", 6) != 0) {
        /* lam1 for lambda1 */
        char alias[80];
        if (strlen(ys[k]) < 60) {
          snprintf(alias, sizeof alias, "lambda%s", ys[k] + 3);
          j = find(c->names, c->ncol, alias);
        }
      }
      if (j < 0) return cli_error("a CSV given to plot has no column '%s' (see its header line).", ys[k]), CLI_USAGE;
      rc->iy[k] = j;
    }
    return CLI_OK;
  }
  if (rc->it < 0 || rc->ie < 0 || rc->ig < 0 || rc->iv < 0) {
    cli_error("'%s' is not a livens run CSV (it needs the columns t, energy, g_norm, gv_norm).", path);
    return CLI_USAGE;
  }
  return CLI_OK;
}

/* Reduce the rows of a run CSV to a data file: t, |E-E0|/|E0|, J_k - J_k0,
 * |g|, |Gv|, |GM^-1p| (or t and the --y columns). */
static long run_data(FILE *in, FILE *out, const csv_file *c, const run_cols *rc, int ny, char **line,
                     size_t *cap, char **f, range *r) {
  double E0 = 0, J0[MAXSYM] = {0};
  long rows = 0;
  while (getline(line, cap, in) > 0) {
    if ((*line)[0] == '#') continue;
    int n = split(*line, f, MAXCOLS);
    if (n != c->ncol) continue;
    fprintf(out, "%.17g", atof(f[rc->it]));
    if (ny) {
      for (int k = 0; k < ny; k++) put_num(out, atof(f[rc->iy[k]]), 0);
    } else {
      double E = atof(f[rc->ie]);
      if (rows == 0) {
        E0 = E;
        for (int k = 0; k < rc->nm; k++) J0[k] = atof(f[rc->im[k]]);
      }
      double de = fabs(E - E0) / (E0 != 0 ? fabs(E0) : 1.0);
      put_num(out, de, 1);
      grow(&r[0], de);
      for (int k = 0; k < rc->nm; k++) {
        double dj = atof(f[rc->im[k]]) - J0[k];
        put_num(out, dj, 0);
        grow(&r[3], fabs(dj));
      }
      double g = atof(f[rc->ig]), gv = atof(f[rc->iv]), gp = rc->ip >= 0 ? atof(f[rc->ip]) : NAN;
      put_num(out, g, 1);
      put_num(out, gv, 1);
      put_num(out, gp, 1);
      grow(&r[1], g);
      grow(&r[2], gv);
      grow(&r[2], gp);
    }
    fputc('\n', out);
    rows++;
  }
  return rows;
}

static void run_script(FILE *sc, const format *fm, int n, char **legend, const run_cols *rc, char **ys, int ny,
                       const range *r, const csv_file *c) {
  int tex = fm->tex;
  if (ny) {
    for (int k = 0; k < ny; k++) {
      fputs("set title '", sc);
      put_text_body(sc, ys[k], tex);
      put_unit(sc, unit_all(c, n, c[0].names[rc[0].iy[k]]), tex);
      fputs(k == 0 ? "'\n" : "'\nunset key\n", sc);
      for (int i = 0; i < n; i++) {
        fprintf(sc, "%s'd%d.txt' using 1:%d with lines lw 1.5 lc rgb '%s' title ", i ? ", " : "plot ", i, 2 + k,
                colours[i % NCOLOURS]);
        put_text(sc, legend[i] ? legend[i] : "run", tex);
      }
      fputc('\n', sc);
    }
    return;
  }
  /* energy */
  fprintf(sc, "set title '%s'\nset logscale y\nset format y '%s'\n",
          tex ? "relative energy error $|E-E_0|/|E_0|$" : "relative energy error |E − E₀|/|E₀|",
          tex ? "$10^{%L}$" : "%.0e");
  log_range(sc, "y", r[0].lo, r[0].hi);
  for (int i = 0; i < n; i++) {
    fprintf(sc, "%s'd%d.txt' using 1:2 with lines lw 1.5 lc rgb '%s' title ", i ? ", " : "plot ", i,
            colours[i % NCOLOURS]);
    put_text(sc, legend[i] ? legend[i] : "run", tex);
  }
  fputs("\nunset key\n", sc);
  /* momentum maps, signed */
  /* momentum maps kept exactly: a fixed range (autoscale would warn) */
  fprintf(sc, "unset logscale y\n%s\nset format y '%%g'\nset title '%s",
          r[3].hi > 0 ? "set autoscale y" : "set yrange [-1e-15:1e-15]",
          tex ? "momentum maps $J_k - J_k(0)$" : "momentum maps J_k − J_k(0)");
  put_unit(sc, unit_all(c, n, "momentum1"), tex);
  fprintf(sc, "%s'\n", rc[0].nm > 1 ? " (k = 1 solid, 2 dashed, 3 dotted, ...)" : "");
  int any = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < rc[i].nm; k++)
      fprintf(sc, "%s'd%d.txt' using 1:%d with lines lw 1.5 dt %d lc rgb '%s' notitle", any++ ? ", " : "plot ", i,
              3 + k, 1 + k % 5, colours[i % NCOLOURS]);
  if (!any) fputs("set label 1 'no symmetries' at graph 0.4,0.5\nplot 0 lc rgb '#bbbbbb' notitle\nunset label 1", sc);
  fputc('\n', sc);
  /* constraints */
  fprintf(sc, "set logscale y\nset format y '%s'\nset title '%s", tex ? "$10^{%L}$" : "%.0e",
          tex ? "position constraint $\\max|g(q)|$" : "position constraint max|g(q)|");
  put_unit(sc, unit_all(c, n, "g_norm"), tex);
  fputs("'\n", sc);
  log_range(sc, "y", r[1].lo, r[1].hi);
  for (int i = 0; i < n; i++)
    fprintf(sc, "%s'd%d.txt' using 1:%d with lines lw 1.5 lc rgb '%s' notitle", i ? ", " : "plot ", i,
            3 + rc[i].nm, colours[i % NCOLOURS]);
  fprintf(sc, "\nset title '%s", tex ? "velocity constraint $\\max|G v|$" : "velocity constraint max|G v|");
  put_unit(sc, unit_all(c, n, "gv_norm"), tex);
  fprintf(sc, "%s'\n", tex ? " (dashed: $\\max|G M^{-1} p|$)" : " (dashed: max|G M⁻¹ p|)");
  log_range(sc, "y", r[2].lo, r[2].hi);
  for (int i = 0; i < n; i++) {
    fprintf(sc, "%s'd%d.txt' using 1:%d with lines lw 1.5 lc rgb '%s' notitle", i ? ", " : "plot ", i,
            4 + rc[i].nm, colours[i % NCOLOURS]);
    if (rc[i].ip >= 0)
      fprintf(sc, ", 'd%d.txt' using 1:%d with lines lw 1.5 dt 2 lc rgb '%s' notitle", i, 5 + rc[i].nm,
              colours[i % NCOLOURS]);
  }
  fputc('\n', sc);
}

/* ---------------------------------------------------- convergence CSVs */

typedef struct {
  int file, col;    /* source */
  char comp[32];    /* q, v, lambda, or the column name */
  char *label;      /* legend: scheme (malloc'ed) */
  double order;     /* least-squares slope of log err against log h */
  double hmax, emax_h; /* the largest h and its error */
  int panel, colour;
} series;

static double fit_order(const double *h, const double *e, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (h[i] > 0 && e[i] > 0 && isfinite(e[i])) {
      double x = log(h[i]), y = log(e[i]);
      sx += x, sy += y, sxx += x * x, sxy += x * y, m++;
    }
  double d = m * sxx - sx * sx;
  return m >= 2 && d > 0 ? (m * sxy - sx * sy) / d : NAN;
}

/* --------------------------------------------------------------- entry */

int cli_plot_files(const char *const *csv, int n, const char *dest, const char *fmt_name, const char *ycols) {
  const format *fm = format_named(fmt_name ? fmt_name : "png");
  if (!fm) {
    cli_error("unknown plot format '%s' (png, svg, pdf or tex).", fmt_name);
    return CLI_USAGE;
  }
  if (n == 1 && is_sweep_summary(csv[0])) {
    if (strcmp(fm->name, "png") != 0) {
      cli_error("a sweep summary is drawn as PNG only (got format '%s').", fm->name);
      return CLI_USAGE;
    }
    return cli_plot_sweep(csv[0], dest);
  }
  if (n < 1 || n > MAXFILES) {
    cli_error("plot takes 1 to %d CSV files (got %d).", MAXFILES, n);
    return CLI_USAGE;
  }
  char *ybuf = NULL, *ys[MAXY];
  int ny = 0;
  if (ycols) {
    if (!(ybuf = strdup(ycols))) return cli_error("out of memory."), CLI_FAILED;
    if ((ny = cli_split_list(ybuf, ys, MAXY)) < 1) {
      cli_error("--y must be a comma-separated list of at most %d column names.", MAXY);
      free(ybuf);
      return CLI_USAGE;
    }
  }
  csv_file c[MAXFILES];
  run_cols rc[MAXFILES];
  memset(c, 0, sizeof c);
  char *legend[MAXFILES] = {0}, *title = NULL, *line = NULL, *script = NULL, *outname = NULL;
  char **f = calloc(MAXCOLS, sizeof *f);
  size_t cap = 0, slen = 0;
  FILE *sc = NULL, *out = NULL, *in = NULL;
  char dir[] = "/tmp/livens-plot-XXXXXX";
  int have_dir = 0, ndata = 0;
  int status = CLI_USAGE;
  series *sr = NULL;
  int ns = 0;
  range r[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}}; /* |dE|/E0, |g|, |Gv|, |J - J0| */
  if (!f) {
    cli_error("out of memory.");
    status = CLI_FAILED;
    goto done;
  }
  /* every header first: wrong input is refused before anything is written */
  for (int i = 0; i < n; i++) {
    if (!(in = fopen(csv[i], "r"))) {
      cli_error("cannot read '%s'.", csv[i]);
      goto done;
    }
    if ((status = read_head(in, csv[i], &c[i], &line, &cap))) goto done;
    status = CLI_USAGE;
    fclose(in);
    in = NULL;
    if (c[i].conv != c[0].conv) {
      cli_error("'%s' and '%s' are not both run CSVs or both convergence CSVs.", csv[0], csv[i]);
      goto done;
    }
    if (c[i].conv && ny) {
      cli_error("--y applies to run CSVs; '%s' is a convergence CSV.", csv[i]);
      goto done;
    }
    if (c[i].conv && c[i].ncol < 2) {
      cli_error("'%s' is a convergence CSV without error columns.", csv[i]);
      goto done;
    }
    if (!c[i].conv && run_columns(&c[i], csv[i], ys, ny, &rc[i])) goto done;
  }
  if (!cli_have_gnuplot()) {
    cli_error("gnuplot is not installed (apt-get install gnuplot-nox).");
    status = CLI_FAILED;
    goto done;
  }
  status = CLI_FAILED;
  if (!mkdtemp(dir)) {
    cli_error("cannot create a temporary directory: %s.", strerror(errno));
    goto done;
  }
  have_dir = 1;
  make_labels(c, n, &title, legend);
  if (!title || !(sc = open_memstream(&script, &slen))) {
    cli_error("out of memory.");
    goto done;
  }
  /* the data: numbers we format, in files we name */
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "d%d.txt", i);
    char *path = join(dir, name);
    in = fopen(csv[i], "r");
    out = path ? fopen(path, "w") : NULL;
    free(path);
    if (!in || !out) {
      cli_error("cannot read '%s' or write a temporary file.", csv[i]);
      goto done;
    }
    ndata = i + 1;
    /* skip to the first data row */
    while (getline(&line, &cap, in) > 0 && line[0] == '#') {}
    if (!c[i].conv) {
      c[i].rows = run_data(in, out, &c[i], &rc[i], ny, &line, &cap, f, r);
    } else {
      /* h and the error columns; one series per error column */
      int base = ns;
      series *g = realloc(sr, sizeof *sr * (size_t)(ns + c[i].ncol));
      if (!g) {
        cli_error("out of memory.");
        goto done;
      }
      sr = g;
      for (int k = 1; k < c[i].ncol && ns < MAXSERIES; k++) {
        series *s = &sr[ns++];
        memset(s, 0, sizeof *s);
        s->file = i, s->col = k;
        const char *nm = c[i].names[k], *dot = strchr(nm, '.');
        const char *comp = strncmp(nm, "err_", 4) == 0 ? nm + 4 : nm;
        size_t lc = dot && dot > comp ? (size_t)(dot - comp) : strlen(comp);
        if (lc >= sizeof s->comp) lc = sizeof s->comp - 1;
        memcpy(s->comp, comp, lc);
        const char *lab = dot ? dot + 1 : (meta_get(&c[i], "scheme") ? meta_get(&c[i], "scheme") : legend[i]);
        s->label = strdup(lab ? lab : "run");
      }
      while (getline(&line, &cap, in) > 0) {
        if (line[0] == '#') continue;
        int m = split(line, f, MAXCOLS);
        if (m != c[i].ncol) continue;
        put_num(out, atof(f[0]), 1);
        for (int k = base; k < ns; k++) put_num(out, atof(f[sr[k].col]), 1);
        fputc('\n', out);
        c[i].rows++;
      }
    }
    int werr = fclose(out) != 0;
    out = NULL;
    fclose(in);
    in = NULL;
    if (werr) {
      cli_error("cannot write a temporary data file.");
      goto done;
    }
    if (c[i].rows == 0) {
      cli_error("'%s' has no data rows.", csv[i]);
      status = CLI_USAGE;
      goto done;
    }
  }
  /* fitted orders and ranges of the convergence series, from the data files */
  range hr = {0, 0};
  double ht[13];
  int nh = 0;
  range er[8];
  char comps[8][32];
  int ncomp = 0;
  memset(er, 0, sizeof er);
  for (int k = 0; k < ns; k++) {
    series *s = &sr[k];
    char name[32];
    snprintf(name, sizeof name, "d%d.txt", s->file);
    char *path = join(dir, name);
    FILE *d = path ? fopen(path, "r") : NULL;
    free(path);
    if (!d) {
      cli_error("cannot read a temporary data file.");
      goto done;
    }
    double hv[512], ev[512];
    int m = 0, col = 0;
    for (int j = 0; j < k; j++)
      if (sr[j].file == s->file) col++;
    while (m < 512 && getline(&line, &cap, d) > 0) {
      char *p = line, *e;
      double x[2] = {NAN, NAN};
      for (int j = 0; j <= col + 1; j++) {
        while (*p == ' ') p++;
        double v = strtod(p, &e);
        if (e == p) {
          v = NAN;
          e = p + strcspn(p, " \n");
        }
        if (j == 0) x[0] = v;
        if (j == col + 1) x[1] = v;
        p = e;
      }
      hv[m] = x[0], ev[m] = x[1];
      int dup = !(x[0] > 0);
      for (int j = 0; j < nh && !dup; j++) dup = ht[j] == x[0];
      if (!dup && nh < 13) ht[nh++] = x[0];
      grow(&hr, x[0]);
      if (!(s->hmax >= x[0]) && x[1] > 0) s->hmax = x[0], s->emax_h = x[1];
      m++;
    }
    fclose(d);
    s->order = fit_order(hv, ev, m);
    int p = 0;
    while (p < ncomp && strcmp(comps[p], s->comp) != 0) p++;
    if (p == ncomp && ncomp < 8) strcpy(comps[ncomp++], s->comp);
    s->panel = p < 8 ? p : 7;
    for (int j = 0; j < m; j++) grow(&er[s->panel], ev[j]);
    /* one colour per scheme label */
    s->colour = -1;
    for (int j = 0; j < k && s->colour < 0; j++)
      if (!strcmp(sr[j].label ? sr[j].label : "", s->label ? s->label : "")) s->colour = sr[j].colour;
    if (s->colour < 0) {
      int used = 0;
      for (int j = 0; j < k; j++)
        if (sr[j].colour >= used) used = sr[j].colour + 1;
      s->colour = used;
    }
  }
  /* the script: every file name below is one of ours, relative to dir */
  if (!(outname = malloc(8 + strlen(fm->ext)))) {
    cli_error("out of memory.");
    goto done;
  }
  sprintf(outname, "out.%s", fm->ext);
  fprintf(sc, "cd '%s'\nset encoding utf8\nset terminal %s\nset output '%s'\nset datafile missing '?'\n", dir,
          fm->terminal, outname);
  fputs("set grid\nset border lw 1\n", sc);
  int panels = c[0].conv ? ncomp : (ny ? ny : 4);
  int rows_l = c[0].conv ? (panels > 2 ? 2 : 1) : (ny ? ny : 2), cols_l = c[0].conv ? (panels > 1 ? 2 : 1) : (ny ? 1 : 2);
  double bottom = 0.09 + 0.025 * (n > 4 ? 2 : 1);
  /* convergence: the key in the free fourth cell, or below the panels */
  if (c[0].conv && panels != 3) bottom = 0.25;
  fprintf(sc, "set multiplot layout %d,%d margins 0.09,0.97,%.3f,0.90 spacing 0.09,0.11 title ", rows_l, cols_l,
          bottom);
  put_text(sc, title, fm->tex);
  fputs("\n", sc);
  if (c[0].conv && panels == 3) fputs("set key at screen 0.76,0.27 center center vertical box opaque\n", sc);
  else key_below(sc);
  if (!c[0].conv) {
    fputs("set xlabel 't", sc);
    put_unit(sc, unit_all(c, n, "t"), fm->tex);
    fputs("'\n", sc);
    run_script(sc, fm, n, legend, rc, ys, ny, r, c);
  } else {
    if (panels != 3) fputs("set key maxcols 2\n", sc);
    /* tics at the step sizes (numbers we parsed) when there are few */
    if (nh <= 12) {
      fputs("set xtics (", sc);
      for (int j = 0; j < nh; j++) fprintf(sc, "%s%.6g", j ? ", " : "", ht[j]);
      fputs(")\n", sc);
    }
    fprintf(sc, "set logscale xy\nset format y '%s'\nset xlabel 'step size h", fm->tex ? "$10^{%L}$" : "%.0e");
    put_unit(sc, unit_all(c, n, "h"), fm->tex);
    fputs("'\n", sc);
    /* errors at t_end, or the maximum over the run (converge --error max) */
    int emax = 1;
    for (int i = 0; i < n; i++) {
      const char *e = meta_get(&c[i], "error");
      emax = emax && e && !strncmp(e, "max over", 8);
    }
    fprintf(sc, "set xrange [%.6g:%.6g]\n", hr.lo / 1.3, hr.hi * 1.3);
    for (int p = 0; p < ncomp; p++) {
      fputs("set title '", sc);
      char t[80], col[48];
      snprintf(t, sizeof t, emax ? "maximum error in %s over the run" : "error in %s at the end", comps[p]);
      put_text_body(sc, t, fm->tex);
      snprintf(col, sizeof col, "err_%s", comps[p]);
      put_unit(sc, unit_all(c, n, col), fm->tex);
      fputs("'\n", sc);
      log_range(sc, "y", er[p].lo, er[p].hi);
      if (p > 0) fputs("unset key\n", sc);
      /* reference slopes through the geometric mean of the errors at the
       * largest step */
      double la = 0, hmax = 0;
      int m = 0;
      for (int k = 0; k < ns; k++)
        if (sr[k].panel == p && sr[k].emax_h > 0) la += log(sr[k].emax_h), m++, hmax = fmax(hmax, sr[k].hmax);
      int any = 0;
      if (m) {
        double ea = exp(la / m);
        for (int q = 1; q <= 4; q++)
          fprintf(sc, "%s(x >= %.17g && x <= %.17g) ? %.17g*(x/%.17g)**%d : 1/0 with lines lw 1 dt %d lc rgb "
                      "'#999999' title 'slope %d'",
                  any++ ? ", " : "plot ", hr.lo, hmax, ea, hmax, q, q + 1, q);
      }
      for (int k = 0; k < ns; k++) {
        if (sr[k].panel != p) continue;
        fprintf(sc, "%s'd%d.txt' using 1:%d with linespoints lw 2 pt 7 ps 0.8 lc rgb '%s' title ", any++ ? ", " : "plot ",
                sr[k].file, 2 + (sr[k].col - 1), colours[sr[k].colour % NCOLOURS]);
        /* the legend (first panel) gives the fitted order of every
         * component of this scheme */
        char lab[600];
        int len = snprintf(lab, sizeof lab, "%.200s (order", sr[k].label ? sr[k].label : "run");
        for (int j = 0; j < ns && len < 500; j++)
          if (sr[j].colour == sr[k].colour)
            len += snprintf(lab + len, sizeof lab - (size_t)len, "%s %.20s %.2f", len > 0 && lab[len - 1] != 'r' ? "," : "",
                            sr[j].comp, sr[j].order);
        snprintf(lab + len, sizeof lab - (size_t)len, ")");
        put_text(sc, lab, fm->tex);
      }
      fputc('\n', sc);
    }
  }
  fputs("unset multiplot\n", sc);
  int werr = fclose(sc) != 0;
  sc = NULL;
  if (werr) {
    cli_error("out of memory.");
    goto done;
  }
  status = draw(dir, script, slen, outname, dest);
done:
  if (in) fclose(in);
  if (out) fclose(out);
  if (sc) fclose(sc);
  for (int i = 0; i < ndata; i++) {
    char name[32];
    snprintf(name, sizeof name, "d%d.txt", i);
    char *path = join(dir, name);
    if (path) unlink(path);
    free(path);
  }
  if (have_dir) rmdir(dir);
  for (int k = 0; k < ns; k++) free(sr[k].label);
  free(sr);
  for (int i = 0; i < n; i++) {
    csv_free(&c[i]);
    free(legend[i]);
  }
  free(title);
  free(script);
  free(outname);
  free(line);
  free(ybuf);
  free(f);
  return status;
}

int cli_plot(const char *csv, const char *png) { return cli_plot_files(&csv, 1, png, "png", NULL); }
