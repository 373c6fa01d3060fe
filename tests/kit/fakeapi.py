"""`FakeApi`: an in-memory apiserver behind the `kruise.kube.client.Client` calls that informers and
status writers make, for unit tests that need exact control over versions and event order.

It keeps objects under `namespace/name` with one resourceVersion counter, as the apiserver does.
Reads: `list_all` and `watch` (a watch replays the event history after its version; history can be
compacted so an old version gets 410 Gone) and `get`. Writes: `update_status` with compare-and-swap
on resourceVersion. A test steers it directly: `put`/`remove` pods, write as another client
(`foreign_write`), emit or replay raw events, end watches, fail the next requests, or deliver a
write's own watch event before the write returns (`deliver_during_write`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson

from kruise.kube.client import WatchEvent
from kruise.kube.errors import Conflict, Gone, NotFound
from kruise.kube.resources import object_key

Obj = dict[str, Any]


def wire(obj: Obj) -> Obj:
    """A fresh copy, as if the object had crossed the wire (JSON only: no shared dicts)."""
    return orjson.loads(orjson.dumps(obj))


class FakeApi:
    def __init__(self, *objects: Obj, resource_version: int = 0) -> None:
        """`objects` already exist at `resource_version` (the counter starts there), with no history."""
        self.objects: dict[str, Obj] = {}
        self.history: list[tuple[int, WatchEvent]] = []
        self.compacted = 0
        self.rv = resource_version
        self.fail_next: list[Exception] = []  # each request (list, watch, get, write) pops one
        self.lists = 0
        self.watches = 0
        self.written: list[Obj] = []  # every successful status write, as stored
        self.deliver_during_write: Callable[[Obj], None] | None = (
            None  # gets a write's object before it returns
        )
        self._watchers: list[asyncio.Queue[WatchEvent | None]] = []
        for obj in objects:
            obj["metadata"]["resourceVersion"] = str(self.rv)
            self.objects[object_key(obj)] = obj

    # ---- test controls -----------------------------------------------------------------------

    def emit(self, kind: str, obj: Obj) -> None:
        """Record a watch event at the current version and send it to every open watch."""
        event = WatchEvent(kind, wire(obj))
        self.history.append((self.rv, event))
        for q in self._watchers:
            q.put_nowait(event)

    def put(self, name: str, ns: str = "default", **fields: Any) -> Obj:
        """Create or replace the pod `ns/name` with `fields` beside its metadata (uid kept on replace)."""
        self.rv += 1
        key = f"{ns}/{name}"
        old = self.objects.get(key)
        obj = {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": old["metadata"]["uid"] if old else f"uid-{name}-{self.rv}",
                "resourceVersion": str(self.rv),
                "managedFields": [{"manager": "test"}],
            },
            **fields,
        }
        self.objects[key] = obj
        self.emit("MODIFIED" if old else "ADDED", obj)
        return obj

    def remove(self, name: str, ns: str = "default") -> None:
        self.rv += 1
        obj = self.objects.pop(f"{ns}/{name}")
        self.emit("DELETED", {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}})

    def foreign_write(
        self, key: str, *, annotations: dict[str, str] | None = None, status: Obj | None = None
    ) -> Obj:
        """Another writer changes the object (annotations added, status fields merged) at a new
        version; the event goes to open watches and history, and a copy is returned for a test that
        delivers it by hand."""
        obj = self.objects[key]
        self.rv += 1
        if annotations:
            obj["metadata"].setdefault("annotations", {}).update(annotations)
        if status:
            obj.setdefault("status", {}).update(status)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.emit("MODIFIED", obj)
        return wire(obj)

    def bookmark(self) -> None:
        self.emit("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": str(self.rv)}})

    def compact(self) -> None:
        self.compacted = self.rv
        self.history.clear()

    def end_watches(self) -> None:
        for q in self._watchers:
            q.put_nowait(None)

    def _request(self) -> None:
        if self.fail_next:
            raise self.fail_next.pop(0)

    # ---- the Client surface ------------------------------------------------------------------

    async def get(self, ref: Any, name: str, namespace: str | None = None, **_: Any) -> Obj:
        self._request()
        obj = self.objects.get(f"{namespace}/{name}" if namespace else name)
        if obj is None:
            raise NotFound(f'{getattr(ref, "plural", "objects")} "{name}" not found')
        return wire(obj)

    async def update_status(self, ref: Any, body: Obj, **_: Any) -> Obj:
        """Compare-and-swap on resourceVersion, as the apiserver's update does."""
        self._request()
        key = object_key(body)
        current = self.objects.get(key)
        if current is None:
            raise NotFound(f'"{key}" not found')
        if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise Conflict("the object has been modified")
        self.rv += 1
        stored = wire(body)
        stored["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[key] = stored
        self.written.append(wire(stored))
        self.emit("MODIFIED", stored)
        if self.deliver_during_write is not None:
            self.deliver_during_write(wire(stored))
        return wire(stored)

    async def list_all(self, ref, namespace=None, *, each=None, **kwargs):
        self.lists += 1
        self._request()
        items = [wire(o) for o in self.objects.values()]
        for o in items:  # list items come without kind and apiVersion, as from the apiserver
            o.pop("kind", None)
            o.pop("apiVersion", None)
        items = sorted(items, key=object_key)
        return [each(o) for o in items] if each is not None else items, str(self.rv)

    async def watch(self, ref, namespace=None, *, resource_version=None, opened=None, **kwargs):
        self.watches += 1
        self._request()
        since = int(resource_version or 0)
        if since < self.compacted:
            raise Gone("too old resource version", reason="Expired")
        if opened is not None:
            opened()
        q: asyncio.Queue[WatchEvent | None] = asyncio.Queue()
        for rv, event in self.history:
            if rv > since:
                q.put_nowait(event)
        self._watchers.append(q)
        try:
            while True:
                event = await q.get()
                if event is None:
                    return
                yield event
        finally:
            self._watchers.remove(q)
