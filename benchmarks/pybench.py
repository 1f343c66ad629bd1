#!/usr/bin/env python3
"""Benchmark of the Python package (issue 16); not a test.

1. A built-in model through livens.simulate against the same run through the
   livens program: CPU seconds of each (the program's start-up, measured by
   a one-step run, subtracted), ratio Python / program.
2. A model written in Python (Model.from_functions, exact derivatives)
   against its C twin (the built-in pendulum3d): steps per second.

Run from the build tree:
    PYTHONPATH=<staged package> LIVENS_PROGRAM=./livens python3 pybench.py
(tests/test_python.sh shows how the package is staged).
"""
import os
import resource
import subprocess
import sys
import time

import numpy as np

import livens

PROGRAM = os.environ.get("LIVENS_PROGRAM", "./livens")
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))


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
    print("%-28s %10s %10s %10s %10s %8s %8s" % ("run", "program", "prog+CSV", "python", "py/100",
                                                 "py/prog", "py100/prog"))
    cases = [("four-particle", "vi-a", 0.01, 200.0), ("heavy-top", "genalpha", 1e-3, 30.0),
             ("pendulum3d", "rattle", 1e-3, 500.0)]
    for model, scheme, h, t_end in cases:
        args = ["run", model, "--scheme", scheme, "--step", str(h)]
        base = min(program_cpu(args + ["--t-end", str(h)]) for _ in range(REPEAT))
        prog = min(program_cpu(args + ["--t-end", str(t_end)]) for _ in range(REPEAT)) - base
        csv = min(program_cpu(args + ["--t-end", str(t_end), "--out", "/dev/null"]) for _ in range(REPEAT)) - base
        py = min(python_cpu(lambda: livens.simulate(model, scheme, h, t_end)) for _ in range(REPEAT))
        py100 = min(python_cpu(lambda: livens.simulate(model, scheme, h, t_end, every=100))
                    for _ in range(REPEAT))
        print("%-28s %10.3f %10.3f %10.3f %10.3f %8.3f %8.3f" % (
            f"{model} {scheme} {round(t_end / h)} st", prog, csv, py, py100, py / prog, py100 / prog))


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


if __name__ == "__main__":
    livens.set_blas_threads(1)
    builtin_overhead()
    python_model()
    sys.exit(0)
