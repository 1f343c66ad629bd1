"""livens.System (issue 16): a multibody system built element by element in
Python is the same model as the same system read from its file in
examples/systems: the trajectories are equal bit for bit (the same calls of
the multibody layer with the same numbers), and what the layer refuses
raises the LivensError of its status with lv_mbs_error's sentence."""
import os
import re

import numpy as np
import pytest

import livens

SYSTEMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "systems")
FIELDS = ("t", "q", "v", "p", "lam", "gamma", "energy", "momenta", "g", "gv", "gp", "newton_iters")


def _has_yaml_reader():
    try:
        livens.System.from_file(os.path.join(SYSTEMS, "heavy_top.yaml"))
    except livens.InputError as e:
        if "no YAML reader" in str(e):
            return False
    return True


needs_yaml = pytest.mark.skipif(not _has_yaml_reader(), reason="this build has no YAML reader (libyaml)")


# --------------------------------------------------------------- the example files, element by element
def heavy_top(formulation="directors"):
    s = livens.System(formulation=formulation)
    s.gravity([0, 0, -9.81])
    top = s.body(mass=15, inertia=[0.234375, 0.46875, 0.234375], position=[0, 1, 0],
                 velocity=[4.61538, -0.0, 0], angular_velocity=[0, 150, -4.61538], frame="body", name="top")
    s.spherical(top, livens.GROUND, point_a=[0, -1, 0])
    s.rotation_symmetry([0, 0, 1], point=[0, 0, 0])
    s.body_symmetry(top, axis=[0, 1, 0], point=[0, -1, 0])
    return s


def four_bar(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, 0, -9.81])
    crank = s.body(1, [0.08343333333333335, 0.0002, 0.08343333333333335], position=[0.0, 0.0, 0.5],
                   orientation={"axis": [1, 0, 0], "angle": 1.5707963267948966}, name="crank")
    coupler = s.body(1, [0.7501000000000001, 0.0002, 0.7501000000000001],
                     position=[0.0, 1.30753113740991, 1.7350934122297297],
                     orientation=livens.rotation([1, 0, 0], 0.5121611931861502), name="coupler")
    rocker = s.body(1, [0.5209333333333334, 0.0002, 0.5209333333333334],
                    position=[0.0, 2.80753113740991, 1.2350934122297297],
                    orientation={"axis": [1, 0, 0], "angle": 1.7253864163355366}, name="rocker")
    e1 = [1, 0, 0]
    s.revolute(crank, livens.GROUND, point_a=[0, -0.5, 0], axis_a=e1, point_b=[0, 0, 0], axis_b=e1)
    s.spherical("coupler", "crank", point_a=[0, -1.5, 0], point_b=[0, 0.5, 0])
    s.universal(coupler, rocker, point_a=[0, 1.5, 0], axis_a=[0, 0, 1], point_b=[0, 1.25, 0], axis_b=e1)
    s.revolute(rocker, "ground", point_a=[0, -1.25, 0], axis_a=e1, point_b=[0, 3, 0], axis_b=e1)
    return s


def double_pendulum(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, 0, -9.81])
    J = [0.08343333333333335, 0.0002, 0.08343333333333335]
    bar1 = s.body(1.0, J, position=[0.0, 0.45464871341284085, 0.2080734182735712],
                  orientation={"axis": [1, 0, 0], "angle": 0.42920367320510344},
                  velocity=[0.0, 0.0, 0.0], angular_velocity=[0.0, 0.0, 0.0], frame="space")
    bar2 = s.body(1.0, J, position=[0.0, 1.20853349887766, 0.8167186443206093],
                  orientation={"axis": [1, 0, 0], "angle": 0.9292036732051034},
                  velocity=[0.0, -0.40057180777346685, 0.2992360720519783], angular_velocity=[1.0, 0.0, 0.0],
                  frame="space")
    s.revolute(bar1, livens.GROUND, point_a=[0, -0.5, 0], axis_a=[1, 0, 0], point_b=[0, 0, 0], axis_b=[1, 0, 0])
    s.revolute(bar2, bar1, point_a=[0, -0.5, 0], axis_a=[1, 0, 0], point_b=[0, 0.5, 0], axis_b=[1, 0, 0])
    return s


def slider_crank(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, 0, -9.81])
    crank = s.body(0.12, [1e-4, 1e-4, 1e-5], position=[0, 0.10000000000000001, 0.16],
                   velocity=[0, -0.23999999999999999, 0], angular_velocity=[6, 0, 0])
    rod = s.body(0.5, [4e-4, 4e-3, 4e-3], position=[0.10000000000000001, 0.050000000000000003, 0.10000000000000001],
                 orientation=[[0.66666666666666674, 0, -0.7453559924999299],
                              [-0.33333333333333337, -0.89442719099991586, -0.29814239699997197],
                              [-0.66666666666666674, 0.44721359549995793, -0.59628479399994394]],
                 velocity=[0.12, -0.23999999999999999, 0],
                 angular_velocity=[1.2799999999999998, 1.0733126291998987, -1.4310835055998647])
    slider = s.body(2, np.diag([1e-4, 1e-4, 1e-4]), position=[0.20000000000000001, 0, 0],
                    velocity=[0.23999999999999999, 0, 0])
    s.revolute(crank, livens.GROUND, point_a=[0, 0, -0.04], axis_a=[1, 0, 0], point_b=[0, 0.1, 0.12],
               axis_b=[1, 0, 0])
    s.spherical(crank, rod, point_a=[0, 0, 0.04], point_b=[-0.15, 0, 0])
    s.universal(rod, slider, point_a=[0.15, 0, 0], axis_a=[0, 1, 0], axis_b=[1, 0, 0])
    s.prismatic(slider, livens.GROUND, axis_a=[1, 0, 0], axis_b=[1, 0, 0])
    return s


def spring_chain(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, 0, -9.81])
    p1 = s.particle(1, [0, 0, -0.5], velocity=[0.3, 0, 0], name="p1")
    p2 = s.particle(1, [0.1, 0, -1.0], velocity=[0, 0.4, 0], name="p2")
    p3 = s.particle(0.5, [0.2, 0.1, -1.5], velocity=[-0.2, 0, 0.1], name="p3")
    s.spring(livens.GROUND, p1, stiffness=100, rest_length=0.5)
    s.spring(p1, p2, 100, 0.5)
    s.spring(p2, p3, stiffness=100, rest_length=0.5)
    s.rotation_symmetry([0, 0, 1], [0, 0, 0])
    return s


def double_spherical_pendulum(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, 0, -9.81])
    p1 = s.particle(1, [0.6, 0, -0.8], velocity=[0, 1.2, 0])
    p2 = s.particle(0.5, [0.6, 0.8, -0.8], velocity=[0.5, 0, 0.3])
    s.distance(livens.GROUND, p1, length=1)
    s.distance(p1, p2, length=0.8)
    s.rotation_symmetry([0, 0, 1], [0, 0, 0])
    return s


def torsional_oscillator(formulation="directors"):
    s = livens.System(formulation)
    d1 = s.body(2.0, [0.05, 0.05, 0.09], [0, 0, 0], name="disk1")
    d2 = s.body(1.0, [0.02, 0.02, 0.03], [0, 0, 0.5], angular_velocity=[0, 0, 1.5], frame="space", name="disk2")
    s.revolute(d1, livens.GROUND, point_a=[0, 0, 0], axis_a=[0, 0, 1], point_b=[0, 0, 0], axis_b=[0, 0, 1])
    s.revolute(d2, d1, point_a=[0, 0, 0], axis_a=[0, 0, 1], point_b=[0, 0, 0.5], axis_b=[0, 0, 1])
    s.torsional_spring(livens.GROUND, d1, 4.0, axis_a=[0, 0, 1], axis_b=[0, 0, 1], rest_angle=0.3)
    s.torsional_spring(d1, d2, 1.5, axis_a=[0, 0, 1], axis_b=[0, 0, 1])
    return s


def driven_rotor(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, 0, -9.81])
    w = s.body(5.0, [0.4, 0.2, 0.2], [0, 0, 1], angular_velocity=[0.5, 0, 0], frame="space", name="flywheel")
    s.revolute(w, livens.GROUND, point_a=[0, 0, 0], axis_a=[1, 0, 0], point_b=[0, 0, 1], axis_b=[1, 0, 0])
    s.torsional_damper(livens.GROUND, w, 0.05, axis_a=[1, 0, 0], axis_b=[1, 0, 0])
    s.force(w, [0, 0, -20], point=[0, 0.3, 0], function="ramp", start=-0.5, end=1.0)
    s.torque(w, [0.8, 0, 0])
    s.torque(w, [0.2, 0, 0], function="sine", frequency=3, phase=1.0)
    return s


def planar_pendulum(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, -9.81, 0])
    bob = s.planar_particle(1.0, [0.2, -0.9797958971132712], velocity=[0.7612172366071895, 0.15538281775825555],
                            name="bob")
    s.distance(bob, livens.GROUND, length=1.0)
    return s


def planar_spring_pendulum(formulation="directors"):
    s = livens.System(formulation)
    s.gravity([0, 0, -9.81])
    p1 = s.planar_particle(1.0, [1, 0], velocity=[0, 0.5], name="p1")
    p2 = s.planar_particle(0.5, [1, 1], velocity=[0.8, 0.5], name="p2")
    s.distance(p1, "ground", length=1.0)
    s.distance(p2, p1, length=1.0)
    s.spring(p2, "ground", 20.0, 1.2)
    s.rotation_symmetry([0, 0, 1], point=[0, 0, 0])
    return s


CASES = [  # file, builder, schemes run in directors (and genalpha in r3so3 where it has bodies)
    ("heavy_top.yaml", heavy_top, ("em", "rattle", "vi-a")),
    ("four_bar.yaml", four_bar, ("em", "genalpha")),
    ("double_pendulum.yaml", double_pendulum, ("em", "rattle")),
    ("slider_crank.yaml", slider_crank, ("em", "bliedf2")),
    ("spring_chain.yaml", spring_chain, ("em", "vi-b")),
    ("double_spherical_pendulum.yaml", double_spherical_pendulum, ("em", "rattle")),
    ("torsional_oscillator.yaml", torsional_oscillator, ("em", "rattle")),
    ("driven_rotor.yaml", driven_rotor, ("genalpha", "bliedf2")),
    ("planar_pendulum.yaml", planar_pendulum, ("em", "genalpha")),
    ("planar_spring_pendulum.yaml", planar_spring_pendulum, ("em", "vi-a")),
]


def same_run(a, b):
    assert a.status == b.status == "ok"
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape and np.array_equal(x, y), f


@needs_yaml
@pytest.mark.parametrize("path,build,schemes", CASES, ids=[c[0] for c in CASES])
def test_built_in_python_equals_the_file_bit_for_bit(path, build, schemes):
    f = livens.System.from_file(os.path.join(SYSTEMS, path))
    m = build().build(f.name)
    assert (m.nq, m.nv, m.nc, m.nsym, m.space) == (f.nq, f.nv, f.nc, f.nsym, f.space)
    assert np.array_equal(m.q0, f.q0) and np.array_equal(m.v0, f.v0)
    assert np.array_equal(m.mass_matrix(), f.mass_matrix())
    assert np.array_equal(m.jacobian(), f.jacobian())
    for scheme in schemes:
        a = livens.simulate(m, scheme, step=1e-3, t_end=0.1)
        b = livens.simulate(f, scheme, step=1e-3, t_end=0.1)
        assert len(a) == 101
        same_run(a, b)
        # and the run is a real one: the state moved, the constraints hold
        assert np.max(np.abs(a.q[-1] - a.q[0])) > 1e-3
        if scheme in ("em", "rattle"):
            assert np.max(a.g) < 1e-9
        if scheme == "em":
            assert np.max(np.abs(a.energy - a.energy[0])) <= 1e-12 * max(1.0, abs(a.energy[0]))


@needs_yaml
@pytest.mark.parametrize("path,build", [("heavy_top.yaml", heavy_top), ("four_bar.yaml", four_bar),
                                        ("slider_crank.yaml", slider_crank)])
@pytest.mark.parametrize("formulation", ["r3so3", "se3"])
def test_lie_group_formulations_equal_the_file(path, build, formulation):
    f = livens.System.from_file(os.path.join(SYSTEMS, path), formulation=formulation)
    m = build(formulation).build(f.name)
    assert m.space == f.space and "SO(3)" in m.space or "SE(3)" in m.space
    same_run(livens.simulate(m, "genalpha", 1e-3, 0.05), livens.simulate(f, "genalpha", 1e-3, 0.05))


def test_spatial_points_and_axes_give_the_same_system():
    """at= and axis= (in space, converted with the initial poses) against
    the body-frame points of the file: the same constraints at q0 and
    the same motion to round-off."""
    s = livens.System()
    s.gravity([0, 0, -9.81])
    J = [0.08343333333333335, 0.0002, 0.08343333333333335]
    bar1 = s.body(1.0, J, position=[0.0, 0.45464871341284085, 0.2080734182735712],
                  orientation=livens.rotation([1, 0, 0], 0.42920367320510344), name="bar1")
    bar2 = s.body(1.0, J, position=[0.0, 1.20853349887766, 0.8167186443206093],
                  orientation=livens.rotation([1, 0, 0], 0.9292036732051034),
                  velocity=[0.0, -0.40057180777346685, 0.2992360720519783], angular_velocity=[1.0, 0.0, 0.0],
                  frame="space", name="bar2")
    s.revolute(bar1, livens.GROUND, at=[0, 0, 0], axis=[1, 0, 0])
    tip = bar1.position + bar1.rotation @ [0, 0.5, 0]
    s.revolute(bar2, bar1, at=tip, axis=[1, 0, 0])
    m = s.build("dp")
    f = double_pendulum().build("dp")
    assert np.allclose(m.jacobian(), f.jacobian(), atol=1e-14)
    a = livens.simulate(m, "em", 1e-3, 0.1)
    b = livens.simulate(f, "em", 1e-3, 0.1)
    assert np.max(np.abs(a.q - b.q)) < 1e-12
    assert np.max(np.abs(a.energy - b.energy)) < 1e-12
    # the poses of the built model at q0 are the initial ones
    x, R = m.pose(bar2)
    assert np.allclose(x, bar2.position, atol=1e-15) and np.allclose(R, bar2.rotation, atol=1e-15)
    x, R = m.pose(bar1, a.q[-1])
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-12) and abs(np.linalg.norm(x) - 0.5) < 1e-12


def test_a_system_keeps_growing_after_build():
    """A built model keeps its own copy: adding elements after a build does
    not change it."""
    s = livens.System()
    s.gravity([0, 0, -9.81])
    p = s.particle(1, [1, 0, 0])
    s.distance(livens.GROUND, p)          # length: the initial distance, 1
    one = s.build("one")
    q = s.particle(1, [1, 0, -1])
    s.distance(p, q)
    two = s.build("two")
    assert (one.nq, one.nc, two.nq, two.nc) == (3, 1, 6, 2)
    assert np.allclose(one.constraints(), 0) and np.allclose(two.constraints(), 0)
    r = livens.simulate(one, "rattle", 0.01, 1.0)
    assert np.allclose(np.linalg.norm(r.q, axis=1), 1.0, atol=1e-12)


# --------------------------------------------------------------- errors, each with the layer's sentence
def test_unknown_formulation():
    with pytest.raises(livens.UnknownNameError) as e:
        livens.System(formulation="quaternions")
    # the layer's sentence (the list may grow with new formulations)
    assert re.fullmatch(r"unknown formulation \(accepted: directors, r3so3, se3[^)]*\)\.", str(e.value))
    assert e.value.name == "LV_EUNKNOWN"
    assert livens.formulations()[:3] == ["directors", "r3so3", "se3"]


@pytest.mark.parametrize("add,cls,sentence", [
    (lambda s, b, p: s.spherical(7, b), livens.InputError,
     "spherical joint 1: element id 7 is not a particle, body or the ground."),
    (lambda s, b, p: s.revolute(b, b, axis=[1, 0, 0]), livens.InputError,
     "revolute joint 1: joins element 1 to itself."),
    (lambda s, b, p: s.revolute(p, livens.GROUND, axis_a=[1, 0, 0], axis_b=[1, 0, 0]), livens.InputError,
     "revolute joint 1: particle 2 has no axes: a revolute joint needs a rigid body or the ground."),
    (lambda s, b, p: s.spherical(p, b, point_a=[0, 0, 1]), livens.InputError,
     "spherical joint 1: particle 2 has no extent: attach it at X = (0, 0, 0)."),
    (lambda s, b, p: s.universal(b, livens.GROUND, axis_a=[0, 0, 0], axis_b=[1, 0, 0]), livens.InputError,
     "universal joint 1: axis missing, zero or not finite."),
    (lambda s, b, p: s.distance(b, p, length=-1), livens.InputError,
     "distance joint 1: length -1 is not positive and finite."),
    (lambda s, b, p: s.body(-1, [1, 1, 1]), livens.InputError,
     "body 3: mass -1 is not positive and finite."),
    (lambda s, b, p: s.body(1, [1, 1, 1], orientation=[[1, 0, 0], [0, 1, 0], [0, 0, 2]]), livens.InputError,
     "body 3: initial orientation is not a rotation."),
    (lambda s, b, p: s.particle(1, [0, 0, np.nan]), livens.InputError,
     "particle 3: initial position missing or not finite."),
    (lambda s, b, p: s.gravity([0, 0, np.inf]), livens.InputError, "gravity missing or not finite."),
    (lambda s, b, p: s.body_symmetry(p, [0, 0, 1]), livens.InputError,
     r"symmetry \d: element 2 is not a rigid body\."),
    (lambda s, b, p: s.rotation_symmetry([0, 0, 0]), livens.InputError,
     r"symmetry \d: axis missing, zero or not finite\."),
])
def test_what_the_layer_refuses_raises_with_its_sentence(add, cls, sentence):
    s = livens.System()
    b = s.body(1, [1, 1, 1], name="b")
    p = s.particle(1, [0, 0, 1], name="p")
    with pytest.raises(cls) as e:
        add(s, b, p)
    assert type(e.value) is cls
    # the sentence exactly (symmetries are numbered from 0 by the layer,
    # joints from 1: the number is left open there)
    if sentence.startswith("symmetry"):
        assert re.fullmatch(sentence, str(e.value))
    else:
        assert str(e.value) == sentence
    assert e.value.detail == str(e.value)
    # the refused element left nothing behind: the system is still one body
    # (12 director coordinates, 6 constraints) and one particle
    m = s.build()
    assert (m.nq, m.nc, m.nsym) == (15, 6, 0) and np.allclose(m.constraints(), 0, atol=1e-15)


@needs_yaml
def test_the_file_reader_reports_the_same_sentence(tmp_path):
    """The same mistake in a file: the reader's message carries the
    sentence livens.System raises."""
    f = tmp_path / "bad.yaml"
    f.write_text("bodies:\n  - {name: b, mass: 1, inertia: [1, 1, 1]}\n"
                 "particles:\n  - {name: p, mass: 1, position: [0, 0, 1]}\n"
                 "joints:\n  - {type: revolute, a: p, axis_a: [1, 0, 0], b: ground, axis_b: [1, 0, 0]}\n")
    with pytest.raises(livens.InputError) as from_file:
        livens.System.from_file(f)
    s = livens.System()
    s.body(1, [1, 1, 1], name="b")
    s.particle(1, [0, 0, 1], name="p")
    with pytest.raises(livens.InputError) as from_python:
        s.revolute("p", "ground", axis_a=[1, 0, 0], axis_b=[1, 0, 0])
    assert str(from_file.value).endswith(": revolute: " + str(from_python.value))


def test_load_functions_are_checked():
    s = livens.System()
    w = s.body(1.0, [0.1, 0.1, 0.1], name="w")
    with pytest.raises(livens.InputError, match="unknown time function"):
        s.torque(w, [1, 0, 0], function="square")
    with pytest.raises(livens.InputError, match="does not belong"):
        s.torque(w, [1, 0, 0], frequency=2.0)
    with pytest.raises(livens.InputError):  # a ramp that ends before it starts: the C layer's sentence
        s.force(w, [1, 0, 0], function="ramp", start=1.0, end=0.5)


def test_python_side_mistakes():
    s = livens.System()
    b = s.body(1, [1, 1, 1], name="b")
    with pytest.raises(livens.InputError, match=r"^the system has no particle or body\.$"):
        livens.System().build()
    with pytest.raises(livens.UnknownNameError, match="no body or particle is named 'nobody'"):
        s.spherical("nobody", b)
    other = livens.System().particle(1, [0, 0, 0])
    with pytest.raises(livens.InputError, match="belongs to another System"):
        s.spherical(other, b)
    with pytest.raises(livens.InputError, match="either in space"):
        s.spherical(b, livens.GROUND, at=[0, 0, 0], point_a=[0, 0, 0])
    with pytest.raises(livens.InputError, match="needs an axis"):
        s.revolute(b, livens.GROUND)
    with pytest.raises(livens.InputError, match="must have 3 numbers"):
        s.particle(1, [0, 0])
    with pytest.raises(livens.InputError, match="inertia must be"):
        s.body(1, [1, 1])
    with pytest.raises(livens.InputError, match="neither body nor space"):
        s.body(1, [1, 1, 1], frame="world")
    with pytest.raises(livens.InputError, match="without NUL"):
        s.particle(1, [0, 0, 0], name="a\0b")
    with pytest.raises(livens.InputError, match="neither body nor space"):
        s.body(1, [1, 1, 1], frame=["body"])
    with pytest.raises(livens.InputError, match="already the name"):
        s.particle(1, [0, 0, 0], name="b")
    with pytest.raises(livens.InputError, match="not three of x, y, z"):
        livens.cardan("xxy", [0, 0, 0])
    with pytest.raises(livens.InputError, match="must be non-zero"):
        livens.rotation([0, 0, 0], 1.0)
    with pytest.raises(livens.InputError, match="orientation: give exactly one of"):
        s.body(1, [1, 1, 1], orientation={"axis": [1, 0, 0]})
    with pytest.raises(livens.InputError, match="not a multibody model"):
        livens.Model("kapitza").pose(1)  # written by hand, not on the layer
    # nothing above was added: the system is still one body
    assert [e.name for e in s.elements] == ["ground", "b"]


def test_rotation_helpers():
    R = livens.rotation([0, 0, 2], np.pi / 2)
    assert np.allclose(R @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    C = livens.cardan("zxz", [0.3, 0.2, 0.1])
    Z = livens.rotation([0, 0, 1], 0.3) @ livens.rotation([1, 0, 0], 0.2) @ livens.rotation([0, 0, 1], 0.1)
    assert np.allclose(C, Z, atol=1e-15)


def test_every_public_callable_has_a_docstring():
    for obj in (livens.System, livens.Element, livens.rotation, livens.cardan, livens.formulations):
        assert obj.__doc__ and len(obj.__doc__) > 40
    for cls in (livens.System, livens.Element):
        for name, f in vars(cls).items():
            if not name.startswith("_") and callable(getattr(f, "__func__", f)):
                assert getattr(f, "__doc__", None), f"{cls.__name__}.{name}"


def test_doc_example_runs():
    """The System example of doc/python.md, executed as printed: EM keeps
    the energy and the momentum about the vertical, and the tip (body point
    (0, -1, 0)) stays at the origin in the pose of the last step."""
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc", "python.md")
    text = open(doc, encoding="utf-8").read()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    env = {}
    exec(compile(code, "doc/python.md", "exec"), env)
    r, x, R = env["r"], env["x"], env["R"]
    assert r.status == "ok" and len(r) == 1001
    assert r.summary["max_rel_energy_error"] < 1e-12
    assert np.max(np.abs(r.momenta[:, 0] - r.momenta[0, 0])) < 1e-12
    assert np.linalg.norm(x + R @ [0, -1, 0]) < 1e-12 and np.allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.linalg.norm(x - [0, 1, 0]) > 0.1      # it moved


def test_em_projected_keeps_the_spin():
    """EM on the heavy top in directors: the paper's midpoint constraint
    gradients keep the vertical momentum (the orthonormality rows are
    invariant under it) and the spin only to O(h^2) (they are merely
    equivariant under it); opts={"momentum": "projected"} keeps both and
    the energy to 1e-12 relative."""
    s = heavy_top()
    mid = livens.simulate(s, "em", 1e-3, 0.5)
    pro = livens.simulate(s, "em", 1e-3, 0.5, opts={"momentum": "projected"})
    rel = lambda r, k: np.max(np.abs(r.momenta[:, k] - r.momenta[0, k])) / abs(r.momenta[0, k])
    assert rel(mid, 0) < 1e-12 and rel(mid, 1) > 1e-8
    assert rel(pro, 0) < 1e-12 and rel(pro, 1) < 1e-12
    assert pro.summary["max_rel_energy_error"] < 1e-12
    with pytest.raises(livens.InputError, match="momentum = sideways is not accepted"):
        livens.simulate(s, "em", 1e-3, 0.01, opts={"momentum": "sideways"})


def test_simulate_and_studies_take_a_system():
    """simulate and compare take a System as it stands (built on the spot)."""
    s = double_spherical_pendulum()
    r = livens.simulate(s, "rattle", 1e-3, 0.05)
    assert np.array_equal(r.q, livens.simulate(s.build(), "rattle", 1e-3, 0.05).q)
    d = livens.compare(s, ["em", "rattle"], step=1e-3, t_end=0.05)
    assert d["em"]["status"] == "ok" and d["em"]["max_rel_energy_error"] < 1e-12


@needs_yaml
@pytest.mark.parametrize("path,build,schemes", CASES, ids=[c[0] for c in CASES])
def test_to_yaml_reads_back_the_same_model(tmp_path, path, build, schemes):
    """System.to_yaml writes a system file that System.from_file reads back
    into the same model: the trajectory bit for bit."""
    s = build()
    f = tmp_path / "saved.yaml"
    s.to_yaml(f)
    back = livens.System.from_file(f)
    m = s.build("saved")
    assert back.name == "saved" and back.nq == m.nq and back.nc == m.nc and back.nsym == m.nsym
    same_run(livens.simulate(back, schemes[0], 1e-3, 0.05), livens.simulate(m, schemes[0], 1e-3, 0.05))


@needs_yaml
def test_to_yaml_quotes_names_and_the_program_runs_it(tmp_path, program):
    s = livens.System()
    s.gravity([0, 0, -9.81])
    # legal names (letters, digits, _ and -) that YAML would read as
    # something else unless quoted
    odd = "null"
    with pytest.raises(livens.InputError, match="letters, digits"):
        s.particle(1, [1, 0, 0], name='bob: "x"\n# - [y]')
    s.particle(2, [0, 1, 0], name="1e3")
    s.distance("ground", "1e3")
    p = s.particle(1, [1, 0, 0], velocity=[0, 1, 0], name=odd)
    s.distance("ground", p)
    s.damper(livens.GROUND, odd, 0.1)
    f = tmp_path / "odd.yaml"
    s.to_yaml(f, name="odd one")
    back = livens.System.from_file(f)
    assert back.name == "odd one" and (back.nq, back.nc) == (6, 2)
    same_run(livens.simulate(back, "genalpha", 1e-2, 0.2), livens.simulate(s, "genalpha", 1e-2, 0.2))
    from conftest import run_program
    rc, out, err = run_program(program, "run", str(f), "--scheme", "genalpha", "--step", "0.01", "--t-end", "0.2")
    assert rc == 0, err
    assert out.splitlines()[-2].split()[0] == "genalpha" and "ok" in out.splitlines()[-2].split()


# --------------------------------------------------------------- planar particles and joint scales
@pytest.mark.parametrize("scheme", ["genalpha", "em", "vi-a", "rattle", "bliedf2"])
@pytest.mark.parametrize("params", [{}, {"m": 2.5, "l": 1.7, "x0": -0.15, "vsign": -1}])
def test_python_planar_pendulum_is_the_built_in_pendulum2d(scheme, params):
    """The planar pendulum built here (a planar particle on an unscaled rod,
    gravity along -y, pendulum2d's initial values) is the built-in
    pendulum2d: q, v and lambda over 200 steps to 1e-12 (in fact bit for
    bit: the same calls with the same numbers)."""
    m, l, g0 = params.get("m", 1.0), params.get("l", 1.0), 9.81
    x0, vs = params.get("x0", 0.2), params.get("vsign", 1)
    y0 = -np.sqrt(l * l - x0 * x0)
    sp = np.sqrt(2.0 * ((0.5 * m - m * g0 * l) - m * g0 * y0) / m)
    s = livens.System()
    bob = s.planar_particle(m, [x0, y0], velocity=[vs * sp * (-y0) / l, vs * sp * x0 / l])
    assert bob.kind == "planar particle" and np.array_equal(bob.position, [x0, y0, 0.0])
    s.distance(bob, livens.GROUND, length=l)
    s.gravity([0, -g0, 0])
    mine = s.build("mine")
    ref = livens.Model("pendulum2d", **params)
    assert (mine.nq, mine.nv, mine.nc) == (ref.nq, ref.nv, ref.nc) == (2, 2, 1)
    assert np.array_equal(mine.q0, ref.q0) and np.array_equal(mine.v0, ref.v0)
    a = livens.simulate(mine, scheme, 1e-2, 2.0)
    b = livens.simulate(ref, scheme, 1e-2, 2.0)
    assert a.status == b.status == "ok" and len(a) == 201
    for f in ("q", "v", "lam"):
        x, y = getattr(a, f), getattr(b, f)
        assert np.max(np.abs(x - y)) <= 1e-12 * np.max(np.abs(y)), f
    assert np.max(np.abs(a.q[-1] - a.q[0])) > 1e-2  # it swung


def test_joint_scale_changes_the_multiplier_not_the_motion():
    """distance(..., scale=1/l^2): the row scale/2 (|q|^2 - l^2), so G is
    G(scale 1) / l^2, the multiplier l^2 times the unscaled one, the motion
    the same (to 1e-12 under RATTLE); the file entry keeps the scale."""
    l = 1.7
    def pend(scale):
        s = livens.System()
        bob = s.planar_particle(1.0, [0.3, -np.sqrt(l * l - 0.09)], velocity=[0.5, 0.5 * 0.3 / np.sqrt(l * l - 0.09)])
        s.distance(bob, "ground", length=l, scale=scale)
        s.gravity([0, -9.81, 0])
        return s
    s1, s2 = pend(None), pend(1.0 / l**2)
    m1, m2 = s1.build(), s2.build()
    assert np.allclose(m2.jacobian(), m1.jacobian() / l**2, rtol=1e-15, atol=0)
    a, b = livens.simulate(m1, "rattle", 1e-2, 1.0), livens.simulate(m2, "rattle", 1e-2, 1.0)
    assert np.max(np.abs(a.q - b.q)) <= 1e-12
    assert np.max(np.abs(a.lam[1:] - b.lam[1:] / l**2)) <= 1e-12 * np.max(np.abs(a.lam))
    assert np.max(np.abs(a.lam)) > 1.0
    assert "scale: " + repr(1.0 / l**2) in s2.to_yaml() and "scale" not in s1.to_yaml()
    with pytest.raises(livens.InputError, match="scale"):
        s1.distance(0, 1, length=1.0, scale=0.0)
    assert s1.build().nc == 1  # the refused joint was not added


def test_planar_particle_refusals():
    s = livens.System()
    with pytest.raises(livens.InputError, match="2 numbers"):
        s.planar_particle(1.0, [1, 0, 0])
    p = s.planar_particle(1.0, [1, 0], name="p")
    with pytest.raises(livens.InputError, match="x-y plane"):
        s.spherical(p, livens.GROUND)
    s.distance(p, livens.GROUND)
    s.translation_symmetry([0, 0, 1])
    with pytest.raises(livens.InputError, match="out of the x-y plane"):
        s.build()
