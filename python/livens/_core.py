"""Built-in models, schemes, and simulate(): the C library through cffi."""

import math
import signal
import threading
from dataclasses import dataclass, field

import numpy as np

from ._livens import ffi, lib
from ._errors import (InputError, Interrupted, UnknownNameError, make_error,
                      _name, _strerror)

# Seconds of C work per call before Python looks at pending signals
# (Ctrl-C).  The GIL is released during each call.
_CHUNK_SECONDS = 0.05


def _s(p):
    return ffi.string(p).decode() if p != ffi.NULL else None


def _text(value):
    """A parameter or option value as the text the library parses."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _cstr(value, what):
    """``value`` as text for C: a string with a NUL would be cut short there."""
    value = str(value)
    if "\0" in value:
        raise InputError(f"{what} contains a NUL character.", status=lib.LV_EINPUT)
    return value


class _KV:
    """An lv_kv built from a dict; keeps the C strings alive."""

    def __init__(self, d):
        self.items = [(_cstr(k, "a parameter or option name"), _cstr(_text(v), f"the value of {k}"))
                      for k, v in (d or {}).items()]
        self._keep = [ffi.new("char[]", s.encode()) for kv in self.items for s in kv]
        n = len(self.items)
        self.keys = ffi.new("const char *[]", max(n, 1))
        self.values = ffi.new("const char *[]", max(n, 1))
        for i in range(n):
            self.keys[i] = self._keep[2 * i]
            self.values[i] = self._keep[2 * i + 1]
        self.kv = ffi.new("lv_kv *")
        self.kv.n = n
        self.kv.keys = self.keys
        self.kv.values = self.values


@dataclass(frozen=True)
class Parameter:
    """A model parameter or scheme option: name, default (text) and doc."""
    name: str
    default: str
    doc: str


@dataclass(frozen=True)
class SchemeInfo:
    """A registered scheme: its options and what it conserves."""
    name: str
    description: str
    conserves: str
    order: int
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ModelInfo:
    """A registered model: parameters with defaults and the schemes that can
    run it with those defaults."""
    name: str
    description: str
    parameters: dict
    schemes: tuple


def _params(p):
    out = {}
    i = 0
    while p != ffi.NULL and p[i].name != ffi.NULL:
        out[_s(p[i].name)] = Parameter(_s(p[i].name), _s(p[i].default_value), _s(p[i].doc))
        i += 1
    return out


def _registry_models():
    reg = lib.lv_model_registry()
    i = 0
    while reg[i] != ffi.NULL:
        yield reg[i]
        i += 1


_cache = {}
_cache_lock = threading.RLock()


def schemes():
    """The registered schemes, as a dict name -> SchemeInfo (options with
    their defaults and descriptions, what each conserves, nominal order)."""
    with _cache_lock:
        if "schemes" not in _cache:
            out = {}
            reg = lib.lv_scheme_registry()
            i = 0
            while reg[i] != ffi.NULL:
                s = reg[i]
                out[_s(s.name)] = SchemeInfo(_s(s.name), _s(s.description), _s(s.conserves),
                                             int(s.order), _params(s.options))
                i += 1
            _cache["schemes"] = out
        return dict(_cache["schemes"])


def _accepting_schemes(model_ptr):
    ok = []
    for name in schemes():
        it = ffi.new("lv_integrator **")
        rc = lib.lv_integrator_new(it, model_ptr, name.encode(), 0.01)
        lib.lv_integrator_free(it[0])
        if rc == 0:
            ok.append(name)
    return tuple(ok)


def models():
    """The registered models, as a dict name -> ModelInfo: description,
    parameters (name -> Parameter with default and doc) and ``schemes``,
    the schemes that accept the model built with its defaults (a scheme may
    need a constant mass matrix, a linear space, no constraints or no applied
    force)."""
    with _cache_lock:
        if "models" not in _cache:
            out = {}
            for info in _registry_models():
                name = _s(info.name)
                p = ffi.new("lv_model **")
                rc = lib.lv_model_create(info.name, ffi.NULL, p)
                acc = _accepting_schemes(p[0]) if rc == 0 else ()
                lib.lv_model_free(p[0])
                out[name] = ModelInfo(name, _s(info.description), _params(info.params), acc)
            _cache["models"] = out
    return dict(_cache["models"])


class Model:
    """A mechanical system: a built-in model by name with parameter
    overrides, e.g. ``livens.Model("pendulum3d", l=2.0)``, or a model written
    in Python (:meth:`Model.from_functions`).

    Attributes: ``name``, ``nq``, ``nv`` (configuration and velocity sizes),
    ``nc`` (constraints), ``nsym`` (momentum maps), ``q0``, ``v0`` (initial
    values, numpy copies), ``space`` (e.g. ``"R^3"``), ``mass_constant``,
    ``driven`` (driving constraints g(q) = c(t): only genalpha runs it),
    ``params`` (the overrides given).
    """

    def __init__(self, name, **params):
        """Build the registered model ``name`` with parameter overrides.
        Raises UnknownNameError (unknown model or parameter) and InputError
        (a value the model refuses, named with the parameter's description)."""
        infos = {_s(i.name): i for i in _registry_models()}
        if not isinstance(name, str) or name not in infos:
            raise UnknownNameError(f"unknown model '{name}' (see livens.models()).",
                                   status=lib.LV_EUNKNOWN)
        info = infos[name]
        kv = _KV(params)
        bad = ffi.new("const char **")
        if lib.lv_kv_check(kv.kv, info.params, bad):
            raise UnknownNameError(f"model '{name}' has no parameter '{_s(bad[0])}' (see livens.models()).",
                                   status=lib.LV_EUNKNOWN)
        p = ffi.new("lv_model **")
        rc = lib.lv_model_create(name.encode(), kv.kv, p)
        if rc == lib.LV_ENOMEM:
            raise make_error(rc, f"out of memory creating model '{name}'.")
        if rc == lib.LV_EINPUT:
            docs = _params(info.params)
            for k, v in kv.items:
                one = _KV({k: v})
                q = ffi.new("lv_model **")
                rc1 = lib.lv_model_create(name.encode(), one.kv, q)
                lib.lv_model_free(q[0])
                if rc1 == lib.LV_EINPUT:
                    raise InputError(f"model '{name}' refuses {k} = {v} ({k}: {docs[k].doc}).",
                                     status=rc)
            raise InputError(f"model '{name}' refuses this combination of parameter values "
                             "(each alone is accepted; see livens.models()).", status=rc)
        if rc:
            raise make_error(rc, f"invalid parameter value for model '{name}': {_strerror(rc)}.")
        self._init_from_ptr(p[0])
        self.params = dict(params)

    def _init_from_ptr(self, ptr):
        self._ptr = ffi.gc(ptr, lib.lv_model_free)
        self.name = _s(lib.lv_model_name(ptr))
        self.nq = lib.lv_model_nq(ptr)
        self.nv = lib.lv_model_nv(ptr)
        self.nc = lib.lv_model_nc(ptr)
        self.nsym = lib.lv_model_nsym(ptr)
        self.mass_constant = bool(lib.lv_model_mass_constant(ptr))
        self.driven = bool(lib.lv_model_has_driving(ptr))
        self.space = _s(lib.lv_space_name(lib.lv_model_space(ptr)))
        self.q0 = _array(lib.lv_model_q0(ptr), self.nq)
        self.v0 = _array(lib.lv_model_v0(ptr), self.nv)

    def __repr__(self):
        return (f"<livens.Model {self.name!r}: {self.space}, nq={self.nq}, nv={self.nv}, "
                f"constraints={self.nc}, momentum maps={self.nsym}>")

    def _q(self, q):
        q = self.q0 if q is None else np.ascontiguousarray(q, dtype=np.float64)
        if q.shape != (self.nq,):
            raise InputError(f"a configuration of '{self.name}' has {self.nq} numbers, got shape {q.shape}.",
                             status=lib.LV_EINPUT)
        return q

    def _eval(self, rc):
        if rc:
            raise make_error(rc, f"evaluating model '{self.name}' failed: {_strerror(rc)}.")

    def potential(self, q=None):
        """Potential energy V(q) (q: default the initial configuration)."""
        q = self._q(q)
        out = ffi.new("double *")
        self._eval(lib.lv_model_potential(self._ptr, ffi.from_buffer("double[]", q), out))
        return out[0]

    def gradient(self, q=None):
        """Gradient dV(q) (nv), left-trivialised on Lie groups."""
        q = self._q(q)
        out = np.zeros(self.nv)
        self._eval(lib.lv_model_grad_potential(self._ptr, ffi.from_buffer("double[]", q),
                                               ffi.from_buffer("double[]", out)))
        return out

    def constraints(self, q=None):
        """Constraint values g(q) (nc)."""
        q = self._q(q)
        out = np.zeros(self.nc)
        self._eval(lib.lv_model_constraints(self._ptr, ffi.from_buffer("double[]", q),
                                            ffi.from_buffer("double[]", out)))
        return out

    def mass_matrix(self, q=None):
        """Mass matrix M(q) (nv x nv)."""
        q = self._q(q)
        out = np.zeros((self.nv, self.nv), order="F")
        self._eval(lib.lv_model_mass_dense(self._ptr, ffi.from_buffer("double[]", q),
                                           ffi.from_buffer("double[]", out.ravel(order="K"))))
        return np.ascontiguousarray(out)

    def jacobian(self, q=None):
        """Constraint Jacobian G(q) (nc x nv)."""
        q = self._q(q)
        out = np.zeros((self.nc, self.nv), order="F")
        if self.nc:
            self._eval(lib.lv_model_constraint_jac_dense(self._ptr, ffi.from_buffer("double[]", q),
                                                         ffi.from_buffer("double[]", out.ravel(order="K"))))
        return np.ascontiguousarray(out)

    def pose(self, element, q=None):
        """Centre of mass ``x`` (3) and rotation matrix ``R`` (3 x 3, space =
        R body; the identity for a particle and the ground) of ``element``
        (a :class:`livens.Element` or its id) of a multibody model
        (:class:`livens.System`, a system file, or a built-in model on the
        multibody layer) at configuration ``q`` (default the initial one),
        whatever the formulation.  Returns (x, R).  Raises InputError for
        another model or an id out of range."""
        q = self._q(q)
        x = np.zeros(3)
        R = np.zeros(9)
        i = int(getattr(element, "id", element))
        if not -2**31 <= i < 2**31 or lib.lv_mbs_model_pose(self._ptr, i, ffi.from_buffer("double[]", q),
                                                            ffi.from_buffer("double[]", x),
                                                            ffi.from_buffer("double[]", R)):
            raise InputError(f"model '{self.name}' is not a multibody model or has no element {i}.",
                             status=lib.LV_EINPUT)
        return x, R.reshape(3, 3)

    def _begin_run(self):
        """Forget a Python callback's exception of an earlier run."""

    def _pending(self):
        """The exception a Python callback raised during the run (None for
        a built-in model, which has no Python callbacks)."""
        return None

    @classmethod
    def from_functions(cls, *args, **kwargs):
        """A model written in Python; see :func:`livens._pymodel.from_functions`
        for the arguments (mass, potential and gradient, constraints and
        Jacobian, optional Hessians, forces, symmetries, initial state)."""
        from ._pymodel import from_functions
        return from_functions(cls, *args, **kwargs)


def _array(ptr, n):
    if n == 0 or ptr == ffi.NULL:
        return np.zeros(n)
    return np.frombuffer(ffi.buffer(ptr, 8 * n), dtype=np.float64).copy()


class Result:
    """The outcome of :func:`simulate`: one row per output step.

    Arrays (numpy, one row per recorded step): ``t``; ``q`` (N x nq), ``v``
    (N x nv), ``p`` (N x nv: the scheme's momenta, or M v), ``lam`` (N x nc,
    position-constraint multipliers), ``gamma`` (N x nc, velocity-level
    multipliers, zero for schemes without them); ``energy``; ``momenta``
    (N x nsym, the momentum maps); ``g`` (max |g(q)|), ``gv`` (max |G(q) v|),
    ``gp`` (max |G(q) M^-1 p|); ``newton_iters``.  ``summary`` is the dict
    behind the program's table (see :meth:`table`); ``status`` is ``"ok"`` or
    the library's status name, ``detail`` the sentence of a failure.
    """

    def __init__(self, model, scheme, step, rows, widths, summary, status, detail):
        self.model = model
        self.scheme = scheme
        self.step = step
        self.summary = summary
        self.status = status
        self.detail = detail
        nq, nv, nc, nsym = widths
        cols = {}
        i = 0
        for key, n in (("t", 0), ("q", nq), ("v", nv), ("p", nv), ("lam", nc), ("gamma", nc),
                       ("energy", 0), ("momenta", nsym), ("g", 0), ("gv", 0), ("gp", 0),
                       ("newton_iters", 0)):
            if n == 0 and key in ("t", "energy", "g", "gv", "gp", "newton_iters"):
                cols[key] = rows[:, i]
                i += 1
            else:
                cols[key] = rows[:, i:i + n]
                i += n
        for k, a in cols.items():
            setattr(self, k, a)
        self.newton_iters = self.newton_iters.astype(np.int64)

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        return (f"<livens.Result {self.scheme} on {self.model}, h = {self.step:g}, "
                f"{len(self)} rows to t = {self.t[-1] if len(self) else float('nan'):g}, {self.status}>")

    def table(self):
        """The summary as the program prints it (header line and one row)."""
        return format_table([self.summary])

    def plot(self, path=None, show=False):
        """Energy error (log scale), momentum maps and constraint residuals
        against t with matplotlib; saved to ``path`` if given (PNG, PDF, ...).
        Returns the matplotlib Figure."""
        from ._plot import plot_result
        return plot_result(self, path, show)


_TABLE_HEAD = ("%-12s %11s %11s %11s %11s %11s %11s %9s %10s %9s"
               % ("scheme", "max|dE|/E0", "drift/t", "max|dJ|", "max|g|", "max|Gv|", "max|GM-1p|",
                  "newton/st", "steps/s", "status"))


def format_table(summaries):
    """The program's summary table (as ``livens run`` and ``livens compare``
    print it) for a list of summary dicts."""
    lines = [_TABLE_HEAD]
    for s in summaries:
        lines.append("%-12s %11.3e %11.3e %11.3e %11.3e %11.3e %11.3e %9.2f %10.4g %9s" % (
            s["scheme"], s["max_rel_energy_error"], s["energy_drift_rate"], s["max_momentum_error"],
            s["max_g"], s["max_gv"], s["max_gp"], s["newton_per_step"], s["steps_per_second"],
            s["status"]))
    return "\n".join(lines)


_LINSOL = {"auto": lib.LV_LINSOL_AUTO, "dense": lib.LV_LINSOL_DENSE,
           "umfpack": lib.LV_LINSOL_UMFPACK, "klu": lib.LV_LINSOL_KLU,
           "sparse": lib.LV_LINSOL_SPARSE}
_NEWTON = {"full": lib.LV_NEWTON_FULL, "simplified": lib.LV_NEWTON_SIMPLIFIED,
           "modified": lib.LV_NEWTON_MODIFIED}


def _summary(scheme, rec, it, status):
    s = ffi.new("lv_diag_summary *")
    lib.lv_diag_get_summary(rec.diag, s)
    st = ffi.new("lv_integrator_stats *")
    lib.lv_integrator_get_stats(it, st)
    steps = int(st.steps)
    return {
        "scheme": scheme,
        "max_rel_energy_error": s.max_rel_energy_error,
        "energy_drift_rate": s.energy_drift_rate,
        "max_momentum_error": s.max_momentum_error,
        "max_g": s.max_g,
        "max_gv": s.max_gv,
        "max_gp": s.max_gp,
        "newton_per_step": st.newton_iterations / steps if steps else 0.0,
        "steps_per_second": steps / st.wall_time if st.wall_time > 0 else 0.0,
        "status": _name(status) if status else "ok",
        "energy0": s.energy0,
        "max_abs_energy_error": s.max_abs_energy_error,
        "max_energy_increment": s.max_energy_increment,
        "samples": int(s.samples),
        "steps": steps,
        "newton_iterations": int(st.newton_iterations),
        "factorizations": int(st.factorizations),
        "failed_solves": int(st.failed_solves),
        "halvings": int(st.halvings),
        "wall_time": st.wall_time,
        "linsol": _s(lib.lv_linsol_kind_name(st.linsol)),
        "projected": bool(st.projected),
        "init_g_norm": st.init_g_norm,
        "init_gv_norm": st.init_gv_norm,
    }


def _detail(it):
    buf = ffi.new("char[]", 512)
    lib.lv_integrator_error_detail(it, buf, 512)
    return _s(buf)


def end_time(step, t_end):
    """The time a fixed-step run ends at: the multiple of ``step`` nearest
    ``t_end`` (at least one step), as the program's header states it."""
    n = math.ceil(t_end / step - 0.5)
    return max(n, 1) * step


def simulate(model, scheme, step, t_end, params=None, opts=None, every=1, halving=0,
             linsol="auto", newton=None, newton_tol=None, q0=None, v0=None, init="project",
             init_tol=1e-10):
    """Run ``scheme`` on ``model`` with fixed step ``step`` from t = 0 to the
    multiple of ``step`` nearest ``t_end``, as ``livens run`` does.

    ``model`` is a :class:`Model`, a :class:`livens.System` (built as it
    stands) or a built-in model's name (then ``params`` are its parameter
    overrides); ``opts`` are scheme options
    (``{"theta": 0.5}``); ``every`` records every n-th step (and the final
    state); ``halving`` allows that many step halvings after a failed Newton
    solve; ``linsol`` is ``"auto"``, ``"dense"``, ``"umfpack"`` or ``"klu"``;
    ``newton`` ``"full"``, ``"simplified"`` or ``"modified"`` (default: the
    scheme's); ``newton_tol`` the residual tolerance; ``q0``, ``v0`` initial
    values (default: the model's); ``init`` ``"project"`` (the default:
    initial values off the constraints are projected onto them) or
    ``"check"`` (they raise InconsistentError beyond ``init_tol``).

    Returns a :class:`Result`.  A built-in model runs entirely in C with the
    GIL released.  Wrong input raises InputError / UnknownNameError; a run
    that fails raises the LivensError subclass of its status with the
    library's sentence, its ``result`` holding every accepted step; Ctrl-C
    raises :class:`livens.Interrupted` (a KeyboardInterrupt) whose ``result``
    holds the steps so far.
    """
    if isinstance(model, str):
        model = Model(model, **(params or {}))
    elif params:
        raise InputError("params apply to a model given by name; this Model is already built.",
                         status=lib.LV_EINPUT)
    if not isinstance(model, Model):
        from ._mbs import System
        if not isinstance(model, System):
            raise InputError("model must be a livens.Model, a livens.System or a built-in model's name.",
                             status=lib.LV_EINPUT)
        model = model.build()
    try:
        step = float(step)
        t_end = float(t_end)
        every = int(every)
    except (TypeError, ValueError):
        raise InputError("step and t_end must be numbers and every an integer.", status=lib.LV_EINPUT) from None
    if not (math.isfinite(step) and step > 0 and math.isfinite(t_end) and t_end > 0):
        raise InputError(f"step and t_end must be finite positive numbers (got {step:g} and {t_end:g}).",
                         status=lib.LV_EINPUT)
    if not 1 <= every <= 2**31 - 1:
        raise InputError(f"every must be between 1 and 2147483647 (got {every}).", status=lib.LV_EINPUT)
    if linsol not in _LINSOL:
        raise InputError(f"unknown linear solver '{linsol}' (auto, dense, umfpack or klu).", status=lib.LV_EINPUT)
    if newton is not None and newton not in _NEWTON:
        raise InputError(f"unknown Newton kind '{newton}' (full, simplified or modified).", status=lib.LV_EINPUT)
    if init not in ("project", "check"):
        raise InputError(f"init must be 'project' or 'check' (got {init!r}).", status=lib.LV_EINPUT)
    scheme = _cstr(scheme, "the scheme name")
    pit = ffi.new("lv_integrator **")
    rc = lib.lv_integrator_new(pit, model._ptr, scheme.encode(), step)
    if rc == lib.LV_EUNKNOWN:
        raise UnknownNameError(f"unknown scheme '{scheme}' (see livens.schemes()).", status=rc)
    if rc:
        why = ffi.new("char[512]")
        if rc != lib.LV_ENOTIMPL or not lib.lv_scheme_unmet_requirement(lib.lv_scheme_find(scheme.encode()),
                                                                        model._ptr, why, 512):
            why = _strerror(rc)
        else:
            why = ffi.string(why).decode()
        raise make_error(rc, f"scheme '{scheme}' cannot run model '{model.name}': {why}.")
    it = ffi.gc(pit[0], lib.lv_integrator_free)
    rec_p = ffi.new("pylv_recorder **")
    try:
        for k, v in (opts or {}).items():
            if lib.lv_integrator_set_option(it, _cstr(k, "an option name").encode(),
                                            _cstr(_text(v), f"the value of option {k}").encode()):
                raise UnknownNameError(f"scheme '{scheme}' has no option '{k}' (see livens.schemes()).",
                                       status=lib.LV_EUNKNOWN)
        lib.lv_integrator_set_linsol(it, _LINSOL[linsol], 0)
        if lib.lv_integrator_set_init_mode(it, lib.LV_INIT_CHECK if init == "check" else lib.LV_INIT_PROJECT,
                                           float(init_tol)):
            raise InputError(f"init_tol must be a finite positive number (got {init_tol}).", status=lib.LV_EINPUT)
        if not isinstance(halving, (int, np.integer)) or isinstance(halving, bool) or halving < 0:
            raise InputError(f"halving must be a non-negative integer (got {halving!r}).", status=lib.LV_EINPUT)
        if halving and lib.lv_integrator_set_halving(it, int(halving)):
            raise InputError(f"scheme '{scheme}' is a multistep scheme and cannot halve its step.",
                             status=lib.LV_EINPUT)
        if newton is not None or newton_tol is not None:
            o = ffi.new("lv_newton_options *")
            lib.lv_integrator_get_newton(it, o)
            if newton_tol is not None:
                if not (newton_tol > 0):
                    raise InputError(f"newton_tol must be positive (got {newton_tol}).", status=lib.LV_EINPUT)
                o.res_tol = float(newton_tol)
            if newton is not None:
                o.kind = _NEWTON[newton]
            lib.lv_integrator_set_newton(it, o)
        rc = lib.pylv_recorder_new(rec_p, it, every)
        if rc:
            raise make_error(rc, f"creating the diagnostics failed: {_strerror(rc)}.")
        rec = rec_p[0]
        lib.pylv_attach(rec, it)
        return _run(model, scheme, step, t_end, it, rec, q0, v0)
    finally:
        if rec_p[0] != ffi.NULL:
            lib.pylv_recorder_free(rec_p[0])


def _vec_arg(x, n, what):
    if x is None:
        return ffi.NULL, None
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (n,):
        raise InputError(f"{what} must have {n} numbers, got shape {a.shape}.", status=lib.LV_EINPUT)
    return ffi.from_buffer("double[]", a), a


def _rows(model, scheme, step, rec, it, status, detail):
    n, w = rec.nrows, rec.width
    if n:
        # the C block becomes the arrays' memory (freed with the last of them)
        block = ffi.gc(lib.pylv_take_rows(rec), lib.free)
        rows = np.frombuffer(ffi.buffer(block, 8 * n * w), dtype=np.float64).reshape(n, w)
    else:
        rows = np.zeros((0, w))
    return Result(model.name, scheme, step, rows, (rec.nq, rec.nv, rec.nc, rec.nsym),
                  _summary(scheme, rec, it, status), _name(status) if status else "ok", detail)


def _run(model, scheme, step, t_end, it, rec, q0, v0):
    pq, _kq = _vec_arg(q0, model.nq, "q0")
    pv, _kv = _vec_arg(v0, model.nv, "v0")
    model._begin_run()
    rc = lib.lv_integrator_init(it, 0.0, pq, pv)
    if rc in (lib.LV_EINPUT, lib.LV_EUNKNOWN) and not model._pending():
        raise make_error(rc, f"invalid option value for scheme '{scheme}': {_detail(it)}.")
    done = ffi.new("int *")
    # In the main thread, with Python's default SIGINT handler in place, a C
    # handler stops the run at the next step boundary (or inside BLieDF's
    # start-up); elsewhere Python raises KeyboardInterrupt between chunks.
    own = (rc == 0 and threading.current_thread() is threading.main_thread()
           and signal.getsignal(signal.SIGINT) is signal.default_int_handler
           and lib.pylv_sigint_begin(it) == 0)
    seen = 0
    try:
        try:
            while rc == 0 and not done[0]:
                rc = lib.pylv_run(rec, it, t_end, _CHUNK_SECONDS, done)
        finally:
            if own:
                seen = lib.pylv_sigint_end()
        if seen:
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        # the state is that of the last accepted step
        if not done[0]:
            lib.pylv_finish(rec, it)
        res = _rows(model, scheme, step, rec, it, lib.LV_ESTOPPED, None)
        t = res.t[-1] if len(res) else 0.0
        res.detail = f"{scheme} interrupted at t = {t:.6g}; every step up to there is in the result."
        raise Interrupted(res.detail, res) from None
    if rc == 0:
        return _rows(model, scheme, step, rec, it, 0, None)
    cause = model._pending()
    if isinstance(cause, KeyboardInterrupt):
        # Ctrl-C inside a Python model's callback: the step failed and was
        # taken back, so the state is that of the last accepted step
        res = _rows(model, scheme, step, rec, it, lib.LV_ESTOPPED, None)
        t = res.t[-1] if len(res) else 0.0
        res.detail = f"{scheme} interrupted at t = {t:.6g}; every step up to there is in the result."
        raise Interrupted(res.detail, res) from None
    if rec.failed:
        # the recorder stopped the run: its own status says why
        rc = rec.failed
        res = _rows(model, scheme, step, rec, it, rc, None)
        t = res.t[-1] if len(res) else 0.0
        if rc == lib.LV_ENOMEM:
            detail = (f"{scheme} stopped at t = {t:.6g}: out of memory recording the rows "
                      "(every=N keeps every N-th).")
        else:
            detail = (f"{scheme} stopped at t = {t:.6g}: evaluating the diagnostics (energy, momentum maps, "
                      f"constraints) failed: {_strerror(rc)}.")
        res.detail = detail
    else:
        detail = f"{scheme} stopped: {_detail(it)}."
        res = _rows(model, scheme, step, rec, it, rc, detail)
    err = make_error(rc, detail, res)
    if cause is not None:
        raise err from cause
    raise err

