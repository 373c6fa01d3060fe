import orjson
import pytest

from kruise.kube import errors


def status(code: int, reason: str, message: str = "m", **details) -> dict:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason}
    body["message"] = message
    if details:
        body["details"] = details
    return body


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (404, "NotFound", errors.NotFound),
        (409, "AlreadyExists", errors.AlreadyExists),
        (409, "Conflict", errors.Conflict),
        (409, "", errors.Conflict),
        (422, "Invalid", errors.Invalid),
        (410, "Expired", errors.Gone),
        (410, "Gone", errors.Gone),
        (403, "Forbidden", errors.Forbidden),
        (401, "Unauthorized", errors.Unauthorized),
        (429, "TooManyRequests", errors.TooManyRequests),
        (504, "Timeout", errors.ServerTimeout),
        (500, "InternalError", errors.InternalError),
        (400, "BadRequest", errors.BadRequest),
        (415, "UnsupportedMediaType", errors.UnsupportedMediaType),
        (418, "", errors.ApiError),
    ],
)
def test_error_class_from_status(code, reason, cls):
    err = errors.error_from_status(code, status(code, reason))
    assert type(err) is cls
    assert err.code == code
    assert isinstance(err, errors.ApiError)


def test_invalid_carries_causes():
    body = status(
        422,
        "Invalid",
        'CloneSet.apps.kruise.io "x" is invalid: spec.replicas: Invalid value: -1: must be >= 0',
        causes=[{"reason": "FieldValueInvalid", "message": "must be >= 0", "field": "spec.replicas"}],
    )
    err = errors.error_from_response(422, orjson.dumps(body))
    assert isinstance(err, errors.Invalid)
    assert err.causes == [errors.StatusCause("FieldValueInvalid", "must be >= 0", "spec.replicas")]
    assert "spec.replicas" in str(err)


def test_retry_after_from_details_or_header():
    err = errors.error_from_status(429, status(429, "TooManyRequests", retryAfterSeconds=3))
    assert err.retry_after == 3.0
    err = errors.error_from_status(429, None, {"Retry-After": "7"})
    assert isinstance(err, errors.TooManyRequests) and err.retry_after == 7.0
    assert errors.error_from_status(429, None, {"Retry-After": "soon"}).retry_after is None


def test_non_json_body_kept_as_message():
    err = errors.error_from_response(503, b"upstream connect error")
    assert isinstance(err, errors.ServiceUnavailable)
    assert err.message == "upstream connect error"
    assert errors.error_from_response(404, b"").message == "the server responded with HTTP 404"


def test_predicates():
    assert errors.is_not_found(errors.NotFound("x"))
    assert errors.is_conflict(errors.Conflict("x"))
    assert errors.is_already_exists(errors.AlreadyExists("x"))
    assert not errors.is_conflict(errors.AlreadyExists("x"))
