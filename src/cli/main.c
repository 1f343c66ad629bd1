/* livens: the command-line program.
 *   livens [demo]                         default demonstration
 *   livens list                           models and schemes
 *   livens run MODEL --scheme S --step H --t-end T [--param k=v]... [--opt k=v]... [--out F.csv]
 * Wrong input: one sentence on stderr, exit status 2.  A failed run: exit 1. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "livens/livens.h"

#define MAXKV 64

typedef struct {
  const char *keys[MAXKV];
  const char *values[MAXKV];
  char *buf[MAXKV];
  int n;
} kvlist;

static void die_usage(const char *msg, const char *arg) {
  fprintf(stderr, "livens: ");
  fprintf(stderr, msg, arg ? arg : "");
  fputc('\n', stderr);
  exit(2);
}

static void kv_push(kvlist *l, const char *text, const char *what) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text) die_usage("expected NAME=VALUE after %s.", what);
  if (l->n >= MAXKV) die_usage("too many %s arguments.", what);
  char *b = strdup(text);
  if (!b) die_usage("out of memory.", NULL);
  b[eq - text] = '\0';
  l->buf[l->n] = b;
  l->keys[l->n] = b;
  l->values[l->n] = b + (eq - text) + 1;
  l->n++;
}

static void kv_free(kvlist *l) {
  for (int i = 0; i < l->n; i++) free(l->buf[i]);
  l->n = 0;
}

static double parse_pos(const char *s, const char *what) {
  char *end;
  double x = strtod(s, &end);
  if (end == s || *end || !(x > 0) || x != x || x > 1e300) die_usage("%s must be a positive number.", what);
  return x;
}

typedef struct {
  int status;
  lv_diag_summary sum;
  lv_integrator_stats st;
} run_result;

static int run_one(lv_model *model, const char *scheme, double h, double t_end, const kvlist *opts,
                   FILE *csv, run_result *res) {
  lv_integrator *it = NULL;
  lv_diag *diag = NULL;
  int rc = lv_integrator_new(&it, model, scheme, h);
  if (rc == LV_EUNKNOWN) {
    fprintf(stderr, "livens: unknown scheme '%s' (see 'livens list').\n", scheme);
    return 2;
  }
  if (rc) {
    fprintf(stderr, "livens: scheme '%s' cannot run model '%s': %s.\n", scheme, lv_model_name(model),
            lv_strerror(rc));
    return 2;
  }
  for (int i = 0; i < opts->n; i++) {
    rc = lv_integrator_set_option(it, opts->keys[i], opts->values[i]);
    if (rc) {
      fprintf(stderr, "livens: scheme '%s' has no option '%s'.\n", scheme, opts->keys[i]);
      lv_integrator_free(it);
      return 2;
    }
  }
  rc = lv_diag_new(&diag, model, (lv_integrator_scheme(it)->flags & LV_SCHEME_HAS_P) != 0);
  lv_diag_writer w = {diag, csv, 1, 0};
  if (!rc) rc = lv_integrator_set_output(it, lv_diag_output, &w);
  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);
  if (!rc) rc = lv_integrator_run_until(it, t_end);
  res->status = rc;
  lv_diag_get_summary(diag, &res->sum);
  lv_integrator_get_stats(it, &res->st);
  if (rc) {
    const lv_state *s = lv_integrator_state(it);
    fprintf(stderr, "livens: %s stopped at t = %.6g: %s.\n", scheme, s->t, lv_strerror(rc));
  }
  lv_diag_free(diag);
  lv_integrator_free(it);
  return rc ? 1 : 0;
}

static void print_summary_header(void) {
  printf("%-10s %12s %12s %12s %12s %12s %12s %9s %9s\n", "scheme", "max|dE|/E0", "drift/time",
         "max|dJ|", "max|g|", "max|Gv|", "max|GM^-1p|", "newton/st", "steps/s");
}

static void print_summary_row(const char *scheme, const run_result *r) {
  double nps = r->st.steps ? (double)r->st.newton_iterations / (double)r->st.steps : 0.0;
  double sps = r->st.wall_time > 0 ? (double)r->st.steps / r->st.wall_time : 0.0;
  printf("%-10s %12.3e %12.3e %12.3e %12.3e %12.3e %12.3e %9.2f %9.3g\n", scheme, r->sum.max_rel_energy_error,
         r->sum.energy_drift_rate, r->sum.max_momentum_error, r->sum.max_g, r->sum.max_gv, r->sum.max_gp, nps,
         sps);
}

static int cmd_list(void) {
  printf("Models:\n");
  for (const lv_model_info *const *m = lv_model_registry(); *m; m++) {
    printf("  %-14s %s\n", (*m)->name, (*m)->description);
    for (const lv_param_info *p = (*m)->params; p->name; p++)
      printf("      --param %s=%s  (%s)\n", p->name, p->default_value, p->doc);
  }
  printf("Schemes:\n");
  for (const lv_scheme_type *const *s = lv_scheme_registry(); *s; s++) {
    printf("  %-14s %s\n", (*s)->name, (*s)->description);
    printf("      conserves: %s\n", (*s)->conserves);
    for (const lv_param_info *p = (*s)->options; p && p->name; p++)
      printf("      --opt %s=%s  (%s)\n", p->name, p->default_value, p->doc);
  }
  return 0;
}

static lv_model *make_model(const char *name, const kvlist *params) {
  lv_kv kv = {params->n, (const char **)params->keys, (const char **)params->values};
  lv_model *m = NULL;
  int rc = lv_model_create(name, &kv, &m);
  if (rc == LV_EUNKNOWN) {
    int known = 0;
    for (const lv_model_info *const *r = lv_model_registry(); *r; r++)
      if (strcmp((*r)->name, name) == 0) known = 1;
    if (known)
      fprintf(stderr, "livens: model '%s' does not have one of the given parameters (see 'livens list').\n", name);
    else
      fprintf(stderr, "livens: unknown model '%s' (see 'livens list').\n", name);
    exit(2);
  }
  if (rc) {
    fprintf(stderr, "livens: invalid parameter value for model '%s': %s.\n", name, lv_strerror(rc));
    exit(2);
  }
  return m;
}

static int cmd_run(int argc, char **argv) {
  static const struct option lo[] = {{"scheme", required_argument, 0, 's'},
                                     {"step", required_argument, 0, 'h'},
                                     {"t-end", required_argument, 0, 'T'},
                                     {"param", required_argument, 0, 'p'},
                                     {"opt", required_argument, 0, 'o'},
                                     {"out", required_argument, 0, 'O'},
                                     {0, 0, 0, 0}};
  const char *scheme = "rattle", *out = NULL;
  double h = 0.01, T = 1.0;
  kvlist params = {0}, opts = {0};
  int c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (c) {
      case 's': scheme = optarg; break;
      case 'h': h = parse_pos(optarg, "--step"); break;
      case 'T': T = parse_pos(optarg, "--t-end"); break;
      case 'p': kv_push(&params, optarg, "--param"); break;
      case 'o': kv_push(&opts, optarg, "--opt"); break;
      case 'O': out = optarg; break;
      default: die_usage("unknown or incomplete option '%s' for 'run'.", argv[optind - 1]);
    }
  }
  if (optind != argc - 1) die_usage("'run' needs exactly one MODEL name.", NULL);
  lv_model *model = make_model(argv[optind], &params);
  FILE *csv = NULL;
  if (out && !(csv = fopen(out, "w"))) {
    fprintf(stderr, "livens: cannot write '%s'.\n", out);
    lv_model_free(model);
    return 2;
  }
  run_result r;
  memset(&r, 0, sizeof r);
  int rc = run_one(model, scheme, h, T, &opts, csv, &r);
  if (csv) fclose(csv);
  if (rc != 2) {
    print_summary_header();
    print_summary_row(scheme, &r);
  }
  lv_model_free(model);
  kv_free(&params);
  kv_free(&opts);
  return rc;
}

static int cmd_demo(void) {
  const char *model_name = "pendulum3d";
  const char *schemes[] = {"rattle"};
  double h = 0.01, T = 100.0;
  printf("livens %s demo: %s, h = %g, T = %g\n\n", lv_version(), model_name, h, T);
  print_summary_header();
  kvlist none = {0};
  int status = 0;
  for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
    lv_model *m = make_model(model_name, &none);
    run_result r;
    memset(&r, 0, sizeof r);
    int rc = run_one(m, schemes[i], h, T, &none, NULL, &r);
    if (rc == 0) print_summary_row(schemes[i], &r);
    else status = 1;
    lv_model_free(m);
  }
  return status;
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "demo") == 0) return cmd_demo();
  if (strcmp(argv[1], "list") == 0) return cmd_list();
  if (strcmp(argv[1], "run") == 0) return cmd_run(argc - 1, argv + 1);
  if (strcmp(argv[1], "--version") == 0) {
    printf("livens %s\n", lv_version());
    return 0;
  }
  die_usage("unknown command '%s' (commands: demo, list, run).", argv[1]);
  return 2;
}
