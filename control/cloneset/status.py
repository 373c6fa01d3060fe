"""CloneSet status counters (``calculateStatus``) from observed pods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.api.common import LabelSelector, selector_to_string
from kruise.api.objects import meta_of, section, spec_of
from kruise.control.cloneset.diffs import is_pod_available
from kruise.control.cloneset.strategy import partition_replicas
from kruise.control.common import podstatus
from kruise.control.common.revision import equal_to_revision_hash


def compute_status(
    cloneset: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    update_revision: str,
    current_revision: str,
    collision_count: int,
    now: datetime,
) -> dict[str, Any]:
    """The status fields the controller owns (conditions are merged in by the controller).

    currentRevision jumps to the update revision as soon as every pod carries it and the count
    matches spec.replicas — readiness is not awaited, as upstream does.
    """
    spec = cloneset.get("spec") or {}
    replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
    min_ready = int(spec.get("minReadySeconds") or 0)
    counts = dict.fromkeys(
        ("replicas", "ready", "available", "updated", "updatedReady", "updatedAvailable"), 0
    )
    for pod in pods:
        ready = podstatus.is_update_ready(pod, 0, now)
        available = is_pod_available(pod, min_ready, now)
        updated = equal_to_revision_hash(pod, update_revision)
        counts["replicas"] += 1
        counts["ready"] += ready
        counts["available"] += available
        counts["updated"] += updated
        counts["updatedReady"] += updated and ready
        counts["updatedAvailable"] += updated and available
    if counts["updated"] == counts["replicas"] == replicas:
        current_revision = update_revision
    partition = section(spec, "updateStrategy").get("partition")
    selector = spec.get("selector")
    return {
        "observedGeneration": meta_of(cloneset).get("generation"),
        "replicas": counts["replicas"],
        "readyReplicas": counts["ready"],
        "availableReplicas": counts["available"],
        "updatedReplicas": counts["updated"],
        "updatedReadyReplicas": counts["updatedReady"],
        "updatedAvailableReplicas": counts["updatedAvailable"],
        "expectedUpdatedReplicas": replicas - partition_replicas(partition, replicas),
        "updateRevision": update_revision,
        "currentRevision": current_revision,
        "collisionCount": collision_count,
        "labelSelector": selector_to_string(LabelSelector.model_validate(selector)) if selector else "",
    }


def availability_wait(
    cloneset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], status: Mapping[str, Any], now: datetime
) -> float | None:
    """Seconds until the first Ready pod turns available — when scale-up, the update's maxUnavailable and
    the available counters may move next — so the reconcile requeues for exactly that moment (None: no
    pod is waiting on minReadySeconds).

    Upstream pushes the whole minReadySeconds whenever readyReplicas != availableReplicas; with client-go's
    earliest-wins delaying queue that is the remaining time only if the pass that first saw the pod Ready
    ran the instant it turned Ready. The remaining time is right whichever pass sees it. A ready pod that
    time alone cannot make available (a lifecycle state other than Normal) keeps upstream's fallback: look
    again after minReadySeconds."""
    min_ready = int(spec_of(cloneset).get("minReadySeconds") or 0)
    if min_ready <= 0 or status.get("availableReplicas") == status.get("readyReplicas"):
        return None
    waits = [
        wait
        for pod in pods
        if is_pod_available(pod, 0, now) and (wait := podstatus.available_in(pod, min_ready, now)) is not None
    ]
    return min(waits) if waits else float(min_ready)
