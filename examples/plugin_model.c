/* A model plugin for the livens program (issue 17): the particle on the
 * paraboloid z = (x^2 + y^2)/2 of own_model.c, compiled into a shared
 * object and used by name in every subcommand:
 *
 *   cc -shared -fPIC plugin_model.c -o libparaboloid.so $(pkg-config --cflags --libs livens)
 *   livens run paraboloid --model-lib ./libparaboloid.so --scheme em --param g=3.7
 *   livens compare paraboloid --model-lib ./libparaboloid.so --schemes rattle,em
 *   livens check paraboloid --model-lib ./libparaboloid.so
 *
 * The one symbol livens looks up is
 *
 *   const lv_model_info *livens_model_plugin(void);
 *
 * returning a static description: the model's name (what users type, at
 * most 63 characters, not a built-in name), a one-line description, the
 * parameter list with defaults and documentation (terminated by {NULL}),
 * and create(params, &model), which reads the parameters (livens has
 * already refused unknown names) and builds the model, returning
 * LV_EINPUT for a value it refuses (livens then names that parameter and
 * prints its documentation) or 0.  The derivatives left out here (Hessian
 * of V, G) are formed by finite differences; supply them exactly for exact
 * conservation (see doc/guide.md). */
#include <stdlib.h>
#include <livens/livens.h>

typedef struct {
  double g; /* gravity */
} par;

static int mass(const double *q, lv_sink *M, void *u) {
  (void)q, (void)u;
  for (int i = 0; i < 3; i++) {
    int rc = lv_sink_add(M, i, i, 1.0);
    if (rc) return rc;
  }
  return 0;
}
static int V(const double *q, double *out, void *u) {
  *out = ((par *)u)->g * q[2];
  return 0;
}
static int dV(const double *q, double *d, void *u) {
  (void)q;
  d[0] = d[1] = 0.0, d[2] = ((par *)u)->g;
  return 0;
}
static int g(const double *q, double *out, void *u) {
  (void)u;
  out[0] = q[2] - 0.5 * (q[0] * q[0] + q[1] * q[1]);
  return 0;
}
static int xi(int k, const double *q, double *out, void *u) {
  (void)k, (void)u;
  out[0] = -q[1], out[1] = q[0], out[2] = 0.0;
  return 0;
}

static const lv_param_info params[] = {
    LV_PARAM_INFO("g", "9.81", "gravity (m/s^2), >= 0"),
    LV_PARAM_INFO("x0", "1", "initial x (m); z0 = x0^2/2 on the paraboloid"),
    LV_PARAM_INFO("vy0", "2", "initial y velocity (m/s)"),
    LV_PARAM_INFO("label", "", "free text, e.g. the experiment's name: carried into the CSV metadata and figure legends"),
    LV_PARAM_INFO_END};

static int create(const lv_kv *kv, lv_model **out) {
  double gr, x0, vy0;
  /* "label" is only metadata: any text is accepted */
  if (lv_kv_double(kv, "g", 9.81, &gr) || !(gr >= 0) || lv_kv_double(kv, "x0", 1.0, &x0) ||
      lv_kv_double(kv, "vy0", 2.0, &vy0))
    return LV_EINPUT;
  par *p = malloc(sizeof *p);
  if (!p) return LV_ENOMEM;
  p->g = gr;
  double q0[3] = {x0, 0.0, 0.5 * x0 * x0}, v0[3] = {0.0, vy0, 0.0};
  lv_space *sp = NULL;
  lv_model *m = NULL;
  int rc = lv_space_new_rn(&sp, 3);
  if (!rc) rc = lv_model_new(&m, "paraboloid", sp, 1);
  if (rc) {
    lv_space_free(sp);
    free(p);
    return rc;
  }
  rc = lv_model_set_user(m, p, free);
  if (rc) free(p);
  if (!rc) rc = lv_model_set_mass(m, mass, 1);
  if (!rc) rc = lv_model_set_potential(m, V, dV, NULL);
  if (!rc) rc = lv_model_set_constraints(m, g, NULL, NULL, NULL);
  if (!rc) rc = lv_model_set_symmetries(m, 1, xi);
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

static const lv_model_info info =
    LV_MODEL_INFO_INIT("paraboloid", "particle on the paraboloid z = (x^2 + y^2)/2 under gravity (plugin)", params,
                       create);

const lv_model_info *livens_model_plugin(void);
const lv_model_info *livens_model_plugin(void) { return &info; }
