"""Failures of the fake CRI runtime, each tied to the gRPC status code a real runtime returns.

The runtime itself stays free of grpc so that the in-process kubelet can use it directly; the
server turns ``code`` into a ``grpc.StatusCode`` by name. Messages follow containerd's wording
because callers (kubelet, kruise-daemon) surface them verbatim in events and conditions.
"""


class CriError(Exception):
    """Base class; ``code`` is the name of the gRPC status code the server answers with."""

    code = "UNKNOWN"


class NotFoundError(CriError):
    """An id or image reference that the runtime does not know."""

    code = "NOT_FOUND"


class AlreadyExistsError(CriError):
    """A sandbox or container name (with its attempt) that is already reserved."""

    code = "ALREADY_EXISTS"


class FailedPreconditionError(CriError):
    """An operation that the object's current state does not allow (e.g. start a running container)."""

    code = "FAILED_PRECONDITION"


class InvalidArgumentError(CriError):
    """A request missing a required field or carrying a malformed value."""

    code = "INVALID_ARGUMENT"


class ImagePullError(CriError):
    """A configured pull failure; containerd reports an unresolvable reference as NOT_FOUND."""

    code = "NOT_FOUND"


class ExecFailedError(CriError):
    """An exec whose command could not be started in the container (containerd: ``Unknown``)."""

    code = "UNKNOWN"


class DeadlineExceededError(CriError):
    """An exec that overran its timeout; its process was killed."""

    code = "DEADLINE_EXCEEDED"


_BY_CODE: dict[str, type[CriError]] = {
    "NOT_FOUND": NotFoundError,
    "ALREADY_EXISTS": AlreadyExistsError,
    "FAILED_PRECONDITION": FailedPreconditionError,
    "INVALID_ARGUMENT": InvalidArgumentError,
    "DEADLINE_EXCEEDED": DeadlineExceededError,
}


def error_for(code: str, message: str) -> CriError:
    """The ``CriError`` a real runtime's gRPC status ``code`` (by name) stands for, so a CRI client
    raises what the fake raises; codes without a class of their own keep their name in ``code``."""
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls(message)
    error = CriError(message)
    error.code = code
    return error
