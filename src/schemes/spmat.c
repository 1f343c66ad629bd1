/* Sparse-matrix kit of the schemes' Newton-matrix assembly (see spmat.h). */
#include <float.h>
#include "schemes/spmat.h"
#include "space/group.h"

/* the per-entry adds of lv_spm_product_put and lv_spm_put inlined whatever the
 * compiler's size heuristics (as lv_spm_put was before the recorder's
 * check grew: out of line they cost 10 % of a chain VI-A step) */
#if defined(__GNUC__)
#define LV_FLATTEN __attribute__((flatten))
#define LV_NOINLINE __attribute__((noinline))
#else
#define LV_FLATTEN
#define LV_NOINLINE
#endif

void lv_spm_init(lv_spm *A, int nrows, int ncols) {
  memset(A, 0, sizeof *A);
  A->nrows = nrows;
  A->ncols = ncols;
  A->rec.pos_min = LV_SPM_CODE_MIN;
}

void lv_spm_free(lv_spm *A) {
  if (!A) return;
  free(A->rp);
  free(A->ci);
  free(A->val);
  lv_recorder_free(&A->rec);
  free(A->perm);
  if (A->acc != A->acc_ext) free(A->acc);
  free(A->mark);
  free(A->tmark);
  free(A->list);
  free(A->pl_p);
  free(A->pl_a);
  free(A->pl_b);
  free(A->pl_k);
  int r = A->nrows, c = A->ncols, g = A->group;
  lv_spm_init(A, r, c);
  A->group = g;
}

/* ------------------------------------------------------------ capture */

/* The recorder's add of capture_add below, out of line: every add off the
 * fast path (a coded or kept recording, a new sequence). */
LV_NOINLINE static int capture_rec(lv_spm *A, int i, int j, double x, int assign) {
  int rc = assign ? lv_recorder_set(&A->rec, A->val, i, j, x) : lv_recorder_add(&A->rec, A->val, i, j, x);
  if (rc) A->bad = rc;
  return rc;
}

/* The add of capture_add on a coded recording (a large one: no kept
 * positions, recorder.h): the slot decoded and checked against the
 * pattern (lv_recorder_on_) and the value stored here, one call from the
 * sink's add instead of two (capture_rec, then the recorder's add, which
 * makes the same test and the same store); anything else, i.e. the
 * sequence leaving the recording, goes on to capture_add's bounds check
 * and capture_rec.  The same slots and sums: at N = 10^4 on the chain the
 * captures of G, H and Z are coded (spmat.h: LV_SPM_CODE_MIN). */
LV_NOINLINE static int capture_coded(lv_spm *A, int i, int j, double x, int assign) {
  lv_recorder *r = &A->rec;
  size_t k = r->cnt;
  if (lv_recorder_on_(r, k, i, j)) {
    r->cnt = k + 1;
    if (assign)
      A->val[r->cur] = x;
    else
      A->val[r->cur] += x;
    return 0;
  }
  if (i < 0 || j < 0 || i >= A->nrows || j >= A->ncols) {
    A->bad = LV_EINPUT;
    A->flag = 1;
    return LV_EINPUT;
  }
  return capture_rec(A, i, j, x, assign);
}

/* The capture sink's add; @p assign: the replay assigns the slot (a grouped
 * pattern with no repeated position, lv_spm->nodup) instead of summing into
 * it (specialised below, the branch stays out of the merged capture).  An
 * add at its place on a small recording (positions kept, no values kept:
 * every capture of a small model's matrices) is done here, the rest by
 * the recorder out of line, so that the common add saves no registers (a
 * third of its instructions on four particles). */
LV_ALWAYS_INLINE int capture_add(lv_sink *s, int i, int j, double v, int assign, int check) {
  lv_spm *A = (lv_spm *)s;
  if (s->transpose) {
    int t = i;
    i = j;
    j = t;
  }
  i += s->row0;
  j += s->col0;
  if (check && !isfinite(v)) A->flag = 1;
  double x = s->scale * v;
  lv_recorder *r = &A->rec;
  size_t k = r->cnt;
  /* A recorded position is inside the block: the adds of the recording
   * passed the test below, and a merged matrix keeps its shape (a grouped
   * one, whose shape may change, keeps its values and takes the recorder's
   * path). */
  if (r->match && k < r->rcnt && r->ri && !r->keep && r->ri[k] == i && r->rj[k] == j) {
    /* lv_recorder_put_'s add on the recording, as it makes it */
    int sl = r->map[k];
    r->cnt = k + 1;
    if (assign)
      A->val[sl] = x;
    else
      A->val[sl] += x;
    return 0;
  }
  if (r->match && k < r->rcnt && !r->ri && !r->keep) return capture_coded(A, i, j, x, assign);
  if (i < 0 || j < 0 || i >= A->nrows || j >= A->ncols) {
    A->bad = LV_EINPUT;
    A->flag = 1;
    return LV_EINPUT;
  }
  return capture_rec(A, i, j, x, assign);
}

LV_FLATTEN static int spm_add(lv_sink *s, int i, int j, double v) {
  return capture_add(s, i, j, v, 0, 0);
}

LV_FLATTEN static int spm_add_assign(lv_sink *s, int i, int j, double v) {
  return capture_add(s, i, j, v, 1, 0);
}

/* the same, flagging a non-finite value (A->flag) for a callback called
 * without the model's finiteness wrapper (cap_model); all four flattened, so
 * that the recorder's add stays inlined in each */
LV_FLATTEN static int spm_add_chk(lv_sink *s, int i, int j, double v) {
  return capture_add(s, i, j, v, 0, 1);
}

LV_FLATTEN static int spm_add_assign_chk(lv_sink *s, int i, int j, double v) {
  return capture_add(s, i, j, v, 1, 1);
}

/* The replay of a grouped capture with no position twice (nodup) whose
 * recording keeps its positions (ri, rj: every keep recording): while each
 * add is at the recorded position of its index, the general add's work
 * comes down to storing the value into its slot and the call-order
 * sequence -- the sink is the identity lv_spm_begin made (checked), and
 * the bounds are checked as unsigned compares.  Anything else takes the
 * general add, which also leaves the recording.  The same values in the
 * same slots (s->scale * v is v for scale 1).  Half the instructions of
 * the general add per entry: G, T and df/dv of a generalized-alpha or
 * BLieDF step are captured this way. */
#if defined(__GNUC__)
#define LV_NOINLINE __attribute__((noinline))
#else
#define LV_NOINLINE
#endif
/* the general add out of line, so that the short path saves no registers */
LV_NOINLINE static int replay_off(lv_sink *s, int i, int j, double v, int check) {
  return check ? spm_add_assign_chk(s, i, j, v) : spm_add_assign(s, i, j, v);
}

LV_ALWAYS_INLINE int replay_add(lv_sink *s, int i, int j, double v, int check) {
  lv_spm *A = (lv_spm *)s;
  lv_recorder *r = &A->rec;
  size_t k = r->cnt;
  if (LV_UNLIKELY(!r->match || k >= r->rcnt || r->ri[k] != i || r->rj[k] != j || (unsigned)i >= (unsigned)A->nrows ||
                  (unsigned)j >= (unsigned)A->ncols || s->transpose || s->row0 || s->col0 || s->scale != 1.0))
    return replay_off(s, i, j, v, check);
  if (check && !isfinite(v)) A->flag = 1;
  r->cnt = k + 1;
  r->cv[k] = v;
  A->val[r->map[k]] = v;
  return 0;
}

static int spm_add_replay(lv_sink *s, int i, int j, double v) {
  return replay_add(s, i, j, v, 0);
}

static int spm_add_replay_chk(lv_sink *s, int i, int j, double v) {
  return replay_add(s, i, j, v, 1);
}

/* The replay of a merged capture whose recording keeps its positions
 * (every capture of a small model's matrices): lv_spm_begin installs it
 * when there is such a recording, so that the tests made once there (a
 * recording to match, positions kept, no values kept, the recorded
 * positions inside the block) leave each add to compare its position with
 * the recorded one and add into the slot.  The first add that cannot take
 * this path (off the recording, or through a sink transform other than
 * the identity -- a scale is applied) hands the sink back to the general
 * add for the rest of the capture.  The same slots and sums as
 * capture_add; 31 instructions per add instead of 44 on four particles. */
LV_NOINLINE static int merged_off(lv_sink *s, int i, int j, double v, int check) {
  s->add = check ? spm_add_chk : spm_add;
  return s->add(s, i, j, v);
}

LV_ALWAYS_INLINE int merged_add(lv_sink *s, int i, int j, double v, int check) {
  lv_spm *A = (lv_spm *)s;
  lv_recorder *r = &A->rec;
  size_t k = r->cnt;
  /* match too: a callback that kept the sink's first add function goes on
   * calling this one after merged_off */
  if (LV_UNLIKELY(!r->match || k >= r->rcnt || r->ri[k] != i || r->rj[k] != j ||
                  (s->transpose | s->row0 | s->col0)))
    return merged_off(s, i, j, v, check);
  if (check && !isfinite(v)) A->flag = 1;
  r->cnt = k + 1;
  A->val[r->map[k]] += s->scale * v;
  return 0;
}

static int spm_add_merged(lv_sink *s, int i, int j, double v) {
  return merged_add(s, i, j, v, 0);
}

static int spm_add_merged_chk(lv_sink *s, int i, int j, double v) {
  return merged_add(s, i, j, v, 1);
}

/* The replay of a merged capture whose recording is coded (no kept
 * positions: a large one, LV_SPM_CODE_MIN), installed like merged_add:
 * the tests made once in lv_spm_begin leave each add to decode its slot
 * and check it against the pattern (lv_recorder_on_) and add into it.
 * The general add (capture_add, then capture_coded out of line) made the
 * sink's tests and two calls per add: at N = 10^4 on the chain, where the
 * captures of G, H and Z are coded, 2.4x the instructions per add of
 * merged_add at N = 10^3, the largest part of VI-A's instructions growing
 * faster than N.  The same slots and sums as capture_coded; anything off
 * the recording hands the sink back to the general add (merged_off). */
LV_ALWAYS_INLINE int coded_add(lv_sink *s, int i, int j, double v, int check) {
  lv_spm *A = (lv_spm *)s;
  lv_recorder *r = &A->rec;
  size_t k = r->cnt;
  if (LV_UNLIKELY(!r->match || k >= r->rcnt || r->ri || (s->transpose | s->row0 | s->col0) ||
                  !lv_recorder_on_(r, k, i, j)))
    return merged_off(s, i, j, v, check);
  if (check && !isfinite(v)) A->flag = 1;
  r->cnt = k + 1;
  A->val[r->cur] += s->scale * v;
  return 0;
}

static int spm_add_coded(lv_sink *s, int i, int j, double v) {
  return coded_add(s, i, j, v, 0);
}

static int spm_add_coded_chk(lv_sink *s, int i, int j, double v) {
  return coded_add(s, i, j, v, 1);
}

/* lv_sink_add_block of a capture, entry by entry from entry (r0, c0) of
 * the block on: each entry as the sink's add would take it, the add read
 * again per entry (a replay hands the sink back to the general add
 * mid-capture). */
static int spm_block_each(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda, int r0, int c0) {
  for (int r = r0; r < nrows; r++, c0 = 0)
    for (int c = c0; c < ncols; c++) LV_CHECK(s->add(s, i0 + r, j0 + c, a[(size_t)r * (size_t)lda + (size_t)c]));
  return 0;
}

/* lv_sink_add_block of a capture on its recording: merged_add's and
 * replay_add's short paths with their tests made once per block (the add
 * in use, the sink's transform, the block inside the matrix), each entry's
 * position compared with the recorded one and its value put into its
 * slot -- the same slots, sums and flags as one add per entry.  The first
 * entry off the recording and the rest go entry by entry (the entries
 * before it were on the recording: exactly the adds' work). */
static int spm_add_block(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda) {
  lv_spm *A = (lv_spm *)s;
  lv_recorder *r = &A->rec;
  int (*f)(lv_sink *, int, int, double) = s->add;
  int merged = f == spm_add_merged || f == spm_add_merged_chk, replay = f == spm_add_replay || f == spm_add_replay_chk;
  int check = f == spm_add_merged_chk || f == spm_add_replay_chk;
  if (!(merged || replay) || !r->match || !r->ri || (s->transpose | s->row0 | s->col0) ||
      (replay && s->scale != 1.0) || i0 < 0 || j0 < 0 || nrows > A->nrows - i0 || ncols > A->ncols - j0)
    return spm_block_each(s, i0, j0, nrows, ncols, a, lda, 0, 0);
  const size_t end = r->rcnt;
  const int *ri = r->ri, *rj = r->rj, *map = r->map;
  double *val = A->val, *cv = r->cv, chk = 0.0;
  const double sc = s->scale;
  size_t k = r->cnt;
  for (int rr = 0; rr < nrows; rr++) {
    const double *ar = a + (size_t)rr * (size_t)lda;
    const int i = i0 + rr;
    for (int c = 0; c < ncols; c++, k++) {
      if (LV_UNLIKELY(k >= end || ri[k] != i || rj[k] != j0 + c)) {
        r->cnt = k;
        if (check && chk != 0.0) A->flag = 1;
        return spm_block_each(s, i0, j0, nrows, ncols, a, lda, rr, c);
      }
      const double v = ar[c];
      chk += v - v;
      if (replay) {
        cv[k] = v;
        val[map[k]] = v;
      } else {
        val[map[k]] += sc * v;
      }
    }
  }
  r->cnt = k;
  if (check && chk != 0.0) A->flag = 1;
  return 0;
}

lv_sink *lv_spm_begin(lv_spm *A) {
  A->sink.add = A->nodup ? spm_add_assign : spm_add;
  A->sink.target = A;
  A->sink.row0 = A->sink.col0 = 0;
  A->sink.nrows = A->nrows;
  A->sink.ncols = A->ncols;
  A->sink.ld = 0;
  A->sink.transpose = 0;
  A->sink.scale = 1.0;
  A->sink.add_block = spm_add_block;
  A->bad = 0;
  A->flag = 0;
  A->rec.keep = A->group != LV_SPM_MERGED; /* the call-order sequence is read from grouped captures only */
  int replay = lv_recorder_begin(&A->rec);
  if (replay && A->nnz && !A->nodup) memset(A->val, 0, (size_t)A->nnz * sizeof(double));
  if (replay && A->nodup && A->rec.keep && A->rec.ri && A->rec.map) A->sink.add = spm_add_replay;
  if (replay && !A->group && !A->rec.keep && A->rec.ri && A->rec.map) A->sink.add = spm_add_merged;
  if (replay && !A->group && !A->rec.keep && !A->rec.ri && A->rec.md) A->sink.add = spm_add_coded;
  return &A->sink;
}

/* Grouped: no key holds the same other index twice (a replay may assign). */
static int no_repeat(const lv_spm *A) {
  int nk = A->group == LV_SPM_BY_COL ? A->ncols : A->nrows;
  for (int g = 0; g < nk; g++)
    for (int a = A->rp[g]; a < A->rp[g + 1]; a++)
      for (int b = a + 1; b < A->rp[g + 1]; b++)
        if (A->ci[a] == A->ci[b]) return 0;
  return 1;
}

/* A new position sequence becomes the pattern: merged CSR (columns
 * ascending) or grouped (one slot per add, by row or by column). */
int lv_spm_end(lv_spm *A, int callback_status) {
  if (A->bad) return A->bad;
  if (callback_status) return callback_status;
  if (lv_recorder_replayed(&A->rec)) return 0; /* the values are in their slots */
  int by_col = A->group == LV_SPM_BY_COL;
  int rc = lv_recorder_record(&A->rec, by_col, !A->group, by_col ? A->ncols : A->nrows,
                              by_col ? A->nrows : A->ncols, &A->rp, &A->ci, &A->val, &A->nnz);
  A->version = A->rec.version;
  A->nodup = !rc && A->group && no_repeat(A);
  return rc;
}

void lv_spm_init_grouped(lv_spm *A, int by_col) {
  lv_spm_init(A, 0, 0);
  A->group = by_col ? LV_SPM_BY_COL : LV_SPM_BY_ROW;
}

int lv_spm_fill(lv_spm *A, int nrows, int ncols, lv_spm_fill_fn fn, void *ctx) {
  if (nrows != A->nrows || ncols != A->ncols) {
    if (!A->group) return LV_EINPUT; /* a merged matrix keeps its shape */
    /* a grouped matrix is indexed by its key only: a new key count needs a
     * new pattern (no product or transpose depends on its version) */
    if ((A->group == LV_SPM_BY_COL ? ncols != A->ncols : nrows != A->nrows)) lv_recorder_forget(&A->rec);
    A->nrows = nrows;
    A->ncols = ncols;
  }
  return lv_spm_end(A, fn(ctx, lv_spm_begin(A)));
}

/* the model and space callbacks every scheme captures */
typedef struct {
  const lv_model *m;
  const lv_space *sp;
  const double *x;
} cap_ctx;
/* a model matrix into the capture's own sink, without the finiteness
 * wrapper per entry: the checking adds flag a non-finite value */
typedef struct {
  const lv_model *m;
  int which;
  double t;
  const double *q, *v, *x;
} mx_ctx;
static int cap_model(void *ctx, lv_sink *s) {
  const mx_ctx *c = ctx;
  lv_spm *A = (lv_spm *)s;
  s->add = s->add == spm_add_replay   ? spm_add_replay_chk
           : s->add == spm_add_merged ? spm_add_merged_chk
           : s->add == spm_add_coded  ? spm_add_coded_chk
           : A->nodup                 ? spm_add_assign_chk
                                      : spm_add_chk;
  return lv_model_matrix_flagged(c->m, c->which, c->t, c->q, c->v, c->x, s, &A->flag);
}

static int cap_mass(void *ctx, lv_sink *s) {
  const cap_ctx *c = ctx;
  return lv_model_mass(c->m, c->x, s);
}
static int cap_tangent(void *ctx, lv_sink *s) {
  const cap_ctx *c = ctx;
  return lv_space_tangent(c->sp, c->x, s);
}

/* A capture holding the recording its source's callback made (vsrc, vkind,
 * vver: a model's G, H or Z, a space's tangent), with kept positions, from
 * the source's values (the callback's entries in its order:
 * lv_model_G_values, _H_values, _Z_values, lv_space_tangent_values)
 * instead of a sink add per entry: lv_spm_begin, each value put as the add
 * that lv_spm_begin installed puts it (the grouped replay assigns the slot
 * and keeps the value, the merged add sums onto the zeroed slots, value
 * times the sink's scale 1), and lv_spm_end on the replayed recording --
 * the same slots, bits and state as the callback's capture.  values(src,
 * a, b, v, cap) returns the count and writes them when they fit.  1 when
 * done; 0 when not taken (another recording, kind or count, a non-finite
 * value: the callback's capture then follows, and names the entry). */
enum { VALS_STACK = 256, VALS_TANGENT = -1 };
typedef size_t (*values_fn)(const void *src, const double *a, const double *b, double *v, size_t cap);
static int capture_values(lv_spm *A, const void *src, int kind, int nrows, int ncols, values_fn values,
                          const double *a, const double *b) {
  lv_recorder *r = &A->rec;
  const size_t n = r->rcnt;
  if (A->vsrc != src || A->vkind != kind || A->vver != r->version || !r->version || !r->ri || !r->map || n == 0 ||
      A->nrows != nrows || A->ncols != ncols)
    return 0;
  double buf[VALS_STACK];
  int replay = A->group && A->nodup && r->cv; /* lv_spm_begin's spm_add_replay */
  if (!replay && (A->group || n > VALS_STACK)) return 0;
  double *v = replay ? r->cv : buf;
  if (values(src, a, b, v, n) != n) return 0;
  lv_spm_begin(A);
  if (replay ? A->sink.add != spm_add_replay : A->sink.add != spm_add_merged) return 0; /* not reached: begin's choice */
  const int *map = r->map;
  double *val = A->val, chk = 0.0;
  if (replay)
    for (size_t k = 0; k < n; k++) chk += v[k] - v[k], val[map[k]] = v[k];
  else
    for (size_t k = 0; k < n; k++) chk += v[k] - v[k], val[map[k]] += 1.0 * v[k];
  if (chk != 0.0) return 0; /* the callback's capture puts every slot again */
  r->cnt = n;
  return lv_spm_end(A, 0) == 0;
}

/* After a capture by src's callback of this kind: a recording made there,
 * or replayed from one made there, is src's (capture_values may take its
 * values). */
static void tag_values(lv_spm *A, const void *src, int kind, long ver_before, int rc) {
  if (!rc && (A->rec.version != ver_before || (A->vsrc == src && A->vkind == kind && A->vver == ver_before))) {
    A->vsrc = src;
    A->vkind = kind;
    A->vver = A->rec.version;
  } else if (rc) {
    A->vsrc = NULL;
  }
}

static size_t H_values(const void *m, const double *q, const double *gam, double *v, size_t cap) {
  return lv_model_H_values(m, q, gam, v, cap);
}

static size_t Z_values(const void *m, const double *q, const double *w, double *v, size_t cap) {
  return lv_model_Z_values(m, q, w, v, cap);
}

int lv_spm_model_matrix(lv_spm *A, int nrows, int ncols, const lv_model *m, int which, double t, const double *q,
                        const double *v, const double *x) {
  mx_ctx c = {m, which, t, q, v, x};
  values_fn vf = which == LV_MX_HESSIAN ? H_values : which == LV_MX_CURVATURE ? Z_values : NULL;
  if (!vf) return lv_spm_fill(A, nrows, ncols, cap_model, &c);
  /* H(q; x), Z(q; x): the model's values into a capture of its own recording */
  if (capture_values(A, m, which, nrows, ncols, vf, q, x)) return 0;
  long ver = A->rec.version;
  int rc = lv_spm_fill(A, nrows, ncols, cap_model, &c);
  tag_values(A, m, which, ver, rc);
  return rc;
}

static size_t G_values(const void *m, const double *q, const double *unused, double *v, size_t cap) {
  (void)unused;
  return lv_model_G_values(m, q, v, cap);
}

int lv_spm_constraint_jac(const lv_model *m, const double *q, lv_spm *G) {
  if (capture_values(G, m, LV_MX_G, lv_model_nc(m), lv_model_nv(m), G_values, q, NULL)) return 0;
  long ver = G->rec.version;
  int rc = lv_spm_model_matrix(G, lv_model_nc(m), lv_model_nv(m), m, LV_MX_G, 0.0, q, NULL, NULL);
  tag_values(G, m, LV_MX_G, ver, rc);
  return rc;
}

int lv_spm_mass_matrix(const lv_model *m, const double *q, lv_spm *M) {
  cap_ctx c = {m, NULL, q};
  return lv_spm_fill(M, lv_model_nv(m), lv_model_nv(m), cap_mass, &c);
}

static size_t T_values(const void *sp, const double *w, const double *unused, double *v, size_t cap) {
  (void)unused;
  return lv_space_tangent_values(sp, w, v, cap);
}

int lv_spm_tangent(const lv_space *sp, const double *w, lv_spm *T) {
  int nv = lv_space_nv(sp);
  if (capture_values(T, sp, VALS_TANGENT, nv, nv, T_values, w, NULL)) return 0;
  long ver = T->rec.version;
  cap_ctx c = {NULL, sp, w};
  int rc = lv_spm_fill(T, nv, nv, cap_tangent, &c);
  tag_values(T, sp, VALS_TANGENT, ver, rc);
  return rc;
}

/* ------------------------------------------------------------ transpose */

/* T's pattern as the transpose of A's (rows of A in ascending order, so
 * T's columns come out ascending) and perm between their entries: with
 * gather, perm[s] is the entry of A behind T's entry s (T keeps no values,
 * lv_spm_transpose_pattern); without, perm[p] is where A's entry p goes in
 * T, whose values are allocated (lv_spm_transpose).  On failure T has no
 * valid pattern (version 0). */
static int transpose_structure(lv_spm *T, const lv_spm *A, int gather) {
  int nr = A->ncols, nc = A->nrows, nnz = A->nnz;
  size_t z = nnz ? (size_t)nnz : 1;
  free(T->rp);
  free(T->ci);
  free(T->val);
  free(T->perm);
  T->nrows = nr;
  T->ncols = nc;
  T->gather = gather;
  T->rp = lv_calloc((size_t)nr + 1, sizeof(int));
  T->ci = lv_calloc(z, sizeof(int));
  T->val = gather ? NULL : lv_calloc(z, sizeof(double));
  T->perm = lv_calloc(z, sizeof(int));
  int *next = lv_calloc((size_t)nr + 1, sizeof(int));
  if (!T->rp || !T->ci || (!gather && !T->val) || !T->perm || !next) {
    free(next);
    T->version = 0;
    return LV_ENOMEM;
  }
  for (int p = 0; p < nnz; p++) T->rp[A->ci[p] + 1]++;
  for (int i = 0; i < nr; i++) T->rp[i + 1] += T->rp[i];
  memcpy(next, T->rp, ((size_t)nr + 1) * sizeof(int));
  for (int i = 0; i < A->nrows; i++)
    for (int p = A->rp[i]; p < A->rp[i + 1]; p++) {
      int s = next[A->ci[p]]++;
      T->ci[s] = i;
      if (gather) T->perm[s] = p;
      else T->perm[p] = s;
    }
  free(next);
  T->nnz = nnz;
  T->opA = A;
  T->verA = A->version;
  T->version = T->version + 1 > 0 ? T->version + 1 : 1;
  return 0;
}

int lv_spm_transpose(lv_spm *T, const lv_spm *A) {
  if (A->group) return LV_EINPUT;
  if (T->opA != A || T->verA != A->version || T->version == 0 || T->gather) LV_CHECK(transpose_structure(T, A, 0));
  if (!T->val && !(T->val = malloc((T->nnz ? (size_t)T->nnz : 1) * sizeof(double)))) return LV_ENOMEM;
  for (int p = 0; p < A->nnz; p++) T->val[T->perm[p]] = A->val[p];
  return 0;
}

int lv_spm_transpose_pattern(lv_spm *T, const lv_spm *A) {
  if (A->group) return LV_EINPUT;
  if (T->gather && T->opA == A && T->verA == A->version && T->version != 0) return 0;
  return transpose_structure(T, A, 1);
}

void lv_spm_drop_values(lv_spm *C) {
  /* a capture's values are its recording's slots; a small matrix keeps its
   * values (the allocation per Newton matrix would cost more than they) */
  if (!C->opA || C->nnz < LV_RECORDER_KEEP_POS) return;
  free(C->val);
  C->val = NULL;
}

/* ------------------------------------------------------------ product */

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

void lv_spm_share_acc(lv_spm *C, double *acc, int len) {
  C->acc_ext = acc;
  C->acc_len = acc ? len : 0;
}

/* A product's arrays, before it is formed again (the pointers are left
 * dangling: the caller sets them). */
static void product_release(lv_spm *C) {
  free(C->rp);
  free(C->ci);
  free(C->val);
  if (C->acc != C->acc_ext) free(C->acc);
  free(C->mark);
  free(C->tmark);
  free(C->list);
  free(C->pl_p);
  free(C->pl_a);
  free(C->pl_b);
  free(C->pl_k);
  C->pl_p = C->pl_a = C->pl_b = C->pl_k = NULL;
}

/* C is the product of these operands as they are now (version 1). */
static void product_bind(lv_spm *C, const lv_spm *A, const lv_spm *B) {
  C->opA = A;
  C->opB = B;
  C->verA = A->version;
  C->verB = B->version;
  C->version = 1;
}

static int product_pattern(lv_spm *C, const lv_spm *A, const lv_spm *B) {
  int nr = A->nrows, nc = B->ncols;
  product_release(C);
  C->tmark = NULL;
  C->list = NULL;
  C->ci = NULL;
  C->val = NULL;
  C->nrows = nr;
  C->ncols = nc;
  C->rp = lv_calloc((size_t)nr + 1, sizeof(int));
  C->acc = C->acc_ext && nc <= C->acc_len ? C->acc_ext : lv_calloc((size_t)nc, sizeof(double));
  C->mark = lv_calloc((size_t)nc, sizeof(int));
  C->version = 0;
  if (!C->rp || !C->acc || !C->mark) return LV_ENOMEM;
  for (int j = 0; j < nc; j++) C->mark[j] = -1;
  /* pass 1: count, pass 2: fill */
  for (int pass = 0; pass < 2; pass++) {
    int nnz = 0;
    for (int i = 0; i < nr; i++) {
      int start = nnz;
      for (int p = A->rp[i]; p < A->rp[i + 1]; p++) {
        int k = A->ci[p];
        for (int q = B->rp[k]; q < B->rp[k + 1]; q++) {
          int j = B->ci[q];
          if (C->mark[j] != i + pass * nr) {
            C->mark[j] = i + pass * nr;
            if (pass) C->ci[nnz] = j;
            nnz++;
          }
        }
      }
      if (pass) qsort(C->ci + start, (size_t)(nnz - start), sizeof(int), cmp_int);
      else C->rp[i + 1] = nnz;
    }
    if (!pass) {
      size_t z = nnz ? (size_t)nnz : 1;
      C->ci = lv_calloc(z, sizeof(int));
      if (!C->ci) return LV_ENOMEM;
      C->nnz = nnz;
    }
  }
  /* the marks serve the pattern only; the values come with the first
   * lv_spm_product (lv_spm_product_put keeps none) */
  free(C->mark);
  C->mark = NULL;
  product_bind(C, A, B);
  return 0;
}

int lv_spm_product(lv_spm *C, const lv_spm *A, const lv_spm *B) {
  if (A->ncols != B->nrows || A->group || B->group || A->gather || B->gather) return LV_EINPUT;
  if (C->version == 0 || C->opA != A || C->opB != B || C->verA != A->version || C->verB != B->version) {
    long v = C->version;
    LV_CHECK(product_pattern(C, A, B));
    C->version = v + 1 > 0 ? v + 1 : 1;
  }
  if (C->val == NULL && (C->val = lv_calloc(C->nnz ? (size_t)C->nnz : 1, sizeof(double))) == NULL) return LV_ENOMEM;
  double *acc = C->acc;
  for (int i = 0; i < C->nrows; i++) {
    for (int p = A->rp[i]; p < A->rp[i + 1]; p++) {
      double a = A->val[p];
      int k = A->ci[p];
      for (int q = B->rp[k]; q < B->rp[k + 1]; q++) acc[B->ci[q]] += a * B->val[q];
    }
    for (int p = C->rp[i]; p < C->rp[i + 1]; p++) {
      C->val[p] = acc[C->ci[p]];
      acc[C->ci[p]] = 0.0;
    }
  }
  return 0;
}

/* lv_spm_product_put's form without a kept pattern (a large product): the
 * row's accumulator, marks (tmark) and the list of the longest row's
 * length, its multiply-adds capped at the column count.  Status 0 or
 * LV_ENOMEM. */
static int product_rows(lv_spm *C, const lv_spm *A, const lv_spm *B) {
  int nr = A->nrows, nc = B->ncols;
  product_release(C);
  C->rp = C->ci = C->mark = NULL;
  C->val = NULL;
  C->nrows = nr;
  C->ncols = nc;
  C->nnz = 0;
  C->version = 0;
  size_t longest = 1;
  for (int i = 0; i < nr; i++) {
    size_t len = 0;
    for (int p = A->rp[i]; p < A->rp[i + 1]; p++) len += (size_t)(B->rp[A->ci[p] + 1] - B->rp[A->ci[p]]);
    if (len > longest) longest = len;
  }
  if (longest > (size_t)nc && nc > 0) longest = (size_t)nc;
  C->acc = C->acc_ext && nc <= C->acc_len ? C->acc_ext : lv_calloc((size_t)(nc ? nc : 1), sizeof(double));
  C->tmark = lv_calloc((size_t)(nc ? nc : 1), 1);
  C->list = lv_calloc(longest, sizeof(int));
  if (!C->acc || !C->tmark || !C->list) return LV_ENOMEM;
  product_bind(C, A, B);
  return 0;
}

/* Multiply-adds of A B (row by row, column by column of A's entries). */
static size_t product_flops(const lv_spm *A, const lv_spm *B) {
  size_t f = 0;
  for (int p = 0; p < A->rp[A->nrows]; p++) f += (size_t)(B->rp[A->ci[p] + 1] - B->rp[A->ci[p]]);
  return f;
}

/* Entry q (of row k) of the right factor of lv_spm_product_put: B's value,
 * read through its transpose map (bsrc: slot of the operand B->opA) and
 * times the row's diagonal factor dg[k] when given -- dg[k] * b is what
 * lv_spm_product forms for diag(dg) B, an entry of the product being
 * 0.0 + dg[k] * b. */
LV_ALWAYS_INLINE double rhs_val(const double *bv, const int *bsrc, const double *dg, int k, int q) {
  double b = bsrc ? bv[bsrc[q]] : bv[q];
  return dg ? dg[k] * b : b;
}

/* The plan of a small product C = A B with a kept pattern (lv_spm->pl_*):
 * the terms of each slot's sum in the order the row accumulation of
 * product_put_ adds them (A's entries of the row in order, then B's row),
 * B's value read at its slot, through bsrc when given.  Without memory C
 * keeps no plan (product_put_ sums by rows). */
static void product_plan(lv_spm *C, const lv_spm *A, const lv_spm *B, const int *bsrc) {
  size_t nt = product_flops(A, B);
  int nnz = C->nnz, nc = C->ncols;
  int *pp = lv_calloc((size_t)nnz + 1, sizeof(int)), *cur = lv_calloc((size_t)nnz + 1, sizeof(int));
  int *slot = lv_calloc(nc ? (size_t)nc : 1, sizeof(int));
  int *pa = malloc((nt ? nt : 1) * sizeof(int)), *pb = malloc((nt ? nt : 1) * sizeof(int));
  int *pk = malloc((nt ? nt : 1) * sizeof(int));
  if (!pp || !cur || !slot || !pa || !pb || !pk) {
    free(pp), free(cur), free(slot), free(pa), free(pb), free(pk);
    return;
  }
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < C->nrows; i++) {
      for (int p = C->rp[i]; p < C->rp[i + 1]; p++) slot[C->ci[p]] = p;
      for (int p = A->rp[i]; p < A->rp[i + 1]; p++) {
        int k = A->ci[p];
        for (int q = B->rp[k]; q < B->rp[k + 1]; q++) {
          int sl = slot[B->ci[q]];
          if (!pass) {
            pp[sl + 1]++;
          } else {
            int t = cur[sl]++;
            pa[t] = p;
            pb[t] = bsrc ? bsrc[q] : q;
            pk[t] = k;
          }
        }
      }
    }
    if (!pass) {
      for (int p = 0; p < nnz; p++) pp[p + 1] += pp[p];
      memcpy(cur, pp, (size_t)nnz * sizeof(int));
    }
  }
  free(cur);
  free(slot);
  C->pl_p = pp;
  C->pl_a = pa;
  C->pl_b = pb;
  C->pl_k = pk;
}

/* lv_spm_product_put with the right factor diag(dg) B (dg NULL: B), B's
 * values bv read through bsrc (NULL: directly); specialised by the callers
 * below, so the plain product's loops keep no test. */
LV_ALWAYS_INLINE int product_put_(lv_assembly *S, int r0, int c0, lv_spm *C, const lv_spm *A, const lv_spm *B,
                                  const double *bv, const int *bsrc, const double *dg, double scale,
                                  const double *rowscale) {
  if (A->ncols != B->nrows || A->group || B->group || A->gather) return LV_EINPUT;
  if (r0 < 0 || c0 < 0 || r0 + A->nrows > S->n || c0 + B->ncols > S->n) return LV_EINPUT;
  if (C->version == 0 || C->opA != A || C->opB != B || C->verA != A->version || C->verB != B->version) {
    long v = C->version;
    if (product_flops(A, B) >= LV_RECORDER_KEEP_POS)
      LV_CHECK(product_rows(C, A, B));
    else
      LV_CHECK(product_pattern(C, A, B));
    C->version = v + 1 > 0 ? v + 1 : 1;
    if (C->rp && product_flops(A, B) <= LV_SPM_PLAN_MAX) product_plan(C, A, B, bsrc);
  }
  free(C->val); /* a product written by lv_spm_product before keeps no values now */
  C->val = NULL;
  if (C->pl_p) {
    /* a small product by its plan: the same terms summed in the same order
     * per slot as below, without the row accumulator's scatter and gather
     * (a third of the instructions at four particles' 2-6 entries per row) */
    const int *cp = C->rp, *cc = C->ci, *pp = C->pl_p, *pa = C->pl_a, *pb = C->pl_b, *pk = C->pl_k;
    const double *av = A->val;
    size_t n = (size_t)S->n;
    int rc = 0;
    double chk = 0.0;
#define PLANNED_SLOT_SUM(p, acc)                                                                                    \
  for (int t = pp[p]; t < pp[p + 1]; t++) acc += av[pa[t]] * (dg ? dg[pk[t]] * bv[pb[t]] : bv[pb[t]])
    if (S->dense) {
      for (int i = 0; i < C->nrows; i++) {
        double f = rowscale ? scale * rowscale[i] : scale;
        double *row = S->D + (size_t)(r0 + i) + (size_t)c0 * n;
        for (int p = cp[i]; p < cp[i + 1]; p++) {
          double acc = 0.0;
          PLANNED_SLOT_SUM(p, acc);
          double v = f * acc;
          chk += v - v;
          row[(size_t)cc[p] * n] += v;
        }
      }
    } else { /* D is NULL here: no pointer into it is formed */
      for (int i = 0; i < C->nrows && !rc; i++) {
        double f = rowscale ? scale * rowscale[i] : scale;
        for (int p = cp[i]; p < cp[i + 1] && !rc; p++) {
          double acc = 0.0;
          PLANNED_SLOT_SUM(p, acc);
          rc = lv_assembly_add(S, r0 + i, c0 + cc[p], f * acc);
        }
      }
    }
#undef PLANNED_SLOT_SUM
    if (chk != 0.0) S->nonfinite = 1;
    return rc;
  }
  if (!C->rp) {
    /* no kept pattern: the row's columns are those its sum touches -- the
     * pattern product_pattern makes -- in the order first touched; the
     * assembly sums per position, so that order is not the sums' */
    double *acc = C->acc;
    unsigned char *mk = C->tmark;
    int *list = C->list;
    size_t n = (size_t)S->n;
    int rc = 0;
    double chk = 0.0; /* x - x is +0 for a finite x, NaN otherwise */
    for (int i = 0; i < C->nrows; i++) {
      int len = 0;
      for (int p = A->rp[i]; p < A->rp[i + 1]; p++) {
        double a = A->val[p];
        int k = A->ci[p];
        for (int q = B->rp[k]; q < B->rp[k + 1]; q++) {
          int j = B->ci[q];
          if (!mk[j]) {
            mk[j] = 1;
            list[len++] = j;
          }
          acc[j] += a * rhs_val(bv, bsrc, dg, k, q);
        }
      }
      double f = rowscale ? scale * rowscale[i] : scale;
      if (S->dense) {
        double *row = S->D + (size_t)(r0 + i) + (size_t)c0 * n;
        for (int t = 0; t < len; t++) {
          int j = list[t];
          double v = f * acc[j];
          acc[j] = 0.0;
          mk[j] = 0;
          chk += v - v;
          row[(size_t)j * n] += v;
        }
      } else {
        for (int t = 0; t < len; t++) {
          int j = list[t];
          double v = f * acc[j];
          acc[j] = 0.0;
          mk[j] = 0;
          if (!rc) rc = lv_assembly_add(S, r0 + i, c0 + j, v);
        }
      }
    }
    if (chk != 0.0) S->nonfinite = 1;
    return rc;
  }
  double *acc = C->acc;
  const int *cp = C->rp, *cc = C->ci;
  size_t n = (size_t)S->n;
  int rc = 0;
  double chk = 0.0;
  for (int i = 0; i < C->nrows; i++) {
    for (int p = A->rp[i]; p < A->rp[i + 1]; p++) {
      double a = A->val[p];
      int k = A->ci[p];
      /* B's row k and dg[k] read once (acc may alias them for the compiler) */
      const int q1 = B->rp[k + 1], *bc = B->ci;
      if (dg) {
        const double dk = dg[k];
        for (int q = B->rp[k]; q < q1; q++) acc[bc[q]] += a * (dk * (bsrc ? bv[bsrc[q]] : bv[q]));
      } else {
        for (int q = B->rp[k]; q < q1; q++) acc[bc[q]] += a * rhs_val(bv, bsrc, NULL, k, q);
      }
    }
    /* the row's values as lv_spm_product stores them, written as lv_spm_put
     * writes them: the same bits */
    double f = rowscale ? scale * rowscale[i] : scale;
    if (S->dense) {
      double *row = S->D + (size_t)(r0 + i) + (size_t)c0 * n;
      for (int p = cp[i]; p < cp[i + 1]; p++) {
        double v = f * acc[cc[p]];
        acc[cc[p]] = 0.0;
        chk += v - v;
        row[(size_t)cc[p] * n] += v;
      }
    } else {
      for (int p = cp[i]; p < cp[i + 1]; p++) {
        double v = f * acc[cc[p]];
        acc[cc[p]] = 0.0;
        if (!rc) rc = lv_assembly_add(S, r0 + i, c0 + cc[p], v);
      }
    }
  }
  if (chk != 0.0) S->nonfinite = 1;
  return rc;
}

LV_FLATTEN int lv_spm_product_put(lv_assembly *S, int r0, int c0, lv_spm *C, const lv_spm *A, const lv_spm *B,
                                  double scale, const double *rowscale) {
  if (!B->val || B->gather) return LV_EINPUT; /* a transpose pattern: lv_spm_product_put_diag */
  return product_put_(S, r0, c0, C, A, B, B->val, NULL, NULL, scale, rowscale);
}

LV_FLATTEN int lv_spm_product_put_diag(lv_assembly *S, int r0, int c0, lv_spm *C, const lv_spm *A, const double *dg,
                                       const lv_spm *B, double scale, const double *rowscale) {
  /* each case its own instance (dg and bsrc known there: the inner loop
   * keeps no test; 30 % of its instructions on four particles) */
  if (!B->gather) {
    if (!B->val) return LV_EINPUT;
    return dg ? product_put_(S, r0, c0, C, A, B, B->val, NULL, dg, scale, rowscale)
              : product_put_(S, r0, c0, C, A, B, B->val, NULL, NULL, scale, rowscale);
  }
  if (!B->opA || !B->perm || B->verA != B->opA->version) return LV_EINPUT;
  return dg ? product_put_(S, r0, c0, C, A, B, B->opA->val, B->perm, dg, scale, rowscale)
            : product_put_(S, r0, c0, C, A, B, B->opA->val, B->perm, NULL, scale, rowscale);
}

const double *lv_spm_diag_values(const lv_spm *A) {
  if (A->group || A->nrows != A->ncols || !A->rp || A->nnz != A->nrows) return NULL;
  for (int i = 0; i < A->nrows; i++)
    if (A->rp[i] != i || A->ci[i] != i) return NULL;
  return A->val;
}

/* ------------------------------------------------------------ products with vectors */

void lv_spm_matvec(const lv_spm *A, double alpha, const double *x, int acc, double *y) {
  for (int i = 0; i < A->nrows; i++) {
    double s = 0.0;
    for (int p = A->rp[i]; p < A->rp[i + 1]; p++) s += A->val[p] * x[A->ci[p]];
    y[i] = acc ? y[i] + alpha * s : alpha * s;
  }
}

void lv_spm_matvec_t(const lv_spm *A, double alpha, const double *x, int acc, double *y) {
  if (!acc) memset(y, 0, (size_t)A->ncols * sizeof(double));
  for (int i = 0; i < A->nrows; i++) {
    double xi = alpha * x[i];
    for (int p = A->rp[i]; p < A->rp[i + 1]; p++) y[A->ci[p]] += A->val[p] * xi;
  }
}

void lv_spm_absmatvec(const lv_spm *A, const double *x, double *y) {
  for (int i = 0; i < A->nrows; i++)
    for (int p = A->rp[i]; p < A->rp[i + 1]; p++) y[i] += fabs(A->val[p] * x[A->ci[p]]);
}

/* ------------------------------------------------------------ assembly */

LV_FLATTEN int lv_spm_put(lv_assembly *S, int r0, int c0, const lv_spm *A, double scale, const double *rowscale,
                          int transpose) {
  int rows = transpose ? A->ncols : A->nrows, cols = transpose ? A->nrows : A->ncols;
  if (r0 < 0 || c0 < 0 || r0 + rows > S->n || c0 + cols > S->n || A->group || A->gather) return LV_EINPUT;
  const int *rp = A->rp, *ci = A->ci;
  const double *val = A->val;
  if (S->dense) {
    /* the assembly's dense branch hoisted out of the loop: the same sums */
    double *D = S->D;
    size_t n = (size_t)S->n;
    double chk = 0.0;
    for (int i = 0; i < A->nrows; i++) {
      int p0 = rp[i], p1 = rp[i + 1];
      if (transpose) {
        double *col = D + (size_t)(c0 + i) * n + r0;
        if (rowscale)
          for (int p = p0; p < p1; p++) {
            double v = scale * rowscale[ci[p]] * val[p];
            chk += v - v;
            col[ci[p]] += v;
          }
        else
          for (int p = p0; p < p1; p++) {
            double v = scale * val[p];
            chk += v - v;
            col[ci[p]] += v;
          }
      } else {
        double f = rowscale ? scale * rowscale[i] : scale, *row = D + (size_t)(r0 + i) + (size_t)c0 * n;
        for (int p = p0; p < p1; p++) {
          double v = f * val[p];
          chk += v - v;
          row[(size_t)ci[p] * n] += v;
        }
      }
    }
    if (chk != 0.0) S->nonfinite = 1;
    return 0;
  }
  for (int i = 0; i < A->nrows; i++) {
    int p0 = rp[i], p1 = rp[i + 1];
    if (transpose) {
      for (int p = p0; p < p1; p++) {
        double v = rowscale ? scale * rowscale[ci[p]] * val[p] : scale * val[p];
        LV_CHECK(lv_assembly_add(S, r0 + ci[p], c0 + i, v));
      }
    } else {
      double f = rowscale ? scale * rowscale[i] : scale;
      for (int p = p0; p < p1; p++) LV_CHECK(lv_assembly_add(S, r0 + i, c0 + ci[p], f * val[p]));
    }
  }
  return 0;
}

int lv_spm_identity(lv_spm *A, int d) {
  lv_sink *s = lv_spm_begin(A);
  int rc = 0;
  for (int i = 0; i < d && !rc; i++) rc = lv_sink_add(s, i, i, 1.0);
  return lv_spm_end(A, rc);
}

/* ------------------------------------------------------------ mass matrix */

static int uf_find(int *par, int i) {
  while (par[i] != i) {
    par[i] = par[par[i]];
    i = par[i];
  }
  return i;
}

/* In-place inverse of the b x b column-major block B by Gauss-Jordan with
 * partial pivoting (blocks are small: a rigid body's 12 x 12 at most in the
 * built-in models). */
static int invert_block(int b, double *B, double *W) {
  /* W = identity, reduce [B | W] */
  memset(W, 0, (size_t)b * b * sizeof(double));
  for (int i = 0; i < b; i++) W[i + (size_t)i * b] = 1.0;
  double nrm = 0.0;
  for (int i = 0; i < b * b; i++) nrm = fmax(nrm, fabs(B[i]));
  for (int c = 0; c < b; c++) {
    int piv = c;
    for (int r = c + 1; r < b; r++)
      if (fabs(B[r + (size_t)c * b]) > fabs(B[piv + (size_t)c * b])) piv = r;
    double pv = B[piv + (size_t)c * b];
    if (!(fabs(pv) > b * DBL_EPSILON * nrm)) return LV_ESINGULAR;
    if (piv != c)
      for (int j = 0; j < b; j++) {
        double t = B[c + (size_t)j * b];
        B[c + (size_t)j * b] = B[piv + (size_t)j * b];
        B[piv + (size_t)j * b] = t;
        t = W[c + (size_t)j * b];
        W[c + (size_t)j * b] = W[piv + (size_t)j * b];
        W[piv + (size_t)j * b] = t;
      }
    for (int j = 0; j < b; j++) {
      B[c + (size_t)j * b] /= pv;
      W[c + (size_t)j * b] /= pv;
    }
    for (int r = 0; r < b; r++) {
      if (r == c) continue;
      double f = B[r + (size_t)c * b];
      if (f == 0.0) continue;
      for (int j = 0; j < b; j++) {
        B[r + (size_t)j * b] -= f * B[c + (size_t)j * b];
        W[r + (size_t)j * b] -= f * W[c + (size_t)j * b];
      }
    }
  }
  memcpy(B, W, (size_t)b * b * sizeof(double));
  return 0;
}

int lv_spm_mass(const lv_model *m, const double *q, int maxblock, lv_spm *M, lv_spm *Mi, double *diag) {
  int d = lv_model_nv(m);
  lv_spm_init(M, d, d);
  lv_spm_init(Mi, d, d);
  LV_CHECK(lv_spm_mass_matrix(m, q, M));
  /* diag(M), positive */
  for (int i = 0; i < d; i++) {
    diag[i] = 0.0;
    for (int p = M->rp[i]; p < M->rp[i + 1]; p++)
      if (M->ci[p] == i) diag[i] = M->val[p];
    if (!(diag[i] > 0.0)) return LV_EINPUT;
  }
  /* connected components of the pattern (non-zero entries only: a
   * structural zero couples nothing) */
  int *par = lv_calloc((size_t)d, sizeof(int)), *size = lv_calloc((size_t)d, sizeof(int));
  int *start = lv_calloc((size_t)d + 1, sizeof(int)), *memb = lv_calloc((size_t)d, sizeof(int));
  int *pos = lv_calloc((size_t)d, sizeof(int));
  double *B = NULL, *W = NULL;
  int rc = (!par || !size || !start || !memb || !pos) ? LV_ENOMEM : 0;
  if (!rc) {
    for (int i = 0; i < d; i++) par[i] = i;
    for (int i = 0; i < d; i++)
      for (int p = M->rp[i]; p < M->rp[i + 1]; p++)
        if (M->val[p] != 0.0) {
          int a = uf_find(par, i), b = uf_find(par, M->ci[p]);
          if (a != b) par[a < b ? b : a] = a < b ? a : b;
        }
    int bmax = 0;
    for (int i = 0; i < d; i++) {
      int r = uf_find(par, i);
      size[r]++;
      if (size[r] > bmax) bmax = size[r];
    }
    if (bmax > maxblock) rc = LV_ENOTIMPL;
    if (!rc) {
      /* members of each component in ascending order, grouped by root */
      for (int i = 0; i < d; i++) start[uf_find(par, i) + 1]++;
      for (int i = 0; i < d; i++) start[i + 1] += start[i];
      int *fill = pos; /* reuse as a cursor */
      memcpy(fill, start, (size_t)d * sizeof(int));
      for (int i = 0; i < d; i++) memb[fill[uf_find(par, i)]++] = i;
      /* Mi: row i holds the columns of i's component */
      Mi->rp = lv_calloc((size_t)d + 1, sizeof(int));
      size_t nnz = 0;
      for (int i = 0; i < d; i++) nnz += (size_t)size[uf_find(par, i)];
      Mi->ci = lv_calloc(nnz, sizeof(int));
      Mi->val = lv_calloc(nnz, sizeof(double));
      B = lv_calloc((size_t)bmax * bmax, sizeof(double));
      W = lv_calloc((size_t)bmax * bmax, sizeof(double));
      if (!Mi->rp || !Mi->ci || !Mi->val || !B || !W) rc = LV_ENOMEM;
      for (int i = 0; i < d && !rc; i++) Mi->rp[i + 1] = Mi->rp[i] + size[uf_find(par, i)];
      Mi->nnz = (int)nnz;
      for (int r = 0; r < d && !rc; r++) {
        if (uf_find(par, r) != r) continue;
        int b = size[r], *mem = memb + start[r];
        /* position of each member inside its block */
        for (int a = 0; a < b; a++) pos[mem[a]] = a;
        memset(B, 0, (size_t)b * b * sizeof(double));
        for (int a = 0; a < b; a++) {
          int i = mem[a];
          for (int p = M->rp[i]; p < M->rp[i + 1]; p++)
            if (uf_find(par, M->ci[p]) == r) B[a + (size_t)pos[M->ci[p]] * b] += M->val[p];
        }
        if (b == 1)
          B[0] = 1.0 / B[0];
        else
          rc = invert_block(b, B, W);
        for (int a = 0; a < b && !rc; a++) {
          int i = mem[a], p0 = Mi->rp[i];
          for (int c = 0; c < b; c++) {
            Mi->ci[p0 + c] = mem[c];
            Mi->val[p0 + c] = B[a + (size_t)c * b];
          }
        }
      }
      Mi->version = 1;
    }
  }
  free(par);
  free(size);
  free(start);
  free(memb);
  free(pos);
  free(B);
  free(W);
  return rc;
}

/* ------------------------------------------------------------ block sinks */

/* An add outside the block: flagged in the sink (lv_blk_sink.bad). */
static inline int blk_outside(lv_sink *s, int i, int j) {
  if ((unsigned)i < (unsigned)s->nrows && (unsigned)j < (unsigned)s->ncols) return 0;
  ((lv_blk_sink *)s)->bad = 1;
  return 1;
}

/* Each add's body once, inlined into the add and into its block add (one
 * call per block: the same operations on the same entries in the same
 * order as one add per entry). */
LV_ALWAYS_INLINE int blk_add1(lv_sink *s, int i, int j, double v) {
  lv_blk_sink *b = (lv_blk_sink *)s;
  if (blk_outside(s, i, j)) return LV_EINPUT;
  if (!isfinite(v)) b->bad = 1;
  lv_blk_put(b->A, b->r0, b->c0, b->scale, b->transpose, b->F, i, j, v);
  return 0;
}

LV_ALWAYS_INLINE int blk_add1_dense(lv_sink *s, int i, int j, double v) {
  lv_blk_sink *b = (lv_blk_sink *)s;
  if (blk_outside(s, i, j)) return LV_EINPUT;
  if (!isfinite(v)) b->bad = 1;
  lv_blk_put_dense(b->A, b->r0, b->c0, b->transpose, b->F, i, j, b->scale * v);
  return 0;
}

LV_ALWAYS_INLINE int blk_add1_rows(lv_sink *s, int i, int j, double v) {
  lv_blk_sink *b = (lv_blk_sink *)s;
  if (blk_outside(s, i, j)) return LV_EINPUT;
  if (!isfinite(v)) b->bad = 1;
  lv_assembly *A = b->A;
  double x = (b->rowscale ? b->scale * b->rowscale[i] : b->scale) * v;
  if (A->dense) {
    if (!isfinite(x)) A->nonfinite = 1;
    A->D[(size_t)(b->r0 + i) + (size_t)(b->c0 + j) * (size_t)A->n] += x;
    return 0;
  }
  return lv_assembly_add(A, b->r0 + i, b->c0 + j, x);
}

/* One finiteness test on the hot path: a non-finite v makes x non-finite
 * (f * inf is inf or NaN), so v is tested only then. */
LV_ALWAYS_INLINE int blk_add1_rows_dense(lv_sink *s, int i, int j, double v) {
  lv_blk_sink *b = (lv_blk_sink *)s;
  if (blk_outside(s, i, j)) return LV_EINPUT;
  double x = b->scale * b->rowscale[i] * v;
  if (LV_UNLIKELY(!isfinite(x))) {
    b->A->nonfinite = 1;
    if (!isfinite(v)) b->bad = 1;
  }
  b->D0[(size_t)i + (size_t)j * (size_t)b->A->n] += x;
  return 0;
}

int lv_blk_add(lv_sink *s, int i, int j, double v) { return blk_add1(s, i, j, v); }
int lv_blk_add_dense(lv_sink *s, int i, int j, double v) { return blk_add1_dense(s, i, j, v); }
int lv_blk_add_rows(lv_sink *s, int i, int j, double v) { return blk_add1_rows(s, i, j, v); }
int lv_blk_add_rows_dense(lv_sink *s, int i, int j, double v) { return blk_add1_rows_dense(s, i, j, v); }

LV_SINK_ADD_BLOCK_INLINE(, lv_blk_add_block, blk_add1, lv_blk_add)
LV_SINK_ADD_BLOCK_INLINE(, lv_blk_add_block_rows, blk_add1_rows, lv_blk_add_rows)
LV_SINK_ADD_BLOCK_INLINE(static, blk_block_each_dense, blk_add1_dense, lv_blk_add_dense)
LV_SINK_ADD_BLOCK_INLINE(static, blk_block_each_rows_dense, blk_add1_rows_dense, lv_blk_add_rows_dense)

/* A block inside the sink's extent (else entry by entry: the same status
 * after the same entries). */
static inline int blk_block_inside(const lv_sink *s, int i0, int j0, int nrows, int ncols) {
  return i0 >= 0 && j0 >= 0 && nrows >= 0 && ncols >= 0 && nrows <= s->nrows - i0 && ncols <= s->ncols - j0;
}

/* The dense back-end's blocks written out: per entry the value, position
 * and order of blk_add1_dense / blk_add1_rows_dense, the bounds tested
 * once, the finiteness as one sum (x - x is +0 for a finite x) and the
 * flags then set as the adds would have set them. */
static void blk_block_flags(lv_blk_sink *b, int nrows, int ncols, const double *a, int lda) {
  b->A->nonfinite = 1;
  for (int r = 0; r < nrows; r++)
    for (int c = 0; c < ncols; c++)
      if (!isfinite(a[(size_t)r * (size_t)lda + (size_t)c])) b->bad = 1;
}

/* Both dense block adds: entry (r, c) times f_r (the scale, times
 * rowscale[i0 + r] if given) added at D0 + (i0 + r) rs + (j0 + c) cs, D0
 * the block's (0, 0) in the dense matrix. */
LV_ALWAYS_INLINE int blk_block_dense(lv_blk_sink *b, double *D0, size_t rs, size_t cs, const double *rowscale, int i0,
                                     int j0, int nrows, int ncols, const double *a, int lda) {
  double chk = 0.0;
  const double sc = b->scale; /* read once: the stores into D could alias it as far as the compiler knows */
  for (int r = 0; r < nrows; r++) {
    const double f = rowscale ? sc * rowscale[i0 + r] : sc, *ar = a + (size_t)r * (size_t)lda;
    double *Dr = D0 + (size_t)(i0 + r) * rs + (size_t)j0 * cs;
    for (int c = 0; c < ncols; c++) {
      double x = f * ar[c];
      chk += x - x;
      Dr[(size_t)c * cs] += x;
    }
  }
  if (chk != 0.0) blk_block_flags(b, nrows, ncols, a, lda);
  return 0;
}

int lv_blk_add_block_dense(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda) {
  lv_blk_sink *b = (lv_blk_sink *)s;
  if (s->add != lv_blk_add_dense || b->F || !blk_block_inside(s, i0, j0, nrows, ncols))
    return blk_block_each_dense(s, i0, j0, nrows, ncols, a, lda);
  const size_t n = (size_t)b->A->n; /* the strides of i and j */
  return blk_block_dense(b, b->A->D + (size_t)b->r0 + (size_t)b->c0 * n, b->transpose ? n : 1, b->transpose ? 1 : n, NULL,
                         i0, j0, nrows, ncols, a, lda);
}

int lv_blk_add_block_rows_dense(lv_sink *s, int i0, int j0, int nrows, int ncols, const double *a, int lda) {
  lv_blk_sink *b = (lv_blk_sink *)s;
  if (s->add != lv_blk_add_rows_dense || !blk_block_inside(s, i0, j0, nrows, ncols))
    return blk_block_each_rows_dense(s, i0, j0, nrows, ncols, a, lda);
  return blk_block_dense(b, b->D0, 1, (size_t)b->A->n, b->rowscale, i0, j0, nrows, ncols, a, lda);
}
