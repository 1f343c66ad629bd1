"""Driving (rheonomic) constraints of models written in Python
(Model.from_functions(driving=...)) against the built-in Kapitza pendulum,
the schemes that refuse them, and failures inside c(t, order)."""
import math
import os
import re

import numpy as np
import pytest

import livens

# the built-in model's defaults, given to both models explicitly
P = dict(m=1.0, ms=1.0, l=1.0, grav=9.81, amp=0.1, omega=60.0, theta0=0.3)
BUILTIN = {"m": P["m"], "support-mass": P["ms"], "l": P["l"], "gravity": P["grav"],
           "amplitude": P["amp"], "omega": P["omega"], "theta0": P["theta0"]}


def drive_exact(t, order):
    """c(t) = (0, A cos(omega t), 0) and its derivatives, as models/kapitza.c."""
    A, w = P["amp"], P["omega"]
    ph = w * t
    c1 = A * math.cos(ph) if order == 0 else -A * w * math.sin(ph) if order == 1 else -A * w * w * math.cos(ph)
    return np.array([0.0, c1, 0.0])


def kapitza(driving=drive_exact, exact=True):
    """Kapitza's pendulum written in Python: q = (xs, ys, x, y), the support
    (xs, ys) prescribed by g_1,2(q) = (xs, ys) = c_1,2(t), the rod by g_3."""
    m, ms, l, grav, A, th = P["m"], P["ms"], P["l"], P["grav"], P["amp"], P["theta0"]

    def g(q):
        dx, dy = q[2] - q[0], q[3] - q[1]
        return np.array([q[0], q[1], 0.5 * (dx * dx + dy * dy - l * l)])

    def G(q):
        dx, dy = q[2] - q[0], q[3] - q[1]
        return np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [-dx, -dy, dx, dy]])

    D2 = np.block([[np.eye(2), -np.eye(2)], [-np.eye(2), np.eye(2)]])

    def curv(q, w):
        a, b = w[2] - w[0], w[3] - w[1]
        Z = np.zeros((3, 4))
        Z[2] = [-a, -b, a, b]
        return Z

    kw = dict(q0=[0.0, A, l * math.sin(th), A + l * math.cos(th)], v0=np.zeros(4),
              mass=np.diag([ms, ms, m, m]), potential=lambda q: grav * (ms * q[1] + m * q[3]),
              gradient=lambda q: np.array([0.0, grav * ms, 0.0, grav * m]), constraints=g,
              driving=driving, name="py-kapitza")
    if exact:
        kw.update(hessian=lambda q: np.zeros((4, 4)), jacobian=G,
                  constraint_hessian=lambda q, gam: gam[2] * D2, constraint_curvature=curv)
    return livens.Model.from_functions(**kw)


def test_python_kapitza_equals_builtin():
    """Same formulas in the same order as models/kapitza.c: the trajectories
    agree to round-off (1e-10 over 2000 steps), the support follows
    ys = A cos(omega t), and the drive keeps the bob above its support."""
    h, T = 1e-3, 2.0
    assert kapitza().driven and livens.Model("kapitza").driven and not kapitza(driving=None).driven
    a = livens.simulate(kapitza(), "genalpha", h, T)
    b = livens.simulate("kapitza", "genalpha", h, T, params=BUILTIN)
    assert len(a) == len(b) == 2001
    d = {f: float(np.max(np.abs(getattr(a, f) - getattr(b, f)))) for f in ("q", "v", "lam", "energy")}
    print(f"\nPython Kapitza vs built-in (genalpha, h = {h}, T = {T}): max differences {d}")
    assert d["q"] <= 1e-10 and d["v"] <= 1e-8
    assert np.max(np.abs(a.q[:, 1] - P["amp"] * np.cos(P["omega"] * a.t))) <= 1e-10
    assert np.max(np.abs(a.q[:, 0])) <= 1e-12
    assert np.all(a.q[:, 3] > a.q[:, 1])          # upright: Kapitza's criterion holds (A w)^2 = 36 > 2 g l
    # |g - c| and |G v - c'| use the Python c and c': index-3 genalpha leaves
    # an O(h^2) velocity-level residual (1.8e-3 here), far below the support's
    # speed A omega = 6 that a diagnostic ignoring c' would show
    assert a.summary["max_g"] <= 1e-10 and a.summary["max_gv"] < 1e-3 * P["amp"] * P["omega"]
    assert abs(a.summary["max_gv"] - b.summary["max_gv"]) <= 1e-10
    # without the drive the same pendulum falls: the drive is what is integrated
    c = livens.simulate(kapitza(driving=lambda t, k: np.array([0.0, P["amp"] if k == 0 else 0.0, 0.0])),
                        "genalpha", h, T)
    assert np.min(c.q[:, 3] - c.q[:, 1]) < -0.5


def test_finite_difference_derivatives_with_driving():
    """Only V, dV, g and c given: G, the constraint Hessian and the
    curvature are the library's differences.  To T = 1 q agrees to 6e-12;
    the bound 1e-8 is Newton's: a differenced Jacobian changes the
    iterates, and where a step then takes one iteration more (to T = 2 at
    t = 1.671, 3215 iterations against 3214) q moves by the size of the
    last increment, 1.2e-9."""
    a = livens.simulate(kapitza(exact=False), "genalpha", 1e-3, 1.0)
    b = livens.simulate("kapitza", "genalpha", 1e-3, 1.0, params=BUILTIN)
    dq = float(np.max(np.abs(a.q - b.q)))
    print(f"\nfinite-difference Python Kapitza vs built-in: max |dq| {dq:.2e}")
    assert dq <= 1e-8


@pytest.mark.parametrize("scheme", ["rattle", "vi-a", "em"])
def test_schemes_without_driving_refuse(scheme):
    """The library refuses a driven model for the schemes not flagged
    LV_SCHEME_DRIVEN: NotSupportedError (LV_ENOTIMPL), as for the built-in
    model; the same model without the drive runs."""
    with pytest.raises(livens.NotSupportedError) as e:
        livens.simulate(kapitza(), scheme, 1e-3, 0.01)
    assert e.value.name == "LV_ENOTIMPL" and e.value.status == livens.NotSupportedError.status
    assert f"scheme '{scheme}' cannot run model 'py-kapitza'" in str(e.value)
    with pytest.raises(livens.NotSupportedError):
        livens.simulate("kapitza", scheme, 1e-3, 0.01)
    r = livens.simulate(kapitza(driving=None), scheme, 1e-3, 0.01)
    assert r.status == "ok" and len(r) == 11


def test_driving_exception_is_a_callback_error():
    """An exception inside c(t, order) stops the run with CallbackError
    naming the driving callback, the exception chained, the rows before it
    kept; a wrong shape is a ValueError naming the function."""
    def c(t, order):
        if t > 0.05:
            raise ZeroDivisionError("drive fails")
        return drive_exact(t, order)

    with pytest.raises(livens.CallbackError) as e:
        livens.simulate(kapitza(driving=c), "genalpha", 1e-3, 1.0)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert "driving c" in str(e.value) and e.value.name == "LV_ECALLBACK"
    r = e.value.result
    assert r.status == "LV_ECALLBACK" and 40 < len(r) <= 52 and r.t[-1] <= 0.05 + 1e-12

    with pytest.raises(livens.CallbackError) as e:
        livens.simulate(kapitza(driving=lambda t, k: np.zeros(2)), "genalpha", 1e-3, 0.1)
    assert "driving (order 0) must return 3 numbers" in str(e.value.__cause__)


def test_check_compares_the_derivatives_of_c():
    res = livens.check(kapitza())
    assert res["ok"] and res["errors"]["drive"] is not None and res["errors"]["drive"] < 1e-6
    assert livens.check("kapitza")["errors"]["drive"] < 1e-6
    assert livens.check(kapitza(driving=None))["errors"]["drive"] is None

    def wrong(t, order):  # c'' with the wrong sign
        return drive_exact(t, order) * (-1.0 if order == 2 else 1.0)

    res = livens.check(kapitza(driving=wrong))
    assert not res["ok"] and res["errors"]["drive"] > 0.1


@pytest.mark.parametrize("kwargs,text", [
    (dict(driving=drive_exact), "driving given without constraints"),
    (dict(driving=1, constraints=lambda q: q[:1]), "driving must be a function"),
])
def test_driving_input_errors(kwargs, text):
    base = dict(q0=[1.0, 0, 0], v0=[0, 1.0, 0], mass=np.eye(3))
    base.update(kwargs)
    with pytest.raises(livens.InputError) as e:
        livens.Model.from_functions(**base)
    assert text in str(e.value)


def test_doc_example_runs():
    """doc/python.md's driven pendulum (numpy's cos and sin, its own order of
    operations, G and the second derivatives left to finite differences)
    follows the built-in model to Newton's stopping level (1.2e-9 to T = 2,
    see test_finite_difference_derivatives_with_driving)."""
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc", "python.md")
    text = open(doc, encoding="utf-8").read()
    code = re.search(r"## Driving constraints.*?```python\n(.*?)```", text, re.S).group(1)
    env = {}
    exec(compile(code, "doc/python.md", "exec"), env)
    r, m = env["r"], env["m"]
    b = livens.simulate("kapitza", "genalpha", 1e-3, 2.0, params=BUILTIN)
    assert m.driven and len(r) == len(b) == 2001
    dq = float(np.max(np.abs(r.q - b.q)))
    print(f"\ndoc/python.md's pendulum vs built-in: max |dq| {dq:.2e}")
    assert dq <= 1e-8
