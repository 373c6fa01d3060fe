"""Seed 002's CloneSet in-place update on real containerd nodes, as a flow two e2e modules run: one
with kruise-py as host processes, one with kruise-py as containers of its own image. Kept here so
both prove the same thing: after the image change each pod keeps its UID and bridge IP while its
container is really replaced (new container id, imageID the new image's digest, restartCount 1),
and `kubectl logs` (`--previous`) shows what the new (old) container printed."""

from __future__ import annotations

import ipaddress
import json

import httpx
from harness import SEED_002_CLONESET, Cluster, until

from kruise.sandbox.realnode.network import DEFAULT_POD_SUBNET

POD_SUBNET = ipaddress.IPv4Network(DEFAULT_POD_SUBNET)
DIGEST_REF = "docker.io/library/nginx@sha256:"
IN_PLACE_PATCH = {
    "spec": {
        "updateStrategy": {"type": "InPlaceIfPossible"},
        "template": {
            "metadata": {"labels": {"app": "cs"}},
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx:1.7.9",
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"containerPort": 80}],
                    }
                ]
            },
        },
    }
}


async def pods(cluster: Cluster) -> dict[str, dict]:
    _, out = await cluster.kubectl("get", "pods", "-l", "app=cs", "-o", "json")
    items = json.loads(out)["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


async def wait_updated(cluster: Cluster, replicas: int) -> None:
    _, generation = await cluster.kubectl(
        "get", "cloneset", "cs-demo", "-o", "jsonpath={.metadata.generation}"
    )
    for path, value in (
        (".status.observedGeneration", generation),
        (".status.updatedReadyReplicas", str(replicas)),
        (".status.readyReplicas", str(replicas)),
    ):
        await cluster.kubectl(
            "wait", "cloneset/cs-demo", f"--for=jsonpath={{{path}}}={value}", "--timeout=180s"
        )


def only_container(pod: dict) -> dict:
    (status,) = pod["status"]["containerStatuses"]
    return status


async def logs(cluster: Cluster, pod: str, *extra: str) -> str:
    async def read() -> str:
        return (await cluster.kubectl("logs", pod, *extra, check=False))[1]

    return await until(read, lambda text: "stand-in for" in text, f"output of {pod} {extra}", timeout=30)


async def served_page(address: str) -> str:
    async with httpx.AsyncClient(timeout=5.0, trust_env=False) as http:
        page = await http.get(f"http://{address}/")
    assert page.status_code == 200, page
    return page.text


async def create_seed_002_cloneset(cluster: Cluster) -> dict[str, dict]:
    """Apply the seed's cs-demo; its three pods on the bridge, serving from nginx:alpine's stand-in."""
    await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_CLONESET)
    await wait_updated(cluster, 3)
    _, wide = await cluster.kubectl("get", "pods", "-l", "app=cs", "-o", "wide")
    before = await pods(cluster)
    assert len(before) == 3
    for name, pod in before.items():
        ip = ipaddress.IPv4Address(pod["status"]["podIP"])
        assert ip in POD_SUBNET, f"{name}: pod IP {ip} is not on the sandbox bridge {POD_SUBNET}"
        assert str(ip) in wide
        assert only_container(pod)["imageID"].startswith(DIGEST_REF), pod["status"]
        assert "stand-in for nginx:alpine" in await logs(cluster, name)
        # a real server in the pod's own network namespace
        assert "nginx:alpine" in await served_page(pod["status"]["podIP"])
    return before


async def update_in_place(cluster: Cluster, before: dict[str, dict]) -> dict[str, dict]:
    """The seed's image change under InPlaceIfPossible: the same pods, each container replaced."""
    await cluster.kubectl(
        "patch",
        "clonesets.v1alpha1.apps.kruise.io",
        "cs-demo",
        "--type=merge",
        "-p",
        json.dumps(IN_PLACE_PATCH),
    )
    await wait_updated(cluster, 3)
    after = await pods(cluster)
    assert after.keys() == before.keys(), "in-place: the same pods, none recreated"
    for name, pod in after.items():
        old, new = only_container(before[name]), only_container(pod)
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
        assert pod["status"]["podIP"] == before[name]["status"]["podIP"]
        assert new["restartCount"] == 1
        assert new["image"].endswith("nginx:1.7.9")
        assert new["containerID"] != old["containerID"]
        assert new["imageID"].startswith(DIGEST_REF) and new["imageID"] != old["imageID"]
        assert old["containerID"] == new["lastState"]["terminated"]["containerID"]
        assert "stand-in for nginx:1.7.9" in await logs(cluster, name)
        assert "stand-in for nginx:alpine" in await logs(cluster, name, "--previous")
        assert "nginx:1.7.9" in await served_page(pod["status"]["podIP"])
    return after


async def delete_cloneset(cluster: Cluster) -> None:
    await cluster.kubectl("delete", "cloneset", "cs-demo", "--wait=true", "--timeout=120s")
    await until(lambda: pods(cluster), lambda left: not left, "cs-demo's pods gone", timeout=120)
