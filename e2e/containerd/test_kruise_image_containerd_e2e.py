"""kruise-py from its own image on real nodes: `kruise sandbox up --runtime containerd --kruise-image`.

`docker/image.py --no-push` (what `make image` runs) builds kruise-py's OCI image into
`build/image/oci`; the sandbox pushes it into its registry as `kruise-py:<tag>` and installs the Helm
chart, so kruise-manager, kruise-webhook and kruise-daemon run as real containers of that image on
the nodes' containerd (no host process of kruise-py). Checked here: every kruise-system pod is
Running and Ready with a `containerd://` container of `kruise-py:<tag>` whose imageID is the built
image's digest; managers and webhooks run on the pods' bridge, the daemons on their node's address;
`kubectl logs` of each kruise-manager pod shows its JSON start-up lines (one of them the leader's),
and each kruise-daemon's shows it reached its node's containerd through the chart's hostPath. Then,
through those containers: seed 002's CloneSet in-place update; SIGKILL of the leader manager's
container through its node's containerd (`ctr tasks kill`, not a pod delete) -> the Lease goes to
another identity and the CloneSet still scales; `helm upgrade --set image.tag=` to a second image
(image_roll) -> every kruise pod replaced by one of the new digest while managers and webhooks stay
available, admission keeps injecting, the CloneSet still reconciled; `helm uninstall` -> no kruise
container (nor pod sandbox) left in any node's containerd, read with `ctr`. The test prints the
figures docs/helm.md records (time to all kruise-system pods Ready, idle memory per container,
hand-over time, the roll's availability minima).

Needs root, Debian's containerd/runc/CNI/docker-registry and what the image build needs (apt, dpkg-deb,
chroot, network for the first build); skipped naming what is missing.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import image_roll
import node_ctr
import pytest
from harness import (
    SEED_002_POD,
    SEED_002_SIDECARSET,
    Cluster,
    SandboxProcess,
    ready_kubeconfig,
    until,
)
from seed002_inplace import (
    create_seed_002_cloneset,
    delete_cloneset,
    update_in_place,
    wait_updated,
)
from seed002_inplace import (
    pods as cs_pods,
)

from kruise.sandbox.realnode import ocilayout, prereqs
from kruise.sandbox.realnode.network import DEFAULT_POD_SUBNET

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.containerd,
    pytest.mark.image,
    pytest.mark.slow,
    pytest.mark.timeout(900),
]

REPO = Path(__file__).resolve().parents[2]
CHART_RELEASE = "kruise"  # what the sandbox installs, in namespace default
HELM = Path(sys.executable).parent / "helm"
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
        # NodeImage is talked at its storage version: nothing of the daemon waits on, or fails in, the
        # conversion webhook while kruise-webhook starts and patches the CRDs' caBundle
        _, text = await cluster.kubectl("logs", "-n", NAMESPACE, name)
        assert "conversion webhook" not in text and "CERTIFICATE_VERIFY_FAILED" not in text, text


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def container_id(pod: dict) -> str:
    (status,) = pod["status"]["containerStatuses"]
    return status["containerID"].removeprefix("containerd://")


async def lease(cluster: Cluster) -> dict:
    _, out = await cluster.kubectl("get", "lease", "kruise-manager", "-n", NAMESPACE, "-o", "json")
    return json.loads(out)["spec"]


def pod_of(identity: str) -> str:
    return identity.rsplit("_", 1)[0]


async def test_figures_time_to_ready_and_idle_memory_per_container(
    image_cluster: tuple[Cluster, SandboxProcess], built_image: BuiltImage
) -> None:
    """Printed for docs/helm.md; asserted only to be figures of kruise-py's own six containers."""
    cluster, sandbox = image_cluster
    pods = await kruise_pods(cluster)
    assert len(pods) == 2 + 2 + NODES and all(ready(p) for p in pods)
    created = min(_time(p["metadata"]["creationTimestamp"]) for p in pods)
    readied = max(
        _time(c["lastTransitionTime"])
        for p in pods
        for c in p["status"]["conditions"]
        if c["type"] == "Ready"
    )
    took = (readied - created).total_seconds()
    print(f"\nFIGURE time from the chart's first kruise-system pod to all six Ready: {took:.0f} s")
    sockets = node_ctr.node_sockets(sandbox.process.pid)
    assert set(sockets) == {"node-1", "node-2"}, sockets
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        socket = sockets[pod["spec"]["nodeName"]]
        cid = container_id(pod)
        (held,) = [c for c in node_ctr.containers_of_image(socket, "kruise-py:") if c.id == cid]
        assert held.image == f"docker.io/library/kruise-py:{built_image.tag}", held
        pid = node_ctr.task_pid(socket, cid)
        assert pid > 0, (pod["metadata"]["name"], cid)
        used, source = node_ctr.memory_bytes(pid)
        assert used > 0
        name = pod["metadata"]["name"]
        print(f"FIGURE idle memory {role(pod):18} {name:40} {used / 2**20:6.1f} MiB ({source})")


async def test_seed_002_in_place_update_through_kruise_containers(
    image_cluster: tuple[Cluster, SandboxProcess],
) -> None:
    cluster, _ = image_cluster
    before = await create_seed_002_cloneset(cluster)
    await update_in_place(cluster, before)


async def test_killing_the_leader_managers_container_hands_the_lease_over(
    image_cluster: tuple[Cluster, SandboxProcess],
) -> None:
    cluster, sandbox = image_cluster
    held = await lease(cluster)
    leader_name = pod_of(held["holderIdentity"])
    _, out = await cluster.kubectl("get", "pod", "-n", NAMESPACE, leader_name, "-o", "json")
    leader = json.loads(out)
    assert role(leader) == "controller-manager"
    socket = node_ctr.node_sockets(sandbox.process.pid)[leader["spec"]["nodeName"]]
    killed = container_id(leader)
    node_ctr.kill(socket, killed)
    killed_at = time.monotonic()

    taken = await until(
        lambda: lease(cluster),
        lambda spec: spec.get("holderIdentity") not in (None, "", held["holderIdentity"]),
        "the Lease held by another identity",
        timeout=120,
    )
    handed_over = time.monotonic() - killed_at
    # the kubelet saw the real exit (137: SIGKILL) and restarted the container in the same pod
    restarted = await until(
        lambda: cluster.kubectl("get", "pod", "-n", NAMESPACE, leader_name, "-o", "json"),
        lambda got: json.loads(got[1])["status"]["containerStatuses"][0]["restartCount"] >= 1,
        f"{leader_name} restarted after the kill",
        timeout=120,
    )
    (status,) = json.loads(restarted[1])["status"]["containerStatuses"]
    assert status["lastState"]["terminated"]["containerID"] == f"containerd://{killed}", status
    assert status["lastState"]["terminated"]["exitCode"] == 137, status
    winner = pod_of(taken["holderIdentity"])
    print(
        f"\nFIGURE lease hand-over after SIGKILL of the leader's container: {handed_over:.1f} s "
        f"(leaseDurationSeconds {held.get('leaseDurationSeconds')}; new holder {winner}, "
        f"{'the standby' if winner != leader_name else 'the restarted container'})"
    )

    # work continues under the new leader: the CloneSet scales, the new pod on the bridge
    await cluster.kubectl("scale", "cloneset/cs-demo", "--replicas=4")
    await wait_updated(cluster, 4)
    assert len(await cs_pods(cluster)) == 4
    await delete_cloneset(cluster)


def helm_env(cluster: Cluster, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "KUBECONFIG": str(cluster.kubeconfig),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }


async def test_helm_upgrade_to_a_new_image_tag_rolls_every_kruise_pod(
    image_cluster: tuple[Cluster, SandboxProcess], built_image: BuiltImage, tmp_path: Path
) -> None:
    """The chart's Deployments and DaemonSet roll onto `kruise-py:<new tag>` (a distinct digest, see
    image_roll), keeping webhook and manager available; admission works during the roll; a CloneSet
    made before the upgrade is still reconciled by the new leader."""
    cluster, sandbox = image_cluster
    if not HELM.exists():
        pytest.skip("no helm binary in the venv (`make install` puts it there)")
    sockets = node_ctr.node_sockets(sandbox.process.pid)
    new_tag = f"{built_image.tag}-roll"
    new_image = image_roll.relabelled(ocilayout.load(built_image.layout).image, new_tag)
    assert new_image.digest != built_image.digest
    await image_roll.push_tag(
        image_roll.registry_url(sockets["node-1"]), "library/kruise-py", new_tag, new_image
    )
    await create_seed_002_cloneset(cluster)
    await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_SIDECARSET)
    old = {p["metadata"]["uid"] for p in await kruise_pods(cluster)}
    assert len(old) == 2 + 2 + NODES

    upgrade = asyncio.create_task(
        asyncio.to_thread(
            subprocess.run,
            [str(HELM), "upgrade", CHART_RELEASE, str(REPO / "helm" / "kruise"), "--namespace", "default",
             "--reuse-values", "--set", f"image.tag={new_tag}"],
            env=helm_env(cluster, tmp_path), capture_output=True, text=True, timeout=180, check=False,
        )
    )  # fmt: skip
    samples = image_roll.RollSamples()
    probe_created = False

    async def sample() -> list[dict]:
        nonlocal probe_created
        _, out = await cluster.kubectl("get", "pods", "-n", NAMESPACE, "-o", "json")
        _, eps = await cluster.kubectl(
            "get", "endpoints", "kruise-webhook-service", "-n", NAMESPACE, "-o", "json"
        )
        every = json.loads(out)["items"]
        samples.add(every, json.loads(eps))
        rolling = any(p["metadata"]["uid"] not in old for p in every)
        if rolling and not probe_created and any(p["metadata"]["uid"] in old for p in every):
            # mid-roll: old and new kruise pods side by side
            await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_POD)
            probe_created = True
        return [p for p in every if not p["metadata"].get("deletionTimestamp")]

    def rolled(pods: list[dict]) -> bool:
        return len(pods) == 2 + 2 + NODES and all(
            ready(p)
            and p["metadata"]["uid"] not in old
            and p["status"]["containerStatuses"][0]["imageID"]
            == f"docker.io/library/kruise-py@{new_image.digest}"
            for p in pods
        )

    pods = await until(sample, rolled, "every kruise-system pod replaced, Ready, on the new image", 300)
    done = await upgrade
    assert done.returncode == 0, done.stderr + done.stdout
    assert probe_created, "the roll was never observed with old and new pods side by side"
    for pod in pods:
        (spec,) = pod["spec"]["containers"]
        (status,) = pod["status"]["containerStatuses"]
        assert spec["image"] == f"kruise-py:{new_tag}", pod["metadata"]["name"]
        assert status["restartCount"] == 0, (pod["metadata"]["name"], status)
        socket = sockets[pod["spec"]["nodeName"]]
        held = [c for c in node_ctr.containers_of_image(socket, "kruise-py:") if c.id == container_id(pod)]
        assert [c.image for c in held] == [f"docker.io/library/kruise-py:{new_tag}"], held
    # the chart's strategies: Deployments surge one and keep both replicas Ready, the webhook Service
    # never empties, the DaemonSet replaces one node's daemon at a time
    print(
        f"\nFIGURE helm upgrade roll: {len(samples.endpoints)} samples, min Ready managers "
        f"{samples.minimum('controller-manager')}, webhooks {samples.minimum('webhook')}, daemons "
        f"{samples.minimum('daemon')}, webhook endpoints {min(samples.endpoints)}"
    )
    assert samples.minimum("controller-manager") >= 2, samples.ready
    assert samples.minimum("webhook") >= 2, samples.ready
    assert min(samples.endpoints) >= 1, samples.endpoints
    assert samples.minimum("daemon") >= NODES - 1, samples.ready

    # admission during the roll: the pod created with old and new webhooks side by side got the sidecar
    after = SEED_002_POD.replace("name: test-pod", "name: test-pod-after")
    await cluster.kubectl("apply", "-f", "-", stdin=after)
    injected = {}
    for name in ("test-pod", "test-pod-after"):
        _, out = await cluster.kubectl("get", "pod", name, "-o", "json")
        injected[name] = [c["name"] for c in json.loads(out)["spec"]["containers"]]
    webhook_logs = {}
    for pod in (p for p in pods if role(p) == "webhook"):
        _, text = await cluster.kubectl("logs", "-n", NAMESPACE, pod["metadata"]["name"])
        webhook_logs[pod["metadata"]["name"]] = text[-3000:]
    # zero pods admitted without injection (issue 28): mid-roll (a webhook whose caches re-list waits
    # for them rather than answering from a gap) and after the roll
    assert "sidecar1" in injected["test-pod"], (injected, webhook_logs)
    assert "sidecar1" in injected["test-pod-after"], (injected, webhook_logs)
    # one leader among the new managers, and it reconciles the CloneSet made before the upgrade
    managers = {p["metadata"]["name"] for p in pods if role(p) == "controller-manager"}
    held = await until(
        lambda: lease(cluster),
        lambda spec: pod_of(spec.get("holderIdentity") or "") in managers,
        "the Lease held by a new manager pod",
        timeout=120,
    )
    assert pod_of(held["holderIdentity"]) in managers
    await cluster.kubectl("scale", "cloneset/cs-demo", "--replicas=4")
    await wait_updated(cluster, 4)
    assert len(await cs_pods(cluster)) == 4
    await delete_cloneset(cluster)
    await cluster.kubectl("delete", "pod", "test-pod", "test-pod-after", "--wait=false")
    await cluster.kubectl("delete", "sidecarset", "test-sidecarset")


async def test_helm_uninstall_leaves_no_kruise_container_on_any_node(
    image_cluster: tuple[Cluster, SandboxProcess], tmp_path: Path
) -> None:
    cluster, sandbox = image_cluster
    if not HELM.exists():
        pytest.skip("no helm binary in the venv (`make install` puts it there)")
    sockets = node_ctr.node_sockets(sandbox.process.pid)
    assert all(node_ctr.containers_of_image(s, "kruise-py:") for s in sockets.values())
    env = helm_env(cluster, tmp_path)
    done = await asyncio.to_thread(
        subprocess.run,
        [str(HELM), "uninstall", CHART_RELEASE, "--wait", "--timeout", "120s"],
        env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout

    async def left() -> dict[str, list]:
        return {
            node: node_ctr.containers_of_image(socket, "kruise-py:")
            + node_ctr.containers_of_namespace(socket, NAMESPACE)
            for node, socket in sockets.items()
        }

    await until(
        left, lambda held: not any(held.values()), "no kruise container in any node's containerd", 120
    )
    assert await kruise_pods(cluster) == []
