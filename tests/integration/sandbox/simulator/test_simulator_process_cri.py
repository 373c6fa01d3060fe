"""CRI StopContainer and ExecSync against process containers reach the real process: the
container exits with the process's status and an exec runs the command for real."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from simulator_testkit import Cluster, container, is_ready, pod_manifest, trap_armed

from kruise.sandbox.cri import CAUSE_CRI, ContainerEventType, ContainerState
from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.model import POD_NAME_LABEL
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.simulator import ProcessImage
from kruise.sandbox.simulator.processes import ContainerProcess

IMAGE = "sandbox-test/shell:1.0"
DIES_OF_SIGTERM = "while :; do sleep 0.05; done"
EXITS_7_ON_SIGTERM = "trap 'exit 7' TERM; touch armed; while :; do sleep 0.05; done"
IGNORES_SIGTERM = "trap '' TERM; touch armed; while :; do sleep 0.05; done"
EXITS_0_ON_SIGTERM = "trap 'exit 0' TERM; touch armed; while :; do sleep 0.05; done"
WORK_VOLUME = {"name": "work", "emptyDir": {}}
"""A script that traps SIGTERM touches `armed` in its working directory once the trap is set: a
container reported running may not have run its first line yet, and a SIGTERM before the trap
kills the shell with 143 (seen on a loaded machine)."""


@pytest.fixture
def simulator_options() -> dict[str, Any]:
    return {"nodes": 1, "process_images": [ProcessImage("sandbox-test/shell:*", {"sh": ["/bin/sh"]}, "sh")]}


@pytest.fixture
async def cri(cluster: Cluster):
    async with CriClient(cluster.simulator.socket_path("node-1"), timeout=30) as client:
        yield client


def shell_pod(
    name: str, script: str, volumes: tuple[dict, ...] = (), **container_fields: Any
) -> dict[str, Any]:
    return pod_manifest(
        name,
        {"name": "app", "image": IMAGE, "command": ["sh", "-c", script], **container_fields},
        terminationGracePeriodSeconds=30,
        volumes=list(volumes),
    )


async def running_id(cluster: Cluster, name: str, restarts: int = 0) -> str:
    """The id of the running container ``app`` once its process is up (after ``restarts``)."""
    pod = await cluster.wait_for(
        "pods",
        name,
        lambda p: (
            bool((p.get("status") or {}).get("containerStatuses"))
            and "running" in container(p, "app")["state"]
            and container(p, "app")["restartCount"] == restarts
        ),
    )
    return container(pod, "app")["containerID"].removeprefix("containerd://")


async def stop_and_read(cluster: Cluster, cri: CriClient, name: str, timeout: int) -> tuple[Any, dict]:
    """StopContainer; then the container as the runtime recorded its exit (the kubelet removes it
    when it restarts it) and the pod's lastState once the kubelet has seen the exit."""
    container_id = await running_id(cluster, name)
    with cluster.simulator.runtimes["node-1"].subscribe() as events:
        await cri.StopContainer(messages.StopContainerRequest(container_id=container_id, timeout=timeout))
        while (event := await events.get()).type != ContainerEventType.STOPPED or (
            event.container.id != container_id
        ):
            pass
    pod = await cluster.wait_for(
        "pods", name, lambda p: container(p, "app").get("lastState", {}).get("terminated") is not None
    )
    return event, container(pod, "app")["lastState"]["terminated"]


@pytest.mark.parametrize(
    ("script", "timeout", "exit_code", "reason"),
    [
        (DIES_OF_SIGTERM, 30, 143, "Error"),
        (EXITS_7_ON_SIGTERM, 30, 7, "Error"),
        (IGNORES_SIGTERM, 1, 137, "Error"),  # SIGKILL once the (scaled) grace period is over
        (DIES_OF_SIGTERM, 0, 137, "Error"),  # timeout 0: SIGKILL at once, as containerd
        (EXITS_0_ON_SIGTERM, 30, 0, "Completed"),
    ],
)
async def test_stop_container_reports_the_process_status(
    cluster: Cluster, cri: CriClient, script: str, timeout: int, exit_code: int, reason: str
) -> None:
    await cluster.create(
        shell_pod(
            "stopped", script, (WORK_VOLUME,), workingDir="/work",
            volumeMounts=[{"name": "work", "mountPath": "/work"}],
        )
    )  # fmt: skip
    if "trap" in script:
        await trap_armed(cri, await running_id(cluster, "stopped"))
    event, terminated = await stop_and_read(cluster, cri, "stopped", timeout)
    assert event.cause == CAUSE_CRI
    assert (event.container.exit_code, event.container.reason) == (exit_code, reason)
    assert (terminated["exitCode"], terminated["reason"]) == (exit_code, reason)
    await running_id(cluster, "stopped", restarts=1)  # restartPolicy Always: the kubelet starts it again


async def test_exec_sync_runs_the_command_with_the_container_env_and_directory(
    cluster: Cluster, cri: CriClient
) -> None:
    await cluster.create(
        shell_pod(
            "exec",
            "echo here > marker; " + DIES_OF_SIGTERM,
            env=[{"name": "GREETING", "value": "hello"}],
            workingDir="/work",
            volumes=({"name": "work", "emptyDir": {}},),
            volumeMounts=[{"name": "work", "mountPath": "/work"}],
        )
    )
    container_id = await running_id(cluster, "exec")
    response = await cri.ExecSync(
        messages.ExecSyncRequest(
            container_id=container_id,
            cmd=["sh", "-c", 'cat marker; echo "$GREETING"; echo oops >&2; exit 4'],
            timeout=10,
        )
    )
    assert (response.exit_code, response.stdout, response.stderr) == (4, b"here\nhello\n", b"oops\n")


async def test_exec_sync_of_a_missing_executable_fails_as_containerd(
    cluster: Cluster, cri: CriClient
) -> None:
    await cluster.create(shell_pod("missing", DIES_OF_SIGTERM))
    container_id = await running_id(cluster, "missing")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cri.ExecSync(messages.ExecSyncRequest(container_id=container_id, cmd=["curl", "-f", "x"]))
    assert caught.value.code() == grpc.StatusCode.UNKNOWN
    details = caught.value.details() or ""
    assert details.startswith('failed to exec in container: failed to start exec "')
    assert details.endswith(
        "OCI runtime exec failed: exec failed: unable to start container process: "
        'exec: "curl": executable file not found in $PATH: unknown'
    )


async def test_exec_sync_past_its_timeout_is_killed(cluster: Cluster, cri: CriClient) -> None:
    await cluster.create(shell_pod("slow", DIES_OF_SIGTERM))
    container_id = await running_id(cluster, "slow")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cri.ExecSync(
            messages.ExecSyncRequest(container_id=container_id, cmd=["sh", "-c", "sleep 30"], timeout=1)
        )
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert (
        caught.value.details()
        == "failed to exec in container: timeout 1s exceeded: context deadline exceeded"
    )


async def test_no_exec_is_simulated_while_the_process_is_being_spawned(
    cluster: Cluster, cri: CriClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow spawn (a loaded machine) held open: until its process exists the container is not RUNNING,
    so an ExecSync is refused as by containerd, never answered as for a simulated container; once it
    runs, execs reach the process. (The RUNNING-without-task window made the timeout test above flaky.)"""
    gate, spawning = asyncio.Event(), asyncio.Event()
    spawn = ContainerProcess.spawn.__func__  # type: ignore[attr-defined]

    async def held_spawn(cls: type[ContainerProcess], *args: Any, **kwargs: Any) -> ContainerProcess:
        spawning.set()
        await gate.wait()
        return await spawn(cls, *args, **kwargs)

    monkeypatch.setattr(ContainerProcess, "spawn", classmethod(held_spawn))
    await cluster.create(shell_pod("held", DIES_OF_SIGTERM))
    async with asyncio.timeout(30):
        await spawning.wait()
    runtime = cluster.simulator.runtimes["node-1"]
    [held] = [c for c in runtime.list_containers() if c.labels.get(POD_NAME_LABEL) == "held"]
    assert held.state == ContainerState.CREATED
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cri.ExecSync(
            messages.ExecSyncRequest(container_id=held.id, cmd=["sh", "-c", "exit 3"], timeout=5)
        )
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    gate.set()
    container_id = await running_id(cluster, "held")
    answer = await cri.ExecSync(
        messages.ExecSyncRequest(container_id=container_id, cmd=["sh", "-c", "echo real; exit 3"], timeout=5)
    )
    assert (answer.exit_code, answer.stdout) == (3, b"real\n")


async def test_an_exec_readiness_probe_runs_for_real(cluster: Cluster, cri: CriClient) -> None:
    probe = {
        "exec": {"command": ["sh", "-c", "test -f ready || { echo not yet; exit 1; }"]},
        "periodSeconds": 1,
    }
    await cluster.create(shell_pod("probed", DIES_OF_SIGTERM, readinessProbe=probe))
    event = await cluster.wait_event("probed", "Unhealthy")
    assert event["message"] == "Readiness probe failed: not yet"
    container_id = await running_id(cluster, "probed")
    pod = await cluster.wait_for("pods", "probed", lambda p: "running" in container(p, "app")["state"])
    assert not is_ready(pod)
    touched = await cri.ExecSync(
        messages.ExecSyncRequest(container_id=container_id, cmd=["sh", "-c", "touch ready"])
    )
    assert touched.exit_code == 0
    await cluster.wait_for("pods", "probed", is_ready)
