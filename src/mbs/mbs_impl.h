/* Private structures of the multibody layer (src/mbs/).  Not installed.
 *
 * A system is a list of elements (element 0 is the ground), a list of
 * joints, each a list of scalar constraint rows written on the maps of
 * body-fixed points and axes, and a list of symmetries.  The maps are the
 * formulation's (form.c); the rows are the joints' (mbs.c): joints x
 * formulations is a sum. */
#ifndef LIVENS_MBS_IMPL_H
#define LIVENS_MBS_IMPL_H

#include <math.h>
#include "lv_internal.h"
#include "livens/lv_mbs.h"

/* ---- small 3-vector helpers shared by the layer's files ---- */
static inline void mbs_cross3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
static inline double mbs_dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/* y = R x, y = R^T x (R row-major) */
static inline void mbs_r_mul(const double R[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}
static inline void mbs_rt_mul(const double R[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
}
/* unit n1, n2 with (A, n1, n2) orthonormal and right-handed, A unit (the
 * normals of a revolute, cylindrical or prismatic axis, and of a torsion
 * axis) */
static inline void mbs_normals(const double A[3], double n1[3], double n2[3]) {
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(A[i]) < fabs(A[k])) k = i;
  double e[3] = {0, 0, 0};
  e[k] = 1.0;
  mbs_cross3(A, e, n1);
  double r = sqrt(mbs_dot3(n1, n1));
  for (int i = 0; i < 3; i++) n1[i] /= r;
  mbs_cross3(A, n1, n2);
}

typedef enum { MBS_DIRECTORS = 0, MBS_R3SO3 = 1, MBS_SE3 = 2, MBS_EP = 3, MBS_CARDAN = 4 } mbs_formulation;
/* The formulations on R^n with a configuration-dependent mass matrix
 * (form_vec.c): euler-parameters and cardan. */
#define MBS_VEC(f) ((f) == MBS_EP || (f) == MBS_CARDAN)
typedef enum { MBS_GROUND = 0, MBS_PARTICLE = 1, MBS_BODY = 2 } mbs_kind;

/* Largest tangent dimension of one element (a director body). */
#define MBS_NV_MAX 12
/* Largest number of map terms in one constraint row. */
#define MBS_TERMS 4

/* The rigid-body data of an element: each body has its own, particles and
 * the ground share mbs_rigid_point (R0 = I, ax = (0, 1, 2), the rest zero),
 * so that a particle costs no more than its mass, offsets and initial state
 * (chains of 10^6 particles). */
typedef struct {
  double J[9];     /* inertia about the centre of mass, body axes */
  double E[9];     /* Euler tensor 1/2 tr(J) I - J (directors' mass) */
  double R0[9], W0[3]; /* W0: body-frame angular velocity */
  /* w0 as given in the space frame (w0s = 1; directors use it as is rather
   * than R0 W0, which differs from it by round-off) */
  int w0s;
  double w0[3];
  /* directors of a planar body (E singular: all mass in the plane normal
   * to body axis ax[2]): only d_ax[0], d_ax[1] are coordinates and
   * d_ax[2] = d_ax[0] x d_ax[1]; otherwise planar = 0, ax = (0, 1, 2). */
  int planar, ax[3];
  int seq[3]; /* cardan: axes (0 = x) of the three angles */
} mbs_rigid;

extern const mbs_rigid mbs_rigid_point;

typedef struct {
  mbs_kind kind;
  int nrow;   /* euler-parameters: the body's norm row (set at build) */
  double m;
  double x0[3], v0[3];
  /* a particle's coordinates: 3 (q = x), or 2 for a planar particle
   * (lv_mbs_add_planar_particle: q = (x, y), its point (x, y, 0); x0, v0
   * hold z = 0) */
  int pdim;
  int qoff, voff, nq, nv;
  const mbs_rigid *rb; /* a body's own (freed with it), else &mbs_rigid_point */
  /* name (lv_mbs_set_name; default body<id> or particle<id>): the prefix
   * of the element's CSV columns <name>.x1, ...  In a system being built
   * NULL stands for the default and a given name is the element's own
   * string; in a built model every element's name is in mbs_sys.names. */
  char *name;
  int named; /* set by lv_mbs_set_name */
} mbs_elem;

/* Number of leading coordinates of an element that are its centre of mass
 * (tangent: its velocity): a particle's pdim, 3 for a body. */
static inline int mbs_ntrans(const mbs_elem *e) { return e->kind == MBS_PARTICLE ? e->pdim : 3; }

/* One map term: the position of body point X (axis = 0) or the direction
 * of body axis X (axis = 1) of the joint's element slot (0 = a, 1 = b). */
typedef struct {
  int slot, axis;
  double X[3];
} mbs_term;

/* Largest number of rows of one joint, and of distinct maps in one joint. */
#define MBS_ROWS 6
#define MBS_UNIQ (MBS_ROWS * MBS_TERMS)

/* c = sum_i g_i . y_i + 1/2 sum_ij P_ij y_i . y_j + c0, y_i the term maps;
 * ix[i]: the term's index among its joint's distinct maps (set at build). */
typedef struct {
  int nt;
  mbs_term t[MBS_TERMS];
  int ix[MBS_TERMS];
  double g[MBS_TERMS][3];
  double P[MBS_TERMS][MBS_TERMS];
  double c0;
  int quad; /* some P_ij != 0 (set at build with ix): else the row is linear in the maps */
  /* g_i = us[i] e_uk[i] (one non-zero component; set with ix), uk = -1 otherwise */
  int uk[MBS_TERMS];
  double us[MBS_TERMS];
  /* a distance row ds/2 (|y_0 - y_1|^2 - L2) (dist = 1; P = ds [[1, -1],
   * [-1, 1]], c0 = -ds L2 / 2 say the same): evaluated on the difference
   * r = y_0 - y_1, so that c and f_i = +-ds r keep their relative accuracy
   * far from the origin (no cancellation of |y|^2 terms) */
  int dist;
  double ds, L2;
} mbs_row;

/* What a joint other than a pp one keeps of its local G, H and Z (built
 * models only: set at build, one per such joint). */
struct mbs_jmat {
  /* structural non-zeros of the local G (nrows x nloc), H (nloc x nloc)
   * and Z (nrows x nloc), found at build time */
  unsigned char *mG, *mH, *mZ;
  /* the same as scatter lists: local flat index, global row, global column */
  int nG, nH, nZ;
  int *sG, *sH, *sZ; /* 3 ints per entry */
  /* Directors with every map constant (ground points, particles, director
   * bodies' linear maps): G is affine in q, H linear in gamma, Z linear in
   * w, compiled at build time per scatter entry (lin = 1): entry e of G is
   * Gc[e] + sum_{k in [Gs[e], Gs[e+1])} Gk[k] q[Gi[k]], of H
   * sum Hk[k] gam[Hi[k]] (global row), of Z sum Zk[k] w[Zi[k]]. */
  int lin;
  double *Gc, *Gk, *Hk, *Zk;
  int *Gs, *Gi, *Hs, *Hi, *Zs, *Zi;
};

typedef struct {
  const char *kind; /* "spherical", ..., "orthonormality" (static strings) */
  int el[2];        /* element ids of slots a, b */
  int nrows, row0;
  mbs_row *rows;
  /* rows_shared: rows is an earlier joint's (the same rows, e.g. the rods
   * of a chain: one copy for all of them) and is not freed with this one */
  int rows_shared;
  int nu;      /* distinct maps of the rows, evaluated once per call */
  mbs_term *u; /* room for MBS_UNIQ (set at build; not for pp joints) */
  /* a distance joint between particles (or a particle and the ground),
   * set at build: its maps are the positions themselves (D = I), and the
   * callbacks write its rows directly (mbs.c, pp_*), without joint_eval,
   * masks or scatter lists */
  int pp;
  /* a pp joint's slots as its callbacks read them (set in pp_lists, at
   * build): the tangent offset (-1: the ground), the number of coordinates
   * (3 at the ground, else the particle's pdim) and the coordinate offset */
  int ppo[2], ppn[2], ppq[2];
  /* every row linear in the maps with one non-zero component per term
   * (g_i = us e_uk, no P, not a distance row: spherical, revolute and
   * prismatic point rows), set with ix: joint_eval's short path, where G's
   * rows are sums of rows of D and H needs no D at all */
  int simple;
  int pair3; /* simple, in the spherical layout (joint_index_terms): joint_eval_pair3 */
  int coff; /* offset of its local G in the configuration cache (mbs_sys.serial) */
  struct mbs_jmat *x; /* set at build for the joints other than pp ones (NULL: none) */
} mbs_joint;

typedef enum { SYM_ROTATION = 0, SYM_TRANSLATION = 1, SYM_BODY = 2 } mbs_symkind;

typedef struct {
  mbs_symkind kind;
  int body;
  double axis[3], point[3];
} mbs_sym;

/* Linear spring between body points: V = 1/2 k (|x_a(Xa) - x_b(Xb)| - L0)^2,
 * or with sq = 1 (lv_mbs_add_spring_squared) V = 1/2 k (|x_a - x_b|^2 - L0^2)^2. */
typedef struct {
  int el[2];
  double X[2][3];
  double k, L0;
  int sq;
} mbs_spring;

typedef struct {
  mbs_formulation form;
  int nel, nj, nsym, nsp, ndp;
  mbs_elem *el;
  mbs_joint *j;
  mbs_sym *sym;
  mbs_spring *sp;
  mbs_spring *dp; /* dampers: k is the coefficient c, L0 unused */
  int last_joint; /* index in j of the joint added last by the user (-1: none) */
  int ninv; /* invariants handed to EM (0: none): springs, then gravity per element */
  double grav[3];
  int nq, nv, nc;
  char fname[24]; /* formulation name as given ("cardan-zxz", ...) */
  int seq[3];     /* cardan axis sequence */
  /* torsional springs and dampers, applied loads (forces.c) */
  int nts, cap_ts, nld, cap_ld;
  struct mbs_torsion *ts;
  struct mbs_load *ld;
  /* bushings: spring-dampers per space axis (forces.c) */
  int nbu, cap_bu;
  struct mbs_bushing *bu;
  /* built models: the distance joints between particles (mbs_joint.pp)
   * at each element, ppj[ppoff[e] .. ppoff[e + 1]) (NULL: none), so that
   * H adds each particle's diagonal once */
  int *ppoff, *ppj;
  /* built models small enough for the per-thread configuration cache of
   * g and the joints' local G (mbs.c, cb_g / cb_G): a serial unique per
   * built model (0: not cached); mbs_joint.coff the offsets in its G */
  unsigned long serial;
  /* built models without SE(3) bodies: gravity's gradient dV (nv), a
   * constant -m g per translational coordinate, formed once (NULL: none
   * or computed per call) */
  double *dvg;
  /* built models: the names of all elements, one after the other (NULL in
   * a system being built, whose elements own their given names) */
  char *names;
} mbs_sys;

/* ---- formulation maps (form.c) ----
 * y = x_cm + R X (point) or R X (axis) of element e at its coordinates qb,
 * and D = dy/dv (3 x e->nv, row-major): the rows of G (D NULL: y only). */
void mbs_map(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t, double y[3],
             double *D);
/* Kronecker form of a map whose D is constant: D = kc (x) I3 (kc has
 * e->nv / 3 entries) for (non-planar) particles and for director bodies unless the
 * point leaves a planar body's plane.  Returns 1 and fills y and kc (D is
 * not formed) in that case, 0 otherwise (nothing written). */
/* (inline: the directors' joint rows call it for every map) */
static inline int mbs_map_kron(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t, double y[3],
                               double *kc) {
  const double *X = t->X;
  if (e->kind == MBS_PARTICLE) {
    if (e->pdim != 3) return 0; /* a planar particle: D = [e1 e2] is no Kronecker product */
    memcpy(y, qb, 3 * sizeof(double));
    kc[0] = 1.0;
    return 1;
  }
  if (e->kind != MBS_BODY || f != MBS_DIRECTORS || (e->rb->planar && X[e->rb->ax[2]] != 0.0)) return 0;
  int nd = e->rb->planar ? 2 : 3, pt = !t->axis;
  kc[0] = pt ? 1.0 : 0.0;
  for (int k = 0; k < nd; k++) kc[1 + k] = X[e->rb->ax[k]];
  for (int i = 0; i < 3; i++) {
    double s = pt ? qb[i] : 0.0;
    for (int k = 0; k < nd; k++) s += kc[1 + k] * qb[3 + 3 * k + i];
    y[i] = s;
  }
  return 1;
}
/* Hb (nv x nv, row-major, leading dimension ld) += s D_q(D^T l) */
void mbs_map_hess(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                  const double l[3], double s, double *Hb, int ld);
/* The same into a block none of whose entries is -0 (zeroed, then only
 * summed into): the rotation block without the products of the hat
 * matrices' zero entries (form.c). */
void mbs_map_hess_nz(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                     const double l[3], double s, double *Hb, int ld);
/* C (3 x nv, leading dimension ld) += D_q(D w), w the element's tangent part */
void mbs_map_curv(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                  const double *w, double *C, int ld);
/* nq, nv of an element in a formulation */
void mbs_elem_dims(mbs_formulation f, const mbs_elem *e, int *nq, int *nv);
/* The three directors d[k] = R e_k of a director body at qb (the third
 * one of a planar body computed as d_a x d_b). */
void mbs_directors(const mbs_elem *e, const double *qb, double d[3][3]);
/* Configuration and velocity of element e from its initial data. */
void mbs_elem_initial(mbs_formulation f, const mbs_elem *e, double *qb, double *vb);
/* Centre of mass and rotation (row-major) of element e at qb. */
void mbs_elem_pose(mbs_formulation f, const mbs_elem *e, const double *qb, double x[3], double R[9]);

/* ---- euler-parameters and cardan (form_vec.c; doc/mbs.md) ----
 * Bodies only (particles and the ground as in every formulation); qb, vb
 * the body's coordinates and velocity, (x, p) in R^7 or (x, phi) in R^6. */
void mbs_vec_dims(mbs_formulation f, int *nq, int *nv);
/* the maps of form.c: y and D = dy/dq (3 x nv), Hb += s D_q(D^T l),
 * C += D_q(D w) */
void mbs_vec_map(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t, double y[3],
                 double *D);
void mbs_vec_map_hess(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                      const double l[3], double s, double *Hb, int ld);
void mbs_vec_map_curv(mbs_formulation f, const mbs_elem *e, const double *qb, const mbs_term *t,
                      const double *w, double *C, int ld);
/* R(q) of the maps (for euler-parameters |p|^2 times a rotation), and the
 * rotation of the pose (normalised) */
void mbs_vec_rot(mbs_formulation f, const mbs_elem *e, const double *qb, double R[9]);
void mbs_vec_pose_rot(mbs_formulation f, const mbs_elem *e, const double *qb, double R[9]);
/* rates of the rotation coordinates for the angular velocity w (space
 * frame if spatial, else body frame); 1 where Gm is singular (out = 0) */
int mbs_vec_rate(mbs_formulation f, const mbs_elem *e, const double *qb, const double w[3], int spatial,
                 double *out);
/* qb, vb from the body's initial data; 1 if the orientation is on the
 * singular set of the cardan sequence */
int mbs_vec_initial(mbs_formulation f, const mbs_elem *e, double *qb, double *vb);
/* the body's rotation block of M(q), of the quadratic-velocity force and
 * of its Jacobians (dq = 1: df/dq, 0: df/dv), global indices */
int mbs_vec_mass(mbs_formulation f, const mbs_elem *e, const double *qb, lv_sink *M);
void mbs_vec_force(mbs_formulation f, const mbs_elem *e, const double *qb, const double *vb, double *fb);
int mbs_vec_force_jac(mbs_formulation f, const mbs_elem *e, const double *qb, const double *vb, int dq,
                      lv_sink *K);
/* euler-parameters: the rows 1/2 (|p|^2 - 1) = 0 of every body (row
 * e->nrow), their G, H(gam) and Z(w): mbs.c's g_walk, h_walk, z_walk) */
void mbs_vec_norm_g(const mbs_sys *S, const double *q, double *g);

/* System files (sysfile.c, issue 15): lv_mbs_load on the @p len bytes at
 * @p text, @p name standing for the file in the sentences (the fuzz
 * harness). */
int lv_mbs_load_buffer(const unsigned char *text, size_t len, const char *name, const char *formulation,
                       lv_model **out, char *why, size_t whylen);

/* ---- Torsional springs and dampers, applied loads (forces.c, issue 15) ---- */

/* Torsion about an axis pair: rows[0] = c = p1(a) . m(b), rows[1] =
 * s = p2(a) . m(b), the angle phi = atan2(s, c) (theta - theta0). */
typedef struct mbs_torsion {
  int el[2];
  int damper; /* 0: spring V = 1/2 k phi^2; 1: damper f = -k phi' dphi */
  double k;
  mbs_row rows[2]; /* indexed when added (mbs_joint_index), read-only after */
  mbs_term u[MBS_UNIQ]; /* their distinct maps */
  int nu, simple;
} mbs_torsion;

typedef struct mbs_load {
  int body, torque;
  double X[3];
  lv_mbs_load_fn fn; /* NULL: prof */
  void *user;
  lv_mbs_profile prof;
} mbs_load;

/* Bushing between point X[0] of el[0] and X[1] of el[1]: r = y_a - y_b - r0
 * (r0 its value in the initial state), V = 1/2 sum_i k_i r_i^2, f = -D^T C r'. */
typedef struct mbs_bushing {
  int el[2];
  double X[2][3];
  double k[3], c[3], r0[3];
} mbs_bushing;

/* Hooks into mbs.c's callbacks and build. */
int mbs_forces_clone(const mbs_sys *S, mbs_sys *T); /* T's ts, ld: copies of S's (NULL on failure) */
void mbs_forces_clear(mbs_sys *S);
int mbs_has_torsion_springs(const mbs_sys *S); /* or bushings: potential terms beyond the springs */
int mbs_has_forces(const mbs_sys *S); /* torsional dampers or loads */
int mbs_torsion_V(const mbs_sys *S, const double *q, double *V);      /* V += */
int mbs_torsion_dV(const mbs_sys *S, const double *q, double *dV);    /* dV += */
int mbs_torsion_d2V(const mbs_sys *S, const double *q, lv_sink *H);
int mbs_forces_f(const mbs_sys *S, double t, const double *q, const double *v, double *f); /* f += */
int mbs_forces_dq(const mbs_sys *S, double t, const double *q, const double *v, lv_sink *K);
int mbs_forces_dv(const mbs_sys *S, double t, const double *q, const double *v, lv_sink *C);

/* mbs.c services for forces.c (new functions at the end of mbs.c) */
mbs_sys *mbs_sys_of(lv_mbs *s);
int mbs_fail(lv_mbs *s, int rc, const char *fmt, ...);
/* joint_eval of mbs.c on joint J (its terms indexed by mbs_joint_index):
 * c, G (nrows x n), H(gam) (n x n), local to the joint's two elements */
void mbs_joint_index(mbs_joint *J);
/* Hl (n x n, row-major, n = ea->nv + eb->nv: ea's tangent columns, then
 * eb's) added at the elements' global tangent positions: one block add per
 * pair of elements with coordinates, the values and, within every row and
 * column, the order of one add per entry */
int mbs_add_pair_square(lv_sink *s, const mbs_elem *ea, const mbs_elem *eb, const double *Hl);
void mbs_joint_eval(const mbs_sys *S, const mbs_joint *J, const double *q, const double *gam, double *c,
                    double *G, double *H, int *n);

#endif
