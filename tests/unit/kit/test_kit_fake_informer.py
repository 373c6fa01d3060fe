"""`tests.kit.FakeInformer`: same reads and indexes as SharedInformer, and it catches cache edits."""

from __future__ import annotations

import pytest

from kruise.kube.store import NAMESPACE_INDEX, NODE_NAME_INDEX, OWNER_UID_INDEX, index_by_controller_uid
from tests.kit import FakeInformer
from tests.kit.pods import pod


def owned_pod(name, namespace="default", node=None, owners=()):
    """A pod on `node`; `owners`: (uid, controller) of each ownerReference."""
    refs = [{"uid": uid, "controller": controller} for uid, controller in owners]
    return pod(
        name,
        namespace=namespace,
        uid=f"uid-{name}",
        meta={"ownerReferences": refs} if refs else None,
        node=node or None,
    )


def names(objs):
    return [o["metadata"]["name"] for o in objs]


def test_get_and_list_by_key():
    informer = FakeInformer([owned_pod("a"), owned_pod("b", "other"), {"metadata": {"name": "node-1"}}])
    assert informer.get("default/a")["metadata"]["name"] == "a"
    assert informer.get("other/b") is not None and informer.get("default/b") is None
    assert informer.get("node-1") is not None  # cluster-scoped key is the bare name
    assert sorted(names(informer.list())) == ["a", "b", "node-1"]
    assert informer.has_synced()


def test_standard_indexes_answer_like_the_real_store():
    informer = FakeInformer(
        [
            owned_pod("a", node="n1", owners=[("cs-1", True)]),
            owned_pod("b", node="n1", owners=[("cs-1", False), ("x", True)]),
            owned_pod("c", "other", node="n2", owners=[("cs-2", True)]),
        ]
    )
    assert names(informer.by_index(NAMESPACE_INDEX, "default")) == ["a", "b"]
    assert names(informer.by_index(OWNER_UID_INDEX, "cs-1")) == ["a", "b"]
    assert names(informer.by_index(NODE_NAME_INDEX, "n1")) == ["a", "b"]
    assert names(informer.by_index(NODE_NAME_INDEX, "n3")) == []
    with pytest.raises(KeyError, match="does not exist"):
        informer.by_index("controllerUID", "x")
    informer.add_indexers({"controllerUID": index_by_controller_uid})
    assert names(informer.by_index("controllerUID", "x")) == ["b"]


def test_add_replaces_and_reindexes_remove_drops():
    informer = FakeInformer([owned_pod("a", node="n1")])
    informer.add(owned_pod("a", node="n2"))
    assert names(informer.by_index(NODE_NAME_INDEX, "n1")) == []
    assert names(informer.by_index(NODE_NAME_INDEX, "n2")) == ["a"]
    informer.remove("default/a")
    assert informer.list() == []
    with pytest.raises(KeyError, match="not in this informer"):
        informer.remove("default/a")


def test_objects_are_copied_on_the_way_in():
    original = owned_pod("a")
    informer = FakeInformer([original])
    original["metadata"]["labels"] = {"late": "edit"}
    assert "labels" not in informer.get("default/a")["metadata"]
    informer.assert_unmodified()


def test_in_place_edits_of_cached_objects_are_caught():
    informer = FakeInformer([owned_pod("a"), owned_pod("b")])
    informer.get("default/b")["metadata"]["labels"] = {"oops": "true"}
    assert informer.modified_keys() == ["default/b"]
    with pytest.raises(AssertionError, match=r"mutated in place.*default/b"):
        informer.assert_unmodified()


def test_an_object_without_a_name_is_refused():
    with pytest.raises(ValueError, match=r"^metadata\.name: Required value"):
        FakeInformer([{"metadata": {"namespace": "default"}}])
