"""WorkloadSpread status recomputed from pods: grouping by the matched annotation and version,
replicas and missingReplicas per subset, creatingPods/deletingPods kept until seen or expired (with
the warnings upstream emits), per-version books, Adaptive's last-subset condition; the latest
version a Deployment's costs rank against."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.api.timestamps import parse_time, rfc3339
from kruise.control.workloadspread.deletioncost import NO_SUBSET, latest_version
from kruise.control.workloadspread.status import (
    CREATE_POD_TIMEOUT,
    DELETE_POD_TIMEOUT,
    Notes,
    group_pods,
    next_status,
    subset_status,
)
from kruise.control.workloadspread.subsets import (
    ANNOTATION_MATCHED,
    VERSION_IGNORED,
    MatchedSpread,
)
from tests.kit.pods import pod

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def spread(*subsets: tuple[str, Any], status: dict | None = None, generation: int = 3) -> dict[str, Any]:
    ws: dict[str, Any] = {
        "metadata": {"name": "ws", "namespace": "ns", "generation": generation},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "app"},
            "subsets": [{"name": n} if m is None else {"name": n, "maxReplicas": m} for n, m in subsets],
        },
    }
    if status is not None:
        ws["status"] = status
    return ws


def spread_pod(
    name: str,
    subset: str | None,
    *,
    ws: str = "ws",
    uid: str = "",
    phase: str = "Running",
    deleting: bool = False,
    owner: str = "CloneSet",
    hash_: str | None = None,
) -> dict[str, Any]:
    """A pod of a workload of kind `owner`, matched to `subset` of WorkloadSpread `ws` (None: unmatched)."""
    return pod(
        name,
        namespace="ns",
        owner={"apiVersion": "apps/v1", "kind": owner, "name": "o", "uid": "u", "controller": True},
        annotations={} if subset is None else {ANNOTATION_MATCHED: MatchedSpread(ws, subset, uid).to_json()},
        labels={} if hash_ is None else {"pod-template-hash": hash_},
        meta={"deletionTimestamp": rfc3339(NOW)} if deleting else None,
        phase=phase,
    )


def compute(ws: dict[str, Any], pods: list[dict[str, Any]], replicas: int = 5, now: datetime = NOW):
    notes = Notes()
    versioned, by_subset = group_pods(ws, pods)
    return next_status(ws, versioned, by_subset, replicas, now, notes), notes


def test_grouping_by_annotation_of_this_spread_only():
    ws = spread(("a", 2), ("b", None))
    pods = [
        spread_pod("p1", "a"),
        spread_pod("p2", "b"),
        spread_pod("p3", None),
        spread_pod("p4", "a", ws="other"),
        spread_pod("p5", "gone"),
    ]
    versioned, by_subset = group_pods(ws, pods)
    assert [p["metadata"]["name"] for p in by_subset["a"]] == ["p1"]
    assert [p["metadata"]["name"] for p in by_subset["b"]] == ["p2"]
    assert [p["metadata"]["name"] for p in by_subset[NO_SUBSET]] == ["p3", "p4", "p5"]
    assert list(versioned) == [VERSION_IGNORED]


def test_replicas_and_missing_per_subset():
    ws = spread(("a", 2), ("b", None), ("c", "40%"))
    pods = [
        spread_pod("p1", "a"),
        spread_pod("p2", "a"),
        spread_pod("p3", "a"),
        spread_pod("p4", "b"),
        spread_pod("p5", "c", phase="Failed"),
    ]
    status, notes = compute(ws, pods)
    assert status["observedGeneration"] == 3
    assert status["subsetStatuses"] == [
        {"name": "a", "replicas": 3, "missingReplicas": 0},
        {"name": "b", "replicas": 1, "missingReplicas": -1},
        {"name": "c", "replicas": 0, "missingReplicas": 2},
    ]
    assert notes.events == [] and notes.requeue_after is None


def test_creating_pod_dropped_once_seen_by_name_or_generated_uid():
    booked = rfc3339(NOW - timedelta(seconds=5))
    old = [
        {
            "name": "a",
            "replicas": 0,
            "missingReplicas": 0,
            "creatingPods": {"p1": booked, "gen-1": booked, "p9": booked},
        }
    ]
    ws = spread(("a", 5), status={"versionedSubsetStatuses": {VERSION_IGNORED: old}})
    status, notes = compute(ws, [spread_pod("p1", "a"), spread_pod("p2", "a", uid="gen-1")])
    books = status["versionedSubsetStatuses"][VERSION_IGNORED][0]
    assert books["creatingPods"] == {"p9": booked}
    assert books["replicas"] == 2 and books["missingReplicas"] == 2  # 5 - 2 seen - 1 still creating
    assert notes.requeue_after == CREATE_POD_TIMEOUT - timedelta(seconds=5)


def test_creating_pod_expires_after_30s_with_a_warning():
    booked = rfc3339(NOW - CREATE_POD_TIMEOUT - timedelta(seconds=1))
    old = [{"name": "a", "replicas": 0, "missingReplicas": 4, "creatingPods": {"lost": booked}}]
    ws = spread(("a", 5), status={"versionedSubsetStatuses": {VERSION_IGNORED: old}})
    status, notes = compute(ws, [])
    assert "versionedSubsetStatuses" not in status  # nothing left in those books
    assert notes.events == [("CreatePodFailed", "Pod ns/lost was expected to be created but it wasn't")]
    assert notes.requeue_after is None


def test_deleting_pod_kept_while_active_within_15s_then_warned():
    fresh = rfc3339(NOW - timedelta(seconds=10))
    stale = rfc3339(NOW - DELETE_POD_TIMEOUT - timedelta(seconds=1))
    old = [
        {
            "name": "a",
            "replicas": 3,
            "missingReplicas": 1,
            "deletingPods": {"p1": fresh, "p2": stale, "p3": fresh},
        }
    ]
    ws = spread(("a", 3), status={"subsetStatuses": old})
    pods = [spread_pod("p1", "a"), spread_pod("p2", "a"), spread_pod("p3", "a", deleting=True)]
    status, notes = compute(ws, pods)
    a = status["subsetStatuses"][0]
    assert a["deletingPods"] == {"p1": fresh}
    assert a["replicas"] == 2 and a["missingReplicas"] == 2  # 3 - 2 active + 1 being deleted
    assert notes.events == [("DeletePodFailed", "Pod ns/p2 was expected to be deleted but it wasn't")]
    assert notes.requeue_after == timedelta(seconds=5)


def test_invalid_max_replicas_gives_no_status():
    ws = spread(("a", "lots"))
    status, _ = compute(ws, [])
    assert status is None


def test_versions_counted_apart_and_unseen_version_books_kept():
    booked = rfc3339(NOW - timedelta(seconds=1))
    ws = spread(
        ("a", 4),
        status={
            "versionedSubsetStatuses": {
                "h3": [{"name": "a", "replicas": 0, "missingReplicas": 3, "creatingPods": {"new-1": booked}}],
                "h0": [{"name": "a", "replicas": 0, "missingReplicas": 4}],
            }
        },
    )
    pods = [
        spread_pod("p1", "a", owner="ReplicaSet", hash_="h1"),
        spread_pod("p2", "a", owner="ReplicaSet", hash_="h2"),
    ]
    status, _ = compute(ws, pods)
    versioned = status["versionedSubsetStatuses"]
    assert sorted(versioned) == ["h1", "h2", "h3"]  # h0 had nothing left
    assert versioned["h1"][0]["replicas"] == 1 and versioned["h1"][0]["missingReplicas"] == 3
    assert versioned["h3"][0] == {
        "name": "a",
        "replicas": 0,
        "missingReplicas": 3,
        "creatingPods": {"new-1": booked},
    }
    assert status["subsetStatuses"][0] == {"name": "a", "replicas": 2, "missingReplicas": 2}


def test_reordered_subsets_keep_their_books_by_name():
    booked = rfc3339(NOW)
    ws = spread(
        ("b", 2),
        ("a", 2),
        status={
            "subsetStatuses": [
                {"name": "a", "replicas": 0, "missingReplicas": 1, "creatingPods": {"x": booked}},
                {"name": "b", "replicas": 0, "missingReplicas": 2},
            ]
        },
    )
    status, _ = compute(ws, [])
    assert [s["name"] for s in status["subsetStatuses"]] == ["b", "a"]
    assert status["subsetStatuses"][1]["creatingPods"] == {"x": booked}


def test_schedulable_condition_only_under_adaptive():
    cond = {"type": "Schedulable", "status": "False", "reason": "x", "lastTransitionTime": rfc3339(NOW)}
    ws = spread(
        ("a", 1),
        ("b", None),
        status={
            "subsetStatuses": [
                {"name": "a", "replicas": 0, "missingReplicas": 1, "conditions": [cond]},
            ]
        },
    )
    status, _ = compute(ws, [])
    assert all("conditions" not in s for s in status["subsetStatuses"])
    ws["spec"]["scheduleStrategy"] = {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}}
    status, _ = compute(ws, [])
    assert status["subsetStatuses"][0]["conditions"] == [cond]
    last = status["subsetStatuses"][1]["conditions"][0]
    assert (last["type"], last["status"], last["reason"]) == ("Schedulable", "True", "Sufficient")


def test_parse_time_accepts_rfc3339_only():
    assert parse_time("2024-05-01T12:00:00Z") == NOW
    assert parse_time("yesterday") is None
    assert parse_time(5) is None


@given(
    limit=st.integers(min_value=0, max_value=6),
    active=st.integers(min_value=0, max_value=8),
    creating_ages=st.lists(st.integers(min_value=0, max_value=60), max_size=4),
)
def test_missing_stays_within_zero_and_limit(limit, active, creating_ages):
    creating = {f"c{i}": rfc3339(NOW - timedelta(seconds=age)) for i, age in enumerate(creating_ages)}
    old = {"name": "a", "creatingPods": creating}
    subset = {"name": "a", "maxReplicas": limit}
    pods = [spread_pod(f"p{i}", "a") for i in range(active)]
    notes = Notes()
    out = subset_status(spread(("a", limit)), subset, pods, old, 10, NOW, notes)
    assert out is not None
    assert 0 <= out["missingReplicas"] <= limit
    kept = sum(1 for age in creating_ages if age <= 30)
    assert len(out.get("creatingPods") or {}) == kept
    assert out["missingReplicas"] == max(limit - active - kept, 0)
    assert len(notes.events) == len(creating_ages) - kept


def deployment(template_labels: dict[str, str]) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "metadata": {"uid": "dep"},
        "spec": {"template": {"metadata": {"labels": template_labels}, "spec": {"containers": []}}},
    }


def replicaset(hash_: str, template_labels: dict[str, str], owner: str = "dep") -> dict[str, Any]:
    labels = {**template_labels, "pod-template-hash": hash_}
    return {
        "kind": "ReplicaSet",
        "metadata": {"labels": labels, "ownerReferences": [{"uid": owner, "controller": True}]},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": {"containers": []}}},
    }


def test_latest_version_of_each_kind():
    assert latest_version({"kind": "CloneSet", "status": {"updateRevision": "app-abc"}}) == VERSION_IGNORED
    assert latest_version(replicaset("h1", {})) == "h1"
    rss = [
        replicaset("h1", {"v": "1"}),
        replicaset("h2", {"v": "2"}),
        replicaset("h9", {"v": "2"}, owner="x"),
    ]
    assert latest_version(deployment({"v": "2"}), rss) == "h2"
    assert latest_version(deployment({"v": "3"}), rss) is None
