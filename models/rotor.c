/* High-speed rotor on flexible supports (spec 002 §5.2, paper §7.2,
 * Table 1) described on the multibody layer: one rigid body, no
 * constraints; in r3so3 (the default) q = (x, R) (R row-major),
 * v = (u, Omega), u = x' inertial, Omega body angular velocity.
 *
 * The rotor spins about its body x axis.  Bearing points, body frame,
 * relative to the centre of mass: p_L = (-L_L, 0, 0), p_R = (L_R, 0, 0).
 * Springs connect r_i = x + R p_i to their rest positions a_i = p_i
 * (x0 = 0, R0 = I): left k_L in x, y, z, right k_R in y, z only; dampers
 * d_L, d_R on the point velocities in the same directions: the two
 * bearings are bushings to the ground (lv_mbs_add_bushing, per-axis
 * springs k_i and dampers d_i).  Gravity is not applied; the paper's (86)
 * constant torque t = (0, 0, -(L/2 - L_L) m g) is, with L = L_L + L_R,
 * applied in the global frame (the paper does not say which; spec §5.2),
 * a constant space-frame load.
 *
 * Mass: Table 1 prints m = 1.223 kg, inconsistent with its own J_xx, J_yy
 * and d = 2 D omega m; all three match m = rho pi r^2 L_r = 1.233075 kg
 * (spec erratum E12).  The default is the corrected 1.233075 kg; J_xx, J_yy,
 * J_zz and the dampers are computed from m (parameter "m" overrides).
 *
 *   M = diag(m I, J),  V = 1/2 sum_i e_i^T K_i e_i,  e_i = x + R p_i - p_i,
 *   f = (sum F_i, sum p_i x (R^T F_i) + R^T t - Omega x J Omega),
 *   F_i = -D_i (u + R (Omega x p_i)),
 * with exact derivatives.  formulation=euler-parameters|cardan[-SEQ]|
 * directors|se3 builds the same description in the layer's other
 * formulations.  The model formerly written by hand in r3so3 (second
 * derivatives by finite differences) is tests/ref_rotor.c; check_mbs.c
 * compares the two. */
#include "lv_internal.h"
#include "livens/lv_mbs.h"

typedef struct {
  double m, J[3];
  double p[2][3];   /* bearing points, body frame */
  double k[2][3];   /* spring stiffness per global direction */
  double d[2][3];   /* damper coefficient per global direction */
  double torque[3]; /* global frame */
} rotor;

/* The rotor on the multibody layer in formulation form. */
static int rotor_mbs(const rotor *P, double w, const char *form, lv_model **out) {
  lv_mbs *s = NULL;
  int id = 0, rc = lv_mbs_new(&s, form);
  const double x0[3] = {0, 0, 0}, W0[3] = {w, 0, 0};
  if (!rc) rc = lv_mbs_add_body(s, P->m, NULL, P->J, x0, NULL, NULL, W0, LV_MBS_BODY_FRAME, &id);
  for (int i = 0; i < 2 && !rc; i++) rc = lv_mbs_add_bushing(s, id, P->p[i], LV_MBS_GROUND, P->p[i], P->k[i], P->d[i]);
  lv_mbs_profile tq;
  memset(&tq, 0, sizeof tq);
  tq.kind = LV_MBS_CONSTANT;
  memcpy(tq.value, P->torque, sizeof tq.value);
  if (!rc) rc = lv_mbs_add_torque_profile(s, id, &tq);
  if (!rc) rc = lv_mbs_build(s, "rotor", out);
  lv_mbs_free(s);
  return rc == LV_EUNKNOWN ? LV_EINPUT : rc;
}

static const lv_param_info params[] = {
    {"m", "1.233075", "rotor mass [kg]; Table 1 of Holzinger, Arnold & Gerstmayr prints 1.223, inconsistent with its "
        "own J and d"},
    {"r", "0.05", "disk radius [m]"},
    {"Lr", "0.02", "disk length [m]"},
    {"LL", "0.11", "centre of mass to left bearing [m]"},
    {"LR", "0.09", "centre of mass to right bearing [m]"},
    {"rpm", "200000", "initial spin about body x [1/min]"},
    {"kL", "4000", "left support stiffness, x, y, z [N/m]"},
    {"kR", "4000", "right support stiffness, y, z [N/m]"},
    {"D", "0.0001", "dimensionless damping: d = 2 D omega m"},
    {"gravity", "9.81", "g in the torque (86) [m/s^2]"},
    {"formulation", "r3so3",
     "multibody layer (bearings as bushings): r3so3 (R^3 x SO(3)), euler-parameters (R^7, one norm "
     "constraint), cardan or cardan-SEQ (R^6), directors (R^12), se3"},
    {"mbs", "1", "accepted for old scripts: the rotor is always built on the multibody layer"},
    {NULL, NULL, NULL},
};

static int create(const lv_kv *kv, lv_model **out) {
  *out = NULL;
  LV_CHECK(lv_kv_check(kv, params, NULL));
  rotor P;
  memset(&P, 0, sizeof P);
  double r, Lr, LL, LR, rpm, kL, kR, D, g;
  LV_CHECK(lv_kv_double(kv, "m", 1.233075, &P.m));
  LV_CHECK(lv_kv_double(kv, "r", 0.05, &r));
  LV_CHECK(lv_kv_double(kv, "Lr", 0.02, &Lr));
  LV_CHECK(lv_kv_double(kv, "LL", 0.11, &LL));
  LV_CHECK(lv_kv_double(kv, "LR", 0.09, &LR));
  LV_CHECK(lv_kv_double(kv, "rpm", 200000.0, &rpm));
  LV_CHECK(lv_kv_double(kv, "kL", 4000.0, &kL));
  LV_CHECK(lv_kv_double(kv, "kR", 4000.0, &kR));
  LV_CHECK(lv_kv_double(kv, "D", 1e-4, &D));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &g));
  if (!(P.m > 0) || !(r > 0) || !(Lr > 0) || !isfinite(rpm) || !(kL >= 0) || !(kR >= 0) || !(D >= 0))
    return LV_EINPUT;
  double w = 2.0 * 3.14159265358979323846 * rpm / 60.0, dd = 2.0 * D * w * P.m;
  P.J[0] = 0.5 * P.m * r * r;                          /* 0.0015413 */
  P.J[1] = P.J[2] = P.m * (3.0 * r * r + Lr * Lr) / 12.0; /* 0.00081177 */
  P.p[0][0] = -LL;
  P.p[1][0] = LR;
  for (int j = 0; j < 3; j++) {
    P.k[0][j] = kL, P.d[0][j] = dd;
    P.k[1][j] = j == 0 ? 0.0 : kR, P.d[1][j] = j == 0 ? 0.0 : dd;
  }
  P.torque[2] = -(0.5 * (LL + LR) - LL) * P.m * g;
  const char *form = lv_kv_string(kv, "formulation", "r3so3");
  int use_mbs = 1;
  LV_CHECK(lv_kv_int(kv, "mbs", 1, &use_mbs));
  return rotor_mbs(&P, w, form, out);
}

const lv_model_info lv_model_rotor = {
    "rotor",
    "high-speed rotor on flexible supports (Holzinger, Arnold & Gerstmayr, §7.2; 200000 rpm; corrected mass 1.233075 "
    "kg), described on the multibody layer: one body, two bushings, a constant torque",
    params, create};
