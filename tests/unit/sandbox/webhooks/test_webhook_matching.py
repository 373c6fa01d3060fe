"""Rule, scope and selector matching, table-driven against kube-apiserver's matcher semantics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver.admission import AdmissionAttributes
from kruise.sandbox.apiserver.webhooks import InvalidSelector, rule_matches, selector_matches


def attrs(
    op="CREATE", group="", version="v1", resource="pods", sub="", namespace="default", obj=None, old=None
) -> AdmissionAttributes:
    return AdmissionAttributes(
        operation=op,
        group=group,
        version=version,
        resource=resource,
        subresource=sub,
        kind={"group": group, "version": version, "kind": "X"},
        namespace=namespace,
        name="x",
        object=obj,
        old_object=old,
    )


def rule(resources, ops=("CREATE",), groups=("",), versions=("v1",), scope=None):
    r = {
        "operations": list(ops),
        "apiGroups": list(groups),
        "apiVersions": list(versions),
        "resources": list(resources),
    }
    if scope:
        r["scope"] = scope
    return r


@pytest.mark.parametrize(
    ("resources", "sub", "expected"),
    [
        (["pods"], "", True),
        (["pods"], "status", False),
        (["pods/status"], "status", True),
        (["pods/status"], "", False),
        (["pods/eviction"], "eviction", True),
        (["pods/eviction"], "status", False),
        (["pods/*"], "", True),
        (["pods/*"], "eviction", True),
        (["*"], "", True),
        (["*"], "status", False),
        (["*/*"], "eviction", True),
        (["*/status"], "status", True),
        (["*/status"], "eviction", False),
        (["deployments"], "", False),
        (["deployments", "pods"], "", True),
    ],
)
def test_resources_and_subresources(resources, sub, expected):
    assert rule_matches(rule(resources), attrs(sub=sub)) is expected


@pytest.mark.parametrize(
    ("kw", "request_kw", "expected"),
    [
        ({"ops": ["*"]}, {"op": "DELETE"}, True),
        ({"ops": ["UPDATE"]}, {"op": "CREATE"}, False),
        ({"ops": ["CREATE", "UPDATE"]}, {"op": "UPDATE"}, True),
        ({"groups": ["apps"]}, {}, False),
        ({"groups": ["*"]}, {"group": "apps"}, True),
        ({"versions": ["v1beta1"]}, {}, False),
        ({"versions": ["*"]}, {"version": "v1alpha1"}, True),
        ({"groups": [], "versions": ["*"]}, {}, False),
    ],
)
def test_operations_groups_versions(kw, request_kw, expected):
    assert rule_matches(rule(["*"], **kw), attrs(**request_kw)) is expected


@pytest.mark.parametrize(
    ("scope", "resource", "namespace", "expected"),
    [
        ("*", "pods", "default", True),
        ("*", "nodes", "", True),
        ("Namespaced", "pods", "default", True),
        ("Namespaced", "nodes", "", False),
        ("Cluster", "nodes", "", True),
        ("Cluster", "pods", "default", False),
        # namespace objects are cluster-scoped even though admission carries their name as namespace
        ("Cluster", "namespaces", "team", True),
        ("Namespaced", "namespaces", "team", False),
    ],
)
def test_scope(scope, resource, namespace, expected):
    assert rule_matches(rule(["*"], scope=scope), attrs(resource=resource, namespace=namespace)) is expected


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        (None, {}, True),
        ({}, {"a": "b"}, True),
        ({"matchLabels": {"a": "b"}}, {"a": "b", "c": "d"}, True),
        ({"matchLabels": {"a": "b"}}, {"a": "c"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "y"]}]}, {"a": "y"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {"a": "x"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
    ],
)
def test_label_selector(selector, labels, expected):
    assert selector_matches(selector, labels) is expected


@pytest.mark.parametrize(
    "expr",
    [{"key": "a", "operator": "In", "values": []}, {"key": "a", "operator": "Near", "values": ["x"]}],
)
def test_invalid_selector_is_refused(expr):
    with pytest.raises(InvalidSelector):
        selector_matches({"matchExpressions": [expr]}, {"a": "x"})


label = st.text(alphabet="abc", min_size=1, max_size=2)


@given(labels=st.dictionaries(label, label, max_size=4), wanted=st.dictionaries(label, label, max_size=3))
def test_match_labels_is_subset(labels, wanted):
    assert selector_matches({"matchLabels": wanted}, labels) is (wanted.items() <= labels.items())
