"""ImageListPullJob through `kruise sandbox up --feature-gates ImagePullJobGate=true` (kruise-manager
and a kruise-daemon per node as real processes) and the real kubectl: two images pulled on every
node, one ImagePullJob per image, each node's NodeImage status showing both pulled, and
`kubectl get imagelistpulljob` counting both jobs completed and succeeded."""

from __future__ import annotations

import json

from harness import Cluster, until

IMAGES = ("nginx:1.25", "redis:7")
LIST_JOB = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ImageListPullJob",
    "metadata": {"name": "warm-up", "namespace": "default"},
    "spec": {
        "images": list(IMAGES),
        "parallelism": 3,
        "completionPolicy": {"type": "Always"},
        "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 60},
    },
}


async def get_json(cluster: Cluster, *args: str) -> dict:
    _, out = await cluster.kubectl("get", *args, "-o", "json")
    return json.loads(out)


def pulled(node_image: dict) -> dict[str, str]:
    """image:tag → phase, from one NodeImage's status."""
    statuses = (node_image.get("status") or {}).get("imageStatuses") or {}
    return {
        f"{name}:{tag['tag']}": tag.get("phase", "")
        for name, image in statuses.items()
        for tag in image.get("tags") or []
    }


async def test_two_images_pulled_on_every_node(kruise_sandbox_gated: Cluster):
    cluster = kruise_sandbox_gated
    nodes = sorted(n["metadata"]["name"] for n in (await get_json(cluster, "nodes"))["items"])
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(LIST_JOB))

    for field, value in (("desired", 2), ("completed", 2), ("succeeded", 2)):
        await cluster.kubectl(
            "wait", "imagelistpulljob/warm-up", f"--for=jsonpath={{.status.{field}}}={value}", "--timeout=90s"
        )
    _, table = await cluster.kubectl("get", "imagelistpulljob", "warm-up")
    header, row = table.strip().splitlines()
    assert header.split() == ["NAME", "TOTAL", "SUCCEEDED", "COMPLETED", "AGE"]
    assert row.split()[:4] == ["warm-up", "2", "2", "2"]
    status = (await get_json(cluster, "imagelistpulljob", "warm-up"))["status"]
    assert status.get("completionTime")
    assert not status.get("failedImageStatuses")

    children = (await get_json(cluster, "imagepulljobs", "-n", "default"))["items"]
    assert sorted(j["spec"]["image"] for j in children) == sorted(IMAGES)
    for job in children:
        assert job["metadata"]["ownerReferences"][0]["name"] == "warm-up"
        assert job["status"]["succeeded"] == len(nodes)

    async def node_images() -> dict[str, dict[str, str]]:
        items = (await get_json(cluster, "nodeimages"))["items"]
        return {n["metadata"]["name"]: pulled(n) for n in items}

    def both_pulled(by_node: dict[str, dict[str, str]]) -> bool:
        return all(all(by_node.get(n, {}).get(i) == "Succeeded" for i in IMAGES) for n in nodes)

    seen = await until(
        node_images,
        both_pulled,
        "both images Succeeded in every NodeImage status",
    )
    assert sorted(seen) == nodes
