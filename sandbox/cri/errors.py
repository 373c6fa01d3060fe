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
