/* livens plot: figures from a run CSV or a convergence CSV, drawn by
 * gnuplot.  The CSV is reduced here to the quantities users look at
 * (energy error, momentum-map changes, constraint residuals), written to a
 * temporary data file, and gnuplot draws that.
 *
 * Hostile input: gnuplot scripts are code, and gnuplot also treats file
 * names as code ('<cmd' reads from a pipe, '|cmd' as output writes to one),
 * so no user string reaches gnuplot as a name or as script text.  Every file
 * gnuplot sees lives in a private mkdtemp directory under a generated name
 * (data.txt, out.png, plot.gp); the figure is renamed to the user's path by
 * us afterwards.  Titles (CSV column names, the CSV's name) are reduced to a
 * whitelist of characters that cannot close a quoted string or form
 * enhanced-text markup, and printed with noenhanced.  gnuplot runs through
 * fork/execvp with the script as a file argument: no shell anywhere.  The
 * script is built in a growing memory buffer, so no user-controlled length
 * meets a fixed buffer.  LIVENS_PLOT_NO_EXEC=1 writes the script without
 * running gnuplot (fuzzing, tests). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

#define MAXCOLS 4096

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

/* A user string as the body of a single-quoted gnuplot string: only
 * characters that cannot end the string or start markup are kept (quotes,
 * backslashes, braces, @ ^ _ & ~ and control bytes become '?'), and the
 * length is capped so a 300 000-character header gives a readable title. */
static void put_title(FILE *s, const char *t) {
  size_t n = 0;
  fputc('\'', s);
  for (; *t && n < 80; t++, n++) {
    unsigned char ch = (unsigned char)*t;
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             strchr(" .,:;+-=()[]/|<>*%#!$", ch) != NULL;
    fputc(ok && ch ? ch : '?', s);
  }
  if (*t) fputs("...", s);
  fputs("' noenhanced", s);
}

/* dir/name in a new allocation (NULL when out of memory). */
static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Write the script to dir/plot.gp and run gnuplot on it; then move
 * dir/out.png to @p png.  Returns CLI_OK or CLI_FAILED (message printed). */
static int draw(const char *dir, const char *script, size_t len, const char *png) {
  char *gp = NULL, *out = NULL;
  int status = CLI_FAILED;
  if (!(gp = join(dir, "plot.gp")) || !(out = join(dir, "out.png"))) {
    cli_error("out of memory.");
    goto done;
  }
  FILE *f = fopen(gp, "w");
  if (!f || fwrite(script, 1, len, f) != len || fclose(f) != 0) {
    cli_error("cannot write a temporary gnuplot script.");
    goto done;
  }
  if (getenv("LIVENS_PLOT_NO_EXEC")) {
    status = CLI_OK;
    goto done;
  }
  if (gnuplot_exec(gp) != 0) {
    cli_error("gnuplot failed to draw '%s'.", png);
    goto done;
  }
  if (rename(out, png) != 0) {
    /* another file system: copy */
    FILE *a = fopen(out, "rb"), *b = a ? fopen(png, "wb") : NULL;
    char buf[65536];
    size_t k;
    int bad = !b;
    while (!bad && (k = fread(buf, 1, sizeof buf, a)) > 0)
      if (fwrite(buf, 1, k, b) != k) bad = 1;
    if (a) fclose(a);
    if (b && fclose(b) != 0) bad = 1;
    if (bad) {
      cli_error("cannot write '%s': %s.", png, strerror(errno));
      goto done;
    }
  }
  status = CLI_OK;
done:
  if (gp) unlink(gp);
  if (out) unlink(out);
  free(gp);
  free(out);
  return status;
}

int cli_plot_draw(const char *dir, const char *script, size_t len, const char *png) {
  return draw(dir, script, len, png);
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
  char *header = NULL, *script = NULL, *data = NULL;
  size_t slen = 0;
  FILE *sc = NULL, *out = NULL;
  char dir[] = "/tmp/livens-plot-XXXXXX";
  int have_dir = 0;
  int status = CLI_USAGE;
  if (!names || !f || getline(&line, &cap, in) < 0) {
    cli_error("'%s' is empty or unreadable.", csv);
    goto done;
  }
  header = strdup(line);
  if (!header) {
    cli_error("out of memory.");
    status = CLI_FAILED;
    goto done;
  }
  int ncol = split(header, names, MAXCOLS);
  if (!cli_have_gnuplot()) {
    cli_error("gnuplot is not installed (apt-get install gnuplot-nox).");
    status = CLI_FAILED;
    goto done;
  }
  if (strcmp(names[0], "case") == 0 && find(names, ncol, "status") >= 0) {
    status = cli_plot_sweep(csv, png); /* a sweep summary (sweep_plot.c, issue 21) */
    goto done;
  }
  int conv = strcmp(names[0], "h") == 0;
  int it = find(names, ncol, "t"), ie = find(names, ncol, "energy"), ig = find(names, ncol, "g_norm"),
      iv = find(names, ncol, "gv_norm"), ip = find(names, ncol, "gp_norm");
  int im[64], nm = 0;
  for (int c = 0; c < ncol && nm < 64; c++)
    if (strncmp(names[c], "momentum", 8) == 0) im[nm++] = c;
  if (!conv && (it < 0 || ie < 0 || ig < 0 || iv < 0)) {
    cli_error("'%s' is not a livens run CSV (it needs the columns t, energy, g_norm, gv_norm).", csv);
    goto done;
  }
  if (conv && ncol < 2) {
    cli_error("'%s' is a convergence CSV without error columns.", csv);
    goto done;
  }
  status = CLI_FAILED;
  if (!mkdtemp(dir)) {
    cli_error("cannot create a temporary directory: %s.", strerror(errno));
    goto done;
  }
  have_dir = 1;
  if (!(data = join(dir, "data.txt")) || !(out = fopen(data, "w")) ||
      !(sc = open_memstream(&script, &slen))) {
    cli_error("cannot create a temporary file.");
    goto done;
  }
  double E0 = 0, J0[64] = {0};
  long rows = 0;
  while (getline(&line, &cap, in) > 0) {
    if (conv) {
      /* copied as data: gnuplot reads numbers from it, never code */
      fputs(line, out);
      rows++;
      continue;
    }
    int n = split(line, f, MAXCOLS);
    if (n != ncol) continue;
    double E = atof(f[ie]);
    if (rows == 0) {
      E0 = E;
      for (int k = 0; k < nm; k++) J0[k] = atof(f[im[k]]);
    }
    double scale = E0 != 0 ? E0 : 1.0;
    fprintf(out, "%.17g %.17g", atof(f[it]), (E - E0) / (scale < 0 ? -scale : scale));
    for (int k = 0; k < nm; k++) fprintf(out, " %.17g", atof(f[im[k]]) - J0[k]);
    fprintf(out, " %.17g %.17g %.17g\n", atof(f[ig]), atof(f[iv]), atof(ip >= 0 ? f[ip] : f[iv]));
    rows++;
  }
  int werr = fclose(out) != 0;
  out = NULL;
  if (werr) {
    cli_error("cannot write a temporary data file.");
    goto done;
  }
  if (rows == 0) {
    cli_error("'%s' has no data rows.", csv);
    status = CLI_USAGE;
    goto done;
  }
  /* every file name below is one of ours, relative to the private dir */
  fprintf(sc, "cd '%s'\n", dir);
  if (conv) {
    fputs("set terminal pngcairo size 900,700 enhanced\nset output 'out.png'\nset datafile separator ','\n"
          "set logscale xy\nset xlabel 'step size h'\nset ylabel 'error at t_{end}'\nset grid\n"
          "set key left top\nset title 'livens: convergence'\nplot ",
          sc);
    for (int c = 1; c < ncol; c++) {
      fprintf(sc, "%s'data.txt' using 1:%d with linespoints lw 2 title ", c > 1 ? ", " : "", c + 1);
      put_title(sc, names[c]);
    }
    fputs("\n", sc);
  } else {
    fputs("set terminal pngcairo size 1200,900 enhanced\nset output 'out.png'\nset multiplot layout 2,2 title ",
          sc);
    put_title(sc, csv);
    fputs("\nset grid\nset xlabel 't'\n"
          "set title 'relative energy error (E - E_0)/|E_0|'\nplot 'data.txt' using 1:2 with lines notitle\n"
          "set title 'momentum maps J_k - J_k(0)'\n",
          sc);
    if (nm == 0) fputs("set label 1 'no symmetries' at graph 0.4,0.5\nplot 0 notitle\nunset label 1\n", sc);
    for (int m = 0; m < nm; m++)
      fprintf(sc, "%s'data.txt' using 1:%d with lines title 'J_%d'", m == 0 ? "plot " : ", ", 3 + m, m + 1);
    if (nm) fputs("\n", sc);
    int c0 = 3 + nm;
    fprintf(sc,
            "set title 'position constraint max|g(q)|'\nset logscale y\nset format y '%%.0e'\n"
            "plot 'data.txt' using 1:($%d+1e-18) with lines notitle\n"
            "set title 'velocity constraints'\n"
            "plot 'data.txt' using 1:($%d+1e-18) with lines title 'max|G v|', 'data.txt' using 1:($%d+1e-18) "
            "with lines title 'max|G M^{-1}p|'\nunset multiplot\n",
            c0, c0 + 1, c0 + 2);
  }
  werr = fclose(sc) != 0;
  sc = NULL;
  if (werr) {
    cli_error("out of memory.");
    goto done;
  }
  status = draw(dir, script, slen, png);
done:
  if (out) fclose(out);
  if (sc) fclose(sc);
  if (data) unlink(data);
  if (have_dir) rmdir(dir);
  free(data);
  free(script);
  free(line);
  free(header);
  free(names);
  free(f);
  fclose(in);
  return status;
}
