"""The client-side token bucket of client-go's REST client, for the emulated kube-controller-manager.

kube-controller-manager gives every controller its own client limited to `--kube-api-qps` (20) and
`--kube-api-burst` (30). The simulator's controllers run unlimited by default (tests want pods fast);
with a limit they write at the pace a real control plane does, which is what makes a benchmark of a
kruise workload against a native one fair. Tokens are reserved in call order and may go into debt
(`golang.org/x/time/rate`'s `Wait`), so requests leave in the order they were made.
"""

from __future__ import annotations

import asyncio
import time


class TokenBucket:
    """`qps` tokens per second, at most `burst` saved up; starts full."""

    def __init__(self, qps: float, burst: int) -> None:
        if qps <= 0:
            raise ValueError(f"qps: must be > 0, got {qps}")
        if burst < 1:
            raise ValueError(f"burst: must be >= 1, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._tokens = float(burst)
        self._last = time.monotonic()

    def reserve(self, now: float) -> float:
        """Take one token at `now` (monotonic seconds); return how long to wait before using it."""
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def acquire(self) -> None:
        delay = self.reserve(time.monotonic())
        if delay > 0:
            await asyncio.sleep(delay)
