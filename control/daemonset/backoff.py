"""Per-node backoff before a failed daemon pod is deleted again.

A node whose kubelet keeps rejecting the daemon pod would otherwise see delete → create → fail in a
hot loop. Upstream (kube-controller-manager's daemon controller, forked by OpenKruise) keeps one
client-go ``flowcontrol.Backoff`` per controller, created with 1 s initial and 15 min maximum and
no jitter, keyed by ``<ds uid>/<status.observedGeneration>/<node>``:

- a key never seen, or last bumped more than twice the maximum ago, starts at 1 s;
- every further bump doubles the delay, capped at the maximum;
- while less than the current delay has passed since the last bump the failed pod is left alone
  and the DaemonSet is requeued after the *whole* current delay (upstream pushes ``Get(key)``,
  not the time remaining) — counted from the first pass that finds it held. Upstream's work
  queue keeps that first, earliest wake; a later pass inside the window (woken by a pod event, or
  by an earlier requeue such as paced status writes) asks for the time left to that same moment,
  so it cannot push the deletion back by another whole delay;
- entries untouched for twice the maximum are dropped (upstream's GC runs every minute).

Times are plain seconds from :class:`kruise.kube.clock.Clock.now`, so tests drive it by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.objects import status_of

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 15 * 60.0
GC_INTERVAL = 60.0


def backoff_key(ds: Mapping[str, Any], node: str) -> str:
    """failedPodsBackoffKey: a new observed generation starts every node afresh."""
    meta = ds.get("metadata") or {}
    observed = int(status_of(ds).get("observedGeneration") or 0)
    return f"{meta.get('uid', '')}/{observed}/{node}"


@dataclass
class _Entry:
    delay: float
    last_update: float
    held_until: float | None = None
    """When the current hold ends: the first held check's time plus the delay (None until then)."""


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
        entry.held_until = None

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
        otherwise the seconds to requeue after: the whole delay the first time the key is found
        held, the time left to that moment on later checks. Collects garbage at most every
        ``gc_interval``."""
        if self._last_gc is None or now - self._last_gc >= self.gc_interval:
            self.gc(now)
        if self.in_backoff_since_update(key, now):
            entry = self._entries[key]
            if entry.held_until is None or entry.held_until <= now:
                entry.held_until = now + entry.delay
                return entry.delay
            return entry.held_until - now
        self.next(key, now)
        return 0.0
