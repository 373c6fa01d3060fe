"""The Adaptive strategy's part of a UnitedDeployment pass: judge each subset schedulable or not,
and in reservation mode label the pods that hold a place.

The judgement itself is ``kruise.control.uniteddeployment.adaptive``; what it needs from a pass is
the subset entries of the status being built and, in reservation mode, pod label writes that must
land before allocation reads the counts. Kept apart from the pass so that a UnitedDeployment
without the Adaptive strategy reads as the plain provision-and-update it is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kruise.api.conditions import get_condition
from kruise.api.keys import LABEL_UNITED_DEPLOYMENT_RESERVED_POD
from kruise.api.uniteddeployment import UnitedDeployment
from kruise.control.uniteddeployment.adaptive import (
    AdaptiveTimes,
    Assessment,
    Requeue,
    assess_default,
    assess_reservation,
)
from kruise.control.uniteddeployment.allocation import is_adaptive, reserves_unschedulable_pods
from kruise.control.uniteddeployment.status import UPDATED
from kruise.control.uniteddeployment.subsets import Child
from kruise.kube.client import Client, PatchType
from kruise.kube.clock import parse_rfc3339
from kruise.kube.errors import NotFound
from kruise.kube.resources import PODS


def subset_entry(status: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    for entry in status.get("subsetStatuses") or []:
        if entry.get("name") == name:
            return entry
    return None


async def assess(
    client: Client,
    ud: UnitedDeployment,
    status: dict[str, Any],
    existing: Mapping[str, Child],
    revision: str,
    wall: datetime,
    requeue: Requeue,
    bound: Any,
) -> dict[str, Assessment]:
    """Each existing subset's unschedulable status (Adaptive only), its condition updated in
    `status`; in reservation mode the pods' reserved labels are written first."""
    if not is_adaptive(ud):
        return {}
    times = AdaptiveTimes.of(ud)
    updated = get_condition(status, UPDATED) or {}
    since = updated.get("lastTransitionTime")
    updated_since = parse_rfc3339(since) if since else None
    assessments: dict[str, Assessment] = {}
    for name, child in existing.items():
        entry = subset_entry(status, name)
        if entry is None:
            bound.error("SubsetStatus not found", subset=name)
            continue
        if reserves_unschedulable_pods(ud):
            assessment = assess_reservation(
                entry, child.pods, revision, updated_since, times, wall, requeue, child.status_replicas
            )
            for pod, value in assessment.pods_to_label:
                await _label_reserved(client, pod, value)
        else:
            assessment = assess_default(
                entry, child.status_replicas, child.ready_replicas, child.pods, times, wall, requeue
            )
            if assessment.pending_pods:
                bound.info("subset has pending pods", subset=name, pending_pods=assessment.pending_pods)
        assessments[name] = assessment
    return assessments


async def _label_reserved(client: Client, pod: Mapping[str, Any], reserved: bool) -> None:
    meta = pod["metadata"]
    value = "true" if reserved else "false"
    patch = {"metadata": {"labels": {LABEL_UNITED_DEPLOYMENT_RESERVED_POD: value}}}
    with contextlib.suppress(NotFound):
        await client.patch(PODS, meta["name"], patch, meta["namespace"], patch_type=PatchType.STRATEGIC)
