"""kruise-configuration's PPS_Watch_Custom_Workload_WhiteList: decoding (shared with WorkloadSpread's
whitelist), which (apiVersion, kind) it lets a PersistentPodState follow, how a custom workload's
size is read, and pod injection for a whitelisted owner."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.keys import CONFIG_PPS_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.control.common.customworkloads import (
    GroupVersionKind,
    StatefulSetLikeWhitelist,
    WhitelistError,
    parse_pps_whitelist,
)
from kruise.control.persistentpodstate import podstates

GAME = GroupVersionKind("demo.io", "v1", "GameServerSet")


def config(document: object) -> dict[str, str]:
    return {KEY: json.dumps(document)}


def test_absent_configmap_key_or_list_is_an_empty_whitelist() -> None:
    assert parse_pps_whitelist(None) == StatefulSetLikeWhitelist()
    assert parse_pps_whitelist({}) == StatefulSetLikeWhitelist()
    assert parse_pps_whitelist({KEY: ""}) == StatefulSetLikeWhitelist()
    assert parse_pps_whitelist({KEY: "null"}) == StatefulSetLikeWhitelist()
    assert parse_pps_whitelist(config({})) == StatefulSetLikeWhitelist()
    # the WorkloadSpread key is not this one
    other = {"WorkloadSpread_Watch_Custom_Workload_WhiteList": json.dumps({"workloads": [{"kind": "X"}]})}
    assert parse_pps_whitelist(other) == StatefulSetLikeWhitelist()


def test_workloads_are_decoded_in_order_field_names_ignoring_case() -> None:
    whitelist = parse_pps_whitelist(
        config({"Workloads": [{"group": "demo.io", "version": "v1", "kind": "GameServerSet"},
                              {"GROUP": "x.io", "Version": "v2", "KIND": "Shard"}]})
    )  # fmt: skip
    assert whitelist.workloads == (GAME, GroupVersionKind("x.io", "v2", "Shard"))
    assert whitelist.kinds() == {("demo.io", "GameServerSet"), ("x.io", "Shard")}
    assert GAME.api_version == "demo.io/v1"
    assert GroupVersionKind("", "v1", "Pod").api_version == "v1"


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ("{not json", "not valid JSON"),
        ("[]", ": must be a JSON object"),
        (json.dumps({"workloads": {"kind": "X"}}), "workloads: must be a JSON array"),
        (json.dumps({"workloads": ["X"]}), "workloads[0]: must be a JSON object"),
        (json.dumps({"workloads": [{"kind": 3}]}), "workloads[0].kind: must be a string"),
    ],
)
def test_bad_whitelist_names_the_key_and_the_field(raw: str, names: str) -> None:
    with pytest.raises(WhitelistError) as caught:
        parse_pps_whitelist({KEY: raw})
    assert str(caught.value).startswith(f"{KEY}: ")
    assert names in str(caught.value)


@pytest.mark.parametrize(
    ("api_version", "kind", "allowed", "custom"),
    [
        ("apps/v1", "StatefulSet", True, False),
        ("apps.kruise.io/v1beta1", "StatefulSet", True, False),
        ("apps.kruise.io/v1alpha1", "StatefulSet", True, False),
        ("demo.io/v1", "GameServerSet", True, True),
        ("demo.io/v2", "GameServerSet", True, True),  # any version of a whitelisted group/kind
        ("other.io/v1", "GameServerSet", False, False),
        ("demo.io/v1", "StatefulSet", False, False),
        ("apps/v1", "Deployment", False, False),
        ("a/b/c", "GameServerSet", False, False),  # not a group/version
    ],
)
def test_which_owners_a_persistent_pod_state_follows(
    api_version: str, kind: str, allowed: bool, custom: bool
) -> None:
    whitelist = StatefulSetLikeWhitelist((GAME,))
    assert whitelist.allows(api_version, kind) is allowed
    assert whitelist.is_custom(api_version, kind) is custom


@given(group=st.text(alphabet="abcdef.", min_size=1, max_size=8), kind=st.sampled_from(["A", "StatefulSet"]))
def test_empty_whitelist_allows_only_builtin_statefulsets(group: str, kind: str) -> None:
    allowed = StatefulSetLikeWhitelist().allows(f"{group}/v1", kind)
    assert allowed is (kind == "StatefulSet" and group in ("apps", "apps.kruise.io"))


@pytest.mark.parametrize(
    ("spec", "replicas"),
    [({"replicas": 3}, 3), ({}, 0), ({"replicas": "3"}, 0), ({"replicas": True}, 0), ({"replicas": 0}, 0)],
)
def test_custom_workload_size_is_spec_replicas_without_reserved_ordinals(spec: dict, replicas: int) -> None:
    workload = {"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {**spec, "reserveOrdinals": [0]}}  # fmt: skip
    assert podstates.Workload.of_custom(workload) == podstates.Workload(replicas=replicas)


def _pps(kind: str, api_version: str) -> dict:
    return {
        "metadata": {"name": "game", "namespace": "ns"},
        "spec": {
            "targetRef": {"apiVersion": api_version, "kind": kind, "name": "game"},
            "requiredPersistentTopology": {"nodeTopologyKeys": ["kubernetes.io/hostname"]},
        },
        "status": {"podStates": {"game-0": {"nodeName": "n1",
                                            "nodeTopologyLabels": {"kubernetes.io/hostname": "n1"}}}},
    }  # fmt: skip


def _pod(kind: str, api_version: str) -> dict:
    owner = {"apiVersion": api_version, "kind": kind, "name": "game", "uid": "u", "controller": True}
    return {"metadata": {"name": "game-0", "namespace": "ns", "ownerReferences": [owner]}, "spec": {}}


def test_pod_of_a_whitelisted_owner_is_steered_back_only_with_the_whitelist() -> None:
    states = [_pps("GameServerSet", "demo.io/v1")]
    pod = _pod("GameServerSet", "demo.io/v1")
    assert not podstates.inject(pod, states)
    assert podstates.inject(pod, states, StatefulSetLikeWhitelist((GAME,)))
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "n1"}
    assert pod["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"] == "game"
