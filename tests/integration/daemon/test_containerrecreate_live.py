"""kruise-daemon's container recreator against the emulator and the simulated node's fake CRI:
a ContainerRecreateRequest stops containers through CRI gRPC and the kubelet starts them again."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest

from kruise.daemon.containerrecreate.recreator import ContainerRecreator
from kruise.daemon.cri.client import RuntimeClient
from kruise.kube.client import Client
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS
from kruise.sandbox.cluster import apply_crds, load_crds
from kruise.sandbox.simulator import Simulator

CRD_DIR = Path(__file__).resolve().parents[3] / "crds"
NODE = "node-1"
NS = "default"


@pytest.fixture
async def node(emulator):
    await apply_crds(emulator.kubeconfig, load_crds(CRD_DIR), timeout=30)
    cri_dir = Path(tempfile.mkdtemp(prefix="crr-cri-", dir="/tmp"))
    simulator = Simulator(emulator.kubeconfig, nodes=1, speed=50, cri_socket_dir=cri_dir)
    await simulator.start()
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=500, burst=500)
    runtime = RuntimeClient(simulator.socket_path(NODE))
    runtime.open()
    recreator = ContainerRecreator(client, runtime, NODE)
    recreator.start()
    try:
        yield client
    finally:
        await recreator.stop()
        await runtime.close()
        await client.close()
        await simulator.stop()
        shutil.rmtree(cri_dir, ignore_errors=True)


async def until(fetch, predicate, timeout=30.0):
    async with asyncio.timeout(timeout):
        while not predicate(value := await fetch()):  # noqa: ASYNC110 - polls the API
            await asyncio.sleep(0.05)
    return value


def ready(pod):
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


async def running_pod(client, name):
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "nodeName": NODE,
            "terminationGracePeriodSeconds": 2,
            "containers": [
                {"name": "app", "image": "nginx:alpine"},
                {"name": "side", "image": "busybox:1.36"},
            ],
        },
    }
    await client.create(PODS, body)
    return await until(lambda: client.get(PODS, name, NS), ready)


def request(pod, name, containers, **strategy):
    """What kruise-webhook fills in on CREATE (labels, statusContext); the webhook is not running here."""
    statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {
                "crr.apps.kruise.io/node-name": NODE,
                "crr.apps.kruise.io/pod-uid": pod["metadata"]["uid"],
                "crr.apps.kruise.io/active": "true",
            },
        },
        "spec": {
            "podName": pod["metadata"]["name"],
            "containers": [
                {"name": c, "statusContext": {"containerID": statuses[c]["containerID"], "restartCount": 0}}
                for c in containers
            ],
            "strategy": {"failurePolicy": "Fail", **strategy},
        },
    }


async def test_containers_are_recreated_in_order(node):
    client = node
    pod = await running_pod(client, "victim")
    await client.create(
        CONTAINER_RECREATE_REQUESTS, request(pod, "crr-1", ["app", "side"], orderedRecreate=True)
    )
    done = await until(
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
    pod = await running_pod(client, "short-lived")
    crr = request(pod, "crr-gone", ["app"])
    crr["metadata"]["labels"]["crr.apps.kruise.io/pod-uid"] = "another-uid"
    await client.create(CONTAINER_RECREATE_REQUESTS, crr)
    done = await until(
        lambda: client.get(CONTAINER_RECREATE_REQUESTS, "crr-gone", NS),
        lambda c: (c.get("status") or {}).get("phase") == "Completed",
    )
    assert done["status"]["message"] == "pod has gone"
    assert (await client.get(PODS, "short-lived", NS))["status"]["containerStatuses"][0]["restartCount"] == 0
