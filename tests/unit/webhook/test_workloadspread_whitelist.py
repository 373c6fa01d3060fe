"""kruise-webhook and kruise-configuration's WorkloadSpread custom-workload whitelist: a WorkloadSpread
may target a whitelisted kind (upstream's message otherwise, an internal error naming the key on a
bad whitelist), and a pod of a whitelisted workload — directly or through a whitelisted subResource
— is placed into a subset, with percent maxReplicas resolved against the workload's replicasPath."""

from __future__ import annotations

import json
from typing import Any

from kruise.api.keys import CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, VERSION_IGNORED
from kruise.kube.resources import WORKLOADSPREADS, ResourceRef
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.handlers.pod import pod_create_handler
from tests.kit.webhook import context
from tests.unit.webhook.test_workloadspread_pods import new_pod, request, setup, workloadspread

PATH = "/validate-apps-kruise-io-v1alpha1-workloadspread"
WHITELIST = {
    "workloads": [
        {
            "group": "demo.io",
            "version": "v1",
            "kind": "GameSet",
            "subResources": [{"group": "demo.io", "version": "v1", "kind": "GameShard"}],
            "replicasPath": "spec.size",
        }
    ]
}
GAMESETS = ResourceRef("demo.io", "v1", "gamesets", True, "GameSet")
SHARDS = ResourceRef("demo.io", "v1", "gameshards", True, "GameShard")


def review(
    ws: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None
) -> AdmissionRequest:
    body: dict[str, Any] = {
        "uid": "u",
        "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "WorkloadSpread"},
        "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "workloadspreads"},
        "namespace": "ns",
        "name": "ws",
        "operation": operation,
        "object": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "WorkloadSpread", **ws},
    }
    if old is not None:
        body["oldObject"] = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "WorkloadSpread", **old}
    return AdmissionRequest.model_validate(body)


def validate(configuration: dict[str, str]):
    routes = registry.routes(context(configuration=lambda: configuration))
    return routes[PATH]


def game_spread() -> dict[str, Any]:
    return workloadspread(("a", 1), ("b", None), kind="GameSet", api="demo.io/v1")


async def test_whitelisted_kind_may_be_targeted() -> None:
    decision = await validate({KEY: json.dumps(WHITELIST)})(review(game_spread()))
    assert decision.allowed, decision


async def test_kind_not_whitelisted_is_refused_with_upstreams_message() -> None:
    decision = await validate({})(review(game_spread()))
    assert not decision.allowed
    assert decision.code == 422
    assert "spec.targetRef: Invalid value" in decision.message
    assert "TargetReference's GroupKind is not permitted." in decision.message
    # a subResource kind is followed, not a permitted target
    shard = workloadspread(("a", 1), kind="GameShard", api="demo.io/v1")
    refused = await validate({KEY: json.dumps(WHITELIST)})(review(shard))
    assert not refused.allowed


async def test_bad_whitelist_is_an_internal_error_naming_the_key_only_for_custom_targets() -> None:
    config = {KEY: "{oops"}
    decision = await validate(config)(review(game_spread()))
    assert not decision.allowed
    assert f"spec.targetRef: Internal error: {KEY}: not valid JSON" in decision.message
    # built-in targets never read the whitelist
    assert (await validate(config)(review(workloadspread(("a", 1), ("b", None))))).allowed


async def test_target_may_not_change_on_update() -> None:
    old = game_spread()
    new = json.loads(json.dumps(old))
    new["spec"]["targetRef"]["name"] = "other"
    decision = await validate({KEY: json.dumps(WHITELIST)})(review(new, "UPDATE", old))
    assert not decision.allowed
    assert "change TargetReference is not permitted for WorkloadSpread" in decision.message


def game(size: int) -> dict[str, Any]:
    return {"apiVersion": "demo.io/v1", "kind": "GameSet", "metadata": {"name": "app", "namespace": "ns"},
            "spec": {"size": size}}  # fmt: skip


SHARD = {
    "apiVersion": "demo.io/v1",
    "kind": "GameShard",
    "metadata": {
        "name": "app-0",
        "namespace": "ns",
        "ownerReferences": [
            {"apiVersion": "demo.io/v1", "kind": "GameSet", "name": "app", "uid": "g", "controller": True}
        ],
    },
}
SHARD_OWNER = {"apiVersion": "demo.io/v1", "kind": "GameShard", "name": "app-0", "uid": "s"}


def subset(pod: dict[str, Any]) -> str:
    return json.loads(pod["metadata"]["annotations"][ANNOTATION_MATCHED])["subset"]


async def test_pods_through_a_subresource_fill_percent_subsets_of_replicas_path() -> None:
    # size 4 and subset a at 50%: two pods in a, then b
    ws = workloadspread(("a", "50%"), ("b", None), kind="GameSet", api="demo.io/v1")
    client, _, keeper = setup(ws, (GAMESETS, game(4)), (SHARDS, SHARD))
    keeper.configuration = lambda: {KEY: json.dumps(WHITELIST)}
    handle = pod_create_handler(spreads=keeper)
    placed = [subset((await handle(request(new_pod(f"p{i}", SHARD_OWNER)))).mutated) for i in range(3)]
    assert placed == ["a", "a", "b"]
    status = client.object(WORKLOADSPREADS, "ws", "ns")["status"]
    books = status["versionedSubsetStatuses"][VERSION_IGNORED]
    assert [(s["name"], s["missingReplicas"]) for s in books] == [("a", 0), ("b", -1)]


async def test_without_the_whitelist_custom_pods_are_left_alone() -> None:
    ws = workloadspread(("a", 1), kind="GameSet", api="demo.io/v1")
    _, _, keeper = setup(ws, (GAMESETS, game(4)), (SHARDS, SHARD))
    handle = pod_create_handler(spreads=keeper)
    decision = await handle(request(new_pod("p", SHARD_OWNER)))
    assert ANNOTATION_MATCHED not in ((decision.mutated or {}).get("metadata", {}).get("annotations") or {})
