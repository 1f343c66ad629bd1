/* CSV output: a header line, one row per output step.
 *
 * Each line is formatted into memory and handed to the kernel with one
 * write(2) (looping only on a short write), never through the stdio buffer:
 * a row longer than that buffer would otherwise reach the file in pieces,
 * and a run killed between two pieces left a partial last row.  A handled
 * signal cannot split one write, but SIGKILL can (Linux stops a write to a
 * file between pages when a fatal signal is pending): the program therefore
 * writes through a row keeper (src/cli/rows.c) that passes on whole lines
 * only.  A full disk can cut a row short: that is reported as LV_EIO. */
#define _POSIX_C_SOURCE 200809L
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "diag/shortest.h"

typedef struct {
  char *s;
  size_t n, cap;
  int oom;
} line;

/* Room for k more characters; 0 when out of memory (remembered). */
static int reserve(line *b, size_t k) {
  if (b->oom) return 0;
  if (b->s && b->cap - b->n >= k) return 1;
  size_t cap = b->cap ? 2 * b->cap : 256;
  while (cap - b->n < k) cap *= 2;
  char *t = realloc(b->s, cap);
  if (!t) {
    b->oom = 1;
    return 0;
  }
  b->s = t;
  b->cap = cap;
  return 1;
}

static void add(line *b, const char *fmt, ...) {
  while (!b->oom) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      b->oom = 1;
      return;
    }
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    reserve(b, (size_t)k + 1);
  }
}

int lv_csv_number(char *buf, double x) {
#ifdef LV_HAVE_DCONV
  if (isfinite(x)) {
    char d[LV_SHORTEST_BUF];
    int point, neg, n = lv_shortest_digits(x, d, &point, &neg), k = 0, X = point - 1;
    if (neg) buf[k++] = '-';
    if (X < -4 || X >= 17) { /* d.ddd e+XX, at least two exponent digits */
      buf[k++] = d[0];
      if (n > 1) {
        buf[k++] = '.';
        memcpy(buf + k, d + 1, (size_t)(n - 1));
        k += n - 1;
      }
      buf[k++] = 'e';
      buf[k++] = X < 0 ? '-' : '+';
      int a = X < 0 ? -X : X;
      if (a >= 100) buf[k++] = (char)('0' + a / 100);
      buf[k++] = (char)('0' + a / 10 % 10);
      buf[k++] = (char)('0' + a % 10);
    } else if (point <= 0) { /* 0.000ddd */
      buf[k++] = '0';
      buf[k++] = '.';
      memset(buf + k, '0', (size_t)-point);
      k += -point;
      memcpy(buf + k, d, (size_t)n);
      k += n;
    } else if (point < n) { /* dd.ddd */
      memcpy(buf + k, d, (size_t)point);
      k += point;
      buf[k++] = '.';
      memcpy(buf + k, d + point, (size_t)(n - point));
      k += n - point;
    } else { /* ddd000 */
      memcpy(buf + k, d, (size_t)n);
      k += n;
      memset(buf + k, '0', (size_t)(point - n));
      k += point - n;
    }
    buf[k] = '\0';
    return k;
  }
#endif
  return snprintf(buf, LV_CSV_NUMBER_BUF, "%.17g", x);
}

/* ",x" (x alone for the first column) appended: the numbers of a row,
 * without a formatted print per number (glibc's %.17g took four thousand
 * instructions per number: a CSV row cost several times the step it
 * records) */
static void add_num(line *b, double x) {
  if (!reserve(b, LV_CSV_NUMBER_BUF + 1)) return;
  if (b->n) b->s[b->n++] = ',';
  b->n += (size_t)lv_csv_number(b->s + b->n, x);
}

/* Hands the line to the kernel; errno says why on LV_EIO. */
static int flush_line(FILE *f, line *b) {
  int rc = 0;
  if (b->oom) rc = LV_ENOMEM;
  else if (fflush(f) != 0 || ferror(f)) rc = LV_EIO;
  else if (fileno(f) < 0) {
    /* a stream without a descriptor (open_memstream, fmemopen) */
    if (fwrite(b->s, 1, b->n, f) != b->n || fflush(f) != 0) rc = LV_EIO;
  } else {
    int fd = fileno(f);
    size_t done = 0;
    while (done < b->n) {
      ssize_t k = write(fd, b->s + done, b->n - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        if (k == 0) errno = ENOSPC;
        rc = LV_EIO;
        break;
      }
      done += (size_t)k;
    }
  }
  free(b->s);
  return rc;
}

static int has_p(const lv_integrator *it) { return (lv_integrator_scheme(it)->flags & LV_SCHEME_HAS_P) != 0; }
static int has_gamma(const lv_integrator *it) {
  return (lv_integrator_scheme(it)->flags & LV_SCHEME_HAS_GAMMA) != 0;
}

static void cols(line *b, const char *name, int n) {
  for (int i = 1; i <= n; i++) add(b, ",%s%d", name, i);
}

/* Body-level columns of a model built by the multibody layer (issue 15):
 * per element, its centre of mass <name>.x1..x3 and, for a rigid body, its
 * rotation matrix <name>.R11..R33 (row-major), whatever the formulation,
 * so runs in different formulations line up column by column.  Unnamed
 * particles (the built-in particle models') have none: their q columns. */
static void body_cols(line *b, const lv_model *m) {
  int n = lv_mbs_model_elements(m);
  for (int id = 1; id < n; id++) {
    const char *name = NULL;
    int rigid = 0;
    if (!lv_mbs_model_has_columns(m, id) || lv_mbs_model_element(m, id, &name, &rigid)) continue;
    for (int i = 1; i <= 3; i++) add(b, ",%s.x%d", name, i);
    for (int i = 1; rigid && i <= 3; i++)
      for (int k = 1; k <= 3; k++) add(b, ",%s.R%d%d", name, i, k);
  }
}

/* The text of each configuration number already in the row, found by its
 * bits: the poses of the Lie group formulations' bodies are their
 * coordinates themselves (x and R of R^3 x SO(3)), which would otherwise be
 * printed a second time (a third of a rigid chain's row). */
typedef struct {
  size_t *off;   /* q[i]'s text (after its comma) starts at line offset off[i] */
  int *len;      /* ... and has len[i] characters */
  int *slot;     /* hash of the bits: q index + 1, 0 empty */
  unsigned mask; /* slots - 1 */
  const double *q;
} qtext;

static unsigned bits_hash(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  u ^= u >> 29;
  u *= 0xbf58476d1ce4e5b9u;
  return (unsigned)(u ^ (u >> 32));
}

/* q written into the row, each number's text remembered in Q (Q->off NULL:
 * out of memory, nothing remembered) */
static void q_vals(line *b, const double *q, int nq, qtext *Q) {
  unsigned slots = 16;
  while (slots < 2u * (unsigned)nq) slots *= 2;
  Q->off = malloc((size_t)nq * sizeof *Q->off);
  Q->len = malloc((size_t)nq * sizeof *Q->len);
  Q->slot = calloc(slots, sizeof *Q->slot);
  Q->mask = slots - 1;
  Q->q = q;
  if (!Q->off || !Q->len || !Q->slot) {
    free(Q->off), free(Q->len), free(Q->slot);
    Q->off = NULL, Q->len = NULL, Q->slot = NULL;
  }
  for (int i = 0; i < nq; i++) {
    size_t start = b->n + 1; /* after the comma (t came first) */
    add_num(b, q[i]);
    if (!Q->off || b->oom) continue;
    Q->off[i] = start;
    Q->len[i] = (int)(b->n - start);
    unsigned h = bits_hash(q[i]) & Q->mask;
    while (Q->slot[h] && memcmp(&q[Q->slot[h] - 1], &q[i], sizeof q[i]) != 0) h = (h + 1) & Q->mask;
    if (!Q->slot[h]) Q->slot[h] = i + 1; /* the first of equal numbers */
  }
}

/* x appended, as the text of a configuration number with the same bits if
 * there is one */
static void add_num_q(line *b, double x, const qtext *Q) {
  if (Q->off) {
    unsigned h = bits_hash(x) & Q->mask;
    for (; Q->slot[h]; h = (h + 1) & Q->mask) {
      int i = Q->slot[h] - 1;
      if (memcmp(&Q->q[i], &x, sizeof x) != 0) continue;
      if (!reserve(b, (size_t)Q->len[i] + 1)) return;
      b->s[b->n++] = ',';
      memcpy(b->s + b->n, b->s + Q->off[i], (size_t)Q->len[i]);
      b->n += (size_t)Q->len[i];
      return;
    }
  }
  add_num(b, x);
}

static void body_vals(line *b, const lv_model *m, const double *q, const qtext *Q) {
  int n = lv_mbs_model_elements(m);
  for (int id = 1; id < n; id++) {
    int rigid = 0;
    double x[3], R[9];
    if (!lv_mbs_model_has_columns(m, id) || lv_mbs_model_element(m, id, NULL, &rigid) ||
        lv_mbs_model_pose(m, id, q, x, R))
      continue;
    for (int i = 0; i < 3; i++) add_num_q(b, x[i], Q);
    for (int i = 0; rigid && i < 9; i++) add_num_q(b, R[i], Q);
  }
}

/* whether the rows end with poses (a model of the multibody layer with
 * named elements) */
static int has_body_cols(const lv_model *m) {
  int n = lv_mbs_model_elements(m);
  for (int id = 1; id < n; id++)
    if (lv_mbs_model_has_columns(m, id)) return 1;
  return 0;
}

int lv_diag_csv_header(FILE *f, const lv_integrator *it) {
  const lv_model *m = lv_integrator_model(it);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  line b = {0};
  add(&b, "t");
  cols(&b, "q", nq);
  cols(&b, "v", nv);
  if (has_p(it)) cols(&b, "p", nv);
  cols(&b, "lambda", nc);
  if (has_gamma(it)) cols(&b, "gamma", nc);
  add(&b, ",energy");
  cols(&b, "momentum", lv_model_nsym(m));
  add(&b, ",g_norm,gv_norm");
  if (has_p(it)) add(&b, ",gp_norm");
  add(&b, ",newton_iters");
  body_cols(&b, m);
  add(&b, "\n");
  return flush_line(f, &b);
}

static void vals(line *b, const double *x, int n) {
  for (int i = 0; i < n; i++) add_num(b, x[i]);
}

int lv_diag_csv_row(FILE *f, const lv_integrator *it, const lv_diag_point *pt) {
  const lv_model *m = lv_integrator_model(it);
  const lv_state *s = lv_integrator_state(it);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  line b = {0};
  qtext Q = {0};
  int poses = has_body_cols(m);
  add_num(&b, s->t);
  if (poses)
    q_vals(&b, s->q, nq, &Q);
  else
    vals(&b, s->q, nq);
  vals(&b, s->v, nv);
  if (has_p(it)) vals(&b, s->p, nv);
  vals(&b, s->lambda, nc);
  if (has_gamma(it)) vals(&b, s->gamma, nc);
  add_num(&b, pt->energy);
  vals(&b, pt->momentum, lv_model_nsym(m));
  add_num(&b, pt->g_norm);
  add_num(&b, pt->gv_norm);
  if (has_p(it)) add_num(&b, pt->gp_norm);
  add_num(&b, lv_integrator_last_newton(it)->iterations); /* an int: written as one */
  if (poses) {
    body_vals(&b, m, s->q, &Q);
    free(Q.off), free(Q.len), free(Q.slot);
  }
  if (reserve(&b, 1)) b.s[b.n++] = '\n';
  return flush_line(f, &b);
}

int lv_diag_output(const lv_integrator *it, lv_output_event ev, void *ctx) {
  lv_diag_writer *w = ctx;
  if (!it || !w || !w->diag) return LV_EINPUT;
  lv_diag_point pt;
  int every = w->every > 0 ? w->every : 1;
  if (ev == LV_OUTPUT_FINAL) {
    /* With --every N the last accepted state (the end of the run, or the
     * step before a failure) would otherwise be skipped. */
    if (w->csv && w->count > 0 && (w->count - 1) % every != 0) {
      if (lv_diag_eval(w->diag, lv_integrator_state(it), &pt)) return 1;
      if (lv_diag_csv_row(w->csv, it, &pt)) return 1;
    }
    return 0;
  }
  if (ev == LV_OUTPUT_INIT) {
    w->count = 0;
    lv_diag_reset(w->diag);
    if (w->csv && lv_diag_csv_header(w->csv, it)) return 1;
  }
  const lv_diag *lay = NULL;
  const lv_diag_point *known = ev == LV_OUTPUT_STEP ? lv_integrator_step_point(it, &lay) : NULL;
  if (lv_diag_record_known(w->diag, lv_integrator_state(it), lay, known, &pt)) return 1;
  if (w->csv && (w->count % every) == 0) {
    if (lv_diag_csv_row(w->csv, it, &pt)) return 1;
  }
  w->count++;
  return 0;
}
