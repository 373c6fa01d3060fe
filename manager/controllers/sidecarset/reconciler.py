"""One SidecarSet pass: status of the covered pods, then the next pods' sidecar images in place.

When the SidecarSet's containers change only in their images, pods are updated in place a few at a time
(`updateStrategy`: partition, maxUnavailable, selector, paused, type NotUpdate); the kubelet restarts just
those sidecars. A hot-upgrade sidecar's new image goes into the idle container of its pair, and a later
pass, once that container runs ready, resets the old one to the empty image (`update.pods_to_flip`); such
resets come before any further update, as upstream. A change beyond images cannot be applied in place and
waits for the pods to be recreated by their owners: such pods get `SidecarSetUpgradable=False` and the
SidecarSet a NotUpgradablePods event; pods updated in place get `SidecarSetUpgradable=True`.
A pod update kruise-webhook refuses for a PodUnavailableBudget ends the pass, which comes back a second
later (what upstream's CloneSet does on a refusal). Upstream's SidecarSet returns the error into the
workqueue's backoff instead, and there every refused pass doubles the wait: with sidecars that restart
within the budget's 10 s record of the last updated pod, no pod event comes after the budget frees up,
and the next pod waits minutes.
Every pass first stores the sidecar part of the SidecarSet as its latest ControllerRevision
(`history`), named in `status.latestRevision`; the pod webhook injects it into new pods, and a pod updated
in place records it (`controllerRevision` of its hash entry) together with the SidecarSet's patchPodMetadata.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

import structlog

from kruise.api.keys import EVENT_NOT_UPGRADABLE_PODS
from kruise.api.objects import section, spec_of
from kruise.control.pub import budget
from kruise.control.sidecarset import condition, matching, update
from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.errors import Forbidden, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import SIDECARSETS, object_key
from kruise.manager.controllers.sidecarset.history import SidecarSetHistory
from kruise.manager.writers.expectations import writes_pending
from kruise.manager.writers.inplace import InPlaceWriter
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.sidecarset")

EXPECTATION_REQUEUE = 1.0
PUB_REFUSED_REQUEUE = 1.0


class SidecarSetReconciler:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        inplace: InPlaceWriter,
        expectations: ResourceVersionExpectations,
        history: SidecarSetHistory,
        *,
        sidecarsets: SharedInformer,
        pods: SharedInformer,
        namespaces: SharedInformer,
        wall: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, SIDECARSETS)
        self.recorder = recorder
        self.inplace = inplace
        self.expectations = expectations
        self.history = history
        self.sidecarsets, self.pods, self.namespaces = sidecarsets, pods, namespaces
        self.wall = wall

    def _namespace_labels(self, name: str) -> dict[str, str] | None:
        namespace = self.namespaces.get(name)
        return None if namespace is None else section(namespace["metadata"], "labels")

    def covered(self, sidecarset: dict[str, Any]) -> list[dict[str, Any]]:
        """Active pods this SidecarSet was injected into and still matches."""
        target = spec_of(sidecarset).get("namespace")
        return [
            p
            for p in self.pods.list()
            if matching.is_active_pod(p)
            and (not target or p["metadata"].get("namespace") == target)
            and update.is_injected(p, sidecarset)
            and update.has_sidecar_containers(p, sidecarset)
            and matching.pod_matches(sidecarset, p, self._namespace_labels)
        ]

    async def reconcile(self, name: str) -> Result | None:
        sidecarset = self.sidecarsets.get(name)
        if sidecarset is None or sidecarset["metadata"].get("deletionTimestamp"):
            return None
        matched = self.covered(sidecarset)
        if writes_pending(self.expectations, matched):
            return Result(requeue_after=EXPECTATION_REQUEUE)  # our last pod write is not in the cache yet
        latest = await self.history.register_latest(sidecarset, matched)
        status = {
            **update.compute_status(sidecarset, matched),
            "latestRevision": latest.name,
            "collisionCount": latest.collision_count,
        }
        await self.status_writer.write(sidecarset, status)
        # as upstream, the rest of the pass sees the status just computed: pods updated below record
        # `latestRevision` in their hash entry, not the revision of the cache's older status
        sidecarset = {**sidecarset, "status": {**(sidecarset.get("status") or {}), **status}}
        if not update.rolling(sidecarset):
            return None
        now = self.wall()
        flips = update.pods_to_flip(sidecarset, matched)
        if flips:
            await self._reset_old_containers(sidecarset, flips, now)
            return None
        if status["updatedPods"] >= status["matchedPods"]:
            return None
        await self._mark_not_upgradable(sidecarset, update.pods_not_upgradable(sidecarset, matched), now)
        for pod in update.pods_to_update(sidecarset, matched):
            try:
                written = await self.inplace.update(pod, lambda fresh: self._upgraded(fresh, sidecarset, now))
            except NotFound:  # deleted meanwhile: nothing to upgrade
                continue
            except Forbidden as exc:
                if not budget.is_refusal(exc.message):
                    raise
                log.info("sidecar update held back by a PodUnavailableBudget", sidecarset=name,
                         pod=object_key(pod), reason=exc.message)  # fmt: skip
                return Result(requeue_after=PUB_REFUSED_REQUEUE)
            if written is not None:
                await self._set_upgradable(written, name, True, now)
            log.info("sidecars updated in place", sidecarset=name, pod=object_key(pod))
        return None

    async def _reset_old_containers(
        self, sidecarset: dict[str, Any], pods: list[dict[str, Any]], now: datetime
    ) -> None:
        """Second half of a hot upgrade: the old container of each pair back on the empty image."""

        def reset(fresh: Any) -> dict[str, Any] | None:
            return update.flipped_pod(fresh, sidecarset, now)

        for pod in pods:
            try:
                written = await self.inplace.update(pod, reset)
            except NotFound:
                continue
            if written is not None:
                self.recorder.event(
                    dict(pod),
                    "Normal",
                    "ResetContainerSucceed",
                    "reset sidecar container image empty successfully",
                )
                log.info(
                    "hot-upgrade old sidecars reset to the empty image",
                    sidecarset=sidecarset["metadata"]["name"],
                    pod=object_key(pod),
                )

    @staticmethod
    def _upgraded(pod: Any, sidecarset: dict[str, Any], now: datetime) -> dict[str, Any] | None:
        """Recomputed on every fresh read: a pod already upgraded by the time we retry is left alone."""
        if update.is_updated(pod, sidecarset) or not update.is_upgradable(pod, sidecarset):
            return None
        return update.updated_pod(pod, sidecarset, now)

    async def _set_upgradable(self, pod: dict[str, Any], name: str, upgradable: bool, now: datetime) -> None:
        with contextlib.suppress(NotFound):
            await self.inplace.pods.patch_conditions(
                pod, lambda current: condition.with_upgradable(current, name, upgradable, now)
            )

    async def _mark_not_upgradable(
        self, sidecarset: dict[str, Any], pods: list[dict[str, Any]], now: datetime
    ) -> None:
        """Pods this change cannot reach in place: `SidecarSetUpgradable=False` on each, one event."""
        name = sidecarset["metadata"]["name"]
        for pod in pods:
            await self._set_upgradable(pod, name, False, now)
        if pods:
            self.recorder.event(
                dict(sidecarset),
                "Normal",
                EVENT_NOT_UPGRADABLE_PODS,
                f"SidecarSet in-place update detected {len(pods)} not upgradable pod(s) in this round, "
                "will skip them.",
            )
