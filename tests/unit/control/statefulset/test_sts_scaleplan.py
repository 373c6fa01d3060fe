"""Advanced StatefulSet scale pass: OrderedReady vs Parallel, condemned pods, failed pods, budget."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from sts_builders import NOW, REVS, SAME, names, ordinal_pod, pods, sts

from kruise.control.statefulset.actions import (
    AlignClaimOwners,
    CreatePod,
    DeletePod,
    FixIdentity,
    PrepareDelete,
)
from kruise.control.statefulset.scaleplan import Gates, plan_scale


def test_ordered_ready_creates_one_at_a_time():
    plan = plan_scale(sts(3), [], SAME, NOW)
    assert names(plan.actions) == ["CreatePod:web-0"]
    assert not plan.update_allowed
    plan = plan_scale(sts(3), pods(0), SAME, NOW)
    assert names(plan.actions) == ["CreatePod:web-1"]


def test_ordered_ready_waits_for_predecessor_ready():
    plan = plan_scale(sts(3), [ordinal_pod(0, ready=False)], SAME, NOW)
    assert plan.actions == () and "web-0" in (plan.wait or "")
    assert plan.first_unhealthy == "web-0"


def test_ordered_ready_waits_min_ready_seconds():
    set_ = sts(3)
    set_["spec"]["updateStrategy"]["rollingUpdate"]["minReadySeconds"] = 30
    plan = plan_scale(set_, [ordinal_pod(0, ready_since=timedelta(seconds=10))], SAME, NOW)
    assert plan.actions == () and plan.requeue_after == 20


def test_parallel_creates_all_missing():
    plan = plan_scale(sts(4, policy="Parallel"), pods(1), SAME, NOW)
    assert names(plan.actions) == ["CreatePod:web-0", "CreatePod:web-2", "CreatePod:web-3"]
    assert plan.update_allowed and plan.placeholders == {0, 2, 3}


def test_parallel_scale_budget_caps_new_pods_in_flight():
    set_ = sts(10, policy="Parallel", scaleStrategy={"maxUnavailable": 1})
    plan = plan_scale(set_, pods(0, 1, 2), SAME, NOW)
    assert names(plan.actions) == ["CreatePod:web-3"]
    plan = plan_scale(set_, [*pods(0, 1, 2), ordinal_pod(3, ready=False)], SAME, NOW)
    assert plan.actions == ()
    set_["spec"]["scaleStrategy"]["maxUnavailable"] = 3
    plan = plan_scale(set_, [*pods(0, 1, 2), ordinal_pod(3, ready=False)], SAME, NOW)
    assert names(plan.actions) == ["CreatePod:web-4", "CreatePod:web-5"]


def test_created_pod_revision_follows_partition():
    plan = plan_scale(sts(3, policy="Parallel", partition=2), [], REVS, NOW)
    revisions = [(a.ordinal, a.revision) for a in plan.actions if isinstance(a, CreatePod)]
    assert revisions == [(0, "web-v1"), (1, "web-v1"), (2, "web-v2")]
    created = plan.actions[0].pod
    assert created["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == "Normal"
    assert created["spec"]["containers"][0]["image"] == "nginx:1"


def test_pre_normal_hook_creates_preparing_normal():
    set_ = sts(1, lifecycle={"preNormal": {"labelsHandler": {"ok": "true"}}})
    (action,) = plan_scale(set_, [], SAME, NOW).actions
    assert action.pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == "PreparingNormal"


def test_ordered_scale_in_highest_first_one_at_a_time():
    plan = plan_scale(sts(2), pods(0, 1, 2, 3), SAME, NOW)
    assert names(plan.actions) == ["DeletePod:web-3"]
    assert plan.actions[0].reason == "condemned"
    plan = plan_scale(sts(2), [*pods(0, 1, 2), ordinal_pod(3, terminating=True)], SAME, NOW)
    assert plan.actions == () and "terminate" in (plan.wait or "")


def test_ordered_scale_in_waits_for_unhealthy_pod_but_may_delete_it():
    # web-1 (live) unhealthy blocks the deletion of healthy web-3
    plan = plan_scale(
        sts(2),
        [ordinal_pod(0), ordinal_pod(1, ready=False), ordinal_pod(2, phase="Pending"), ordinal_pod(3)],
        SAME,
        NOW,
    )
    assert plan.actions == ()
    # the first unhealthy pod itself may be removed
    plan = plan_scale(sts(2), [ordinal_pod(0), ordinal_pod(1), ordinal_pod(2, ready=False)], SAME, NOW)
    assert names(plan.actions) == ["DeletePod:web-2"]


def test_parallel_scale_in_deletes_all_condemned():
    plan = plan_scale(
        sts(1, policy="Parallel"), [ordinal_pod(0), ordinal_pod(1, ready=False), ordinal_pod(2)], SAME, NOW
    )
    assert names(plan.actions) == ["DeletePod:web-2", "DeletePod:web-1"]


def test_reserve_running_ordinal_deletes_it_and_creates_next():
    set_ = sts(3, policy="Parallel", reserve=[1])
    plan = plan_scale(set_, pods(0, 1, 2), SAME, NOW)
    assert names(plan.actions) == ["CreatePod:web-3", "DeletePod:web-1"]


def test_start_ordinal_moves_pods():
    set_ = sts(3, policy="Parallel", start=2)
    plan = plan_scale(set_, pods(0, 1, 2), SAME, NOW, Gates(start_ordinal=True))
    assert names(plan.actions) == ["CreatePod:web-3", "CreatePod:web-4", "DeletePod:web-1", "DeletePod:web-0"]


def test_failed_pod_deleted_for_recreation():
    plan = plan_scale(
        sts(3), [ordinal_pod(0), ordinal_pod(1, phase="Failed", ready=False), ordinal_pod(2)], SAME, NOW
    )
    assert names(plan.actions) == ["DeletePod:web-1"] and plan.actions[0].reason == "failed"
    # next pass: web-1 gone, recreated under the same name
    assert names(plan_scale(sts(3), pods(0, 2), SAME, NOW).actions) == ["CreatePod:web-1"]


def test_pre_delete_hook_prepares_instead_of_deleting():
    set_ = sts(1, lifecycle={"preDelete": {"labelsHandler": {"hold": "1"}, "markPodNotReady": True}})
    plan = plan_scale(set_, [ordinal_pod(0), ordinal_pod(1, labels={"hold": "1"})], SAME, NOW)
    (action,) = plan.actions
    assert isinstance(action, PrepareDelete) and action.mark_not_ready
    held = ordinal_pod(1, labels={"hold": "1", "lifecycle.apps.kruise.io/state": "PreparingDelete"})
    assert plan_scale(set_, [ordinal_pod(0), held], SAME, NOW).actions == ()


def test_identity_fixed():
    broken = ordinal_pod(1)
    del broken["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"]
    plan = plan_scale(sts(2), [ordinal_pod(0), broken], SAME, NOW)
    assert [type(a) for a in plan.actions] == [FixIdentity]


def test_deleting_set_plans_nothing():
    set_ = sts(3)
    set_["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    plan = plan_scale(set_, pods(0), SAME, NOW)
    assert plan.actions == () and not plan.update_allowed


@given(
    existing=st.sets(st.integers(0, 12), max_size=10),
    replicas=st.integers(0, 8),
    reserve=st.lists(st.integers(0, 10), max_size=3),
)
def test_ordered_ready_never_does_more_than_one_thing(existing, replicas, reserve):
    set_ = sts(replicas, reserve=reserve)
    plan = plan_scale(set_, [ordinal_pod(n) for n in existing], SAME, NOW)
    writes = [a for a in plan.actions if not isinstance(a, FixIdentity)]
    assert len(writes) <= 1
    live = set(plan.live_range.ordinals())
    for action in writes:
        if isinstance(action, CreatePod):
            # the lowest missing ordinal, all predecessors exist
            assert action.ordinal == min(live - existing)
        if isinstance(action, DeletePod):
            assert live >= existing & live and not (live - existing)


@given(
    existing=st.sets(st.integers(0, 12), max_size=10),
    replicas=st.integers(0, 8),
    reserve=st.lists(st.integers(0, 10), max_size=3),
)
def test_parallel_converges_in_one_pass(existing, replicas, reserve):
    set_ = sts(replicas, policy="Parallel", reserve=reserve)
    plan = plan_scale(set_, [ordinal_pod(n) for n in existing], SAME, NOW)
    live = set(plan.live_range.ordinals())
    created = {a.ordinal for a in plan.actions if isinstance(a, CreatePod)}
    deleted = {a.pod["metadata"]["name"] for a in plan.actions if isinstance(a, DeletePod)}
    assert created == live - existing
    assert deleted == {f"web-{n}" for n in existing - live}


CLAIM_TEMPLATE = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}


def _aligns(plan) -> list[tuple[str, bool]]:
    return [(a.pod["metadata"]["name"], a.condemned) for a in plan.actions if isinstance(a, AlignClaimOwners)]


def test_claim_owners_are_checked_for_live_pods_then_condemned_ones_before_removal():
    set_ = sts(2, policy="Parallel", reserve=[1], volumeClaimTemplates=[CLAIM_TEMPLATE])
    plan = plan_scale(set_, pods(0, 1, 2, 3), SAME, NOW, Gates(auto_delete_pvc=True))
    # reserved ordinal 1 and ordinal 3 (beyond replicas) are condemned
    assert _aligns(plan) == [("web-0", False), ("web-2", False), ("web-3", True), ("web-1", True)]
    first_removal = next(i for i, a in enumerate(plan.actions) if isinstance(a, DeletePod))
    assert all(not isinstance(a, AlignClaimOwners) for a in plan.actions[first_removal:])


def test_claim_owners_are_not_checked_without_the_gate_templates_or_a_reached_pod():
    with_claims = sts(2, volumeClaimTemplates=[CLAIM_TEMPLATE])
    assert _aligns(plan_scale(with_claims, pods(0, 1, 2), SAME, NOW)) == []
    assert _aligns(plan_scale(sts(2), pods(0, 1, 2), SAME, NOW, Gates(auto_delete_pvc=True))) == []
    # OrderedReady stops at the unready web-0: neither web-1 nor the condemned web-2 is reached
    blocked = [ordinal_pod(0, ready=False), *pods(1, 2)]
    assert _aligns(plan_scale(with_claims, blocked, SAME, NOW, Gates(auto_delete_pvc=True))) == []
