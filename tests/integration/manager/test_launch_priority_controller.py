"""Container launch priority against the simulator: containers start in barrier order."""

from __future__ import annotations

import copy
import itertools

import pytest

from kruise.control.launchpriority import barriers
from kruise.kube.resources import CONFIGMAPS, PODS
from kruise.manager.controllers.containerlaunchpriority import SETUP

NS = "default"


@pytest.fixture
def controller_setups():
    return [SETUP]


def ordered_pod(name: str) -> dict:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"},
        },
        "spec": {
            "containers": [
                {"name": "first", "image": "nginx:alpine"},
                {"name": "second", "image": "busybox:1.36", "command": ["sleep", "999d"]},
                {"name": "third", "image": "redis:7"},
            ]
        },
    }
    # What kruise-webhook does on CREATE (the webhook is not running in this test).
    assert barriers.inject_barriers(pod)
    return pod


def running(pod: dict) -> dict[str, bool]:
    return {
        s["name"]: "running" in (s.get("state") or {})
        for s in pod.get("status", {}).get("containerStatuses", [])
    }


def ready(pod: dict) -> dict[str, bool]:
    return {s["name"]: bool(s.get("ready")) for s in pod.get("status", {}).get("containerStatuses", [])}


async def test_containers_start_in_priority_order(kruise_cluster):
    client = kruise_cluster.client
    await client.create(PODS, ordered_pod("ordered"))
    samples: list[tuple[dict[str, bool], dict[str, bool]]] = []

    async def fetch():
        pod = await client.get(PODS, "ordered", NS)
        samples.append((running(pod), ready(pod)))
        return pod

    done = await kruise_cluster.until(
        fetch,
        lambda p: (
            (p["metadata"].get("annotations") or {}).get("apps.kruise.io/container-launch-priority-completed")
            == "true"
            and all(ready(p).values())
            and len(ready(p)) == 3
        ),
    )
    order = ["first", "second", "third"]
    for is_running, is_ready in samples:
        for earlier, later in itertools.pairwise(order):
            if is_running.get(later):
                assert is_ready.get(earlier), f"{later} ran before {earlier} was ready: {samples}"
    barrier = await client.get(CONFIGMAPS, "ordered-barrier", NS)
    assert set(barrier["data"]) == {"p_0", "p_-1", "p_-2"}
    assert barrier["metadata"]["ownerReferences"][0]["name"] == "ordered"
    assert done["status"]["containerStatuses"]


async def test_pod_without_priorities_is_left_alone(kruise_cluster):
    client = kruise_cluster.client
    pod = copy.deepcopy(ordered_pod("plain"))
    pod["metadata"]["annotations"] = {}
    for container in pod["spec"]["containers"]:
        container.pop("env", None)
    await client.create(PODS, pod)
    await kruise_cluster.until(
        lambda: client.get(PODS, "plain", NS), lambda p: all(ready(p).values()) and ready(p)
    )
    listing = await client.list(CONFIGMAPS, NS)
    assert "plain-barrier" not in {c["metadata"]["name"] for c in listing["items"]}
