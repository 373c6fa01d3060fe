"""`spec.patchPodMetadata`: annotations a SidecarSet writes onto the pods it injects.

Retain adds a key only when the pod lacks it, Overwrite always sets it, MergePatchJson treats
both values as JSON objects and applies the SidecarSet's as an RFC 7386 merge patch (the result
re-encoded as Go would: compact, keys sorted).
"""

from __future__ import annotations

import json
from typing import Any

from kruise.api.objects import section
from kruise.api.sidecarset import PATCH_MERGE_JSON, PATCH_OVERWRITE, PATCH_RETAIN
from kruise.control.common.inplace.jsondiff import apply_merge_patch
from kruise.control.common.revision import go_json


class PatchMetadataError(ValueError):
    """A MergePatchJson annotation whose pod value or patch is not a JSON object."""


def _merge_json(origin: str, patch: str, key: str) -> str:
    try:
        document = json.loads(origin)
    except ValueError as exc:
        raise PatchMetadataError(f"pod annotation {key} is not a JSON document: {exc}") from exc
    try:
        patch_doc = json.loads(patch)
    except ValueError as exc:
        raise PatchMetadataError(
            f"patchPodMetadata annotation {key} is not a JSON merge patch: {exc}"
        ) from exc
    if not isinstance(document, dict):
        raise PatchMetadataError(f"pod annotation {key} is not a JSON object")
    return go_json(apply_merge_patch(document, patch_doc)).decode()


def patch_pod_metadata(pod: dict[str, Any], patches: list[dict[str, Any]] | None) -> bool:
    """Apply `patches` to the pod's annotations in place; True when they changed."""
    metadata = pod.setdefault("metadata", {})
    annotations = metadata.get("annotations") or {}
    before = dict(annotations)
    for patch in patches or []:
        policy = patch.get("patchPolicy") or PATCH_RETAIN
        for key, value in section(patch, "annotations").items():
            if policy == PATCH_RETAIN:
                annotations.setdefault(key, value)
            elif policy == PATCH_OVERWRITE:
                annotations[key] = value
            elif policy == PATCH_MERGE_JSON:
                origin = annotations.get(key)
                annotations[key] = _merge_json(origin, value, key) if origin else value
    if annotations or "annotations" in metadata:
        metadata["annotations"] = annotations
    return annotations != before
