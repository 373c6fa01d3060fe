"""AdvancedCronJob with an ImageListPullJob template: template kind, completion read from the
ImageListPullJob's status, the child built for an activation, and the plan's concurrency and history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.advancedcronjob.children import build_child, classify, finished_type
from kruise.control.advancedcronjob.plan import DeletionReason, Outcome, plan_reconcile, template_kind

KIND = "ImageListPullJob"
TEMPLATE = {
    "metadata": {
        "labels": {"pull": "nightly"},
        "annotations": {"team": "infra"},
        "finalizers": ["not-copied"],
    },
    "spec": {"images": ["nginx:1.25", "redis:7"], "parallelism": 2, "completionPolicy": {"type": "Always"}},
}


def acj(**spec):
    base = {"schedule": "*/1 * * * *", "template": {"imageListPullJobTemplate": TEMPLATE}}
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


def at(minute, second=0):
    return datetime(2026, 1, 1, 0, minute, second, tzinfo=UTC)


def pull_job(minute, *, completed=False, succeeded=0, desired=2, started=None):
    scheduled = at(minute)
    status = {"desired": desired, "succeeded": succeeded}
    if completed:
        status["completionTime"] = f"2026-01-01T00:{minute:02d}:40Z"
    if started is not None:
        status["startTime"] = f"2026-01-01T00:{started:02d}:05Z"
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": KIND,
        "metadata": {
            "name": f"cron-{int(scheduled.timestamp())}",
            "namespace": "ns",
            "uid": f"uid-{minute}",
            "resourceVersion": f"{minute}",
            "annotations": {"apps.kruise.io/scheduled-at": scheduled.strftime("%Y-%m-%dT%H:%M:%SZ")},
        },
        "status": status,
    }


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ({"imageListPullJobTemplate": {}}, "ImageListPullJob"),
        ({"jobTemplate": {}, "imageListPullJobTemplate": {}}, "Job"),
        ({"broadcastJobTemplate": {}, "imageListPullJobTemplate": {}}, "ImageListPullJob"),
        ({"broadcastJobTemplate": {}}, "BroadcastJob"),
    ],
)
def test_template_kind_follows_upstreams_order(template, expected):
    assert template_kind({"spec": {"template": template}}) == expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({}, None),
        ({"desired": 2, "succeeded": 2}, None),
        ({"desired": 2, "succeeded": 2, "completionTime": "2026-01-01T00:01:00Z"}, "Complete"),
        ({"desired": 2, "succeeded": 1, "completionTime": "2026-01-01T00:01:00Z"}, "Failed"),
        ({"completionTime": "2026-01-01T00:01:00Z"}, "Complete"),
        ({"desired": 1, "completionTime": "2026-01-01T00:01:00Z"}, "Failed"),
    ],
)
def test_an_image_list_pull_job_finishes_by_completion_time(status, expected):
    assert finished_type({"status": status}, KIND) == expected


def test_conditions_mean_nothing_to_an_image_list_pull_job():
    child = {"status": {"conditions": [{"type": "Complete", "status": "True"}]}}
    assert finished_type(child, KIND) is None
    assert finished_type(child) == "Complete"


@given(
    desired=st.integers(0, 5),
    succeeded=st.integers(0, 5),
    completed=st.booleans(),
)
def test_classification_is_by_completion_and_all_images_succeeding(desired, succeeded, completed):
    child = pull_job(1, completed=completed, succeeded=succeeded, desired=desired)
    sorted_children = classify([child], KIND)
    if not completed:
        assert sorted_children.active == (child,)
    elif succeeded == desired:
        assert sorted_children.succeeded == (child,)
    else:
        assert sorted_children.failed == (child,)
    assert sorted_children.last_scheduled == at(1)


def test_the_child_carries_template_labels_annotations_and_spec_only():
    child = build_child(acj(), KIND, at(3))
    assert child["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert child["kind"] == KIND
    meta = child["metadata"]
    assert meta["name"] == f"cron-{int(at(3).timestamp())}"
    assert meta["namespace"] == "ns"
    assert meta["labels"] == {"pull": "nightly"}
    assert meta["annotations"] == {"team": "infra", "apps.kruise.io/scheduled-at": "2026-01-01T00:03:00Z"}
    assert "finalizers" not in meta
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "AdvancedCronJob",
            "name": "cron",
            "uid": "acj-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert child["spec"] == TEMPLATE["spec"]
    assert child["spec"] is not TEMPLATE["spec"]


def test_a_due_run_creates_an_image_list_pull_job_and_reports_its_kind():
    plan = plan_reconcile(acj(concurrencyPolicy="Replace"), [], at(3, 10))
    assert plan.outcome is Outcome.RUN
    assert plan.child_kind == KIND
    assert plan.status == {"type": KIND}
    assert plan.create["kind"] == KIND
    assert plan.create["metadata"]["name"] == f"cron-{int(at(3).timestamp())}"


def test_status_lists_the_running_pull_jobs_and_the_latest_activation():
    running = pull_job(2)
    done = pull_job(1, completed=True, succeeded=2)
    plan = plan_reconcile(acj(concurrencyPolicy="Forbid"), [done, running], at(2, 30))
    assert plan.status == {
        "type": KIND,
        "active": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": KIND,
                "name": running["metadata"]["name"],
                "namespace": "ns",
                "uid": "uid-2",
                "resourceVersion": "2",
            }
        ],
        "lastScheduleTime": "2026-01-01T00:02:00Z",
    }


def test_forbid_skips_the_run_while_a_pull_job_runs():
    plan = plan_reconcile(acj(concurrencyPolicy="Forbid"), [pull_job(2)], at(3, 10))
    assert plan.outcome is Outcome.FORBIDDEN
    assert plan.create is None
    assert plan.scheduled_time == at(3)


def test_forbid_runs_once_the_pull_job_has_completed():
    plan = plan_reconcile(
        acj(concurrencyPolicy="Forbid"), [pull_job(2, completed=True, succeeded=2)], at(3, 10)
    )
    assert plan.outcome is Outcome.RUN
    assert plan.create is not None


def test_replace_deletes_the_running_pull_job_before_creating():
    plan = plan_reconcile(acj(concurrencyPolicy="Replace"), [pull_job(2)], at(3, 10))
    assert plan.outcome is Outcome.RUN
    assert [(d.kind, d.name, d.uid, d.reason) for d in plan.replace_deletions] == [
        (KIND, f"cron-{int(at(2).timestamp())}", "uid-2", DeletionReason.REPLACED)
    ]
    assert plan.create["metadata"]["name"] == f"cron-{int(at(3).timestamp())}"


def test_allow_runs_alongside_a_running_pull_job():
    """The webhook refuses Allow for this template, but a stored object is still planned as upstream."""
    plan = plan_reconcile(acj(concurrencyPolicy="Allow"), [pull_job(2)], at(3, 10))
    assert plan.outcome is Outcome.RUN
    assert plan.replace_deletions == ()


def test_history_limits_prune_the_oldest_finished_pull_jobs():
    ok_old = pull_job(1, completed=True, succeeded=2, started=1)
    ok_new = pull_job(2, completed=True, succeeded=2, started=2)
    bad = pull_job(3, completed=True, succeeded=1, started=3)
    plan = plan_reconcile(
        acj(paused=True, successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0), [ok_new, bad, ok_old], at(4)
    )
    assert plan.outcome is Outcome.PAUSED
    assert [(d.kind, d.uid, d.reason) for d in plan.history_deletions] == [
        (KIND, "uid-3", DeletionReason.FAILED_HISTORY),
        (KIND, "uid-1", DeletionReason.SUCCESSFUL_HISTORY),
    ]
