"""Refuse an admission request whose object is not shaped like its kind, before a handler walks it.

Handlers of pods, evictions and the deletion-protected kinds read the request's objects as plain
dicts. Upstream decodes them into Go structs first and answers 400 with the decoder's error when a
field has the wrong JSON type; this wrapper does the same with `kruise.api.shapes`, naming the field
(`spec.containers[0].image: Invalid value: 5: must be a string`), so no handler meets a string where it
expects a list. Kruise kinds' CREATE and UPDATE objects need no wrapper: their models check types.
"""

from __future__ import annotations

from typing import Any

from kruise.api import shapes
from kruise.api.validation import aggregate_message, invalid
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, deny


def shape_error(obj: Any, shape: shapes.Shape) -> str | None:
    """The message for `obj`'s first mismatch against `shape`, None when it fits."""
    found = shapes.first_mismatch(obj, shape)
    if found is None:
        return None
    path, value, rule = found
    return aggregate_message([invalid(path, value, rule)])


def shape_checked(
    handler: Handler,
    new: shapes.Shape | None = None,
    old: shapes.Shape | None = None,
    subresources: dict[str, shapes.Shape] | None = None,
) -> Handler:
    """`new` is the shape of the request's object (CREATE, UPDATE), `old` of its old object (UPDATE,
    DELETE); `subresources` replaces `new` for a subresource's object (an eviction's Eviction)."""

    async def handle(req: AdmissionRequest) -> Decision:
        shape_of_new = (subresources or {}).get(req.sub_resource, new) if req.sub_resource else new
        checks = ((req.object, shape_of_new), (req.old_object, old))
        for obj, shape in checks:
            message = shape_error(obj, shape) if shape is not None else None
            if message is not None:
                return deny(400, message)
        return await handler(req)

    return handle
