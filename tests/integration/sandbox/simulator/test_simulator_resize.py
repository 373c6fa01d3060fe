"""The simulated kubelet actuates in-place pod resizes (pods/resize) as kubelet 1.33+ does."""

from __future__ import annotations

from typing import Any

import pytest
from simulator_testkit import Cluster, condition, container, is_ready, pod_manifest

from kruise.sandbox.cri import LinuxResources
from kruise.sandbox.simulator import Timing
from kruise.sandbox.simulator.client import STRATEGIC_PATCH, resource_path


@pytest.fixture
def simulator_options() -> dict[str, Any]:
    # half a real second of PodResizeInProgress at the test speed, so the window is observable
    timing = Timing(run_seconds=20.0, init_seconds=5.0, termination_seconds=5.0, resize_seconds=50.0)
    return {"nodes": 1, "timing": timing}


def _app(cpu: str, memory: str = "128Mi", cpu_limit: str = "2", **extra: Any) -> dict[str, Any]:
    resources = {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu_limit, "memory": "1Gi"}}
    return {"name": "app", "image": "nginx:1.25", "resources": resources, **extra}


async def _resize(cluster: Cluster, name: str, cpu: str, memory: str = "128Mi") -> None:
    body = {
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    }
    await cluster.client.patch(resource_path("v1", "pods", "default", name, "resize"), body, STRATEGIC_PATCH)


def _settled_at(cpu: str, memory: str = "128Mi"):
    def check(pod: dict[str, Any]) -> bool:
        status = container(pod, "app")
        return (
            (status.get("resources") or {}).get("requests") == {"cpu": cpu, "memory": memory}
            and condition(pod, "PodResizeInProgress") is None
            and is_ready(pod)
        )

    return check


async def test_running_container_reports_resources_and_allocated_requests(cluster: Cluster):
    await cluster.create(
        pod_manifest(
            "sized", _app("250m"), {"name": "bare", "image": "busybox:1.36", "command": ["sleep", "999d"]}
        )
    )
    pod = await cluster.wait_for("pods", "sized", is_ready)
    app = container(pod, "app")
    assert app["resources"] == {
        "requests": {"cpu": "250m", "memory": "128Mi"},
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
    assert app["allocatedResources"] == {"cpu": "250m", "memory": "128Mi"}
    bare = container(pod, "bare")
    assert bare["resources"] == {} and "allocatedResources" not in bare


async def test_resize_without_restart_keeps_the_container_running(cluster: Cluster):
    await cluster.create(pod_manifest("grow", _app("250m")))
    before = await cluster.wait_for("pods", "grow", is_ready)
    await _resize(cluster, "grow", "500m")
    in_progress = await cluster.wait_for(
        "pods", "grow", lambda p: condition(p, "PodResizeInProgress") is not None
    )
    assert condition(in_progress, "PodResizeInProgress")["status"] == "True"
    assert container(in_progress, "app")["allocatedResources"]["cpu"] == "500m"
    assert container(in_progress, "app")["resources"]["requests"]["cpu"] == "250m"
    after = await cluster.wait_for("pods", "grow", _settled_at("500m"))
    old, new = container(before, "app"), container(after, "app")
    assert new["resources"] == {
        "requests": {"cpu": "500m", "memory": "128Mi"},
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
    assert new["restartCount"] == old["restartCount"] == 0
    assert new["state"]["running"]["startedAt"] == old["state"]["running"]["startedAt"]
    assert new["containerID"] == old["containerID"]
    assert condition(after, "PodResizePending") is None
    # the runtime's container took the new cgroup settings (CRI UpdateContainerResources)
    runtime = cluster.simulator.runtimes[after["spec"]["nodeName"]]
    record = runtime.container(new["containerID"].removeprefix("containerd://"))
    assert record.resources == LinuxResources(
        cpu_period=100_000, cpu_quota=200_000, cpu_shares=512, memory_limit_in_bytes=1 << 30
    )


async def test_resize_with_restart_container_policy_restarts_it(cluster: Cluster):
    policy = [
        {"resourceName": "cpu", "restartPolicy": "NotRequired"},
        {"resourceName": "memory", "restartPolicy": "RestartContainer"},
    ]
    await cluster.create(pod_manifest("mem", _app("250m", resizePolicy=policy)))
    before = await cluster.wait_for("pods", "mem", is_ready)
    await _resize(cluster, "mem", "250m", "256Mi")
    after = await cluster.wait_for(
        "pods", "mem", lambda p: _settled_at("250m", "256Mi")(p) and container(p, "app")["restartCount"] == 1
    )
    old, new = container(before, "app"), container(after, "app")
    assert new["containerID"] != old["containerID"]
    assert new["lastState"]["terminated"]["containerID"] == old["containerID"]
    assert new["allocatedResources"] == {"cpu": "250m", "memory": "256Mi"}
    killing = await cluster.wait_event("mem", "Killing")
    assert killing["message"] == "Container app resize requires restart"
    assert killing["involvedObject"]["fieldPath"] == "spec.containers{app}"


async def test_resize_beyond_the_node_is_infeasible_and_changes_nothing(cluster: Cluster):
    await cluster.create(pod_manifest("huge", _app("250m", cpu_limit="32")))
    before = await cluster.wait_for("pods", "huge", is_ready)
    await _resize(cluster, "huge", "16")
    pending = await cluster.wait_for("pods", "huge", lambda p: condition(p, "PodResizePending") is not None)
    reason = condition(pending, "PodResizePending")
    assert reason["status"] == "True" and reason["reason"] == "Infeasible"
    assert reason["message"] == ("Node didn't have enough capacity: cpu, requested: 16000, capacity: 8000")
    app = container(pending, "app")
    assert app["resources"] == container(before, "app")["resources"]
    assert app["allocatedResources"] == {"cpu": "250m", "memory": "128Mi"}
    assert app["restartCount"] == 0 and condition(pending, "PodResizeInProgress") is None
    # a feasible resize afterwards clears the pending condition and is applied
    await _resize(cluster, "huge", "300m")
    after = await cluster.wait_for("pods", "huge", _settled_at("300m"))
    assert condition(after, "PodResizePending") is None
