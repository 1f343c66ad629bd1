"""cffi builder of livens._livens (issue 16): API (out-of-line) mode.

Run as ``python3 livens_build.py OUT.c`` by the autotools build, which then
compiles OUT.c as a libtool Python module against liblivens.la.  Struct
fields are declared with ``...;`` so the C compiler supplies every layout:
nothing here copies a struct layout by hand.
"""
import sys

from cffi import FFI

CDEF = r"""
/* lv_status.h */
enum lv_status {
  LV_SUCCESS, LV_EINPUT, LV_ENOMEM, LV_ESINGULAR, LV_ENEWTON, LV_EDIVERGE,
  LV_ECALLBACK, LV_ENONFINITE, LV_EINCONSISTENT, LV_EUNKNOWN, LV_ENOTIMPL,
  LV_ELINSOL, LV_ESTEPMIN, LV_EIO, LV_EPATTERN, LV_ESTOPPED, LV_EDIVERGED, ...
};
const char *lv_strerror(int status);
const char *lv_status_name(int status);
const char *lv_version(void);

/* lv_linsol.h */
typedef struct lv_sink lv_sink;
typedef enum { LV_LINSOL_AUTO, LV_LINSOL_DENSE, LV_LINSOL_UMFPACK, LV_LINSOL_KLU, LV_LINSOL_SPARSE, ... } lv_linsol_kind;
const char *lv_linsol_kind_name(lv_linsol_kind kind);
int lv_blas_set_threads(int nthreads);

/* lv_space.h */
typedef enum { LV_FACTOR_RN, LV_FACTOR_SO3, LV_FACTOR_S3, LV_FACTOR_R3SO3, LV_FACTOR_SE3, ... } lv_factor_kind;
typedef struct lv_space lv_space;
int lv_space_new(lv_space **out);
void lv_space_free(lv_space *sp);
int lv_space_add(lv_space *sp, lv_factor_kind kind, int k);
int lv_space_nq(const lv_space *sp);
int lv_space_nv(const lv_space *sp);
const char *lv_space_name(const lv_space *sp);
int lv_space_log(const lv_space *sp, const double *q0, const double *q1, double *v);

/* lv_model.h */
typedef struct lv_model lv_model;
typedef int (*lv_scalar_fn)(const double *q, double *out, void *user);
typedef int (*lv_vector_fn)(const double *q, double *out, void *user);
typedef int (*lv_matrix_fn)(const double *q, lv_sink *out, void *user);
typedef int (*lv_matrix_w_fn)(const double *q, const double *w, lv_sink *out, void *user);
typedef int (*lv_force_fn)(double t, const double *q, const double *v, double *out, void *user);
typedef int (*lv_force_jac_fn)(double t, const double *q, const double *v, lv_sink *out, void *user);
typedef int (*lv_symmetry_fn)(int k, const double *q, double *xi_q, void *user);
typedef int (*lv_drive_fn)(double t, int order, double *out, void *user);
int lv_model_new(lv_model **out, const char *name, lv_space *space, int nconstr);
void lv_model_free(lv_model *m);
int lv_model_set_user(lv_model *m, void *user, void (*free_user)(void *));
int lv_model_set_mass(lv_model *m, lv_matrix_fn mass, int constant);
int lv_model_set_potential(lv_model *m, lv_scalar_fn V, lv_vector_fn dV, lv_matrix_fn d2V);
int lv_model_set_force(lv_model *m, lv_force_fn f, lv_force_jac_fn df_dq, lv_force_jac_fn df_dv);
int lv_model_set_constraints(lv_model *m, lv_vector_fn g, lv_matrix_fn G,
                             lv_matrix_w_fn hessian, lv_matrix_w_fn curvature);
int lv_model_set_driving(lv_model *m, lv_drive_fn c);
int lv_model_set_symmetries(lv_model *m, int n, lv_symmetry_fn xi);
int lv_model_set_initial(lv_model *m, const double *q0, const double *v0);
typedef int (*lv_invariant_fn)(const double *q, double *pi, void *user);
typedef int (*lv_invariant_pot_fn)(const double *pi, double *vt, double *dvt, void *user);
int lv_model_set_invariants(lv_model *m, int n, lv_invariant_fn pi, lv_matrix_fn dpi, lv_invariant_pot_fn vt);
const char *lv_model_name(const lv_model *m);
const lv_space *lv_model_space(const lv_model *m);
int lv_model_nq(const lv_model *m);
int lv_model_nv(const lv_model *m);
int lv_model_nc(const lv_model *m);
int lv_model_nsym(const lv_model *m);
int lv_model_mass_constant(const lv_model *m);
int lv_model_has_driving(const lv_model *m);
const double *lv_model_q0(const lv_model *m);
const double *lv_model_v0(const lv_model *m);
int lv_model_potential(const lv_model *m, const double *q, double *V);
int lv_model_grad_potential(const lv_model *m, const double *q, double *dV);
int lv_model_constraints(const lv_model *m, const double *q, double *g);
int lv_model_mass_dense(const lv_model *m, const double *q, double *M);
int lv_model_constraint_jac_dense(const lv_model *m, const double *q, double *G);

typedef struct {
  int checked;
  int failed;
  double err_dV, err_d2V, err_G, err_hessian, err_curvature, err_df_dq, err_df_dv, err_drive;
  ...;
} lv_check_result;
int lv_model_check_derivatives(const lv_model *m, const double *q, const double *v,
                               double tol, void *log, lv_check_result *res);

typedef struct { const char *name; const char *default_value; const char *doc; ...; } lv_param_info;
typedef struct { int n; const char **keys; const char **values; ...; } lv_kv;
typedef struct { const char *name; const char *description; const lv_param_info *params; ...; } lv_model_info;
const lv_model_info *const *lv_model_registry(void);
int lv_model_create(const char *name, const lv_kv *params, lv_model **out);
int lv_kv_check(const lv_kv *kv, const lv_param_info *info, const char **bad);
/* system files (issue 15, lv_mbs.h) */
int lv_mbs_load(const char *path, const char *formulation, lv_model **out, char *why, size_t whylen);
/* the multibody layer element by element (lv_mbs.h; livens/_mbs.py) */
#define LV_MBS_GROUND ...
typedef struct lv_mbs lv_mbs;
typedef enum { LV_MBS_BODY_FRAME, LV_MBS_SPACE_FRAME, ... } lv_mbs_frame;
int lv_mbs_new(lv_mbs **out, const char *formulation);
void lv_mbs_free(lv_mbs *s);
const char *lv_mbs_error(const lv_mbs *s);
#define LV_MBS_NAME_MAX ...
int lv_mbs_set_name(lv_mbs *s, int id, const char *name);
const char *const *lv_mbs_formulations(void);
int lv_mbs_add_particle(lv_mbs *s, double m, const double x0[3], const double v0[3], int *id);
int lv_mbs_add_planar_particle(lv_mbs *s, double m, const double x0[2], const double v0[2], int *id);
int lv_mbs_add_body(lv_mbs *s, double m, const double J[9], const double Jdiag[3], const double x0[3],
                    const double R0[9], const double v0[3], const double w0[3], lv_mbs_frame frame, int *id);
int lv_mbs_rotation_axis_angle(const double axis[3], double angle, double R[9]);
int lv_mbs_rotation_cardan(const char *seq, const double angles[3], double R[9]);
int lv_mbs_set_gravity(lv_mbs *s, const double g[3]);
int lv_mbs_add_spring(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double k, double L0);
int lv_mbs_add_damper(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double c);
int lv_mbs_add_torsional_spring(lv_mbs *s, int a, const double Aa[3], int b, const double Ab[3], double k,
                                double theta0);
int lv_mbs_add_torsional_damper(lv_mbs *s, int a, const double Aa[3], int b, const double Ab[3], double c);
typedef enum { LV_MBS_CONSTANT, LV_MBS_SINE, LV_MBS_STEP, LV_MBS_RAMP, ... } lv_mbs_profile_kind;
typedef struct {
  lv_mbs_profile_kind kind;
  double value[3];
  double frequency;
  double phase;
  double t0;
  double t1;
  ...;
} lv_mbs_profile;
int lv_mbs_add_force_profile(lv_mbs *s, int body, const double X[3], const lv_mbs_profile *p);
int lv_mbs_add_torque_profile(lv_mbs *s, int body, const lv_mbs_profile *p);
int lv_mbs_add_spherical(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3]);
int lv_mbs_add_revolute(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                        const double Ab[3]);
int lv_mbs_add_universal(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                         const double Ab[3]);
int lv_mbs_add_cylindrical(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                           const double Ab[3]);
int lv_mbs_add_prismatic(lv_mbs *s, int a, const double Xa[3], const double Aa[3], int b, const double Xb[3],
                         const double Ab[3]);
int lv_mbs_add_fixed(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3]);
int lv_mbs_add_distance(lv_mbs *s, int a, const double Xa[3], int b, const double Xb[3], double L);
int lv_mbs_scale_last_joint(lv_mbs *s, double factor);
int lv_mbs_add_rotation_symmetry(lv_mbs *s, const double axis[3], const double point[3]);
int lv_mbs_add_translation_symmetry(lv_mbs *s, const double dir[3]);
int lv_mbs_add_body_symmetry(lv_mbs *s, int body, const double axis[3], const double point[3]);
int lv_mbs_build(lv_mbs *s, const char *name, lv_model **out);
const char *lv_mbs_model_formulation(const lv_model *m);
int lv_mbs_model_pose(const lv_model *m, int id, const double *q, double x[3], double R[9]);

/* lv_newton.h */
typedef enum { LV_NEWTON_FULL, LV_NEWTON_SIMPLIFIED, LV_NEWTON_MODIFIED, ... } lv_newton_kind;
typedef struct { lv_newton_kind kind; int max_iter; double res_tol; ...; } lv_newton_options;

/* lv_scheme.h */
enum {
  LV_SCHEME_HAS_P, LV_SCHEME_HAS_GAMMA, LV_SCHEME_MULTISTEP, LV_SCHEME_CONSTANT_MASS,
  LV_SCHEME_LINEAR_SPACE, LV_SCHEME_UNCONSTRAINED, LV_SCHEME_SIMPLIFIED_NEWTON,
  LV_SCHEME_CONSERVATIVE, ...
};
typedef struct {
  const char *name; const char *description; const char *conserves; int order;
  unsigned flags; const lv_param_info *options; ...;
} lv_scheme_type;
const lv_scheme_type *const *lv_scheme_registry(void);
const lv_scheme_type *lv_scheme_find(const char *name);
unsigned lv_scheme_unmet_requirement(const lv_scheme_type *type, const lv_model *model, char *why, size_t n);

/* lv_integrator.h */
typedef struct lv_integrator lv_integrator;
typedef struct {
  long steps; long newton_iterations; long factorizations; long failed_solves;
  long halvings; long symbolic; lv_linsol_kind linsol; double wall_time;
  double init_g_norm; double init_gv_norm; int projected; ...;
} lv_integrator_stats;
int lv_integrator_new(lv_integrator **out, const lv_model *model, const char *scheme, double h);
void lv_integrator_free(lv_integrator *it);
int lv_integrator_set_option(lv_integrator *it, const char *key, const char *value);
int lv_integrator_set_linsol(lv_integrator *it, lv_linsol_kind kind, int threshold);
int lv_integrator_set_newton(lv_integrator *it, const lv_newton_options *opt);
void lv_integrator_get_newton(const lv_integrator *it, lv_newton_options *opt);
int lv_integrator_set_halving(lv_integrator *it, int max_halvings);
typedef enum { LV_INIT_PROJECT, LV_INIT_CHECK, ... } lv_init_mode;
int lv_integrator_set_init_mode(lv_integrator *it, lv_init_mode mode, double tol);
int lv_integrator_request_stop(lv_integrator *it);
int lv_integrator_init(lv_integrator *it, double t0, const double *q0, const double *v0);
int lv_integrator_error_detail(const lv_integrator *it, char *buf, size_t n);
double lv_integrator_step_size(const lv_integrator *it);
void lv_integrator_get_stats(const lv_integrator *it, lv_integrator_stats *s);

/* lv_diag.h */
typedef struct {
  long samples; double energy0; double max_rel_energy_error; double max_abs_energy_error;
  double max_energy_increment; double energy_drift_rate; double max_momentum_error;
  double max_g, max_gv, max_gp; ...;
} lv_diag_summary;
typedef struct lv_diag lv_diag;

/* pylivens.h */
typedef struct { lv_diag *diag; int every; long count; int nq, nv, nc, nsym, width;
                 double *rows; long nrows, cap; int failed; ...; } pylv_recorder;
int pylv_recorder_new(pylv_recorder **out, const lv_integrator *it, int every);
void pylv_recorder_free(pylv_recorder *r);
int pylv_attach(pylv_recorder *r, lv_integrator *it);
int pylv_run(pylv_recorder *r, lv_integrator *it, double t_end, double budget, int *done);
void pylv_finish(pylv_recorder *r, lv_integrator *it);
double *pylv_take_rows(pylv_recorder *r);
int pylv_sigint_begin(lv_integrator *it);
int pylv_sigint_end(void);
void free(void *p);
int pylv_sink_add_dense(lv_sink *s, const double *a, int nr, int nc);
void lv_diag_get_summary(const lv_diag *d, lv_diag_summary *sum);

/* callbacks of models written in Python (livens/_pymodel.py) */
extern "Python" int pylv_cb_V(const double *q, double *out, void *user);
extern "Python" int pylv_cb_dV(const double *q, double *out, void *user);
extern "Python" int pylv_cb_d2V(const double *q, lv_sink *out, void *user);
extern "Python" int pylv_cb_mass(const double *q, lv_sink *out, void *user);
extern "Python" int pylv_cb_g(const double *q, double *out, void *user);
extern "Python" int pylv_cb_G(const double *q, lv_sink *out, void *user);
extern "Python" int pylv_cb_hess(const double *q, const double *w, lv_sink *out, void *user);
extern "Python" int pylv_cb_curv(const double *q, const double *w, lv_sink *out, void *user);
extern "Python" int pylv_cb_force(double t, const double *q, const double *v, double *out, void *user);
extern "Python" int pylv_cb_force_dq(double t, const double *q, const double *v, lv_sink *out, void *user);
extern "Python" int pylv_cb_force_dv(double t, const double *q, const double *v, lv_sink *out, void *user);
extern "Python" int pylv_cb_drive(double t, int order, double *out, void *user);
extern "Python" int pylv_cb_sym(int k, const double *q, double *xi_q, void *user);
extern "Python" int pylv_cb_pi(const double *q, double *pi, void *user);
extern "Python" int pylv_cb_dpi(const double *q, lv_sink *out, void *user);
extern "Python" int pylv_cb_vt(const double *pi, double *vt, double *dvt, void *user);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source("livens._livens", '#include "pylivens.h"\n')

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: livens_build.py OUT.c")
    ffibuilder.emit_c_code(sys.argv[1])
