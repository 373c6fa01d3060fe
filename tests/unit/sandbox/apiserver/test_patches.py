import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.patches import json_patch, merge_patch, strategic_merge_patch

POD = {
    "metadata": {"name": "p", "finalizers": ["a"], "ownerReferences": [{"uid": "1", "name": "o"}]},
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "nginx:1",
                "env": [{"name": "A", "value": "1"}],
                "ports": [{"containerPort": 80}],
                "volumeMounts": [{"mountPath": "/a", "name": "v"}],
            },
            {"name": "side", "image": "busybox"},
        ],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "tolerations": [{"key": "x", "operator": "Exists"}],
    },
}


def test_merge_patch_rfc7386():
    assert merge_patch({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": None, "e": 4}, "f": [1]}) == {
        "a": 1,
        "b": {"d": 3, "e": 4},
        "f": [1],
    }


def test_smp_merges_containers_by_name_and_nested_lists_by_key():
    out = strategic_merge_patch(
        POD,
        {
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx:2",
                        "env": [{"name": "B", "value": "2"}],
                        "ports": [{"containerPort": 81}],
                    },
                    {"name": "new", "image": "x"},
                ]
            }
        },
    )
    app = out["spec"]["containers"][0]
    assert app["image"] == "nginx:2"
    assert [e["name"] for e in app["env"]] == ["A", "B"]
    assert [p["containerPort"] for p in app["ports"]] == [80, 81]
    assert [c["name"] for c in out["spec"]["containers"]] == ["app", "side", "new"]
    assert POD["spec"]["containers"][0]["image"] == "nginx:1"  # input untouched


def test_smp_directives():
    out = strategic_merge_patch(
        POD,
        {
            "metadata": {"finalizers": ["b", "a"], "$deleteFromPrimitiveList/finalizers": ["a"]},
            "spec": {
                "containers": [{"name": "side", "$patch": "delete"}],
                "volumes": [{"name": "w", "emptyDir": {}}, {"$patch": "replace"}],
                "tolerations": [{"key": "y", "operator": "Exists"}],
                "$setElementOrder/containers": [{"name": "app"}],
            },
        },
    )
    assert out["metadata"]["finalizers"] == ["b"]
    assert [c["name"] for c in out["spec"]["containers"]] == ["app"]
    assert out["spec"]["volumes"] == [{"name": "w", "emptyDir": {}}]
    assert out["spec"]["tolerations"] == [{"key": "y", "operator": "Exists"}]  # no strategy: replaced


def test_smp_map_replace_and_retain_keys():
    out = strategic_merge_patch(
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
    )
    assert out == {"spec": {"strategy": {"type": "Recreate"}}}
    out = strategic_merge_patch({"a": {"b": 1, "c": 2}}, {"a": {"$patch": "replace", "d": 3}})
    assert out == {"a": {"d": 3}}


def test_smp_owner_references_by_uid():
    out = strategic_merge_patch(POD, {"metadata": {"ownerReferences": [{"uid": "2", "name": "o2"}]}})
    assert [r["uid"] for r in out["metadata"]["ownerReferences"]] == ["1", "2"]


def test_json_patch_and_errors():
    assert json_patch({"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}]) == {"a": [1, 2]}
    with pytest.raises(StatusError) as exc:
        json_patch({"a": 1}, {"op": "add"})
    assert exc.value.code == 400
    with pytest.raises(StatusError) as exc:
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert exc.value.code == 422


json_values = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda c: st.dictionaries(st.text(max_size=3), c, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=3), json_values, max_size=4))
def test_merge_patch_with_itself_is_identity_minus_nulls(doc):
    def drop_nulls(v):
        return {k: drop_nulls(x) for k, x in v.items() if x is not None} if isinstance(v, dict) else v

    clean = drop_nulls(doc)
    assert merge_patch(clean, clean) == clean
    assert merge_patch({}, doc) == clean


def _names(items):
    return [c["name"] for c in items]


def _containers(*names):
    return {"spec": {"containers": [{"name": n, "image": f"{n}:1"} for n in names]}}


def test_set_element_order_keeps_an_injected_sidecar_in_front():
    """kubectl apply of a pod that got a sidecar injected in front of its own container."""
    out = strategic_merge_patch(
        _containers("sidecar", "main"),
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "main"}],
                "containers": [{"name": "main", "image": "main:2"}],
            }
        },
    )
    assert _names(out["spec"]["containers"]) == ["sidecar", "main"]
    assert out["spec"]["containers"][1]["image"] == "main:2"


@pytest.mark.parametrize(
    ("live", "order", "added", "expected"),
    [
        # reorder the named items; server-only ones interleave by their old positions
        (["a", "s1", "b", "s2"], ["b", "a"], [], ["s1", "b", "a", "s2"]),
        # an item new in the patch goes before a server-only item it cannot be compared with
        (["s", "main"], ["new", "main"], ["new"], ["new", "s", "main"]),
        # server-only items at the end stay at the end
        (["a", "b", "s"], ["a", "b"], [], ["a", "b", "s"]),
        # nothing named: the order directive alone does not move anything
        (["s1", "s2"], [], [], ["s1", "s2"]),
    ],
)
def test_set_element_order_merges_like_merge_sorted_slice(live, order, added, expected):
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": n} for n in order],
            "containers": [{"name": n, "image": f"{n}:1"} for n in added],
        }
    }
    assert _names(strategic_merge_patch(_containers(*live), patch)["spec"]["containers"]) == expected


def test_set_element_order_of_primitives():
    out = strategic_merge_patch(
        {"metadata": {"finalizers": ["x", "a", "y"]}},
        {"metadata": {"$setElementOrder/finalizers": ["b", "a"], "finalizers": ["b"]}},
    )
    assert out["metadata"]["finalizers"] == ["b", "x", "a", "y"]


@given(st.lists(st.sampled_from("abcdefgh"), unique=True, min_size=1), st.data())
def test_set_element_order_properties(live, data):
    named = data.draw(st.lists(st.sampled_from(live), unique=True))
    out = _names(
        strategic_merge_patch(
            _containers(*live), {"spec": {"$setElementOrder/containers": [{"name": n} for n in named]}}
        )["spec"]["containers"]
    )
    assert sorted(out) == sorted(live)
    assert [n for n in out if n in named] == named
    assert [n for n in out if n not in named] == [n for n in live if n not in named]
    in_live_order = [n for n in live if n in named]
    same = _names(
        strategic_merge_patch(
            _containers(*live),
            {"spec": {"$setElementOrder/containers": [{"name": n} for n in in_live_order]}},
        )["spec"]["containers"]
    )
    assert same == live, "an order list that agrees with the server moves nothing"
