"""The reconcile plan of an AdvancedCronJob: status, history pruning, pause, concurrency, the new child."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest

from kruise.control.advancedcronjob.plan import (
    Deletion,
    DeletionReason,
    Outcome,
    decide_concurrency,
    plan_reconcile,
    template_kind,
)

CREATED = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)


def acj(**spec):
    base = {
        "schedule": "*/1 * * * *",
        "template": {"jobTemplate": {"metadata": {"labels": {"app": "x"}}, "spec": {"template": {}}}},
    }
    base.update(spec)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {
            "name": "cron",
            "namespace": "ns",
            "uid": "acj-uid",
            "creationTimestamp": "2026-01-01T00:00:30Z",
        },
        "spec": base,
    }


def child(minute, state=None, kind="Job", started=None):
    scheduled = datetime(2026, 1, 1, 0, minute, tzinfo=UTC)
    obj = {
        "apiVersion": "batch/v1" if kind == "Job" else "apps.kruise.io/v1alpha1",
        "kind": kind,
        "metadata": {
            "name": f"cron-{int(scheduled.timestamp())}",
            "namespace": "ns",
            "uid": f"uid-{minute}",
            "annotations": {"apps.kruise.io/scheduled-at": scheduled.strftime("%Y-%m-%dT%H:%M:%SZ")},
        },
        "status": {},
    }
    if state:
        obj["status"]["conditions"] = [{"type": state, "status": "True"}]
    if started is not None:
        obj["status"]["startTime"] = f"2026-01-01T00:{started:02d}:05Z"
    return obj


def at(minute, second=0):
    return datetime(2026, 1, 1, 0, minute, second, tzinfo=UTC)


def test_first_run_creates_the_child_for_the_latest_activation():
    plan = plan_reconcile(acj(), [], at(3, 10))
    assert plan.outcome is Outcome.RUN
    assert plan.child_kind == "Job"
    assert plan.scheduled_time == at(3)
    assert plan.create["metadata"]["name"] == f"cron-{int(at(3).timestamp())}"
    assert plan.create["metadata"]["annotations"]["apps.kruise.io/scheduled-at"] == "2026-01-01T00:03:00Z"
    assert plan.requeue_after == timedelta(seconds=50)
    assert plan.next_run == at(4)
    assert plan.status == {"type": "Job"}
    assert plan.status_changed
    assert plan.replace_deletions == () and plan.history_deletions == ()


def test_an_activation_that_already_has_a_child_is_not_run_again():
    plan = plan_reconcile(acj(), [child(3)], at(3, 40))
    assert plan.outcome is Outcome.NOT_DUE
    assert plan.create is None
    assert plan.requeue_after == timedelta(seconds=20)
    ref = plan.status["active"][0]
    assert ref["name"] == child(3)["metadata"]["name"] and ref["kind"] == "Job"
    assert plan.status["lastScheduleTime"] == "2026-01-01T00:03:00Z"


@pytest.mark.parametrize("deadline", [None, 120])
def test_after_downtime_only_the_latest_missed_activation_runs(deadline):
    # Last child at 00:03; the controller was away until 00:09:20, so 00:04 ... 00:09 were missed.
    spec = {} if deadline is None else {"startingDeadlineSeconds": deadline}
    plan = plan_reconcile(acj(**spec), [child(3)], at(9, 20))
    assert plan.outcome is Outcome.RUN
    assert plan.scheduled_time == at(9)
    assert plan.create["metadata"]["name"] == f"cron-{int(at(9).timestamp())}"
    assert plan.next_run == at(10)
    # Once that child exists the backlog is gone: nothing else of the outage is run.
    made = {"metadata": plan.create["metadata"]}
    again = plan_reconcile(acj(**spec), [child(3), made], at(9, 30))
    assert again.outcome is Outcome.NOT_DUE and again.create is None


def test_a_starting_deadline_shorter_than_the_downtime_still_runs_a_recent_activation_only():
    # 00:09 is 80 s late at 00:10:20 with a 60 s deadline: only 00:10 may still start.
    plan = plan_reconcile(acj(startingDeadlineSeconds=60), [child(3)], at(10, 20))
    assert plan.scheduled_time == at(10)
    # 30 s past the last activation with a 20 s deadline: nothing may start.
    late = plan_reconcile(acj(startingDeadlineSeconds=20), [child(3)], at(10, 30))
    assert late.outcome is Outcome.NOT_DUE and late.requeue_after == timedelta(seconds=30)


def test_status_lists_active_children_and_is_unchanged_when_already_written():
    children = [child(2, "Complete"), child(3)]
    first = plan_reconcile(acj(), children, at(3, 30))
    stored = acj()
    stored["status"] = first.status
    again = plan_reconcile(stored, children, at(3, 40))
    assert again.status == first.status and not again.status_changed
    assert [r["name"] for r in first.status["active"]] == [child(3)["metadata"]["name"]]


def test_paused_stops_after_status_and_history_without_requeue():
    children = [child(m, "Complete", started=m) for m in range(1, 6)]
    plan = plan_reconcile(acj(paused=True, successfulJobsHistoryLimit=3), children, at(9))
    assert plan.outcome is Outcome.PAUSED
    assert plan.create is None and plan.requeue_after is None
    oldest_two = [child(1)["metadata"]["name"], child(2)["metadata"]["name"]]
    assert [d.name for d in plan.history_deletions] == oldest_two
    assert plan.status["lastScheduleTime"] == "2026-01-01T00:05:00Z"


def test_history_limits_apply_to_failed_and_successful_separately():
    children = [
        child(1, "Failed", started=1),
        child(2, "Failed", started=2),
        child(3, "Complete", started=3),
        child(4, "Complete", started=4),
    ]
    spec = {"failedJobsHistoryLimit": 1, "successfulJobsHistoryLimit": 1}
    plan = plan_reconcile(acj(**spec), children, at(4, 30))
    assert plan.history_deletions == (
        Deletion("Job", "ns", child(1)["metadata"]["name"], "uid-1", DeletionReason.FAILED_HISTORY),
        Deletion("Job", "ns", child(3)["metadata"]["name"], "uid-3", DeletionReason.SUCCESSFUL_HISTORY),
    )
    # without limits (not defaulted) nothing is pruned
    assert plan_reconcile(acj(), children, at(4, 30)).history_deletions == ()


def test_forbid_skips_the_run_while_a_child_is_active():
    plan = plan_reconcile(acj(concurrencyPolicy="Forbid"), [child(2)], at(3, 1))
    assert plan.outcome is Outcome.FORBIDDEN
    assert plan.create is None
    assert plan.scheduled_time == at(3)
    assert plan.requeue_after == timedelta(seconds=59)
    finished = plan_reconcile(acj(concurrencyPolicy="Forbid"), [child(2, "Complete")], at(3, 1))
    assert finished.outcome is Outcome.RUN


def test_replace_deletes_active_children_before_creating():
    children = [child(1, "Complete"), child(2)]
    plan = plan_reconcile(acj(concurrencyPolicy="Replace"), children, at(3, 1))
    assert plan.outcome is Outcome.RUN
    assert plan.replace_deletions == (
        Deletion("Job", "ns", child(2)["metadata"]["name"], "uid-2", DeletionReason.REPLACED),
    )
    assert plan.create["metadata"]["name"] == f"cron-{int(at(3).timestamp())}"


@pytest.mark.parametrize("policy", ["Allow", "", None, "Whatever"])
def test_allow_and_unknown_policies_run_alongside_active_children(policy):
    spec = {} if policy is None else {"concurrencyPolicy": policy}
    plan = plan_reconcile(acj(**spec), [child(2)], at(3, 1))
    assert plan.outcome is Outcome.RUN and plan.replace_deletions == ()


def test_decide_concurrency():
    active = [child(1)]
    assert decide_concurrency("Forbid", active).run is False
    assert decide_concurrency("Forbid", []).run is True
    assert decide_concurrency("Replace", active).replace == tuple(active)
    assert decide_concurrency("Allow", active).replace == ()


def test_a_broken_schedule_is_reported_and_not_requeued():
    plan = plan_reconcile(acj(schedule="bad cron"), [child(1)], at(3))
    assert plan.outcome is Outcome.SCHEDULE_PROBLEM
    assert plan.message.startswith('unparsable schedule "bad cron"')
    assert plan.requeue_after is None and plan.create is None
    assert plan.status["type"] == "Job"  # status is still written


def test_too_many_missed_starts_is_a_problem_not_a_run():
    plan = plan_reconcile(acj(), [], at(0) + timedelta(hours=3))
    assert plan.outcome is Outcome.SCHEDULE_PROBLEM
    assert "too many missed start times" in plan.message
    bounded = plan_reconcile(acj(startingDeadlineSeconds=120), [], at(0) + timedelta(hours=3, seconds=5))
    assert bounded.outcome is Outcome.RUN
    assert bounded.scheduled_time == at(0) + timedelta(hours=3)


def test_broadcast_job_template_makes_broadcast_job_children():
    spec = {"template": {"broadcastJobTemplate": {"spec": {"template": {}}}}}
    plan = plan_reconcile(acj(**spec), [child(2, kind="BroadcastJob")], at(3, 5))
    assert plan.child_kind == "BroadcastJob"
    assert plan.status["type"] == "BroadcastJob"
    assert plan.status["active"][0]["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert plan.create["kind"] == "BroadcastJob"
    assert template_kind({"spec": {"template": {}}}) == "BroadcastJob"


def test_time_zone_and_local_zone():
    shanghai = zoneinfo.ZoneInfo("Asia/Shanghai")
    spec = {"schedule": "0 9 * * *", "timeZone": "Asia/Shanghai"}
    now = datetime(2026, 1, 2, 1, 0, 30, tzinfo=UTC)  # 09:00:30 in Shanghai
    plan = plan_reconcile(acj(**spec), [], now)
    assert plan.scheduled_time == datetime(2026, 1, 2, 9, 0, tzinfo=shanghai)
    assert plan.create["metadata"]["annotations"]["apps.kruise.io/scheduled-at"] == "2026-01-02T01:00:00Z"
    # a manager running in Shanghai time evaluates zone-less schedules there and writes local times
    local = plan_reconcile(acj(schedule="0 9 * * *"), [], now, local_zone=shanghai)
    assert local.scheduled_time == datetime(2026, 1, 2, 9, 0, tzinfo=shanghai)
    annotation = local.create["metadata"]["annotations"]["apps.kruise.io/scheduled-at"]
    assert annotation == "2026-01-02T09:00:00+08:00"
    assert local.create["metadata"]["name"] == f"cron-{int(now.timestamp()) - 30}"
    # status.lastScheduleTime is UTC whatever the annotation's zone
    child_obj = {"metadata": {"name": "c", "annotations": {"apps.kruise.io/scheduled-at": annotation}}}
    later = plan_reconcile(acj(schedule="0 9 * * *"), [child_obj], now, local_zone=shanghai)
    assert later.status["lastScheduleTime"] == "2026-01-02T01:00:00Z"
    assert later.outcome is Outcome.NOT_DUE


def test_hourly_schedule_over_fall_back_runs_the_repeated_hour_with_distinct_names():
    ny = zoneinfo.ZoneInfo("America/New_York")
    cron = acj(schedule="0 * * * *", timeZone="America/New_York")
    cron["metadata"]["creationTimestamp"] = "2024-11-03T04:30:00Z"  # 00:30 EDT
    first = plan_reconcile(cron, [], datetime(2024, 11, 3, 1, 0, 10, tzinfo=ny))
    second_now = datetime(2024, 11, 3, 1, 0, 10, tzinfo=ny, fold=1)  # an hour later, 01:00 EST
    made = {"metadata": first.create["metadata"]}
    second = plan_reconcile(cron, [made], second_now)
    assert first.outcome is Outcome.RUN and second.outcome is Outcome.RUN
    assert second.scheduled_time - first.scheduled_time == timedelta(hours=1)
    assert first.create["metadata"]["name"] != second.create["metadata"]["name"]


def test_naive_now_is_rejected():
    with pytest.raises(ValueError, match="timezone-aware"):
        plan_reconcile(acj(), [], datetime(2026, 1, 1))
