"""Seed 002's CloneSet in-place update on real nodes: `kruise sandbox up --runtime containerd`.

Each node is a real containerd with runc and a CNI bridge; kruise-webhook, kruise-manager and a
kruise-daemon per node run as host processes. The seed's YAML runs unchanged (nginx:alpine ->
nginx:1.7.9 resolve to the sandbox's stand-in images): after the image change each pod keeps its
UID and its bridge IP while its container is really replaced - new container id, imageID the new
image's digest, restartCount 1 - and `kubectl logs` shows what the new container printed
(`--previous`: the old one). Needs root and the Debian packages; skipped with the apt-get line.
"""

from __future__ import annotations

import ipaddress
import json

import httpx
import pytest
from harness import SEED_002_CLONESET, Cluster, until

from kruise.sandbox.realnode.network import DEFAULT_POD_SUBNET

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]

POD_SUBNET = ipaddress.IPv4Network(DEFAULT_POD_SUBNET)
DIGEST_REF = "docker.io/library/nginx@sha256:"


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


async def test_seed_002_in_place_update_replaces_the_real_container(real_cluster: Cluster) -> None:
    cluster = real_cluster
    await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_CLONESET)
    await wait_updated(cluster, 3)

    _, wide = await cluster.kubectl("get", "pods", "-l", "app=cs", "-o", "wide")
    before = await pods(cluster)
    assert len(before) == 3
    for name, pod in before.items():
        ip = ipaddress.IPv4Address(pod["status"]["podIP"])
        assert ip in POD_SUBNET, f"{name}: pod IP {ip} is not on the sandbox bridge {POD_SUBNET}"
        assert str(ip) in wide
        status = only_container(pod)
        assert status["imageID"].startswith(DIGEST_REF), status
        assert "stand-in for nginx:alpine" in await logs(cluster, name)
    async with httpx.AsyncClient(timeout=5.0, trust_env=False) as http:
        for pod in before.values():  # a real server in the pod's own network namespace
            page = await http.get(f"http://{pod['status']['podIP']}/")
            assert page.status_code == 200 and "nginx:alpine" in page.text

    patch = {
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
    await cluster.kubectl(
        "patch", "clonesets.v1alpha1.apps.kruise.io", "cs-demo", "--type=merge", "-p", json.dumps(patch)
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
    async with httpx.AsyncClient(timeout=5.0, trust_env=False) as http:
        for pod in after.values():
            page = await http.get(f"http://{pod['status']['podIP']}/")
            assert page.status_code == 200 and "nginx:1.7.9" in page.text

    await cluster.kubectl("delete", "cloneset", "cs-demo", "--wait=true", "--timeout=120s")
    await until(lambda: pods(cluster), lambda left: not left, "cs-demo's pods gone", timeout=120)
