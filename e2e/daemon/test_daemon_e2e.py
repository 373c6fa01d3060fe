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


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "crr-target", "namespace": "default"},
    "spec": {
        "terminationGracePeriodSeconds": 2,
        "containers": [
            {"name": "app", "image": "nginx:alpine"},
            {"name": "side", "image": "busybox:1.36", "command": ["sleep", "999d"]},
        ],
    },
}
CRR = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ContainerRecreateRequest",
    "metadata": {"name": "recreate-app", "namespace": "default"},
    "spec": {"podName": "crr-target", "containers": [{"name": "app"}], "strategy": {"failurePolicy": "Fail"}},
}


async def test_container_recreate_request_restarts_only_that_container(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(POD))
    await cluster.kubectl("wait", "pod/crr-target", "--for=condition=Ready", "--timeout=60s")
    _, out = await cluster.kubectl("get", "pod", "crr-target", "-o", "json")
    before = json.loads(out)
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(CRR))
    await cluster.kubectl(
        "wait",
        "containerrecreaterequest/recreate-app",
        "--for=jsonpath={.status.phase}=Completed",
        "--timeout=60s",
    )
    _, out = await cluster.kubectl("get", "crr", "recreate-app", "-o", "json")
    crr = json.loads(out)
    # filled in by kruise-webhook, carried out by the node's kruise-daemon
    assert crr["metadata"]["labels"]["crr.apps.kruise.io/node-name"] == before["spec"]["nodeName"]
    assert crr["spec"]["containers"][0]["statusContext"]["restartCount"] == 0
    assert crr["status"]["containerRecreateStates"] == [
        {"name": "app", "phase": "Succeeded", "isKilled": True}
    ]
    _, out = await cluster.kubectl("get", "pod", "crr-target", "-o", "json")
    after = json.loads(out)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    restarts = {s["name"]: s["restartCount"] for s in after["status"]["containerStatuses"]}
    assert restarts == {"app": 1, "side": 0}
    _, table = await cluster.kubectl("get", "crr", "recreate-app")
    assert "Completed" in table and "crr-target" in table
