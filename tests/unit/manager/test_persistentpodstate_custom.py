"""PersistentPodStateReconciler and its pod wake-ups with kruise-configuration's
PPS_Watch_Custom_Workload_WhiteList: a whitelisted kind's resource is found from its CRD and watched
once, its pods are recorded against its `spec.replicas`, a bad whitelist fails the pass, and a pod
controlled by a whitelisted kind wakes its PersistentPodState."""

from __future__ import annotations

import json
from functools import partial

import pytest

from kruise.api.keys import CONFIG_PPS_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.control.common.customworkloads import WhitelistError, parse_pps_whitelist
from kruise.kube.resources import CRDS, NODES, PERSISTENT_POD_STATES, PODS, ResourceRef
from kruise.manager.controllers.persistentpodstate.controller import configuration_handlers, pod_handlers
from kruise.manager.controllers.persistentpodstate.reconciler import (
    FOLLOW_CUSTOM_WORKLOADS,
    PersistentPodStateReconciler,
)
from tests.kit import FakeInformer, RecordingClient
from tests.kit.pods import controller_ref, pod

HOST = "kubernetes.io/hostname"
GAMES = ResourceRef("demo.io", "v1", "gameserversets", True, "GameServerSet")
WHITELIST = {KEY: json.dumps({"workloads": [{"group": "demo.io", "version": "v1", "kind": "GameServerSet"}]})}
CRD = {
    "metadata": {"name": "gameserversets.demo.io"},
    "spec": {"group": "demo.io", "names": {"kind": "GameServerSet", "plural": "gameserversets"},
             "scope": "Namespaced", "versions": [{"name": "v1", "served": True}]},
}  # fmt: skip
GAME = controller_ref("GameServerSet", "game", api_version="demo.io/v1")
# a running pod of the GameServerSet on node-1
game_pod = partial(pod, rv=1, owner=GAME, node="node-1", phase="Running", ready=True)


def game(replicas: int | None = 2) -> dict:
    spec = {} if replicas is None else {"replicas": replicas}
    meta = {"name": "game", "namespace": "default", "uid": "uid-game"}
    return {"apiVersion": "demo.io/v1", "kind": "GameServerSet", "metadata": meta, "spec": spec}


def pps(status: dict | None = None) -> dict:
    obj = {
        "metadata": {"name": "game", "namespace": "default"},
        "spec": {"targetRef": {"apiVersion": "demo.io/v1", "kind": "GameServerSet", "name": "game"},
                 "requiredPersistentTopology": {"nodeTopologyKeys": [HOST]}},
    }  # fmt: skip
    if status is not None:
        obj["status"] = status
    return obj


class ListingClient(RecordingClient):
    """RecordingClient with the one list the reconciler makes: the CRDs, to find a kind's resource."""

    async def list(self, resource: ResourceRef, namespace: str | None = None, **_: object) -> dict:
        assert resource == CRDS
        return {"items": [obj for (ref, _, _), obj in self._objects.items() if ref == resource]}


class Harness:
    def __init__(self, pods=(), workload=None, configuration=WHITELIST, crd=True, status=None):
        self.client = ListingClient()
        self.states, self.pods, self.nodes = FakeInformer(), FakeInformer(), FakeInformer()
        self.client.put(PERSISTENT_POD_STATES, pps(status))
        self.client.put(PODS, *pods)
        self.client.put(NODES, {"metadata": {"name": "node-1", "labels": {HOST: "node-1"}}})
        if crd:
            self.client.put(CRDS, CRD)
        if workload is not None:
            self.client.put(GAMES, workload)
        for ref, informer in ((PERSISTENT_POD_STATES, self.states), (PODS, self.pods), (NODES, self.nodes)):
            self.client.sync(ref, informer)
        self.followed: list[ResourceRef] = []
        self.reconciler = PersistentPodStateReconciler(
            self.client, states=self.states, pods=self.pods, nodes=self.nodes, workloads={},
            configuration=lambda: configuration, follow=self.followed.append,
        )  # fmt: skip

    def status(self) -> dict:
        return self.client.object(PERSISTENT_POD_STATES, "game", "default").get("status") or {}


async def test_custom_workload_pods_recorded_and_its_kind_followed_once() -> None:
    h = Harness([game_pod("game-0"), game_pod("game-1")], game())
    await h.reconciler.reconcile("default/game")
    assert sorted(h.status()["podStates"]) == ["game-0", "game-1"]
    assert h.status()["podStates"]["game-0"] == {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1"}}
    await h.reconciler.reconcile("default/game")
    assert [(r.group, r.plural) for r in h.followed] == [("demo.io", "gameserversets")]


async def test_records_beyond_spec_replicas_dropped_when_their_pods_are_gone() -> None:
    node = {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1"}}
    status = {"podStates": {"game-0": node, "game-1": node, "game-2": node}}
    h = Harness([game_pod("game-0")], game(replicas=1), status=status)
    await h.reconciler.reconcile("default/game")
    assert sorted(h.status()["podStates"]) == ["game-0"]
    # no spec.replicas reads as 0, as upstream: every record whose pod is gone goes
    h = Harness([game_pod("game-0")], game(replicas=None), status=status)
    await h.reconciler.reconcile("default/game")
    assert sorted(h.status()["podStates"]) == ["game-0"]


async def test_missing_workload_clears_records_and_unwhitelisted_target_is_ignored() -> None:
    node = {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1"}}
    h = Harness([game_pod("game-0")], None, status={"podStates": {"game-0": node}})
    await h.reconciler.reconcile("default/game")
    assert "podStates" not in h.status()
    h = Harness([game_pod("game-0")], game(), configuration={})
    await h.reconciler.reconcile("default/game")
    assert "podStates" not in h.status()
    assert h.followed == []


async def test_bad_whitelist_or_kind_without_a_resource_fails_the_pass() -> None:
    with pytest.raises(WhitelistError):
        await Harness([], game(), configuration={KEY: "{"}).reconciler.reconcile("default/game")
    with pytest.raises(LookupError, match=r"no resource serves GameServerSet\.demo\.io/v1"):
        await Harness([], game(), crd=False).reconciler.reconcile("default/game")


async def test_follow_request_watches_every_whitelisted_kind() -> None:
    h = Harness()
    assert await h.reconciler.reconcile(f"kruise-system/{FOLLOW_CUSTOM_WORKLOADS}") is None
    assert [r.kind for r in h.followed] == ["GameServerSet"]
    woken: list[str] = []
    handlers = configuration_handlers("kruise-system", woken.append)
    handlers["on_add"]({})
    handlers["on_update"]({}, {})
    assert woken == [f"kruise-system/{FOLLOW_CUSTOM_WORKLOADS}"] * 2


def test_pod_of_a_whitelisted_owner_wakes_its_persistent_pod_state() -> None:
    states = FakeInformer()
    RecordingClient().sync(PERSISTENT_POD_STATES, states)
    states.store.upsert(pps())
    woken: list[str] = []
    whitelist = parse_pps_whitelist(WHITELIST)
    handlers = pod_handlers(states, woken.append, lambda: whitelist)
    handlers["on_delete"](game_pod("game-0"))
    handlers["on_delete"](game_pod("game-0", owner={**GAME, "kind": "Other"}))
    assert woken == ["default/game"]

    def broken():
        raise WhitelistError("bad")

    pod_handlers(states, woken.append, broken)["on_delete"](game_pod("game-1"))
    assert woken == ["default/game"]
