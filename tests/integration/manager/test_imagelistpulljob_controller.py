"""ImageListPullJob controller with the ImagePullJob and NodeImage controllers on the emulator: one
ImagePullJob per image, the list job's status from theirs, completion and TTL, jobs of removed images
deleted (the daemon's NodeImage status writes are played by patches, as in the ImagePullJob test)."""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import IMAGELISTPULLJOBS, IMAGEPULLJOBS, NODEIMAGES
from kruise.manager.controllers import imagelistpulljob, imagepulljob, nodeimage

NS = "default"


@pytest.fixture
def controller_setups():
    return [nodeimage.SETUP, imagepulljob.SETUP, imagelistpulljob.SETUP]


@pytest.fixture
def feature_gates():
    return FeatureGates({"ImagePullJobGate": True}, env={})


def list_job(name="warm", images=("nginx:1.26", "redis:7"), **spec):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImageListPullJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "images": list(images),
            "selector": {"names": ["node-1", "node-2"]},
            "parallelism": 2,
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 2},
            "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 60},
            **spec,
        },
    }


async def report_all(client, node, phase="Succeeded"):
    """What kruise-daemon writes on `node` once every tag in its NodeImage is pulled."""
    image = await client.get(NODEIMAGES, node)
    statuses = {
        name: {
            "tags": [{"tag": t["tag"], "phase": phase, "version": t.get("version", 0)} for t in spec["tags"]]
        }
        for name, spec in ((image.get("spec") or {}).get("images") or {}).items()
    }
    await client.patch(NODEIMAGES, node, {"status": {"imageStatuses": statuses}}, subresource="status")


async def test_one_image_pull_job_per_image_then_completion_and_ttl(kruise_cluster):
    client = kruise_cluster.client
    await kruise_cluster.until(lambda: client.list(NODEIMAGES), lambda li: len(li["items"]) == 3)
    await client.create(IMAGELISTPULLJOBS, list_job())

    async def children():
        return sorted((await client.list(IMAGEPULLJOBS, NS))["items"], key=lambda j: j["spec"]["image"])

    jobs = await kruise_cluster.until(children, lambda items: len(items) == 2)
    assert [j["spec"]["image"] for j in jobs] == ["nginx:1.26", "redis:7"]
    for job in jobs:
        assert job["metadata"]["name"].startswith("warm-")
        assert job["metadata"]["ownerReferences"][0]["kind"] == "ImageListPullJob"
        assert job["spec"]["selector"] == {"names": ["node-1", "node-2"]}

    async def tagged():
        images = {n["metadata"]["name"]: n for n in (await client.list(NODEIMAGES))["items"]}
        return {name: sorted((n.get("spec") or {}).get("images") or {}) for name, n in images.items()}

    await kruise_cluster.until(tagged, lambda t: t["node-1"] == t["node-2"] == ["nginx", "redis"])

    async def status():
        return (await client.get(IMAGELISTPULLJOBS, "warm", NS)).get("status") or {}

    running = await kruise_cluster.until(status, lambda s: s.get("active") == 2)
    assert (running["desired"], running["completed"], running["succeeded"]) == (2, 0, 0)

    await report_all(client, "node-1")
    await report_all(client, "node-2")
    done = await kruise_cluster.until(status, lambda s: s.get("completionTime"))
    assert (done["desired"], done["active"], done["completed"], done["succeeded"]) == (2, 0, 2, 2)
    assert "failedImageStatuses" not in done

    async def list_jobs():
        return (await client.list(IMAGELISTPULLJOBS, NS))["items"]

    assert await kruise_cluster.until(list_jobs, lambda items: not items) == []  # TTL ran out


async def test_failed_nodes_are_reported_per_image_and_removed_images_lose_their_job(kruise_cluster):
    client = kruise_cluster.client
    await kruise_cluster.until(lambda: client.list(NODEIMAGES), lambda li: len(li["items"]) == 3)
    await client.create(IMAGELISTPULLJOBS, list_job("mixed", selector={"names": ["node-3"]}))

    async def children():
        return {j["spec"]["image"]: j for j in (await client.list(IMAGEPULLJOBS, NS))["items"]}

    jobs = await kruise_cluster.until(children, lambda c: len(c) == 2)

    async def node3():
        return sorted(((await client.get(NODEIMAGES, "node-3")).get("spec") or {}).get("images") or {})

    await kruise_cluster.until(node3, lambda names: names == ["nginx", "redis"])
    await report_all(client, "node-3", "Failed")

    async def status():
        return (await client.get(IMAGELISTPULLJOBS, "mixed", NS)).get("status") or {}

    failed = await kruise_cluster.until(status, lambda s: len(s.get("failedImageStatuses") or []) == 2)
    by_image = {f["name"]: f for f in failed["failedImageStatuses"]}
    assert by_image["redis:7"]["imagePullJob"] == jobs["redis:7"]["metadata"]["name"]

    second = list_job("shrink", selector={"names": ["node-1"]}, completionPolicy={"type": "Never"})
    await client.create(IMAGELISTPULLJOBS, second)

    async def owned():
        items = (await client.list(IMAGEPULLJOBS, NS))["items"]
        return sorted(
            j["spec"]["image"] for j in items if j["metadata"]["ownerReferences"][0]["name"] == "shrink"
        )

    await kruise_cluster.until(owned, lambda images: images == ["nginx:1.26", "redis:7"])
    await client.patch(IMAGELISTPULLJOBS, "shrink", {"spec": {"images": ["nginx:1.26"]}}, NS)
    await kruise_cluster.until(owned, lambda images: images == ["nginx:1.26"])
    shrunk = await kruise_cluster.until(
        lambda: client.get(IMAGELISTPULLJOBS, "shrink", NS),
        lambda j: (j.get("status") or {}).get("desired") == 1,
    )
    assert "completionTime" not in shrunk["status"]
