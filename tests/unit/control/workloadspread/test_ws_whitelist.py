"""kruise-configuration's WorkloadSpread custom-workload whitelist: parsing (shape, Go-like
case-insensitive field names, errors naming the key), reading replicas at `replicasPath`, and
following a pod's controller chain to a whitelisted target through its subResources."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.keys import CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.control.workloadspread.targets import (
    OwnerNotFound,
    matching_spread,
    references,
    workload_replicas,
)
from kruise.control.workloadspread.whitelist import (
    CustomWorkload,
    GroupVersionKind,
    ReplicasPathError,
    Whitelist,
    WhitelistError,
    parse_whitelist,
    replicas_at,
)

GAME = {"group": "demo.io", "version": "v1", "kind": "GameSet"}
SHARD = {"group": "demo.io", "version": "v1", "kind": "GameShard"}
DOC = {"workloads": [{**GAME, "subResources": [SHARD], "replicasPath": "spec.size"}]}


def config(doc: Any) -> dict[str, str]:
    return {KEY: json.dumps(doc)}


def test_parse_full_entry() -> None:
    whitelist = parse_whitelist(config(DOC))
    assert whitelist.workloads == (
        CustomWorkload(
            GroupVersionKind("demo.io", "v1", "GameSet"),
            (GroupVersionKind("demo.io", "v1", "GameShard"),),
            "spec.size",
        ),
    )
    assert whitelist.target_kinds() == {("demo.io", "GameSet")}
    assert whitelist.owner_kinds() == {("demo.io", "GameSet"), ("demo.io", "GameShard")}
    assert whitelist.replicas_path("demo.io", "GameSet") == "spec.size"
    assert whitelist.replicas_path("demo.io", "GameShard") is None
    assert [g.kind for g in whitelist.kinds_to_follow()] == ["GameSet", "GameShard"]


@pytest.mark.parametrize("data", [None, {}, {"other": "x"}, {KEY: ""}, {KEY: "null"}, {KEY: "{}"}])
def test_absent_whitelist_is_empty(data: dict[str, str] | None) -> None:
    assert parse_whitelist(data) == Whitelist()


def test_field_names_match_case_insensitively_like_go_json() -> None:
    doc = {"Workloads": [{"Group": "demo.io", "VERSION": "v1", "Kind": "GameSet", "replicaspath": "spec.n"}]}
    whitelist = parse_whitelist(config(doc))
    assert whitelist.workloads[0].gvk == GroupVersionKind("demo.io", "v1", "GameSet")
    assert whitelist.workloads[0].replicas_path == "spec.n"


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[]", ": must be a JSON object"),
        ('{"workloads": {}}', "workloads: must be a JSON array"),
        ('{"workloads": [3]}', "workloads[0]: must be a JSON object"),
        ('{"workloads": [{"kind": 3}]}', "workloads[0].kind: must be a string"),
        ('{"workloads": [{"subResources": "x"}]}', "workloads[0].subResources: must be a JSON array"),
        ('{"workloads": [{"subResources": [{"group": 1}]}]}', "workloads[0].subResources[0].group"),
    ],
)
def test_bad_whitelist_names_the_key_and_field(raw: str, fragment: str) -> None:
    with pytest.raises(WhitelistError) as err:
        parse_whitelist({KEY: raw})
    assert str(err.value).startswith(f"{KEY}: ")
    assert fragment in str(err.value)


names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz.", min_size=1, max_size=12)
gvks = st.builds(lambda g, v, k: {"group": g, "version": v, "kind": k}, names, names, names)


@given(st.lists(st.tuples(gvks, st.lists(gvks, max_size=3), st.one_of(st.just(""), names)), max_size=4))
def test_parse_round_trips_any_whitelist(entries: list[tuple[dict, list[dict], str]]) -> None:
    doc = {"workloads": [{**gvk, "subResources": subs, "replicasPath": path} for gvk, subs, path in entries]}
    whitelist = parse_whitelist(config(doc))
    assert len(whitelist.workloads) == len(entries)
    for parsed, (gvk, subs, path) in zip(whitelist.workloads, entries, strict=True):
        assert parsed.gvk == GroupVersionKind(gvk["group"], gvk["version"], gvk["kind"])
        assert parsed.sub_resources == tuple(
            GroupVersionKind(s["group"], s["version"], s["kind"]) for s in subs
        )
        assert parsed.replicas_path == path
    expected_owner_kinds = {(g["group"], g["kind"]) for g, subs, _ in entries}
    expected_owner_kinds |= {(s["group"], s["kind"]) for _, subs, _ in entries for s in subs}
    assert whitelist.owner_kinds() == expected_owner_kinds


# --- replicasPath ---

keys = st.text(alphabet="abcdefghij", min_size=1, max_size=5)


@st.composite
def nested(draw: st.DrawFn) -> tuple[Any, str, int]:
    """An object with an integer buried at a path of map keys and list indexes."""
    value = draw(st.integers(min_value=0, max_value=2**31 - 1))
    obj: Any = value
    parts: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        if draw(st.booleans()):
            key = draw(keys)
            siblings = draw(st.dictionaries(keys, st.integers(), max_size=2))
            siblings.pop(key, None)
            obj = {**siblings, key: obj}
            parts.append(key)
        else:
            before = draw(st.lists(st.integers(), max_size=2))
            obj = [*before, obj]
            parts.append(str(len(before)))
    return obj, ".".join(reversed(parts)), value


@given(nested())
def test_replicas_at_reads_the_integer_at_any_path(case: tuple[Any, str, int]) -> None:
    obj, path, value = case
    assert replicas_at({"root": obj}, f"root.{path}") == value


def test_replicas_at_empty_path_is_zero() -> None:
    assert replicas_at({"spec": {"replicas": 3}}, "") == 0


@pytest.mark.parametrize(
    ("obj", "path", "fragment"),
    [
        ({"spec": {}}, "spec.replicas", 'path "replicas" not exists'),
        ({"spec": {"replicas": "3"}}, "spec.replicas", "is not an integer"),
        ({"spec": {"replicas": True}}, "spec.replicas", "is not an integer"),
        ({"spec": {"replicas": 2.5}}, "spec.replicas", "is not an integer"),
        ({"spec": [1]}, "spec.x", "is not a list index"),
        ({"spec": [1]}, "spec.3", "index 3 out of range"),
        ({"spec": 3}, "spec.replicas", "not deep enough"),
    ],
)
def test_replicas_at_errors(obj: dict, path: str, fragment: str) -> None:
    with pytest.raises(ReplicasPathError) as err:
        replicas_at(obj, path)
    assert fragment in str(err.value)


def spread(target: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "ws", "namespace": "ns"}, "spec": {"targetRef": target, **spec}}


GAME_REF = {"apiVersion": "demo.io/v1", "kind": "GameSet", "name": "game"}


def test_workload_replicas_of_custom_target_reads_replicas_path() -> None:
    whitelist = parse_whitelist(config(DOC))
    game = {"apiVersion": "demo.io/v1", "kind": "GameSet", "spec": {"size": 7, "replicas": 1}}
    assert workload_replicas(spread(GAME_REF), game, whitelist) == 7
    # not whitelisted (or no whitelist): upstream reads nothing, so 0
    assert workload_replicas(spread(GAME_REF), game, Whitelist()) == 0
    assert workload_replicas(spread(GAME_REF), game) == 0
    # a path that does not lead to an integer: 0, as upstream's webhook logs and ignores it
    broken = {"apiVersion": "demo.io/v1", "kind": "GameSet", "spec": {"size": "big"}}
    assert workload_replicas(spread(GAME_REF), broken, whitelist) == 0
    # targetFilter.replicasPathList still wins
    filtered = spread(GAME_REF, targetFilter={"replicasPathList": ["spec.replicas"]})
    assert workload_replicas(filtered, game, whitelist) == 1


# --- owner chain ---


def owner(kind: str, name: str, api: str = "demo.io/v1") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": f"{kind}-{name}", "controller": True}


def pod_owned_by(ref: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "ns", "ownerReferences": [ref]}, "status": {}}


SHARD_OBJ = {"metadata": {"name": "game-0", "namespace": "ns", "ownerReferences": [owner("GameSet", "game")]}}
OBJECTS = {("GameShard", "game-0"): SHARD_OBJ, ("GameSet", "game"): {"metadata": {"name": "game"}}}


def lookup(ref: Any, namespace: str) -> Any:
    return OBJECTS.get((ref.get("kind"), ref.get("name")))


def test_pod_owned_directly_by_whitelisted_target_matches() -> None:
    kinds = parse_whitelist(config(DOC)).owner_kinds()
    ws = spread(GAME_REF)
    assert matching_spread(pod_owned_by(owner("GameSet", "game")), [ws], lookup, kinds) is ws
    # the kind itself must be whitelisted for the pod to be considered at all
    assert matching_spread(pod_owned_by(owner("GameSet", "game")), [ws], lookup, ()) is None


def test_pod_owned_through_a_whitelisted_subresource_matches() -> None:
    kinds = parse_whitelist(config(DOC)).owner_kinds()
    ws = spread(GAME_REF)
    pod = pod_owned_by(owner("GameShard", "game-0"))
    assert matching_spread(pod, [ws], lookup, kinds) is ws
    # without the subResource in the whitelist the chain is not followed
    only_target = parse_whitelist(config({"workloads": [GAME]})).owner_kinds()
    assert matching_spread(pod, [ws], lookup, only_target) is None
    # another GameSet is not this pod's
    other = spread({**GAME_REF, "name": "other"})
    assert matching_spread(pod, [other], lookup, kinds) is None


def test_missing_subresource_owner_is_unknown_not_unmatched() -> None:
    kinds = parse_whitelist(config(DOC)).owner_kinds()
    with pytest.raises(OwnerNotFound):
        references(GAME_REF, owner("GameShard", "gone"), "ns", lookup, kinds)


@given(st.integers(min_value=0, max_value=6), st.booleans())
def test_chain_of_any_depth_through_whitelisted_kinds(depth: int, whitelist_links: bool) -> None:
    """pod → Link-0 → … → Link-(depth-1) → GameSet: matched exactly when Link is whitelisted (or
    the pod is the GameSet's own)."""
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    parent = owner("GameSet", "game")
    for i in range(depth):
        name = f"link-{i}"
        objects[("Link", name)] = {"metadata": {"name": name, "ownerReferences": [parent]}}
        parent = owner("Link", name)
    subs = [{"group": "demo.io", "version": "v1", "kind": "Link"}] if whitelist_links else []
    kinds = parse_whitelist(config({"workloads": [{**GAME, "subResources": subs}]})).owner_kinds()
    ws = spread(GAME_REF)
    found = matching_spread(
        pod_owned_by(parent), [ws], lambda ref, ns: objects.get((ref["kind"], ref["name"])), kinds
    )
    assert (found is ws) == (depth == 0 or whitelist_links)
