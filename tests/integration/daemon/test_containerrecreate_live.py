"""kruise-daemon's container recreator against the emulator and the simulated node's fake CRI:
a ContainerRecreateRequest stops containers through CRI gRPC and the kubelet starts them again."""

from __future__ import annotations

import pytest

from kruise.daemon.containerrecreate.recreator import ContainerRecreator
from kruise.daemon.cri.client import RuntimeClient
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS
from tests.kit.daemon_node import NODE, NS, crr_request, running_pod, simulated_node
from tests.kit.polling import until_fetched

CONTAINER_IMAGES = {"app": "nginx:alpine", "side": "busybox:1.36"}


@pytest.fixture
async def node(emulator):
    async with simulated_node(emulator, "crr-cri-") as (simulator, client):
        runtime = RuntimeClient(simulator.socket_path(NODE))
        runtime.open()
        recreator = ContainerRecreator(client, runtime, NODE)
        recreator.start()
        try:
            yield client
        finally:
            await recreator.stop()
            await runtime.close()


async def test_containers_are_recreated_in_order(node):
    client = node
    pod = await running_pod(client, "victim", CONTAINER_IMAGES)
    await client.create(
        CONTAINER_RECREATE_REQUESTS, crr_request(pod, "crr-1", ["app", "side"], orderedRecreate=True)
    )
    done = await until_fetched(
        lambda: client.get(CONTAINER_RECREATE_REQUESTS, "crr-1", NS),
        lambda c: (c.get("status") or {}).get("phase") == "Completed",
    )
    states = {s["name"]: s for s in done["status"]["containerRecreateStates"]}
    assert states["app"]["phase"] == states["side"]["phase"] == "Succeeded"
    assert states["app"]["isKilled"] and states["side"]["isKilled"]
    assert done["status"]["completionTime"]
    after = await client.get(PODS, "victim", NS)
    assert after["metadata"]["uid"] == pod["metadata"]["uid"]
    restarts = {s["name"]: s["restartCount"] for s in after["status"]["containerStatuses"]}
    assert restarts == {"app": 1, "side": 1}


async def test_request_for_a_gone_pod_completes(node):
    client = node
    pod = await running_pod(client, "short-lived", CONTAINER_IMAGES)
    crr = crr_request(pod, "crr-gone", ["app"])
    crr["metadata"]["labels"]["crr.apps.kruise.io/pod-uid"] = "another-uid"
    await client.create(CONTAINER_RECREATE_REQUESTS, crr)
    done = await until_fetched(
        lambda: client.get(CONTAINER_RECREATE_REQUESTS, "crr-gone", NS),
        lambda c: (c.get("status") or {}).get("phase") == "Completed",
    )
    assert done["status"]["message"] == "pod has gone"
    assert (await client.get(PODS, "short-lived", NS))["status"]["containerStatuses"][0]["restartCount"] == 0
