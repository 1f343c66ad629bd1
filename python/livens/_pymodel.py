"""Models written in Python: livens.Model.from_functions.

Each callback of the C model interface calls the Python function it was
given (cffi ``extern "Python"``, which takes the GIL for the call).  A
derivative left out is formed by the library's finite differences, as for a
C model; an exception in a function stops the step (the library reports
LV_ECALLBACK) and is chained to the CallbackError the run raises.
"""

import threading

import numpy as np

from ._livens import ffi, lib
from ._errors import InputError, make_error, _strerror
from ._core import Model

_FACTORS = {"SO3": lib.LV_FACTOR_SO3, "S3": lib.LV_FACTOR_S3, "R3xSO3": lib.LV_FACTOR_R3SO3,
            "SE3": lib.LV_FACTOR_SE3}


def _bad(msg):
    return InputError(msg, status=lib.LV_EINPUT)


class _Callbacks:
    """The Python functions of one model, handed to C as its user pointer."""

    def __init__(self, nq, nv, nc, fns, mass_const):
        self.nq, self.nv, self.nc = nq, nv, nc
        self.fns = fns
        self.mass_const = mass_const
        self.local = threading.local()  # the failing exception, per running thread

    def fail(self, exc):
        self.local.exc = exc
        return 1


def _vec(p, n):
    return np.frombuffer(ffi.buffer(p, 8 * n), dtype=np.float64).copy()


def _put(out, n, value, what):
    a = np.ascontiguousarray(value, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError(f"{what} must return {n} numbers, got shape {a.shape}")
    ffi.memmove(out, a, 8 * n)


def _mat(sink, value, nr, nc, what):
    a = np.ascontiguousarray(value, dtype=np.float64)
    if a.shape != (nr, nc):
        raise ValueError(f"{what} must return a {nr} x {nc} matrix, got shape {a.shape}")
    rc = lib.pylv_sink_add_dense(sink, ffi.from_buffer("double[]", a), nr, nc)
    if rc:
        raise ValueError(f"{what}: the matrix does not fit its block ({_strerror(rc)})")


@ffi.def_extern()
def pylv_cb_V(q, out, user):
    cb = ffi.from_handle(user)
    try:
        out[0] = float(cb.fns["potential"](_vec(q, cb.nq)))
        return 0
    except BaseException as e:  # noqa: B036 -- KeyboardInterrupt too: it stops the run
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_dV(q, out, user):
    cb = ffi.from_handle(user)
    try:
        _put(out, cb.nv, cb.fns["gradient"](_vec(q, cb.nq)), "gradient")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_d2V(q, sink, user):
    cb = ffi.from_handle(user)
    try:
        _mat(sink, cb.fns["hessian"](_vec(q, cb.nq)), cb.nv, cb.nv, "hessian")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_mass(q, sink, user):
    cb = ffi.from_handle(user)
    try:
        M = cb.mass_const if cb.mass_const is not None else cb.fns["mass"](_vec(q, cb.nq))
        _mat(sink, M, cb.nv, cb.nv, "mass")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_g(q, out, user):
    cb = ffi.from_handle(user)
    try:
        _put(out, cb.nc, cb.fns["constraints"](_vec(q, cb.nq)), "constraints")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_G(q, sink, user):
    cb = ffi.from_handle(user)
    try:
        _mat(sink, cb.fns["jacobian"](_vec(q, cb.nq)), cb.nc, cb.nv, "jacobian")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_hess(q, w, sink, user):
    cb = ffi.from_handle(user)
    try:
        _mat(sink, cb.fns["constraint_hessian"](_vec(q, cb.nq), _vec(w, cb.nc)), cb.nv, cb.nv,
             "constraint_hessian")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_curv(q, w, sink, user):
    cb = ffi.from_handle(user)
    try:
        _mat(sink, cb.fns["constraint_curvature"](_vec(q, cb.nq), _vec(w, cb.nv)), cb.nc, cb.nv,
             "constraint_curvature")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_force(t, q, v, out, user):
    cb = ffi.from_handle(user)
    try:
        _put(out, cb.nv, cb.fns["force"](t, _vec(q, cb.nq), _vec(v, cb.nv)), "force")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_force_dq(t, q, v, sink, user):
    cb = ffi.from_handle(user)
    try:
        _mat(sink, cb.fns["force_dq"](t, _vec(q, cb.nq), _vec(v, cb.nv)), cb.nv, cb.nv, "force_dq")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_force_dv(t, q, v, sink, user):
    cb = ffi.from_handle(user)
    try:
        _mat(sink, cb.fns["force_dv"](t, _vec(q, cb.nq), _vec(v, cb.nv)), cb.nv, cb.nv, "force_dv")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_drive(t, order, out, user):
    cb = ffi.from_handle(user)  # the model's user pointer, as for every callback
    try:
        _put(out, cb.nc, cb.fns["driving"](t, order), f"driving (order {order})")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_sym(k, q, xi, user):
    cb = ffi.from_handle(user)
    try:
        _put(xi, cb.nv, cb.fns["symmetries"][k](_vec(q, cb.nq)), f"symmetries[{k}]")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_pi(q, pi, user):
    cb = ffi.from_handle(user)
    try:
        _put(pi, cb.ninv, cb.fns["invariants"][0](_vec(q, cb.nq)), "invariants[0] (pi)")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_dpi(q, sink, user):
    cb = ffi.from_handle(user)
    try:
        _mat(sink, cb.fns["invariants"][1](_vec(q, cb.nq)), cb.ninv, cb.nv, "invariants[1] (dpi)")
        return 0
    except BaseException as e:
        return cb.fail(e)


@ffi.def_extern()
def pylv_cb_vt(pi, vt, dvt, user):
    cb = ffi.from_handle(user)
    try:
        values, slopes = cb.fns["invariants"][2](_vec(pi, cb.ninv))
        _put(vt, cb.ninv, values, "invariants[2] (values)")
        _put(dvt, cb.ninv, slopes, "invariants[2] (derivatives)")
        return 0
    except BaseException as e:
        return cb.fail(e)


class PythonModel(Model):
    """A model whose callbacks are Python functions (see from_functions)."""

    def __init__(self, *args, **kwargs):  # built by from_functions only
        raise TypeError("use livens.Model.from_functions(...) to write a model in Python")

    def _begin_run(self):
        """Forget the exception of an earlier run on this thread."""
        self._cb.local.exc = None

    def _pending(self):
        """The exception a callback raised during the run on this thread."""
        return getattr(self._cb.local, "exc", None)


def _space(space, nq):
    sp = ffi.new("lv_space **")
    rc = lib.lv_space_new(sp)
    if rc:
        raise make_error(rc, f"creating the space failed: {_strerror(rc)}.")
    ptr = sp[0]
    try:
        factors = [nq] if space is None else (list(space) if not isinstance(space, (str, int)) else [space])
        for f in factors:
            if isinstance(f, (int, np.integer)) and not isinstance(f, bool):
                kind, k = lib.LV_FACTOR_RN, int(f)
            elif isinstance(f, str) and f in _FACTORS:
                kind, k = _FACTORS[f], 0
            elif isinstance(f, str) and f.startswith("R") and f[1:].isdigit():
                kind, k = lib.LV_FACTOR_RN, int(f[1:])
            else:
                raise _bad(f"unknown space factor {f!r} (an integer k or 'R<k>' for R^k, "
                           "'SO3', 'S3', 'R3xSO3', 'SE3').")
            if k < 0 or lib.lv_space_add(ptr, kind, k):
                raise _bad(f"space factor {f!r} is refused (R^k needs k >= 0).")
        if lib.lv_space_nq(ptr) != nq:
            raise _bad(f"q0 has {nq} numbers but the space {ffi.string(lib.lv_space_name(ptr)).decode()} "
                       f"has configurations of {lib.lv_space_nq(ptr)}.")
        if lib.lv_space_nv(ptr) < 1:
            raise _bad("the space has dimension 0.")
        return ptr
    except BaseException:
        lib.lv_space_free(ptr)
        raise


def from_functions(cls, q0, v0, mass, potential=None, gradient=None, hessian=None, constraints=None,
                   jacobian=None, constraint_hessian=None, constraint_curvature=None, force=None,
                   force_dq=None, force_dv=None, symmetries=(), invariants=None, space=None,
                   mass_constant=None, name="python", driving=None):
    """A model written in Python (``livens.Model.from_functions``).

    Equations (as in C, ``include/livens/lv_model.h``): q' = v (q o v~ on a
    Lie group), M(q) v' = -dV(q) + f(t, q, v) - G(q)^T lambda, g(q) = 0
    (g(q) = c(t) with ``driving``).

    - ``q0`` (nq), ``v0`` (nv): initial state (projected onto the
      constraints at the start of a run).
    - ``mass``: the nv x nv matrix (constant), or a function q -> M(q);
      ``mass_constant`` (default: True for a matrix, False for a function)
      says M does not depend on q (the VI, EM and RATTLE schemes need it).
    - ``potential`` q -> V (float) and ``gradient`` q -> dV (nv): together
      or not at all; ``hessian`` q -> d2V (nv x nv), optional.
    - ``constraints`` q -> g (m numbers; m is read from g(q0)); ``jacobian``
      q -> G (m x nv), ``constraint_hessian`` (q, gamma) -> D_q(G^T gamma)
      (nv x nv), ``constraint_curvature`` (q, w) -> D_q(G w) (m x nv), all
      optional.
    - ``driving`` (t, order) -> c(t), c'(t) or c''(t) (m numbers) for
      ``order`` 0, 1, 2: driving (rheonomic) constraints g(q) - c(t) = 0,
      prescribed motion such as a support moved along a path (the built-in
      model ``kapitza``); needs ``constraints``.  c' and c'' must be exact
      (the library differences none of them; ``livens.check`` compares them
      with differences of c).  Only the scheme ``genalpha`` runs such a
      model: the others raise NotSupportedError (LV_ENOTIMPL).
    - ``force`` (t, q, v) -> f (nv), an applied force, with optional
      Jacobians ``force_dq``, ``force_dv`` (t, q, v) -> nv x nv.
    - ``symmetries``: functions q -> xi(q) (nv), one per momentum map
      J = p . xi(q).
    - ``invariants``: optionally the potential through quadratic invariants,
      V(q) = sum_i Vt_i(pi_i(q)), for the G-equivariant discrete gradient of
      the energy-momentum schemes: a triple of functions ``(pi, dpi, vt)``,
      q -> the n invariants, q -> their gradients (n x nv), and
      pi -> (Vt_i(pi_i), Vt_i'(pi_i)) (two arrays of n).
    - ``space``: None for R^nq, or a list of factors: an integer k (R^k),
      ``"SO3"`` (rotation matrix, 9 numbers row-major), ``"S3"`` (unit
      quaternion), ``"R3xSO3"``, ``"SE3"``.

    Derivatives left out are formed by the library's central finite
    differences; ``livens.check(model)`` compares the supplied ones with
    them.  Returns a :class:`livens.Model`.  Raises InputError on a missing
    required function, a wrong shape, or a derivative without its function.
    """
    q0 = np.array(q0, dtype=np.float64).ravel()
    v0 = np.array(v0, dtype=np.float64).ravel()
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(v0))):
        raise _bad("q0 and v0 must be finite.")
    for fn, what in ((potential, "potential"), (gradient, "gradient"), (hessian, "hessian"),
                     (constraints, "constraints"), (jacobian, "jacobian"),
                     (constraint_hessian, "constraint_hessian"),
                     (constraint_curvature, "constraint_curvature"), (force, "force"),
                     (force_dq, "force_dq"), (force_dv, "force_dv"), (driving, "driving")):
        if fn is not None and not callable(fn):
            raise _bad(f"{what} must be a function.")
    if (potential is None) != (gradient is None):
        raise _bad("potential and gradient come together: the library forms no gradient by finite "
                   "differences, and the energy-momentum schemes difference V itself.")
    if hessian is not None and gradient is None:
        raise _bad("hessian given without potential and gradient.")
    if constraints is None and (jacobian or constraint_hessian or constraint_curvature):
        raise _bad("constraint derivatives given without constraints.")
    if driving is not None and constraints is None:
        raise _bad("driving given without constraints: it prescribes c(t) in g(q) - c(t) = 0.")
    if force is None and (force_dq or force_dv):
        raise _bad("force Jacobians given without force.")
    if invariants is not None:
        if potential is None:
            raise _bad("invariants describe the potential: give potential and gradient too.")
        if len(invariants) != 3 or not all(callable(f) for f in invariants):
            raise _bad("invariants must be three functions (pi, dpi, vt).")
    symmetries = list(symmetries or ())
    if not all(callable(s) for s in symmetries):
        raise _bad("symmetries must be a list of functions q -> xi(q).")

    sp = _space(space, len(q0))
    nv = lib.lv_space_nv(sp)
    nq = len(q0)
    if v0.shape != (nv,):
        lib.lv_space_free(sp)
        raise _bad(f"v0 must have {nv} numbers (the tangent dimension), got {v0.shape[0]}.")
    mass_const = None
    if callable(mass):
        const = bool(mass_constant) if mass_constant is not None else False
    else:
        mass_const = np.ascontiguousarray(mass, dtype=np.float64)
        if mass_const.shape != (nv, nv):
            lib.lv_space_free(sp)
            raise _bad(f"mass must be a {nv} x {nv} matrix or a function, got shape {mass_const.shape}.")
        const = True if mass_constant is None else bool(mass_constant)
    nc = 0
    if constraints is not None:
        try:
            g0 = np.asarray(constraints(q0.copy()), dtype=np.float64)
        except BaseException:
            lib.lv_space_free(sp)
            raise
        if g0.ndim != 1:
            lib.lv_space_free(sp)
            raise _bad(f"constraints must return a vector, got shape {g0.shape}.")
        nc = g0.shape[0]

    ninv = 0
    if invariants is not None:
        try:
            pi0 = np.asarray(invariants[0](q0.copy()), dtype=np.float64)
        except BaseException:
            lib.lv_space_free(sp)
            raise
        if pi0.ndim != 1 or pi0.shape[0] < 1:
            lib.lv_space_free(sp)
            raise _bad(f"invariants[0] (pi) must return a non-empty vector, got shape {pi0.shape}.")
        ninv = pi0.shape[0]

    pm = ffi.new("lv_model **")
    if "\0" in str(name):
        lib.lv_space_free(sp)
        raise _bad("the model name contains a NUL character.")
    rc = lib.lv_model_new(pm, str(name).encode(), sp, nc)
    if rc:
        lib.lv_space_free(sp)
        raise make_error(rc, f"creating model '{name}' failed: {_strerror(rc)}.")
    self = PythonModel.__new__(PythonModel)
    self._init_from_ptr(pm[0])  # owns the model (and the space) from here on
    fns = {"mass": mass, "potential": potential, "gradient": gradient, "hessian": hessian,
           "constraints": constraints, "jacobian": jacobian, "constraint_hessian": constraint_hessian,
           "constraint_curvature": constraint_curvature, "force": force, "force_dq": force_dq,
           "force_dv": force_dv, "symmetries": symmetries, "invariants": invariants,
           "driving": driving}
    self._cb = _Callbacks(nq, nv, nc, fns, mass_const)
    self._cb.ninv = ninv
    self._handle = ffi.new_handle(self._cb)
    m = self._ptr

    def fp(fn, c):
        return c if fn is not None else ffi.NULL

    steps = [
        lib.lv_model_set_user(m, self._handle, ffi.NULL),
        lib.lv_model_set_mass(m, lib.pylv_cb_mass, 1 if const else 0),
    ]
    if potential is not None:
        steps.append(lib.lv_model_set_potential(m, lib.pylv_cb_V, lib.pylv_cb_dV,
                                                fp(hessian, lib.pylv_cb_d2V)))
    if force is not None:
        steps.append(lib.lv_model_set_force(m, lib.pylv_cb_force, fp(force_dq, lib.pylv_cb_force_dq),
                                            fp(force_dv, lib.pylv_cb_force_dv)))
    if constraints is not None:
        steps.append(lib.lv_model_set_constraints(m, lib.pylv_cb_g, fp(jacobian, lib.pylv_cb_G),
                                                  fp(constraint_hessian, lib.pylv_cb_hess),
                                                  fp(constraint_curvature, lib.pylv_cb_curv)))
    if driving is not None:
        steps.append(lib.lv_model_set_driving(m, lib.pylv_cb_drive))
    if symmetries:
        steps.append(lib.lv_model_set_symmetries(m, len(symmetries), lib.pylv_cb_sym))
    if invariants is not None:
        steps.append(lib.lv_model_set_invariants(m, ninv, lib.pylv_cb_pi, lib.pylv_cb_dpi, lib.pylv_cb_vt))
    steps.append(lib.lv_model_set_initial(m, ffi.from_buffer("double[]", q0), ffi.from_buffer("double[]", v0)))
    for rc in steps:
        if rc:
            raise make_error(rc, f"setting up model '{name}' failed: {_strerror(rc)}.")
    self.q0 = q0.copy()
    self.v0 = v0.copy()
    self.nsym = len(symmetries)
    self.mass_constant = const
    self.driven = bool(lib.lv_model_has_driving(m))
    self.params = {}
    return self
