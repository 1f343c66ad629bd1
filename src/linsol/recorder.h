/* The position-sequence recorder (internal, not installed): the one pattern
 * cache behind the solver's assembly (assembly.h) and the schemes' captured
 * matrices (schemes/spmat.h).
 *
 * A writer makes a sequence of adds (i, j, v).  The recorder keeps the
 * sequence of its last recording and compares each add with it: add number
 * k at the recorded k-th position gets the slot map[k] the recording gave
 * it, and the value goes straight there (lv_recorder_add: no search, no
 * sort).  This lets a writer add in any order it likes, provided it is
 * the same order every time.  Leaving the sequence is not an
 * error: from the first add off it the positions and values are kept (ci,
 * cj, cv), and lv_recorder_record records the new sequence as the pattern
 * and sums the slots' values so far and the kept values into the new
 * slots, so a change half-way needs no replay.  A shorter sequence that matched so far is a new one too.
 *
 * A recording is compressed by a key index (the column, or the row), with
 * the other index in idx: merged (each position once, the other index
 * ascending in each key: CSC or CSR) or grouped (one slot per add, the
 * adds of a key in add order).  The values are summed per slot in add
 * order, so a writer that adds the same terms in the same order gets the
 * same bits whatever the layout above it. */
#ifndef LIVENS_LINSOL_RECORDER_H
#define LIVENS_LINSOL_RECORDER_H

#include <stddef.h>
#include "livens/lv_status.h"

typedef struct lv_recorder lv_recorder;
struct lv_recorder {
  /* the running sequence */
  size_t cnt;      /* adds so far */
  size_t cap;      /* capacity of ci/cj (and of cv off the recording); 0: not allocated */
  int *ci, *cj;    /* positions of the adds, only while off the recording (allocated when
                    * the sequence leaves it, freed when it is recorded) */
  double *cv;      /* values of the adds: of every add with keep, else only of those off the
                    * recording (the adds on it are in their slots) */
  int keep;        /* keep every add's value (writers that read the call-order sequence:
                    * the grouped captures of schemes/spmat.h); set before the first add */
  int match;       /* every add so far hit the recorded position of its index */
  size_t mis;      /* index of the first add off the recorded sequence */
  int oom;         /* an add was lost for lack of memory: the sequence is incomplete */
  /* the recording */
  int *ri, *rj;  /* its position sequence, with keep only (the call-order sequence's readers) */
  int *map;      /* the slot of each add, with ri and rj (else coded: md, mx) */
  /* A large recording without keep drops ri, rj and map and codes its
   * slots (LV_RECORDER_KEEP_POS, pos_min): add k's slot is add k-1's plus md[k] (add -1's is 0), or,
   * where md[k] is LV_RECORDER_ESC, mx[e] for the e-th such add.  The adds
   * come in sequence, so the running slot (cur) and escape count (curx)
   * decode it; 1 byte per add instead of 4 (the chain's Newton matrix under
   * EM and VI-A: 93 adds per particle, 11 escapes whatever N). */
  signed char *md;
  int *mx;
  int cur;       /* slot of add cnt - 1 while on a coded recording */
  size_t curx;   /* escapes among adds 0 .. cnt - 1 */
  const int *rp, *rx; /* the writer's ptr and idx of the recording: without keep, slot map[k]
                       * is where add k's position is read (key g holds slots rp[g] .. rp[g+1]-1,
                       * rx[slot] the other index) */
  size_t rcnt;
  int rmerge;    /* the recording's layout is merged */
  int rbycol;    /* its key is the column */
  int rnkeys;    /* its key count */
  size_t pos_min; /* without keep, a recording of fewer adds keeps ri and rj (0: LV_RECORDER_KEEP_POS) */
  long version;  /* changes whenever a sequence is recorded; 0: none */
  long recorded; /* recordings so far */
};

/* Memory: a recorder on its recording of at least pos_min adds
 * (LV_RECORDER_KEEP_POS unless set) holds 1 byte per add (md, and 4 per
 * escape), 20 with keep (map, ri, rj, cv); a smaller recording keeps map,
 * ri and rj in any case; only a sequence off the
 * recording holds its positions and values (16 more per add), until it is
 * recorded.  Without ri and rj an add's position is checked against its
 * slot in the writer's arrays, which must then stay as the recording gave
 * them (*ptr, *idx of lv_recorder_record) until the next recording. */
enum { LV_RECORDER_KEEP_POS = 1 << 16, LV_RECORDER_ESC = -128 };

/* An empty recorder (zeroed memory is one too) with room for @p cap adds.
 * Status 0 or LV_ENOMEM (it can be freed either way). */
int lv_recorder_init(lv_recorder *r, size_t cap);
void lv_recorder_free(lv_recorder *r);

/* Start a sequence; returns 1 if there is a recording to compare with
 * (the writer then zeroes its slot values), else 0. */
static inline int lv_recorder_begin(lv_recorder *r) {
  r->cnt = 0;
  r->oom = 0;
  r->mis = 0;
  r->match = r->version != 0;
  r->cur = 0;
  r->curx = 0;
  return r->match;
}

int lv_recorder_grow_(lv_recorder *r);
int lv_recorder_leave_(lv_recorder *r, size_t k);

#ifndef LV_UNLIKELY
#if defined(__GNUC__)
#define LV_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LV_UNLIKELY(x) (x)
#endif
#endif

#ifndef LV_ALWAYS_INLINE
#if defined(__GNUC__)
#define LV_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define LV_ALWAYS_INLINE static inline
#endif
#endif

/* Add at (i, j) with value v.  While the sequence is the recorded one, v
 * goes straight into its slot of the writer's values @p slots (summed; with
 * @p assign stored, for a layout with no position twice); off it, v is
 * kept for lv_recorder_record.  Status 0 or LV_ENOMEM (the add is lost). */
/* Add k (k < rcnt) of the running sequence is at the recorded position:
 * with ri, rj (a small recording, or keep) those are compared, and its slot
 * is map[k]; otherwise the slot decoded from md, mx must hold the position
 * in the writer's arrays, and becomes cur. */
LV_ALWAYS_INLINE int lv_recorder_on_(lv_recorder *r, size_t k, int i, int j) {
  if (r->ri) return r->ri[k] == i && r->rj[k] == j;
  int dl = r->md[k], s;
  size_t e = r->curx;
  if (LV_UNLIKELY(dl == LV_RECORDER_ESC))
    s = r->mx[e++];
  else
    s = r->cur + dl;
  int key = r->rbycol ? j : i, oth = r->rbycol ? i : j;
  if (!((unsigned)key < (unsigned)r->rnkeys && r->rx[s] == oth && r->rp[key] <= s && s < r->rp[key + 1]))
    return 0;
  r->cur = s;
  r->curx = e;
  return 1;
}

LV_ALWAYS_INLINE int lv_recorder_put_(lv_recorder *r, double *slots, int i, int j, double v, int assign) {
  size_t k = r->cnt;
  if (r->match) {
    if (k < r->rcnt && lv_recorder_on_(r, k, i, j)) {
      int s = r->ri ? r->map[k] : r->cur;
      r->cnt = k + 1;
      if (r->keep) r->cv[k] = v; /* cv holds rcnt values with keep */
      if (assign)
        slots[s] = v;
      else
        slots[s] += v;
      return 0;
    }
    if (lv_recorder_leave_(r, k) != 0) {
      r->oom = 1;
      return LV_ENOMEM;
    }
  }
  if (k >= r->cap && lv_recorder_grow_(r) != 0) {
    r->oom = 1;
    return LV_ENOMEM;
  }
  r->cnt = k + 1;
  r->cv[k] = v;
  r->ci[k] = i;
  r->cj[k] = j;
  return 0;
}

static inline int lv_recorder_add(lv_recorder *r, double *slots, int i, int j, double v) {
  return lv_recorder_put_(r, slots, i, j, v, 0);
}

static inline int lv_recorder_set(lv_recorder *r, double *slots, int i, int j, double v) {
  return lv_recorder_put_(r, slots, i, j, v, 1);
}

/* Position of add k of the running sequence (k < cnt). */
void lv_recorder_pos(const lv_recorder *r, size_t k, int *i, int *j);

/* Slot of add k (k < rcnt) of the recording: O(1), or O(k) for a coded
 * one (tests and the recorder's own slow paths). */
int lv_recorder_slot(const lv_recorder *r, size_t k);

/* Forget the recording: the next sequence is recorded whatever it is. */
static inline void lv_recorder_forget(lv_recorder *r) {
  r->version = 0;
  r->rcnt = 0;
}

/* The running sequence is the recorded one, complete: the slots hold the
 * values, there is nothing to finish. */
static inline int lv_recorder_replayed(const lv_recorder *r) {
  return r->match && r->cnt == r->rcnt && !r->oom;
}

/* Complete a sequence that is not lv_recorder_replayed: it becomes the
 * recording (version changes), keyed by the column if @p by_col, else by
 * the row, @p nkeys keys, other index below @p nother; @p merge: duplicates
 * merged, the other index ascending, else one slot per add in add order.
 * *ptr (nkeys + 1), *idx and *val (nnz) are reallocated, *nnz set, and
 * *val summed in add order: without keep, the adds made on the recording
 * before the sequence left it are taken as their slots' sums so far (which
 * are those adds' sums in add order), so such a recorder must keep its
 * layout (@p merge) from one recording to the next (LV_EINPUT otherwise).
 * Status 0, LV_ENOMEM (also for an add lost earlier: then the recording is
 * kept, its slot values incomplete), LV_ELINSOL (more than INT_MAX adds). */
int lv_recorder_record(lv_recorder *r, int by_col, int merge, int nkeys, int nother, int **ptr, int **idx,
                       double **val, int *nnz);

#endif
