"""Advanced StatefulSet rolling update: order, partition, maxUnavailable, paused, OnDelete,
specified-delete, unorderedUpdate, and how one pod is updated."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from sts_builders import CUR, NOW, REVS, UPD, names, ordinal_pod, pods, sts

from kruise.control.statefulset.identity import ordinal_range
from kruise.control.statefulset.scaleplan import plan_scale
from kruise.control.statefulset.update import (
    plan_update,
    refreshed_lifecycle_state,
    sort_update_targets,
    update_max_unavailable,
    update_method,
)


def run(set_, current_pods):
    scale = plan_scale(set_, current_pods, REVS, NOW)
    return plan_update(set_, scale.live_range, scale.replicas, scale.placeholders, UPD, NOW)


def test_descending_one_at_a_time():
    plan = run(sts(3), pods(0, 1, 2, revision=CUR))
    assert names(plan.actions) == ["UpdatePod:web-2"] and plan.blocked_by == "web-1"


def test_waits_for_unavailable_updated_pod():
    plan = run(sts(3), [*pods(0, 1, revision=CUR), ordinal_pod(2, ready=False)])
    assert plan.actions == [] and plan.blocked_by == "web-1"


def test_partition_keeps_lower_ordinals():
    set_ = sts(5, policy="Parallel", partition=2, max_unavailable=5)
    plan = run(set_, pods(0, 1, 2, 3, 4, revision=CUR))
    assert names(plan.actions) == ["UpdatePod:web-4", "UpdatePod:web-3", "UpdatePod:web-2"]


def test_max_unavailable_parallel():
    set_ = sts(5, policy="Parallel", max_unavailable=2)
    plan = run(set_, pods(0, 1, 2, 3, 4, revision=CUR))
    assert names(plan.actions) == ["UpdatePod:web-4", "UpdatePod:web-3"]
    # an unavailable, not yet updated pod is updated first without using more budget
    plan = run(set_, [*pods(0, 1, 2, 3, revision=CUR), ordinal_pod(4, CUR, ready=False)])
    assert names(plan.actions) == ["UpdatePod:web-4", "UpdatePod:web-3"]
    assert update_max_unavailable(sts(10, policy="Parallel", max_unavailable="25%")) == 2
    assert update_max_unavailable(sts(2, policy="Parallel", max_unavailable="10%")) == 1


def test_paused_and_on_delete_plan_nothing():
    assert run(sts(3, paused=True), pods(0, 1, 2, revision=CUR)).skipped == "paused"
    assert run(sts(3, strategy_type="OnDelete"), pods(0, 1, 2, revision=CUR)).skipped == "OnDelete"


def test_specified_delete_ignores_partition():
    marked = ordinal_pod(1, CUR, labels={"apps.kruise.io/specified-delete": "true"})
    plan = run(sts(3, partition=3), [ordinal_pod(0, CUR), marked, ordinal_pod(2, CUR)])
    assert names(plan.actions) == ["DeletePod:web-1"] and plan.actions[0].reason == "specified-delete"


def test_specified_delete_respects_budget():
    label = {"apps.kruise.io/specified-delete": "true"}
    set_ = sts(3, partition=3)
    plan = run(
        set_,
        [
            ordinal_pod(0, CUR, labels=label),
            ordinal_pod(1, CUR, ready=False),
            ordinal_pod(2, CUR, labels=label),
        ],
    )
    assert plan.actions == []


def test_reserved_slot_counts_for_partition():
    # live ordinals 0,2,3 occupy slots 0,2,3; partition 1 keeps only web-0
    set_ = sts(3, policy="Parallel", partition=1, max_unavailable=3, reserve=[1])
    plan = run(set_, [ordinal_pod(0, CUR), ordinal_pod(2, CUR), ordinal_pod(3, CUR)])
    assert names(plan.actions) == ["UpdatePod:web-3", "UpdatePod:web-2"]


def test_placeholders_count_but_are_not_updated():
    set_ = sts(3, policy="Parallel", max_unavailable=1)
    plan = run(set_, pods(0, 1, revision=CUR))  # web-2 is created this pass
    assert plan.actions == [] and "web-2" in plan.unavailable


def test_unordered_update_priority():
    set_ = sts(3, policy="Parallel", max_unavailable=3)
    set_["spec"]["updateStrategy"]["rollingUpdate"]["unorderedUpdate"] = {
        "priorityStrategy": {
            "weightPriority": [{"weight": 10, "matchSelector": {"matchLabels": {"first": "y"}}}]
        }
    }
    replicas = {0: ordinal_pod(0, CUR, labels={"first": "y"}), 1: ordinal_pod(1, UPD), 2: ordinal_pod(2, CUR)}
    assert sort_update_targets(set_, ordinal_range(set_["spec"]), replicas, UPD) == [1, 0, 2]
    set_["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1
    assert sort_update_targets(set_, ordinal_range(set_["spec"]), replicas, UPD) == [1, 0]


@given(
    replicas=st.integers(1, 10),
    partition=st.integers(0, 12),
    budget=st.integers(1, 10),
    updated=st.sets(st.integers(0, 9)),
    unready=st.sets(st.integers(0, 9)),
)
def test_update_invariants(replicas, partition, budget, updated, unready):
    set_ = sts(replicas, policy="Parallel", partition=partition, max_unavailable=budget)
    current = [ordinal_pod(n, UPD if n in updated else CUR, ready=n not in unready) for n in range(replicas)]
    plan = run(set_, current)
    touched = [a.pod["metadata"]["name"] for a in plan.actions]
    ordinals = [int(name.split("-")[1]) for name in touched]
    assert ordinals == sorted(ordinals, reverse=True)
    assert all(n >= partition and n not in updated for n in ordinals)
    unavailable_before = {n for n in range(replicas) if n in unready}
    assert len(unavailable_before | set(ordinals)) <= max(budget, len(unavailable_before))


def in_place_sts(**lifecycle):
    set_ = sts(3)
    set_["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] = "InPlaceIfPossible"
    if lifecycle:
        set_["spec"]["lifecycle"] = lifecycle
    return set_


def test_update_method():
    assert update_method(sts(3), ordinal_pod(0, CUR), True).kind == "delete"
    assert update_method(in_place_sts(), ordinal_pod(0, CUR), True).kind == "in-place"
    assert update_method(in_place_sts(), ordinal_pod(0, CUR), False).kind == "delete"
    only = in_place_sts()
    only["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] = "InPlaceOnly"
    method = update_method(only, ordinal_pod(0, CUR), False)
    assert method.kind == "error" and "InPlaceOnly but Pod web-0" in method.message
    hooked = in_place_sts(inPlaceUpdate={"labelsHandler": {"h": "1"}, "markPodNotReady": True})
    method = update_method(hooked, ordinal_pod(0, CUR, labels={"h": "1"}), True)
    assert method.kind == "preparing-update" and method.mark_not_ready
    preparing = ordinal_pod(0, CUR, labels={"h": "1", "lifecycle.apps.kruise.io/state": "PreparingUpdate"})
    assert update_method(hooked, preparing, True).kind == "wait"
    deleting = ordinal_pod(0, CUR, labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})
    assert update_method(in_place_sts(), deleting, True).kind == "error"
    pre_delete = sts(3, lifecycle={"preDelete": {"finalizersHandler": ["f"]}})
    held = ordinal_pod(0, CUR)
    held["metadata"]["finalizers"] = ["f"]
    assert update_method(pre_delete, held, False).kind == "prepare-delete"


def test_refreshed_lifecycle_state():
    state = "lifecycle.apps.kruise.io/state"
    assert (
        refreshed_lifecycle_state(sts(), ordinal_pod(0, labels={state: "PreparingNormal"}), UPD, True)
        == "Normal"
    )
    assert refreshed_lifecycle_state(sts(), ordinal_pod(0, labels={state: "Updating"}), UPD, False) is None
    assert refreshed_lifecycle_state(sts(), ordinal_pod(0, labels={state: "Updating"}), UPD, True) == "Normal"
    hooked = sts(lifecycle={"inPlaceUpdate": {"labelsHandler": {"h": "1"}}})
    assert (
        refreshed_lifecycle_state(hooked, ordinal_pod(0, labels={state: "Updating"}), UPD, True) == "Updated"
    )
    assert (
        refreshed_lifecycle_state(hooked, ordinal_pod(0, labels={state: "Updated", "h": "1"}), UPD, True)
        == "Normal"
    )
    assert (
        refreshed_lifecycle_state(sts(), ordinal_pod(0, CUR, labels={state: "PreparingUpdate"}), UPD, True)
        is None
    )


def test_unordered_update_puts_preparing_update_pods_first_only_with_the_gate():
    """Gate PreparingUpdateAsUpdate: a PreparingUpdate pod counts as updated (upstream
    ``revision.IsPodUpdate`` in ``sortPodsToUpdate``), so it leads the walk like updated pods."""
    set_ = sts(3, policy="Parallel", max_unavailable=3)
    set_["spec"]["updateStrategy"]["rollingUpdate"]["unorderedUpdate"] = {}
    state = {"lifecycle.apps.kruise.io/state": "PreparingUpdate"}
    replicas = {0: ordinal_pod(0, CUR, labels=state), 1: ordinal_pod(1, UPD), 2: ordinal_pod(2, CUR)}
    live = ordinal_range(set_["spec"])
    assert sort_update_targets(set_, live, replicas, UPD) == [1, 2, 0]
    assert sort_update_targets(set_, live, replicas, UPD, preparing_update_as_update=True) == [1, 0, 2]
