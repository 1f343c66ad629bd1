/* C side of the livens Python package (issue 16), compiled into the cffi
 * extension module with the code cffi generates (python/livens_build.py).
 *
 * A run records every output row into a growing C array, so a simulation
 * of a built-in model runs entirely in C (cffi releases the GIL around the
 * call), and pylv_run returns after a time budget so that Python can look
 * at pending signals (Ctrl-C) between chunks. */
#ifndef PYLIVENS_H
#define PYLIVENS_H

#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "livens/livens.h"

/* One row: t, q (nq), v (nv), p (nv), lambda (nc), gamma (nc), energy,
 * momentum (nsym), g_norm, gv_norm, gp_norm, newton_iters. */
typedef struct {
  lv_diag *diag;
  int every;
  long count;     /* output events recorded since init (as lv_diag_writer) */
  int nq, nv, nc, nsym, width;
  double *rows;
  long nrows, cap;
  int failed;     /* status of a failed diagnostic evaluation or allocation */
} pylv_recorder;

static double pylv_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A recorder for runs of @p it's model (diagnostics created here). */
static int pylv_recorder_new(pylv_recorder **out, const lv_integrator *it, int every) {
  *out = NULL;
  const lv_model *m = lv_integrator_model(it);
  const lv_scheme_type *type = lv_integrator_scheme(it);
  if (!m || !type) return LV_EINPUT;
  pylv_recorder *r = calloc(1, sizeof *r);
  if (!r) return LV_ENOMEM;
  r->every = every > 0 ? every : 1;
  r->nq = lv_model_nq(m);
  r->nv = lv_model_nv(m);
  r->nc = lv_model_nc(m);
  r->nsym = lv_model_nsym(m);
  r->width = 1 + r->nq + 2 * r->nv + 2 * r->nc + 1 + r->nsym + 4;
  int rc = lv_diag_new_for(&r->diag, it);
  if (rc) {
    free(r);
    return rc;
  }
  *out = r;
  return 0;
}

static void pylv_recorder_free(pylv_recorder *r) {
  if (!r) return;
  lv_diag_free(r->diag);
  free(r->rows);
  free(r);
}

static void pylv_put(double **d, const double *x, int n) {
  memcpy(*d, x, sizeof(double) * (size_t)n);
  *d += n;
}

static int pylv_append(pylv_recorder *r, const lv_integrator *it, const lv_diag_point *pt) {
  if (r->nrows == r->cap) {
    long cap = r->cap ? 2 * r->cap : 1024;
    double *t = realloc(r->rows, sizeof(double) * (size_t)cap * (size_t)r->width);
    if (!t) return LV_ENOMEM;
    r->rows = t;
    r->cap = cap;
  }
  const lv_state *s = lv_integrator_state(it);
  double *d = r->rows + (size_t)r->nrows * (size_t)r->width;
  *d++ = s->t;
  pylv_put(&d, s->q, r->nq);
  pylv_put(&d, s->v, r->nv);
  pylv_put(&d, s->p, r->nv);
  pylv_put(&d, s->lambda, r->nc);
  pylv_put(&d, s->gamma, r->nc);
  *d++ = pt->energy;
  pylv_put(&d, pt->momentum, r->nsym);
  *d++ = pt->g_norm;
  *d++ = pt->gv_norm;
  *d++ = pt->gp_norm;
  *d++ = (double)lv_integrator_last_newton(it)->iterations;
  r->nrows++;
  return 0;
}

/* The output callback: the rows lv_diag_output would write to a CSV with
 * the same `every`, and the same summary. */
static int pylv_output(const lv_integrator *it, lv_output_event ev, void *ctx) {
  pylv_recorder *r = ctx;
  lv_diag_point pt;
  int rc;
  if (ev == LV_OUTPUT_FINAL) {
    if (r->count > 0 && (r->count - 1) % r->every != 0) {
      if ((rc = lv_diag_eval(r->diag, lv_integrator_state(it), &pt)) || (rc = pylv_append(r, it, &pt))) {
        r->failed = rc;
        return 1;
      }
    }
    return 0;
  }
  if (ev == LV_OUTPUT_INIT) {
    r->count = 0;
    r->nrows = 0;
    lv_diag_reset(r->diag);
  }
  if ((rc = lv_diag_record(r->diag, lv_integrator_state(it), &pt))) {
    r->failed = rc;
    return 1;
  }
  if (r->count % r->every == 0 && (rc = pylv_append(r, it, &pt))) {
    r->failed = rc;
    return 1;
  }
  r->count++;
  return 0;
}

static int pylv_attach(pylv_recorder *r, lv_integrator *it) { return lv_integrator_set_output(it, pylv_output, r); }

/* Ctrl-C during a run of the main thread: while Python's own SIGINT handler
 * would only act once the C call returns, this one asks the integrator to
 * stop (BLieDF's start-up polls the request inside its long first step) and
 * pylv_run stops at the next step boundary.  Installed around a run by the
 * main thread only, and only where Python's default handler is in place. */
static volatile sig_atomic_t pylv_sigint_seen = 0;
static lv_integrator *volatile pylv_sigint_it = NULL;
static struct sigaction pylv_sigint_old;
static int pylv_sigint_active = 0;

static void pylv_on_sigint(int sig) {
  (void)sig;
  pylv_sigint_seen = 1;
  if (pylv_sigint_it) lv_integrator_request_stop(pylv_sigint_it);
}

/* Install the handler for a run of @p it; 0 if it was (not if a run of
 * this thread already has it: nested runs keep the outer one's). */
static int pylv_sigint_begin(lv_integrator *it) {
  if (pylv_sigint_active) return -1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = pylv_on_sigint;
  sigemptyset(&sa.sa_mask);
  pylv_sigint_seen = 0;
  pylv_sigint_it = it;
  if (sigaction(SIGINT, &sa, &pylv_sigint_old) != 0) {
    pylv_sigint_it = NULL;
    return -1;
  }
  pylv_sigint_active = 1;
  return 0;
}

/* Give SIGINT back to Python; 1 if one arrived during the run. */
static int pylv_sigint_end(void) {
  if (!pylv_sigint_active) return 0;
  sigaction(SIGINT, &pylv_sigint_old, NULL);
  pylv_sigint_active = 0;
  pylv_sigint_it = NULL;
  int seen = pylv_sigint_seen;
  pylv_sigint_seen = 0;
  return seen;
}

/* lv_integrator_run_until in chunks: steps until t >= t_end - h/2 or until
 * @p budget seconds have passed (budget <= 0: no limit).  *done is set when
 * the run ended (reached t_end or failed); then the final output has fired,
 * as in lv_integrator_run_until.  A SIGINT seen by pylv_on_sigint returns
 * LV_ESTOPPED with *done = 0, as does a stop request inside a step. */
static int pylv_run(pylv_recorder *r, lv_integrator *it, double t_end, double budget, int *done) {
  double start = budget > 0 ? pylv_now() : 0.0, h = lv_integrator_step_size(it);
  int rc = 0;
  *done = 0;
  unsigned n = 0;
  while (lv_integrator_state(it)->t < t_end - 0.5 * h) {
    rc = lv_integrator_step(it);
    if (rc) break;
    if (pylv_sigint_seen && pylv_sigint_it == it) return LV_ESTOPPED; /* *done = 0: the caller finishes */
    /* the clock every 16 steps: a step of a small model takes ~1 us */
    if (budget > 0 && (++n & 15u) == 0 && pylv_now() - start > budget) return 0;
  }
  *done = 1;
  if (pylv_output(it, LV_OUTPUT_FINAL, r) && rc == 0) rc = LV_ESTOPPED;
  return rc;
}

/* Hand the recorded rows to the caller (who frees them with free()): the
 * block shrunk to its rows, the recorder left empty. */
static double *pylv_take_rows(pylv_recorder *r) {
  double *rows = r->rows;
  if (rows && r->nrows > 0 && r->nrows < r->cap) {
    double *t = realloc(rows, sizeof(double) * (size_t)r->nrows * (size_t)r->width);
    if (t) rows = t;
  }
  r->rows = NULL;
  r->cap = 0;
  return rows;
}

/* The final output of a run stopped between chunks (Ctrl-C). */
static void pylv_finish(pylv_recorder *r, lv_integrator *it) { pylv_output(it, LV_OUTPUT_FINAL, r); }

/* Add a dense row-major nr x nc matrix, every entry (zeros too, so sparse
 * patterns stay fixed), into a sink. */
static int pylv_sink_add_dense(lv_sink *s, const double *a, int nr, int nc) {
  return lv_sink_add_block(s, 0, 0, nr, nc, a, nc);
}

#endif
