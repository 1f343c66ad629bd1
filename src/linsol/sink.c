/* Entry sinks: the one path by which every matrix in livens is written. */
#include "lv_internal.h"

static int dense_add(lv_sink *s, int i, int j, double v) {
  if (s->transpose) { int t = i; i = j; j = t; }
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  ((double *)s->target)[(size_t)(s->row0 + i) + (size_t)(s->col0 + j) * (size_t)s->ld] += s->scale * v;
  return 0;
}

/* A block inside an untransposed dense sink in one pass (each entry
 * += scale v, as dense_add); anything else entry by entry. */
static int dense_add_block(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda) {
  if (s->add != dense_add || s->transpose || i0 < 0 || j0 < 0 || nrows > s->nrows - i0 || ncols > s->ncols - j0)
    return lv_sink_add_block_each(s, i0, j0, nrows, ncols, a, lda);
  const size_t ld = (size_t)s->ld;
  double *T = (double *)s->target + (size_t)(s->row0 + i0) + (size_t)(s->col0 + j0) * ld;
  const double sc = s->scale;
  for (int r = 0; r < nrows; r++) {
    const double *ar = a + (size_t)r * (size_t)lda;
    for (int c = 0; c < ncols; c++) T[(size_t)r + (size_t)c * ld] += sc * ar[c];
  }
  return 0;
}

lv_sink lv_sink_dense(double *a, int ld, int nrows, int ncols) {
  lv_sink s;
  s.add = dense_add;
  s.target = a;
  s.row0 = s.col0 = 0;
  s.nrows = nrows;
  s.ncols = ncols;
  s.ld = ld;
  s.transpose = 0;
  s.scale = 1.0;
  s.add_block = dense_add_block;
  return s;
}

/* A view forwards to its parent; the bounds are the view's own (before
 * transposition), so a callback writing an m x n block cannot spill into
 * the neighbouring block of a larger matrix. */
static int view_add(lv_sink *s, int i, int j, double v) {
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  lv_sink *p = (lv_sink *)s->target;
  if (s->transpose) return p->add(p, s->row0 + j, s->col0 + i, s->scale * v);
  return p->add(p, s->row0 + i, s->col0 + j, s->scale * v);
}

lv_sink lv_sink_view(lv_sink *parent, int row0, int col0, int nrows, int ncols,
                     double scale, int transpose) {
  lv_sink s;
  s.add = view_add;
  s.target = parent;
  s.row0 = row0;
  s.col0 = col0;
  s.nrows = nrows;
  s.ncols = ncols;
  s.ld = 0;
  s.transpose = transpose;
  s.scale = scale;
  s.add_block = NULL;
  return s;
}

static int null_add(lv_sink *s, int i, int j, double v) {
  (void)v;
  if (i < 0 || j < 0 || i >= s->nrows || j >= s->ncols) return LV_EINPUT;
  return 0;
}

lv_sink lv_sink_null(int nrows, int ncols) {
  lv_sink s;
  memset(&s, 0, sizeof s);
  s.add = null_add;
  s.nrows = nrows;
  s.ncols = ncols;
  s.scale = 1.0;
  return s;
}
