"""Exceptions of the livens package: one class per library status."""

from ._livens import ffi, lib


class LivensError(Exception):
    """A livens call failed.

    Attributes: ``status`` (the library's negative status code), ``name``
    (its symbolic name, e.g. ``"LV_ENEWTON"``), ``detail`` (the one-sentence
    reason with the figures, as the program prints it) and ``result`` (for a
    run that failed after it started: a :class:`livens.Result` with every
    accepted step, else ``None``).
    """

    status = None

    def __init__(self, detail, status=None, result=None):
        super().__init__(detail)
        if status is not None:
            self.status = status
        self.detail = detail
        self.result = result

    @property
    def name(self):
        """Symbolic name of the status, e.g. ``"LV_ENEWTON"``."""
        return _name(self.status) if self.status is not None else None


def _name(status):
    return ffi.string(lib.lv_status_name(status)).decode()


def _strerror(status):
    return ffi.string(lib.lv_strerror(status)).decode()


class InputError(LivensError, ValueError):
    """LV_EINPUT: an invalid argument, parameter or option value."""
    status = lib.LV_EINPUT


class OutOfMemoryError(LivensError, MemoryError):
    """LV_ENOMEM: an allocation failed."""
    status = lib.LV_ENOMEM


class SingularError(LivensError):
    """LV_ESINGULAR: a Newton or saddle-point matrix is singular."""
    status = lib.LV_ESINGULAR


class NewtonError(LivensError):
    """LV_ENEWTON: Newton did not converge within its iteration limit."""
    status = lib.LV_ENEWTON


class NewtonDivergedError(LivensError):
    """LV_EDIVERGE: the Newton residual grew (the iteration diverged)."""
    status = lib.LV_EDIVERGE


class CallbackError(LivensError):
    """LV_ECALLBACK: a model callback failed (a Python model's exception is
    chained as ``__cause__``)."""
    status = lib.LV_ECALLBACK


class NonFiniteError(LivensError):
    """LV_ENONFINITE: a callback produced NaN or Inf."""
    status = lib.LV_ENONFINITE


class InconsistentError(LivensError):
    """LV_EINCONSISTENT: initial values violate the constraints."""
    status = lib.LV_EINCONSISTENT


class UnknownNameError(LivensError, LookupError):
    """LV_EUNKNOWN: an unknown model, scheme, parameter or option name."""
    status = lib.LV_EUNKNOWN

    def __str__(self):  # LookupError would quote the message like a key
        return self.detail


class NotSupportedError(LivensError):
    """LV_ENOTIMPL: a feature this model, space or scheme does not have."""
    status = lib.LV_ENOTIMPL


class LinearSolverError(LivensError):
    """LV_ELINSOL: a linear-solver back-end failure other than singularity."""
    status = lib.LV_ELINSOL


class StepTooSmallError(LivensError):
    """LV_ESTEPMIN: the step fell below the minimum after halving."""
    status = lib.LV_ESTEPMIN


class LivensIOError(LivensError, OSError):
    """LV_EIO: a file could not be opened or written."""
    status = lib.LV_EIO


class PatternError(LivensError):
    """LV_EPATTERN: an assembly wrote outside the fixed sparsity pattern."""
    status = lib.LV_EPATTERN


class StoppedError(LivensError):
    """LV_ESTOPPED: the run stopped on request."""
    status = lib.LV_ESTOPPED


class DivergedError(LivensError):
    """LV_EDIVERGED: the divergence guard stopped a blown-up run."""
    status = lib.LV_EDIVERGED


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) during a run: a KeyboardInterrupt whose ``result``
    holds every step accepted before it (``result.status == "LV_ESTOPPED"``)."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


_BY_STATUS = {cls.status: cls for cls in (
    InputError, OutOfMemoryError, SingularError, NewtonError, NewtonDivergedError,
    CallbackError, NonFiniteError, InconsistentError, UnknownNameError,
    NotSupportedError, LinearSolverError, StepTooSmallError, LivensIOError,
    PatternError, StoppedError, DivergedError)}


def error_class(status):
    """The exception class of a library status (LivensError if unknown)."""
    return _BY_STATUS.get(status, LivensError)


def make_error(status, detail, result=None):
    """An exception instance of the class for ``status``."""
    cls = error_class(status)
    err = cls(detail, status=status, result=result)
    return err
