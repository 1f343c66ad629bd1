/* Checkpoint and resume (issue 17): the whole integrator state in one file,
 * written atomically (temporary file, fsync, rename).
 *
 * Layout (host byte order; the byte-order mark refuses a foreign file):
 *   magic "LVCKPT\0\1", u32 version, u32 byte-order mark, u64 total size,
 *   scheme name[64], model name[64], i32 nq, nv, nc, pad,
 *   u64 history doubles, u64 option text bytes,
 *   doubles: h, t_base, h_attempt, t, guard figures (4), wall time,
 *            |g(q0)|, |G(q0) v0|, Newton tolerances (6), Newton stop test +
 *            4 max_frozen (0 in files of the defaults, as before they existed),
 *   i64: steps since the step size was set, statistics (6), Newton kind,
 *        max_iter, damping,
 *   state q, v, p, lambda, gamma, the scheme's history, the option text
 *   ("key=value\n" in the order set), and a 64-bit FNV-1a checksum of
 *   everything before it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lv_internal.h"
#include "integrator/integrator_impl.h"

#define CK_MAGIC "LVCKPT\0\1"
#define CK_VERSION 1u
#define CK_BOM 0x01020304u
#define CK_NAME 64
#define CK_NDBL 18
#define CK_NLONG 10

typedef struct {
  unsigned char *p;
  size_t n, cap;
  int oom;
} buf_t;

static void put(buf_t *b, const void *x, size_t n) {
  if (b->oom || n == 0) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 4096;
    while (cap < b->n + n) cap *= 2;
    unsigned char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, x, n);
  b->n += n;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* The option text: "key=value\n" per option, in the order they were set. */
static void options_text(const lv_integrator *it, buf_t *b) {
  for (int i = 0; i < it->opts.n; i++) {
    put(b, it->opts.keys[i], strlen(it->opts.keys[i]));
    put(b, "=", 1);
    put(b, it->opts.values[i], strlen(it->opts.values[i]));
    put(b, "\n", 1);
  }
}

static size_t header_size(void) { return 8 + 4 + 4 + 8 + 2 * CK_NAME + 4 * 4 + 8 + 8; }

static void fixed_figures(const lv_integrator *it, double *d, int64_t *l) {
  const lv_newton_options *o = &it->newton;
  double dd[CK_NDBL] = {it->h, it->t_base, it->h_attempt, it->state.t, it->guard_e0, it->guard_escale,
                        it->guard_gscale, it->guard_gvscale, it->stats.wall_time, it->stats.init_g_norm,
                        it->stats.init_gv_norm, o->res_tol, o->res_rtol, o->atol, o->rtol, o->reuse_rate,
                        o->divergence, (double)o->stop + 4.0 * (double)o->max_frozen};
  int64_t ll[CK_NLONG] = {it->n_since_base, it->stats.steps, it->stats.newton_iterations, it->stats.factorizations,
                          it->stats.failed_solves, it->stats.halvings, it->stats.projected, (int64_t)o->kind,
                          o->max_iter, o->damping};
  memcpy(d, dd, sizeof dd);
  memcpy(l, ll, sizeof ll);
}

/* The image in memory (b->p, b->n); 0, LV_EINPUT or LV_ENOMEM. */
static int build_image(lv_integrator *it, buf_t *b) {
  if (!it->initialized || !it->created) return LV_EINPUT;
  const lv_model *m = it->model;
  size_t nh = it->type->history ? it->type->history(&it->stepper, NULL, LV_HISTORY_COUNT) : 0;
  double *hist = lv_calloc(nh + 1, sizeof(double));
  if (!hist) return LV_ENOMEM;
  if (nh && it->type->history(&it->stepper, hist, LV_HISTORY_WRITE) != nh) {
    free(hist);
    return LV_EINPUT;
  }
  buf_t opt = {0};
  options_text(it, &opt);
  if (opt.oom) {
    free(hist);
    return LV_ENOMEM;
  }
  uint32_t version = CK_VERSION, bom = CK_BOM;
  char scheme[CK_NAME] = {0}, model[CK_NAME] = {0};
  snprintf(scheme, sizeof scheme, "%s", it->type->name);
  snprintf(model, sizeof model, "%s", lv_model_name(m) ? lv_model_name(m) : "");
  int32_t sizes[4] = {lv_model_nq(m), lv_model_nv(m), lv_model_nc(m), 0};
  uint64_t nh64 = nh, nopt = opt.n;
  size_t nq = (size_t)sizes[0], nv = (size_t)sizes[1], nc = (size_t)sizes[2];
  uint64_t total = header_size() + CK_NDBL * 8 + CK_NLONG * 8 + (nq + 2 * nv + 2 * nc + nh) * sizeof(double) +
                   opt.n + 8;
  double dd[CK_NDBL];
  int64_t ll[CK_NLONG];
  fixed_figures(it, dd, ll);
  put(b, CK_MAGIC, 8);
  put(b, &version, 4);
  put(b, &bom, 4);
  put(b, &total, 8);
  put(b, scheme, CK_NAME);
  put(b, model, CK_NAME);
  put(b, sizes, sizeof sizes);
  put(b, &nh64, 8);
  put(b, &nopt, 8);
  put(b, dd, sizeof dd);
  put(b, ll, sizeof ll);
  put(b, it->state.q, nq * sizeof(double));
  put(b, it->state.v, nv * sizeof(double));
  put(b, it->state.p, nv * sizeof(double));
  put(b, it->state.lambda, nc * sizeof(double));
  put(b, it->state.gamma, nc * sizeof(double));
  put(b, hist, nh * sizeof(double));
  put(b, opt.p, opt.n);
  free(hist);
  free(opt.p);
  if (b->oom) return LV_ENOMEM;
  uint64_t sum = fnv1a(b->p, b->n);
  put(b, &sum, 8);
  if (b->oom) return LV_ENOMEM;
  return b->n == total ? 0 : LV_EINPUT;
}

int lv_integrator_checkpoint_size(const lv_integrator *it, size_t *n) {
  if (!it || !n) return LV_EINPUT;
  *n = 0;
  if (!it->initialized || !it->created) return LV_EINPUT;
  buf_t b = {0};
  int rc = build_image((lv_integrator *)it, &b);
  if (!rc) *n = b.n;
  free(b.p);
  return rc;
}

static int io_fail(lv_integrator *it, const char *what, const char *path, int err) {
  snprintf(it->ckpt_detail, sizeof it->ckpt_detail, "cannot %s checkpoint %s: %s", what, path, strerror(err));
  it->last_status = LV_EIO;
  return LV_EIO;
}

int lv_integrator_checkpoint_write(lv_integrator *it, const char *path) {
  if (!it || !path || !path[0]) return LV_EINPUT;
  it->ckpt_detail[0] = '\0';
  buf_t b = {0};
  int rc = build_image(it, &b);
  if (rc) {
    free(b.p);
    if (rc == LV_EINPUT)
      snprintf(it->ckpt_detail, sizeof it->ckpt_detail,
               "there is no state to checkpoint: the integrator has no successful init or read");
    it->last_status = rc;
    return rc;
  }
  size_t lp = strlen(path);
  char *tmp = malloc(lp + 8);
  if (!tmp) {
    free(b.p);
    return LV_ENOMEM;
  }
  memcpy(tmp, path, lp);
  memcpy(tmp + lp, ".XXXXXX", 8);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(b.p);
    free(tmp);
    return io_fail(it, "create a temporary file for", path, e);
  }
  size_t off = 0;
  int err = 0;
  while (off < b.n && !err) {
    ssize_t w = write(fd, b.p + off, b.n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) err = w < 0 ? errno : EIO;
    else off += (size_t)w;
  }
  if (!err && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    free(b.p);
    free(tmp);
    return io_fail(it, "write", path, err);
  }
  /* The rename itself durable: flush the directory entry (best effort: not
   * every file system lets a directory be opened or synced). */
  char *slash = strrchr(tmp, '/');
  if (slash) *slash = '\0';
  int dfd = open(slash ? (slash == tmp ? "/" : tmp) : ".", O_RDONLY);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  free(b.p);
  free(tmp);
  it->last_status = 0;
  return 0;
}

static int refuse(lv_integrator *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(lv_integrator *it, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(it->ckpt_detail, sizeof it->ckpt_detail, fmt, ap);
  va_end(ap);
  it->last_status = LV_EINPUT;
  return LV_EINPUT;
}

int lv_integrator_checkpoint_read(lv_integrator *it, const char *path) {
  if (!it || !path) return LV_EINPUT;
  it->ckpt_detail[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) return io_fail(it, "open", path, errno);
  buf_t b = {0};
  unsigned char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    put(&b, chunk, got);
    if (b.oom) break;
  }
  int rerr = ferror(f) ? (errno ? errno : EIO) : 0;
  fclose(f);
  if (b.oom) {
    free(b.p);
    return LV_ENOMEM;
  }
  if (rerr) {
    free(b.p);
    return io_fail(it, "read", path, rerr);
  }
  /* From here the old state is about to be replaced: no stepping until
   * this read (or an init) succeeds. */
  it->initialized = 0;
  int rc = 0;
  const unsigned char *p = b.p;
  const lv_model *m = it->model;
  size_t hs = header_size();
  if (b.n < hs) {
    rc = b.n > 0 && memcmp(p, CK_MAGIC, b.n < 8 ? b.n : 8) == 0
             ? refuse(it, "checkpoint %s is truncated: %zu bytes, shorter than its header", path, b.n)
             : refuse(it, "%s is not a livens checkpoint (no checkpoint header)", path);
    free(b.p);
    return rc;
  }
  uint32_t version, bom;
  uint64_t total, nh, nopt;
  char scheme[CK_NAME + 1] = {0}, model[CK_NAME + 1] = {0}, mine[CK_NAME] = {0};
  int32_t sizes[4];
  size_t o = 8;
  memcpy(&version, p + o, 4), o += 4;
  memcpy(&bom, p + o, 4), o += 4;
  memcpy(&total, p + o, 8), o += 8;
  memcpy(scheme, p + o, CK_NAME), o += CK_NAME;
  memcpy(model, p + o, CK_NAME), o += CK_NAME;
  memcpy(sizes, p + o, sizeof sizes), o += sizeof sizes;
  memcpy(&nh, p + o, 8), o += 8;
  memcpy(&nopt, p + o, 8), o += 8;
  if (memcmp(p, CK_MAGIC, 8) != 0) rc = refuse(it, "%s is not a livens checkpoint (wrong magic number)", path);
  else if (bom != CK_BOM)
    rc = refuse(it, "checkpoint %s was written on a machine of another byte order", path);
  else if (version != CK_VERSION)
    rc = refuse(it, "checkpoint %s has format version %u; this livens reads version %u", path, version, CK_VERSION);
  else if (total != b.n)
    rc = total > b.n ? refuse(it, "checkpoint %s is truncated: %zu of its %llu bytes", path, b.n,
                              (unsigned long long)total)
                     : refuse(it, "checkpoint %s has %zu bytes where its header says %llu (trailing data)", path,
                              b.n, (unsigned long long)total);
  else if (memcmp(&(uint64_t){fnv1a(p, b.n - 8)}, p + b.n - 8, 8) != 0)
    rc = refuse(it, "checkpoint %s is corrupt: its checksum does not match its contents", path);
  if (rc) {
    free(b.p);
    return rc;
  }
  snprintf(mine, sizeof mine, "%s", lv_model_name(m) ? lv_model_name(m) : "");
  if (strcmp(scheme, it->type->name) != 0)
    rc = refuse(it, "checkpoint %s was written by scheme %s, not %s", path, scheme, it->type->name);
  else if (strcmp(model, mine) != 0)
    rc = refuse(it, "checkpoint %s belongs to model %s, not %s", path, model, mine);
  else if (sizes[0] != lv_model_nq(m) || sizes[1] != lv_model_nv(m) || sizes[2] != lv_model_nc(m))
    rc = refuse(it, "checkpoint %s has nq = %d, nv = %d, nc = %d, this model %d, %d, %d (other parameters)", path,
                sizes[0], sizes[1], sizes[2], lv_model_nq(m), lv_model_nv(m), lv_model_nc(m));
  if (rc) {
    free(b.p);
    return rc;
  }
  size_t nq = (size_t)lv_model_nq(m), nv = (size_t)lv_model_nv(m), nc = (size_t)lv_model_nc(m);
  if (total != hs + CK_NDBL * 8 + CK_NLONG * 8 + (nq + 2 * nv + 2 * nc + nh) * sizeof(double) + nopt + 8) {
    rc = refuse(it, "checkpoint %s is corrupt: its sections do not add up to its size", path);
    free(b.p);
    return rc;
  }
  double dd[CK_NDBL], mydd[CK_NDBL];
  int64_t ll[CK_NLONG], myll[CK_NLONG];
  memcpy(dd, p + o, sizeof dd), o += sizeof dd;
  memcpy(ll, p + o, sizeof ll), o += sizeof ll;
  size_t o_state = o;
  o += (nq + 2 * nv + 2 * nc) * sizeof(double);
  size_t o_hist = o;
  o += nh * sizeof(double);
  buf_t opt = {0};
  options_text(it, &opt);
  if (opt.oom) {
    free(b.p);
    return LV_ENOMEM;
  }
  fixed_figures(it, mydd, myll);
  if (opt.n != nopt || (nopt && memcmp(opt.p, p + o, nopt) != 0))
    rc = refuse(it, "checkpoint %s was written with other scheme options (%.*s); set the same options before "
                "reading it", path, (int)(nopt > 120 ? 120 : nopt), (const char *)(p + o));
  else if (dd[0] != it->h)
    rc = refuse(it, "checkpoint %s was written with step size h = %.17g, this integrator has h = %.17g", path, dd[0],
                it->h);
  else if (memcmp(dd + 11, mydd + 11, 7 * sizeof(double)) != 0 || memcmp(ll + 7, myll + 7, 3 * sizeof(int64_t)) != 0)
    rc = refuse(it, "checkpoint %s was written with other Newton options (kind, tolerances, iteration limit)", path);
  free(opt.p);
  if (rc) {
    free(b.p);
    return rc;
  }
  /* A fresh scheme instance, then its history from the file. */
  lv_integrator_resolve_linsol(it);
  rc = lv_integrator_create_stepper(it);
  if (rc) {
    free(b.p);
    it->last_status = rc;
    return rc;
  }
  size_t want = it->type->history ? it->type->history(&it->stepper, NULL, LV_HISTORY_COUNT) : 0;
  if (want != nh) {
    rc = refuse(it, "checkpoint %s holds a scheme history of %llu numbers where %s keeps %zu", path,
                (unsigned long long)nh, it->type->name, want);
    free(b.p);
    return rc;
  }
  double *hist = lv_calloc(nh + 1, sizeof(double));
  if (!hist) {
    free(b.p);
    return LV_ENOMEM;
  }
  memcpy(hist, p + o_hist, nh * sizeof(double));
  lv_state *s = &it->state;
  const unsigned char *q = p + o_state;
  memcpy(s->q, q, nq * sizeof(double)), q += nq * sizeof(double);
  memcpy(s->v, q, nv * sizeof(double)), q += nv * sizeof(double);
  memcpy(s->p, q, nv * sizeof(double)), q += nv * sizeof(double);
  if (nc) memcpy(s->lambda, q, nc * sizeof(double)), q += nc * sizeof(double);
  if (nc) memcpy(s->gamma, q, nc * sizeof(double));
  if (nh) it->type->history(&it->stepper, hist, LV_HISTORY_READ);
  free(hist);
  free(b.p);
  it->t_base = dd[1];
  it->h_attempt = dd[2];
  s->t = dd[3];
  it->guard_e0 = dd[4];
  it->guard_escale = dd[5];
  it->guard_gscale = dd[6];
  it->guard_gvscale = dd[7];
  memset(&it->stats, 0, sizeof it->stats);
  it->stats.wall_time = dd[8];
  it->stats.init_g_norm = dd[9];
  it->stats.init_gv_norm = dd[10];
  it->n_since_base = (long)ll[0];
  it->stats.steps = (long)ll[1];
  it->stats.newton_iterations = (long)ll[2];
  it->stats.factorizations = (long)ll[3];
  it->stats.failed_solves = (long)ll[4];
  it->stats.halvings = (long)ll[5];
  it->stats.projected = (int)ll[6];
  memset(&it->last, 0, sizeof it->last);
  memset(&it->model_err, 0, sizeof it->model_err);
  it->stop_requested = 0;
  it->not_ready = 0;
  it->fail_in_init = 0;
  it->saddle_regular = -1;
  it->initialized = 1;
  it->last_status = 0;
  return 0;
}
