"""CloneSet status conditions: FailedScale/FailedUpdate and the Progressing condition.

Upstream keeps `Progressing` only when `progressDeadlineSeconds` is set (and not MaxInt32), so a
plain CloneSet has no Progressing condition at all. The reasons are checked in upstream's order:
available, paused, partition reached, deadline exceeded, otherwise still progressing — and the
last one asks for a requeue at the deadline, because nothing else would wake the controller then.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from kruise.api.conditions import get_condition, remove_condition, set_condition
from kruise.api.objects import section, spec_of
from kruise.api.timestamps import parse_time
from kruise.control.common.lifecycle import rfc3339

MAX_INT32 = 2**31 - 1

CONDITION_PROGRESSING = "Progressing"
CONDITION_FAILED_SCALE = "FailedScale"
CONDITION_FAILED_UPDATE = "FailedUpdate"

REASON_AVAILABLE = "CloneSetAvailable"
REASON_PAUSED = "CloneSetPaused"
REASON_PARTITION_AVAILABLE = "ProgressPartitionAvailable"
REASON_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
REASON_UPDATED = "CloneSetUpdated"


def set_cloneset_condition(status: dict[str, Any], condition: dict[str, Any]) -> None:
    """`SetCloneSetCondition`: keep the old one when status and reason are unchanged; keep its
    transition time when only the reason changed."""
    status["conditions"] = set_condition(
        status.get("conditions"), condition, same=("status", "reason"), keep_transition_time=True, to_end=True
    )


def new_condition(type_: str, status: str, reason: str, message: str, now: datetime) -> dict[str, Any]:
    stamp = rfc3339(now)
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def failed_condition(type_: str, message: str, now: datetime) -> dict[str, Any]:
    """FailedScale / FailedUpdate, set True with the error when a pass fails (upstream has no reason)."""
    stamp = rfc3339(now)
    return {"type": type_, "status": "True", "lastTransitionTime": stamp, "message": message}


def has_progress_deadline(cloneset: Mapping[str, Any]) -> bool:
    deadline = spec_of(cloneset).get("progressDeadlineSeconds")
    return deadline is not None and deadline != MAX_INT32


def _replicas(cloneset: Mapping[str, Any]) -> int:
    replicas = spec_of(cloneset).get("replicas")
    return 1 if replicas is None else int(replicas)


def apply_progressing(cloneset: Mapping[str, Any], status: dict[str, Any], now: datetime) -> float | None:
    """Set or drop the Progressing condition in `status`; return seconds until the deadline to
    requeue at, or None."""
    if not has_progress_deadline(cloneset):
        if status.get("conditions"):
            status["conditions"] = remove_condition(status["conditions"], CONDITION_PROGRESSING)
        return None
    spec = cloneset.get("spec") or {}
    replicas = _replicas(cloneset)
    paused = bool(section(spec, "updateStrategy").get("paused"))
    expected_updated = int(status.get("expectedUpdatedReplicas") or 0)
    updated_available = int(status.get("updatedAvailableReplicas") or 0)

    def progressing(state: str, reason: str, message: str) -> None:
        set_cloneset_condition(status, new_condition(CONDITION_PROGRESSING, state, reason, message, now))

    if (
        status.get("currentRevision") == status.get("updateRevision")
        and status.get("replicas") == replicas
        and status.get("updatedReplicas") == replicas
        and updated_available == replicas
    ):
        progressing("True", REASON_AVAILABLE, "CloneSet is available")
        return None
    if paused:
        progressing("True", REASON_PAUSED, "CloneSet is paused")
        return None
    if expected_updated < replicas and expected_updated <= updated_available:
        progressing("True", REASON_PARTITION_AVAILABLE, "CloneSet has been paused due to partition ready")
        return None
    deadline = timedelta(seconds=int(spec["progressDeadlineSeconds"]))
    current = get_condition(status, CONDITION_PROGRESSING)
    if current is not None:
        last_update = parse_time(current.get("lastUpdateTime"))
        exceeded = current.get("reason") == REASON_DEADLINE_EXCEEDED or (
            last_update is not None and last_update + deadline < now
        )
        if exceeded:
            message = f"CloneSet revision {status.get('updateRevision')} has timed out progressing"
            progressing("False", REASON_DEADLINE_EXCEEDED, message)
            return None
    progressing("True", REASON_UPDATED, "CloneSet is progressing")
    condition = get_condition(status, CONDITION_PROGRESSING) or {}
    last_update = parse_time(condition.get("lastUpdateTime")) or now
    after = (last_update + deadline - now).total_seconds()
    return after if after < 1 else after + 1


def progressing_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """`hasProgressingConditionChanged`: status or reason differs (or one side has none)."""
    a, b = get_condition(old, CONDITION_PROGRESSING), get_condition(new, CONDITION_PROGRESSING)
    if a is None or b is None:
        return (a is None) != (b is None)
    return a.get("status") != b.get("status") or a.get("reason") != b.get("reason")


STATUS_COUNTERS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReadyReplicas",
    "updatedReplicas",
    "updatedAvailableReplicas",
    "expectedUpdatedReplicas",
    "updateRevision",
    "currentRevision",
    "labelSelector",
)


def status_needs_write(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """`inconsistentStatus`, plus collisionCount and the Failed* conditions, which upstream carries
    along in the same write."""
    if int(new.get("observedGeneration") or 0) > int(old.get("observedGeneration") or 0):
        return True
    if any(old.get(k) != new.get(k) for k in STATUS_COUNTERS):
        return True
    if (old.get("collisionCount") or 0) != (new.get("collisionCount") or 0):
        return True
    for type_ in (CONDITION_FAILED_SCALE, CONDITION_FAILED_UPDATE):
        if (get_condition(old, type_) is None) != (get_condition(new, type_) is None):
            return True
    return progressing_changed(old, new)
