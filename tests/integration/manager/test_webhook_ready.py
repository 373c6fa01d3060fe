"""The leader holds its controllers until kruise-webhook-service has a ready endpoint (upstream's manager
waits for its webhook), logging one line per retry and never a traceback."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from kruise.kube.client import Client
from kruise.kube.resources import CONFIGMAPS, ENDPOINT_SLICES, NAMESPACES
from kruise.manager.app import Manager
from kruise.manager.options import parse_args
from kruise.manager.webhookready import wait_for_webhook
from tests.integration.manager.test_manager_leading import configmap_setup
from tests.kit import until as kit_until

NS = "kruise-system"
SERVICE = "kruise-webhook-service"


def endpoint_slice(ready: bool) -> dict:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": f"{SERVICE}-x1",
            "namespace": NS,
            "labels": {"kubernetes.io/service-name": SERVICE},
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.7"], "conditions": {"ready": ready}}],
        "ports": [{"name": "", "port": 9876, "protocol": "TCP"}],
    }


@pytest.fixture
async def client(emulator):
    c = await Client.from_kubeconfig(emulator.kubeconfig, qps=1000, burst=1000)
    await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    await c.create(
        CONFIGMAPS,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}},
    )
    yield c
    await c.close()


async def test_leader_starts_controllers_only_once_the_webhook_service_has_a_ready_endpoint(emulator, client):
    argv = [
        "--kubeconfig", str(emulator.kubeconfig), "--metrics-addr", "127.0.0.1:0",
        "--health-probe-addr", "127.0.0.1:0", "--leader-election-lease-duration", "3",
        "--leader-election-renew-deadline", "2", "--leader-election-retry-period", "0.2",
        "--namespace", NS, "--webhook-service-name", SERVICE,
    ]  # fmt: skip
    seen: list[str] = []
    manager = Manager(client, parse_args(argv, env={}), [configmap_setup(seen)])
    await client.create(ENDPOINT_SLICES, endpoint_slice(ready=False))
    with capture_logs() as logs:
        running = asyncio.create_task(manager.run())
        try:
            await kit_until(lambda: any(e["event"] == "wait webhook ready" for e in logs), 15.0, 0.02)
            assert manager.elector.is_leader() and manager.caches_synced()
            assert not manager.leading and seen == []  # holding the lease, controllers not started

            live = await client.get(ENDPOINT_SLICES, f"{SERVICE}-x1", NS)
            live["endpoints"][0]["conditions"]["ready"] = True
            await client.update(ENDPOINT_SLICES, live)
            await kit_until(lambda: manager.leading and "default/a" in seen, 15.0, 0.02)
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            await manager.stop()
    ready = [e for e in logs if e["event"] == "webhook ready"]
    assert ready and ready[0]["endpoints"] == 1


async def test_waiting_logs_one_line_per_retry_without_a_traceback(client):
    with capture_logs() as logs:
        waiting = asyncio.create_task(wait_for_webhook(client, NS, SERVICE, interval=0.05, quiet_for=0.0))
        retries = lambda: [e for e in logs if e["event"] == "webhook not ready yet, controllers wait"]  # noqa: E731
        await kit_until(lambda: len(retries()) >= 3, 15.0, 0.02)
        assert not waiting.done()
        await client.create(ENDPOINT_SLICES, endpoint_slice(ready=True))
        async with asyncio.timeout(15):
            assert await waiting == 1
    for line in retries():
        assert line["log_level"] == "warning"
        assert line["reason"] == f'no ready endpoints for service "{SERVICE}"'
        assert "exc_info" not in line and "exception" not in line
    assert [e["event"] for e in logs].count("webhook ready") == 1
