"""KruisePodReady not-ready keys: add/remove, JSON message format, Ready recomputed."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from kruise.control.common import podreadiness
from tests.kit.pods import pod

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def gated_pod(conditions=None, gate=True):
    """A pod gated on KruisePodReady (unless not `gate`), all ready unless `conditions` says otherwise."""
    ready = [
        {"type": "ContainersReady", "status": "True"},
        {"type": "Ready", "status": "True"},
        {"type": "KruisePodReady", "status": "True"},
    ]
    gates = [{"conditionType": "KruisePodReady"}] if gate else []
    return pod(namespace=None, readinessGates=gates, conditions=conditions or ready)


def cond(p, type_):
    return next(c for c in p["status"]["conditions"] if c["type"] == type_)


def test_add_key_flips_condition_and_ready_false():
    out = podreadiness.add_not_ready_key(gated_pod(), "Lifecycle", "preDeleteHook", NOW)
    assert cond(out, "KruisePodReady")["status"] == "False"
    assert json.loads(cond(out, "KruisePodReady")["message"]) == [
        {"userAgent": "Lifecycle", "key": "preDeleteHook"}
    ]
    assert cond(out, "Ready")["status"] == "False"
    assert podreadiness.add_not_ready_key(out, "Lifecycle", "preDeleteHook", NOW) is None


def test_messages_are_sorted_and_removal_restores_true_only_when_empty():
    p = podreadiness.add_not_ready_key(gated_pod(), "Lifecycle", "preUpdateHook", NOW)
    p = podreadiness.add_not_ready_key(p, "Lifecycle", "preDeleteHook", NOW)
    keys = [m["key"] for m in json.loads(cond(p, "KruisePodReady")["message"])]
    assert keys == ["preDeleteHook", "preUpdateHook"]
    p = podreadiness.remove_not_ready_key(p, "Lifecycle", "preUpdateHook", NOW)
    assert cond(p, "KruisePodReady")["status"] == "False"
    p = podreadiness.remove_not_ready_key(p, "Lifecycle", "preDeleteHook", NOW)
    assert cond(p, "KruisePodReady")["status"] == "True"
    assert cond(p, "KruisePodReady")["message"] == "[]"
    assert podreadiness.remove_not_ready_key(p, "Lifecycle", "preDeleteHook", NOW) is None


def test_no_gate_no_change():
    assert podreadiness.add_not_ready_key(gated_pod(gate=False), "Lifecycle", "k", NOW) is None


def test_missing_condition_is_created():
    p = gated_pod(conditions=[{"type": "Ready", "status": "True"}])
    out = podreadiness.add_not_ready_key(p, "Lifecycle", "k", NOW)
    assert cond(out, "KruisePodReady")["status"] == "False"


def test_lifecycle_states_map_to_keys():
    preparing = podreadiness.lifecycle_readiness_change(gated_pod(), "PreparingUpdate", NOW)
    assert "preUpdateHook" in cond(preparing, "KruisePodReady")["message"]
    updated = podreadiness.lifecycle_readiness_change(preparing, "Updated", NOW)
    assert cond(updated, "KruisePodReady")["status"] == "True"
    assert podreadiness.lifecycle_readiness_change(gated_pod(), "Normal", NOW) is None
    deleting = podreadiness.lifecycle_readiness_change(gated_pod(), "PreparingDelete", NOW)
    assert "preDeleteHook" in cond(deleting, "KruisePodReady")["message"]


def owned(kind="CloneSet", api_version="apps.kruise.io/v1alpha1", controller=True):
    p = gated_pod(conditions=[{"type": "Ready", "status": "False"}])
    p["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u", "controller": controller}
    ]
    return p


def test_lacks_condition_needs_the_gate_and_no_condition():
    assert podreadiness.lacks_condition(gated_pod(conditions=[{"type": "Ready", "status": "False"}]))
    assert not podreadiness.lacks_condition(gated_pod())
    assert not podreadiness.lacks_condition(
        gated_pod(conditions=[{"type": "Ready", "status": "False"}], gate=False)
    )
    assert not podreadiness.lacks_condition({"metadata": {"name": "bare"}})


@pytest.mark.parametrize("kind", ["CloneSet", "StatefulSet", "DaemonSet", "BroadcastJob"])
def test_written_by_owner_for_kruise_workload_controllers(kind):
    assert podreadiness.written_by_owner(owned(kind=kind))
    assert not podreadiness.written_by_owner(owned(kind=kind, controller=False))
    assert not podreadiness.written_by_owner(owned(kind=kind, api_version="apps/v1"))


def test_written_by_owner_not_for_other_owners():
    for kind in ("Deployment", "UnitedDeployment", "SidecarSet", "Job"):
        assert not podreadiness.written_by_owner(owned(kind=kind))
    assert not podreadiness.written_by_owner(gated_pod())


def test_with_initial_condition_adds_true_once_and_leaves_ready_alone():
    before = gated_pod(conditions=[{"type": "Ready", "status": "False"}])
    out = podreadiness.with_initial_condition(before, NOW)
    assert cond(out, "KruisePodReady") == {
        "type": "KruisePodReady",
        "status": "True",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    assert cond(out, "Ready")["status"] == "False"
    assert "KruisePodReady" not in [c["type"] for c in before["status"]["conditions"]]
    assert podreadiness.with_initial_condition(out, NOW) is None
    assert (
        podreadiness.with_initial_condition(gated_pod(gate=False, conditions=[{"type": "Ready"}]), NOW)
        is None
    )
