"""Admission of a kind at a version its hooks were not written for: convert, admit, convert back.

Each kind's defaulting and validation in `kruise.api` is written against one version's models (its
module's `VERSION`, v1alpha1 for every kind that now also serves v1beta1). A request at another
served version is converted to that version with `kruise.api.conversion`, handed to the kind's
handler, and a mutated object is converted back to the request's version before the patch is
computed, so the patch is always against what the client sent. Field paths in denials name the
hooks' version (e.g. CloneSet `spec.updateStrategy.partition`, not `...rollingUpdate.partition`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kruise.api.conversion import STASH_ANNOTATION, ConversionError, convert, convertible
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, deny


def _with_stash_of(obj: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """`obj` carrying exactly the conversion-data annotation `original` carries (or none): the
    conversion there and back is the webhook's own business and must not show up in the patch."""
    annotations = (obj.get("metadata") or {}).get("annotations")
    before = ((original.get("metadata") or {}).get("annotations") or {}).get(STASH_ANNOTATION)
    if before is not None:
        obj.setdefault("metadata", {}).setdefault("annotations", {})[STASH_ANNOTATION] = before
    elif isinstance(annotations, dict) and STASH_ANNOTATION in annotations:
        del annotations[STASH_ANNOTATION]
        if not annotations and "annotations" not in (original.get("metadata") or {}):
            del obj["metadata"]["annotations"]
    return obj


def at_version(handler: Handler, group: str, kind: str, hooks_version: str | None) -> Handler:
    """`handler` (written for `hooks_version`) serving requests at any convertible version."""
    if hooks_version is None or not convertible(group, kind):
        return handler

    async def handle(req: AdmissionRequest) -> Decision:
        if req.kind.version == hooks_version:
            return await handler(req)
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
