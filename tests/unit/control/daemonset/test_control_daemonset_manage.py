"""Advanced DaemonSet manage step, status counters and revision history (pure)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.common.nodeeligibility import NodeFit
from kruise.control.common.podstatus import AVAILABILITY_TICK
from kruise.control.daemonset.history import (
    plan_history,
    revision_hash,
    revisions_to_prune,
    template_hash,
)
from kruise.control.daemonset.manage import compute_status, group_by_node, plan_manage
from tests.kit.control_builders import NOW, build_pod

NEW, OLD = "hash-new", "hash-old"
RUN, KEEP, NO = NodeFit(True, True), NodeFit(False, True), NodeFit(False, False)


def node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {}}


def ds_pod(node_name: str, revision: str, suffix: str = "", **kw: Any) -> dict[str, Any]:
    kw.setdefault("node", node_name)
    return build_pod(f"ds-{node_name}-{revision}{suffix}", revision, **kw)


def plan(fits: dict[str, NodeFit], pods: list[dict[str, Any]], surge: bool = False, min_ready: int = 0):
    nodes = [node(n) for n in fits]
    return plan_manage(
        nodes,
        lambda n: fits[n["metadata"]["name"]],
        group_by_node(pods),
        NEW,
        allow_surge=surge,
        min_ready_seconds=min_ready,
        now=NOW,
    )


def test_creates_on_eligible_nodes_without_pods_sorted():
    result = plan({"b": RUN, "a": RUN, "c": NO, "d": KEEP}, [ds_pod("b", OLD)])
    assert result.nodes_to_create == ("a",)
    assert result.pods_to_delete == ()


def test_ineligible_node_loses_its_live_pods():
    deleting = ds_pod("a", OLD, "-x")
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    result = plan({"a": NO}, [ds_pod("a", NEW), deleting])
    assert result.pods_to_delete == ("ds-a-hash-new",)


def test_terminating_pod_blocks_a_replacement_without_surge():
    gone = ds_pod("a", OLD)
    gone["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    assert plan({"a": RUN}, [gone]).nodes_to_create == ()
    assert plan({"a": RUN}, [gone], surge=True).nodes_to_create == ("a",)


def test_failed_and_preparing_delete_pods_are_deleted():
    failed = ds_pod("a", NEW, phase="Failed", ready=False)
    preparing = ds_pod("b", NEW, labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})
    result = plan({"a": RUN, "b": RUN}, [failed, preparing])
    assert set(result.pods_to_delete) == {"ds-a-hash-new", "ds-b-hash-new"}
    assert result.failed_pods == (("ds-a-hash-new", "a"),)


def test_without_surge_the_oldest_pod_stays():
    older = ds_pod("a", OLD, created=NOW - timedelta(days=2))
    newer = ds_pod("a", NEW, created=NOW - timedelta(hours=1))
    assert plan({"a": RUN}, [newer, older]).pods_to_delete == ("ds-a-hash-new",)


def test_surge_keeps_old_pod_until_new_one_is_available():
    old = ds_pod("a", OLD, created=NOW - timedelta(days=2))
    fresh = ds_pod("a", NEW, created=NOW - timedelta(seconds=30), ready_since=timedelta(seconds=5))
    waiting = plan({"a": RUN}, [old, fresh], surge=True, min_ready=10)
    assert waiting.pods_to_delete == ()
    assert waiting.requeue_after == pytest.approx(5 + AVAILABILITY_TICK)  # the 5 s left, no extra second
    done = plan({"a": RUN}, [old, fresh], surge=True, min_ready=3)
    assert done.pods_to_delete == ("ds-a-hash-old",)


def test_surge_replaces_an_old_pod_that_is_not_ready():
    old = ds_pod("a", OLD, ready=False, created=NOW - timedelta(days=2))
    fresh = ds_pod("a", NEW, ready=False, created=NOW - timedelta(seconds=3))
    assert plan({"a": RUN}, [old, fresh], surge=True).pods_to_delete == ("ds-a-hash-old",)


def test_unscheduled_pod_of_a_missing_node_is_deleted_scheduled_one_is_not():
    unscheduled = ds_pod("gone", OLD, node=None)
    unscheduled["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}
                ]
            }
        }
    }
    scheduled = ds_pod("gone2", OLD)
    assert plan({"a": RUN}, [unscheduled, scheduled, ds_pod("a", NEW)]).pods_to_delete == (
        "ds-gone-hash-old",
    )


def test_status_counts_each_node_by_its_oldest_pod():
    pods = [
        ds_pod("a", NEW),
        ds_pod("b", OLD, ready=False),
        ds_pod("c", NEW, ready_since=timedelta(seconds=2)),
        ds_pod("x", NEW),
    ]
    fits = {"a": RUN, "b": RUN, "c": RUN, "d": RUN, "x": NO}
    nodes = [node(n) for n in fits]
    status = compute_status(
        nodes, lambda n: fits[n["metadata"]["name"]], group_by_node(pods), NEW, None, 10, NOW
    )
    assert status == {
        "desiredNumberScheduled": 4,
        "currentNumberScheduled": 3,
        "numberMisscheduled": 1,
        "numberReady": 2,
        "updatedNumberScheduled": 2,
        "numberAvailable": 1,
        "numberUnavailable": 3,
    }


@given(st.dictionaries(st.sampled_from("abcdef"), st.sampled_from([RUN, KEEP, NO]), min_size=1))
def test_every_eligible_empty_node_gets_exactly_one_create(fits):
    result = plan(fits, [])
    assert result.nodes_to_create == tuple(sorted(n for n, f in fits.items() if f.should_run))
    assert result.pods_to_delete == ()


# ---- history ----------------------------------------------------------------------------------


def daemonset(image: str = "nginx:1", collision: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "default", "uid": "u1", "annotations": {"a": "b"}},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "ds"}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            }
        },
        "status": {"collisionCount": collision},
    }


def stored(ds: dict[str, Any], number: int) -> dict[str, Any]:
    created = plan_history(ds, []).create
    assert created is not None
    return {**created, "revision": number}


def test_first_revision_is_created_named_by_hash():
    ds = daemonset()
    result = plan_history(ds, [])
    assert result.current is None and result.old == ()
    created = result.create
    assert created is not None
    hash_ = template_hash(ds["spec"]["template"], 0)
    assert created["metadata"]["name"] == f"ds-{hash_}"
    assert created["metadata"]["labels"] == {"app": "ds", "controller-revision-hash": hash_}
    assert created["revision"] == 1
    assert created["data"]["spec"]["template"]["$patch"] == "replace"
    assert created["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert revision_hash(created) == hash_


def test_collision_count_changes_the_hash():
    assert template_hash(daemonset()["spec"]["template"], 0) != template_hash(
        daemonset()["spec"]["template"], 1
    )


def test_matching_revision_is_current_and_rollback_renumbers_it():
    v1, v2 = stored(daemonset("nginx:1"), 1), stored(daemonset("nginx:2"), 2)
    same = plan_history(daemonset("nginx:2"), [v1, v2])
    assert same.current is v2 and same.renumber is None and same.old == (v1,)
    back = plan_history(daemonset("nginx:1"), [v1, v2])
    assert back.current is v1 and back.renumber == 3 and back.old == (v2,)
    new = plan_history(daemonset("nginx:3"), [v1, v2])
    assert new.create is not None and new.create["revision"] == 3


def test_prune_skips_live_hashes_and_keeps_the_limit():
    old = [stored(daemonset(f"nginx:{i}"), i) for i in range(1, 5)]
    live = {revision_hash(old[0])}
    assert revisions_to_prune(old, live, 2) == [old[1]["metadata"]["name"], old[2]["metadata"]["name"]]
    assert revisions_to_prune(old, set(), None) == []
