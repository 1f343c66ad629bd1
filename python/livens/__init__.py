"""livens: structure-preserving time integration of constrained mechanical
systems, from Python.

    import livens
    r = livens.simulate("pendulum3d", "rattle", step=0.01, t_end=10)
    print(r.table())               # the program's summary table
    r.energy, r.q, r.lam           # numpy arrays, one row per step

The C library runs every built-in model with the GIL released; models
written in Python (:meth:`Model.from_functions`) call back into Python.
Bound with cffi in API mode: the C compiler supplies every struct layout.
"""

from ._livens import ffi as _ffi, lib as _lib
from ._errors import (LivensError, InputError, OutOfMemoryError, SingularError, NewtonError,
                      NewtonDivergedError, CallbackError, NonFiniteError, InconsistentError,
                      UnknownNameError, NotSupportedError, LinearSolverError, StepTooSmallError,
                      LivensIOError, PatternError, StoppedError, DivergedError, Interrupted,
                      error_class)
from ._core import (Model, Result, ModelInfo, SchemeInfo, Parameter, models, schemes, simulate,
                    format_table, end_time)
from ._studies import compare, converge, check
from ._mbs import System, Element, GROUND, rotation, cardan, formulations
from ._plot import plot_convergence

__version__ = _ffi.string(_lib.lv_version()).decode()


def set_blas_threads(n):
    """Set the thread count of the BLAS/LAPACK library (OpenBLAS) for the
    whole process (numpy shares it when it uses the same OpenBLAS).  The
    livens program uses 1: the dense systems of multibody models are small.
    Raises NotSupportedError when the BLAS in use has no such control."""
    rc = _lib.lv_blas_set_threads(int(n))
    if rc:
        raise error_class(rc)("this BLAS has no thread-count control.", status=rc)


__all__ = [
    "LivensError", "InputError", "OutOfMemoryError", "SingularError", "NewtonError",
    "NewtonDivergedError", "CallbackError", "NonFiniteError", "InconsistentError",
    "UnknownNameError", "NotSupportedError", "LinearSolverError", "StepTooSmallError",
    "LivensIOError", "PatternError", "StoppedError", "DivergedError", "Interrupted",
    "Model", "System", "Element", "GROUND", "rotation", "cardan", "formulations", "Result",
    "ModelInfo", "SchemeInfo", "Parameter", "models", "schemes", "simulate",
    "format_table", "end_time", "compare", "converge", "check", "plot_convergence", "set_blas_threads",
]
