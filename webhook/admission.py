"""AdmissionReview decoding and response building — the contract between the apiserver and handlers.

Handlers never see HTTP: they take an `AdmissionRequest` and return a `Decision`. Mutating handlers
return the whole mutated object and the JSONPatch is computed here, so no handler hand-writes patch
paths (the classic source of escaping bugs with `/` and `~` in label keys).
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from kruise.webhook.patch import make_patch

ADMISSION_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class GroupVersionKind(_Wire):
    group: str = ""
    version: str
    kind: str


class GroupVersionResource(_Wire):
    group: str = ""
    version: str
    resource: str


class AdmissionRequest(_Wire):
    """The `request` of an AdmissionReview (admission.k8s.io/v1 and v1beta1 share this shape)."""

    uid: str = Field(min_length=1)
    kind: GroupVersionKind
    resource: GroupVersionResource
    sub_resource: str = ""
    name: str = ""
    namespace: str = ""
    operation: Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
    user_info: dict[str, Any] = Field(default_factory=dict)
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False
    options: dict[str, Any] | None = None


class AdmissionReview(_Wire):
    api_version: Literal["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]
    kind: Literal["AdmissionReview"]
    request: AdmissionRequest


@dataclass(frozen=True)
class Decision:
    """What a handler decided: allow, deny with an HTTP-like code, or allow with a mutated object."""

    allowed: bool
    code: int = 200
    message: str = ""
    reason: str = ""
    mutated: dict[str, Any] | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)


Handler = Callable[[AdmissionRequest], Awaitable[Decision]]

_REASONS = {
    400: "BadRequest",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    422: "Invalid",
    500: "InternalError",
}


def allow(message: str = "") -> Decision:
    return Decision(allowed=True, message=message)


def deny(code: int, message: str) -> Decision:
    """controller-runtime's `admission.Errored`/`Denied`: the apiserver shows `message` to the user."""
    return Decision(allowed=False, code=code, message=message, reason=_REASONS.get(code, ""))


def patched(mutated: dict[str, Any]) -> Decision:
    return Decision(allowed=True, mutated=mutated)


def json_patch(original: dict[str, Any], mutated: dict[str, Any]) -> list[dict[str, Any]]:
    return make_patch(original, mutated)


def response_body(
    review_api_version: str, request_uid: str, original: Any, decision: Decision
) -> dict[str, Any]:
    """The AdmissionReview we answer with; an unchanged mutated object yields no patch at all."""
    response: dict[str, Any] = {"uid": request_uid, "allowed": decision.allowed}
    if not decision.allowed:
        status: dict[str, Any] = {"code": decision.code, "message": decision.message}
        if decision.reason:
            status["reason"] = decision.reason
        response["status"] = status
    elif decision.message:
        response["status"] = {"code": 200, "message": decision.message}
    if decision.allowed and decision.mutated is not None and isinstance(original, dict):
        ops = json_patch(original, decision.mutated)
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(orjson.dumps(ops)).decode()
    if decision.warnings:
        response["warnings"] = list(decision.warnings)
    return {"apiVersion": review_api_version, "kind": "AdmissionReview", "response": response}


def mutable(obj: dict[str, Any] | None) -> dict[str, Any]:
    """A private deep copy: the request object is also the patch baseline and must stay untouched.
    Decoded JSON round-trips through orjson several times faster than `copy.deepcopy`."""
    if obj is None:
        return {}
    try:
        return orjson.loads(orjson.dumps(obj))
    except (TypeError, orjson.JSONEncodeError):  # not plain JSON (e.g. an int beyond 64 bits)
        return copy.deepcopy(obj)
