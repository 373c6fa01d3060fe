"""calculate_diffs: table cases from upstream behaviour plus invariants under random pod sets."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.control.cloneset.diffs import ExpectationDiffs, calculate_diffs, is_specified_delete
from kruise.control.cloneset.strategy import rollout_limits
from tests.kit.control_builders import NOW, build_cloneset, build_pod


def pods(n: int, revision: str, prefix: str = "p", **kw: object) -> list[dict]:
    return [build_pod(f"{prefix}{revision}{i}", revision, **kw) for i in range(n)]


def diffs(cs: dict, pod_list: list[dict], **kw: object) -> ExpectationDiffs:
    return calculate_diffs(cs, pod_list, "cs-old", "cs-new", NOW, **kw)


def test_steady_state_is_empty() -> None:
    cs = build_cloneset(3)
    assert calculate_diffs(cs, pods(3, "cs-new"), "cs-new", "cs-new", NOW).is_empty()


def test_fresh_cloneset_scales_up_all_replicas_on_update_revision() -> None:
    assert diffs(build_cloneset(5), []) == ExpectationDiffs(scale_up_num=5, scale_up_limit=5)


def test_partition_keeps_old_pods_when_scaling_up() -> None:
    result = diffs(build_cloneset(5, partition=2), [])
    assert (result.scale_up_num, result.scale_up_num_old_revision) == (5, 2)


def test_update_all_old_pods_with_default_max_unavailable() -> None:
    result = diffs(build_cloneset(5), pods(5, "cs-old"))
    assert result == ExpectationDiffs(update_num=5, update_max_unavailable=1)


def test_partition_limits_update_num() -> None:
    result = diffs(build_cloneset(5, partition=2), pods(3, "cs-old") + pods(2, "cs-new"))
    assert result.update_num == 1


def test_surge_creates_an_extra_new_pod_first() -> None:
    result = diffs(build_cloneset(5, maxSurge=1, maxUnavailable=0), pods(5, "cs-old"))
    assert (result.scale_up_num, result.scale_up_num_old_revision, result.use_surge) == (1, 0, 1)
    assert result.update_num == 5
    assert result.update_max_unavailable == 0 + 5 - 5


def test_surge_pod_is_deleted_once_update_finished() -> None:
    result = diffs(build_cloneset(5, maxSurge=1), pods(6, "cs-new"))
    assert (result.scale_down_num, result.delete_ready_limit) == (1, 1 + 1)


def test_specified_delete_is_replaced_with_surge_when_unavailable_budget_is_used() -> None:
    cs = build_cloneset(3, maxSurge=1, maxUnavailable=0)
    cs["spec"]["scaleStrategy"]["podsToDelete"] = ["pcs-new0"]
    result = diffs(cs, pods(3, "cs-new"))
    assert (result.use_surge, result.scale_up_num, result.delete_ready_limit) == (1, 1, 0)


def test_specified_delete_without_surge_uses_delete_ready_limit() -> None:
    pod_list = pods(3, "cs-new")
    pod_list[0]["metadata"]["labels"]["apps.kruise.io/specified-delete"] = "true"
    result = diffs(build_cloneset(3), pod_list)
    assert (result.scale_down_num, result.scale_up_num, result.delete_ready_limit) == (0, 0, 1)
    assert is_specified_delete(build_cloneset(3), pod_list[0])


def test_scale_strategy_max_unavailable_limits_creation() -> None:
    cs = build_cloneset(5)
    cs["spec"]["scaleStrategy"]["maxUnavailable"] = 1
    assert diffs(cs, []).scale_up_limit == 1
    not_ready = pods(1, "cs-new", ready=False)
    assert diffs(cs, not_ready).scale_up_limit == 0


def test_min_ready_seconds_makes_fresh_pods_unavailable() -> None:
    cs = build_cloneset(2)
    cs["spec"]["minReadySeconds"] = 30
    cs["spec"]["scaleStrategy"]["maxUnavailable"] = 1
    fresh = pods(1, "cs-new", ready_since=timedelta(seconds=5))
    assert diffs(cs, fresh).scale_up_limit == 0
    settled = pods(1, "cs-new", ready_since=timedelta(seconds=31))
    assert diffs(cs, settled).scale_up_limit == 1


def test_preparing_delete_pods_count_unless_excluded() -> None:
    cs = build_cloneset(2)
    pod_list = pods(2, "cs-new") + pods(
        1, "cs-new", prefix="q", labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"}
    )
    assert diffs(cs, pod_list).scale_up_num == 0
    cs["metadata"]["labels"] = {"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"}
    assert diffs(cs, pod_list[:1] + pod_list[2:]).scale_up_num == 1


def test_rollback_needs_the_gate() -> None:
    cs = build_cloneset(4, partition=3)
    pod_list = pods(4, "cs-new")
    assert diffs(cs, pod_list).update_num == 0
    assert diffs(cs, pod_list, partition_rollback=True).update_num == -3


_pod = st.tuples(
    st.booleans(),  # on update revision
    st.booleans(),  # ready
    st.sampled_from(["", "Normal", "PreparingDelete", "Updating"]),
    st.booleans(),  # specified delete
)


@settings(max_examples=300, deadline=None)
@given(
    replicas=st.integers(0, 12),
    partition=st.one_of(st.integers(0, 15), st.integers(0, 100).map(lambda p: f"{p}%")),
    surge=st.one_of(st.none(), st.integers(0, 4), st.integers(0, 100).map(lambda p: f"{p}%")),
    unavailable=st.one_of(st.integers(0, 4), st.integers(0, 100).map(lambda p: f"{p}%")),
    specs=st.lists(_pod, max_size=16),
)
def test_invariants(replicas: int, partition, surge, unavailable, specs) -> None:  # type: ignore[no-untyped-def]
    strategy = {"partition": partition, "maxUnavailable": unavailable}
    if surge is not None:
        strategy["maxSurge"] = surge
    cs = build_cloneset(replicas, **strategy)
    pod_list = []
    for i, (new, ready, state, delete) in enumerate(specs):
        labels = {"lifecycle.apps.kruise.io/state": state} if state else {}
        if delete:
            labels["apps.kruise.io/specified-delete"] = "true"
        pod_list.append(build_pod(f"p{i}", "cs-new" if new else "cs-old", ready=ready, labels=labels))
    limits = rollout_limits(cs)
    result = diffs(cs, pod_list)
    # Never plan more pods than replicas + surge.
    assert len(pod_list) + result.scale_up_num <= max(len(pod_list), limits.replicas + limits.max_surge)
    assert result.use_surge <= limits.max_surge
    assert 0 <= result.scale_up_limit <= result.scale_up_num
    assert result.scale_up_num_old_revision >= 0 and result.scale_down_num_old_revision >= 0
    # Never scale and go below replicas when deleting.
    assert len(pod_list) - result.scale_down_num >= min(len(pod_list), limits.replicas)
    # Forward-only updates never touch the partition's old pods.
    old_active = sum(1 for new, _, state, _ in specs if not new and state != "PreparingDelete")
    assert result.update_num >= 0
    assert old_active - result.update_num >= min(limits.partition, old_active)
    if result.update_num:
        assert result.update_max_unavailable == limits.max_unavailable + len(pod_list) - limits.replicas
