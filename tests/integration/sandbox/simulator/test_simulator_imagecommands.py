"""Simulated containers end as their image's command would (``imagecommands``): a missing
executable fails the start as runc does, `ls <missing>` exits 1, busybox's default `sh` without
stdin exits at once (a service pod crash-loops), the exit-code annotation still wins."""

from __future__ import annotations

from simulator_testkit import Cluster, container, is_ready, pod_manifest

from kruise.sandbox.simulator.client import STRATEGIC_PATCH, resource_path
from kruise.sandbox.simulator.timing import EXIT_CODE_ANNOTATION

BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"


def ephemeral(pod, name):
    statuses = (pod.get("status") or {}).get("ephemeralContainerStatuses") or []
    return next((s for s in statuses if s["name"] == name), None)


def terminated(name):
    return lambda pod: ((ephemeral(pod, name) or {}).get("state") or {}).get("terminated") is not None


async def debug(cluster: Cluster, pod: str, name: str, command: list[str]) -> dict:
    await cluster.client.patch(
        resource_path("v1", "pods", "default", pod, "ephemeralcontainers"),
        {"spec": {"ephemeralContainers": [{"name": name, "image": BUSYBOX, "command": command}]}},
        STRATEGIC_PATCH,
    )
    done = await cluster.wait_for("pods", pod, terminated(name))
    return ephemeral(done, name)["state"]["terminated"]


async def test_an_executable_the_image_lacks_is_a_start_error(cluster: Cluster):
    await cluster.create(pod_manifest("target"))
    await cluster.wait_for("pods", "target", is_ready)
    state = await debug(cluster, "target", "dbg", ["sdkfjk"])
    assert state["exitCode"] == 128 and state["reason"] == "StartError"
    assert 'exec: "sdkfjk": executable file not found in $PATH' in state["message"]
    failed = await cluster.wait_event("target", "Failed")
    assert failed["message"].startswith("Error: failed to create containerd task:")
    assert failed["involvedObject"]["fieldPath"] == "spec.ephemeralContainers{dbg}"
    assert is_ready(await cluster.client.get(resource_path("v1", "pods", "default", "target")))


async def test_ls_of_a_missing_path_exits_1_and_true_exits_0(cluster: Cluster):
    await cluster.create(pod_manifest("target"))
    await cluster.wait_for("pods", "target", is_ready)
    missing = await debug(cluster, "target", "ls", ["ls", "sdfewasf"])
    assert (missing["exitCode"], missing["reason"]) == (1, "Error")
    fine = await debug(cluster, "target", "true", ["true"])
    assert (fine["exitCode"], fine["reason"]) == (0, "Completed")


async def test_the_exit_code_annotation_still_wins(cluster: Cluster):
    await cluster.create(pod_manifest("forced", annotations={EXIT_CODE_ANNOTATION: "7"}))
    await cluster.wait_for("pods", "forced", is_ready)
    state = await debug(cluster, "forced", "dbg", ["true"])
    assert state["exitCode"] == 7


def crash_looping(pod) -> bool:
    status = container(pod, "shell") if (pod.get("status") or {}).get("containerStatuses") else {}
    waiting = (status.get("state") or {}).get("waiting") or {}
    return status.get("restartCount", 0) >= 2 and waiting.get("reason") == "CrashLoopBackOff"


async def test_busybox_without_a_command_crash_loops(cluster: Cluster):
    await cluster.create(pod_manifest("shell", {"name": "shell", "image": BUSYBOX}))
    pod = await cluster.wait_for("pods", "shell", crash_looping, timeout=60)
    status = container(pod, "shell")
    assert status["ready"] is False and not is_ready(pod)
    assert status["lastState"]["terminated"]["exitCode"] == 0
    assert pod["status"]["phase"] == "Running"
    await cluster.wait_event("shell", "BackOff")


async def test_busybox_with_stdin_keeps_running(cluster: Cluster):
    await cluster.create(pod_manifest("interactive", {"name": "shell", "image": BUSYBOX, "stdin": True}))
    pod = await cluster.wait_for("pods", "interactive", is_ready)
    assert container(pod, "shell")["restartCount"] == 0


async def test_a_job_pod_whose_command_fails_fails(cluster: Cluster):
    manifest = pod_manifest(
        "job", {"name": "work", "image": BUSYBOX, "command": ["ls", "/nope"]}, restartPolicy="Never"
    )
    await cluster.create(manifest)
    pod = await cluster.wait_for("pods", "job", lambda p: (p.get("status") or {}).get("phase") == "Failed")
    assert container(pod, "work")["state"]["terminated"]["exitCode"] == 1
