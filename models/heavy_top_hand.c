/* The heavy top written by hand, in the four forms of its equations below.
 * The built-in model (models/heavy_top.c) describes the top on the
 * multibody layer in directors, r3so3, se3, euler-parameters and cardan,
 * and takes from here only what the layer does not express: so3 (the
 * reduced ODE) and udq (unit dual quaternions).  Its r3so3 and se3 forms
 * are the independent reference the tests compare the described model
 * with (tests/check_mbs.c, as ref_heavy_top of tests/refmodels.h).
 *
 * The heavy top (seed 000 §5, seed 001 appendix; spec 000_001 §4.3-4.4): a
 * rigid body of mass m, inertia J about its centre of mass, whose body point
 * -X (the tip, X = centre of mass in body coordinates from the tip) is fixed
 * at the origin; gravity g0 along -e3.  The equations of each form:
 *
 *   r3so3  q = (x, R) in R^3 x SO(3), v = (u, Omega), u = x' inertial,
 *          Omega body angular velocity; constraint g(q) = -x + R X (3);
 *          M = diag(m I, J), V = m g0 x3, f = (0, -Omega x J Omega);
 *          G = (-I, -R X~)  (seed 000 prints -(R X)~ : spec §0.1 item 3).
 *   se3    q = (x, R) in SE(3), v = (U, Omega), x' = R U; same constraint,
 *          G = -R (I, X~), V = m g0 x3 so dV = (m g0 R^T e3, 0),
 *          f = (-m Omega x U, -Omega x J Omega).
 *   so3    the reduced ODE on SO(3) (no constraints): M = J_O = J + m(|X|^2 I - X X^T),
 *          V = m g0 e3 . R X, f = -Omega x J_O Omega.  Then x = R X.
 *   udq    the se3 equations, q = (x, R) as a unit dual quaternion.
 *
 * All derivatives are exact (left-trivialised, the spec's §2.7/§4.4 tangent
 * matrices).  Symmetry: rotation about the vertical axis e3 through the tip,
 * whose momentum map is the vertical angular momentum about the origin.
 *
 * The callbacks read the pose (x, R) through lv_space_pose, never the
 * configuration's layout, so a formulation is a row of FORMS: a name, the
 * factor kind (the representation of q) and the equations above it uses.
 */
#include "lv_internal.h"
#include "models/models.h"

typedef enum { F_R3SO3 = 0, F_SE3 = 1, F_SO3 = 2 } formulation;

/* The formulations: name, representation, equations. */
static const struct {
  const char *name;
  lv_factor_kind kind;
  formulation eq;
} FORMS[] = {
    {"r3so3", LV_FACTOR_R3SO3, F_R3SO3},
    {"se3", LV_FACTOR_SE3, F_SE3},
    {"so3", LV_FACTOR_SO3, F_SO3},
    {"udq", LV_FACTOR_UDQ, F_SE3}, /* unit dual quaternions: the se3 equations */
};

typedef struct {
  formulation form;
  const lv_space *sp; /* the model's space: poses of q */
  double m, g0;
  double J[3];   /* principal inertia about the centre of mass */
  double JO[9];  /* inertia about the tip (so3), row-major */
  double X[3];
} top;

static void hat(const double a[3], double A[9]) { lv_hat3(a, A); }

/* The pose (x, R) of q (x = 0 in so3). */
static void pose(const top *T, const double *q, double x[3], double R[9]) {
  (void)lv_space_pose(T->sp, 0, q, x, R); /* cannot fail: factor 0 is a rigid body */
}

static int add3(lv_sink *s, int r0, int c0, const double A[9], double scale) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) LV_CHECK(lv_sink_add(s, r0 + i, c0 + j, scale * A[3 * i + j]));
  return 0;
}

/* C = A B for 3x3 row-major */
static void mul3(const double A[9], const double B[9], double C[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

static int mass(const double *q, lv_sink *M, void *u) {
  const top *T = u;
  (void)q;
  if (T->form == F_SO3) return add3(M, 0, 0, T->JO, 1.0);
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, i, i, T->m));
  for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(M, 3 + i, 3 + i, T->J[i]));
  return 0;
}

static int potential(const double *q, double *V, void *u) {
  const top *T = u;
  double x[3], R[9];
  pose(T, q, x, R);
  if (T->form == F_SO3) lv_models_rvec(R, T->X, x);
  *V = T->m * T->g0 * x[2];
  return 0;
}

static const double E3[3] = {0.0, 0.0, 1.0};

static int grad(const double *q, double *dV, void *u) {
  const top *T = u;
  double r[3], x[3], R[9];
  pose(T, q, x, R);
  lv_models_rtvec(R, E3, r); /* R^T e3 */
  switch (T->form) {
    case F_R3SO3:
      for (int i = 0; i < 6; i++) dV[i] = 0.0;
      dV[2] = T->m * T->g0;
      break;
    case F_SE3:
      for (int i = 0; i < 3; i++) dV[i] = T->m * T->g0 * r[i];
      dV[3] = dV[4] = dV[5] = 0.0;
      break;
    case F_SO3: {
      double c[3];
      lv_models_cross(T->X, r, c); /* X~ R^T e3 */
      for (int i = 0; i < 3; i++) dV[i] = T->m * T->g0 * c[i];
      break;
    }
  }
  return 0;
}

/* D_q dV: se3: [0, m g0 (R^T e3)~; 0, 0]; so3: m g0 X~ (R^T e3)~; r3so3: 0. */
static int hess(const double *q, lv_sink *H, void *u) {
  const top *T = u;
  double r[3], A[9], B[9], C[9], x[3], R[9];
  pose(T, q, x, R);
  lv_models_rtvec(R, E3, r);
  hat(r, A);
  if (T->form == F_SE3) return add3(H, 0, 3, A, T->m * T->g0);
  if (T->form == F_SO3) {
    hat(T->X, B);
    mul3(B, A, C);
    return add3(H, 0, 0, C, T->m * T->g0);
  }
  return 0;
}

/* Gyroscopic force and, in SE(3), the transport term of the body-frame
 * translational velocity. */
static int force(double t, const double *q, const double *v, double *f, void *u) {
  const top *T = u;
  (void)t, (void)q;
  if (T->form == F_SO3) {
    double L[3];
    lv_models_rvec(T->JO, v, L);
    lv_models_cross(v, L, f);
    for (int i = 0; i < 3; i++) f[i] = -f[i];
    return 0;
  }
  const double *W = v + 3;
  double L[3] = {T->J[0] * W[0], T->J[1] * W[1], T->J[2] * W[2]}, c[3];
  lv_models_cross(W, L, c);
  for (int i = 0; i < 3; i++) f[3 + i] = -c[i];
  if (T->form == F_SE3) {
    lv_models_cross(W, v, c);
    for (int i = 0; i < 3; i++) f[i] = -T->m * c[i];
  } else {
    f[0] = f[1] = f[2] = 0.0;
  }
  return 0;
}

/* f does not depend on q in any formulation. */
static int force_dq(double t, const double *q, const double *v, lv_sink *K, void *u) {
  (void)t, (void)q, (void)v, (void)K, (void)u;
  return 0;
}

/* df/dv: rotational block -(W~ J - (J W)~); se3 adds [-m W~, m U~] on the
 * translational rows. */
static int force_dv(double t, const double *q, const double *v, lv_sink *C, void *u) {
  const top *T = u;
  (void)t, (void)q;
  double Jm[9] = {0}, A[9], B[9], L[3];
  int o = T->form == F_SO3 ? 0 : 3;
  const double *W = v + o;
  if (T->form == F_SO3) {
    memcpy(Jm, T->JO, sizeof Jm);
  } else {
    Jm[0] = T->J[0];
    Jm[4] = T->J[1];
    Jm[8] = T->J[2];
  }
  lv_models_rvec(Jm, W, L);
  hat(W, A);
  mul3(A, Jm, B);
  hat(L, A);
  for (int i = 0; i < 9; i++) B[i] -= A[i];
  LV_CHECK(add3(C, o, o, B, -1.0));
  if (T->form == F_SE3) {
    hat(W, A);
    LV_CHECK(add3(C, 0, 0, A, -T->m));
    hat(v, A);
    LV_CHECK(add3(C, 0, 3, A, T->m));
  }
  return 0;
}

static int constr(const double *q, double *g, void *u) {
  const top *T = u;
  double y[3], x[3], R[9];
  pose(T, q, x, R);
  lv_models_rvec(R, T->X, y);
  for (int i = 0; i < 3; i++) g[i] = y[i] - x[i];
  return 0;
}

/* r3so3: (-I, -R X~);  se3: (-R, -R X~). */
static int jac(const double *q, lv_sink *G, void *u) {
  const top *T = u;
  double A[9], B[9], x[3], R[9];
  pose(T, q, x, R);
  hat(T->X, A);
  mul3(R, A, B);
  if (T->form == F_SE3) {
    LV_CHECK(add3(G, 0, 0, R, -1.0));
  } else {
    for (int i = 0; i < 3; i++) LV_CHECK(lv_sink_add(G, i, i, -1.0));
  }
  return add3(G, 0, 3, B, -1.0);
}

/* D_q(G^T lambda) with G^T lambda = ((-lambda | -R^T lambda), X~ R^T lambda):
 * rotational column block only, X~ (R^T lambda)~ (and -(R^T lambda)~ on the
 * translational rows for se3). */
static int chess(const double *q, const double *lam, lv_sink *H, void *u) {
  const top *T = u;
  double r[3], A[9], B[9], C[9], x[3], R[9];
  pose(T, q, x, R);
  lv_models_rtvec(R, lam, r);
  hat(r, A);
  hat(T->X, B);
  mul3(B, A, C);
  if (T->form == F_SE3) LV_CHECK(add3(H, 0, 3, A, -1.0));
  return add3(H, 3, 3, C, 1.0);
}

/* D_q(G w) = R ((w_U) + X~ w_Omega)~ on the rotational columns; w_U enters
 * only in se3 (in r3so3 the translational part of G is constant). */
static int curv(const double *q, const double *w, lv_sink *Z, void *u) {
  const top *T = u;
  double c[3], A[9], B[9], x[3], R[9];
  pose(T, q, x, R);
  lv_models_cross(T->X, w + 3, c);
  if (T->form == F_SE3)
    for (int i = 0; i < 3; i++) c[i] += w[i];
  hat(c, A);
  mul3(R, A, B);
  return add3(Z, 0, 3, B, 1.0);
}

/* Rotation about e3: x -> exp(s e3~) x, R -> exp(s e3~) R; left-trivialised
 * generator r3so3 (e3 x x, R^T e3), se3 (R^T (e3 x x), R^T e3), so3 R^T e3. */
static int sym(int k, const double *q, double *xi, void *u) {
  const top *T = u;
  (void)k;
  double x[3], R[9];
  pose(T, q, x, R);
  if (T->form == F_SO3) {
    lv_models_rtvec(R, E3, xi);
    return 0;
  }
  double c[3];
  lv_models_cross(E3, x, c);
  if (T->form == F_SE3)
    lv_models_rtvec(R, c, xi);
  else
    memcpy(xi, c, sizeof c);
  lv_models_rtvec(R, E3, xi + 3);
  return 0;
}


/* Formulation @p f (r3so3, se3, so3 or udq) from the parameters of
 * heavy-top (models/heavy_top.c checks them). */
int lv_models_heavy_top_hand(const lv_kv *kv, const char *f, lv_model **out) {
  *out = NULL;
  top P;
  memset(&P, 0, sizeof P);
  double W[3];
  size_t nforms = sizeof FORMS / sizeof FORMS[0], fi = 0;
  while (fi < nforms && strcmp(f, FORMS[fi].name) != 0) fi++;
  if (fi == nforms) return LV_EINPUT;
  P.form = FORMS[fi].eq;
  static const char *const jn[3] = {"J1", "J2", "J3"}, *const xn[3] = {"X1", "X2", "X3"},
                          *const wn[3] = {"Omega1", "Omega2", "Omega3"};
  static const double jd[3] = {0.234375, 0.46875, 0.234375}, xd[3] = {0, 1, 0}, wd[3] = {0, 150, -4.61538};
  LV_CHECK(lv_kv_double(kv, "m", 15.0, &P.m));
  LV_CHECK(lv_kv_double(kv, "gravity", 9.81, &P.g0));
  for (int i = 0; i < 3; i++) {
    LV_CHECK(lv_kv_double(kv, jn[i], jd[i], &P.J[i]));
    LV_CHECK(lv_kv_double(kv, xn[i], xd[i], &P.X[i]));
    LV_CHECK(lv_kv_double(kv, wn[i], wd[i], &W[i]));
  }
  if (!(P.m > 0) || !(P.J[0] > 0) || !(P.J[1] > 0) || !(P.J[2] > 0)) return LV_EINPUT;
  double xx = P.X[0] * P.X[0] + P.X[1] * P.X[1] + P.X[2] * P.X[2];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      P.JO[3 * i + j] = (i == j ? P.J[i] + P.m * xx : 0.0) - P.m * P.X[i] * P.X[j];

  lv_space *sp = NULL;
  int rc = lv_space_new(&sp);
  if (rc) return rc;
  rc = lv_space_add(sp, FORMS[fi].kind, 0);
  int nc = P.form == F_SO3 ? 0 : 3;
  lv_model *m = NULL;
  if (!rc) rc = lv_model_new(&m, "heavy-top", sp, nc);
  if (rc) {
    lv_space_free(sp);
    return rc;
  }
  top *T = lv_calloc(1, sizeof *T);
  if (!T) {
    lv_model_free(m);
    return LV_ENOMEM;
  }
  *T = P;
  T->sp = sp;
  lv_model_set_user(m, T, free);
  /* R0 = I, x0 = R0 X, u0 = Omega0 x X (= R0^T u0 = U0 in se3): consistent. */
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double q0[12] = {0}, v0[6] = {0};
  rc = lv_space_set_pose(sp, 0, P.X, I3, q0);
  if (P.form == F_SO3) {
    memcpy(v0, W, sizeof W);
  } else {
    lv_models_cross(W, P.X, v0);
    memcpy(v0 + 3, W, sizeof W);
  }
  if (!rc) rc = lv_model_set_mass(m, mass, 1);
  if (!rc) rc = lv_model_set_potential(m, potential, grad, hess);
  if (!rc) rc = lv_model_set_force(m, force, force_dq, force_dv);
  if (!rc && nc > 0) rc = lv_model_set_constraints(m, constr, jac, chess, curv);
  if (!rc) rc = lv_model_set_symmetries(m, 1, sym);
  if (!rc) rc = lv_model_set_initial(m, q0, v0);
  if (rc) {
    lv_model_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
