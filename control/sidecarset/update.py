"""Rolling a SidecarSet's new sidecar images into existing pods, in place (cold upgrade; pure).

A pod records per SidecarSet the hash it was injected or last updated with (`kruise.io/sidecarset-hash`).
It is *updated* when that equals the SidecarSet's current hash; it can be updated in place only when
nothing but images changed (the `-without-image` hashes agree). The update writes just the sidecar
images and the records, plus `kruise.io/sidecarset-inplace-update-state` with the imageIDs the
containers had, which is how a later pass tells a restarted container from one still old.
Hot-upgrade sidecars (two containers per sidecar) are not handled here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.api.common import scaled_value
from kruise.api.keys import (
    ANNOTATION_SIDECARSET_HASH,
    ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
    ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE,
)
from kruise.control import podstatus
from kruise.control.sidecarset.injection import go_time
from kruise.control.sidecarset.matching import selector_matches

Obj = Mapping[str, Any]


def _name(sidecarset: Obj) -> str:
    return (sidecarset.get("metadata") or {}).get("name", "")


def _annotation_json(obj: Obj, key: str) -> dict[str, Any]:
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _record_hash(pod: Obj, key: str, name: str) -> str:
    entry = _annotation_json(pod, key).get(name)
    if isinstance(entry, str):
        return entry
    return (entry or {}).get("hash", "")


def sidecarset_hashes(sidecarset: Obj) -> tuple[str, str]:
    annotations = (sidecarset.get("metadata") or {}).get("annotations") or {}
    return annotations.get(ANNOTATION_SIDECARSET_HASH, ""), annotations.get(
        ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE, ""
    )


def is_injected(pod: Obj, sidecarset: Obj) -> bool:
    return _name(sidecarset) in _annotation_json(pod, ANNOTATION_SIDECARSET_HASH)


def is_updated(pod: Obj, sidecarset: Obj) -> bool:
    return (
        _record_hash(pod, ANNOTATION_SIDECARSET_HASH, _name(sidecarset)) == sidecarset_hashes(sidecarset)[0]
    )


def is_upgradable(pod: Obj, sidecarset: Obj) -> bool:
    """Only images differ between what the pod runs and the SidecarSet (cold upgrade possible)."""
    return (
        _record_hash(pod, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE, _name(sidecarset))
        == sidecarset_hashes(sidecarset)[1]
    )


def _sidecar_names(sidecarset: Obj) -> list[str]:
    return [c["name"] for c in (sidecarset.get("spec") or {}).get("containers") or []]


def _statuses(pod: Obj) -> dict[str, Mapping[str, Any]]:
    return {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []}


def sidecars_consistent(pod: Obj, sidecarset: Obj) -> bool:
    """Every sidecar of this SidecarSet runs the image its spec names: after an in-place update the
    container's imageID differs from the one recorded before it (or, for a re-tag with the same
    imageID, the status image equals the spec image)."""
    state = _annotation_json(pod, ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE).get(_name(sidecarset)) or {}
    before = state.get("lastContainerStatuses") or {}
    statuses = _statuses(pod)
    specs = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or []}
    for name in _sidecar_names(sidecarset):
        if name not in specs:
            continue
        status = statuses.get(name)
        if status is None:
            return False
        old = (before.get(name) or {}).get("imageID")
        if (
            old is not None
            and old == status.get("imageID")
            and specs[name].get("image") != status.get("image")
        ):
            return False
    return True


def is_pod_ready(pod: Obj, sidecarset: Obj) -> bool:
    return (
        podstatus.phase(pod) == "Running" and podstatus.is_ready(pod) and sidecars_consistent(pod, sidecarset)
    )


def compute_status(sidecarset: Obj, pods: Sequence[Obj]) -> dict[str, Any]:
    matched = updated = ready = updated_ready = 0
    for pod in pods:
        matched += 1
        is_new = is_updated(pod, sidecarset)
        is_ready = is_pod_ready(pod, sidecarset)
        updated += is_new
        ready += is_ready
        updated_ready += is_new and is_ready
    return {
        "observedGeneration": (sidecarset.get("metadata") or {}).get("generation"),
        "matchedPods": matched,
        "updatedPods": updated,
        "readyPods": ready,
        "updatedReadyPods": updated_ready,
    }


def pods_to_update(sidecarset: Obj, pods: Sequence[Obj]) -> list[Obj]:
    """Which pods to update now: not updated, selected by updateStrategy.selector, upgradable in place,
    not mid-update; `partition` of the matched pods are held back and at most `maxUnavailable`
    (default 1) may be updated-but-not-ready at a time. Unready pods take no budget."""
    strategy = (sidecarset.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type") == "NotUpdate" or strategy.get("paused"):
        return []
    total = len(pods)
    candidates = [
        p
        for p in pods
        if not is_updated(p, sidecarset)
        and is_upgradable(p, sidecarset)
        and sidecars_consistent(p, sidecarset)
        and (
            not strategy.get("selector")
            or selector_matches(strategy["selector"], p["metadata"].get("labels") or {})
        )
    ]
    partition = strategy.get("partition")
    keep = 0 if partition is None else scaled_value(partition, total, round_up=True)
    waiting = sum(1 for p in pods if not is_updated(p, sidecarset))
    room_by_partition = max(waiting - keep, 0)
    max_unavailable = strategy.get("maxUnavailable")
    budget = 1 if max_unavailable is None else scaled_value(max_unavailable, total, round_up=True)
    unavailable = sum(1 for p in pods if is_updated(p, sidecarset) and not is_pod_ready(p, sidecarset))
    ordered = sorted(candidates, key=lambda p: (is_pod_ready(p, sidecarset), p["metadata"].get("name", "")))
    chosen: list[Obj] = []
    for pod in ordered:
        if len(chosen) >= room_by_partition:
            break
        if is_pod_ready(pod, sidecarset):
            if unavailable >= budget:
                continue
            unavailable += 1
        chosen.append(pod)
    return chosen


def updated_pod(pod: Obj, sidecarset: Obj, now: datetime) -> dict[str, Any]:
    """The pod with the SidecarSet's sidecar images, hash records and in-place update state."""
    name = _name(sidecarset)
    new_hash, new_hash_without_image = sidecarset_hashes(sidecarset)
    clone: dict[str, Any] = copy.deepcopy(dict(pod))
    images = {c["name"]: c.get("image") for c in (sidecarset.get("spec") or {}).get("containers") or []}
    statuses = _statuses(pod)
    last: dict[str, dict[str, str]] = {}
    for container in clone["spec"].get("containers") or []:
        image = images.get(container["name"])
        if image is not None and container.get("image") != image:
            container["image"] = image
            last[container["name"]] = {"imageID": (statuses.get(container["name"]) or {}).get("imageID", "")}
    stamp = go_time(now)
    annotations = clone["metadata"].setdefault("annotations", {})
    for key, value in (
        (ANNOTATION_SIDECARSET_HASH, new_hash),
        (ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE, new_hash_without_image),
    ):
        records = _annotation_json(clone, key)
        entry = records.get(name)
        entry = (
            dict(entry) if isinstance(entry, dict) else {"sidecarSetName": name, "sidecarList": list(images)}
        )
        entry.update(updateTimestamp=stamp, hash=value)
        records[name] = entry
        annotations[key] = json.dumps(records, separators=(",", ":"))
    states = _annotation_json(clone, ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE)
    states[name] = {"revision": new_hash, "updateTimestamp": stamp, "lastContainerStatuses": last}
    annotations[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] = json.dumps(states, separators=(",", ":"))
    return clone
