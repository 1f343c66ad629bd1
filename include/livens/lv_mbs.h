/** @file lv_mbs.h
 *  The multibody layer: describe a system of particles and rigid bodies,
 *  joints between body-fixed points and axes, gravity and symmetries, and
 *  build an ordinary lv_model with every derivative exact (G, the
 *  constraint Hessian H(q; gamma) and the curvature Z(q; w) of lv_model.h;
 *  no finite differences).
 *
 *  Conventions:
 *  - Element ids: LV_MBS_GROUND (0) is the ground (the inertial frame);
 *    particles and bodies get ids 1, 2, ... in the order they are added.
 *  - Body frames: a body's frame has its origin at the centre of mass and
 *    its axes are the columns of the rotation R (space = R body).  Points X
 *    and axes A of a body are given in that frame; for the ground they are
 *    given in space.  Matrices are 3x3 row-major.
 *  - Formulation (one per system, chosen at lv_mbs_new):
 *      "directors"  q_b = (phi, d1, d2, d3) in R^12, phi the centre of
 *                   mass, d_k = R e_k; six orthonormality constraints per
 *                   body; constant mass matrix blockdiag(m I3, E (x) I3),
 *                   E = 1/2 tr(J) I - J.  Space R^n: every scheme applies,
 *                   including RATTLE, VI-S/A/B, EM and EM-G.
 *      "r3so3"      q_b = (x, R) in R^3 x SO(3), v_b = (u, Omega), Omega
 *                   the body angular velocity; M = diag(m I3, J) and the
 *                   gyroscopic force -Omega x J Omega (the Lie group
 *                   schemes: genalpha, BLieDF).
 *      "se3"        q_b = (x, R) in SE(3), v_b = (U, Omega) both in the
 *                   body frame (x' = R U); M = diag(m I3, J), forces
 *                   (-m Omega x U, -Omega x J Omega).
 *      "euler-parameters"  q_b = (x, p) in R^7, v_b = q_b', p the Euler
 *                   parameters (unit quaternion) of R, one norm constraint
 *                   1/2 (|p|^2 - 1) = 0 per body; M(q) = diag(m I3,
 *                   4 Gb^T J Gb), Omega = 2 Gb(p) p' (seed 002's Ga(EP)).
 *      "cardan", "cardan-SEQ"  q_b = (x, phi) in R^6, v_b = q_b',
 *                   R = R_a(phi1) R_b(phi2) R_c(phi3) for the axis
 *                   sequence SEQ = abc (three of x, y, z, consecutive ones
 *                   distinct: "xyz", "zxz", ...; "cardan" is "cardan-xyz",
 *                   seed 002's Ga(CTB)); M(q) = diag(m I3, Gm^T J Gm),
 *                   Omega = Gm(phi) phi'.  An initial orientation on the
 *                   sequence's singular set (det Gm = 0) is refused.
 *                   Both: space R^n, mass matrix depending on q, exact
 *                   quadratic-velocity force with df/dq, df/dv: genalpha
 *                   and BLieDF run them; RATTLE, VI and EM (constant mass
 *                   only) refuse them.
 *    A particle is q = x in R^3 in every formulation; a planar particle
 *    (lv_mbs_add_planar_particle) is q = (x, y) in R^2, its point
 *    (x, y, 0).
 *  - Joints constrain body-fixed points and axes of two elements a and b
 *    (either may be the ground, not both, a != b).  Joints that lock a
 *    relative rotation (prismatic, fixed) hold the relative orientation of
 *    the initial state given to lv_mbs_add_body.
 *  - A planar body (all mass in a plane normal to a body axis c: J_c =
 *    J_a + J_b, E_cc = 0) keeps only d_a, d_b in directors (R^9 per body),
 *    d_c = d_a x d_b; see doc/mbs.md.
 *  - Every call returns 0 or a status (LV_EINPUT, LV_EUNKNOWN, LV_ENOMEM);
 *    lv_mbs_error gives one sentence naming the element and the reason.
 */
#ifndef LIVENS_LV_MBS_H
#define LIVENS_LV_MBS_H

#include "lv_model.h"

/* LV_API marks the exported functions where the library is built with
 * hidden visibility (lv_export.h); empty otherwise. */
#ifndef LV_API
#define LV_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Id of the ground. */
#define LV_MBS_GROUND 0
/** Room for an element's name, its terminating NUL included. */
#define LV_MBS_NAME_MAX 48

/** A multibody system being described (opaque): created by lv_mbs_new,
 *  filled by the lv_mbs_add_* calls, turned into an ordinary lv_model by
 *  lv_mbs_build and released by lv_mbs_free (the built model does not
 *  need it). */
typedef struct lv_mbs lv_mbs;

/** Frame an initial angular velocity is given in. */
typedef enum {
  LV_MBS_BODY_FRAME = 0,  /**< components along the body axes (Omega) */
  LV_MBS_SPACE_FRAME = 1  /**< components in space (omega = R Omega) */
} lv_mbs_frame;

/** New empty system in formulation @p formulation ("directors", "r3so3",
 *  "se3", "euler-parameters", "cardan" or "cardan-SEQ"; NULL:
 *  "directors").  Status: LV_EUNKNOWN (formulation name;
 *  *out is then still created so lv_mbs_error can say which), LV_ENOMEM. */
LV_API int lv_mbs_new(lv_mbs **out, const char *formulation);
/** Free the description (models already built do not depend on it). */
LV_API void lv_mbs_free(lv_mbs *s);
/** One sentence saying why the last failed call on @p s failed ("" if
 *  none).  Never NULL. */
LV_API const char *lv_mbs_error(const lv_mbs *s);
/** Names of the formulations, NULL-terminated ("cardan" stands also for
 *  its "cardan-SEQ" forms). */
LV_API const char *const *lv_mbs_formulations(void);

/** Name element @p id (a body or particle; default "body<id>" or
 *  "particle<id>"): 1 to LV_MBS_NAME_MAX - 1 letters, digits, '_' or '-',
 *  unique, not "ground" nor another element's default name.  The name heads
 *  the element's columns in a run's CSV (doc/mbs.md).  Status: LV_EINPUT. */
LV_API int lv_mbs_set_name(lv_mbs *s, int id, const char *name);

/** Add a particle of mass @p m > 0 at @p x0 with velocity @p v0 (NULL:
 *  zero).  *id (may be NULL) receives its id. */
LV_API int lv_mbs_add_particle(lv_mbs *s, double m, const double x0[3],
                               const double v0[3], int *id);
/** Add a planar particle of mass @p m > 0: two coordinates q = (x, y),
 *  moving in the x-y plane of the system (its point is (x, y, 0)), at
 *  @p x0 with velocity @p v0 (2 numbers each; v0 NULL: zero).  It is a
 *  particle for every call that takes one (distance joints, spherical
 *  joints to an element that leaves the plane, springs, dampers, bushings,
 *  gravity, applied forces) with exact derivatives in every formulation:
 *  the forces' z components are taken up by the plane.  Refused: a
 *  spherical joint between two elements that cannot leave the plane (its z
 *  row would be constant), and at lv_mbs_build a symmetry that would move it
 *  out of the plane (a translation with a z component, a rotation about
 *  an axis other than z).  *id (may be NULL) receives its id.  Status:
 *  LV_EINPUT, LV_ENOMEM. */
LV_API int lv_mbs_add_planar_particle(lv_mbs *s, double m, const double x0[2],
                                      const double v0[2], int *id);
/** Add a rigid body: mass @p m > 0, inertia tensor @p J about the centre
 *  of mass in body axes (symmetric positive definite, satisfying the
 *  triangle inequalities of a physical body; 9 numbers row-major, or NULL
 *  with @p Jdiag giving principal moments), centre of mass @p x0,
 *  orientation @p R0 (NULL: identity; must be a rotation to 1e-12),
 *  velocity of the centre of mass @p v0 (NULL: zero) and angular velocity
 *  @p w0 (NULL: zero) in @p frame. */
LV_API int lv_mbs_add_body(lv_mbs *s, double m, const double J[9],
                           const double Jdiag[3], const double x0[3],
                           const double R0[9], const double v0[3],
                           const double w0[3], lv_mbs_frame frame, int *id);

/** Initial orientations the way engineers give them: the rotation by
 *  @p angle about @p axis (any non-zero length) into @p R (row-major).
 *  Status: LV_EINPUT (zero or non-finite axis or angle, NULL). */
LV_API int lv_mbs_rotation_axis_angle(const double axis[3], double angle,
                                      double R[9]);
/** ... and of Cardan / Tait-Bryan angles for the axis sequence @p seq
 *  (three of 'x', 'y', 'z', consecutive ones distinct, e.g. "xyz" or the
 *  proper Euler "zxz"): R = R_seq[0](a[0]) R_seq[1](a[1]) R_seq[2](a[2])
 *  (the heavy-top-ctb convention).  Status: LV_EINPUT (bad sequence,
 *  non-finite angles, NULL). */
LV_API int lv_mbs_rotation_cardan(const char *seq, const double angles[3],
                                  double R[9]);

/** Uniform gravitational acceleration @p g (e.g. {0, 0, -9.81}) acting on
 *  every particle and body: V = -sum m g . x_cm. */
LV_API int lv_mbs_set_gravity(lv_mbs *s, const double g[3]);

/** Linear spring of stiffness @p k >= 0 and rest length @p L0 >= 0
 *  between point @p Xa of @p a and point @p Xb of @p b:
 *  V = 1/2 k (|x_a - x_b| - L0)^2, a conservative potential.  In directors
 *  (points on a body's plane for a planar body) the layer also hands EM the
 *  quadratic invariant |x_a - x_b|^2 (and g . x_cm for gravity), so EM's
 *  discrete gradient conserves energy and momentum maps exactly.  Its
 *  gradient is undefined where the points meet with L0 > 0 (the evaluation
 *  then fails as non-finite). */
LV_API int lv_mbs_add_spring(lv_mbs *s, int a, const double Xa[3], int b,
                             const double Xb[3], double k, double L0);

/** Spring on the squared distance (Gonzalez' four-particle system, a
 *  St Venant-Kirchhoff bar): V = 1/2 @p k (|x_a(Xa) -
 *  x_b(Xb)|^2 - @p L0^2)^2, k >= 0, L0 >= 0, between the same kind of
 *  points as lv_mbs_add_spring.  A polynomial in q in directors: EM gets
 *  the invariant |x_a - x_b|^2 as for lv_mbs_add_spring (V = Vt(pi) with
 *  Vt(pi) = 1/2 k (pi - L0^2)^2), and the gradient is defined everywhere,
 *  where the points meet too.  Status: LV_EINPUT. */
LV_API int lv_mbs_add_spring_squared(lv_mbs *s, int a, const double Xa[3], int b,
                                     const double Xb[3], double k, double L0);

/** Linear damper of coefficient @p c >= 0 between point @p Xa of @p a and
 *  point @p Xb of @p b: the force -c (e . r') e along e = r / |r|,
 *  r = x_a - x_b (non-conservative, with exact Jacobians; the conserving
 *  schemes RATTLE, VI and EM refuse a model that has one). */
LV_API int lv_mbs_add_damper(lv_mbs *s, int a, const double Xa[3], int b,
                             const double Xb[3], double c);

/* ---- Torsional springs and dampers, applied forces and torques (issue 15;
 * src/mbs/forces.c, doc/mbs.md "Forces") ---- */

/** Torsional spring about a revolute axis: axis @p Aa of @p a (in a's
 *  frame; space for the ground) and axis @p Ab of @p b, meant to stay
 *  parallel (a revolute or cylindrical joint between a and b).  The angle
 *  theta of b relative to a about Aa is counted from the initial state
 *  (theta = 0 at the orientations given to lv_mbs_add_body; right-handed
 *  about Aa), and V = 1/2 @p k (theta - @p theta0)^2, a conservative
 *  potential with exact gradient and Hessian in every formulation.
 *  theta - theta0 is atan2(p2 . m, p1 . m) of two dot products of
 *  body-fixed axis maps (p1, p2 unit normals of Aa on a turned by theta0,
 *  m the b-fixed vector that was a's first normal initially): smooth, and
 *  quadratic dot products in directors.  Range: |theta - theta0| < pi; at
 *  pi the angle wraps (the potential jumps there), so the spring holds
 *  less than half a turn either side of its rest angle.  The axes must be
 *  parallel (to 1e-6) at the initial orientations.  With a torsional
 *  spring EM uses Gonzalez' discrete gradient for V (energy exact; the
 *  momentum maps of symmetries that leave V invariant too). */
LV_API int lv_mbs_add_torsional_spring(lv_mbs *s, int a, const double Aa[3], int b, const double Ab[3],
                                       double k, double theta0);
/** Torsional damper about the same kind of axis pair: the torque
 *  -@p c theta' about the axis (generalized force -c (dtheta . v)
 *  dtheta, non-conservative, exact Jacobians; the conserving schemes
 *  refuse a model that has one). */
LV_API int lv_mbs_add_torsional_damper(lv_mbs *s, int a, const double Aa[3], int b, const double Ab[3],
                                       double c);

/** Bushing: a linear spring-damper between point @p Xa of @p a and point
 *  @p Xb of @p b acting along each space axis separately (a flexible
 *  support, e.g. a rotor bearing): with r = x_a(Xa) - x_b(Xb) - r0, r0 its
 *  value in the initial state, V = 1/2 sum_i @p k[i] r_i^2 (conservative,
 *  exact gradient and Hessian) and the damping force -@p c[i] r_i' along
 *  axis i (non-conservative, exact Jacobians; the conserving schemes refuse
 *  a model that has one).  Unlike lv_mbs_add_spring it is defined, and
 *  smooth, where the points meet.  Status: LV_EINPUT (ids, a point off a
 *  particle, a negative or non-finite k or c). */
LV_API int lv_mbs_add_bushing(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3],
                              const double k[3], const double c[3]);
/** An applied load as a function of time: write the vector at time @p t
 *  (a force or a torque, space components) into @p out; return 0, or
 *  non-zero to fail the evaluation (LV_ECALLBACK). */
typedef int (*lv_mbs_load_fn)(double t, void *user, double out[3]);

/** Built-in time functions of a load (system files use them). */
typedef enum {
  LV_MBS_CONSTANT = 0, /**< value */
  LV_MBS_SINE = 1,     /**< value sin(2 pi frequency t + phase) */
  LV_MBS_STEP = 2,     /**< 0 for t < t0, value from t0 on */
  LV_MBS_RAMP = 3      /**< 0 up to t0, linear to value at t1, then value */
} lv_mbs_profile_kind;

/** A load vector given by a built-in time function. */
typedef struct {
  lv_mbs_profile_kind kind; /**< which time function */
  double value[3];  /**< the vector (amplitude for a sine, final value otherwise) */
  double frequency; /**< sine: cycles per unit time */
  double phase;     /**< sine: rad */
  double t0;        /**< step: the time it switches on; ramp: its start */
  double t1;        /**< ramp: its end, t1 > t0 */
} lv_mbs_profile;

/** The vector of profile @p p at time @p t into @p out.  Status:
 *  LV_EINPUT (NULL, unknown kind, non-finite data, ramp with t1 <= t0). */
LV_API int lv_mbs_profile_eval(const lv_mbs_profile *p, double t, double out[3]);

/** Applied force @p fn(t) (space frame) at body point @p X of particle or
 *  body @p body (X = 0 for a particle): generalized force D^T f, D the
 *  point's map; non-conservative, with its exact derivative df/dq (the
 *  point's map turns with q) for the Newton matrices of genalpha and
 *  BLieDF.  @p user is handed to @p fn and must outlive the models built. */
LV_API int lv_mbs_add_force(lv_mbs *s, int body, const double X[3], lv_mbs_load_fn fn, void *user);
/** Applied torque @p fn(t) (space frame) on rigid body @p body:
 *  generalized force sum_k D_k^T (1/2 tau x d_k) over the maps d_k of the
 *  body axes (on the constraint manifold exactly the virtual work
 *  tau . dtheta), with exact df/dq. */
LV_API int lv_mbs_add_torque(lv_mbs *s, int body, lv_mbs_load_fn fn, void *user);
/** lv_mbs_add_force with a built-in time function (copied). */
LV_API int lv_mbs_add_force_profile(lv_mbs *s, int body, const double X[3], const lv_mbs_profile *p);
/** lv_mbs_add_torque with a built-in time function (copied). */
LV_API int lv_mbs_add_torque_profile(lv_mbs *s, int body, const lv_mbs_profile *p);

/** Spherical joint: point @p Xa of @p a coincides with point @p Xb of
 *  @p b (3 constraints, linear in directors). */
LV_API int lv_mbs_add_spherical(lv_mbs *s, int a, const double Xa[3], int b,
                                const double Xb[3]);
/** Revolute joint: spherical at (Xa, Xb) and axis @p Aa of a parallel to
 *  axis @p Ab of b (5 constraints: Aa . n_i(b) = 0 for two unit vectors
 *  n_1, n_2 of b normal to Ab). */
LV_API int lv_mbs_add_revolute(lv_mbs *s, int a, const double Xa[3],
                               const double Aa[3], int b, const double Xb[3],
                               const double Ab[3]);
/** Universal (Cardan) joint: spherical at (Xa, Xb) and the cross axes
 *  @p Aa of a and @p Ab of b kept perpendicular (4 constraints). */
LV_API int lv_mbs_add_universal(lv_mbs *s, int a, const double Xa[3],
                                const double Aa[3], int b, const double Xb[3],
                                const double Ab[3]);
/** Cylindrical joint: point Xa of a stays on the line through Xb along Ab
 *  of b, and Aa stays parallel to Ab (4 constraints). */
LV_API int lv_mbs_add_cylindrical(lv_mbs *s, int a, const double Xa[3],
                                  const double Aa[3], int b, const double Xb[3],
                                  const double Ab[3]);
/** Prismatic joint: cylindrical, and the rotation about the axis locked
 *  at its initial value (5 constraints). */
LV_API int lv_mbs_add_prismatic(lv_mbs *s, int a, const double Xa[3],
                                const double Aa[3], int b, const double Xb[3],
                                const double Ab[3]);
/** Fixed joint: spherical at (Xa, Xb) and the relative orientation locked
 *  at its initial value (6 constraints).  Rigid bodies only. */
LV_API int lv_mbs_add_fixed(lv_mbs *s, int a, const double Xa[3], int b,
                            const double Xb[3]);
/** Rigid distance (massless rod): |x_a(Xa) - x_b(Xb)| = @p L > 0, written
 *  as 1/2 (|x_a - x_b|^2 - L^2) = 0 (quadratic in directors). */
LV_API int lv_mbs_add_distance(lv_mbs *s, int a, const double Xa[3], int b,
                               const double Xb[3], double L);
/** lv_mbs_add_distance with its row scaled by @p scale > 0:
 *  @p scale / 2 (|x_a - x_b|^2 - L^2) = 0.  The motion is the same; G, H
 *  and Z are multiplied by scale and the multiplier divided by it.
 *  scale = 1/L gives G rows of unit length on the constraint manifold (the
 *  Newton matrices stay O(1) whatever L: the chain), 1/L^2 a dimensionless
 *  constraint.  Either form is evaluated on the difference x_a - x_b, so it
 *  keeps its relative accuracy far from the origin.  Status: LV_EINPUT. */
LV_API int lv_mbs_add_distance_scaled(lv_mbs *s, int a, const double Xa[3], int b,
                                      const double Xb[3], double L, double scale);

/** Scale the constraint rows of the joint added last (lv_mbs_add_spherical
 *  ... lv_mbs_add_distance) by @p factor (finite, non-zero): its rows
 *  become @p factor times those described above.  The motion is the same;
 *  the joint's multipliers come out divided by @p factor, and its rows'
 *  weight in the schemes' Newton residuals changes with it.  E.g. 1/L for a
 *  spherical joint at distance L from a body's centre of mass makes its
 *  rows dimensionless like the directors' orthonormality rows (the
 *  gyroscopic top's tip rows phi/l - d3).  Status: LV_EINPUT (no joint
 *  added yet, @p factor zero or not finite). */
LV_API int lv_mbs_scale_last_joint(lv_mbs *s, double factor);

/** Declare a symmetry for a momentum map: the rotation of the whole
 *  system about the spatial axis @p axis through @p point (J = angular
 *  momentum about that axis). */
LV_API int lv_mbs_add_rotation_symmetry(lv_mbs *s, const double axis[3],
                                        const double point[3]);
/** The translation of the whole system along @p dir (J = linear momentum
 *  along dir). */
LV_API int lv_mbs_add_translation_symmetry(lv_mbs *s, const double dir[3]);
/** The rotation of body @p body alone about its body-fixed axis @p axis
 *  through its body point @p point (e.g. the spin of a symmetric top:
 *  J = the body's angular momentum about that axis, about that point). */
LV_API int lv_mbs_add_body_symmetry(lv_mbs *s, int body, const double axis[3],
                                    const double point[3]);

/** Build the model named @p name.  The model keeps its own copy of the
 *  description.  Status: LV_EINPUT (no element), LV_ENOMEM. */
LV_API int lv_mbs_build(lv_mbs *s, const char *name, lv_model **out);

/** Formulation name of a model built by lv_mbs_build, as given to
 *  lv_mbs_new ("directors", "cardan-zxz", ...); NULL for any other model
 *  (or NULL). */
LV_API const char *lv_mbs_model_formulation(const lv_model *m);
/** Number of elements of a model built by lv_mbs_build, the ground
 *  included (ids 0 .. n-1); 0 for any other model (or NULL). */
LV_API int lv_mbs_model_elements(const lv_model *m);
/** Name (lv_mbs_set_name's, else "body<id>" or "particle<id>"; "ground"
 *  for id 0) and kind (*rigid = 1 for a rigid body, 0 for a particle or
 *  the ground) of element @p id of a model built by lv_mbs_build; either
 *  pointer may be NULL.  The name lives as long as the model.  Status:
 *  LV_EINPUT (not an mbs model, id out of range). */
LV_API int lv_mbs_model_element(const lv_model *m, int id, const char **name, int *rigid);
/** Centre of mass @p x and rotation @p R (row-major; identity for a
 *  particle and the ground; either may be NULL) of element @p id of a
 *  model built by lv_mbs_build, at configuration @p q, whatever the
 *  formulation (euler-parameters: R(p) / |p|^2, a rotation also off the
 *  norm constraint).  Status: LV_EINPUT (not an mbs model, NULL q, id out
 *  of range). */
LV_API int lv_mbs_model_pose(const lv_model *m, int id, const double *q,
                             double x[3], double R[9]);

/** Read the system file @p path (YAML, format in doc/mbs.md: formulation,
 *  gravity, bodies, particles, joints, springs, dampers, torsional springs
 *  and dampers, forces, torques, symmetries) and
 *  build its model into *out.  @p formulation (NULL: the file's, else
 *  "directors") overrides the file's.  On failure *out is NULL and @p why
 *  (@p whylen bytes, may be NULL) holds one sentence "FILE:LINE: KEY:
 *  reason" (truncated to fit).  Status: LV_EIO (cannot open), LV_EINPUT
 *  (anything wrong in the file, an unknown key; also every file when this
 *  build has no YAML reader), LV_EUNKNOWN (formulation name), LV_ENOMEM. */
LV_API int lv_mbs_load(const char *path, const char *formulation, lv_model **out, char *why, size_t whylen);
/** The run settings of the system file @p path, its optional section
 *  "run: {step: H, t_end: T}": *step and *t_end (either may be NULL) get
 *  them, 0 where the file gives none.  Reads and checks the settings only
 *  (lv_mbs_load checks the rest).  Status and @p why as lv_mbs_load. */
LV_API int lv_mbs_load_run(const char *path, double *step, double *t_end, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
