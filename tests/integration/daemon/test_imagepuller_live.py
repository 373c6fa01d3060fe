"""kruise-daemon's image puller against the emulator and a simulated node's fake CRI over gRPC:
NodeImage spec -> CRI PullImage -> NodeImage status and the node's status.images."""

from __future__ import annotations

import asyncio

import pytest

from kruise.daemon.cri.client import RuntimeClient
from kruise.daemon.imagepuller.puller import ImagePuller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import EVENTS, NODEIMAGES, NODES
from tests.kit.daemon_node import NODE, image_tag, node_image, nodeimage_status, simulated_node
from tests.kit.polling import until_fetched

TIMEOUT = 20.0  # what these waits always had


@pytest.fixture
async def node(emulator):
    async with simulated_node(emulator, "daemon-cri-") as (simulator, client):
        simulator.runtimes[NODE].images.fail_images.add("*broken*")
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


async def test_pulls_tags_and_reports_status(node):
    client, _, slept = node
    body = node_image(
        {
            "nginx": [image_tag("1.25"), image_tag("1.26")],
            "example.com/broken": [image_tag("v1", pullPolicy={"backoffLimit": 2, "timeoutSeconds": 30})],
        }
    )
    await client.create(NODEIMAGES, body)
    status = nodeimage_status(client)

    final = await until_fetched(
        status, lambda s: s.get("succeeded") == 2 and s.get("failed") == 1, timeout=TIMEOUT
    )
    assert final["desired"] == 3 and final["pulling"] == 0
    nginx = {t["tag"]: t for t in final["imageStatuses"]["nginx"]["tags"]}
    assert nginx["1.25"]["phase"] == "Succeeded" and nginx["1.25"]["progress"] == 100
    assert nginx["1.25"]["imageID"].startswith("sha256:")
    (broken,) = final["imageStatuses"]["example.com/broken"]["tags"]
    assert broken["phase"] == "Failed" and "example.com/broken:v1" in broken["message"]
    assert slept == [1.0, 2.0]  # backoffLimit 2: three attempts, 1 s then 2 s apart

    node_obj = await until_fetched(
        lambda: client.get(NODES, NODE),
        lambda n: any("nginx:1.26" in " ".join(i["names"]) for i in n["status"].get("images", [])),
        timeout=TIMEOUT,
    )
    assert any("nginx:1.25" in " ".join(i["names"]) for i in node_obj["status"]["images"])


async def test_removed_tags_leave_the_status_and_version_bump_pulls_again(node):
    client, puller, _ = node
    body = node_image({"redis": [image_tag("7")], "busybox": [image_tag("1.36")]})
    await client.create(NODEIMAGES, body)
    status = nodeimage_status(client)

    await until_fetched(status, lambda s: s.get("succeeded") == 2, timeout=TIMEOUT)
    current = await client.get(NODEIMAGES, NODE)
    current["spec"]["images"].pop("busybox")
    current["spec"]["images"]["redis"]["tags"][0]["version"] = 1
    await client.update(NODEIMAGES, current)
    final = await until_fetched(
        status,
        lambda s: (
            set(s.get("imageStatuses") or {}) == {"redis"}
            and s["imageStatuses"]["redis"]["tags"][0].get("version") == 1
            and s.get("succeeded") == 1
        ),
        timeout=TIMEOUT,
    )
    assert final["desired"] == 1
    assert puller.states[("redis", "7")].version == 1


async def test_finished_pulls_are_events_on_the_nodeimage_and_the_owning_job(node):
    client, _, _ = node
    job = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "name": "warm",
           "namespace": "default", "uid": "6f1c1f4e-0000-4000-8000-000000000001"}  # fmt: skip
    body = node_image(
        {
            "nginx": [image_tag("1.25")],
            "example.com/broken": [
                image_tag("v1", ownerReferences=[job], pullPolicy={"backoffLimit": 0, "timeoutSeconds": 30})
            ],
        }
    )
    created = await client.create(NODEIMAGES, body)

    async def events():
        return (await client.list(EVENTS, "default"))["items"]

    found = await until_fetched(events, lambda items: len(items) >= 3, timeout=TIMEOUT)
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
