"""Node registration, heartbeats and the node's CRI runtime as seen through the apiserver."""

from __future__ import annotations

from simulator_testkit import Cluster, condition, container, is_ready, pod_manifest

from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.simulator.client import resource_path


async def test_nodes_are_registered_ready_across_zones(cluster: Cluster):
    nodes = (await cluster.client.list(resource_path("v1", "nodes")))["items"]
    ours = sorted(
        (n for n in nodes if n["metadata"]["name"].startswith("node-")), key=lambda n: n["metadata"]["name"]
    )
    assert [n["metadata"]["name"] for n in ours] == ["node-1", "node-2", "node-3"]
    assert {n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in ours} == {
        "zone-a",
        "zone-b",
        "zone-c",
    }
    for node in ours:
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == node["metadata"]["name"]
        assert labels["kubernetes.io/os"] == "linux"
        assert condition(node, "Ready")["status"] == "True"
        assert node["status"]["allocatable"]["pods"] == "110"
        assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
        assert node["status"]["addresses"][0]["type"] == "InternalIP"
    lease = await cluster.client.get(
        resource_path("coordination.k8s.io/v1", "leases", "kube-node-lease", "node-1")
    )
    assert lease["spec"]["holderIdentity"] == "node-1"


async def test_cri_stop_container_makes_the_kubelet_restart_it(cluster: Cluster):
    await cluster.create(pod_manifest("victim", nodeName="node-2"))
    pod = await cluster.wait_for("pods", "victim", is_ready)
    first = container(pod, "main")
    container_id = first["containerID"].removeprefix("containerd://")
    async with CriClient(cluster.cri_dir / "node-2.sock") as cri:
        await cri.StopContainer(messages.StopContainerRequest(container_id=container_id, timeout=0))
    pod = await cluster.wait_for(
        "pods", "victim", lambda p: container(p, "main")["restartCount"] == 1 and is_ready(p)
    )
    again = container(pod, "main")
    assert again["containerID"] != first["containerID"]
    assert again["lastState"]["terminated"]["containerID"] == first["containerID"]
    assert (
        pod["metadata"]["uid"]
        == (await cluster.client.get(resource_path("v1", "pods", "default", "victim")))["metadata"]["uid"]
    )


async def test_cri_pull_image_shows_in_node_status_images(cluster: Cluster):
    async with CriClient(cluster.cri_dir / "node-3.sock") as cri:
        await cri.PullImage(messages.PullImageRequest(image=messages.ImageSpec(image="busybox:1.36")))

    def has_busybox(node):
        names = [name for image in node["status"].get("images") or [] for name in image["names"]]
        return "docker.io/library/busybox:1.36" in names

    node = await cluster.wait_for("nodes", "node-3", has_busybox, namespace=None)
    assert all(image["sizeBytes"] > 0 for image in node["status"]["images"])


async def test_kubelet_pulls_show_in_node_status_images(cluster: Cluster):
    await cluster.create(pod_manifest("puller", {"name": "main", "image": "redis:7"}, nodeName="node-1"))
    await cluster.wait_for("pods", "puller", is_ready)

    def has_redis(node):
        return any(
            "docker.io/library/redis:7" in image["names"] for image in node["status"].get("images") or []
        )

    await cluster.wait_for("nodes", "node-1", has_redis, namespace=None)
