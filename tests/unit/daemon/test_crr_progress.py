"""ContainerRecreateRequest decisions: what to kill, when a container counts as recreated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kruise.daemon.containerrecreate.progress import (
    completed_status,
    finished,
    initial_states,
    must_stop,
    plan_recreate,
)
from tests.kit.pods import pod

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def crr(*names, **strategy):
    containers = [
        {"name": n, "statusContext": {"containerID": f"cri://{n}-1", "restartCount": 0}} for n in names
    ]
    return {"spec": {"podName": "p", "containers": containers, "strategy": strategy}}


def pod_with(**statuses):
    """Pod p whose containers report `statuses`: name -> (containerID, restartCount, ready, started seconds
    ago); only its status is read."""
    out = []
    for name, (cid, restarts, ready, ago) in statuses.items():
        started = (NOW - timedelta(seconds=ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append({"name": name, "containerID": cid, "restartCount": restarts, "ready": ready,
                    "state": {"running": {"startedAt": started}}})  # fmt: skip
    return pod(namespace=None, status={"containerStatuses": out})


def test_unordered_kills_every_container_at_once():
    request = crr("a", "b")
    states = initial_states(request)
    recreate = plan_recreate(
        request, pod_with(a=("cri://a-1", 0, True, 60), b=("cri://b-1", 0, True, 60)), states, NOW
    )
    assert [(k.container, k.container_id) for k in recreate.kills] == [("a", "a-1"), ("b", "b-1")]
    assert states == initial_states(request), "the states passed in are left as they are"


def test_ordered_waits_for_the_previous_container():
    request = crr("a", "b", orderedRecreate=True)
    states = initial_states(request)
    running = pod_with(a=("cri://a-1", 0, True, 60), b=("cri://b-1", 0, True, 60))
    assert [k.container for k in plan_recreate(request, running, states, NOW).kills] == ["a"]
    states[0].update(isKilled=True, phase="Recreating")
    # a restarted but not ready yet: b must wait
    restarting = pod_with(a=("cri://a-2", 1, False, 1), b=("cri://b-1", 0, True, 60))
    assert plan_recreate(request, restarting, states, NOW).kills == ()
    ready = pod_with(a=("cri://a-2", 1, True, 1), b=("cri://b-1", 0, True, 60))
    recreate = plan_recreate(request, ready, states, NOW)
    assert [k.container for k in recreate.kills] == ["b"]
    assert recreate.states[0]["phase"] == "Succeeded"


def test_min_started_seconds_delays_success():
    request = crr("a", minStartedSeconds=10)
    states = [{"name": "a", "phase": "Recreating", "isKilled": True}]
    early = plan_recreate(request, pod_with(a=("cri://a-2", 1, True, 5)), states, NOW)
    assert early.kills == () and early.states[0]["phase"] == "Recreating"
    late = plan_recreate(request, pod_with(a=("cri://a-2", 1, True, 11)), early.states, NOW)
    assert late.states[0]["phase"] == "Succeeded" and finished(late.states)


def test_an_already_replaced_container_is_never_killed_again():
    request = crr("a")
    states = initial_states(request)  # the record of our kill was lost
    recreate = plan_recreate(request, pod_with(a=("cri://a-2", 1, False, 1)), states, NOW)
    assert recreate.kills == ()
    assert recreate.states[0]["isKilled"] and recreate.states[0]["phase"] == "Recreating"


def test_failure_policy():
    failed = [{"name": "a", "phase": "Failed"}, {"name": "b", "phase": "Pending"}]
    assert must_stop(crr("a", "b"), failed)
    assert not must_stop(crr("a", "b", failurePolicy="Ignore"), failed)
    status = completed_status(failed, "2026-01-01T12:00:00Z", "pod has gone")
    assert status["phase"] == "Completed" and status["message"] == "pod has gone"
