"""A deduplicating work queue with delayed adds, the heart of every simulated loop.

Keys, not events, are queued: a burst of changes to one pod collapses into one pass, and a key
is never handled by two workers at once (a key re-added while in flight is run again after).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Reconcile = Callable[[str], Awaitable[float | None]]


class WorkQueue:
    """Runs ``reconcile(key)`` for queued keys; its return value, if a number, re-queues after that delay.

    An exception re-queues the key after ``error_delay`` (doubling per consecutive failure up to
    ``max_error_delay``), so conflicts and transient errors heal on their own.
    """

    def __init__(
        self,
        name: str,
        reconcile: Reconcile,
        *,
        workers: int = 4,
        error_delay: float = 0.05,
        max_error_delay: float = 2.0,
    ) -> None:
        self.name = name
        self.reconcile = reconcile
        self.workers = workers
        self.error_delay = error_delay
        self.max_error_delay = max_error_delay
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._running: set[str] = set()
        self._dirty: set[str] = set()
        self._failures: dict[str, int] = {}
        self._timers: set[asyncio.TimerHandle] = set()
        self._tasks: list[asyncio.Task[None]] = []

    def add(self, key: str) -> None:
        if key in self._running:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def add_after(self, key: str, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def fire() -> None:
            self._timers.discard(handle)  # type: ignore[arg-type]
            self.add(key)

        handle = loop.call_later(delay, fire)
        self._timers.add(handle)

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._work(), name=f"{self.name} worker {i}") for i in range(self.workers)
        ]

    async def stop(self) -> None:
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            self._queued.discard(key)
            self._running.add(key)
            try:
                again = await self.reconcile(key)
                self._failures.pop(key, None)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # retried with backoff
                count = self._failures.get(key, 0) + 1
                self._failures[key] = count
                log.debug("%s %s failed (%d): %r", self.name, key, count, error)
                again = min(self.error_delay * 2 ** (count - 1), self.max_error_delay)
            finally:
                self._running.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                self.add(key)
            elif again is not None:
                self.add_after(key, again)
