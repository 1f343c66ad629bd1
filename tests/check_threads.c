/* One model, several integrators, several threads (issue 14, section 3).
 *
 * Evaluating a model must not write it: integrators in two threads share
 * one model, one of them runs into a NaN from the model's dV and the other
 * never does.  Checked: each thread's trajectory equals the same run done
 * alone (bit for bit), each integrator's error detail names its own
 * failure, and a failure record survives another integrator's successful
 * step on the same thread.  CI also runs this program under ThreadSanitizer
 * (setup.sh), which reports the race the shared record used to be. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "livens/livens.h"

/* A spherical pendulum whose potential gradient is NaN for x < -0.5: a
 * run swinging round the vertical reaches it, one hanging near the bottom
 * does not. */
static int mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) {
    int rc = lv_sink_add(M, i, i, 1.0);
    if (rc) return rc;
  }
  return 0;
}
static int V(const double *q, double *out, void *u) { (void)u; *out = 9.81 * q[2]; return 0; }
static int dV(const double *q, double *g, void *u) {
  (void)u;
  g[0] = q[0] < -0.5 ? NAN : 0.0;
  g[1] = 0.0;
  g[2] = 9.81;
  return 0;
}
static int g(const double *q, double *out, void *u) {
  (void)u;
  out[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - 1.0);
  return 0;
}
static int G(const double *q, lv_sink *J, void *u) {
  (void)u;
  for (int j = 0; j < 3; j++) {
    int rc = lv_sink_add(J, 0, j, q[j]);
    if (rc) return rc;
  }
  return 0;
}

enum { STEPS = 400 };

typedef struct {
  const lv_model *model;
  double q0[3], v0[3];
  int status, steps;      /* status of the last step, steps taken */
  double q[3];            /* final state */
  char detail[256];       /* lv_integrator_error_detail at the end */
} run;

static void *do_run(void *arg) {
  run *r = arg;
  lv_integrator *it = NULL;
  r->status = lv_integrator_new(&it, r->model, "rattle", 0.01);
  if (!r->status) r->status = lv_integrator_init(it, 0.0, r->q0, r->v0);
  for (r->steps = 0; !r->status && r->steps < STEPS; r->steps++) r->status = lv_integrator_step(it);
  if (it) {
    memcpy(r->q, lv_integrator_state(it)->q, sizeof r->q);
    lv_integrator_error_detail(it, r->detail, sizeof r->detail);
  }
  lv_integrator_free(it);
  return NULL;
}

static int fails = 0;
#define CHECK(c, ...)                 \
  do {                                \
    if (!(c)) {                       \
      printf("FAIL " __VA_ARGS__);    \
      printf("\n");                   \
      fails++;                        \
    }                                 \
  } while (0)

static run make_run(const lv_model *m, int swinging) {
  run r;
  memset(&r, 0, sizeof r);
  r.model = m;
  if (swinging) {
    r.q0[0] = 1.0;
    r.v0[1] = 1.0;
  } else {
    double s = sin(0.1);
    r.q0[0] = s;
    r.q0[2] = -cos(0.1);
  }
  return r;
}

int main(void) {
  lv_space *sp = NULL;
  lv_model *m = NULL;
  int rc = lv_space_new_rn(&sp, 3);
  if (!rc) rc = lv_model_new(&m, "nan-pendulum", sp, 1);
  if (!rc) rc = lv_model_set_mass(m, mass, 1);
  if (!rc) rc = lv_model_set_potential(m, V, dV, NULL);
  if (!rc) rc = lv_model_set_constraints(m, g, G, NULL, NULL);
  if (rc) {
    printf("FAIL building the model: %s\n", lv_strerror(rc));
    return 1;
  }

  /* alone, one after the other */
  run calm = make_run(m, 0), swing = make_run(m, 1);
  do_run(&calm);
  do_run(&swing);
  CHECK(calm.status == 0 && calm.steps == STEPS, "the calm run alone: %s after %d steps", calm.detail, calm.steps);
  CHECK(swing.status == LV_ENONFINITE, "the swinging run alone ends with %s, not LV_ENONFINITE",
        lv_status_name(swing.status));
  CHECK(strstr(swing.detail, "dV callback") != NULL, "its detail names dV: '%s'", swing.detail);
  printf("alone: calm %d steps ok, swinging stops after %d steps: %s\n", calm.steps, swing.steps, swing.detail);

  /* together: many rounds in two threads, same model */
  for (int round = 0; round < 20; round++) {
    run a = make_run(m, 0), b = make_run(m, 1);
    pthread_t ta, tb;
    if (pthread_create(&ta, NULL, do_run, &a) || pthread_create(&tb, NULL, do_run, &b)) {
      printf("FAIL pthread_create\n");
      return 1;
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(a.status == 0 && a.steps == STEPS && memcmp(a.q, calm.q, sizeof a.q) == 0,
          "round %d: the calm thread differs from the calm run alone (%s)", round, a.detail);
    CHECK(b.status == swing.status && b.steps == swing.steps && memcmp(b.q, swing.q, sizeof b.q) == 0,
          "round %d: the swinging thread differs from its run alone", round);
    CHECK(strcmp(b.detail, swing.detail) == 0, "round %d: detail '%s', alone '%s'", round, b.detail, swing.detail);
  }

  /* one thread, interleaved: a later successful step of another integrator
   * on the same model keeps the failed one's record */
  {
    lv_integrator *ia = NULL, *ib = NULL;
    run a = make_run(m, 0), b = make_run(m, 1);
    rc = lv_integrator_new(&ia, m, "rattle", 0.01);
    if (!rc) rc = lv_integrator_new(&ib, m, "rattle", 0.01);
    if (!rc) rc = lv_integrator_init(ia, 0.0, a.q0, a.v0);
    if (!rc) rc = lv_integrator_init(ib, 0.0, b.q0, b.v0);
    CHECK(rc == 0, "interleaved set-up: %s", lv_strerror(rc));
    int rb = 0;
    for (int k = 0; k < STEPS && !rb; k++) rb = lv_integrator_step(ib);
    CHECK(rb == LV_ENONFINITE, "interleaved: the swinging integrator ends with %s", lv_status_name(rb));
    CHECK(lv_integrator_step(ia) == 0, "interleaved: the calm integrator's step fails");
    char detail[256];
    lv_integrator_error_detail(ib, detail, sizeof detail);
    CHECK(strcmp(detail, swing.detail) == 0, "interleaved: detail after another integrator's step '%s', expected '%s'",
          detail, swing.detail);
    lv_integrator_free(ia);
    lv_integrator_free(ib);
  }

  lv_model_free(m);
  if (fails) printf("%d check(s) failed\n", fails);
  else printf("all thread checks passed\n");
  return fails ? 1 : 0;
}
