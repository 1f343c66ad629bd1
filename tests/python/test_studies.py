"""compare, converge, check and plots against the program."""
import re

import numpy as np
import pytest

import livens
from conftest import run_program


def table_rows(text):
    """The program's table rows without the steps/s column."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 10 and f[0] != "scheme":
            out[f[0]] = f[1:8] + f[9:]
    return out


def test_compare_equals_program(program):
    st, out, err = run_program(program, "compare", "four-particle", "--schemes", "vi-a,em,rattle,genalpha",
                               "--t-end", "5", "--step", "0.02", "--opt", "theta=0.5", "--opt", "rho-inf=0.7")
    assert st == 0, err
    d = livens.compare("four-particle", ["vi-a", "em", "rattle", "genalpha"], step=0.02, t_end=5,
                       opts={"theta": 0.5, "rho-inf": 0.7})
    assert list(d) == ["vi-a", "em", "rattle", "genalpha"]
    mine = table_rows(livens.format_table(list(d.values())))
    assert mine == table_rows(out)
    assert d["em"]["max_rel_energy_error"] < 1e-12 < d["rattle"]["max_rel_energy_error"]


def test_compare_reports_a_failed_run_and_refuses_typos():
    d = livens.compare("four-particle", "em,vi-a", step=0.675, t_end=200, opts={"guess": "advanced"})
    # EM from the Newton start q^n + h v^n stops at t = 52.65 (doc/claims.md F6)
    # with a named Newton failure; which of the iteration's tests fires first
    # in that diverging step depends on the last bits (non-convergence before
    # the invariants' gradient at z was taken as a mean, a singular Newton
    # matrix since), so the step is asserted, and a failure of the step
    assert d["em"]["status"] in ("LV_ENEWTON", "LV_ESINGULAR", "LV_EDIVERGE")
    assert "from t = 52.65" in d["em"]["detail"] and "after 78 good steps" in d["em"]["detail"]
    # the default Taylor start fails at t = 6.08 alone; restarting from
    # q^n + h v^n there, it reaches the same step as that start
    d = livens.compare("four-particle", "em", step=0.675, t_end=200)
    assert d["em"]["status"] in ("LV_ENEWTON", "LV_ESINGULAR", "LV_EDIVERGE") and "from t = 52.65" in d["em"]["detail"]
    with pytest.raises(livens.UnknownNameError, match="no scheme in the list has option 'thetta'"):
        livens.compare("pendulum3d", ["vi-a", "em"], opts={"thetta": 0.5})
    with pytest.raises(livens.UnknownNameError, match="unknown scheme 'vi-z'"):
        livens.compare("pendulum3d", ["vi-a", "vi-z"])


@pytest.mark.parametrize("model,scheme,steps,t_end", [
    ("pendulum3d", "rattle", "0.04,0.02,0.01,0.005", "1"),
    ("heavy-top", "genalpha", "4e-3,2e-3,1e-3", "0.2"),
])
def test_converge_equals_program(program, tmp_path, model, scheme, steps, t_end):
    csv = tmp_path / "conv.csv"
    st, out, err = run_program(program, "converge", model, "--scheme", scheme, "--steps", steps,
                               "--t-end", t_end, "--out", str(csv))
    assert st == 0, err
    rows = [l for l in open(csv) if not l.startswith("#")][1:]  # metadata lines, header
    data = np.loadtxt(rows, delimiter=",", ndmin=2)
    c = livens.converge(model, scheme, [float(h) for h in steps.split(",")], t_end=float(t_end))
    assert np.array_equal(c["h"], data[:, 0])
    for j, key in enumerate(("err_q", "err_v", "err_lambda")):
        assert np.allclose(c[key], data[:, j + 1], rtol=1e-15, atol=0), key
    fitted = re.search(r"fitted order: q ([-0-9.]+), v ([-0-9.]+), lambda ([-0-9.]+)", out).groups()
    assert ["%.3f" % c["fitted"][k] for k in ("q", "v", "lambda")] == list(fitted)
    assert 1.9 < c["fitted"]["q"] < 2.1 and 1.9 < c["fitted"]["v"] < 2.1
    assert np.isnan(c["order_q"][0]) and np.all(np.abs(c["order_q"][1:] - 2) < 0.1)


def test_converge_input_errors():
    with pytest.raises(livens.InputError, match="at least two"):
        livens.converge("pendulum3d", "rattle", [0.01])
    with pytest.raises(livens.InputError, match="appears twice"):
        livens.converge("pendulum3d", "rattle", [0.01, 0.01])
    with pytest.raises(livens.InputError, match="not a multiple of step 0.03"):
        livens.converge("pendulum3d", "rattle", [0.04, 0.03], t_end=1.0, ref_step=0.001)
    with pytest.raises(livens.InputError, match="larger than the reference step"):
        livens.converge("pendulum3d", "rattle", [0.04, 0.02], ref_step=0.02)


def test_check_matches_program(program):
    for model in ("four-particle", "heavy-top", "gyro-top"):
        st, out, _ = run_program(program, "check", model)
        res = livens.check(model)
        n = int(re.search(r"^(\d+) supplied derivatives agree", out, re.M).group(1)) if st == 0 else None
        assert res["ok"] == (st == 0) and res["checked"] == n
        for line in out.splitlines():
            m = re.match(r"^(\S+) .*rel\. deviation beyond the FD error ([0-9.e+-]+)", line)
            if m:
                key = {"D(G^T": "hessian", "D(G": "curvature", "df/dq": "df_dq", "df/dv": "df_dv"}.get(
                    m.group(1), m.group(1))
                assert "%.3e" % res["errors"][key] == m.group(2), (model, key)


def test_plots(tmp_path):
    r = livens.simulate("four-particle", "vi-a", 0.02, 5.0)
    fig = r.plot(tmp_path / "run.png")
    axes = fig.get_axes()
    assert len(axes) == 3 and axes[0].get_yscale() == "log" and axes[2].get_yscale() == "log"
    assert len(axes[1].get_lines()) == r.momenta.shape[1] == 6   # L and J of four-particle
    png = (tmp_path / "run.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000
    c = livens.converge("pendulum3d", "rattle", [0.04, 0.02, 0.01])
    fig = livens.plot_convergence(c, tmp_path / "conv.png")
    assert fig.get_axes()[0].get_xscale() == "log" and (tmp_path / "conv.png").stat().st_size > 5000
    # a model without momentum maps: two panels
    r = livens.simulate("heavy-top", "genalpha", 1e-3, 0.1)
    assert len(r.plot().get_axes()) == (3 if r.momenta.shape[1] else 2)
