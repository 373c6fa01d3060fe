"""The SidecarSet hashes (`kruise.io/sidecarset-hash` and `…-hash-without-image`).

Pods record the hash they were injected with; the SidecarSet controller compares it with the
SidecarSet's own to decide what is outdated, and the without-image hash to decide whether an
image-only in-place upgrade is possible. A hash that differs from upstream's for the same spec
would make every pod injected by a Go webhook look outdated, hence `gojson`.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from kruise.api.keys import ANNOTATION_SIDECARSET_HASH, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE
from kruise.control.common.revision import safe_encode_string
from kruise.control.sidecarset import gojson


def is_native_sidecar(container: dict[str, Any]) -> bool:
    """An initContainer with `restartPolicy: Always` (Kubernetes 1.28+ sidecar containers)."""
    return container.get("restartPolicy") == "Always"


def _encode(spec: dict[str, Any]) -> bytes:
    containers = spec.get("containers")
    document: dict[str, Any] = {"containers": gojson.to_go(containers, "[SidecarContainer]")}
    init_containers = spec.get("initContainers") or []
    if any(is_native_sidecar(c) for c in init_containers):
        # upstream then hashes *all* initContainers, not only the native sidecars
        document["initContainers"] = gojson.to_go(init_containers, "[SidecarContainer]")
    return gojson.dumps(document)


def _hash(spec: dict[str, Any]) -> str:
    return safe_encode_string(hashlib.sha256(_encode(spec)).hexdigest())


def sidecarset_hash(spec: dict[str, Any]) -> str:
    return _hash(spec)


def sidecarset_hash_without_image(spec: dict[str, Any]) -> str:
    blanked = copy.deepcopy(spec)
    for key in ("containers", "initContainers"):
        for container in blanked.get(key) or []:
            container["image"] = ""
    return _hash(blanked)


def set_hash_annotations(sidecarset: dict[str, Any]) -> None:
    """What the SidecarSet mutating webhook adds after defaulting (`SetHashSidecarSet`)."""
    spec = sidecarset.get("spec") or {}
    annotations = sidecarset.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[ANNOTATION_SIDECARSET_HASH] = sidecarset_hash(spec)
    annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] = sidecarset_hash_without_image(spec)
