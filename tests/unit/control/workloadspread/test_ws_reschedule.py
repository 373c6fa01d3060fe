"""The Adaptive strategy: which pods failed to schedule past rescheduleCriticalSeconds, the
Schedulable condition of each subset (False while failing, back to True 5 minutes after being
marked, the last subset always True), lastTransitionTime kept while the status holds, the re-runs
asked for, and the failed pods noted for deletion from the overall books only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.timestamps import rfc3339
from kruise.control.workloadspread.reschedule import (
    MAX_SCHEDULE_FAILED_DURATION,
    last_subset_condition,
    merge_schedulable,
    pending_timeout,
    subset_condition,
)
from kruise.control.workloadspread.status import Notes, group_pods, next_status
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, MatchedSpread
from tests.kit.pods import pod

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
CRITICAL = timedelta(seconds=30)


def pending_pod(
    name: str = "p",
    age: float = 60,
    phase: str = "Pending",
    node: str = "",
    scheduled: tuple[str, str] | None = ("False", "Unschedulable"),
    deleting: bool = False,
    subset: str | None = None,
) -> dict[str, Any]:
    """A CloneSet pod created `age` seconds before NOW, by default still failing to schedule."""
    return pod(
        name,
        namespace="ns",
        created=rfc3339(NOW - timedelta(seconds=age)),
        annotations={ANNOTATION_MATCHED: MatchedSpread("ws", subset).to_json()} if subset else {},
        owner={"kind": "CloneSet", "name": "app", "controller": True},
        meta={"deletionTimestamp": rfc3339(NOW)} if deleting else None,
        node=node or None,
        phase=phase,
        conditions=None
        if scheduled is None
        else [{"type": "PodScheduled", "status": scheduled[0], "reason": scheduled[1]}],
    )


@pytest.mark.parametrize(
    ("kwargs", "timed_out", "left"),
    [
        ({}, True, None),
        ({"age": 10}, False, timedelta(seconds=20)),
        ({"age": 30}, False, timedelta(0)),  # exactly at the limit: not yet
        ({"phase": "Running"}, False, None),
        ({"node": "n1"}, False, None),
        ({"deleting": True}, False, None),
        ({"scheduled": None}, False, None),
        ({"scheduled": ("True", "")}, False, None),
        ({"scheduled": ("False", "SchedulerError")}, False, None),
    ],
)
def test_pending_timeout(kwargs, timed_out, left):
    assert pending_timeout(pending_pod(**kwargs), CRITICAL, NOW) == (timed_out, left)


def cond(status: str, reason: str, ago: float = 0) -> dict[str, Any]:
    return {
        "type": "Schedulable",
        "status": status,
        "reason": reason,
        "lastTransitionTime": rfc3339(NOW - timedelta(seconds=ago)),
    }


def test_set_condition_keeps_time_while_status_holds():
    old = cond("False", "PodUnschedulable", ago=100)
    assert merge_schedulable(old, cond("False", "PodUnschedulable")) is old
    assert merge_schedulable(old, cond("False", "Other")) == {
        **cond("False", "Other"),
        "lastTransitionTime": old["lastTransitionTime"],
    }
    assert merge_schedulable(old, cond("True", "Sufficient")) == cond("True", "Sufficient")
    assert merge_schedulable(None, cond("True", "Sufficient")) == cond("True", "Sufficient")


def test_last_subset_always_schedulable():
    assert last_subset_condition(None, NOW) == cond("True", "Sufficient")
    assert last_subset_condition(cond("False", "PodUnschedulable", 50), NOW) == cond("True", "Sufficient")
    kept = cond("True", "Sufficient", 500)
    assert last_subset_condition(kept, NOW) == kept


def test_first_condition_from_current_pods():
    assert subset_condition([pending_pod()], None, CRITICAL, NOW)[:2] == (
        cond("False", "PodUnschedulable"),
        [pending_pod()],
    )
    healthy = pending_pod(phase="Running", node="n1", scheduled=("True", ""))
    assert subset_condition([healthy], None, CRITICAL, NOW) == (cond("True", "Sufficient"), [], None, False)


def test_young_unschedulable_pod_asks_for_a_rerun_at_its_limit():
    condition, failed, wait, recovered = subset_condition(
        [pending_pod(age=5), pending_pod("q", age=25)], None, CRITICAL, NOW
    )
    assert condition == cond("True", "Sufficient") and failed == [] and not recovered
    assert wait == timedelta(seconds=5)


def test_unschedulable_subset_stays_marked_then_recovers_after_five_minutes():
    marked = cond("False", "PodUnschedulable", ago=100)
    condition, failed, wait, recovered = subset_condition([], marked, CRITICAL, NOW)
    assert condition == marked and failed == [] and not recovered
    assert wait == MAX_SCHEDULE_FAILED_DURATION - timedelta(seconds=100)
    stale = cond("False", "PodUnschedulable", ago=301)
    condition, _, wait, recovered = subset_condition([], stale, CRITICAL, NOW)
    assert condition == cond("True", "Sufficient") and recovered and wait is None


def test_still_failing_subset_keeps_its_mark_time():
    marked = cond("False", "PodUnschedulable", ago=400)
    condition, failed, _, recovered = subset_condition([pending_pod()], marked, CRITICAL, NOW)
    assert condition == marked and len(failed) == 1 and not recovered


@given(ages=st.lists(st.integers(min_value=0, max_value=120), max_size=8))
def test_failed_pods_are_exactly_those_past_the_limit(ages):
    pods = [pending_pod(f"p{i}", age=a) for i, a in enumerate(ages)]
    condition, failed, wait, _ = subset_condition(pods, None, CRITICAL, NOW)
    assert [p["metadata"]["name"] for p in failed] == [f"p{i}" for i, a in enumerate(ages) if a > 30]
    assert condition["status"] == ("False" if failed else "True")
    young = [30 - a for a in ages if a <= 30]
    assert wait == (timedelta(seconds=min(young)) if young else None)


def adaptive_spread(status: dict | None = None) -> dict[str, Any]:
    ws: dict[str, Any] = {
        "metadata": {"name": "ws", "namespace": "ns", "generation": 1},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "app"},
            "subsets": [{"name": "a", "maxReplicas": 2}, {"name": "b"}],
            "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}},
        },
    }
    if status is not None:
        ws["status"] = status
    return ws


def test_next_status_marks_subsets_and_notes_failed_pods_once():
    pods = [pending_pod("stuck", subset="a"), pending_pod("stuck-b", subset="b")]
    ws = adaptive_spread()
    versioned, by_subset = group_pods(ws, pods)
    notes = Notes()
    status = next_status(ws, versioned, by_subset, 4, NOW, notes)
    assert status is not None
    assert [s["conditions"] for s in status["subsetStatuses"]] == [
        [cond("False", "PodUnschedulable")],
        [cond("True", "Sufficient")],
    ]
    assert status["versionedSubsetStatuses"]["versionIgnored"][0]["conditions"] == [
        cond("False", "PodUnschedulable")
    ]
    # only the overall books' failed pods, and never the last subset's
    assert [(s, p["metadata"]["name"]) for s, p in notes.failed_to_schedule] == [("a", "stuck")]


def test_recovery_is_reported_once_as_a_normal_event():
    old = [
        {
            "name": "a",
            "replicas": 0,
            "missingReplicas": 2,
            "conditions": [cond("False", "PodUnschedulable", 400)],
        },
        {"name": "b", "replicas": 0, "missingReplicas": -1, "conditions": [cond("True", "Sufficient", 400)]},
    ]
    ws = adaptive_spread({"subsetStatuses": old, "versionedSubsetStatuses": {"versionIgnored": old}})
    versioned, by_subset = group_pods(
        ws, [pending_pod("ok", phase="Running", node="n1", scheduled=("True", ""), subset="a")]
    )
    notes = Notes()
    status = next_status(ws, versioned, by_subset, 4, NOW, notes)
    assert status["subsetStatuses"][0]["conditions"] == [cond("True", "Sufficient")]
    assert status["subsetStatuses"][1]["conditions"] == [cond("True", "Sufficient", 400)]
    assert notes.normal_events == [
        (
            "RecoverSchedulable",
            "Subset a of WorkloadSpread ns/ws is recovered from unschedulable to schedulable",
        )
    ]
    assert notes.failed_to_schedule == []


def test_without_adaptive_no_condition_is_kept():
    old = [
        {"name": "a", "replicas": 0, "missingReplicas": 2, "conditions": [cond("False", "PodUnschedulable")]}
    ]
    ws = adaptive_spread({"subsetStatuses": old})
    del ws["spec"]["scheduleStrategy"]
    versioned, by_subset = group_pods(ws, [pending_pod("stuck", subset="a")])
    notes = Notes()
    status = next_status(ws, versioned, by_subset, 4, NOW, notes)
    assert all("conditions" not in s for s in status["subsetStatuses"])
    assert notes.failed_to_schedule == []
