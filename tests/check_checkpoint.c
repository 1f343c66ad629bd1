/* Checkpoint and resume (issue 17): for every scheme, N steps straight
 * equal N1 steps + checkpoint + resume in a fresh integrator + N - N1
 * steps, bit for bit (memcmp of the whole state); refused files (corrupt,
 * truncated, not a checkpoint, another model, scheme, option or step
 * size) with their sentence; and a writer killed at random moments never
 * leaves a broken checkpoint. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "livens/livens.h"
#include "testutil.h"

/* unconstrained model for the midpoint rule: a central anharmonic force */
static int c_mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) lv_sink_add(M, i, i, 1.0);
  return 0;
}

static lv_model *make_model(const char *name) {
  lv_model *m = NULL;
  if (strcmp(name, "central") == 0) {
    lv_space *sp;
    ck_assert_int_eq(lv_space_new_rn(&sp, 3), 0);
    ck_assert_int_eq(lv_model_new(&m, "central", sp, 0), 0);
    lv_model_set_mass(m, c_mass, 1);
    lv_model_set_potential(m, tu_quartic_V, tu_quartic_dV, NULL);
    double q0[3] = {1.0, 0.2, -0.1}, v0[3] = {0.1, 0.9, 0.4};
    lv_model_set_initial(m, q0, v0);
    return m;
  }
  ck_assert_int_eq(lv_model_create(name, NULL, &m), 0);
  return m;
}

typedef struct {
  const char *scheme, *model, *opt_key, *opt_val;
  double h;
  int n, split; /* steps in all, steps before the checkpoint */
} ckcase;

static const ckcase cases[] = {
    {"rattle", "four-particle", NULL, NULL, 0.01, 400, 200},
    {"midpoint", "central", NULL, NULL, 0.05, 400, 200},
    {"vi-s", "four-particle", NULL, NULL, 0.01, 400, 200},
    {"vi-a", "four-particle", NULL, NULL, 0.01, 400, 200},
    {"vi-b", "four-particle", NULL, NULL, 0.01, 400, 200},
    {"em", "four-particle", NULL, NULL, 0.01, 400, 200},
    {"em-g", "four-particle", NULL, NULL, 0.01, 400, 200},
    {"genalpha", "heavy-top", "index", "3", 1e-3, 400, 200},
    {"genalpha", "heavy-top", "index", "2", 1e-3, 400, 200},
    {"genalpha", "heavy-top", "sigma", "1", 1e-3, 400, 200}, /* the sigma corrector's dqc history */
    {"genalpha", "heavy-top", "index", "3", 1e-3, 400, 1},   /* right after the perturbed start */
    {"genalpha", "heavy-top", "index", "3", 1e-3, 400, 2},   /* while the guess history fills */
    {"genalpha", "heavy-top", "guess", "extrapolate", 1e-3, 400, 200},
    {"bliedf1", "heavy-top", NULL, NULL, 1e-3, 400, 200},
    {"bliedf2", "heavy-top", NULL, NULL, 1e-3, 400, 200},
    {"bliedf3", "heavy-top", NULL, NULL, 1e-3, 400, 200},
    {"bliedf4", "heavy-top", NULL, NULL, 1e-3, 400, 200},
    {"bliedf4", "heavy-top", NULL, NULL, 1e-3, 40, 2},       /* while start-up nodes are handed out */
    {"bliedf3", "heavy-top", "start", "ramp", 1e-3, 40, 1},  /* during the order ramp */
    {"bliedf2", "heavy-top", "index", "2", 1e-3, 400, 200},
    {"rattlie", "heavy-top", NULL, NULL, 1e-3, 400, 200},
};

static lv_integrator *make_it(const ckcase *c, lv_model *m) {
  lv_integrator *it = NULL;
  ck_assert_int_eq(lv_integrator_new(&it, m, c->scheme, c->h), 0);
  if (c->opt_key) ck_assert_int_eq(lv_integrator_set_option(it, c->opt_key, c->opt_val), 0);
  return it;
}

static void tmpname(char *buf, size_t n, const char *tag) {
  snprintf(buf, n, "ckpt-%s-%ld.bin", tag, (long)getpid());
}

/* Every array of the state, t and the step count equal bit for bit. */
static void assert_same(const lv_integrator *a, const lv_integrator *b, const lv_model *m, const char *what) {
  const lv_state *x = lv_integrator_state(a), *y = lv_integrator_state(b);
  int nq = lv_model_nq(m), nv = lv_model_nv(m), nc = lv_model_nc(m);
  ck_assert_msg(memcmp(&x->t, &y->t, sizeof(double)) == 0, "%s: t differs", what);
  ck_assert_msg(memcmp(x->q, y->q, (size_t)nq * sizeof(double)) == 0, "%s: q differs by %g", what,
                tu_max_abs_diff(nq, x->q, y->q));
  ck_assert_msg(memcmp(x->v, y->v, (size_t)nv * sizeof(double)) == 0, "%s: v differs by %g", what,
                tu_max_abs_diff(nv, x->v, y->v));
  ck_assert_msg(memcmp(x->p, y->p, (size_t)nv * sizeof(double)) == 0, "%s: p differs", what);
  if (nc) {
    ck_assert_msg(memcmp(x->lambda, y->lambda, (size_t)nc * sizeof(double)) == 0, "%s: lambda differs by %g", what,
                  tu_max_abs_diff(nc, x->lambda, y->lambda));
    ck_assert_msg(memcmp(x->gamma, y->gamma, (size_t)nc * sizeof(double)) == 0, "%s: gamma differs", what);
  }
  lv_integrator_stats sa, sb;
  lv_integrator_get_stats(a, &sa);
  lv_integrator_get_stats(b, &sb);
  ck_assert_int_eq(sa.steps, sb.steps);
  ck_assert_int_eq(sa.newton_iterations, sb.newton_iterations);
}

START_TEST(test_bit_for_bit) {
  const ckcase *c = &cases[_i];
  char what[128], path[256];
  snprintf(what, sizeof what, "%s %s=%s on %s, split %d of %d", c->scheme, c->opt_key ? c->opt_key : "",
           c->opt_val ? c->opt_val : "", c->model, c->split, c->n);
  tmpname(path, sizeof path, c->scheme);
  lv_model *m = make_model(c->model);
  /* straight */
  lv_integrator *a = make_it(c, m);
  ck_assert_int_eq(lv_integrator_init(a, 0.0, NULL, NULL), 0);
  for (int i = 0; i < c->n; i++) ck_assert_msg(lv_integrator_step(a) == 0, "%s: straight step %d failed", what, i);
  /* split: a checkpoint after c->split steps, resumed in a new integrator */
  lv_integrator *b = make_it(c, m);
  ck_assert_int_eq(lv_integrator_init(b, 0.0, NULL, NULL), 0);
  for (int i = 0; i < c->split; i++) ck_assert_int_eq(lv_integrator_step(b), 0);
  ck_assert_int_eq(lv_integrator_checkpoint_write(b, path), 0);
  size_t sz = 0;
  ck_assert_int_eq(lv_integrator_checkpoint_size(b, &sz), 0);
  struct stat stt;
  ck_assert_int_eq(stat(path, &stt), 0);
  ck_assert_int_eq((long)stt.st_size, (long)sz);
  lv_integrator_free(b);
  lv_integrator *r = make_it(c, m);
  int rc = lv_integrator_checkpoint_read(r, path);
  char detail[512];
  lv_integrator_error_detail(r, detail, sizeof detail);
  ck_assert_msg(rc == 0, "%s: read failed: %s", what, detail);
  for (int i = c->split; i < c->n; i++) ck_assert_msg(lv_integrator_step(r) == 0, "%s: resumed step %d failed", what, i);
  assert_same(a, r, m, what);
  unlink(path);
  lv_integrator_free(a);
  lv_integrator_free(r);
  lv_model_free(m);
}
END_TEST

/* read must fail with LV_EINPUT and a sentence containing @p needle; the
 * integrator then refuses to step */
static void assert_refused(lv_integrator *it, const char *path, const char *needle) {
  ck_assert_int_eq(lv_integrator_checkpoint_read(it, path), LV_EINPUT);
  char d[512];
  ck_assert_int_eq(lv_integrator_error_detail(it, d, sizeof d), LV_EINPUT);
  ck_assert_msg(strstr(d, needle) != NULL, "expected '%s' in: %s", needle, d);
  ck_assert_int_eq(lv_integrator_step(it), LV_EINPUT);
}

static void write_bytes(const char *path, const unsigned char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(p, 1, n, f), n);
  ck_assert_int_eq(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  unsigned char *p = malloc(1 << 20);
  ck_assert_ptr_nonnull(p);
  *n = fread(p, 1, 1 << 20, f);
  fclose(f);
  return p;
}

START_TEST(test_refusals) {
  char path[256], bad[256];
  tmpname(path, sizeof path, "ref");
  tmpname(bad, sizeof bad, "bad");
  lv_model *m = make_model("four-particle"), *other = make_model("pendulum3d");
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.01), 0);
  /* nothing to write before init */
  ck_assert_int_eq(lv_integrator_checkpoint_write(it, path), LV_EINPUT);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(lv_integrator_step(it), 0);
  ck_assert_int_eq(lv_integrator_checkpoint_write(it, path), 0);
  size_t n;
  unsigned char *img = read_bytes(path, &n);

  lv_integrator *r;
  ck_assert_int_eq(lv_integrator_new(&r, m, "rattle", 0.01), 0);
  /* one flipped bit in the state */
  img[n / 2] ^= 0x10;
  write_bytes(bad, img, n);
  assert_refused(r, bad, "corrupt");
  img[n / 2] ^= 0x10;
  /* truncated, in the body and in the header */
  write_bytes(bad, img, n - 9);
  assert_refused(r, bad, "truncated");
  write_bytes(bad, img, 20);
  assert_refused(r, bad, "truncated");
  /* empty, and not a checkpoint at all */
  write_bytes(bad, img, 0);
  assert_refused(r, bad, "not a livens checkpoint");
  write_bytes(bad, (const unsigned char *)"t,q1,q2\n0,1,2\n", 14);
  assert_refused(r, bad, "not a livens checkpoint");
  unsigned char *junk = calloc(1, 4096);
  write_bytes(bad, junk, 4096);
  assert_refused(r, bad, "not a livens checkpoint");
  free(junk);
  /* the intact file still reads, and the integrator steps again */
  write_bytes(bad, img, n);
  ck_assert_int_eq(lv_integrator_checkpoint_read(r, bad), 0);
  ck_assert_int_eq(lv_integrator_step(r), 0);
  lv_integrator_free(r);
  /* another model, scheme, option set or step size */
  ck_assert_int_eq(lv_integrator_new(&r, other, "rattle", 0.01), 0);
  assert_refused(r, path, "belongs to model four-particle");
  lv_integrator_free(r);
  ck_assert_int_eq(lv_integrator_new(&r, m, "em", 0.01), 0);
  assert_refused(r, path, "written by scheme rattle");
  lv_integrator_free(r);
  ck_assert_int_eq(lv_integrator_new(&r, m, "rattle", 0.02), 0);
  assert_refused(r, path, "step size");
  lv_integrator_free(r);
  lv_integrator *e;
  ck_assert_int_eq(lv_integrator_new(&e, m, "em", 0.01), 0);
  ck_assert_int_eq(lv_integrator_set_option(e, "guess", "advanced"), 0);
  ck_assert_int_eq(lv_integrator_init(e, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_checkpoint_write(e, path), 0);
  lv_integrator_free(e);
  ck_assert_int_eq(lv_integrator_new(&r, m, "em", 0.01), 0);
  assert_refused(r, path, "other scheme options");
  lv_integrator_free(r);
  /* unreadable: no such file */
  ck_assert_int_eq(lv_integrator_new(&r, m, "rattle", 0.01), 0);
  ck_assert_int_eq(lv_integrator_checkpoint_read(r, "no-such-dir/none.bin"), LV_EIO);
  lv_integrator_free(r);
  /* unwritable: the directory does not exist; nothing is left behind */
  ck_assert_int_eq(lv_integrator_checkpoint_write(it, "no-such-dir/ck.bin"), LV_EIO);
  char d[512];
  lv_integrator_error_detail(it, d, sizeof d);
  ck_assert_msg(strstr(d, "no-such-dir/ck.bin") != NULL, "%s", d);
  free(img);
  unlink(path);
  unlink(bad);
  lv_integrator_free(it);
  lv_model_free(m);
  lv_model_free(other);
}
END_TEST

/* A writer killed (SIGKILL) at random moments while it steps and writes
 * checkpoints in a loop: the file at the path is always a whole checkpoint
 * that reads back, never a partial one. */
START_TEST(test_kill_during_write) {
  char path[256];
  tmpname(path, sizeof path, "kill");
  lv_model *m = NULL;
  lv_kv kv = {1, (const char *[]){"N"}, (const char *[]){"2000"}};
  ck_assert_int_eq(lv_model_create("chain", &kv, &m), 0);
  lv_integrator *it;
  ck_assert_int_eq(lv_integrator_new(&it, m, "rattle", 0.005), 0);
  ck_assert_int_eq(lv_integrator_init(it, 0.0, NULL, NULL), 0);
  ck_assert_int_eq(lv_integrator_checkpoint_write(it, path), 0);
  unsigned long long seed = tu_seed((unsigned long long)getpid());
  for (int round = 0; round < 12; round++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      for (;;)
        if (lv_integrator_checkpoint_write(it, path)) _exit(3);
    }
    struct timespec ts = {0, 1000000L + (long)tu_randint(&seed, 20000000)};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFSIGNALED(status), "the writer stopped by itself (status %d)", status);
    lv_integrator *r;
    ck_assert_int_eq(lv_integrator_new(&r, m, "rattle", 0.005), 0);
    char d[512] = "";
    int rc = lv_integrator_checkpoint_read(r, path);
    lv_integrator_error_detail(r, d, sizeof d);
    ck_assert_msg(rc == 0, "round %d: %s", round, d);
    lv_integrator_free(r);
  }
  /* temporary files of killed writers are left (path.XXXXXX), never the path itself broken */
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -f %s.??????", path);
  ck_assert_int_eq(system(cmd), 0);
  unlink(path);
  lv_integrator_free(it);
  lv_model_free(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("checkpoint");
  TCase *tc = tu_tcase(s, "bit_for_bit", 2.0);
  tcase_add_loop_test(tc, test_bit_for_bit, 0, (int)(sizeof cases / sizeof cases[0]));
  tc = tu_tcase(s, "refusals", 1.0);
  tcase_add_test(tc, test_refusals);
  tc = tu_tcase(s, "kill", 3.0);
  tcase_add_test(tc, test_kill_during_write);
  return tu_run_suite(s);
}
