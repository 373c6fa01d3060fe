"""Fixtures: the full webhook app over httpx ASGITransport, with fake namespace contents."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from kruise.api.features import RESOURCES_DELETION_PROTECTION, FeatureGates
from kruise.webhook import registry
from kruise.webhook.app import create_app
from tests.kit.namespace_contents import FakeNamespaceContents
from tests.kit.webhook import context


@pytest.fixture
def contents() -> FakeNamespaceContents:
    return FakeNamespaceContents()


@pytest.fixture
async def client(contents: FakeNamespaceContents) -> AsyncIterator[httpx.AsyncClient]:
    # Deletion-protection tests need the gate that upstream leaves off by default.
    gates = FeatureGates({RESOURCES_DELETION_PROTECTION: True}, env={})
    app = create_app(registry.routes(context(namespace_contents=contents, gates=gates)))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://webhook.test") as c:
        yield c
