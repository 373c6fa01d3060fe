"""metav1.Status errors, raised anywhere in the pipeline and rendered once by the server.

Reasons, codes and message shapes follow k8s.io/apimachinery/pkg/api/errors, because clients
(kubectl, client-go, kruise.kube) branch on `reason` and show `message` verbatim.
"""

from __future__ import annotations

from typing import Any

from kruise.sandbox.apiserver.jsonfmt import go_value


class StatusError(Exception):
    """A failed request: carries the HTTP code and the Status body the apiserver would send."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _qualified(group: str, plural: str) -> str:
    return f"{plural}.{group}" if group else plural


def not_found(group: str, plural: str, name: str) -> StatusError:
    return StatusError(
        404,
        "NotFound",
        f'{_qualified(group, plural)} "{name}" not found',
        {"name": name, "group": group, "kind": plural},
    )


def already_exists(group: str, plural: str, name: str) -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{_qualified(group, plural)} "{name}" already exists',
        {"name": name, "group": group, "kind": plural},
    )


def conflict(group: str, plural: str, name: str, why: str) -> StatusError:
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(group, plural)} "{name}": {why}',
        {"name": name, "group": group, "kind": plural},
    )


def stale(group: str, plural: str, name: str) -> StatusError:
    return conflict(
        group,
        plural,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    )


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden_terminating(plural: str, group: str, name: str, namespace: str) -> StatusError:
    return StatusError(
        403,
        "Forbidden",
        f'{_qualified(group, plural)} "{name}" is forbidden: unable to create new content in namespace '
        f"{namespace} because it is being terminated",
        {
            "name": name,
            "group": group,
            "kind": plural,
            "causes": [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        },
    )


def invalid(group: str, kind: str, name: str, causes: list[dict[str, str]]) -> StatusError:
    """422 with one cause per field error; the message joins them like field.ErrorList.ToAggregate."""
    texts = [c["message"] if not c.get("field") else f"{c['field']}: {c['message']}" for c in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    return StatusError(
        422,
        "Invalid",
        f'{qualified} "{name}" is invalid: {joined}',
        {"name": name, "group": group, "kind": kind, "causes": causes},
    )


def field_error(
    kind: str, field: str, value: Any = None, detail: str = "", *, show_value: bool = True
) -> dict[str, str]:
    """One cause. `kind` is the FieldValueType reason (FieldValueInvalid, FieldValueRequired, ...)."""
    if kind == "FieldValueRequired":
        message = "Required value" + (f": {detail}" if detail else "")
    elif kind == "FieldValueNotSupported":
        message = f"Unsupported value: {go_value(value)}" + (f": {detail}" if detail else "")
    elif kind == "FieldValueForbidden":
        message = "Forbidden" + (f": {detail}" if detail else "")
    elif kind == "FieldValueDuplicate":
        message = f"Duplicate value: {go_value(value)}"
    elif kind == "FieldValueTypeInvalid":
        message = f"Invalid value: {go_value(value)}: {detail}"
    elif kind == "FieldValueTooLong":
        message = f"Too long: {detail}"
    else:
        message = f"Invalid value: {go_value(value)}: {detail}" if show_value else f"Invalid value: {detail}"
    return {"reason": kind, "message": message, "field": field}
