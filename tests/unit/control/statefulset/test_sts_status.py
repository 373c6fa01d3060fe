"""Advanced StatefulSet status from observed pods: counts by readiness, availability and revision;
completion of a rolling update; failure conditions; the revision template."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from sts_builders import CUR, NOW, TEMPLATE_V1, UPD, ordinal_pod, sts

from kruise.control.common.revision import cloneset_revision_data
from kruise.control.statefulset.status import (
    CONDITION_FAILED_CREATE_POD,
    compute_status,
    replica_counts,
    revision_template,
    set_failure_condition,
    status_changed,
)


def test_counts_split_by_revision_and_readiness():
    pods = [
        ordinal_pod(0, CUR),
        ordinal_pod(1, CUR, ready=False),
        ordinal_pod(2, UPD),
        ordinal_pod(3, UPD, terminating=True),
    ]
    counts = replica_counts(pods, 0, CUR, UPD, NOW)
    assert counts == {
        "replicas": 4,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "currentReplicas": 2,
        "updatedReplicas": 1,
        "updatedReadyReplicas": 2,
        "updatedAvailableReplicas": 2,
    }


def test_placeholder_pods_without_phase_are_not_counted():
    placeholder = ordinal_pod(0, UPD)
    del placeholder["status"]
    assert replica_counts([placeholder], 0, CUR, UPD, NOW)["replicas"] == 0


def test_min_ready_seconds_holds_back_availability():
    fresh = ordinal_pod(0, UPD, ready_since=timedelta(seconds=5))
    counts = replica_counts([fresh], 10, CUR, UPD, NOW)
    assert counts["readyReplicas"] == 1 and counts["availableReplicas"] == 0
    assert counts["updatedAvailableReplicas"] == 0


def test_status_fields_and_rolling_update_completion():
    body = sts(2)
    body["metadata"]["generation"] = 7
    status = compute_status(body, [ordinal_pod(0, UPD), ordinal_pod(1, UPD)], CUR, UPD, 0, NOW)
    assert status["observedGeneration"] == 7
    assert status["labelSelector"] == "app=web"
    assert status["collisionCount"] == 0
    # every pod updated and ready: the update revision becomes current
    assert status["currentRevision"] == UPD and status["currentReplicas"] == 2


def test_rollout_in_progress_keeps_current_revision():
    status = compute_status(sts(2), [ordinal_pod(0, CUR), ordinal_pod(1, UPD)], CUR, UPD, 0, NOW)
    assert status["currentRevision"] == CUR and status["currentReplicas"] == 1
    assert status["updatedReplicas"] == 1


def test_on_delete_never_completes_by_itself():
    body = sts(1, strategy_type="OnDelete")
    status = compute_status(body, [ordinal_pod(0, UPD)], CUR, UPD, 0, NOW)
    assert status["currentRevision"] == CUR


def test_failure_condition_keeps_its_transition_time():
    status: dict = {}
    set_failure_condition(status, CONDITION_FAILED_CREATE_POD, "first", NOW)
    set_failure_condition(status, CONDITION_FAILED_CREATE_POD, "second", NOW + timedelta(minutes=1))
    [condition] = status["conditions"]
    assert condition["message"] == "second" and condition["status"] == "True"
    assert condition["lastTransitionTime"] == "2026-01-01T12:00:00Z"


def test_status_changed_compares_written_fields():
    assert not status_changed({"replicas": 1, "extra": 2}, {"replicas": 1})
    assert status_changed({"replicas": 1}, {"replicas": 2})


def test_revision_template_restores_the_template():
    revision = {"data": cloneset_revision_data(TEMPLATE_V1)}
    template = revision_template(revision)
    # as Go encodes it: a container's resources is never omitted
    assert template["spec"]["containers"] == [{"name": "main", "image": "nginx:1", "resources": {}}]
    assert template["metadata"]["labels"] == {"app": "web"}
    assert "$patch" not in template


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), max_size=8))
def test_counts_are_bounded_by_replicas(flags):
    pods = [
        ordinal_pod(i, UPD if upd else CUR, ready=rdy, terminating=term)
        for i, (upd, rdy, term) in enumerate(flags)
    ]
    counts = replica_counts(pods, 0, CUR, UPD, NOW)
    assert counts["replicas"] == len(pods)
    assert counts["availableReplicas"] <= counts["readyReplicas"] <= counts["replicas"]
    assert counts["currentReplicas"] + counts["updatedReplicas"] <= counts["replicas"]
    assert counts["updatedReadyReplicas"] <= counts["readyReplicas"]
