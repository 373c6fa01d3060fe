"""One pass over an EphemeralJob: finalizer, TTL, status, and ephemeral containers for the next pods.

The rules (targets, pod states, status, who gets containers next) are `kruise.control.ephemeraljob.injection`.
This module reads the caches, guards against a stale pod cache with scale expectations (a pod just
given containers must not get them twice), makes the writes, and emits upstream's events
(`CreateFailed` when adding containers to a pod fails).
"""

from __future__ import annotations

import contextlib

from kruise.api.keys import FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP
from kruise.api.objects import Obj
from kruise.control.ephemeraljob import injection
from kruise.kube.client import Client, PatchType
from kruise.kube.clock import Clock
from kruise.kube.controller import Result
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import EPHEMERALJOBS, PODS
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.writers.expectations import Overtime, scale_hold
from kruise.manager.writers.status import StatusWriter

_SOON = 0.001  # a requeue_after of 0 means "no requeue": a TTL of 0 still needs one more pass


class EphemeralJobReconciler:
    """Reads jobs and pods from the caches; patches pods/ephemeralcontainers, the job's finalizers
    and status, and deletes the job once its TTL after finishing ran out."""

    def __init__(
        self,
        client: Client,
        *,
        jobs: SharedInformer,
        pods: SharedInformer,
        recorder: EventRecorder,
        expectations: ScaleExpectations,
        clock: Clock,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, EPHEMERALJOBS)
        self.jobs = jobs
        self.pods = pods
        self.recorder = recorder
        self.expectations = expectations
        self.clock = clock

    async def reconcile(self, key: str) -> Result | None:
        job = self.jobs.get(key)
        if job is None:
            self.expectations.delete(key)
            return None
        finalizers = list(job["metadata"].get("finalizers") or [])
        if job["metadata"].get("deletionTimestamp"):
            # ephemeral containers cannot be removed from a pod: there is nothing to clean up
            if FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP in finalizers:
                await self._set_finalizers(
                    job, [f for f in finalizers if f != FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP]
                )
            return None
        if FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP not in finalizers:
            await self._set_finalizers(job, [*finalizers, FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP])
        now = self.clock.wall()
        left = injection.ttl_left(job, now)
        if left is not None:
            if left > 0:
                return Result(requeue_after=left)
            meta = job["metadata"]
            with contextlib.suppress(NotFound):
                await self.client.delete(EPHEMERALJOBS, meta["name"], meta["namespace"])
            self.expectations.delete(key)
            return None
        if (hold := scale_hold(self.expectations, key, Overtime.GIVE_UP)) is not None:
            return hold.result  # after the timeout upstream gives up until the next event
        targets = injection.target_pods(
            job, self.pods.by_index(NAMESPACE_INDEX, job["metadata"]["namespace"])
        )
        new_status = injection.status(job, targets, now)
        requeue = injection.deadline_left(job, new_status["startTime"], now)
        result = Result(requeue_after=requeue) if requeue is not None else None
        if new_status["phase"] != "Paused":
            try:
                await self._inject(key, job, injection.to_inject(job, targets, new_status["running"]))
            except ApiError:
                await self.status_writer.write(job, new_status)
                raise
        await self.status_writer.write(job, new_status)
        if "completionTime" in new_status:
            # finished now: come back when the TTL runs out (a status write wakes no one)
            left = injection.ttl_left({**job, "status": new_status}, now)
            return Result(requeue_after=max(left or 0.0, _SOON))
        return result

    async def _inject(self, key: str, job: Obj, pods: list[Obj]) -> None:
        """Add the job's containers to each pod; the first failure is reported and stops the batch."""
        patch = injection.injection_patch(job)
        for pod in pods:
            if injection.contains_job_container(job, pod):
                continue
            names = injection.expectation_names(job, pod)
            for name in names:
                self.expectations.expect(key, ScaleExpectations.CREATE, name)
            meta = pod["metadata"]
            try:
                await self.client.patch(
                    PODS, meta["name"], patch, meta["namespace"],
                    patch_type=PatchType.STRATEGIC, subresource="ephemeralcontainers",
                )  # fmt: skip
            except ApiError as error:
                for name in names:
                    self.expectations.observe(key, ScaleExpectations.CREATE, name)
                message = (
                    f"failed to create ephemeral container in pod {meta['namespace']}/{meta['name']}: {error}"
                )
                self.recorder.event(dict(job), "Warning", "CreateFailed", message)
                raise

    async def _set_finalizers(self, job: Obj, finalizers: list[str]) -> None:
        meta = job["metadata"]
        body = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
        with contextlib.suppress(NotFound):
            await self.client.patch(EPHEMERALJOBS, meta["name"], body, meta["namespace"])
