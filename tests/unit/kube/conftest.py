"""Fixtures for the kube unit tests: `fake_api`, an in-memory apiserver for informers (tests.kit.fakeapi),
and `fake_objects`, compare-and-swap objects for leader election."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kit.fakeapi import FakeApi, wire


@pytest.fixture
def fake_api() -> FakeApi:
    return FakeApi()


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
        return wire(obj)

    async def create(self, ref, body, namespace=None, **kwargs):
        self._check()
        from kruise.kube.errors import AlreadyExists

        meta = body["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        if key in self.objects:
            raise AlreadyExists("already exists")
        self.rv += 1
        obj = wire(body)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[key] = obj
        return wire(obj)

    async def update(self, ref, body, **kwargs):
        self._check()
        from kruise.kube.errors import Conflict

        meta = body["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        if self.objects[key]["metadata"]["resourceVersion"] != meta.get("resourceVersion"):
            raise Conflict("the object has been modified; please apply your changes to the latest version")
        self.rv += 1
        obj = wire(body)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[key] = obj
        return wire(obj)


@pytest.fixture
def fake_objects() -> FakeObjects:
    return FakeObjects()
