"""WorkloadSpread on pod CREATE: pick the pod's subset, book it in the WorkloadSpread status, inject.

The WorkloadSpread governing a pod is found from the webhook's caches (its controller, or the
controller's controller for a Deployment's ReplicaSet). The subset is chosen from the freshest
copy at hand — the one this replica last wrote if newer than the cache — and booked with an
optimistic status update; on a conflict the WorkloadSpread is read afresh from the apiserver and
the choice is made again, so replicas racing for the last slot of a subset cannot both get it. A
per-WorkloadSpread lock keeps this replica's own requests from conflicting with each other.

A dryRun creation is left alone (upstream admits it untouched). Errors (an owner missing from the
caches, a status write that keeps conflicting, a bad subset patch) fail the admission so the
workload controller retries the pod.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

import structlog

from kruise.control.workloadspread import subsets as wsrules
from kruise.control.workloadspread.injection import inject
from kruise.control.workloadspread.targets import matching_spread, workload_replicas
from kruise.kube.client import Client
from kruise.kube.errors import NotFound
from kruise.kube.resources import WORKLOADSPREADS
from kruise.kube.retry import DEFAULT_BACKOFF, Backoff, optimistic_update

log = structlog.get_logger("kruise.webhook.workloadspread")

Obj = dict[str, Any]


class SpreadSource(Protocol):
    """Read-only cache answers (informer stores)."""

    def in_namespace(self, namespace: str) -> list[Obj]: ...

    def owner(self, ref: Mapping[str, Any], namespace: str) -> Obj | None: ...

    def workload(self, ref: Mapping[str, Any], namespace: str) -> Obj | None: ...


def _rv(obj: Mapping[str, Any] | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class SpreadKeeper:
    """Books pods into WorkloadSpread subsets for one webhook replica."""

    def __init__(
        self,
        client: Client,
        source: SpreadSource,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_uid: Callable[[], str] = lambda: str(uuid.uuid4()),
        backoff: Backoff = DEFAULT_BACKOFF,
    ) -> None:
        self.client = client
        self.source = source
        self.clock = clock
        self.new_uid = new_uid
        self.backoff = backoff
        self._locks: dict[str, asyncio.Lock] = {}
        self._written: dict[str, Obj] = {}

    def _freshest(self, cached: Obj) -> Obj:
        mine = self._written.get((cached.get("metadata") or {}).get("uid", ""))
        return mine if mine is not None and _rv(mine) > _rv(cached) else cached

    def _replicas(self, ws: Mapping[str, Any], namespace: str) -> int:
        if not wsrules.has_percent_subset(ws):
            return 0
        target = (ws.get("spec") or {}).get("targetRef") or {}
        return workload_replicas(ws, self.source.workload(target, namespace))

    async def on_create(self, pod: Obj) -> Obj | None:
        """The pod with its subset injected, or None when no WorkloadSpread governs it or no subset
        has room. Raises OwnerNotFound, PatchError, MaxReplicasError, or the API error of a write
        that could not be made."""
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        matched = matching_spread(pod, self.source.in_namespace(namespace), self.source.owner)
        if matched is None:
            return None
        meta = matched["metadata"]
        lock = self._locks.setdefault(meta.get("uid") or meta["name"], asyncio.Lock())
        async with lock:
            start = self._freshest(matched)
            replicas = self._replicas(start, namespace)
            chosen: list[wsrules.Assignment] = []
            used: list[Obj] = []

            def choose(current: Obj) -> Obj | None:
                assignment = wsrules.assign_for_creation(current, pod, self.clock(), replicas, self.new_uid)
                chosen[:] = [assignment]
                used[:] = [current]
                return assignment.updated

            try:
                written = await optimistic_update(
                    start,
                    choose,
                    read=lambda: self.client.get(WORKLOADSPREADS, meta["name"], namespace),
                    write=lambda updated: self.client.update_status(WORKLOADSPREADS, updated),
                    backoff=self.backoff,
                )
            except NotFound:
                return None
            if written is not None:
                self._written[meta.get("uid", "")] = written
        assignment = chosen[0]
        if assignment.subset is None:
            log.info("no subset has room", workloadspread=f"{namespace}/{meta['name']}")
            return None
        return inject(pod, used[0], assignment.subset, assignment.uid)
