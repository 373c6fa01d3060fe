"""An in-memory stand-in for `kruise.kube.client.Client`, enough for informer unit tests.

It keeps objects with increasing resourceVersions and an event history that can be compacted
(so a watch from an old version gets 410 Gone), and lets a test end watches or fail requests.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kruise.kube.client import WatchEvent
from kruise.kube.errors import Gone, InternalError
from kruise.kube.resources import object_key


class FakeApi:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.history: list[tuple[int, WatchEvent]] = []
        self.compacted = 0
        self.rv = 0
        self.fail_next: list[Exception] = []
        self.lists = 0
        self.watches = 0
        self._watchers: list[asyncio.Queue[WatchEvent | None]] = []

    # ---- test controls -----------------------------------------------------------------------
    def _emit(self, kind: str, obj: dict[str, Any]) -> None:
        event = WatchEvent(kind, obj)
        self.history.append((self.rv, event))
        for q in self._watchers:
            q.put_nowait(event)

    def put(self, name: str, ns: str = "default", **fields: Any) -> dict[str, Any]:
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
        self._emit("MODIFIED" if old else "ADDED", self._wire(obj))
        return obj

    def remove(self, name: str, ns: str = "default") -> None:
        self.rv += 1
        obj = self.objects.pop(f"{ns}/{name}")
        obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}}
        self._emit("DELETED", self._wire(obj))

    def bookmark(self) -> None:
        self._emit("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": str(self.rv)}})

    def compact(self) -> None:
        self.compacted = self.rv
        self.history.clear()

    def end_watches(self) -> None:
        for q in self._watchers:
            q.put_nowait(None)

    @staticmethod
    def _wire(obj: dict[str, Any]) -> dict[str, Any]:
        import orjson

        return orjson.loads(orjson.dumps(obj))

    # ---- the Client surface the informer uses ------------------------------------------------
    async def list_all(self, ref, namespace=None, *, each=None, **kwargs):
        self.lists += 1
        if self.fail_next:
            raise self.fail_next.pop(0)
        items = [self._wire(o) for o in self.objects.values()]
        for o in items:
            del o["kind"], o["apiVersion"]
        items = sorted(items, key=object_key)
        return [each(o) for o in items] if each is not None else items, str(self.rv)

    async def watch(self, ref, namespace=None, *, resource_version=None, opened=None, **kwargs):
        self.watches += 1
        if self.fail_next:
            raise self.fail_next.pop(0)
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


@pytest.fixture
def fake_api() -> FakeApi:
    return FakeApi()


__all__ = ["FakeApi", "InternalError"]


class FakeObjects:
    """get/create/update with resourceVersion compare-and-swap, for leader-election unit tests."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.rv = 0
        self.gets = 0  # reads so far: a test can tell that a campaign attempt happened
        self.down = False  # simulate an unreachable apiserver

    def _check(self) -> None:
        if self.down:
            from kruise.kube.errors import TransportError

            raise TransportError("connection refused")

    async def get(self, ref, name, namespace=None, **kwargs):
        self._check()
        self.gets += 1
        from kruise.kube.errors import NotFound

        obj = self.objects.get((namespace or "", name))
        if obj is None:
            raise NotFound(f'{ref.plural} "{name}" not found')
        return FakeApi._wire(obj)

    async def create(self, ref, body, namespace=None, **kwargs):
        self._check()
        from kruise.kube.errors import AlreadyExists

        meta = body["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        if key in self.objects:
            raise AlreadyExists("already exists")
        self.rv += 1
        obj = FakeApi._wire(body)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[key] = obj
        return FakeApi._wire(obj)

    async def update(self, ref, body, **kwargs):
        self._check()
        from kruise.kube.errors import Conflict

        meta = body["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        if self.objects[key]["metadata"]["resourceVersion"] != meta.get("resourceVersion"):
            raise Conflict("the object has been modified; please apply your changes to the latest version")
        self.rv += 1
        obj = FakeApi._wire(body)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[key] = obj
        return FakeApi._wire(obj)


@pytest.fixture
def fake_objects() -> FakeObjects:
    return FakeObjects()
