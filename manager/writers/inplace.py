"""The in-place update sequence, written once for all workload controllers (upstream `inplaceupdate`).

The order of the writes is the contract that makes an in-place update safe to interrupt:

1. `InPlaceUpdateReady=False` (and `Ready` recomputed) as one condition patch on `pods/status`, so the pod
   leaves Service endpoints before any container restarts;
2. one object write carrying the new revision labels, the `inplace-update-state` annotation and the new
   images (or, inside a grace period, the pending spec in the grace annotation), retried on conflict
   against a fresh read — and dropped when that read shows the same update already begun (`already_begun`:
   a new leader whose cache lagged its predecessor's last write must not begin it twice);
3. on later reconciles, `refresh`: finish the grace period, roll the next container batch, and once the
   kubelet reports the new containers flip `InPlaceUpdateReady` back to True — with the lifecycle state
   the controller moves to next (Updating -> Normal) in that same pods/status patch.

A manager killed between any two of these writes resumes from what the pod object says, because every
step is derived from the pod alone (`kruise.control.common.inplace.engine`). Controllers that do not use the
readiness gate (SidecarSet) skip step 1 through `update`, which is step 2 alone.

With the InPlaceWorkloadVerticalScaling gate (`vertical_scaling`) cpu/memory changes are applied in place
too, by one of two writes chosen from the apiserver's version, which kruise-manager reads once at start
(`ManagerContext.resize_subresource`, upstream's `ShouldUpdateResourceByResize`): Kubernetes 1.32+ accepts
resource changes only through `pods/resize` (a plain pod update touching them is refused), so with
`resize_subresource` step 2 first sends the resize body as a strategic merge patch and then writes the pod
object on top of the resized pod; older servers have no `pods/resize`, so without it (also the answer for
an unparsable or unread version, as upstream's parse failure) the new resources ride the step-2 object
write itself and no resize request is sent.
Step 1 is skipped for a resources-only update unless a resized container's resizePolicy restarts it
(`needs_unready`): the pod keeps serving while kubelet resizes it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.api.objects import Obj, containers_of
from kruise.control.common.inplace.engine import (
    RefreshResult,
    WriteRevision,
    already_begun,
    begin_update,
    needs_unready,
    refresh,
    unready_pod,
)
from kruise.control.common.inplace.spec import UpdateSpec
from kruise.kube.client import Client, PatchType
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import PODS
from kruise.manager.writers.pods import PodWriter

PodChange = Callable[[Obj], dict[str, Any] | None]
ResizingChange = Callable[[Obj], tuple[dict[str, Any] | None, dict[str, Any] | None]]
"""pod -> (the pod object to write or None, the `pods/resize` body to send first or None)."""


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
    def __init__(
        self,
        client: Client,
        rv_expectations: ResourceVersionExpectations,
        *,
        vertical_scaling: bool = False,
        resize_subresource: bool = False,
    ) -> None:
        """`vertical_scaling`: the InPlaceWorkloadVerticalScaling gate. `resize_subresource`: send resources
        through `pods/resize` (server 1.32+, `ManagerContext.resize_subresource`) rather than in the pod
        object write; see the module docstring."""
        self.pods = PodWriter(client, rv_expectations)
        self.client = client
        self.rv_expectations = rv_expectations
        self.vertical_scaling = vertical_scaling
        self.resize_subresource = resize_subresource and vertical_scaling

    @property
    def modes(self) -> dict[str, bool]:
        """The engine's keyword arguments for this writer's gates."""
        return {"vertical_scaling": self.vertical_scaling, "resize_subresource": self.resize_subresource}

    def refresh_step(
        self, pod: Obj, now: datetime, matches_revision: Callable[[Mapping[str, Any], str], bool]
    ) -> RefreshResult:
        """The engine's `refresh` with this writer's gates (for callers planning before writing)."""
        return refresh(pod, now, matches_revision, **self.modes)

    async def start(
        self,
        pod: Obj,
        spec: UpdateSpec,
        now: datetime,
        *,
        write_revision: WriteRevision,
        also: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any] | None:
        """Steps 1 and 2. `write_revision` stamps the controller's revision labels; `also` adds the
        controller's own metadata (CloneSet's lifecycle state) to the same object write, so an update costs
        one status patch and one object write whatever the controller (a resize adds its `pods/resize`
        patch before the object write; a resources-only update skips the status patch: `needs_unready`)."""
        written = None
        if needs_unready(pod, spec, vertical_scaling=self.vertical_scaling):
            written = await self.pods.patch_conditions(pod, lambda current: unready_pod(current, now))
        base: Obj = written or pod

        def change(fresh: Obj) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
            if already_begun(fresh, spec, write_revision):
                return None, None
            result = begin_update(fresh, spec, now, write_revision, **self.modes)
            if also is not None:
                also(result.pod)
            return result.pod, result.resize

        return await self._write_resizing(copy.deepcopy(dict(base)), change)

    async def _write_resizing(self, pod: Obj, change: ResizingChange) -> dict[str, Any] | None:
        """PUT the pod `change` computes, sending its `pods/resize` body first (upstream's order); the
        object write then carries the resized pod's resources and resourceVersion (a plain update may not
        change resources). On Conflict the pod is re-read and everything recomputed, as upstream's
        RetryOnConflict; a resize already applied is not sent again (its body comes out empty)."""
        pending: list[dict[str, Any] | None] = [None]

        def object_change(current: Obj) -> dict[str, Any] | None:
            new, pending[0] = change(current)
            return new

        async def resize_first(new: dict[str, Any]) -> None:
            if pending[0] is None:
                return
            meta = new["metadata"]
            resized = await self.client.patch(
                PODS,
                meta["name"],
                pending[0],
                meta["namespace"],
                patch_type=PatchType.STRATEGIC,
                subresource="resize",
            )
            self.rv_expectations.expect(resized)
            _carry_resize(new, resized)

        return await self.pods.write_with(pod, object_change, before_write=resize_first)

    async def update(self, pod: Obj, change: PodChange) -> dict[str, Any] | None:
        """Step 2 alone, for changes computed by the controller itself (SidecarSet's sidecar images):
        `change` is re-run on a fresh read after a conflict, never applied to a stale pod."""
        return await self.pods.write_with(pod, change)

    async def refresh(
        self,
        pod: Obj,
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
            step = self.refresh_step(pod, now, matches_revision)
        if step.error:
            raise InPlaceRefreshError(step.error)
        delay = float(step.delay_seconds) if step.delay_seconds else None
        if step.pod is not None:
            # recomputed on the fresh pod after a conflict: the step depends on the pod alone
            def change(fresh: Obj) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
                result = self.refresh_step(fresh, now, matches_revision)
                return result.pod, result.resize

            await self._write_resizing(pod, change)
            return RefreshOutcome(wrote=True, requeue_after=delay)
        if step.status_pod is not None:
            status_pod = step.status_pod
            await self.pods.patch_conditions(pod, lambda _: status_pod, state=state, now=now)
            return RefreshOutcome(wrote=True, requeue_after=delay, state_moved=state is not None)
        return RefreshOutcome(requeue_after=delay)


def _carry_resize(pod: dict[str, Any], resized: Obj) -> None:
    """Give the object write the resized pod's container resources and resourceVersion, so it neither
    reverts the resize nor conflicts with it."""
    pod["metadata"]["resourceVersion"] = resized["metadata"].get("resourceVersion")
    by_name = {c.get("name"): c for c in containers_of(resized)}
    for container in containers_of(pod):
        source = by_name.get(container.get("name"))
        if source is None:
            continue
        for key in ("resources", "resizePolicy"):
            if key in source:
                container[key] = copy.deepcopy(source[key])
