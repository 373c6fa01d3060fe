"""PersistentPodState on a whitelisted custom workload, on the emulator: a tiny statefulset-like
GameServerSet CRD (`spec.replicas`, no controller of its own — its pods `<name>-<ordinal>` are made by
hand with it as controller) is listed in kruise-configuration's `PPS_Watch_Custom_Workload_WhiteList`
after the manager started. The controller then watches the kind (the GameServerSet's
auto-generation annotations give it its PersistentPodState), records each Ready pod's node, and the
live kruise-webhook sends a recreated pod back to that node; a scaled-in ordinal's record is dropped
once its pod is gone."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.api.keys import CONFIG_PPS_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.kube.errors import NotFound
from kruise.kube.resources import PERSISTENT_POD_STATES, PODS, ResourceRef
from kruise.manager.controllers import persistentpodstate
from tests.kit.custom_workloads import controller_ref, install_whitelisted
from tests.kit.pods import pod
from tests.kit.polling import until

NS = "default"
GROUP = "demo.kruise-py.io"
GAMES = ResourceRef(GROUP, "v1", "gameserversets", True, "GameServerSet")
HOST = "kubernetes.io/hostname"
WHITELIST = {"workloads": [{"group": GROUP, "version": "v1", "kind": "GameServerSet"}]}


@pytest.fixture
def controller_setups():
    return [persistentpodstate.SETUP]


@pytest.fixture
async def custom_workload(kruise_cluster) -> None:
    """The CRD (served) and the whitelist, in place before kruise-webhook starts."""
    await install_whitelisted(
        kruise_cluster.client, [GAMES], KEY, WHITELIST, namespace=NS, what="GameServerSet CRD served"
    )


@pytest.fixture
def webhook_feature_gates(custom_workload) -> str:
    """Default gates; asking for `custom_workload` here sets it up before the `webhook` fixture."""
    return ""


def game_pod(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    """A pod the custom workload `owner` controls."""
    return pod(
        name,
        namespace=NS,
        owner=controller_ref(owner),
        containers=[{"name": "main", "image": "nginx"}],
        typed=True,
    )


async def test_custom_workload_pods_nodes_recorded_and_restored(kruise_cluster, webhook):
    client = kruise_cluster.client
    game = await client.create(
        GAMES,
        {"apiVersion": f"{GROUP}/v1", "kind": "GameServerSet",
         "metadata": {"name": "game", "annotations": {
             "kruise.io/auto-generate-persistent-pod-state": "true",
             "kruise.io/required-persistent-topology": HOST}},
         "spec": {"replicas": 3}},
        NS,
    )  # fmt: skip

    async def pps() -> dict[str, Any] | None:
        try:
            return await client.get(PERSISTENT_POD_STATES, "game", NS)
        except NotFound:
            return None

    generated = await kruise_cluster.until(pps, lambda p: p is not None, timeout=60)
    target = {"apiVersion": f"{GROUP}/v1", "kind": "GameServerSet", "name": "game"}
    assert generated["spec"]["targetRef"] == target
    assert generated["metadata"]["ownerReferences"][0]["uid"] == game["metadata"]["uid"]

    for i in range(3):
        await client.create(PODS, game_pod(f"game-{i}", game), NS)

    def states(p: dict[str, Any] | None) -> dict[str, Any]:
        return ((p or {}).get("status") or {}).get("podStates") or {}

    recorded = states(await kruise_cluster.until(pps, lambda p: len(states(p)) == 3, timeout=60))
    for i in range(3):
        running = await client.get(PODS, f"game-{i}", NS)
        node = running["spec"]["nodeName"]
        assert recorded[f"game-{i}"] == {"nodeName": node, "nodeTopologyLabels": {HOST: node}}

    # game-1 is recreated: kruise-webhook pins it to the node it ran on
    await client.delete(PODS, "game-1", NS, grace_period_seconds=0)

    async def gone(name: str) -> bool:
        try:
            await client.get(PODS, name, NS)
        except NotFound:
            return True
        return False

    await until(lambda: gone("game-1"), 60, 0.05, message="game-1 deleted")
    again = await client.create(PODS, game_pod("game-1", game), NS)
    node = recorded["game-1"]["nodeName"]
    assert again["spec"]["nodeSelector"] == {HOST: node}
    assert again["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"] == "game"

    async def scheduled() -> str | None:
        return (await client.get(PODS, "game-1", NS))["spec"].get("nodeName")

    assert await kruise_cluster.until(scheduled, lambda n: n is not None, timeout=60) == node

    # scaled in to 2 (read from the GameServerSet's spec.replicas): game-2's record goes with its pod
    await client.patch(GAMES, "game", {"spec": {"replicas": 2}}, NS)
    await client.delete(PODS, "game-2", NS, grace_period_seconds=0)
    settled = await kruise_cluster.until(pps, lambda p: sorted(states(p)) == ["game-0", "game-1"], timeout=60)
    assert states(settled)["game-1"]["nodeName"] == node
