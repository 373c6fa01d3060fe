"""Fixtures: an in-process Sandbox (no nodes, no CRDs) and a real HTTPS webhook server."""

from __future__ import annotations

import pytest

from kruise.sandbox.cluster import Sandbox
from tests.kit import webhook_server


@pytest.fixture(scope="session")
def certificates():
    return webhook_server.make_certificates(["hooks.kruise-system.svc"])


@pytest.fixture
async def server(certificates):
    srv = await webhook_server.WebhookServer(certificates).start()
    yield srv
    await srv.stop()


@pytest.fixture
async def sandbox(server):
    async with Sandbox(nodes=0, crd_dir=None) as sb:
        sb.register_service("kruise-system", "hooks", 443, f"127.0.0.1:{server.port}")
        yield sb
