"""PodUnavailableBudget arithmetic, protection rules and record expiry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.pub import budget

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def stamp(delta: float) -> str:
    return (NOW + timedelta(seconds=delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def a_pub(spec=None, status=None, annotations=None):
    return {
        "metadata": {"name": "p", "namespace": "ns", "generation": 2, "annotations": annotations or {}},
        "spec": {"maxUnavailable": 1} if spec is None else spec,
        "status": status or {},
    }


def a_pod(name="a", ready=True, phase="Running", labels=None, annotations=None, deleting=False):
    meta = {"name": name, "namespace": "ns", "labels": labels or {}, "annotations": annotations or {}}
    if deleting:
        meta["deletionTimestamp"] = stamp(0)
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


@pytest.mark.parametrize(
    ("spec", "expected", "desired"),
    [
        ({"maxUnavailable": 1}, 4, 3),
        ({"maxUnavailable": "25%"}, 4, 3),
        ({"maxUnavailable": "30%"}, 4, 2),  # rounds up: 1.2 -> 2 unavailable
        ({"maxUnavailable": 10}, 4, 0),
        ({"minAvailable": 3}, 10, 3),
        ({"minAvailable": "75%"}, 4, 3),
        ({"minAvailable": "70%"}, 4, 3),  # 2.8 -> 3
        ({}, 4, 0),
    ],
)
def test_desired_available(spec, expected, desired):
    assert budget.desired_available(a_pub(spec), expected) == desired


@given(st.integers(0, 500), st.integers(0, 100))
def test_desired_available_is_bounded(expected, percent):
    desired = budget.desired_available(a_pub({"maxUnavailable": f"{percent}%"}), expected)
    assert 0 <= desired <= expected


def test_protect_operations():
    assert budget.protect_operations(a_pub()) == {"DELETE", "EVICT", "UPDATE", "RESIZE"}
    only_delete = a_pub(annotations={"kruise.io/pub-protect-operations": "DELETE"})
    assert budget.protect_operations(only_delete) == {"DELETE"}
    spec = a_pub({"maxUnavailable": 1, "protectOperations": ["EVICT"]})
    assert budget.protect_operations(spec) == {"EVICT"}


def test_needs_check_exemptions():
    the_pub = a_pub(status={"desiredAvailable": 3, "unavailableAllowed": 1})
    assert budget.needs_check(the_pub, a_pod(), "DELETE")
    assert not budget.needs_check(None, a_pod(), "DELETE")
    assert not budget.needs_check(the_pub, a_pod(ready=False), "DELETE")
    assert not budget.needs_check(the_pub, a_pod(phase="Pending"), "DELETE")
    assert not budget.needs_check(the_pub, a_pod(annotations={"pub.kruise.io/no-protect": "true"}), "DELETE")
    assert not budget.needs_check(the_pub, a_pod(labels={"unavailable-pod.kruise.io/x": "1"}), "DELETE")
    assert not budget.needs_check(a_pub(status={"desiredAvailable": 0}), a_pod(), "DELETE")
    only_evict = a_pub({"maxUnavailable": 1, "protectOperations": ["EVICT"]}, {"desiredAvailable": 3})
    assert not budget.needs_check(only_evict, a_pod(), "DELETE")
    recorded = a_pub(status={"desiredAvailable": 3, "disruptedPods": {"a": stamp(0)}})
    assert not budget.needs_check(recorded, a_pod("a"), "DELETE")
    ignoring = a_pub(
        {"maxUnavailable": 1, "ignoredPodSelector": {"matchLabels": {"skip": "1"}}}, {"desiredAvailable": 3}
    )
    assert not budget.needs_check(ignoring, a_pod(labels={"skip": "1"}), "DELETE")


def test_take_slot_records_and_refuses():
    the_pub = a_pub(status={"unavailableAllowed": 1, "desiredAvailable": 3})
    taken = budget.take_slot(the_pub, "a", "EVICT", NOW)
    assert taken["status"]["unavailableAllowed"] == 0
    assert taken["status"]["disruptedPods"] == {"a": stamp(0)}
    assert the_pub["status"]["unavailableAllowed"] == 1  # input untouched
    with pytest.raises(budget.Refused, match=r'podunavailablebudget\.policy\.kruise\.io "p" is forbidden'):
        budget.take_slot(taken, "b", "DELETE", NOW)
    updated = budget.take_slot(the_pub, "a", "UPDATE", NOW)
    assert updated["status"]["unavailablePods"] == {"a": stamp(0)}


def test_records_expire():
    pods = [a_pod("a"), a_pod("b"), a_pod("c"), a_pod("gone", deleting=True)]
    the_pub = a_pub(
        status={
            "disruptedPods": {"a": stamp(-21), "b": stamp(-5), "gone": stamp(-1)},
            "unavailablePods": {"c": stamp(-11)},
        }
    )
    disrupted, unavailable, not_deleted, recheck = budget.live_records(the_pub, pods, NOW)
    assert disrupted == {"b": stamp(-5)}
    assert unavailable == {}
    assert not_deleted == ["a"]
    assert recheck == NOW + timedelta(seconds=15)


def test_compute_status():
    pods = [a_pod("a"), a_pod("b"), a_pod("c", ready=False), a_pod("d")]
    the_pub = a_pub({"maxUnavailable": 1}, {"disruptedPods": {"d": stamp(-1)}})
    status, _, _ = budget.compute_status(the_pub, pods, 4, NOW)
    assert status["currentAvailable"] == 2  # c unready, d disrupted
    assert status["desiredAvailable"] == 3
    assert status["unavailableAllowed"] == 0
    assert status["totalReplicas"] == 4 and status["observedGeneration"] == 2
    assert budget.status_changed({}, status)
    assert not budget.status_changed(status, dict(status))


def test_unavailable_change_and_related_pub():
    old = a_pod()
    new = a_pod(labels={"unavailable-pod.kruise.io/drain": "true"})
    assert budget.is_unavailable_change(old, new)
    assert not budget.is_unavailable_change(old, a_pod(annotations={"x": "y"}))
    changed = a_pod()
    changed["spec"]["containers"][0]["image"] = "nginx:2"
    assert budget.is_unavailable_change(old, changed)
    assert budget.related_pub(a_pod(annotations={"kruise.io/related-pub": "old"})) == "old"
    assert (
        budget.related_pub(
            a_pod(annotations={"pub.kruise.io/related-pub": "new", "kruise.io/related-pub": "old"})
        )
        == "new"
    )
    assert budget.related_pub_patch("x")["metadata"]["annotations"] == {
        "kruise.io/related-pub": "x",
        "pub.kruise.io/related-pub": "x",
    }


def test_pub_for_new_pod_by_target_or_selector():
    by_target = {
        "metadata": {"name": "b", "namespace": "ns"},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}},
    }
    by_selector = {
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}},
    }
    owned = a_pod(labels={"app": "y"})
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web", "controller": True}
    ]
    assert budget.pub_for_new_pod(owned, [by_selector, by_target]) == "b"
    assert budget.pub_for_new_pod(a_pod(labels={"app": "x"}), [by_target, by_selector]) == "a"
    assert budget.pub_for_new_pod(a_pod(labels={"app": "z"}), [by_target, by_selector]) is None


def resizing_pod(status_cpu: str):
    """A pod whose in-place resize set cpu 200m; kubelet reports ``status_cpu``."""
    state = '{"revision":"r2","updateTimestamp":"2024-01-01T00:00:00Z","updateResources":true}'
    pod = a_pod(annotations={"apps.kruise.io/inplace-update-state": state})
    pod["spec"] = {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "200m"}}}]
    }
    pod["status"]["containerStatuses"] = [
        {"name": "c", "image": "nginx", "imageID": "x", "resources": {"requests": {"cpu": status_cpu}}}
    ]
    return pod


def test_pod_mid_resize_is_inconsistent_only_with_vertical_scaling():
    pending, applied = resizing_pod("100m"), resizing_pod("0.2")
    assert budget.is_pod_state_consistent(pending)  # gate off: resources are not looked at
    assert not budget.is_pod_state_consistent(pending, vertical_scaling=True)
    assert budget.is_pod_state_consistent(applied, vertical_scaling=True)
    the_pub = a_pub(spec={"maxUnavailable": 1}, status={"desiredAvailable": 1})
    assert not budget.needs_check(the_pub, pending, "UPDATE", vertical_scaling=True)
    assert budget.current_available([pending, applied], {}, {}, vertical_scaling=True) == 1
    assert budget.current_available([pending, applied], {}, {}) == 2


def test_pub_for_new_pod_resolves_the_replicaset_owner_to_its_deployment():
    """upstream's controller finder at pod creation: the new pod's owner is its ReplicaSet, the PUB
    targets the Deployment; an owner not known yet matches no targetRef PUB (a selector PUB still)."""
    by_target = {
        "metadata": {"name": "b", "namespace": "ns"},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    }
    by_selector = {
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "y"}}},
    }
    owned = a_pod(labels={"app": "y"})
    rs_ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f", "controller": True}
    owned["metadata"]["ownerReferences"] = [rs_ref]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}
    seen = []

    def finder(owner, namespace):
        seen.append((owner["name"], namespace))
        return deployment

    assert budget.pub_for_new_pod(owned, [by_target, by_selector], finder) == "b"
    assert seen == [("web-5d8f", "ns")]
    assert budget.pub_for_new_pod(owned, [by_target], lambda _o, _n: None) is None
    assert budget.pub_for_new_pod(owned, [by_target, by_selector], lambda _o, _n: None) == "c"
    # without a finder the ReplicaSet is the workload
    assert budget.pub_for_new_pod(owned, [by_target]) is None


@pytest.mark.parametrize("value", ["True", "TRUE", "1", "t", "yes", ""])
def test_only_exactly_true_lifts_protection(value: str) -> None:
    assert not budget.is_no_protection(a_pod(annotations={"pub.kruise.io/no-protect": value}))
    assert budget.is_no_protection(a_pod(annotations={"pub.kruise.io/no-protect": "true"}))
