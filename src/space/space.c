/* The configuration space: a product of R^k and matrix Lie group factors.
 * Every product-level operation is a loop over the factors that calls the
 * factor's entry of the operations table (group.h), so a chain of 10^5
 * rigid bodies costs O(N) per call and no code here depends on the kinds. */
#include <limits.h>
#include <stdio.h>
#include "lv_internal.h"
#include "group.h"

typedef struct {
  lv_factor_kind kind;
  const lv_group *g;
  int q_off, nq, v_off, nv;
} factor;

struct lv_space {
  factor *f;
  int nf, cap;
  int nq, nv;
  int nonlinear; /* number of non-R^k factors */
  /* The name is kept up to date incrementally: only the text of the last run
   * of identical factors is rewritten on lv_space_add, so building a space of
   * N factors costs O(N) however the factors alternate. */
  char *name;
  size_t name_len, name_cap;
  size_t run_pos; /* where the text of the last run starts */
  int run_count;  /* factors in the last run */
};

int lv_space_new(lv_space **out) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  lv_space *sp = calloc(1, sizeof *sp);
  if (!sp) return LV_ENOMEM;
  sp->cap = 4;
  sp->f = malloc((size_t)sp->cap * sizeof *sp->f);
  sp->name_cap = 64;
  sp->name = malloc(sp->name_cap);
  if (!sp->f || !sp->name) {
    lv_space_free(sp);
    return LV_ENOMEM;
  }
  sp->name[0] = '\0';
  *out = sp;
  return 0;
}

int lv_space_new_rn(lv_space **out, int n) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (n < 0) return LV_EINPUT;
  lv_space *sp;
  LV_CHECK(lv_space_new(&sp));
  int rc = lv_space_add(sp, LV_FACTOR_RN, n);
  if (rc) {
    lv_space_free(sp);
    return rc;
  }
  *out = sp;
  return 0;
}

void lv_space_free(lv_space *sp) {
  if (!sp) return;
  free(sp->f);
  free(sp->name);
  free(sp);
}

static int name_reserve(lv_space *sp, size_t need) {
  if (need <= sp->name_cap) return 0;
  size_t cap = 2 * sp->name_cap;
  if (cap < need) cap = need;
  char *p = realloc(sp->name, cap);
  if (!p) return LV_ENOMEM;
  sp->name = p;
  sp->name_cap = cap;
  return 0;
}

/* Replace the text of the last run by that of @p last repeated run_count times. */
static int rewrite_run(lv_space *sp, const factor *last) {
  char buf[64];
  const lv_group *g = last->g;
  if (g->nq == 0) /* R^k: merged, never a power */
    snprintf(buf, sizeof buf, "%s^%d", g->name, last->nq);
  else if (sp->run_count == 1)
    snprintf(buf, sizeof buf, "%s", g->name);
  else if (!g->power_parens)
    snprintf(buf, sizeof buf, "%s^%d", g->name, sp->run_count);
  else
    snprintf(buf, sizeof buf, "(%s)^%d", g->name, sp->run_count);
  size_t len = strlen(buf);
  LV_CHECK(name_reserve(sp, sp->run_pos + len + 1));
  memcpy(sp->name + sp->run_pos, buf, len + 1);
  sp->name_len = sp->run_pos + len;
  return 0;
}

int lv_space_add(lv_space *sp, lv_factor_kind kind, int k) {
  if (!sp) return LV_EINPUT;
  const lv_group *g = lv_group_of(kind);
  if (!g) return LV_EINPUT;
  int nq = g->nq, nv = g->nv, linear = nq == 0; /* R^k: sized by k */
  if (linear) {
    if (k < 0) return LV_EINPUT;
    if (k == 0) return 0;
    nq = nv = k;
  }
  if (sp->nq > INT_MAX - nq) return LV_EINPUT;
  factor *last = sp->nf ? &sp->f[sp->nf - 1] : NULL;

  if (linear && last && last->kind == kind) {
    factor save = *last;
    last->nq += k;
    last->nv += k;
    int rc = rewrite_run(sp, last);
    if (rc) {
      *last = save;
      return rc;
    }
    sp->nq += k;
    sp->nv += k;
    return 0;
  }

  /* Decided before the array may move under last. */
  int same = last && last->kind == kind; /* never RN here */
  int have_last = last != NULL;
  if (sp->nf == sp->cap) {
    if (sp->cap > INT_MAX / 2) return LV_ENOMEM;
    int cap = 2 * sp->cap;
    factor *p = realloc(sp->f, (size_t)cap * sizeof *p);
    if (!p) return LV_ENOMEM;
    sp->f = p;
    sp->cap = cap;
  }
  factor *nf = &sp->f[sp->nf];
  nf->kind = kind;
  nf->g = g;
  nf->q_off = sp->nq;
  nf->nq = nq;
  nf->v_off = sp->nv;
  nf->nv = nv;

  size_t save_pos = sp->run_pos, save_len = sp->name_len;
  int save_count = sp->run_count;
  if (same) {
    sp->run_count++;
  } else {
    if (have_last) {
      if (name_reserve(sp, sp->name_len + 2)) return LV_ENOMEM;
      sp->name[sp->name_len++] = 'x';
      sp->name[sp->name_len] = '\0';
    }
    sp->run_pos = sp->name_len;
    sp->run_count = 1;
  }
  int rc = rewrite_run(sp, nf);
  if (rc) {
    sp->run_pos = save_pos;
    sp->run_count = save_count;
    sp->name_len = save_len;
    sp->name[save_len] = '\0';
    return rc;
  }
  sp->nf++;
  sp->nq += nq;
  sp->nv += nv;
  if (!linear) sp->nonlinear++;
  return 0;
}

int lv_space_nq(const lv_space *sp) { return sp ? sp->nq : 0; }
int lv_space_nv(const lv_space *sp) { return sp ? sp->nv : 0; }
int lv_space_nfactors(const lv_space *sp) { return sp ? sp->nf : 0; }
int lv_space_is_linear(const lv_space *sp) { return sp ? sp->nonlinear == 0 : 0; }

const char *lv_space_name(const lv_space *sp) {
  if (!sp) return "";
  return sp->nf ? sp->name : "R^0";
}

int lv_space_factor(const lv_space *sp, int i, lv_factor_kind *kind, int *q_off,
                    int *nq, int *v_off, int *nv) {
  if (!sp || i < 0 || i >= sp->nf) return LV_EINPUT;
  const factor *f = &sp->f[i];
  if (kind) *kind = f->kind;
  if (q_off) *q_off = f->q_off;
  if (nq) *nq = f->nq;
  if (v_off) *v_off = f->v_off;
  if (nv) *nv = f->nv;
  return 0;
}

/* ------------------------------------------------------------ group maps */

int lv_space_compose_exp(const lv_space *sp, const double *q, double h,
                         const double *v, double *q_out) {
  if (!sp || !q || !v || !q_out) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    f->g->compose_exp(q + f->q_off, h, v + f->v_off, q_out + f->q_off, f->nq);
  }
  return 0;
}

int lv_space_log(const lv_space *sp, const double *q0, const double *q1,
                 double *v) {
  if (!sp || !q0 || !q1 || !v) return LV_EINPUT;
  int at_pi = 0;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    at_pi |= f->g->log(q0 + f->q_off, q1 + f->q_off, v + f->v_off, f->nq);
  }
  return at_pi ? LV_EINPUT : 0;
}

int lv_space_identity(const lv_space *sp, double *q) {
  if (!sp || !q) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    f->g->identity(q + f->q_off, f->nq);
  }
  return 0;
}

/* ------------------------------------------------------------ tangent */

int lv_space_tangent(const lv_space *sp, const double *v, struct lv_sink *T) {
  if (!sp || !v || !T) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    LV_CHECK(f->g->tangent(v + f->v_off, T, f->v_off, f->nv));
  }
  return 0;
}

size_t lv_space_tangent_values(const lv_space *sp, const double *v, double *out, size_t cap) {
  size_t n = 0;
  for (int i = 0; sp && v && i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    size_t c = (size_t)f->g->tangent_values(v + f->v_off, NULL, f->nv); /* the count alone */
    if (out && c <= cap && n <= cap - c) f->g->tangent_values(v + f->v_off, out + n, f->nv);
    n += c;
  }
  return n;
}

int lv_space_tangent_apply(const lv_space *sp, const double *v, const double *x, double *y) {
  if (!sp || !v || !x || !y) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    f->g->tangent_apply(v + f->v_off, x + f->v_off, y + f->v_off, f->nv);
  }
  return 0;
}

int lv_space_tangent_inv_apply(const lv_space *sp, const double *v, const double *x, double *y) {
  if (!sp || !v || !x || !y) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    f->g->tangent_inv_apply(v + f->v_off, x + f->v_off, y + f->v_off, f->nv);
  }
  return 0;
}

int lv_space_tangent_inv_deriv(const lv_space *sp, const double *v, const double *x, double *y,
                               struct lv_sink *D) {
  if (!sp || !v || !x || !y || !D) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    int o = f->v_off;
    LV_CHECK(f->g->tangent_inv_deriv(v + o, x + o, y + o, D, o, f->nv));
  }
  return 0;
}

int lv_space_ad(const lv_space *sp, const double *v, const double *x,
                double *y) {
  if (!sp || !v || !x || !y) return LV_EINPUT;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    f->g->ad(v + f->v_off, x + f->v_off, y + f->v_off, f->nv);
  }
  return 0;
}

int lv_space_normalize(const lv_space *sp, double *q) {
  if (!sp || !q) return LV_EINPUT;
  int status = 0;
  for (int i = 0; i < sp->nf; i++) {
    const factor *f = &sp->f[i];
    int rc = f->g->normalize(q + f->q_off, f->nq);
    /* Keep going: one degenerate factor should not leave the others drifting. */
    if (rc && !status) status = rc;
  }
  return status;
}

/* ------------------------------------------------------------ poses, table */

int lv_space_pose(const lv_space *sp, int i, const double *q, double x[3], double R[9]) {
  if (!sp || i < 0 || i >= sp->nf || !q || !x || !R || !sp->f[i].g->pose) return LV_EINPUT;
  sp->f[i].g->pose(q + sp->f[i].q_off, x, R);
  return 0;
}

int lv_space_set_pose(const lv_space *sp, int i, const double x[3], const double R[9], double *q) {
  if (!sp || i < 0 || i >= sp->nf || !q || !x || !R || !sp->f[i].g->set_pose) return LV_EINPUT;
  sp->f[i].g->set_pose(x, R, q + sp->f[i].q_off);
  return 0;
}

const lv_group *lv_space_factor_group(const lv_space *sp, int i) {
  if (!sp || i < 0 || i >= sp->nf) return NULL;
  return sp->f[i].g;
}

/* The factor of tangent index j by bisection over the factors' offsets. */
double lv_space_dir_scale(const lv_space *sp, const double *q, int j) {
  double s = 1.0;
  if (!sp || !q || j < 0 || j >= sp->nv) return s;
  int lo = 0, hi = sp->nf - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (sp->f[mid].v_off <= j)
      lo = mid;
    else
      hi = mid - 1;
  }
  const factor *f = &sp->f[lo];
  return fmax(s, f->g->dir_scale(q + f->q_off, j - f->v_off, f->nv));
}
