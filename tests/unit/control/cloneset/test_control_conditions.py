"""CloneSet conditions: Progressing reasons in upstream's order, deadline requeue, write detection."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kruise.control.cloneset import conditions as cond

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def cloneset(replicas=3, deadline=600, paused=False):
    spec = {"replicas": replicas, "updateStrategy": {"paused": paused}}
    if deadline is not None:
        spec["progressDeadlineSeconds"] = deadline
    return {"spec": spec}


def status(**fields):
    base = {
        "replicas": 3,
        "updatedReplicas": 3,
        "updatedAvailableReplicas": 3,
        "expectedUpdatedReplicas": 3,
        "currentRevision": "r1",
        "updateRevision": "r1",
    }
    return {**base, **fields}


def progressing(s):
    return cond.get_condition(s, cond.CONDITION_PROGRESSING)


def test_no_deadline_means_no_progressing_condition():
    s = status(conditions=[{"type": "Progressing", "status": "True", "reason": "CloneSetUpdated"}])
    assert cond.apply_progressing(cloneset(deadline=None), s, NOW) is None
    assert progressing(s) is None
    s = status()
    cond.apply_progressing(cloneset(deadline=cond.MAX_INT32), s, NOW)
    assert progressing(s) is None


@pytest.mark.parametrize(
    ("spec", "fields", "reason", "state"),
    [
        ({}, {}, cond.REASON_AVAILABLE, "True"),
        ({"paused": True}, {"updatedReplicas": 1, "updateRevision": "r2"}, cond.REASON_PAUSED, "True"),
        (
            {},
            {
                "updateRevision": "r2",
                "updatedReplicas": 1,
                "updatedAvailableReplicas": 1,
                "expectedUpdatedReplicas": 1,
            },
            cond.REASON_PARTITION_AVAILABLE,
            "True",
        ),
        (
            {},
            {"updateRevision": "r2", "updatedReplicas": 1, "updatedAvailableReplicas": 0},
            cond.REASON_UPDATED,
            "True",
        ),
    ],
)
def test_reasons(spec, fields, reason, state):
    s = status(**fields)
    cond.apply_progressing(cloneset(**spec), s, NOW)
    assert (progressing(s)["reason"], progressing(s)["status"]) == (reason, state)


def test_available_wins_over_paused():
    s = status()
    cond.apply_progressing(cloneset(paused=True), s, NOW)
    assert progressing(s)["reason"] == cond.REASON_AVAILABLE
    assert progressing(s)["message"] == "CloneSet is available"


def test_progressing_requeues_at_the_deadline_plus_a_second():
    s = status(updateRevision="r2", updatedReplicas=0, updatedAvailableReplicas=0)
    delay = cond.apply_progressing(cloneset(deadline=600), s, NOW)
    assert delay == pytest.approx(601)
    later = NOW + timedelta(seconds=100)
    assert cond.apply_progressing(cloneset(deadline=600), s, later) == pytest.approx(501)


def test_deadline_exceeded_after_no_progress():
    s = status(updateRevision="r2", updatedReplicas=0, updatedAvailableReplicas=0)
    cond.apply_progressing(cloneset(deadline=60), s, NOW)
    assert cond.apply_progressing(cloneset(deadline=60), s, NOW + timedelta(seconds=61)) is None
    condition = progressing(s)
    assert condition["status"] == "False" and condition["reason"] == cond.REASON_DEADLINE_EXCEEDED
    assert condition["message"] == "CloneSet revision r2 has timed out progressing"
    # sticky until the rollout completes
    cond.apply_progressing(cloneset(deadline=60), s, NOW + timedelta(seconds=62))
    assert progressing(s)["reason"] == cond.REASON_DEADLINE_EXCEEDED
    s.update(updateRevision="r1", updatedReplicas=3, updatedAvailableReplicas=3)
    cond.apply_progressing(cloneset(deadline=60), s, NOW + timedelta(seconds=63))
    assert progressing(s)["reason"] == cond.REASON_AVAILABLE


def test_set_condition_keeps_transition_time_when_only_reason_changes():
    s = {"conditions": []}
    cond.set_cloneset_condition(s, cond.new_condition("Progressing", "True", "A", "a", NOW))
    cond.set_cloneset_condition(
        s, cond.new_condition("Progressing", "True", "B", "b", NOW + timedelta(seconds=5))
    )
    (c,) = s["conditions"]
    assert c["reason"] == "B" and c["lastTransitionTime"] == "2026-01-01T12:00:00Z"
    assert c["lastUpdateTime"] == "2026-01-01T12:00:05Z"
    cond.set_cloneset_condition(
        s, cond.new_condition("Progressing", "True", "B", "b", NOW + timedelta(seconds=9))
    )
    assert s["conditions"][0]["lastUpdateTime"] == "2026-01-01T12:00:05Z"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (status(observedGeneration=1), status(observedGeneration=1), False),
        (status(observedGeneration=1), status(observedGeneration=2), True),
        (status(), status(readyReplicas=2), True),
        (status(), status(collisionCount=1), True),
        (status(), status(conditions=[{"type": "FailedScale", "status": "True"}]), True),
        (
            status(
                conditions=[{"type": "Progressing", "status": "True", "reason": "A", "lastUpdateTime": "x"}]
            ),
            status(
                conditions=[{"type": "Progressing", "status": "True", "reason": "A", "lastUpdateTime": "y"}]
            ),
            False,
        ),
    ],
)
def test_status_needs_write(old, new, expected):
    assert cond.status_needs_write(old, new) is expected
