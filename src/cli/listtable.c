/* `livens list`: which scheme runs which model in which formulation
 * (issue 15).  Indented by four, so the list's two-space model and scheme
 * lines above stay the only ones scripts read as names.  One row per registered model, and per value of its
 * `formulation` parameter where it has one; one column per scheme.  Each
 * cell is what the library itself answers: lv_integrator_new (the scheme's
 * declared needs: constant mass matrix, linear space, no constraints,
 * conservative model, no driving constraints) and then lv_integrator_init (the checks a scheme
 * makes when it starts, e.g. RATTLie's on the model's force) at the
 * model's default initial state. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "cli.h"

/* The marks start schemes, and OpenBLAS, on its first call, maps a work
 * buffer of about 129 MB and retries forever when an address-space limit
 * refuses it (main.c's blas_buffer_fits): probe the mapping first. */
static int blas_room(void) {
  const size_t need = (size_t)135266304;
  void *p = mmap(NULL, need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 0;
  munmap(p, need);
  return 1;
}

/* The mark of one (model, scheme) pair. */
static char mark(const lv_model *m, const lv_scheme_type *st) {
  double h = 1e-3;
  lv_integrator *it = NULL;
  int rc = lv_integrator_new(&it, m, st->name, h);
  if (rc == LV_ENOTIMPL) {
    switch (lv_scheme_unmet_requirement(st, m, NULL, 0)) {
      case LV_SCHEME_CONSTANT_MASS: return 'M';
      case LV_SCHEME_LINEAR_SPACE: return 'L';
      case LV_SCHEME_UNCONSTRAINED: return 'U';
      case LV_SCHEME_CONSERVATIVE: return 'F';
      case LV_SCHEME_DRIVEN: return 'D';
      default: return 'S';
    }
  }
  if (rc) return '?';
  rc = lv_integrator_init(it, 0.0, NULL, NULL);
  lv_integrator_free(it);
  return rc == 0 ? 'x' : rc == LV_ENOTIMPL ? 'S' : '?';
}

/* Candidate values of a `formulation` parameter: its default and every
 * name-like word of its documentation; the ones the model accepts are
 * its formulations (so the table follows the models as they grow). */
static int formulations(const lv_model_info *mi, const lv_param_info *p, char vals[][32], int max) {
  int n = 0;
  const char *s = p->doc ? p->doc : "";
  for (int pass = 0; pass < 2; pass++) {
    const char *t = pass == 0 ? p->default_value : s;
    while (t && *t && n < max) {
      while (*t && !isalnum((unsigned char)*t)) t++;
      const char *b = t;
      while (*t && (isalnum((unsigned char)*t) || *t == '-' || *t == '_')) t++;
      size_t len = (size_t)(t - b);
      if (!len || len >= 32 || !islower((unsigned char)*b)) continue;
      char w[32];
      memcpy(w, b, len);
      w[len] = 0;
      int dup = 0;
      for (int k = 0; k < n; k++) dup |= strcmp(vals[k], w) == 0;
      if (dup) continue;
      const char *key = "formulation", *val = w;
      lv_kv kv = {1, &key, &val};
      lv_model *m = NULL;
      if (mi->create(&kv, &m) == 0) {
        memcpy(vals[n++], w, len + 1);
        lv_model_free(m);
      }
    }
  }
  return n;
}

static void row(FILE *out, const char *label, const lv_model *m) {
  fprintf(out, "    %-40s", label);
  for (const lv_scheme_type *const *s = lv_scheme_registry(); *s; s++)
    fprintf(out, " %*c", (int)strlen((*s)->name), m ? mark(m, *s) : '?');
  fputc('\n', out);
}

/* The rows of the system file @p path, one per formulation of the layer. */
static int file_rows(FILE *out, const char *path) {
  int any = 0;
  for (const char *const *f = lv_mbs_formulations(); *f; f++) {
    lv_model *m = NULL;
    char why[512], label[96];
    int rc = lv_mbs_load(path, *f, &m, why, sizeof why);
    if (rc == LV_EUNKNOWN) continue;
    if (rc) {
      cli_error("%s.", why);
      return CLI_USAGE;
    }
    snprintf(label, sizeof label, "formulation=%s", *f);
    row(out, label, m);
    lv_model_free(m);
    any = 1;
  }
  return any ? CLI_OK : CLI_USAGE;
}

static void header(FILE *out, const char *what) {
  fprintf(out, "\nWhich scheme runs %s (x: runs; otherwise why not):\n    %-40s", what,
          strcmp(what, "which model") == 0 ? "model [formulation]" : "");
  for (const lv_scheme_type *const *s = lv_scheme_registry(); *s; s++) fprintf(out, " %s", (*s)->name);
  fputc('\n', out);
}

static void legend(FILE *out) {
  fprintf(out,
          "    M: needs a constant mass matrix (use formulation=directors where the model offers it)\n"
          "    L: needs a linear configuration space R^n (use formulation=directors where offered)\n"
          "    F: needs a conservative model (no applied, damping or gyroscopic force)\n"
          "    U: unconstrained models only    S: refused when the scheme starts (livens run says why)\n"
          "    D: scleronomic constraints g(q) = 0 only (the model has driving constraints g(q) = c(t))\n"
          "    ?: the model could not be built or initialised with its defaults\n");
}

int cli_list_table(FILE *out, const char *path) {
  if (!blas_room()) {
    if (path) {
      cli_error("out of memory: the address-space limit (ulimit -v) leaves no room for the work buffer that OpenBLAS "
                "maps, which the table's scheme starts need.");
      return CLI_FAILED;
    }
    fprintf(out, "\n(The table of which scheme runs which model is left out: the address-space limit (ulimit -v) "
                 "leaves no room for OpenBLAS's work buffer.)\n");
    return CLI_OK;
  }
  if (path) { /* the file's own formulation first: a bad file is one sentence, no table */
    lv_model *m = NULL;
    char why[512];
    if (lv_mbs_load(path, NULL, &m, why, sizeof why)) {
      cli_error("%s.", why);
      return CLI_USAGE;
    }
    lv_model_free(m);
    header(out, path);
    int rc = file_rows(out, path);
    if (!rc) legend(out);
    return rc;
  }
  header(out, "which model");
  for (const lv_model_info *const *mi = lv_model_registry(); *mi; mi++) {
    const lv_param_info *fp = NULL;
    for (const lv_param_info *p = (*mi)->params; p && p->name; p++)
      if (strcmp(p->name, "formulation") == 0) fp = p;
    if (!fp) {
      lv_model *m = NULL;
      if ((*mi)->create(NULL, &m)) m = NULL;
      row(out, (*mi)->name, m);
      lv_model_free(m);
      continue;
    }
    char vals[24][32];
    int n = formulations(*mi, fp, vals, 24);
    for (int k = 0; k < n; k++) {
      const char *key = "formulation", *val = vals[k];
      lv_kv kv = {1, &key, &val};
      lv_model *m = NULL;
      if ((*mi)->create(&kv, &m)) m = NULL;
      char label[128];
      snprintf(label, sizeof label, "%.60s formulation=%.31s", (*mi)->name, vals[k]);
      row(out, label, m);
      lv_model_free(m);
    }
  }
  legend(out);
  fprintf(out, "    (a system file: livens list FILE.yaml)\n");
  return CLI_OK;
}
