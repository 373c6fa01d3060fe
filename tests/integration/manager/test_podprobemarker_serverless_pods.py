"""Gate EnablePodProbeMarkerOnServerless on the emulator: a pod bound to a virtual-kubelet node gets
its marker's probes in `kruise.io/podprobe` from kruise-webhook, no NodePodProbe entry, and the
marker policy of the condition its (hand-played) serverless runtime reports, from the PodProbeMarker
controller; a normal pod of the same marker still gets its NodePodProbe entry."""

from __future__ import annotations

import json

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import NODE_POD_PROBES, NODES, POD_PROBE_MARKERS, PODS
from kruise.manager.controllers import nodepodprobe, podprobemarker

NS = "default"
GATE = "EnablePodProbeMarkerOnServerless"

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
                "probe": {"exec": {"command": ["/idle.sh"]}, "periodSeconds": 5},
                "podConditionType": "game.io/idle",
                "markerPolicy": [
                    {"state": "Succeeded", "labels": {"gameserver-idle": "true"},
                     "annotations": {"controller.kubernetes.io/pod-deletion-cost": "-10"}},
                    {"state": "Failed", "labels": {"gameserver-idle": "false"}},
                ],
            }
        ],
    },
}  # fmt: skip


@pytest.fixture
def controller_setups():
    return [podprobemarker.SETUP, nodepodprobe.SETUP]


@pytest.fixture
def simulator_nodes():
    return 1


@pytest.fixture
def feature_gates():
    return FeatureGates({GATE: True}, env={})


@pytest.fixture
def webhook_feature_gates():
    return f"{GATE}=true"


def pod_body(name, node):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "game"}},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "nginx:alpine"}]},
    }


async def test_serverless_pod_is_marked_from_its_condition_and_has_no_node_pod_probe(kruise_cluster, webhook):
    client = kruise_cluster.client
    virtual = {"name": "vk-1", "labels": {"type": "virtual-kubelet"}}
    await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": virtual})
    await client.create(POD_PROBE_MARKERS, MARKER, NS)
    # kruise-webhook reads markers from its cache: wait until it holds this one
    await kruise_cluster.until(lambda: _markers_seen(webhook), bool)

    await client.create(PODS, pod_body("normal", "node-1"), NS)
    serverless = await client.create(PODS, pod_body("vk-pod", "vk-1"), NS)
    annotations = serverless["metadata"]["annotations"]
    assert json.loads(annotations["kruise.io/podprobe"]) == [
        {
            "name": "idle",
            "containerName": "main",
            "probe": {"exec": {"command": ["/idle.sh"]}, "periodSeconds": 5},
            "podConditionType": "game.io/idle",
        }
    ]
    assert annotations["kruise.io/podprobemarker-list"] == "game"

    async def report(conditions):
        """The serverless runtime: the pod runs, is initialized, and reports probe conditions."""
        pod = await client.get(PODS, "vk-pod", NS)
        pod["status"] = {
            "phase": "Running",
            "podIP": "10.9.0.1",
            "conditions": [{"type": "Initialized", "status": "True"}, *conditions],
        }
        await client.update_status(PODS, pod)

    await report([])
    marker = await kruise_cluster.until(
        lambda: client.get(POD_PROBE_MARKERS, "game", NS),
        lambda m: (m.get("status") or {}).get("matchedPods") == 2,
    )
    assert marker["status"]["observedGeneration"] == marker["metadata"]["generation"]

    def entries(npp):
        return sorted(e["name"] for e in (npp.get("spec") or {}).get("podProbes") or [])

    await kruise_cluster.until(
        lambda: client.get(NODE_POD_PROBES, "node-1"), lambda o: entries(o) == ["normal"]
    )
    probes = (await client.list(NODE_POD_PROBES))["items"]
    assert [o["metadata"]["name"] for o in probes] == ["node-1"]  # none for the virtual-kubelet node

    def idle(pod):
        return (pod["metadata"].get("labels") or {}).get("gameserver-idle")

    await report([{"type": "game.io/idle", "status": "True", "message": "idle"}])
    marked = await kruise_cluster.until(lambda: client.get(PODS, "vk-pod", NS), lambda p: idle(p) == "true")
    assert marked["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] == "-10"
    await report([{"type": "game.io/idle", "status": "False", "message": "busy"}])
    marked = await kruise_cluster.until(lambda: client.get(PODS, "vk-pod", NS), lambda p: idle(p) == "false")
    # as upstream, marks are added or overwritten, never removed
    assert marked["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] == "-10"
    normal = await client.get(PODS, "normal", NS)
    assert "kruise.io/podprobe" in normal["metadata"]["annotations"]  # the webhook cannot tell yet
    assert idle(normal) is None
    npp = await client.get(NODE_POD_PROBES, "node-1")
    assert entries(npp) == ["normal"]


async def _markers_seen(webhook) -> bool:
    return bool(webhook.probe_markers.in_namespace(NS))
