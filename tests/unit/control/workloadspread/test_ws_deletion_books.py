"""WorkloadSpread bookkeeping of pod deletions and evictions (upstream's HandlePodDeletion): which
pods count, what the subset's books become, which WorkloadSpreads keep no books; and a model of
concurrent webhooks deleting pods with optimistic status writes, where every distinct pod frees
exactly one slot however the writes interleave and a pod deleted twice is booked once."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.control.workloadspread.subsets import (
    ANNOTATION_MATCHED,
    MatchedSpread,
    deletion_booking,
    record_deletion,
)
from tests.unit.control.workloadspread.test_ws_subsets import NOW, OptimisticStore, books, spread, spread_pod


def annotated(name: str, subset: str = "a", ws: str = "ws", **status: Any) -> dict[str, Any]:
    p = spread_pod(name)
    p["metadata"]["annotations"] = {ANNOTATION_MATCHED: MatchedSpread(ws, subset).to_json()}
    if status:
        p["status"] = status
    return p


def booked(ws: dict[str, Any], missing: int, subset_index: int = 0) -> dict[str, Any]:
    """The WorkloadSpread with its versionIgnored books present and `missing` on one subset."""
    out = copy.deepcopy(ws)
    statuses = [
        {"name": s["name"], "replicas": 0, "missingReplicas": s.get("maxReplicas", -1)}
        for s in out["spec"]["subsets"]
    ]
    statuses[subset_index]["missingReplicas"] = missing
    out["status"] = {"versionedSubsetStatuses": {"versionIgnored": statuses}}
    return out


# --- which deletions count ---


def test_active_controlled_annotated_pod_counts() -> None:
    assert deletion_booking(annotated("p")) == MatchedSpread("ws", "a")


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda p: p["metadata"].pop("annotations"), id="no annotation"),
        pytest.param(lambda p: p["metadata"]["annotations"].update({ANNOTATION_MATCHED: "{"}), id="bad json"),
        pytest.param(lambda p: p["metadata"]["annotations"].update({ANNOTATION_MATCHED: "null"}), id="null"),
        pytest.param(lambda p: p["metadata"]["annotations"].update({ANNOTATION_MATCHED: "{}"}), id="no name"),
        pytest.param(lambda p: p.update({"status": {"phase": "Succeeded"}}), id="succeeded"),
        pytest.param(lambda p: p.update({"status": {"phase": "Failed"}}), id="failed"),
        pytest.param(
            lambda p: p["metadata"].update({"deletionTimestamp": "2024-05-01T00:00:00Z"}), id="terminating"
        ),
        pytest.param(lambda p: p["metadata"].pop("ownerReferences"), id="no controller"),
    ],
)
def test_deletions_that_change_no_books(change: Any) -> None:
    p = annotated("p")
    change(p)
    assert deletion_booking(p) is None


# --- what the books become ---


def test_deletion_books_pod_and_frees_one_slot() -> None:
    ws = booked(spread(("a", 2), ("b", None)), missing=0)
    out = record_deletion(ws, annotated("p1"), "a", NOW, 0)
    assert out is not None
    assert books(out)[0]["deletingPods"] == {"p1": "2024-05-01T12:00:00Z"}
    assert books(out)[0]["missingReplicas"] == 1
    assert books(ws)[0].get("deletingPods") is None  # input untouched


def test_second_deletion_of_same_pod_changes_nothing() -> None:
    ws = booked(spread(("a", 2), ("b", None)), missing=0)
    once = record_deletion(ws, annotated("p1"), "a", NOW, 0)
    assert once is not None
    assert record_deletion(once, annotated("p1"), "a", NOW, 0) is None


def test_pod_still_being_created_is_not_booked_out() -> None:
    ws = booked(spread(("a", 2), ("b", None)), missing=1)
    books(ws)[0]["creatingPods"] = {"p1": "2024-05-01T11:59:59Z"}
    assert record_deletion(ws, annotated("p1"), "a", NOW, 0) is None


def test_negative_missing_replicas_stay_as_they_are() -> None:
    # upstream only adds a slot back when the count is not negative
    ws = booked(spread(("a", 2), ("b", 3)), missing=-2)
    out = record_deletion(ws, annotated("p1"), "a", NOW, 0)
    assert out is not None
    assert books(out)[0]["missingReplicas"] == -2
    assert "p1" in books(out)[0]["deletingPods"]


def test_fresh_books_start_from_the_scaled_quota() -> None:
    ws = spread(("a", "50%"), ("b", None))
    out = record_deletion(ws, annotated("p1"), "a", NOW, 4)
    assert out is not None
    assert books(out)[0]["missingReplicas"] == 3  # 50% of 4, plus the pod let go


def test_deletion_is_booked_under_the_pods_version() -> None:
    ws = spread(("a", 1), ("b", None), kind="Deployment")
    p = annotated("p1")
    p["metadata"]["labels"] = {"pod-template-hash": "abc"}
    p["metadata"]["ownerReferences"][0]["kind"] = "ReplicaSet"
    out = record_deletion(ws, p, "a", NOW, 0)
    assert out is not None
    assert set(out["status"]["versionedSubsetStatuses"]) == {"abc"}
    assert books(out, "abc")[0]["deletingPods"] == {"p1": "2024-05-01T12:00:00Z"}


@pytest.mark.parametrize(
    ("ws", "subset"),
    [
        pytest.param(spread(("a", None)), "a", id="single unlimited subset"),
        pytest.param(spread(("a", 1), ("b", 1), kind="StatefulSet"), "a", id="statefulset target"),
        pytest.param(spread(("a", 1), ("b", None)), "b", id="unlimited subset"),
        pytest.param(spread(("a", 1), ("b", None)), "gone", id="unknown subset"),
    ],
)
def test_workloadspreads_that_keep_no_books_for_the_deletion(ws: dict[str, Any], subset: str) -> None:
    assert record_deletion(ws, annotated("p1", subset), subset, NOW, 0) is None


# --- concurrent webhooks ---


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(1, 6),
    deleters=st.lists(st.integers(0, 4), min_size=1, max_size=8),
    schedule=st.lists(st.integers(0, 7), max_size=120),
)
def test_concurrent_deletions_each_free_exactly_one_slot(
    limit: int, deleters: list[int], schedule: list[int]
) -> None:
    """`deleters[i]` is the pod deleter i deletes (several may delete the same pod, as a DELETE and an
    eviction racing); each reads, decides, writes, and on a conflict reads again."""
    store = OptimisticStore(booked(spread(("a", limit), ("b", None)), missing=0))
    reads: dict[int, dict[str, Any]] = {}
    done: set[int] = set()
    actors = len(deleters)
    order = [i % actors for i in schedule] + [i for i in range(actors) for _ in range(2 * actors + 2)]
    for actor in order:
        if actor in done:
            continue
        if actor not in reads:
            reads[actor] = store.read()
            continue
        updated = record_deletion(reads.pop(actor), annotated(f"p{deleters[actor]}"), "a", NOW, 0)
        if updated is None or store.write(updated):
            done.add(actor)
    assert len(done) == actors
    distinct = {f"p{d}" for d in deleters}
    final = books(store.ws)[0]
    assert set(final["deletingPods"]) == distinct
    assert final["missingReplicas"] == len(distinct)
    assert books(store.ws)[1]["missingReplicas"] == -1
