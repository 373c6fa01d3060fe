"""One PodUnavailableBudget reconcile: count, compute and write the PUB's status.

Each pass counts the covered pods that are available (Running, Ready, not mid in-place update, not
recorded as disrupted), computes desiredAvailable from maxUnavailable/minAvailable, and writes
unavailableAllowed = currentAvailable − desiredAvailable. It also expires the webhook's records:
a disruption the pod did not follow within 20 s (event `NotDeleted`), an update record after 10 s,
and stamps the `related-pub` annotation on covered pods so the webhook finds their PUB.

The webhook spends the budget by writing the same status, so a write may conflict: the status is
then recomputed from a fresh read (the cached copy is only used for the first attempt).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime

from kruise.api.objects import Obj
from kruise.control.pub import budget
from kruise.kube.client import Client, PatchType
from kruise.kube.controller import Result
from kruise.kube.errors import NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import PODS, PODUNAVAILABLEBUDGETS
from kruise.kube.retry import Backoff, retry_on_conflict
from kruise.manager.controllers.podunavailablebudget.workloads import WorkloadFinder
from kruise.manager.writers.status import StatusWriter

CONFLICT_RETRY = Backoff(steps=4, duration=0.5, factor=1.0, jitter=0.1)
RECHECK_MARGIN = 0.01
"""Seconds past a record's expiry to come back, so the record has expired when we look."""


class PodUnavailableBudgetReconciler:
    """Reads PUBs, pods and workloads from the caches; writes pod annotations and PUB status."""

    def __init__(
        self,
        client: Client,
        *,
        pubs: SharedInformer,
        finder: WorkloadFinder,
        recorder: EventRecorder,
        wall: Callable[[], datetime],
        conflict_retry: Backoff = CONFLICT_RETRY,
        vertical_scaling: bool = False,
    ) -> None:
        """`vertical_scaling`: the InPlaceWorkloadVerticalScaling gate (a pod mid-resize is not available)."""
        self.vertical_scaling = vertical_scaling
        self.client = client
        self.status_writer = StatusWriter(client, PODUNAVAILABLEBUDGETS)
        self.pubs = pubs
        self.finder = finder
        self.recorder = recorder
        self.wall = wall
        self.conflict_retry = conflict_retry

    async def reconcile(self, key: str) -> Result | None:
        cached = self.pubs.get(key)
        if cached is None or cached["metadata"].get("deletionTimestamp"):
            return None
        now = self.wall()
        covered, expected = self.finder.pods_and_expected(cached)
        if not covered:
            self.recorder.event(dict(cached), "Normal", "NoPods", "No matching pods found")
        await self._stamp_related_pub(cached["metadata"]["name"], covered)
        try:
            recheck = await self._write_status(cached, covered, expected, now)
        except NotFound:
            return None
        if recheck is not None:
            return Result(requeue_after=max((recheck - now).total_seconds(), 0.0) + RECHECK_MARGIN)
        return None

    async def _stamp_related_pub(self, name: str, covered: list[Obj]) -> None:
        """Annotate covered pods with this PUB's name (the webhook's index from pod to PUB)."""
        for pod in covered:
            if budget.related_pub(pod) == name:
                continue
            meta = pod["metadata"]
            try:
                await self.client.patch(
                    PODS, meta["name"], budget.related_pub_patch(name), meta["namespace"],
                    patch_type=PatchType.STRATEGIC,
                )  # fmt: skip
            except NotFound:
                continue

    async def _write_status(
        self, cached: Obj, covered: list[Obj], expected: int, now: datetime
    ) -> datetime | None:
        """Write the computed status (retrying conflicts on a fresh read); return when to recheck."""
        recheck: datetime | None = None
        first = True
        namespace, name = cached["metadata"]["namespace"], cached["metadata"]["name"]

        async def write() -> None:
            nonlocal recheck, first
            current = (
                copy.deepcopy(dict(cached))
                if first
                else await self.client.get(PODUNAVAILABLEBUDGETS, name, namespace)
            )
            first = False
            status, not_deleted, recheck = budget.compute_status(
                current, covered, expected, now, vertical_scaling=self.vertical_scaling
            )
            self._report_not_deleted(namespace, name, covered, not_deleted)
            if budget.status_changed(current.get("status") or {}, status):
                # the pod webhook writes this status too: a conflict re-reads and recomputes
                await self.status_writer.write(current, status, conditional=True)

        await retry_on_conflict(write, self.conflict_retry)
        return recheck

    def _report_not_deleted(
        self, namespace: str, name: str, covered: list[Obj], not_deleted: list[str]
    ) -> None:
        for pod_name in not_deleted:
            pod = next((p for p in covered if p["metadata"]["name"] == pod_name), None)
            if pod is not None:
                message = f"Pod was expected by PUB {namespace}/{name} to be deleted but it wasn't"
                self.recorder.event(dict(pod), "Warning", "NotDeleted", message)
