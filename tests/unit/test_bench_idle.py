"""bench_idle's arithmetic and the pods it loads: CPU ticks from /proc, percent of a core, the
anchor ratio, the metrics it polls, and that its pods are what the CloneSet controller would call
up to date (else the "idle" manager would be rolling them)."""

from __future__ import annotations

import pytest

from benchmarks.bench_idle import (
    cloneset,
    cloneset_settled,
    counter_total,
    first_revision,
    newest_resource_version,
    owned_pod,
    percent_of_core,
    ratio,
    stat_cpu_ticks,
    summary,
    workqueue_depths,
)
from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH
from kruise.control.common.revision import is_pod_update


def test_stat_counts_user_system_and_waited_children_after_the_last_paren() -> None:
    # fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt,
    # then utime stime cutime cstime
    stat = "4242 (py (x) y) S 1 2 3 4 5 6 7 8 9 10 100 20 3 4 20 0 1 0 999\n"
    assert stat_cpu_ticks(stat) == 127


def test_percent_of_one_core() -> None:
    assert percent_of_core(0.6, 60.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="wall_seconds"):
        percent_of_core(1.0, 0.0)


def test_ratio_and_last_line() -> None:
    assert ratio(0.5, 0.2) == "2.50"
    assert ratio(0.5, 0.0) == "inf"
    assert summary(0.174, 0.0696) == "idle_cpu_percent=0.17 idle_cpu_ratio=2.50"


def test_workqueue_depths_reads_each_queue() -> None:
    text = (
        "# HELP workqueue_depth Current depth of workqueue\n"
        "# TYPE workqueue_depth gauge\n"
        'workqueue_depth{name="cloneset"} 100.0\n'
        'workqueue_depth{name="podreadiness"} 0.0\n'
        'workqueue_adds_total{name="cloneset"} 7.0\n'
    )
    assert workqueue_depths(text) == {"cloneset": 100.0, "podreadiness": 0.0}


def test_counter_total_sums_every_label_set_of_one_counter() -> None:
    text = (
        'rest_client_requests_total{code="200",method="GET"} 395.0\n'
        'rest_client_requests_total{code="200",method="PUT"} 30.0\n'
        'rest_client_requests_created{code="200",method="PUT"} 1.79e+09\n'
        'workqueue_adds_total{name="cloneset"} 7.0\n'
    )
    assert counter_total(text, "rest_client_requests") == 425.0
    assert counter_total(text, "workqueue_adds") == 7.0
    assert counter_total(text, "workqueue_retries") == 0.0


def test_cloneset_settled_needs_every_count_and_the_generation() -> None:
    done = {
        "metadata": {"generation": 2},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3},
    }
    assert cloneset_settled(done)
    assert not cloneset_settled({**done, "status": {**done["status"], "observedGeneration": 1}})
    assert not cloneset_settled({**done, "status": {**done["status"], "updatedReplicas": 2}})


def test_newest_resource_version() -> None:
    objs = [{"metadata": {"resourceVersion": rv}} for rv in ("9", "12", "10")]
    assert newest_resource_version(objs) == 12 and newest_resource_version([]) == 0


def test_loaded_pods_are_up_to_date_and_owned() -> None:
    stored = cloneset(3, 100)
    stored["metadata"]["uid"] = "cs-uid"
    revision = first_revision(stored)
    pod = owned_pod(stored, revision, 7)
    assert (
        revision.startswith("idle-3-")
        and pod["metadata"]["labels"][LABEL_CONTROLLER_REVISION_HASH] == revision
    )
    assert is_pod_update(pod, revision)
    (owner,) = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("CloneSet", "cs-uid", True)
    assert pod["metadata"]["labels"]["app"] == "idle-3"
