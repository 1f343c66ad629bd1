/* Option parsing of the livens program (shared by the subcommands and
 * exercised by the fuzz harness tests/fuzz/fuzz_options.c). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int cli_parse_positive(const char *s, const char *what, double *x) {
  char *end;
  errno = 0;
  *x = strtod(s, &end);
  if (end == s || *end || errno || !(*x > 0) || !isfinite(*x)) {
    cli_error("%s must be a positive number, got '%s'.", what, s);
    return CLI_USAGE;
  }
  return CLI_OK;
}

static int parse_count(const char *s, const char *what, int lo, int hi, int *x) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi) {
    cli_error("%s must be an integer in [%d, %d], got '%s'.", what, lo, hi, s);
    return CLI_USAGE;
  }
  *x = (int)v;
  return CLI_OK;
}

/* Comma-separated list; returns count or -1 on a malformed list. */
int cli_split_list(char *s, char **items, int max) {
  int n = 0;
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
    if (n >= max || !*tok) return -1;
    items[n++] = tok;
  }
  return n;
}


enum { O_SCHEME = 1, O_SCHEMES, O_STEP, O_STEPS, O_TEND, O_PARAM, O_OPT, O_OUT, O_EVERY, O_HALVING, O_LINSOL,
       O_NTOL, O_NKIND, O_REF, O_PNG, O_FORMAT, O_Y, O_SUMMARY, O_ODT, O_OTIMES, O_MODEL_LIB, O_PLOT, O_REF_SCHEME, O_ERROR,
       O_CKPT, O_CKPT_EVERY, O_RESUME, O_REFERENCE };

/* Parses the options shared by run/compare/converge/check/plot; leaves the
 * positional arguments in argv[optind..]. */
int cli_parse_args(int argc, char **argv, cli_args *a, const char *cmd) {
  static const struct option lo[] = {
      {"scheme", required_argument, 0, O_SCHEME}, {"schemes", required_argument, 0, O_SCHEMES},
      {"step", required_argument, 0, O_STEP},     {"steps", required_argument, 0, O_STEPS},
      {"t-end", required_argument, 0, O_TEND},    {"param", required_argument, 0, O_PARAM},
      {"opt", required_argument, 0, O_OPT},       {"out", required_argument, 0, O_OUT},
      {"every", required_argument, 0, O_EVERY},   {"halving", required_argument, 0, O_HALVING},
      {"linsol", required_argument, 0, O_LINSOL}, {"newton-tol", required_argument, 0, O_NTOL},
      {"newton", required_argument, 0, O_NKIND},  {"ref-step", required_argument, 0, O_REF},  {"png", required_argument, 0, O_PNG},
      /* issue 17 */
      {"format", required_argument, 0, O_FORMAT}, {"y", required_argument, 0, O_Y},
      {"summary", required_argument, 0, O_SUMMARY}, {"output-dt", required_argument, 0, O_ODT},
      {"output-times", required_argument, 0, O_OTIMES}, {"model-lib", required_argument, 0, O_MODEL_LIB},
      {"plot", required_argument, 0, O_PLOT}, {"ref-scheme", required_argument, 0, O_REF_SCHEME},
      {"error", required_argument, 0, O_ERROR},
      {"checkpoint", required_argument, 0, O_CKPT}, {"checkpoint-every", required_argument, 0, O_CKPT_EVERY},
      {"resume", required_argument, 0, O_RESUME},
      {"reference", required_argument, 0, O_REFERENCE}, /* converge: a reference CSV (issue 17) */
      {0, 0, 0, 0}};
  int c, rc = CLI_OK;
  opterr = 0;
  optind = 1;
  while (rc == CLI_OK && (c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    cli_run *r = &a->run;
    switch (c) {
      case O_SCHEME:
        if (strlen(optarg) >= sizeof r->scheme) return cli_error("scheme name too long."), CLI_USAGE;
        strcpy(r->scheme, optarg);
        r->scheme_auto = 0;
        a->scheme_given = 1;
        break;
      case O_SCHEMES:
        if (strlen(optarg) >= sizeof a->schemes) return cli_error("--schemes list too long."), CLI_USAGE;
        strcpy(a->schemes, optarg);
        break;
      case O_STEP: rc = cli_parse_positive(optarg, "--step", &r->h); break;
      case O_STEPS:
        if (strlen(optarg) >= sizeof a->steps) return cli_error("--steps list too long."), CLI_USAGE;
        strcpy(a->steps, optarg);
        break;
      case O_TEND: rc = cli_parse_positive(optarg, "--t-end", &r->t_end); break;
      case O_PARAM: rc = cli_kv_push(&r->params, optarg, "--param"); break;
      case O_OPT: rc = cli_kv_push(&r->opts, optarg, "--opt"); break;
      case O_OUT:
        if (!optarg[0]) return cli_error("--out needs a file name, got an empty one."), CLI_USAGE;
        if (strlen(optarg) >= sizeof r->out) return cli_error("output path too long."), CLI_USAGE;
        strcpy(r->out, optarg);
        break;
      case O_EVERY: rc = parse_count(optarg, "--every", 1, 1000000000, &r->every); break;
      case O_HALVING: rc = parse_count(optarg, "--halving", 0, 30, &r->halving); break;
      case O_LINSOL:
        if (cli_parse_linsol(optarg, &r->linsol))
          return cli_error("--linsol must be auto, dense, umfpack, klu or sparse, got '%s'.", optarg), CLI_USAGE;
        break;
      case O_NTOL: rc = cli_parse_positive(optarg, "--newton-tol", &r->newton_tol); break;
      case O_NKIND:
        if (cli_parse_newton_kind(optarg, &r->newton_kind))
          return cli_error("--newton must be default, full, simplified or modified, got '%s'.", optarg), CLI_USAGE;
        break;
      case O_REF: rc = cli_parse_positive(optarg, "--ref-step", &a->ref_step); break;
      case O_PNG:
        if (strlen(optarg) >= sizeof a->png) return cli_error("--png path too long."), CLI_USAGE;
        strcpy(a->png, optarg);
        break;
      case O_FORMAT:
        if (strlen(optarg) >= sizeof a->format) return cli_error("--format must be png, svg, pdf or tex."), CLI_USAGE;
        strcpy(a->format, optarg);
        break;
      case O_Y:
        if (strlen(optarg) >= sizeof a->ycols) return cli_error("--y list too long."), CLI_USAGE;
        strcpy(a->ycols, optarg);
        break;
      case O_SUMMARY:
        if (!optarg[0]) return cli_error("--summary needs a file name, got an empty one."), CLI_USAGE;
        if (strlen(optarg) >= sizeof r->summary) return cli_error("--summary path too long."), CLI_USAGE;
        strcpy(r->summary, optarg);
        break;
      case O_ODT:
        rc = cli_parse_positive(optarg, "--output-dt", &r->output_dt);
        if (!rc) r->output_times[0] = '\0';
        break;
      case O_OTIMES:
        if (strlen(optarg) >= sizeof r->output_times) return cli_error("--output-times list too long."), CLI_USAGE;
        strcpy(r->output_times, optarg);
        r->output_dt = 0;
        break;
      case O_ERROR:
        if (strcmp(optarg, "end") && strcmp(optarg, "max"))
          return cli_error("--error must be end or max, got '%s'.", optarg), CLI_USAGE;
        strcpy(a->error, optarg);
        break;
      case O_REFERENCE:
        if (strcmp(cmd, "converge") != 0) return cli_error("--reference is an option of 'converge' only."), CLI_USAGE;
        if (!optarg[0]) return cli_error("--reference needs a CSV file name, got an empty one."), CLI_USAGE;
        if (strlen(optarg) >= sizeof a->reference) return cli_error("--reference path too long."), CLI_USAGE;
        strcpy(a->reference, optarg);
        break;
      case O_REF_SCHEME:
        if (strlen(optarg) >= sizeof a->ref_scheme) return cli_error("--ref-scheme name too long."), CLI_USAGE;
        strcpy(a->ref_scheme, optarg);
        break;
      case O_PLOT:
        if (!optarg[0]) return cli_error("--plot needs a file name, got an empty one."), CLI_USAGE;
        if (strlen(optarg) >= sizeof a->plot) return cli_error("--plot path too long."), CLI_USAGE;
        strcpy(a->plot, optarg);
        break;
      case O_MODEL_LIB:
        if (!optarg[0]) return cli_error("--model-lib needs a file name, got an empty one."), CLI_USAGE;
        if (strlen(optarg) >= sizeof r->model_lib) return cli_error("--model-lib path too long."), CLI_USAGE;
        strcpy(r->model_lib, optarg);
        break;
      case O_CKPT:
      case O_RESUME: {
        const char *flag = c == O_CKPT ? "--checkpoint" : "--resume";
        char *dst = c == O_CKPT ? r->checkpoint : r->resume;
        if (strcmp(cmd, "run") != 0) return cli_error("%s is an option of 'run' only.", flag), CLI_USAGE;
        if (!optarg[0]) return cli_error("%s needs a file name, got an empty one.", flag), CLI_USAGE;
        if (strlen(optarg) >= sizeof r->checkpoint) return cli_error("%s path too long.", flag), CLI_USAGE;
        strcpy(dst, optarg);
        break;
      }
      case O_CKPT_EVERY: {
        int n;
        if (strcmp(cmd, "run") != 0) return cli_error("--checkpoint-every is an option of 'run' only."), CLI_USAGE;
        rc = parse_count(optarg, "--checkpoint-every", 1, 2000000000, &n);
        r->checkpoint_every = n;
        break;
      }
      default:
        cli_error("unknown or incomplete option '%s' for '%s' (see 'livens --help').", argv[optind - 1], cmd);
        return CLI_USAGE;
    }
  }
  return rc;
}

