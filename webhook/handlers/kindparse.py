"""Parsing an admission request's objects with the model of the version they were sent at.

Shared by the generic handlers and the concern modules that validate a kind against its neighbours
(PersistentPodState, WorkloadSpread), so every one of them parses the same way and on a private copy.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from kruise.webhook.admission import AdmissionRequest, mutable
from kruise.webhook.handlers.kindhooks import KindHooks

M = TypeVar("M", bound=BaseModel)


def parse_request_object(hooks: KindHooks, req: AdmissionRequest, obj: dict[str, Any]) -> Any:
    """Parse a private copy: models keep schemaless dicts (pod templates) by reference, and defaulters
    mutate those in place — which would silently change the patch baseline."""
    return hooks.model_for(req.kind.version).model_validate(mutable(obj))


def parse_new_and_old(hooks: KindHooks, req: AdmissionRequest) -> tuple[Any, Any | None]:
    """The request's object and, on UPDATE, its old object as models (ValidationError when either
    does not parse)."""
    obj = parse_request_object(hooks, req, req.object or {})
    old = None
    if req.operation == "UPDATE" and req.old_object:
        old = parse_request_object(hooks, req, req.old_object)
    return obj, old


def valid_models(model: type[M], objects: list[dict[str, Any]]) -> list[M]:
    """The objects the model accepts (a namespace's siblings for a conflict check: one the model
    refuses cannot conflict)."""
    parsed = []
    for obj in objects:
        try:
            parsed.append(model.model_validate(obj))
        except ValidationError:
            continue
    return parsed
