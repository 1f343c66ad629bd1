/* Compiled model plugins (issue 17): --model-lib ./libmine.so (or
 * "model-lib = ./libmine.so" in a run file) loads a shared object that
 * exports one function,
 *
 *   const lv_model_info *livens_model_plugin(void);
 *
 * (an example: examples/plugin_model.c, built by make check as
 * examples/.libs/libplugin_model.so).  Its model is then known by its name to run,
 * compare, converge, check and plot, exactly like a built-in model: the
 * same parameter checking, metadata, defaults (h = 0.01, T = 10 unless
 * given) and messages.
 *
 * Loading a library runs its code: a run file that names one is a program,
 * to be trusted like a Makefile.  A path without a '/' is taken relative
 * to the current directory (dlopen would otherwise search the system's
 * library path).  One plugin per process; loading the same path twice is a
 * no-op. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const lv_model_info *plugin = NULL;
static char *plugin_path = NULL;

const lv_model_info *cli_plugin_model(void) { return plugin; }

int cli_load_plugin(const char *path) {
  if (!path || !path[0]) return CLI_OK;
  if (plugin_path && strcmp(plugin_path, path) == 0) return CLI_OK;
  if (plugin) {
    cli_error("only one --model-lib per run (already loaded '%s').", plugin_path);
    return CLI_USAGE;
  }
  size_t n = strlen(path);
  char *p = malloc(n + 3);
  if (!p) return cli_error("out of memory."), CLI_FAILED;
  snprintf(p, n + 3, "%s%s", strchr(path, '/') ? "" : "./", path);
  dlerror();
  void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  free(p);
  if (!h) {
    const char *why = dlerror();
    cli_error("cannot load model library '%s': %s.", path, why ? why : "unknown reason");
    return CLI_USAGE;
  }
  union {
    void *obj;
    const lv_model_info *(*fn)(void);
  } sym;
  sym.obj = dlsym(h, "livens_model_plugin");
  if (!sym.obj) {
    cli_error("model library '%s' does not export livens_model_plugin (see examples/plugin_model.c).", path);
    dlclose(h);
    return CLI_USAGE;
  }
  const lv_model_info *info = sym.fn();
  const char *bad = !info ? "returned no model"
                    : !info->name || !info->name[0] || strlen(info->name) >= 64 ? "gave no name (or one of 64+ characters)"
                    : !info->create ? "gave no create function"
                    : !info->params ? "gave no parameter list (an empty one is {{NULL}})"
                                    : NULL;
  if (bad) {
    cli_error("model library '%s': livens_model_plugin %s.", path, bad);
    dlclose(h);
    return CLI_USAGE;
  }
  for (const lv_model_info *const *m = lv_model_registry(); *m; m++)
    if (strcmp((*m)->name, info->name) == 0) {
      cli_error("model library '%s' defines '%s', the name of a built-in model.", path, info->name);
      dlclose(h);
      return CLI_USAGE;
    }
  if (!(plugin_path = strdup(path))) {
    dlclose(h);
    return cli_error("out of memory."), CLI_FAILED;
  }
  plugin = info; /* the library stays loaded for the life of the process */
  return CLI_OK;
}

/* A system file (issue 15) as a registry entry: its one parameter, for
 * the checks and the metadata; cli_make_model reads the file itself. */
static const lv_param_info sysfile_params[] = {
    {"formulation", "file",
     "directors, r3so3, se3, euler-parameters, cardan or cardan-SEQ; default: the file's formulation: key (else "
     "directors)"},
    {NULL, NULL, NULL},
};
static const lv_model_info sysfile_info = {"system file", "a multibody system read from a YAML file (doc/mbs.md)",
                                           sysfile_params, NULL};

const lv_model_info *cli_find_model(const char *name) {
  if (cli_is_system_file(name)) return &sysfile_info;
  if (plugin && strcmp(plugin->name, name) == 0) return plugin;
  for (const lv_model_info *const *m = lv_model_registry(); *m; m++)
    if (strcmp((*m)->name, name) == 0) return *m;
  return NULL;
}
