"""A custom workload whitelisted after kruise-webhook started, on the emulator: kruise-webhook starts
with no kruise-configuration at all; then the GameSet/GameShard CRDs and a
`WorkloadSpread_Watch_Custom_Workload_WhiteList` naming them appear (either order: the whitelist
before its kinds are served is followed once their CRDs are). Without a restart the webhook starts
caches for the kinds and places a GameShard-owned pod into the right subset, as upstream's webhook
does by starting an informer on the first read of a kind."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.api.keys import CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.api.keys import CONFIGMAP_KRUISE_CONFIGURATION
from kruise.kube.errors import NotFound
from kruise.kube.resources import CONFIGMAPS, CRDS, PODS, WORKLOADSPREADS
from kruise.manager.controllers import workloadspread
from kruise.webhook.caches import CacheNotCurrent
from tests.integration.manager.test_workloadspread_custom_workload import (
    GAMESETS,
    GROUP,
    NS,
    SHARDS,
    WHITELIST,
    shard_pod,
    spread,
)
from tests.kit.custom_workloads import controller_ref, open_crd
from tests.kit.polling import until

MATCHED = "apps.kruise.io/matched-workloadspread"


@pytest.fixture
def controller_setups():
    return [workloadspread.SETUP]


@pytest.fixture
def webhook_feature_gates() -> str:
    return ""


async def install_crds(client) -> None:
    for ref in (GAMESETS, SHARDS):
        await client.create(CRDS, open_crd(ref))

    async def served() -> bool:
        try:
            for ref in (GAMESETS, SHARDS):
                await client.list(ref, NS, limit=1)
        except NotFound:
            return False
        return True

    await until(served, 30, 0.05, message="custom workload CRDs served")


async def write_whitelist(client) -> None:
    config_map = {"metadata": {"name": CONFIGMAP_KRUISE_CONFIGURATION}, "data": {KEY: json.dumps(WHITELIST)}}
    await client.create(CONFIGMAPS, config_map, "kruise-system")


async def create_game(client) -> dict[str, Any]:
    """The GameSet (size 4) and its one GameShard; returns the shard."""
    game_set = {"apiVersion": f"{GROUP}/v1", "kind": "GameSet", "metadata": {"name": "game"}}
    game = await client.create(GAMESETS, {**game_set, "spec": {"size": 4}}, NS)
    return await client.create(
        SHARDS,
        {"apiVersion": f"{GROUP}/v1", "kind": "GameShard",
         "metadata": {"name": "game-0", "ownerReferences": [controller_ref(game)]}},
        NS,
    )  # fmt: skip


@pytest.mark.parametrize("whitelist_first", [False, True], ids=["crds-then-whitelist", "whitelist-then-crds"])
async def test_kind_whitelisted_after_start_is_followed(kruise_cluster, webhook, whitelist_first):
    client = kruise_cluster.client
    caches = webhook.spreads
    assert caches is not None and not caches.follows(GROUP, "GameShard")
    if whitelist_first:
        await write_whitelist(client)
        await install_crds(client)
    else:
        await install_crds(client)
        await write_whitelist(client)
    shard = await create_game(client)
    await client.create(WORKLOADSPREADS, spread(), NS)  # its targetRef's kind must be whitelisted

    async def cached() -> bool:
        # the webhook places pods from its caches: wait until they hold the WorkloadSpread and shard
        if caches.spread(NS, "ws-game") is None:
            return False
        if not (caches.follows(GROUP, "GameSet") and caches.follows(GROUP, "GameShard")):
            return False
        try:
            ref = {"apiVersion": f"{GROUP}/v1", "kind": "GameShard", "name": "game-0"}
            return caches.owner(ref, NS) is not None
        except CacheNotCurrent:
            return False

    await until(cached, 30, 0.05, message="webhook follows GameShard and GameSet and caches the shard")

    placed = []
    for i in range(3):
        created = await client.create(PODS, shard_pod(f"game-{i}", shard), NS)
        placed.append(json.loads(created["metadata"]["annotations"][MATCHED])["subset"])
    # 50% of the GameSet's size 4, read from the late GameSet cache: two in subset-a, then subset-b
    assert placed == ["subset-a", "subset-a", "subset-b"]
