"""`kruise.control.nodeimage.cleanup.plan_status` and `requeue_delay`: tags the node never answered, or
that outlived activeDeadlineSeconds, become Failed on the manager's clock; the status is recounted
when written; waits under 3 s become 3-5 s."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from kruise.api.timestamps import rfc3339
from kruise.control.imagepulljob.nodeimages import node_phase
from kruise.control.nodeimage.cleanup import (
    DEADLINE_EXCEEDED,
    NOT_RESPONDED,
    RESPONSE_TIMEOUT,
    StatusPlan,
    TagFailure,
    plan_status,
    requeue_delay,
)

NOW = datetime(2026, 11, 22, 23, 0, tzinfo=UTC)
JOB = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "namespace": "ns", "name": "warm",
       "uid": "uid-warm"}  # fmt: skip


def spec_tag(tag, *, age, version=0, deadline=None, created=True):
    body = {"tag": tag, "version": version, "ownerReferences": [JOB], "pullPolicy": {}}
    if created:
        body["createdAt"] = rfc3339(NOW - timedelta(seconds=age))
    if deadline is not None:
        body["pullPolicy"]["activeDeadlineSeconds"] = deadline
    return body


def node_image(images, statuses=None, **counts):
    status = {"imageStatuses": {name: {"tags": tags} for name, tags in (statuses or {}).items()}, **counts}
    return {"metadata": {"name": "node-1"}, "spec": {"images": images}, "status": status}


def test_a_tag_answered_in_time_needs_nothing():
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", age=9999)]}},
        {"nginx": [{"tag": "1", "version": 0, "phase": "Succeeded", "completionTime": rfc3339(NOW)}]},
    )
    assert plan_status(ni, NOW) == StatusPlan()


def test_an_unanswered_tag_waits_out_the_response_timeout():
    plan = plan_status(node_image({"nginx": {"tags": [spec_tag("1", age=100)]}}), NOW)
    assert plan.status is None and plan.failures == []
    assert plan.requeue_after == pytest.approx(RESPONSE_TIMEOUT - 100)


def test_an_unanswered_tag_fails_after_ten_minutes_and_the_status_is_recounted():
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", age=600), spec_tag("2", age=600)]}},
        {"nginx": [{"tag": "2", "version": 0, "phase": "Succeeded", "completionTime": rfc3339(NOW)}]},
        desired=2,
        succeeded=1,
        firstSyncStatus={"status": "Succeeded"},
    )
    plan = plan_status(ni, NOW)
    failed = {
        "tag": "1",
        "phase": "Failed",
        "completionTime": rfc3339(NOW),
        "version": 0,
        "message": NOT_RESPONDED,
    }
    assert plan.status == {
        "imageStatuses": {"nginx": {"tags": [failed, ni["status"]["imageStatuses"]["nginx"]["tags"][0]]}},
        "desired": 2,
        "pulling": 0,
        "succeeded": 1,
        "failed": 1,
        "firstSyncStatus": {"status": "Succeeded"},
    }
    assert plan.failures == [TagFailure("nginx:1", NOT_RESPONDED, [JOB])]
    assert "1" not in [t["tag"] for t in ni["status"]["imageStatuses"]["nginx"]["tags"]]  # input untouched


def test_a_status_at_an_older_version_counts_as_no_answer_and_keeps_its_other_fields():
    old = {"tag": "1", "version": 1, "phase": "Succeeded", "progress": 100, "imageID": "sha256:x",
           "completionTime": rfc3339(NOW - timedelta(hours=2))}  # fmt: skip
    ni = node_image({"nginx": {"tags": [spec_tag("1", age=601, version=2)]}}, {"nginx": [old]})
    (tag,) = plan_status(ni, NOW).status["imageStatuses"]["nginx"]["tags"]
    assert tag == {
        **old,
        "phase": "Failed",
        "version": 2,
        "message": NOT_RESPONDED,
        "completionTime": rfc3339(NOW),
    }


def test_a_pulling_tag_fails_after_its_deadline_plus_the_response_timeout():
    pulling = {"tag": "1", "version": 0, "phase": "Pulling", "progress": 40}
    early = node_image({"nginx": {"tags": [spec_tag("1", age=700, deadline=300)]}}, {"nginx": [pulling]})
    assert plan_status(early, NOW).requeue_after == pytest.approx(300 + RESPONSE_TIMEOUT - 700)
    late = node_image({"nginx": {"tags": [spec_tag("1", age=900, deadline=300)]}}, {"nginx": [pulling]})
    plan = plan_status(late, NOW)
    (tag,) = plan.status["imageStatuses"]["nginx"]["tags"]
    assert tag["phase"] == "Failed" and tag["message"] == DEADLINE_EXCEEDED and tag["progress"] == 40
    assert (plan.status["pulling"], plan.status["failed"]) == (0, 1)
    assert plan.failures == [TagFailure("nginx:1", DEADLINE_EXCEEDED, [JOB])]


def test_a_finished_tag_is_never_timed_out_and_a_tag_without_created_at_is_skipped():
    done = {"tag": "1", "version": 0, "phase": "Succeeded", "completionTime": rfc3339(NOW)}
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", age=99999, deadline=1), spec_tag("2", age=0, created=False)]}},
        {"nginx": [done]},
    )
    plan = plan_status(ni, NOW)
    assert (plan.status, plan.failures, plan.requeue_after) == (None, [], None)


def test_a_status_write_drops_entries_no_spec_tag_lists_and_counts_every_spec_tag():
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", age=601), spec_tag("x", age=0, created=False)]}},
        {
            "nginx": [{"tag": "old", "version": 0, "phase": "Succeeded"}],
            "redis": [{"tag": "7", "phase": "Pulling"}],
        },
    )
    status = plan_status(ni, NOW).status
    assert status["imageStatuses"] == {"nginx": {"tags": [{"tag": "1", "phase": "Failed",
        "completionTime": rfc3339(NOW), "version": 0, "message": NOT_RESPONDED}]}}  # fmt: skip
    assert (status["desired"], status["failed"], status["succeeded"], status["pulling"]) == (2, 1, 0, 0)


def test_unsorted_status_tags_alone_are_rewritten_sorted():
    tags = [{"tag": "b", "version": 0, "phase": "Pulling"}, {"tag": "a", "version": 0, "phase": "Pulling"}]
    ni = node_image({"nginx": {"tags": [spec_tag("a", age=1), spec_tag("b", age=1)]}}, {"nginx": tags})
    plan = plan_status(ni, NOW)
    assert [t["tag"] for t in plan.status["imageStatuses"]["nginx"]["tags"]] == ["a", "b"]
    assert plan.failures == [] and plan.status["pulling"] == 2


def test_the_nearest_deadline_wins():
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", age=100), spec_tag("2", age=500)]},
         "redis": {"tags": [spec_tag("7", age=700, deadline=60)]}},
        {"redis": [{"tag": "7", "version": 0, "phase": "Pulling"}]},
    )  # fmt: skip
    assert plan_status(ni, NOW).requeue_after == pytest.approx(100.0)


@given(
    age=hs.integers(min_value=0, max_value=5_000),
    deadline=hs.none() | hs.integers(min_value=0, max_value=3_000),
    answered=hs.booleans(),
)
def test_a_tag_fails_exactly_when_its_timeout_has_passed(age, deadline, answered):
    statuses = {"nginx": [{"tag": "1", "version": 0, "phase": "Pulling"}]} if answered else None
    plan = plan_status(
        node_image({"nginx": {"tags": [spec_tag("1", age=age, deadline=deadline)]}}, statuses), NOW
    )
    if not answered:
        due, message = RESPONSE_TIMEOUT, NOT_RESPONDED
    elif deadline is not None:
        due, message = deadline + RESPONSE_TIMEOUT, DEADLINE_EXCEEDED
    else:
        assert (plan.status, plan.requeue_after) == (None, None)
        return
    if age >= due:
        assert plan.failures == [TagFailure("nginx:1", message, [JOB])] and plan.requeue_after is None
        assert plan.status["failed"] == 1
    else:
        assert plan.status is None and plan.requeue_after == pytest.approx(due - age)


def test_a_tag_the_manager_failed_counts_as_failed_for_its_imagepulljob():
    job = {"metadata": {"name": "warm", "namespace": "ns", "uid": "uid-warm"}, "spec": {"image": "nginx:1"}}
    ni = node_image({"nginx": {"tags": [spec_tag("1", age=601)]}})
    assert node_phase(job, ni) == "Pulling"
    assert node_phase(job, {**ni, "status": plan_status(ni, NOW).status}) == "Failed"


@given(seconds=hs.floats(min_value=0.001, max_value=2.999), seed=hs.integers())
def test_a_short_wait_becomes_three_to_five_seconds(seconds, seed):
    delay = requeue_delay(seconds, random.Random(seed))
    assert 3.0 <= delay < 5.0 and round(delay * 1000) == pytest.approx(delay * 1000)


@pytest.mark.parametrize(
    ("seconds", "delay"), [(None, None), (0.0, None), (-1.0, None), (3.0, 3.0), (250.5, 250.5)]
)
def test_other_waits_pass_through(seconds, delay):
    assert requeue_delay(seconds, random.Random(0)) == delay
