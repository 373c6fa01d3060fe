"""Rate limiters with client-go's semantics.

`TokenBucket` mirrors `golang.org/x/time/rate.Limiter` with reservations: taking a token never
fails, it tells you how long to wait, and the debt is carried (tokens may go negative). The
workqueue limiters follow `k8s.io/client-go/util/workqueue/default_rate_limiters.go`.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Protocol

from kruise.kube.clock import Clock, RealClock


class TokenBucket:
    """`qps` tokens per second, at most `burst` saved up; starts full."""

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError(f"qps: must be > 0, got {qps}")
        if burst < 1:
            raise ValueError(f"burst: must be >= 1, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self._clock.now()
        self._lock = threading.Lock()

    def _advance(self, now: float) -> None:
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now

    def reserve(self) -> float:
        """Take one token now; return the seconds the caller must wait before using it."""
        with self._lock:
            self._advance(self._clock.now())
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def try_take(self) -> bool:
        """Take one token only if it is available right now (no debt)."""
        with self._lock:
            self._advance(self._clock.now())
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False

    def tokens(self) -> float:
        with self._lock:
            self._advance(self._clock.now())
            return self._tokens

    async def acquire(self) -> None:
        """Wait until a token is ours (the client-side QPS limiter of every request)."""
        delay = self.reserve()
        if delay > 0:
            await self._clock.sleep(delay)


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float:
        """Seconds to wait before `item` is retried; records a failure."""

    def forget(self, item: Hashable) -> None:
        """The item succeeded: drop its failure history."""

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """base * 2^failures per item, capped at `max_delay` (defaults 5 ms and 1000 s)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # Guard against float overflow the way client-go guards int64 overflow.
        if exp > 62:
            return self.max_delay
        return min(self.base_delay * (2**exp), self.max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter:
    """`fast_delay` for the first `max_fast_attempts` failures, then `slow_delay`."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        n = self._failures.get(item, 0) + 1
        self._failures[item] = n
        return self.fast_delay if n <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """One shared token bucket for all items: bounds the overall retry rate."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        self.bucket = TokenBucket(qps, burst, clock)

    def when(self, item: Hashable) -> float:
        return self.bucket.reserve()

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay any of the limiters asks for; every limiter sees every call."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("limiters: at least one is required")
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter:
    """client-go's DefaultControllerRateLimiter: per-item 5 ms -> 1000 s, overall 10 qps burst 100."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock),
    )
