"""The program's studies: compare, converge, check (returning dicts and
numpy arrays instead of printing tables)."""

import math

import numpy as np

from ._livens import ffi, lib
from ._errors import InputError, LivensError, UnknownNameError, make_error, _strerror
from ._core import Model, schemes as _schemes, simulate


def _model(model, params):
    if isinstance(model, str):
        return Model(model, **(params or {}))
    if params:
        raise InputError("params apply to a model given by name; this Model is already built.",
                         status=lib.LV_EINPUT)
    from ._mbs import System
    if isinstance(model, System):
        return model.build()
    return model


def compare(model, schemes, step=0.01, t_end=10.0, params=None, opts=None, **kwargs):
    """Run each of ``schemes`` on ``model`` (as ``livens compare``) and return
    a dict scheme -> summary dict (the rows of the program's table; print
    them with ``livens.format_table(list(d.values()))``).

    An option in ``opts`` applies to the schemes that have it; an option no
    listed scheme has, or an unknown scheme, raises UnknownNameError.  A run
    that fails does not raise: its summary has the status name in
    ``"status"`` and the library's sentence in ``"detail"``.  Further keyword
    arguments go to :func:`simulate` (every, halving, linsol, newton, ...).
    """
    if isinstance(schemes, str):
        schemes = [s for s in schemes.split(",") if s]
    schemes = list(schemes)
    if not schemes:
        raise InputError("compare needs at least one scheme.", status=lib.LV_EINPUT)
    known = _schemes()
    for s in schemes:
        if s not in known:
            raise UnknownNameError(f"unknown scheme '{s}' (see livens.schemes()).", status=lib.LV_EUNKNOWN)
    opts = dict(opts or {})
    for k in opts:
        if not any(k in known[s].options for s in schemes):
            raise UnknownNameError(f"no scheme in the list has option '{k}' (see livens.schemes()).",
                                   status=lib.LV_EUNKNOWN)
    m = _model(model, params)
    out = {}
    for s in schemes:
        o = {k: v for k, v in opts.items() if k in known[s].options}
        try:
            r = simulate(m, s, step, t_end, opts=o, **kwargs)
            summ = dict(r.summary)
            summ["detail"] = None
        except LivensError as e:
            if e.result is None:
                raise
            summ = dict(e.result.summary)
            summ["detail"] = e.detail
        out[s] = summ
    return out


def _config_error(space, q, qref, nv):
    w = np.zeros(nv)
    lib.lv_space_log(space, ffi.from_buffer("double[]", np.ascontiguousarray(qref)),
                     ffi.from_buffer("double[]", np.ascontiguousarray(q)), ffi.from_buffer("double[]", w))
    return float(np.max(np.abs(w))) if nv else 0.0


def _fit(hs, errs):
    x = np.log(hs)
    y = np.log(np.maximum(errs, 1e-300))
    return float(np.polyfit(x, y, 1)[0])


def converge(model, scheme, steps, t_end=1.0, ref_step=None, params=None, opts=None, **kwargs):
    """Errors at t_end against a reference run of the same scheme with
    ``ref_step`` (default: the smallest step / 16), as ``livens converge``.

    Returns a dict: ``h`` (array of the steps), ``err_q`` (max-norm of
    log(q_ref^-1 q), the plain difference on R^n), ``err_v``, ``err_lambda``
    (arrays; ``err_lambda`` is None for a model without constraints),
    ``order_q``/``order_v``/``order_lambda`` (observed order between
    consecutive steps, NaN for the first), ``fitted`` (least-squares slopes
    of log error against log h: ``{"q": .., "v": .., "lambda": ..}``),
    ``ref_step`` and ``t_final``.  Raises InputError for fewer than two
    steps, repeated steps, a step not above the reference, or a t_end that
    is not a multiple of every step; a failed run raises its LivensError.
    """
    hs = np.array([float(h) for h in steps], dtype=np.float64)
    if len(hs) < 2:
        raise InputError("converge needs at least two step sizes.", status=lib.LV_EINPUT)
    if not np.all(np.isfinite(hs)) or np.any(hs <= 0):
        raise InputError("each step must be a finite positive number.", status=lib.LV_EINPUT)
    if len(set(hs.tolist())) != len(hs):
        raise InputError("a step appears twice in steps: each step must be different.", status=lib.LV_EINPUT)
    href = float(ref_step) if ref_step else float(hs.min()) / 16.0
    if np.any(hs <= href):
        raise InputError(f"every step must be larger than the reference step {href:g}: "
                         "its error would be meaningless.", status=lib.LV_EINPUT)
    m = _model(model, params)
    big = 2**31 - 1  # record only the initial and the final state
    ref = simulate(m, scheme, href, t_end, opts=opts, every=big, **kwargs)
    space = lib.lv_model_space(m._ptr)
    t_ref = ref.t[-1]
    eq, ev, el = [], [], []
    for h in hs:
        r = simulate(m, scheme, h, t_end, opts=opts, every=big, **kwargs)
        if abs(r.t[-1] - t_ref) > 1e-9 * max(1.0, t_ref):
            raise InputError(f"t_end {t_end:g} is not a multiple of step {h:g} (ends at {r.t[-1]:g}).",
                             status=lib.LV_EINPUT)
        eq.append(_config_error(space, r.q[-1], ref.q[-1], m.nv))
        ev.append(float(np.max(np.abs(r.v[-1] - ref.v[-1]))) if m.nv else 0.0)
        el.append(float(np.max(np.abs(r.lam[-1] - ref.lam[-1]))) if m.nc else 0.0)
    out = {"h": hs, "err_q": np.array(eq), "err_v": np.array(ev),
           "err_lambda": np.array(el) if m.nc else None, "ref_step": href, "t_final": float(t_ref)}
    lh = np.log(hs[1:] / hs[:-1])
    for key in ("q", "v", "lambda"):
        e = out["err_" + key]
        if e is None:
            out["order_" + key] = None
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            out["order_" + key] = np.concatenate([[math.nan], np.log(e[1:] / e[:-1]) / lh])
    out["fitted"] = {"q": _fit(hs, out["err_q"]), "v": _fit(hs, out["err_v"])}
    if m.nc:
        out["fitted"]["lambda"] = _fit(hs, out["err_lambda"])
    return out


def check(model, q=None, v=None, tol=1e-6, params=None):
    """Compare the derivatives a model supplies with central finite
    differences (as ``livens check``), at ``q``, ``v`` (default: the initial
    values) with relative tolerance ``tol``.

    Returns a dict: ``ok`` (all agree), ``checked`` and ``failed`` (counts),
    and ``errors``: derivative name (dV, d2V, G, hessian, curvature, df_dq,
    df_dv, drive: c' and c'' of driving constraints) -> max relative
    deviation beyond the finite differences' own error, None where the model
    does not supply it.  An evaluation failure
    raises its LivensError.
    """
    m = _model(model, params)
    keep = []

    def arg(x, n):
        if x is None:
            return ffi.NULL
        a = np.ascontiguousarray(x, dtype=np.float64)
        if a.shape != (n,):
            raise InputError(f"expected {n} numbers, got shape {a.shape}.", status=lib.LV_EINPUT)
        keep.append(a)
        return ffi.from_buffer("double[]", a)

    res = ffi.new("lv_check_result *")
    m._begin_run()
    rc = lib.lv_model_check_derivatives(m._ptr, arg(q, m.nq), arg(v, m.nv), float(tol), ffi.NULL, res)
    if rc not in (0, lib.LV_EINPUT):
        err = make_error(rc, f"evaluating model '{m.name}' failed: {_strerror(rc)}.")
        cause = m._pending()
        if cause is not None:
            raise err from cause
        raise err
    errors = {}
    for k in ("dV", "d2V", "G", "hessian", "curvature", "df_dq", "df_dv", "drive"):
        e = getattr(res, "err_" + k)
        errors[k] = None if e < 0 else float(e)
    return {"ok": rc == 0, "checked": int(res.checked), "failed": int(res.failed), "errors": errors}
