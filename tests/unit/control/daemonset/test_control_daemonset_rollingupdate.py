"""Advanced DaemonSet rolling-update plans: budgets, partition, node selector, surge."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.daemonset.rollingupdate import (
    NO_PLAN,
    RollingUpdateError,
    RollingUpdateSettings,
    plan_rolling_update,
    rollout_budget,
    split_node_pods,
)
from tests.kit.control_builders import NOW, build_pod

NEW, OLD = "rev-new", "rev-old"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "spec": {}}


def ds_pod(
    node_name: str,
    revision: str,
    *,
    ready: bool = True,
    ready_since: timedelta = timedelta(hours=1),
    **kw: Any,
) -> dict:
    return build_pod(
        f"ds-{node_name}-{revision}", revision, ready=ready, ready_since=ready_since, node=node_name, **kw
    )


def plan(
    node_pods: dict[str, list[dict]],
    settings: RollingUpdateSettings | None = None,
    *,
    nodes: list[dict] | None = None,
    eligible: set[str] | None = None,
    prune: bool = False,
):
    nodes = nodes if nodes is not None else [node(n) for n in node_pods]
    eligible = eligible if eligible is not None else {n["metadata"]["name"] for n in nodes}
    settings = settings or RollingUpdateSettings(
        max_unavailable=1, status_desired_number_scheduled=len(eligible)
    )
    return plan_rolling_update(settings, nodes, eligible, node_pods, NEW, NOW, prune_ineligible_nodes=prune)


def all_old(count: int) -> dict[str, list[dict]]:
    return {f"n{i}": [ds_pod(f"n{i}", OLD)] for i in range(1, count + 1)}


# --- reading the DaemonSet ----------------------------------------------------------------


def test_settings_from_daemonset() -> None:
    ds = {
        "metadata": {"annotations": {"deprecated.daemonset.template.generation": "4"}},
        "spec": {
            "minReadySeconds": 10,
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "maxUnavailable": "20%",
                    "maxSurge": 0,
                    "partition": 2,
                    "selector": {"matchLabels": {"canary": "true"}},
                    "paused": True,
                },
            },
        },
        "status": {"desiredNumberScheduled": 7},
    }
    assert RollingUpdateSettings.from_daemonset(ds) == RollingUpdateSettings(
        strategy_type="RollingUpdate",
        max_unavailable="20%",
        max_surge=0,
        partition=2,
        selector={"matchLabels": {"canary": "true"}},
        paused=True,
        min_ready_seconds=10,
        status_desired_number_scheduled=7,
        template_generation=4,
    )
    bare = RollingUpdateSettings.from_daemonset(
        {"spec": {}, "metadata": {"annotations": {"deprecated.daemonset.template.generation": "x"}}}
    )
    assert bare == RollingUpdateSettings()


# --- budgets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("unavailable", "surge", "desired", "expected"),
    [
        (1, None, 5, (1, 0)),
        ("25%", None, 10, (3, 0)),  # rounded up
        ("10%", None, 1, (1, 0)),
        (None, "50%", 3, (0, 2)),
        (0, 0, 4, (1, 0)),  # impossible config: one unavailable allowed
        (None, None, 4, (1, 0)),
        (0, 0, 0, (0, 0)),
        ("0%", "0%", 5, (1, 0)),
    ],
)
def test_budget(unavailable: Any, surge: Any, desired: int, expected: tuple[int, int]) -> None:
    budget = rollout_budget(RollingUpdateSettings(max_unavailable=unavailable, max_surge=surge), desired)
    assert (budget.max_unavailable, budget.max_surge) == expected
    assert budget.desired_number_scheduled == desired


@pytest.mark.parametrize(
    ("field", "settings"),
    [
        ("maxUnavailable", RollingUpdateSettings(max_unavailable="lots")),
        ("maxSurge", RollingUpdateSettings(max_surge="1.5%")),
        ("partition", RollingUpdateSettings(max_unavailable=1, partition="half")),
    ],
)
def test_bad_values_name_the_field(field: str, settings: RollingUpdateSettings) -> None:
    with pytest.raises(RollingUpdateError, match=rf"spec\.updateStrategy\.rollingUpdate\.{field}: "):
        plan(all_old(2), settings)


def test_bad_selector_names_the_field() -> None:
    settings = RollingUpdateSettings(
        max_unavailable=1, selector={"matchExpressions": [{"key": "a", "operator": "Near"}]}
    )
    with pytest.raises(RollingUpdateError, match=r"spec\.updateStrategy\.rollingUpdate\.selector: "):
        plan(all_old(2), settings)


# --- when nothing runs --------------------------------------------------------------------


def test_paused_and_on_delete_plan_nothing() -> None:
    assert plan(all_old(3), RollingUpdateSettings(max_unavailable=1, paused=True)) is NO_PLAN
    assert plan(all_old(3), RollingUpdateSettings(strategy_type="OnDelete", max_unavailable=1)) is NO_PLAN
    assert NO_PLAN.pods_to_delete == () and NO_PLAN.nodes_to_create == () and NO_PLAN.budget is None


# --- without surge ------------------------------------------------------------------------


def test_replaces_highest_named_nodes_first_within_max_unavailable() -> None:
    result = plan(all_old(5))
    assert result.pods_to_delete == ("ds-n5-rev-old",)
    assert result.nodes_to_create == ()
    assert result.nodes_in_scope == ("n5", "n4", "n3", "n2", "n1")
    two = plan(all_old(5), RollingUpdateSettings(max_unavailable=2))
    assert two.pods_to_delete == ("ds-n5-rev-old", "ds-n4-rev-old")


def test_unavailable_new_pod_uses_the_budget() -> None:
    pods = all_old(4)
    pods["n4"] = [ds_pod("n4", NEW, ready=False)]
    assert plan(pods).pods_to_delete == ()
    pods["n4"] = [ds_pod("n4", NEW)]
    assert plan(pods).pods_to_delete == ("ds-n3-rev-old",)


def test_new_pod_waits_for_min_ready_seconds() -> None:
    pods = all_old(3)
    pods["n3"] = [ds_pod("n3", NEW, ready_since=timedelta(seconds=5))]
    waiting = RollingUpdateSettings(max_unavailable=1, min_ready_seconds=10)
    assert plan(pods, waiting).pods_to_delete == ()
    pods["n3"] = [ds_pod("n3", NEW, ready_since=timedelta(seconds=11))]
    assert plan(pods, waiting).pods_to_delete == ("ds-n2-rev-old",)


def test_node_without_pod_counts_as_unavailable() -> None:
    pods = all_old(3)
    pods["n3"] = []
    assert plan(pods).pods_to_delete == ()
    del pods["n3"]  # eligible node missing from the map entirely: same thing
    assert plan(pods, nodes=[node("n1"), node("n2"), node("n3")]).pods_to_delete == ()


def test_unavailable_old_pods_are_always_replaced() -> None:
    pods = all_old(4)
    pods["n1"] = [ds_pod("n1", OLD, ready=False)]
    pods["n2"] = [ds_pod("n2", OLD, ready=False)]
    # broken old pods go regardless of the budget and, as upstream, do not use it up
    assert plan(pods).pods_to_delete == ("ds-n2-rev-old", "ds-n1-rev-old", "ds-n4-rev-old")
    pods["n4"] = [ds_pod("n4", NEW, ready=False)]
    assert plan(pods).pods_to_delete == ("ds-n2-rev-old", "ds-n1-rev-old")


def test_excess_pods_count_as_unavailable() -> None:
    pods = all_old(3)
    pods["n3"] = [
        ds_pod("n3", OLD),
        {**ds_pod("n3", OLD), "metadata": {**ds_pod("n3", OLD)["metadata"], "name": "dup"}},
    ]
    assert plan(pods).pods_to_delete == ()


def test_deleting_pods_are_ignored() -> None:
    pods = all_old(2)
    gone = ds_pod("n2", OLD)
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T11:00:00Z"
    pods["n2"] = [gone]
    # n2 is left with no live pod (unavailable): no room for n1
    assert plan(pods).pods_to_delete == ()
    assert split_node_pods([gone], NEW, None).old is None


def test_preparing_delete_pods() -> None:
    pods = all_old(3)
    pods["n1"] = [ds_pod("n1", OLD, labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})]
    result = plan(pods, RollingUpdateSettings(max_unavailable=2))
    # a PreparingDelete old pod is "being replaced": ordered right after updated nodes, and unavailable
    assert result.nodes_in_scope == ("n1", "n3", "n2")
    assert result.pods_to_delete == ("ds-n3-rev-old",)
    # a PreparingDelete new pod costs the budget too
    pods = all_old(3)
    pods["n3"] = [ds_pod("n3", NEW, labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})]
    assert plan(pods, RollingUpdateSettings(max_unavailable=2)).pods_to_delete == ("ds-n2-rev-old",)


def test_template_generation_label_counts_as_updated() -> None:
    pods = {"n1": [ds_pod("n1", OLD, labels={"pod-template-generation": "3"})]}
    settings = RollingUpdateSettings(max_unavailable=1, template_generation=3)
    assert plan(pods, settings).pods_to_delete == ()
    assert plan(pods).pods_to_delete == ("ds-n1-rev-old",)


# --- partition and selector ---------------------------------------------------------------


def test_partition_keeps_lowest_named_nodes_old() -> None:
    settings = RollingUpdateSettings(max_unavailable=5, partition=3, status_desired_number_scheduled=5)
    result = plan(all_old(5), settings)
    assert result.nodes_in_scope == ("n5", "n4")
    assert result.pods_to_delete == ("ds-n5-rev-old", "ds-n4-rev-old")


def test_partition_counts_updated_nodes_first() -> None:
    pods = all_old(5)
    pods["n1"] = [ds_pod("n1", NEW)]  # updated by hand (e.g. OnDelete before)
    settings = RollingUpdateSettings(max_unavailable=5, partition=3, status_desired_number_scheduled=5)
    assert plan(pods, settings).pods_to_delete == ("ds-n5-rev-old",)


@pytest.mark.parametrize(
    ("partition", "desired", "in_scope"), [("50%", 5, 3), ("100%", 5, 0), ("40%", 0, 5), (9, 5, 0)]
)
def test_partition_percent_scales_against_status_and_rounds_down(
    partition: str | int, desired: int, in_scope: int
) -> None:
    settings = RollingUpdateSettings(
        max_unavailable=5, partition=partition, status_desired_number_scheduled=desired
    )
    assert len(plan(all_old(5), settings).nodes_in_scope) == in_scope


def test_partition_of_n_minus_one_updates_exactly_one_node() -> None:
    settings = RollingUpdateSettings(max_unavailable=3, partition=2, status_desired_number_scheduled=3)
    pods = all_old(3)
    assert plan(pods, settings).pods_to_delete == ("ds-n3-rev-old",)
    pods["n3"] = [ds_pod("n3", NEW)]
    assert plan(pods, settings).pods_to_delete == ()


def test_selector_limits_updates_to_matching_nodes() -> None:
    nodes = [node("n1", canary="true"), node("n2"), node("n3")]
    settings = RollingUpdateSettings(max_unavailable=3, selector={"matchLabels": {"canary": "true"}})
    result = plan(all_old(3), settings, nodes=nodes)
    assert result.nodes_in_scope == ("n1",)
    assert result.pods_to_delete == ("ds-n1-rev-old",)


def test_selector_keeps_already_updated_nodes_in_scope() -> None:
    nodes = [node("n1", canary="true"), node("n2"), node("n3")]
    pods = all_old(3)
    pods["n3"] = [ds_pod("n3", NEW, ready=False)]
    settings = RollingUpdateSettings(max_unavailable=1, selector={"matchLabels": {"canary": "true"}})
    result = plan(pods, settings, nodes=nodes)
    assert result.nodes_in_scope == ("n3", "n1")
    assert result.pods_to_delete == ()  # n3's unavailable new pod holds the only slot


def test_empty_selector_matches_every_node() -> None:
    settings = RollingUpdateSettings(max_unavailable=3, selector={})
    assert len(plan(all_old(3), settings).pods_to_delete) == 3


# --- ineligible and vanished nodes --------------------------------------------------------


def test_pods_on_vanished_nodes_are_not_considered() -> None:
    pods = all_old(2)
    pods["gone"] = [ds_pod("gone", NEW, ready=False)]
    result = plan(pods, nodes=[node("n1"), node("n2")])
    assert "gone" not in result.nodes_in_scope
    assert result.pods_to_delete == ("ds-n2-rev-old",)


def test_ineligible_node_counts_unless_pruned() -> None:
    pods = all_old(3)
    pods["n3"] = [ds_pod("n3", NEW, ready=False)]
    nodes = [node("n1"), node("n2"), node("n3")]
    assert plan(pods, nodes=nodes, eligible={"n1", "n2"}).pods_to_delete == ()
    pruned = plan(pods, nodes=nodes, eligible={"n1", "n2"}, prune=True)
    assert pruned.nodes_in_scope == ("n2", "n1")
    assert pruned.pods_to_delete == ("ds-n2-rev-old",)
    assert pruned.budget is not None and pruned.budget.desired_number_scheduled == 2


# --- with surge ---------------------------------------------------------------------------

SURGE = RollingUpdateSettings(max_unavailable=0, max_surge=1, min_ready_seconds=10)


def test_surge_creates_beside_the_old_pod() -> None:
    result = plan(all_old(3), SURGE)
    assert result.nodes_to_create == ("n3",)
    assert result.pods_to_delete == ()


def test_surge_waits_for_the_new_pod_then_deletes_the_old() -> None:
    pods = all_old(3)
    pods["n3"] = [ds_pod("n3", OLD), ds_pod("n3", NEW, ready_since=timedelta(seconds=3))]
    waiting = plan(pods, SURGE)
    assert waiting.nodes_to_create == () and waiting.pods_to_delete == ()
    pods["n3"] = [ds_pod("n3", OLD), ds_pod("n3", NEW, ready_since=timedelta(seconds=11))]
    done = plan(pods, SURGE)
    assert done.pods_to_delete == ("ds-n3-rev-old",)
    assert done.nodes_to_create == ("n2",)


def test_surge_replaces_unavailable_old_pods_beyond_max_surge() -> None:
    pods = all_old(3)
    pods["n1"] = [ds_pod("n1", OLD, ready=False)]
    result = plan(pods, SURGE)
    assert result.nodes_to_create == ("n1", "n3")


def test_surge_leaves_nodes_without_live_old_pod_to_the_manage_step() -> None:
    pods = {
        "n1": [],
        "n2": [ds_pod("n2", NEW)],
        "n3": [ds_pod("n3", OLD, labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})],
    }
    result = plan(pods, SURGE)
    assert result.nodes_to_create == () and result.pods_to_delete == ()


def test_surge_preparing_delete_new_pod_holds_a_slot() -> None:
    pods = all_old(2)
    pods["n2"] = [
        ds_pod("n2", OLD),
        ds_pod("n2", NEW, labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"}),
    ]
    assert plan(pods, SURGE).nodes_to_create == ()


def test_surge_percent() -> None:
    settings = RollingUpdateSettings(max_surge="50%")
    assert plan(all_old(5), settings).nodes_to_create == ("n5", "n4", "n3")


# --- properties ---------------------------------------------------------------------------

NO_SURGE_STATES = ("empty", "old", "old-broken", "new", "new-broken")


def pods_for(name: str, state: str) -> list[dict]:
    return {
        "empty": [],
        "old": [ds_pod(name, OLD)],
        "old-broken": [ds_pod(name, OLD, ready=False)],
        "new": [ds_pod(name, NEW)],
        "new-broken": [ds_pod(name, NEW, ready=False)],
        "old+new": [ds_pod(name, OLD), ds_pod(name, NEW)],
        "old+new-broken": [ds_pod(name, OLD), ds_pod(name, NEW, ready=False)],
    }[state]


@given(
    states=st.lists(st.sampled_from(NO_SURGE_STATES), min_size=1, max_size=12),
    max_unavailable=st.integers(1, 5),
)
def test_no_surge_never_exceeds_max_unavailable(states: list[str], max_unavailable: int) -> None:
    names = [f"n{i:02d}" for i in range(len(states))]
    pods = {n: pods_for(n, s) for n, s in zip(names, states, strict=True)}
    result = plan(pods, RollingUpdateSettings(max_unavailable=max_unavailable))
    already_unavailable = sum(s in ("empty", "new-broken") for s in states)
    broken_old = {f"ds-{n}-rev-old" for n, s in zip(names, states, strict=True) if s == "old-broken"}
    healthy_old = sorted((n for n, s in zip(names, states, strict=True) if s == "old"), reverse=True)
    deleted = set(result.pods_to_delete)
    assert broken_old <= deleted
    healthy_deleted = deleted - broken_old
    room = max(0, max_unavailable - already_unavailable)
    assert healthy_deleted == {f"ds-{n}-rev-old" for n in healthy_old[:room]}
    assert already_unavailable + len(healthy_deleted) <= max(max_unavailable, already_unavailable)
    assert result.nodes_to_create == ()


SURGE_STATES = ("empty", "old", "old-broken", "new", "old+new", "old+new-broken")


@given(states=st.lists(st.sampled_from(SURGE_STATES), min_size=1, max_size=12), max_surge=st.integers(1, 5))
def test_surge_never_exceeds_max_surge(states: list[str], max_surge: int) -> None:
    names = [f"n{i:02d}" for i in range(len(states))]
    pods = {n: pods_for(n, s) for n, s in zip(names, states, strict=True)}
    result = plan(pods, RollingUpdateSettings(max_surge=max_surge))
    by_state = {s: [n for n, st_ in zip(names, states, strict=True) if st_ == s] for s in SURGE_STATES}
    surging = len(by_state["old+new-broken"])
    healthy = sorted(by_state["old"], reverse=True)
    room = max(0, max_surge - surging)
    assert set(result.nodes_to_create) == set(by_state["old-broken"]) | set(healthy[:room])
    assert set(result.pods_to_delete) == {f"ds-{n}-rev-old" for n in by_state["old+new"]}
    assert surging + len(set(result.nodes_to_create) - set(by_state["old-broken"])) <= max(max_surge, surging)
