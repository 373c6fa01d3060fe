"""The controller workqueue: client-go's rate-limited delaying queue, on asyncio.

Three structures make the guarantees: a FIFO of keys to hand out, a `dirty` set of keys that need
work, and a `processing` set of keys a worker holds. A key added while it is processing is only
marked dirty and goes back on the FIFO when the worker calls `done`, so one key is never worked by
two workers at once and no change is lost. Keys are deduplicated while they wait.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from kruise.kube import metrics
from kruise.kube.clock import Clock, RealClock
from kruise.kube.ratelimit import RateLimiter, default_controller_rate_limiter

T = TypeVar("T", bound=Hashable)

# client-go re-checks the waiting heap at least this often, even with nothing new added.
MAX_WAIT = 10.0


class QueueShutDown(Exception):
    """`get` on a queue that is shut down and empty: the worker should exit."""


class WorkQueue(Generic[T]):
    """Deduplicating FIFO with dirty/processing sets, delays and per-item rate limiting.

    `name` labels the `workqueue_*` metrics; an empty name records none. All methods except `get`
    and `shutdown_with_drain` are synchronous and safe to call from informer handlers.
    """

    def __init__(
        self,
        name: str = "",
        *,
        rate_limiter: RateLimiter | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.name = name
        self.clock = clock or RealClock()
        self.rate_limiter = rate_limiter or default_controller_rate_limiter(self.clock)
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._added_at: dict[T, float] = {}
        self._started_at: dict[T, float] = {}
        self._shutting_down = False
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drained: list[asyncio.Future[None]] = []
        self._waiting: list[tuple[float, int, T]] = []
        self._waiting_ready: dict[T, float] = {}
        self._seq = itertools.count()
        self._waiter_task: asyncio.Task[None] | None = None
        self._waiter_wake: asyncio.Event | None = None
        if name:
            metrics.IN_FLIGHT.track(self)
            # Resolve the labelled children once: `.labels()` per call dominates the queue's cost.
            self._m_adds = metrics.WORKQUEUE_ADDS.labels(name)
            self._m_depth = metrics.WORKQUEUE_DEPTH.labels(name)
            self._m_queue_duration = metrics.WORKQUEUE_QUEUE_DURATION.labels(name)
            self._m_work_duration = metrics.WORKQUEUE_WORK_DURATION.labels(name)
            self._m_retries = metrics.WORKQUEUE_RETRIES.labels(name)

    # ---- plain queue -------------------------------------------------------------------------

    def _wake_one(self) -> None:
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _wake_all(self) -> None:
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)

    def add(self, item: T) -> None:
        """Mark `item` as needing work. Ignored after shutdown; deduplicated while waiting."""
        if self._shutting_down or item in self._dirty:
            return
        if self.name:
            self._m_adds.inc()
        self._dirty.add(item)
        if item in self._processing:
            return
        self._added_at.setdefault(item, self.clock.now())
        self._queue.append(item)
        self._depth_changed()
        self._wake_one()

    def __len__(self) -> int:
        """Items waiting to be handed out (not processing, not delayed)."""
        return len(self._queue)

    async def get(self) -> T:
        """Wait for the next item and mark it processing. Raises QueueShutDown once shut down and empty."""
        while not self._queue and not self._shutting_down:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                # A wake-up meant for us must not be lost with us.
                if fut.done() and not fut.cancelled() and self._queue:
                    self._wake_one()
                raise
        if not self._queue:
            raise QueueShutDown(self.name)
        item = self._queue.popleft()
        now = self.clock.now()
        added = self._added_at.pop(item, None)
        if self.name:
            self._depth_changed()
            if added is not None:
                self._m_queue_duration.observe(max(0.0, now - added))
        self._started_at[item] = now
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def done(self, item: T) -> None:
        """The worker finished `item`; if it was re-added meanwhile, queue it again."""
        started = self._started_at.pop(item, None)
        if self.name and started is not None:
            self._m_work_duration.observe(max(0.0, self.clock.now() - started))
        self._processing.discard(item)
        if item in self._dirty:
            self._added_at.setdefault(item, self.clock.now())
            self._queue.append(item)
            self._depth_changed()
            self._wake_one()
        elif not self._processing:
            for fut in self._drained:
                if not fut.done():
                    fut.set_result(None)
            self._drained.clear()

    def shutdown(self) -> None:
        """Stop accepting items; `get` keeps handing out what is queued, then raises QueueShutDown."""
        self._shutting_down = True
        if self._waiter_task is not None:
            self._waiter_task.cancel()
            self._waiter_task = None
        self._wake_all()

    async def shutdown_with_drain(self) -> None:
        """Shut down, then wait until every item handed to a worker has been marked done."""
        self.shutdown()
        while self._processing:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drained.append(fut)
            await fut

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def processing(self) -> frozenset[T]:
        return frozenset(self._processing)

    def in_flight_seconds(self) -> tuple[float, float]:
        """(total, longest) seconds spent by items currently being processed."""
        now = self.clock.now()
        ages = [now - t for t in self._started_at.values()]
        return (sum(ages), max(ages, default=0.0))

    def _depth_changed(self) -> None:
        if self.name:
            self._m_depth.set(len(self._queue))

    # ---- delaying queue ----------------------------------------------------------------------

    def add_after(self, item: T, delay: float) -> None:
        """Add `item` once `delay` seconds have passed; an item already waiting keeps the earlier time."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        ready = self.clock.now() + delay
        current = self._waiting_ready.get(item)
        if current is not None and current <= ready:
            return
        self._waiting_ready[item] = ready
        heapq.heappush(self._waiting, (ready, next(self._seq), item))
        self._ensure_waiter()
        if self._waiter_wake is not None:
            self._waiter_wake.set()

    def waiting(self) -> int:
        """Items parked by `add_after` whose time has not come."""
        return len(self._waiting_ready)

    def ready_at(self, item: T) -> float | None:
        """The clock time a parked `item` will be added at; None when it is not parked."""
        return self._waiting_ready.get(item)

    def release_ready(self) -> float | None:
        """Move every waiting item whose time has come onto the queue; return seconds to the next one."""
        now = self.clock.now()
        while self._waiting:
            ready, _, item = self._waiting[0]
            if self._waiting_ready.get(item) != ready:
                heapq.heappop(self._waiting)  # superseded by an earlier add_after
                continue
            if ready > now:
                return ready - now
            heapq.heappop(self._waiting)
            del self._waiting_ready[item]
            self.add(item)
        return None

    def _ensure_waiter(self) -> None:
        if self._waiter_task is not None and not self._waiter_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError as exc:
            raise RuntimeError("add_after needs a running event loop") from exc
        self._waiter_wake = asyncio.Event()
        self._waiter_task = loop.create_task(self._wait_loop(), name=f"workqueue-delay-{self.name}")

    async def _wait_loop(self) -> None:
        wake = self._waiter_wake
        assert wake is not None
        while not self._shutting_down:
            next_in = self.release_ready()
            wait_for = MAX_WAIT if next_in is None else min(next_in, MAX_WAIT)
            wake.clear()
            sleeper = asyncio.ensure_future(self.clock.sleep(wait_for))
            woken = asyncio.ensure_future(wake.wait())
            try:
                await asyncio.wait({sleeper, woken}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                woken.cancel()

    # ---- rate-limited queue ------------------------------------------------------------------

    def add_rate_limited(self, item: T) -> None:
        """Add after the delay the rate limiter assigns (a failure is recorded for `item`)."""
        if self.name:
            self._m_retries.inc()
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """`item` succeeded: reset its backoff."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)
