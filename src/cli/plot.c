/* livens plot: figures from a run CSV or a convergence CSV, drawn by
 * gnuplot.  The CSV is reduced here to the quantities users look at
 * (energy error, momentum-map changes, constraint residuals), written to a
 * temporary data file, and gnuplot draws that. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define MAXCOLS 4096

int cli_have_gnuplot(void) {
  FILE *p = popen("gnuplot --version >/dev/null 2>&1", "r");
  if (!p) return 0;
  return pclose(p) == 0;
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

static int gnuplot_run(const char *script) {
  FILE *gp = popen("gnuplot", "w");
  if (!gp) return -1;
  fputs(script, gp);
  return pclose(gp);
}

/* Convergence CSV: "h,err_q,err_v,..." -> log-log error vs step size. */
static int plot_convergence(const char *csv, const char *png, char **names, int ncol) {
  char script[8192];
  int k = snprintf(script, sizeof script,
                   "set terminal pngcairo size 900,700 enhanced\nset output '%s'\nset datafile separator ','\n"
                   "set logscale xy\nset xlabel 'step size h'\nset ylabel 'error at t_{end}'\nset grid\n"
                   "set key left top\nset title 'livens: convergence'\nplot ",
                   png);
  for (int c = 1; c < ncol && k < (int)sizeof script - 200; c++)
    k += snprintf(script + k, sizeof script - (size_t)k, "%s'%s' using 1:%d with linespoints lw 2 title '%s'",
                  c > 1 ? ", " : "", csv, c + 1, names[c]);
  snprintf(script + k, sizeof script - (size_t)k, "\n");
  return gnuplot_run(script);
}

int cli_plot(const char *csv, const char *png) {
  FILE *in = fopen(csv, "r");
  if (!in) {
    cli_error("cannot read '%s'.", csv);
    return CLI_USAGE;
  }
  size_t cap = 0;
  char *line = NULL;
  char **names = calloc(MAXCOLS, sizeof *names), **f = calloc(MAXCOLS, sizeof *f);
  char *header = NULL;
  int status = CLI_USAGE;
  if (!names || !f || getline(&line, &cap, in) < 0) {
    cli_error("'%s' is empty or unreadable.", csv);
    goto done;
  }
  header = strdup(line);
  int ncol = split(header, names, MAXCOLS);
  if (!cli_have_gnuplot()) {
    cli_error("gnuplot is not installed (apt-get install gnuplot-nox).");
    status = CLI_FAILED;
    goto done;
  }
  if (strcmp(names[0], "h") == 0) {
    status = plot_convergence(csv, png, names, ncol) == 0 ? CLI_OK : CLI_FAILED;
    if (status) cli_error("gnuplot failed to draw '%s'.", png);
    goto done;
  }
  int it = find(names, ncol, "t"), ie = find(names, ncol, "energy"), ig = find(names, ncol, "g_norm"),
      iv = find(names, ncol, "gv_norm"), ip = find(names, ncol, "gp_norm");
  int im[64], nm = 0;
  for (int c = 0; c < ncol && nm < 64; c++)
    if (strncmp(names[c], "momentum", 8) == 0) im[nm++] = c;
  if (it < 0 || ie < 0 || ig < 0 || iv < 0) {
    cli_error("'%s' is not a livens run CSV (it needs the columns t, energy, g_norm, gv_norm).", csv);
    goto done;
  }
  char tmpl[] = "/tmp/livens-plot-XXXXXX";
  int fd = mkstemp(tmpl);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) {
    cli_error("cannot create a temporary file.");
    status = CLI_FAILED;
    goto done;
  }
  double E0 = 0, J0[64] = {0};
  long rows = 0;
  while (getline(&line, &cap, in) > 0) {
    int n = split(line, f, MAXCOLS);
    if (n != ncol) continue;
    double E = atof(f[ie]);
    if (rows == 0) {
      E0 = E;
      for (int k = 0; k < nm; k++) J0[k] = atof(f[im[k]]);
    }
    double scale = E0 != 0 ? E0 : 1.0;
    fprintf(out, "%s %.17g", f[it], (E - E0) / (scale < 0 ? -scale : scale));
    for (int k = 0; k < nm; k++) fprintf(out, " %.17g", atof(f[im[k]]) - J0[k]);
    fprintf(out, " %s %s %s\n", f[ig], f[iv], ip >= 0 ? f[ip] : f[iv]);
    rows++;
  }
  fclose(out);
  if (rows == 0) {
    cli_error("'%s' has no data rows.", csv);
    unlink(tmpl);
    goto done;
  }
  char script[8192];
  int k = snprintf(script, sizeof script,
                   "set terminal pngcairo size 1200,900 enhanced\nset output '%s'\nset multiplot layout 2,2 "
                   "title '%s'\nset grid\nset xlabel 't'\n"
                   "set title 'relative energy error (E - E_0)/|E_0|'\nplot '%s' using 1:2 with lines notitle\n"
                   "set title 'momentum maps J_k - J_k(0)'\n",
                   png, csv, tmpl);
  if (nm == 0) k += snprintf(script + k, sizeof script - (size_t)k, "set label 1 'no symmetries' at graph 0.4,0.5\nplot 0 notitle\nunset label 1\n");
  for (int m = 0; m < nm; m++)
    k += snprintf(script + k, sizeof script - (size_t)k, "%s'%s' using 1:%d with lines title 'J_%d'",
                  m == 0 ? "plot " : ", ", tmpl, 3 + m, m + 1);
  if (nm) k += snprintf(script + k, sizeof script - (size_t)k, "\n");
  int c0 = 3 + nm;
  snprintf(script + k, sizeof script - (size_t)k,
           "set title 'position constraint max|g(q)|'\nset logscale y\nset format y '%%.0e'\n"
           "plot '%s' using 1:($%d+1e-18) with lines notitle\n"
           "set title 'velocity constraints'\n"
           "plot '%s' using 1:($%d+1e-18) with lines title 'max|G v|', '%s' using 1:($%d+1e-18) with lines "
           "title 'max|G M^{-1}p|'\nunset multiplot\n",
           tmpl, c0, tmpl, c0 + 1, tmpl, c0 + 2);
  int rc = gnuplot_run(script);
  unlink(tmpl);
  if (rc != 0) {
    cli_error("gnuplot failed to draw '%s'.", png);
    status = CLI_FAILED;
  } else {
    status = CLI_OK;
  }
done:
  free(line);
  free(header);
  free(names);
  free(f);
  fclose(in);
  return status;
}
