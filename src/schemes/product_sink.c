/* Recorded factors and product sinks (product_sink.h).
 * Moved here from genalpha.c, whose recorded factor fills its values in
 * place when no position repeats; bliedf.c had a copy without that. */
#include "product_sink.h"

int lv_rfac_init(lv_rfac *F, int nkey, int by_col, int cap) {
  memset(F, 0, sizeof *F);
  F->nkey = nkey;
  F->by_col = by_col;
  F->cap = cap > 0 ? cap : 16;
  F->rk = lv_calloc((size_t)F->cap, sizeof(int));
  F->ro = lv_calloc((size_t)F->cap, sizeof(int));
  F->rv = lv_calloc((size_t)F->cap, sizeof(double));
  F->idx = lv_calloc((size_t)F->cap, sizeof(int));
  F->pos = lv_calloc((size_t)F->cap, sizeof(int));
  F->val = lv_calloc((size_t)F->cap, sizeof(double));
  F->ptr = lv_calloc((size_t)nkey + 1, sizeof(int));
  return (F->rk && F->ro && F->rv && F->idx && F->pos && F->val && F->ptr) ? 0 : LV_ENOMEM;
}

void lv_rfac_free(lv_rfac *F) {
  free(F->rk);
  free(F->ro);
  free(F->rv);
  free(F->idx);
  free(F->pos);
  free(F->val);
  free(F->ptr);
}

static int grow_int(int **p, int n) {
  int *q = realloc(*p, (size_t)n * sizeof **p);
  if (!q) return LV_ENOMEM;
  *p = q;
  return 0;
}

static int grow_dbl(double **p, int n) {
  double *q = realloc(*p, (size_t)n * sizeof **p);
  if (!q) return LV_ENOMEM;
  *p = q;
  return 0;
}

int lv_rfac_add(lv_sink *s, int i, int j, double v) {
  lv_rfac *F = ((lv_rfac_sink *)s)->F;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  int k = F->by_col ? j : i, o = F->by_col ? i : j;
  int c = F->count++;
  if (F->built) {
    if (c >= F->n || F->rk[c] != k || F->ro[c] != o) {
      F->bad = 1;
      return 0;
    }
  } else {
    if (c >= F->cap) {
      /* only while recording a pattern, i.e. not in the steady state */
      int cap = 2 * F->cap;
      if (grow_int(&F->rk, cap) || grow_int(&F->ro, cap) || grow_dbl(&F->rv, cap) ||
          grow_int(&F->idx, cap) || grow_int(&F->pos, cap) || grow_dbl(&F->val, cap)) {
        F->err = LV_ENOMEM;
        return LV_ENOMEM;
      }
      F->cap = cap;
    }
    F->rk[c] = k;
    F->ro[c] = o;
  }
  double x = s->scale * v;
  F->rv[c] = x;
  if (F->built && F->nodup) F->val[F->pos[c]] = x;
  return 0;
}

/* Group the recorded calls by key: counting sort, stable in call order. */
void lv_rfac_build(lv_rfac *F) {
  F->n = F->count;
  for (int k = 0; k <= F->nkey; k++) F->ptr[k] = 0;
  for (int c = 0; c < F->n; c++) F->ptr[F->rk[c] + 1]++;
  for (int k = 0; k < F->nkey; k++) F->ptr[k + 1] += F->ptr[k];
  /* ptr[k + 1] is the end of key k; filling backwards leaves it at the start */
  for (int c = F->n - 1; c >= 0; c--) {
    int slot = --F->ptr[F->rk[c] + 1];
    F->pos[c] = slot;
    F->idx[slot] = F->ro[c];
  }
  for (int k = 0; k < F->nkey; k++) F->ptr[k] = F->ptr[k + 1];
  F->ptr[F->nkey] = F->n;
  F->nodup = 1;
  for (int k = 0; k < F->nkey && F->nodup; k++)
    for (int a = F->ptr[k]; a < F->ptr[k + 1] && F->nodup; a++)
      for (int b = a + 1; b < F->ptr[k + 1]; b++)
        if (F->idx[a] == F->idx[b]) {
          F->nodup = 0;
          break;
        }
  F->built = 1;
}

int lv_blk_add(lv_sink *s, int i, int j, double v) {
  lv_blk_sink *b = (lv_blk_sink *)s;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  lv_blk_put(b->A, b->r0, b->c0, b->scale, b->transpose, b->F, i, j, v);
  return 0;
}

/* Product sink: (i, key, a) -> (i, o, scale a F(key, o)) in the parent. */
int lv_prod_add(lv_sink *s, int i, int key, double a) {
  lv_prod_sink *p = (lv_prod_sink *)s;
  if (i < 0 || key < 0 || i >= s->nrows || key >= s->ncols) return LV_EINPUT;
  const lv_rfac *F = p->F;
  lv_sink *par = p->parent;
  for (int t = F->ptr[key]; t < F->ptr[key + 1]; t++)
    LV_CHECK(par->add(par, i, F->idx[t], s->scale * a * F->val[t]));
  return 0;
}
