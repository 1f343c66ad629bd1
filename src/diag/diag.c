/* Diagnostics: energy, momentum maps, constraint residuals; a run summary. */
#include <float.h>
#include "lv_internal.h"

struct lv_diag {
  const lv_model *m;
  int has_p;
  int driven; /* driving constraints: the constraint norms subtract c(t), c'(t) */
  lv_linsol *mass;      /* factorised M for M^{-1} p (schemes with momenta), made on first need */
  int mass_factored;
  int mass_tried;       /* the diagonal form below was tried (constant M) */
  int mdiag;            /* M is constant and diagonal with at least LV_LINSOL_AUTO_THRESHOLD rows */
  double *md;           /* a smaller constant diagonal M: its diagonal, captured once (else NULL) */
  double *y, *tmp, *xi, *gbuf, *momentum, *J0;
  int transient; /* y, tmp, xi, gbuf exist only during lv_diag_eval (large systems, see scratch) */
  /* a constant mass matrix's entries in its callback's order, for M v
   * without the callback (mcap_n < 0: not captured, or not capturable) */
  int mcap_n, mcap_cap;
  int *mci, *mcj;
  double *mcv;
  lv_diag_summary sum;
  double E_prev;
  /* online least-squares fit of the relative energy error against t */
  double mean_t, mean_e, c_te, c_tt;
};

/* The evaluation's scratch: y (with momenta: M^-1 p, then the symmetry
 * generators) or tmp and xi (without: M v and the generators), nv each,
 * and gbuf (2 nc, and c(t) or c'(t) of driving constraints).  A small system keeps it for the
 * diagnostics' life; a large one (at least LV_LINSOL_AUTO_THRESHOLD
 * velocities) only during lv_diag_eval, whose cost it does not change
 * measurably there: on the chain it was 88 bytes per particle held for the
 * whole run, twice (the integrator's guard and the program's output each
 * have diagnostics), and a run's peak comes while the Newton matrix is
 * factorised, when no evaluation is running. */
static int scratch(lv_diag *d) {
  size_t nv = (size_t)lv_model_nv(d->m), nc = (size_t)lv_model_nc(d->m);
  if (d->has_p) {
    d->y = lv_calloc(nv, sizeof(double));
  } else {
    d->tmp = lv_calloc(nv, sizeof(double));
    d->xi = lv_calloc(nv, sizeof(double));
  }
  d->gbuf = lv_calloc(2 * nc, sizeof(double));
  return ((d->has_p ? d->y != NULL : d->tmp && d->xi) && d->gbuf) ? 0 : LV_ENOMEM;
}

static void scratch_free(lv_diag *d) {
  free(d->y);
  free(d->tmp);
  free(d->xi);
  free(d->gbuf);
  d->y = d->tmp = d->xi = d->gbuf = NULL;
}

int lv_diag_new_layout(lv_diag **out, const lv_model *m, int has_p) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (!m) return LV_EINPUT;
  lv_diag *d = lv_calloc(1, sizeof *d);
  if (!d) return LV_ENOMEM;
  d->m = m;
  d->has_p = has_p;
  d->driven = lv_model_has_driving(m);
  int ns = lv_model_nsym(m);
  d->transient = lv_model_nv(m) >= LV_LINSOL_AUTO_THRESHOLD;
  d->momentum = lv_calloc((size_t)ns, sizeof(double));
  d->J0 = lv_calloc((size_t)ns, sizeof(double));
  int rc = (d->momentum && d->J0) ? 0 : LV_ENOMEM;
  if (!rc && !d->transient) rc = scratch(d);
  if (rc) {
    lv_diag_free(d);
    return rc;
  }
  d->mcap_n = -1;
  lv_diag_reset(d);
  *out = d;
  return 0;
}

int lv_diag_new_for(lv_diag **out, const lv_integrator *it) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  const lv_scheme_type *type = lv_integrator_scheme(it);
  if (!type) return LV_EINPUT;
  return lv_diag_new_layout(out, lv_integrator_model(it), (type->flags & LV_SCHEME_HAS_P) != 0);
}

int lv_diag_new(lv_diag **out, const lv_model *m, int has_p) { return lv_diag_new_layout(out, m, has_p); }

void lv_diag_writer_init(lv_diag_writer *w, lv_diag *d, FILE *csv) {
  if (w) *w = (lv_diag_writer)LV_DIAG_WRITER_INIT(d, csv);
}

void lv_diag_free(lv_diag *d) {
  if (!d) return;
  lv_linsol_free(d->mass);
  free(d->md);
  scratch_free(d);
  free(d->momentum);
  free(d->J0);
  free(d->mci);
  free(d->mcj);
  free(d->mcv);
  free(d);
}

void lv_diag_reset(lv_diag *d) {
  if (!d) return;
  memset(&d->sum, 0, sizeof d->sum);
  d->mean_t = d->mean_e = d->c_te = d->c_tt = 0.0;
}

/* Capture of a mass matrix that is diagonal: the entries summed per row in
 * add order (as the solver's assembly sums them); any entry off the
 * diagonal, or not finite, disqualifies it. */
typedef struct {
  lv_sink sink; /* first member: the add callback casts back */
  double *md;
  int n, off;
} diag_capture;

static int diag_capture_add(lv_sink *s, int i, int j, double v) {
  diag_capture *c = (diag_capture *)s;
  if (i < 0 || j < 0 || i >= c->n || j >= c->n) return LV_EINPUT;
  if (i != j || !isfinite(v))
    c->off = 1;
  else
    c->md[i] += v;
  return 0;
}

/* diag(M) into md (nv entries) if M is diagonal: the entries summed per
 * row in add order into zeros; status 1, else 0 (an entry off the
 * diagonal, a zero or non-finite diagonal, a failed callback). */
static int capture_diagonal(const lv_diag *d, const double *q, double *md) {
  const lv_model *m = d->m;
  int nv = lv_model_nv(m);
  diag_capture c;
  memset(&c, 0, sizeof c);
  c.sink.add = diag_capture_add;
  c.sink.target = &c;
  c.sink.nrows = c.sink.ncols = nv;
  c.sink.scale = 1.0;
  c.n = nv;
  c.md = md;
  memset(md, 0, (size_t)nv * sizeof(double));
  int ok = lv_model_mass(m, q, &c.sink) == 0 && !c.off;
  for (int i = 0; i < nv && ok; i++) ok = md[i] != 0.0 && isfinite(md[i]);
  return ok;
}

/* d->y = M(q)^{-1} p; a constant mass matrix is factorised once.
 *
 * A constant diagonal M with at least LV_LINSOL_AUTO_THRESHOLD rows: the
 * automatic solver would take the sparse path, and KLU would scale each
 * row by its |m_ii| (one singleton block per row, pivot 1) and return
 * (p_i / |m_ii|) / sign(m_ii) = p_i / m_ii: the same bits as the division
 * here, without the solver's pattern, factors and assembly (about 1 kB per
 * particle of a chain, twice: the integrator's and the program's
 * diagnostics).  diag(M) is captured into y at each evaluation rather
 * than kept (24 bytes per particle, twice, for one callback per
 * evaluation).  Smaller or other mass matrices go to the solver. */
static int solve_mass(lv_diag *d, const double *q, const double *p) {
  const lv_model *m = d->m;
  int nv = lv_model_nv(m);
  if (!d->mass_tried) {
    d->mass_tried = 1;
    d->mdiag = nv >= LV_LINSOL_AUTO_THRESHOLD && lv_model_mass_constant(m);
    /* A constant diagonal M of at most 32 rows whose entries are within
     * 1/sqrt(eps) of each other: its diagonal kept.  The dense back-end's
     * small LU (linsol/dense.c: n <= 32, pivots passing that ratio screen)
     * of a diagonal matrix divides by it, p_i / m_ii, the values computed
     * here without a solve and its checks per evaluation (a sixth of the
     * diagnostics of four particles). */
    if (!d->mdiag && nv <= 32 && lv_model_mass_constant(m) &&
        (d->md = lv_calloc((size_t)nv, sizeof(double))) != NULL) {
      int ok = capture_diagonal(d, q, d->md);
      double lo = HUGE_VAL, hi = 0.0;
      for (int i = 0; i < nv && ok; i++) {
        lo = fmin(lo, fabs(d->md[i]));
        hi = fmax(hi, fabs(d->md[i]));
      }
      if (!ok || !(lo / hi > sqrt(DBL_EPSILON))) {
        free(d->md);
        d->md = NULL;
      }
    }
  }
  if (d->md) {
    if (!lv_all_finite(nv, p)) return LV_ENONFINITE;
    for (int i = 0; i < nv; i++) d->y[i] = p[i] / d->md[i];
    return lv_all_finite(nv, d->y) ? 0 : LV_ESINGULAR;
  }
  if (d->mdiag) {
    if (capture_diagonal(d, q, d->y)) {
      /* the solver's statuses: a non-finite right-hand side, a non-finite solution */
      if (!lv_all_finite(nv, p)) return LV_ENONFINITE;
      for (int i = 0; i < nv; i++) d->y[i] = p[i] / d->y[i];
      return lv_all_finite(nv, d->y) ? 0 : LV_ESINGULAR;
    }
    d->mdiag = 0; /* not diagonal: the solver from now on */
  }
  if (!d->mass) LV_CHECK(lv_linsol_new(&d->mass, LV_LINSOL_AUTO, nv, 0));
  if (!d->mass_factored || !lv_model_mass_constant(m)) {
    LV_CHECK(lv_linsol_begin(d->mass));
    lv_sink s = lv_linsol_sink(d->mass);
    LV_CHECK(lv_model_mass(m, q, &s));
    LV_CHECK(lv_linsol_factor(d->mass));
    d->mass_factored = 1;
  }
  memcpy(d->y, p, (size_t)nv * sizeof(double));
  return lv_linsol_solve(d->mass, d->y);
}

/* Capture of a constant mass matrix: the callback's entries as it writes
 * them (the bounds those of lv_model_mass_apply's product sink). */
typedef struct {
  lv_sink sink;
  lv_diag *d;
  int nv, bad;
} mcap_sink;

static int mcap_add(lv_sink *s, int i, int j, double a) {
  mcap_sink *c = (mcap_sink *)s;
  lv_diag *d = c->d;
  if (i < 0 || j < 0 || i >= c->nv || j >= c->nv) {
    c->bad = 1;
    return LV_EINPUT;
  }
  if (d->mcap_n == d->mcap_cap) {
    int cap = d->mcap_cap ? 2 * d->mcap_cap : 16;
    int *ci = realloc(d->mci, (size_t)cap * sizeof(int));
    if (ci) d->mci = ci;
    int *cj = realloc(d->mcj, (size_t)cap * sizeof(int));
    if (cj) d->mcj = cj;
    double *cv = realloc(d->mcv, (size_t)cap * sizeof(double));
    if (cv) d->mcv = cv;
    if (!ci || !cj || !cv) {
      c->bad = 1;
      return LV_ENOMEM;
    }
    d->mcap_cap = cap;
  }
  d->mci[d->mcap_n] = i;
  d->mcj[d->mcap_n] = j;
  d->mcv[d->mcap_n++] = s->scale * a;
  return 0;
}

/* y = M v: for a constant M the captured entries replayed as
 * lv_model_mass_apply sums them (y_i += (1 * a) v_j in the callback's
 * order, so the same bits); otherwise, or if the capture failed, the
 * callback. */
static int mass_apply(lv_diag *d, const double *q, const double *v, double *y) {
  const lv_model *m = d->m;
  int nv = lv_model_nv(m);
  if (d->mcap_n < 0 && lv_model_mass_constant(m)) {
    mcap_sink c;
    memset(&c, 0, sizeof c);
    c.sink.add = mcap_add;
    c.sink.nrows = c.sink.ncols = nv;
    c.sink.scale = 1.0;
    c.d = d;
    c.nv = nv;
    d->mcap_n = 0;
    int rc = lv_model_mass(m, q, &c.sink);
    if (rc || c.bad) d->mcap_n = -2; /* not capturable: always the callback */
  }
  if (d->mcap_n < 0) return lv_model_mass_apply(m, q, v, y);
  memset(y, 0, (size_t)nv * sizeof(double));
  for (int t = 0; t < d->mcap_n; t++) y[d->mci[t]] += d->mcv[t] * v[d->mcj[t]];
  return 0;
}

static int eval(lv_diag *d, const lv_state *s, lv_diag_point *pt, int full, unsigned known, const double *cnorm);

static int eval_with_scratch(lv_diag *d, const lv_state *s, lv_diag_point *pt, int full, unsigned known,
                             const double *cnorm) {
  if (!d || !s || !pt) return LV_EINPUT;
  if (!d->transient) return eval(d, s, pt, full, known, cnorm);
  int rc = scratch(d);
  if (!rc) rc = eval(d, s, pt, full, known, cnorm);
  scratch_free(d);
  return rc;
}

int lv_diag_eval(lv_diag *d, const lv_state *s, lv_diag_point *pt) { return eval_with_scratch(d, s, pt, 1, 0, NULL); }

int lv_diag_eval_guard(lv_diag *d, const lv_state *s, lv_diag_point *pt) {
  return eval_with_scratch(d, s, pt, 0, 0, NULL);
}

int lv_diag_eval_known(lv_diag *d, const lv_state *s, lv_diag_point *pt, int full, unsigned known,
                       const double cnorm[2]) {
  return eval_with_scratch(d, s, pt, full, cnorm ? known : 0, cnorm);
}

/* full = 0: energy, max|g| and max|G v| only (lv_diag_eval_guard).  known:
 * bit 0 cnorm[0] is max|g|, bit 1 cnorm[1] is max|G v| (lv_stepper's
 * cnorm_known; not for driving constraints, whose norms subtract c(t)). */
static int eval(lv_diag *d, const lv_state *s, lv_diag_point *pt, int full, unsigned known, const double *cnorm) {
  const lv_model *m = d->m;
  int nv = lv_model_nv(m), nc = lv_model_nc(m), ns = lv_model_nsym(m);
  double V;
  LV_CHECK(lv_model_potential(m, s->q, &V));
  const double *mom; /* the momentum used for energy and momentum maps */
  if (d->has_p) {
    LV_CHECK(solve_mass(d, s->q, s->p)); /* y = M^{-1} p */
    pt->energy = 0.5 * lv_vdot(nv, s->p, d->y) + V;
    mom = s->p;
  } else {
    LV_CHECK(mass_apply(d, s->q, s->v, d->tmp)); /* tmp = M v */
    pt->energy = 0.5 * lv_vdot(nv, s->v, d->tmp) + V;
    mom = d->tmp;
  }
  pt->t = s->t;
  pt->g_norm = pt->gv_norm = pt->gp_norm = 0.0;
  if (d->driven) known = 0;
  /* G v before g when both are evaluated: a model that keeps g and G of its
   * last configuration (the multibody layer's cache) then computes them in
   * one pass, where g first would fill g only and G v evaluate it again
   * (a BLieDF step ends on an update: both are new).  The same values. */
  int gv_first = nc > 0 && !d->driven && !known;
  if (gv_first) LV_CHECK(lv_model_G_apply(m, s->q, s->v, d->gbuf + nc));
  if (nc > 0) {
    if (known & 1) {
      pt->g_norm = cnorm[0];
    } else {
      if (d->driven) { /* g(q) - c(t), G v - c'(t) */
        LV_CHECK(lv_model_constraints_at(m, s->t, s->q, d->gbuf, d->gbuf + nc));
      } else {
        LV_CHECK(lv_model_constraints(m, s->q, d->gbuf));
      }
      pt->g_norm = lv_vnorm_inf(nc, d->gbuf);
    }
    if (known & 2) {
      pt->gv_norm = cnorm[1];
    } else if (gv_first) {
      pt->gv_norm = lv_vnorm_inf(nc, d->gbuf + nc);
    } else {
      if (d->driven) {
        LV_CHECK(lv_model_velocity_constraints_at(m, s->t, s->q, s->v, d->gbuf, d->gbuf + nc));
      } else {
        LV_CHECK(lv_model_G_apply(m, s->q, s->v, d->gbuf));
      }
      pt->gv_norm = lv_vnorm_inf(nc, d->gbuf);
    }
    if (!full) {
      pt->gp_norm = 0.0;
    } else if (d->has_p) {
      LV_CHECK(lv_model_velocity_constraints_at(m, s->t, s->q, d->y, d->gbuf, d->gbuf + nc));
      pt->gp_norm = lv_vnorm_inf(nc, d->gbuf);
    } else {
      pt->gp_norm = pt->gv_norm;
    }
  }
  if (!full) {
    pt->momentum = NULL;
    return 0;
  }
  /* the momentum maps last: with momenta the generators take y's place */
  double *xi = d->has_p ? d->y : d->xi;
  for (int k = 0; k < ns; k++) {
    LV_CHECK(lv_model_symmetry(m, k, s->q, xi));
    d->momentum[k] = lv_vdot(nv, mom, xi);
  }
  pt->momentum = d->momentum;
  return 0;
}

static void summary_add(lv_diag *d, const lv_diag_point *pt);

int lv_diag_record(lv_diag *d, const lv_state *s, lv_diag_point *pt) {
  LV_CHECK(lv_diag_eval(d, s, pt));
  summary_add(d, pt);
  return 0;
}

int lv_diag_record_known(lv_diag *d, const lv_state *s, const lv_diag *layout, const lv_diag_point *src,
                         lv_diag_point *pt) {
  if (!d || !s || !pt) return LV_EINPUT;
  if (!src || !layout || layout->m != d->m || layout->has_p != d->has_p) return lv_diag_record(d, s, pt);
  *pt = *src;
  pt->t = s->t;
  int ns = lv_model_nsym(d->m);
  if (ns > 0) memcpy(d->momentum, src->momentum, (size_t)ns * sizeof(double));
  pt->momentum = d->momentum;
  summary_add(d, pt);
  return 0;
}

static void summary_add(lv_diag *d, const lv_diag_point *pt) {
  lv_diag_summary *u = &d->sum;
  int ns = lv_model_nsym(d->m);
  if (u->samples == 0) {
    u->energy0 = pt->energy;
    memcpy(d->J0, pt->momentum, (size_t)ns * sizeof(double));
  } else {
    double inc = fabs(pt->energy - d->E_prev);
    if (inc > u->max_energy_increment) u->max_energy_increment = inc;
  }
  d->E_prev = pt->energy;
  /* Relative to E0 only where E0 is not zero: with E0 = 0 (a system at rest
   * on its potential's zero level) any round-off would read as an enormous
   * relative error, so the relative figures are NaN (undefined) and
   * max_abs_energy_error is the one to read. */
  double scale = fabs(u->energy0) >= DBL_MIN ? fabs(u->energy0) : NAN;
  double ea = fabs(pt->energy - u->energy0), er = ea / scale;
  if (ea > u->max_abs_energy_error) u->max_abs_energy_error = ea;
  if (er > u->max_rel_energy_error || isnan(er)) u->max_rel_energy_error = er;
  for (int k = 0; k < ns; k++) {
    double e = fabs(pt->momentum[k] - d->J0[k]);
    if (e > u->max_momentum_error) u->max_momentum_error = e;
  }
  if (pt->g_norm > u->max_g) u->max_g = pt->g_norm;
  if (pt->gv_norm > u->max_gv) u->max_gv = pt->gv_norm;
  if (pt->gp_norm > u->max_gp) u->max_gp = pt->gp_norm;
  /* Welford-style update of the covariance of (t, e): numerically stable
   * over 10^7 samples, unlike the textbook sums. */
  u->samples++;
  double n = (double)u->samples;
  double e = (pt->energy - u->energy0) / scale;
  double dt = pt->t - d->mean_t;
  d->mean_t += dt / n;
  d->mean_e += (e - d->mean_e) / n;
  d->c_tt += dt * (pt->t - d->mean_t);
  d->c_te += dt * (e - d->mean_e);
  u->energy_drift_rate = isnan(scale) ? NAN : d->c_tt > 0 ? d->c_te / d->c_tt : 0.0;
}

void lv_diag_get_summary(const lv_diag *d, lv_diag_summary *sum) {
  if (!sum) return;
  if (d) *sum = d->sum;
  else memset(sum, 0, sizeof *sum);
}
