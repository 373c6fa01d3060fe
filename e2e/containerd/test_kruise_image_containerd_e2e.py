"""kruise-py from its own image on real nodes: `kruise sandbox up --runtime containerd --kruise-image`.

`docker/image.py --no-push` (what `make image` runs) builds kruise-py's OCI image into
`build/image/oci`; the sandbox pushes it into its registry as `kruise-py:<tag>` and installs the Helm
chart, so kruise-manager, kruise-webhook and kruise-daemon run as real containers of that image on
the nodes' containerd (no host process of kruise-py). Checked here: every kruise-system pod is
Running and Ready with a `containerd://` container of `kruise-py:<tag>` whose imageID is the built
image's digest; managers and webhooks run on the pods' bridge, the daemons on their node's address;
`kubectl logs` of each kruise-manager pod shows its JSON start-up lines (one of them the leader's),
and each kruise-daemon's shows it reached its node's containerd through the chart's hostPath.

Needs root, Debian's containerd/runc/CNI/docker-registry and what the image build needs (apt, dpkg-deb,
chroot, network for the first build); skipped naming what is missing.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import Cluster, SandboxProcess, ready_kubeconfig, until

from kruise.sandbox.realnode import prereqs
from kruise.sandbox.realnode.network import DEFAULT_POD_SUBNET

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.containerd,
    pytest.mark.image,
    pytest.mark.slow,
    pytest.mark.timeout(900),
]

REPO = Path(__file__).resolve().parents[2]
SBIN = "/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"
BUILD_TOOLS = ("apt-get", "apt-cache", "dpkg-deb", "tar", "chroot")
POD_SUBNET = ipaddress.IPv4Network(DEFAULT_POD_SUBNET)
NODES = 2
NAMESPACE = "kruise-system"


@dataclass(frozen=True)
class BuiltImage:
    layout: Path
    tag: str
    digest: str


@pytest.fixture(scope="module")
def built_image() -> BuiltImage:
    """kruise-py's image as `make image` builds it (no push: the sandbox pushes it into its registry)."""
    if os.geteuid() != 0:
        pytest.skip("building kruise-py's image needs root (root-owned tree, chroot)")
    missing = [tool for tool in BUILD_TOOLS if shutil.which(tool, path=SBIN) is None]
    if missing:
        pytest.skip(f"building kruise-py's image needs {', '.join(missing)} (Debian)")
    done = subprocess.run(
        [sys.executable, str(REPO / "docker" / "image.py"), "--no-push"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tag = re.search(r"^image kruise-py:(\S+):", done.stdout, re.MULTILINE)
    digest = re.search(r"^digest (sha256:[0-9a-f]{64})$", done.stdout, re.MULTILINE)
    assert tag and digest, done.stdout
    return BuiltImage(REPO / "build" / "image" / "oci", tag.group(1), digest.group(1))


@pytest.fixture(scope="module")
def image_cluster(
    built_image: BuiltImage, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Cluster, SandboxProcess]]:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("needs `kruise sandbox up --runtime containerd`; KUBECONFIG points at another cluster")
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))
    kubeconfig = tmp_path_factory.mktemp("image-sandbox") / "kubeconfig"
    sandbox = SandboxProcess.start(
        "--runtime", "containerd", "--nodes", str(NODES), "--speed", "20",
        "--kruise-image", str(built_image.layout), "--kubeconfig", str(kubeconfig),
    )  # fmt: skip
    try:
        # `ready` comes once the chart's Deployments and DaemonSet are available
        line = sandbox.wait_for("ready", 420)
        sandbox.wait_for("  image ", 10)  # the ready block names the pushed image
        yield Cluster(ready_kubeconfig(line), is_sandbox=True, nodes=NODES), sandbox
    finally:
        code = sandbox.terminate()
        assert code == 0, sandbox.output


async def kruise_pods(cluster: Cluster) -> list[dict]:
    _, out = await cluster.kubectl("get", "pods", "-n", NAMESPACE, "-o", "json")
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


def ready(pod: dict) -> bool:
    conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
    return pod["status"].get("phase") == "Running" and conditions.get("Ready") == "True"


def role(pod: dict) -> str:
    return pod["metadata"]["labels"]["control-plane"]


async def json_log_lines(cluster: Cluster, pod: str) -> list[dict]:
    _, out = await cluster.kubectl("logs", "-n", NAMESPACE, pod)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


async def test_kruise_system_runs_the_built_image_as_real_containers(
    image_cluster: tuple[Cluster, SandboxProcess], built_image: BuiltImage
) -> None:
    cluster, sandbox = image_cluster
    pushed = f"  image docker.io/library/kruise-py:{built_image.tag}@{built_image.digest} "
    assert any(line.startswith(pushed) for line in sandbox.output), sandbox.output
    pods = await until(
        lambda: kruise_pods(cluster),
        lambda ps: len(ps) == 2 + 2 + NODES and all(ready(p) for p in ps),
        "kruise-system's six pods Running and Ready",
        timeout=120,
    )
    roles = sorted(role(p) for p in pods)
    assert roles == ["controller-manager"] * 2 + ["daemon"] * NODES + ["webhook"] * 2
    for pod in pods:
        name = pod["metadata"]["name"]
        (spec,) = pod["spec"]["containers"]
        (status,) = pod["status"]["containerStatuses"]
        assert spec["image"] == f"kruise-py:{built_image.tag}", name
        assert status["containerID"].startswith("containerd://"), (name, status)
        # the very image that was built: the registry's digest of the pushed manifest
        assert status["imageID"] == f"docker.io/library/kruise-py@{built_image.digest}", (name, status)
        assert status["restartCount"] == 0, (name, status)
        address = ipaddress.IPv4Address(pod["status"]["podIP"])
        if role(pod) == "daemon":  # host network: the node's own address
            assert address not in POD_SUBNET and pod["status"]["podIP"] == pod["status"]["hostIP"], name
        else:
            assert address in POD_SUBNET, name
    assert {p["spec"]["nodeName"] for p in pods if role(p) == "daemon"} == {"node-1", "node-2"}


async def test_kubectl_logs_of_kruise_manager_shows_its_json_start_up_lines(
    image_cluster: tuple[Cluster, SandboxProcess],
) -> None:
    cluster, _ = image_cluster
    pods = await kruise_pods(cluster)
    managers = sorted(p["metadata"]["name"] for p in pods if role(p) == "controller-manager")
    assert len(managers) == 2
    leaders = []
    for name in managers:
        lines = await until(
            lambda name=name: json_log_lines(cluster, name),
            lambda ls: any(
                line.get("event") in ("successfully acquired lease", "new leader elected") for line in ls
            ),
            f"{name}'s leader-election line",
        )
        first = lines[0]
        assert first["event"] == "kruise-manager started" and first["level"] == "info", lines[:3]
        assert {"timestamp", "controllers", "metrics_port", "health_port"} <= set(first), first
        assert "cloneset" in first["controllers"]
        leaders += [name for line in lines if line.get("event") == "successfully acquired lease"]
    assert len(leaders) == 1, leaders  # one leader, the other a standby


async def test_each_kruise_daemon_reaches_its_nodes_containerd_through_the_host_path(
    image_cluster: tuple[Cluster, SandboxProcess],
) -> None:
    cluster, _ = image_cluster
    pods = await kruise_pods(cluster)
    for pod in (p for p in pods if role(p) == "daemon"):
        name = pod["metadata"]["name"]
        lines = await until(
            lambda name=name: json_log_lines(cluster, name),
            lambda ls: any(line.get("event") == "kruise-daemon started" for line in ls),
            f"{name}'s start-up line",
        )
        started = next(line for line in lines if line.get("event") == "kruise-daemon started")
        assert started["node"] == pod["spec"]["nodeName"]
        assert started["runtime"].startswith("containerd "), started
        assert started["socket"] == "/hostvarrun/containerd/containerd.sock", started
        assert started["port"] == 10221, started
