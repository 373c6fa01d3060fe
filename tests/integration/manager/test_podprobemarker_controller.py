"""PodProbeMarker and NodePodProbe controllers on the emulator: every node gets its NodePodProbe,
a marker's probes land in the NodePodProbe of each matching pod's node, results written into a
NodePodProbe's status (kruise-daemon's job, written by hand here) become the pod's condition and
marker-policy labels/annotations, and a deleted marker takes its probes away before it goes."""

from __future__ import annotations

import copy

import pytest

from kruise.daemon.cri.client import RuntimeClient
from kruise.daemon.podprobe.prober import PodProber
from kruise.kube.errors import NotFound
from kruise.kube.resources import NODE_POD_PROBES, NODES, POD_PROBE_MARKERS, PODS
from kruise.manager.controllers import nodepodprobe, podprobemarker
from kruise.sandbox.cri.model import ExecResult

NS = "default"


@pytest.fixture
def controller_setups():
    return [podprobemarker.SETUP, nodepodprobe.SETUP]


@pytest.fixture
def simulator_nodes():
    return 2


def pod_body(name, node, labels):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "main", "image": "nginx:alpine", "ports": [{"name": "http", "containerPort": 80}]}
            ],
        },
    }


MARKER = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "PodProbeMarker",
    "metadata": {"name": "game", "namespace": NS},
    "spec": {
        "selector": {"matchLabels": {"app": "game"}},
        "probes": [
            {
                "name": "idle",
                "containerName": "main",
                "probe": {"tcpSocket": {"port": "http"}, "periodSeconds": 5},
                "podConditionType": "game.io/idle",
                "markerPolicy": [
                    {"state": "Succeeded", "labels": {"gameserver-idle": "true"},
                     "annotations": {"controller.kubernetes.io/pod-deletion-cost": "-10"}},
                    {"state": "Failed", "labels": {"gameserver-idle": "false"},
                     "annotations": {"controller.kubernetes.io/pod-deletion-cost": "10"}},
                ],
            }
        ],
    },
}  # fmt: skip


async def test_probes_spread_results_marked_and_cleanup_on_deletion(kruise_cluster):
    client = kruise_cluster.client

    async def npp(node):
        try:
            return await client.get(NODE_POD_PROBES, node)
        except NotFound:
            return None

    for node in ("node-1", "node-2"):
        await kruise_cluster.until(lambda n=node: npp(n), lambda o: o is not None)
    await client.create(PODS, pod_body("g1", "node-1", {"app": "game"}), NS)
    await client.create(PODS, pod_body("g2", "node-2", {"app": "game"}), NS)
    await client.create(PODS, pod_body("other", "node-1", {"app": "web"}), NS)
    await client.create(POD_PROBE_MARKERS, MARKER, NS)

    def probes_of(obj):
        return {
            e["name"]: [p["name"] for p in e.get("probes") or []]
            for e in (obj or {}).get("spec", {}).get("podProbes") or []
        }

    first = await kruise_cluster.until(lambda: npp("node-1"), lambda o: probes_of(o) == {"g1": ["game#idle"]})
    await kruise_cluster.until(lambda: npp("node-2"), lambda o: probes_of(o) == {"g2": ["game#idle"]})
    entry = first["spec"]["podProbes"][0]
    g1 = await client.get(PODS, "g1", NS)
    assert entry["uid"] == g1["metadata"]["uid"] and entry["IP"] == g1["status"]["podIP"]
    assert entry["probes"][0] == {
        "name": "game#idle",
        "containerName": "main",
        "probe": {"tcpSocket": {"port": 80}, "periodSeconds": 5},
    }
    marker = await kruise_cluster.until(
        lambda: client.get(POD_PROBE_MARKERS, "game", NS),
        lambda m: (m.get("status") or {}).get("matchedPods") == 2,
    )
    assert marker["metadata"]["finalizers"] == ["kruise.io/node-pod-probe-cleanup"]
    assert marker["status"]["observedGeneration"] == marker["metadata"]["generation"]

    async def report(state, message):
        current = await client.get(NODE_POD_PROBES, "node-1")
        at = "2026-01-01T00:00:00Z"
        probe_state = {"name": "game#idle", "state": state, "message": message,
                       "lastProbeTime": at, "lastTransitionTime": at}  # fmt: skip
        uid = g1["metadata"]["uid"]
        pod_status = {"name": "g1", "namespace": NS, "uid": uid, "probeStates": [probe_state]}
        current["status"] = {"podProbeStatuses": [pod_status]}
        await client.update_status(NODE_POD_PROBES, current)

    def condition(pod):
        return next((c for c in pod["status"].get("conditions") or [] if c["type"] == "game.io/idle"), None)

    await report("Succeeded", "")
    marked = await kruise_cluster.until(
        lambda: client.get(PODS, "g1", NS), lambda p: (condition(p) or {}).get("status") == "True"
    )
    assert marked["metadata"]["labels"]["gameserver-idle"] == "true"
    assert marked["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] == "-10"
    await report("Failed", "connection refused")
    marked = await kruise_cluster.until(
        lambda: client.get(PODS, "g1", NS), lambda p: (condition(p) or {}).get("status") == "False"
    )
    assert condition(marked)["message"] == "connection refused"
    assert marked["metadata"]["labels"]["gameserver-idle"] == "false"
    assert any(c["type"] == "Ready" for c in marked["status"]["conditions"])  # kubelet's kept

    # A pod leaving the selector loses its probes; a deleted pod's entry is pruned.
    await client.patch(PODS, "g2", {"metadata": {"labels": {"app": "web"}}}, NS)
    await kruise_cluster.until(lambda: npp("node-2"), lambda o: probes_of(o) == {})
    await client.delete(PODS, "g1", NS, grace_period_seconds=0)
    await kruise_cluster.until(lambda: npp("node-1"), lambda o: probes_of(o) == {})
    await client.create(PODS, pod_body("g3", "node-1", {"app": "game"}), NS)
    await kruise_cluster.until(lambda: npp("node-1"), lambda o: probes_of(o) == {"g3": ["game#idle"]})

    await client.delete(POD_PROBE_MARKERS, "game", NS)

    async def gone():
        try:
            await client.get(POD_PROBE_MARKERS, "game", NS)
            return False
        except NotFound:
            return True

    await kruise_cluster.until(gone, bool)
    assert probes_of(await npp("node-1")) == {}


async def test_node_pod_probe_follows_its_node(kruise_cluster):
    client = kruise_cluster.client

    async def names():
        return sorted(o["metadata"]["name"] for o in (await client.list(NODE_POD_PROBES))["items"])

    await kruise_cluster.until(names, lambda n: n == ["node-1", "node-2"])
    await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "extra"}})
    virtual = {"name": "vk", "labels": {"type": "virtual-kubelet"}}
    await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": virtual})
    await kruise_cluster.until(names, lambda n: n == ["extra", "node-1", "node-2"])
    await client.delete(NODES, "extra")
    await kruise_cluster.until(names, lambda n: n == ["node-1", "node-2"])


async def test_end_to_end_with_the_daemon_prober(kruise_cluster):
    """Manager controllers and kruise-daemon's prober together: an exec probe answered by the node's
    fake CRI marks the pod, and a changed answer flips the marks."""
    client = kruise_cluster.client
    runtime = RuntimeClient(kruise_cluster.simulator.socket_path("node-1"))
    runtime.open()
    prober = PodProber(client, runtime, "node-1")
    prober.start()
    idle = {"now": True}
    kruise_cluster.simulator.runtimes["node-1"].exec_handler = lambda container, cmd: (
        ExecResult(exit_code=0) if idle["now"] else ExecResult(exit_code=1, stderr=b"match running")
    )
    try:
        await client.create(PODS, pod_body("g1", "node-1", {"app": "game"}), NS)
        marker = copy.deepcopy(MARKER)
        probe = marker["spec"]["probes"][0]
        probe["probe"] = {"exec": {"command": ["/idle.sh"]}, "periodSeconds": 1, "failureThreshold": 1}
        await client.create(POD_PROBE_MARKERS, marker, NS)

        def marks(pod):
            condition = next(
                (c for c in pod["status"].get("conditions") or [] if c["type"] == "game.io/idle"), {}
            )
            return condition.get("status"), pod["metadata"].get("labels", {}).get("gameserver-idle")

        await kruise_cluster.until(lambda: client.get(PODS, "g1", NS), lambda p: marks(p) == ("True", "true"))
        idle["now"] = False
        busy = await kruise_cluster.until(
            lambda: client.get(PODS, "g1", NS), lambda p: marks(p) == ("False", "false")
        )
        assert busy["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] == "10"
    finally:
        await prober.stop()
        await runtime.close()
