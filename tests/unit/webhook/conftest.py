"""Fixtures: the full webhook app over httpx ASGITransport, with fake namespace contents."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from webhook_testkit import FakeContents

from kruise.webhook.app import create_app
from kruise.webhook.routes import build_routes


@pytest.fixture
def contents() -> FakeContents:
    return FakeContents()


@pytest.fixture
async def client(contents: FakeContents) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(build_routes(contents))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://webhook.test") as c:
        yield c
