"""The controller loop: informer events -> keys on a workqueue -> N workers calling `reconcile(key)`.

Mirrors controller-runtime: a reconcile that raises is retried with the queue's rate limiter
(per-key exponential backoff + overall bucket); `Result(requeue_after=d)` forgets the backoff and
comes back after d; `Result(requeue=True)` goes through the rate limiter; success forgets. Because
the workqueue never hands one key to two workers, a reconciler may assume it is the only one
working on that object. Reconcilers must be level-triggered: read the cache, compare, act.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from kruise.api.controllerref import controller_of
from kruise.api.objects import MutableObj, meta_of
from kruise.kube import metrics
from kruise.kube.clock import Clock, RealClock
from kruise.kube.errors import ApiError, is_namespace_terminating, log_fields
from kruise.kube.informer import SharedInformer
from kruise.kube.ratelimit import RateLimiter
from kruise.kube.resources import object_key
from kruise.kube.store import DeletedFinalStateUnknown, unwrap_tombstone
from kruise.kube.workqueue import QueueShutDown, WorkQueue

log = structlog.get_logger("kruise.kube.controller")


@dataclass(frozen=True)
class Result:
    """What a reconcile asks for next: nothing, a rate-limited retry, or a retry after a delay."""

    requeue: bool = False
    requeue_after: float | None = None


class TerminalError(Exception):
    """A failure retrying cannot fix (bad spec): logged and counted, but not requeued."""


class Reconciler(Protocol):
    async def reconcile(self, key: str) -> Result | None: ...


ReconcileFunc = Callable[[str], Awaitable[Result | None]]
Mapper = Callable[[MutableObj], Iterable[str]]


# ---- event -> key mappers ------------------------------------------------------------------------


def enqueue_object(obj: MutableObj) -> list[str]:
    """The object's own key (controller-runtime's EnqueueRequestForObject)."""
    return [object_key(obj)]


def enqueue_owner(owner_kind: str, owner_group: str | None = None) -> Mapper:
    """Keys of the controlling owner of the given kind (EnqueueRequestForOwner with OnlyControllerOwner).

    Owners live in the object's namespace; `owner_group` (e.g. `apps.kruise.io`) narrows by API group.
    """

    def mapper(obj: MutableObj) -> list[str]:
        namespace = meta_of(obj).get("namespace")
        ref = controller_of(obj)
        if ref is None or ref.get("kind") != owner_kind:
            return []
        group = ref.get("apiVersion", "").rpartition("/")[0]
        if owner_group is not None and group != owner_group:
            return []
        return [f"{namespace}/{ref['name']}" if namespace else ref["name"]]

    return mapper


# ---- the controller ------------------------------------------------------------------------------


class Controller:
    """Named workqueue + workers around one reconciler."""

    def __init__(
        self,
        name: str,
        reconciler: Reconciler | ReconcileFunc,
        *,
        workers: int = 1,
        rate_limiter: RateLimiter | None = None,
        clock: Clock | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers: must be >= 1, got {workers}")
        self.name = name
        self._reconcile: ReconcileFunc = (
            reconciler.reconcile if hasattr(reconciler, "reconcile") else reconciler  # type: ignore[assignment]
        )
        self.workers = workers
        self.clock = clock or RealClock()
        self.queue: WorkQueue[str] = WorkQueue(name, rate_limiter=rate_limiter, clock=self.clock)
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        self._log = log.bind(controller=name)

    # ---- wiring ------------------------------------------------------------------------------

    def watch(
        self,
        informer: SharedInformer,
        mapper: Mapper = enqueue_object,
        *,
        update_filter: Callable[[MutableObj, MutableObj], bool] | None = None,
    ) -> None:
        """Enqueue the keys `mapper` returns for every add, update and delete of `informer`.

        Updates map both the old and the new object, so an object that changed owner wakes both
        owners. `update_filter(old, new)` can drop uninteresting updates (e.g. status-only).
        """

        def enqueue(obj: MutableObj) -> None:
            for key in mapper(obj):
                self.queue.add(key)

        def on_update(old: MutableObj, new: MutableObj) -> None:
            if update_filter is not None and not update_filter(old, new):
                return
            enqueue(old)
            enqueue(new)

        def on_delete(obj: MutableObj | DeletedFinalStateUnknown) -> None:
            enqueue(unwrap_tombstone(obj))

        informer.add_event_handler(on_add=enqueue, on_update=on_update, on_delete=on_delete)

    # ---- running -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the workers (the informers feeding the queue should have synced)."""
        if self._tasks:
            return
        metrics.MAX_CONCURRENT_RECONCILES.labels(self.name).set(self.workers)
        metrics.ACTIVE_WORKERS.labels(self.name).set(0)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._worker(), name=f"controller-{self.name}-{i}") for i in range(self.workers)
        ]
        self._log.info("Starting workers", worker_count=self.workers)

    async def stop(self, timeout: float | None = 30.0) -> None:
        """Stop taking keys, let in-flight reconciles finish (up to `timeout`), then cancel."""
        self._stopping = True
        self.queue.shutdown()
        if not self._tasks:
            return
        _, pending = await asyncio.wait(self._tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self._log.info("All workers finished", cancelled=len(pending))

    async def run(self) -> None:
        """Start and wait until cancelled; cancellation stops gracefully."""
        self.start()
        try:
            # asyncio.wait, unlike gather, does not cancel the workers when we are cancelled.
            await asyncio.wait(self._tasks)
        finally:
            await asyncio.shield(self.stop())

    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except QueueShutDown:
                return
            try:
                if not self._stopping:
                    await self.reconcile_handler(key)
            finally:
                self.queue.done(key)

    async def reconcile_handler(self, key: str) -> None:
        """One reconcile of `key`, with the requeue rules, logging and metrics around it."""
        with structlog.contextvars.bound_contextvars(controller=self.name, key=key):
            await self._reconcile_logged(key)

    async def _reconcile_logged(self, key: str) -> None:
        # Inside here every structlog line (the reconciler's too) carries controller and key.
        active = metrics.ACTIVE_WORKERS.labels(self.name)
        active.inc()
        started = self.clock.now()
        try:
            result = self._reconcile(key)
            if inspect.isawaitable(result):
                result = await result
        except TerminalError as exc:
            self.queue.forget(key)
            self._count("error")
            self._log.error("Reconciler error (terminal, not requeued)", key=key, error=str(exc))
        except ApiError as exc:
            if is_namespace_terminating(exc):
                # The namespace is going away and nothing can be created in it: like the kube
                # controllers (replicaset, daemonset, job), not an error and not retried.
                self.queue.forget(key)
                self._log.debug("namespace is being terminated, not requeued", key=key, **log_fields(exc))
                return
            # Routine (a Conflict is optimistic concurrency at work): controller-runtime logs the
            # error's text and retries with backoff; so do we, in one line without a traceback.
            self.queue.add_rate_limited(key)
            self._count("error")
            self._log.error("Reconciler error", key=key, **log_fields(exc))
        except Exception as exc:
            # Anything else is a bug in the reconciler: retried all the same, with its traceback.
            self.queue.add_rate_limited(key)
            self._count("error")
            self._log.error("Reconciler error", key=key, error=str(exc), exc_info=exc)
        else:
            self._after(key, result)
        finally:
            active.dec()
            metrics.RECONCILE_TIME.labels(self.name).observe(max(0.0, self.clock.now() - started))

    def _after(self, key: str, result: Any) -> None:
        if result is None:
            result = Result()
        if result.requeue_after and result.requeue_after > 0:
            self.queue.forget(key)
            self.queue.add_after(key, result.requeue_after)
            self._count("requeue_after")
        elif result.requeue:
            self.queue.add_rate_limited(key)
            self._count("requeue")
        else:
            self.queue.forget(key)
            self._count("success")

    def _count(self, outcome: str) -> None:
        metrics.RECONCILE_TOTAL.labels(self.name, outcome).inc()
        if outcome == "error":
            metrics.RECONCILE_ERRORS.labels(self.name).inc()
