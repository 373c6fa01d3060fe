"""Typed Kubernetes API errors built from a metav1.Status body.

Callers branch on *what* went wrong (`except NotFound`), the same way client-go code calls
`apierrors.IsNotFound`. The class is chosen from the Status `reason` first and the HTTP code
second, as `k8s.io/apimachinery/pkg/api/errors` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass(frozen=True)
class StatusCause:
    """One entry of `status.details.causes`: which field broke which rule."""

    type: str = ""
    message: str = ""
    field: str = ""


class ApiError(Exception):
    """Any non-2xx answer from the apiserver (or a transport failure, code 0)."""

    code: int = 0
    reason: str = ""

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        reason: str | None = None,
        status: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason
        self.status: dict[str, Any] = status or {}
        self.headers: dict[str, str] = headers or {}

    @property
    def details(self) -> dict[str, Any]:
        return self.status.get("details") or {}

    @property
    def causes(self) -> list[StatusCause]:
        return [
            StatusCause(type=c.get("reason", ""), message=c.get("message", ""), field=c.get("field", ""))
            for c in self.details.get("causes") or []
        ]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, message={self.message!r})"


class BadRequest(ApiError):
    code, reason = 400, "BadRequest"


class Unauthorized(ApiError):
    code, reason = 401, "Unauthorized"


class Forbidden(ApiError):
    code, reason = 403, "Forbidden"


class NotFound(ApiError):
    code, reason = 404, "NotFound"


class MethodNotAllowed(ApiError):
    code, reason = 405, "MethodNotAllowed"


class AlreadyExists(ApiError):
    code, reason = 409, "AlreadyExists"


class Conflict(ApiError):
    code, reason = 409, "Conflict"


class Gone(ApiError):
    """410: the requested resourceVersion is older than the server keeps; relist."""

    code, reason = 410, "Gone"


class Invalid(ApiError):
    """422: the object failed validation; `causes` name each field and rule."""

    code, reason = 422, "Invalid"


class UnsupportedMediaType(ApiError):
    code, reason = 415, "UnsupportedMediaType"


class TooManyRequests(ApiError):
    code, reason = 429, "TooManyRequests"

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked us to wait: `details.retryAfterSeconds`, else the header."""
        seconds = self.details.get("retryAfterSeconds")
        if seconds is None:
            header = self.headers.get("Retry-After") or self.headers.get("retry-after")
            if header is not None:
                try:
                    seconds = int(header)
                except ValueError:
                    return None
        return float(seconds) if seconds is not None else None


class InternalError(ApiError):
    code, reason = 500, "InternalError"


class ServiceUnavailable(ApiError):
    code, reason = 503, "ServiceUnavailable"


class ServerTimeout(ApiError):
    code, reason = 504, "ServerTimeout"


@dataclass
class _Table:
    by_reason: dict[str, type[ApiError]] = field(default_factory=dict)
    by_code: dict[int, type[ApiError]] = field(default_factory=dict)


_TABLE = _Table(
    by_reason={
        "NotFound": NotFound,
        "AlreadyExists": AlreadyExists,
        "Conflict": Conflict,
        "Invalid": Invalid,
        "Gone": Gone,
        "Expired": Gone,
        "Forbidden": Forbidden,
        "Unauthorized": Unauthorized,
        "TooManyRequests": TooManyRequests,
        "ServerTimeout": ServerTimeout,
        "Timeout": ServerTimeout,
        "InternalError": InternalError,
        "BadRequest": BadRequest,
        "MethodNotAllowed": MethodNotAllowed,
        "UnsupportedMediaType": UnsupportedMediaType,
        "ServiceUnavailable": ServiceUnavailable,
    },
    by_code={
        400: BadRequest,
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
        405: MethodNotAllowed,
        409: Conflict,
        410: Gone,
        415: UnsupportedMediaType,
        422: Invalid,
        429: TooManyRequests,
        500: InternalError,
        503: ServiceUnavailable,
        504: ServerTimeout,
    },
)


def error_from_status(
    code: int, status: dict[str, Any] | None, headers: dict[str, str] | None = None
) -> ApiError:
    """Build the most specific error for an HTTP code and its (possibly missing) Status body."""
    status = status if isinstance(status, dict) else {}
    reason = status.get("reason") or ""
    cls = _TABLE.by_reason.get(reason) or _TABLE.by_code.get(code) or ApiError
    # A 409 whose reason is missing is a Conflict; AlreadyExists always says so.
    message = status.get("message") or f"the server responded with HTTP {code}"
    return cls(message, code=code or cls.code, reason=reason or cls.reason, status=status, headers=headers)


def error_from_response(code: int, body: bytes, headers: dict[str, str] | None = None) -> ApiError:
    """Like `error_from_status`, tolerating bodies that are not JSON (proxies, load balancers)."""
    status: dict[str, Any] | None = None
    if body:
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("kind") == "Status":
            status = parsed
        elif parsed is None:
            status = {"message": body.decode("utf-8", "replace").strip()[:1000]}
    return error_from_status(code, status, headers)


def log_fields(err: ApiError) -> dict[str, Any]:
    """What one log line about an API error carries: the server's text, its reason and HTTP code.

    An API error is the apiserver's answer (a Conflict from optimistic concurrency, a NotFound
    after a delete, a throttle) or a dropped connection, not a bug in the caller: those three
    fields say all there is to say, and a traceback would only bury them. Unexpected exceptions
    keep theirs.
    """
    return {"error": err.message, "reason": err.reason, "code": err.code}


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, NotFound)


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, Conflict)


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, AlreadyExists)


NAMESPACE_TERMINATING = "NamespaceTerminating"


def has_status_cause(err: BaseException, cause: str) -> bool:
    """apierrors.HasStatusCause: whether the server named `cause` among the error's causes."""
    return isinstance(err, ApiError) and any(c.type == cause for c in err.causes)


def is_namespace_terminating(err: BaseException) -> bool:
    """A create refused because its namespace is being deleted: an expected outcome, not a fault.

    Kubernetes' own controllers and client-go's event broadcaster skip it quietly (nothing can be
    created there any more, so retrying only adds load); an RBAC 403 carries no such cause.
    """
    return has_status_cause(err, NAMESPACE_TERMINATING)


class TransportError(ApiError):
    """No HTTP answer at all: connection refused or reset, TLS failure, or a client-side timeout."""

    code, reason = 0, "TransportError"
