"""Multibody systems built element by element in Python (issue 16): the
multibody layer of include/livens/lv_mbs.h with the vocabulary of the YAML
system files (doc/mbs.md), and System.from_file for those files.

    s = livens.System(formulation="directors")
    s.gravity([0, 0, -9.81])
    top = s.body(mass=15, inertia=[0.234375, 0.46875, 0.234375], position=[0, 1, 0],
                 angular_velocity=[0, 150, -4.61538])
    s.spherical(top, livens.GROUND, at=[0, 0, 0])
    model = s.build("heavy-top")          # a livens.Model for livens.simulate

Every element goes straight to the C layer (the same calls the file reader
makes, with the same numbers, so a system built here and the same system
read from its file are the same model bit for bit); what the layer refuses
raises the LivensError subclass of its status with lv_mbs_error's sentence.

Adding an element type of the C layer takes one cdef line in
python/livens_build.py and one method here that converts its arguments with
``_ref`` (an element), ``_vec`` (3 numbers) and ``float`` and hands them to
``self._add(lib.lv_mbs_add_..., ..., record=(SECTION, {file keys}))`` (the
entry :meth:`System.to_yaml` writes); see :meth:`System.spring`.
"""

import re
import json
import os

import numpy as np

from ._livens import ffi, lib
from ._errors import InputError, UnknownNameError, make_error


def _s(p):
    return ffi.string(p).decode() if p != ffi.NULL else None


def _cstr(value, what):
    value = str(value)
    if "\0" in value:
        raise InputError(f"{what} contains a NUL character.", status=lib.LV_EINPUT)
    return value


def _array(x, shape, what):
    """``x`` as a C-contiguous float64 array of ``shape`` (InputError if it
    is not one); values are checked by the C layer."""
    try:
        a = np.array(x, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise InputError(f"{what} must be numbers, got {x!r}.", status=lib.LV_EINPUT) from None
    if a.shape != shape:
        want = " x ".join(str(n) for n in shape)
        raise InputError(f"{what} must have {want} numbers, got shape {a.shape}.", status=lib.LV_EINPUT)
    return a


def _num(x, what):
    try:
        if isinstance(x, (bool, np.bool_)):
            raise TypeError
        return float(x)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {x!r}.", status=lib.LV_EINPUT) from None


def rotation(axis, angle):
    """The rotation matrix (3 x 3 numpy array) by ``angle`` radians about
    ``axis`` (any non-zero length), as lv_mbs_rotation_axis_angle computes
    it (the same numbers as a system file's ``{axis: ..., angle: ...}``)."""
    ax = _array(axis, (3,), "axis")
    R = np.zeros(9)
    if lib.lv_mbs_rotation_axis_angle(ffi.from_buffer("double[]", ax), _num(angle, "angle"),
                                      ffi.from_buffer("double[]", R)):
        raise InputError(f"the rotation axis must be non-zero and finite and the angle finite "
                         f"(got axis {list(ax)} and angle {angle!r}).", status=lib.LV_EINPUT)
    return R.reshape(3, 3)


def cardan(sequence, angles):
    """The rotation matrix (3 x 3 numpy array) of Cardan / Tait-Bryan (or
    proper Euler) angles: R = R_seq[0](angles[0]) R_seq[1](angles[1])
    R_seq[2](angles[2]) for ``sequence`` three of x, y, z with consecutive
    ones distinct ("xyz", "zxz", ...), as lv_mbs_rotation_cardan computes
    it (a system file's ``{sequence: ..., angles: ...}``)."""
    ang = _array(angles, (3,), "angles")
    seq = _cstr(sequence, "the axis sequence")
    R = np.zeros(9)
    if lib.lv_mbs_rotation_cardan(seq.encode(), ffi.from_buffer("double[]", ang), ffi.from_buffer("double[]", R)):
        raise InputError(f"'{seq}' is not three of x, y, z with consecutive ones distinct, or an angle is "
                         "not finite.", status=lib.LV_EINPUT)
    return R.reshape(3, 3)


class Element:
    """A particle, rigid body or the ground (:data:`livens.GROUND`) of a
    :class:`System`, as returned by :meth:`System.body` and
    :meth:`System.particle`: pass it to joints, springs, dampers and body
    symmetries.

    Attributes: ``id`` (the layer's id: 0 the ground, then 1, 2, ... in the
    order added), ``kind`` ("ground", "particle", "planar particle" or
    "body"), ``name``, ``position`` and ``rotation`` (the initial centre of
    mass, (x, y, 0) for a planar particle, and rotation matrix, space =
    rotation @ body).
    """

    __slots__ = ("id", "kind", "name", "position", "rotation", "_system")

    def __init__(self, id, kind, name, position, rotation, system):
        self.id = id
        self.kind = kind
        self.name = name
        self.position = position
        self.rotation = rotation
        self._system = system

    def __index__(self):
        return self.id

    def __repr__(self):
        return f"<livens.Element {self.kind} {self.name!r} (id {self.id})>"

    def local(self, point):
        """Body-frame coordinates of the spatial point ``point`` in the
        initial pose: rotation^T (point - position) (the point itself for
        the ground)."""
        p = _array(point, (3,), "point")
        return self.rotation.T @ (p - self.position)

    def local_axis(self, axis):
        """Body-frame components of the spatial direction ``axis`` in the
        initial pose: rotation^T axis."""
        return self.rotation.T @ _array(axis, (3,), "axis")


#: The ground (inertial frame): element id 0 of every System.
GROUND = Element(lib.LV_MBS_GROUND, "ground", "ground", np.zeros(3), np.eye(3), None)
GROUND.position.flags.writeable = False
GROUND.rotation.flags.writeable = False

_FRAMES = {"body": lib.LV_MBS_BODY_FRAME, "space": lib.LV_MBS_SPACE_FRAME}


def formulations():
    """The names of the multibody formulations ("directors", "r3so3", "se3")."""
    f = lib.lv_mbs_formulations()
    out = []
    i = 0
    while f[i] != ffi.NULL:
        out.append(_s(f[i]))
        i += 1
    return out


class System:
    """A multibody system described element by element, as in the C layer
    (lv_mbs.h) and with the element vocabulary of the YAML system files
    (doc/mbs.md): particles, rigid bodies, gravity, springs, dampers,
    spherical / revolute / universal / cylindrical / prismatic / fixed /
    distance joints and symmetries; :meth:`build` turns it into a
    :class:`livens.Model` for :func:`livens.simulate`.

    ``formulation`` is "directors" (default; every scheme), "r3so3" or
    "se3" (the Lie group schemes).  Points and axes given as ``point_a``,
    ``axis_a``, ... are in the element's body frame (in space for the
    ground), as in the files; ``at=`` and ``axis=`` give a joint's point
    and axis in space, converted with the initial poses.  Elements are
    referred to by the :class:`Element` returned when adding them, by
    name, or by id; :data:`livens.GROUND` (or "ground") is the ground.

    Raises UnknownNameError with the layer's sentence for an unknown
    formulation.  A System is not safe to change from two threads at once;
    the models it builds are independent of it and of each other.
    """

    def __init__(self, formulation="directors"):
        """An empty system in ``formulation`` ("directors", "r3so3", "se3";
        None: "directors")."""
        p = ffi.new("lv_mbs **")
        form = ffi.NULL if formulation is None else _cstr(formulation, "formulation").encode()
        rc = lib.lv_mbs_new(p, form)
        if p[0] != ffi.NULL:
            self._ptr = ffi.gc(p[0], lib.lv_mbs_free)
        if rc:
            why = _s(lib.lv_mbs_error(p[0])) if p[0] != ffi.NULL else "out of memory"
            raise make_error(rc, f"{why}.")
        self.formulation = "directors" if formulation is None else formulation
        self._elements = [GROUND]
        self._names = {"ground": GROUND}
        self._file = {}      # the system file's sections, for to_yaml

    def __repr__(self):
        kinds = [e.kind for e in self._elements[1:]]
        return (f"<livens.System {self.formulation}: {kinds.count('body')} bodies, "
                f"{kinds.count('particle') + kinds.count('planar particle')} particles>")

    @property
    def elements(self):
        """The elements in id order (the ground first)."""
        return list(self._elements)

    def __getitem__(self, name):
        """The element named ``name`` (KeyError if none)."""
        return self._names[name]

    # ---------------------------------------------------------------- helpers
    def _scale(self, scale, record):
        """The rows of the joint just added times ``scale``
        (lv_mbs_scale_last_joint; None: 1, nothing done), kept in its
        file entry ``record``."""
        if scale is None:
            return
        f = _num(scale, "scale")
        self._add(lib.lv_mbs_scale_last_joint, f)
        record["scale"] = f

    def _add(self, fn, *args, record=None):
        """Call the C layer's ``fn(system, *args)``; raise the LivensError of
        a failure with lv_mbs_error's sentence.  On success ``record``, a
        pair (section of the system file, dict of its keys), is kept for
        :meth:`to_yaml`."""
        rc = fn(self._ptr, *args)
        if rc:
            raise make_error(rc, f"{_s(lib.lv_mbs_error(self._ptr))}.")
        if record is not None:
            self._record(*record)

    def _record(self, section, entry):
        """Keep an element added for :meth:`to_yaml`: numbers as floats,
        vectors as lists, NULL (not given) as None."""
        def plain(v):
            if isinstance(v, ffi.CData):
                return None if v == ffi.NULL else [float(x) for x in v]
            if isinstance(v, np.ndarray):
                return [float(x) for x in v]
            if isinstance(v, dict):
                return {k: plain(x) for k, x in v.items()}
            return v
        if section == "gravity":
            self._file["gravity"] = plain(entry)
        else:
            self._file.setdefault(section, []).append({k: plain(v) for k, v in entry.items()})

    def _ref(self, ref):
        """The Element of ``ref``: an Element of this system, the ground, a
        name or an id (an id that is no element is handed to the C layer as
        it is, which says so)."""
        if isinstance(ref, Element):
            if ref is GROUND or ref._system is self:
                return ref
            raise InputError(f"{ref!r} belongs to another System.", status=lib.LV_EINPUT)
        if isinstance(ref, str):
            if ref not in self._names:
                raise UnknownNameError(f"no body or particle is named '{ref}'.", status=lib.LV_EUNKNOWN)
            return self._names[ref]
        if isinstance(ref, (int, np.integer)) and not isinstance(ref, (bool, np.bool_)):
            i = int(ref)
            if 0 <= i < len(self._elements):
                return self._elements[i]
            if not -2**31 <= i < 2**31:
                raise InputError(f"element id {i} is out of range.", status=lib.LV_EINPUT)
            return Element(i, "unknown", str(i), np.zeros(3), np.eye(3), self)
        raise InputError(f"an element must be an Element, a name or an id, got {ref!r}.", status=lib.LV_EINPUT)

    @staticmethod
    def _vec(x, what, default=None):
        """3 numbers for C (``default`` if x is None; None stays NULL)."""
        if x is None:
            if default is None:
                return ffi.NULL
            x = default
        return ffi.new("double[3]", [float(v) for v in _array(x, (3,), what)])

    def _new_element(self, kind, name, pid, position, rotation):
        if name is None:
            name = f"{kind}{pid[0]}"  # the C layer's default name of this id
        else:  # the model carries it too: it heads the element's CSV columns
            self._add(lib.lv_mbs_set_name, pid[0], name.encode())
        e = Element(pid[0], kind, name, position, rotation, self)
        self._elements.append(e)
        self._names[e.name] = e
        return e

    def _check_name(self, name):
        if name is None:
            return
        if not isinstance(name, str) or not name or "\0" in name:
            raise InputError(f"an element's name must be a non-empty string without NUL, got {name!r}.",
                             status=lib.LV_EINPUT)
        if name == "ground":
            raise InputError("'ground' is the inertial frame's name.", status=lib.LV_EINPUT)
        # lv_mbs_set_name's rule, checked before the element is added so a
        # refused name leaves the system unchanged
        if len(name) >= lib.LV_MBS_NAME_MAX or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise InputError(f"an element's name is 1 to {lib.LV_MBS_NAME_MAX - 1} letters, digits, _ and - "
                             f"(it heads CSV columns), got {name!r}.", status=lib.LV_EINPUT)
        if re.fullmatch(r"(body|particle)[1-9][0-9]*", name):
            raise InputError(f"'{name}' has the form of a default name (bodyN, particleN).", status=lib.LV_EINPUT)
        if name in self._names:
            raise InputError(f"'{name}' is already the name of an element.", status=lib.LV_EINPUT)

    # ---------------------------------------------------------------- elements
    def particle(self, mass, position, velocity=None, name=None):
        """Add a particle of mass ``mass`` > 0 at ``position`` with
        ``velocity`` (default zero); returns its :class:`Element` (named
        ``name``, default "particleN")."""
        self._check_name(name)
        x = _array(position, (3,), "position")
        pid = ffi.new("int *")
        m, v = _num(mass, "mass"), self._vec(velocity, "velocity")
        self._add(lib.lv_mbs_add_particle, m, ffi.from_buffer("double[]", x), v, pid)
        e = self._new_element("particle", name, pid, x.copy(), np.eye(3))
        self._record("particles", {"name": e.name, "mass": m, "position": x, "velocity": v})
        return e

    def planar_particle(self, mass, position, velocity=None, name=None):
        """Add a planar particle of mass ``mass`` > 0: two coordinates (x,
        y), moving in the system's x-y plane (its point is (x, y, 0)), at
        ``position`` with ``velocity`` (2 numbers each; velocity default
        zero); returns its :class:`Element` (named ``name``, default
        "particleN").  It takes every joint and force a particle takes
        (distance and spherical joints, springs, dampers, gravity, forces);
        the layer refuses a spherical joint whose two ends cannot leave the
        plane and, at :meth:`build`, a symmetry that would move it out of
        the plane.  A system file's ``planar: true``."""
        self._check_name(name)
        x = _array(position, (2,), "position")
        v = ffi.NULL if velocity is None else ffi.new("double[2]", [float(c) for c in _array(velocity, (2,), "velocity")])
        pid = ffi.new("int *")
        m = _num(mass, "mass")
        self._add(lib.lv_mbs_add_planar_particle, m, ffi.from_buffer("double[]", x), v, pid)
        e = self._new_element("particle", name, pid, np.array([x[0], x[1], 0.0]), np.eye(3))
        e.kind = "planar particle"
        self._record("particles", {"name": e.name, "planar": True, "mass": m, "position": x, "velocity": v})
        return e

    def body(self, mass, inertia, position=(0.0, 0.0, 0.0), orientation=None, velocity=None,
             angular_velocity=None, frame="body", name=None):
        """Add a rigid body; returns its :class:`Element`.

        ``mass`` > 0; ``inertia`` about the centre of mass in body axes: the
        3 principal moments or the 3 x 3 tensor (9 numbers, row-major);
        ``position`` the centre of mass; ``orientation`` (default identity)
        a 3 x 3 rotation matrix (e.g. :func:`livens.rotation` or
        :func:`livens.cardan`) or, as in the files, ``{"axis": ..., "angle":
        ...}``, ``{"sequence": "xyz", "angles": ...}`` or ``{"matrix": 9
        numbers}``; ``velocity`` of the centre of mass and
        ``angular_velocity`` (default zero), the latter in ``frame`` "body"
        (components along the body axes, default) or "space"."""
        self._check_name(name)
        try:
            J = np.array(inertia, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"inertia must be numbers, got {inertia!r}.", status=lib.LV_EINPUT) from None
        if J.shape not in ((3,), (9,), (3, 3)):
            raise InputError("inertia must be the 3 principal moments or the 3 x 3 tensor (9 numbers), "
                             f"got shape {J.shape}.", status=lib.LV_EINPUT)
        Jd, Jf = (J, None) if J.shape == (3,) else (None, np.ascontiguousarray(J.reshape(9)))
        x = _array(position, (3,), "position")
        R = self._orientation(orientation)
        if not isinstance(frame, str) or frame not in _FRAMES:
            raise InputError(f"frame '{frame}' is neither body nor space.", status=lib.LV_EINPUT)
        pid = ffi.new("int *")
        m, v, w = _num(mass, "mass"), self._vec(velocity, "velocity"), self._vec(angular_velocity, "angular_velocity")
        self._add(lib.lv_mbs_add_body, m,
                  ffi.NULL if Jf is None else ffi.from_buffer("double[]", Jf),
                  ffi.NULL if Jd is None else ffi.from_buffer("double[]", Jd),
                  ffi.from_buffer("double[]", x),
                  ffi.NULL if R is None else ffi.from_buffer("double[]", R),
                  v, w, _FRAMES[frame], pid)
        e = self._new_element("body", name, pid, x.copy(), np.eye(3) if R is None else R.reshape(3, 3).copy())
        self._record("bodies", {
            "name": e.name, "mass": m, "inertia": Jd if Jf is None else Jf, "position": x,
            "orientation": None if R is None else {"matrix": R}, "velocity": v, "angular_velocity": w,
            "frame": frame})
        return e

    @staticmethod
    def _orientation(o):
        """A rotation as 9 row-major numbers, or None (identity)."""
        if o is None:
            return None
        if isinstance(o, dict):
            keys = set(o)
            if keys == {"axis", "angle"}:
                return rotation(o["axis"], o["angle"]).reshape(9)
            if keys == {"sequence", "angles"}:
                return cardan(o["sequence"], o["angles"]).reshape(9)
            if keys == {"matrix"}:
                return _array(o["matrix"], (9,), "orientation matrix")
            raise InputError("orientation: give exactly one of {'matrix': [9 numbers, row-major]}, "
                             "{'axis': [3], 'angle': RAD}, {'sequence': 'xyz', 'angles': [3 RAD]}, "
                             "or a 3 x 3 matrix.", status=lib.LV_EINPUT)
        return _array(o, (3, 3), "orientation (a 3 x 3 rotation matrix)").reshape(9)

    def gravity(self, g):
        """Uniform gravitational acceleration ``g`` (e.g. [0, 0, -9.81]) on
        every particle and body: V = -sum m g . x_cm."""
        gv = self._vec(g, "gravity")
        self._add(lib.lv_mbs_set_gravity, gv, record=("gravity", gv))

    def spring(self, a, b, stiffness, rest_length=0.0, point_a=None, point_b=None):
        """Linear spring V = 1/2 k (|x_a - x_b| - L0)^2 of stiffness
        ``stiffness`` >= 0 and rest length ``rest_length`` >= 0 between point
        ``point_a`` of ``a`` and ``point_b`` of ``b`` (body frames, default
        the centres of mass; :meth:`Element.local` converts a spatial
        point)."""
        ea, eb = self._ref(a), self._ref(b)
        Xa, Xb = self._vec(point_a, "point_a", (0, 0, 0)), self._vec(point_b, "point_b", (0, 0, 0))
        k, L0 = _num(stiffness, "stiffness"), _num(rest_length, "rest_length")
        self._add(lib.lv_mbs_add_spring, ea.id, Xa, eb.id, Xb, k, L0,
                  record=("springs", {"a": ea.name, "point_a": Xa, "b": eb.name, "point_b": Xb,
                                      "stiffness": k, "rest_length": L0}))

    def torsional_spring(self, a, b, stiffness, axis_a, axis_b, rest_angle=0.0):
        """Torsional spring V = 1/2 k (theta - theta0)^2 about parallel axes
        ``axis_a`` of ``a`` and ``axis_b`` of ``b`` (body frames), theta the
        rotation of b relative to a about them counted from the initial
        state, theta0 = ``rest_angle`` (rad).  Conservative (every scheme
        runs it; EM keeps the energy); it holds less than half a turn either
        side of its rest angle (doc/mbs.md, Forces)."""
        ea, eb = self._ref(a), self._ref(b)
        Aa, Ab = self._vec(axis_a, "axis_a"), self._vec(axis_b, "axis_b")
        k, th = _num(stiffness, "stiffness"), _num(rest_angle, "rest_angle")
        self._add(lib.lv_mbs_add_torsional_spring, ea.id, Aa, eb.id, Ab, k, th,
                  record=("torsional_springs", {"a": ea.name, "axis_a": Aa, "b": eb.name, "axis_b": Ab,
                                                "stiffness": k, "rest_angle": th}))

    def torsional_damper(self, a, b, coefficient, axis_a, axis_b):
        """Torsional damper: the torque -c theta' about parallel axes
        ``axis_a`` of ``a`` and ``axis_b`` of ``b``.  Non-conservative:
        RATTLE, VI and EM refuse a model with one; genalpha and BLieDF run
        it."""
        ea, eb = self._ref(a), self._ref(b)
        Aa, Ab = self._vec(axis_a, "axis_a"), self._vec(axis_b, "axis_b")
        c = _num(coefficient, "coefficient")
        self._add(lib.lv_mbs_add_torsional_damper, ea.id, Aa, eb.id, Ab, c,
                  record=("torsional_dampers", {"a": ea.name, "axis_a": Aa, "b": eb.name, "axis_b": Ab,
                                                "coefficient": c}))

    _FUNCTIONS = {"constant": ("LV_MBS_CONSTANT", ()), "sine": ("LV_MBS_SINE", ("frequency", "phase")),
                  "step": ("LV_MBS_STEP", ("start",)), "ramp": ("LV_MBS_RAMP", ("start", "end"))}

    def _profile(self, value, function, frequency, phase, start, end):
        """An lv_mbs_profile and the file keys of its time function."""
        if function not in self._FUNCTIONS:
            raise InputError(f"unknown time function {function!r} (constant, sine, step, ramp).",
                             status=lib.LV_EINPUT)
        kind, keys = self._FUNCTIONS[function]
        given = {"frequency": frequency, "phase": phase, "start": start, "end": end}
        for k, x in given.items():
            if x is not None and k not in keys:
                raise InputError(f"{k} does not belong to the time function '{function}'.", status=lib.LV_EINPUT)
        p = ffi.new("lv_mbs_profile *")
        p.kind = getattr(lib, kind)
        p.value = [float(v) for v in _array(value, (3,), "value")]
        entry = {"value": [float(v) for v in p.value], "function": function}
        if function == "sine":
            p.frequency = _num(frequency, "frequency")
            p.phase = _num(0.0 if phase is None else phase, "phase")
            entry.update(frequency=p.frequency, phase=p.phase)
        if function in ("step", "ramp"):
            p.t0 = _num(start, "start")
            entry["start"] = p.t0
        if function == "ramp":
            p.t1 = _num(end, "end")
            entry["end"] = p.t1
        return p, entry

    def force(self, body, value, point=None, function="constant", frequency=None, phase=None, start=None,
              end=None):
        """Applied force (space frame) at body point ``point`` (body frame,
        default the centre of mass; a particle: its position) as a time
        function: ``value`` (constant), ``value`` sin(2 pi ``frequency`` t +
        ``phase``) (sine), ``value`` from ``start`` on (step), or a ramp from
        0 at ``start`` to ``value`` at ``end``.  Non-conservative: genalpha
        and BLieDF run it, RATTLE, VI and EM refuse it."""
        e = self._ref(body)
        X = self._vec(point, "point", (0, 0, 0))
        p, entry = self._profile(value, function, frequency, phase, start, end)
        self._add(lib.lv_mbs_add_force_profile, e.id, X, p,
                  record=("forces", dict({"body": e.name, "point": X}, **entry)))

    def torque(self, body, value, function="constant", frequency=None, phase=None, start=None, end=None):
        """Applied torque (space frame) on rigid body ``body`` with the time
        functions of :meth:`force`."""
        e = self._ref(body)
        p, entry = self._profile(value, function, frequency, phase, start, end)
        self._add(lib.lv_mbs_add_torque_profile, e.id, p, record=("torques", dict({"body": e.name}, **entry)))

    def damper(self, a, b, coefficient, point_a=None, point_b=None):
        """Linear damper of coefficient ``coefficient`` >= 0 between point
        ``point_a`` of ``a`` and ``point_b`` of ``b``: the force -c (e . r') e
        along r = x_a - x_b.  Non-conservative: RATTLE, VI and EM refuse a
        model with one; genalpha and BLieDF run it."""
        ea, eb = self._ref(a), self._ref(b)
        Xa, Xb = self._vec(point_a, "point_a", (0, 0, 0)), self._vec(point_b, "point_b", (0, 0, 0))
        c = _num(coefficient, "coefficient")
        self._add(lib.lv_mbs_add_damper, ea.id, Xa, eb.id, Xb, c,
                  record=("dampers", {"a": ea.name, "point_a": Xa, "b": eb.name, "point_b": Xb,
                                      "coefficient": c}))

    # ---------------------------------------------------------------- joints
    def _points(self, ea, eb, point_a, point_b, at):
        if at is not None:
            if point_a is not None or point_b is not None:
                raise InputError("give the joint's point either in space (at=) or per element "
                                 "(point_a=, point_b=), not both.", status=lib.LV_EINPUT)
            return self._vec(ea.local(at), "at"), self._vec(eb.local(at), "at")
        return self._vec(point_a, "point_a", (0, 0, 0)), self._vec(point_b, "point_b", (0, 0, 0))

    def _axes(self, ea, eb, axis_a, axis_b, axis):
        if axis is not None:
            if axis_a is not None or axis_b is not None:
                raise InputError("give the joint's axis either in space (axis=) or per element "
                                 "(axis_a=, axis_b=), not both.", status=lib.LV_EINPUT)
            return self._vec(ea.local_axis(axis), "axis"), self._vec(eb.local_axis(axis), "axis")
        if axis_a is None or axis_b is None:
            raise InputError("this joint needs an axis: axis= (in space) or axis_a= and axis_b= "
                             "(body frames).", status=lib.LV_EINPUT)
        return self._vec(axis_a, "axis_a"), self._vec(axis_b, "axis_b")

    def _joint(self, fn, args, entry, scale):
        """Add a joint, scale its rows (``scale``), record its file entry
        (a bad scale is refused before the joint is added: the system stays
        as it was)."""
        if scale is not None:
            f = _num(scale, "scale")
            if not (np.isfinite(f) and f != 0.0):
                raise InputError(f"a joint's scale must be finite and non-zero, got {scale!r}.",
                                 status=lib.LV_EINPUT)
        self._add(fn, *args)
        self._scale(scale, entry)
        self._record("joints", entry)

    def _axis_joint(self, fn, kind, a, b, axis, point_a, point_b, axis_a, axis_b, at, scale=None):
        ea, eb = self._ref(a), self._ref(b)
        Xa, Xb = self._points(ea, eb, point_a, point_b, at)
        Aa, Ab = self._axes(ea, eb, axis_a, axis_b, axis)
        self._joint(fn, (ea.id, Xa, Aa, eb.id, Xb, Ab),
                    {"type": kind, "a": ea.name, "point_a": Xa, "axis_a": Aa, "b": eb.name, "point_b": Xb,
                     "axis_b": Ab}, scale)

    # Every joint takes ``scale`` (default None: 1): its constraint rows
    # times that finite non-zero factor (lv_mbs_scale_last_joint; a system
    # file's ``scale:``).  The motion is the same; the joint's multipliers
    # come out divided by it (e.g. 1/L for a rod of length L: G rows of unit
    # length, or 1/L^2: a dimensionless row).

    def spherical(self, a, b, point_a=None, point_b=None, at=None, scale=None):
        """Spherical joint: point ``point_a`` of ``a`` coincides with
        ``point_b`` of ``b`` (body frames, default the centres of mass), or
        both are the spatial point ``at`` in the initial pose (3
        constraints); ``scale`` multiplies its rows."""
        ea, eb = self._ref(a), self._ref(b)
        Xa, Xb = self._points(ea, eb, point_a, point_b, at)
        self._joint(lib.lv_mbs_add_spherical, (ea.id, Xa, eb.id, Xb),
                    {"type": "spherical", "a": ea.name, "point_a": Xa, "b": eb.name, "point_b": Xb}, scale)

    def revolute(self, a, b, axis=None, point_a=None, point_b=None, axis_a=None, axis_b=None, at=None, scale=None):
        """Revolute joint: spherical at (point_a, point_b) or ``at``, and
        ``axis_a`` of ``a`` parallel to ``axis_b`` of ``b`` (body frames), or
        both the spatial ``axis`` in the initial pose (5 constraints);
        ``scale`` multiplies its rows."""
        self._axis_joint(lib.lv_mbs_add_revolute, "revolute", a, b, axis, point_a, point_b, axis_a, axis_b, at,
                         scale)

    def universal(self, a, b, axis_a, axis_b, point_a=None, point_b=None, at=None, scale=None):
        """Universal (Cardan) joint: spherical at (point_a, point_b) or
        ``at``, and the cross axes ``axis_a`` of ``a`` and ``axis_b`` of ``b``
        (body frames; :meth:`Element.local_axis` converts a spatial one) kept
        perpendicular (4 constraints); ``scale`` multiplies its rows."""
        self._axis_joint(lib.lv_mbs_add_universal, "universal", a, b, None, point_a, point_b, axis_a, axis_b, at,
                         scale)

    def cylindrical(self, a, b, axis=None, point_a=None, point_b=None, axis_a=None, axis_b=None, at=None,
                    scale=None):
        """Cylindrical joint: point ``point_a`` of ``a`` stays on the line
        through ``point_b`` along ``axis_b`` of ``b``, and ``axis_a`` stays
        parallel to it (4 constraints); ``at`` and ``axis`` give point and
        axis in space instead; ``scale`` multiplies its rows."""
        self._axis_joint(lib.lv_mbs_add_cylindrical, "cylindrical", a, b, axis, point_a, point_b, axis_a, axis_b,
                         at, scale)

    def prismatic(self, a, b, axis=None, point_a=None, point_b=None, axis_a=None, axis_b=None, at=None,
                  scale=None):
        """Prismatic joint: cylindrical, and the rotation about the axis
        locked at its initial value (5 constraints); ``scale`` multiplies
        its rows."""
        self._axis_joint(lib.lv_mbs_add_prismatic, "prismatic", a, b, axis, point_a, point_b, axis_a, axis_b, at,
                         scale)

    def fixed(self, a, b, point_a=None, point_b=None, at=None, scale=None):
        """Fixed joint: spherical at (point_a, point_b) or ``at``, and the
        relative orientation locked at its initial value (6 constraints;
        rigid bodies only); ``scale`` multiplies its rows."""
        ea, eb = self._ref(a), self._ref(b)
        Xa, Xb = self._points(ea, eb, point_a, point_b, at)
        self._joint(lib.lv_mbs_add_fixed, (ea.id, Xa, eb.id, Xb),
                    {"type": "fixed", "a": ea.name, "point_a": Xa, "b": eb.name, "point_b": Xb}, scale)

    def distance(self, a, b, length=None, point_a=None, point_b=None, scale=None):
        """Rigid distance (massless rod) |x_a(point_a) - x_b(point_b)| =
        ``length`` > 0 (default: the initial distance of the two points),
        the row scale/2 (|x_a - x_b|^2 - length^2) = 0 (``scale`` default
        1; as lv_mbs_add_distance_scaled)."""
        ea, eb = self._ref(a), self._ref(b)
        Xa, Xb = self._vec(point_a, "point_a", (0, 0, 0)), self._vec(point_b, "point_b", (0, 0, 0))
        if length is None:
            xa = ea.position + ea.rotation @ np.array(list(Xa))
            xb = eb.position + eb.rotation @ np.array(list(Xb))
            length = float(np.linalg.norm(xa - xb))
        L = _num(length, "length")
        self._joint(lib.lv_mbs_add_distance, (ea.id, Xa, eb.id, Xb, L),
                    {"type": "distance", "a": ea.name, "point_a": Xa, "b": eb.name, "point_b": Xb, "length": L},
                    scale)

    # ---------------------------------------------------------------- symmetries
    def rotation_symmetry(self, axis, point=None):
        """Declare the rotation of the whole system about the spatial
        ``axis`` through ``point`` (default the origin) a symmetry: its
        momentum map (the angular momentum about that axis) is reported."""
        ax, pt = self._vec(axis, "axis"), self._vec(point, "point", (0, 0, 0))
        self._add(lib.lv_mbs_add_rotation_symmetry, ax, pt,
                  record=("symmetries", {"type": "rotation", "axis": ax, "point": pt}))

    def translation_symmetry(self, direction):
        """Declare the translation of the whole system along ``direction`` a
        symmetry (the linear momentum along it)."""
        d = self._vec(direction, "direction")
        self._add(lib.lv_mbs_add_translation_symmetry, d,
                  record=("symmetries", {"type": "translation", "direction": d}))

    def body_symmetry(self, body, axis, point=None):
        """Declare the rotation of ``body`` alone about its body-fixed
        ``axis`` through its body point ``point`` (default the centre of
        mass) a symmetry, e.g. the spin of a symmetric top."""
        e, ax, pt = self._ref(body), self._vec(axis, "axis"), self._vec(point, "point", (0, 0, 0))
        self._add(lib.lv_mbs_add_body_symmetry, e.id, ax, pt,
                  record=("symmetries", {"type": "body", "body": e.name, "axis": ax, "point": pt}))

    # ---------------------------------------------------------------- build
    def build(self, name="system"):
        """The :class:`livens.Model` named ``name`` of the system as
        described so far (the model keeps its own copy: the System may be
        changed and built again).  Raises InputError with the layer's
        sentence (e.g. a system with no element)."""
        from ._core import Model
        p = ffi.new("lv_model **")
        self._add(lib.lv_mbs_build, _cstr(name, "the model name").encode(), p)
        m = Model.__new__(Model)
        m._init_from_ptr(p[0])
        m.params = {"formulation": self.formulation}
        return m

    def to_yaml(self, path=None, name=None):
        """The system as a YAML system file (doc/mbs.md) that
        :meth:`from_file` and the livens program read back into the same
        model: returned as text, and written to ``path`` if given.  Numbers
        are written as Python's repr (the shortest text that reads back to the
        same double);
        orientations as matrices, points and axes in body frames.  The file
        lists bodies before particles: a system that added a particle before
        a body is read back with the coordinates in that order (the same
        motion)."""
        lines = [f"# written by livens.System.to_yaml (livens {_s(lib.lv_version())})"]
        if name is not None:
            lines.append(f"name: {_yaml_value(str(name))}")
        lines.append(f"formulation: {_yaml_value(self.formulation)}")
        if "gravity" in self._file:
            lines.append(f"gravity: {_yaml_value(self._file['gravity'])}")
        for section in ("bodies", "particles", "joints", "springs", "dampers", "torsional_springs",
                        "torsional_dampers", "forces", "torques", "symmetries"):
            if section in self._file:
                lines.append(f"{section}:")
                for entry in self._file[section]:
                    items = ", ".join(f"{k}: {_yaml_value(v)}" for k, v in entry.items() if v is not None)
                    lines.append(f"  - {{{items}}}")
        text = "\n".join(lines) + "\n"
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    @staticmethod
    def from_file(path, formulation=None):
        """Read the YAML system file ``path`` (format in doc/mbs.md) and
        build its model: a :class:`livens.Model` for :func:`livens.simulate`.
        ``formulation`` ("directors", "r3so3", "se3") overrides the file's.
        Raises the LivensError subclass of the status with the reader's
        sentence (file:line: key: reason): InputError for anything wrong in
        the file, LivensIOError when it cannot be opened, UnknownNameError
        for a formulation."""
        from ._core import Model
        why = ffi.new("char[]", 1024)
        p = ffi.new("lv_model **")
        fpath = os.fsencode(_cstr(os.fsdecode(path), "path"))
        form = ffi.NULL if formulation is None else _cstr(formulation, "formulation").encode()
        rc = lib.lv_mbs_load(fpath, form, p, why, 1024)
        if rc:
            raise make_error(rc, ffi.string(why).decode(errors="replace") + ".")
        m = Model.__new__(Model)
        m._init_from_ptr(p[0])
        m.params = {} if formulation is None else {"formulation": formulation}
        return m


def _yaml_value(v):
    """A YAML flow value: a double-quoted string (JSON escapes), a number
    (repr: reads back exactly), a list of numbers, or a flow mapping."""
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_yaml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (float, int)):
        return repr(float(v))
    return "[" + ", ".join(repr(float(x)) for x in v) + "]"
