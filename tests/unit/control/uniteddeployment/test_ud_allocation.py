"""Replica split between UnitedDeployment subsets: specified, elastic, adaptive, reservation; partitions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.api.uniteddeployment import UnitedDeployment
from kruise.control.uniteddeployment.allocation import (
    AllocationError,
    SubsetState,
    allocate,
    allocate_specified,
    next_partitions,
)


def ud(replicas: int | None, *subsets: dict[str, Any], **spec: Any) -> UnitedDeployment:
    body: dict[str, Any] = {
        "metadata": {"name": "ud", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "demo"}},
            "template": {"cloneSetTemplate": {"spec": {}}},
            "topology": {"subsets": list(subsets), **spec.pop("topology", {})},
            **spec,
        },
    }
    if replicas is not None:
        body["spec"]["replicas"] = replicas
    return UnitedDeployment.model_validate(body)


def s(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


# ---- specified -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "current", "expected"),
    [
        (5, {"t1": 1, "t2": 4, "t3": 2, "t4": 2}, {"t1": 1, "t2": 2, "t3": 1, "t4": 1}),
        (0, {"t1": 2}, {"t1": 0}),
        (17, {"t1": 1, "t2": 4, "t3": 2, "t4": 2}, {"t1": 4, "t2": 5, "t3": 4, "t4": 4}),
        (9, {"t1": 2, "t2": 4, "t3": 2, "t4": 2}, {"t1": 2, "t2": 3, "t3": 2, "t4": 2}),
        (19, {"t1": 0, "t2": 10}, {"t1": 9, "t2": 10}),
        (21, {"t1": 0, "t2": 10}, {"t1": 10, "t2": 11}),
        # Nothing exists yet: the remainder goes to the later names first.
        (10, {}, {"t1": 3, "t2": 3, "t3": 4}),
        (11, {}, {"t1": 3, "t2": 4, "t3": 4}),
    ],
)
def test_even_split_gives_the_remainder_to_the_biggest_subsets(
    total: int, current: dict[str, int], expected: dict[str, int]
) -> None:
    names = sorted(set(current) | set(expected))
    result = allocate(
        ud(total, *(s(n) for n in names)), {n: SubsetState(replicas=r) for n, r in current.items()}
    )
    assert result == expected


def test_specified_int_and_percent_take_their_share_first() -> None:
    spec = ud(10, s("a", replicas=2), s("b", replicas="50%"), s("c"))
    assert allocate(spec) == {"a": 2, "b": 5, "c": 3}


def test_percent_rounds_half_up() -> None:
    # 25% of 10 is 2.5 -> 3, as Go's floor(x + 0.5).
    assert allocate(ud(10, s("a", replicas="25%"), s("b"))) == {"a": 3, "b": 7}


def test_the_rest_is_split_between_all_unspecified_subsets() -> None:
    spec = ud(10, s("a", replicas=4), s("b"), s("c"), s("d"))
    assert allocate(spec) == {"a": 4, "b": 2, "c": 2, "d": 2}


def test_all_specified_without_ud_replicas() -> None:
    assert allocate(ud(None, s("a", replicas=1), s("b", replicas=2))) == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            ud(3, s("a", replicas=2), s("b", replicas=2)),
            "specified subsets' replica (4) is greater than UnitedDeployment replica (3)",
        ),
        (
            ud(5, s("a", replicas=2), s("b", replicas=2)),
            "specified subsets' replica (4) is less than UnitedDeployment replica (5)",
        ),
        (
            ud(None, s("a", replicas=2), s("b")),
            "all subsets must be specified when UnitedDeployment replica is unspecified",
        ),
    ],
)
def test_unsatisfiable_specified_replicas(spec: UnitedDeployment, message: str) -> None:
    with pytest.raises(AllocationError) as err:
        allocate(spec)
    assert str(err.value) == message


def test_unparsable_replicas_count_as_unspecified() -> None:
    # A percent without spec.replicas is unparsable; with replicas set, "abc" is.
    assert allocate(ud(4, s("a", replicas="abc"), s("b"))) == {"a": 2, "b": 2}


def test_no_subsets_cannot_hold_replicas() -> None:
    # As upstream: zero specified subsets out of zero is "all specified", summing to 0 < 3.
    with pytest.raises(AllocationError, match=r"replica \(0\) is less than UnitedDeployment replica \(3\)"):
        allocate(ud(3))
    assert allocate(ud(0)) == {}


# ---- elastic -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "subsets", "expected"),
    [
        # Upstream's documented example: min a, min b, then max a, then b.
        (5, [s("a", minReplicas=2, maxReplicas=4), s("b", minReplicas=2)], {"a": 3, "b": 2}),
        (3, [s("a", minReplicas=2, maxReplicas=4), s("b", minReplicas=2)], {"a": 2, "b": 1}),
        (10, [s("a", minReplicas=2, maxReplicas=4), s("b", minReplicas=2)], {"a": 4, "b": 6}),
        (1, [s("a", minReplicas=2, maxReplicas=4), s("b", minReplicas=2)], {"a": 1, "b": 0}),
        (10, [s("a", maxReplicas=3), s("b", maxReplicas=3), s("c")], {"a": 3, "b": 3, "c": 4}),
        (
            10,
            [s("a", minReplicas="20%", maxReplicas="30%"), s("b", maxReplicas="50%"), s("c")],
            {"a": 3, "b": 5, "c": 2},
        ),
        (10, [s("a", minReplicas="20%"), s("b", maxReplicas="50%"), s("c")], {"a": 10, "b": 0, "c": 0}),
        (0, [s("a", minReplicas=1), s("b")], {"a": 0, "b": 0}),
    ],
)
def test_elastic_fills_minimums_then_maximums_in_spec_order(
    total: int, subsets: list[dict[str, Any]], expected: dict[str, int]
) -> None:
    assert allocate(ud(total, *subsets)) == expected


def test_elastic_min_above_max_is_an_error() -> None:
    with pytest.raises(
        AllocationError, match=r"subset\[0\].maxReplicas\(1\) must be more than or equal to minReplicas\(3\)"
    ):
        allocate(ud(5, s("a", minReplicas=3, maxReplicas=1), s("b")))


def test_elastic_ignores_current_replicas() -> None:
    spec = ud(4, s("a", maxReplicas=2), s("b"))
    assert allocate(spec, {"a": SubsetState(replicas=0), "b": SubsetState(replicas=9)}) == {"a": 2, "b": 2}


# ---- adaptive ------------------------------------------------------------------------------------

ADAPTIVE = {"scheduleStrategy": {"type": "Adaptive"}}


def test_adaptive_without_trouble_is_elastic() -> None:
    spec = ud(6, s("a", maxReplicas=4), s("b"), topology=ADAPTIVE)
    assert allocate(spec) == {"a": 4, "b": 2}


def test_adaptive_unschedulable_subset_keeps_only_its_ready_pods() -> None:
    spec = ud(6, s("a", maxReplicas=4), s("b"), topology=ADAPTIVE)
    existing = {
        "a": SubsetState(replicas=4, ready_replicas=1, unschedulable=True),
        "b": SubsetState(replicas=2),
    }
    assert allocate(spec, existing) == {"a": 1, "b": 5}


def test_adaptive_never_scales_ready_pods_away() -> None:
    # b runs 5 ready pods: it keeps them even though a could take 4.
    spec = ud(6, s("a", maxReplicas=4), s("b"), topology=ADAPTIVE)
    existing = {
        "a": SubsetState(replicas=1, ready_replicas=1),
        "b": SubsetState(replicas=5, ready_replicas=5),
    }
    assert allocate(spec, existing) == {"a": 1, "b": 5}


def test_adaptive_ready_floor_is_capped_by_max() -> None:
    spec = ud(6, s("a", maxReplicas=2), s("b"), topology=ADAPTIVE)
    existing = {"a": SubsetState(replicas=5, ready_replicas=5)}
    assert allocate(spec, existing) == {"a": 2, "b": 4}


# ---- reservation ---------------------------------------------------------------------------------

RESERVE = {"scheduleStrategy": {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}}


def test_reservation_all_schedulable_is_elastic() -> None:
    spec = ud(5, s("a", maxReplicas=3), s("b"), topology=RESERVE)
    assert allocate(spec) == {"a": 3, "b": 2}


def test_reservation_recreates_reserved_replicas_elsewhere() -> None:
    # a holds 3 replicas, 2 of them reserved (cannot run): a keeps 3, b gets 2 + 2 stand-ins.
    spec = ud(5, s("a", maxReplicas=3), s("b"), topology=RESERVE)
    existing = {
        "a": SubsetState(
            replicas=3, ready_replicas=1, unschedulable=True, marked_unschedulable=True, reserved_pods=2
        ),
        "b": SubsetState(replicas=2, ready_replicas=2),
    }
    assert allocate(spec, existing) == {"a": 3, "b": 4}


def test_reservation_recovered_subset_takes_its_replicas_back() -> None:
    spec = ud(5, s("a", maxReplicas=3), s("b"), topology=RESERVE)
    existing = {
        "a": SubsetState(replicas=3, ready_replicas=3),
        "b": SubsetState(replicas=4, ready_replicas=4),
    }
    assert allocate(spec, existing) == {"a": 3, "b": 2}


def test_reservation_fully_reserved_subset() -> None:
    spec = ud(4, s("a", minReplicas=2), s("b"), s("c"), topology=RESERVE)
    existing = {"a": SubsetState(replicas=2, unschedulable=True, marked_unschedulable=True, reserved_pods=2)}
    # a's two are expected never to run: all four are placed in b (first unbounded subset).
    assert allocate(spec, existing) == {"a": 2, "b": 4, "c": 0}


# ---- partitions ----------------------------------------------------------------------------------


def test_manual_partitions_are_capped_by_replicas() -> None:
    spec = ud(
        6,
        s("a"),
        s("b"),
        s("c"),
        updateStrategy={"type": "Manual", "manualUpdate": {"partitions": {"a": 1, "b": 5}}},
    )
    replicas = allocate(spec)
    assert replicas == {"a": 2, "b": 2, "c": 2}
    assert next_partitions(spec, replicas) == {"a": 1, "b": 2, "c": 0}


def test_partitions_default_to_zero() -> None:
    spec = ud(2, s("a"), s("b"))
    assert next_partitions(spec, {"a": 1, "b": 1}) == {"a": 0, "b": 0}


def test_partitions_need_the_manual_strategy() -> None:
    spec = ud(2, s("a"), updateStrategy={"type": "Other", "manualUpdate": {"partitions": {"a": 1}}})
    assert next_partitions(spec, {"a": 2}) == {"a": 0}


# ---- properties ----------------------------------------------------------------------------------

names_st = st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=6, unique=True)


@settings(max_examples=300, deadline=None)
@given(
    names=names_st,
    total=st.integers(0, 200),
    data=st.data(),
)
def test_specified_split_sums_to_total(names: list[str], total: int, data: st.DataObject) -> None:
    fixed = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names) - 1))
    budget = total
    subsets = []
    for name in names:
        if name in fixed:
            value = data.draw(st.integers(0, budget))
            budget -= value
            subsets.append(s(name, replicas=value))
        else:
            subsets.append(s(name))
    current = data.draw(st.dictionaries(st.sampled_from(names), st.integers(0, 50)))
    spec = ud(total, *subsets)
    result = allocate(spec, {n: SubsetState(replicas=r) for n, r in current.items()})
    assert sum(result.values()) == total
    assert list(result) == names
    for subset in subsets:
        if "replicas" in subset:
            assert result[subset["name"]] == subset["replicas"]
    free = [result[n] for n in names if n not in fixed]
    assert max(free) - min(free) <= 1


@settings(max_examples=300, deadline=None)
@given(names=names_st, total=st.integers(0, 200), data=st.data())
def test_elastic_split_respects_bounds_and_total(names: list[str], total: int, data: st.DataObject) -> None:
    unbounded = data.draw(st.sampled_from(names))
    subsets = []
    for name in names:
        low = data.draw(st.integers(0, 30))
        fields: dict[str, Any] = {"minReplicas": low}
        if name != unbounded:
            fields["maxReplicas"] = low + data.draw(st.integers(0, 30))
        subsets.append(s(name, **fields))
    result = allocate(ud(total, *subsets))
    assert sum(result.values()) == total
    satisfiable = sum(x["minReplicas"] for x in subsets) <= total
    for subset in subsets:
        got = result[subset["name"]]
        assert got <= subset.get("maxReplicas", got)
        if satisfiable:
            assert got >= subset["minReplicas"]


@settings(max_examples=200, deadline=None)
@given(
    names=names_st,
    total=st.integers(0, 100),
    data=st.data(),
)
def test_adaptive_and_reservation_never_lose_replicas(
    names: list[str], total: int, data: st.DataObject
) -> None:
    existing = {}
    for name in names:
        if data.draw(st.booleans()):
            replicas = data.draw(st.integers(0, 20))
            ready = data.draw(st.integers(0, replicas))
            bad = data.draw(st.booleans())
            existing[name] = SubsetState(
                replicas=replicas,
                ready_replicas=ready,
                unschedulable=bad,
                marked_unschedulable=bad,
                reserved_pods=replicas - ready if bad else 0,
            )
    unbounded = names[-1]
    subsets = [s(n) if n == unbounded else s(n, maxReplicas=data.draw(st.integers(0, 20))) for n in names]
    healthy_tail = unbounded not in existing or existing[unbounded].allocatable
    adaptive = allocate(ud(total, *subsets, topology=ADAPTIVE), existing)
    assert set(adaptive) == set(names)
    assert all(v >= 0 for v in adaptive.values())
    assert sum(adaptive.values()) <= total
    if healthy_tail:
        assert sum(adaptive.values()) == total
    reserved = allocate(ud(total, *subsets, topology=RESERVE), existing)
    assert set(reserved) == set(names)
    assert all(v >= 0 for v in reserved.values())
    if healthy_tail:
        # Stand-ins for reserved pods come on top: never fewer than the total.
        assert sum(reserved.values()) >= total


def test_allocate_specified_directly_with_unset_total() -> None:
    subsets = ud(None, s("a", replicas=3)).spec.topology.subsets or []
    assert allocate_specified(-1, subsets, {}) == {"a": 3}
