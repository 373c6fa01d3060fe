"""Expectations: remember what a controller just did until the informer cache has seen it.

A reconciler that creates three pods and is woken again before the cache shows them would create
three more. Expectations record the pending creates/deletes (or the resourceVersion just written)
and the reconciler skips acting until they are observed — or until `timeout` (5 min, as upstream)
says the events were lost and the cache must be trusted again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kruise.kube.clock import Clock, RealClock

EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class _Counts:
    add: int
    delete: int
    timestamp: float


class ControllerExpectations:
    """Per controller key: how many creations and deletions are still to be observed.

    Mirrors upstream `ControllerExpectations` (`SetExpectations`, `ExpectCreations`,
    `CreationObserved`, `SatisfiedExpectations`).
    """

    def __init__(self, clock: Clock | None = None, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock or RealClock()
        self.timeout = timeout
        self._records: dict[str, _Counts] = {}
        self._lock = threading.Lock()

    def set(self, key: str, add: int = 0, delete: int = 0) -> None:
        """Replace the record: expect `add` creations and `delete` deletions from now on."""
        with self._lock:
            self._records[key] = _Counts(add, delete, self._clock.now())

    def expect_creations(self, key: str, n: int) -> None:
        self.set(key, add=n)

    def expect_deletions(self, key: str, n: int) -> None:
        self.set(key, delete=n)

    def raise_(self, key: str, add: int = 0, delete: int = 0) -> None:
        """Increase what is expected without resetting the timestamp."""
        with self._lock:
            rec = self._records.get(key)
            if rec is None:
                self._records[key] = _Counts(add, delete, self._clock.now())
            else:
                rec.add += add
                rec.delete += delete

    def lower(self, key: str, add: int = 0, delete: int = 0) -> None:
        with self._lock:
            rec = self._records.get(key)
            if rec is not None:
                rec.add -= add
                rec.delete -= delete

    def creation_observed(self, key: str) -> None:
        self.lower(key, add=1)

    def deletion_observed(self, key: str) -> None:
        self.lower(key, delete=1)

    def get(self, key: str) -> tuple[int, int] | None:
        with self._lock:
            rec = self._records.get(key)
            return None if rec is None else (rec.add, rec.delete)

    def satisfied(self, key: str) -> bool:
        """True when nothing is pending, the record is missing, or it expired (events were lost)."""
        with self._lock:
            rec = self._records.get(key)
            if rec is None:
                return True
            if rec.add <= 0 and rec.delete <= 0:
                return True
            return self._clock.now() - rec.timestamp > self.timeout

    def expired(self, key: str) -> bool:
        with self._lock:
            rec = self._records.get(key)
            return rec is not None and self._clock.now() - rec.timestamp > self.timeout

    def delete(self, key: str) -> None:
        with self._lock:
            self._records.pop(key, None)


def _rv_int(resource_version: str) -> int | None:
    try:
        return int(resource_version)
    except (TypeError, ValueError):
        return None


def _meta(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("uid", ""), meta.get("resourceVersion", "")


class ResourceVersionExpectations:
    """Per object UID: the newest resourceVersion this controller wrote.

    After updating an object, `expect(obj_returned_by_the_server)`; the informer's copy is trusted
    again once its resourceVersion is at least that (kruise's ResourceVersionExpectation).
    """

    def __init__(self, clock: Clock | None = None, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock or RealClock()
        self.timeout = timeout
        self._expected: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def expect(self, obj: dict[str, Any]) -> None:
        uid, rv = _meta(obj)
        value = _rv_int(rv)
        if not uid or value is None:
            return
        with self._lock:
            current = self._expected.get(uid)
            if current is None or value > current[0]:
                self._expected[uid] = (value, self._clock.now())

    def observe(self, obj: dict[str, Any]) -> None:
        """The cache shows `obj`: drop the expectation once it is at least as new as expected."""
        uid, rv = _meta(obj)
        with self._lock:
            current = self._expected.get(uid)
            if current is None:
                return
            value = _rv_int(rv)
            if value is None or value >= current[0]:
                del self._expected[uid]

    def is_satisfied(self, obj: dict[str, Any]) -> bool:
        uid, rv = _meta(obj)
        with self._lock:
            current = self._expected.get(uid)
            if current is None:
                return True
            value = _rv_int(rv)
            if value is None or value >= current[0]:
                # Unparsable versions are treated as newer, as upstream does.
                del self._expected[uid]
                return True
            if self._clock.now() - current[1] > self.timeout:
                del self._expected[uid]
                return True
            return False

    def delete(self, uid: str) -> None:
        with self._lock:
            self._expected.pop(uid, None)

    def __len__(self) -> int:
        return len(self._expected)


class ScaleExpectations:
    """Per controller key: the names of objects it created or deleted that the cache has not shown yet.

    Kruise's ScaleExpectations. Names, not counts: an informer may report one deletion twice (the
    update that sets deletionTimestamp, then the delete), and observing a name twice must not
    cancel someone else's pending create. `satisfied` also says for how long it has been unsatisfied
    so a reconciler can give up on lost events after `timeout` (5 min, as upstream).
    """

    CREATE = "create"
    DELETE = "delete"

    def __init__(self, clock: Clock | None = None, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock or RealClock()
        self.timeout = timeout
        self._pending: dict[str, dict[str, set[str]]] = {}
        self._since: dict[str, float] = {}
        self._lock = threading.Lock()

    def expect(self, key: str, action: str, name: str) -> None:
        if action not in (self.CREATE, self.DELETE):
            raise ValueError(f"action: must be {self.CREATE!r} or {self.DELETE!r}, got {action!r}")
        with self._lock:
            self._pending.setdefault(key, {self.CREATE: set(), self.DELETE: set()})[action].add(name)

    def observe(self, key: str, action: str, name: str) -> None:
        with self._lock:
            record = self._pending.get(key)
            if record is None:
                return
            record[action].discard(name)
            if not record[self.CREATE] and not record[self.DELETE]:
                del self._pending[key]
                self._since.pop(key, None)

    def satisfied(self, key: str) -> tuple[bool, float, dict[str, list[str]]]:
        """(satisfied, seconds unsatisfied so far, pending names by action)."""
        with self._lock:
            record = self._pending.get(key)
            if record is None:
                self._since.pop(key, None)
                return True, 0.0, {}
            now = self._clock.now()
            since = self._since.setdefault(key, now)
            pending = {action: sorted(names) for action, names in record.items() if names}
            return False, now - since, pending

    def delete(self, key: str) -> None:
        with self._lock:
            self._pending.pop(key, None)
            self._since.pop(key, None)
