/* The schemes' capture kit (schemes/spmat.h): a callback's entries captured
 * into a merged CSR matrix or a grouped one (by row / by column, one slot
 * per add, call order), the pattern learnt once and replayed, a changed
 * position sequence recorded again, and the block sinks that write a
 * captured matrix (times a grouped factor) into the solver's assembly. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "schemes/spmat.h"
#include "space/group.h"
#include "testutil.h"

/* A callback writing a fixed list of triplets. */
typedef struct {
  int n;
  int i[32], j[32];
  double v[32];
} trip;

static int fill_trip(void *ctx, lv_sink *s) {
  trip *t = ctx;
  for (int k = 0; k < t->n; k++) LV_CHECK(lv_sink_add(s, t->i[k], t->j[k], t->v[k]));
  return 0;
}

static void set_trip(trip *t, int n, const int *i, const int *j, const double *v) {
  t->n = n;
  for (int k = 0; k < n; k++) {
    t->i[k] = i[k];
    t->j[k] = j[k];
    t->v[k] = v[k];
  }
}

/* entry (i, j) of a merged CSR matrix (0 if not in the pattern) */
static double csr_at(const lv_spm *A, int i, int j) {
  for (int p = A->rp[i]; p < A->rp[i + 1]; p++)
    if (A->ci[p] == j) return A->val[p];
  return 0.0;
}

/* A sink that lists its adds (the values in call order). */
typedef struct {
  lv_sink sink;
  int n;
  double v[256];
} listing;

static int listing_add(lv_sink *s, int i, int j, double v) {
  (void)i, (void)j;
  listing *l = (listing *)s;
  if (l->n < 256) l->v[l->n] = v;
  l->n++;
  return 0;
}

typedef struct {
  const lv_space *sp;
  const double *w;
} tangent_ctx;

static int fill_tangent(void *ctx, lv_sink *s) {
  const tangent_ctx *c = ctx;
  return lv_space_tangent(c->sp, c->w, s);
}

static int bits_same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* lv_space_tangent_values: the values lv_space_tangent adds, in number and
 * order, bit for bit, on every kind of factor and on a product of them, at
 * rotation vectors from zero through tiny to beyond pi; and a grouped or
 * merged capture of T on its own recording (lv_spm_tangent) takes them
 * into the slots a fresh callback capture fills, bit for bit. */
START_TEST(test_tangent_values) {
  static const lv_factor_kind kinds[] = {LV_FACTOR_RN, LV_FACTOR_SO3, LV_FACTOR_S3, LV_FACTOR_R3SO3, LV_FACTOR_SE3,
                                         LV_FACTOR_UDQ};
  const int nk = (int)(sizeof kinds / sizeof kinds[0]);
  static const double scales[] = {0.0, 1e-9, 1e-3, 0.7, 4.0};
  for (int s = 0; s <= nk; s++) { /* each kind alone, then all of them (R^2 between) */
    lv_space *sp = NULL;
    ck_assert_int_eq(lv_space_new(&sp), 0);
    for (int k = 0; k < nk; k++)
      if (s == nk || k == s) {
        ck_assert_int_eq(lv_space_add(sp, kinds[k], 4), 0);
        if (s == nk) ck_assert_int_eq(lv_space_add(sp, LV_FACTOR_RN, 2), 0);
      }
    int nv = lv_space_nv(sp);
    double w[64];
    ck_assert_int_le(nv, 64);
    for (int c = 0; c < (int)(sizeof scales / sizeof scales[0]); c++) {
      for (int i = 0; i < nv; i++) w[i] = scales[c] * (0.3 + 0.1 * i) * (i % 2 ? -1.0 : 1.0);
      listing L = {.sink = {.add = listing_add, .nrows = nv, .ncols = nv, .scale = 1.0}};
      ck_assert_int_eq(lv_space_tangent(sp, w, &L.sink), 0);
      ck_assert_int_le(L.n, 256);
      double v[256];
      ck_assert_uint_eq(lv_space_tangent_values(sp, w, v, 256), (size_t)L.n);
      for (int k = 0; k < L.n; k++)
        ck_assert_msg(bits_same(v[k], L.v[k]), "space %d case %d entry %d: %.17g vs %.17g", s, c, k, v[k], L.v[k]);
      /* too little room: the count, nothing written past it */
      double small[4] = {-1.0, -1.0, -1.0, -1.0};
      ck_assert_uint_eq(lv_space_tangent_values(sp, w, small, 2), (size_t)L.n);
      ck_assert(small[2] == -1.0 && small[3] == -1.0);
      for (int grouped = 0; grouped < 2; grouped++) {
        lv_spm A, B;
        if (grouped)
          lv_spm_init_grouped(&A, 0), lv_spm_init_grouped(&B, 0);
        else
          lv_spm_init(&A, nv, nv), lv_spm_init(&B, nv, nv);
        double w1[64];
        for (int i = 0; i < nv; i++) w1[i] = 0.5 - w[i];
        ck_assert_int_eq(lv_spm_tangent(sp, w1, &A), 0); /* records */
        ck_assert_ptr_eq(A.vsrc, sp);
        long ver = A.version;
        ck_assert_int_eq(lv_spm_tangent(sp, w, &A), 0); /* from the values */
        ck_assert_int_eq(A.version, ver);                /* the pattern kept */
        /* the callback's capture on its own recording (a first capture
         * sums onto +0, a replay assigns: a -0 differs between the two) */
        tangent_ctx tc = {sp, w1};
        ck_assert_int_eq(lv_spm_fill(&B, nv, nv, fill_tangent, &tc), 0);
        tc.w = w;
        ck_assert_int_eq(lv_spm_fill(&B, nv, nv, fill_tangent, &tc), 0);
        ck_assert_int_eq(A.nnz, B.nnz);
        for (int k = 0; k < A.nnz; k++)
          ck_assert_msg(bits_same(A.val[k], B.val[k]), "space %d case %d %s slot %d: %.17g vs %.17g", s, c,
                        grouped ? "grouped" : "merged", k, A.val[k], B.val[k]);
        lv_spm_free(&A);
        lv_spm_free(&B);
      }
    }
    lv_space_free(sp);
  }
}
END_TEST

START_TEST(test_merged_capture) {
  lv_spm A;
  lv_spm_init(&A, 3, 4);
  trip t;
  int i1[] = {2, 0, 2, 0}, j1[] = {1, 3, 1, 0};
  double v1[] = {0.1, 2.0, 0.7, -3.0};
  set_trip(&t, 4, i1, j1, v1);
  ck_assert_int_eq(lv_spm_fill(&A, 3, 4, fill_trip, &t), 0);
  ck_assert_int_eq(A.nnz, 3); /* (2, 1) merged */
  ck_assert_int_eq(A.rp[1] - A.rp[0], 2);
  ck_assert_int_eq(A.ci[A.rp[0]], 0); /* columns ascending */
  ck_assert(csr_at(&A, 2, 1) == (0.0 + 0.1) + 0.7);
  long ver = A.version;
  /* same sequence, new values: values only */
  double v2[] = {1e-17, 5.0, 1.0, 4.0};
  set_trip(&t, 4, i1, j1, v2);
  ck_assert_int_eq(lv_spm_fill(&A, 3, 4, fill_trip, &t), 0);
  ck_assert_int_eq(A.version, ver);
  ck_assert(csr_at(&A, 2, 1) == (0.0 + 1e-17) + 1.0);
  ck_assert(csr_at(&A, 0, 3) == 5.0 && csr_at(&A, 0, 0) == 4.0);
  /* a prefix of the sequence, then a different one: new patterns */
  set_trip(&t, 2, i1, j1, v2);
  ck_assert_int_eq(lv_spm_fill(&A, 3, 4, fill_trip, &t), 0);
  ck_assert_int_gt(A.version, ver);
  ck_assert_int_eq(A.nnz, 2);
  ck_assert(csr_at(&A, 2, 1) == 1e-17 && csr_at(&A, 0, 0) == 0.0);
  int i3[] = {1, 2}, j3[] = {2, 1};
  double v3[] = {6.0, 7.0};
  set_trip(&t, 2, i3, j3, v3);
  ver = A.version;
  ck_assert_int_eq(lv_spm_fill(&A, 3, 4, fill_trip, &t), 0);
  ck_assert_int_gt(A.version, ver);
  ck_assert(csr_at(&A, 1, 2) == 6.0 && csr_at(&A, 2, 1) == 7.0 && csr_at(&A, 0, 3) == 0.0);
  /* out of bounds, and a merged matrix keeps its shape */
  int i4[] = {3}, j4[] = {0};
  set_trip(&t, 1, i4, j4, v3);
  ck_assert_int_eq(lv_spm_fill(&A, 3, 4, fill_trip, &t), LV_EINPUT);
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip, &t), LV_EINPUT);
  lv_spm_free(&A);
}
END_TEST

/* Grouped layouts: the groups hold the adds in call order, nothing merged,
 * and their values are exactly the adds' (replays too, -0 included). */
START_TEST(test_grouped) {
  int i1[] = {1, 0, 1, 2, 0, 1}, j1[] = {2, 1, 0, 2, 1, 2};
  double v1[] = {1.5, -2.0, 3.0, 0.25, 8.0, -0.0};
  for (int by_col = 0; by_col < 2; by_col++) {
    lv_spm A;
    lv_spm_init_grouped(&A, by_col);
    trip t;
    for (int dup = 1; dup >= 0; dup--) {
      /* with dup: (1, 2) and (0, 1) twice; without: the first four adds */
      int n = dup ? 6 : 4;
      set_trip(&t, n, i1, j1, v1);
      for (int rep = 0; rep < 3; rep++) {
        if (rep == 2)
          for (int k = 0; k < n; k++) t.v[k] = k % 2 ? -0.0 : (double)(k + rep);
        ck_assert_int_eq(lv_spm_fill(&A, 3, 3, fill_trip, &t), 0);
        ck_assert_int_eq(A.nnz, n);
        ck_assert_int_eq(A.nodup, !dup);
        /* the slots of each key in call order */
        int slot = 0;
        for (int g = 0; g < 3; g++) {
          ck_assert_int_eq(A.rp[g], slot);
          for (int k = 0; k < n; k++) {
            if ((by_col ? t.j[k] : t.i[k]) != g) continue;
            ck_assert_int_eq(A.ci[slot], by_col ? t.i[k] : t.j[k]);
            if (rep > 0 && !dup) /* a replay assigns: the bits of the add */
              ck_assert(memcmp(&A.val[slot], &t.v[k], sizeof(double)) == 0);
            else
              ck_assert(A.val[slot] == t.v[k]);
            slot++;
          }
        }
        ck_assert_int_eq(A.rp[3], n);
        /* y += A x, A^T x in call order */
        double x[3] = {0.3, -1.1, 2.7}, y[3] = {1, 1, 1}, yt[3] = {0, 0, 0}, r[3] = {1, 1, 1}, rt[3] = {0, 0, 0};
        for (int k = 0; k < n; k++) {
          r[t.i[k]] += t.v[k] * x[t.j[k]];
          rt[t.j[k]] += t.v[k] * x[t.i[k]];
        }
        lv_spm_seq_matvec(&A, x, y, 0);
        lv_spm_seq_matvec(&A, x, yt, 1);
        for (int a = 0; a < 3; a++) ck_assert(y[a] == r[a] && yt[a] == rt[a]);
      }
    }
    /* grouped matrices are not operands of the merged kit */
    lv_spm T, P;
    lv_spm_init(&T, 3, 3);
    lv_spm_init(&P, 3, 3);
    ck_assert_int_eq(lv_spm_transpose(&T, &A), LV_EINPUT);
    ck_assert_int_eq(lv_spm_product(&P, &A, &A), LV_EINPUT);
    lv_assembly S;
    ck_assert_int_eq(lv_assembly_init(&S, 3, 1), 0);
    ck_assert_int_eq(lv_spm_put(&S, 0, 0, &A, 1.0, NULL, 0), LV_EINPUT);
    lv_assembly_free(&S);
    /* a new key count: a new pattern of the right size */
    long ver = A.version;
    int i2[] = {4, 0}, j2[] = {4, 0};
    set_trip(&t, 2, i2, j2, v1);
    ck_assert_int_eq(lv_spm_fill(&A, 5, 5, fill_trip, &t), 0);
    ck_assert_int_ne(A.version, ver);
    ck_assert_int_eq(A.rp[5], 2);
    ck_assert_int_eq(A.rp[1], 1);
    lv_spm_free(&A);
    lv_spm_free(&T);
    lv_spm_free(&P);
  }
}
END_TEST

/* lv_spm_product_put: the product A B written into dense and sparse
 * assemblies with the same bits as lv_spm_product then lv_spm_put, twice
 * (the second time with new values on the kept pattern), and the product
 * keeps no values. */
START_TEST(test_product_put) {
  unsigned long long seed = tu_seed(23);
  trip ta, tb;
  ta.n = tb.n = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      if ((i * 3 + j) % 3 != 2) {
        ta.i[ta.n] = i;
        ta.j[ta.n] = j;
        ta.v[ta.n++] = 0.0;
      }
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 3; j++)
      if ((i + 2 * j) % 4 != 1) {
        tb.i[tb.n] = i;
        tb.j[tb.n] = j;
        tb.v[tb.n++] = 0.0;
      }
  lv_spm A, B, C, P;
  lv_spm_init(&A, 4, 5);
  lv_spm_init(&B, 5, 3);
  lv_spm_init(&C, 4, 3);
  lv_spm_init(&P, 4, 3);
  double rs[6] = {0.5, 3.0, -1.25, 7.0, 1.0, 2.0};
  for (int round = 0; round < 2; round++) {
    for (int k = 0; k < ta.n; k++) ta.v[k] = tu_rand(&seed) - 0.5;
    for (int k = 0; k < tb.n; k++) tb.v[k] = tu_rand(&seed) - 0.5;
    ck_assert_int_eq(lv_spm_fill(&A, 4, 5, fill_trip, &ta), 0);
    ck_assert_int_eq(lv_spm_fill(&B, 5, 3, fill_trip, &tb), 0);
    for (int dense = 0; dense < 2; dense++) {
      lv_assembly S1, S2;
      ck_assert_int_eq(lv_assembly_init(&S1, 6, dense), 0);
      ck_assert_int_eq(lv_assembly_init(&S2, 6, dense), 0);
      lv_assembly_begin(&S1);
      lv_assembly_begin(&S2);
      ck_assert_int_eq(lv_spm_product(&P, &A, &B), 0);
      ck_assert_int_eq(lv_spm_put(&S1, 1, 2, &P, -0.75, rs, 0), 0);
      ck_assert_int_eq(lv_spm_product_put(&S2, 1, 2, &C, &A, &B, -0.75, rs), 0);
      ck_assert_ptr_null(C.val);
      ck_assert_int_eq(C.nnz, P.nnz);
      ck_assert_int_eq(lv_assembly_finish(&S1), 0);
      ck_assert_int_eq(lv_assembly_finish(&S2), 0);
      double x[6] = {1.0, -2.0, 3.5, 0.25, 5.0, -1.5}, y1[6], y2[6];
      lv_assembly_matvec(&S1, x, y1);
      lv_assembly_matvec(&S2, x, y2);
      ck_assert(memcmp(y1, y2, sizeof y1) == 0);
      double nz = 0.0;
      for (int i = 0; i < 6; i++) nz += fabs(y1[i]);
      ck_assert(nz > 0.0);
      ck_assert_int_eq(lv_spm_product_put(&S2, 3, 4, &C, &A, &B, 1.0, NULL), LV_EINPUT); /* does not fit */
      lv_assembly_free(&S1);
      lv_assembly_free(&S2);
    }
  }
  lv_spm_free(&A);
  lv_spm_free(&B);
  lv_spm_free(&C);
  lv_spm_free(&P);
}
END_TEST

/* A banded n x n matrix (|i - j| <= w, every third entry of the band a
 * structural zero's 0.0), values from @p seed. */
typedef struct {
  int n, w;
  unsigned long long *seed;
} band;

static int fill_band(void *ctx, lv_sink *s) {
  band *b = ctx;
  for (int i = 0; i < b->n; i++)
    for (int j = i - b->w; j <= i + b->w; j++)
      if (j >= 0 && j < b->n) LV_CHECK(lv_sink_add(s, i, j, (i + 2 * j) % 3 ? tu_rand(b->seed) - 0.5 : 0.0));
  return 0;
}

/* lv_spm_product_put of a product of at least LV_RECORDER_KEEP_POS
 * multiply-adds: no pattern kept, and the same bits as lv_spm_product then
 * lv_spm_put in dense and sparse assemblies, with an accumulator shared
 * with another product (left zero), twice (new values the second time). */
START_TEST(test_product_put_rows) {
  unsigned long long seed = tu_seed(29);
  const int n = 300, w = 8;
  band ba = {n, w, &seed}, bb = {n, w - 1, &seed};
  lv_spm A, B, C, P;
  lv_spm_init(&A, n, n);
  lv_spm_init(&B, n, n);
  lv_spm_init(&C, n, n);
  lv_spm_init(&P, n, n);
  double *acc = calloc((size_t)n, sizeof(double)), *rs = malloc((size_t)(n + 4) * sizeof(double));
  ck_assert_ptr_nonnull(acc);
  ck_assert_ptr_nonnull(rs);
  for (int i = 0; i < n + 4; i++) rs[i] = 0.5 + tu_rand(&seed);
  lv_spm_share_acc(&C, acc, n);
  lv_spm_share_acc(&P, acc, n);
  for (int round = 0; round < 2; round++) {
    ck_assert_int_eq(lv_spm_fill(&A, n, n, fill_band, &ba), 0);
    ck_assert_int_eq(lv_spm_fill(&B, n, n, fill_band, &bb), 0);
    for (int dense = 0; dense < 2; dense++) {
      lv_assembly S1, S2;
      ck_assert_int_eq(lv_assembly_init(&S1, n + 4, dense), 0);
      ck_assert_int_eq(lv_assembly_init(&S2, n + 4, dense), 0);
      lv_assembly_begin(&S1);
      lv_assembly_begin(&S2);
      ck_assert_int_eq(lv_spm_product(&P, &A, &B), 0);
      ck_assert_int_eq(lv_spm_put(&S1, 3, 1, &P, -0.75, rs, 0), 0);
      ck_assert_int_eq(lv_spm_product_put(&S2, 3, 1, &C, &A, &B, -0.75, rs), 0);
      ck_assert_ptr_null(C.rp); /* large: no pattern kept */
      ck_assert_ptr_null(C.ci);
      ck_assert_ptr_null(C.val);
      for (int i = 0; i < n; i++) ck_assert(acc[i] == 0.0);
      ck_assert_int_eq(lv_assembly_finish(&S1), 0);
      ck_assert_int_eq(lv_assembly_finish(&S2), 0);
      if (!dense) {
        ck_assert_int_eq(S1.nnz, S2.nnz); /* structural zeros of the product included */
        ck_assert(memcmp(S1.Ap, S2.Ap, (size_t)(n + 5) * sizeof(int)) == 0);
        ck_assert(memcmp(S1.Ai, S2.Ai, (size_t)S1.nnz * sizeof(int)) == 0);
        ck_assert(memcmp(S1.Ax, S2.Ax, (size_t)S1.nnz * sizeof(double)) == 0);
        ck_assert_int_gt(S1.nnz, P.nnz - 1);
      } else {
        ck_assert(memcmp(S1.D, S2.D, (size_t)(n + 4) * (n + 4) * sizeof(double)) == 0);
      }
      double nz = 0.0;
      for (int i = 0; i < P.nnz; i++) nz += fabs(P.val[i]);
      ck_assert(nz > 0.0);
      lv_assembly_free(&S1);
      lv_assembly_free(&S2);
    }
  }
  lv_spm_free(&A);
  lv_spm_free(&B);
  lv_spm_free(&C);
  lv_spm_free(&P);
  free(acc);
  free(rs);
}
END_TEST

/* a diagonal n x n matrix with entries dg */
typedef struct {
  int n;
  const double *dg;
} diag_fill;

static int fill_diag(void *ctx, lv_sink *s) {
  diag_fill *f = ctx;
  for (int i = 0; i < f->n; i++) LV_CHECK(lv_sink_add(s, i, i, f->dg[i]));
  return 0;
}

/* lv_spm_product_put_diag: A diag(dg) B and A diag(dg) B^T (B^T a
 * transpose pattern, values read from B) with the same bits as the
 * products formed by lv_spm_product of the diagonal matrix then
 * lv_spm_product_put, for a small product (kept pattern) and a large one
 * (none), in sparse and dense assemblies; lv_spm_diag_values tells the
 * diagonal matrix; a transpose pattern is refused where values are read. */
START_TEST(test_product_put_diag) {
  unsigned long long seed = tu_seed(31);
  for (int big = 0; big < 2; big++) {
    const int n = big ? 300 : 12, w = big ? 8 : 2;
    band ba = {n, w, &seed}, bb = {n, w - 1, &seed};
    lv_spm A, B, D, Bt, DB, DBt, C1, C2, C3, C4;
    lv_spm *all[] = {&A, &B, &D, &Bt, &DB, &DBt, &C1, &C2, &C3, &C4};
    for (int i = 0; i < 10; i++) lv_spm_init(all[i], n, n);
    double *dg = malloc((size_t)n * sizeof(double));
    ck_assert_ptr_nonnull(dg);
    for (int i = 0; i < n; i++) dg[i] = 0.25 + tu_rand(&seed);
    diag_fill df = {n, dg};
    ck_assert_int_eq(lv_spm_fill(&D, n, n, fill_diag, &df), 0);
    const double *dv = lv_spm_diag_values(&D);
    ck_assert_ptr_nonnull(dv);
    for (int round = 0; round < 2; round++) {
      ck_assert_int_eq(lv_spm_fill(&A, n, n, fill_band, &ba), 0);
      ck_assert_int_eq(lv_spm_fill(&B, n, n, fill_band, &bb), 0);
      ck_assert_ptr_null(lv_spm_diag_values(&A));
      ck_assert_int_eq(lv_spm_transpose(&Bt, &B), 0);
      ck_assert_int_eq(lv_spm_product(&DB, &D, &B), 0);
      ck_assert_int_eq(lv_spm_product(&DBt, &D, &Bt), 0);
      lv_spm Tp;
      lv_spm_init(&Tp, n, n);
      ck_assert_int_eq(lv_spm_transpose_pattern(&Tp, &B), 0);
      ck_assert_ptr_null(Tp.val);
      for (int dense = 0; dense < 2; dense++) {
        lv_assembly S1, S2;
        ck_assert_int_eq(lv_assembly_init(&S1, n + 3, dense), 0);
        ck_assert_int_eq(lv_assembly_init(&S2, n + 3, dense), 0);
        lv_assembly_begin(&S1);
        lv_assembly_begin(&S2);
        ck_assert_int_eq(lv_spm_product_put(&S1, 1, 2, &C1, &A, &DB, -0.5, NULL), 0);
        ck_assert_int_eq(lv_spm_product_put(&S1, 2, 0, &C2, &A, &DBt, 1.5, dg), 0);
        ck_assert_int_eq(lv_spm_product_put_diag(&S2, 1, 2, &C3, &A, dv, &B, -0.5, NULL), 0);
        ck_assert_int_eq(lv_spm_product_put_diag(&S2, 2, 0, &C4, &A, dv, &Tp, 1.5, dg), 0);
        ck_assert_int_eq(lv_spm_put(&S2, 0, 0, &Tp, 1.0, NULL, 0), LV_EINPUT);
        ck_assert_int_eq(lv_spm_product_put(&S2, 0, 0, &C4, &A, &Tp, 1.0, NULL), LV_EINPUT);
        ck_assert_int_eq(lv_assembly_finish(&S1), 0);
        ck_assert_int_eq(lv_assembly_finish(&S2), 0);
        if (dense) {
          ck_assert(memcmp(S1.D, S2.D, (size_t)(n + 3) * (n + 3) * sizeof(double)) == 0);
        } else {
          ck_assert_int_eq(S1.nnz, S2.nnz);
          ck_assert(memcmp(S1.Ai, S2.Ai, (size_t)S1.nnz * sizeof(int)) == 0);
          ck_assert(memcmp(S1.Ax, S2.Ax, (size_t)S1.nnz * sizeof(double)) == 0);
        }
        ck_assert_int_eq(C3.rp == NULL, big); /* a large product keeps no pattern */
        lv_assembly_free(&S1);
        lv_assembly_free(&S2);
      }
      lv_spm_free(&Tp);
    }
    for (int i = 0; i < 10; i++) lv_spm_free(all[i]);
    free(dg);
  }
}
END_TEST

/* lv_blk: a callback's block times a grouped factor F into dense and sparse
 * assemblies: the product, and the same bits in both back-ends. */
START_TEST(test_blk_product) {
  unsigned long long seed = tu_seed(19);
  /* A: 4 x 5 with a repeated position; F: 5 x 3 grouped by row, repeated too */
  trip ta, tf;
  ta.n = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      if ((i + j) % 2 == 0) {
        ta.i[ta.n] = i;
        ta.j[ta.n] = j;
        ta.v[ta.n++] = tu_rand(&seed) - 0.5;
      }
  ta.i[ta.n] = 1;
  ta.j[ta.n] = 3;
  ta.v[ta.n++] = 0.125;
  tf.n = 0;
  for (int k = 0; k < 5; k++)
    for (int o = 0; o < 3; o++)
      if ((k + o) % 3 != 1) {
        tf.i[tf.n] = k;
        tf.j[tf.n] = o;
        tf.v[tf.n++] = tu_rand(&seed) - 0.5;
      }
  tf.i[tf.n] = 2;
  tf.j[tf.n] = 0;
  tf.v[tf.n++] = 1.0 / 3.0;
  lv_spm F, Ag;
  lv_spm_init_grouped(&F, 0);
  lv_spm_init_grouped(&Ag, 0);
  ck_assert_int_eq(lv_spm_fill(&F, 5, 3, fill_trip, &tf), 0);
  ck_assert_int_eq(lv_spm_fill(&Ag, 4, 5, fill_trip, &ta), 0);
  double Ad[4 * 5] = {0}, Fd[5 * 3] = {0}, R[4 * 3] = {0};
  for (int k = 0; k < ta.n; k++) Ad[ta.i[k] * 5 + ta.j[k]] += ta.v[k];
  for (int k = 0; k < tf.n; k++) Fd[tf.i[k] * 3 + tf.j[k]] += tf.v[k];
  for (int i = 0; i < 4; i++)
    for (int o = 0; o < 3; o++)
      for (int k = 0; k < 5; k++) R[i * 3 + o] += 2.0 * Ad[i * 5 + k] * Fd[k * 3 + o];
  const int n = 6, r0 = 1, c0 = 2;
  lv_assembly S[3];
  for (int b = 0; b < 3; b++) {
    ck_assert_int_eq(lv_assembly_init(&S[b], n, b != 1), 0);
    for (int pass = 0; pass < 2; pass++) { /* record, then replay the pattern */
      lv_assembly_begin(&S[b]);
      lv_blk_sink bs;
      if (b < 2)
        ck_assert_int_eq(fill_trip(&ta, lv_blk(&bs, &S[b], r0, c0, 4, 5, 2.0, 0, &F)), 0);
      else
        lv_blk_seq(&S[b], &Ag, r0, c0, 2.0, 0, &F); /* the captured block, no callback */
      ck_assert_int_eq(lv_assembly_finish(&S[b]), 0);
    }
  }
  /* dense: the product; the captured block gives the callback's bits */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double d = S[0].D[i + j * n];
      int in = i >= r0 && i < r0 + 4 && j >= c0 && j < c0 + 3;
      ck_assert(fabs(d - (in ? R[(i - r0) * 3 + j - c0] : 0.0)) < 1e-14);
      ck_assert(memcmp(&d, &S[2].D[i + j * n], sizeof d) == 0);
    }
  /* sparse: the same bits in every slot */
  for (int j = 0; j < n; j++)
    for (int p = S[1].Ap[j]; p < S[1].Ap[j + 1]; p++) {
      double d = S[0].D[S[1].Ai[p] + j * n];
      ck_assert(memcmp(&d, &S[1].Ax[p], sizeof d) == 0);
    }
  /* transposed block without a factor */
  lv_assembly_begin(&S[0]);
  lv_blk_sink bs;
  ck_assert_int_eq(fill_trip(&ta, lv_blk(&bs, &S[0], 0, 0, 4, 5, -1.0, 1, NULL)), 0);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) ck_assert(S[0].D[j + i * n] == -Ad[i * 5 + j]);
  /* and the sink checks its bounds */
  ck_assert_int_eq(lv_sink_add(lv_blk(&bs, &S[0], 0, 0, 4, 5, 1.0, 0, NULL), 4, 0, 1.0), LV_EINPUT);
  for (int b = 0; b < 3; b++) lv_assembly_free(&S[b]);
  lv_spm_free(&F);
  lv_spm_free(&Ag);
}
END_TEST

/* A replayed merged capture (its own add, lv_spm_begin) that leaves the
 * recording half-way, or meets a sink scale or transform set by the
 * callback, takes the general add from there: the values are the sums of
 * the adds as the callback made them. */
typedef struct {
  trip t;
  int scale_at, transpose_at; /* add index from which s->scale = 2, at which s->transpose = 1 (-1: never) */
} trip_tf;

static int fill_trip_tf(void *ctx, lv_sink *s) {
  trip_tf *c = ctx;
  for (int k = 0; k < c->t.n; k++) {
    if (k == c->scale_at) s->scale = 2.0;
    s->transpose = k == c->transpose_at;
    LV_CHECK(lv_sink_add(s, c->t.i[k], c->t.j[k], c->t.v[k]));
  }
  s->scale = 1.0;
  s->transpose = 0;
  return 0;
}

/* a callback that keeps the sink's add function from its first add */
static int fill_trip_cached(void *ctx, lv_sink *s) {
  trip *t = ctx;
  int (*add)(lv_sink *, int, int, double) = s->add;
  for (int k = 0; k < t->n; k++) LV_CHECK(add(s, t->i[k], t->j[k], t->v[k]));
  return 0;
}

START_TEST(test_merged_replay) {
  lv_spm A;
  lv_spm_init(&A, 4, 4);
  trip_tf c = {.scale_at = -1, .transpose_at = -1};
  int i1[] = {0, 1, 2, 1, 3}, j1[] = {0, 2, 1, 2, 3};
  double v1[] = {1.0, 0.5, -2.0, 0.25, 3.0};
  set_trip(&c.t, 5, i1, j1, v1);
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip_tf, &c), 0);
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip_tf, &c), 0); /* replayed */
  long ver = A.version;
  ck_assert(csr_at(&A, 1, 2) == 0.75 && csr_at(&A, 3, 3) == 3.0);
  /* off the recording at its third add: a new pattern, every add counted */
  int i2[] = {0, 1, 3, 1, 3}, j2[] = {0, 2, 0, 2, 3};
  set_trip(&c.t, 5, i2, j2, v1);
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip_tf, &c), 0);
  ck_assert_int_gt(A.version, ver);
  ck_assert(csr_at(&A, 0, 0) == 1.0 && csr_at(&A, 1, 2) == 0.75 && csr_at(&A, 3, 0) == -2.0);
  ck_assert(csr_at(&A, 3, 3) == 3.0 && csr_at(&A, 2, 1) == 0.0);
  /* the recorded sequence again, with a scale from the second add */
  set_trip(&c.t, 5, i1, j1, v1);
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip_tf, &c), 0);
  ver = A.version;
  c.scale_at = 1;
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip_tf, &c), 0);
  ck_assert_int_eq(A.version, ver);
  ck_assert(csr_at(&A, 0, 0) == 1.0 && csr_at(&A, 1, 2) == 1.5 && csr_at(&A, 2, 1) == -4.0);
  ck_assert(csr_at(&A, 3, 3) == 6.0);
  /* a transposing sink at the third add: (2, 1) lands at (1, 2) */
  c.scale_at = -1;
  c.transpose_at = 2;
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip_tf, &c), 0);
  ck_assert(csr_at(&A, 1, 2) == (0.5 + -2.0) + 0.25 && csr_at(&A, 2, 1) == 0.0 && csr_at(&A, 3, 3) == 3.0);
  /* off the recording at the second add, on its positions again from the
   * third, through a kept add function: still a new sequence */
  trip t;
  int i3[] = {0, 3, 2, 1, 3}, j3[] = {0, 1, 1, 2, 3};
  set_trip(&t, 5, i3, j3, v1);
  ck_assert_int_eq(lv_spm_fill(&A, 4, 4, fill_trip_cached, &t), 0);
  ck_assert(csr_at(&A, 0, 0) == 1.0 && csr_at(&A, 3, 1) == 0.5 && csr_at(&A, 2, 1) == -2.0);
  ck_assert(csr_at(&A, 1, 2) == 0.25 && csr_at(&A, 3, 3) == 3.0);
  lv_spm_free(&A);
}
END_TEST

/* lv_blk_rows: entry (i, j, v) becomes (scale * rowscale[i]) * v at
 * (r0 + i, c0 + j) on both back-ends, the values lv_spm_put writes for a
 * captured block; a non-finite value or an entry outside the block is
 * flagged. */
/* each band entry in two adds (a quarter, then the rest), through the sink's
 * add pointer as a model callback calls it */
static int fill_band_split(void *ctx, lv_sink *s) {
  band *b = ctx;
  for (int i = 0; i < b->n; i++)
    for (int j = i - b->w; j <= i + b->w; j++)
      if (j >= 0 && j < b->n) {
        double v = tu_rand(b->seed) - 0.5;
        LV_CHECK(lv_sink_add(s, i, j, 0.25 * v));
        LV_CHECK(lv_sink_add(s, i, j, 0.75 * v));
      }
  return 0;
}

/* A merged capture of at least LV_SPM_CODE_MIN adds records a coded
 * sequence (no kept positions), which lv_spm_begin replays by its own add:
 * the replay gives the same bits as a first capture of the same adds in a
 * fresh matrix (the recorded path), and a sequence that leaves the
 * recording half-way (a narrower band) is recorded again with the values
 * of a fresh capture. */
START_TEST(test_merged_coded_replay) {
  const int n = 1200;
  lv_spm A;
  lv_spm_init(&A, n, n);
  for (int round = 0; round < 4; round++) {
    int w = round < 3 ? 8 : 7; /* the last round leaves the recording */
    unsigned long long s1 = tu_seed(31 + round), s2 = s1;
    band b1 = {n, w, &s1}, b2 = {n, w, &s2};
    ck_assert_int_eq(lv_spm_fill(&A, n, n, fill_band_split, &b1), 0);
    ck_assert_ptr_null(A.rec.ri); /* coded: this test's subject */
    lv_spm F;
    lv_spm_init(&F, n, n);
    ck_assert_int_eq(lv_spm_fill(&F, n, n, fill_band_split, &b2), 0);
    ck_assert_int_eq(A.nnz, F.nnz);
    ck_assert_int_eq(memcmp(A.rp, F.rp, (size_t)(n + 1) * sizeof(int)), 0);
    ck_assert_int_eq(memcmp(A.ci, F.ci, (size_t)F.nnz * sizeof(int)), 0);
    ck_assert_int_eq(memcmp(A.val, F.val, (size_t)F.nnz * sizeof(double)), 0);
    ck_assert_int_eq(A.nnz, n * (2 * w + 1) - w * (w + 1));
    lv_spm_free(&F);
  }
  lv_spm_free(&A);
}
END_TEST

START_TEST(test_blk_rows) {
  trip t;
  int i1[] = {0, 2, 1, 2}, j1[] = {1, 0, 2, 2};
  double v1[] = {0.3, -1.7, 2.5, 1.0 / 3.0}, rs[3] = {0.25, 1.0 / 3.0, 7.0};
  set_trip(&t, 4, i1, j1, v1);
  lv_spm X;
  lv_spm_init(&X, 3, 3);
  ck_assert_int_eq(lv_spm_fill(&X, 3, 3, fill_trip, &t), 0);
  const int n = 5, r0 = 2, c0 = 1;
  lv_assembly S[3];
  for (int b = 0; b < 3; b++) {
    ck_assert_int_eq(lv_assembly_init(&S[b], n, b != 1), 0);
    lv_assembly_begin(&S[b]);
    lv_blk_sink bs;
    if (b < 2)
      ck_assert_int_eq(fill_trip(&t, lv_blk_rows(&bs, &S[b], r0, c0, 3, 3, -0.7, rs)), 0);
    else
      ck_assert_int_eq(lv_spm_put(&S[b], r0, c0, &X, -0.7, rs, 0), 0);
    ck_assert_int_eq(bs.bad, 0);
    ck_assert_int_eq(lv_assembly_finish(&S[b]), 0);
  }
  for (int k = 0; k < 4; k++) {
    double want = (-0.7 * rs[i1[k]]) * v1[k], d = S[0].D[(r0 + i1[k]) + (c0 + j1[k]) * n];
    ck_assert(d == want);
    ck_assert(memcmp(&d, &S[2].D[(r0 + i1[k]) + (c0 + j1[k]) * n], sizeof d) == 0);
  }
  for (int j = 0; j < n; j++)
    for (int p = S[1].Ap[j]; p < S[1].Ap[j + 1]; p++) ck_assert(S[1].Ax[p] == S[0].D[S[1].Ai[p] + j * n]);
  ck_assert_int_eq(S[1].nnz, 4);
  /* flags: a non-finite value (sink and assembly), an entry outside the block */
  for (int b = 0; b < 2; b++) {
    lv_blk_sink bs;
    lv_assembly_begin(&S[b]);
    lv_sink *s = lv_blk_rows(&bs, &S[b], r0, c0, 3, 3, 1.0, rs);
    ck_assert_int_eq(lv_sink_add(s, 1, 1, 1.0), 0);
    ck_assert(!bs.bad && !S[b].nonfinite);
    ck_assert_int_eq(lv_sink_add(s, 1, 1, NAN), 0);
    ck_assert(bs.bad && S[b].nonfinite);
    s = lv_blk_rows(&bs, &S[b], r0, c0, 3, 3, 1.0, rs);
    ck_assert_int_eq(lv_sink_add(s, 3, 0, 1.0), LV_EINPUT);
    ck_assert(bs.bad);
  }
  for (int b = 0; b < 3; b++) lv_assembly_free(&S[b]);
  lv_spm_free(&X);
}
END_TEST

/* lv_sink_add_block: every sink of the kit that takes a block in one call
 * (the Newton-matrix block sinks on both back-ends, transposed or scaled
 * by rows; the merged and grouped captures, first capture and replay)
 * ends with the same bits, flags and status as one add per entry in the
 * block's order -- with a non-finite entry, and with a block that leaves
 * the sink half-way (LV_EINPUT after the same entries). */
typedef struct {
  int nb, i0[6], j0[6], nr[6], nc[6];
  double v[6][16];
  int per_entry; /* 1: lv_sink_add of each entry, row by row */
  double scale;  /* set as the sink's scale before the first block (1: as it is) */
  int status;    /* the first failed add's status */
} blocks;

static int fill_blocks(void *ctx, lv_sink *s) {
  blocks *b = ctx;
  b->status = 0;
  if (b->scale != 1.0) s->scale = b->scale;
  for (int k = 0; k < b->nb && !b->status; k++) {
    if (!b->per_entry) {
      b->status = lv_sink_add_block(s, b->i0[k], b->j0[k], b->nr[k], b->nc[k], b->v[k], b->nc[k]);
      continue;
    }
    for (int r = 0; r < b->nr[k] && !b->status; r++)
      for (int c = 0; c < b->nc[k] && !b->status; c++)
        b->status = s->add(s, b->i0[k] + r, b->j0[k] + c, b->v[k][r * b->nc[k] + c]);
  }
  return b->status;
}

/* nb random blocks inside an m x m sink (variant 1: one value NaN;
 * variant 2: the last block reaches one row past the sink) */
static void make_blocks(blocks *b, int m, unsigned long long *st, int variant) {
  b->nb = 6;
  for (int k = 0; k < b->nb; k++) {
    b->nr[k] = 1 + tu_randint(st, 3);
    b->nc[k] = 1 + tu_randint(st, 4);
    b->i0[k] = tu_randint(st, m - b->nr[k] + 1);
    b->j0[k] = tu_randint(st, m - b->nc[k] + 1);
    for (int e = 0; e < 16; e++) b->v[k][e] = tu_rand(st) - 0.5;
  }
  if (variant == 1) b->v[2][1 % (b->nr[2] * b->nc[2])] = NAN;
  if (variant == 2) b->i0[5] = m - b->nr[5] + 1;
}

/* a copy of a sink whose add is replaced: every entry through that add */
typedef struct {
  lv_sink s;
  int n;
} count_copy;
static int count_copy_add(lv_sink *s, int i, int j, double v) {
  (void)i, (void)j, (void)v;
  ((count_copy *)s)->n++;
  return 0;
}

START_TEST(test_add_block_copy) {
  const double blk[6] = {1, 2, 3, 4, 5, 6};
  double rs[4] = {1, 2, 3, 4};
  for (int kind = 0; kind < 5; kind++) {
    lv_assembly S;
    ck_assert_int_eq(lv_assembly_init(&S, 4, kind != 1), 0);
    lv_assembly_begin(&S);
    lv_blk_sink bs;
    lv_spm A;
    lv_spm_init(&A, 4, 4);
    lv_sink *orig = kind < 2 ? lv_blk(&bs, &S, 0, 0, 4, 4, 1.0, 0, NULL)
                    : kind == 2 ? lv_blk_rows(&bs, &S, 0, 0, 4, 4, 1.0, rs)
                    : kind == 3 ? lv_blk(&bs, &S, 0, 0, 4, 4, 1.0, 1, NULL)
                                : lv_spm_begin(&A);
    count_copy c = {*orig, 0};
    c.s.add = count_copy_add;
    ck_assert_ptr_nonnull(c.s.add_block);
    ck_assert_int_eq(lv_sink_add_block(&c.s, 1, 0, 2, 3, blk, 3), 0);
    ck_assert_int_eq(c.n, 6);
    if (S.dense)
      for (int k = 0; k < 16; k++) ck_assert(S.D[k] == 0.0);
    lv_spm_free(&A);
    lv_assembly_free(&S);
  }
}
END_TEST

START_TEST(test_add_block) {
  const int m = 6, n = 9, r0 = 2, c0 = 1;
  double rs[6] = {0.25, 1.0 / 3.0, 7.0, -1.5, 0.125, 3.0};
  for (int variant = 0; variant < 3; variant++)
    for (int seed = 0; seed < 8; seed++) {
      unsigned long long st = tu_seed(100 + 10 * (unsigned long long)variant + (unsigned long long)seed);
      blocks B;
      make_blocks(&B, m, &st, variant);
      B.scale = 1.0;
      /* the Newton-matrix block sinks: dense and sparse, plain, transposed, by rows */
      for (int kind = 0; kind < 6; kind++) {
        lv_assembly S[2];
        int status[2], bad[2];
        for (int pe = 0; pe < 2; pe++) {
          ck_assert_int_eq(lv_assembly_init(&S[pe], n, kind % 2 == 0), 0);
          lv_assembly_begin(&S[pe]);
          lv_blk_sink bs;
          lv_sink *sk = kind < 2   ? lv_blk(&bs, &S[pe], r0, c0, m, m, -0.7, 0, NULL)
                        : kind < 4 ? lv_blk(&bs, &S[pe], r0, c0, m, m, 1.3, 1, NULL)
                                   : lv_blk_rows(&bs, &S[pe], r0, c0, m, m, -0.7, rs);
          B.per_entry = pe;
          status[pe] = fill_blocks(&B, sk);
          bad[pe] = bs.bad;
          if (S[pe].dense) continue;
          ck_assert_int_eq(lv_assembly_finish(&S[pe]), 0);
        }
        ck_assert_int_eq(status[0], status[1]);
        ck_assert_int_eq(status[0], variant == 2 ? LV_EINPUT : 0);
        ck_assert_int_eq(bad[0], bad[1]);
        ck_assert_int_eq(bad[0], variant != 0);
        ck_assert_int_eq(S[0].nonfinite, S[1].nonfinite);
        if (kind % 2 == 0) {
          ck_assert_int_eq(memcmp(S[0].D, S[1].D, (size_t)n * (size_t)n * sizeof(double)), 0);
        } else {
          ck_assert_int_eq(S[0].nnz, S[1].nnz);
          ck_assert_int_eq(memcmp(S[0].Ap, S[1].Ap, (size_t)(n + 1) * sizeof(int)), 0);
          ck_assert_int_eq(memcmp(S[0].Ai, S[1].Ai, (size_t)S[0].nnz * sizeof(int)), 0);
          ck_assert_int_eq(memcmp(S[0].Ax, S[1].Ax, (size_t)S[0].nnz * sizeof(double)), 0);
        }
        for (int pe = 0; pe < 2; pe++) lv_assembly_free(&S[pe]);
      }
      if (variant == 2) continue; /* a capture refuses the callback's status as a whole */
      /* the captures: merged, grouped by row and by column; three fills each
       * (the first records, the others replay).  Disjoint blocks, so that a
       * grouped capture holds no position twice and replays by assignment,
       * and a sink scale of 0.5 set by the callback's first fill */
      for (int k = 0; k < B.nb; k++) {
        B.nr[k] = 1 + tu_randint(&st, 2);
        B.nc[k] = 1 + tu_randint(&st, 3);
        B.i0[k] = 2 * (k % 3);
        B.j0[k] = 3 * (k / 3);
      }
      for (int group = 0; group < 3; group++) {
        lv_spm A[2];
        for (int pe = 0; pe < 2; pe++) {
          if (group == 0)
            lv_spm_init(&A[pe], m, m);
          else
            lv_spm_init_grouped(&A[pe], group == 2);
        }
        /* rep 0 records, 1 and 2 replay (2 through a scaled sink when
         * merged), 3 leaves the recording inside block 4 (one column fewer:
         * its second row comes where its first row's last entry was
         * recorded) and records anew, 4 records the first sequence again,
         * 5 replays it */
        B.nr[4] = 2, B.nc[4] = 2 + (B.nc[4] > 2);
        for (int rep = 0; rep < 6; rep++) {
          int nc4 = B.nc[4];
          if (rep == 3) B.nc[4] = nc4 - 1;
          for (int pe = 0; pe < 2; pe++) {
            B.per_entry = pe;
            B.scale = group == 0 && rep == 2 ? 0.5 : 1.0;
            long ver = A[pe].version;
            ck_assert_int_eq(lv_spm_fill(&A[pe], m, m, fill_blocks, &B), 0);
            if (rep == 1 || rep == 2 || rep == 5) ck_assert_int_eq(A[pe].version, ver); /* replayed: no new pattern */
            if (rep == 3 || rep == 4) ck_assert_int_ne(A[pe].version, ver);
          }
          if (rep == 3) B.nc[4] = nc4;
          ck_assert_int_eq(A[0].nnz, A[1].nnz);
          ck_assert_int_eq(A[0].rec.recorded, A[1].rec.recorded);
          if (group) ck_assert(A[0].nodup && A[1].nodup);
          ck_assert_int_eq(A[0].flag, A[1].flag);
          ck_assert_int_eq(memcmp(A[0].val, A[1].val, (size_t)A[0].nnz * sizeof(double)), 0);
          ck_assert_int_eq(A[0].rec.rcnt, A[1].rec.rcnt);
          if (A[0].rec.cv && A[1].rec.cv)
            ck_assert_int_eq(memcmp(A[0].rec.cv, A[1].rec.cv, A[0].rec.rcnt * sizeof(double)), 0);
          for (int k = 0; k < B.nb; k++) B.v[k][0] += 0.125; /* new values */
        }
        ck_assert_int_eq(A[0].rec.recorded, 3);
        for (int pe = 0; pe < 2; pe++) lv_spm_free(&A[pe]);
      }
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("spmat");
  TCase *tc = tu_tcase(s, "spmat", 0.1);
  tcase_add_test(tc, test_merged_capture);
  tcase_add_test(tc, test_tangent_values);
  tcase_add_test(tc, test_merged_replay);
  tcase_add_test(tc, test_merged_coded_replay);
  tcase_add_test(tc, test_blk_rows);
  tcase_add_test(tc, test_add_block);
  tcase_add_test(tc, test_add_block_copy);
  tcase_add_test(tc, test_grouped);
  tcase_add_test(tc, test_blk_product);
  tcase_add_test(tc, test_product_put);
  tcase_add_test(tc, test_product_put_rows);
  tcase_add_test(tc, test_product_put_diag);
  return tu_run_suite(s);
}
