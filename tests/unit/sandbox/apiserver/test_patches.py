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
