"""``kubectl logs`` through the emulator's pods/log and the simulator's kubelet API."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from simulator_testkit import Cluster, container, is_ready, pod_manifest

from kruise.sandbox.cri import CAUSE_CRI

KUBECTL = Path(sys.executable).parent / "kubectl"


@pytest.fixture
def kubectl(cluster: Cluster, tmp_path: Path):
    if not KUBECTL.exists() and shutil.which("kubectl") is None:
        pytest.skip("kubectl binary not available")

    async def run(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            str(KUBECTL),
            "--kubeconfig",
            str(cluster.simulator.kubeconfig_path),
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        return proc.returncode or 0, out.decode(), err.decode()

    return run


async def test_logs_of_a_running_container(cluster: Cluster, kubectl):
    await cluster.create(pod_manifest("logged", {"name": "app", "image": "nginx:1.25", "args": ["-g", "x"]}))
    pod = await cluster.wait_for("pods", "logged", is_ready)
    code, out, err = await kubectl("logs", "logged")
    assert (code, err) == (0, "")
    assert out == (
        f'[sandbox] container "app" started on {pod["spec"]["nodeName"]} '
        '(image "nginx:1.25", restart 0); command: -g x\n'
    )
    code, out, _ = await kubectl("logs", "logged", "--timestamps")
    stamp, _, text = out.partition(" ")
    assert stamp.endswith("Z") and len(stamp) == len("2026-01-01T00:00:00.000000000Z")
    assert text.startswith('[sandbox] container "app" started')
    code, _, err = await kubectl("logs", "logged", "--previous")
    assert code == 1
    assert err.strip() == (
        'Error from server (BadRequest): previous terminated container "app" in pod "logged" not found'
    )


async def test_previous_shows_the_instance_before_a_restart(cluster: Cluster, kubectl):
    await cluster.create(pod_manifest("restarted", {"name": "app", "image": "nginx:1.25"}))
    pod = await cluster.wait_for("pods", "restarted", is_ready)
    runtime = cluster.simulator.runtimes[pod["spec"]["nodeName"]]
    first = container(pod, "app")["containerID"].removeprefix("containerd://")
    runtime.stop_container(first, exit_code=137, cause=CAUSE_CRI)
    await cluster.wait_for(
        "pods", "restarted", lambda p: is_ready(p) and container(p, "app")["restartCount"] == 1
    )
    _, current, _ = await kubectl("logs", "restarted")
    assert '(image "nginx:1.25", restart 1)' in current
    _, previous, _ = await kubectl("logs", "restarted", "--previous")
    assert previous.splitlines() == [
        f'[sandbox] container "app" started on {pod["spec"]["nodeName"]} (image "nginx:1.25", restart 0)',
        '[sandbox] container "app" exited with code 137 (Error)',
    ]


async def test_follow_ends_when_the_container_exits(cluster: Cluster, kubectl):
    manifest = pod_manifest(
        "finite",
        {"name": "job", "image": "busybox", "command": ["sleep", "50"]},
        restartPolicy="Never",
    )
    await cluster.create(manifest)
    await cluster.wait_for("pods", "finite", is_ready)
    code, out, _ = await kubectl("logs", "-f", "finite")  # returns only once the container exited
    assert code == 0
    assert out.splitlines()[-1] == '[sandbox] container "job" exited with code 0 (Completed)'


async def test_unscheduled_pod_has_an_empty_log(cluster: Cluster, kubectl):
    await cluster.create(pod_manifest("nowhere", nodeSelector={"no-such": "label"}))
    await cluster.wait_for(
        "pods",
        "nowhere",
        lambda p: any(c["type"] == "PodScheduled" for c in p["status"].get("conditions", [])),
    )
    assert await kubectl("logs", "nowhere") == (0, "", "")
