"""The simulated kubelet runs ephemeral containers: started once, Running, then Terminated after
their run time, never restarted, reported in status.ephemeralContainerStatuses."""

from __future__ import annotations

from simulator_testkit import Cluster, is_ready, pod_manifest

from kruise.sandbox.simulator.client import STRATEGIC_PATCH, resource_path
from kruise.sandbox.simulator.timing import EXIT_CODE_ANNOTATION


def ephemeral(pod, name):
    statuses = (pod.get("status") or {}).get("ephemeralContainerStatuses") or []
    return next((s for s in statuses if s["name"] == name), None)


def in_state(name, state):
    return lambda pod: (ephemeral(pod, name) or {}).get("state", {}).get(state) is not None


async def add(cluster: Cluster, pod: str, *containers):
    await cluster.client.patch(
        resource_path("v1", "pods", "default", pod, "ephemeralcontainers"),
        {"spec": {"ephemeralContainers": list(containers)}},
        STRATEGIC_PATCH,
    )


async def test_ephemeral_container_runs_then_completes(cluster: Cluster):
    await cluster.create(pod_manifest("web"))
    before = await cluster.wait_for("pods", "web", is_ready)
    assert "ephemeralContainerStatuses" not in before["status"]
    await add(cluster, "web", {"name": "dbg", "image": "busybox", "command": ["sleep", "60"]})

    running = await cluster.wait_for("pods", "web", in_state("dbg", "running"))
    status = ephemeral(running, "dbg")
    assert status["ready"] is False and status["restartCount"] == 0
    assert status["containerID"].startswith("containerd://")
    assert status["image"] == "docker.io/library/busybox:latest"
    assert "started" not in status
    assert is_ready(running) and running["status"]["phase"] == "Running"

    done = await cluster.wait_for("pods", "web", in_state("dbg", "terminated"))
    terminated = ephemeral(done, "dbg")["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
    assert terminated["finishedAt"] and terminated["startedAt"]
    # the pod itself is untouched by its debug container finishing
    assert is_ready(done) and done["status"]["phase"] == "Running"
    await cluster.wait_event("web", "Started")
    paths = {
        e["involvedObject"].get("fieldPath")
        for e in await cluster.events_for("web")
        if e["reason"] == "Started"
    }
    assert "spec.ephemeralContainers{dbg}" in paths


async def test_failed_ephemeral_container_is_not_restarted(cluster: Cluster):
    await cluster.create(pod_manifest("fail", annotations={EXIT_CODE_ANNOTATION: "3"}))
    await cluster.wait_for("pods", "fail", is_ready)
    await add(cluster, "fail", {"name": "first", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 5"]})
    failed = await cluster.wait_for("pods", "fail", in_state("first", "terminated"))
    first = ephemeral(failed, "first")
    assert first["state"]["terminated"]["exitCode"] == 3 and first["state"]["terminated"]["reason"] == "Error"
    # a second one runs to its end later; the first is still the same, never restarted
    await add(cluster, "fail", {"name": "second", "image": "busybox:1.36", "command": ["sleep", "5"]})
    later = await cluster.wait_for("pods", "fail", in_state("second", "terminated"))
    again = ephemeral(later, "first")
    assert again["containerID"] == first["containerID"] and again["restartCount"] == 0
    assert again["state"] == first["state"]
    assert [s["name"] for s in later["status"]["ephemeralContainerStatuses"]] == ["first", "second"]
    assert is_ready(later)
