"""Container launch priority on real nodes (`kruise sandbox up --runtime containerd`).

kruise-webhook gives each container of a pod annotated `apps.kruise.io/container-launch-priority:
Ordered` (or with `KRUISE_CONTAINER_PRIORITY` env) an env var read from ConfigMap `<pod>-barrier`, key
`p_<priority>`; kruise-manager adds the next key once the containers before are ready, and until then
the kubelet holds the container in `CreateContainerConfigError` - nothing is created in containerd.
Each container's readiness probe only passes a second after it started (an exec probe, real seconds
on a real node), so consecutive starts are at least a second apart and the order shows in the real
containers' `startedAt` (whole seconds, as the kubelet reports them).

`ordered`: the first container is ready only once the test creates /tmp/ready in it, so the hold of
the second is observed while it lasts; `by-env`: priorities 1, 3, 2 start in the order 3, 2, 1.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from harness import Cluster, until

from tests.kit.pods import pod

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]

PRIORITY = "apps.kruise.io/container-launch-priority"


def container(name: str, priority: int | None = None) -> dict:
    spec: dict = {
        "name": name,
        "image": "busybox",
        "command": ["sh", "-c", "exec sleep 3600"],
        "readinessProbe": {
            "exec": {"command": ["test", "-f", "/tmp/ready"]},
            "initialDelaySeconds": 1,
            "periodSeconds": 1,
        },
    }
    if priority is not None:
        spec["env"] = [{"name": "KRUISE_CONTAINER_PRIORITY", "value": str(priority)}]
        spec["command"] = ["sh", "-c", "touch /tmp/ready; exec sleep 3600"]
    return spec


def pod_manifest(name: str, containers: list[dict], annotations: dict[str, str]) -> str:
    """The pod as JSON for `kubectl apply -f -`, quick to stop."""
    return json.dumps(pod(name, annotations=annotations, grace=1, containers=containers, typed=True))


async def get_pod(cluster: Cluster, name: str) -> dict:
    _, out = await cluster.kubectl("get", "pod", name, "-o", "json")
    return json.loads(out)


def state(pod: dict, name: str) -> dict:
    status = next((s for s in pod["status"].get("containerStatuses") or [] if s["name"] == name), {})
    return status.get("state") or {}


def running(name: str):
    return lambda pod: "running" in state(pod, name)


def started_at(pod: dict, name: str) -> datetime:
    return datetime.fromisoformat(state(pod, name)["running"]["startedAt"].replace("Z", "+00:00"))


async def barrier_keys(cluster: Cluster, pod_name: str) -> list[str]:
    _, out = await cluster.kubectl("get", "configmap", f"{pod_name}-barrier", "-o", "json")
    return sorted(json.loads(out).get("data") or {})


def held(pod: dict, name: str, key: str) -> bool:
    waiting = state(pod, name).get("waiting") or {}
    return waiting.get("reason") == "CreateContainerConfigError" and key in waiting.get("message", "")


async def test_ordered_launch_holds_each_container_until_the_previous_is_ready(real_cluster: Cluster) -> None:
    cluster = real_cluster
    try:
        body = pod_manifest(
            "ordered", [container("first"), container("second"), container("third")], {PRIORITY: "Ordered"}
        )
        await cluster.kubectl("apply", "-f", "-", stdin=body)
        now = await until(lambda: get_pod(cluster, "ordered"), running("first"), "first running", timeout=120)
        injected = {c["name"]: c.get("env") or [] for c in now["spec"]["containers"]}
        assert [e["name"] for e in injected["second"]] == ["KRUISE_CONTAINER_BARRIER"]
        assert injected["second"][0]["valueFrom"]["configMapKeyRef"] == {
            "name": "ordered-barrier",
            "key": "p_-1",
        }

        # first runs but is not ready: second and third stay held by the kubelet
        now = await until(
            lambda: get_pod(cluster, "ordered"),
            lambda p: held(p, "second", "p_-1") and held(p, "third", "p_-2"),
            "second and third held in CreateContainerConfigError",
        )
        assert await barrier_keys(cluster, "ordered") == ["p_0"]
        assert "containerID" not in next(
            s for s in now["status"]["containerStatuses"] if s["name"] == "second"
        )

        await cluster.kubectl("exec", "ordered", "-c", "first", "--", "touch", "/tmp/ready")
        now = await until(
            lambda: get_pod(cluster, "ordered"), running("second"), "second running", timeout=60
        )
        assert held(now, "third", "p_-2"), state(now, "third")
        assert await barrier_keys(cluster, "ordered") == ["p_-1", "p_0"]

        await cluster.kubectl("exec", "ordered", "-c", "second", "--", "touch", "/tmp/ready")
        now = await until(lambda: get_pod(cluster, "ordered"), running("third"), "third running", timeout=60)
        assert started_at(now, "first") < started_at(now, "second") < started_at(now, "third")
        for status in now["status"]["containerStatuses"]:
            assert status["containerID"].startswith("containerd://") and status["restartCount"] == 0
    finally:
        await cluster.kubectl(
            "delete", "pod", "ordered", "--ignore-not-found", "--wait=true", "--timeout=120s"
        )


async def test_priority_env_orders_the_real_starts(real_cluster: Cluster) -> None:
    cluster = real_cluster
    try:
        containers = [container("low", 1), container("high", 3), container("middle", 2)]
        await cluster.kubectl("apply", "-f", "-", stdin=pod_manifest("by-env", containers, {}))
        await cluster.kubectl("wait", "pod/by-env", "--for=condition=Ready", "--timeout=120s")
        now = await get_pod(cluster, "by-env")
        assert started_at(now, "high") < started_at(now, "middle") < started_at(now, "low")
        assert await barrier_keys(cluster, "by-env") == ["p_1", "p_2", "p_3"]
    finally:
        await cluster.kubectl(
            "delete", "pod", "by-env", "--ignore-not-found", "--wait=true", "--timeout=120s"
        )
