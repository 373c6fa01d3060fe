"""The simulated kubelet's own stops of a process container (failed liveness probe, image change,
resize with RestartContainer, pod deletion) send SIGTERM, then SIGKILL after the kubelet's grace
period, and record the process's real exit status, as kubelet + containerd do."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from simulator_testkit import WAIT, Cluster, container, is_ready, pod_manifest, trap_armed

from kruise.sandbox.cri import CAUSE_KUBELET, ContainerEventType
from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.simulator import ProcessImage
from kruise.sandbox.simulator.client import STRATEGIC_PATCH, resource_path

IMAGE = "sandbox-test/shell:1.0"
DIES_OF_SIGTERM = "touch armed; while :; do sleep 0.05; done"
IGNORES_SIGTERM = "trap '' TERM; touch armed; while :; do sleep 0.05; done"
"""Every script touches `armed` in its working directory (an emptyDir) once its SIGTERM trap is set, and the
liveness probe fails only from then on: a container reported running may not have run its first line yet,
and a SIGTERM before the trap kills the shell with 143 (seen on a loaded machine: 143 where 137 was due)."""
FAILING_LIVENESS = {
    "exec": {"command": ["sh", "-c", "test ! -f armed"]},
    "periodSeconds": 1,
    "failureThreshold": 1,
}


def trap_exit(code: int) -> str:
    return f"trap 'exit {code}' TERM; touch armed; while :; do sleep 0.05; done"


@pytest.fixture
def simulator_options() -> dict[str, Any]:
    return {"nodes": 1, "process_images": [ProcessImage("sandbox-test/shell:*", {"sh": ["/bin/sh"]}, "sh")]}


def shell_pod(name: str, script: str, *, image: str = IMAGE, pod: Any = None, **fields: Any) -> dict:
    """`script` runs in an emptyDir working directory, where it touches `armed`."""
    spec = {"terminationGracePeriodSeconds": 30, "volumes": [{"name": "work", "emptyDir": {}}], **(pod or {})}
    work = {"workingDir": "/work", "volumeMounts": [{"name": "work", "mountPath": "/work"}]}
    return pod_manifest(
        name, {"name": "app", "image": image, "command": ["sh", "-c", script], **work, **fields}, **spec
    )


async def armed(cluster: Cluster, name: str) -> None:
    pod = await cluster.wait_for("pods", name, is_ready)
    container_id = container(pod, "app")["containerID"].removeprefix("containerd://")
    async with CriClient(cluster.simulator.socket_path("node-1"), timeout=30) as cri:
        await trap_armed(cri, container_id)


def last_terminated(restarts: int = 1):
    def check(pod: dict[str, Any]) -> bool:
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return (
            bool(statuses)
            and container(pod, "app")["restartCount"] >= restarts
            and bool(container(pod, "app").get("lastState", {}).get("terminated"))
        )

    return check


async def terminated_after_restart(cluster: Cluster, name: str) -> dict[str, Any]:
    pod = await cluster.wait_for("pods", name, last_terminated())
    return container(pod, "app")["lastState"]["terminated"]


@pytest.mark.parametrize(
    ("script", "pod", "probe", "exit_code", "reason"),
    [
        (DIES_OF_SIGTERM, {}, {}, 143, "Error"),
        (trap_exit(0), {"restartPolicy": "OnFailure"}, {}, 0, "Completed"),  # restarted all the same
        # the probe's own grace period (1 s, raised to the kubelet's 2 s minimum) ends in SIGKILL
        (IGNORES_SIGTERM, {}, {"terminationGracePeriodSeconds": 1}, 137, "Error"),
    ],
)
async def test_a_liveness_probe_kill_records_the_process_status(
    cluster: Cluster, script: str, pod: dict, probe: dict, exit_code: int, reason: str
) -> None:
    await cluster.create(shell_pod("live", script, pod=pod, livenessProbe={**FAILING_LIVENESS, **probe}))
    terminated = await terminated_after_restart(cluster, "live")
    assert (terminated["exitCode"], terminated["reason"]) == (exit_code, reason)
    killing = await cluster.wait_event("live", "Killing")
    assert killing["message"] == "Container app failed liveness probe, will be restarted"


async def test_a_liveness_kill_waits_for_the_grace_period_before_sigkill(cluster: Cluster) -> None:
    """30 s of grace (0.3 s real at the test speed): a process ignoring SIGTERM runs on meanwhile."""
    runtime = cluster.simulator.runtimes["node-1"]
    loop = asyncio.get_running_loop()
    with runtime.subscribe() as events:
        await cluster.create(shell_pod("slow", IGNORES_SIGTERM, livenessProbe=FAILING_LIVENESS))
        async with asyncio.timeout(WAIT):
            while (event := await events.get()).type != ContainerEventType.STARTED:
                pass
            started = loop.time()
            while (event := await events.get()).type != ContainerEventType.STOPPED:
                pass
        took = loop.time() - started
    assert (event.cause, event.container.exit_code, event.container.reason) == (CAUSE_KUBELET, 137, "Error")
    assert took >= 0.3  # SIGKILL only once the 30 s of grace were over


async def test_an_image_change_records_the_process_status(cluster: Cluster) -> None:
    await cluster.create(shell_pod("image", trap_exit(5)))
    await armed(cluster, "image")
    body = {"spec": {"containers": [{"name": "app", "image": "sandbox-test/shell:2.0"}]}}
    await cluster.client.patch(resource_path("v1", "pods", "default", "image"), body, STRATEGIC_PATCH)
    terminated = await terminated_after_restart(cluster, "image")
    assert (terminated["exitCode"], terminated["reason"]) == (5, "Error")
    pod = await cluster.wait_for("pods", "image", is_ready)
    assert container(pod, "app")["image"] == "docker.io/sandbox-test/shell:2.0"


async def test_a_resize_restart_records_the_process_status(cluster: Cluster) -> None:
    resources = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "1Gi"}}
    policy = [{"resourceName": "memory", "restartPolicy": "RestartContainer"}]
    await cluster.create(shell_pod("mem", DIES_OF_SIGTERM, resources=resources, resizePolicy=policy))
    await cluster.wait_for("pods", "mem", is_ready)
    body = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "256Mi"}}}]}}
    await cluster.client.patch(resource_path("v1", "pods", "default", "mem", "resize"), body, STRATEGIC_PATCH)
    terminated = await terminated_after_restart(cluster, "mem")
    assert (terminated["exitCode"], terminated["reason"]) == (143, "Error")


async def test_a_deleted_pod_reports_the_process_status_before_it_disappears(cluster: Cluster) -> None:
    await cluster.create(shell_pod("gone", trap_exit(3)))
    await armed(cluster, "gone")
    path = resource_path("v1", "pods", "default")
    listing = await cluster.client.list(path, fieldSelector="metadata.name=gone")
    runtime = cluster.simulator.runtimes["node-1"]
    states: list[dict[str, Any]] = []
    with runtime.subscribe() as events:
        await cluster.client.delete(resource_path("v1", "pods", "default", "gone"))
        async with asyncio.timeout(WAIT):
            async for event in cluster.client.watch(
                path, listing["metadata"]["resourceVersion"], fieldSelector="metadata.name=gone"
            ):
                statuses = (event["object"].get("status") or {}).get("containerStatuses") or []
                states += [s["state"] for s in statuses]
                if event["type"] == "DELETED":
                    break
            while (stopped := await events.get()).type != ContainerEventType.STOPPED:
                pass
    assert (stopped.cause, stopped.container.exit_code, stopped.container.reason) == (
        CAUSE_KUBELET,
        3,
        "Error",
    )
    terminated = [state["terminated"] for state in states if "terminated" in state]
    assert terminated, states
    assert (terminated[-1]["exitCode"], terminated[-1]["reason"]) == (3, "Error")
    killing = await cluster.wait_event("gone", "Killing")
    assert killing["message"] == "Stopping container app"
