"""One simulated node for kruise-daemon integration tests, and the objects those tests put on it.

Each daemon test drives one daemon component (recreator, puller, prober, or the whole process)
against the emulator and the fake CRI of a single simulated node; the node's setup and teardown, the
pods they recreate and the NodeImage tags they pull are the same in all of them, so they live here.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from kruise.kube.client import Client
from kruise.kube.resources import NODEIMAGES, PODS
from kruise.sandbox.cluster import apply_crds, load_crds
from kruise.sandbox.simulator import Simulator
from tests.kit.polling import until_fetched

# No kruise-webhook runs here, so nothing answers conversion: the 2.0 API set's CRDs, whose storage version of
# every kind is the one kruise-py's components talk (on the 1.9 set seven kinds are stored at v1beta1 and
# their v1alpha1 reads go through kruise-webhook's /convert, as e2e covers).
CRD_DIR = Path(__file__).resolve().parents[2] / "crds-2.0"
NODE = "node-1"
NS = "default"


@asynccontextmanager
async def simulated_node(
    emulator, cri_prefix: str, crd_dir: Path = CRD_DIR
) -> AsyncIterator[tuple[Simulator, Client]]:
    """Kruise CRDs applied, one simulated node (`NODE`) whose CRI socket lives in a fresh /tmp folder
    named `cri_prefix…`, and a client; all closed and removed on exit. Patch `CriServicer` before
    entering: the CRI server starts serving here. `crd_dir`: the 1.9 set's `crds/` for a test of the wire."""
    await apply_crds(emulator.kubeconfig, load_crds(crd_dir), timeout=30)
    cri_dir = Path(tempfile.mkdtemp(prefix=cri_prefix, dir="/tmp"))
    simulator = Simulator(emulator.kubeconfig, nodes=1, speed=50, cri_socket_dir=cri_dir)
    await simulator.start()
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=500, burst=500)
    try:
        yield simulator, client
    finally:
        await client.close()
        await simulator.stop()
        shutil.rmtree(cri_dir, ignore_errors=True)


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


async def running_pod(client: Client, name: str, images: dict[str, str]) -> dict[str, Any]:
    """A pod on `NODE` with one container per `images` entry (name -> image), once it is Ready."""
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "nodeName": NODE,
            "terminationGracePeriodSeconds": 2,
            "containers": [
                {"name": c, "image": image, "command": ["sleep", "999d"]} for c, image in images.items()
            ],
        },
    }
    await client.create(PODS, body)
    return await until_fetched(lambda: client.get(PODS, name, NS), ready, 30.0)


def crr_request(pod: dict[str, Any], name: str, containers: list[str], **strategy: Any) -> dict[str, Any]:
    """A ContainerRecreateRequest for `containers` of `pod`, as kruise-webhook fills it in on CREATE
    (labels, statusContext): the webhook is not running in these tests."""
    statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {
                "crr.apps.kruise.io/node-name": NODE,
                "crr.apps.kruise.io/pod-uid": pod["metadata"]["uid"],
                "crr.apps.kruise.io/active": "true",
            },
        },
        "spec": {
            "podName": pod["metadata"]["name"],
            "containers": [
                {"name": c, "statusContext": {"containerID": statuses[c]["containerID"], "restartCount": 0}}
                for c in containers
            ],
            "strategy": {"failurePolicy": "Fail", **strategy},
        },
    }


def image_tag(name: str, **extra: Any) -> dict[str, Any]:
    """A NodeImage `spec.images[].tags[]` entry at version 0."""
    return {"tag": name, "createdAt": "2026-01-01T00:00:00Z", "version": 0, **extra}


def nodeimage_status(client: Client) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A fetch for `until_fetched`: `NODE`'s NodeImage status (empty until the puller writes one)."""

    async def status() -> dict[str, Any]:
        return (await client.get(NODEIMAGES, NODE)).get("status") or {}

    return status


def node_image(images: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """`NODE`'s NodeImage asking for `images` (image name -> its `image_tag`s)."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": NODE},
        "spec": {"images": {image: {"tags": tags} for image, tags in images.items()}},
    }
