"""`rollout status` messages and completion, table-driven per kind."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.status import (
    RolloutError,
    cloneset_detail_status,
    cloneset_partition,
    pods_info,
    rollout_status,
)


def obj(name="demo", generation=2, spec=None, status=None, annotations=None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "generation": generation}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec or {}, "status": status or {}}


def cs_status(observed=2, updated=3, ready=3, available=3, revision="demo-abc", updated_ready=None, **extra):
    return {
        "observedGeneration": observed,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "updatedReadyReplicas": min(updated, ready) if updated_ready is None else updated_ready,
        "availableReplicas": available,
        "updateRevision": revision,
        **extra,
    }


CLONESET_CASES = [
    (
        "not observed",
        {"replicas": 3},
        cs_status(observed=1),
        "Waiting for CloneSet spec update to be observed...\n",
        False,
    ),
    (
        "never observed",
        {"replicas": 3},
        cs_status(observed=0),
        "Waiting for CloneSet spec update to be observed...\n",
        False,
    ),
    (
        "updating",
        {"replicas": 3},
        cs_status(updated=1),
        "Waiting for partitioned roll out to finish: 1 out of 3 new pods have been updated...\n",
        False,
    ),
    ("not ready", {"replicas": 3}, cs_status(ready=1), "Waiting for 2 pods to be ready...\n", False),
    (
        "done",
        {"replicas": 3},
        cs_status(),
        "CloneSet rolling update complete 3 pods at revision demo-abc...\n",
        True,
    ),
    (
        "partition waits for the rest",
        {"replicas": 5, "updateStrategy": {"partition": 3}},
        cs_status(updated=1, ready=5),
        "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...\n",
        False,
    ),
    (
        "partition done",
        {"replicas": 5, "updateStrategy": {"partition": 3}},
        cs_status(updated=2, ready=5),
        "partitioned roll out complete: 2 new pods have been updated...\n",
        True,
    ),
    (
        "percent partition rounds up",
        {"replicas": 5, "updateStrategy": {"partition": "50%"}},
        cs_status(updated=2, ready=5),
        "partitioned roll out complete: 2 new pods have been updated...\n",
        True,
    ),
    (
        "replicas default to 1",
        {},
        cs_status(updated=1, ready=1, available=1),
        "CloneSet rolling update complete 1 pods at revision demo-abc...\n",
        True,
    ),
]


@pytest.mark.parametrize(
    ("case", "spec", "status", "message", "done"), CLONESET_CASES, ids=[c[0] for c in CLONESET_CASES]
)
def test_cloneset(case, spec, status, message, done):
    assert rollout_status(kinds.CLONESET, obj(spec=spec, status=status)) == (message, done)


@pytest.mark.parametrize(
    ("partition", "replicas", "expected"),
    [
        (None, 5, 0),
        (2, 5, 2),
        (9, 5, 5),
        ("50%", 5, 3),
        ("100%", 5, 5),
        ("99%", 5, 4),
        ("0%", 5, 0),
        (-1, 5, 0),
    ],
)
def test_cloneset_partition(partition, replicas, expected):
    assert cloneset_partition(partition, replicas) == expected


def test_cloneset_partition_rejects_bad_strings():
    with pytest.raises(RolloutError, match="failed calculate partition"):
        cloneset_partition("half", 4)


@given(st.integers(0, 50), st.integers(0, 100))
def test_cloneset_percent_partition_stays_in_range(replicas, percent):
    value = cloneset_partition(f"{percent}%", replicas)
    assert 0 <= value <= replicas
    if replicas > 1 and percent < 100:
        assert value < replicas  # some pod always updates


ASTS_CASES = [
    (
        "not observed",
        {"replicas": 3},
        cs_status(observed=1),
        "Waiting for Advanced StatefulSet spec update to be observed...\n",
        False,
    ),
    (
        "partitioned",
        {"replicas": 4, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}},
        cs_status(updated=2, ready=4),
        "Waiting for partitioned roll out to finish: 2 out of 3 new pods have been updated...\n",
        False,
    ),
    (
        "partition done",
        {"replicas": 4, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}},
        cs_status(updated=3, ready=4),
        "partitioned roll out complete: 3 new pods have been updated...\n",
        True,
    ),
    ("not ready", {"replicas": 3}, cs_status(ready=2), "Waiting for 1 pods to be ready...\n", False),
    (
        "done",
        {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}},
        cs_status(),
        "Advanced StatefulSet rolling update complete 3 pods at revision demo-abc...\n",
        True,
    ),
]


@pytest.mark.parametrize(
    ("case", "spec", "status", "message", "done"), ASTS_CASES, ids=[c[0] for c in ASTS_CASES]
)
def test_advanced_statefulset(case, spec, status, message, done):
    assert rollout_status(kinds.ADVANCED_STATEFULSET, obj(spec=spec, status=status)) == (message, done)


def test_on_delete_strategies_have_no_status():
    for workload in (
        kinds.ADVANCED_STATEFULSET,
        kinds.STATEFULSET,
        kinds.DAEMONSET,
        kinds.ADVANCED_DAEMONSET,
    ):
        with pytest.raises(RolloutError, match="only available for RollingUpdate strategy type"):
            rollout_status(workload, obj(spec={"updateStrategy": {"type": "OnDelete"}}))


def ds_status(observed=2, desired=3, updated=3, available=3):
    return {
        "observedGeneration": observed,
        "desiredNumberScheduled": desired,
        "updatedNumberScheduled": updated,
        "numberAvailable": available,
    }


DAEMON_CASES = [
    (
        kinds.DAEMONSET,
        {},
        ds_status(observed=1),
        "Waiting for daemon set spec update to be observed...\n",
        False,
    ),
    (
        kinds.DAEMONSET,
        {},
        ds_status(updated=1),
        'Waiting for daemon set "demo" rollout to finish: 1 out of 3 new pods have been updated...\n',
        False,
    ),
    (
        kinds.DAEMONSET,
        {},
        ds_status(available=2),
        'Waiting for daemon set "demo" rollout to finish: 2 of 3 updated pods are available...\n',
        False,
    ),
    (kinds.DAEMONSET, {}, ds_status(), 'daemon set "demo" successfully rolled out\n', True),
    (
        kinds.ADVANCED_DAEMONSET,
        {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}},
        ds_status(updated=0),
        'Waiting for daemon set "demo" rollout to finish: 0 out of 1 new pods have been updated...\n',
        False,
    ),
    (
        kinds.ADVANCED_DAEMONSET,
        {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}},
        ds_status(updated=1),
        'daemon set "demo" successfully rolled out\n',
        True,
    ),
]


@pytest.mark.parametrize(("workload", "spec", "status", "message", "done"), DAEMON_CASES)
def test_daemonsets(workload, spec, status, message, done):
    assert rollout_status(workload, obj(spec=spec, status=status)) == (message, done)


def dep_status(observed=2, replicas=3, updated=3, available=3, conditions=None):
    return {
        "observedGeneration": observed,
        "replicas": replicas,
        "updatedReplicas": updated,
        "availableReplicas": available,
        "conditions": conditions or [],
    }


DEPLOYMENT_CASES = [
    (dep_status(observed=1), "Waiting for deployment spec update to be observed...\n", False),
    (
        dep_status(updated=1, replicas=4),
        'Waiting for deployment "demo" rollout to finish: 1 out of 3 new replicas have been updated...\n',
        False,
    ),
    (
        dep_status(replicas=4),
        'Waiting for deployment "demo" rollout to finish: 1 old replicas are pending termination...\n',
        False,
    ),
    (
        dep_status(available=2),
        'Waiting for deployment "demo" rollout to finish: 2 of 3 updated replicas are available...\n',
        False,
    ),
    (dep_status(), 'deployment "demo" successfully rolled out\n', True),
]


@pytest.mark.parametrize(("status", "message", "done"), DEPLOYMENT_CASES)
def test_deployment(status, message, done):
    assert rollout_status(kinds.DEPLOYMENT, obj(spec={"replicas": 3}, status=status)) == (message, done)


def test_deployment_deadline_and_revision_pin():
    stuck = dep_status(conditions=[{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}])
    with pytest.raises(RolloutError, match='deployment "demo" exceeded its progress deadline'):
        rollout_status(kinds.DEPLOYMENT, obj(spec={"replicas": 3}, status=stuck))
    pinned = obj(
        spec={"replicas": 3}, status=dep_status(), annotations={"deployment.kubernetes.io/revision": "2"}
    )
    assert rollout_status(kinds.DEPLOYMENT, pinned, revision=2)[1] is True
    with pytest.raises(
        RolloutError, match=r"desired revision \(3\) is different from the running revision \(2\)"
    ):
        rollout_status(kinds.DEPLOYMENT, pinned, revision=3)


STS_CASES = [
    (
        {"replicas": 3},
        {"observedGeneration": 2, "readyReplicas": 1},
        "Waiting for 2 pods to be ready...\n",
        False,
    ),
    (
        {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}},
        {"observedGeneration": 2, "readyReplicas": 3, "updatedReplicas": 1},
        "Waiting for partitioned roll out to finish: 1 out of 3 new pods have been updated...\n",
        False,
    ),
    (
        {"replicas": 3},
        {
            "observedGeneration": 2,
            "readyReplicas": 3,
            "updateRevision": "b",
            "currentRevision": "a",
            "updatedReplicas": 1,
        },
        "waiting for statefulset rolling update to complete 1 pods at revision b...\n",
        False,
    ),
    (
        {"replicas": 3},
        {
            "observedGeneration": 2,
            "readyReplicas": 3,
            "updateRevision": "a",
            "currentRevision": "a",
            "currentReplicas": 3,
        },
        "statefulset rolling update complete 3 pods at revision a...\n",
        True,
    ),
]


@pytest.mark.parametrize(("spec", "status", "message", "done"), STS_CASES)
def test_statefulset(spec, status, message, done):
    assert rollout_status(kinds.STATEFULSET, obj(spec=spec, status=status)) == (message, done)


counts = st.integers(0, 12)


@given(
    replicas=counts,
    partition=st.one_of(st.none(), counts, st.integers(0, 100).map(lambda p: f"{p}%")),
    observed=st.integers(0, 3),
    updated=counts,
    ready=counts,
)
def test_cloneset_done_only_when_observed_updated_and_ready(replicas, partition, observed, updated, ready):
    spec = {"replicas": replicas, "updateStrategy": {"partition": partition}}
    message, done = rollout_status(
        kinds.CLONESET, obj(generation=2, spec=spec, status=cs_status(observed, updated, ready, ready))
    )
    assert message.endswith("...\n")
    expected = (
        observed >= 2 and updated >= replicas - cloneset_partition(partition, replicas) and ready >= replicas
    )
    assert done is expected


INFO = pods_info(["demo-a"], [])

DETAIL_CASES = [
    (cs_status(observed=1), "Waiting for CloneSet demo spec update to be observed...\n", False),
    (
        cs_status(updated=1),
        "CloneSet demo Waiting for partitioned roll out to finish: 1 out of 3 new pods have been updated...\n"
        + INFO,
        False,
    ),
    (cs_status(ready=2), "Waiting for 1 pods to be ready...\n" + INFO, False),
    (cs_status(), "CloneSet demo rolling update complete 3 pods at revision demo-abc...\n" + INFO, True),
]


@pytest.mark.parametrize(("status", "message", "done"), DETAIL_CASES)
def test_cloneset_detail(status, message, done):
    assert cloneset_detail_status(obj(spec={"replicas": 3}, status=status), INFO) == (message, done)


def test_pods_info_prints_go_slices():
    assert pods_info(["a", "b"], []) == "Updated ready pods: [a b]\nUpdated not ready pods: []\n"
