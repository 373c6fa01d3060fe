"""Conflict-safe pod writes shared by every controller that writes pods: object and status writes,
status patches merged by key (conditions by type), lifecycle-state patches.

Every write records the returned resourceVersion in the resourceVersion expectations, so the next
reconcile waits until the informer has caught up instead of acting on the pod it just changed. A
controller that never waits on them (it re-reads nothing it wrote: NodePodProbe, SidecarTerminator,
ContainerRecreateRequest) passes no expectations, and nothing is recorded that nobody would clear.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

from kruise.api.objects import Obj, conditions_of, section
from kruise.control.common import lifecycle, podreadiness
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Conflict
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.projection import is_projected
from kruise.kube.resources import PODS

MAX_CONFLICT_RETRIES = 5


def state_for_status_write(pod: Obj, state: str | None, mark_not_ready: bool, now: datetime) -> str | None:
    """The lifecycle move that may ride in a status write the controller makes anyway (see
    `PodWriter.patch_conditions`), or None: any move except one whose markPodNotReady hook changes
    readiness, which upstream writes first and on its own (`set_lifecycle_state`)."""
    if not state:
        return None
    if mark_not_ready and podreadiness.lifecycle_readiness_change(pod, state, now) is not None:
        return None
    return state


class PodWriter:
    def __init__(self, client: Client, rv_expectations: ResourceVersionExpectations | None = None) -> None:
        self.client = client
        self.rv_expectations = rv_expectations

    def _expect(self, written: dict[str, Any]) -> None:
        if self.rv_expectations is not None:
            self.rv_expectations.expect(written)

    async def patch_status(self, pod: Obj, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send `body` as a strategic merge patch of pods/status (conditions merge by type, so `body`
        names only the conditions it sets). No resourceVersion: the kubelet's concurrent status writes
        cannot make it conflict, and a PUT of the whole status would race them. Raises NotFound for a
        pod deleted meanwhile; a caller for which that ends the work suppresses it."""
        meta = pod["metadata"]
        patched = await self.client.patch(
            PODS,
            meta["name"],
            dict(body),
            meta["namespace"],
            patch_type=PatchType.STRATEGIC,
            subresource="status",
        )
        self._expect(patched)
        return patched

    async def set_lifecycle_state(
        self, pod: Obj, state: str, mark_not_ready: bool, now: datetime
    ) -> dict[str, Any] | None:
        """`UpdatePodLifecycle`: the readiness key (markPodNotReady) and the state label. Upstream writes
        them in that order so the pod leaves endpoints before its state says so; here both go in ONE
        pods/status update (the status strategy stores labels and annotations), which keeps that
        guarantee — no one ever sees the new state on a pod still ready — at one write instead of two.
        The update carries the resourceVersion and is recomputed on a fresh read after a conflict, as
        the readiness keys are a list merged with other writers'. Returns the written pod, or None when
        the state was already `state`."""
        moves = lifecycle.pod_state(pod) != state
        if mark_not_ready:

            def change(fresh: Obj) -> dict[str, Any] | None:
                new = podreadiness.lifecycle_readiness_change(fresh, state, now)
                if new is None or not moves:
                    return new
                meta = new.setdefault("metadata", {})
                for key, values in lifecycle.state_patch(state, now)["metadata"].items():
                    meta[key] = {**section(meta, key), **values}
                return new

            written = await self.write_status_with(pod, change)
            if written is not None:
                return written if moves else None
        if not moves:
            return None
        meta = pod["metadata"]
        patched = await self.client.patch(
            PODS,
            meta["name"],
            lifecycle.state_patch(state, now),
            meta["namespace"],
            patch_type=PatchType.STRATEGIC,
        )
        self._expect(patched)
        return patched

    async def patch_conditions(
        self,
        pod: Obj,
        change: Callable[[Obj], dict[str, Any] | None],
        *,
        state: str | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any] | None:
        """Apply `change` and send only the pod conditions it changed, as a strategic merge patch (merged
        by condition type): no resourceVersion, so the kubelet's concurrent status writes never make it
        conflict — at 1000 pods a PUT here conflicted every other time.

        `state` (with `now`) moves the pod's lifecycle state in the same pods/status patch:
        kube-apiserver's pod status strategy resets only spec, deletionTimestamp and ownerReferences,
        so labels and annotations written there are stored. Conditions and state land together, one
        write where upstream makes two, and no observer sees the state ahead of the conditions."""
        new = change(pod)
        moves = state is not None and lifecycle.pod_state(pod) != state
        if new is None and not moves:
            return None
        body: dict[str, Any] = {}
        if new is not None:
            conditions = self._changed_conditions(pod, new)
            if conditions:
                body["status"] = {"conditions": conditions}
        if moves:
            if state is None or now is None:
                raise ValueError("patch_conditions: a lifecycle state move needs `now` for its timestamp")
            body.update(lifecycle.state_patch(state, now))
        if not body:
            return None
        return await self.patch_status(pod, body)

    @staticmethod
    def _changed_conditions(pod: Obj, new: Obj) -> list[dict[str, Any]]:
        before = {c.get("type"): c for c in conditions_of(pod)}
        changed = []
        for condition in conditions_of(new):
            old = before.get(condition.get("type"))
            if old == condition:
                continue
            # a merge patch keeps fields it does not mention: drop the old reason/message explicitly
            changed.append({**dict.fromkeys(set(old or {}) - set(condition)), **condition})
        return changed

    async def write_status_with(
        self, pod: Obj, change: Callable[[Obj], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        return await self._write(pod, change, status=True)

    async def write_with(
        self,
        pod: Obj,
        change: Callable[[Obj], dict[str, Any] | None],
        *,
        before_write: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> dict[str, Any] | None:
        """`before_write` runs on each computed object just before its PUT (the in-place writer sends
        `pods/resize` there and carries the result into the object)."""
        return await self._write(pod, change, status=False, before_write=before_write)

    async def _write(
        self,
        pod: Obj,
        change: Callable[[Obj], dict[str, Any] | None],
        *,
        status: bool,
        before_write: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> dict[str, Any] | None:
        """Apply `change` (pod -> new pod or None) and PUT it; on Conflict re-read the pod and
        recompute, as upstream's RetryOnConflict around a fresh Get does."""
        current: Obj = pod
        if is_projected(current):
            # The cache keeps only what controllers read; a PUT needs every field.
            current = await self.client.get(PODS, pod["metadata"]["name"], pod["metadata"]["namespace"])
        for attempt in range(MAX_CONFLICT_RETRIES):
            new = change(current)
            if new is None:
                return None
            if before_write is not None:
                await before_write(new)
            try:
                if status:
                    written = await self.client.update_status(PODS, new)
                else:
                    written = await self.client.update(PODS, new)
            except Conflict:
                if attempt == MAX_CONFLICT_RETRIES - 1:
                    raise
                meta = current["metadata"]
                current = await self.client.get(PODS, meta["name"], meta["namespace"])
                continue
            self._expect(written)
            return written
        return None
