/* livens plot DIR/summary.csv: the figure of a sweep (issue 21).
 *
 * One axis: the maximum relative energy error against it (log scale), the
 * cases that are not ok marked with crosses at the top.  Two or more axes:
 * a map over two of them (x: the step axis if there is one, else the last
 * axis; y: the first other axis), each cell coloured by log10 of the
 * largest relative energy error of its cases and crossed when any of them
 * is not ok (blow-up, Newton failure, refused input): a stability map.
 *
 * Same rules as plot.c: gnuplot reads numbers from private files under
 * generated names (cli_plot_draw), axis values reach the script only as
 * tic labels reduced to a whitelist of characters that cannot end a quoted
 * string, and the terminal is noenhanced, so no user string is code. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sweep.h"

/* Split a CSV line (RFC 4180 quotes) into fields, in place; returns the
 * number of fields, or -1 when there are more than @p max. */
static int csv_split(char *line, char **f, int max) {
  int n = 0;
  char *r = line, *w = line;
  line[strcspn(line, "\r\n")] = '\0';
  for (;;) {
    if (n >= max) return -1;
    f[n++] = w;
    if (*r == '"') {
      r++;
      for (; *r; r++) {
        if (*r == '"' && r[1] == '"') *w++ = '"', r++;
        else if (*r == '"') {
          r++;
          break;
        } else
          *w++ = *r;
      }
      while (*r && *r != ',') r++;
    } else
      while (*r && *r != ',') *w++ = *r++;
    if (*r != ',') {
      *w = '\0';
      return n;
    }
    r++;
    *w++ = '\0';
  }
}

/* A tic label: whitelisted characters only (no quote or backslash can end
 * the gnuplot string), at most 24 of them. */
static void put_label(FILE *s, const char *t) {
  fputc('"', s);
  for (int n = 0; *t && n < 24; t++, n++) {
    unsigned char c = (unsigned char)*t;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(" .,:;+-=()/_*%#!<>", c);
    fputc(ok && c ? c : '?', s);
  }
  fputc('"', s);
}

typedef struct {
  char **v;
  int n;
} distinct;

/* Index of @p x among the values seen so far (added if new); -1 when out
 * of memory. */
static int value_index(distinct *d, const char *x) {
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->v[i], x) == 0) return i;
  char **g = realloc(d->v, sizeof *g * (size_t)(d->n + 1));
  if (!g) return -1;
  d->v = g;
  if (!(d->v[d->n] = strdup(x))) return -1;
  return d->n++;
}

static void tics(FILE *s, const char *which, const distinct *d) {
  int every = d->n > 24 ? (d->n + 23) / 24 : 1;
  fprintf(s, "set %stics (", which);
  for (int i = 0, first = 1; i < d->n; i += every, first = 0) {
    if (!first) fputs(", ", s);
    put_label(s, d->v[i]);
    fprintf(s, " %d", i);
  }
  fputs(")\n", s);
}

int cli_plot_sweep(const char *csv, const char *png) {
  FILE *in = fopen(csv, "r");
  if (!in) return cli_error("cannot read '%s'.", csv), CLI_USAGE;
  enum { MAXF = 256 };
  char *line = NULL, *hdr = NULL, *f[MAXF], *h[MAXF], *script = NULL, *pd = NULL, *pf = NULL;
  size_t cap = 0, slen = 0;
  distinct dx = {NULL, 0}, dy = {NULL, 0};
  double *val = NULL, *rval = NULL;
  int *bad = NULL, *rcell = NULL, nh = -1, status = CLI_USAGE, have_dir = 0;
  char dir[] = "/tmp/livens-plot-XXXXXX";
  FILE *sc = NULL, *od = NULL, *of = NULL;
  if (getline(&line, &cap, in) < 0 || !(hdr = strdup(line)) || (nh = csv_split(hdr, h, MAXF)) < 0) {
    cli_error("'%s' is not a sweep summary (no header, or more than %d columns).", csv, MAXF);
    goto done;
  }
  int is = -1, ie = -1, iseed = -1;
  for (int i = 0; i < nh; i++) {
    if (strcmp(h[i], "status") == 0 && is < 0) is = i;
    if (strcmp(h[i], "max_rel_energy_error") == 0) ie = i;
    if (strcmp(h[i], "seed") == 0 && iseed < 0) iseed = i;
  }
  int nax = (iseed >= 0 && iseed < is ? iseed : is) - 1;
  if (is < 0 || ie < 0 || nax < 1) {
    cli_error("'%s' is not a sweep summary (it needs case, axis columns, status and max_rel_energy_error).", csv);
    goto done;
  }
  int ax = 1 + nax - 1, ay = -1; /* columns: the step axis, else the last; y the first other */
  for (int i = 1; i <= nax; i++)
    if (strcmp(h[i], "step") == 0) ax = i;
  for (int i = 1; i <= nax && ay < 0; i++)
    if (i != ax) ay = i;
  /* the rows first (their cell and figure), then the cells: the worst
   * energy error of their ok cases, and whether any case failed */
  long rows = 0, rcap = 0;
  status = CLI_FAILED;
  while (getline(&line, &cap, in) > 0) {
    int n = csv_split(line, f, MAXF);
    if (n != nh) continue;
    int x = value_index(&dx, f[ax]), y = ay > 0 ? value_index(&dy, f[ay]) : 0;
    if (x < 0 || y < 0) goto oom;
    if (rows == rcap) {
      rcap = rcap ? 2 * rcap : 64;
      int *c2 = realloc(rcell, sizeof *c2 * 2 * (size_t)rcap);
      if (!c2) goto oom;
      rcell = c2;
      double *e2 = realloc(rval, sizeof *e2 * (size_t)rcap);
      if (!e2) goto oom;
      rval = e2;
    }
    rcell[2 * rows] = x;
    rcell[2 * rows + 1] = y;
    rval[rows] = strcmp(f[is], "ok") == 0 ? strtod(f[ie], NULL) : INFINITY; /* inf: not ok */
    rows++;
  }
  if (rows == 0) {
    cli_error("'%s' has no data rows.", csv);
    status = CLI_USAGE;
    goto done;
  }
  long ncell = (long)dx.n * (ay > 0 ? dy.n : 1);
  if (!(val = malloc(sizeof *val * (size_t)ncell)) || !(bad = calloc((size_t)ncell, sizeof *bad))) goto oom;
  for (long k = 0; k < ncell; k++) val[k] = NAN;
  for (long r = 0; r < rows; r++) {
    long k = (long)rcell[2 * r + 1] * dx.n + rcell[2 * r];
    if (isinf(rval[r])) bad[k] = 1;
    else if (!(val[k] >= rval[r])) val[k] = rval[r]; /* also replaces the NaN start */
  }
  int nx = dx.n, ny = ay > 0 ? dy.n : 1;
  if (!mkdtemp(dir)) {
    cli_error("cannot create a temporary directory: %s.", strerror(errno));
    goto done;
  }
  have_dir = 1;
  size_t dl = strlen(dir) + 16;
  if (!(pd = malloc(dl)) || !(pf = malloc(dl))) goto oom;
  snprintf(pd, dl, "%s/data.txt", dir);
  snprintf(pf, dl, "%s/fail.txt", dir);
  if (!(od = fopen(pd, "w")) || !(of = fopen(pf, "w")) || !(sc = open_memstream(&script, &slen))) {
    cli_error("cannot create a temporary file.");
    goto done;
  }
  double top = 1e-300;
  for (long k = 0; k < ncell; k++)
    if (val[k] == val[k] && val[k] > top) top = val[k];
  int nfail = 0, nok = 0;
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++) {
      double v = val[(long)j * nx + i];
      if (v == v) fprintf(od, "%d %d %.17g\n", i, j, log10(fmax(v, 1e-17))), nok++;
      if (bad[(long)j * nx + i]) fprintf(of, "%d %d %.17g\n", i, j, ay > 0 ? (double)j : log10(fmax(top, 1e-17)) + 1),
                                  nfail++;
    }
  int werr = fclose(od) != 0;
  od = NULL;
  werr |= fclose(of) != 0;
  of = NULL;
  if (werr) {
    cli_error("cannot write a temporary data file.");
    goto done;
  }
  fprintf(sc, "cd '%s'\nset terminal pngcairo noenhanced size 1100,800\nset output 'out.png'\nset grid\n", dir);
  fprintf(sc, "set title 'livens sweep: %s'\nset key below\n",
          ay > 0 ? "log10 max relative energy error per cell; x: a case not ok (blow-up, solver failure, refused input)"
                 : "max relative energy error; not ok (blow-up, solver failure, refused input) drawn at the top");
  fputs("set xlabel ", sc);
  put_label(sc, h[ax]);
  fprintf(sc, "\nset xrange [-0.5:%g]\n", nx - 0.5);
  tics(sc, "x", &dx);
  if (ay > 0) {
    fputs("set ylabel ", sc);
    put_label(sc, h[ay]);
    fprintf(sc, "\nset yrange [-0.5:%g]\n", ny - 0.5);
    tics(sc, "y", &dy);
    fputs("set cblabel 'log10 max|E - E0|/|E0|'\nset palette defined (0 '#2c7bb6', 1 '#abd9e9', 2 '#ffffbf', "
          "3 '#fdae61', 4 '#d7191c')\nunset grid\n",
          sc);
    fprintf(sc, "plot %s%s%s\n",
            nok ? "'data.txt' using 1:2:(0.48):(0.48):3 with boxxy fill solid 1.0 lc palette notitle" : "",
            nok && nfail ? ", " : "",
            nfail ? "'fail.txt' using 1:2 with points pt 2 ps 3 lw 3 lc rgb 'black' title 'not ok'" : "");
    if (!nok && !nfail) fputs("plot 0 notitle\n", sc);
  } else {
    fputs("set ylabel 'log10 max|E - E0|/|E0|'\n", sc);
    fprintf(sc, "plot %s%s%s\n",
            nok ? "'data.txt' using 1:3 with linespoints lw 2 pt 7 title 'ok'" : "", nok && nfail ? ", " : "",
            nfail ? "'fail.txt' using 1:3 with points pt 2 ps 3 lw 3 lc rgb 'red' title 'not ok'" : "");
  }
  werr = fclose(sc) != 0;
  sc = NULL;
  if (werr) goto oom;
  status = cli_plot_draw(dir, script, slen, png);
  goto done;
oom:
  cli_error("out of memory.");
  status = CLI_FAILED;
done:
  if (od) fclose(od);
  if (of) fclose(of);
  if (sc) fclose(sc);
  if (pd) unlink(pd);
  if (pf) unlink(pf);
  if (have_dir) rmdir(dir);
  for (int i = 0; i < dx.n; i++) free(dx.v[i]);
  for (int i = 0; i < dy.n; i++) free(dy.v[i]);
  free(dx.v), free(dy.v), free(val), free(bad), free(rval), free(rcell), free(pd), free(pf), free(script), free(line), free(hdr);
  fclose(in);
  return status;
}
