"""System files from Python (issue 15): livens.System.from_file builds the
model of a YAML file; the double-pendulum file is the built-in
double-pendulum model (same initial state, same trajectory to round-off)."""
import os

import numpy as np
import pytest

import livens

SYSTEMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "systems")


def _has_yaml_reader():
    try:
        livens.System.from_file(os.path.join(SYSTEMS, "heavy_top.yaml"))
    except livens.InputError as e:
        if "no YAML reader" in str(e):
            return False
    return True


pytestmark = pytest.mark.skipif(not _has_yaml_reader(), reason="this build has no YAML reader (libyaml)")


def test_double_pendulum_file_equals_builtin():
    f = livens.System.from_file(os.path.join(SYSTEMS, "double_pendulum.yaml"))
    b = livens.Model("double-pendulum")
    assert (f.nq, f.nv, f.nc) == (b.nq, b.nv, b.nc) == (24, 24, 22)
    assert np.array_equal(f.q0, b.q0) and np.array_equal(f.v0, b.v0)
    rf = livens.simulate(f, "em", step=1e-3, t_end=0.2)
    rb = livens.simulate(b, "em", step=1e-3, t_end=0.2)
    assert len(rf) == len(rb) == 201
    assert np.max(np.abs(rf.q - rb.q)) < 5e-14
    assert np.max(np.abs(rf.v - rb.v)) < 5e-14
    assert np.max(np.abs(rf.energy - rf.energy[0])) / abs(rf.energy[0]) < 1e-12


def test_formulation_override_and_lie_group_scheme():
    f = livens.System.from_file(os.path.join(SYSTEMS, "heavy_top.yaml"), formulation="r3so3")
    assert f.space.startswith("R^3") or "SO(3)" in f.space
    r = livens.simulate(f, "genalpha", step=1e-3, t_end=0.01)
    assert len(r) == 11


def test_bad_file_names_line_and_key(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("particles:\n  - {name: p, mass: -1, position: [0, 0, 0]}\n")
    with pytest.raises(livens.InputError, match=r"bad.yaml:2: mass: must be positive"):
        livens.System.from_file(p)
    with pytest.raises(livens.LivensIOError, match="cannot open"):
        livens.System.from_file(tmp_path / "missing.yaml")
