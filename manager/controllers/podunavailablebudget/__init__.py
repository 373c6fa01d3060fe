"""The PodUnavailableBudget controller: keeps each PUB's status true so kruise-webhook can decide.

Each pass counts the covered pods that are available (Running, Ready, not mid in-place update, not
recorded as disrupted), computes desiredAvailable from maxUnavailable/minAvailable, and writes
unavailableAllowed = currentAvailable − desiredAvailable. It also expires the webhook's records:
a disruption the pod did not follow within 20 s (event `NotDeleted`), an update record after 10 s,
and stamps the `related-pub` annotation on covered pods so the webhook finds their PUB.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

import structlog

from kruise.control import pub as pubcontrol
from kruise.kube.client import PatchType
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import NotFound
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CLONESETS,
    DEPLOYMENTS,
    PODS,
    PODUNAVAILABLEBUDGETS,
    REPLICASETS,
    STATEFULSETS_APPS,
    object_key,
)
from kruise.kube.retry import Backoff, retry_on_conflict
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.context import ControllerSetup, ManagerContext
from kruise.manager.controllers.podunavailablebudget.workloads import WorkloadFinder

NAME = "podunavailablebudget"
log = structlog.get_logger("kruise.manager.pub")
CONFLICT_RETRY = Backoff(steps=4, duration=0.5, factor=1.0, jitter=0.1)


def build(ctx: ManagerContext) -> Controller:
    pubs = ctx.informers.informer(PODUNAVAILABLEBUDGETS)
    pods = ctx.informers.informer(PODS)
    workloads = {
        ("apps", "Deployment"): ctx.informers.informer(DEPLOYMENTS),
        ("apps", "ReplicaSet"): ctx.informers.informer(REPLICASETS),
        ("apps", "StatefulSet"): ctx.informers.informer(STATEFULSETS_APPS),
        ("apps.kruise.io", "CloneSet"): ctx.informers.informer(CLONESETS),
        ("apps.kruise.io", "StatefulSet"): ctx.informers.informer(ADVANCED_STATEFULSETS),
    }
    finder = WorkloadFinder(pods, workloads)
    recorder = ctx.recorder("podunavailablebudget-controller")

    async def reconcile(key: str) -> Result | None:
        cached = pubs.get(key)
        if cached is None or cached["metadata"].get("deletionTimestamp"):
            return None
        now: datetime = ctx.clock.wall()
        covered, expected = finder.pods_and_expected(cached)
        if not covered:
            recorder.event(dict(cached), "Normal", "NoPods", "No matching pods found")
        name = cached["metadata"]["name"]
        for pod in covered:
            if pubcontrol.related_pub(pod) != name:
                meta = pod["metadata"]
                try:
                    await ctx.client.patch(
                        PODS, meta["name"], pubcontrol.related_pub_patch(name), meta["namespace"],
                        patch_type=PatchType.STRATEGIC,
                    )  # fmt: skip
                except NotFound:
                    continue
        recheck: datetime | None = None
        first = True

        async def write() -> None:
            nonlocal recheck, first
            current = (
                copy.deepcopy(dict(cached))
                if first
                else await ctx.client.get(PODUNAVAILABLEBUDGETS, name, cached["metadata"]["namespace"])
            )
            first = False
            status, not_deleted, recheck = pubcontrol.compute_status(current, covered, expected, now)
            for pod_name in not_deleted:
                pod = next((p for p in covered if p["metadata"]["name"] == pod_name), None)
                if pod is not None:
                    where = f"{current['metadata']['namespace']}/{name}"
                    message = f"Pod was expected by PUB {where} to be deleted but it wasn't"
                    recorder.event(dict(pod), "Warning", "NotDeleted", message)
            if not pubcontrol.status_changed(current.get("status") or {}, status):
                return
            current["status"] = status
            await ctx.client.update_status(PODUNAVAILABLEBUDGETS, current)

        try:
            await retry_on_conflict(write, CONFLICT_RETRY)
        except NotFound:
            return None
        if recheck is not None:
            return Result(requeue_after=max((recheck - now).total_seconds(), 0.0) + 0.01)
        return None

    controller = Controller(NAME, reconcile, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(pubs)

    def pubs_for_pod(pod: dict[str, Any]) -> list[str]:
        """The PUB named on the pod, else every PUB of its namespace (a cheap over-approximation:
        a new pod may match a selector or belong to a targeted workload)."""
        namespace = pod["metadata"].get("namespace", "")
        name = pubcontrol.related_pub(pod)
        if name:
            return [f"{namespace}/{name}"]
        return [object_key(p) for p in pubs.by_index(NAMESPACE_INDEX, namespace)]

    def pod_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Readiness, phase, deletion, labels, annotations or spec: what availability depends on."""
        return (
            old.get("status") != new.get("status")
            or old["metadata"].get("labels") != new["metadata"].get("labels")
            or old["metadata"].get("annotations") != new["metadata"].get("annotations")
            or old["metadata"].get("deletionTimestamp") != new["metadata"].get("deletionTimestamp")
            or old.get("spec") != new.get("spec")
        )

    controller.watch(pods, pubs_for_pod, update_filter=pod_changed)

    def pubs_in_namespace(workload: dict[str, Any]) -> list[str]:
        namespace = workload["metadata"].get("namespace", "")
        return [object_key(p) for p in pubs.by_index(NAMESPACE_INDEX, namespace)]

    def replicas_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
        return (old.get("spec") or {}).get("replicas") != (new.get("spec") or {}).get("replicas")

    for informer in workloads.values():
        controller.watch(informer, pubs_in_namespace, update_filter=replicas_changed)
    return controller


SETUP = ControllerSetup(NAME, build, kinds=("PodUnavailableBudget.policy.kruise.io",))
