"""The later pages of a paged list, served from the ordered items its first page found.

kube-apiserver serves a `continue` token from etcd at the list's revision: the pages of one list are
one snapshot. The emulator used to answer each page by filtering and ordering the whole collection
again to find the items after the token's key, so a list of N objects in pages of L cost N²/L: a
100,000-pod informer list in pages of 500 scanned the store 200 times. Keeping the first page's ordered
items (references, not copies) makes each later page a bisection and a slice, and keeps a replaced or
deleted object in the later pages as it was at the first one, as the snapshot would.

A token whose snapshot is gone (evicted, too old, another emulator) still works: the caller falls back
to a fresh scan from the token's key, which is what every page did before.
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
Key = tuple[str, str]

CAPACITY = 16  # lists being paged at once; informers page one list per resource at a time
MAX_AGE = 300.0  # seconds unused; kube-apiserver's tokens expire with etcd's compaction, every 5 minutes


def list_key(obj: Obj) -> Key:
    """A list's order: namespace, then name."""
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


@dataclass
class Snapshot:
    scope: Hashable  # resource, namespace and selectors: a token is honoured only for the same list
    items: list[Obj]  # in list order
    used: float


class ListSnapshots:
    """The ordered items of paged lists, by the id their continue tokens carry; the least recently paged
    is evicted first, and any unused for `max_age` seconds."""

    def __init__(
        self, capacity: int = CAPACITY, max_age: float = MAX_AGE, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity: must be at least 1, got {capacity}")
        if max_age <= 0:
            raise ValueError(f"max_age: must be greater than 0, got {max_age}")
        self.capacity, self.max_age, self.clock = capacity, max_age, clock
        self._snapshots: OrderedDict[int, Snapshot] = OrderedDict()
        self._ids = itertools.count(1)

    def __len__(self) -> int:
        return len(self._snapshots)

    def keep(self, scope: Hashable, items: list[Obj]) -> int:
        """Keep `items` (in list order, the pages still to serve) for `scope`; the id for the token."""
        self._expire()
        snapshot_id = next(self._ids)
        self._snapshots[snapshot_id] = Snapshot(scope, items, self.clock())
        while len(self._snapshots) > self.capacity:
            self._snapshots.popitem(last=False)
        return snapshot_id

    def page(self, snapshot_id: Any, scope: Hashable, after: Key, limit: int) -> tuple[list[Obj], int] | None:
        """The next `limit` items (all of them for 0) after key `after`, and how many remain behind
        them; None when the snapshot is gone or was taken for another list."""
        self._expire()
        snapshot = self._snapshots.get(snapshot_id) if isinstance(snapshot_id, int) else None
        if snapshot is None or snapshot.scope != scope:
            return None
        snapshot.used = self.clock()
        self._snapshots.move_to_end(snapshot_id)
        start = bisect.bisect_right(snapshot.items, after, key=list_key)
        end = len(snapshot.items) if limit <= 0 else min(start + limit, len(snapshot.items))
        return snapshot.items[start:end], len(snapshot.items) - end

    def drop(self, snapshot_id: int) -> None:
        """Forget a list whose last page was served."""
        self._snapshots.pop(snapshot_id, None)

    def _expire(self) -> None:
        oldest = self.clock() - self.max_age
        while self._snapshots:
            first = next(iter(self._snapshots.values()))
            if first.used > oldest:
                return
            self._snapshots.popitem(last=False)
