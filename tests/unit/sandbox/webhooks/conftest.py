"""Fixtures: a real HTTPS webhook server (the test kit's, shared with e2e) and a WebhookAdmission over a
dict store."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from tests.kit import webhook_server


@pytest.fixture(scope="session")
def certificates():
    return webhook_server.make_certificates(["hooks.system.svc"])


@pytest.fixture
async def server(certificates):
    srv = await webhook_server.WebhookServer(certificates).start()
    yield srv
    await srv.stop()


class Store:
    """The emulator's storage reduced to what admission reads: objects per (group, version, plural)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], list[dict[str, Any]]] = {}

    def add(self, group: str, version: str, plural: str, obj: dict[str, Any]) -> None:
        self.objects.setdefault((group, version, plural), []).append(obj)

    def list(self, group: str, version: str, plural: str) -> list[dict[str, Any]]:
        return self.objects.get((group, version, plural), [])


@pytest.fixture
def store() -> Store:
    s = Store()
    s.add(
        "",
        "v1",
        "namespaces",
        {"metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}}},
    )
    s.add("", "v1", "namespaces", {"metadata": {"name": "team", "labels": {"env": "prod"}}})
    return s


@pytest.fixture
async def admission(store, server):
    plugin = WebhookAdmission(store.list, {("system", "hooks", 443): f"127.0.0.1:{server.port}"})
    yield plugin
    await plugin.aclose()
