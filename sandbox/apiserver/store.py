"""In-memory storage: objects indexed by resource and namespace, one resourceVersion counter,
a bounded event history for watch resumption, and watch fan-out that encodes each event once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

ResKey = tuple[str, str]  # (group, plural)


@dataclass
class Event:
    """One write as watchers see it; the JSON line is built once per apiVersion and shared."""

    rv: int
    res: ResKey
    type: str
    obj: dict[str, Any]
    prev: dict[str, Any] | None = None  # the object before a MODIFIED, for selector transitions
    _lines: dict[str, bytes] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.obj["metadata"].get("namespace", "")

    def has_line(self, api_version: str) -> bool:
        return api_version in self._lines

    def line(self, api_version: str, converted: dict[str, Any] | None = None) -> bytes:
        """The line at `api_version`; `converted` is the object already at that version (a
        conversion webhook's answer), else only apiVersion is rewritten."""
        cached = self._lines.get(api_version)
        if cached is None:
            obj = converted or (
                self.obj
                if self.obj.get("apiVersion") == api_version
                else {**self.obj, "apiVersion": api_version}
            )
            cached = b'{"type":"' + self.type.encode() + b'","object":' + orjson.dumps(obj) + b"}\n"
            self._lines[api_version] = cached
        return cached


@dataclass(eq=False)
class Watcher:
    res: ResKey
    namespace: str  # "" = all namespaces
    predicate: Callable[[dict[str, Any]], bool]
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)

    def offer(self, event: Event) -> None:
        if self.namespace and event.namespace != self.namespace:
            return
        self.queue.put_nowait(event)


class Store:
    """Not thread-safe by design: the server runs on one event loop and never awaits mid-write."""

    def __init__(self, history_size: int = 1000):
        self.rv = 0
        self._objects: dict[ResKey, dict[str, dict[str, dict[str, Any]]]] = {}
        self.history: deque[Event] = deque(maxlen=history_size)
        self.compacted_rv = 0  # a watch from an rv below this is 410 Gone
        self._watchers: dict[ResKey, set[Watcher]] = {}
        self._restarted_rv: dict[ResKey, int] = {}  # a resource's watch cache began here (crdstorage.py)

    # ---- reads
    def get(self, res: ResKey, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objects.get(res, {}).get(namespace, {}).get(name)

    def list(self, res: ResKey, namespace: str = "") -> Iterator[dict[str, Any]]:
        by_ns = self._objects.get(res, {})
        if namespace:
            yield from by_ns.get(namespace, {}).values()
            return
        for ns in list(by_ns):
            yield from list(by_ns[ns].values())

    def count(self, res: ResKey, namespace: str) -> int:
        return len(self._objects.get(res, {}).get(namespace, {}))

    def resources(self) -> list[ResKey]:
        return list(self._objects)

    # ---- writes (caller has fully prepared the object except resourceVersion)
    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def put(
        self, res: ResKey, obj: dict[str, Any], event_type: str, prev: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        rv = self.next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        meta = obj["metadata"]
        self._objects.setdefault(res, {}).setdefault(meta.get("namespace", ""), {})[meta["name"]] = obj
        self._emit(Event(rv, res, event_type, obj, prev))
        return obj

    def remove(self, res: ResKey, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        ns = meta.get("namespace", "")
        bucket = self._objects.get(res, {}).get(ns, {})
        bucket.pop(meta["name"], None)
        if not bucket:
            self._objects.get(res, {}).pop(ns, None)
        rv = self.next_rv()
        gone = {**obj, "metadata": {**meta, "resourceVersion": str(rv)}}
        self._emit(Event(rv, res, "DELETED", gone))
        return gone

    def drop_resource(self, res: ResKey) -> list[dict[str, Any]]:
        removed = [self.remove(res, obj) for obj in list(self.list(res))]
        self._objects.pop(res, None)
        return removed

    def _emit(self, event: Event) -> None:
        if len(self.history) == self.history.maxlen:
            self.compacted_rv = self.history[0].rv
        self.history.append(event)
        for watcher in self._watchers.get(event.res, ()):
            watcher.offer(event)

    # ---- watch
    def watch(
        self, res: ResKey, namespace: str, since: int | None, predicate: Callable[[dict[str, Any]], bool]
    ) -> Watcher:
        """Register a watcher; with `since`, replay history after it first (caller checked 410)."""
        watcher = Watcher(res, namespace, predicate)
        if since is not None:
            for event in self.history:
                if event.rv > since and event.res == res:
                    watcher.offer(event)
        self._watchers.setdefault(res, set()).add(watcher)
        return watcher

    def oldest_rv(self, res: ResKey) -> int:
        """A watch of `res` from a resourceVersion below this is 410 Gone."""
        return max(self.compacted_rv, self._restarted_rv.get(res, 0))

    def too_old(self, since: int, res: ResKey) -> bool:
        return since < self.oldest_rv(res)

    def restart_watches(self, res: ResKey) -> None:
        """End `res`'s open watches and start its history afresh at the current resourceVersion."""
        self._restarted_rv[res] = self.rv
        for watcher in self._watchers.pop(res, set()):
            watcher.queue.put_nowait(None)

    def unwatch(self, watcher: Watcher) -> None:
        self._watchers.get(watcher.res, set()).discard(watcher)

    def compact(self) -> None:
        """Forget all history: every resume from an older resourceVersion gets 410 Gone."""
        self.history.clear()
        self.compacted_rv = self.rv

    def close_watchers(self) -> int:
        """End every open watch stream; how many there were."""
        closed = 0
        for watchers in self._watchers.values():
            for watcher in watchers:
                watcher.queue.put_nowait(None)
                closed += 1
        self._watchers.clear()
        return closed
