/* The Bobenko-Suris Lagrange-top scheme (BS99), the comparison scheme of
 * seed 003's gyroscopic-top example (Kinon, Betsch & Schneider 2023,
 * Figs. 18/19; spec 003_ggl_vi.md §2.6), for tests/check_vi.c and
 * benchmarks/bench_vi.c.  A reference integrator of one example, not a
 * livens scheme: it has no constraints and no model callbacks, only the
 * symmetric top about its fixed tip.
 *
 * State (d3, m_O): the symmetry axis and the angular momentum about the
 * fixed point O (spatial frame).  One step:
 *   m_O^{n+1} = m_O^n + h m g l e3 x d3^n
 *   d3^{n+1} - d3^n = (h / I1_O) m_O^{n+1} x (d3^n + d3^{n+1}) / 2,
 * I1_O = I1 + m l^2.  The second equation is linear in d3^{n+1}: with
 * w = (h / (2 I1_O)) m_O^{n+1} it is the Cayley rotation
 *   d3^{n+1} = d3^n + 2 / (1 + |w|^2) (w x d3^n + w x (w x d3^n)),
 * so |d3| is kept.  Start m_O^0 = R0 diag(I1_O, I1_O, I3) R0^T omega_0;
 * phi_3 = l (d3)_3.  m_O,3 never changes (e3 x d3 has no 3-component): J3
 * is conserved exactly.
 *
 * The data are read from the livens model "gyro-top" (models/gyro_top.c)
 * through its public accessors, so that the comparison uses the same top
 * and the same initial values as VI-S/VI-A/VI-B/EM: m = M_11, E_i from the
 * director blocks of M, I_i = E_j + E_k, m g = dV/dphi_3, R0 = (d1 d2 d3)
 * and l = |phi| / |d3| from q0, omega_0 = 1/2 sum_i d_i x v_i from v0
 * (v_i = omega x d_i for orthonormal d_i).  Header-only so that the test
 * and the benchmark share one definition without a library symbol. */
#ifndef LIVENS_BS99_TOP_H
#define LIVENS_BS99_TOP_H

#include <math.h>
#include <string.h>
#include "livens/livens.h"

typedef struct {
  double m, I1, I3, l, mg; /* mass, moments about the centre of mass (I1 = I2), tip distance, m g */
  double d3[3], mO[3];     /* state */
} bs99_top;

static inline void bs99_cross(const double a[3], const double b[3], double c[3]) {
  double t0 = a[1] * b[2] - a[2] * b[1], t1 = a[2] * b[0] - a[0] * b[2], t2 = a[0] * b[1] - a[1] * b[0];
  c[0] = t0, c[1] = t1, c[2] = t2;
}

/* The top's data and initial state from the gyro-top model @p m (its q0,
 * v0).  Status: 0, LV_EINPUT (not a symmetric top in director
 * coordinates: nq != 12, I1 != I2), or the model's status. */
static inline int bs99_init(bs99_top *b, const lv_model *m) {
  if (lv_model_nq(m) != 12 || lv_model_nv(m) != 12) return LV_EINPUT;
  const double *q = lv_model_q0(m), *v = lv_model_v0(m);
  double M[144], dV[12];
  int rc = lv_model_mass_dense(m, q, M);
  if (!rc) rc = lv_model_grad_potential(m, q, dV);
  if (rc) return rc;
  double E[3];
  for (int i = 0; i < 3; i++) E[i] = M[(3 + 3 * i) * 13];
  double I[3] = {E[1] + E[2], E[0] + E[2], E[0] + E[1]};
  if (I[0] != I[1]) return LV_EINPUT;
  b->m = M[0];
  b->I1 = I[0];
  b->I3 = I[2];
  b->mg = dV[2];
  const double *d1 = q + 3, *d2 = q + 6, *d3 = q + 9;
  b->l = sqrt((q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) / (d3[0] * d3[0] + d3[1] * d3[1] + d3[2] * d3[2]));
  double w[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    double c[3];
    bs99_cross(q + 3 + 3 * i, v + 3 + 3 * i, c);
    for (int r = 0; r < 3; r++) w[r] += 0.5 * c[r];
  }
  /* m_O = R0 diag(I1_O, I1_O, I3) R0^T omega_0, R0 = (d1 d2 d3) */
  double I1O = b->I1 + b->m * b->l * b->l;
  double wb[3] = {I1O * (d1[0] * w[0] + d1[1] * w[1] + d1[2] * w[2]), I1O * (d2[0] * w[0] + d2[1] * w[1] + d2[2] * w[2]),
                  b->I3 * (d3[0] * w[0] + d3[1] * w[1] + d3[2] * w[2])};
  for (int r = 0; r < 3; r++) b->mO[r] = d1[r] * wb[0] + d2[r] * wb[1] + d3[r] * wb[2];
  memcpy(b->d3, d3, sizeof b->d3);
  return 0;
}

/* One step of size h. */
static inline void bs99_step(bs99_top *b, double h) {
  double t[3], w[3], wd[3], wwd[3];
  const double e3[3] = {0.0, 0.0, 1.0};
  bs99_cross(e3, b->d3, t);
  for (int r = 0; r < 3; r++) b->mO[r] += h * b->mg * b->l * t[r];
  double c = h / (2.0 * (b->I1 + b->m * b->l * b->l));
  for (int r = 0; r < 3; r++) w[r] = c * b->mO[r];
  bs99_cross(w, b->d3, wd);
  bs99_cross(w, wd, wwd);
  double f = 2.0 / (1.0 + w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  for (int r = 0; r < 3; r++) b->d3[r] += f * (wd[r] + wwd[r]);
}

/* phi_3 = l (d3)_3, the height of the centre of mass. */
static inline double bs99_phi3(const bs99_top *b) { return b->l * b->d3[2]; }

/* J3 = (m_O)_3, the angular momentum about the vertical axis. */
static inline double bs99_j3(const bs99_top *b) { return b->mO[2]; }

/* From the model's initial values to t = n h; max |J3^j - J3^0| over the
 * run into *dj3 (if not NULL). */
static inline int bs99_run(bs99_top *b, const lv_model *m, double h, int n, double *dj3) {
  int rc = bs99_init(b, m);
  if (rc) return rc;
  double j0 = bs99_j3(b), dj = 0.0;
  for (int i = 0; i < n; i++) {
    bs99_step(b, h);
    dj = fmax(dj, fabs(bs99_j3(b) - j0));
  }
  if (dj3) *dj3 = dj;
  return 0;
}

#endif
