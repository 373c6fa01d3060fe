"""Adaptive scheduling decisions: pending timeouts, subset marking/recovery, reservation, requeue delays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_UNITED_DEPLOYMENT_RESERVED_POD
from kruise.api.uniteddeployment import UnitedDeployment
from kruise.control.uniteddeployment.adaptive import (
    AdaptiveTimes,
    Assessment,
    Requeue,
    after_allocation,
    assess_default,
    assess_reservation,
    mark_new_subsets,
    max_unavailable_for,
    pending_timeout,
    turned_unschedulable,
)
from kruise.control.uniteddeployment.allocation import SubsetState, allocate
from kruise.kube.clock import rfc3339
from tests.kit.pods import pod

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
TIMES = AdaptiveTimes(timedelta(seconds=30), timedelta(seconds=300))


def subset_pod(
    created: datetime = T0,
    *,
    unschedulable: bool = True,
    phase: str = "Pending",
    node: str = "",
    revision: str = "r1",
    labels: dict[str, str] | None = None,
    ready_since: datetime | None = None,
) -> dict[str, Any]:
    """A subset's pod of `revision`, by default pending and unschedulable since `created`."""
    conditions = []
    if unschedulable:
        conditions.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"})
    if ready_since is not None:
        conditions.append({"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(ready_since)})
    return pod(
        created=rfc3339(created),
        labels={LABEL_KRUISE_CONTROLLER_REVISION_HASH: revision, **(labels or {})},
        node=node or None,
        phase=phase,
        conditions=conditions,
    )


def condition(entry: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in entry.get("conditions") or [] if c["type"] == "Schedulable"), None)


# ---- pending timeout -----------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(age=st.integers(0, 120), critical=st.integers(1, 60))
def test_pending_timeout_runs_from_creation(age: int, critical: int) -> None:
    now = T0 + timedelta(seconds=age)
    timed_out, left = pending_timeout(subset_pod(), timedelta(seconds=critical), now)
    assert timed_out == (age >= critical)
    assert left == (None if timed_out else timedelta(seconds=critical - age))


def test_a_deadline_within_the_slack_counts_as_passed_and_requeues_stay_on_the_deadline() -> None:
    critical = timedelta(seconds=10)
    assert pending_timeout(subset_pod(), critical, T0 + timedelta(seconds=9), timedelta(seconds=1)) == (
        True,
        None,
    )
    early = pending_timeout(subset_pod(), critical, T0 + timedelta(seconds=8), timedelta(seconds=1))
    assert early == (False, timedelta(seconds=2))


def test_subsets_whose_pods_straddle_a_second_time_out_in_one_pass() -> None:
    """Two subsets' pods created in the same burst but on either side of a second boundary: the
    pass at the first deadline decides both (upstream's Go controllers create them within one
    second)."""
    now = T0 + timedelta(seconds=10)
    first, second = {"name": "s0"}, {"name": "s1"}
    requeue = Requeue()
    times = AdaptiveTimes(timedelta(seconds=10), timedelta(seconds=300))
    a = assess_reservation(first, [subset_pod(T0)], "r1", None, times, now, requeue)
    b = assess_reservation(second, [subset_pod(T0 + timedelta(seconds=1))], "r1", None, times, now, requeue)
    assert a.reserved_pods == b.reserved_pods == 1 and a.unschedulable and b.unschedulable


def test_only_pending_unbound_unschedulable_pods_count() -> None:
    late = T0 + timedelta(hours=1)
    assert pending_timeout(subset_pod(unschedulable=False), timedelta(seconds=30), late) == (False, None)
    assert pending_timeout(subset_pod(node="n1"), timedelta(seconds=30), late) == (False, None)
    assert pending_timeout(subset_pod(phase="Running"), timedelta(seconds=30), late) == (False, None)
    deleted = subset_pod()
    deleted["metadata"]["deletionTimestamp"] = rfc3339(T0)
    assert pending_timeout(deleted, timedelta(seconds=30), late) == (False, None)


def test_turned_unschedulable_fires_once() -> None:
    fresh = subset_pod(unschedulable=False)
    assert turned_unschedulable(fresh, subset_pod())
    assert not turned_unschedulable(subset_pod(), subset_pod())
    assert not turned_unschedulable(subset_pod(), subset_pod(unschedulable=False))


# ---- default strategy ----------------------------------------------------------------------------


def test_default_marks_at_the_deadline_and_requeues_until_then() -> None:
    entry: dict[str, Any] = {"name": "a"}
    requeue = Requeue()
    early = assess_default(
        entry, 2, 0, [subset_pod(), subset_pod(T0 + timedelta(seconds=5))], TIMES, T0, requeue
    )
    assert not early.unschedulable and condition(entry) is None
    assert requeue.seconds == 30

    requeue = Requeue()
    at = T0 + timedelta(seconds=30)
    marked = assess_default(
        entry, 2, 0, [subset_pod(), subset_pod(T0 + timedelta(seconds=5))], TIMES, at, requeue
    )
    assert marked.unschedulable and marked.pending_pods == 1
    assert condition(entry) == {
        "type": "Schedulable",
        "status": "False",
        "lastTransitionTime": rfc3339(at),
        "reason": "reschedule",
        "message": "timeout pending pods found",
    }
    # The second pod's own deadline is the soonest thing to look at again.
    assert requeue.seconds == 5


def test_default_keeps_the_mark_then_recovers() -> None:
    entry: dict[str, Any] = {"name": "a"}
    marked_at = T0 + timedelta(seconds=30)
    assess_default(entry, 1, 0, [subset_pod()], TIMES, marked_at, Requeue())
    requeue = Requeue()
    later = marked_at + timedelta(seconds=100)
    held = assess_default(entry, 0, 0, [], TIMES, later, requeue)
    assert held.unschedulable and requeue.seconds == 200
    assert condition(entry)["lastTransitionTime"] == rfc3339(marked_at)

    recover_at = marked_at + timedelta(seconds=300)
    recovered = assess_default(entry, 0, 0, [], TIMES, recover_at, Requeue())
    assert not recovered.unschedulable
    assert condition(entry) == {
        "type": "Schedulable",
        "status": "True",
        "lastTransitionTime": rfc3339(recover_at),
        "reason": "recover",
        "message": "unschedulable subset recovered after 300.000000 seconds",
    }


def test_default_ignores_pods_when_all_replicas_are_ready() -> None:
    entry: dict[str, Any] = {"name": "a"}
    result = assess_default(entry, 2, 2, [subset_pod()], TIMES, T0 + timedelta(hours=1), Requeue())
    assert not result.unschedulable and condition(entry) is None


@settings(max_examples=100, deadline=None)
@given(ages=st.lists(st.integers(0, 100), min_size=1, max_size=8), ready=st.integers(0, 3))
def test_default_pending_count_and_requeue(ages: list[int], ready: int) -> None:
    now = T0 + timedelta(seconds=100)
    pods = [subset_pod(now - timedelta(seconds=a)) for a in ages]
    requeue = Requeue()
    result = assess_default({"name": "a"}, len(pods) + ready, ready, pods, TIMES, now, requeue)
    # a deadline within a second (a creationTimestamp's resolution) is decided with the others
    late = sum(1 for a in ages if a >= 29)
    assert result.pending_pods == late
    assert result.unschedulable == (late > 0)
    waits = [30 - a for a in ages if a < 29] + ([300] if late else [])
    assert requeue.seconds == (min(waits) if waits else 0)


# ---- reservation strategy ------------------------------------------------------------------------


def reserved(value: str) -> dict[str, str]:
    return {LABEL_UNITED_DEPLOYMENT_RESERVED_POD: value}


def test_reservation_labels_timed_out_pods_reserved() -> None:
    entry: dict[str, Any] = {"name": "a"}
    now = T0 + timedelta(seconds=30)
    stuck, young = subset_pod(), subset_pod(T0 + timedelta(seconds=20))
    requeue = Requeue()
    result = assess_reservation(entry, [stuck, young], "r1", None, TIMES, now, requeue)
    assert result.reserved_pods == 1 and result.unschedulable
    assert [(p is stuck, v) for p, v in result.pods_to_label] == [(True, True), (False, False)]
    assert condition(entry)["status"] == "False" and condition(entry)["message"] == "reserved pods found"
    assert requeue.seconds == 20


def test_reserved_pod_leaves_after_running_ready_for_the_duration() -> None:
    entry: dict[str, Any] = {"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}
    ready_at = T0 + timedelta(seconds=60)
    running = subset_pod(
        phase="Running", node="n1", unschedulable=False, labels=reserved("true"), ready_since=ready_at
    )
    requeue = Requeue()
    held = assess_reservation(entry, [running], "r1", None, TIMES, ready_at + timedelta(seconds=100), requeue)
    assert held.reserved_pods == 1 and held.marked_unschedulable and requeue.seconds == 200
    entry = {"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}
    free = assess_reservation(
        entry, [running], "r1", None, TIMES, ready_at + timedelta(seconds=300), Requeue()
    )
    assert free.reserved_pods == 0 and not free.unschedulable and free.marked_unschedulable
    assert [v for _, v in free.pods_to_label] == [False]
    assert condition(entry)["status"] == "True" and condition(entry)["message"] == "no reserved pods"


def test_pods_created_in_a_marked_subset_start_reserved() -> None:
    entry: dict[str, Any] = {"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}
    new = subset_pod(unschedulable=False)
    result = assess_reservation(entry, [new], "r1", None, TIMES, T0, Requeue())
    assert result.reserved_pods == 1 and [(p is new, v) for p, v in result.pods_to_label] == [(True, True)]


def test_pods_being_recreated_in_a_marked_subset_stay_reserved() -> None:
    """A CloneSet recreating its two reserved pods deletes both, then creates the replacements in
    its next pass; its status still counts two. In that gap the subset keeps its two reserved pods
    (upstream would see none, call the subset recovered and hand it every replica)."""
    entry: dict[str, Any] = {"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}
    gap = assess_reservation(entry, [], "r1", None, TIMES, T0, Requeue(), workload_replicas=2)
    assert gap.reserved_pods == 2 and gap.unschedulable and gap.marked_unschedulable
    assert condition(entry)["status"] == "False" and gap.pods_to_label == []
    half = subset_pod(unschedulable=False)  # one replacement created (unlabelled), one still to come
    entry = {"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}
    assert (
        assess_reservation(entry, [half], "r1", None, TIMES, T0, Requeue(), workload_replicas=2).reserved_pods
        == 2
    )
    existing = {
        "s0": SubsetState(
            replicas=2, unschedulable=True, marked_unschedulable=True, reserved_pods=gap.reserved_pods
        ),
        "s1": SubsetState(replicas=4),
    }
    assert allocate(adaptive_ud(4, [None, None], reserve=True), existing) == {"s0": 2, "s1": 4}


def test_missing_pods_count_only_while_the_subset_is_marked() -> None:
    unmarked: dict[str, Any] = {"name": "a"}
    result = assess_reservation(unmarked, [], "r1", None, TIMES, T0, Requeue(), workload_replicas=2)
    assert result.reserved_pods == 0 and not result.unschedulable
    recovered = subset_pod(phase="Running", node="n1", unschedulable=False, labels=reserved("false"))
    entry: dict[str, Any] = {"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}
    steady = assess_reservation(entry, [recovered], "r1", None, TIMES, T0, Requeue(), workload_replicas=1)
    assert steady.reserved_pods == 0 and condition(entry)["status"] == "True"


def test_old_revision_pods_time_out_with_the_update() -> None:
    entry: dict[str, Any] = {"name": "a"}
    old = subset_pod(phase="Running", node="n1", unschedulable=False, revision="r0", labels=reserved("false"))
    requeue = Requeue()
    waiting = assess_reservation(entry, [old], "r1", T0, TIMES, T0 + timedelta(seconds=10), requeue)
    assert waiting.reserved_pods == 0 and requeue.seconds == 20
    late = assess_reservation(entry, [old], "r1", T0, TIMES, T0 + timedelta(seconds=30), Requeue())
    assert late.reserved_pods == 1 and late.update_timeout_pods == 1
    assert max_unavailable_for(3, 1, late) == 3


def test_recovered_subset_scaled_up_is_marked_again() -> None:
    entry: dict[str, Any] = {"name": "a"}
    after_allocation(entry, Assessment(marked_unschedulable=True), 2, 3, T0)
    assert condition(entry)["message"] == "subset just recovered scaled up"
    untouched: dict[str, Any] = {"name": "a"}
    after_allocation(untouched, Assessment(marked_unschedulable=True), 2, 2, T0)
    after_allocation(untouched, Assessment(), 2, 3, T0)
    assert condition(untouched) is None


def test_new_subsets_start_unschedulable_only_when_statuses_existed() -> None:
    status = {"subsetStatuses": [{"name": "a"}, {"name": "b"}]}
    mark_new_subsets(status, ["a"], ["a", "b"], T0)
    assert condition(status["subsetStatuses"][0]) is None
    assert condition(status["subsetStatuses"][1])["reason"] == "created"
    first = {"subsetStatuses": [{"name": "a"}]}
    mark_new_subsets(first, [], ["a"], T0)
    assert condition(first["subsetStatuses"][0]) is None


# ---- allocation with unschedulable subsets -------------------------------------------------------


def adaptive_ud(total: int, maxes: list[int | None], reserve: bool = False) -> UnitedDeployment:
    subsets = [
        {"name": f"s{i}", **({} if high is None else {"maxReplicas": high})} for i, high in enumerate(maxes)
    ]
    return UnitedDeployment.model_validate(
        {
            "metadata": {"name": "ud", "namespace": "default"},
            "spec": {
                "replicas": total,
                "selector": {"matchLabels": {"app": "demo"}},
                "template": {"cloneSetTemplate": {"spec": {}}},
                "topology": {
                    "subsets": subsets,
                    "scheduleStrategy": {
                        "type": "Adaptive",
                        "adaptive": {"reserveUnschedulablePods": reserve},
                    },
                },
            },
        }
    )


@settings(max_examples=300, deadline=None)
@given(data=st.data(), total=st.integers(0, 40))
def test_unschedulable_subsets_hand_their_pending_replicas_to_the_next(
    data: st.DataObject, total: int
) -> None:
    count = data.draw(st.integers(2, 5))
    maxes: list[int | None] = [data.draw(st.integers(0, 15)) for _ in range(count - 1)] + [None]
    existing: dict[str, SubsetState] = {}
    for i in range(count):
        replicas = data.draw(st.integers(0, 15))
        ready = data.draw(st.integers(0, replicas))
        existing[f"s{i}"] = SubsetState(replicas, ready, unschedulable=data.draw(st.booleans()))
    existing["s0"] = SubsetState(existing["s0"].replicas, existing["s0"].ready_replicas, unschedulable=True)
    result = allocate(adaptive_ud(total, maxes), existing)
    # An unschedulable subset keeps at most its ready pods: its pending replicas go elsewhere.
    for name, state in existing.items():
        if state.unschedulable:
            assert result[name] <= state.ready_replicas
    # Nothing is lost while the last (unbounded) subset can still take replicas.
    if not existing[f"s{count - 1}"].unschedulable:
        assert sum(result.values()) == total
    else:
        assert sum(result.values()) <= total


@settings(max_examples=300, deadline=None)
@given(data=st.data(), total=st.integers(1, 30))
def test_reservation_adds_one_stand_in_per_reserved_pod(data: st.DataObject, total: int) -> None:
    reserved_pods = data.draw(st.integers(0, total))
    # s0 holds `total` replicas of which `reserved_pods` are reserved; s1 is healthy and unbounded.
    existing = {
        "s0": SubsetState(
            total,
            total - reserved_pods,
            unschedulable=reserved_pods > 0,
            marked_unschedulable=reserved_pods > 0,
            reserved_pods=reserved_pods,
        ),
        "s1": SubsetState(0, 0),
    }
    result = allocate(adaptive_ud(total, [total, None], reserve=True), existing)
    assert result == {"s0": total, "s1": reserved_pods}
