"""Admission of a kind at a version its hooks were not written for: convert, admit, convert back.

Each kind's defaulting and validation in `kruise.api` is written against one version's models (its
module's `VERSION`, v1alpha1 for every kind that now also serves v1beta1). A request at another
served version is converted to that version with `kruise.api.conversion`, handed to the kind's
handler, and a mutated object is converted back to the request's version before the patch is
computed, so the patch is always against what the client sent. Field paths in denials name the
hooks' version (e.g. CloneSet `spec.updateStrategy.partition`, not `...rollingUpdate.partition`).

A validating handler first applies the request version's own value checks (`REQUEST_VERSION_CHECKS`):
values the conversion cannot carry (upstream's conversion maps them to a default) are denied at the
version the client wrote, with upstream's messages, instead of being admitted as something else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from kruise.api import cloneset
from kruise.api.conversion import STASH_ANNOTATION, ConversionError, convert, convertible
from kruise.api.objects import annotations_of, meta_of
from kruise.api.registry import by_kind
from kruise.api.validation import FieldError, aggregate_message, not_supported
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, deny

# (group, kind, request version) -> checks of the object as written at that version
REQUEST_VERSION_CHECKS: dict[tuple[str, str, str], Callable[[dict[str, Any]], list[FieldError]]] = {
    (cloneset.GROUP, cloneset.KIND, "v1beta1"): cloneset.validate_v1beta1_values,
}


def _with_stash_of(obj: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """`obj` carrying exactly the conversion-data annotation `original` carries (or none): the
    conversion there and back is the webhook's own business and must not show up in the patch."""
    annotations = meta_of(obj).get("annotations")
    before = annotations_of(original).get(STASH_ANNOTATION)
    if before is not None:
        obj.setdefault("metadata", {}).setdefault("annotations", {})[STASH_ANNOTATION] = before
    elif isinstance(annotations, dict) and STASH_ANNOTATION in annotations:
        del annotations[STASH_ANNOTATION]
        if not annotations and "annotations" not in meta_of(original):
            del obj["metadata"]["annotations"]
    return obj


def at_version(
    handler: Handler, group: str, kind: str, hooks_version: str | None, validating: bool = False
) -> Handler:
    """`handler` (written for `hooks_version`) serving requests at any convertible version;
    `validating` adds the request version's own value checks."""
    if hooks_version is None or not convertible(group, kind):
        return handler

    served = tuple(v.name for v in by_kind(group, kind).versions)

    async def handle(req: AdmissionRequest) -> Decision:
        if req.kind.version == hooks_version:
            return await handler(req)
        if req.kind.version not in served:  # only a caller that is not kube-apiserver sends one
            return deny(
                400,
                aggregate_message([not_supported("request.kind.version", req.kind.version, list(served))]),
            )
        check = REQUEST_VERSION_CHECKS.get((group, kind, req.kind.version)) if validating else None
        if check is not None and req.operation in ("CREATE", "UPDATE") and req.object:
            errors = check(req.object)
            if errors:
                return deny(422, aggregate_message(errors))
        target = f"{group}/{hooks_version}"
        try:
            obj = convert(req.object, target) if req.object else req.object
            old = convert(req.old_object, target) if req.old_object else req.old_object
        except ConversionError as exc:
            return deny(400, f"cannot convert {kind} to {hooks_version}: {exc}")
        native = req.model_copy(
            update={
                "object": obj,
                "old_object": old,
                "kind": req.kind.model_copy(update={"version": hooks_version}),
            }
        )
        decision = await handler(native)
        if decision.mutated is None or req.object is None:
            return decision
        try:
            back = convert(decision.mutated, f"{group}/{req.kind.version}")
        except ConversionError as exc:
            return deny(400, f"cannot convert {kind} back to {req.kind.version}: {exc}")
        return dataclasses.replace(decision, mutated=_with_stash_of(back, req.object))

    return handle
