"""The in-place update sequence, written once for all workload controllers (upstream `inplaceupdate`).

The order of the writes is the contract that makes an in-place update safe to interrupt:

1. `InPlaceUpdateReady=False` (and `Ready` recomputed) as one condition patch on `pods/status`, so the pod
   leaves Service endpoints before any container restarts;
2. one object write carrying the new revision labels, the `inplace-update-state` annotation and the new
   images (or, inside a grace period, the pending spec in the grace annotation), retried on conflict
   against a fresh read;
3. on later reconciles, `refresh`: finish the grace period, roll the next container batch, and once the
   kubelet reports the new containers flip `InPlaceUpdateReady` back to True — with the lifecycle state
   the controller moves to next (Updating -> Normal) in that same pods/status patch.

A manager killed between any two of these writes resumes from what the pod object says, because every
step is derived from the pod alone (`kruise.control.inplace.engine`). Controllers that do not use the
readiness gate (SidecarSet) skip step 1 through `update`, which is step 2 alone.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.control.inplace.engine import RefreshResult, WriteRevision, refresh, start_update, unready_pod
from kruise.control.inplace.spec import UpdateSpec
from kruise.kube.client import Client
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.manager.writers.pods import PodWriter

Pod = Mapping[str, Any]
PodChange = Callable[[Pod], dict[str, Any] | None]


class InPlaceRefreshError(Exception):
    """The pod's in-place annotations are inconsistent; the message names what is missing."""


@dataclass(frozen=True)
class RefreshOutcome:
    """What one `refresh` did: `wrote` when a pod was written, `requeue_after` while a grace period runs."""

    wrote: bool = False
    requeue_after: float | None = None
    state_moved: bool = False
    """The lifecycle state asked for rode in the status write (the caller has nothing left to patch)."""


class InPlaceWriter:
    def __init__(self, client: Client, rv_expectations: ResourceVersionExpectations) -> None:
        self.pods = PodWriter(client, rv_expectations)

    async def start(
        self,
        pod: Pod,
        spec: UpdateSpec,
        now: datetime,
        *,
        write_revision: WriteRevision,
        also: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any] | None:
        """Steps 1 and 2. `write_revision` stamps the controller's revision labels; `also` adds the
        controller's own metadata (CloneSet's lifecycle state) to the same object write, so an update costs
        one status patch and one object write whatever the controller."""
        written = await self.pods.patch_conditions(pod, lambda current: unready_pod(current, now))
        base: Pod = written or pod

        def change(fresh: Pod) -> dict[str, Any]:
            updated = start_update(fresh, spec, now, write_revision)
            if also is not None:
                also(updated)
            return updated

        return await self.pods.write_with(copy.deepcopy(dict(base)), change)

    async def update(self, pod: Pod, change: PodChange) -> dict[str, Any] | None:
        """Step 2 alone, for changes computed by the controller itself (SidecarSet's sidecar images):
        `change` is re-run on a fresh read after a conflict, never applied to a stale pod."""
        return await self.pods.write_with(pod, change)

    async def refresh(
        self,
        pod: Pod,
        now: datetime,
        matches_revision: Callable[[Mapping[str, Any], str], bool],
        step: RefreshResult | None = None,
        *,
        state: str | None = None,
    ) -> RefreshOutcome:
        """Step 3: at most one write; `step` is the engine's verdict when the caller's plan already has it.
        `state`: the lifecycle state the caller moves the pod to next (e.g. Updating -> Normal once the
        update completed); when this step is a status write the state rides in it (`state_moved`).
        Raises `InPlaceRefreshError` when the annotations contradict each other (a grace annotation
        without a state), which upstream reports as an update failure."""
        if step is None:
            step = refresh(pod, now, matches_revision)
        if step.error:
            raise InPlaceRefreshError(step.error)
        delay = float(step.delay_seconds) if step.delay_seconds else None
        if step.pod is not None:
            # recomputed on the fresh pod after a conflict: the step depends on the pod alone
            await self.pods.write_with(pod, lambda fresh: refresh(fresh, now, matches_revision).pod)
            return RefreshOutcome(wrote=True, requeue_after=delay)
        if step.status_pod is not None:
            status_pod = step.status_pod
            await self.pods.patch_conditions(pod, lambda _: status_pod, state=state, now=now)
            return RefreshOutcome(wrote=True, requeue_after=delay, state_moved=state is not None)
        return RefreshOutcome(requeue_after=delay)
