/* Running one simulation for the livens program: model creation, option
 * handling, progress line, clean stop on Ctrl-C. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "lv_internal.h" /* lv_integrator_step_point, lv_diag_record_known: the guard's diagnostics reused */

volatile int cli_interrupted = 0;

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("livens: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_kv_set(cli_kv *l, const char *key, const char *value) {
  if (l->n >= CLI_MAXKV) {
    cli_error("too many parameters or options (at most %d).", CLI_MAXKV);
    return CLI_USAGE;
  }
  size_t nk = strlen(key), nv = strlen(value);
  char *b = malloc(nk + nv + 2);
  if (!b) {
    cli_error("out of memory.");
    return CLI_FAILED;
  }
  memcpy(b, key, nk + 1);
  memcpy(b + nk + 1, value, nv + 1);
  l->buf[l->n] = b;
  l->keys[l->n] = b;
  l->values[l->n] = b + nk + 1;
  l->n++;
  return CLI_OK;
}

int cli_kv_push(cli_kv *l, const char *text, const char *what) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text || eq - text > 200) {
    cli_error("%s expects NAME=VALUE, got '%s'.", what, text);
    return CLI_USAGE;
  }
  char key[256];
  memcpy(key, text, (size_t)(eq - text));
  key[eq - text] = '\0';
  return cli_kv_set(l, key, eq + 1);
}

void cli_kv_free(cli_kv *l) {
  for (int i = 0; i < l->n; i++) free(l->buf[i]);
  l->n = 0;
}

lv_kv cli_kv_view(const cli_kv *l) {
  lv_kv kv = {l->n, (const char **)l->keys, (const char **)l->values};
  return kv;
}

void cli_run_defaults(cli_run *r) {
  memset(r, 0, sizeof *r);
  strcpy(r->model, "four-particle");
  /* the paper's second-order variational integrator when this build has it */
  strcpy(r->scheme, lv_scheme_find("vi-a") ? "vi-a" : "rattle");
  r->scheme_auto = 1; /* cli_choose_scheme may replace it once the model is known */
  r->h = 0;     /* 0: the model's default (cli_run_fill_defaults) */
  r->t_end = 0;
  r->every = 1;
  r->linsol = LV_LINSOL_AUTO;
  r->newton_kind = -1;
}

int cli_parse_linsol(const char *s, lv_linsol_kind *kind) {
  static const lv_linsol_kind k[] = {LV_LINSOL_AUTO, LV_LINSOL_DENSE, LV_LINSOL_UMFPACK, LV_LINSOL_KLU,
                                     LV_LINSOL_SPARSE};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (strcmp(s, lv_linsol_kind_name(k[i])) == 0) {
      *kind = k[i];
      return 0;
    }
  return -1;
}

int cli_parse_newton_kind(const char *s, int *kind) {
  static const struct {
    const char *name;
    int kind;
  } k[] = {{"default", -1},
           {"full", LV_NEWTON_FULL},
           {"simplified", LV_NEWTON_SIMPLIFIED},
           {"modified", LV_NEWTON_MODIFIED}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (strcmp(s, k[i].name) == 0) {
      *kind = k[i].kind;
      return 0;
    }
  return -1;
}

int cli_is_system_file(const char *model) {
  size_t n = strlen(model);
  return (n > 5 && strcmp(model + n - 5, ".yaml") == 0) || (n > 4 && strcmp(model + n - 4, ".yml") == 0);
}

int cli_make_model(const cli_run *r, lv_model **out) {
  lv_kv kv = cli_kv_view(&r->params);
  int prc = cli_load_plugin(r->model_lib);
  if (prc) return prc;
  if (cli_is_system_file(r->model)) { /* a system file (issue 15) */
    const char *form = NULL;
    for (int i = 0; i < kv.n; i++) {
      if (strcmp(kv.keys[i], "formulation") != 0) {
        cli_error("system file '%s' has no parameter '%s' (only formulation=...).", r->model, kv.keys[i]);
        return CLI_USAGE;
      }
      form = kv.values[i];
    }
    char why[1024];
    *out = NULL;
    int rc = lv_mbs_load(r->model, form, out, why, sizeof why);
    if (rc == LV_ENOMEM) {
      cli_error("out of memory reading the system file '%s'.", r->model);
      return CLI_FAILED;
    }
    if (rc) {
      cli_error("%s.", why);
      return CLI_USAGE;
    }
    return CLI_OK;
  }
  const lv_model_info *info = cli_find_model(r->model);
  if (!info) {
    cli_error("unknown model '%s' (see 'livens list').", r->model);
    return CLI_USAGE;
  }
  const char *bad = NULL;
  if (lv_kv_check(&kv, info->params, &bad)) {
    cli_error("model '%s' has no parameter '%s' (see 'livens list').", r->model, bad);
    return CLI_USAGE;
  }
  *out = NULL;
  int rc = info->create(&kv, out);
  if (rc == LV_ENOMEM) {
    cli_error("out of memory creating model '%s'.", r->model);
    return CLI_FAILED;
  }
  if (rc == LV_EINPUT) {
    /* Name the value: the first parameter the model refuses on its own,
     * with the registry's description (it states the accepted values). */
    for (int i = 0; i < kv.n; i++) {
      lv_kv one = {1, kv.keys + i, kv.values + i};
      lv_model *alone = NULL;
      int rc1 = info->create(&one, &alone);
      lv_model_free(alone);
      if (rc1 != LV_EINPUT) continue;
      const char *doc = "";
      for (const lv_param_info *p = info->params; p->name; p++)
        if (strcmp(p->name, kv.keys[i]) == 0) doc = p->doc;
      cli_error("model '%s' refuses %s = %s (%s: %s).", r->model, kv.keys[i], kv.values[i], kv.keys[i], doc);
      return CLI_USAGE;
    }
    cli_error("model '%s' refuses this combination of parameter values (each alone is accepted; see 'livens list').",
              r->model);
    return CLI_USAGE;
  }
  if (rc) {
    cli_error("invalid parameter value for model '%s': %s.", r->model, lv_strerror(rc));
    return CLI_USAGE;
  }
  return CLI_OK;
}

typedef struct {
  lv_diag_writer w;
  int progress;
  double t_end, last_print;
  int failed, err; /* the writer failed; errno of a failed write, else 0 */
  /* output at chosen times (issue 17): dt > 0, or the list times[0..ntimes) */
  int timed;
  double dt;
  const double *times;
  int ntimes;
  long next;       /* index of the next output time */
  int last_written; /* the last recorded state is in the CSV */
  const cli_run *run; /* for on_state */
  int hook_failed;    /* on_state stopped the run */
  lv_integrator *it;  /* the run's integrator, for checkpoints (issue 17) */
  int ckpt_failed;    /* a checkpoint could not be written: the run stopped */
} out_ctx;

int cli_parse_times(const char *text, double t_end, double **times, int *n) {
  *times = NULL;
  *n = 0;
  if (!text || !text[0]) return CLI_OK;
  int cap = 1;
  for (const char *p = text; *p; p++) cap += *p == ',';
  double *t = malloc(sizeof *t * (size_t)cap);
  char *copy = strdup(text);
  if (!t || !copy) {
    free(t);
    free(copy);
    cli_error("out of memory.");
    return CLI_FAILED;
  }
  int k = 0, rc = CLI_OK;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    char *end;
    errno = 0;
    double x = strtod(tok, &end);
    if (end == tok || *end || errno || !isfinite(x) || x < 0) {
      cli_error("--output-times takes non-negative numbers, got '%s'.", tok);
      rc = CLI_USAGE;
    } else if (k > 0 && !(x > t[k - 1])) {
      cli_error("--output-times must increase strictly (%g after %g).", x, t[k - 1]);
      rc = CLI_USAGE;
    } else if (t_end > 0 && x > t_end) {
      cli_error("output time %g is after t-end %g.", x, t_end);
      rc = CLI_USAGE;
    } else t[k++] = x;
  }
  if (!rc && k == 0) {
    cli_error("--output-times needs at least one time.");
    rc = CLI_USAGE;
  }
  free(copy);
  if (rc) {
    free(t);
    return rc;
  }
  *times = t;
  *n = k;
  return CLI_OK;
}

/* Output at chosen times: the initial state, the state nearest each time
 * (the first step with t_n >= tau - h/2) and the final state.  Every step
 * still enters the summary. */
static int output_timed(const lv_integrator *it, lv_output_event ev, out_ctx *o) {
  lv_diag_writer *w = &o->w;
  lv_diag_point pt;
  const lv_state *s = lv_integrator_state(it);
  if (ev == LV_OUTPUT_FINAL) {
    if (w->csv && w->count > 0 && !o->last_written) {
      if (lv_diag_eval(w->diag, s, &pt) || lv_diag_csv_row(w->csv, it, &pt)) return 1;
      o->last_written = 1;
    }
    return 0;
  }
  if (ev == LV_OUTPUT_INIT) {
    w->count = 0;
    o->next = 0;
    lv_diag_reset(w->diag);
    if (w->csv && lv_diag_csv_header(w->csv, it)) return 1;
  }
  const lv_diag *lay = NULL;
  const lv_diag_point *known = ev == LV_OUTPUT_STEP ? lv_integrator_step_point(it, &lay) : NULL;
  if (lv_diag_record_known(w->diag, s, lay, known, &pt)) return 1;
  double half = 0.5 * lv_integrator_step_size(it) * (1 + 1e-9);
  int due = ev == LV_OUTPUT_INIT;
  for (;;) {
    double tau = o->dt > 0 ? (double)o->next * o->dt : (o->next < o->ntimes ? o->times[o->next] : INFINITY);
    if (!(tau <= s->t + half)) break;
    due = 1;
    o->next++;
  }
  if (w->csv && due && lv_diag_csv_row(w->csv, it, &pt)) return 1;
  o->last_written = due;
  w->count++;
  return 0;
}

/* --checkpoint: every checkpoint_every steps (counted from t = 0, across
 * resumes) and at the end of the run, also after an interrupt or a failed
 * step (the last accepted state).  Non-zero stops the run. */
static int checkpoint(out_ctx *o, lv_output_event ev) {
  const cli_run *r = o->run;
  if (!r->checkpoint[0] || !o->it || ev == LV_OUTPUT_INIT) return 0;
  lv_integrator_stats st;
  lv_integrator_get_stats(o->it, &st);
  if (ev == LV_OUTPUT_STEP && (r->checkpoint_every <= 0 || st.steps % r->checkpoint_every != 0)) return 0;
  int rc = lv_integrator_checkpoint_write(o->it, r->checkpoint);
  if (rc == LV_EINPUT && ev == LV_OUTPUT_FINAL) return 0; /* diverged: no state to continue from */
  if (rc) {
    char why[400];
    lv_integrator_error_detail(o->it, why, sizeof why);
    cli_error("%s.", rc == LV_EIO ? why : lv_strerror(rc));
    o->ckpt_failed = 1;
    return 1;
  }
  return 0;
}

static int output(const lv_integrator *it, lv_output_event ev, void *ctx) {
  out_ctx *o = ctx;
  if (checkpoint(o, ev)) return 1;
  errno = 0;
  if (o->timed ? output_timed(it, ev, o) : lv_diag_output(it, ev, &o->w)) {
    o->failed = 1;
    o->err = cli_rows_errno(o->w.csv, errno);
    return 1;
  }
  if (ev != LV_OUTPUT_FINAL && o->run->on_state && o->run->on_state(it, o->run->on_state_ctx)) {
    o->hook_failed = 1;
    return 1;
  }
  if (o->progress && ev == LV_OUTPUT_STEP) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = ts.tv_sec + 1e-9 * ts.tv_nsec;
    if (now - o->last_print > 0.2) {
      fprintf(stderr, "\r  t = %-12.6g (%5.1f%%)", lv_integrator_state(it)->t,
              100.0 * lv_integrator_state(it)->t / o->t_end);
      o->last_print = now;
    }
  }
  if (o->progress && ev == LV_OUTPUT_FINAL) fputs("\r\033[K", stderr);
  return cli_interrupted ? 1 : 0;
}

/* The integrator a signal should stop inside a step (BLieDF's start-up
 * can run for many seconds before the first step boundary). */
static lv_integrator *volatile cli_running = NULL;

/* SIGINT and SIGTERM received while a command's handler was installed; at
 * the third the program dies of it, as without a handler (a way out of a
 * summary that cannot be written, e.g. to a FIFO nobody reads). */
static volatile sig_atomic_t cli_signals = 0;

void cli_note_signal(int sig) {
  cli_interrupted = 1;
  if (++cli_signals >= 3) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

static void on_sigint(int sig) {
  cli_note_signal(sig);
  if (cli_running) lv_integrator_request_stop(cli_running);
}

void cli_signals_restore(const struct sigaction *oldint, const struct sigaction *oldterm) {
  cli_running = NULL; /* the handler no longer reaches the run (it may be freed next) */
  if (cli_interrupted) return;
  sigaction(SIGINT, oldint, NULL);
  sigaction(SIGTERM, oldterm, NULL);
}

/* Why @p scheme refuses @p model (LV_ENOTIMPL from lv_integrator_new): the
 * first requirement it does not meet, in lv_integrator_new's order, and the
 * way out when the model has a directors formulation (issue 15). */
static void cli_mismatch(const char *scheme, const lv_model *model, char *buf, size_t n) {
  const lv_scheme_type *st = lv_scheme_find(scheme);
  unsigned unmet = lv_scheme_unmet_requirement(st, model, buf, n);
  int fix = unmet == LV_SCHEME_CONSTANT_MASS || unmet == LV_SCHEME_LINEAR_SPACE || unmet == LV_SCHEME_CONSERVATIVE;
  if (!unmet) snprintf(buf, n, "%s", lv_strerror(LV_ENOTIMPL));
  const char *form = lv_mbs_model_formulation(model);
  if (!fix || (form && strcmp(form, "directors") == 0)) return;
  const lv_model_info *const *reg = lv_model_registry();
  for (int i = 0; reg[i]; i++) {
    if (strcmp(reg[i]->name, lv_model_name(model)) != 0) continue;
    for (const lv_param_info *p = reg[i]->params; p && p->name; p++)
      if (strcmp(p->name, "formulation") == 0 && p->doc && strstr(p->doc, "directors")) {
        size_t l = strlen(buf);
        if (l < n) snprintf(buf + l, n - l, ": use --param formulation=directors");
      }
  }
}

/* No scheme named by the user (cli_run::scheme_auto): the default, VI-A,
 * where it runs the model; otherwise the Lie group generalized-alpha
 * method, which runs every model (Lie groups, configuration-dependent mass,
 * applied forces), with one line on stderr that says so and why.  A scheme
 * the user names is never replaced: a mismatch is then a usage error. */
void cli_choose_scheme(cli_run *r, const lv_model *model) {
  if (!r->scheme_auto) return;
  const lv_scheme_type *st = lv_scheme_find(r->scheme), *ga = lv_scheme_find("genalpha");
  if (!st || !ga || !lv_scheme_unmet_requirement(st, model, NULL, 0) || lv_scheme_unmet_requirement(ga, model, NULL, 0))
    return;
  char why[256];
  cli_mismatch(r->scheme, model, why, sizeof why);
  fprintf(stderr, "livens: no --scheme given, and the default %s cannot run '%s': %s; running genalpha.\n",
          r->scheme, lv_model_name(model), why);
  strcpy(r->scheme, "genalpha");
}

int cli_execute(const cli_run *r, lv_model *model, FILE *csv, int progress, cli_result *res) {
  memset(res, 0, sizeof *res);
  cli_run filled;
  if (!(r->h > 0) || !(r->t_end > 0)) {
    /* a caller that left them unset gets the model's defaults */
    filled = *r;
    cli_run_fill_defaults(&filled);
    r = &filled;
  }
  lv_integrator *it = NULL;
  lv_diag *diag = NULL;
  int rc = lv_integrator_new(&it, model, r->scheme, r->h);
  if (rc == LV_EUNKNOWN) {
    cli_error("unknown scheme '%s' (see 'livens list').", r->scheme);
    return CLI_USAGE;
  }
  if (rc == LV_ENOTIMPL) {
    char why[256];
    cli_mismatch(r->scheme, model, why, sizeof why);
    cli_error("scheme '%s' cannot run model '%s': %s.", r->scheme, lv_model_name(model), why);
    return CLI_USAGE;
  }
  if (rc == LV_ENOMEM) { /* not the user's input: the machine's memory (exit 1, like a run that runs out) */
    cli_error("scheme '%s' cannot run model '%s': %s.", r->scheme, lv_model_name(model), lv_strerror(rc));
    return CLI_FAILED;
  }
  if (rc) {
    cli_error("scheme '%s' cannot run model '%s': %s.", r->scheme, lv_model_name(model), lv_strerror(rc));
    return CLI_USAGE;
  }
  for (int i = 0; i < r->opts.n; i++) {
    rc = lv_integrator_set_option(it, r->opts.keys[i], r->opts.values[i]);
    if (rc) {
      cli_error("scheme '%s' has no option '%s' (see 'livens list').", r->scheme, r->opts.keys[i]);
      lv_integrator_free(it);
      return CLI_USAGE;
    }
  }
  lv_integrator_set_linsol(it, r->linsol, 0);
  if (r->halving > 0 && lv_integrator_set_halving(it, r->halving)) {
    cli_error("scheme '%s' is a multistep scheme and cannot halve its step.", r->scheme);
    lv_integrator_free(it);
    return CLI_USAGE;
  }
  if (r->newton_tol > 0 || r->newton_kind >= 0) {
    lv_newton_options o;
    lv_integrator_get_newton(it, &o);
    if (r->newton_tol > 0) o.res_tol = r->newton_tol;
    if (r->newton_kind >= 0) o.kind = (lv_newton_kind)r->newton_kind;
    lv_integrator_set_newton(it, &o);
  }
  rc = lv_diag_new_for(&diag, it);
  if (rc) {
    lv_integrator_free(it);
    cli_error("%s.", lv_strerror(rc));
    return CLI_FAILED;
  }
  double *times = NULL;
  int ntimes = 0;
  if (csv && r->output_times[0] && (rc = cli_parse_times(r->output_times, r->t_end, &times, &ntimes))) {
    lv_diag_free(diag);
    lv_integrator_free(it);
    return rc;
  }
  out_ctx oc = {{.diag = diag, .csv = csv, .every = r->every}, progress, r->t_end, 0.0, 0, 0, 0, 0, NULL, 0, 0, 0, NULL, 0, NULL, 0};
  oc.timed = csv && (r->output_dt > 0 || ntimes > 0);
  oc.run = r;
  oc.it = it;
  oc.dt = r->output_dt;
  oc.times = times;
  oc.ntimes = ntimes;
  lv_integrator_set_output(it, output, &oc);
  /* SIGTERM (kill, timeout, batch schedulers) stops the run like Ctrl-C: at
   * a step boundary, with the file complete and the summary printed. */
  struct sigaction sa, old, oldterm;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  /* a signal after the stop must not fail the summary's writes (EINTR) */
  sa.sa_flags = SA_RESTART;
  cli_running = it;
  sigaction(SIGINT, &sa, &old);
  sigaction(SIGTERM, &sa, &oldterm);
  if (r->resume[0]) {
    /* --resume (issue 17): the state, time, statistics and the scheme's
     * history from the checkpoint; the CSV and the summary start there. */
    rc = lv_integrator_checkpoint_read(it, r->resume);
    if (rc) {
      cli_signals_restore(&old, &oldterm);
      char why[400];
      lv_integrator_error_detail(it, why, sizeof why);
      cli_error("cannot resume: %s.", rc == LV_EINPUT || rc == LV_EIO ? why : lv_strerror(rc));
      free(times);
      lv_diag_free(diag);
      lv_integrator_free(it);
      return rc == LV_EINPUT ? CLI_USAGE : CLI_FAILED;
    }
    if (output(it, LV_OUTPUT_INIT, &oc)) rc = LV_ESTOPPED;
  } else {
    rc = lv_integrator_init(it, 0.0, NULL, NULL);
  }
  /* Options are validated by the scheme at init (values, not only names). */
  if (rc == LV_EINPUT || rc == LV_EUNKNOWN) {
    cli_signals_restore(&old, &oldterm);
    char why[256];
    lv_integrator_error_detail(it, why, sizeof why);
    cli_error("invalid option value for scheme '%s': %s.", r->scheme, why);
    free(times);
    lv_diag_free(diag);
    lv_integrator_free(it);
    return CLI_USAGE;
  }
  /* A scheme that can judge the model only from its initial state (rattlie:
   * is the force exactly the inertial term?) refuses it at init: the same
   * usage error as a refusal by flags, with the scheme's reason. */
  if (rc == LV_ENOTIMPL) {
    cli_signals_restore(&old, &oldterm);
    char why[256];
    lv_integrator_error_detail(it, why, sizeof why);
    cli_error("scheme '%s' cannot run model '%s': %s.", r->scheme, lv_model_name(model), why);
    free(times);
    lv_diag_free(diag);
    lv_integrator_free(it);
    return CLI_USAGE;
  }
  if (!rc) rc = lv_integrator_run_until(it, r->t_end);
  cli_signals_restore(&old, &oldterm);
  res->status = rc;
  lv_diag_get_summary(diag, &res->sum);
  lv_integrator_get_stats(it, &res->st);
  const lv_state *s = lv_integrator_state(it);
  res->t_final = s->t;
  res->nq = lv_model_nq(model);
  res->nv = lv_model_nv(model);
  res->nc = lv_model_nc(model);
  res->space = lv_model_space(model);
  res->q = malloc(sizeof(double) * (size_t)(res->nq + 1));
  res->v = malloc(sizeof(double) * (size_t)(res->nv + 1));
  res->lambda = malloc(sizeof(double) * (size_t)(res->nc + 1));
  if (res->q && res->v && res->lambda) {
    memcpy(res->q, s->q, sizeof(double) * (size_t)res->nq);
    memcpy(res->v, s->v, sizeof(double) * (size_t)res->nv);
    memcpy(res->lambda, s->lambda, sizeof(double) * (size_t)res->nc);
  }
  if (rc == LV_ESTOPPED && oc.failed && oc.err) {
    cli_error("cannot write %s: %s (the run stopped at t = %.6g).", r->out[0] ? r->out : "the CSV output",
              strerror(oc.err), s->t);
  } else if (rc == LV_ESTOPPED && oc.ckpt_failed) {
    /* the sentence is printed already */
  } else if (rc == LV_ESTOPPED && oc.hook_failed) {
    cli_error("%s stopped at t = %.6g: out of memory storing the states.", r->scheme, s->t);
  } else if (rc == LV_ESTOPPED && oc.failed) {
    cli_error("%s stopped at t = %.6g: evaluating the diagnostics (energy, constraints) failed.", r->scheme, s->t);
  } else if (rc == LV_ESTOPPED && cli_interrupted) {
    cli_error("%s interrupted at t = %.6g; every step up to there is in the output.", r->scheme, s->t);
  } else if (rc) {
    char detail[512];
    lv_integrator_error_detail(it, detail, sizeof detail);
    cli_error("%s stopped: %s.", r->scheme, detail);
  }
  free(times);
  lv_diag_free(diag);
  lv_integrator_free(it);
  return rc ? CLI_FAILED : CLI_OK;
}

void cli_result_free(cli_result *res) {
  free(res->q);
  free(res->v);
  free(res->lambda);
  res->q = res->v = res->lambda = NULL;
}

/* Per-model step sizes and end times with which the schemes that accept a
 * model run its default configuration to the end (measured over every
 * scheme of the build; tests/test_study.sh runs a sample).  Exceptions at
 * these defaults: genalpha on gyro-top needs h <= 5e-4 (as here) but
 * diverges at 1e-3 (test_guard.sh); heavy-top-ctb ends at T = 0.4 because bliedf1
 * meets a singular Newton matrix at t = 0.425 (h = 1e-4).  A model not listed (plugins) gets h = 0.01, T = 10. */
void cli_run_fill_defaults(cli_run *r) {
  static const struct {
    const char *model;
    double h, t_end;
  } d[] = {
      {"pendulum3d", 0.01, 10},   {"four-particle", 0.01, 10}, {"pendulum2d", 0.01, 10},
      {"rigid-chain", 0.01, 10},  {"chain", 0.005, 10},        {"gyro-top", 5e-4, 1},
      {"heavy-top", 1e-3, 1},     {"heavy-top-ep", 1e-3, 1},   {"heavy-top-ctb", 1e-4, 0.4},
      {"slider-crank", 1e-3, 2},  {"rotor", 1e-5, 0.01},       {"kapitza", 1e-3, 5},
  };
  double h = 0.01, t_end = 10;
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
    if (strcmp(d[i].model, r->model) == 0) h = d[i].h, t_end = d[i].t_end;
  if (cli_is_system_file(r->model)) { /* the file's run: settings (issue 15); errors: at cli_make_model */
    double fh = 0, ft = 0;
    if (!lv_mbs_load_run(r->model, &fh, &ft, NULL, 0)) {
      if (fh > 0) h = fh;
      if (ft > 0) t_end = ft;
    }
  }
  if (!(r->h > 0)) r->h = h;
  if (!(r->t_end > 0)) r->t_end = t_end;
}
