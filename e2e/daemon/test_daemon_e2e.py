"""kruise-daemon end to end: `kruise sandbox up` runs one real kruise-daemon process per simulated
node; a NodeImage applied with kubectl is pulled through the node's CRI (gRPC over a unix socket)."""

from __future__ import annotations

import json

from harness import Cluster

NODE_IMAGE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "NodeImage",
    "metadata": {"name": "node-2"},
    "spec": {
        "images": {
            "redis": {
                "tags": [
                    {
                        "tag": "7.2",
                        "createdAt": "2026-01-01T00:00:00Z",
                        "version": 0,
                        "pullPolicy": {"ttlSecondsAfterFinished": 300},
                    }
                ]
            }
        }
    },
}


async def test_node_image_is_pulled_by_the_nodes_daemon(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(NODE_IMAGE))
    await cluster.kubectl("wait", "nodeimage/node-2", "--for=jsonpath={.status.succeeded}=1", "--timeout=60s")
    _, out = await cluster.kubectl("get", "nodeimage", "node-2", "-o", "json")
    status = json.loads(out)["status"]
    (tag,) = status["imageStatuses"]["redis"]["tags"]
    assert tag["phase"] == "Succeeded" and tag["imageID"].startswith("sha256:")
    _, out = await cluster.kubectl("get", "node", "node-2", "-o", "json")
    names = [name for image in json.loads(out)["status"]["images"] for name in image["names"]]
    assert any(name.endswith("redis:7.2") for name in names)
    _, table = await cluster.kubectl("get", "nodeimage", "node-2")
    assert table.split("\n")[0].split()[:2] == ["NAME", "DESIRED"]
