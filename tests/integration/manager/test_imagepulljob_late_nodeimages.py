"""ImagePullJobs applied before any NodeImage exists (kruise-manager creates a node's NodeImage
`--nodeimage-creation-delay` after the node turns Ready), then NodeImages appearing.

As upstream's controller: the job's targets are the NodeImages that exist when it reconciles, so an
`Always` job with none completes at once with `desired: 0` and stays completed (upstream wakes only
active jobs on a NodeImage event); a `Never` job stays running with `desired: 0` and tags each NodeImage
as it is created. The NodeImages are created here by hand, as the nodeimage controller would, so their
arrival is the test's to order."""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES, NODES
from kruise.manager.controllers import imagepulljob

NS = "default"


@pytest.fixture
def controller_setups():
    return [imagepulljob.SETUP]


@pytest.fixture
def feature_gates():
    return FeatureGates({"ImagePullJobGate": True}, env={})


def job(name, completion):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"image": "nginx:1.26", "parallelism": 3, "completionPolicy": {"type": completion}},
    }


def owners(node_image):
    """Names of the jobs owning a tag in the NodeImage's spec."""
    images = (node_image.get("spec") or {}).get("images") or {}
    return {
        ref["name"]
        for image in images.values()
        for tag in image.get("tags") or []
        for ref in tag.get("ownerReferences") or []
    }


async def test_jobs_applied_before_the_node_images(kruise_cluster):
    client = kruise_cluster.client

    async def status(name):
        return (await client.get(IMAGEPULLJOBS, name, NS)).get("status") or {}

    assert (await client.list(NODEIMAGES))["items"] == []
    await client.create(IMAGEPULLJOBS, job("always", "Always"))
    await client.create(IMAGEPULLJOBS, job("never", "Never"))

    completed = await kruise_cluster.until(lambda: status("always"), lambda s: s.get("completionTime"))
    assert (completed["desired"], completed["message"]) == (0, "job has completed")
    running = await kruise_cluster.until(lambda: status("never"), lambda s: "desired" in s)
    assert (running["desired"], running["message"]) == (0, "job is running, no progress")
    assert "completionTime" not in running

    nodes = sorted(n["metadata"]["name"] for n in (await client.list(NODES))["items"])
    assert len(nodes) == 3
    for node in nodes:
        await client.create(NODEIMAGES, {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodeImage",
                                         "metadata": {"name": node}, "spec": {}})  # fmt: skip

    async def images():
        return (await client.list(NODEIMAGES))["items"]

    tagged = await kruise_cluster.until(images, lambda items: all("never" in owners(n) for n in items))
    assert sorted(n["metadata"]["name"] for n in tagged) == nodes
    assert all("always" not in owners(n) for n in tagged)
    counted = await kruise_cluster.until(lambda: status("never"), lambda s: s.get("desired") == 3)
    assert counted["active"] == 3 and "completionTime" not in counted
    assert await status("always") == completed  # completed jobs are not re-opened by new NodeImages
