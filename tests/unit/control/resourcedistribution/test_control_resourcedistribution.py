"""ResourceDistribution planning: target namespaces, the copy written, conflicts, conditions."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from kruise.control.resourcedistribution import distribution

NOW = "2026-11-24T10:00:00Z"


def rd(targets, resource=None, name="share", uid="uid-rd", generation=3):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ResourceDistribution",
        "metadata": {"name": name, "uid": uid, "generation": generation},
        "spec": {
            "resource": resource
            or {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "regcred"}, "data": {"k": "dg=="}},
            "targets": targets,
        },
    }


def ns(name, **labels):
    return {"metadata": {"name": name, "labels": labels}}


def names(*items):
    return {"list": [{"name": n} for n in items]}


NAMESPACES = [
    ns("default"),
    ns("kube-system"),
    ns("kube-public"),
    ns("ns-1", env="prod"),
    ns("ns-2", env="dev"),
]


def test_included_namespaces_are_targets_even_when_missing_and_system_namespaces_never():
    matched, unmatched = distribution.target_namespaces(
        rd({"includedNamespaces": names("ns-1", "ghost", "kube-system")}), NAMESPACES
    )
    assert matched == ["ghost", "ns-1"]
    assert unmatched == ["default", "kube-public", "kube-system", "ns-2"]


def test_the_label_selector_adds_to_the_list_and_exclusions_win():
    targets = {
        "includedNamespaces": names("default"),
        "namespaceLabelSelector": {"matchExpressions": [{"key": "env", "operator": "Exists"}]},
        "excludedNamespaces": names("ns-2"),
    }
    assert distribution.target_namespaces(rd(targets), NAMESPACES)[0] == ["default", "ns-1"]


def test_all_namespaces_minus_exclusions_and_system_namespaces():
    targets = {"allNamespaces": True, "excludedNamespaces": names("default")}
    assert distribution.target_namespaces(rd(targets), NAMESPACES)[0] == ["ns-1", "ns-2"]


def test_an_empty_selector_selects_nothing():
    assert distribution.target_namespaces(rd({"namespaceLabelSelector": {}}), NAMESPACES)[0] == []


def test_event_matchers():
    by_selector = rd(
        {"namespaceLabelSelector": {"matchLabels": {"env": "prod"}}, "excludedNamespaces": names("x")}
    )
    assert distribution.matches_targets(ns("new", env="prod"), by_selector)
    assert not distribution.matches_targets(ns("x", env="prod"), by_selector)
    assert not distribution.matches_targets(ns("kube-public"), rd({"allNamespaces": True}))
    assert distribution.matches_targets(ns("any"), rd({"allNamespaces": True}))
    assert distribution.lists_namespace(ns("ns-1"), rd({"includedNamespaces": names("ns-1")}))
    assert not distribution.lists_namespace(ns("ns-1"), by_selector)
    assert distribution.matches_selector(ns("a", env="prod"), by_selector)
    assert not distribution.matches_selector(ns("a", env="dev"), by_selector)


def test_a_new_copy_is_controlled_and_annotated():
    dist = rd({"includedNamespaces": names("ns-1")})
    copy = distribution.desired_copy(dist, "ns-1")
    meta = copy["metadata"]
    assert (meta["name"], meta["namespace"]) == ("regcred", "ns-1")
    assert meta["annotations"] == {
        "kruise.io/resourcedistribution.resource.from": "share",
        "kruise.io/resourcedistribution.resource.hashcode": distribution.resource_hash(dist),
    }
    (owner,) = meta["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "ResourceDistribution", "share", "uid-rd", True
    )  # fmt: skip
    assert copy["data"] == {"k": "dg=="} and copy["type"] == "Opaque"
    assert distribution.is_controlled_by(copy, dist)


def test_the_hash_is_sha256_of_the_resource_json():
    dist = rd({})
    raw = json.dumps(dist["spec"]["resource"], sort_keys=True, separators=(",", ":")).encode()
    assert distribution.resource_hash(dist) == hashlib.sha256(raw).hexdigest()


def test_an_update_keeps_foreign_metadata_and_guards_with_the_resource_version():
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "labels": {"a": "new"}}}
    dist = rd({}, resource={**config, "data": {"x": "2"}})
    owner = {"kind": "ResourceDistribution", "name": "share", "uid": "uid-rd", "controller": True}
    existing = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cfg", "namespace": "ns-1", "resourceVersion": "42",
            "labels": {"a": "old", "b": "kept"}, "annotations": {"note": "kept"}, "finalizers": ["f"],
            "ownerReferences": [owner],
        },
        "data": {"x": "1"},
    }  # fmt: skip
    assert distribution.needs_update(existing, dist)
    copy = distribution.desired_copy(dist, "ns-1", existing)
    meta = copy["metadata"]
    assert meta["resourceVersion"] == "42" and meta["finalizers"] == ["f"]
    assert meta["labels"] == {"a": "new", "b": "kept"} and meta["annotations"]["note"] == "kept"
    assert len(meta["ownerReferences"]) == 1 and copy["data"] == {"x": "2"}
    assert not distribution.needs_update(copy, dist)


def test_string_data_and_the_default_type_do_not_make_a_copy_look_stale():
    dist = rd(
        {},
        resource={"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}},
    )
    stored = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"k": "dg=="},
        "type": "Opaque",
    }
    assert not distribution.needs_update(stored, dist)
    assert distribution.needs_update({**stored, "data": {"k": "eA=="}}, dist)


def test_control_is_by_uid_and_an_unrelated_object_is_not_controlled():
    dist = rd({})
    other = {"metadata": {"ownerReferences": [{"kind": "ResourceDistribution", "name": "share", "uid": "x",
                                               "controller": True}]}}  # fmt: skip
    assert not distribution.is_controlled_by(other, dist)
    assert not distribution.is_controlled_by({"metadata": {"name": "regcred"}}, dist)


def test_conditions_list_all_six_and_keep_transition_times_while_unchanged():
    failures = [
        distribution.Failure(distribution.CONFLICT, "ns-1", distribution.CONFLICT_MESSAGE),
        distribution.Failure(distribution.NAMESPACE_NOT_EXISTS, "ghost", distribution.NAMESPACE_GONE_MESSAGE),
    ]
    status = distribution.status(rd({}), failures, desired=3, succeeded=1, now=NOW)
    assert (status["desired"], status["succeeded"], status["failed"], status["observedGeneration"]) == (
        3,
        1,
        2,
        3,
    )
    by_type = {c["type"]: c for c in status["conditions"]}
    assert [c["type"] for c in status["conditions"]] == list(distribution.CONDITION_ORDER)
    assert by_type["ConflictOccurred"] == {
        "type": "ConflictOccurred", "status": "True", "reason": distribution.CONFLICT_MESSAGE,
        "failedNamespace": ["ns-1"], "lastTransitionTime": NOW,
    }  # fmt: skip
    assert by_type["CreateResourceFailed"]["status"] == "False"
    assert by_type["CreateResourceFailed"]["reason"] == "Succeeded"

    later = "2026-11-24T11:00:00Z"
    again = distribution.conditions(status["conditions"], failures[:1], later)
    times = {c["type"]: c["lastTransitionTime"] for c in again}
    assert times["ConflictOccurred"] == NOW and times["CreateResourceFailed"] == NOW
    assert times["NamespaceNotExists"] == later


labels = st.dictionaries(st.sampled_from(["env", "team"]), st.sampled_from(["a", "b"]), max_size=2)
namespace_names = st.sampled_from(["default", "kube-system", "kube-public", "n1", "n2", "n3"])


@given(
    st.lists(st.tuples(namespace_names, labels), unique_by=lambda t: t[0]),
    st.lists(namespace_names, unique=True),
    st.lists(namespace_names, unique=True),
    st.booleans(),
    labels,
)
def test_targets_partition_the_namespaces(existing, included, excluded, everything, match):
    namespaces = [ns(name, **lbls) for name, lbls in existing]
    targets = {
        "allNamespaces": everything,
        "includedNamespaces": names(*included),
        "excludedNamespaces": names(*excluded),
        "namespaceLabelSelector": {"matchLabels": match},
    }
    matched, unmatched = distribution.target_namespaces(rd(targets), namespaces)
    assert not set(matched) & set(unmatched)
    assert set(unmatched) | {m for m in matched if m in {n for n, _ in existing}} == {n for n, _ in existing}
    assert not set(matched) & ({"kube-system", "kube-public"} | set(excluded))
    for name, lbls in existing:
        expected = (
            name not in ("kube-system", "kube-public")
            and name not in excluded
            and (
                everything
                or name in included
                or (bool(match) and all(lbls.get(k) == v for k, v in match.items()))
            )
        )
        assert (name in matched) == expected
        assert distribution.matches_targets(ns(name, **lbls), rd(targets)) == expected
