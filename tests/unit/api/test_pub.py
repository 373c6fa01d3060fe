# ruff: noqa: E501  (exact apiserver messages read best unsplit in the tables below)
"""PodUnavailableBudget validation: selector/targetRef and maxUnavailable/minAvailable exclusivity,
annotations, immutability on update and conflicts with other PUBs."""

import pytest

from kruise.api import pub
from kruise.api.common import LabelSelector
from kruise.api.crdgen import build_crd
from kruise.api.pub import PodUnavailableBudget
from kruise.api.schemacheck import check


def make(name: str = "web-pub", annotations: dict | None = None, **spec) -> PodUnavailableBudget:
    spec = spec or {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": "25%"}
    meta = {"name": name, "namespace": "default", **({"annotations": annotations} if annotations else {})}
    return PodUnavailableBudget.model_validate(
        {
            "apiVersion": "policy.kruise.io/v1alpha1",
            "kind": "PodUnavailableBudget",
            "metadata": meta,
            "spec": spec,
        }
    )


def test_valid_by_selector_and_by_target():
    assert pub.validate(make()) == []
    target = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    assert pub.validate(make(targetRef=target, minAvailable=2)) == []
    assert make(targetRef=target, minAvailable=2).to_dict()["spec"]["targetRef"] == target


INVALID = [
    (
        {"maxUnavailable": 1},
        [
            "spec.selector, targetRef: Required value: no selector or targetRef defined in PodUnavailableBudget"
        ],
    ),
    (
        {
            "selector": {"matchLabels": {"a": "b"}},
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
            "maxUnavailable": 1,
        },
        ["spec.selector, targetRef: Required value: selector and targetRef are mutually exclusive"],
    ),
    (
        {"targetRef": {"kind": "Deployment", "name": "x"}, "maxUnavailable": 1},
        [
            'spec.TargetReference: Invalid value: {"kind":"Deployment","name":"x"}: empty TargetReference is not valid for PodUnavailableBudget.'
        ],
    ),
    (
        {"targetRef": {"apiVersion": "a/b/c", "kind": "K", "name": "x"}, "maxUnavailable": 1},
        [
            'spec.TargetReference: Invalid value: {"apiVersion":"a/b/c","kind":"K","name":"x"}: unexpected GroupVersion string: a/b/c'
        ],
    ),
    (
        {"selector": {}, "maxUnavailable": 1},
        ["spec.selector: Invalid value: {}: empty selector is not valid for PodUnavailableBudget."],
    ),
    (
        {"selector": {"matchLabels": {"a": "b"}}},
        [
            "spec.maxUnavailable, minAvailable: Required value: no maxUnavailable or minAvailable defined in PodUnavailableBudget"
        ],
    ),
    (
        {"selector": {"matchLabels": {"a": "b"}}, "maxUnavailable": 1, "minAvailable": 1},
        [
            "spec.maxUnavailable, minAvailable: Required value: maxUnavailable and minAvailable are mutually exclusive"
        ],
    ),
    (
        {"selector": {"matchLabels": {"a": "b"}}, "maxUnavailable": "150%"},
        ['spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%'],
    ),
    (
        {"selector": {"matchLabels": {"a": "b"}}, "minAvailable": -1},
        ["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"],
    ),
]


@pytest.mark.parametrize(("spec", "messages"), INVALID)
def test_invalid(spec, messages):
    assert [str(e) for e in pub.validate(make(**spec))] == messages


@pytest.mark.parametrize(
    ("annotations", "ok"),
    [
        ({"kruise.io/pub-protect-operations": "DELETE,EVICT"}, True),
        ({"kruise.io/pub-protect-operations": "DELETE,RESTART"}, False),
        ({"kruise.io/pub-protect-operations": "UPDATE,RESIZE"}, True),
        ({"kruise.io/pub-protect-operations": "RESIZE"}, True),
        ({"kruise.io/pub-protect-operations": "resize"}, False),
        ({"pub.kruise.io/protect-total-replicas": "10"}, True),
        ({"pub.kruise.io/protect-total-replicas": "ten"}, False),
        ({"pub.kruise.io/protect-total-replicas": "4294967296"}, False),
    ],
)
def test_annotations(annotations, ok):
    errs = [str(e) for e in pub.validate(make(annotations=annotations))]
    assert (errs == []) is ok
    if not ok:
        key = next(iter(annotations))
        assert errs == [f"metadata: Internal error: annotation[{key}] is invalid"]


def test_selector_and_target_are_immutable():
    old = make()
    new = make(selector={"matchLabels": {"app": "api"}}, maxUnavailable=1)
    assert [str(e) for e in pub.validate(new, old)] == [
        "spec.selector, targetRef: Required value: selector and targetRef cannot be modified"
    ]


def test_conflicts():
    target = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    first = make("a", targetRef=target, maxUnavailable=1)
    second = make("b", targetRef={**target, "apiVersion": "apps.kruise.io/v1beta1"}, maxUnavailable=1)
    assert [str(e) for e in pub.validate(second, others=[first, second])] == [
        'spec.targetReference: Invalid value: {"apiVersion":"apps.kruise.io/v1beta1","kind":"CloneSet","name":"web"}: pub.spec.targetReference is in conflict with other PodUnavailableBudget a'
    ]
    by_label = make("c")
    assert [str(e) for e in pub.validate(make("d"), others=[by_label])] == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: pub.spec.selector is in conflict with other PodUnavailableBudget c'
    ]
    other_keys = make("e", selector={"matchLabels": {"app": "web", "tier": "x"}}, maxUnavailable=1)
    assert pub.validate(make("f"), others=[other_keys]) == []


@pytest.mark.parametrize(
    ("first", "second", "overlap"),
    [
        ({"matchLabels": {"a": "1"}}, {"matchLabels": {"a": "1"}}, True),
        ({"matchLabels": {"a": "1"}}, {"matchLabels": {"a": "2"}}, False),
        ({"matchLabels": {"a": "1"}}, {"matchExpressions": [{"key": "a", "operator": "Exists"}]}, True),
        (
            {"matchLabels": {"a": "1"}},
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
            False,
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
            True,
        ),
    ],
)
def test_loose_overlap(first, second, overlap):
    a, b = LabelSelector.model_validate(first), LabelSelector.model_validate(second)
    assert pub.selectors_loosely_overlap(a, b) is overlap


def test_crd_accepts_examples():
    schema = build_crd(pub.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(make().to_dict(), schema).ok
    status = {"disruptedPods": {"p": "2024-01-01T00:00:00Z"}, "unavailableAllowed": 1, "currentAvailable": 3}
    assert check({**make().to_dict(), "status": status}, schema).ok
