/* The small-matrix kernels of the dense back-end (dense.c), included
 * there once with loops as written (any n), once with every loop unrolled
 * for the sizes instantiated with a constant n, and on x86 once more the
 * same compiled for AVX (SMALL_V4).  Not a header of its own interface:
 * SMALL_FN (the name), SMALL_UNROLL and SMALL_V2 / SMALL_V4 are set by the
 * includer. */
/* y[i] -= x[i] * s for lo <= i < n: one element alone when the count is
 * odd, then pairs (SMALL_V2, two lanes of the same multiply and subtract,
 * so the same bits as the scalar loop) or, with SMALL_V4, a pair when
 * needed and then groups of four lanes (the same operations again). */
SMALL_INLINE void SMALL_FN(axpy)(const int lo, const int n, double *restrict y, const double *restrict x,
                                 const double s) {
  int i = lo;
#ifdef SMALL_V2
  if ((n - i) & 1) {
    y[i] -= x[i] * s;
    i++;
  }
#ifdef SMALL_V4
  if ((n - i) & 2) { /* then a pair, and the rest four lanes at a time */
    SMALL_V2 yv, xv;
    const SMALL_V2 sv = {s, s};
    memcpy(&yv, y + i, sizeof yv);
    memcpy(&xv, x + i, sizeof xv);
    yv -= xv * sv;
    memcpy(y + i, &yv, sizeof yv);
    i += 2;
  }
  const SMALL_V4 s4 = {s, s, s, s};
  SMALL_UNROLL
  for (; i < n; i += 4) {
    SMALL_V4 yv, xv;
    memcpy(&yv, y + i, sizeof yv);
    memcpy(&xv, x + i, sizeof xv);
    yv -= xv * s4;
    memcpy(y + i, &yv, sizeof yv);
  }
#else
  const SMALL_V2 sv = {s, s};
  SMALL_UNROLL
  for (; i < n; i += 2) {
    SMALL_V2 yv, xv;
    memcpy(&yv, y + i, sizeof yv);
    memcpy(&xv, x + i, sizeof xv);
    yv -= xv * sv;
    memcpy(y + i, &yv, sizeof yv);
  }
#endif
#else
  SMALL_UNROLL
  for (; i < n; i++) y[i] -= x[i] * s;
#endif
}

/* In-place LU of the column-major n x n matrix a: LAPACK's dgetf2.  Returns 0, or 1 on an
 * exactly zero or non-finite pivot (the caller then refactors with LAPACK,
 * which reports the exact singularity its own way). */
SMALL_INLINE int SMALL_FN(getf2)(const int n, double *restrict a, int *restrict ipiv) {
  SMALL_UNROLL
  for (int k = 0; k < n; k++) {
    double *restrict ck = a + (size_t)k * (size_t)n;
    int p = k;
    double amax = fabs(ck[k]);
    SMALL_UNROLL
    for (int i = k + 1; i < n; i++) {
      double v = fabs(ck[i]);
      if (v > amax) {
        amax = v;
        p = i;
      }
    }
    ipiv[k] = p + 1;
    if (!(amax > 0.0) || !isfinite(amax)) return 1;
    if (p != k)
      SMALL_UNROLL
      for (int j = 0; j < n; j++) {
        double *c = a + (size_t)j * (size_t)n;
        double t = c[k];
        c[k] = c[p];
        c[p] = t;
      }
    const double r = 1.0 / ck[k];
    SMALL_UNROLL
    for (int i = k + 1; i < n; i++) ck[i] *= r;
    SMALL_UNROLL
    for (int j = k + 1; j < n; j++) {
      double *restrict cj = a + (size_t)j * (size_t)n;
      const double akj = cj[k];
      if (akj != 0.0) SMALL_FN(axpy)(k + 1, n, cj, ck, akj);
    }
  }
  return 0;
}

/* x := A^-1 x with the factors of small_getf2 or dgetrf (dgetrs 'N'). */
SMALL_INLINE void SMALL_FN(getrs)(const int n, const double *restrict a, const int *restrict ipiv, double *restrict x) {
  SMALL_UNROLL
  for (int k = 0; k < n; k++) {
    int p = ipiv[k] - 1;
    if (p != k) {
      double t = x[k];
      x[k] = x[p];
      x[p] = t;
    }
  }
  SMALL_UNROLL
  for (int j = 0; j < n; j++) { /* L y = P b, unit diagonal */
    const double xj = x[j];
    if (xj != 0.0) {
      const double *restrict c = a + (size_t)j * (size_t)n;
      SMALL_FN(axpy)(j + 1, n, x, c, xj);
    }
  }
  SMALL_UNROLL
  for (int j = n - 1; j >= 0; j--) { /* U x = y */
    const double *restrict c = a + (size_t)j * (size_t)n;
    x[j] /= c[j];
    const double xj = x[j];
    if (xj != 0.0) SMALL_FN(axpy)(0, j, x, c, xj);
  }
}

