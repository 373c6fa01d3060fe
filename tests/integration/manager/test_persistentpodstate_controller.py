"""PersistentPodState controller on the emulator with the Advanced StatefulSet controller: a
StatefulSet annotated for it gets its own PersistentPodState, each Ready pod's node and topology
labels are recorded, and records of scaled-in ordinals are dropped once their pods are gone."""

from __future__ import annotations

import pytest

from kruise.kube.errors import NotFound
from kruise.kube.resources import ADVANCED_STATEFULSETS, NODES, PERSISTENT_POD_STATES, PODS
from kruise.manager.controllers import persistentpodstate, statefulset
from tests.integration.manager.test_statefulset_controller import manifest

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def controller_setups():
    return [statefulset.SETUP, persistentpodstate.SETUP]


async def test_statefulset_pods_topology_recorded_and_scaled_in_records_dropped(kruise_cluster):
    client = kruise_cluster.client
    body = manifest("web", replicas=3)
    body["metadata"]["annotations"] = {
        "kruise.io/auto-generate-persistent-pod-state": "true",
        "kruise.io/required-persistent-topology": HOST,
        "kruise.io/preferred-persistent-topology": ZONE,
    }
    await client.create(ADVANCED_STATEFULSETS, body, "default")

    async def pps():
        try:
            return await client.get(PERSISTENT_POD_STATES, "web", "default")
        except NotFound:
            return None

    state = await kruise_cluster.until(
        pps, lambda p: p is not None and len((p.get("status") or {}).get("podStates") or {}) == 3, timeout=60
    )
    assert state["spec"]["preferredPersistentTopology"] == [
        {"weight": 100, "preference": {"nodeTopologyKeys": [ZONE]}}
    ]
    assert state["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    pods = {p["metadata"]["name"]: p for p in (await client.list(PODS, "default"))["items"]}
    nodes = {n["metadata"]["name"]: n for n in (await client.list(NODES))["items"]}
    for name, recorded in state["status"]["podStates"].items():
        node_name = pods[name]["spec"]["nodeName"]
        labels = nodes[node_name]["metadata"]["labels"]
        assert recorded == {
            "nodeName": node_name,
            "nodeTopologyLabels": {HOST: labels[HOST], ZONE: labels[ZONE]},
        }

    await client.patch(ADVANCED_STATEFULSETS, "web", {"spec": {"replicas": 1}}, "default")
    state = await kruise_cluster.until(
        pps, lambda p: sorted(p["status"].get("podStates") or {}) == ["web-0"], timeout=60
    )
    assert state["status"]["observedGeneration"] == state["metadata"]["generation"]
