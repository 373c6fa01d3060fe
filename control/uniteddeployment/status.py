"""The UnitedDeployment status a pass computes, from its children and its decisions.

Conditions follow upstream: `UnitedDeploymentUpdated` (True once the current revision is the
expected one), `SubsetProvisioned` (True after a pass created or deleted children; False with the
error when that failed), `SubsetUpdated` (True after children were brought to their spec; False
with the error), `SubsetFailure` (set only when a child reports a failure). A condition keeps its
lastTransitionTime while its status does not change; same status and reason: left as is.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.api.conditions import get_condition, remove_condition, set_condition
from kruise.api.objects import section
from kruise.control.uniteddeployment.subsets import Child

UPDATED = "UnitedDeploymentUpdated"
SUBSET_PROVISIONED = "SubsetProvisioned"
SUBSET_UPDATED = "SubsetUpdated"
SUBSET_FAILURE = "SubsetFailure"


def set_united_deployment_condition(
    status: dict[str, Any], type_: str, state: str, reason: str, message: str, now: str
) -> None:
    """SetUnitedDeploymentCondition: unchanged status+reason keeps the old condition (and message)."""
    condition: dict[str, Any] = {"type": type_, "status": state, "lastTransitionTime": now}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    status["conditions"] = set_condition(
        status.get("conditions"), condition, same=("status", "reason"), keep_transition_time=True, to_end=True
    )


def drop_condition(status: dict[str, Any], type_: str) -> None:
    kept = remove_condition(status.get("conditions"), type_)
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


def set_updated_condition(status: dict[str, Any], current: str, expected: str, now: str) -> None:
    """`setUpdatedCondition`: written only when the status flips (or the condition is new)."""
    state = "True" if current == expected else "False"
    old = get_condition(status, UPDATED)
    if old is not None and old.get("status") == state:
        return
    if state == "False":
        reason, message = "UnitedDeploymentRevisionUpdating", f"updating to revision {expected}"
    else:
        reason, message = "UnitedDeploymentRevisionUpdated", f"updated to revision {expected}"
    set_united_deployment_condition(status, UPDATED, state, reason, message, now)


def init_subset_statuses(status: dict[str, Any], subset_names: list[str]) -> list[str]:
    """`initStatus`: every subset of the spec gets an entry (existing ones are kept, even stale).

    Returns the names that had an entry before, for reservation mode's marking of new subsets.
    """
    entries = status.setdefault("subsetStatuses", []) or []
    status["subsetStatuses"] = entries
    known = [e.get("name") for e in entries]
    for name in subset_names:
        if name not in known:
            entries.append({"name": name})
    return [n for n in known if n]


def aggregate(
    status: dict[str, Any],
    children: Mapping[str, Child],
    next_replicas: Mapping[str, int],
    next_partitions: Mapping[str, int],
    current_revision: str,
    expected_revision: str,
    reserved: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """`calculateStatus`: counts summed from the children, subset entries, revisions and partitions.

    `reserved` (reservation mode) is each subset's reserved pods: they are not counted in
    `replicas` but in `reservedPods`, overall and per subset.
    """
    reserved = reserved or {}
    out = copy.deepcopy(status)
    out["replicas"] = sum(c.status_replicas - reserved.get(n, 0) for n, c in children.items())
    out["readyReplicas"] = sum(c.ready_replicas for c in children.values())
    out["updatedReplicas"] = sum(c.updated_replicas for c in children.values())
    out["updatedReadyReplicas"] = sum(c.updated_ready_replicas for c in children.values())
    _set_or_drop(out, "reservedPods", sum(reserved.get(n, 0) for n in children))
    entries = {e.get("name"): e for e in out.get("subsetStatuses") or []}
    for name, child in children.items():
        entry = entries.get(name)
        if entry is None:
            continue
        _set_or_drop(entry, "replicas", child.status_replicas)
        _set_or_drop(entry, "readyReplicas", child.ready_replicas)
        _set_or_drop(entry, "partition", next_partitions.get(name, 0))
        _set_or_drop(entry, "reservedPods", reserved.get(name, 0))
    out["subsetReplicas"] = dict(next_replicas)
    if not out.get("currentRevision"):
        out["currentRevision"] = current_revision
    update_status = dict(section(out, "updateStatus"))
    update_status["updatedRevision"] = expected_revision
    update_status["currentPartitions"] = dict(next_partitions)
    out["updateStatus"] = update_status
    if expected_revision != out["currentRevision"] and out["updatedReadyReplicas"] >= out["replicas"]:
        out["currentRevision"] = expected_revision
    return out


def _set_or_drop(entry: dict[str, Any], key: str, value: int) -> None:
    """`omitempty` int fields: zero is absent."""
    if value:
        entry[key] = value
    else:
        entry.pop(key, None)


def status_unchanged(old: Mapping[str, Any], new: Mapping[str, Any], generation: int) -> bool:
    """`updateUnitedDeployment`'s short cut: nothing to write."""
    fields = (
        "replicas",
        "readyReplicas",
        "updatedReplicas",
        "updatedReadyReplicas",
        "currentRevision",
        "collisionCount",
        "labelSelector",
        "subsetReplicas",
        "updateStatus",
        "conditions",
        "subsetStatuses",
    )
    zeroish = (None, 0, "", {}, [])
    for field in fields:
        a, b = old.get(field), new.get(field)
        if a != b and not (a in zeroish and b in zeroish):
            return False
    return int(new.get("observedGeneration") or 0) == generation
