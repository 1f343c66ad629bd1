/* livens: the command-line program.
 *
 *   livens [demo]                                   default demonstration
 *   livens list                                     models and schemes
 *   livens run MODEL [options] | livens run FILE.ini
 *   livens compare MODEL --schemes S1,S2,... [--out T.csv|T.json] [options]
 *   livens converge MODEL --scheme S|--schemes S1,... --steps H1,H2,... [options]
 *   livens plot FILE.csv... [--out OUT.png|.svg|.pdf|.tex] [--y COLS]
 *   livens plot SYSTEM.yaml [run options] [--out OUT...] (run, then plot)
 *   livens check MODEL [--param k=v]...
 *   livens sweep FILE.ini [--out DIR] [--jobs N] [--list]   parameter study (sweep.c)
 *
 * Wrong input: one sentence on stderr, exit status 2.  A failed
 * computation: exit status 1 (every accepted step is in the output). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <errno.h>
#include <getopt.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

static const char usage_text[] =
    "usage: livens [demo]\n"
    "       livens list [FILE.yaml]\n"
    "       livens run MODEL [--scheme S] [--step H] [--t-end T] [--param K=V]... [--opt K=V]...\n"
    "                        [--out FILE.csv] [--every N] [--halving N] [--linsol auto|dense|umfpack|klu|sparse]\n"
    "                        [--newton-tol TOL] [--newton default|full|simplified|modified]\n"
    "                        [--summary FILE.json] [--output-dt DT | --output-times T1,T2,...]\n"
    "                        [--checkpoint FILE [--checkpoint-every N]] [--resume FILE]\n"
    "       livens run FILE.ini\n"
    "       livens compare MODEL --schemes S1,S2,... [--out FILE.csv|FILE.json] [--plot FIG.png|.svg|.pdf|.tex]\n"
    "                        [run options]\n"
    "       livens converge MODEL --scheme S|--schemes S1,S2,... --steps H1,H2,... [--ref-step H] [--ref-scheme S]\n"
    "                        [--error end|max] [--reference FILE.csv]\n"
    "                        [--out FILE.csv|FILE.json] [run options]\n"
    "       livens plot FILE.csv... [--out OUT.png|.svg|.pdf|.tex] [--format png|svg|pdf|tex] [--y COL1,COL2,...]\n"
    "       livens plot SYSTEM.yaml [run options] [--out OUT.png|.svg|.pdf|.tex] (runs it, then plots)\n"
    "       livens check MODEL [--param K=V]...\n"
    "       livens sweep FILE.ini [--out DIR] [--jobs N] [--list]   (under mpirun: cases handed out to the ranks)\n"
    "       (every MODEL may be a plugin's: --model-lib ./libmine.so, see examples/plugin_model.c)\n";

static void summary_header(FILE *o) {
  fprintf(o, "%-12s %11s %11s %11s %11s %11s %11s %9s %10s %9s\n", "scheme", "max|dE|/E0", "drift/t",
          "max|dJ|", "max|g|", "max|Gv|", "max|GM-1p|", "newton/st", "steps/s", "status");
}

static void summary_row(FILE *o, const char *scheme, const cli_result *r) {
  double nps = r->st.steps ? (double)r->st.newton_iterations / (double)r->st.steps : 0.0;
  double sps = r->st.wall_time > 0 ? (double)r->st.steps / r->st.wall_time : 0.0;
  fprintf(o, "%-12s ", scheme);
  if (isnan(r->sum.max_rel_energy_error)) /* E0 = 0: relative figures undefined */
    fprintf(o, "%11s %11s", "n/a (E0=0)", "n/a");
  else
    fprintf(o, "%11.3e %11.3e", r->sum.max_rel_energy_error, r->sum.energy_drift_rate);
  fprintf(o, " %11.3e %11.3e %11.3e %11.3e %9.2f %10.4g %9s\n", r->sum.max_momentum_error, r->sum.max_g,
          r->sum.max_gv, r->sum.max_gp, nps, sps, r->status ? lv_status_name(r->status) : "ok");
  if (isnan(r->sum.max_rel_energy_error))
    fprintf(o, "%-12s E0 = 0, so the energy error is given absolute: max|E - E0| = %.3e\n", "",
            r->sum.max_abs_energy_error);
}

static int cmd_list(void) {
  printf("Models (livens run MODEL --param NAME=VALUE):\n");
  for (const lv_model_info *const *m = lv_model_registry(); *m; m++) {
    printf("  %-16s %s\n", (*m)->name, (*m)->description);
    cli_run r;
    cli_run_defaults(&r);
    snprintf(r.model, sizeof r.model, "%s", (*m)->name);
    cli_run_fill_defaults(&r);
    printf("      default: --step %g --t-end %g\n", r.h, r.t_end);
    for (const lv_param_info *p = (*m)->params; p->name; p++)
      printf("      %-14s = %-10s %s\n", p->name, p->default_value, p->doc);
  }
  printf("\nSchemes (--scheme NAME --opt NAME=VALUE):\n");
  for (const lv_scheme_type *const *s = lv_scheme_registry(); *s; s++) {
    printf("  %-16s %s\n", (*s)->name, (*s)->description);
    printf("      conserves: %s\n", (*s)->conserves);
    for (const lv_param_info *p = (*s)->options; p && p->name; p++)
      printf("      %-14s = %-10s %s\n", p->name, p->default_value, p->doc);
  }
  /* the works cited above, in full (issue 17) */
  printf("\nEquation, section and table numbers are those of the work named with them; the full references are in\n"
         "doc/references.md (installed with the documentation) and in man livens, REFERENCES.\n");
  return cli_list_table(stdout, NULL); /* which scheme runs which model in which formulation */
}

static int open_out(const char *path, FILE **f) {
  *f = NULL;
  if (!path[0]) return CLI_OK;
  *f = fopen(path, "w");
  if (!*f) {
    cli_error("cannot write '%s': %s.", path, strerror(errno));
    return CLI_USAGE;
  }
  return CLI_OK;
}

/* A run's CSV: through a row keeper (rows.c), so a killed run leaves only
 * whole rows. */
static int open_rows(const char *path, FILE **f) {
  *f = NULL;
  if (!path[0]) return CLI_OK;
  if (cli_rows_open(path, f) != 0) {
    cli_error("cannot write '%s': %s.", path, strerror(errno));
    return CLI_USAGE;
  }
  return CLI_OK;
}

/* Same file by device and inode, so "./a.ini" and "a.ini" (or a link) match;
 * a path that does not exist yet is no input. */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* fclose's result too: the last buffered bytes are written there (for a
 * row keeper's pipe, the keeper's own result). */
static int close_out(FILE *f, const char *path) {
  if (!f) return CLI_OK;
  int err = ferror(f); /* a write that failed before the close */
  if (cli_rows_close(f) != 0 || err) {
    if (err && !errno) errno = EIO;
    cli_error("cannot write %s: %s.", path, strerror(errno));
    return CLI_FAILED;
  }
  return CLI_OK;
}

/* The fixed-step loop takes whole steps (a constant h is part of a
 * symplectic scheme's structure) and ends at the multiple of h nearest
 * t-end; the header names that time rather than pretend to reach t-end. */
static double end_time(double h, double t_end) {
  double n = ceil(t_end / h - 0.5);
  return (n < 1 ? 1 : n) * h;
}

static const char *end_note(double h, double t_end) {
  double te = end_time(h, t_end);
  return fabs(te - t_end) > 1e-9 * fmax(1.0, t_end) ? " (t-end is not a multiple of h: nearest whole step)" : "";
}

static int do_run(cli_run *r) {
  lv_model *model = NULL;
  int rc = cli_make_model(r, &model);
  if (rc) return rc;
  cli_run_fill_defaults(r);
  cli_choose_scheme(r, model);
  if (!isfinite(r->t_end) || !(r->t_end > 0) || !isfinite(r->h) || !(r->h > 0)) {
    cli_error("step and t-end must be finite positive numbers (got %g and %g).", r->h, r->t_end);
    lv_model_free(model);
    return CLI_USAGE;
  }
  double *times = NULL;
  int ntimes = 0;
  if ((rc = cli_parse_times(r->output_times, r->t_end, &times, &ntimes))) {
    lv_model_free(model);
    return rc;
  }
  free(times);
  if (r->checkpoint[0] && ((r->out[0] && (strcmp(r->checkpoint, r->out) == 0 || same_file(r->checkpoint, r->out))) ||
                           (r->summary[0] && (strcmp(r->checkpoint, r->summary) == 0 ||
                                              same_file(r->checkpoint, r->summary))))) {
    cli_error("--checkpoint names the same file as --out or --summary ('%s').", r->checkpoint);
    lv_model_free(model);
    return CLI_USAGE;
  }
  if (r->summary[0] && r->out[0] && (strcmp(r->summary, r->out) == 0 || same_file(r->summary, r->out))) {
    cli_error("--summary and --out name the same file '%s'.", r->out);
    lv_model_free(model);
    return CLI_USAGE;
  }
  FILE *csv = NULL;
  rc = open_rows(r->out, &csv);
  if (!rc && csv) rc = cli_meta_run(csv, r, model);
  cli_result res;
  memset(&res, 0, sizeof res);
  int ran = !rc;
  if (!rc) rc = cli_execute(r, model, csv, isatty(2), &res);
  /* after a failure the reason is printed already: one sentence */
  int crc = rc && csv ? (cli_rows_close(csv), CLI_OK) : close_out(csv, r->out);
  if (!rc) rc = crc;
  if (ran && rc != CLI_USAGE && r->summary[0]) {
    /* written for a failed run too: its status is in it */
    FILE *js = NULL;
    int jrc = open_out(r->summary, &js);
    if (!jrc) cli_json_summary(js, r, &res);
    if (!jrc) jrc = close_out(js, r->summary);
    if (!rc && jrc) rc = CLI_FAILED;
  }
  if (ran && rc != CLI_USAGE) {
    printf("%s on %s, h = %g, t = [0, %g]%s%s%s\n", r->scheme, r->model, r->h, end_time(r->h, r->t_end),
           end_note(r->h, r->t_end), r->out[0] ? ", CSV: " : "", r->out);
    summary_header(stdout);
    summary_row(stdout, r->scheme, &res);
    printf("steps %ld, Newton iterations %ld, factorizations %ld, failed solves %ld, halvings %ld, wall time %.3f s\n",
           res.st.steps, res.st.newton_iterations, res.st.factorizations, res.st.failed_solves, res.st.halvings,
           res.st.wall_time);
    if (res.st.sparse_flops_per_entry >= 0)
      printf("linear solver %s, chosen for %.3g predicted flops per factor entry (KLU up to 100)\n",
             lv_linsol_kind_name(res.st.linsol), res.st.sparse_flops_per_entry);
    if (res.st.projected)
      printf("initial values were projected onto the constraints (|g| was %.3e, |Gv| %.3e)\n", res.st.init_g_norm,
             res.st.init_gv_norm);
  }
  cli_result_free(&res);
  lv_model_free(model);
  return rc;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cmd_run(int argc, char **argv) {
  cli_args a;
  memset(&a, 0, sizeof a);
  cli_run_defaults(&a.run);
  int rc = cli_parse_args(argc, argv, &a, "run");
  if (!rc && optind != argc - 1) {
    cli_error("'run' needs exactly one MODEL name or run file.");
    rc = CLI_USAGE;
  }
  if (!rc) {
    const char *arg = argv[optind];
    if (ends_with(arg, ".ini")) {
      /* the file first, then command-line options override it */
      cli_run file;
      cli_run_defaults(&file);
      rc = cli_load_runfile(arg, &file);
      if (!rc) {
        cli_args b;
        memset(&b, 0, sizeof b);
        b.run = file;
        rc = cli_parse_args(argc, argv, &b, "run");
        if (!rc && b.run.out[0] && same_file(arg, b.run.out)) {
          cli_error("the output '%s' is the run file itself: refusing to overwrite it.", b.run.out);
          rc = CLI_USAGE;
        }
        if (!rc && ((b.run.checkpoint[0] && same_file(arg, b.run.checkpoint)) ||
                    (b.run.resume[0] && same_file(arg, b.run.resume)))) {
          cli_error("the checkpoint is the run file itself: refusing to overwrite or read it as one.");
          rc = CLI_USAGE;
        }
        if (!rc && b.run.summary[0] && same_file(arg, b.run.summary)) {
          cli_error("the summary '%s' is the run file itself: refusing to overwrite it.", b.run.summary);
          rc = CLI_USAGE;
        }
        if (!rc) rc = do_run(&b.run);
        cli_kv_free(&b.run.params);
        cli_kv_free(&b.run.opts);
      }
    } else {
      if (strlen(arg) >= sizeof a.run.model) {
        cli_error("model name too long (at most %d characters).", (int)sizeof a.run.model - 1);
        rc = CLI_USAGE;
      } else {
        strcpy(a.run.model, arg);
        rc = do_run(&a.run);
      }
    }
  }
  cli_kv_free(&a.run.params);
  cli_kv_free(&a.run.opts);
  return rc;
}

/* MODEL or FILE.ini, the positional argument of compare, converge and
 * check: a run file gives the base settings (model, model-lib, parameters,
 * options, step, t-end, out, ...) and the command line overrides them, as
 * for run.  Sets a->run.model; CLI_USAGE with the sentence printed. */
static int model_arg(int argc, char **argv, cli_args *a, const char *cmd, double t_end_default) {
  const char *arg = argv[optind];
  if (!ends_with(arg, ".ini")) {
    if (strlen(arg) >= sizeof a->run.model) {
      cli_error("model name too long (at most %d characters).", (int)sizeof a->run.model - 1);
      return CLI_USAGE;
    }
    strcpy(a->run.model, arg);
    return CLI_OK;
  }
  cli_args b;
  memset(&b, 0, sizeof b);
  cli_run_defaults(&b.run);
  b.run.t_end = t_end_default;
  int rc = cli_load_runfile(arg, &b.run);
  if (!rc) rc = cli_parse_args(argc, argv, &b, cmd);
  if (!rc && b.run.out[0] && same_file(arg, b.run.out)) {
    cli_error("the output '%s' is the run file itself: refusing to overwrite it.", b.run.out);
    rc = CLI_USAGE;
  }
  if (!rc && (b.run.checkpoint[0] || b.run.resume[0])) { /* issue 17 */
    cli_error("%s: checkpoint and resume apply to 'run' only, not to '%s'.", arg, cmd);
    rc = CLI_USAGE;
  }
  if (rc) {
    cli_kv_free(&b.run.params);
    cli_kv_free(&b.run.opts);
    return rc;
  }
  cli_kv_free(&a->run.params);
  cli_kv_free(&a->run.opts);
  *a = b;
  return CLI_OK;
}

/* The --schemes list: every name known, every --opt known to at least one
 * of them (an option no listed scheme has is a typo, not something to
 * skip).  Returns the count, or -1 (message printed). */
static int scheme_list(char *list, char **items, const cli_kv *opts) {
  int n = cli_split_list(list, items, CLI_MAXSCHEMES);
  if (n < 1) {
    cli_error("--schemes must be a comma-separated list of at most %d names.", CLI_MAXSCHEMES);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    if (!lv_scheme_find(items[i])) {
      cli_error("unknown scheme '%s' (see 'livens list').", items[i]);
      return -1;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(items[i], items[j]) == 0) {
        cli_error("scheme '%s' appears twice in --schemes.", items[i]);
        return -1;
      }
  }
  for (int k = 0; k < opts->n; k++) {
    int known = 0;
    for (int i = 0; i < n && !known; i++)
      for (const lv_param_info *p = lv_scheme_find(items[i])->options; p && p->name; p++)
        if (strcmp(p->name, opts->keys[k]) == 0) known = 1;
    if (!known) {
      cli_error("no scheme in --schemes has option '%s' (see 'livens list').", opts->keys[k]);
      return -1;
    }
  }
  return n;
}

/* The run of one scheme of a list: the options that scheme has (views
 * into @p base's lists, not owned). */
static cli_run scheme_run(const cli_run *base, const char *scheme) {
  cli_run r = *base;
  snprintf(r.scheme, sizeof r.scheme, "%s", scheme);
  r.opts.n = 0;
  const lv_scheme_type *t = lv_scheme_find(scheme);
  for (int k = 0; k < base->opts.n; k++)
    for (const lv_param_info *p = t ? t->options : NULL; p && p->name; p++)
      if (strcmp(p->name, base->opts.keys[k]) == 0) {
        r.opts.keys[r.opts.n] = base->opts.keys[k];
        r.opts.values[r.opts.n] = base->opts.values[k];
        r.opts.buf[r.opts.n++] = NULL;
      }
  r.out[0] = '\0';
  r.summary[0] = '\0';
  return r;
}

static const char *plot_format(const cli_args *a, const char *out);

static int cmd_compare(int argc, char **argv) {
  cli_args a;
  memset(&a, 0, sizeof a);
  cli_run_defaults(&a.run);
  int rc = cli_parse_args(argc, argv, &a, "compare");
  char *items[CLI_MAXSCHEMES];
  int n = 0, json = 0;
  if (!rc && optind != argc - 1) {
    cli_error("'compare' needs exactly one MODEL name or run file.");
    rc = CLI_USAGE;
  }
  if (!rc) rc = model_arg(argc, argv, &a, "compare", 0);
  if (!rc && !a.schemes[0]) {
    cli_error("'compare' needs --schemes S1,S2,...");
    rc = CLI_USAGE;
  }
  if (!rc && (n = scheme_list(a.schemes, items, &a.run.opts)) < 0) rc = CLI_USAGE;
  if (!rc && a.run.out[0]) {
    json = ends_with(a.run.out, ".json");
    if (!json && !ends_with(a.run.out, ".csv")) {
      cli_error("compare --out writes FILE.csv or FILE.json, got '%s'.", a.run.out);
      rc = CLI_USAGE;
    }
  }
  /* --plot: every scheme's CSV in a private directory, one overlay figure */
  const char *pfmt = NULL;
  char pdir[] = "/tmp/livens-compare-XXXXXX";
  char *csvs[CLI_MAXSCHEMES] = {0};
  int have_pdir = 0;
  if (!rc && a.plot[0] && !(pfmt = plot_format(&a, a.plot))) rc = CLI_USAGE;
  if (!rc && a.plot[0] && !cli_have_gnuplot()) {
    cli_error("gnuplot is not installed (apt-get install gnuplot-nox): --plot cannot draw.");
    rc = CLI_FAILED;
  }
  if (!rc && a.plot[0]) {
    if (!mkdtemp(pdir)) {
      cli_error("cannot create a temporary directory: %s.", strerror(errno));
      rc = CLI_FAILED;
    } else have_pdir = 1;
  }
  /* the model is checked before the table file is created */
  lv_model *model0 = NULL;
  if (!rc) rc = cli_make_model(&a.run, &model0);
  lv_model_free(model0);
  FILE *out = NULL;
  if (!rc) {
    cli_run_fill_defaults(&a.run);
    rc = open_out(a.run.out, &out);
  }
  if (!rc) {
    printf("%s, h = %g, t = [0, %g]%s\n", a.run.model, a.run.h, end_time(a.run.h, a.run.t_end),
           end_note(a.run.h, a.run.t_end));
    summary_header(stdout);
    if (out && json) {
      fputs("{\"kind\": \"compare\", \"livens_version\": ", out);
      cli_json_string(out, lv_version());
      fputs(", \"runs\": [\n", out);
    } else if (out) {
      cli_meta_begin(out, "compare");
      cli_meta_model(out, &a.run);
      char joined[CLI_MAXSCHEMES * 66] = "";
      for (int i = 0, len = 0; i < n; i++)
        len += snprintf(joined + len, sizeof joined - (size_t)len, "%s%.64s", i ? "," : "", items[i]);
      cli_meta_put(out, "schemes", joined);
      for (int k = 0; k < a.run.opts.n; k++) {
        char key[300];
        snprintf(key, sizeof key, "opt.%s", a.run.opts.keys[k]);
        cli_meta_put(out, key, a.run.opts.values[k]);
      }
      cli_meta_settings(out, &a.run);
      fputs("scheme,max_rel_energy_error,energy_drift_rate,max_momentum_error,max_g,max_gv,max_gp,"
            "newton_per_step,steps,wall_time,t_final,status\n",
            out);
    }
  }
  int failed = 0, rows = 0;
  for (int i = 0; i < n && !rc; i++) {
    cli_run r = scheme_run(&a.run, items[i]);
    lv_model *model = NULL;
    rc = cli_make_model(&r, &model);
    if (rc) break;
    FILE *csv = NULL;
    if (have_pdir) {
      size_t len = strlen(pdir) + 32;
      if ((csvs[i] = malloc(len))) snprintf(csvs[i], len, "%s/s%d.csv", pdir, i);
      snprintf(r.out, sizeof r.out, "%s", csvs[i] ? csvs[i] : "");
      if (!csvs[i] || open_rows(csvs[i], &csv) || cli_meta_run(csv, &r, model)) {
        if (csv) cli_rows_close(csv);
        lv_model_free(model);
        rc = CLI_FAILED;
        break;
      }
    }
    cli_result res;
    int erc = cli_execute(&r, model, csv, isatty(2), &res);
    if (csv && close_out(csv, csvs[i]) && !erc) erc = CLI_FAILED;
    if (erc == CLI_USAGE) rc = CLI_USAGE;
    else {
      summary_row(stdout, items[i], &res);
      if (erc) failed = 1;
      if (out && json) {
        if (rows) fputs(",\n", out);
        cli_json_summary(out, &r, &res);
      } else if (out) {
        double nps = res.st.steps ? (double)res.st.newton_iterations / (double)res.st.steps : 0.0;
        fprintf(out, "%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%ld,%.17g,%.17g,%s\n", items[i],
                res.sum.max_rel_energy_error, res.sum.energy_drift_rate, res.sum.max_momentum_error, res.sum.max_g,
                res.sum.max_gv, res.sum.max_gp, nps, res.st.steps, res.st.wall_time, res.t_final,
                res.status ? lv_status_name(res.status) : "ok");
      }
      rows++;
    }
    cli_result_free(&res);
    lv_model_free(model);
  }
  if (out && json) fputs("]}\n", out);
  int crc = close_out(out, a.run.out);
  if (!rc) rc = crc;
  if (!rc && have_pdir) {
    /* the runs that failed are drawn up to where they stopped */
    rc = cli_plot_files((const char *const *)csvs, n, a.plot, pfmt, NULL);
    if (!rc) printf("wrote %s\n", a.plot);
  }
  for (int i = 0; i < n; i++) {
    if (csvs[i]) unlink(csvs[i]);
    free(csvs[i]);
  }
  if (have_pdir) rmdir(pdir);
  cli_kv_free(&a.run.params);
  cli_kv_free(&a.run.opts);
  return rc ? rc : (failed ? CLI_FAILED : CLI_OK);
}

/* Distance of two configurations: max-norm of log(q_ref^{-1} q) (the plain
 * difference on R^d). */
static double config_error(const lv_space *sp, const double *q, const double *qref, int nv) {
  double *w = malloc(sizeof(double) * (size_t)nv);
  if (!w) return NAN;
  lv_space_log(sp, qref, q, w);
  double e = 0;
  for (int i = 0; i < nv; i++) e = fmax(e, fabs(w[i]));
  free(w);
  return e;
}

static double vec_error(const double *x, const double *y, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e = fmax(e, fabs(x[i] - y[i]));
  return e;
}

/* Least-squares slope of log err against log h. */
static double fitted_order(const double *h, const double *e, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double x = log(h[i]), y = log(fmax(e[i], 1e-300));
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

#define CLI_MAXSTEPS 32

/* States of a run (t, q, v, lambda) for --error max. */
typedef struct {
  int nq, nv, nc;
  long n, cap;
  double *t, *x; /* x: n rows of nq + nv + nc */
} traj;

static int record_state(const lv_integrator *it, void *ctx) {
  traj *tr = ctx;
  const lv_state *s = lv_integrator_state(it);
  long dim = tr->nq + tr->nv + tr->nc;
  if (tr->n == tr->cap) {
    long cap = tr->cap ? 2 * tr->cap : 256;
    if ((double)cap * (double)(dim + 1) > 2e8) return 1; /* 1.6 GB: refuse */
    double *t = realloc(tr->t, sizeof *t * (size_t)cap);
    if (t) tr->t = t;
    double *x = t ? realloc(tr->x, sizeof *x * (size_t)(cap * dim + 1)) : NULL;
    if (!t || !x) return 1;
    tr->x = x;
    tr->cap = cap;
  }
  tr->t[tr->n] = s->t;
  double *x = tr->x + tr->n * dim;
  memcpy(x, s->q, sizeof(double) * (size_t)tr->nq);
  memcpy(x + tr->nq, s->v, sizeof(double) * (size_t)tr->nv);
  memcpy(x + tr->nq + tr->nv, s->lambda, sizeof(double) * (size_t)tr->nc);
  tr->n++;
  return 0;
}

/* Max over the coarse run's times of the errors against the reference's
 * state at the same time; -1 (message printed) when a coarse time is not
 * one of the reference's. */
static int max_errors(const lv_space *sp, const traj *c, const traj *ref, double href, double err[3]) {
  long dim = c->nq + c->nv + c->nc;
  err[0] = err[1] = err[2] = 0;
  for (long j = 0; j < c->n; j++) {
    long k = lround(c->t[j] / href);
    if (k < 0 || k >= ref->n || fabs(ref->t[k] - c->t[j]) > 1e-9 * fmax(1.0, fabs(c->t[j]))) {
      cli_error("--error max: time %g of a run is not a time of the reference run (each step must be a multiple "
                "of the reference step %g).",
                c->t[j], href);
      return -1;
    }
    const double *a = c->x + j * dim, *b = ref->x + k * dim;
    err[0] = fmax(err[0], config_error(sp, a, b, c->nv));
    err[1] = fmax(err[1], vec_error(a + c->nq, b + c->nq, c->nv));
    err[2] = fmax(err[2], vec_error(a + c->nq + c->nv, b + c->nq + c->nv, c->nc));
  }
  return 0;
}

/* --reference FILE.csv: the maximum over the run's times that are also
 * times of the reference (at least t_end); *common counts them. */
static void max_errors_csv(const lv_space *sp, const traj *c, const cli_reference *ref, double err[3], long *common) {
  long dim = c->nq + c->nv + c->nc, rdim = ref->nq + ref->nv + ref->nc;
  err[0] = err[1] = err[2] = 0;
  *common = 0;
  for (long j = 0; j < c->n; j++) {
    long k = cli_reference_find(ref, c->t[j]);
    if (k < 0) continue;
    const double *a = c->x + j * dim, *b = ref->x + k * rdim;
    err[0] = fmax(err[0], config_error(sp, a, b, c->nv));
    err[1] = fmax(err[1], vec_error(a + c->nq, b + c->nq, c->nv));
    err[2] = ref->nc ? fmax(err[2], vec_error(a + c->nq + c->nv, b + c->nq + c->nv, c->nc)) : NAN;
    (*common)++;
  }
}

/* Errors of one scheme at every step size against its own finer run. */
typedef struct {
  double e[3][CLI_MAXSTEPS]; /* q, v, lambda */
  double order[3];
} conv_errs;

static int cmd_converge(int argc, char **argv) {
  cli_args a;
  memset(&a, 0, sizeof a);
  cli_run_defaults(&a.run);
  a.run.t_end = 1.0;
  int rc = cli_parse_args(argc, argv, &a, "converge");
  char *items[CLI_MAXSTEPS], *schemes[CLI_MAXSCHEMES];
  double hs[CLI_MAXSTEPS];
  int n = 0, ns = 1, json = 0;
  if (!rc && optind != argc - 1) {
    cli_error("'converge' needs exactly one MODEL name or run file.");
    rc = CLI_USAGE;
  }
  if (!rc) rc = model_arg(argc, argv, &a, "converge", 1.0);
  if (!rc && !a.steps[0]) {
    cli_error("'converge' needs --steps H1,H2,... (at least two step sizes).");
    rc = CLI_USAGE;
  }
  if (!rc && (n = cli_split_list(a.steps, items, CLI_MAXSTEPS)) < 2) {
    cli_error("--steps needs at least two (at most %d) comma-separated step sizes.", CLI_MAXSTEPS);
    rc = CLI_USAGE;
  }
  for (int i = 0; i < n && !rc; i++) rc = cli_parse_positive(items[i], "each step in --steps", &hs[i]);
  if (!rc && a.schemes[0] && a.scheme_given) {
    cli_error("'converge' takes --scheme S or --schemes S1,S2,..., not both.");
    rc = CLI_USAGE;
  }
  if (!rc && a.schemes[0] && (ns = scheme_list(a.schemes, schemes, &a.run.opts)) < 0) rc = CLI_USAGE;
  if (!rc && !a.schemes[0]) schemes[0] = a.run.scheme;
  if (!rc && a.reference[0] && (a.ref_scheme[0] || a.ref_step > 0)) {
    cli_error("--reference FILE.csv replaces --ref-step and --ref-scheme: give one or the other.");
    rc = CLI_USAGE;
  }
  if (!rc && a.ref_scheme[0] && !lv_scheme_find(a.ref_scheme)) {
    cli_error("unknown reference scheme '%s' (see 'livens list').", a.ref_scheme);
    rc = CLI_USAGE;
  }
  if (!rc && a.run.out[0]) {
    json = ends_with(a.run.out, ".json");
    if (!json && !ends_with(a.run.out, ".csv")) {
      cli_error("converge --out writes FILE.csv or FILE.json, got '%s'.", a.run.out);
      rc = CLI_USAGE;
    }
  }
  for (int i = 0; i < n && !rc; i++)
    for (int j = 0; j < i && !rc; j++)
      if (hs[i] == hs[j]) {
        cli_error("step %g appears twice in --steps: each step must be different.", hs[i]);
        rc = CLI_USAGE;
      }
  if (!rc && a.ref_step > 0)
    for (int i = 0; i < n && !rc; i++)
      if (hs[i] <= a.ref_step) {
        cli_error("step %g is not larger than the reference step %g: its error would be meaningless.", hs[i],
                  a.ref_step);
        rc = CLI_USAGE;
      }
  if (rc) {
    cli_kv_free(&a.run.params);
    cli_kv_free(&a.run.opts);
    return rc;
  }
  double hmin = hs[0];
  for (int i = 1; i < n; i++) hmin = fmin(hmin, hs[i]);
  double href = a.ref_step > 0 ? a.ref_step : hmin / 16.0;
  lv_model *model = NULL;
  rc = cli_make_model(&a.run, &model);
  if (!rc && !a.schemes[0]) cli_choose_scheme(&a.run, model); /* schemes[0] is a.run.scheme */
  /* a reference from a CSV (issue 17): read once, checked against the model,
   * the steps and t_end before anything runs */
  cli_reference csvref;
  memset(&csvref, 0, sizeof csvref);
  long kend = -1;
  int use_csv = a.reference[0] != '\0';
  if (!rc && use_csv) {
    rc = cli_reference_read(a.reference, &a.run, model, &csvref);
    if (!rc && (kend = cli_reference_find(&csvref, a.run.t_end)) < 0) {
      cli_error("the reference '%s' has no row at t_end = %g (it runs from %g to %g).", a.reference, a.run.t_end,
                csvref.t[0], csvref.t[csvref.n - 1]);
      rc = CLI_USAGE;
    }
    for (int i = 0; i < n && !rc && csvref.h > 0; i++)
      if (hs[i] <= csvref.h * (1 + 1e-12)) {
        cli_error("step %g is not larger than the reference's step %g: its error would be meaningless.", hs[i],
                  csvref.h);
        rc = CLI_USAGE;
      }
    if (!rc) href = csvref.h;
  }
  conv_errs *ce = calloc((size_t)ns, sizeof *ce);
  if (!rc && !ce) {
    cli_error("out of memory.");
    rc = CLI_FAILED;
  }
  int nc = 0;
  double t_final = 0;
  int emax = strcmp(a.error, "max") == 0;
  for (int k = 0; k < ns && !rc; k++) {
    cli_run base = a.schemes[0] ? scheme_run(&a.run, schemes[k]) : a.run;
    base.out[0] = '\0';
    cli_result ref;
    /* the reference: the same scheme, or --ref-scheme (its own options) */
    cli_run r = a.ref_scheme[0] ? scheme_run(&a.run, a.ref_scheme) : base;
    r.h = href;
    traj tref = {lv_model_nq(model), lv_model_nv(model), lv_model_nc(model), 0, 0, NULL, NULL}, tc = tref;
    if (emax) r.on_state = record_state, r.on_state_ctx = &tref;
    const char *refname = a.ref_scheme[0] ? a.ref_scheme : schemes[k];
    if (use_csv) {
      /* the reference's row at t_end as a result */
      memset(&ref, 0, sizeof ref);
      const double *x = csvref.x + kend * (csvref.nq + csvref.nv + csvref.nc);
      ref.nq = csvref.nq, ref.nv = csvref.nv, ref.nc = csvref.nc, ref.t_final = csvref.t[kend];
      ref.space = lv_model_space(model);
      ref.q = malloc(sizeof(double) * (size_t)csvref.nq);
      ref.v = malloc(sizeof(double) * (size_t)csvref.nv);
      ref.lambda = malloc(sizeof(double) * (size_t)(lv_model_nc(model) + 1));
      if (!ref.q || !ref.v || !ref.lambda) {
        cli_error("out of memory.");
        rc = CLI_FAILED;
      } else {
        memcpy(ref.q, x, sizeof(double) * (size_t)csvref.nq);
        memcpy(ref.v, x + csvref.nq, sizeof(double) * (size_t)csvref.nv);
        memcpy(ref.lambda, x + csvref.nq + csvref.nv, sizeof(double) * (size_t)csvref.nc);
        nc = csvref.nc;
        t_final = ref.t_final;
        printf("%s%s on %s: errors %s%g%s against the reference %s", k ? "\n" : "", schemes[k], a.run.model,
               emax ? "(max over the times it shares with the reference) in t = [0, " : "at t = ", ref.t_final,
               emax ? "]" : "", a.reference);
        if (csvref.scheme[0] || csvref.h > 0) {
          printf(" (%s", csvref.scheme[0] ? csvref.scheme : "");
          if (csvref.h > 0) printf("%sh = %g", csvref.scheme[0] ? ", " : "", csvref.h);
          putchar(')');
        }
        printf("%s\n", nc || !lv_model_nc(model) ? "" : "; it has no lambda columns");
        printf("%12s %12s %7s %12s %7s %12s %7s\n", "h", "err q", "order", "err v", "order", "err lambda", "order");
      }
    } else {
      rc = cli_execute(&r, model, NULL, isatty(2), &ref);
      if (rc == CLI_FAILED) cli_error("the reference run of %s (h = %g) failed.", refname, href);
    }
    if (!rc && !use_csv) {
      nc = ref.nc;
      t_final = ref.t_final;
      printf("%s%s on %s: errors %s%g%s against %s%s with h = %g\n", k ? "\n" : "", schemes[k], a.run.model,
             emax ? "(max over its steps) in t = [0, " : "at t = ", ref.t_final, emax ? "]" : "",
             a.ref_scheme[0] ? "" : "the same scheme", a.ref_scheme, href);
      printf("%12s %12s %7s %12s %7s %12s %7s\n", "h", "err q", "order", "err v", "order", "err lambda", "order");
    }
    for (int i = 0; i < n && !rc; i++) {
      r = base;
      r.h = hs[i];
      tc.n = 0;
      if (emax) r.on_state = record_state, r.on_state_ctx = &tc;
      cli_result res;
      rc = cli_execute(&r, model, NULL, isatty(2), &res);
      if (!rc && fabs(res.t_final - ref.t_final) > 1e-9 * fmax(1.0, ref.t_final)) {
        cli_error("t-end %g is not a multiple of step %g (ends at %g).", a.run.t_end, hs[i], res.t_final);
        rc = CLI_USAGE;
      }
      if (!rc) {
        double *eq = ce[k].e[0], *ev = ce[k].e[1], *el = ce[k].e[2];
        eq[i] = config_error(ref.space, res.q, ref.q, res.nv);
        ev[i] = vec_error(res.v, ref.v, res.nv);
        el[i] = use_csv && !csvref.nc ? NAN : vec_error(res.lambda, ref.lambda, res.nc);
        double m[3];
        long common = 0;
        if (emax && use_csv) max_errors_csv(ref.space, &tc, &csvref, m, &common);
        if (emax && use_csv) eq[i] = m[0], ev[i] = m[1], el[i] = m[2];
        else if (emax && max_errors(ref.space, &tc, &tref, href, m)) rc = CLI_USAGE;
        else if (emax) eq[i] = m[0], ev[i] = m[1], el[i] = m[2];
      }
      if (!rc) {
        double *eq = ce[k].e[0], *ev = ce[k].e[1], *el = ce[k].e[2];
        if (i == 0) printf("%12.4g %12.4e %7s %12.4e %7s %12.4e %7s\n", hs[i], eq[i], "", ev[i], "", el[i], "");
        else {
          double lh = log(hs[i] / hs[i - 1]);
          printf("%12.4g %12.4e %7.3f %12.4e %7.3f %12.4e %7.3f\n", hs[i], eq[i], log(eq[i] / eq[i - 1]) / lh,
                 ev[i], log(ev[i] / ev[i - 1]) / lh, el[i], log(el[i] / el[i - 1]) / lh);
        }
      }
      cli_result_free(&res);
    }
    if (!rc) {
      for (int c = 0; c < 3; c++) ce[k].order[c] = fitted_order(hs, ce[k].e[c], n);
      if (ns == 1) printf("fitted order: q %.3f, v %.3f%s", ce[k].order[0], ce[k].order[1], nc ? "" : "\n");
      else printf("fitted order of %s: q %.3f, v %.3f%s", schemes[k], ce[k].order[0], ce[k].order[1], nc ? "" : "\n");
      if (nc) printf(", lambda %.3f\n", ce[k].order[2]);
    }
    cli_result_free(&ref);
    free(tref.t), free(tref.x), free(tc.t), free(tc.x);
  }
  /* the table, written once every scheme has run */
  FILE *out = NULL;
  if (!rc) rc = open_out(a.run.out, &out);
  static const char *const comp[3] = {"q", "v", "lambda"};
  int ncomp = nc ? 3 : 2;
  if (out && json) {
    fputs("{\"kind\": \"convergence\", \"livens_version\": ", out);
    cli_json_string(out, lv_version());
    fputs(", \"model\": ", out);
    cli_json_string(out, a.run.model);
    fputs(", \"t_end\": ", out);
    cli_json_number(out, t_final);
    fputs(", \"ref_step\": ", out);
    if (use_csv && !(href > 0)) fputs("null", out);
    else cli_json_number(out, href);
    fputs(", \"reference\": ", out);
    if (use_csv) cli_json_string(out, a.reference);
    else fputs("null", out);
    fprintf(out, ", \"error\": \"%s\"", emax ? "max" : "end");
    fputs(", \"ref_scheme\": ", out);
    if (a.ref_scheme[0]) cli_json_string(out, a.ref_scheme);
    else if (use_csv && csvref.scheme[0]) cli_json_string(out, csvref.scheme);
    else fputs("null", out);
    fputs(", \"h\": [", out);
    for (int i = 0; i < n; i++) fputs(i ? ", " : "", out), cli_json_number(out, hs[i]);
    fputs("],\n \"schemes\": [", out);
    for (int k = 0; k < ns; k++) {
      fputs(k ? ",\n  {\"scheme\": " : "\n  {\"scheme\": ", out);
      cli_json_string(out, schemes[k]);
      for (int c = 0; c < ncomp; c++) {
        fprintf(out, ", \"err_%s\": [", comp[c]);
        for (int i = 0; i < n; i++) fputs(i ? ", " : "", out), cli_json_number(out, ce[k].e[c][i]);
        fputs("]", out);
      }
      fputs(", \"order\": {", out);
      for (int c = 0; c < ncomp; c++) {
        fprintf(out, "%s\"%s\": ", c ? ", " : "", comp[c]);
        cli_json_number(out, ce[k].order[c]);
      }
      fputs("}}", out);
    }
    fputs("\n]}\n", out);
  } else if (out) {
    cli_meta_begin(out, "convergence");
    cli_meta_model(out, &a.run);
    for (int k = 0; k < ns; k++) {
      cli_run r = a.schemes[0] ? scheme_run(&a.run, schemes[k]) : a.run;
      cli_meta_scheme(out, schemes[k], &r.opts);
      for (int c = 0; c < ncomp; c++) {
        char key[120];
        snprintf(key, sizeof key, "order.%.64s.%s", schemes[k], comp[c]);
        cli_meta_num(out, key, ce[k].order[c]);
      }
    }
    cli_meta_num(out, "t_end", a.run.t_end);
    cli_meta_units(out, &a.run, model, 1);
    if (use_csv) {
      cli_meta_put(out, "reference", a.reference);
      if (href > 0) cli_meta_num(out, "ref_step", href);
      cli_meta_put(out, "ref_scheme", csvref.scheme[0] ? csvref.scheme : "unknown");
      cli_meta_put(out, "error", emax ? "max over the run's times shared with the reference of the max-norm against it"
                                      : "max-norm at t_end against the reference");
    } else {
      cli_meta_num(out, "ref_step", href);
      cli_meta_put(out, "ref_scheme", a.ref_scheme[0] ? a.ref_scheme : "the same scheme");
      cli_meta_put(out, "error", emax ? "max over the run's times of the max-norm against ref_scheme at ref_step"
                                      : "max-norm at t_end against ref_scheme at ref_step");
    }
    /* one scheme: h,err_q,err_v[,err_lambda]; several: err_q.SCHEME, ... */
    fputs("h", out);
    for (int k = 0; k < ns; k++)
      for (int c = 0; c < ncomp; c++) fprintf(out, ",err_%s%s%s", comp[c], ns > 1 ? "." : "", ns > 1 ? schemes[k] : "");
    fputc('\n', out);
    for (int i = 0; i < n; i++) {
      fprintf(out, "%.17g", hs[i]);
      for (int k = 0; k < ns; k++)
        for (int c = 0; c < ncomp; c++) fprintf(out, ",%.17g", ce[k].e[c][i]);
      fputc('\n', out);
    }
  }
  int crc = close_out(out, a.run.out);
  if (!rc) rc = crc;
  cli_reference_free(&csvref);
  free(ce);
  lv_model_free(model);
  cli_kv_free(&a.run.params);
  cli_kv_free(&a.run.opts);
  return rc;
}

/* The figure's format: --format, else the extension of --out/--png, else
 * png.  NULL (message printed) for an unknown one. */
static const char *plot_format(const cli_args *a, const char *out) {
  static const char *const known[] = {"png", "svg", "pdf", "tex", "latex", "tikz"};
  if (a->format[0]) {
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
      if (strcmp(a->format, known[i]) == 0) return i > 3 ? "tex" : known[i];
    cli_error("--format must be png, svg, pdf or tex (LaTeX/TikZ), got '%s'.", a->format);
    return NULL;
  }
  if (!out || a->png[0]) return "png";
  const char *dot = strrchr(out, '.');
  if (dot && !strchr(dot, '/'))
    for (size_t i = 0; i < 4; i++)
      if (strcmp(dot + 1, known[i]) == 0) return known[i];
  cli_error("cannot tell the format of '%s' from its extension: use .png, .svg, .pdf or .tex, or --format.", out);
  return NULL;
}

/* livens plot SYSTEM.yaml [run options] [--out FIG]: run the system (its
 * run: settings, overridden by the command line) into a CSV in a private
 * temporary directory and draw that, as `run --out` then `plot` would; the
 * figure goes to --out, else next to the system file with its extension
 * replaced (as for a CSV). */
static int plot_system(cli_args *a, const char *sys, const char *fmt) {
  const char *given = a->run.out[0] ? a->run.out : a->png[0] ? a->png : NULL;
  size_t n = strlen(given ? given : sys);
  char *fig = malloc(n + 6), dir[] = "/tmp/livens-plot-XXXXXX";
  if (!fig) {
    cli_error("out of memory.");
    return CLI_FAILED;
  }
  memcpy(fig, given ? given : sys, n + 1);
  if (!given) {
    char *dot = strrchr(fig, '.');
    if (dot && !strchr(dot, '/')) *dot = '\0';
    size_t k = strlen(fig);
    fig[k] = '.';
    memcpy(fig + k + 1, fmt, strlen(fmt) + 1);
  }
  int rc = CLI_OK;
  if (same_file(sys, fig)) {
    cli_error("the plot '%s' is the system file itself: refusing to overwrite it.", fig);
    rc = CLI_USAGE;
  } else if (!mkdtemp(dir)) {
    cli_error("cannot create a temporary directory: %s.", strerror(errno));
    rc = CLI_FAILED;
  }
  char csv[sizeof dir + 16];
  snprintf(csv, sizeof csv, "%s/run.csv", dir);
  if (!rc) {
    cli_run r = a->run;
    snprintf(r.model, sizeof r.model, "%s", sys);
    snprintf(r.out, sizeof r.out, "%s", csv);
    rc = do_run(&r);
    /* a run that failed is drawn up to where it stopped, and still fails */
    int prc = rc == CLI_USAGE ? rc : cli_plot_files((const char *const *)&(const char *){csv}, 1, fig, fmt,
                                                     a->ycols[0] ? a->ycols : NULL);
    if (prc == CLI_OK && rc != CLI_USAGE) printf("wrote %s\n", fig);
    if (!rc) rc = prc;
    unlink(csv);
    rmdir(dir);
  }
  free(fig);
  return rc;
}

static int cmd_plot(int argc, char **argv) {
  cli_args a;
  memset(&a, 0, sizeof a);
  cli_run_defaults(&a.run);
  int rc = cli_parse_args(argc, argv, &a, "plot");
  if (!rc && optind > argc - 1) {
    cli_error("'plot' needs at least one CSV file or one system file.");
    rc = CLI_USAGE;
  }
  if (!rc && optind == argc - 1 && cli_is_system_file(argv[optind])) {
    if (strlen(argv[optind]) >= sizeof a.run.model) {
      cli_error("system file name too long (at most %d characters).", (int)sizeof a.run.model - 1);
      rc = CLI_USAGE;
    } else if (a.png[0] && a.run.out[0]) {
      cli_error("'plot' takes --out or --png, not both.");
      rc = CLI_USAGE;
    } else {
      const char *fmt = plot_format(&a, a.run.out[0] ? a.run.out : a.png[0] ? a.png : NULL);
      rc = fmt ? plot_system(&a, argv[optind], fmt) : CLI_USAGE;
    }
    cli_kv_free(&a.run.params);
    cli_kv_free(&a.run.opts);
    return rc;
  }
  if (!rc && a.png[0] && a.run.out[0]) {
    cli_error("'plot' takes --out or --png, not both.");
    rc = CLI_USAGE;
  }
  /* a plugin's parameter defaults let the title leave them out */
  if (!rc) rc = cli_load_plugin(a.run.model_lib);
  const char *given = a.run.out[0] ? a.run.out : a.png[0] ? a.png : NULL;
  const char *fmt = rc ? NULL : plot_format(&a, given);
  if (!rc && !fmt) rc = CLI_USAGE;
  if (!rc) {
    /* sized to the argument: its length is the user's */
    const char *src = given ? given : argv[optind];
    size_t n = strlen(src);
    char *out = malloc(n + 5);
    if (!out) {
      cli_error("out of memory.");
      rc = CLI_FAILED;
    } else {
      memcpy(out, src, n + 1);
      if (!given) {
        char *dot = strrchr(out, '.');
        if (dot && strcmp(dot, ".csv") == 0) *dot = '\0';
        size_t k = strlen(out);
        out[k] = '.';
        memcpy(out + k + 1, fmt, strlen(fmt) + 1);
      }
      for (int i = optind; i < argc && !rc; i++)
        if (same_file(argv[i], out)) {
          cli_error("the plot '%s' is the CSV file '%s' itself: refusing to overwrite it.", out, argv[i]);
          rc = CLI_USAGE;
        }
      if (!rc)
        rc = cli_plot_files((const char *const *)argv + optind, argc - optind, out, fmt, a.ycols[0] ? a.ycols : NULL);
      if (!rc) printf("wrote %s\n", out);
      free(out);
    }
  }
  cli_kv_free(&a.run.params);
  cli_kv_free(&a.run.opts);
  return rc;
}

static int cmd_check(int argc, char **argv) {
  cli_args a;
  memset(&a, 0, sizeof a);
  cli_run_defaults(&a.run);
  int rc = cli_parse_args(argc, argv, &a, "check");
  if (!rc && optind != argc - 1) {
    cli_error("'check' needs exactly one MODEL name or run file.");
    rc = CLI_USAGE;
  }
  if (!rc) rc = model_arg(argc, argv, &a, "check", 0);
  lv_model *model = NULL;
  if (!rc) rc = cli_make_model(&a.run, &model);
  if (!rc) {
    printf("derivative check of '%s' against central finite differences (initial state)\n", a.run.model);
    lv_check_result res;
    int st = lv_model_check_derivatives(model, NULL, NULL, 1e-6, stdout, &res);
    if (st == 0) printf("%d supplied derivatives agree with finite differences\n", res.checked);
    else if (st == LV_EINPUT) {
      printf("%d of %d supplied derivatives disagree with finite differences\n", res.failed, res.checked);
      rc = CLI_FAILED;
    } else {
      cli_error("evaluating the model failed: %s.", lv_strerror(st));
      rc = CLI_FAILED;
    }
    /* what the model leaves to finite differences, and what that costs */
    if (st == 0 || st == LV_EINPUT) {
      char miss[200] = "";
      int nc = lv_model_nc(model);
      struct {
        int want;
        double err;
        const char *name;
      } d[] = {{res.err_dV >= 0, res.err_d2V, "Hessian of V"},
               {nc > 0, res.err_G, "constraint Jacobian G"},
               {nc > 0, res.err_hessian, "constraint Hessian D_q(G^T gamma)"},
               {nc > 0, res.err_curvature, "constraint curvature D_q(G w)"}};
      for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (d[i].want && d[i].err < 0)
          snprintf(miss + strlen(miss), sizeof miss - strlen(miss), "%s%s", miss[0] ? ", " : "", d[i].name);
      if (miss[0])
        printf("not supplied, formed by finite differences: %s.\n"
               "Exact conservation needs exact derivatives: with these the energy-momentum and variational schemes\n"
               "conserve energy, momentum maps and constraints only up to the finite-difference error, not to the\n"
               "Newton tolerance.\n",
               miss);
    }
  }
  lv_model_free(model);
  cli_kv_free(&a.run.params);
  cli_kv_free(&a.run.opts);
  return rc;
}

/* The default demonstration: a long four-particle run under every family
 * that exists in this build, side by side, with plots when gnuplot is
 * there. */
static int cmd_demo(void) {
  const char *wanted[] = {"vi-a", "em", "genalpha", "bliedf2", "rattle"};
  cli_run r;
  cli_run_defaults(&r);
  int has4p = 0;
  for (const lv_model_info *const *m = lv_model_registry(); *m; m++)
    if (strcmp((*m)->name, "four-particle") == 0) has4p = 1;
  strcpy(r.model, has4p ? "four-particle" : "pendulum3d");
  r.h = 0.01;
  r.t_end = 1000.0;
  r.every = 100;
  int plots = cli_have_gnuplot();
  const char *dir = "livens-demo";
  if (plots && mkdir(dir, 0777) != 0 && errno != EEXIST) plots = 0;
  /* the plots' real place: setup.sh runs the demo inside build/ (issue 17) */
  char *absdir = plots ? realpath(dir, NULL) : NULL;
  if (absdir) dir = absdir;
  printf("livens %s demo: %s, h = %g, t = [0, %g] (%.0f steps per scheme)\n\n", lv_version(), r.model, r.h,
         r.t_end, r.t_end / r.h);
  summary_header(stdout);
  int status = CLI_OK;
  for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
    if (!lv_scheme_find(wanted[i])) continue;
    strcpy(r.scheme, wanted[i]);
    lv_model *model = NULL;
    if (cli_make_model(&r, &model)) {
      free(absdir);
      return CLI_FAILED;
    }
    char path[4200];
    FILE *csv = NULL;
    if (plots) {
      snprintf(path, sizeof path, "%s/%s.csv", dir, wanted[i]);
      csv = fopen(path, "w");
      if (csv && cli_meta_run(csv, &r, model)) {
        fclose(csv);
        csv = NULL;
      }
    }
    cli_result res;
    int rc = cli_execute(&r, model, csv, isatty(2), &res);
    if (csv) fclose(csv);
    if (rc != CLI_USAGE) summary_row(stdout, wanted[i], &res);
    if (rc) status = CLI_FAILED;
    if (csv && rc == CLI_OK) {
      char png[4300];
      snprintf(png, sizeof png, "%s/%s.png", dir, wanted[i]);
      if (cli_plot(path, png) == CLI_OK) printf("%12s plots: %s\n", "", png);
    }
    cli_result_free(&res);
    lv_model_free(model);
  }
  if (!plots) printf("\n(gnuplot not found: no plots written)\n");
  free(absdir);
  return status;
}

/* OpenBLAS maps a work buffer of about 129 MB on its first call and, when
 * an address-space limit (ulimit -v) refuses it, retries forever.  Probing
 * the same mapping first turns that hang into a sentence. */
static int blas_buffer_fits(void) {
  const size_t need = (size_t)135266304;
  void *p = mmap(NULL, need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    cli_error("out of memory: the address-space limit (ulimit -v) leaves no room for the %zu MB work buffer "
              "that OpenBLAS maps.",
              need >> 20);
    return 0;
  }
  munmap(p, need);
  return 1;
}

/* A summary lost to a full disk or a closed pipe is a failure, not exit 0. */
static int finish(int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error("cannot write the standard output: %s.", strerror(errno));
    return rc ? rc : CLI_FAILED;
  }
  return rc;
}

/* OpenBLAS starts its thread pool while the shared libraries load, before
 * main, and under a small address space (ulimit -v 150000) each pool thread
 * loops forever failing to map a 128 MB malloc arena: the program hung at
 * start and at exit.  The matrices here are small, so one BLAS thread.  A
 * setenv in main comes too late, and .preinit_array runs before libc has set
 * environ, so that function executes the program again with
 * OPENBLAS_NUM_THREADS=1 added to the environment it was given.  A value
 * the user set is kept. */
#if defined(__linux__)
static void blas_one_thread(int argc, char **argv, char **envp) {
  (void)argc;
  static const char var[] = "OPENBLAS_NUM_THREADS=";
  int n = 0;
  for (; envp && envp[n]; n++)
    if (strncmp(envp[n], var, sizeof var - 1) == 0) return;
  char **env = malloc(sizeof *env * (size_t)(n + 2));
  if (!env) return;
  for (int i = 0; i < n; i++) env[i] = envp[i];
  env[n] = (char *)"OPENBLAS_NUM_THREADS=1";
  env[n + 1] = NULL;
  execve("/proc/self/exe", argv, env); /* on failure: run on with the default pool */
  free(env);
}
__attribute__((section(".preinit_array"), used)) static void (*const blas_preinit)(int, char **,
                                                                                    char **) = blas_one_thread;
#endif

int main(int argc, char **argv) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
  /* Arrays of 1 MB and more get mappings of their own, returned whole when
   * freed.  glibc's default threshold rises to the size of the largest
   * mapped block freed (up to 32 MB): once a model built on the multibody
   * layer has freed its builder (13.6 MB of elements for the chain at
   * N = 1e5), the arrays below that size come from the heap, whose freed
   * holes stay resident -- 17.5 MB of the chain's peak under EM at N = 1e5,
   * 9.7 MB under VI-A, at the same CPU time. */
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  /* small dense systems: single-threaded BLAS unless the user says otherwise */
  if (!getenv("OPENBLAS_NUM_THREADS")) lv_blas_set_threads(1);
  if (argc < 2 || strcmp(argv[1], "demo") == 0) return blas_buffer_fits() ? finish(cmd_demo()) : CLI_FAILED;
  const char *cmd = argv[1];
  if (strcmp(cmd, "list") == 0) {
    if (argc > 3 || (argc == 3 && !cli_is_system_file(argv[2]))) {
      cli_error("'list' takes no arguments but a system file FILE.yaml (got '%s').", argv[argc - 1]);
      return CLI_USAGE;
    }
    if (argc == 3) return finish(cli_list_table(stdout, argv[2])); /* issue 15 */
    return finish(cmd_list());
  }
  int computes = strcmp(cmd, "run") == 0 || strcmp(cmd, "compare") == 0 || strcmp(cmd, "converge") == 0 ||
                 strcmp(cmd, "check") == 0 || strcmp(cmd, "sweep") == 0;
  if (computes && !blas_buffer_fits()) return CLI_FAILED;
  if (strcmp(cmd, "run") == 0) return finish(cmd_run(argc - 1, argv + 1));
  if (strcmp(cmd, "compare") == 0) return finish(cmd_compare(argc - 1, argv + 1));
  if (strcmp(cmd, "converge") == 0) return finish(cmd_converge(argc - 1, argv + 1));
  if (strcmp(cmd, "plot") == 0) return finish(cmd_plot(argc - 1, argv + 1));
  if (strcmp(cmd, "check") == 0) return finish(cmd_check(argc - 1, argv + 1));
  if (strcmp(cmd, "theory") == 0) return blas_buffer_fits() ? finish(cmd_theory(argc - 1, argv + 1)) : CLI_FAILED;
  if (strcmp(cmd, "sweep") == 0) return finish(cli_sweep(argc - 1, argv + 1));
  if (strcmp(cmd, "--version") == 0) {
    printf("livens %s\n", lv_version());
    return CLI_OK;
  }
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
    fputs(usage_text, stdout);
    return CLI_OK;
  }
  cli_error("unknown command '%s' (commands: demo, list, run, compare, converge, plot, check, sweep).", cmd);
  return CLI_USAGE;
}
