/* CSV output: a header line, one row per output step. */
#include "lv_internal.h"

static int has_p(const lv_integrator *it) { return (lv_integrator_scheme(it)->flags & LV_SCHEME_HAS_P) != 0; }
static int has_gamma(const lv_integrator *it) {
  return (lv_integrator_scheme(it)->flags & LV_SCHEME_HAS_GAMMA) != 0;
}

static void cols(FILE *f, const char *name, int n) {
  for (int i = 1; i <= n; i++) fprintf(f, ",%s%d", name, i);
}

int lv_diag_csv_header(FILE *f, const lv_integrator *it) {
  const lv_model *m = lv_integrator_model(it);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  fputs("t", f);
  cols(f, "q", nq);
  cols(f, "v", nv);
  if (has_p(it)) cols(f, "p", nv);
  cols(f, "lambda", nc);
  if (has_gamma(it)) cols(f, "gamma", nc);
  fputs(",energy", f);
  cols(f, "momentum", lv_model_nsym(m));
  fputs(",g_norm,gv_norm", f);
  if (has_p(it)) fputs(",gp_norm", f);
  fputs(",newton_iters\n", f);
  return ferror(f) ? LV_EIO : 0;
}

static void vals(FILE *f, const double *x, int n) {
  for (int i = 0; i < n; i++) fprintf(f, ",%.17g", x[i]);
}

int lv_diag_csv_row(FILE *f, const lv_integrator *it, const lv_diag_point *pt) {
  const lv_model *m = lv_integrator_model(it);
  const lv_state *s = lv_integrator_state(it);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  fprintf(f, "%.17g", s->t);
  vals(f, s->q, nq);
  vals(f, s->v, nv);
  if (has_p(it)) vals(f, s->p, nv);
  vals(f, s->lambda, nc);
  if (has_gamma(it)) vals(f, s->gamma, nc);
  fprintf(f, ",%.17g", pt->energy);
  vals(f, pt->momentum, lv_model_nsym(m));
  fprintf(f, ",%.17g,%.17g", pt->g_norm, pt->gv_norm);
  if (has_p(it)) fprintf(f, ",%.17g", pt->gp_norm);
  fprintf(f, ",%d\n", lv_integrator_last_newton(it)->iterations);
  return ferror(f) ? LV_EIO : 0;
}

int lv_diag_output(const lv_integrator *it, lv_output_event ev, void *ctx) {
  lv_diag_writer *w = ctx;
  if (!it || !w || !w->diag) return LV_EINPUT;
  lv_diag_point pt;
  if (ev == LV_OUTPUT_FINAL) {
    if (w->csv) fflush(w->csv);
    return 0;
  }
  if (ev == LV_OUTPUT_INIT) {
    w->count = 0;
    lv_diag_reset(w->diag);
    if (w->csv && lv_diag_csv_header(w->csv, it)) return 1;
  }
  if (lv_diag_record(w->diag, lv_integrator_state(it), &pt)) return 1;
  int every = w->every > 0 ? w->every : 1;
  if (w->csv && (w->count % every) == 0) {
    if (lv_diag_csv_row(w->csv, it, &pt)) return 1;
    fflush(w->csv); /* an interrupted run keeps every written step */
  }
  w->count++;
  return 0;
}
