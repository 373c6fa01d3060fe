"""kruise-webhook and kruise-configuration's PPS_Watch_Custom_Workload_WhiteList: a PersistentPodState
may target a whitelisted kind (upstream's message otherwise, an internal error on a whitelist that
does not parse), two may not target the same workload, and a recreated pod whose controller is a
whitelisted kind gets its recorded node back."""

from __future__ import annotations

import json
from typing import Any

from kruise.api.keys import CONFIG_PPS_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.webhook import paths, registry
from kruise.webhook.admission import AdmissionRequest
from tests.kit.webhook import context

PATH = "/validate-apps-kruise-io-v1alpha1-persistentpodstate"
HOST = "kubernetes.io/hostname"
WHITELIST = {KEY: json.dumps({"workloads": [{"group": "demo.io", "version": "v1", "kind": "GameServerSet"}]})}


def pps(name: str = "game", kind: str = "GameServerSet", api: str = "demo.io/v1", target: str = "game"):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PersistentPodState",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "targetRef": {"apiVersion": api, "kind": kind, "name": target},
            "requiredPersistentTopology": {"nodeTopologyKeys": [HOST]},
        },
    }


def review(obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None):
    body: dict[str, Any] = {
        "uid": "u",
        "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "PersistentPodState"},
        "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "persistentpodstates"},
        "namespace": "ns",
        "name": obj["metadata"]["name"],
        "operation": operation,
        "object": obj,
    }
    if old is not None:
        body["oldObject"] = old
    return AdmissionRequest.model_validate(body)


def routes(configuration: dict[str, str], states: list[dict] | None = None):
    def in_namespace(namespace: str) -> list[dict]:
        return [s for s in states or [] if s["metadata"]["namespace"] == namespace]

    return registry.routes(context(persistent_pod_states=in_namespace, configuration=lambda: configuration))


async def test_whitelisted_kind_may_be_targeted_any_version() -> None:
    validate = routes(WHITELIST)[PATH]
    assert (await validate(review(pps()))).allowed
    assert (await validate(review(pps(api="demo.io/v2")))).allowed
    assert (await validate(review(pps(kind="StatefulSet", api="apps/v1")))).allowed


async def test_kind_not_whitelisted_is_refused_with_upstreams_message() -> None:
    for configuration, obj in ((WHITELIST, pps(kind="Other")), ({}, pps()), (WHITELIST, pps(api="x.io/v1"))):
        decision = await routes(configuration)[PATH](review(obj))
        assert not decision.allowed
        assert decision.code == 422
        assert "spec.TargetReference: Invalid value" in decision.message
        assert "TargetReference.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList" in (
            decision.message
        )


async def test_whitelist_that_does_not_parse_refuses_with_an_internal_error_naming_the_key() -> None:
    decision = await routes({KEY: "{oops"})[PATH](review(pps(kind="StatefulSet", api="apps/v1")))
    assert not decision.allowed
    assert "Internal error: failed to get persistent pod state config white list" in decision.message
    assert KEY in decision.message


async def test_second_persistent_pod_state_on_the_same_workload_is_refused() -> None:
    existing = pps(name="first")
    validate = routes(WHITELIST, [existing, pps(name="elsewhere", target="other")])[PATH]
    decision = await validate(review(pps(name="second", api="demo.io/v2")))
    assert not decision.allowed
    assert "targetReference is in conflict with other PersistentPodState first" in decision.message
    # updating the existing one itself is no conflict
    assert (await validate(review(existing, "UPDATE", existing))).allowed
    other_namespace = routes(WHITELIST, [{**existing, "metadata": {"name": "first", "namespace": "x"}}])[PATH]
    assert (await other_namespace(review(pps(name="second")))).allowed


def pod_review(name: str, kind: str = "GameServerSet", api: str = "demo.io/v1") -> AdmissionRequest:
    owner = {"apiVersion": api, "kind": kind, "name": "game", "uid": "u", "controller": True}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "ownerReferences": [owner]},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "ns",
            "operation": "CREATE",
            "object": pod,
        }
    )


def recorded() -> dict:
    state = pps()
    node = {"nodeName": "node-3", "nodeTopologyLabels": {HOST: "node-3"}}
    state["status"] = {"podStates": {"game-1": node}}
    return state


async def test_pod_of_a_whitelisted_owner_gets_its_recorded_node_back() -> None:
    decision = await routes(WHITELIST, [recorded()])[paths.POD_MUTATE](pod_review("game-1"))
    assert decision.allowed
    assert decision.mutated["spec"]["nodeSelector"] == {HOST: "node-3"}
    assert decision.mutated["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"] == "game"


async def test_pod_of_an_owner_not_whitelisted_is_left_alone() -> None:
    cases = ((WHITELIST, pod_review("game-1", kind="Other")), ({}, pod_review("game-1")))
    for configuration, review_ in cases:
        decision = await routes(configuration, [recorded()])[paths.POD_MUTATE](review_)
        assert decision.allowed
        assert decision.mutated is None


async def test_pod_creation_fails_on_a_whitelist_that_does_not_parse_as_upstream() -> None:
    decision = await routes({KEY: "[1"}, [recorded()])[paths.POD_MUTATE](pod_review("game-1"))
    assert not decision.allowed
    assert decision.code == 500
    assert KEY in decision.message
