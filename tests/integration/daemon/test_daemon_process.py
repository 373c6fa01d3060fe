"""A real kruise-daemon process exits promptly on SIGTERM (issue 11 bug 6).

A DaemonSet rollout waits for the old pod on every node, so the daemon must not sit in its teardown.
The process runs against the emulator and a simulated node's fake CRI while it is busy: an image pull
in flight and a container recreation whose CRI StopContainer blocks for the container's whole grace
period (a container that ignores SIGTERM, which containerd waits out; the fake CRI's containers would
otherwise stop at once, hiding the wait).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time

import pytest

from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, NODEIMAGES, PODS
from kruise.sandbox.cri.server import CriServicer
from tests.kit.daemon_node import NODE, NS, image_tag, node_image, simulated_node
from tests.kit.polling import until_fetched

GRACE_SECONDS = 30
EXIT_BOUND_SECONDS = 10.0  # generous for a loaded CI machine; the target is under 2 s


@pytest.fixture
async def busy_node(emulator, monkeypatch):
    stop_started = asyncio.Event()
    original = CriServicer.StopContainer

    async def stop_waiting_out_the_grace_period(self, request, context):
        stop_started.set()
        await asyncio.sleep(request.timeout)
        return await original(self, request, context)

    monkeypatch.setattr(CriServicer, "StopContainer", stop_waiting_out_the_grace_period)
    async with simulated_node(emulator, "daemon-exit-") as (simulator, client):
        simulator.runtimes[NODE].images.pull_delay = lambda ref: 3600.0 if "redis" in ref else 0.0
        yield emulator, simulator, client, stop_started


def running(pod):
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return bool(statuses) and all("running" in (s.get("state") or {}) for s in statuses)


def pulling(image):
    def check(node_image):
        tags = (((node_image.get("status") or {}).get("imageStatuses") or {}).get(image) or {}).get("tags")
        return bool(tags) and tags[0].get("phase") == "Pulling"

    return check


async def start_daemon(emulator, simulator):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kruise.daemon.main", "--node-name", NODE,
        "--kubeconfig", str(emulator.kubeconfig), "--socket-file", str(simulator.socket_path(NODE)),
        "--addr", "127.0.0.1:0", "--logging-format", "json",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    lines: list[str] = []
    started = asyncio.Event()

    async def drain() -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            line = raw.decode(errors="replace")
            lines.append(line)
            if "kruise-daemon started" in line:
                started.set()

    drainer = asyncio.create_task(drain())
    await asyncio.wait_for(started.wait(), 30)
    return proc, lines, drainer


async def test_daemon_exits_promptly_on_sigterm_while_busy(busy_node, record_property):
    emulator, simulator, client, stop_started = busy_node
    pod = await client.create(
        PODS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "stubborn", "namespace": NS},
            "spec": {
                "nodeName": NODE,
                "terminationGracePeriodSeconds": GRACE_SECONDS,
                "containers": [{"name": "app", "image": "nginx:alpine"}],
            },
        },
    )
    pod = await until_fetched(lambda: client.get(PODS, "stubborn", NS), running)
    proc, lines, drainer = await start_daemon(emulator, simulator)
    try:
        await client.create(NODEIMAGES, node_image({"redis": [image_tag("7.2")]}))
        (status,) = pod["status"]["containerStatuses"]
        await client.create(
            CONTAINER_RECREATE_REQUESTS,
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "ContainerRecreateRequest",
                "metadata": {
                    "name": "recreate-app",
                    "namespace": NS,
                    "labels": {
                        "crr.apps.kruise.io/node-name": NODE,
                        "crr.apps.kruise.io/pod-uid": pod["metadata"]["uid"],
                        "crr.apps.kruise.io/active": "true",
                    },
                },
                "spec": {
                    "podName": "stubborn",
                    "containers": [{"name": "app", "statusContext": {"containerID": status["containerID"]}}],
                },
            },
        )
        # Busy on both fronts: the kill is inside StopContainer and the pull is in flight.
        await asyncio.wait_for(stop_started.wait(), 90)  # a deadline for a loaded machine, not a measure
        await until_fetched(lambda: client.get(NODEIMAGES, NODE), pulling("redis"))
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), EXIT_BOUND_SECONDS)
        elapsed = time.monotonic() - sent
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await drainer
    record_property("sigterm_exit_seconds", round(elapsed, 3))
    print(f"kruise-daemon exited {elapsed:.2f} s after SIGTERM")
    assert code == 0, "".join(lines[-20:])
    assert any("kruise-daemon stopped" in line for line in lines), "".join(lines[-20:])
