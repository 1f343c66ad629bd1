/* The model object: storage of callbacks, and evaluation with
 * non-finite-value checks and finite-difference fallbacks. */
#include "model/model_impl.h"

int lv_model_new(lv_model **out, const char *name, lv_space *space, int nconstr) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (!space || nconstr < 0 || lv_space_nv(space) < 1) return LV_EINPUT;
  lv_model *m = lv_calloc(1, sizeof *m);
  if (!m) return LV_ENOMEM;
  const char *nm = name ? name : "model";
  m->name = malloc(strlen(nm) + 1);
  if (m->name) strcpy(m->name, nm);
  m->space = space;
  m->nq = lv_space_nq(space);
  m->nv = lv_space_nv(space);
  m->nc = nconstr;
  m->q0 = lv_calloc((size_t)m->nq, sizeof(double));
  m->v0 = lv_calloc((size_t)m->nv, sizeof(double));
  if (!m->name || !m->q0 || !m->v0) {
    m->space = NULL; /* ownership passes only on success */
    lv_model_free(m);
    return LV_ENOMEM;
  }
  lv_space_identity(space, m->q0);
  *out = m;
  return 0;
}

void lv_model_free(lv_model *m) {
  if (!m) return;
  if (m->free_user) m->free_user(m->user);
  lv_space_free(m->space);
  free(m->name);
  free(m->q0);
  free(m->v0);
  free(m);
}

int lv_model_set_user(lv_model *m, void *user, void (*free_user)(void *)) {
  if (!m) return LV_EINPUT;
  m->user = user;
  m->free_user = free_user;
  return 0;
}

int lv_model_set_mass(lv_model *m, lv_matrix_fn mass, int constant) {
  if (!m || !mass) return LV_EINPUT;
  m->mass = mass;
  m->mass_constant = constant != 0;
  return 0;
}

int lv_model_set_potential(lv_model *m, lv_scalar_fn V, lv_vector_fn dV, lv_matrix_fn d2V) {
  /* dV without V would be a force the energy-conserving schemes never see
   * (they use V differences), so a pendulum silently lost its gravity. */
  if (!m || (V && !dV) || (d2V && !dV) || (dV && !V)) return LV_EINPUT;
  m->V = V;
  m->dV = dV;
  m->d2V = d2V;
  return 0;
}

int lv_model_set_force(lv_model *m, lv_force_fn f, lv_force_jac_fn df_dq, lv_force_jac_fn df_dv) {
  if (!m || (!f && (df_dq || df_dv))) return LV_EINPUT;
  m->force = f;
  m->force_dq = df_dq;
  m->force_dv = df_dv;
  return 0;
}

int lv_model_set_constraints(lv_model *m, lv_vector_fn g, lv_matrix_fn G, lv_matrix_w_fn hessian,
                             lv_matrix_w_fn curvature) {
  if (!m || (m->nc > 0 && !g)) return LV_EINPUT;
  m->g = g;
  m->G = G;
  m->g_hessian = hessian;
  m->g_curvature = curvature;
  m->Gprod = NULL; /* a product of the previous G */
  m->Hprod = NULL; /* ... and H */
  m->Gvals = NULL; /* ... and G's values */
  m->Hvals = NULL; /* ... and H's */
  m->Zvals = NULL; /* ... and Z's */
  return 0;
}

int lv_model_set_H_product(lv_model *m, lv_hprod_fn f) {
  if (!m || (f && !m->g_hessian)) return LV_EINPUT;
  m->Hprod = f;
  return 0;
}

int lv_model_set_G_product(lv_model *m, lv_gprod_fn f) {
  if (!m || (f && !m->G)) return LV_EINPUT;
  m->Gprod = f;
  return 0;
}

int lv_model_set_G_values(lv_model *m, lv_gvals_fn f) {
  if (!m || (f && !m->G)) return LV_EINPUT;
  m->Gvals = f;
  return 0;
}

size_t lv_model_G_values(const lv_model *m, const double *q, double *v, size_t cap) {
  if (!m->Gvals || m->nc == 0) return 0;
  return m->Gvals(q, v, cap, m->user);
}

int lv_model_set_H_values(lv_model *m, lv_hvals_fn f) {
  if (!m || (f && !m->g_hessian)) return LV_EINPUT;
  m->Hvals = f;
  return 0;
}

size_t lv_model_H_values(const lv_model *m, const double *q, const double *gam, double *v, size_t cap) {
  if (!m->Hvals || m->nc == 0) return 0;
  return m->Hvals(q, gam, v, cap, m->user);
}

int lv_model_set_Z_values(lv_model *m, lv_hvals_fn f) {
  if (!m || (f && !m->g_curvature)) return LV_EINPUT;
  m->Zvals = f;
  return 0;
}

size_t lv_model_Z_values(const lv_model *m, const double *q, const double *w, double *v, size_t cap) {
  if (!m->Zvals || m->nc == 0) return 0;
  return m->Zvals(q, w, v, cap, m->user);
}

int lv_model_set_driving(lv_model *m, lv_drive_fn c) {
  if (!m || (c && m->nc == 0)) return LV_EINPUT;
  m->drive = c;
  return 0;
}

int lv_model_set_symmetries(lv_model *m, int n, lv_symmetry_fn xi) {
  if (!m || n < 0 || (n > 0 && !xi)) return LV_EINPUT;
  m->nsym = n;
  m->sym = xi;
  return 0;
}

int lv_model_set_initial(lv_model *m, const double *q0, const double *v0) {
  if (!m || !q0 || !v0) return LV_EINPUT;
  if (!lv_all_finite(m->nq, q0) || !lv_all_finite(m->nv, v0)) return LV_EINPUT;
  memcpy(m->q0, q0, (size_t)m->nq * sizeof(double));
  memcpy(m->v0, v0, (size_t)m->nv * sizeof(double));
  return 0;
}

int lv_model_set_invariants(lv_model *m, int n, lv_invariant_fn pi, lv_matrix_fn dpi,
                            lv_invariant_pot_fn vt) {
  if (!m || n < 0 || (n > 0 && (!pi || !dpi || !vt))) return LV_EINPUT;
  m->ninv = n;
  m->inv = pi;
  m->dinv = dpi;
  m->inv_pot = vt;
  return 0;
}

const char *lv_model_name(const lv_model *m) { return m ? m->name : NULL; }
const lv_space *lv_model_space(const lv_model *m) { return m ? m->space : NULL; }
int lv_model_nq(const lv_model *m) { return m ? m->nq : LV_EINPUT; }
int lv_model_nv(const lv_model *m) { return m ? m->nv : LV_EINPUT; }
int lv_model_nc(const lv_model *m) { return m ? m->nc : LV_EINPUT; }
int lv_model_nsym(const lv_model *m) { return m ? m->nsym : LV_EINPUT; }
int lv_model_mass_constant(const lv_model *m) { return m ? m->mass_constant : LV_EINPUT; }
const double *lv_model_q0(const lv_model *m) { return m ? m->q0 : NULL; }
const double *lv_model_v0(const lv_model *m) { return m ? m->v0 : NULL; }
void *lv_model_user(const lv_model *m) { return m ? m->user : NULL; }
int lv_model_has_force(const lv_model *m) { return m && m->force != NULL; }
int lv_model_has_driving(const lv_model *m) { return m && m->drive != NULL; }
int lv_model_validate(const lv_model *m) {
  if (!m || !m->mass) return LV_EINPUT;
  if (m->nc > 0 && !m->g) return LV_EINPUT;
  return 0;
}
int lv_model_has_potential(const lv_model *m) { return m && m->V != NULL; }
void (*lv_model_user_destructor(const lv_model *m))(void *) { return m ? m->free_user : NULL; }
int lv_model_ninv(const lv_model *m) { return m ? m->ninv : LV_EINPUT; }

/* A sink wrapper that rejects non-finite entries before they reach a
 * factorisation, so a NaN from a model becomes LV_ENONFINITE at its source. */
typedef struct {
  lv_sink sink;
  lv_sink *inner;
  int nonfinite;
  int row, col; /* first non-finite entry */
  int outside;  /* an entry outside the block: remembered even when the callback ignores the status */
  int orow, ocol;
} finite_sink;

static int finite_add(lv_sink *s, int i, int j, double v) {
  finite_sink *f = (finite_sink *)s;
  if (!isfinite(v)) {
    if (!f->nonfinite) f->row = i, f->col = j;
    f->nonfinite = 1;
    return LV_ENONFINITE;
  }
  int rc = f->inner->add(f->inner, i, j, v);
  if (rc == LV_EINPUT && !f->outside) f->outside = 1, f->orow = i, f->ocol = j;
  return rc;
}

/* A block with finite_add's checks: when every entry is finite and the
 * block lies inside the inner sink's bounds (untransposed, where every
 * sink's bounds are 0 <= i < nrows, 0 <= j < ncols), the inner sink's own
 * block add; otherwise entry by entry, which stops at and names the first
 * bad entry as before. */
static int finite_add_block(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda) {
  finite_sink *f = (finite_sink *)s;
  lv_sink *in = f->inner;
  if (s->add != finite_add || !in->add_block || in->transpose || i0 < 0 || j0 < 0 || nrows > in->nrows - i0 ||
      ncols > in->ncols - j0)
    return lv_sink_add_block_each(s, i0, j0, nrows, ncols, a, lda);
  double chk = 0.0;
  for (int r = 0; r < nrows; r++)
    for (int c = 0; c < ncols; c++) {
      double x = a[(size_t)r * (size_t)lda + (size_t)c];
      chk += x - x;
    }
  if (chk != 0.0) return lv_sink_add_block_each(s, i0, j0, nrows, ncols, a, lda);
  int rc = in->add_block(in, i0, j0, nrows, ncols, a, lda);
  /* refused inside its bounds: the entry is not known (the sentence says so) */
  if (rc == LV_EINPUT && !f->outside) f->outside = 1, f->orow = f->ocol = -1;
  return rc;
}

static lv_sink *finite_wrap(finite_sink *f, lv_sink *inner) {
  f->sink = *inner;
  f->sink.add = finite_add;
  f->sink.add_block = finite_add_block;
  f->inner = inner;
  f->nonfinite = 0;
  f->outside = 0;
  return &f->sink;
}

/* Which callback failed and where, so the integrator and the program can
 * say more than "NaN somewhere".  Evaluation never writes the model: the
 * record is per thread (two integrators on one model in two threads each
 * see their own failure; issue 14), and the integrator copies it into its
 * own struct when a step or init ends, so integrators interleaved on one
 * thread keep theirs too. */
static _Thread_local struct {
  const lv_model *model; /* whose callback failed (the record is for it only) */
  const char *callback;  /* the callback's name */
  int status, row, col;  /* its status and the first bad component */
} last_err = {NULL, NULL, 0, -1, -1};

static int record(const lv_model *m, const char *cb, int status, int row, int col) {
  last_err.model = m;
  last_err.callback = cb;
  last_err.status = status;
  last_err.row = row;
  last_err.col = col;
  return status;
}

void lv_model_clear_error(const lv_model *m) {
  (void)m;
  last_err.model = NULL;
  last_err.callback = NULL;
  last_err.status = 0;
  last_err.row = last_err.col = -1;
}

static int finish_matrix(const lv_model *m, const char *cb, int rc, const finite_sink *f) {
  if (f->nonfinite) return record(m, cb, LV_ENONFINITE, f->row, f->col);
  /* An entry outside the block is an error even if the callback ignored
   * lv_sink_add's status and returned 0: dropping it silently gave a wrong
   * matrix and a run that said "ok". */
  if (f->outside) return record(m, cb, LV_EINPUT, f->orow, f->ocol);
  if (rc == LV_EINPUT) return record(m, cb, LV_EINPUT, -1, -1);
  return rc ? record(m, cb, LV_ECALLBACK, -1, -1) : 0;
}

static int finish_vector(const lv_model *m, const char *cb, int rc, int n, const double *x) {
  if (rc) return record(m, cb, LV_ECALLBACK, -1, -1);
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return record(m, cb, LV_ENONFINITE, i, -1);
  return 0;
}

int lv_model_last_error(const lv_model *m, const char **callback, int *row, int *col) {
  int mine = m && last_err.model == m;
  if (callback) *callback = mine ? last_err.callback : NULL;
  if (row) *row = mine ? last_err.row : -1;
  if (col) *col = mine ? last_err.col : -1;
  return mine ? last_err.status : 0;
}

int lv_model_mass(const lv_model *m, const double *q, lv_sink *M) {
  if (!m->mass) return LV_EINPUT;
  finite_sink f;
  int rc = m->mass(q, finite_wrap(&f, M), m->user);
  return finish_matrix(m, "mass", rc, &f);
}

int lv_model_potential(const lv_model *m, const double *q, double *V) {
  *V = 0.0;
  if (!m->V) return 0;
  return finish_vector(m, "V", m->V(q, V, m->user), 1, V);
}

int lv_model_grad_potential(const lv_model *m, const double *q, double *dV) {
  if (!m->dV) {
    memset(dV, 0, (size_t)m->nv * sizeof(double));
    return 0;
  }
  return finish_vector(m, "dV", m->dV(q, dV, m->user), m->nv, dV);
}

int lv_model_hess_potential(const lv_model *m, const double *q, lv_sink *H) {
  if (!m->dV) return 0;
  if (!m->d2V) return lv_fd_hess_potential(m, q, H, 1.0);
  finite_sink f;
  int rc = m->d2V(q, finite_wrap(&f, H), m->user);
  return finish_matrix(m, "d2V", rc, &f);
}

int lv_model_force(const lv_model *m, double t, const double *q, const double *v, double *out) {
  if (!m->force) {
    memset(out, 0, (size_t)m->nv * sizeof(double));
    return 0;
  }
  return finish_vector(m, "force", m->force(t, q, v, out, m->user), m->nv, out);
}

int lv_model_force_dq(const lv_model *m, double t, const double *q, const double *v, lv_sink *K) {
  if (!m->force) return 0;
  if (!m->force_dq) return lv_fd_force_dq(m, t, q, v, K, 1.0);
  finite_sink f;
  int rc = m->force_dq(t, q, v, finite_wrap(&f, K), m->user);
  return finish_matrix(m, "df/dq", rc, &f);
}

int lv_model_force_dv(const lv_model *m, double t, const double *q, const double *v, lv_sink *C) {
  if (!m->force) return 0;
  if (!m->force_dv) return lv_fd_force_dv(m, t, q, v, C, 1.0);
  finite_sink f;
  int rc = m->force_dv(t, q, v, finite_wrap(&f, C), m->user);
  return finish_matrix(m, "df/dv", rc, &f);
}

int lv_model_constraints(const lv_model *m, const double *q, double *g) {
  if (m->nc == 0) return 0;
  return finish_vector(m, "g", m->g(q, g, m->user), m->nc, g);
}

static const char *const drive_names[3] = {"driving c", "driving c'", "driving c''"};

int lv_model_driving(const lv_model *m, double t, int order, double *out) {
  if (order < 0 || order > 2) return LV_EINPUT;
  if (m->nc == 0) return 0;
  if (!m->drive) {
    memset(out, 0, (size_t)m->nc * sizeof(double));
    return 0;
  }
  return finish_vector(m, drive_names[order], m->drive(t, order, out, m->user), m->nc, out);
}

int lv_model_constraints_at(const lv_model *m, double t, const double *q, double *g, double *tmp) {
  LV_CHECK(lv_model_constraints(m, q, g));
  if (!m->drive || m->nc == 0) return 0;
  LV_CHECK(lv_model_driving(m, t, 0, tmp));
  for (int i = 0; i < m->nc; i++) g[i] -= tmp[i];
  return 0;
}

int lv_model_velocity_constraints_at(const lv_model *m, double t, const double *q, const double *v, double *y,
                                     double *tmp) {
  LV_CHECK(lv_model_G_apply(m, q, v, y));
  if (!m->drive || m->nc == 0) return 0;
  LV_CHECK(lv_model_driving(m, t, 1, tmp));
  for (int i = 0; i < m->nc; i++) y[i] -= tmp[i];
  return 0;
}

int lv_model_constraint_jac(const lv_model *m, const double *q, lv_sink *G) {
  if (m->nc == 0) return 0;
  if (!m->G) return lv_fd_constraint_jac(m, q, G, 1.0);
  finite_sink f;
  int rc = m->G(q, finite_wrap(&f, G), m->user);
  return finish_matrix(m, "G", rc, &f);
}

int lv_model_constraint_hessian(const lv_model *m, const double *q, const double *gamma, lv_sink *H) {
  if (m->nc == 0) return 0;
  if (!m->g_hessian) return lv_fd_constraint_hessian(m, q, gamma, H, 1.0);
  finite_sink f;
  int rc = m->g_hessian(q, gamma, finite_wrap(&f, H), m->user);
  return finish_matrix(m, "constraint Hessian", rc, &f);
}

int lv_model_constraint_curvature(const lv_model *m, const double *q, const double *w, lv_sink *Z) {
  if (m->nc == 0) return 0;
  if (!m->g_curvature) return lv_fd_constraint_curvature(m, q, w, Z, 1.0);
  finite_sink f;
  int rc = m->g_curvature(q, w, finite_wrap(&f, Z), m->user);
  return finish_matrix(m, "constraint curvature", rc, &f);
}

/* G and the Newton-matrix blocks' callbacks straight into a sink that flags a
 * non-finite value or an entry outside its block in *bad itself (no
 * finiteness wrapper per entry).  A failed callback or a flagged entry
 * evaluates the matrix again through the checked path into a null sink of
 * the same block, which names the callback and the entry as before; the
 * target then holds a partial matrix, as after a failure on the checked
 * path. */
int lv_model_matrix_flagged(const lv_model *m, int which, double t, const double *q, const double *v,
                            const double *x, lv_sink *S, const int *bad) {
  int rc;
  switch (which) {
  case LV_MX_G:
    if (m->nc == 0) return 0;
    if (!m->G) return lv_model_constraint_jac(m, q, S);
    rc = m->G(q, S, m->user);
    break;
  case LV_MX_D2V:
    if (!m->dV) return 0;
    if (!m->d2V) return lv_model_hess_potential(m, q, S);
    rc = m->d2V(q, S, m->user);
    break;
  case LV_MX_FORCE_DQ:
    if (!m->force) return 0;
    if (!m->force_dq) return lv_model_force_dq(m, t, q, v, S);
    rc = m->force_dq(t, q, v, S, m->user);
    break;
  case LV_MX_FORCE_DV:
    if (!m->force) return 0;
    if (!m->force_dv) return lv_model_force_dv(m, t, q, v, S);
    rc = m->force_dv(t, q, v, S, m->user);
    break;
  case LV_MX_HESSIAN:
    if (m->nc == 0) return 0;
    if (!m->g_hessian) return lv_model_constraint_hessian(m, q, x, S);
    rc = m->g_hessian(q, x, S, m->user);
    break;
  case LV_MX_CURVATURE:
    if (m->nc == 0) return 0;
    if (!m->g_curvature) return lv_model_constraint_curvature(m, q, x, S);
    rc = m->g_curvature(q, x, S, m->user);
    break;
  case LV_MX_DINV:
    if (m->ninv <= 0) return LV_EINPUT;
    rc = m->dinv(q, S, m->user);
    break;
  default:
    return LV_EINPUT;
  }
  if (!rc && !*bad) return 0;
  lv_sink nul = lv_sink_null(S->nrows, S->ncols);
  int rc2;
  const char *cb;
  switch (which) {
  case LV_MX_G: rc2 = lv_model_constraint_jac(m, q, &nul), cb = "G"; break;
  case LV_MX_D2V: rc2 = lv_model_hess_potential(m, q, &nul), cb = "d2V"; break;
  case LV_MX_FORCE_DQ: rc2 = lv_model_force_dq(m, t, q, v, &nul), cb = "df/dq"; break;
  case LV_MX_FORCE_DV: rc2 = lv_model_force_dv(m, t, q, v, &nul), cb = "df/dv"; break;
  case LV_MX_HESSIAN: rc2 = lv_model_constraint_hessian(m, q, x, &nul), cb = "constraint Hessian"; break;
  case LV_MX_DINV: rc2 = lv_model_invariant_jac(m, q, &nul), cb = "invariant gradient"; break;
  default: rc2 = lv_model_constraint_curvature(m, q, x, &nul), cb = "constraint curvature"; break;
  }
  if (rc2) return rc2;
  /* the rerun found nothing (a callback that changed its mind): say so */
  if (rc) return record(m, cb, rc == LV_EINPUT ? LV_EINPUT : LV_ECALLBACK, -1, -1);
  return record(m, cb, LV_ENONFINITE, -1, -1);
}

int lv_model_symmetry(const lv_model *m, int k, const double *q, double *xi) {
  if (k < 0 || k >= m->nsym) return LV_EINPUT;
  return finish_vector(m, "symmetry", m->sym(k, q, xi, m->user), m->nv, xi);
}

int lv_model_invariants(const lv_model *m, const double *q, double *pi) {
  if (m->ninv <= 0) return LV_EINPUT;
  return finish_vector(m, "invariant", m->inv(q, pi, m->user), m->ninv, pi);
}

int lv_model_invariant_jac(const lv_model *m, const double *q, lv_sink *D) {
  if (m->ninv <= 0) return LV_EINPUT;
  finite_sink f;
  int rc = m->dinv(q, finite_wrap(&f, D), m->user);
  return finish_matrix(m, "invariant gradient", rc, &f);
}

int lv_model_invariant_potential(const lv_model *m, const double *pi, double *vt, double *dvt) {
  if (m->ninv <= 0) return LV_EINPUT;
  int rc = finish_vector(m, "invariant potential", m->inv_pot(pi, vt, dvt, m->user), m->ninv, vt);
  return rc ? rc : finish_vector(m, "invariant potential (derivative)", 0, m->ninv, dvt);
}

/* ---- matrix-free products ---- */

static int matvec_add(lv_sink *s, int i, int j, double a) {
  lv_matvec_sink *ms = (lv_matvec_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  if (ms->transposed)
    ms->y[j] += s->scale * a * ms->x[i];
  else
    ms->y[i] += s->scale * a * ms->x[j];
  return 0;
}

lv_sink *lv_matvec_sink_init(lv_matvec_sink *ms, int nrows, int ncols, const double *x, double *y,
                             int transposed) {
  memset(ms, 0, sizeof *ms);
  ms->sink.add = matvec_add;
  ms->sink.nrows = nrows;
  ms->sink.ncols = ncols;
  ms->sink.scale = 1.0;
  ms->x = x;
  ms->y = y;
  ms->transposed = transposed;
  return &ms->sink;
}

static lv_sink *absvec_sink_init(lv_matvec_sink *ms, int nrows, int ncols, const double *x, double *y,
                                 int transposed);
enum { P_MASS, P_D2V, P_HESS, P_CURV, P_G };
static int product(const lv_model *m, int which, const double *q, const double *w, const double *x, double *y,
                   int nrows, int ncols, int mode);

/* y = op(G) x through the model's direct product when it has one: one
 * finiteness check of y instead of one per entry.  A failure or a
 * non-finite y runs the sink path again, which records the callback and the
 * first non-finite entry (or finds none when x itself is not finite). */
static int G_product(const lv_model *m, const double *q, const double *x, double *y, int mode) {
  int n = mode & LV_GPROD_T ? m->nv : m->nc;
  memset(y, 0, (size_t)n * sizeof(double));
  if (m->nc == 0) return 0;
  if (m->Gprod && m->Gprod(q, x, y, mode, m->user) == 0 && lv_all_finite(n, y)) return 0;
  return product(m, P_G, q, NULL, x, y, m->nc, m->nv, mode);
}

int lv_model_GT_apply_add(const lv_model *m, const double *q, const double *lambda, double *y) {
  if (m->nc == 0) return 0;
  if (!m->Gprod) {
    lv_matvec_sink ms;
    return lv_model_constraint_jac(m, q, lv_matvec_sink_init(&ms, m->nc, m->nv, lambda, y, 1));
  }
  int rc = m->Gprod(q, lambda, y, LV_GPROD_T, m->user);
  if (!rc && lv_all_finite(m->nv, y)) return 0;
  lv_sink nul = lv_sink_null(m->nc, m->nv); /* y is spent: only the record */
  int rc2 = lv_model_constraint_jac(m, q, &nul);
  return rc2 ? rc2 : rc ? record(m, "G", LV_ECALLBACK, -1, -1) : 0;
}

int lv_model_G_apply(const lv_model *m, const double *q, const double *x, double *y) {
  return G_product(m, q, x, y, 0);
}

int lv_model_GT_apply(const lv_model *m, const double *q, const double *lambda, double *y) {
  return G_product(m, q, lambda, y, LV_GPROD_T);
}

int lv_model_mass_apply(const lv_model *m, const double *q, const double *x, double *y) {
  return product(m, P_MASS, q, NULL, x, y, m->nv, m->nv, 0);
}

/* y[i] += |scale a| |x[j]| (transposed: y[j] += |scale a| |x[i]|) */
static int absvec_add(lv_sink *s, int i, int j, double a) {
  lv_matvec_sink *ms = (lv_matvec_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  if (ms->transposed)
    ms->y[j] += fabs(s->scale * a) * fabs(ms->x[i]);
  else
    ms->y[i] += fabs(s->scale * a) * fabs(ms->x[j]);
  return 0;
}

static lv_sink *absvec_sink_init(lv_matvec_sink *ms, int nrows, int ncols, const double *x, double *y,
                                 int transposed) {
  lv_sink *s = lv_matvec_sink_init(ms, nrows, ncols, x, y, transposed);
  s->add = absvec_add;
  return s;
}

/* The products below call the model's callback with the plain product
 * sink, without the finite wrapper's call per entry, and check the result
 * once: a non-finite entry of the matrix gives a non-finite y (NaN times
 * anything, and Inf times zero, are NaN), as does a non-finite x.  On a
 * failure, an entry outside the block (remembered even when the callback
 * ignores the status) or a non-finite y, the product is made again
 * through the checked evaluator, which records the callback and the entry
 * exactly as before (or finds nothing when only x was not finite). */
typedef struct {
  lv_matvec_sink ms; /* first member */
  int outside;
} raw_sink;

/* matvec_add and absvec_add's sums, written out (one call per entry) */
static int raw_add(lv_sink *s, int i, int j, double a) {
  raw_sink *r = (raw_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return r->outside = 1, LV_EINPUT;
  if (r->ms.transposed)
    r->ms.y[j] += s->scale * a * r->ms.x[i];
  else
    r->ms.y[i] += s->scale * a * r->ms.x[j];
  return 0;
}

static int raw_add_abs(lv_sink *s, int i, int j, double a) {
  raw_sink *r = (raw_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return r->outside = 1, LV_EINPUT;
  if (r->ms.transposed)
    r->ms.y[j] += fabs(s->scale * a) * fabs(r->ms.x[i]);
  else
    r->ms.y[i] += fabs(s->scale * a) * fabs(r->ms.x[j]);
  return 0;
}

/* y = op(A) x (ny entries, zeroed here) for the matrix @p which of the
 * model, nrows x ncols, at q (and w for H(q; w) and Z(q; w)); mode as for
 * lv_gprod_fn.  The caller has checked that the matrix is not empty. */
static int product(const lv_model *m, int which, const double *q, const double *w, const double *x, double *y,
                   int nrows, int ncols, int mode) {
  int t = (mode & LV_GPROD_T) != 0, ab = (mode & LV_GPROD_ABS) != 0, ny = t ? ncols : nrows;
  lv_matrix_fn f = which == P_MASS ? m->mass : which == P_D2V ? m->d2V : which == P_G ? m->G : NULL;
  lv_matrix_w_fn fw = which == P_HESS ? m->g_hessian : which == P_CURV ? m->g_curvature : NULL;
  memset(y, 0, (size_t)ny * sizeof(double));
  if (which == P_HESS && m->Hprod) { /* the direct product: one finiteness check */
    if (m->Hprod(q, w, x, y, mode, m->user) == 0 && lv_all_finite(ny, y)) return 0;
    memset(y, 0, (size_t)ny * sizeof(double));
  }
  raw_sink r;
  if (f || fw) {
    lv_matvec_sink_init(&r.ms, nrows, ncols, x, y, t);
    r.ms.sink.add = ab ? raw_add_abs : raw_add;
    r.outside = 0;
    int rc = f ? f(q, &r.ms.sink, m->user) : fw(q, w, &r.ms.sink, m->user);
    if (!rc && !r.outside && lv_all_finite(ny, y)) return 0;
    memset(y, 0, (size_t)ny * sizeof(double));
  }
  lv_sink *s = ab ? absvec_sink_init(&r.ms, nrows, ncols, x, y, t) : lv_matvec_sink_init(&r.ms, nrows, ncols, x, y, t);
  switch (which) {
  case P_MASS: return lv_model_mass(m, q, s);
  case P_D2V: return lv_model_hess_potential(m, q, s);
  case P_HESS: return lv_model_constraint_hessian(m, q, w, s);
  case P_CURV: return lv_model_constraint_curvature(m, q, w, s);
  default: return lv_model_constraint_jac(m, q, s);
  }
}

int lv_model_mass_apply_abs(const lv_model *m, const double *q, const double *x, double *y) {
  return product(m, P_MASS, q, NULL, x, y, m->nv, m->nv, LV_GPROD_ABS);
}

int lv_model_G_apply_abs(const lv_model *m, const double *q, const double *x, double *y) {
  return G_product(m, q, x, y, LV_GPROD_ABS);
}

int lv_model_GT_apply_abs(const lv_model *m, const double *q, const double *lambda, double *y) {
  return G_product(m, q, lambda, y, LV_GPROD_T | LV_GPROD_ABS);
}

/* y = |H(q; gamma)| |x| and |Z(q; w)| |x|: the rounding that an error of
 * eps |q| in the point of evaluation leaves in H(q; gamma)-weighted sums
 * such as G(q)^T gamma (whose q-derivative is H(q; gamma)) or in G(q) w
 * (whose q-derivative is Z(q; w)), for lv_newton_problem.scale. */
int lv_model_hessian_apply_abs(const lv_model *m, const double *q, const double *gamma, const double *x,
                               double *y) {
  if (m->nc == 0) {
    memset(y, 0, (size_t)m->nv * sizeof(double));
    return 0;
  }
  return product(m, P_HESS, q, gamma, x, y, m->nv, m->nv, LV_GPROD_ABS);
}

/* y = |d2V(q)| |x|: the rounding that an error of eps |q| leaves in dV(q). */
int lv_model_hess_potential_apply_abs(const lv_model *m, const double *q, const double *x, double *y) {
  if (!m->dV) {
    memset(y, 0, (size_t)m->nv * sizeof(double));
    return 0;
  }
  return product(m, P_D2V, q, NULL, x, y, m->nv, m->nv, LV_GPROD_ABS);
}

int lv_model_curvature_apply_abs(const lv_model *m, const double *q, const double *w, const double *x,
                                 double *y) {
  if (m->nc == 0) return 0;
  return product(m, P_CURV, q, w, x, y, m->nc, m->nv, LV_GPROD_ABS);
}

int lv_model_mass_dense(const lv_model *m, const double *q, double *M) {
  memset(M, 0, (size_t)m->nv * (size_t)m->nv * sizeof(double));
  lv_sink s = lv_sink_dense(M, m->nv, m->nv, m->nv);
  return lv_model_mass(m, q, &s);
}

int lv_model_constraint_jac_dense(const lv_model *m, const double *q, double *G) {
  if (m->nc == 0) return 0;
  memset(G, 0, (size_t)m->nc * (size_t)m->nv * sizeof(double));
  lv_sink s = lv_sink_dense(G, m->nc, m->nc, m->nv);
  return lv_model_constraint_jac(m, q, &s);
}

int lv_model_hessian_apply(const lv_model *m, const double *q, const double *gamma, const double *x, double *y) {
  if (m->nc == 0) {
    memset(y, 0, (size_t)m->nv * sizeof(double));
    return 0;
  }
  return product(m, P_HESS, q, gamma, x, y, m->nv, m->nv, 0);
}

int lv_model_curvature_apply(const lv_model *m, const double *q, const double *w, const double *x, double *y) {
  if (m->nc == 0) return 0;
  return product(m, P_CURV, q, w, x, y, m->nc, m->nv, 0);
}

int lv_model_saddle(const lv_model *m, const double *qM, const double *qGT, const double *qG, lv_sink *A) {
  int d = m->nv, k = m->nc;
  lv_sink b11 = lv_sink_view(A, 0, 0, d, d, 1.0, 0);
  LV_CHECK(lv_model_mass(m, qM, &b11));
  if (k == 0) return 0;
  lv_sink b12 = lv_sink_view(A, 0, d, k, d, 1.0, 1);
  LV_CHECK(lv_model_constraint_jac(m, qGT, &b12));
  lv_sink b21 = lv_sink_view(A, d, 0, k, d, 1.0, 0);
  return lv_model_constraint_jac(m, qG, &b21);
}

int lv_model_consistent_accelerations(const lv_model *m, lv_linsol *kkt, double t, const double *q,
                                      const double *v, double *b, double *tmp) {
  int d = m->nv, k = m->nc;
  LV_CHECK(lv_model_force(m, t, q, v, b));
  LV_CHECK(lv_model_grad_potential(m, q, tmp));
  for (int i = 0; i < d; i++) b[i] -= tmp[i];
  if (k > 0) {
    LV_CHECK(lv_model_curvature_apply(m, q, v, v, b + d));
    for (int i = 0; i < k; i++) b[d + i] = -b[d + i];
    if (m->drive) { /* G v' + Z(q; v) v = c''(t) */
      LV_CHECK(lv_model_driving(m, t, 2, tmp));
      for (int i = 0; i < k; i++) b[d + i] += tmp[i];
    }
  }
  return lv_linsol_solve(kkt, b);
}
