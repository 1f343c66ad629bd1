/* The heavy top (seed 000 §5, seed 001 appendix; seed 002's Ga(EP) and
 * Ga(CTB); seed 003's director form) described on the multibody layer
 * (issue 15): one rigid body (mass m, principal inertia J about the centre
 * of mass), its body point -X (the tip; X = centre of mass from the tip)
 * held at the origin by a spherical joint, gravity g0 along -e3.  R0 = I,
 * x0 = X, u0 = Omega0 x X, body angular velocity Omega0.
 *
 * One description, every formulation of the layer (--param formulation=):
 *   r3so3 (default), se3   the Lie group forms (genalpha, BLieDF, RATTLie):
 *          the model of the former hand-written heavy_top.c, the same
 *          arithmetic (models/heavy_top_hand.c, check_mbs.c);
 *   directors              R^12 (R^9 for the default disk), constant mass
 *          matrix: every scheme, RATTLE, VI and EM included;
 *   euler-parameters, cardan[-SEQ]   R^7 with the norm row, R^6: the
 *          models heavy-top-ep and heavy-top-ctb below (formerly
 *          hand-written, tests/ref_heavy_top_ep.c, _ctb.c).
 * The joint is written ground first, g = R X - x, the sign of the former
 * hand-written models (so their multipliers too).  Momentum maps: the
 * rotation about the vertical e3 through the tip and, in directors,
 * euler-parameters and cardan, when the top is symmetric about X (X along a
 * principal axis i and J_j = J_k), the spin about the body axis X.
 *
 * so3 (the reduced ODE) and udq (unit dual quaternions) are not
 * multibody formulations: models/heavy_top_hand.c. */
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#include "models/models.h"

static const char *const JN[3] = {"J1", "J2", "J3"}, *const XN[3] = {"X1", "X2", "X3"},
                         *const WN[3] = {"Omega1", "Omega2", "Omega3"};
static const double JD[3] = {0.234375, 0.46875, 0.234375}, XD[3] = {0, 1, 0}, WD[3] = {0, 150, -4.61538};

/* The top in mbs formulation @p formulation, named @p name. */
static int build(const lv_kv *kv, const char *formulation, const char *name, lv_model **out) {
  double m, g0, J[3], X[3], W[3];
  *out = NULL;
  LV_CHECK(lv_kv_double(kv, "m", 15.0, &m));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g0));
  for (int i = 0; i < 3; i++) {
    LV_CHECK(lv_kv_double(kv, JN[i], JD[i], &J[i]));
    LV_CHECK(lv_kv_double(kv, XN[i], XD[i], &X[i]));
    LV_CHECK(lv_kv_double(kv, WN[i], WD[i], &W[i]));
  }
  lv_mbs *s = NULL;
  int body, rc = lv_mbs_new(&s, formulation);
  if (rc == LV_EUNKNOWN) rc = LV_EINPUT; /* the formulation's name: a bad parameter */
  double v0[3] = {W[1] * X[2] - W[2] * X[1], W[2] * X[0] - W[0] * X[2], W[0] * X[1] - W[1] * X[0]};
  double tip[3] = {-X[0], -X[1], -X[2]}, o[3] = {0, 0, 0}, g[3] = {0, 0, -g0}, e3[3] = {0, 0, 1};
  if (!rc) rc = lv_mbs_add_body(s, m, NULL, J, X, NULL, v0, W, LV_MBS_BODY_FRAME, &body);
  if (!rc) rc = lv_mbs_add_spherical(s, LV_MBS_GROUND, o, body, tip);
  if (!rc) rc = lv_mbs_set_gravity(s, g);
  if (!rc) rc = lv_mbs_add_rotation_symmetry(s, e3, o);
  int lie = strcmp(formulation, "r3so3") == 0 || strcmp(formulation, "se3") == 0;
  for (int i = 0; i < 3 && !rc && !lie; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    if (X[i] != 0.0 && X[j] == 0.0 && X[k] == 0.0 && J[j] == J[k]) rc = lv_mbs_add_body_symmetry(s, body, X, tip);
  }
  if (!rc) rc = lv_mbs_build(s, name, out);
  lv_mbs_free(s);
  return rc;
}

static const lv_param_info params[] = {
    {"formulation", "r3so3",
     "r3so3 (R^3 x SO(3), 3 constraints), se3 (SE(3), 3 constraints), "
     "directors (R^12, 9 constraints; R^9, 6 for a disk; constant mass matrix: RATTLE, VI, EM), "
     "euler-parameters (R^7, 4 constraints, M(q): genalpha, BLieDF), "
     "cardan or cardan-SEQ (R^6, 3 constraints, M(q); SEQ e.g. xyz (the default), zxy): "
     "all on the multibody layer; so3 (reduced ODE), udq (unit dual quaternions, the se3 equations)"},
    {"m", "15", "mass"},
    {"J1", "0.234375", "principal inertia about the centre of mass, body axis 1"},
    {"J2", "0.46875", "principal inertia, body axis 2"},
    {"J3", "0.234375", "principal inertia, body axis 3"},
    {"X1", "0", "centre of mass in body coordinates, measured from the fixed tip, 1"},
    {"X2", "1", "centre of mass, 2"},
    {"X3", "0", "centre of mass, 3"},
    {"gravity", "9.81", "gravitational acceleration (along -e3)"},
    {"Omega1", "0", "initial body angular velocity, 1"},
    {"Omega2", "150", "initial body angular velocity, 2"},
    {"Omega3", "-4.61538", "initial body angular velocity, 3"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  const char *f = lv_kv_string(kv, "formulation", "r3so3");
  if (strcmp(f, "so3") == 0 || strcmp(f, "udq") == 0) return lv_models_heavy_top_hand(kv, f, out);
  double m, J[3];
  LV_CHECK(lv_kv_double(kv, "m", 15.0, &m));
  for (int i = 0; i < 3; i++) LV_CHECK(lv_kv_double(kv, JN[i], JD[i], &J[i]));
  if (!(m > 0) || !(J[0] > 0) || !(J[1] > 0) || !(J[2] > 0)) return LV_EINPUT;
  return build(kv, f, "heavy-top", out);
}

const lv_model_info lv_model_heavy_top = {
    "heavy-top",
    "heavy top with a fixed tip (Arnold, Brüls & Cardona 2015, §5), described on the multibody layer: one body and "
    "a spherical joint in R^3 x SO(3), SE(3), directors, Euler parameters or Cardan angles; or the reduced SO(3) ODE",
    params, create};

/* ---- the same top under the names of the Ga(EP) and Ga(CTB) comparisons ---- */

static const lv_param_info params_ep[] = {
    {"Omega1", "0", "initial body angular velocity, 1"},
    {"Omega2", "150", "initial body angular velocity, 2"},
    {"Omega3", "-4.61538", "initial body angular velocity, 3"},
    {NULL, NULL, NULL},
};

static int create_ep(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params_ep, NULL));
  return build(kv, "euler-parameters", "heavy-top-ep", out);
}

const lv_model_info lv_model_heavy_top_ep = {
    "heavy-top-ep",
    "heavy top in Euler parameters (the Ga(EP) comparison of Holzinger, Arnold & Gerstmayr, §7.1): q = (x, p) in R^7, "
    "spherical joint + norm constraint; heavy-top with formulation=euler-parameters",
    params_ep, create_ep};

static const lv_param_info params_ctb[] = {
    {"sequence", "xyz",
     "axes of the three angles, R = R_a R_b R_c (three distinct of x, y, z); xyz = Exudyn RotXYZ, the paper's CTB"},
    {"Omega1", "0", "initial body angular velocity, 1"},
    {"Omega2", "150", "initial body angular velocity, 2"},
    {"Omega3", "-4.61538", "initial body angular velocity, 3"},
    {NULL, NULL, NULL},
};

static int create_ctb(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params_ctb, NULL));
  const char *seq = lv_kv_string(kv, "sequence", "xyz");
  /* Tait-Bryan: three distinct axes (the layer also takes proper Euler angles) */
  if (strlen(seq) != 3 || seq[0] == seq[2]) return LV_EINPUT;
  char f[16];
  snprintf(f, sizeof f, strcmp(seq, "xyz") == 0 ? "cardan" : "cardan-%s", seq);
  return build(kv, f, "heavy-top-ctb", out);
}

const lv_model_info lv_model_heavy_top_ctb = {
    "heavy-top-ctb",
    "heavy top in Cardan/Tait-Bryan angles (the Ga(CTB) comparison of Holzinger, Arnold & Gerstmayr, §7.1): q = (x, "
    "phi) in R^6, spherical joint; heavy-top with formulation=cardan-SEQ",
    params_ctb, create_ctb};
