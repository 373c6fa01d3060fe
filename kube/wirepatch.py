"""Applying a JSON or merge patch in-process, for patches of kinds talked at another version on the wire.

A patch is written against code's version of a kind (v1alpha1 paths and shapes). When the wire talks
the storage version instead (`kruise.kube.wire`), the patch cannot be sent as it is, and it cannot be
converted on its own either: the conversions map whole objects (a field's v1beta1 form can depend on
its siblings, and the lossless stash is a diff of whole objects), a JSON patch names v1alpha1 paths and
array indexes that need not exist at v1beta1, and a merge patch's `null` (delete) has no converted
form. So the *target* is converted: the client gets the object at the wire version, converts it,
applies the patch here, converts the result back and PUTs it under the object's resourceVersion
(`Client.patch`). kube-apiserver applies a patch to the latest object and retries its own conflicts;
the client does the same, unless the patch itself pins metadata.resourceVersion, whose conflict is
the caller's to see.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import jsonpointer

from kruise.kube.errors import Invalid


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, `null` deletes, anything else replaces. `target` is not
    modified; untouched subtrees of it are shared with the result."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def json_patch(target: dict[str, Any], operations: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 on a copy of `target`; a failed `test` or a bad path is a 422, as kube-apiserver answers."""
    rejected = "the server rejected our request due to an error in our request"
    try:
        result = jsonpatch.apply_patch(target, operations, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise Invalid(f"{rejected}: {exc}") from exc
    if not isinstance(result, dict):
        raise Invalid(f"{rejected}: the patch replaced the whole object")
    return result
