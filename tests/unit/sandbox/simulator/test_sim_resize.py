"""The kubelet's in-place resize decisions (sandbox/simulator/resize.py) on plain dicts."""

from __future__ import annotations

import pytest

from kruise.sandbox.simulator import resize

NODE = {"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "3"}}}


def _pod(cpu: str, memory: str = "1Gi") -> dict:
    resources = {"requests": {"cpu": cpu, "memory": memory}}
    return {"spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]}}


def test_alone_over_the_node_is_infeasible_memory_named_first():
    assert resize.pending(_pod("8", "16Gi"), NODE, []) == (
        "Infeasible",
        "Node didn't have enough capacity: memory, requested: 17179869184, capacity: 8589934592",
    )
    assert resize.pending(_pod("5"), NODE, []) == (
        "Infeasible",
        "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000",
    )


def test_not_fitting_beside_other_pods_is_deferred_with_the_admission_text():
    assert resize.pending(_pod("3"), NODE, [_pod("1500m")]) == (
        "Deferred",
        "Node didn't have enough resource: cpu, requested: 3000, used: 1500, capacity: 4000",
    )
    assert resize.pending(_pod("1"), NODE, [_pod("1"), _pod("1"), _pod("1")])[0] == "Deferred"
    assert resize.pending(_pod("2"), NODE, [_pod("2")]) is None


@pytest.mark.parametrize(
    ("policy", "changed", "restart"),
    [
        ([], {"cpu"}, False),
        ([{"resourceName": "memory", "restartPolicy": "RestartContainer"}], {"cpu"}, False),
        ([{"resourceName": "memory", "restartPolicy": "RestartContainer"}], {"memory"}, True),
        ([{"resourceName": "cpu", "restartPolicy": "NotRequired"}], {"cpu"}, False),
    ],
)
def test_restart_follows_the_resize_policy_of_changed_resources(policy, changed, restart):
    assert resize.needs_restart({"name": "c", "resizePolicy": policy}, changed) is restart


def test_changes_are_compared_by_quantity():
    before = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2"}}
    after = {"requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": "3"}}
    assert resize.changed_resources(before, after) == {"cpu"}
    assert resize.same({"c": before}, {"c": {**after, "limits": {"cpu": "2000m"}}})


def test_only_sidecars_and_regular_containers_are_resizable():
    spec = {
        "initContainers": [{"name": "setup"}, {"name": "proxy", "restartPolicy": "Always"}],
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
    }
    assert resize.desired({"spec": spec}) == {"proxy": {}, "app": {"requests": {"cpu": "1"}}}


def test_conditions_are_absent_once_settled():
    assert resize.conditions(None, False) == []
    assert resize.conditions(("Infeasible", "m"), True) == [
        {"type": "PodResizePending", "status": "True", "reason": "Infeasible", "message": "m"},
        {"type": "PodResizeInProgress", "status": "True"},
    ]
