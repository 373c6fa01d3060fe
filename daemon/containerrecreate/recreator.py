"""The container recreator: carries out ContainerRecreateRequests for pods on this node.

It watches the active requests labelled with this node and the pods scheduled here; every change
of either re-evaluates the request (`progress.plan_recreate`). Only the oldest active request of a pod runs,
the others wait in phase Pending. The running one is first moved to phase Recreating: that is the
daemon's answer kruise-manager waits for, both to stop its "daemon has not responded" clock and to
take the pod out of service for `unreadyGracePeriodSeconds`; only then are containers killed. A
kill runs the container's preStop exec hook through the CRI and then StopContainer with the grace
period; the kubelet notices the exit and starts the container again, which the pod status shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import grpc
import structlog

from kruise.api.crr import PHASE_COMPLETED, PHASE_FAILED, PHASE_PENDING, PHASE_RECREATING
from kruise.api.keys import (
    ANNOTATION_CRR_UNREADY_ACQUIRED,
    LABEL_CRR_ACTIVE,
    LABEL_CRR_NODE_NAME,
    LABEL_CRR_POD_UID,
)
from kruise.api.objects import section, spec_of, status_of
from kruise.api.timestamps import rfc3339
from kruise.control.common import podstatus
from kruise.daemon.containerrecreate.progress import (
    Kill,
    completed_status,
    finished,
    initial_states,
    must_stop,
    plan_recreate,
    recreating_status,
)
from kruise.daemon.cri.client import RuntimeClient
from kruise.kube.client import Client
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS, object_key
from kruise.kube.store import NAMESPACE_INDEX

log = structlog.get_logger("kruise.daemon.crr")

DEFAULT_GRACE_SECONDS = 30
MIN_GRACE_SECONDS = 2
RECHECK_SECONDS = 1.0


def _created(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("creationTimestamp") or "", meta.get("name") or ""


class ContainerRecreator:
    def __init__(
        self,
        client: Client,
        runtime: RuntimeClient,
        node_name: str,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        workers: int = 4,
    ) -> None:
        self.client = client
        self.runtime = runtime
        self.clock = clock
        self.expectations = ResourceVersionExpectations()
        self.requests = SharedInformer(
            client,
            CONTAINER_RECREATE_REQUESTS,
            None,
            label_selector=f"{LABEL_CRR_NODE_NAME}={node_name},{LABEL_CRR_ACTIVE}=true",
        )
        self.pods = SharedInformer(client, PODS, None, field_selector=f"spec.nodeName={node_name}")
        self.controller = Controller("containerrecreate", self.reconcile, workers=workers)
        self.controller.watch(self.requests, self._siblings)
        self.controller.watch(self.pods, self._requests_for_pod)
        self._workers_starter: asyncio.Future[None] | None = None

    # ---- wiring ------------------------------------------------------------------------------

    def _active_for(self, namespace: str, pod_name: str) -> list[dict[str, Any]]:
        return [
            r
            for r in self.requests.by_index(NAMESPACE_INDEX, namespace)
            if spec_of(r).get("podName") == pod_name and status_of(r).get("phase") != PHASE_COMPLETED
        ]

    def _siblings(self, crr: dict[str, Any]) -> list[str]:
        """A request and the others of its pod (one finishing lets the next one start)."""
        namespace = crr["metadata"].get("namespace", "")
        others = self._active_for(namespace, spec_of(crr).get("podName", ""))
        return sorted({object_key(crr), *(object_key(r) for r in others)})

    def _requests_for_pod(self, pod: dict[str, Any]) -> list[str]:
        return [
            object_key(r)
            for r in self._active_for(pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
        ]

    def start(self) -> None:
        """Informers now, workers once both caches have synced (as controller-runtime waits for its caches):
        a request handled before the pod cache is filled would find no pod and be completed as "pod has
        gone" without recreating anything."""
        self.requests.start()
        self.pods.start()
        self._workers_starter = asyncio.ensure_future(self._start_workers_when_synced())

    async def _start_workers_when_synced(self) -> None:
        await self.requests.wait_for_sync(None)
        await self.pods.wait_for_sync(None)
        self.controller.start()

    def has_synced(self) -> bool:
        return self.requests.has_synced() and self.pods.has_synced()

    async def stop(self, drain_seconds: float | None = 30.0) -> None:
        """Stop the workers, letting in-flight requests finish for up to `drain_seconds`, then cancel.

        A cancelled kill is safe to abandon: its outcome was not written, and the next daemon
        re-plans from the pod (a container that already restarted is never killed twice).
        """
        starter = self._workers_starter
        if starter is not None and not starter.done():
            starter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starter
        await self.controller.stop(timeout=drain_seconds)
        await self.requests.stop()
        await self.pods.stop()

    # ---- one request -------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result | None:
        cached = self.requests.get(key)
        if cached is None or status_of(cached).get("phase") == PHASE_COMPLETED:
            return None
        if not self.expectations.is_satisfied(cached):
            # Our last status write is not in the cache yet. Its watch event brings us back whichever
            # way it races the write: one that lands while we work (even before the write returns)
            # re-queues the key when we finish; one that lands later queues it then. The check reads
            # the cache's resourceVersion, not an "observed" mark, so an event handled before the
            # expectation was recorded cannot leave it stale (upstream, too, waits for the event).
            return None
        crr = copy.deepcopy(cached)
        namespace, spec = crr["metadata"]["namespace"], crr.get("spec") or {}
        pod = self.pods.get(f"{namespace}/{spec.get('podName', '')}")
        labels = crr["metadata"].get("labels") or {}
        pod_uid = labels.get(LABEL_CRR_POD_UID)
        now = self.clock()
        states = initial_states(crr)
        if pod is None or not podstatus.is_active(pod) or (pod_uid and pod["metadata"].get("uid") != pod_uid):
            await self._write(crr, completed_status(states, rfc3339(now), "pod has gone"))
            return None
        oldest = min(self._active_for(namespace, spec["podName"]), key=_created, default=crr)
        if oldest["metadata"]["name"] != crr["metadata"]["name"]:
            if status_of(crr).get("phase") != PHASE_PENDING:
                await self._write(crr, {"phase": PHASE_PENDING, "containerRecreateStates": states})
            return None
        if status_of(crr).get("phase") != PHASE_RECREATING:
            # Answer first: phase Recreating is what tells kruise-manager the daemon has the request
            # (until then it counts towards "daemon has not responded"), and what it waits for before
            # taking the pod out of service for `unreadyGracePeriodSeconds`. Our write's event brings
            # the request back here (see the expectation check above).
            await self._write(crr, recreating_status(states))
            return None
        grace = section(spec, "strategy").get("unreadyGracePeriodSeconds")
        if grace:
            acquired = podstatus.parse_time(
                section(crr["metadata"], "annotations").get(ANNOTATION_CRR_UNREADY_ACQUIRED)
            )
            if acquired is None:
                return Result(
                    requeue_after=RECHECK_SECONDS
                )  # kruise-manager takes the pod out of service first
            wait = float(grace) - (now - acquired).total_seconds()
            if wait > 0:
                return Result(requeue_after=wait)
        recreate = plan_recreate(crr, pod, states, now)
        states, kills = [dict(s) for s in recreate.states], recreate.kills
        if kills:
            # One kill per pass, as upstream's daemon: a kill can take the whole grace period (preStop),
            # and the next one must see the request as it is then (kruise-manager may have completed
            # it at its deadline); the states write below brings the request back for the next.
            await self._kill(crr, pod, kills[0], states)
        if finished(states) or must_stop(crr, states):
            await self._write(crr, completed_status(states, rfc3339(self.clock())))
            return None
        status = recreating_status(states)
        if status != {k: status_of(crr).get(k) for k in status}:
            await self._write(crr, status)
        min_started = int(section(spec, "strategy").get("minStartedSeconds") or 0)
        return Result(requeue_after=max(RECHECK_SECONDS, float(min_started)))

    async def _kill(
        self, crr: dict[str, Any], pod: dict[str, Any], kill: Kill, states: list[dict[str, Any]]
    ) -> None:
        state = next(s for s in states if s["name"] == kill.container)
        strategy = spec_of(crr).get("strategy") or {}
        grace = strategy.get("terminationGracePeriodSeconds")
        if grace is None:
            grace = spec_of(pod).get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
        grace = max(int(grace), MIN_GRACE_SECONDS)
        container = next(c for c in crr["spec"]["containers"] if c["name"] == kill.container)
        command = ((section(container, "preStop").get("exec")) or {}).get("command")
        if command:
            grace = await self._pre_stop(kill, command, grace)
        try:
            await self.runtime.stop_container(kill.container_id, grace)
        except grpc.aio.AioRpcError as exc:
            state.update(
                phase=PHASE_FAILED, message=f"kill container error: {exc.details() or exc.code().name}"
            )
            return
        state.update(phase=PHASE_RECREATING, isKilled=True)
        log.info("container killed for recreation", crr=object_key(crr), container=kill.container)

    async def _pre_stop(self, kill: Kill, command: list[str], grace: int) -> int:
        """Run the preStop hook within the grace period; return what is left of it for the stop (at
        least MIN_GRACE_SECONDS). A hook that fails or outlives the grace period does not stop the
        kill, as the kubelet's killContainer goes on to stop the container either way."""
        started = self.clock()
        try:
            await self.runtime.exec_sync(kill.container_id, command, grace)
        except grpc.aio.AioRpcError as exc:
            log.warning(
                "preStop hook failed", container=kill.container, error=exc.details() or exc.code().name
            )
        spent = (self.clock() - started).total_seconds()
        return max(int(grace - spent), MIN_GRACE_SECONDS)

    async def _write(self, crr: dict[str, Any], status: dict[str, Any]) -> None:
        """Write `status`; on a conflict re-read and write it over the fresh object once more (the
        daemon is the only writer of these fields, and they are what it just did). When kruise-manager
        completed the request meanwhile (its deadline passed during a kill: a preStop hook can take
        longer), only the container states are recorded: a completed request stays completed, as
        upstream's daemon patches nothing but `containerRecreateStates` after a kill."""
        body = {**crr, "status": {**status_of(crr), **status}}
        for attempt in range(2):
            try:
                written = await self.client.update_status(CONTAINER_RECREATE_REQUESTS, body)
            except NotFound:
                return
            except Conflict:
                if attempt == 1:
                    raise
                meta = crr["metadata"]
                fresh = await self.client.get(CONTAINER_RECREATE_REQUESTS, meta["name"], meta["namespace"])
                if status_of(fresh).get("phase") == PHASE_COMPLETED:
                    if "containerRecreateStates" not in status:
                        return
                    status = {"containerRecreateStates": status["containerRecreateStates"]}
                body = {**fresh, "status": {**status_of(fresh), **status}}
                continue
            self.expectations.expect(written)
            return
