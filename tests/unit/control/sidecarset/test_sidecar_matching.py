"""Which SidecarSets a new pod gets, and in which order."""

from __future__ import annotations

import pytest
from sidecar_builders import SIDECAR1, app_pod, sidecarset

from kruise.control.sidecarset.matching import (
    SelectorError,
    is_active_pod,
    matching_sidecarsets,
    pod_matches,
    selector_matches,
)

NAMESPACES = {"default": {"env": "prod"}, "dev": {"env": "dev"}}


def labels_of(name: str) -> dict[str, str] | None:
    return NAMESPACES.get(name)


def names(items: list[dict]) -> list[str]:
    return [s["metadata"]["name"] for s in items]


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        (None, {"a": "1"}, False),
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"b": "1"}, True),
    ],
)
def test_selector_matches(selector, labels, expected):
    assert selector_matches(selector, labels) is expected


def test_bad_operator_is_an_error():
    with pytest.raises(SelectorError, match='"Near" is not a valid label selector operator'):
        selector_matches({"matchExpressions": [{"key": "a", "operator": "Near"}]}, {})


@pytest.mark.parametrize(
    ("spec", "pod_kwargs", "expected"),
    [
        ({}, {}, True),
        ({}, {"labels": {"app": "other"}}, False),
        ({"selector": {}}, {}, False),  # an empty selector injects nowhere
        ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, {}, True),
        ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, {"namespace": "dev"}, False),
        ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, {"namespace": "unknown"}, False),
    ],
)
def test_pod_matches(spec, pod_kwargs, expected):
    stored = sidecarset("s", [SIDECAR1], **spec)
    assert pod_matches(stored, app_pod(**pod_kwargs), labels_of) is expected


def test_pinned_namespace_paused_and_order():
    sets = [
        sidecarset("zz-cluster", [SIDECAR1]),
        sidecarset("aa-cluster", [SIDECAR1]),
        sidecarset("mm-pinned", [SIDECAR1], namespace="default"),
        sidecarset("other-ns", [SIDECAR1], namespace="dev"),
        sidecarset("paused", [SIDECAR1], injectionStrategy={"paused": True}),
    ]
    assert names(matching_sidecarsets(sets, app_pod(), labels_of)) == [
        "mm-pinned",
        "aa-cluster",
        "zz-cluster",
    ]


def test_pod_without_namespace_counts_as_default():
    pinned = sidecarset("pinned", [SIDECAR1], namespace="default")
    bare = app_pod()
    del bare["metadata"]["namespace"]
    assert names(matching_sidecarsets([pinned], bare, labels_of)) == ["pinned"]


def test_canary_replaces_its_base():
    canary_meta = {
        "annotations": {"apps.kruise.io/sidecarset-canary": "true", "apps.kruise.io/sidecarset-base": "base"}
    }
    sets = [sidecarset("base", [SIDECAR1]), sidecarset("canary", [SIDECAR1], metadata=canary_meta)]
    assert names(matching_sidecarsets(sets, app_pod(), labels_of)) == ["canary"]
    unselected = sidecarset("canary", [SIDECAR1], metadata=canary_meta, selector={"matchLabels": {"x": "y"}})
    assert names(matching_sidecarsets([sets[0], unselected], app_pod(), labels_of)) == ["base"]


@pytest.mark.parametrize(
    ("status", "deleting", "active"),
    [({}, False, True), ({"phase": "Succeeded"}, False, False), ({"phase": "Failed"}, False, False),
     ({"phase": "Running"}, True, False)],
)  # fmt: skip
def test_is_active_pod(status, deleting, active):
    p = app_pod()
    p["status"] = status
    if deleting:
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert is_active_pod(p) is active
