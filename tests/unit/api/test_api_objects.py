"""The object-access kit reads exactly what the hand walk it replaces read."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.api import objects as o

KEYS = st.sampled_from(["metadata", "spec", "status", "labels", "a", "b"])
LEAVES = st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.just({}) | st.just([])
TREES = st.recursive(LEAVES, lambda inner: st.dictionaries(KEYS, inner, max_size=3), max_leaves=6)
OBJECTS = st.dictionaries(KEYS, TREES, max_size=3)


def _hand_walk(obj: Any, path: list[str]) -> Any:
    current = obj
    for key in path:
        current = current.get(key) or {}
    return current


def _walkable(obj: Any, path: list[str]) -> bool:
    current = obj
    for key in path:
        if not isinstance(current, dict):
            return False
        current = current.get(key) or {}
    return True


@given(OBJECTS, st.lists(KEYS, min_size=1, max_size=4))
def test_section_is_the_or_chain(obj: dict[str, Any], path: list[str]) -> None:
    if _walkable(obj, path):
        assert o.section(obj, *path) == _hand_walk(obj, path)


@given(OBJECTS, st.lists(KEYS, min_size=1, max_size=4))
def test_dig_keeps_present_falsy_values_and_defaults_the_rest(obj: dict[str, Any], path: list[str]) -> None:
    if not _walkable(obj, path[:-1]) or not isinstance(_hand_walk(obj, path[:-1]), dict):
        return
    value = _hand_walk(obj, path[:-1]).get(path[-1])
    assert o.dig(obj, *path, default="absent") == ("absent" if value is None else value)


@given(st.none() | st.just({}) | st.just({"metadata": None}) | st.just({"metadata": {"labels": None}}))
def test_absent_sections_read_empty(obj: dict[str, Any] | None) -> None:
    assert o.labels_of(obj) == {} and o.annotations_of(obj) == {} and o.owner_refs_of(obj) == []
    assert o.name_of(obj) == "" and o.key_of(obj) == "" and not o.is_deleting(obj)


def test_an_absent_section_is_a_fresh_dict_so_writing_into_it_changes_nothing() -> None:
    pod: dict[str, Any] = {"metadata": {}}
    o.section(pod, "metadata", "labels")["x"] = "y"  # type: ignore[index]
    assert pod == {"metadata": {}}


def test_the_accessors_of_a_pod() -> None:
    pod = {
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "uid": "u1",
            "labels": {"app": "a"},
            "annotations": {"k": "v"},
            "ownerReferences": [{"uid": "o"}],
            "deletionTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {"containers": [{"name": "main"}, {"name": "side"}], "initContainers": [{"name": "init"}]},
        "status": {"conditions": [{"type": "Ready"}], "containerStatuses": [{"name": "main", "ready": True}]},
    }
    assert (o.name_of(pod), o.namespace_of(pod), o.uid_of(pod), o.key_of(pod)) == ("p", "ns", "u1", "ns/p")
    assert o.labels_of(pod) == {"app": "a"} and o.annotations_of(pod) == {"k": "v"}
    assert o.owner_refs_of(pod) == [{"uid": "o"}] and o.is_deleting(pod)
    assert o.conditions_of(pod) == [{"type": "Ready"}]
    assert [c["name"] for c in o.containers_of(pod)] == ["main", "side"]
    assert o.init_containers_of(pod) == [{"name": "init"}]
    assert o.find_named(o.container_statuses_of(pod), "main") == {"name": "main", "ready": True}
    assert o.find_named(o.containers_of(pod), "absent") is None


def test_a_workloads_template() -> None:
    cloneset = {"metadata": {"name": "c"}, "spec": {"template": {"spec": {"containers": [{"name": "app"}]}}}}
    assert o.containers_of(o.template_of(cloneset)) == [{"name": "app"}]
    assert o.key_of(cloneset) == "c"
    assert o.items(cloneset, "spec", "volumeClaimTemplates") == []
