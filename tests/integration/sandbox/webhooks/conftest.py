"""Fixtures: an in-process Sandbox (no nodes, no CRDs) and a real HTTPS webhook server."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from kruise.sandbox.cluster import Sandbox


def _load_webhook_server():
    if "webhook_server" not in sys.modules:
        path = Path(__file__).resolve().parents[4] / "e2e" / "webhook_server.py"
        spec = importlib.util.spec_from_file_location("webhook_server", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["webhook_server"] = module
        spec.loader.exec_module(module)
    return sys.modules["webhook_server"]


webhook_server = _load_webhook_server()


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
