"""kube-apiserver's Priority admission plugin for pod CREATE, as pure logic."""

from __future__ import annotations

import pytest

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.priority import admit_pod

CLASSES = {
    "high": {"metadata": {"name": "high"}, "value": 100},
    "gentle": {"metadata": {"name": "gentle"}, "value": 50, "preemptionPolicy": "Never"},
}


def admit(spec: dict, classes: dict = CLASSES) -> dict:
    pod = {"metadata": {"name": "p"}, "spec": dict(spec)}
    admit_pod(pod, classes.get, lambda: classes.values())
    return pod["spec"]


def test_no_class_and_no_default_is_priority_zero():
    spec = admit({})
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")


def test_the_global_default_class_applies_when_none_is_named():
    classes = {**CLASSES, "base": {"metadata": {"name": "base"}, "value": 7, "globalDefault": True}}
    assert admit({}, classes)["priority"] == 7


def test_the_named_class_gives_value_and_preemption_policy():
    spec = admit({"priorityClassName": "gentle"})
    assert (spec["priority"], spec["preemptionPolicy"]) == (50, "Never")


def test_readmission_after_a_webhook_dropped_priority_takes_the_new_class():
    spec = admit({})
    spec = admit({**spec, "priorityClassName": "high", "priority": None})
    assert spec["priority"] == 100


def test_system_classes_exist_without_being_stored():
    assert admit({"priorityClassName": "system-node-critical"})["priority"] == 2000001000


def test_unknown_class_is_forbidden():
    with pytest.raises(StatusError) as refused:
        admit({"priorityClassName": "nope"})
    assert refused.value.code == 403
    assert "no PriorityClass with name nope was found" in str(refused.value)


def test_a_contradicting_priority_is_forbidden():
    with pytest.raises(StatusError) as refused:
        admit({"priorityClassName": "high", "priority": 0})
    assert "must not be provided in pod spec; priority admission controller computed 100" in str(
        refused.value
    )


def test_a_contradicting_preemption_policy_is_forbidden():
    with pytest.raises(StatusError) as refused:
        admit({"priorityClassName": "gentle", "preemptionPolicy": "PreemptLowerPriority"})
    assert "PreemptionPolicy (PreemptLowerPriority)" in str(refused.value)
