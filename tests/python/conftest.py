"""pytest setup of the livens Python tests (run by tests/test_python.sh)."""
import os
import subprocess

import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.fixture(scope="session")
def program():
    """Path of the livens program of the same build (LIVENS_PROGRAM)."""
    p = os.environ.get("LIVENS_PROGRAM")
    if not p or not os.access(p, os.X_OK):
        pytest.skip("LIVENS_PROGRAM does not name the livens program")
    return p


def run_program(program, *args, cwd=None):
    """Run the program; returns (exit status, stdout, stderr)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([program, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr
