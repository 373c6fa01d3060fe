"""The NodeImage controller: one NodeImage per Ready node, labels mirrored, deleted with the node."""

from __future__ import annotations

import pytest

from kruise.kube.resources import NODEIMAGES, NODES
from kruise.manager.controllers.nodeimage import SETUP


@pytest.fixture
def controller_setups():
    return [SETUP]


async def test_node_images_follow_nodes(kruise_cluster):
    client = kruise_cluster.client

    async def names():
        return sorted(n["metadata"]["name"] for n in (await client.list(NODEIMAGES))["items"])

    assert await kruise_cluster.until(names, lambda n: n == ["node-1", "node-2", "node-3"])
    image = await client.get(NODEIMAGES, "node-1")
    node = await client.get(NODES, "node-1")
    assert image["metadata"]["labels"] == node["metadata"]["labels"]

    await client.patch(NODES, "node-1", {"metadata": {"labels": {"pool": "gpu"}}})
    await kruise_cluster.until(
        lambda: client.get(NODEIMAGES, "node-1"), lambda i: i["metadata"]["labels"].get("pool") == "gpu"
    )

    fake = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodeImage", "spec": {},
            "metadata": {"name": "virtual", "labels": {"apps.kruise.io/fake-nodeimage": "true"}}}  # fmt: skip
    await client.create(NODEIMAGES, fake)
    await kruise_cluster.simulator.stop()  # stop heartbeats before the node goes away
    await client.delete(NODES, "node-3")
    assert await kruise_cluster.until(names, lambda n: n == ["node-1", "node-2", "virtual"])
