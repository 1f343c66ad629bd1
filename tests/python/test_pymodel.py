"""Models written in Python (Model.from_functions) against the built-in
ones, conservation, derivative checks and callback errors."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import livens

G = 9.81


def pendulum(exact=True, l=1.0, m=1.0):
    """pendulum3d written in Python; exact=False leaves every derivative the
    library can form (G, constraint Hessian and curvature, d2V) to it."""
    kw = dict(q0=[1.0, 0.0, 0.0], v0=[0.0, 1.0, 0.0], mass=m * np.eye(3),
              potential=lambda q: m * G * q[2],
              gradient=lambda q: np.array([0.0, 0.0, m * G]),
              constraints=lambda q: np.array([0.5 * ((q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) / (l * l) - 1.0)]),
              symmetries=[lambda q: np.array([-q[1], q[0], 0.0])], name="py-pendulum")
    if exact:
        kw.update(hessian=lambda q: np.zeros((3, 3)),
                  jacobian=lambda q: (q / (l * l))[None, :],
                  constraint_hessian=lambda q, gam: gam[0] / (l * l) * np.eye(3),
                  constraint_curvature=lambda q, w: (w / (l * l))[None, :])
    return livens.Model.from_functions(**kw)


def maxdiff(a, b):
    return max(float(np.max(np.abs(getattr(a, f) - getattr(b, f)), initial=0.0))
               for f in ("q", "v", "lam", "energy", "momenta"))


@pytest.mark.parametrize("scheme", ["rattle", "vi-a", "em", "genalpha", "bliedf2"])
def test_python_pendulum_equals_builtin(scheme):
    py = pendulum()
    assert (py.nq, py.nv, py.nc, py.nsym, py.space) == (3, 3, 1, 1, "R^3")
    a = livens.simulate(py, scheme, 0.01, 2.0)
    b = livens.simulate("pendulum3d", scheme, 0.01, 2.0)
    assert len(a) == len(b) == 201
    d = maxdiff(a, b)
    print(f"\n{scheme}: Python pendulum vs built-in, max difference {d:.2e}")
    assert d <= 1e-12


@pytest.mark.parametrize("scheme", ["rattle", "em", "genalpha", "vi-a"])
def test_finite_difference_derivatives(scheme):
    """Only V, dV and g given: the library differences the rest.  q, v and
    the energy agree to the differences' error (~1e-10); lambda, which
    differences a difference (the curvature from an FD Jacobian), to ~1e-6
    relative."""
    a = livens.simulate(pendulum(exact=False), scheme, 0.01, 2.0)
    b = livens.simulate("pendulum3d", scheme, 0.01, 2.0)
    d = {f: float(np.max(np.abs(getattr(a, f) - getattr(b, f)))) for f in ("q", "v", "energy", "lam")}
    print(f"\n{scheme}: finite-difference Python pendulum vs built-in: {d}")
    assert max(d["q"], d["v"], d["energy"]) <= 1e-8
    assert d["lam"] <= 1e-5 * np.max(np.abs(b.lam))


def double_spherical(l1=1.0, l2=0.8, m1=1.0, m2=1.5):
    """Two particles in R^3: |x1| = l1, |x2 - x1| = l2, gravity along -e3."""
    M = np.diag([m1] * 3 + [m2] * 3)

    def g(q):
        x1, x2 = q[:3], q[3:]
        d = x2 - x1
        return np.array([0.5 * (x1 @ x1 - l1 * l1), 0.5 * (d @ d - l2 * l2)])

    def jac(q):
        x1, x2 = q[:3], q[3:]
        d = x2 - x1
        J = np.zeros((2, 6))
        J[0, :3] = x1
        J[1, :3] = -d
        J[1, 3:] = d
        return J

    def chess(q, gam):
        H = np.zeros((6, 6))
        I3 = np.eye(3)
        H[:3, :3] = (gam[0] + gam[1]) * I3
        H[:3, 3:] = -gam[1] * I3
        H[3:, :3] = -gam[1] * I3
        H[3:, 3:] = gam[1] * I3
        return H

    def curv(q, w):
        Z = np.zeros((2, 6))
        Z[0, :3] = w[:3]
        Z[1, :3] = w[:3] - w[3:]
        Z[1, 3:] = w[3:] - w[:3]
        return Z

    q0 = np.array([l1, 0.0, 0.0, l1, 0.0, -l2])
    v0 = np.array([0.0, 1.0, 0.5, 0.0, 2.0, 0.0])
    return livens.Model.from_functions(
        q0, v0, M, potential=lambda q: G * (m1 * q[2] + m2 * q[5]),
        gradient=lambda q: np.array([0, 0, G * m1, 0, 0, G * m2]), hessian=lambda q: np.zeros((6, 6)),
        constraints=g, jacobian=jac,
        constraint_hessian=chess, constraint_curvature=curv, symmetries=[lambda q: np.array([-q[1], q[0], 0, -q[4], q[3], 0])],
        name="double-spherical")


def test_double_spherical_pendulum_energy():
    m = double_spherical()
    assert livens.check(m)["ok"]
    em = livens.simulate(m, "em", 0.01, 100.0, every=100)
    assert em.summary["steps"] == 10000
    print(f"\nEM: max |dE|/E0 = {em.summary['max_rel_energy_error']:.2e}, "
          f"max |dJ| = {em.summary['max_momentum_error']:.2e}, max |g| = {em.summary['max_g']:.2e}")
    assert em.summary["max_rel_energy_error"] <= 1e-12
    assert em.summary["max_momentum_error"] <= 1e-11
    ra = livens.simulate(m, "rattle", 0.01, 100.0, every=10)
    e = np.abs(ra.energy - ra.energy[0]) / abs(ra.energy[0])
    half = len(e) // 2
    print(f"RATTLE: max |dE|/E0 = {e.max():.2e} (first half {e[:half].max():.2e}, second {e[half:].max():.2e}), "
          f"drift/t {ra.summary['energy_drift_rate']:.2e}")
    # bounded: no larger in the second half than in the first (no drift),
    # and of the size of the O(h^2) error
    assert e.max() < 1e-2
    assert e[half:].max() < 2.0 * e[:half].max()


def test_check_finds_a_wrong_jacobian():
    res = livens.check(pendulum())
    assert res["ok"] and res["failed"] == 0 and res["checked"] >= 4
    assert all(v is None or v < 1e-6 for v in res["errors"].values())
    wrong = livens.Model.from_functions(
        [1.0, 0, 0], [0, 1.0, 0], np.eye(3), constraints=lambda q: np.array([0.5 * (q @ q - 1.0)]),
        jacobian=lambda q: 2.0 * q[None, :])
    res = livens.check(wrong)
    assert not res["ok"] and res["failed"] >= 1 and res["errors"]["G"] > 0.1
    assert res["errors"]["dV"] is None
    assert livens.check("pendulum3d")["ok"]


def test_callback_exceptions_are_chained():
    def boom(q):
        if q[2] < -0.1:
            raise ZeroDivisionError("boom")
        return np.array([0.0, 0.0, G])

    m = livens.Model.from_functions([1.0, 0, 0], [0, 1.0, 0], np.eye(3), potential=lambda q: G * q[2],
                                    gradient=boom, constraints=lambda q: np.array([0.5 * (q @ q - 1.0)]))
    with pytest.raises(livens.CallbackError) as e:
        livens.simulate(m, "rattle", 0.01, 5.0)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert "dV" in str(e.value) and str(e.value).startswith("rattle stopped: ")
    r = e.value.result
    assert r.status == "LV_ECALLBACK" and len(r) > 1 and r.q[-1, 2] >= -0.1 - 0.1
    # a wrong shape is a ValueError naming the function
    m2 = livens.Model.from_functions([1.0, 0, 0], [0, 1.0, 0], np.eye(3), potential=lambda q: G * q[2],
                                     gradient=lambda q: np.zeros(2),
                                     constraints=lambda q: np.array([0.5 * (q @ q - 1.0)]))
    with pytest.raises(livens.CallbackError) as e:
        livens.simulate(m2, "rattle", 0.01, 1.0)
    assert "gradient must return 3 numbers" in str(e.value.__cause__)


def test_nan_is_named_by_the_library():
    m = livens.Model.from_functions([1.0, 0, 0], [0, 1.0, 0], np.eye(3),
                                    potential=lambda q: G * q[2],
                                    gradient=lambda q: np.array([0.0, 0.0, G if q[1] < 0.5 else np.nan]),
                                    constraints=lambda q: np.array([0.5 * (q @ q - 1.0)]))
    with pytest.raises(livens.NonFiniteError) as e:
        livens.simulate(m, "rattle", 0.01, 2.0)
    assert "dV" in str(e.value) and e.value.__cause__ is None
    assert e.value.result.q[-1, 1] < 0.5 + 0.02


@pytest.mark.parametrize("kwargs,text", [
    (dict(potential=lambda q: 0.0), "potential and gradient come together"),
    (dict(jacobian=lambda q: q[None, :]), "constraint derivatives given without constraints"),
    (dict(force_dq=lambda t, q, v: np.zeros((3, 3))), "force Jacobians given without force"),
    (dict(space=["SO3"]), "q0 has 3 numbers but the space SO(3)"),
    (dict(space=["XYZ"]), "unknown space factor"),
    (dict(mass=np.eye(2)), "mass must be a 3 x 3 matrix"),
    (dict(v0=[0, 1]), "v0 must have 3 numbers"),
    (dict(symmetries=[1]), "symmetries must be a list of functions"),
    (dict(invariants=(len, len, len)), "invariants describe the potential"),
    (dict(potential=lambda q: 0.0, gradient=lambda q: np.zeros(3), invariants=(len,)),
     "invariants must be three functions"),
])
def test_from_functions_input_errors(kwargs, text):
    base = dict(q0=[1.0, 0, 0], v0=[0, 1.0, 0], mass=np.eye(3))
    base.update(kwargs)
    with pytest.raises(livens.InputError) as e:
        livens.Model.from_functions(**base)
    assert text in str(e.value)


def test_lie_group_space_and_force():
    """A free rigid body on SO(3) written in Python: Euler's equations with
    the gyroscopic force f = -Omega x J Omega; genalpha keeps |J Omega|
    (the body angular momentum's norm) to its O(h^2) error."""
    J = np.diag([1.0, 2.0, 3.0])

    def force(t, q, v):
        return -np.cross(v, J @ v)

    m = livens.Model.from_functions(np.eye(3).ravel(), [0.1, 1.0, 0.1], J, force=force, space=["SO3"],
                                    name="free-body")
    assert (m.nq, m.nv, m.space) == (9, 3, "SO(3)")
    r = livens.simulate(m, "genalpha", 1e-3, 1.0, every=10)
    L = np.linalg.norm(r.v @ J, axis=1)
    R = r.q[-1].reshape(3, 3)
    assert np.allclose(R @ R.T, np.eye(3), atol=1e-12)
    assert np.max(np.abs(L - L[0])) < 1e-4
    assert np.max(np.abs(r.energy - r.energy[0])) / r.energy[0] < 1e-4


def test_ctrl_c_in_a_python_model():
    m = pendulum()
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as e:
        livens.simulate(m, "rattle", 1e-3, 1e6, every=10)
    timer.join()
    assert time.monotonic() - t0 < 5.0
    r = e.value.result
    assert isinstance(e.value, livens.Interrupted) and r.status == "LV_ESTOPPED" and len(r) > 2
    assert np.allclose(np.linalg.norm(r.q, axis=1), 1.0, atol=1e-12)
    assert np.all(np.diff(r.t) > 0)


def test_python_model_in_two_threads():
    m = pendulum()
    seq = livens.simulate(m, "em", 0.01, 3.0)
    out = [None, None]

    def work(i):
        out[i] = livens.simulate(m, "em", 0.01, 3.0)

    ths = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    for r in out:
        assert maxdiff(r, seq) == 0.0


def test_failing_symmetry_is_a_callback_error():
    """A momentum map that raises: the run stops with CallbackError naming
    the symmetry callback, the exception chained, the rows before it kept."""
    def xi(q):
        if q[1] < 0:
            raise RuntimeError("symmetry fails")
        return np.array([-q[1], q[0], 0.0])

    m = livens.Model.from_functions([1.0, 0, 0], [0, 1.0, 0], np.eye(3), potential=lambda q: G * q[2],
                                    gradient=lambda q: np.array([0.0, 0.0, G]),
                                    constraints=lambda q: np.array([0.5 * (q @ q - 1.0)]), symmetries=[xi])
    with pytest.raises(livens.CallbackError) as e:
        livens.simulate(m, "rattle", 0.01, 10.0)
    assert isinstance(e.value.__cause__, RuntimeError)
    assert "symmetry callback" in str(e.value) and e.value.name == "LV_ECALLBACK"
    r = e.value.result
    assert len(r) > 10 and np.all(r.q[:, 1] >= 0)


def four_particle(invariants=True):
    """Gonzalez' four particles (models/four_particle.c) written in Python:
    springs 1-3 and 2-4, bars 1-2 and 3-4, six momentum maps, and the
    potential through its quadratic invariants pi = |q3-q1|^2, |q4-q2|^2."""
    ref = livens.Model("four-particle")
    ms = np.array([1.0, 3.0, 2.3, 1.7])
    k13, k24, l13, l24 = 50.0, 500.0, 1.0, 1.0
    springs = ((0, 2, k13, l13), (1, 3, k24, l24))
    bars = ((0, 1), (2, 3))

    def x(q, i):
        return q[3 * i:3 * i + 3]

    def V(q):
        return sum(0.5 * k * ((x(q, j) - x(q, i)) @ (x(q, j) - x(q, i)) - l * l) ** 2 for i, j, k, l in springs)

    def dV(q):
        out = np.zeros(12)
        for i, j, k, l in springs:
            r = x(q, j) - x(q, i)
            c = k * (r @ r - l * l)
            out[3 * j:3 * j + 3] += 2 * c * r
            out[3 * i:3 * i + 3] -= 2 * c * r
        return out

    def d2V(q):
        H = np.zeros((12, 12))
        for i, j, k, l in springs:
            r = x(q, j) - x(q, i)
            K = 4 * k * np.outer(r, r) + 2 * k * (r @ r - l * l) * np.eye(3)
            for a, b, s in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
                H[3 * a:3 * a + 3, 3 * b:3 * b + 3] += s * K
        return H

    def g(q):
        return np.array([0.5 * ((x(q, j) - x(q, i)) @ (x(q, j) - x(q, i)) - 1.0) for i, j in bars])

    def G(q):
        J = np.zeros((2, 12))
        for k, (i, j) in enumerate(bars):
            r = x(q, j) - x(q, i)
            J[k, 3 * i:3 * i + 3] = -r
            J[k, 3 * j:3 * j + 3] = r
        return J

    def Hg(q, gam):
        H = np.zeros((12, 12))
        for k, (i, j) in enumerate(bars):
            for a, b, s in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
                H[3 * a:3 * a + 3, 3 * b:3 * b + 3] += s * gam[k] * np.eye(3)
        return H

    def Z(q, w):
        return G(w)  # D_q(G(q) w) = the Jacobian's pattern applied to w

    def xi(k):
        def f(q):
            out = np.zeros(12)
            for i in range(4):
                if k < 3:
                    out[3 * i + k] = 1.0
                else:
                    out[3 * i:3 * i + 3] = np.cross(np.eye(3)[k - 3], x(q, i))
            return out
        return f

    def pi(q):
        return np.array([(x(q, j) - x(q, i)) @ (x(q, j) - x(q, i)) for i, j, _, _ in springs])

    def dpi(q):
        D = np.zeros((2, 12))
        for n, (i, j, _, _) in enumerate(springs):
            r = x(q, j) - x(q, i)
            D[n, 3 * i:3 * i + 3] = -2 * r
            D[n, 3 * j:3 * j + 3] = 2 * r
        return D

    def vt(p):
        e = p - np.array([l13 * l13, l24 * l24])
        k = np.array([k13, k24])
        return 0.5 * k * e * e, k * e

    return livens.Model.from_functions(
        ref.q0, ref.v0, np.diag(np.repeat(ms, 3)), potential=V, gradient=dV, hessian=d2V, constraints=g,
        jacobian=G, constraint_hessian=Hg, constraint_curvature=Z, symmetries=[xi(k) for k in range(6)],
        invariants=(pi, dpi, vt) if invariants else None, name="py-four-particle")


def test_invariants_reach_the_energy_momentum_scheme():
    """EM on the Python four particles agrees with the built-in model only
    when the invariants are given (the built-in one gives them, and the
    invariant-based discrete gradient is a different scheme from the
    midpoint one)."""
    m = four_particle()
    assert livens.check(m)["ok"]
    b = livens.simulate("four-particle", "em", 0.05, 5.0)
    a = livens.simulate(m, "em", 0.05, 5.0)
    c = livens.simulate(four_particle(invariants=False), "em", 0.05, 5.0)
    d_inv = float(np.max(np.abs(a.q - b.q)))
    d_mid = float(np.max(np.abs(c.q - b.q)))
    print(f"\nEM, Python four particles vs built-in: with invariants {d_inv:.2e}, without {d_mid:.2e}")
    assert d_inv <= 1e-11 and d_mid > 1e3 * max(d_inv, 1e-15)
    for r in (a, c):
        assert r.summary["max_rel_energy_error"] < 1e-12 and r.summary["max_momentum_error"] < 1e-11


def double_pendulum(exact=True):
    """A planar double pendulum of two point masses in R^4 (unit masses and
    rods, gravity along -y), g = ((|x1|^2 - 1)/2, (|x2 - x1|^2 - 1)/2);
    exact=False leaves G, the constraint Hessian and curvature and d2V to
    the library's finite differences (issue 17)."""
    th1, th2, w2 = 2.0, 2.5, 1.0
    x1 = np.array([np.sin(th1), -np.cos(th1)])
    x2 = x1 + np.array([np.sin(th2), -np.cos(th2)])

    def g(q):
        d = q[2:] - q[:2]
        return np.array([0.5 * (q[0] ** 2 + q[1] ** 2 - 1.0), 0.5 * (d @ d - 1.0)])

    kw = dict(q0=np.concatenate([x1, x2]), v0=np.array([0.0, 0.0, np.cos(th2) * w2, np.sin(th2) * w2]),
              mass=np.eye(4), potential=lambda q: G * (q[1] + q[3]),
              gradient=lambda q: np.array([0.0, G, 0.0, G]), constraints=g, name="py-double-pendulum")
    if exact:
        B = np.array([[1, 0, -1, 0], [0, 1, 0, -1], [-1, 0, 1, 0], [0, -1, 0, 1]], float)

        def jac(q):
            d = q[2:] - q[:2]
            return np.array([[q[0], q[1], 0.0, 0.0], [-d[0], -d[1], d[0], d[1]]])

        def curv(q, w):
            dw = w[2:] - w[:2]
            return np.array([[w[0], w[1], 0.0, 0.0], [-dw[0], -dw[1], dw[0], dw[1]]])

        kw.update(hessian=lambda q: np.zeros((4, 4)), jacobian=jac,
                  constraint_hessian=lambda q, gam: gam[0] * np.diag([1.0, 1.0, 0.0, 0.0]) + gam[1] * B,
                  constraint_curvature=curv)
    return livens.Model.from_functions(**kw)


def test_finite_differences_cost_exact_conservation():
    """EM conserves energy to round-off with exact derivatives (1e-14), with
    G and the Hessians by finite differences only to their error (2.6e-9).
    h = 0.01, T = 1, Newton tolerance 1e-10 for both: with finite
    differences the default tolerance is below the residual's floor."""
    e = {}
    for exact in (True, False):
        r = livens.simulate(double_pendulum(exact), "em", 0.01, 1.0, newton_tol=1e-10)
        e[exact] = float(np.max(np.abs(r.energy - r.energy[0])) / abs(r.energy[0]))
    print(f"\nEM, double pendulum: max|dE|/E0 exact {e[True]:.2e}, finite differences {e[False]:.2e}")
    assert e[True] < 1e-13
    assert e[False] > 1000 * e[True] and e[False] > 1e-10
