"""PodUnavailableBudget admission: pod DELETE, pods/eviction CREATE and pod UPDATE (`/validate-pod`).

A pod UPDATE is checked as the RESIZE operation when it only resizes containers in place
(`control.pub.budget.can_resize_in_place`), else as UPDATE. With the InPlacePodVerticalScaling gate off,
every PUB protecting UPDATE protects RESIZE too; with it on, only PUBs listing RESIZE do.

A protected operation takes one slot of the PUB's budget by writing the pod into the PUB status
(disruptedPods, or unavailablePods for updates) with `unavailableAllowed` one lower — an optimistic
status update, so two replicas or two concurrent requests can never both take the last slot. A
request that finds no slot is refused with upstream's message, and so is one whose write still conflicts
after CONFLICT_RETRIES attempts (fail closed, 403 as upstream). dryRun requests decide but write nothing.

Reads come from informer caches (pods, PUBs); the only API calls are the status write and, after a
conflict, a fresh GET of that PUB. A per-PUB lock serialises this replica's own requests, and the
PUB it last wrote is remembered so the next request does not start from an older cached copy.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

import structlog

from kruise.api.keys import (
    EVENT_PUB_PREVENT_POD_DELETION,
    PUB_OPERATION_DELETE,
    PUB_OPERATION_EVICT,
)
from kruise.api.objects import meta_of
from kruise.control.pub import budget
from kruise.kube.client import Client
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.resources import PODUNAVAILABLEBUDGETS
from kruise.kube.retry import Backoff, optimistic_update
from kruise.webhook.admission import AdmissionRequest, Decision, allow, deny

log = structlog.get_logger("kruise.webhook.pub")

CONFLICT_RETRIES = 4
CONFLICT_BACKOFF = 0.5


class PubSource(Protocol):
    """Read-only cache answers (informer stores)."""

    def pub(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def in_namespace(self, namespace: str) -> list[dict[str, Any]]: ...

    def workload_of(self, owner: dict[str, Any], namespace: str) -> dict[str, Any] | None: ...


def _rv(obj: dict[str, Any] | None) -> int:
    try:
        return int(meta_of(obj or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class BudgetKeeper:
    """Takes slots of PUB budgets for one webhook replica."""

    def __init__(
        self,
        client: Client,
        source: PubSource,
        recorder: EventRecorder | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        backoff: float = CONFLICT_BACKOFF,
        *,
        vertical_scaling: bool = False,
    ) -> None:
        """`vertical_scaling`: the InPlaceWorkloadVerticalScaling gate (a pod mid-resize takes no slot)."""
        self.vertical_scaling = vertical_scaling
        self.client = client
        self.source = source
        self.recorder = recorder
        self.clock = clock
        self.backoff = backoff
        self._locks: dict[str, asyncio.Lock] = {}
        self._written: dict[str, dict[str, Any]] = {}

    def _freshest(self, cached: dict[str, Any]) -> dict[str, Any]:
        mine = self._written.get(cached["metadata"].get("uid", ""))
        return mine if mine is not None and _rv(mine) > _rv(cached) else cached

    async def admit(
        self,
        pod: dict[str, Any],
        operation: str,
        dry_run: bool,
        *,
        in_place_pod_vertical_scaling: bool = False,
    ) -> Decision:
        name = budget.related_pub(pod)
        if not name:
            return allow()
        namespace = pod["metadata"].get("namespace", "")
        cached = self.source.pub(namespace, name)
        if cached is None:
            return allow()
        cached = self._freshest(cached)
        if not budget.needs_check(
            cached,
            pod,
            operation,
            vertical_scaling=self.vertical_scaling,
            in_place_pod_vertical_scaling=in_place_pod_vertical_scaling,
        ):
            return allow()
        lock = self._locks.setdefault(cached["metadata"].get("uid", name), asyncio.Lock())
        async with lock:
            start = self._freshest(self.source.pub(namespace, name) or cached)
            try:
                written = await take_budget_slot(
                    self.client, start, pod, operation, self.clock(), dry_run=dry_run, backoff=self.backoff
                )
            except budget.Refused as exc:
                self._refused(pod)
                return deny(403, str(exc))
            except Conflict:
                # upstream answers a Timeout StatusError's text through ValidationResponse: a 403 refusal
                return deny(403, f"Timeout: couldn't update PodUnavailableBudget {name} due to conflicts")
            if written is not None:
                self._written[written["metadata"].get("uid", "")] = written
            return allow()

    def _refused(self, pod: dict[str, Any]) -> None:
        if self.recorder is not None:
            with contextlib.suppress(RuntimeError, ValueError):
                self.recorder.event(
                    pod, "Warning", EVENT_PUB_PREVENT_POD_DELETION, "openkruise pub prevents pod deletion"
                )


async def take_budget_slot(
    client: Client,
    pub: dict[str, Any],
    pod: dict[str, Any],
    operation: str,
    now: datetime,
    *,
    dry_run: bool = False,
    backoff: float = CONFLICT_BACKOFF,
) -> dict[str, Any] | None:
    """`control.pub.budget.reserved` against the API: the PUB status is written with one slot fewer."""
    name, namespace = pub["metadata"]["name"], pub["metadata"].get("namespace")
    pod_name = pod["metadata"]["name"]
    try:
        return await optimistic_update(
            pub,
            lambda current: budget.reserved(current, pod_name, operation, now, dry_run=dry_run),
            read=lambda: client.get(PODUNAVAILABLEBUDGETS, name, namespace),
            write=lambda updated: client.update_status(PODUNAVAILABLEBUDGETS, updated),
            backoff=Backoff(steps=CONFLICT_RETRIES, duration=backoff, factor=1.0, jitter=0.0),
        )
    except NotFound:
        return None


def _dry_run(options: dict[str, Any] | None) -> bool:
    return bool((options or {}).get("dryRun"))


def pod_validating_handler(
    keeper: BudgetKeeper, *, delete_gate: bool, update_gate: bool, in_place_pod_vertical_scaling: bool = False
) -> Any:
    """`delete_gate` (PodUnavailableBudgetDeleteGate) covers DELETE and eviction, `update_gate`
    (PodUnavailableBudgetUpdateGate) pod UPDATEs that may make the pod unavailable, checked as RESIZE
    or UPDATE; `in_place_pod_vertical_scaling` (the InPlacePodVerticalScaling gate) decides whether
    protecting UPDATE also protects RESIZE."""

    async def handle(req: AdmissionRequest) -> Decision:
        if req.resource.resource != "pods":
            return allow()
        if req.operation == "UPDATE" and update_gate and not req.sub_resource:
            new, old = req.object or {}, req.old_object or {}
            if not budget.related_pub(new) or not budget.is_unavailable_change(old, new):
                return allow()
            return await keeper.admit(
                old,
                budget.update_operation(old, new),
                req.dry_run or _dry_run(req.options),
                in_place_pod_vertical_scaling=in_place_pod_vertical_scaling,
            )
        if req.operation == "DELETE" and delete_gate and not req.sub_resource:
            pod = req.old_object or {}
            if not pod.get("metadata"):
                return allow()
            return await keeper.admit(pod, PUB_OPERATION_DELETE, req.dry_run or _dry_run(req.options))
        if req.operation == "CREATE" and delete_gate and req.sub_resource == "eviction":
            pod = keeper.source.pod(req.namespace, req.name)
            if pod is None:
                return allow()
            eviction = req.object or {}
            dry_run = req.dry_run or _dry_run(eviction.get("deleteOptions"))
            return await keeper.admit(pod, PUB_OPERATION_EVICT, dry_run)
        return allow()

    return handle
