#!/usr/bin/env python3
"""Benchmark of the Python package (issue 16); not a test.

1. A built-in model through livens.simulate against the same run through the
   livens program: CPU seconds of each (the program's start-up, measured by
   a one-step run, subtracted), ratio Python / program.
   Also a system file through the program against the same system built
   element by element with livens.System.  Target: ratio <= 1.05.
2. A model written in Python (Model.from_functions, exact derivatives)
   against its C twin (the built-in pendulum3d): steps per second.

Run from the build tree:
    PYTHONPATH=<staged package> LIVENS_PROGRAM=./livens python3 pybench.py [--out PREFIX]
(tests/test_python.sh shows how the package is staged).  Writes every figure
to PREFIX.csv (one row per measurement) and PREFIX.json (default PREFIX:
pybench) besides printing the tables.
"""
import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

import livens

PROGRAM = os.environ.get("LIVENS_PROGRAM", "./livens")
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
SYSTEMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "systems")
TARGET = 1.05
RECORDS = []


def child_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def program_cpu(args):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    c0 = child_cpu()
    subprocess.run([PROGRAM, *args], check=True, capture_output=True, env=env)
    return child_cpu() - c0


def python_cpu(call):
    c0 = time.process_time()
    call()
    return time.process_time() - c0


def builtin_overhead():
    print("1. built-in model: livens.simulate vs the livens program (CPU s, best of %d)" % REPEAT)
    print("   program: summary only / writing every row as CSV to /dev/null;")
    print("   python: every row into numpy arrays / every 100th row")
    print("%-34s %10s %10s %10s %10s %8s %8s" % ("run", "program", "prog+CSV", "python", "py/100",
                                                 "py/prog", "py100/prog"))
    cases = [("four-particle", "vi-a", 0.01, 200.0), ("heavy-top", "genalpha", 1e-3, 100.0),
             ("pendulum3d", "rattle", 1e-3, 500.0),
             (os.path.join(SYSTEMS, "heavy_top.yaml"), "em", 1e-3, 20.0)]
    for model, scheme, h, t_end in cases:
        args = ["run", model, "--scheme", scheme, "--step", str(h)]
        if model.endswith(".yaml"):
            label = "system heavy_top.yaml"
            pymodel = heavy_top_system()    # the same system, built element by element
        else:
            label = model
            pymodel = model
        base = min(program_cpu(args + ["--t-end", str(h)]) for _ in range(REPEAT))
        prog = min(program_cpu(args + ["--t-end", str(t_end)]) for _ in range(REPEAT)) - base
        csv_ = min(program_cpu(args + ["--t-end", str(t_end), "--out", "/dev/null"]) for _ in range(REPEAT)) - base
        py = min(python_cpu(lambda: livens.simulate(pymodel, scheme, h, t_end)) for _ in range(REPEAT))
        py100 = min(python_cpu(lambda: livens.simulate(pymodel, scheme, h, t_end, every=100))
                    for _ in range(REPEAT))
        steps = round(t_end / h)
        print("%-34s %10.3f %10.3f %10.3f %10.3f %8.3f %8.3f" % (
            f"{label} {scheme} {steps} st", prog, csv_, py, py100, py / prog, py100 / prog))
        RECORDS.append({"part": "builtin_overhead", "model": label, "scheme": scheme, "step": h,
                        "steps": steps, "program_cpu_s": prog, "program_csv_cpu_s": csv_, "python_cpu_s": py,
                        "python_every100_cpu_s": py100, "ratio_python_program": py / prog,
                        "ratio_python_every100_program": py100 / prog,
                        "ratio_python_program_csv": py / csv_, "target": TARGET})
    worst = max(r["ratio_python_every100_program"] for r in RECORDS if r["part"] == "builtin_overhead")
    worst_all = max(r["ratio_python_program_csv"] for r in RECORDS if r["part"] == "builtin_overhead")
    print("   largest ratio python (every 100th row) / program (summary): %.3f; python (every row) / "
          "program (every row as CSV): %.3f; target <= %.2f" % (worst, worst_all, TARGET))


def heavy_top_system():
    """examples/systems/heavy_top.yaml built element by element."""
    s = livens.System("directors")
    s.gravity([0, 0, -9.81])
    top = s.body(mass=15, inertia=[0.234375, 0.46875, 0.234375], position=[0, 1, 0],
                 velocity=[4.61538, -0.0, 0], angular_velocity=[0, 150, -4.61538])
    s.spherical(top, livens.GROUND, point_a=[0, -1, 0])
    s.rotation_symmetry([0, 0, 1], [0, 0, 0])
    s.body_symmetry(top, [0, 1, 0], [0, -1, 0])
    return s.build("heavy_top")


def python_model():
    print("\n2. pendulum written in Python vs its C twin pendulum3d (steps/s)")
    m = 1.0
    G = 9.81
    py = livens.Model.from_functions(
        [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], m * np.eye(3), potential=lambda q: m * G * q[2],
        gradient=lambda q: np.array([0.0, 0.0, m * G]), hessian=lambda q: np.zeros((3, 3)),
        constraints=lambda q: np.array([0.5 * (q @ q - 1.0)]), jacobian=lambda q: q[None, :],
        constraint_hessian=lambda q, gam: gam[0] * np.eye(3), constraint_curvature=lambda q, w: w[None, :],
        symmetries=[lambda q: np.array([-q[1], q[0], 0.0])])
    print("%-10s %12s %12s %8s" % ("scheme", "C", "Python", "C/Py"))
    for scheme in ("rattle", "em", "vi-a", "genalpha"):
        c = max(livens.simulate("pendulum3d", scheme, 0.01, 200.0).summary["steps_per_second"]
                for _ in range(REPEAT))
        p = max(livens.simulate(py, scheme, 0.01, 10.0).summary["steps_per_second"] for _ in range(REPEAT))
        print("%-10s %12.4g %12.4g %8.1f" % (scheme, c, p, c / p))
        RECORDS.append({"part": "python_model", "model": "pendulum (from_functions) vs pendulum3d",
                        "scheme": scheme, "step": 0.01, "c_steps_per_s": c, "python_steps_per_s": p,
                        "ratio_c_python": c / p})


def write(prefix):
    meta = {"livens": livens.__version__, "python": platform.python_version(), "repeat": REPEAT,
            "load_average": os.getloadavg(), "cpu_count": os.cpu_count(),
            "note": "CPU seconds (best of repeat); the program's start-up (a one-step run) subtracted"}
    with open(prefix + ".json", "w") as f:
        json.dump({"meta": meta, "records": RECORDS}, f, indent=1)
    keys = []
    for r in RECORDS:
        keys += [k for k in r if k not in keys]
    with open(prefix + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(RECORDS)
    print(f"\nwritten: {prefix}.csv, {prefix}.json")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="pybench", help="prefix of the CSV and JSON files (default: pybench)")
    opts = ap.parse_args()
    livens.set_blas_threads(1)
    print("load average %.2f %.2f %.2f on %d cores" % (*os.getloadavg(), os.cpu_count()))
    builtin_overhead()
    python_model()
    write(opts.out)
    sys.exit(0)
