/* Shared declarations of the livens program (src/cli). */
#ifndef LIVENS_CLI_H
#define LIVENS_CLI_H

#include <stdio.h>
#include "livens/livens.h"

#define CLI_MAXKV 64
#define CLI_MAXSCHEMES 16

/* Exit statuses: 0 success, 1 the computation failed, 2 wrong input. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Owned NAME=VALUE list, convertible to lv_kv. */
typedef struct {
  const char *keys[CLI_MAXKV];
  const char *values[CLI_MAXKV];
  char *buf[CLI_MAXKV];
  int n;
} cli_kv;

/* Everything that defines one simulation. */
typedef struct {
  char model[1024]; /* a model name or a system file path */
  char scheme[64];
  int scheme_auto;  /* scheme is the default, not the user's: cli_choose_scheme may change it */
  double h, t_end;
  cli_kv params, opts;
  char out[1024];       /* CSV path, empty for none */
  int every;            /* write every n-th step */
  int halving;          /* max step halvings (0: off) */
  double newton_tol;    /* 0: library default */
  int newton_kind;      /* lv_newton_kind, or -1: the scheme's default */
  lv_linsol_kind linsol;
  double output_dt;     /* --output-dt (0: off) */
  char output_times[1024]; /* --output-times list (empty: off) */
  char summary[1024];   /* --summary FILE.json (empty: none) */
  char model_lib[1024]; /* --model-lib FILE.so (empty: none) */
  char checkpoint[1024]; /* --checkpoint FILE (empty: none; issue 17) */
  long checkpoint_every; /* --checkpoint-every N steps (0: only at the end) */
  char resume[1024];     /* --resume FILE (empty: start at t = 0) */
  /* called with every recorded state (initial and each step); non-zero
   * stops the run.  NULL: none.  Used by converge --error max. */
  int (*on_state)(const lv_integrator *it, void *ctx);
  void *on_state_ctx;
} cli_run;

typedef struct {
  int status;           /* library status of the run */
  lv_diag_summary sum;
  lv_integrator_stats st;
  double t_final;
  int nq, nv, nc;
  double *q, *v, *lambda; /* final state (owned; free with cli_result_free) */
  const lv_space *space;  /* of the model, valid while the model lives */
} cli_result;

/* Print "livens: <message>" on stderr (printf-style, one sentence). */
void cli_error(const char *fmt, ...);
/* Add NAME=VALUE; returns CLI_USAGE with a message on malformed input. */
int cli_kv_push(cli_kv *l, const char *text, const char *what);
int cli_kv_set(cli_kv *l, const char *key, const char *value);
void cli_kv_free(cli_kv *l);
lv_kv cli_kv_view(const cli_kv *l);

void cli_run_defaults(cli_run *r);
/* Where the user named no scheme, replace the default by one that runs
 * @p model (common.c). */
void cli_choose_scheme(cli_run *r, const lv_model *model);
/* Create the model of a run; prints the reason and returns CLI_USAGE on
 * bad names/values. */
int cli_make_model(const cli_run *r, lv_model **out);
/* MODEL names a system file (ends in .yaml or .yml; issue 15). */
int cli_is_system_file(const char *model);
/* `livens list`'s table (listtable.c, issue 15): which scheme runs which
 * registered model in which formulation, or (path not NULL) the system
 * file in each formulation of the layer.  CLI_OK or CLI_USAGE (a bad file,
 * the sentence printed). */
int cli_list_table(FILE *out, const char *path);
/* Run one simulation; csv may be NULL.  Returns CLI_OK, CLI_FAILED (status
 * in res) or CLI_USAGE (message printed). */
int cli_execute(const cli_run *r, lv_model *model, FILE *csv, int progress, cli_result *res);
void cli_result_free(cli_result *res);

/* Parsed command line of run/compare/converge/plot/check. */
typedef struct {
  cli_run run;
  char schemes[512];   /* --schemes */
  char steps[512];     /* --steps */
  double ref_step;
  char png[1024];
  int scheme_given;
  char format[16];     /* plot --format */
  char ycols[1024];    /* plot --y */
  char plot[1024];     /* compare --plot FIGURE */
  char ref_scheme[64]; /* converge --ref-scheme (empty: the same scheme) */
  char error[16];      /* converge --error end|max */
  char reference[1024]; /* converge --reference FILE.csv (empty: a fine run; issue 17) */
} cli_args;

/* Parse the options (GNU long options, permuted); positional arguments are
 * left in argv[optind..].  Returns CLI_OK or CLI_USAGE (message printed). */
int cli_parse_args(int argc, char **argv, cli_args *a, const char *cmd);
int cli_parse_positive(const char *s, const char *what, double *x);
/* "default" | "full" | "simplified" | "modified" -> -1 or lv_newton_kind;
 * 0 on success, -1 if unknown. */
int cli_parse_newton_kind(const char *s, int *kind);
/* auto|dense|umfpack|klu|sparse (lv_linsol_kind_name's words) -> *kind; -1 if none. */
int cli_parse_linsol(const char *s, lv_linsol_kind *kind);
/* Split a comma-separated list in place; -1 if malformed or too long. */
int cli_split_list(char *s, char **items, int max);

/* Run description files (INI, parsed by inih). */
int cli_load_runfile(const char *path, cli_run *r);
/* The same from text in memory; @p name is used in messages. */
int cli_parse_runfile_string(const char *text, const char *name, cli_run *r);

/* Sections of an INI file beyond [run], [param], [opt] (sweep files, issue
 * 21): called for every other section's settings with the same line checks
 * and duplicate detection.  Returns 1 (accepted), 0 (refused, message
 * printed) or -1 (unknown section: the run file's message). */
typedef int (*cli_ini_extra)(void *user, const char *section, const char *name, const char *value,
                             const char *path, int lineno);
/* cli_load_runfile / cli_parse_runfile_string with such a hook. */
int cli_load_runfile_ex(const char *path, cli_run *r, cli_ini_extra extra, void *extra_user);
int cli_parse_runfile_string_ex(const char *text, const char *name, cli_run *r, cli_ini_extra extra,
                                void *extra_user);

/* gnuplot output of a run CSV or a convergence CSV. */
int cli_plot(const char *csv, const char *png);
int cli_have_gnuplot(void);
/* Write @p script to the private directory @p dir, run gnuplot on it and
 * move dir/out.png to @p png (plot.c).  CLI_OK or CLI_FAILED (message). */
int cli_plot_draw(const char *dir, const char *script, size_t len, const char *png);
/* The figure of a sweep summary CSV (sweep_plot.c, issue 21). */
int cli_plot_sweep(const char *csv, const char *png);

/* livens sweep FILE (sweep.c, issue 21): argv[0] is "sweep". */
int cli_sweep(int argc, char **argv);

/* Figures from one or more CSVs (issue 17): @p ycols is the --y list or
 * NULL; @p format is png, svg, pdf or tex. */
int cli_plot_files(const char *const *csv, int n, const char *out, const char *format, const char *ycols);

/* The --output-times list: non-negative, strictly increasing, none after
 * @p t_end (when positive).  *times is malloc'ed (NULL for an empty
 * text).  CLI_OK, or CLI_USAGE with the sentence printed. */
int cli_parse_times(const char *text, double t_end, double **times, int *n);

/* The step size and end time of a run that gave none: per model, values
 * with which every scheme of the build runs the model (issue 17). */
void cli_run_fill_defaults(cli_run *r);

/* CSV metadata (src/cli/meta.c): "# key = value" lines, values escaped so
 * they never end their line. */
const char *cli_kv_get(const cli_kv *l, const char *key, const char *dflt);
/* The parameter list of a registered model, NULL for an unknown name. */
const lv_param_info *cli_model_params(const char *model);
void cli_meta_put(FILE *f, const char *key, const char *value);
void cli_meta_num(FILE *f, const char *key, double x);
/* Version and kind ("run", "convergence", "compare"). */
void cli_meta_begin(FILE *f, const char *kind);
/* The model and every parameter (given or default). */
void cli_meta_model(FILE *f, const cli_run *r);
/* A scheme and every option (given or default). */
void cli_meta_scheme(FILE *f, const char *scheme, const cli_kv *opts);
/* h, t_end, output selection, linear solver, Newton settings. */
void cli_meta_settings(FILE *f, const cli_run *r);
/* All of the above for one run, with the units of model @p m (NULL: none);
 * then cli_meta_end. */
int cli_meta_run(FILE *f, const cli_run *r, const lv_model *m);
/* Flush and check: CLI_OK, or CLI_FAILED with the sentence printed. */
int cli_meta_end(FILE *f, const char *path);

/* CSV output through a row keeper (rows.c): a forked process owns the file
 * and writes only whole lines, so even SIGKILL leaves only whole rows.
 * cli_rows_open returns 0, or -1 with errno; cli_rows_close waits for the
 * keeper and returns 0, or EOF with errno (the keeper's own errno when its
 * write failed); on any other FILE it is fclose.  cli_rows_errno maps an
 * errno from writing @p f (EPIPE: the keeper is gone) to the keeper's. */
int cli_rows_open(const char *path, FILE **f);
int cli_rows_close(FILE *f);
int cli_rows_errno(FILE *f, int err);
/* SI units of the model's columns where it has them (issue 17): "# unit.t =
 * s", "# unit.energy = J", "# unit.q1..q3 = m", ... (run CSVs), or the units
 * of h and of the error groups (@p convergence).  Nothing for a model
 * without units, a plugin or a system file. */
void cli_meta_units(FILE *f, const cli_run *r, const lv_model *m, int convergence);

/* Model plugins (src/cli/plugin.c). */
/* Load the shared object at @p path (empty: nothing) and add its model;
 * CLI_OK, or CLI_USAGE with the sentence printed. */
int cli_load_plugin(const char *path);
/* The loaded plugin's model, or NULL. */
const lv_model_info *cli_plugin_model(void);
/* A model by name: the plugin's or a built-in one; NULL if unknown. */
const lv_model_info *cli_find_model(const char *name);

/* JSON (src/cli/json.c). */
/* Length of the well-formed UTF-8 sequence at @p s (1 for ASCII), 0 if the
 * byte there does not start one. */
int cli_utf8_len(const char *s);
/* @p s as a JSON string literal: quotes, backslashes and control bytes
 * escaped, malformed UTF-8 as U+FFFD. */
void cli_json_string(FILE *f, const char *s);
/* %.17g, or null for a non-finite value. */
void cli_json_number(FILE *f, double x);
/* The summary of one run as a JSON object (settings, model parameters,
 * scheme options, diagnostics, statistics, status).  CLI_OK or CLI_FAILED
 * when the stream has an error. */
int cli_json_summary(FILE *f, const cli_run *r, const cli_result *res);

/* converge --reference FILE.csv (src/cli/reference.c, issue 17): states of
 * a reference solution read from a CSV. */
typedef struct {
  int nq, nv, nc;  /* the model's; nc = 0 when the file has no lambda columns */
  long n;          /* rows */
  double *t, *x;   /* t increasing; x: n rows of nq + nv + nc (q, v, lambda) */
  double h;        /* its step from the metadata ("# h = "), 0 if unknown */
  char scheme[64]; /* its scheme from the metadata, empty if unknown */
} cli_reference;
/* Read the reference for model @p m of run @p r from @p path: a livens run
 * CSV of the same model and parameters, or any CSV with the columns t,
 * q1.., v1.. (and optionally lambda1..).  CLI_OK, or CLI_USAGE / CLI_FAILED
 * with one sentence printed (nothing to free then). */
int cli_reference_read(const char *path, const cli_run *r, const lv_model *m, cli_reference *ref);
/* The row at time @p t (relative tolerance 1e-9), or -1. */
long cli_reference_find(const cli_reference *ref, double t);
void cli_reference_free(cli_reference *ref);

/* Set by SIGINT; the output callback stops the run cleanly. */
extern volatile int cli_interrupted;

/* What the commands' SIGINT / SIGTERM handlers do first: cli_interrupted
 * set; the third such signal kills the program as the default action would. */
void cli_note_signal(int sig);

/* Puts back the SIGINT and SIGTERM handlers a command replaced with its own
 * (run, sweep) -- unless a signal has interrupted it: its handler then stays
 * until the program exits and a second signal only marks the interrupt
 * again, so the summary and the exit status 1 still come (a third kills,
 * cli_note_signal).  timeout(1) sends SIGTERM to the program and then to
 * its process group, i.e. twice, microseconds apart; with the default action
 * back after the stop the second killed the program before its summary
 * (exit 143, 20 runs in 20). */
struct sigaction;
void cli_signals_restore(const struct sigaction *oldint, const struct sigaction *oldterm);

/* livens theory genalpha ... (src/cli/theory.c); argv[0] is "theory". */
int cmd_theory(int argc, char **argv);

#endif
