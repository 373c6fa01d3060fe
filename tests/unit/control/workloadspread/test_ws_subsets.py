"""WorkloadSpread subset choice and bookkeeping: order, int/percent/nil quotas, creating/deleting
pods, versions, StatefulSet ordinals; and a model of concurrent webhooks writing the status with
optimistic concurrency, which must never place more pods in a subset than its maxReplicas."""

from __future__ import annotations

import copy
import itertools
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.control.workloadspread.subsets import (
    ANNOTATION_MATCHED,
    UNLIMITED,
    VERSION_IGNORED,
    Assignment,
    MatchedSpread,
    MaxReplicasError,
    assign_for_creation,
    initial_subset_statuses,
    pod_version,
    record_deletion,
    scaled_max_replicas,
    statefulset_subset,
    suitable_subset,
)
from tests.kit.pods import pod

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def uids() -> Any:
    counter = itertools.count()
    return lambda: f"uid-{next(counter)}"


def spread(*subsets: tuple[str, Any], kind: str = "CloneSet", status: dict | None = None) -> dict[str, Any]:
    ws: dict[str, Any] = {
        "metadata": {"name": "ws", "namespace": "ns", "resourceVersion": "1"},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": kind, "name": "app"},
            "subsets": [{"name": n} if m is None else {"name": n, "maxReplicas": m} for n, m in subsets],
        },
    }
    if status is not None:
        ws["status"] = status
    return ws


def spread_pod(
    name: str = "", owner_kind: str = "CloneSet", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """A pod of a workload of `owner_kind`; nameless, it is a create named later from generateName."""
    return pod(
        name or None,
        namespace="ns",
        labels=labels or {},
        meta=None if name else {"generateName": "app-"},
        owner={"apiVersion": "apps/v1", "kind": owner_kind, "name": "app", "controller": True},
        containers=[{"name": "c"}],
    )


def books(ws: dict[str, Any], version: str = VERSION_IGNORED) -> list[dict[str, Any]]:
    return ws["status"]["versionedSubsetStatuses"][version]


# --- maxReplicas ---


@pytest.mark.parametrize(
    ("value", "replicas", "expected"),
    [
        (None, 10, UNLIMITED),
        (3, 10, 3),
        (0, 10, 0),
        ("50%", 10, 5),
        ("25%", 10, 3),
        ("100%", 7, 7),
        ("1%", 1, 1),
        ("0%", 9, 0),
        ("30%", 0, 0),
    ],
)
def test_scaled_max_replicas(value: Any, replicas: int, expected: int) -> None:
    assert scaled_max_replicas(value, replicas) == expected


@pytest.mark.parametrize("value", ["abc", "5", "%", "1.5%", True])
def test_scaled_max_replicas_rejects_non_int_non_percent(value: Any) -> None:
    with pytest.raises(MaxReplicasError, match="maxReplicas: Invalid value"):
        scaled_max_replicas(value, 10)


def test_initial_statuses_hold_whole_quota_and_unlimited_marker() -> None:
    ws = spread(("a", 2), ("b", "50%"), ("c", None))
    assert initial_subset_statuses(ws, 5) == [
        {"name": "a", "replicas": 0, "missingReplicas": 2},
        {"name": "b", "replicas": 0, "missingReplicas": 3},
        {"name": "c", "replicas": 0, "missingReplicas": -1},
    ]


# --- annotation ---


def test_annotation_json_is_upstream_shape() -> None:
    assert MatchedSpread("ws", "a").to_json() == '{"name":"ws","subset":"a"}'
    assert MatchedSpread("ws", "a", "u1").to_json() == '{"name":"ws","subset":"a","uid":"u1"}'


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"name":"ws","subset":"a"}', MatchedSpread("ws", "a")),
        ('{"name":"ws","subset":"a","uid":"x"}', MatchedSpread("ws", "a", "x")),
        ("not json", None),
        ("[1]", None),
        ('{"name":1}', None),
        ("", None),
    ],
)
def test_annotation_parse(raw: str, expected: MatchedSpread | None) -> None:
    p = spread_pod("p")
    p["metadata"]["annotations"] = {ANNOTATION_MATCHED: raw}
    assert MatchedSpread.of(p) == expected


# --- versions ---


def test_pod_versions() -> None:
    assert pod_version(spread_pod("p")) == VERSION_IGNORED
    assert pod_version(spread_pod("p", "ReplicaSet", {"pod-template-hash": "abc"})) == "abc"
    assert pod_version(spread_pod("p", "ReplicaSet", {"controller-revision-hash": "app-7f9"})) == "7f9"
    assert pod_version(spread_pod("p", "ReplicaSet")) == VERSION_IGNORED
    assert pod_version(spread_pod("p", "CloneSet", {"pod-template-hash": "abc"})) == VERSION_IGNORED
    orphan = spread_pod("p")
    orphan["metadata"]["ownerReferences"] = []
    assert pod_version(orphan) == VERSION_IGNORED


# --- creation ---


def test_single_unlimited_subset_needs_no_books() -> None:
    assert assign_for_creation(spread(("a", None)), spread_pod("p"), NOW, 3, uids()) == Assignment("a")


def test_subsets_fill_in_order() -> None:
    ws = spread(("a", 2), ("b", 1), ("c", None))
    chosen = []
    for i in range(5):
        result = assign_for_creation(ws, spread_pod(f"p{i}"), NOW, 0, uids())
        chosen.append(result.subset)
        if result.updated is not None:
            ws = result.updated
    assert chosen == ["a", "a", "b", "c", "c"]
    assert [s["missingReplicas"] for s in books(ws)] == [0, 0, -1]
    assert set(books(ws)[0]["creatingPods"]) == {"p0", "p1"}
    assert books(ws)[0]["creatingPods"]["p0"] == "2024-05-01T12:00:00Z"
    assert "creatingPods" not in books(ws)[2]


def test_no_room_anywhere_leaves_pod_alone() -> None:
    ws = spread(("a", 1), ("b", 0))
    first = assign_for_creation(ws, spread_pod("p0"), NOW, 0, uids())
    assert first.subset == "a"
    second = assign_for_creation(first.updated, spread_pod("p1"), NOW, 0, uids())
    assert second == Assignment(None)


def test_percent_quota_uses_workload_replicas() -> None:
    ws = spread(("a", "50%"), ("b", "50%"))
    got = []
    for i in range(4):
        r = assign_for_creation(ws, spread_pod(f"p{i}"), NOW, 4, uids())
        got.append(r.subset)
        ws = r.updated or ws
    assert got == ["a", "a", "b", "b"]
    assert assign_for_creation(ws, spread_pod("p9"), NOW, 4, uids()).subset is None


def test_generate_name_pod_gets_uid_in_creating_pods() -> None:
    ws = spread(("a", 2), ("b", None))
    result = assign_for_creation(ws, spread_pod(""), NOW, 0, uids())
    assert result.subset == "a" and result.uid == "uid-0"
    assert books(result.updated)[0]["creatingPods"] == {"uid-0": "2024-05-01T12:00:00Z"}


def test_already_recorded_pod_keeps_its_subset_without_write() -> None:
    status = {"versionedSubsetStatuses": {VERSION_IGNORED: [
        {"name": "a", "missingReplicas": 1},
        {"name": "b", "missingReplicas": 3, "creatingPods": {"p": "2024-05-01T11:00:00Z"}},
    ]}}  # fmt: skip
    assert assign_for_creation(
        spread(("a", 1), ("b", 3), status=status), spread_pod("p"), NOW, 0, uids()
    ) == Assignment("b")


def test_unschedulable_subset_is_skipped() -> None:
    status = {"versionedSubsetStatuses": {VERSION_IGNORED: [
        {"name": "a", "missingReplicas": 5, "conditions": [{"type": "Schedulable", "status": "False"}]},
        {"name": "b", "missingReplicas": -1},
    ]}}  # fmt: skip
    ws = spread(("a", 5), ("b", None), status=status)
    assert assign_for_creation(ws, spread_pod("p"), NOW, 0, uids()) == Assignment("b")


@pytest.mark.parametrize("disable", [None, False, True])
def test_disable_simulation_schedule_changes_no_choice(disable: bool | None) -> None:
    """Upstream 1.9 accepts `adaptive.disableSimulationSchedule` but its webhook never simulates
    scheduling: a schedulable subset with room takes the pod whatever the field says."""
    ws = spread(("a", 2), ("b", None))
    adaptive: dict[str, Any] = {"rescheduleCriticalSeconds": 10}
    if disable is not None:
        adaptive["disableSimulationSchedule"] = disable
    ws["spec"]["scheduleStrategy"] = {"type": "Adaptive", "adaptive": adaptive}
    chosen = assign_for_creation(ws, spread_pod("p"), NOW, 0, uids())
    assert chosen.subset == "a"
    books = chosen.updated["status"]["versionedSubsetStatuses"][VERSION_IGNORED]
    assert [(s["name"], s["missingReplicas"]) for s in books] == [("a", 1), ("b", UNLIMITED)]


def test_input_is_not_mutated() -> None:
    ws = spread(("a", 2), ("b", None))
    before = copy.deepcopy(ws)
    assign_for_creation(ws, spread_pod("p"), NOW, 0, uids())
    assert ws == before


def test_versions_have_separate_books() -> None:
    ws = spread(("a", 1), ("b", None), kind="Deployment")
    ws["spec"]["targetRef"]["apiVersion"] = "apps/v1"
    old = assign_for_creation(ws, spread_pod("p0", "ReplicaSet", {"pod-template-hash": "v1"}), NOW, 0, uids())
    assert old.subset == "a"
    new = assign_for_creation(
        old.updated, spread_pod("p1", "ReplicaSet", {"pod-template-hash": "v2"}), NOW, 0, uids()
    )
    assert new.subset == "a"
    assert set(new.updated["status"]["versionedSubsetStatuses"]) == {"v1", "v2"}


def test_suitable_subset_counts_unlimited() -> None:
    assert suitable_subset([{"missingReplicas": 0}, {"missingReplicas": -1}]) == 1
    assert suitable_subset([{"missingReplicas": 0}]) is None
    assert suitable_subset([]) is None


# --- deletion ---


def test_deletion_records_pod_and_frees_slot() -> None:
    ws = spread(("a", 1), ("b", None))
    created = assign_for_creation(ws, spread_pod("p0"), NOW, 0, uids()).updated
    books(created)[0]["creatingPods"] = {}
    deleted = record_deletion(created, spread_pod("p0"), "a", NOW, 0)
    assert books(deleted)[0]["deletingPods"] == {"p0": "2024-05-01T12:00:00Z"}
    assert books(deleted)[0]["missingReplicas"] == 1
    assert record_deletion(deleted, spread_pod("p0"), "a", NOW, 0) is None


def test_deletion_ignores_unlimited_and_unknown_subsets() -> None:
    ws = spread(("a", 1), ("b", None))
    assert record_deletion(ws, spread_pod("p"), "b", NOW, 0) is None
    assert record_deletion(ws, spread_pod("p"), "zzz", NOW, 0) is None


# --- StatefulSet ---


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("app-0", "a"),
        ("app-1", "a"),
        ("app-2", "b"),
        ("app-4", "b"),
        ("app-5", "c"),
        ("app-99", "c"),
        ("app", "a"),
    ],
)
def test_statefulset_ordinals(name: str, expected: str | None) -> None:
    ws = spread(("a", 2), ("b", 3), ("c", None), kind="StatefulSet")
    assert statefulset_subset(ws, spread_pod(name)) == expected
    assert assign_for_creation(ws, spread_pod(name), NOW, 0, uids()) == Assignment(expected)


def test_statefulset_skips_unschedulable_subset_quota() -> None:
    ws = spread(("a", 2), ("b", None), kind="StatefulSet")
    ws["status"] = {
        "subsetStatuses": [{"name": "a", "conditions": [{"type": "Schedulable", "status": "False"}]}]
    }
    assert statefulset_subset(ws, spread_pod("app-0")) == "b"


# --- concurrent webhooks against an optimistic store ---


class OptimisticStore:
    """One WorkloadSpread behind resourceVersion checks, as the apiserver keeps it."""

    def __init__(self, ws: dict[str, Any]) -> None:
        self.ws = ws
        self.rv = 1

    def read(self) -> dict[str, Any]:
        obj = copy.deepcopy(self.ws)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        return obj

    def write(self, obj: dict[str, Any]) -> bool:
        if obj["metadata"]["resourceVersion"] != str(self.rv):
            return False
        self.rv += 1
        self.ws = copy.deepcopy(obj)
        return True


@settings(max_examples=200, deadline=None)
@given(
    limits=st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=1, max_size=4),
    pods=st.integers(1, 12),
    schedule=st.lists(st.integers(0, 11), min_size=0, max_size=200),
)
def test_concurrent_creations_never_exceed_max_replicas(
    limits: list[int | None], pods: int, schedule: list[int]
) -> None:
    subsets = [(f"s{i}", m) for i, m in enumerate(limits)]
    store = OptimisticStore(spread(*subsets))
    reads: dict[int, dict[str, Any]] = {}
    placed: dict[int, str | None] = {}
    new_uid = uids()
    # Each creator alternates: read the status, then try to write its choice; a conflict sends it
    # back to reading. The hypothesis schedule interleaves them, then everyone finishes in turn.
    order = [i % pods for i in schedule] + [i for i in range(pods) for _ in range(2 * pods + 2)]
    for actor in order:
        if actor in placed:
            continue
        if actor not in reads:
            reads[actor] = store.read()
            continue
        result = assign_for_creation(reads.pop(actor), spread_pod(f"p{actor}"), NOW, 0, new_uid)
        if result.updated is None or store.write(result.updated):
            placed[actor] = result.subset
    assert len(placed) == pods
    counts = {name: sum(1 for s in placed.values() if s == name) for name, _ in subsets}
    for name, limit in subsets:
        if limit is not None:
            assert counts[name] <= limit, (name, counts, limits)
    # A pod is refused only when every subset is full.
    if any(s is None for s in placed.values()):
        assert all(m is not None and counts[n] == m for n, m in subsets)
    # Books agree with the placements.
    final = store.ws
    if final.get("status"):
        for status, (name, limit) in zip(books(final), subsets, strict=True):
            if limit is not None:
                assert status["missingReplicas"] == limit - counts[name]
                assert len(status.get("creatingPods") or {}) == counts[name]


def test_concurrent_model_sees_conflicts() -> None:
    store = OptimisticStore(spread(("a", 1), ("b", None)))
    first, second = store.read(), store.read()
    r1 = assign_for_creation(first, spread_pod("p1"), NOW, 0, uids())
    r2 = assign_for_creation(second, spread_pod("p2"), NOW, 0, uids())
    assert (r1.subset, r2.subset) == ("a", "a")
    assert store.write(r1.updated) and not store.write(r2.updated)
    again = assign_for_creation(store.read(), spread_pod("p2"), NOW, 0, uids())
    assert again.subset == "b" and again.updated is None
    assert json.loads(MatchedSpread("ws", again.subset).to_json())["subset"] == "b"
