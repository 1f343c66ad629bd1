/* The table of built-in models selectable by name. */
#include "lv_internal.h"
#include "models/models.h"

extern const lv_model_info lv_model_pendulum3d;
extern const lv_model_info lv_model_gyro_top, lv_model_four_particle;
extern const lv_model_info lv_model_chain, lv_model_rigid_chain;
extern const lv_model_info lv_model_pendulum2d, lv_model_heavy_top;
extern const lv_model_info lv_model_rotor, lv_model_slider_crank, lv_model_heavy_top_ep; /* issue 6 */
extern const lv_model_info lv_model_heavy_top_ctb;
extern const lv_model_info lv_model_double_pendulum; /* issue 15 */
extern const lv_model_info lv_model_kapitza; /* driving constraints */

static const lv_model_info *const models[] = {
    &lv_model_pendulum3d,
    &lv_model_gyro_top,
    &lv_model_four_particle,
    &lv_model_chain,
    &lv_model_rigid_chain,
    &lv_model_pendulum2d,
    &lv_model_heavy_top,
    &lv_model_rotor,
    &lv_model_slider_crank,
    &lv_model_heavy_top_ep,
    &lv_model_heavy_top_ctb,
    &lv_model_double_pendulum,
    &lv_model_kapitza,
    NULL,
};

const lv_model_info *const *lv_model_registry(void) { return models; }

int lv_model_create(const char *name, const lv_kv *params, lv_model **out) {
  if (!out) return LV_EINPUT;
  *out = NULL;
  if (!name) return LV_EINPUT;
  for (int i = 0; models[i]; i++)
    if (strcmp(models[i]->name, name) == 0) return models[i]->create(params, out);
  return LV_EUNKNOWN;
}

int lv_models_build(lv_model **out, const char *name, int d, int nc, void *user,
                    void (*free_user)(void *), lv_matrix_fn mass, int mass_constant,
                    lv_scalar_fn V, lv_vector_fn dV, lv_matrix_fn d2V, lv_vector_fn g,
                    lv_matrix_fn G, lv_matrix_w_fn hess, lv_matrix_w_fn curv, int nsym,
                    lv_symmetry_fn sym, const double *q0, const double *v0) {
  lv_space *sp = NULL;
  lv_model *m = NULL;
  int rc = lv_space_new_rn(&sp, d);
  if (!rc) rc = lv_model_new(&m, name, sp, nc);
  if (rc) {
    lv_space_free(sp);
    if (free_user) free_user(user);
    return rc;
  }
  lv_model_set_user(m, user, free_user);
  rc = lv_model_set_mass(m, mass, mass_constant);
  if (!rc) rc = lv_model_set_potential(m, V, dV, d2V);
  if (!rc && nc > 0) rc = lv_model_set_constraints(m, g, G, hess, curv);
  if (!rc) rc = lv_model_set_symmetries(m, nsym, sym);
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
