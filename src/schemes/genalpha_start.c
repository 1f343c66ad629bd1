/* Generalized-alpha, starting values and projections: the initial values
 * (ga_init: standard start a0 = v'(t0)), the perturbed starting values
 * (56)+(57) and their variants (start=a0, perturbed-no-commutator), and the
 * schedule of velocity projections (projection=on, projection-times).  The
 * saddle-point solves [M G^T; G 0] they need (consistent v' and lambda (7),
 * the velocity shift (56), the M-orthogonal projection of seed 001) are the
 * model's saddle-point module (model/saddle.h).  The step: genalpha.c; the
 * shared state: genalpha_impl.h. */
#include "genalpha_impl.h"

/* The scheme's init: v'(t0), lambda(t0) and the standard start a0 = v'(t0);
 * the perturbed starts need h and are applied by the first step. */
int ga_init(lv_stepper *st) {
  genalpha *g = st->priv;
  lv_state *s = st->state;
  /* (7); a0 = v'(t0) until the first step knows h (perturbed start). */
  LV_CHECK(lv_saddle_accelerations(g->saddle, s->t, s->q, s->v, g->vd, s->lambda));
  memcpy(g->a, g->vd, (size_t)g->nv * sizeof(double));
  memset(s->gamma, 0, (size_t)g->nc * sizeof(double));
  g->start_pending = g->start == START_PERTURBED || g->start == START_A0 || g->start == START_NO_COMMUTATOR;
  g->next_proj = 0;
  g->mc_valid = g->g1_valid = 0;
  memset(g->dqc, 0, (size_t)g->nv * sizeof(double)); /* sigma: no previous correction */
  g->hist_n = 0, g->guess_extrap = 0; /* guess: no steps to extrapolate from yet */
  return 0;
}

/* Perturbed starting values [P1 §4.2] for step h:
 *   v''(t0) by central differences with s = 1 from (7) at
 *     q_+- = q0 o exp(+-h v0 + h^2/2 v'0),  v_+- = v0 +- h v'0,  t0 +- h;
 *   a0 = v'0 + (alpha_m - alpha_f) h v''0                                (57)
 *   index 3: l0 = h^3/12 (2 C_q v''0 + ad_{v0} v'0),
 *            v0 += Dv with [M G^T; G 0][Dv; .] = [0; G l0 / h]           (56)
 * The index-2 method keeps v0 (it must start on G v = 0, spec §3.7), and
 * so does start = a0 (only (57)). */
int ga_perturbed_start(genalpha *g, double h) {
  const lv_state *s = g->s;
  int d = g->nv, k = g->nc;
  double *vdd = g->astart; /* v''0, turned into a0 below */
  double *w = g->hdq, *vp = g->v1, *qp = g->q1, *vdp = g->vd1, *vdm = g->tmp2;
  for (int sgn = -1; sgn <= 1; sgn += 2) {
    for (int i = 0; i < d; i++) {
      w[i] = sgn * h * s->v[i] + 0.5 * h * h * g->vd[i];
      vp[i] = s->v[i] + sgn * h * g->vd[i];
    }
    LV_CHECK(lv_space_compose_exp(g->sp, s->q, 1.0, w, qp));
    LV_CHECK(lv_saddle_accelerations(g->saddle, s->t + sgn * h, qp, vp, sgn < 0 ? vdm : vdp, NULL));
  }
  for (int i = 0; i < d; i++) vdd[i] = (vdp[i] - vdm[i]) / (2.0 * h);
  memcpy(g->vstart, s->v, (size_t)d * sizeof(double));
  if (g->index == 3 && k > 0 && (g->start == START_PERTURBED || g->start == START_NO_COMMUTATOR)) {
    double cq = 1.0 - 6.0 * g->beta - 3.0 * (g->am - g->af);
    LV_CHECK(lv_space_ad(g->sp, s->v, g->vd, g->tmp));
    double lie = g->sigma != 0.0 || g->corr_paper ? 12.0 * ga_sigma_lie_coef(g) : 1.0; /* 1: sigma = 0 as before */
    if (g->start == START_NO_COMMUTATOR) lie = 0.0; /* ablation */
    for (int i = 0; i < d; i++) g->tmp[i] = h * h / 12.0 * (2.0 * cq * vdd[i] + lie * g->tmp[i]); /* l0 / h */
    LV_CHECK(lv_saddle_factor(g->saddle, s->q));
    LV_CHECK(lv_saddle_shift(g->saddle, s->q, g->tmp, g->tmp2)); /* Dv; v'0 at q_- is used up */
    for (int i = 0; i < d; i++) g->vstart[i] += g->tmp2[i];
  }
  for (int i = 0; i < d; i++) g->astart[i] = g->vd[i] + (g->am - g->af) * h * vdd[i];
  return 0;
}

/* Velocity projection [P2] after every step (projection=on) or after the
 * steps that reach a projection time (projection-times). */
int ga_projection_due(const genalpha *g, double h, int *next_out) {
  int proj = g->project_every;
  int next = g->next_proj;
  while (next < g->nproj && g->proj_t[next] < g->t1 - 0.5 * h) next++; /* times already passed */
  if (next < g->nproj && g->proj_t[next] <= g->t1 + 0.5 * h) {
    proj = 1;
    next++;
  }
  *next_out = next;
  return proj;
}
