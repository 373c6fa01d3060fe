"""WorkloadSpread end to end on the emulator: the CloneSet controller creates pods, the live
kruise-webhook places them into subsets (zone-a holds at most 2, zone-b the rest) and books them,
and the WorkloadSpread controller settles the status from the pods and writes deletion costs so a
scale-in removes zone-b pods before zone-a's (tutorial scenario: WorkloadSpread on a CloneSet)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.kube.resources import CLONESETS, WORKLOADSPREADS
from kruise.manager.controllers import cloneset, workloadspread
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of

ZONE = "topology.kubernetes.io/zone"
MATCHED = "apps.kruise.io/matched-workloadspread"
COST = "controller.kubernetes.io/pod-deletion-cost"


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP, workloadspread.SETUP]


def spread() -> dict[str, Any]:
    def zone(name: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [name]}]}

    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws-demo", "namespace": NS},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": [
                {"name": "subset-a", "requiredNodeSelectorTerm": zone("zone-a"), "maxReplicas": 2},
                {"name": "subset-b", "requiredNodeSelectorTerm": zone("zone-b")},
            ],
        },
    }


def subset(pod: dict[str, Any]) -> str:
    return json.loads(pod["metadata"]["annotations"][MATCHED])["subset"]


async def test_cloneset_pods_spread_by_zone_with_costs_and_zone_b_scaled_in_first(kruise_cluster, webhook):
    client = kruise_cluster.client
    await client.create(WORKLOADSPREADS, spread(), NS)
    await client.create(CLONESETS, manifest("web", replicas=5), NS)

    def settled(pods: list[dict[str, Any]]) -> bool:
        costs = [(p["metadata"].get("annotations") or {}).get(COST) for p in pods]
        return len(pods) == 5 and all(costs)

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "web"), settled, timeout=60)
    by_subset: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        by_subset.setdefault(subset(pod), []).append(pod)
    assert sorted((k, len(v)) for k, v in by_subset.items()) == [("subset-a", 2), ("subset-b", 3)]
    for pod in by_subset["subset-a"]:
        term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["zone-a"]
        assert pod["metadata"]["annotations"][COST] == "200"
    assert {p["metadata"]["annotations"][COST] for p in by_subset["subset-b"]} == {"100"}

    async def status() -> dict[str, Any]:
        return (await client.get(WORKLOADSPREADS, "ws-demo", NS)).get("status") or {}

    def counted(s: dict[str, Any]) -> bool:
        return [(x["name"], x["replicas"], x["missingReplicas"]) for x in s.get("subsetStatuses") or []] == [
            ("subset-a", 2, 0), ("subset-b", 3, -1),
        ]  # fmt: skip

    settled_status = await kruise_cluster.until(status, counted, timeout=60)
    assert settled_status["observedGeneration"] == 1

    await client.patch(CLONESETS, "web", {"spec": {"replicas": 3}}, NS)

    def scaled_in(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == 3

    left = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "web"), scaled_in, timeout=60)
    assert sorted(subset(p) for p in left) == ["subset-a", "subset-a", "subset-b"]
    names = {p["metadata"]["name"] for p in left}
    assert {p["metadata"]["name"] for p in by_subset["subset-a"]} <= names
