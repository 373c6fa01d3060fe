"""Re-read and re-apply a change that lost an optimistic-concurrency race (`retry_on_conflict`,
`optimistic_update`)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from kruise.kube.errors import Conflict

T = TypeVar("T")
ObjT = TypeVar("ObjT")


@dataclass(frozen=True)
class Backoff:
    """client-go's wait.Backoff: `steps` tries, `duration` apart, growing by `factor`, plus jitter."""

    steps: int = 5
    duration: float = 0.010
    factor: float = 1.0
    jitter: float = 0.1
    cap: float | None = None

    def delays(self) -> list[float]:
        out, duration = [], self.duration
        for _ in range(self.steps - 1):
            delay = duration + (random.random() * self.jitter * duration if self.jitter > 0 else 0.0)
            out.append(delay)
            duration *= self.factor
            if self.cap is not None:
                duration = min(duration, self.cap)
        return out


DEFAULT_RETRY = Backoff(steps=5, duration=0.010, factor=1.0, jitter=0.1)
DEFAULT_BACKOFF = Backoff(steps=4, duration=0.010, factor=5.0, jitter=0.1)


async def retry_on_conflict(
    fn: Callable[[], Awaitable[T]],
    backoff: Backoff = DEFAULT_RETRY,
    retriable: Callable[[BaseException], bool] = lambda e: isinstance(e, Conflict),
) -> T:
    """Call `fn` until it does not raise a retriable error, at most `backoff.steps` times.

    `fn` must fetch the object afresh each time: retrying a stale write only conflicts again.
    The last error is re-raised when the steps run out.
    """
    if backoff.steps < 1:
        raise ValueError(f"backoff.steps: must be >= 1, got {backoff.steps}")
    delays = backoff.delays()
    for attempt in range(backoff.steps):
        try:
            return await fn()
        except BaseException as exc:
            if not retriable(exc) or attempt == backoff.steps - 1:
                raise
            await asyncio.sleep(delays[attempt])
    raise RuntimeError("retry_on_conflict: loop ended without a result")


async def optimistic_update(
    obj: ObjT,
    change: Callable[[ObjT], ObjT | None],
    *,
    write: Callable[[ObjT], Awaitable[T]],
    read: Callable[[], Awaitable[ObjT]],
    backoff: Backoff = DEFAULT_RETRY,
) -> T | None:
    """Get-modify-Update with RetryOnConflict, starting from an object already at hand (a cached copy).

    `change` computes the object to write from the one it is given, or None when nothing needs writing;
    after a Conflict the object is `read` afresh and `change` decides again, so a change that became
    unnecessary meanwhile is not written. Errors raised by `change` (a refusal) propagate unchanged.
    """
    if backoff.steps < 1:
        raise ValueError(f"backoff.steps: must be >= 1, got {backoff.steps}")
    delays = backoff.delays()
    current = obj
    for attempt in range(backoff.steps):
        new = change(current)
        if new is None:
            return None
        try:
            return await write(new)
        except Conflict:
            if attempt == backoff.steps - 1:
                raise
            await asyncio.sleep(delays[attempt])
            current = await read()
    raise RuntimeError("optimistic_update: loop ended without a result")
