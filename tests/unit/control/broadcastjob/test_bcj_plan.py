"""plan_reconcile: one BroadcastJob pass — creates within parallelism, completion, failure policies."""

from __future__ import annotations

from datetime import timedelta

import pytest
from bcj_builders import NOW, job, job_pod, node
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.timestamps import rfc3339
from kruise.control.broadcastjob.plan import DeletionCause, Event, parallelism_limit, plan_reconcile

STAMP = rfc3339(NOW)
EARLIER = rfc3339(NOW - timedelta(minutes=5))
NODES = [node("c"), node("a"), node("b")]


def reasons(events):
    return [e.reason for e in events]


def running(start=EARLIER, **extra):
    return {"startTime": start, "phase": "running", **extra}


# --- creation ------------------------------------------------------------------------


def test_a_new_job_creates_one_pod_per_node_in_node_order():
    plan = plan_reconcile(job(), NODES, [], NOW)
    assert [c.node for c in plan.creates] == ["a", "b", "c"]
    assert plan.deletes == () and plan.events == () and plan.requeue_after is None
    settled = plan.settle()
    assert settled.status == {
        "startTime": STAMP,
        "active": 3,
        "succeeded": 0,
        "failed": 0,
        "desired": 3,
        "phase": "running",
    }
    assert settled.events == ()


def test_created_pods_carry_the_job_labels_and_node_binding():
    pod = plan_reconcile(job(), [node("a")], [], NOW).creates[0].pod
    assert pod["metadata"]["labels"] == {
        "app": "probe",
        "broadcastjob-name": "bcj",
        "broadcastjob-controller-uid": "uid-1",
    }
    required = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["a"]


def test_without_scheduler_assignment_the_pod_names_its_node():
    pod = plan_reconcile(job(), [node("a")], [], NOW, by_scheduler=False).creates[0].pod
    assert pod["spec"]["nodeName"] == "a"


def test_nodes_that_do_not_fit_are_not_desired():
    nodes = [
        node("a"),
        node("b", taints=[{"key": "k", "effect": "NoSchedule"}]),
        node("c", unschedulable=True),
    ]
    plan = plan_reconcile(job(), nodes, [], NOW)
    assert [c.node for c in plan.creates] == ["a"]
    assert plan.settle().status["desired"] == 1


def test_nodes_with_pods_get_no_second_pod():
    j = job(status=running())
    plan = plan_reconcile(j, NODES, [job_pod(j, "a"), job_pod(j, "c", phase="Succeeded")], NOW)
    assert [c.node for c in plan.creates] == ["b"]
    status = plan.settle().status
    assert (status["active"], status["succeeded"], status["desired"]) == (2, 1, 3)
    assert status["startTime"] == EARLIER


def test_a_deadline_requeues_at_the_deadline_on_first_sight():
    assert plan_reconcile(job(deadline=30), NODES, [], NOW).requeue_after == timedelta(seconds=30)


@given(elapsed=st.integers(min_value=0, max_value=599))
def test_every_pass_of_a_running_job_requeues_for_the_deadline_left(elapsed):
    """A restarted manager has lost the first pass's requeue: the next pass it makes must set one
    for the time still left, or a job whose pods run quietly would never meet its deadline."""
    started = rfc3339(NOW - timedelta(seconds=elapsed))
    j = job(deadline=600, status=running(start=started))
    plan = plan_reconcile(j, NODES, [job_pod(j, n["metadata"]["name"]) for n in NODES], NOW)
    assert plan.requeue_after == timedelta(seconds=600 - elapsed)
    assert plan.settle().status["phase"] == "running"


def test_a_job_past_its_deadline_fails_instead_of_requeueing_for_it():
    plan = plan_reconcile(job(deadline=30, status=running()), NODES, [], NOW)
    assert plan.settle().status["phase"] == "failed"
    assert plan.requeue_after is None  # no ttlSecondsAfterFinished


def test_policy_never_ignores_the_deadline_for_requeues():
    j = job(deadline=30, completion="Never", status=running(start=STAMP))
    assert plan_reconcile(j, NODES, [], NOW).requeue_after is None


def test_a_job_being_deleted_creates_nothing():
    assert plan_reconcile(job(deleting=True), NODES, [], NOW).creates == ()


def test_pods_of_other_jobs_are_ignored():
    other = job(name="other")
    plan = plan_reconcile(job(), [node("a")], [job_pod(other, "a")], NOW)
    assert [c.node for c in plan.creates] == ["a"]


def test_duplicate_pods_on_a_node_are_reported():
    j = job(status=running())
    pods = [job_pod(j, "a", name="p1"), job_pod(j, "a", name="p2")]
    plan = plan_reconcile(j, [node("a")], pods, NOW)
    assert plan.events == (
        Event("Warning", "DuplicatePodCreatedOnSameNode", "Duplicated pod p2 found on same node a"),
    )


# --- parallelism -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "desired", "limit"),
    [(None, 5, 2**31 - 1), (2, 5, 2), ("50%", 3, 2), ("100%", 3, 3), ("0%", 3, 0), ("1%", 1, 1)],
)
def test_parallelism_limit(value, desired, limit):
    assert parallelism_limit(value, desired) == limit


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("3", "string is not a percentage"),
        ("x%", 'invalid value "x%": strconv.Atoi: parsing "x": invalid syntax'),
    ],
)
def test_parallelism_that_is_not_a_percentage_is_an_error(value, message):
    with pytest.raises(ValueError, match=message):
        parallelism_limit(value, 3)
    plan = plan_reconcile(job(parallelism=value), NODES, [], NOW)
    assert plan.creates == ()
    assert plan.error is not None and plan.error.startswith("spec.parallelism: ")
    assert plan.settle().status["phase"] == "running"


def test_parallelism_caps_creates_counting_active_pods():
    j = job(parallelism=2, status=running())
    assert len(plan_reconcile(job(parallelism=2), NODES, [], NOW).creates) == 2
    plan = plan_reconcile(j, NODES, [job_pod(j, "a")], NOW)
    assert [c.node for c in plan.creates] == ["b"]
    plan = plan_reconcile(j, NODES, [job_pod(j, "a", phase="Succeeded"), job_pod(j, "b")], NOW)
    assert [c.node for c in plan.creates] == ["c"]


def test_more_active_than_parallelism_is_reported_and_nothing_created():
    j = job(parallelism=1, status=running())
    plan = plan_reconcile(j, NODES, [job_pod(j, "a"), job_pod(j, "b")], NOW)
    assert plan.creates == ()
    assert reasons(plan.events) == ["TooManyActivePods"]


@given(
    node_count=st.integers(min_value=0, max_value=12),
    states=st.lists(st.sampled_from(["Running", "Succeeded", "Failed", None]), max_size=12),
    parallelism=st.one_of(
        st.integers(min_value=0, max_value=15), st.integers(min_value=0, max_value=100).map(lambda p: f"{p}%")
    ),
)
def test_never_more_active_pods_than_parallelism(node_count, states, parallelism):
    nodes = [node(f"n{i:02d}") for i in range(node_count)]
    j = job(parallelism=parallelism, failure="Continue", status=running())
    pods = [job_pod(j, f"n{i:02d}", phase=state) for i, state in enumerate(states[:node_count]) if state]
    plan = plan_reconcile(j, nodes, pods, NOW)
    active = sum(1 for p in pods if p["status"]["phase"] == "Running")
    limit = parallelism_limit(parallelism, node_count)
    assert len(plan.creates) == max(0, min(limit - active, node_count - len(pods)))
    assert plan.settle().status["active"] <= max(limit, active)
    assert len({c.node for c in plan.creates}) == len(plan.creates)


# --- completion ------------------------------------------------------------------------


def test_always_completes_when_every_desired_node_has_a_finished_pod():
    j = job(failure="Continue", ttl=10, status=running())
    pods = [
        job_pod(j, "a", phase="Succeeded"),
        job_pod(j, "b", phase="Succeeded"),
        job_pod(j, "c", phase="Failed"),
    ]
    plan = plan_reconcile(j, NODES, pods, NOW)
    assert plan.creates == () and plan.deletes == ()
    assert plan.requeue_after == timedelta(seconds=11)
    settled = plan.settle()
    assert settled.status["phase"] == "completed"
    assert settled.status["completionTime"] == STAMP
    assert settled.status["conditions"] == [
        {
            "type": "Complete",
            "status": "True",
            "lastProbeTime": STAMP,
            "lastTransitionTime": STAMP,
            "reason": "Complete",
            "message": "Job completed, 2 pods succeeded, 1 pods failed",
        }
    ]
    assert settled.events == (
        Event("Normal", "JobComplete", "Job ns/bcj is completed, 2 pods succeeded, 1 pods failed"),
    )


def test_not_complete_while_a_pod_is_active_or_missing_or_no_node_is_desired():
    j = job(status=running())
    assert (
        plan_reconcile(j, NODES, [job_pod(j, "a", phase="Succeeded")], NOW).settle().status["phase"]
        == "running"
    )
    pods = [job_pod(j, n, phase="Succeeded") for n in "ab"] + [job_pod(j, "c")]
    assert plan_reconcile(j, NODES, pods, NOW).settle().status["phase"] == "running"
    assert plan_reconcile(j, [], [], NOW).settle().status["phase"] == "running"


def test_a_pod_over_its_restart_limit_counts_failed_but_keeps_the_job_open():
    j = job(failure="Continue", restart_policy="OnFailure", restart_limit=1, status=running())
    pods = [job_pod(j, "a", restarts=2)]
    status = plan_reconcile(j, [node("a")], pods, NOW).settle().status
    assert (status["failed"], status["active"], status["phase"]) == (1, 0, "running")


def test_never_keeps_running_and_gives_new_nodes_pods():
    j = job(completion="Never", status=running())
    done = [job_pod(j, n, phase="Succeeded") for n in "ab"]
    plan = plan_reconcile(j, [node("a"), node("b")], done, NOW)
    assert plan.settle().status["phase"] == "running" and plan.creates == ()
    plan = plan_reconcile(j, [node("a"), node("b"), node("new")], done, NOW)
    assert [c.node for c in plan.creates] == ["new"]
    assert plan.settle().status["desired"] == 3


def test_never_ignores_the_deadline():
    j = job(completion="Never", deadline=1, status=running(start=rfc3339(NOW - timedelta(hours=1))))
    assert plan_reconcile(j, [node("a")], [], NOW).settle().status["phase"] == "running"


# --- finished jobs and ttl ---------------------------------------------------------------


def finished(ttl, completed_ago, kind="Complete"):
    status = {
        **running(),
        "phase": "completed",
        "completionTime": rfc3339(NOW - completed_ago),
        "conditions": [{"type": kind, "status": "True", "reason": kind}],
    }
    return job(ttl=ttl, status=status)


def test_a_finished_job_waits_for_its_ttl_then_is_deleted():
    waiting = plan_reconcile(finished(10, timedelta(seconds=4)), NODES, [], NOW)
    assert (waiting.delete_job, waiting.requeue_after, waiting.status) == (False, timedelta(seconds=6), None)
    assert plan_reconcile(finished(10, timedelta(seconds=10)), NODES, [], NOW).delete_job
    assert plan_reconcile(finished(0, timedelta(0), kind="Failed"), NODES, [], NOW).delete_job


def test_a_finished_job_without_ttl_is_left_alone():
    plan = plan_reconcile(finished(None, timedelta(hours=1)), NODES, [], NOW)
    assert (plan.delete_job, plan.requeue_after, plan.status, plan.creates) == (False, None, None, ())
    with pytest.raises(ValueError, match="settle"):
        plan.settle()


# --- failure -----------------------------------------------------------------------------


def test_past_the_deadline_the_job_fails_and_active_pods_are_deleted():
    j = job(deadline=60, ttl=5, status=running(start=rfc3339(NOW - timedelta(seconds=60))))
    pods = [job_pod(j, "a", phase="Succeeded"), job_pod(j, "b"), job_pod(j, "c")]
    plan = plan_reconcile(j, NODES, pods, NOW)
    assert plan.creates == ()
    assert [(d.name, d.node, d.cause) for d in plan.deletes] == [
        ("bcj-b", "b", DeletionCause.JOB_FAILED),
        ("bcj-c", "c", DeletionCause.JOB_FAILED),
    ]
    assert plan.requeue_after == timedelta(seconds=6)
    settled = plan.settle()
    message = "Job ns/bcj was active longer than specified deadline"
    assert settled.status["phase"] == "failed"
    assert (settled.status["active"], settled.status["failed"], settled.status["succeeded"]) == (0, 2, 1)
    assert settled.status["completionTime"] == STAMP
    [condition] = settled.status["conditions"]
    assert (condition["type"], condition["reason"], condition["message"]) == ("Failed", "Failed", message)
    assert settled.events == (
        Event("Warning", "DeadlineExceeded", f"{message}: 1 pods succeeded, 2 pods failed"),
    )


def test_failed_deletes_are_not_counted():
    j = job(deadline=1, status=running())
    plan = plan_reconcile(j, NODES, [job_pod(j, "a"), job_pod(j, "b")], NOW)
    status = plan.settle(deleted=1).status
    assert (status["active"], status["failed"]) == (1, 1)


def test_fail_fast_fails_on_the_first_failed_pod():
    j = job(failure="FailFast", status=running())
    plan = plan_reconcile(j, NODES, [job_pod(j, "a", phase="Failed"), job_pod(j, "b")], NOW)
    assert plan.creates == ()
    assert [d.name for d in plan.deletes] == ["bcj-b"]
    message = "failure policy is FailurePolicyTypeFailFast and failed pod is found"
    assert plan.events == (
        Event("Warning", "failed pod is found", f"{message}: 0 pods succeeded, 1 pods failed"),
    )
    settled = plan.settle()
    assert settled.status["phase"] == "failed"
    assert settled.status["conditions"][0]["message"] == message
    assert settled.events == (
        Event("Warning", "failed pod is found", f"{message}: 0 pods succeeded, 2 pods failed"),
    )


def test_continue_ignores_failed_pods():
    j = job(failure="Continue", status=running())
    plan = plan_reconcile(j, NODES, [job_pod(j, "a", phase="Failed")], NOW)
    assert [c.node for c in plan.creates] == ["b", "c"]
    assert plan.settle().status["phase"] == "running"


def test_pause_policy_pauses_on_a_failed_pod():
    j = job(failure="Pause", status=running())
    plan = plan_reconcile(j, NODES, [job_pod(j, "a", phase="Failed")], NOW)
    assert plan.pause_requested
    assert plan.creates == () and plan.deletes == ()
    assert plan.events == (Event("Warning", "Paused", "job is paused, due to failed pod"),)
    status = plan.settle().status
    assert (status["phase"], status["failed"], status["desired"]) == ("paused", 1, 3)


def test_a_failed_job_only_refreshes_its_counts():
    """Completion Never is never "finished", so a FailFast failure leaves phase failed to stop it."""
    j = job(completion="Never", status=running(phase="failed"))
    plan = plan_reconcile(j, NODES, [job_pod(j, "a", phase="Failed")], NOW)
    assert (plan.creates, plan.deletes, plan.events) == ((), (), ())
    status = plan.settle().status
    assert (status["phase"], status["failed"]) == ("failed", 1)


# --- paused ------------------------------------------------------------------------------


def test_paused_creates_nothing():
    j = job(paused=True, status=running())
    plan = plan_reconcile(j, NODES, [], NOW)
    assert plan.creates == () and plan.events == ()
    assert plan.settle().status["phase"] == "paused"


def test_unpausing_continues():
    j = job(status=running(phase="paused"))
    plan = plan_reconcile(j, NODES, [], NOW)
    assert plan.events == (Event("Normal", "Continue", "continue to process job"),)
    assert len(plan.creates) == 3
    assert plan.settle().status["phase"] == "running"


# --- nodes that stop fitting -------------------------------------------------------------


def test_a_pod_on_a_node_it_no_longer_fits_is_deleted_and_the_node_not_desired():
    j = job(status=running())
    tainted = node("a", taints=[{"key": "k", "effect": "NoExecute"}])
    plan = plan_reconcile(j, [tainted, node("b")], [job_pod(j, "a"), job_pod(j, "b")], NOW)
    assert [(d.name, d.cause) for d in plan.deletes] == [("bcj-a", DeletionCause.NODE_UNFIT)]
    status = plan.settle().status
    assert (status["desired"], status["active"], status["failed"]) == (1, 1, 1)


def test_a_pod_already_deleting_on_an_unfit_node_stays_desired():
    j = job(status=running())
    tainted = node("a", taints=[{"key": "k", "effect": "NoExecute"}])
    plan = plan_reconcile(j, [tainted], [job_pod(j, "a", deleting=True)], NOW)
    assert plan.deletes == () and plan.creates == ()
    assert plan.settle().status["desired"] == 1


def test_pods_on_vanished_nodes_still_count_but_are_not_desired():
    j = job(status=running())
    plan = plan_reconcile(j, [node("a")], [job_pod(j, "gone")], NOW)
    status = plan.settle().status
    assert (status["desired"], status["active"]) == (1, 2)
