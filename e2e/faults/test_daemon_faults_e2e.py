"""Fault scenario 5, daemon faults: kruise-daemon SIGKILLed mid image pull and mid ContainerRecreateRequest.

kruise-py is installed by its Helm chart (`kruise sandbox up`'s default), so each node's kruise-daemon is
the container of a DaemonSet pod that the node's kubelet runs as a real process and restarts when it
dies, as on a cluster. The test SIGKILLs that process (found among the sandbox's descendants by its
`NODE_NAME`, as `kill` on the node would) and lets the kubelet bring it back.

(a) An ImagePullJob pulls an image the sandbox makes slow (`--slow-image`, SLOW_SECONDS of sandbox time)
to every node; once a node's NodeImage shows the pull in phase Pulling, that node's daemon is killed. The
restarted daemon re-reads the NodeImage spec and pulls again (the runtime's download, like containerd's,
went on without it). The job must end (completed, or failed with a reason), and each NodeImage's status
must agree with what the node's runtime holds (Node status.images, which the kubelet reports from the
runtime): every Succeeded tag present, nothing left Pulling/Waiting.

(b) A ContainerRecreateRequest with `minStartedSeconds` on a pod: once the daemon has recorded the kill
(isKilled) it waits minStartedSeconds for the new container; the pod's node's daemon is killed in that
window. The restarted daemon re-plans from the request's status and the pod (the restartCount above the
one in statusContext shows the kill happened), so the request must reach Completed, every container
Succeeded or Failed with a message, and the container must have restarted exactly once.

Figures are printed (`-s` shows them); docs/reliability.md says what a run measured.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import Cluster, SandboxProcess, ready_kubeconfig, until

NODES = 2
SPEED = 20
SLOW_IMAGE = "registry.example/slow/app:1"
SLOW_REPO, SLOW_TAG = SLOW_IMAGE.rsplit(":", 1)
SLOW_SECONDS = 600  # sandbox time: 30 s at SPEED, long enough to kill every daemon mid-pull
MIN_STARTED = 8  # CRR minStartedSeconds (real seconds): the window the daemon is killed in
KRUISE_NAMESPACE = "kruise-system"
# Bounds for a stuck recovery, not speed claims.
READY_BOUND = 240.0
RECOVER_BOUND = 180.0

# The chart's kruise-manager creates a node's NodeImage 30 s after the node is Ready (upstream's default
# --nodeimage-creation-delay), and the pull alone takes SLOW_SECONDS / SPEED: more than the suite's 120 s.
pytestmark = pytest.mark.timeout(480)


@pytest.fixture(scope="module")
def chart_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, int]]:
    """The sandbox with kruise-py installed by its chart, and the sandbox process's pid (the root of the
    process tree the daemons' containers run in)."""
    if os.environ.get("KUBECONFIG"):
        pytest.skip("needs `kruise sandbox up`; KUBECONFIG points at another cluster")
    kubeconfig = tmp_path_factory.mktemp("daemon-faults") / "kubeconfig"
    sandbox = SandboxProcess.start(
        "--nodes", str(NODES), "--speed", str(SPEED), "--kubeconfig", str(kubeconfig),
        "--feature-gates", "ImagePullJobGate=true", "--slow-image", f"{SLOW_IMAGE}={SLOW_SECONDS}",
    )  # fmt: skip
    try:
        cluster = Cluster(
            ready_kubeconfig(sandbox.wait_for("ready", READY_BOUND)), is_sandbox=True, nodes=NODES
        )
        yield cluster, sandbox.process.pid
    finally:
        code = sandbox.terminate()
        assert code == 0, sandbox.output


# ---- finding and killing a node's kruise-daemon ---------------------------------------------------


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def daemon_pid(sandbox_pid: int, node: str) -> int:
    """The kruise-daemon process of `node`'s DaemonSet pod: a descendant of the sandbox whose command is
    kruise-daemon and whose environment says NODE_NAME=node (the chart sets it from spec.nodeName)."""
    matches = []
    for pid in _descendants(sandbox_pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"kruise-daemon" in arg for arg in cmdline) and f"NODE_NAME={node}".encode() in environ:
            matches.append(pid)
    assert matches, f"no kruise-daemon process for {node} under the sandbox (pid {sandbox_pid})"
    return min(matches)  # the container's own process, not a helper it may have forked


async def daemon_pod(cluster: Cluster, node: str) -> dict[str, Any]:
    _, out = await cluster.kubectl(
        "get", "pods", "-n", KRUISE_NAMESPACE, "-l", "control-plane=daemon",
        "--field-selector", f"spec.nodeName={node}", "-o", "json",
    )  # fmt: skip
    (pod,) = json.loads(out)["items"]
    return pod


def restarts_and_ready(pod: dict[str, Any]) -> tuple[int, bool]:
    (status,) = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return int(status.get("restartCount") or 0), bool(status.get("ready"))


async def kill_daemon(cluster: Cluster, sandbox_pid: int, node: str) -> int:
    """SIGKILL `node`'s kruise-daemon; returns its container's restartCount before the kill."""
    before, _ = restarts_and_ready(await daemon_pod(cluster, node))
    os.kill(daemon_pid(sandbox_pid, node), signal.SIGKILL)
    return before


async def daemon_back(cluster: Cluster, node: str, restarts_before: int) -> int:
    pod = await until(
        lambda: daemon_pod(cluster, node),
        lambda p: restarts_and_ready(p)[0] > restarts_before and restarts_and_ready(p)[1],
        f"{node}'s kruise-daemon restarted by the kubelet and ready",
        RECOVER_BOUND,
    )
    return restarts_and_ready(pod)[0]


async def get_json(cluster: Cluster, *args: str) -> dict[str, Any]:
    """The object, or {} while it does not exist yet (kruise-manager creates each NodeImage)."""
    code, out = await cluster.kubectl("get", *args, "-o", "json", check=False)
    if code != 0 and "NotFound" in out:
        return {}
    assert code == 0, f"kubectl get {' '.join(args)}: {out}"
    return json.loads(out)


# ---- (a) mid image pull ----------------------------------------------------------------------------

PULL_JOB = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ImagePullJob",
    "metadata": {"name": "slow-pull", "namespace": "default"},
    "spec": {
        "image": SLOW_IMAGE,
        "parallelism": NODES,
        "pullPolicy": {"backoffLimit": 3, "timeoutSeconds": 600},
        "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 600},
    },
}


def slow_tag_status(node_image: dict[str, Any]) -> dict[str, Any]:
    image = ((node_image.get("status") or {}).get("imageStatuses") or {}).get(SLOW_REPO) or {}
    return next((t for t in image.get("tags") or [] if t.get("tag") == SLOW_TAG), {})


def node_image_names(node: dict[str, Any]) -> set[str]:
    return {name for image in (node.get("status") or {}).get("images") or [] for name in image["names"]}


def status_matches_runtime(node_image: dict[str, Any], node: dict[str, Any]) -> list[str]:
    """What the NodeImage's status says that the node's runtime contradicts (empty: consistent)."""
    names = node_image_names(node)
    wrong = []
    for repo, image in ((node_image.get("status") or {}).get("imageStatuses") or {}).items():
        for tag in image.get("tags") or []:
            ref, phase = f"{repo}:{tag['tag']}", tag.get("phase")
            if phase == "Succeeded" and ref not in names:
                wrong.append(f"{ref} Succeeded but absent from the node")
            if phase == "Succeeded" and not str(tag.get("imageID", "")).startswith("sha256:"):
                wrong.append(f"{ref} Succeeded without an imageID")
            if phase in ("Pulling", "Waiting"):
                wrong.append(f"{ref} left in phase {phase}")
            if phase == "Failed" and not tag.get("message"):
                wrong.append(f"{ref} Failed without a message")
    return wrong


async def test_daemon_killed_mid_image_pull(chart_sandbox: tuple[Cluster, int]):
    cluster, sandbox_pid = chart_sandbox
    nodes = [f"node-{i}" for i in range(1, NODES + 1)]
    for node in nodes:  # a job made before its nodes' NodeImages exist is not re-queued by their creation
        await until(
            lambda node=node: get_json(cluster, "nodeimage", node), bool, f"{node}'s NodeImage", RECOVER_BOUND
        )
    started = time.monotonic()
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(PULL_JOB))
    killed_at: dict[str, float] = {}
    restarts_before: dict[str, int] = {}
    for node in nodes:
        await until(
            lambda node=node: get_json(cluster, "nodeimage", node),
            lambda ni: slow_tag_status(ni).get("phase") == "Pulling",
            f"{node}'s NodeImage showing {SLOW_IMAGE} Pulling",
            RECOVER_BOUND,
        )
        restarts_before[node] = await kill_daemon(cluster, sandbox_pid, node)
        killed_at[node] = time.monotonic()
    back_after = {}
    for node in nodes:
        await daemon_back(cluster, node, restarts_before[node])
        back_after[node] = time.monotonic() - killed_at[node]
    job = await until(
        lambda: get_json(cluster, "imagepulljob", "slow-pull"),
        lambda j: (j.get("status") or {}).get("completionTime"),
        "the ImagePullJob completing",
        RECOVER_BOUND,
    )
    done_at = time.monotonic()
    status = job["status"]
    assert status["desired"] == NODES, status
    assert status["succeeded"] + status["failed"] == NODES, status
    if status["failed"]:
        assert status.get("failedNodes") and status.get("message"), status
    for node in nodes:
        node_image = await get_json(cluster, "nodeimage", node)
        tag = slow_tag_status(node_image)
        assert tag.get("phase") in ("Succeeded", "Failed"), tag
        assert status_matches_runtime(node_image, await get_json(cluster, "node", node)) == [], node_image[
            "status"
        ]
    restarts = {node: restarts_and_ready(await daemon_pod(cluster, node))[0] for node in nodes}
    assert all(restarts[n] == restarts_before[n] + 1 for n in nodes), (restarts_before, restarts)
    first_kill = min(killed_at.values())
    print(
        f"\n[daemon faults / pull] nodes={NODES} pull={SLOW_SECONDS / SPEED:.0f}s "
        f"kills={len(killed_at)} (one per node, each mid-pull) "
        f"daemon back after kill: {', '.join(f'{n} {t:.1f}s' for n, t in back_after.items())}; "
        f"job {status['succeeded']}/{status['desired']} succeeded, {status['failed']} failed; "
        f"first kill -> job complete {done_at - first_kill:.1f}s; "
        f"apply -> complete {done_at - started:.1f}s; "
        f"tags: {[slow_tag_status(await get_json(cluster, 'nodeimage', n)) for n in nodes]}"
    )


# ---- (b) mid ContainerRecreateRequest --------------------------------------------------------------

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "crr-fault", "namespace": "default"},
    "spec": {
        "terminationGracePeriodSeconds": 2,
        "containers": [
            {"name": "app", "image": "nginx:alpine"},
            {"name": "side", "image": "busybox:1.36", "command": ["sleep", "999d"]},
        ],
    },
}
CRR = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ContainerRecreateRequest",
    "metadata": {"name": "crr-fault", "namespace": "default"},
    "spec": {
        "podName": "crr-fault",
        "containers": [{"name": "app"}],
        "strategy": {"failurePolicy": "Fail", "minStartedSeconds": MIN_STARTED},
    },
}


def restart_counts(pod: dict[str, Any]) -> dict[str, int]:
    return {s["name"]: s["restartCount"] for s in (pod.get("status") or {}).get("containerStatuses") or []}


def killed(crr: dict[str, Any]) -> bool:
    states = (crr.get("status") or {}).get("containerRecreateStates") or []
    return any(s.get("isKilled") for s in states)


async def test_daemon_killed_mid_container_recreate(chart_sandbox: tuple[Cluster, int]):
    cluster, sandbox_pid = chart_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(POD))
    await cluster.kubectl("wait", "pod/crr-fault", "--for=condition=Ready", "--timeout=120s")
    before = await get_json(cluster, "pod", "crr-fault")
    node = before["spec"]["nodeName"]
    assert restart_counts(before) == {"app": 0, "side": 0}
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(CRR))
    crr = await until(
        lambda: get_json(cluster, "crr", "crr-fault"),
        killed,
        "the CRR recording the container's kill",
        RECOVER_BOUND,
    )
    assert crr["status"]["phase"] == "Recreating", crr["status"]  # minStartedSeconds not over yet
    restarts_before = await kill_daemon(cluster, sandbox_pid, node)
    killed_at = time.monotonic()
    await daemon_back(cluster, node, restarts_before)
    back_after = time.monotonic() - killed_at
    crr = await until(
        lambda: get_json(cluster, "crr", "crr-fault"),
        lambda c: (c.get("status") or {}).get("phase") == "Completed",
        "the CRR completing after its daemon was killed",
        RECOVER_BOUND,
    )
    done_after = time.monotonic() - killed_at
    for state in crr["status"]["containerRecreateStates"]:
        assert state["phase"] in ("Succeeded", "Failed"), state
        if state["phase"] == "Failed":
            assert state.get("message"), state
    after = await get_json(cluster, "pod", "crr-fault")
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert restart_counts(after) == {"app": 1, "side": 0}
    print(
        f"\n[daemon faults / CRR] node={node} minStartedSeconds={MIN_STARTED} kills=1 (after isKilled) "
        f"daemon back after {back_after:.1f}s; CRR Completed {done_after:.1f}s after the kill; "
        f"states={crr['status']['containerRecreateStates']}; restarts={restart_counts(after)}"
    )
