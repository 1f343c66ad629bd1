/* The position-sequence recorder: see recorder.h. */
#include "recorder.h"
#include <limits.h>
#include "lv_internal.h"

/* *p resized to n elements (n > 0); on failure *p is left as it was. */
static int resize_int(int **p, size_t n) {
  int *q = realloc(*p, n * sizeof(int));
  if (q == NULL) return LV_ENOMEM;
  *p = q;
  return 0;
}

static int resize_double(double **p, size_t n) {
  double *q = realloc(*p, n * sizeof(double));
  if (q == NULL) return LV_ENOMEM;
  *p = q;
  return 0;
}

/* Room for cap adds off the recording: positions and values. */
static int reserve(lv_recorder *r, size_t cap) {
  LV_CHECK(resize_int(&r->ci, cap));
  LV_CHECK(resize_int(&r->cj, cap));
  LV_CHECK(resize_double(&r->cv, cap));
  r->cap = cap;
  return 0;
}

int lv_recorder_init(lv_recorder *r, size_t cap) {
  memset(r, 0, sizeof *r);
  return cap ? reserve(r, cap) : 0;
}

/* Room for one more add off the recording (cnt < cap after it); with keep
 * at least the recorded count, so cv keeps the values of a replay. */
int lv_recorder_grow_(lv_recorder *r) {
  size_t c = r->cap ? 2 * r->cap : 64;
  if (c < r->rcnt) c = r->rcnt;
  if (c <= r->cnt) c = 2 * r->cnt + 1;
  return reserve(r, c);
}

void lv_recorder_free(lv_recorder *r) {
  size_t pm = r->pos_min;
  free(r->ci);
  free(r->cj);
  free(r->cv);
  free(r->ri);
  free(r->rj);
  free(r->map);
  free(r->md);
  free(r->mx);
  memset(r, 0, sizeof *r);
  r->pos_min = pm;
}

/* Key of each slot of the recording (a new array of rp[rnkeys] entries, at
 * least one), or NULL for lack of memory. */
static int *slot_keys(const lv_recorder *r) {
  int nz = r->rp[r->rnkeys];
  int *sk = malloc((nz ? (size_t)nz : 1) * sizeof(int));
  if (sk)
    for (int g = 0; g < r->rnkeys; g++)
      for (int s = r->rp[g]; s < r->rp[g + 1]; s++) sk[s] = g;
  return sk;
}

int lv_recorder_slot(const lv_recorder *r, size_t k) {
  if (r->map) return r->map[k];
  int s = 0;
  size_t e = 0;
  for (size_t a = 0; a <= k; a++) s = r->md[a] == LV_RECORDER_ESC ? r->mx[e++] : s + r->md[a];
  return s;
}

/* The slots of a recording coded in md, mx (see recorder.h): 1 byte per
 * add, 4 more per escape; the caller frees the map.  Status 0 or
 * LV_ENOMEM (then nothing is coded). */
static int code_slots(lv_recorder *r) {
  size_t n = r->cnt, ne = 0;
  int prev = 0;
  for (size_t k = 0; k < n; k++) {
    int dl = r->map[k] - prev;
    if (dl <= LV_RECORDER_ESC || dl > 127) ne++;
    prev = r->map[k];
  }
  signed char *md = malloc(n ? n : 1);
  int *mx = malloc((ne ? ne : 1) * sizeof(int));
  if (!md || !mx) {
    free(md);
    free(mx);
    return LV_ENOMEM;
  }
  prev = 0;
  ne = 0;
  for (size_t k = 0; k < n; k++) {
    int dl = r->map[k] - prev;
    if (dl <= LV_RECORDER_ESC || dl > 127) {
      md[k] = (signed char)LV_RECORDER_ESC;
      mx[ne++] = r->map[k];
    } else {
      md[k] = (signed char)dl;
    }
    prev = r->map[k];
  }
  r->md = md;
  r->mx = mx;
  return 0;
}

/* Add k left the recorded sequence: the positions before it were the
 * recorded ones (their values are in cv with keep, else in their slots). */
int lv_recorder_leave_(lv_recorder *r, size_t k) {
  if (k >= r->cap) LV_CHECK(lv_recorder_grow_(r));
  if (k > 0 && r->ri) {
    memcpy(r->ci, r->ri, k * sizeof(int));
    memcpy(r->cj, r->rj, k * sizeof(int));
  } else if (k > 0) {
    int *sk = slot_keys(r);
    if (sk == NULL) return LV_ENOMEM;
    int *key = r->rbycol ? r->cj : r->ci, *oth = r->rbycol ? r->ci : r->cj;
    int sl = 0;
    size_t e = 0;
    for (size_t a = 0; a < k; a++) {
      sl = r->map ? r->map[a] : r->md[a] == LV_RECORDER_ESC ? r->mx[e++] : sl + r->md[a];
      key[a] = sk[sl];
      oth[a] = r->rx[sl];
    }
    free(sk);
  }
  r->match = 0;
  r->mis = k;
  return 0;
}

void lv_recorder_pos(const lv_recorder *r, size_t k, int *i, int *j) {
  if (!(r->match || k < r->mis)) { /* off the recorded sequence */
    *i = r->ci[k];
    *j = r->cj[k];
  } else if (r->ri) {
    *i = r->ri[k];
    *j = r->rj[k];
  } else {
    int s = lv_recorder_slot(r, k), lo = 0, hi = r->rnkeys - 1; /* the key g with rp[g] <= s < rp[g + 1] */
    while (lo < hi) {
      int mid = lo + (hi - lo + 1) / 2;
      if (r->rp[mid] <= s)
        lo = mid;
      else
        hi = mid - 1;
    }
    *i = r->rbycol ? r->rx[s] : lo;
    *j = r->rbycol ? lo : r->rx[s];
  }
}

/* The running sequence becomes the recording: keys in ptr, the other index
 * in idx, the add -> slot map.  Merged: two stable counting sorts (by the
 * other index, then by the key) and duplicates merged, O(cnt + nkeys +
 * nother); grouped: one counting pass. */
static int record(lv_recorder *r, int by_col, int merge, int nkeys, int nother, int **ptr, int **idx, int *nnz) {
  const size_t cnt = r->cnt;
  lv_recorder_forget(r); /* no valid recording until the end */
  if (cnt > (size_t)INT_MAX) return LV_ELINSOL; /* the int APIs' limit */
  size_t c1 = cnt ? cnt : 1;
  /* the running positions become the recorded ones (no copy), fitted;
   * they are dropped at the end without keep */
  free(r->ri);
  free(r->rj);
  r->ri = r->ci;
  r->rj = r->cj;
  r->ci = r->cj = NULL;
  r->cap = 0;
  r->rp = r->rx = NULL;
  LV_CHECK(resize_int(&r->ri, c1));
  LV_CHECK(resize_int(&r->rj, c1));
  LV_CHECK(resize_int(&r->map, c1));
  LV_CHECK(resize_int(ptr, (size_t)nkeys + 1));
  LV_CHECK(resize_int(idx, c1));
  int *ri = r->ri, *rj = r->rj, *map = r->map, *p = *ptr, *x = *idx;
  const int *key = by_col ? rj : ri, *oth = by_col ? ri : rj;
  memset(p, 0, ((size_t)nkeys + 1) * sizeof(int));
  if (!merge) {
    for (size_t k = 0; k < cnt; k++) p[key[k] + 1]++;
    for (int g = 0; g < nkeys; g++) p[g + 1] += p[g];
    /* p[g] is the cursor of key g while filling, then the end of g */
    for (size_t k = 0; k < cnt; k++) {
      int s = p[key[k]]++;
      map[k] = s;
      x[s] = oth[k];
    }
    for (int g = nkeys; g > 0; g--) p[g] = p[g - 1];
    p[0] = 0;
    *nnz = (int)cnt;
  } else {
    /* the two orders are kept in map (by the other index) and in x (then
     * by the key), which the merge overwrites behind its reading position:
     * no array of the add count besides the results */
    int nmax = nkeys > nother ? nkeys : nother;
    int *count = lv_calloc((size_t)nmax + 1, sizeof(int));
    if (!count) return LV_ENOMEM;
    for (size_t k = 0; k < cnt; k++) count[oth[k] + 1]++;
    for (int o = 0; o < nother; o++) count[o + 1] += count[o];
    for (size_t k = 0; k < cnt; k++) map[count[oth[k]]++] = (int)k;
    memset(count, 0, ((size_t)nkeys + 1) * sizeof(int));
    for (size_t k = 0; k < cnt; k++) count[key[k] + 1]++;
    for (int g = 0; g < nkeys; g++) count[g + 1] += count[g];
    for (size_t s = 0; s < cnt; s++) {
      int k = map[s];
      x[count[key[k]]++] = k;
    }
    int nz = 0, lk = -1, lo = -1;
    for (size_t s = 0; s < cnt; s++) {
      int k = x[s]; /* read before x[nz] (nz <= s) is written */
      if (key[k] != lk || oth[k] != lo) {
        lk = key[k];
        lo = oth[k];
        x[nz++] = lo;
        p[lk + 1]++;
      }
      map[k] = nz - 1;
    }
    for (int g = 0; g < nkeys; g++) p[g + 1] += p[g];
    *nnz = nz;
    if ((size_t)nz < cnt) (void)resize_int(idx, nz ? (size_t)nz : 1); /* merged: idx was sized for every add */
    free(count);
  }
  return 0;
}

int lv_recorder_record(lv_recorder *r, int by_col, int merge, int nkeys, int nother, int **ptr, int **idx,
                       double **val, int *nnz) {
  if (r->oom) return LV_ENOMEM;
  /* a shorter sequence that matched so far: its positions are the recorded ones */
  if (r->match) LV_CHECK(lv_recorder_leave_(r, r->cnt));
  /* Without keep, the adds before the sequence left the recording have
   * their values only in their slots, summed in add order: each such add
   * takes its old slot's value into its new slot (a slot is one position
   * in a merged layout, one add in a grouped one, so in the same layout
   * the old slot holds exactly the sum so far of the new slot's adds). */
  size_t pre = r->keep ? 0 : r->mis;
  if (pre > 0 && (merge != 0) != r->rmerge) return LV_EINPUT;
  int *omap = NULL, *omx = NULL;
  signed char *omd = NULL;
  double *oval = NULL;
  if (pre > 0) {
    omap = r->map;
    omd = r->md;
    omx = r->mx;
    oval = *val;
    r->map = NULL;
    *val = NULL;
    *nnz = 0;
  } else {
    free(r->md);
    free(r->mx);
  }
  r->md = NULL;
  r->mx = NULL;
  int rc = record(r, by_col, merge, nkeys, nother, ptr, idx, nnz);
  /* Without keep the positions are read from the slots (lv_recorder_on_)
   * for a large recording (a small one keeps them, whose check is cheaper:
   * the small systems' captures, 3.5 % of a VI-A step on four particles).
   * They go before the values are allocated: the first assembly of a large
   * matrix holds the recorder's arrays all at once. */
  int drop_pos = !r->keep && r->cnt >= (r->pos_min ? r->pos_min : (size_t)LV_RECORDER_KEEP_POS);
  if (rc == 0 && drop_pos && code_slots(r) == 0) { /* else ri, rj and map are kept: safe */
    free(r->ri);
    free(r->rj);
    r->ri = r->rj = NULL;
  }
  size_t z = *nnz ? (size_t)*nnz : 1;
  if (rc == 0) rc = resize_double(val, z);
  if (rc == 0) {
    double *v = *val;
    memset(v, 0, z * sizeof(double));
    int os = 0;
    size_t e = 0;
    for (size_t k = 0; k < pre; k++) {
      os = omap ? omap[k] : omd[k] == LV_RECORDER_ESC ? omx[e++] : os + omd[k];
      v[r->map[k]] = oval[os];
    }
    for (size_t k = pre; k < r->cnt; k++) v[r->map[k]] += r->cv[k];
  }
  free(omap);
  free(omd);
  free(omx);
  free(oval);
  if (r->md) { /* coded: the map served the sums above */
    free(r->map);
    r->map = NULL;
  }
  if (rc != 0) return rc;
  /* The values of the adds off the recording are summed into the slots:
   * only keep needs them (a replay writes every value again).  A shrink
   * that fails leaves its array larger, which is safe. */
  r->rp = *ptr;
  r->rx = *idx;
  r->rbycol = by_col != 0;
  r->rnkeys = nkeys;
  if (!r->keep) {
    free(r->cv);
    r->cv = NULL;
  }
  if (r->keep && r->cnt > 0) {
    (void)resize_double(&r->cv, r->cnt);
  }
  r->rcnt = r->cnt;
  r->rmerge = merge != 0;
  r->version = ++r->recorded;
  r->match = 1;
  r->mis = r->cnt;
  return 0;
}
