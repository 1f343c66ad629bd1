/* The time loop: owns the state, the scheme instance and the statistics. */
#include <stdio.h>
#include "lv_internal.h"
#include "integrator/integrator_impl.h"

static void free_options(lv_integrator *it) {
  for (int i = 0; i < it->opts.n; i++) {
    free((char *)it->opts.keys[i]);
    free((char *)it->opts.values[i]);
  }
  free(it->opts.keys);
  free(it->opts.values);
  it->opts.keys = it->opts.values = NULL;
  it->opts.n = 0;
}

static int state_alloc(lv_state *s, int nq, int nv, int nc) {
  s->t = 0.0;
  s->q = lv_calloc((size_t)nq, sizeof(double));
  s->v = lv_calloc((size_t)nv, sizeof(double));
  s->p = lv_calloc((size_t)nv, sizeof(double));
  s->lambda = lv_calloc((size_t)nc, sizeof(double));
  s->gamma = lv_calloc((size_t)nc, sizeof(double));
  return (s->q && s->v && s->p && s->lambda && s->gamma) ? 0 : LV_ENOMEM;
}

static void state_free(lv_state *s) {
  free(s->q);
  free(s->v);
  free(s->p);
  free(s->lambda);
  free(s->gamma);
}

void lv_state_copy(lv_state *dst, const lv_state *src, int nq, int nv, int nc) {
  dst->t = src->t;
  memcpy(dst->q, src->q, (size_t)nq * sizeof(double));
  memcpy(dst->v, src->v, (size_t)nv * sizeof(double));
  memcpy(dst->p, src->p, (size_t)nv * sizeof(double));
  if (nc) {
    memcpy(dst->lambda, src->lambda, (size_t)nc * sizeof(double));
    memcpy(dst->gamma, src->gamma, (size_t)nc * sizeof(double));
  }
}

unsigned lv_scheme_unmet_requirement(const lv_scheme_type *type, const lv_model *model, char *why, size_t n) {
  if (why && n) why[0] = '\0';
  if (!type || !model) return 0;
  unsigned fl = type->flags, unmet = 0;
  if ((fl & LV_SCHEME_CONSTANT_MASS) && !lv_model_mass_constant(model)) {
    unmet = LV_SCHEME_CONSTANT_MASS;
    if (why && n) snprintf(why, n, "it needs a constant mass matrix");
  } else if ((fl & LV_SCHEME_LINEAR_SPACE) && !lv_space_is_linear(lv_model_space(model))) {
    unmet = LV_SCHEME_LINEAR_SPACE;
    if (why && n)
      snprintf(why, n, "it needs a constant mass matrix on a linear space R^n, and this model is on %s",
               lv_space_name(lv_model_space(model)));
  } else if ((fl & LV_SCHEME_UNCONSTRAINED) && lv_model_nc(model) > 0) {
    unmet = LV_SCHEME_UNCONSTRAINED;
    if (why && n) snprintf(why, n, "it runs only models without constraints, and this one has %d", lv_model_nc(model));
  } else if ((fl & LV_SCHEME_CONSERVATIVE) && lv_model_has_force(model)) {
    unmet = LV_SCHEME_CONSERVATIVE;
    if (why && n) snprintf(why, n, "it needs a conservative model (no applied or gyroscopic force)");
  } else if (!(fl & LV_SCHEME_DRIVEN) && lv_model_has_driving(model)) {
    unmet = LV_SCHEME_DRIVEN;
    if (why && n)
      snprintf(why, n, "it supports only scleronomic constraints g(q) = 0, and this model has driving constraints "
               "g(q) = c(t) (use genalpha)");
  }
  return unmet;
}

int lv_integrator_new(lv_integrator **out, const lv_model *model, const char *scheme, double h) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (!model || !scheme) return LV_EINPUT;
  const lv_scheme_type *type = lv_scheme_find(scheme);
  if (!type) return LV_EUNKNOWN;
  return lv_integrator_new_with_type(out, model, type, h);
}

int lv_integrator_new_with_type(lv_integrator **out, const lv_model *model, const lv_scheme_type *type, double h) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (!model || !type || !type->name || !type->create || !type->step) return LV_EINPUT;
  if (!(h > 0.0) || !isfinite(h)) return LV_EINPUT;
  if (lv_model_validate(model)) return LV_EINPUT;
  int nq = lv_model_nq(model), nv = lv_model_nv(model), nc = lv_model_nc(model);
  if (lv_scheme_unmet_requirement(type, model, NULL, 0)) return LV_ENOTIMPL;

  lv_integrator *it = lv_calloc(1, sizeof *it);
  if (!it) return LV_ENOMEM;
  it->model = model;
  it->type = type;
  it->h = h;
  it->linsol_kind = LV_LINSOL_AUTO;
  it->init_mode = LV_INIT_PROJECT;
  it->init_tol = 1e-10;
  it->guard_on = 1;
  it->guard_energy = LV_GUARD_ENERGY_DEFAULT;
  it->guard_constraint = LV_GUARD_CONSTRAINT_DEFAULT;
  lv_newton_options_default(&it->newton);
  if (type->flags & LV_SCHEME_SIMPLIFIED_NEWTON) it->newton.kind = LV_NEWTON_SIMPLIFIED;
  int rc = state_alloc(&it->state, nq, nv, nc);
  if (!rc) rc = state_alloc(&it->backup, nq, nv, nc);
  if (!rc) rc = lv_diag_new_layout(&it->guard_diag, model, (type->flags & LV_SCHEME_HAS_P) != 0);
  if (rc) {
    lv_integrator_free(it);
    return rc;
  }
  *out = it;
  return 0;
}

void lv_integrator_free(lv_integrator *it) {
  if (!it) return;
  if (it->created && it->type->destroy) it->type->destroy(&it->stepper);
  state_free(&it->state);
  state_free(&it->backup);
  lv_diag_free(it->guard_diag);
  free_options(it);
  free(it);
}

int lv_integrator_set_option(lv_integrator *it, const char *key, const char *value) {
  if (!it || !key || !value) return LV_EINPUT;
  if (it->created) return LV_EINPUT; /* options are read when the scheme is created */
  int known = 0;
  for (const lv_param_info *p = it->type->options; p && p->name; p++)
    if (strcmp(p->name, key) == 0) known = 1;
  if (!known) return LV_EUNKNOWN;
  const char **k = realloc(it->opts.keys, (size_t)(it->opts.n + 1) * sizeof *k);
  if (!k) return LV_ENOMEM;
  it->opts.keys = k;
  const char **v = realloc(it->opts.values, (size_t)(it->opts.n + 1) * sizeof *v);
  if (!v) return LV_ENOMEM;
  it->opts.values = v;
  char *kc = malloc(strlen(key) + 1), *vc = malloc(strlen(value) + 1);
  if (!kc || !vc) {
    free(kc);
    free(vc);
    return LV_ENOMEM;
  }
  strcpy(kc, key);
  strcpy(vc, value);
  it->opts.keys[it->opts.n] = kc;
  it->opts.values[it->opts.n] = vc;
  it->opts.n++;
  return 0;
}

int lv_integrator_set_linsol(lv_integrator *it, lv_linsol_kind kind, int threshold) {
  if (!it || kind < LV_LINSOL_AUTO || kind > LV_LINSOL_KLU || threshold < 0 || it->created)
    return LV_EINPUT;
  it->linsol_kind = kind;
  it->linsol_threshold = threshold;
  return 0;
}

int lv_integrator_set_newton(lv_integrator *it, const lv_newton_options *o) {
  if (!it || !o || o->kind < LV_NEWTON_FULL || o->kind > LV_NEWTON_SIMPLIFIED || o->max_iter < 1 || !(o->res_tol == o->res_tol) || !(o->res_rtol == o->res_rtol) || o->atol < 0 || o->rtol < 0 ||
      (o->res_tol <= 0 && o->atol <= 0 && o->rtol <= 0) ||
      (o->stop != LV_NEWTON_STOP_DEFAULT && o->stop != LV_NEWTON_STOP_REDUCTION) || o->max_frozen < 0 ||
      o->max_frozen > 1000000 || (o->stop == LV_NEWTON_STOP_REDUCTION && !(o->rtol > 0)))
    return LV_EINPUT;
  it->newton = *o;
  if (it->created) it->stepper.newton = *o;
  return 0;
}

void lv_integrator_get_newton(const lv_integrator *it, lv_newton_options *o) {
  if (it && o) *o = it->newton;
}

int lv_integrator_set_init_mode(lv_integrator *it, lv_init_mode mode, double tol) {
  if (!it || (mode != LV_INIT_PROJECT && mode != LV_INIT_CHECK) || !(tol > 0) || !isfinite(tol))
    return LV_EINPUT;
  it->init_mode = mode;
  it->init_tol = tol;
  return 0;
}

int lv_integrator_set_halving(lv_integrator *it, int max_halvings) {
  if (!it || max_halvings < 0 || max_halvings > 30) return LV_EINPUT;
  if (max_halvings > 0 && (it->type->flags & LV_SCHEME_MULTISTEP)) return LV_ENOTIMPL;
  it->max_halvings = max_halvings;
  return 0;
}

int lv_integrator_set_divergence_guard(lv_integrator *it, int enabled, double energy_bound,
                                      double constraint_bound) {
  if (!it || energy_bound < 0 || constraint_bound < 0 || energy_bound != energy_bound ||
      constraint_bound != constraint_bound)
    return LV_EINPUT;
  it->guard_on = enabled != 0;
  it->guard_energy = energy_bound > 0 ? energy_bound : LV_GUARD_ENERGY_DEFAULT;
  it->guard_constraint = constraint_bound > 0 ? constraint_bound : LV_GUARD_CONSTRAINT_DEFAULT;
  return 0;
}

int lv_integrator_set_output(lv_integrator *it, lv_output_fn fn, void *ctx) {
  if (!it) return LV_EINPUT;
  it->output = fn;
  it->output_ctx = ctx;
  return 0;
}

int lv_integrator_set_step(lv_integrator *it, double h) {
  if (!it || !(h > 0.0) || !isfinite(h)) return LV_EINPUT;
  it->h = h;
  it->t_base = it->state.t;
  it->n_since_base = 0;
  return 0;
}

static int init_body(lv_integrator *it, double t0, const double *q0, const double *v0);

/* Keep this thread's model failure record with the integrator: another
 * integrator on the same model (or thread) must not overwrite it. */
static void keep_model_error(lv_integrator *it) {
  it->model_err.status =
      lv_model_last_error(it->model, &it->model_err.callback, &it->model_err.row, &it->model_err.col);
}


int lv_integrator_init(lv_integrator *it, double t0, const double *q0, const double *v0) {
  if (!it) return LV_EINPUT;
  lv_model_clear_error(it->model);
  it->stop_requested = 0;
  memset(&it->last, 0, sizeof it->last);
  it->not_ready = 0;
  it->ckpt_detail[0] = '\0';
  int rc = init_body(it, t0, q0, v0);
  keep_model_error(it);
  it->last_status = rc;
  it->fail_in_init = rc != 0;
  /* init_body overwrites the state before it can know whether the new
   * values are acceptable, and may have replaced the scheme instance: a
   * refused init therefore leaves nothing to continue from, and steps are
   * refused until an init succeeds. */
  if (rc) it->initialized = 0;
  return rc;
}

static double vmax_abs(int n, const double *x) {
  double m = 0.0;
  for (int i = 0; i < n; i++)
    if (fabs(x[i]) > m) m = fabs(x[i]);
  return m;
}

/* Reference figures of the divergence guard, from the consistent initial
 * state: the energy scale is |T0| + |V0| (not |E0|, which can be ~0 when
 * kinetic and potential energy cancel), the constraint scales grow with the
 * size of the configuration and velocity so the bounds are unit-free. */
static int guard_start(lv_integrator *it) {
  const lv_model *m = it->model;
  lv_diag_point pt;
  double V;
  LV_CHECK(lv_diag_eval(it->guard_diag, &it->state, &pt));
  LV_CHECK(lv_model_potential(m, it->state.q, &V));
  it->guard_e0 = pt.energy;
  double e_scale = fabs(pt.energy - V) + fabs(V);
  it->guard_escale = e_scale > fabs(pt.energy) ? e_scale : fabs(pt.energy);
  double qs = 1.0 + vmax_abs(lv_model_nq(m), it->state.q), vs = 1.0 + vmax_abs(lv_model_nv(m), it->state.v);
  it->guard_gscale = qs;
  it->guard_gvscale = qs * vs;
  return 0;
}

/* LV_EDIVERGED with the figures for error_detail if the state just accepted
 * is non-finite or its energy or constraint error is beyond the bounds. */
static int guard_check(lv_integrator *it) {
  const lv_model *m = it->model;
  const lv_state *s = &it->state;
  it->div_t = s->t;
  int nv = lv_model_nv(m), nc = lv_model_nc(m);
  if (!lv_all_finite(lv_model_nq(m), s->q) || !lv_all_finite(nv, s->v) || !lv_all_finite(nv, s->p) ||
      !lv_all_finite(nc, s->lambda) || !lv_all_finite(nc, s->gamma)) {
    it->div_what = "non-finite";
    return LV_EDIVERGED;
  }
  lv_diag_point pt;
  /* the momentum maps (and with momenta G M^-1 p) only where an output
   * callback takes this point (lv_integrator_step_point) */
  int rc = lv_diag_eval_known(it->guard_diag, s, &pt, it->output != NULL, it->stepper.cnorm_known, it->stepper.cnorm);
  if (rc) return rc;
  it->guard_pt = pt;
  if (!isfinite(pt.energy) || !isfinite(pt.g_norm) || !isfinite(pt.gv_norm)) {
    it->div_what = "non-finite";
    return LV_EDIVERGED;
  }
  if (it->guard_escale > 0) {
    double de = fabs(pt.energy - it->guard_e0) / it->guard_escale;
    if (de > it->guard_energy && !lv_model_has_driving(m)) { /* prescribed motion does unbounded work */
      it->div_what = "relative energy error";
      it->div_value = de;
      it->div_bound = it->guard_energy;
      return LV_EDIVERGED;
    }
  }
  double rg = pt.g_norm / it->guard_gscale, rgv = pt.gv_norm / it->guard_gvscale;
  if (rg > it->guard_constraint || rgv > it->guard_constraint) {
    it->div_what = rg > it->guard_constraint ? "relative position constraint error max|g|"
                                             : "relative velocity constraint error max|G v|";
    it->div_value = rg > it->guard_constraint ? rg : rgv;
    it->div_bound = it->guard_constraint;
    return LV_EDIVERGED;
  }
  return 0;
}

static int init_body(lv_integrator *it, double t0, const double *q0, const double *v0) {
  if (!isfinite(t0)) return LV_EINPUT;
  const lv_model *m = it->model;
  double start = lv_wall_time();
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  if (!q0) q0 = lv_model_q0(m);
  if (!v0) v0 = lv_model_v0(m);
  if (!lv_all_finite(nq, q0) || !lv_all_finite(nv, v0)) return LV_EINPUT;
  memset(&it->stats, 0, sizeof it->stats);
  lv_state *s = &it->state;
  s->t = t0;
  memcpy(s->q, q0, (size_t)nq * sizeof(double));
  memcpy(s->v, v0, (size_t)nv * sizeof(double));
  memset(s->lambda, 0, (size_t)nc * sizeof(double));
  memset(s->gamma, 0, (size_t)nc * sizeof(double));
  it->t_base = t0;
  it->n_since_base = 0;
  it->h_attempt = 0.0;
  lv_integrator_resolve_linsol(it);

  int rc = lv_integrator_make_consistent(it);
  if (rc) return rc;
  LV_CHECK(lv_model_mass_apply(m, s->q, s->v, s->p));

  LV_CHECK(lv_integrator_create_stepper(it));
  rc = it->type->init ? it->type->init(&it->stepper) : 0;
  if (rc) return rc;
  if (it->guard_on) LV_CHECK(guard_start(it));
  it->initialized = 1;
  it->stats.wall_time += lv_wall_time() - start;
  if (it->output && it->output(it, LV_OUTPUT_INIT, it->output_ctx)) return LV_ESTOPPED;
  return 0;
}

/* One decision per run, on the size of the saddle-point matrix
 * [M G^T; G 0]: the projection, every solver the scheme creates (whatever
 * its own system size) and the reported back-end then agree, and a scheme
 * that creates its Newton solver without a threshold still honours the
 * user's. */
void lv_integrator_resolve_linsol(lv_integrator *it) {
  const lv_model *m = it->model;
  it->resolved_kind = it->linsol_kind;
  if (it->resolved_kind == LV_LINSOL_AUTO) {
    int thr = it->linsol_threshold > 0 ? it->linsol_threshold : LV_LINSOL_AUTO_THRESHOLD;
    it->resolved_kind = lv_model_nv(m) + lv_model_nc(m) < thr ? LV_LINSOL_DENSE : LV_LINSOL_SPARSE;
  }
}

/* A new scheme instance on it->state (the old one destroyed), not yet
 * initialised (init from consistent values, or a checkpoint's history). */
int lv_integrator_create_stepper(lv_integrator *it) {
  const lv_model *m = it->model;
  lv_state *s = &it->state;
  int rc;
  if (it->created && it->type->destroy) it->type->destroy(&it->stepper);
  it->created = 0;
  it->stepper.model = m;
  it->stepper.state = s;
  it->stepper.options = &it->opts;
  it->stepper.linsol_kind = it->resolved_kind;
  it->stepper.linsol_threshold = it->linsol_threshold;
  it->stepper.newton = it->newton;
  it->stepper.priv = NULL;
  it->stepper.linsol = NULL;
  it->stepper.newton_solver = NULL;
  it->stepper.cnorm_known = 0;
  it->stepper.detail[0] = '\0';
  it->stepper.stop = &it->stop_requested;
  rc = it->type->create(&it->stepper);
  if (rc) {
    /* A create that failed half-way (e.g. on a bad option after its
     * allocations) leaves st->priv for destroy to release. */
    if (it->type->destroy) it->type->destroy(&it->stepper);
    it->stepper.priv = NULL;
    return rc;
  }
  it->created = 1;
  return 0;
}

static void account(lv_integrator *it, const lv_newton_stats *ns) {
  it->stats.newton_iterations += ns->iterations;
  it->stats.factorizations += ns->factorizations;
}

/* Advance by h as 2^level sub-steps after failures; on failure the state is
 * restored by the caller. */
static int step_recursive(lv_integrator *it, double h, int level) {
  lv_newton_stats ns;
  memset(&ns, 0, sizeof ns);
  double t_end = it->state.t + h;
  if (h != it->h_attempt) {
    /* The one place a step-size change is handled: a factorisation kept by
     * modified Newton belongs to one step size, then the scheme's own
     * h-dependent data (a multistep history) through its table. */
    if (it->stepper.newton_solver) lv_newton_invalidate(it->stepper.newton_solver);
    if (it->type->new_h) it->type->new_h(&it->stepper, h);
  }
  it->h_attempt = h;
  int rc = it->type->step(&it->stepper, h, &ns);
  account(it, &ns);
  it->last = ns;
  if (rc == 0) {
    it->state.t = t_end;
    return 0;
  }
  it->stats.failed_solves++;
  int recoverable = lv_newton_failed(rc);
  if (!recoverable || level >= it->max_halvings) return rc;
  it->stats.halvings++;
  LV_CHECK(step_recursive(it, h / 2, level + 1));
  return step_recursive(it, h / 2, level + 1);
}

int lv_integrator_request_stop(lv_integrator *it) {
  if (!it) return LV_EINPUT;
  it->stop_requested = 1;
  return 0;
}

int lv_integrator_step(lv_integrator *it) {
  if (!it) return LV_EINPUT;
  if (!it->initialized) {
    memset(&it->model_err, 0, sizeof it->model_err);
    it->last_status = LV_EINPUT;
    it->fail_in_init = 0;
    it->not_ready = 1;
    return LV_EINPUT;
  }
  const lv_model *m = it->model;
  double start = lv_wall_time();
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  lv_state_copy(&it->backup, &it->state, nq, nv, nc);
  lv_model_clear_error(m);
  it->stepper.detail[0] = '\0'; /* a scheme's sentence describes this step only */
  it->ckpt_detail[0] = '\0';
  it->not_ready = 0;
  /* Halved sub-steps that succeeded before the step failed as a whole have
   * moved the scheme's history on: take it back with the state. */
  int saved = it->max_halvings > 0 && it->type->save;
  if (saved) {
    int src = it->type->save(&it->stepper);
    if (src) {
      keep_model_error(it);
      it->last_status = src;
      return src;
    }
  }
  it->stepper.cnorm_known = 0; /* the scheme's step may set it */
  int rc = step_recursive(it, it->h, 0);
  if (rc == 0 && it->guard_on) {
    /* The step's own end time, for the message (state.t is set from the
     * step count below only for accepted steps). */
    rc = guard_check(it);
    /* The scheme's private history has already moved past the rejected
     * state: continuing would mix the two, so a further step needs init. */
    if (rc == LV_EDIVERGED) it->initialized = 0;
  }
  keep_model_error(it);
  it->last_status = rc;
  it->fail_in_init = 0;
  it->saddle_regular = -1;
  if (rc) {
    lv_state_copy(&it->state, &it->backup, nq, nv, nc);
    if (saved && it->type->restore) it->type->restore(&it->stepper);
    /* A singular first step is the model's fault only if the saddle-point
     * matrix is singular where it started: one factorization tells. */
    if (rc == LV_ESINGULAR && it->stats.steps == 0) it->saddle_regular = lv_integrator_saddle_regular(it);
  } else {
    /* Times from the step count, so 10^7 steps do not accumulate round-off. */
    it->n_since_base++;
    it->state.t = it->t_base + (double)it->n_since_base * it->h;
    it->stats.steps++;
  }
  it->stats.wall_time += lv_wall_time() - start;
  if (rc == 0 && it->output) {
    /* the guard evaluated exactly this state (only its time was set since) */
    it->guard_pt_valid = it->guard_on;
    int stop = it->output(it, LV_OUTPUT_STEP, it->output_ctx);
    it->guard_pt_valid = 0;
    if (stop) return LV_ESTOPPED;
  }
  return rc;
}

const lv_diag_point *lv_integrator_step_point(const lv_integrator *it, const lv_diag **layout) {
  if (!it || !it->guard_pt_valid) return NULL;
  if (layout) *layout = it->guard_diag;
  return &it->guard_pt;
}

int lv_integrator_run_until(lv_integrator *it, double t_end) {
  if (!it || !it->initialized || !isfinite(t_end)) return LV_EINPUT;
  int rc = 0;
  while (it->state.t < t_end - 0.5 * it->h) {
    rc = lv_integrator_step(it);
    if (rc) break;
  }
  /* The final event fires on failure too, so a writer can close its file
   * with every accepted step in it. */
  if (it->output && it->output(it, LV_OUTPUT_FINAL, it->output_ctx) && rc == 0) rc = LV_ESTOPPED;
  return rc;
}

const lv_state *lv_integrator_state(const lv_integrator *it) { return it ? &it->state : NULL; }
const lv_model *lv_integrator_model(const lv_integrator *it) { return it ? it->model : NULL; }
const lv_scheme_type *lv_integrator_scheme(const lv_integrator *it) { return it ? it->type : NULL; }
double lv_integrator_step_size(const lv_integrator *it) { return it ? it->h : NAN; }
const lv_newton_stats *lv_integrator_last_newton(const lv_integrator *it) { return it ? &it->last : NULL; }

void lv_integrator_get_stats(const lv_integrator *it, lv_integrator_stats *s) {
  if (!s) return;
  if (!it) { memset(s, 0, sizeof *s); return; }
  *s = it->stats;
  s->linsol = it->resolved_kind;
  s->symbolic = 0;
  s->sparse_flops_per_entry = -1.0;
  if (it->created && it->stepper.linsol) {
    /* LV_LINSOL_SPARSE: what the Newton solver's first factorisation chose */
    lv_linsol_kind k = lv_linsol_kind_of(it->stepper.linsol);
    if (k != LV_LINSOL_SPARSE) s->linsol = k;
    lv_linsol_stats ls;
    lv_linsol_get_stats(it->stepper.linsol, &ls);
    s->symbolic = ls.symbolic;
    s->sparse_flops_per_entry = ls.flops_per_entry;
  }
}

int lv_integrator_error_detail(const lv_integrator *it, char *buf, size_t n) {
  if (!it || !buf || n == 0) return LV_EINPUT;
  int rc = it->last_status;
  const char *cb = NULL;
  int row = -1, col = -1;
  int mrc = it->model_err.status;
  cb = it->model_err.callback;
  row = it->model_err.row;
  col = it->model_err.col;
  const lv_newton_stats *ns = &it->last;
  const char *where = it->fail_in_init ? "initialisation" : "step";
  if (rc == 0) {
    snprintf(buf, n, "no failure");
  } else if ((rc == LV_EINPUT || rc == LV_EIO) && it->ckpt_detail[0]) {
    snprintf(buf, n, "%s", it->ckpt_detail); /* checkpoint read or write (issue 17) */
  } else if (rc == LV_EINPUT && it->not_ready) {
    snprintf(buf, n, "the integrator has no state to step from: the last init failed or a divergence stopped "
             "the run; call lv_integrator_init first");
  } else if ((rc == LV_EINPUT || rc == LV_ENOTIMPL) && it->stepper.detail[0]) {
    snprintf(buf, n, "%s", it->stepper.detail);
  } else if ((rc == LV_ENONFINITE || rc == LV_ECALLBACK || rc == LV_EINPUT) && mrc && cb) {
    if (mrc == LV_ENONFINITE && col >= 0)
      snprintf(buf, n, "the model's %s callback produced NaN or Inf in entry (%d, %d) during the %s at t = %.9g",
               cb, row + 1, col + 1, where, it->state.t);
    else if (mrc == LV_ENONFINITE)
      snprintf(buf, n, "the model's %s callback produced NaN or Inf in component %d during the %s at t = %.9g", cb,
               row + 1, where, it->state.t);
    else if (mrc == LV_EINPUT && row >= 0)
      snprintf(buf, n, "the model's %s callback wrote entry (%d, %d), outside its matrix block, during the %s at t = %.9g",
               cb, row + 1, col + 1, where, it->state.t);
    else if (mrc == LV_EINPUT)
      snprintf(buf, n, "the model's %s callback wrote an entry outside its matrix block during the %s at t = %.9g",
               cb, where, it->state.t);
    else
      snprintf(buf, n, "the model's %s callback returned an error during the %s at t = %.9g", cb, where,
               it->state.t);
  } else if (rc == LV_ENONFINITE) {
    snprintf(buf, n, "the Newton residual became NaN or Inf after %d iterations during the %s at t = %.9g",
             ns->iterations, where, it->state.t);
  } else if (rc == LV_ENEWTON && ns->stalled) {
    /* A flat residual is not what a too-large step looks like: say so
     * rather than suggest a smaller step (four-particle k24 = 1e12 before
     * EM's round-off scale knew the spring term). */
    snprintf(buf, n, "Newton stalled in the step from t = %.9g: the residual max-norm stayed at %.3e (%.3g times "
             "its tolerance) for %d iterations, the mark of a round-off floor (equations whose terms round "
             "beyond the tolerance) or of an inaccurate Newton matrix; a smaller step helps only in the second case",
             it->state.t, ns->residual_norm, ns->residual_ratio, LV_NEWTON_STALL);
  } else if (rc == LV_ENEWTON || rc == LV_EDIVERGE) {
    char hint[96];
    if (it->max_halvings == 0)
      snprintf(hint, sizeof hint, "a smaller step or step halving may help");
    else
      snprintf(hint, sizeof hint, "the step was halved %d times without success; a smaller step may help",
               it->max_halvings);
    snprintf(buf, n, "Newton %s after %d iterations with residual max-norm %.3e (last increment %.3e) in the step "
             "from t = %.9g; %s",
             rc == LV_ENEWTON ? "did not converge" : "diverged", ns->iterations, ns->residual_norm,
             ns->increment_norm, it->state.t, hint);
  } else if (rc == LV_ESTEPMIN && it->stepper.detail[0]) {
    snprintf(buf, n, "%s", it->stepper.detail);
  } else if (rc == LV_ESINGULAR) {
    if (!it->fail_in_init && it->stats.steps == 0 && it->saddle_regular == 1)
      snprintf(buf, n, "the Newton matrix is singular in the first step, from t = %.9g, although [M G^T; G 0] is "
               "regular there (independent constraints, regular mass): the step is probably too large for the "
               "iteration (try a smaller step or step halving)",
               it->state.t);
    else if (it->fail_in_init || it->stats.steps == 0)
      snprintf(buf, n, "the Newton matrix is singular in the %s at t = %.9g: check for redundant constraints "
               "(rank-deficient G) or a zero mass",
               where, it->state.t);
    else
      snprintf(buf, n, "the Newton matrix became singular in the step from t = %.9g after %ld good steps: the "
               "step is probably too large for the iteration (try a smaller step or step halving); if it "
               "persists, check for constraints that become redundant along the motion",
               it->state.t, it->stats.steps);
  } else if (rc == LV_EDIVERGED && it->div_what && strcmp(it->div_what, "non-finite") == 0) {
    snprintf(buf, n, "diverged at t = %.6g: the state became NaN or Inf (the last finite state, at t = %.6g, "
             "is kept)", it->div_t, it->state.t);
  } else if (rc == LV_EDIVERGED) {
    snprintf(buf, n, "diverged at t = %.6g: %s %.2g exceeds the bound %.2g (the last state within it, at "
             "t = %.6g, is kept)", it->div_t, it->div_what, it->div_value, it->div_bound, it->state.t);
  } else if (rc == LV_EINCONSISTENT) {
    snprintf(buf, n, "the initial values violate the constraints: max|g(q0)| = %.3e, max|G(q0) v0| = %.3e "
             "(tolerance %.1e); %s",
             it->stats.init_g_norm, it->stats.init_gv_norm, it->init_tol,
             it->init_mode == LV_INIT_CHECK ? "projection was not allowed (check mode)"
                                            : "projecting them onto the constraints failed");
  } else {
    snprintf(buf, n, "%s during the %s at t = %.9g", lv_strerror(rc), where, it->state.t);
  }
  return rc;
}
