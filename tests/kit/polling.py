"""`until`: poll a condition under a deadline instead of sleeping and hoping."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

_UNSET: Any = object()


async def until(
    predicate: Callable[[], Any | Awaitable[Any]],
    timeout: float = 10.0,
    interval: float = 0.01,
    *,
    ignore: tuple[type[BaseException], ...] = (),
    message: str = "",
) -> Any:
    """Call `predicate` (sync or async) until it returns something truthy, and return that value.

    Between calls the loop gets `interval` seconds, so the code under test runs. Exceptions of the
    types in `ignore` (say `NotFound` while an object is being created) count as "not yet". After
    `timeout` seconds an AssertionError names the predicate and what it last returned or raised.
    """
    if timeout <= 0:
        raise ValueError(f"timeout: must be > 0, got {timeout}")
    if interval < 0:
        raise ValueError(f"interval: must be >= 0, got {interval}")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = _UNSET
    attempts = 0
    while True:
        attempts += 1
        try:
            value = predicate()
            if inspect.isawaitable(value):
                value = await value
        except ignore as exc:
            last = exc
        else:
            if value:
                return value
            last = value
        if loop.time() >= deadline:
            break
        await asyncio.sleep(interval)
    what = message or getattr(predicate, "__qualname__", repr(predicate))
    outcome = "raised" if isinstance(last, BaseException) else "returned"
    raise AssertionError(f"{what}: not true within {timeout}s ({attempts} attempts); last {outcome} {last!r}")


async def until_fetched(
    fetch: Callable[[], Any | Awaitable[Any]],
    predicate: Callable[[Any], Any],
    timeout: float = 30.0,
    interval: float = 0.05,
    *,
    message: str = "",
) -> Any:
    """Fetch a value (say an object from the API server) until `predicate(value)` is truthy; return the value.

    Unlike `until`, which polls a yes/no predicate, this hands back what was fetched, so a test waits
    for a state and then asserts on the very object that showed it. `fetch` may be sync or async; its
    exceptions are not swallowed (a failing read is a failure, not "not yet"). The deadline covers a
    fetch that hangs too. After `timeout` seconds an AssertionError names what was awaited (`message`,
    or the predicate's and fetch's names) and the last value fetched.
    """
    if timeout <= 0:
        raise ValueError(f"timeout: must be > 0, got {timeout}")
    if interval < 0:
        raise ValueError(f"interval: must be >= 0, got {interval}")
    last: Any = _UNSET
    attempts = 0
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            while True:
                attempts += 1
                value = fetch()
                if inspect.isawaitable(value):
                    value = await value
                last = value
                if predicate(value):
                    return value
                await asyncio.sleep(interval)
    except TimeoutError:
        if not deadline.expired():
            raise  # raised by `fetch` itself, not the deadline
    what = message or (
        f"{getattr(predicate, '__qualname__', repr(predicate))} over "
        f"{getattr(fetch, '__qualname__', repr(fetch))}"
    )
    seen = "nothing fetched" if last is _UNSET else f"last fetched {last!r}"
    raise AssertionError(f"{what}: not true within {timeout}s ({attempts} attempts); {seen}")
