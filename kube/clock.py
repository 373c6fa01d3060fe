"""Clocks: the one seam through which time enters kruise.kube.

Workqueues, rate limiters, expectations and the event correlator all make decisions from elapsed
time. Taking a `Clock` instead of calling `time.monotonic()` lets tests step time by hand and get
deterministic answers without sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from datetime import UTC, datetime
from typing import Protocol

from kruise.api.timestamps import parse_rfc3339, rfc3339, rfc3339_micro

__all__ = ["Clock", "FakeClock", "RealClock", "parse_rfc3339", "rfc3339", "rfc3339_micro"]


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""

    def wall(self) -> datetime:
        """Timezone-aware UTC wall time, for timestamps written into objects."""

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    """The process clock: monotonic for intervals, UTC for timestamps."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """A clock that only moves when `step` is called.

    Sleepers are woken in deadline order when the clock passes their deadline, so code under test
    that awaits `clock.sleep` runs exactly as far as the test lets time advance.
    """

    def __init__(self, start: float = 1000.0, wall_start: datetime | None = None) -> None:
        self._now = start
        self._start = start
        self._wall_start = wall_start or datetime(2026, 11, 22, 23, 0, 0, tzinfo=UTC)
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def wall(self) -> datetime:
        from datetime import timedelta

        return self._wall_start + timedelta(seconds=self._now - self._start)

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), fut))
        await fut

    def step(self, seconds: float) -> None:
        """Advance time and wake every sleeper whose deadline has passed."""
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)

    @property
    def sleepers(self) -> int:
        return sum(1 for _, _, f in self._sleepers if not f.done())
