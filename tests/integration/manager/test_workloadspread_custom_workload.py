"""WorkloadSpread on a whitelisted custom workload, on the emulator: a tiny GameSet CRD (replicas at
`spec.size`) whose pods come through GameShard children is listed in kruise-configuration's
`WorkloadSpread_Watch_Custom_Workload_WhiteList`. The pods are created by hand (no GameSet
controller) with a GameShard as controller; the live kruise-webhook places them into subsets
(subset-a holds 50% of the GameSet's size) and the WorkloadSpread controller books them in the
status, and re-resolves the percentage when the GameSet is resized."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.api.keys import CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.kube.resources import PODS, WORKLOADSPREADS, ResourceRef
from kruise.manager.controllers import workloadspread
from tests.kit.custom_workloads import controller_ref, install_whitelisted
from tests.kit.pods import pod
from tests.kit.polling import until

NS = "default"
GROUP = "demo.kruise-py.io"
GAMESETS = ResourceRef(GROUP, "v1", "gamesets", True, "GameSet")
SHARDS = ResourceRef(GROUP, "v1", "gameshards", True, "GameShard")
ZONE = "topology.kubernetes.io/zone"
MATCHED = "apps.kruise.io/matched-workloadspread"
WHITELIST = {
    "workloads": [
        {
            "group": GROUP,
            "version": "v1",
            "kind": "GameSet",
            "subResources": [{"group": GROUP, "version": "v1", "kind": "GameShard"}],
            "replicasPath": "spec.size",
        }
    ]
}


@pytest.fixture
def controller_setups():
    return [workloadspread.SETUP]


@pytest.fixture
async def custom_workloads(kruise_cluster) -> None:
    """The CRDs (served) and the whitelist, in place before kruise-webhook starts: its caches of the
    kinds are then filled before it is ready (test_workloadspread_custom_workload_late.py covers a
    whitelist written after start)."""
    await install_whitelisted(
        kruise_cluster.client,
        [GAMESETS, SHARDS],
        KEY,
        WHITELIST,
        namespace=NS,
        what="custom workload CRDs served",
    )


@pytest.fixture
def webhook_feature_gates(custom_workloads) -> str:
    """Default gates; asking for `custom_workloads` here sets them up before the `webhook` fixture."""
    return ""


def spread() -> dict[str, Any]:
    def zone(name: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [name]}]}

    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws-game", "namespace": NS},
        "spec": {
            "targetRef": {"apiVersion": f"{GROUP}/v1", "kind": "GameSet", "name": "game"},
            "subsets": [
                {"name": "subset-a", "requiredNodeSelectorTerm": zone("zone-a"), "maxReplicas": "50%"},
                {"name": "subset-b", "requiredNodeSelectorTerm": zone("zone-b")},
            ],
        },
    }


def shard_pod(name: str, shard: dict[str, Any]) -> dict[str, Any]:
    """A game pod the custom workload `shard` controls."""
    return pod(
        name,
        namespace=NS,
        labels={"app": "game"},
        owner=controller_ref(shard),
        containers=[{"name": "main", "image": "nginx"}],
        typed=True,
    )


async def test_custom_workload_pods_get_subsets_and_status_books(kruise_cluster, webhook):
    client = kruise_cluster.client
    game_set = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "GameSet",
        "metadata": {"name": "game"},
        "spec": {"size": 4},
    }
    game = await client.create(GAMESETS, game_set, NS)
    shard = await client.create(
        SHARDS,
        {"apiVersion": f"{GROUP}/v1", "kind": "GameShard",
         "metadata": {"name": "game-0", "ownerReferences": [controller_ref(game)]}},
        NS,
    )  # fmt: skip
    await client.create(WORKLOADSPREADS, spread(), NS)

    async def cached() -> bool:
        # the webhook places pods from its caches: wait until they hold the WorkloadSpread and shard
        caches = webhook.spreads
        return caches is not None and caches.spread(NS, "ws-game") is not None and caches.owner(
            {"apiVersion": f"{GROUP}/v1", "kind": "GameShard", "name": "game-0"}, NS
        ) is not None  # fmt: skip

    await until(cached, 30, 0.05, message="webhook caches hold the WorkloadSpread and the GameShard")

    placed = []
    for i in range(4):
        created = await client.create(PODS, shard_pod(f"game-{i}", shard), NS)
        placed.append(json.loads(created["metadata"]["annotations"][MATCHED])["subset"])
    # 50% of size 4: two pods in subset-a, the rest in subset-b
    assert placed == ["subset-a", "subset-a", "subset-b", "subset-b"]
    first = await client.get(PODS, "game-0", NS)
    term = first["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["zone-a"]

    async def books() -> list[tuple[str, int, int]]:
        status = (await client.get(WORKLOADSPREADS, "ws-game", NS)).get("status") or {}
        return [(s["name"], s["replicas"], s["missingReplicas"]) for s in status.get("subsetStatuses") or []]

    settled = [("subset-a", 2, 0), ("subset-b", 2, -1)]
    await kruise_cluster.until(books, lambda b: b == settled, timeout=60)

    # the GameSet grows to 8: subset-a may hold 4, the controller (woken by the GameSet) says so
    await client.patch(GAMESETS, "game", {"spec": {"size": 8}}, NS)
    grown = [("subset-a", 2, 2), ("subset-b", 2, -1)]
    await kruise_cluster.until(books, lambda b: b == grown, timeout=60)
