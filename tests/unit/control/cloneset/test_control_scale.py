"""A scale pass as a plan, replaying the CloneSet scale examples of seed 002."""

from __future__ import annotations

import random
from datetime import timedelta
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.control.cloneset.diffs import calculate_diffs, is_pod_ready
from kruise.control.cloneset.scale import plan_scale, pvcs_of
from kruise.control.cloneset.strategy import rollout_limits
from kruise.control.common.lifecycle import pod_state as lifecycle_state
from kruise.control.common.revision import is_pod_update
from tests.kit.control_builders import NOW, build_cloneset, build_pod

STATE = "lifecycle.apps.kruise.io/state"


def names(pods: list) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def seed_cloneset(replicas: int) -> dict:
    cs = build_cloneset(replicas)
    cs["spec"]["minReadySeconds"] = 60
    cs["spec"]["scaleStrategy"]["maxUnavailable"] = 1
    return cs


def plan(cs: dict, pods: list, **kw: object):  # type: ignore[no-untyped-def]
    return plan_scale(cs, pods, [], "cs-new", "cs-new", NOW, rng=random.Random(7), **kw)  # type: ignore[arg-type]


def test_scale_up_is_limited_by_scale_max_unavailable() -> None:
    pods = [build_pod(f"cs-{i}") for i in range(3)]
    first = plan(seed_cloneset(5), pods)
    assert (first.create_current, first.create_update, len(first.instance_ids)) == (0, 1, 1)
    assert first.scale_up_limited == "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: 1"
    pods.append(build_pod("cs-fresh", ready_since=timedelta(seconds=20)))
    second = plan(seed_cloneset(5), pods)
    assert second.create_update == 0 and second.is_empty()
    assert second.scale_up_limited == "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: 0"
    pods[-1] = build_pod("cs-fresh", ready_since=timedelta(seconds=61))
    assert plan(seed_cloneset(5), pods).create_update == 1


def test_pods_to_delete_with_fewer_replicas() -> None:
    cs = seed_cloneset(4)
    cs["spec"]["scaleStrategy"]["podsToDelete"] = ["cs-demo-79rcx"]
    pods = [
        build_pod(n)
        for n in ("cs-demo-79rcx", "cs-demo-8w7h4", "cs-demo-b6r6t", "cs-demo-fv5gb", "cs-demo-p4kmw")
    ]
    result = plan(cs, pods)
    assert names(result.delete) == ["cs-demo-79rcx"] and result.create_update == 0


def test_specified_delete_without_replica_change_deletes_then_replaces() -> None:
    cs = build_cloneset(3)
    pods = [
        build_pod("a", labels={"apps.kruise.io/specified-delete": "true"}),
        build_pod("b"),
        build_pod("c"),
    ]
    assert names(plan(cs, pods).delete) == ["a"]
    assert plan(cs, pods[1:]).create_update == 1


def test_scale_in_prefers_unready_and_pre_delete_hook_holds_pods() -> None:
    cs = build_cloneset(2)
    pods = [build_pod("a"), build_pod("b", ready=False), build_pod("c")]
    assert names(plan(cs, pods).delete) == ["b"]
    cs["spec"]["lifecycle"] = {"preDelete": {"finalizersHandler": ["example.com/hold"]}}
    held = [build_pod("a"), build_pod("b", ready=False, finalizers=["example.com/hold"]), build_pod("c")]
    result = plan(cs, held)
    assert names(result.prepare_delete) == ["b"] and result.delete == []


def test_released_preparing_delete_pod_is_deleted_and_grown_replicas_take_it_back() -> None:
    cs = build_cloneset(2)
    pods = [build_pod("a"), build_pod("b"), build_pod("c", labels={STATE: "PreparingDelete"})]
    assert names(plan(cs, pods).delete) == ["c"]
    cs["spec"]["replicas"] = 3
    assert names(plan(cs, pods).undelete) == ["c"]


def test_scale_in_keeps_partition_old_pods() -> None:
    cs = build_cloneset(2, partition=1)
    pods = [build_pod("o1", "cs-old"), build_pod("o2", "cs-old"), build_pod("n1", "cs-new")]
    result = plan_scale(cs, pods, [], "cs-old", "cs-new", NOW)
    assert len(result.delete) == 1 and result.delete[0]["metadata"]["name"].startswith("o")


def test_ready_deletions_wait_for_budget() -> None:
    cs = build_cloneset(3, maxUnavailable=1)
    pods = [build_pod("a"), build_pod("b"), build_pod("c")]
    cs["spec"]["scaleStrategy"]["podsToDelete"] = ["a", "b"]
    assert len(plan(cs, pods).delete) == 1


def test_pvcs_follow_instance_id() -> None:
    pod = build_pod("cs-x", labels={"apps.kruise.io/cloneset-instance-id": "x"})
    pvcs = [
        {"metadata": {"name": "data-cs-x", "labels": {"apps.kruise.io/cloneset-instance-id": "x"}}},
        {"metadata": {"name": "data-cs-y", "labels": {"apps.kruise.io/cloneset-instance-id": "y"}}},
    ]
    assert [p["metadata"]["name"] for p in pvcs_of(pod, pvcs)] == ["data-cs-x"]


_pod = st.tuples(
    st.booleans(), st.booleans(), st.sampled_from(["", "Normal", "PreparingDelete"]), st.booleans()
)


@settings(max_examples=200, deadline=None)
@given(
    replicas=st.integers(0, 8),
    max_unavailable=st.integers(0, 3),
    surge=st.integers(0, 2),
    specs=st.lists(_pod, max_size=12),
)
def test_plan_invariants(replicas, max_unavailable, surge, specs) -> None:  # type: ignore[no-untyped-def]
    cs = build_cloneset(replicas, maxUnavailable=max_unavailable, maxSurge=surge)
    pods = []
    for i, (new, ready, state, delete) in enumerate(specs):
        labels = {STATE: state} if state else {}
        if delete:
            labels["apps.kruise.io/specified-delete"] = "true"
        pods.append(build_pod(f"p{i}", "cs-new" if new else "cs-old", ready=ready, labels=labels))
    diffs = calculate_diffs(cs, pods, "cs-old", "cs-new", NOW)
    result = plan_scale(cs, pods, [], "cs-old", "cs-new", NOW, rng=random.Random(0))
    steps = [bool(result.undelete), bool(result.create_current + result.create_update), bool(result.delete)]
    assert sum(steps) <= 1  # one kind of write per pass
    assert result.create_current + result.create_update == len(result.instance_ids) <= diffs.scale_up_limit
    assert len(pods) + len(result.instance_ids) <= max(len(pods), replicas + rollout_limits(cs).max_surge)
    ready_deleted = [
        p for p in result.delete if is_pod_ready(p, NOW) and lifecycle_state(p) != "PreparingDelete"
    ]
    assert len(ready_deleted) <= diffs.delete_ready_limit
    assert len({p["metadata"]["name"] for p in result.delete}) == len(result.delete)


# Gate PreparingUpdateAsUpdate: scaling counts a PreparingUpdate pod as already at the update
# revision (upstream ``revision.IsPodUpdate``), off it counts by its revision hash.
def _preparing_update_gate(on: bool):  # type: ignore[no-untyped-def]
    return partial(is_pod_update, preparing_update_as_update=on)


def test_preparing_update_pod_counts_as_updated_when_scaling_up_with_the_gate() -> None:
    cs = build_cloneset(3, partition=2)
    pods = [build_pod("o1", "cs-old"), build_pod("o2", "cs-old", labels={STATE: "PreparingUpdate"})]
    off = plan_scale(cs, pods, [], "cs-old", "cs-new", NOW, is_pod_update=_preparing_update_gate(False))
    assert (off.create_current, off.create_update) == (0, 1)
    on = plan_scale(cs, pods, [], "cs-old", "cs-new", NOW, is_pod_update=_preparing_update_gate(True))
    assert (on.create_current, on.create_update) == (1, 0)  # partition 2 needs another old pod


def test_preparing_update_pod_is_not_the_old_victim_of_scale_in_with_the_gate() -> None:
    cs = build_cloneset(2, maxUnavailable=3)
    pods = [
        build_pod("n1", "cs-new"),
        build_pod("n2", "cs-new", ready=False),
        build_pod("o1", "cs-old", labels={STATE: "PreparingUpdate"}),
    ]
    off = plan_scale(cs, pods, [], "cs-old", "cs-new", NOW, is_pod_update=_preparing_update_gate(False))
    assert names(off.delete) == ["o1"]  # the old revision goes first
    on = plan_scale(cs, pods, [], "cs-old", "cs-new", NOW, is_pod_update=_preparing_update_gate(True))
    assert names(on.delete) == ["n2"]  # all count as updated: the not-ready one goes


def test_is_pod_update_reads_the_lifecycle_state_only_with_the_gate() -> None:
    preparing = build_pod("p", "cs-old", labels={STATE: "PreparingUpdate"})
    updating = build_pod("u", "cs-old", labels={STATE: "Updating"})
    assert not is_pod_update(preparing, "cs-new")
    assert is_pod_update(preparing, "cs-new", preparing_update_as_update=True)
    assert not is_pod_update(updating, "cs-new", preparing_update_as_update=True)
    assert is_pod_update(build_pod("n", "cs-new"), "cs-new", preparing_update_as_update=True)


def test_a_partition_rollback_surges_current_revision_pods_only_with_the_gate() -> None:
    """Upstream's diffs read CloneSetPartitionRollback on the scale path too: with maxSurge, pods
    beyond a raised partition are rolled back by surging a current-revision pod first."""
    cs = build_cloneset(4, partition=2, maxSurge=1)
    pods = [build_pod(f"cs-{i}", "cs-new") for i in range(4)]

    def rollback_plan(gate: bool):  # type: ignore[no-untyped-def]
        return plan_scale(
            cs, pods, [], "cs-old", "cs-new", NOW, rng=random.Random(7), partition_rollback=gate
        )

    assert rollback_plan(False).is_empty()
    surged = rollback_plan(True)
    assert (surged.create_current, surged.create_update, len(surged.instance_ids)) == (1, 0, 1)
