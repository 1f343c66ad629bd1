"""livens.models(), Model, simulate(): the program's numbers from Python."""
import numpy as np
import pytest

import livens
from conftest import run_program


def read_csv(path):
    """The program's CSV: '# key = value' metadata lines, a header, rows."""
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    head = lines[0].strip().split(",")
    data = np.loadtxt(lines[1:], delimiter=",", ndmin=2)
    return head, data


def columns(head, data, prefix):
    idx = [i for i, h in enumerate(head) if h.rstrip("0123456789") == prefix and h != prefix]
    return data[:, idx]


def assert_same(a, b, what):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}"
    tol = 1e-15 * np.maximum(1.0, np.abs(b))
    bad = np.abs(a - b) > tol
    assert not bad.any(), f"{what}: max deviation {np.max(np.abs(a - b)):.3e}"


def test_models_match_program_list(program):
    st, out, _ = run_program(program, "list")
    assert st == 0
    lines = out.split("\nSchemes")[0].splitlines()
    listed = {l.split()[0] for l in lines if l.startswith("  ") and not l.startswith("      ")}
    ms = livens.models()
    assert listed == set(ms)
    for name, info in ms.items():
        assert "  %-16s %s" % (name, info.description) in lines
        for p in info.parameters.values():
            assert "      %-14s = %-10s %s" % (p.name, p.default, p.doc) in lines, (name, p)
    sc = livens.schemes()
    body = out.split("\nSchemes")[1].splitlines()
    for name, info in sc.items():
        assert "  %-16s %s" % (name, info.description) in body
        assert "      conserves: %s" % info.conserves in body


def test_models_schemes_accepted():
    ms = livens.models()
    p3 = ms["pendulum3d"]
    assert "rattle" in p3.schemes and "em" in p3.schemes
    assert "midpoint" not in p3.schemes          # constrained model
    assert "rattle" not in ms["heavy-top"].schemes  # Lie group space
    assert "genalpha" in ms["heavy-top"].schemes
    assert p3.parameters["l"].default == "1" and p3.parameters["l"].doc == "rod length"
    sc = livens.schemes()
    assert sc["genalpha"].options["rho-inf"].default == "0.9"
    assert sc["em"].order == 2


CASES = [
    ("pendulum3d", "rattle", "0.01", "2", [], []),
    ("four-particle", "vi-a", "0.05", "3", ["--param", "k24=200"], [("k24", 200.0)]),
    ("four-particle", "em", "0.05", "3", [], []),
    ("heavy-top", "genalpha", "0.001", "0.2", ["--opt", "rho-inf=0.8"], []),
    ("pendulum3d", "bliedf2", "0.01", "1", [], []),
]


@pytest.mark.parametrize("model,scheme,h,t_end,extra,params", CASES)
def test_equals_program_csv(program, tmp_path, model, scheme, h, t_end, extra, params):
    csv = tmp_path / "run.csv"
    st, out, err = run_program(program, "run", model, "--scheme", scheme, "--step", h, "--t-end", t_end,
                               *extra, "--out", str(csv))
    assert st == 0, err
    head, data = read_csv(csv)
    opts = {}
    if "--opt" in extra:
        k, v = extra[extra.index("--opt") + 1].split("=")
        opts[k] = float(v)
    r = livens.simulate(model, scheme, float(h), float(t_end), params=dict(params), opts=opts)
    assert r.status == "ok" and len(r) == data.shape[0]
    assert_same(r.t, data[:, 0], "t")
    assert_same(r.q, columns(head, data, "q"), "q")
    assert_same(r.v, columns(head, data, "v"), "v")
    if "p1" in head:
        assert_same(r.p, columns(head, data, "p"), "p")
    assert_same(r.lam, columns(head, data, "lambda"), "lambda")
    if "gamma1" in head:
        assert_same(r.gamma, columns(head, data, "gamma"), "gamma")
    assert_same(r.energy, data[:, head.index("energy")], "energy")
    assert_same(r.momenta, columns(head, data, "momentum"), "momentum")
    assert_same(r.g, data[:, head.index("g_norm")], "g_norm")
    assert_same(r.gv, data[:, head.index("gv_norm")], "gv_norm")
    if "gp_norm" in head:
        assert_same(r.gp, data[:, head.index("gp_norm")], "gp_norm")
    assert np.array_equal(r.newton_iters, data[:, head.index("newton_iters")].astype(int))
    # the summary row as the program prints it, but for the timing column
    row = [l for l in out.splitlines() if l.startswith(scheme + " ") and " on " not in l][0].split()
    mine = r.table().splitlines()[1].split()
    assert mine[:8] == row[:8] and mine[9:] == row[9:]
    assert r.table().splitlines()[0] == [l for l in out.splitlines() if l.startswith("scheme")][0]


def test_every_matches_program(program, tmp_path):
    csv = tmp_path / "run.csv"
    st, _, err = run_program(program, "run", "pendulum3d", "--scheme", "vi-a", "--step", "0.01",
                             "--t-end", "1", "--every", "7", "--out", str(csv))
    assert st == 0, err
    head, data = read_csv(csv)
    r = livens.simulate("pendulum3d", "vi-a", 0.01, 1, every=7)
    assert len(r) == data.shape[0] == 1 + 100 // 7 + 1   # every 7th step and the final state
    assert_same(r.t, data[:, 0], "t")
    assert_same(r.q, columns(head, data, "q"), "q")
    # the summary covers every step, not only the recorded ones
    assert r.summary["steps"] == 100 and r.summary["samples"] == 101


def test_model_object_and_evaluations():
    m = livens.Model("pendulum3d", l=2.0, x0=2.0)
    assert (m.nq, m.nv, m.nc, m.nsym) == (3, 3, 1, 1) and m.space == "R^3"
    assert m.potential([0, 0, 1.5]) == pytest.approx(9.81 * 1.5)
    assert m.constraints([0, 0, 2.0])[0] == 0.0
    assert np.allclose(m.jacobian([0, 0, 2.0]), [[0, 0, 0.5]])
    assert np.allclose(m.mass_matrix(), np.eye(3))
    r = livens.simulate(m, "rattle", 0.02, 0.2)
    assert np.allclose(np.linalg.norm(r.q, axis=1), 2.0, atol=1e-12)


def program_sentence(program, *args):
    st, _, err = run_program(program, *args)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("livens: "), err
    return st, lines[0][len("livens: "):]


def test_run_failures_carry_the_program_sentence(program):
    # Newton's matrix becomes singular: EM on four particles at h = 0.675,
    # Newton started from q^n (from q^n + h v^n, the default, it stops at
    # t = 52.65 without converging instead)
    with pytest.raises(livens.SingularError) as e:
        livens.simulate("four-particle", "em", 0.675, 200, opts={"guess": "simple"})
    st, sentence = program_sentence(program, "run", "four-particle", "--scheme", "em", "--step", "0.675",
                                    "--t-end", "200", "--opt", "guess=simple")
    assert st == 1 and str(e.value) == sentence and e.value.name == "LV_ESINGULAR"
    res = e.value.result
    assert res.status == "LV_ESINGULAR" and res.summary["status"] == "LV_ESINGULAR"
    assert len(res) == res.summary["steps"] + 1 and 50 < res.t[-1] < 200
    # the divergence guard: index-3 genalpha on the gyroscopic top
    with pytest.raises(livens.DivergedError) as e:
        livens.simulate("gyro-top", "genalpha", 1e-3, 0.3)
    st, sentence = program_sentence(program, "run", "gyro-top", "--scheme", "genalpha", "--step", "1e-3",
                                    "--t-end", "0.3")
    assert st == 1 and str(e.value) == sentence
    assert isinstance(e.value, livens.LivensError) and e.value.result.t[-1] < 0.3


@pytest.mark.parametrize("call,cls,text", [
    (lambda: livens.Model("no-such-model"), livens.UnknownNameError, "unknown model 'no-such-model'"),
    (lambda: livens.Model("pendulum3d", length=2), livens.UnknownNameError,
     "model 'pendulum3d' has no parameter 'length'"),
    (lambda: livens.Model("pendulum3d", l=-1), livens.InputError,
     "model 'pendulum3d' refuses l = -1 (l: rod length)."),
    (lambda: livens.simulate("pendulum3d", "no-such-scheme", 0.01, 1), livens.UnknownNameError,
     "unknown scheme 'no-such-scheme'"),
    (lambda: livens.simulate("pendulum3d", "midpoint", 0.01, 1), livens.NotSupportedError,
     "scheme 'midpoint' cannot run model 'pendulum3d': "),
    (lambda: livens.simulate("heavy-top", "vi-a", 0.01, 1), livens.NotSupportedError,
     "scheme 'vi-a' cannot run model 'heavy-top': it needs a constant mass matrix on a linear space R^n, and this "
     "model is on R^3xSO(3)."),
    (lambda: livens.simulate("kapitza", "em", 0.01, 1), livens.NotSupportedError,
     "it supports only scleronomic constraints g(q) = 0, and this model has driving constraints"),
    (lambda: livens.simulate("pendulum3d", "rattle", 0.01, 1, opts={"theta": 1}), livens.UnknownNameError,
     "scheme 'rattle' has no option 'theta'"),
    (lambda: livens.simulate("pendulum3d", "genalpha", 0.01, 1, opts={"rho-inf": 2}), livens.InputError,
     "invalid option value for scheme 'genalpha': genalpha: rho-inf = 2 is not accepted: a number in [0, 1]."),
    (lambda: livens.simulate("pendulum3d", "rattle", -0.01, 1), livens.InputError,
     "step and t_end must be finite positive numbers"),
    (lambda: livens.simulate("pendulum3d", "rattle", 0.01, 1, every=0), livens.InputError, "every must be"),
    (lambda: livens.simulate("pendulum3d", "rattle", 0.01, 1, linsol="superlu"), livens.InputError,
     "unknown linear solver 'superlu'"),
    (lambda: livens.simulate("pendulum3d", "bliedf2", 0.01, 1, halving=3), livens.InputError,
     "multistep scheme and cannot halve"),
    (lambda: livens.simulate("pendulum3d", "rattle", 0.01, 1, q0=[1, 0]), livens.InputError,
     "q0 must have 3 numbers"),
    (lambda: livens.simulate("pendulum3d", "rattle", 0.01, 1, halving=-1), livens.InputError,
     "halving must be a non-negative integer"),
    (lambda: livens.Model("pendulum3d", **{"l\0x": 2}), livens.InputError, "contains a NUL character"),
    (lambda: livens.simulate("pendulum3d", "vi-a", 0.01, 1, opts={"theta": "0.5\0junk"}), livens.InputError,
     "the value of option theta contains a NUL character"),
    (lambda: livens.simulate("pendulum3d", "rattle\0", 0.01, 1), livens.InputError, "contains a NUL"),
])
def test_input_errors(call, cls, text):
    with pytest.raises(cls) as e:
        call()
    assert text in str(e.value)
    assert str(e.value).endswith((".", ")")) and "\n" not in str(e.value)
    assert isinstance(e.value, livens.LivensError) and e.value.status < 0 and e.value.name.startswith("LV_E")
    assert e.value.result is None


def test_error_classes_cover_every_status():
    names = set()
    for st in range(-1, -17, -1):
        cls = livens.error_class(st)
        assert cls is not livens.LivensError and cls.status == st
        names.add(cls)
    assert len(names) == 16


def test_initial_values_checked_or_projected():
    with pytest.raises(livens.InconsistentError) as e:
        livens.simulate("pendulum3d", "rattle", 0.01, 1.0, q0=[1.1, 0, 0], init="check")
    assert "max|g(q0)| = 1.050e-01" in str(e.value) and "check mode" in str(e.value)
    assert e.value.name == "LV_EINCONSISTENT" and len(e.value.result) == 0
    r = livens.simulate("pendulum3d", "rattle", 0.01, 1.0, q0=[1.1, 0, 0])
    assert r.summary["projected"] and r.summary["init_g_norm"] == pytest.approx(0.105)
    assert abs(np.linalg.norm(r.q[0]) - 1.0) < 1e-12
    with pytest.raises(livens.InputError, match="init must be 'project' or 'check'"):
        livens.simulate("pendulum3d", "rattle", 0.01, 1.0, init="fix")


def test_readme_quick_start_runs(tmp_path, monkeypatch, capsys):
    """The five-line Python quick start of README.md, executed as printed."""
    import os
    import re
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    text = open(readme, encoding="utf-8").read()
    section = text.split("## Using the library from Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) == 5
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("scheme ") and out[1].split()[0] == "rattle" and out[1].split()[-1] == "ok"
    e, j, g = (float(x) for x in out[2].split())
    assert 0 < e < 0.05 and j < 1e-12 and g < 1e-12
    assert (tmp_path / "pendulum.png").stat().st_size > 10000
