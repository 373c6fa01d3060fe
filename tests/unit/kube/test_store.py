import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.kube.store import (
    NAMESPACE_INDEX,
    NODE_NAME_INDEX,
    OWNER_UID_INDEX,
    STANDARD_INDEXERS,
    DeletedFinalStateUnknown,
    Store,
    diff_relist,
    index_by_controller_uid,
    mutable_copy,
    unwrap_tombstone,
)
from tests.kit.pods import pod


def stored_pod(name, ns="default", rv="1", uid=None, node=None, owners=()):
    """A cached pod at resourceVersion `rv`; `owners`: ownerReference uids, the first the controller."""
    refs = [{"uid": o, "controller": i == 0} for i, o in enumerate(owners)]
    return pod(
        name,
        namespace=ns,
        rv=rv,
        uid=uid or f"uid-{ns}-{name}",
        meta={"ownerReferences": refs},
        node=node or None,
    )


def test_indexes_follow_updates_and_deletes():
    store = Store(STANDARD_INDEXERS)
    store.upsert(stored_pod("a", node="n1", owners=["o1"]))
    store.upsert(stored_pod("b", node="n1", owners=["o1", "o2"]))
    store.upsert(stored_pod("c", ns="other"))
    assert [p["metadata"]["name"] for p in store.by_index(NODE_NAME_INDEX, "n1")] == ["a", "b"]
    assert store.index_keys(OWNER_UID_INDEX, "o2") == ["default/b"]
    assert store.index_keys(NAMESPACE_INDEX, "other") == ["other/c"]
    store.upsert(stored_pod("a", node="n2", rv="2", owners=["o1"]))
    assert store.index_keys(NODE_NAME_INDEX, "n1") == ["default/b"]
    assert store.index_keys(NODE_NAME_INDEX, "n2") == ["default/a"]
    store.remove("default/b")
    assert store.index_keys(NODE_NAME_INDEX, "n1") == []
    assert "n1" not in store.index_values(NODE_NAME_INDEX)
    assert len(store) == 2


def test_custom_indexer_added_later_indexes_existing():
    store = Store()
    store.upsert(stored_pod("a", owners=["o1", "o2"]))
    store.add_indexers({"controller": index_by_controller_uid})
    assert store.index_keys("controller", "o1") == ["default/a"]
    assert store.index_keys("controller", "o2") == []
    with pytest.raises(ValueError, match="already registered"):
        store.add_indexers({"controller": lambda o: []})
    with pytest.raises(KeyError, match="does not exist"):
        store.by_index("nope", "x")


def test_cluster_scoped_keys():
    store = Store()
    store.upsert({"metadata": {"name": "node-1", "resourceVersion": "1"}})
    assert store.get("node-1") is not None
    assert store.get_by_name(None, "node-1") is not None


def test_mutable_copy_is_independent():
    obj = stored_pod("a", owners=["o1"])
    copy = mutable_copy(obj)
    copy["metadata"]["ownerReferences"].append({"uid": "x"})
    assert len(obj["metadata"]["ownerReferences"]) == 1


def test_diff_relist_reports_only_changes():
    cached = {
        "default/a": stored_pod("a", rv="1"),
        "default/b": stored_pod("b", rv="1"),
        "default/c": stored_pod("c", rv="1"),
    }
    fresh = [stored_pod("a", rv="1"), stored_pod("b", rv="5"), stored_pod("d", rv="6")]
    diff = diff_relist(cached, fresh)
    assert [o["metadata"]["name"] for o in diff.added] == ["d"]
    assert [
        (o["metadata"]["resourceVersion"], n["metadata"]["resourceVersion"]) for o, n in diff.updated
    ] == [("1", "5")]
    assert diff.deleted == [DeletedFinalStateUnknown("default/c", cached["default/c"])]
    assert unwrap_tombstone(diff.deleted[0]) is cached["default/c"]


def test_diff_relist_recreated_object_is_delete_then_add():
    cached = {"default/a": stored_pod("a", rv="1", uid="old")}
    diff = diff_relist(cached, [stored_pod("a", rv="9", uid="new")])
    assert [t.obj["metadata"]["uid"] for t in diff.deleted] == ["old"]
    assert [o["metadata"]["uid"] for o in diff.added] == ["new"]
    assert diff.updated == []


names = st.sets(st.sampled_from(list("abcdefgh")))


@given(names, names, st.data())
def test_diff_relist_replaying_gives_fresh_state(before, after, data):
    cached = {f"default/{n}": stored_pod(n, rv="1") for n in before}
    fresh = [stored_pod(n, rv=data.draw(st.sampled_from(["1", "2"]))) for n in sorted(after)]
    diff = diff_relist(cached, fresh)
    state = dict(cached)
    for t in diff.deleted:
        del state[t.key]
    for o in diff.added:
        state[f"default/{o['metadata']['name']}"] = o
    for _, n in diff.updated:
        state[f"default/{n['metadata']['name']}"] = n
    assert state == {f"default/{o['metadata']['name']}": o for o in fresh}
    # Nothing phantom: unchanged objects produce no event.
    unchanged = {
        n
        for n in before & after
        if next(o for o in fresh if o["metadata"]["name"] == n)["metadata"]["resourceVersion"] == "1"
    }
    touched = {o["metadata"]["name"] for o in diff.added} | {n["metadata"]["name"] for _, n in diff.updated}
    assert not unchanged & touched


OPS = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "remove"]),
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from([None, "n1", "n2"]),
        st.lists(st.sampled_from(["o1", "o2"]), max_size=3),  # repeats: one owner listed twice
    ),
    max_size=30,
)


@given(OPS)
def test_indexes_match_a_recomputation_after_any_writes(ops):
    """The sorted-list indexes hold exactly each value's keys, sorted, once each, whatever the writes."""
    store = Store(STANDARD_INDEXERS)
    for rv, (op, name, node, owners) in enumerate(ops):
        if op == "upsert":
            store.upsert(pod(name, rv=str(rv), node=node, owners=owners))
        else:
            store.remove(f"default/{name}")
    for index, fn in STANDARD_INDEXERS.items():
        expected: dict[str, set[str]] = {}
        for key, obj in store.snapshot().items():
            for value in fn(obj):
                expected.setdefault(value, set()).add(key)
        assert sorted(store.index_values(index)) == sorted(expected)
        for value, keys in expected.items():
            found = store.index_keys(index, value)
            assert found == sorted(keys)
            found.clear()  # a copy: the index is untouched
            assert store.index_keys(index, value) == sorted(keys)
