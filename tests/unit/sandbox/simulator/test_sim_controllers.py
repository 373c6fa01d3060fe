"""Rollout arithmetic, template hashing and Job pod shaping."""

from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.deployment import plan_rolling, resolve_fenceposts, template_hash
from kruise.sandbox.simulator.job import job_pod, restarts_counted, want_active
from kruise.sandbox.simulator.replicaset import deletion_rank
from tests.kit.pods import pod


@pytest.mark.parametrize(
    ("rolling", "replicas", "expected"),
    [
        ({}, 4, (1, 1)),
        ({}, 10, (3, 2)),
        ({"maxSurge": 0, "maxUnavailable": 0}, 3, (0, 1)),
        ({"maxSurge": "50%", "maxUnavailable": "0%"}, 3, (2, 0)),
        ({"maxSurge": 2, "maxUnavailable": 1}, 5, (2, 1)),
    ],
)
def test_fenceposts(rolling, replicas, expected):
    assert resolve_fenceposts({"rollingUpdate": rolling}, replicas) == expected


def rs(name, replicas, available, revision):
    return {
        "metadata": {"name": name, "annotations": {"deployment.kubernetes.io/revision": str(revision)}},
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": available},
    }


def test_rolling_first_step_surges_then_waits():
    new_size, olds = plan_rolling(3, 1, 0, rs("new", 0, 0, 2), [rs("old", 3, 3, 1)])
    assert (new_size, olds) == (1, {"old": 3})
    new_size, olds = plan_rolling(3, 1, 0, rs("new", 1, 1, 2), [rs("old", 3, 3, 1)])
    assert (new_size, olds) == (1, {"old": 2})


def test_rolling_removes_unavailable_old_pods_first():
    _, olds = plan_rolling(2, 0, 1, rs("new", 0, 0, 2), [rs("old", 2, 0, 1)])
    assert olds == {"old": 1}  # maxUnavailable=1 bounds even the unhealthy cleanup, as upstream


@given(
    replicas=st.integers(1, 8),
    surge=st.integers(0, 3),
    unavailable=st.integers(0, 3),
    new_replicas=st.integers(0, 8),
    new_available=st.integers(0, 8),
    old_replicas=st.integers(0, 8),
    old_available=st.integers(0, 8),
)
def test_rolling_never_breaks_its_bounds(
    replicas, surge, unavailable, new_replicas, new_available, old_replicas, old_available
):
    if surge == 0 and unavailable == 0:
        unavailable = 1
    new_available = min(new_available, new_replicas)
    old_available = min(old_available, old_replicas)
    new = rs("new", new_replicas, new_available, 2)
    old = rs("old", old_replicas, old_available, 1)
    new_size, olds = plan_rolling(replicas, surge, unavailable, new, [old])
    assert 0 <= olds["old"] <= old_replicas
    assert new_size <= replicas
    if new_replicas + old_replicas <= replicas + surge:
        assert new_size + old_replicas <= max(replicas + surge, new_replicas + old_replicas)
    # Old pods are only removed while enough pods stay available (or they were unavailable anyway).
    removed_available = max(0, old_available - olds["old"])
    still_available = new_available + old_available - removed_available
    assert removed_available == 0 or still_available >= replicas - unavailable


def test_template_hash_is_stable_and_safe():
    template = {
        "metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    first = template_hash(template)
    assert first == template_hash(dict(reversed(list(template.items()))))
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert template_hash(template, 1) != first


def test_want_active():
    assert want_active({"spec": {"parallelism": 2, "completions": 5}}, 4) == 1
    assert want_active({"spec": {"parallelism": 2}}, 0) == 2
    assert want_active({"spec": {"parallelism": 2}}, 1) == 0
    assert want_active({"spec": {"parallelism": 2, "suspend": True}}, 0) == 0


def test_job_pod_labels_and_owner():
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": "u1"},
        "spec": {"template": {"metadata": {"labels": {"app": "pi"}}, "spec": {"restartPolicy": "Never"}}},
    }
    pod = job_pod(job)
    assert pod["metadata"]["generateName"] == "pi-"
    assert pod["metadata"]["labels"] == {
        "app": "pi",
        "batch.kubernetes.io/controller-uid": "u1",
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "u1",
        "job-name": "pi",
    }
    assert pod["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "pi",
            "uid": "u1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_scale_down_prefers_unscheduled_then_not_ready_then_newest():
    pods = [
        pod("ready-old", node="n", phase="Running", ready=True, created="2026-01-01T00:00:00Z"),
        pod("ready-new", node="n", phase="Running", ready=True, created="2026-01-02T00:00:00Z"),
        pod("unready", node="n", phase="Running", ready=False, created="2026-01-01T00:00:00Z"),
        pod("pending", phase="Pending", ready=False, created="2026-01-01T00:00:00Z"),
    ]
    assert [p["metadata"]["name"] for p in sorted(pods, key=deletion_rank)] == [
        "pending",
        "unready",
        "ready-new",
        "ready-old",
    ]


def test_scale_down_prefers_the_lower_deletion_cost_among_ready_pods():
    def cost(value: str) -> dict[str, str]:
        return {"controller.kubernetes.io/pod-deletion-cost": value}

    ready = partial(pod, node="n", phase="Running", ready=True, created="2026-01-01T00:00:00Z")
    pods = [
        ready("zone-a-old", annotations=cost("200")),
        ready("zone-a-new", annotations=cost("200"), created="2026-01-03T00:00:00Z"),
        ready("zone-b", annotations=cost("100")),
        ready("unset-new", created="2026-01-02T00:00:00Z"),
        ready("garbage", annotations=cost("x1")),
        ready("negative", annotations=cost("-200")),
        ready("unready-costly", annotations=cost("1000"), ready=False),
    ]
    # not ready first whatever its cost; then by cost; an unparsable cost counts as 0; ties newest first
    assert [p["metadata"]["name"] for p in sorted(pods, key=deletion_rank)] == [
        "unready-costly",
        "negative",
        "unset-new",
        "garbage",
        "zone-b",
        "zone-a-new",
        "zone-a-old",
    ]


def test_on_failure_restarts_count_toward_the_backoff_limit():
    def job(policy):
        return {"spec": {"template": {"spec": {"restartPolicy": policy}}}}

    pods = [
        {
            "status": {
                "containerStatuses": [{"restartCount": 2}],
                "initContainerStatuses": [{"restartCount": 1}],
            }
        }
    ]
    assert restarts_counted(job("OnFailure"), pods) == 3
    assert restarts_counted(job("Never"), pods) == 0
