"""One BroadcastJob reconcile (upstream ``ReconcileBroadcastJob.Reconcile``): read, plan, write.

Everything is read from the informer caches; the plan comes from
:func:`kruise.control.broadcastjob.plan_reconcile` and is carried out in its documented order.
Scale expectations keyed by node name keep a pass that races its own creates and deletes from
acting twice; after the expectation timeout (`--expectation-timeout`) unsatisfied the key is dropped,
as upstream does
(the next event brings it back).

A pod's first `KruisePodReady` (kruise-webhook puts that gate on every pod a kruise workload owns) is
written here, as CloneSet and the Advanced StatefulSet/DaemonSet write theirs: one pods/status patch
per running pod, never repeated while the cache lags it (resourceVersion expectations); the
pod-readiness controller leaves these pods alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import structlog

from kruise.api import broadcastjob as api
from kruise.api.objects import meta_of, status_of
from kruise.control.broadcastjob.plan import (
    EVENT_NORMAL,
    EVENT_WARNING,
    REASON_FAILED_CREATE,
    REASON_SUCCESSFUL_CREATE,
    REASON_SUCCESSFUL_DELETE,
    PodCreation,
    PodDeletion,
    ReconcilePlan,
    is_finished,
    plan_reconcile,
)
from kruise.control.common import podreadiness
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock
from kruise.kube.controller import Result
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import BROADCASTJOBS, PODS
from kruise.kube.store import OWNER_UID_INDEX
from kruise.manager.writers.expectations import Overtime, scale_hold, settled
from kruise.manager.writers.pods import PodWriter
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.broadcastjob")

CREATE_PASS_SECONDS = 3.0
"""No pod create starts once a pass has been creating this long: the pass ends as any pass does (status
written once, with the pods created so far) and the pods' add events bring the next one, so status
shows progress during a long scale-up instead of staying at 0 until the last create (issue 18)."""


def _is_timeout(error: BaseException) -> bool:
    """apierrors.IsTimeout: the server accepted the create but did not finish it in time."""
    return isinstance(error, ApiError) and error.reason == "Timeout"


class BroadcastJobReconciler:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        *,
        jobs: SharedInformer,
        pods: SharedInformer,
        nodes: SharedInformer,
        expectations: ScaleExpectations,
        wall: Callable[[], datetime],
        by_scheduler: bool = True,
        rv_expectations: ResourceVersionExpectations | None = None,
        clock: Clock | None = None,
        create_pass_seconds: float = CREATE_PASS_SECONDS,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, BROADCASTJOBS)
        self.recorder = recorder
        self.jobs, self.pods, self.nodes = jobs, pods, nodes
        self.expectations = expectations
        self.wall = wall
        self.by_scheduler = by_scheduler
        """upstream ``--assign-bcj-pods-by-scheduler`` (default true): bind by node affinity."""
        self.rv_expectations = rv_expectations or ResourceVersionExpectations()
        self.clock = clock or RealClock()
        self.create_pass_seconds = create_pass_seconds
        self.pod_writer = PodWriter(client, self.rv_expectations)

    async def reconcile(self, key: str) -> Result | None:
        cached = self.jobs.get(key)
        if cached is None:
            self.expectations.delete(key)
            return None
        if (hold := scale_hold(self.expectations, key, Overtime.GIVE_UP)) is not None:
            return hold.result

        body: dict[str, Any] = copy.deepcopy(dict(cached))
        job = api.BroadcastJob.from_dict(body)
        uid = job.metadata.uid or ""
        pods = self.pods.by_index(OWNER_UID_INDEX, uid) if uid else []
        plan = plan_reconcile(job, self.nodes.list(), pods, self.wall(), by_scheduler=self.by_scheduler)

        if plan.delete_job:
            log.info("deleting finished BroadcastJob past its ttlSecondsAfterFinished", key=key)
            try:
                await self.client.delete(
                    BROADCASTJOBS, job.metadata.name or "", job.metadata.namespace, uid=uid
                )
            except NotFound:
                pass
            except ApiError as exc:
                log.error("failed to delete BroadcastJob", key=key, error=str(exc))
            return None
        if plan.status is None:
            return _requeue(plan)

        for event in plan.events:
            self.recorder.event(body, event.type, event.reason, event.message)
        deleted, delete_error = await self._delete_pods(key, body, plan.deletes)
        created, create_error = await self._create_pods(key, body, plan.creates)
        await self._write_readiness(pods)
        settlement = plan.settle(deleted=deleted, created=created)
        for event in settlement.events:
            self.recorder.event(body, event.type, event.reason, event.message)
        await self.status_writer.write(body, settlement.status, still_wanted=_unfinished)

        error = delete_error or create_error
        if error is not None:
            raise error
        if plan.error is not None:
            raise ValueError(plan.error)
        return _requeue(plan)

    async def _delete_pods(
        self, key: str, job: dict[str, Any], deletions: tuple[PodDeletion, ...]
    ) -> tuple[int, BaseException | None]:
        """upstream ``deleteJobPods``: all at once; count the deletes that succeeded."""

        async def delete_one(deletion: PodDeletion) -> bool:
            self.expectations.expect(key, ScaleExpectations.DELETE, deletion.node)
            try:
                await self.client.delete(PODS, deletion.name, job["metadata"]["namespace"], uid=deletion.uid)
            except Exception as exc:
                self.expectations.observe(key, ScaleExpectations.DELETE, deletion.node)
                log.info("failed to delete BroadcastJob pod", key=key, pod=deletion.name, error=str(exc))
                raise
            self.recorder.event(job, EVENT_NORMAL, REASON_SUCCESSFUL_DELETE, f"Delete pod: {deletion.name}")
            return True

        results = await asyncio.gather(*(delete_one(d) for d in deletions), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        for error in errors:
            if isinstance(error, asyncio.CancelledError):
                raise error
        return len(results) - len(errors), (errors[0] if errors else None)

    async def _create_pods(
        self, key: str, job: dict[str, Any], creations: tuple[PodCreation, ...]
    ) -> tuple[int, BaseException | None]:
        """upstream ``reconcilePods``: slow-start batches 1, 2, 4 …, stopping after a batch with a
        failure. Like upstream, every attempted create counts as active (a failed one too, unless
        it timed out: that pod may still appear), and the first error is returned. No batch starts
        after ``CREATE_PASS_SECONDS``: the nodes left are neither counted nor expected."""
        counted = 0
        first_error: BaseException | None = None
        start, batch = 0, 1
        deadline = self.clock.now() + self.create_pass_seconds
        while start < len(creations):
            if start and self.clock.now() >= deadline:
                break  # the other nodes next pass (CREATE_PASS_SECONDS), after this status write
            chunk = creations[start : start + batch]
            results = await asyncio.gather(
                *(self._create_one(key, job, c) for c in chunk), return_exceptions=True
            )
            failures = 0
            for result in results:
                if isinstance(result, asyncio.CancelledError):
                    raise result
                if isinstance(result, BaseException):
                    if _is_timeout(result):
                        continue
                    failures += 1
                    first_error = first_error or result
                counted += 1
            start += len(chunk)
            if failures and start < len(creations):
                break
            batch = min(2 * batch, len(creations) - start)
        return counted, first_error

    async def _create_one(self, key: str, job: dict[str, Any], creation: PodCreation) -> None:
        self.expectations.expect(key, ScaleExpectations.CREATE, creation.node)
        try:
            created = await self.client.create(PODS, creation.pod)
        except Exception as exc:
            self.expectations.observe(key, ScaleExpectations.CREATE, creation.node)
            self.recorder.event(job, EVENT_WARNING, REASON_FAILED_CREATE, f"Error creating: {exc}")
            raise
        name = meta_of(created).get("name") or ""
        log.info("created BroadcastJob pod", key=key, pod=name, node=creation.node)
        self.recorder.event(job, EVENT_NORMAL, REASON_SUCCESSFUL_CREATE, f"Created pod: {name}")

    async def _write_readiness(self, pods: Any) -> None:
        """`KruisePodReady=True` for each live pod that has the gate and not yet the condition; a pod
        that already finished never needs it, and one whose last write the cache does not show yet
        is left for the pass that sees it."""
        now = self.wall()
        for pod in settled(self.rv_expectations, pods):
            meta = pod.get("metadata") or {}
            phase = status_of(pod).get("phase")
            if meta.get("deletionTimestamp") or phase in ("Succeeded", "Failed"):
                continue
            if not podreadiness.lacks_condition(pod):
                continue
            with contextlib.suppress(NotFound):
                await self.pod_writer.patch_conditions(
                    pod, lambda current: podreadiness.with_initial_condition(current, now)
                )


def _unfinished(fresh: Mapping[str, Any]) -> bool:
    """The conflict rule of a BroadcastJob's status: the same status goes onto a fresh copy unless that
    copy is already finished. A pass that ran on a cache older than the finishing write (e.g. woken by
    the deletion of a pod FailFast removed, before the job's own update arrived) would otherwise
    overwrite final counts with its stale ones (upstream does; a finished job's status is final here)."""
    if is_finished(api.BroadcastJob.from_dict(copy.deepcopy(dict(fresh)))):
        log.info("BroadcastJob finished meanwhile; stale status dropped", job=meta_of(fresh).get("name"))
        return False
    return True


def _requeue(plan: ReconcilePlan) -> Result | None:
    if plan.requeue_after is None or plan.requeue_after.total_seconds() <= 0:
        return None
    return Result(requeue_after=plan.requeue_after.total_seconds())
