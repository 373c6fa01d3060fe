"""ControllerRef ownership rules: which objects a controller adopts, keeps or releases.

Upstream's ``BaseControllerRefManager.ClaimObject`` (k8s.io/kubernetes/pkg/controller), used by
the daemon controller for its pods and its ControllerRevisions:

- controlled by someone else ⇒ ignored;
- controlled by us and matching the selector ⇒ ours;
- controlled by us, not matching ⇒ released (unless we are being deleted, then just not ours);
- an orphan (no controller reference) ⇒ adopted when it matches, is not being deleted, is in our
  namespace, and we are not being deleted; otherwise ignored.

An adoption is only sent after a fresh (uncached) read shows the owner still exists with the same
uid and no deletionTimestamp (``RecheckDeletionTimestamp``); the patches carry the object's uid so
the apiserver refuses them when the object was replaced under the same name.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from kruise.api.controllerref import controller_of
from kruise.api.objects import Obj


class Claim(enum.Enum):
    OURS = "ours"
    IGNORE = "ignore"
    ADOPT = "adopt"
    RELEASE = "release"


def claim(owner: Obj, obj: Obj, matches: Callable[[Obj], bool]) -> Claim:
    """What the controller ``owner`` does with ``obj`` (``matches`` is its selector test)."""
    owner_meta = owner.get("metadata") or {}
    meta = obj.get("metadata") or {}
    owner_deleting = bool(owner_meta.get("deletionTimestamp"))
    ref = controller_of(obj)
    if ref is not None:
        if ref.get("uid") != owner_meta.get("uid"):
            return Claim.IGNORE
        if matches(obj):
            return Claim.OURS
        return Claim.IGNORE if owner_deleting else Claim.RELEASE
    if owner_deleting or not matches(obj):
        return Claim.IGNORE
    if meta.get("deletionTimestamp"):
        return Claim.IGNORE
    namespace = owner_meta.get("namespace")
    if namespace and namespace != meta.get("namespace"):
        return Claim.IGNORE
    return Claim.ADOPT


def adopt_patch(owner: Obj, obj: Obj) -> dict[str, Any]:
    """Strategic-merge body adding ``owner`` as the controller (ownerRefControllerPatch)."""
    meta = owner["metadata"]
    ref = {
        "apiVersion": owner.get("apiVersion", ""),
        "kind": owner.get("kind", ""),
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {"metadata": {"ownerReferences": [ref], "uid": obj["metadata"]["uid"]}}


def release_patch(owner: Obj, obj: Obj) -> dict[str, Any]:
    """Strategic-merge body removing ``owner``'s reference (GenerateDeleteOwnerRefStrategicMergeBytes)."""
    return {
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": owner["metadata"]["uid"]}],
            "uid": obj["metadata"]["uid"],
        }
    }


def adoption_refusal(owner: Obj, fresh: Obj | None, *, check_deletion: bool = True) -> str | None:
    """RecheckDeletionTimestamp on a fresh read of the owner: why adoption must not happen, or None.

    ``check_deletion=False`` is the uid-only check of the StatefulSet's ``adoptOrphanRevisions``."""
    meta = owner.get("metadata") or {}
    where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    if fresh is None:
        return f"can't recheck DeletionTimestamp: {where} not found"
    fresh_meta = fresh.get("metadata") or {}
    if fresh_meta.get("uid") != meta.get("uid"):
        return f"original {where} is gone: got uid {fresh_meta.get('uid')}, wanted {meta.get('uid')}"
    if check_deletion and fresh_meta.get("deletionTimestamp"):
        return f"{where} has just been deleted at {fresh_meta['deletionTimestamp']}"
    return None
