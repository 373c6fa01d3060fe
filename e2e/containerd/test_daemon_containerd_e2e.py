"""kruise-daemon and the kubelet's streams on real nodes (`kruise sandbox up --runtime containerd`).

A bare Pod runs busybox's `sh` printing a numbered line every second in a real container. Three
things the fake runtime can only pretend, each on its own pod, each cleaned up:
- a ContainerRecreateRequest: the node's kruise-daemon stops the real container through CRI, the
  kubelet sees the exit and starts a new one (new container id, restartCount +1), the CRR Completes;
- `kubectl logs -f` follows the CRI log file (lines written after it started arrive), and `kubectl
  exec` runs a command in the container through CRI Exec (its output and its exit code 3 come back);
- a PodProbeMarker exec probe run by kruise-daemon through ExecSync inside the container: the file it
  tests is created with `kubectl exec`, and the pod condition flips from False to True.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from harness import Cluster, kubectl_binary, until

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]

TICKER = 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 1; done'


def ticker_pod(name: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"e2e": name}},
            "spec": {
                "terminationGracePeriodSeconds": 2,
                "containers": [{"name": "app", "image": "busybox", "command": ["sh", "-c", TICKER]}],
            },
        }
    )


async def run_pod(cluster: Cluster, name: str) -> dict:
    await cluster.kubectl("apply", "-f", "-", stdin=ticker_pod(name))
    await cluster.kubectl("wait", f"pod/{name}", "--for=condition=Ready", "--timeout=120s")
    return await get_pod(cluster, name)


async def get_pod(cluster: Cluster, name: str) -> dict:
    _, out = await cluster.kubectl("get", "pod", name, "-o", "json")
    return json.loads(out)


async def delete(cluster: Cluster, *what: str) -> None:
    await cluster.kubectl("delete", *what, "--ignore-not-found", "--wait=true", "--timeout=120s")


def app_status(pod: dict) -> dict:
    (status,) = pod["status"].get("containerStatuses") or [{}]
    return status


async def test_container_recreate_request_restarts_the_real_container(real_cluster: Cluster) -> None:
    cluster = real_cluster
    try:
        before = app_status(await run_pod(cluster, "crr-real"))
        assert before["restartCount"] == 0 and before["containerID"].startswith("containerd://")
        crr = {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "ContainerRecreateRequest",
            "metadata": {"name": "crr-real", "namespace": "default"},
            "spec": {"podName": "crr-real", "containers": [{"name": "app"}]},
        }
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(crr))
        await cluster.kubectl(
            "wait", "crr/crr-real", "--for=jsonpath={.status.phase}=Completed", "--timeout=120s"
        )
        _, out = await cluster.kubectl("get", "crr", "crr-real", "-o", "json")
        assert json.loads(out)["status"]["containerRecreateStates"] == [
            {"name": "app", "phase": "Succeeded", "isKilled": True}
        ]
        after = await until(
            lambda: get_pod(cluster, "crr-real"),
            lambda pod: app_status(pod).get("restartCount") == 1 and app_status(pod).get("ready"),
            "crr-real's container restarted and ready",
            timeout=60,
        )
        new = app_status(after)
        assert new["containerID"].startswith("containerd://")
        assert new["containerID"] != before["containerID"]
        assert new["lastState"]["terminated"]["containerID"] == before["containerID"]
        assert "startedAt" in new["state"]["running"]
        # the new container really runs: its log starts again at tick 1
        await until(
            lambda: cluster.kubectl("logs", "crr-real"),
            lambda result: result[1].startswith("tick 1\ntick 2\n"),
            "the new container's own log",
            timeout=30,
        )
    finally:
        await delete(cluster, "crr", "crr-real")
        await delete(cluster, "pod", "crr-real")


async def follow(cluster: Cluster, pod: str, lines: int) -> list[str]:
    """`kubectl logs -f` read until ``lines`` lines arrived, then stopped: the stream never ends."""
    process = await asyncio.create_subprocess_exec(
        kubectl_binary(), "--kubeconfig", str(cluster.kubeconfig), "logs", "-f", pod,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    seen: list[str] = []
    try:
        async with asyncio.timeout(60):
            while len(seen) < lines:
                line = await process.stdout.readline()
                assert line, f"kubectl logs -f ended after {seen!r}"
                seen.append(line.decode().rstrip("\n"))
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    return seen


async def test_logs_follow_and_exec_on_a_real_container(real_cluster: Cluster) -> None:
    cluster = real_cluster
    try:
        await run_pod(cluster, "streams-real")
        _, printed = await until(
            lambda: cluster.kubectl("logs", "streams-real"),
            lambda result: "tick 2\n" in result[1],
            "streams-real printed two lines",
            timeout=30,
        )
        already = len(printed.splitlines())
        streamed = await follow(cluster, "streams-real", already + 3)
        assert streamed == [f"tick {i}" for i in range(1, already + 4)], streamed

        code, out = await cluster.kubectl(
            "exec", "streams-real", "--", "sh", "-c", "echo hi; exit 3", check=False
        )
        assert code == 3, out
        assert out.splitlines()[0] == "hi", out
        # inside the pod: its UTS namespace carries the pod's name
        _, out = await cluster.kubectl("exec", "streams-real", "-c", "app", "--", "hostname")
        assert out == "streams-real\n", out
        # its own PID namespace (no shareProcessNamespace): PID 1 is the container's command, not pause
        _, out = await cluster.kubectl("exec", "streams-real", "--", "cat", "/proc/1/cmdline")
        assert out.split("\x00")[:2] == ["sh", "-c"], out
    finally:
        await delete(cluster, "pod", "streams-real")


def condition(pod: dict, kind: str) -> dict | None:
    return next((c for c in pod["status"].get("conditions") or [] if c["type"] == kind), None)


async def test_podprobemarker_exec_probe_runs_inside_the_real_container(real_cluster: Cluster) -> None:
    cluster = real_cluster
    marker = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PodProbeMarker",
        "metadata": {"name": "idle-real", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"e2e": "probe-real"}},
            "probes": [
                {
                    "name": "Idle",
                    "containerName": "app",
                    "probe": {
                        "exec": {"command": ["test", "-f", "/tmp/idle"]},
                        "timeoutSeconds": 3,
                        "periodSeconds": 1,
                        "successThreshold": 1,
                        "failureThreshold": 1,
                    },
                    "markerPolicy": [
                        {"state": "Succeeded", "labels": {"idle": "true"}},
                        {"state": "Failed", "labels": {"idle": "false"}},
                    ],
                    "podConditionType": "game.io/idle",
                }
            ],
        },
    }

    def marked(status: str, label: str):
        def check(pod: dict) -> bool:
            found = condition(pod, "game.io/idle")
            labels = pod["metadata"].get("labels") or {}
            return found is not None and found["status"] == status and labels.get("idle") == label

        return check

    try:
        await run_pod(cluster, "probe-real")
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(marker))
        # no /tmp/idle in the container yet: the probe really fails there
        await until(
            lambda: get_pod(cluster, "probe-real"), marked("False", "false"), "idle condition False", 90
        )
        await cluster.kubectl("exec", "probe-real", "--", "touch", "/tmp/idle")
        await until(lambda: get_pod(cluster, "probe-real"), marked("True", "true"), "idle condition True", 90)
        await cluster.kubectl("exec", "probe-real", "--", "rm", "/tmp/idle")
        await until(
            lambda: get_pod(cluster, "probe-real"), marked("False", "false"), "idle condition False again", 90
        )
    finally:
        await delete(cluster, "podprobemarker", "idle-real")
        await delete(cluster, "pod", "probe-real")
