"""Slow start: issue many writes in doubling batches and stop at the first failing batch.

client-go's `slowStartBatch` (Kruise's `DoItSlowly`): when creates fail for a systemic reason
(quota, an admission webhook that refuses) only a handful are attempted instead of all of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


async def slow_start(
    items: Sequence[T], action: Callable[[T], Awaitable[object]], initial_batch: int = 1
) -> tuple[int, BaseException | None]:
    """Run `action` on `items` in batches of 1, 2, 4, ... concurrently within a batch.

    Returns (number of successful calls, first error). Items after a failing batch are not
    attempted. Cancellation propagates.
    """
    if initial_batch < 1:
        raise ValueError(f"initial_batch: must be >= 1, got {initial_batch}")
    done = 0
    start = 0
    batch = initial_batch
    while start < len(items):
        chunk = items[start : start + batch]
        results = await asyncio.gather(*(action(item) for item in chunk), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        for err in errors:
            if isinstance(err, asyncio.CancelledError):
                raise err
        done += len(chunk) - len(errors)
        if errors:
            return done, errors[0]
        start += len(chunk)
        batch = min(2 * batch, len(items) - start) if start < len(items) else batch
    return done, None
