"""Per-node backoff before a failed daemon pod is deleted again.

A node whose kubelet keeps rejecting the daemon pod would otherwise see delete → create → fail in a
hot loop. Upstream (kube-controller-manager's daemon controller, forked by OpenKruise) keeps one
client-go ``flowcontrol.Backoff`` per controller, created with 1 s initial and 15 min maximum and
no jitter, keyed by ``<ds uid>/<status.observedGeneration>/<node>``:

- a key never seen, or last bumped more than twice the maximum ago, starts at 1 s;
- every further bump doubles the delay, capped at the maximum;
- while less than the current delay has passed since the last bump the failed pod is left alone
  and the DaemonSet is requeued after the *whole* current delay (upstream pushes ``Get(key)``,
  not the time remaining);
- entries untouched for twice the maximum are dropped (upstream's GC runs every minute).

Times are plain seconds from :class:`kruise.kube.clock.Clock.now`, so tests drive it by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 15 * 60.0
GC_INTERVAL = 60.0


def backoff_key(ds: Mapping[str, Any], node: str) -> str:
    """failedPodsBackoffKey: a new observed generation starts every node afresh."""
    meta = ds.get("metadata") or {}
    observed = int((ds.get("status") or {}).get("observedGeneration") or 0)
    return f"{meta.get('uid', '')}/{observed}/{node}"


@dataclass
class _Entry:
    delay: float
    last_update: float


class FailedPodsBackoff:
    """The controller-wide table of per-key delays (not thread-safe; the reconciler runs on one loop)."""

    def __init__(
        self, initial: float = INITIAL_BACKOFF, maximum: float = MAX_BACKOFF, gc_interval: float = GC_INTERVAL
    ) -> None:
        if initial <= 0 or maximum < initial:
            raise ValueError(f"backoff: need 0 < initial ({initial}) <= maximum ({maximum})")
        self.initial = initial
        self.maximum = maximum
        self.gc_interval = gc_interval
        self._entries: dict[str, _Entry] = {}
        self._last_gc: float | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def _expired(self, entry: _Entry, now: float) -> bool:
        return now - entry.last_update > 2 * self.maximum

    def get(self, key: str) -> float:
        """The current delay of ``key``; 0 when it has none."""
        entry = self._entries.get(key)
        return entry.delay if entry is not None else 0.0

    def next(self, key: str, now: float) -> None:
        """Bump ``key``: start at ``initial`` (new or expired), else double up to ``maximum``."""
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, now):
            self._entries[key] = _Entry(self.initial, now)
            return
        entry.delay = min(entry.delay * 2, self.maximum)
        entry.last_update = now

    def in_backoff_since_update(self, key: str, now: float) -> bool:
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, now):
            return False
        return now - entry.last_update < entry.delay

    def gc(self, now: float) -> None:
        """Drop entries untouched for more than twice the maximum."""
        for key in [k for k, e in self._entries.items() if self._expired(e, now)]:
            del self._entries[key]
        self._last_gc = now

    def admit(self, key: str, now: float) -> float:
        """One failed pod found under ``key``: 0.0 when it may be deleted now (the delay is bumped),
        otherwise the delay to requeue after. Collects garbage at most every ``gc_interval``."""
        if self._last_gc is None or now - self._last_gc >= self.gc_interval:
            self.gc(now)
        if self.in_backoff_since_update(key, now):
            return self.get(key)
        self.next(key, now)
        return 0.0
