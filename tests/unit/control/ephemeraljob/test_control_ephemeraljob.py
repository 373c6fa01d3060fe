"""EphemeralJob planning: targets, container and pod states, status phases/conditions, who is next."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.ephemeraljob import injection
from tests.kit.pods import pod

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def job(uid="uid-j", containers=("dbg",), **spec):
    return {
        "metadata": {"name": "j", "namespace": "ns", "uid": uid},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"ephemeralContainers": [{"name": n, "image": "busybox"} for n in containers]},
            **spec,
        },
    }


def target_pod(
    name, created="2026-01-01T00:00:00Z", labels=None, phase="Running", ephemerals=(), statuses=(), **meta
):
    """A pod the job may target (labelled app=web unless `labels` says otherwise); `meta`: more metadata."""
    return pod(
        name,
        namespace=meta.pop("namespace", "ns"),
        created=created,
        labels={"app": "web"} if labels is None else labels,
        meta=meta,
        containers=[{"name": "main"}],
        ephemeralContainers=list(ephemerals),
        phase=phase,
        status={"ephemeralContainerStatuses": list(statuses)},
    )


def mine(name="dbg", uid="uid-j"):
    return {"name": name, "image": "busybox", "env": [{"name": "KRUISE_EJOB_ID", "value": uid}]}


def running(name="dbg"):
    return {"name": name, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}


def done(name="dbg", code=0):
    return {"name": name, "state": {"terminated": {"exitCode": code, "finishedAt": "2026-01-01T00:00:01Z"}}}


def waiting(name="dbg", reason="ContainerCreating"):
    return {"name": name, "state": {"waiting": {"reason": reason}}}


def test_targets_are_active_selected_oldest_first_up_to_replicas():
    pods = [
        target_pod("c", created="2026-01-01T00:00:03Z"),
        target_pod("a", created="2026-01-01T00:00:01Z"),
        target_pod("b", created="2026-01-01T00:00:01Z"),
        target_pod("other", labels={"app": "db"}),
        target_pod("elsewhere", namespace="other"),
        target_pod("finished", phase="Succeeded"),
        target_pod("gone", deletionTimestamp="2026-01-01T00:00:00Z"),
        target_pod("foreign", ephemerals=[{"name": "dbg", "image": "x"}]),
        target_pod("ours", created="2026-01-01T00:00:09Z", ephemerals=[mine()]),
    ]
    assert [p["metadata"]["name"] for p in injection.target_pods(job(), pods)] == ["a", "b", "c", "ours"]
    assert [p["metadata"]["name"] for p in injection.target_pods(job(replicas=2), pods)] == ["a", "b"]
    # a nil selector selects nothing; an empty one everything (but not for pod events)
    assert injection.target_pods({**job(), "spec": {**job()["spec"], "selector": None}}, pods) == []
    everything = {**job(), "spec": {**job()["spec"], "selector": {}}}
    assert len(injection.target_pods(everything, pods)) == 5
    assert not injection.selects(everything, pods[0], empty_matches=False)


@pytest.mark.parametrize(
    ("status", "state"),
    [
        (done(), injection.SUCCEEDED),
        (done(code=2), injection.FAILED),
        ({"name": "dbg", "state": {"terminated": {"exitCode": 0}}}, injection.UNKNOWN),
        (running(), injection.RUNNING),
        (waiting(), injection.WAITING),
        (waiting(reason="RunContainerError"), injection.FAILED),
        ({"name": "dbg", "state": {}}, injection.UNKNOWN),
    ],
)
def test_container_state(status, state):
    assert injection.container_state(status) == state


def test_pod_state_over_the_job_containers_only():
    two = job(containers=("a", "b"))
    assert injection.pod_state(two, target_pod("p", statuses=[done("a"), done("b")])) == injection.SUCCEEDED
    assert injection.pod_state(two, target_pod("p", statuses=[done("a"), running("b")])) == injection.RUNNING
    assert injection.pod_state(two, target_pod("p", statuses=[done("a"), waiting("b")])) == injection.WAITING
    assert (
        injection.pod_state(two, target_pod("p", statuses=[running("a"), done("b", 1)])) == injection.FAILED
    )
    assert injection.pod_state(two, target_pod("p", statuses=[done("a")])) == injection.UNKNOWN
    assert (
        injection.pod_state(two, target_pod("p", statuses=[done("a"), done("b"), running("x")]))
        == injection.SUCCEEDED
    )


def _types(status):
    return {c["type"]: c["reason"] for c in status["conditions"]}


def test_status_phases_and_conditions():
    empty = injection.status(job(), [], NOW)
    assert (
        empty["phase"] == "Waiting" and empty["match"] == 0 and empty["startTime"] == "2026-01-01T12:00:00Z"
    )
    assert _types(empty) == {"Initialized": "Initialized", "MatchedEmpty": "MatchEmpty"}

    pods = [target_pod("a", statuses=[done()]), target_pod("b", statuses=[running()])]
    mid = injection.status(job(), pods, NOW)
    assert (mid["phase"], mid["match"], mid["succeeded"], mid["running"]) == ("Running", 2, 1, 1)
    assert "completionTime" not in mid

    ok = injection.status(
        job(), [target_pod("a", statuses=[done()]), target_pod("b", statuses=[done()])], NOW
    )
    assert ok["phase"] == "Succeeded" and ok["completionTime"] == "2026-01-01T12:00:00Z"
    assert _types(ok)["JobSucceeded"] == "JobSucceeded"

    bad = injection.status(job(), [target_pod("a", statuses=[done(code=1)])], NOW)
    assert bad["phase"] == "Failed" and bad["failed"] == 1 and "completionTime" in bad
    assert _types(bad)["JobFailed"] == "CreateFailed"  # the CreateFailed condition replaces JobFailed

    wait = injection.status(job(), [target_pod("a", statuses=[waiting()])], NOW)
    assert wait["phase"] == "Waiting" and wait["waiting"] == 1
    unknown = injection.status(job(), [target_pod("a"), target_pod("b", statuses=[waiting()])], NOW)
    assert unknown["phase"] == "Unknown"
    paused = injection.status(job(paused=True), [target_pod("a", statuses=[running()])], NOW)
    assert paused["phase"] == "Paused"
    error = injection.status(job(containers=()), [target_pod("a")], NOW)
    assert error["phase"] == "Error" and _types(error)["JobError"] == "Error"


def test_status_keeps_condition_times_when_nothing_changed():
    first = injection.status(job(), [], NOW)
    again = injection.status({**job(), "status": first}, [], NOW + timedelta(minutes=5))
    assert again == first


def test_active_deadline_fails_an_unfinished_job():
    started = {"startTime": "2026-01-01T11:59:00Z"}
    j = {**job(activeDeadlineSeconds=60), "status": started}
    late = injection.status(j, [target_pod("a", statuses=[running()])], NOW)
    assert (
        late["phase"] == "Failed"
        and late["completionTime"]
        and _types(late)["JobFailed"] == "DeadlineExceeded"
    )
    early = injection.status(j, [target_pod("a", statuses=[running()])], NOW - timedelta(seconds=1))
    assert early["phase"] == "Running"
    assert injection.deadline_left(j, started["startTime"], NOW - timedelta(seconds=20)) == 20.0
    assert injection.deadline_left(j, started["startTime"], NOW + timedelta(hours=1)) == 0.0
    assert injection.deadline_left(job(), started["startTime"], NOW) is None


def test_to_inject_respects_parallelism_and_running():
    targets = [target_pod("a", ephemerals=[mine()]), target_pod("b"), target_pod("c"), target_pod("d")]
    names = lambda ps: [p["metadata"]["name"] for p in ps]  # noqa: E731
    assert names(injection.to_inject(job(), targets, running=0)) == ["b"]
    assert names(injection.to_inject(job(parallelism=2), targets, running=1)) == ["b"]
    assert names(injection.to_inject(job(parallelism=5), targets, running=0)) == ["b", "c", "d"]
    assert injection.to_inject(job(parallelism=2), targets, running=3) == []
    assert injection.to_inject(job(containers=()), targets, running=0) == []


@given(
    st.integers(min_value=0, max_value=8),
    st.integers(min_value=0, max_value=8),
    st.integers(min_value=0, max_value=8),
)
def test_never_more_new_pods_than_parallelism_allows(n, parallelism, run):
    targets = [target_pod(f"p{i}") for i in range(n)]
    chosen = injection.to_inject(job(parallelism=parallelism), targets, running=run)
    assert len(chosen) == max(0, min(parallelism, n) - run)
    assert chosen == targets[: len(chosen)]


def test_injection_patch_marks_containers_with_the_job_uid():
    j = job(containers=("a", "b"))
    j["spec"]["template"]["ephemeralContainers"][0]["env"] = [{"name": "X", "value": "1"}]
    patch = injection.injection_patch(j)
    a, b = patch["spec"]["ephemeralContainers"]
    assert a["env"] == [{"name": "X", "value": "1"}, {"name": "KRUISE_EJOB_ID", "value": "uid-j"}]
    assert b["env"] == [{"name": "KRUISE_EJOB_ID", "value": "uid-j"}]
    assert "env" not in job()["spec"]["template"]["ephemeralContainers"][0]  # the template is untouched
    assert injection.created_by(j, a) and not injection.created_by(job(uid="other"), a)
    assert injection.expectation_names(j, target_pod("p")) == ["p-a", "p-b"]


def test_ttl_left_defaults_to_1800_seconds():
    finished = {"completionTime": "2026-01-01T11:00:00Z"}
    assert injection.ttl_left(job(), NOW) is None
    assert injection.ttl_left({**job(), "status": finished}, NOW) == 1800 - 3600
    assert injection.ttl_left({**job(ttlSecondsAfterFinished=7200), "status": finished}, NOW) == 3600
