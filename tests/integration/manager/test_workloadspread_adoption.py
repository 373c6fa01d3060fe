"""WorkloadSpread adopting pods created before it, on the emulator: a CloneSet's pods are scheduled
over the simulator's three zones (node-1 zone-a, node-2 zone-b, node-3 zone-c) with no WorkloadSpread
in place; a WorkloadSpread created afterwards makes the controller annotate each pod with the subset
its node's zone requires, write subset-b's patch labels onto subset-b's pods, leave zone-c's pods in
no subset, and count the pods in the subsets' status (zone-a over its quota of 1 when it holds more)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.kube.resources import CLONESETS, NODES, PODS, WORKLOADSPREADS
from kruise.manager.controllers import cloneset, workloadspread
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of

ZONE = "topology.kubernetes.io/zone"
MATCHED = "apps.kruise.io/matched-workloadspread"
COST = "controller.kubernetes.io/pod-deletion-cost"
REPLICAS = 6


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP, workloadspread.SETUP]


def spread() -> dict[str, Any]:
    def zone(name: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [name]}]}

    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws-late", "namespace": NS},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "old"},
            "subsets": [
                {"name": "subset-a", "requiredNodeSelectorTerm": zone("zone-a"), "maxReplicas": 1},
                {
                    "name": "subset-b",
                    "requiredNodeSelectorTerm": zone("zone-b"),
                    "patch": {"metadata": {"labels": {"pool": "b"}}},
                },
            ],
        },
    }


def subset(pod: dict[str, Any]) -> str | None:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED)
    return json.loads(raw)["subset"] if raw else None


async def test_pods_created_before_the_spread_are_adopted_by_zone_and_counted(kruise_cluster):
    client = kruise_cluster.client
    await client.create(CLONESETS, manifest("old", replicas=REPLICAS), NS)

    def bound(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == REPLICAS and all(p["spec"].get("nodeName") for p in pods)

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "old"), bound, timeout=60)
    assert all(subset(p) is None for p in pods)
    names = {p["metadata"]["name"] for p in pods}
    cache = kruise_cluster.context.informers.informer(PODS)

    async def cached() -> list[dict[str, Any]]:
        return [p for p in cache.list() if p["metadata"]["name"] in names]

    # the controller reads pods and their nodes from its caches: let them catch up first
    await kruise_cluster.until(cached, bound, timeout=30)
    zones = {
        n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in (await client.list(NODES))["items"]
    }
    expected = {
        p["metadata"]["name"]: {"zone-a": "subset-a", "zone-b": "subset-b"}.get(zones[p["spec"]["nodeName"]])
        for p in pods
    }

    # the simulator's scheduler spreads six pods over the three zones
    assert set(expected.values()) == {"subset-a", "subset-b", None}

    await client.create(WORKLOADSPREADS, spread(), NS)

    def adopted(current: list[dict[str, Any]]) -> bool:
        costed = all((p["metadata"].get("annotations") or {}).get(COST) for p in current)
        return costed and {p["metadata"]["name"]: subset(p) for p in current} == expected

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "old"), adopted, timeout=60)
    for pod in pods:
        assert (pod["metadata"]["labels"].get("pool") == "b") is (subset(pod) == "subset-b")
        if subset(pod):
            assert json.loads(pod["metadata"]["annotations"][MATCHED]) == {
                "name": "ws-late",
                "subset": subset(pod),
            }
    in_a = sum(1 for s in expected.values() if s == "subset-a")
    in_b = sum(1 for s in expected.values() if s == "subset-b")
    costs: dict[str | None, set[str]] = {subset(p): set() for p in pods}
    for pod in pods:
        costs[subset(pod)].add(pod["metadata"]["annotations"][COST])
    assert costs[None] == {"-300"}  # in no subset: ranked last for scale-in
    assert costs["subset-b"] == {"100"}
    # subset-a keeps its quota of one at 200; any more zone-a pods are over quota
    assert "200" in costs["subset-a"] and costs["subset-a"] <= {"200", "-100"}

    async def status() -> dict[str, Any]:
        return (await client.get(WORKLOADSPREADS, "ws-late", NS)).get("status") or {}

    want = [("subset-a", in_a, max(1 - in_a, 0)), ("subset-b", in_b, -1)]

    def counted(s: dict[str, Any]) -> bool:
        return [
            (x["name"], x["replicas"], x["missingReplicas"]) for x in s.get("subsetStatuses") or []
        ] == want

    settled = await kruise_cluster.until(status, counted, timeout=60)
    assert settled["observedGeneration"] == 1
    assert [(x["name"], x["replicas"]) for x in settled["versionedSubsetStatuses"]["versionIgnored"]] == [
        ("subset-a", in_a),
        ("subset-b", in_b),
    ]
