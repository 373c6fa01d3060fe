"""Status of an Advanced StatefulSet from the pods it observed (``updateStatus`` +
``completeRollingUpdate``), and its ControllerRevision templates.

Counts come from pods the apiserver has (placeholders built for creation have no phase and are
never counted). Once every pod is updated and ready under RollingUpdate, the current revision
becomes the update revision, which is what ``kubectl rollout status`` waits for.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from kruise.api.common import LabelSelector, selector_to_string
from kruise.api.conditions import set_condition
from kruise.api.objects import Obj, meta_of, section
from kruise.control.common.lifecycle import rfc3339
from kruise.control.common.revision import template_from_revision_data
from kruise.control.statefulset import health
from kruise.control.statefulset.pods import revision_of

CONDITION_FAILED_CREATE_POD = "FailedCreatePod"
CONDITION_FAILED_UPDATE_POD = "FailedUpdatePod"

_COUNTED = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "currentReplicas",
    "updatedReplicas",
    "updatedReadyReplicas",
    "updatedAvailableReplicas",
)


def revision_template(revision: Mapping[str, Any]) -> dict[str, Any]:
    """The pod template a ControllerRevision restores (``ApplyRevision``): the set's template
    with that revision's ``spec.template`` patch applied, which replaces it whole."""
    return template_from_revision_data(revision["data"])


def replica_counts(
    pods: Iterable[Obj], min_ready_seconds: int, current: str, update: str, now: datetime
) -> dict[str, int]:
    """``computeReplicaStatus`` over live and condemned pods."""
    counts = dict.fromkeys(_COUNTED, 0)
    for pod in pods:
        created = health.is_created(pod)
        if created:
            counts["replicas"] += 1
        revision = revision_of(pod)
        if health.is_running_and_ready(pod):
            available, _ = health.running_and_available(pod, min_ready_seconds, now)
            counts["readyReplicas"] += 1
            counts["availableReplicas"] += int(available)
            if revision == update:
                counts["updatedReadyReplicas"] += 1
                counts["updatedAvailableReplicas"] += int(available)
        if created and not health.is_terminating(pod):
            counts["currentReplicas"] += int(revision == current)
            counts["updatedReplicas"] += int(revision == update)
    return counts


def compute_status(
    sts: Mapping[str, Any],
    pods: Iterable[Obj],
    current: str,
    update: str,
    collision_count: int,
    now: datetime,
) -> dict[str, Any]:
    """The full status (conditions carried over from the old status) for ``pods``."""
    spec = sts.get("spec") or {}
    old = sts.get("status") or {}
    selector = spec.get("selector")
    status: dict[str, Any] = {
        "observedGeneration": meta_of(sts).get("generation"),
        "currentRevision": current,
        "updateRevision": update,
        "collisionCount": collision_count,
        "labelSelector": selector_to_string(LabelSelector.model_validate(selector)) if selector else "",
        **replica_counts(pods, health.min_ready_seconds(sts), current, update, now),
    }
    if old.get("conditions"):
        status["conditions"] = copy.deepcopy(old["conditions"])
    complete_rolling_update(sts, status)
    return status


def complete_rolling_update(sts: Mapping[str, Any], status: dict[str, Any]) -> None:
    """Every pod updated and ready under RollingUpdate: the update revision becomes current."""
    strategy = section(sts, "spec", "updateStrategy").get("type", "RollingUpdate")
    if (
        strategy == "RollingUpdate"
        and status["updatedReplicas"] == status["replicas"]
        and status["readyReplicas"] == status["replicas"]
    ):
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]


def set_failure_condition(status: dict[str, Any], type_: str, message: str, now: datetime) -> None:
    """``SetStatefulsetCondition`` for the failure conditions: status True, the latest message."""
    new = {"type": type_, "status": "True", "lastTransitionTime": rfc3339(now), "message": message}
    status["conditions"] = set_condition(
        status.get("conditions"), new, same=None, keep_transition_time=True, to_end=True
    )


def status_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return any(old.get(k) != v for k, v in new.items())
