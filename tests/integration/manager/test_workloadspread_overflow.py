"""WorkloadSpread pods created while no subset has room, on the emulator: with both subsets full
(zone-a holds 2, zone-b 3) a CloneSet scales up, so the live kruise-webhook admits the new pods
without the `apps.kruise.io/matched-workloadspread` annotation and without a subset's node term.
The simulator has two nodes (node-1 zone-a, node-2 zone-b), so each such pod lands in a zone a
subset requires; the WorkloadSpread controller then adopts it into that subset. The annotation must
stick in the apiserver (no other writer may drop it) and the status must count exactly the pods the
annotations name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.control.workloadspread.subsets import VERSION_IGNORED
from kruise.kube.resources import CLONESETS, NODES, WORKLOADSPREADS
from kruise.manager.controllers import cloneset, workloadspread
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of, ready
from tests.integration.manager.test_workloadspread_controller import COST, MATCHED, ZONE, spread

pytestmark = pytest.mark.asyncio
FULL = 5
SCALED = 8


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP, workloadspread.SETUP]


@pytest.fixture
def simulator_nodes() -> int:
    return 2


def subset(pod: dict[str, Any]) -> str | None:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED)
    return json.loads(raw)["subset"] if raw else None


def counts(statuses: list[dict[str, Any]]) -> dict[str, int]:
    return {s["name"]: s["replicas"] for s in statuses}


async def test_pods_admitted_without_room_are_adopted_and_keep_the_annotation(kruise_cluster, webhook):
    client = kruise_cluster.client
    ws = spread()
    ws["spec"]["subsets"][1]["maxReplicas"] = 3
    await client.create(WORKLOADSPREADS, ws, NS)
    await client.create(CLONESETS, manifest("web", replicas=FULL), NS)

    async def status() -> dict[str, Any]:
        return (await client.get(WORKLOADSPREADS, "ws-demo", NS)).get("status") or {}

    def books_quiet(s: dict[str, Any], want: dict[str, int]) -> bool:
        overall = s.get("subsetStatuses") or []
        versioned = (s.get("versionedSubsetStatuses") or {}).get(VERSION_IGNORED) or []
        pending = [x for x in (*overall, *versioned) if x.get("deletingPods") or x.get("creatingPods")]
        return counts(overall) == want and counts(versioned) == want and not pending

    await kruise_cluster.until(status, lambda s: books_quiet(s, {"subset-a": 2, "subset-b": 3}), timeout=60)
    first = {p["metadata"]["name"] for p in await pods_of(kruise_cluster, "web")}
    assert len(first) == FULL

    await client.patch(CLONESETS, "web", {"spec": {"replicas": SCALED}}, NS)

    def bound(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == SCALED and all(p["spec"].get("nodeName") for p in pods)

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "web"), bound, timeout=60)
    extra = [p for p in pods if p["metadata"]["name"] not in first]
    assert len(extra) == SCALED - FULL
    # admitted with no room: no node term was injected, so the scheduler picked any zone
    assert all(not (p["spec"].get("affinity") or {}).get("nodeAffinity") for p in extra)
    nodes = (await client.list(NODES))["items"]
    zones = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in nodes}
    expected = {
        p["metadata"]["name"]: {"zone-a": "subset-a", "zone-b": "subset-b"}[zones[p["spec"]["nodeName"]]]
        for p in extra
    }

    # as upstream, an unannotated pod wakes no WorkloadSpread: touch the WorkloadSpread to run a pass
    # now that the pods are bound (upstream would adopt them on its next pass, whatever wakes it)
    await client.patch(WORKLOADSPREADS, "ws-demo", {"metadata": {"labels": {"touched": "1"}}}, NS)

    def adopted(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == SCALED and all(subset(p) is not None for p in pods)

    await kruise_cluster.until(lambda: pods_of(kruise_cluster, "web"), adopted, timeout=60)
    want = {"subset-a": 2 + list(expected.values()).count("subset-a")}
    want["subset-b"] = 3 + list(expected.values()).count("subset-b")
    await kruise_cluster.until(status, lambda s: books_quiet(s, want), timeout=60)

    # Later writers (the kubelet's pods/status PUTs as the pods start, the CloneSet's lifecycle and
    # condition writes, the deletion-cost patches) must not drop the adoption: once every pod runs
    # ready with its cost, every pod still names its subset and the books count exactly those.
    def running(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == SCALED and all(
            ready(p) and COST in (p["metadata"].get("annotations") or {}) for p in pods
        )

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "web"), running, timeout=60)
    assert {p["metadata"]["name"]: subset(p) for p in pods if p["metadata"]["name"] in expected} == expected
    annotated = [subset(p) for p in pods]
    assert {name: annotated.count(name) for name in want} == want
    assert books_quiet(await status(), want)
