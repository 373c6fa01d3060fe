"""kruise-daemon's image puller against the emulator and a simulated node's fake CRI over gRPC:
NodeImage spec -> CRI PullImage -> NodeImage status and the node's status.images."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest

from kruise.daemon.cri.client import RuntimeClient
from kruise.daemon.imagepuller.puller import ImagePuller
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import EVENTS, NODEIMAGES, NODES
from kruise.sandbox.cluster import apply_crds, load_crds
from kruise.sandbox.simulator import Simulator

CRD_DIR = Path(__file__).resolve().parents[3] / "crds"
NODE = "node-1"


@pytest.fixture
async def node(emulator):
    await apply_crds(emulator.kubeconfig, load_crds(CRD_DIR), timeout=30)
    cri_dir = Path(tempfile.mkdtemp(prefix="daemon-cri-", dir="/tmp"))
    simulator = Simulator(emulator.kubeconfig, nodes=1, speed=50, cri_socket_dir=cri_dir)
    await simulator.start()
    simulator.runtimes[NODE].images.fail_images.add("*broken*")
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=500, burst=500)
    runtime = RuntimeClient(simulator.socket_path(NODE))
    runtime.open()
    slept: list[float] = []

    async def no_wait(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(0)

    puller = ImagePuller(client, runtime, NODE, sleep=no_wait)
    informer = SharedInformer(client, NODEIMAGES, None, field_selector=f"metadata.name={NODE}")
    informer.add_event_handler(on_add=puller.sync, on_update=lambda _o, n: puller.sync(n))
    informer.start()
    try:
        yield client, puller, slept
    finally:
        await informer.stop()
        await puller.stop()
        await runtime.close()
        await client.close()
        await simulator.stop()
        shutil.rmtree(cri_dir, ignore_errors=True)


async def until(fetch, predicate, timeout=20.0):
    async with asyncio.timeout(timeout):
        while not predicate(value := await fetch()):  # noqa: ASYNC110 - polls the API
            await asyncio.sleep(0.05)
    return value


def tag(name: str, **extra) -> dict:
    return {"tag": name, "createdAt": "2026-01-01T00:00:00Z", "version": 0, **extra}


async def test_pulls_tags_and_reports_status(node):
    client, _, slept = node
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": NODE},
        "spec": {
            "images": {
                "nginx": {"tags": [tag("1.25"), tag("1.26")]},
                "example.com/broken": {
                    "tags": [tag("v1", pullPolicy={"backoffLimit": 2, "timeoutSeconds": 30})]
                },
            }
        },
    }
    await client.create(NODEIMAGES, body)

    async def status():
        return (await client.get(NODEIMAGES, NODE)).get("status") or {}

    final = await until(status, lambda s: s.get("succeeded") == 2 and s.get("failed") == 1)
    assert final["desired"] == 3 and final["pulling"] == 0
    nginx = {t["tag"]: t for t in final["imageStatuses"]["nginx"]["tags"]}
    assert nginx["1.25"]["phase"] == "Succeeded" and nginx["1.25"]["progress"] == 100
    assert nginx["1.25"]["imageID"].startswith("sha256:")
    (broken,) = final["imageStatuses"]["example.com/broken"]["tags"]
    assert broken["phase"] == "Failed" and "example.com/broken:v1" in broken["message"]
    assert slept == [1.0, 2.0]  # backoffLimit 2: three attempts, 1 s then 2 s apart

    node_obj = await until(
        lambda: client.get(NODES, NODE),
        lambda n: any("nginx:1.26" in " ".join(i["names"]) for i in n["status"].get("images", [])),
    )
    assert any("nginx:1.25" in " ".join(i["names"]) for i in node_obj["status"]["images"])


async def test_removed_tags_leave_the_status_and_version_bump_pulls_again(node):
    client, puller, _ = node
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": NODE},
        "spec": {"images": {"redis": {"tags": [tag("7")]}, "busybox": {"tags": [tag("1.36")]}}},
    }
    await client.create(NODEIMAGES, body)

    async def status():
        return (await client.get(NODEIMAGES, NODE)).get("status") or {}

    await until(status, lambda s: s.get("succeeded") == 2)
    current = await client.get(NODEIMAGES, NODE)
    current["spec"]["images"].pop("busybox")
    current["spec"]["images"]["redis"]["tags"][0]["version"] = 1
    await client.update(NODEIMAGES, current)
    final = await until(
        status,
        lambda s: (
            set(s.get("imageStatuses") or {}) == {"redis"}
            and s["imageStatuses"]["redis"]["tags"][0].get("version") == 1
            and s.get("succeeded") == 1
        ),
    )
    assert final["desired"] == 1
    assert puller.states[("redis", "7")].version == 1


async def test_finished_pulls_are_events_on_the_nodeimage_and_the_owning_job(node):
    client, _, _ = node
    job = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "name": "warm",
           "namespace": "default", "uid": "6f1c1f4e-0000-4000-8000-000000000001"}  # fmt: skip
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": NODE},
        "spec": {
            "images": {
                "nginx": {"tags": [tag("1.25")]},
                "example.com/broken": {
                    "tags": [
                        tag("v1", ownerReferences=[job], pullPolicy={"backoffLimit": 0, "timeoutSeconds": 30})
                    ]
                },
            }
        },
    }
    created = await client.create(NODEIMAGES, body)

    async def events():
        return (await client.list(EVENTS, "default"))["items"]

    found = await until(events, lambda items: len(items) >= 3)
    by_reason = {}
    for event in found:
        assert event["source"] == {"component": "kruise-daemon-imagepuller", "host": NODE}
        involved = event["involvedObject"]
        by_reason.setdefault(event["reason"], []).append((involved["kind"], involved["name"], event))
    ((kind, name, succeeded),) = by_reason["PullImageSucceed"]
    assert (kind, name, succeeded["type"]) == ("NodeImage", NODE, "Normal")
    assert succeeded["involvedObject"]["uid"] == created["metadata"]["uid"]
    assert succeeded["message"].startswith("Image nginx:1.25, ecalpsedTime ")
    failed = sorted(by_reason["PullImageFailed"], key=lambda item: item[0])
    assert [(k, n) for k, n, _ in failed] == [("ImagePullJob", "warm"), ("NodeImage", NODE)]
    for _, _, event in failed:
        assert event["type"] == "Warning"
        assert event["message"].startswith(
            "Image example.com/broken:v1 Failed to pull image example.com/broken:v1"
        )
