/* libFuzzer harness: checkpoint files (livens run --resume FILE, read by
 * lv_integrator_checkpoint_read).  Any file must be refused with a named
 * status and a sentence, or be read and then stepped from without a crash
 * or undefined behaviour.
 *
 * The first input byte picks a scheme and its model (the schemes with a
 * private history in the file: generalized-alpha, BLieDF during and after
 * its start; and the one-step schemes).  The second byte picks how the rest
 * is used: even, the rest is the file as it is (the reader's header and
 * size checks); odd, the rest patches a real checkpoint of that scheme (one
 * written at start-up, after two steps) as pairs (16-bit offset, byte) XORed
 * into its body, and the size field and the checksum are then made right
 * again, so the mutations reach what lies behind the checksum: the state,
 * the statistics and the scheme's history, which a forged file controls. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "livens/livens.h"

typedef struct {
  const char *scheme, *model, *key, *val;
  double h;
  int steps; /* before the base image is written */
} ck_case;

static const ck_case cases[] = {
    {"genalpha", "heavy-top", NULL, NULL, 1e-3, 2},   {"genalpha", "heavy-top", "index", "2", 1e-3, 2},
    {"bliedf4", "heavy-top", NULL, NULL, 1e-3, 2},    {"bliedf2", "heavy-top", NULL, NULL, 1e-3, 5},
    {"bliedf3", "heavy-top", "start", "ramp", 1e-3, 1}, {"rattle", "pendulum3d", NULL, NULL, 0.01, 2},
    {"em", "pendulum3d", NULL, NULL, 0.01, 2},        {"vi-a", "pendulum3d", NULL, NULL, 0.01, 2},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static unsigned char *base[NCASES];
static size_t base_n[NCASES];
static char dir[] = "/tmp/livens-fuzz-ckpt-XXXXXX";

static lv_integrator *make(const ck_case *c, lv_model **m) {
  lv_integrator *it = NULL;
  if (lv_model_create(c->model, NULL, m) != 0) abort();
  if (lv_integrator_new(&it, *m, c->scheme, c->h) != 0) abort();
  if (c->key && lv_integrator_set_option(it, c->key, c->val) != 0) abort();
  return it;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  if (!mkdtemp(dir) || chdir(dir) != 0) abort();
  for (int k = 0; k < NCASES; k++) {
    lv_model *m = NULL;
    lv_integrator *it = make(&cases[k], &m);
    if (lv_integrator_init(it, 0.0, NULL, NULL) != 0) abort();
    for (int s = 0; s < cases[k].steps; s++)
      if (lv_integrator_step(it) != 0) abort();
    if (lv_integrator_checkpoint_write(it, "base.bin") != 0) abort();
    FILE *f = fopen("base.bin", "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) abort();
    long n = ftell(f);
    rewind(f);
    base[k] = malloc((size_t)n);
    if (n <= 0 || !base[k] || fread(base[k], 1, (size_t)n, f) != (size_t)n) abort();
    base_n[k] = (size_t)n;
    fclose(f);
    lv_integrator_free(it);
    lv_model_free(m);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  int k = data[0] % NCASES;
  const ck_case *c = &cases[k];
  unsigned char *img;
  size_t n;
  if (data[1] % 2 == 0) {
    n = size - 2;
    img = malloc(n + 1);
    if (!img) return 0;
    memcpy(img, data + 2, n);
  } else {
    n = base_n[k];
    img = malloc(n);
    if (!img) return 0;
    memcpy(img, base[k], n);
    /* the body starts after magic, version, byte-order mark and size */
    const size_t body = 24;
    for (size_t i = 2; i + 2 < size; i += 3) {
      size_t off = body + ((size_t)data[i] | (size_t)data[i + 1] << 8) % (n - 8 - body);
      img[off] ^= data[i + 2];
    }
    uint64_t total = n, sum = fnv1a(img, n - 8);
    memcpy(img + 16, &total, 8);
    memcpy(img + n - 8, &sum, 8);
  }
  FILE *f = fopen("in.bin", "wb");
  if (!f) abort();
  if (n && fwrite(img, 1, n, f) != n) abort();
  fclose(f);
  free(img);

  lv_model *m = NULL;
  lv_integrator *it = make(c, &m);
  lv_newton_options no;
  lv_integrator_get_newton(it, &no);
  int rc = lv_integrator_checkpoint_read(it, "in.bin");
  char why[512] = "";
  lv_integrator_error_detail(it, why, sizeof why);
  if (rc != 0 && rc != LV_EINPUT && rc != LV_EIO && rc != LV_ENOMEM) abort();
  if ((rc == LV_EINPUT || rc == LV_EIO) && !why[0]) abort(); /* a refusal says why */
  if (rc == 0) {
    /* whatever the file held: steps end with a status, never a crash */
    for (int s = 0; s < 3; s++)
      if (lv_integrator_step(it) != 0) break;
  } else if (lv_integrator_step(it) != LV_EINPUT) abort(); /* nothing to step from */
  lv_integrator_free(it);
  lv_model_free(m);
  return 0;
}
