"""Update planning: lifecycle refresh, candidate order (priority, scatter), budget and actions."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.control.cloneset.diffs import calculate_diffs, is_pod_available
from kruise.control.cloneset.update import (
    UpdateKind,
    first_readiness_refreshes,
    in_place_event_message,
    plan_update,
    pod_update_kind,
    pods_to_update,
    recreate_event_message,
    refresh_pod,
    refreshed_lifecycle_state,
    sort_update_candidates,
)
from kruise.control.common.revision import new_cloneset_revision
from kruise.control.common.updatesort import int_suffix, priority_sort, scatter_sort
from tests.kit.control_builders import NOW, build_cloneset, build_pod

STATE = "lifecycle.apps.kruise.io/state"


def names(pods: list) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def state_pod(state: str, **kw: object) -> dict:
    return build_pod(labels={STATE: state}, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lifecycle", "pod_kw", "revision", "completed", "expected"),
    [
        (None, {"state": "PreparingNormal"}, "cs-new", False, "Normal"),
        (None, {"state": "PreparingNormal", "node": None}, "cs-new", False, None),
        ({"preNormal": {"labelsHandler": {"ok": "y"}}}, {"state": "PreparingNormal"}, "cs-new", False, None),
        (None, {"state": "Updating"}, "cs-new", True, "Normal"),
        (None, {"state": "Updating"}, "cs-new", False, None),
        (
            {"inPlaceUpdate": {"labelsHandler": {"hold": "y"}}},
            {"state": "Updating"},
            "cs-new",
            True,
            "Updated",
        ),
        ({}, {"state": "Updated"}, "cs-new", False, "Normal"),
        ({"inPlaceUpdate": {"labelsHandler": {"hold": "y"}}}, {"state": "Updated"}, "cs-new", False, None),
        (None, {"state": "PreparingUpdate"}, "cs-new", False, "Normal"),
        (None, {"state": "PreparingUpdate"}, "cs-other", False, None),
        (None, {"state": "Normal"}, "cs-new", True, None),
    ],
)
def test_refreshed_lifecycle_state(lifecycle, pod_kw, revision, completed, expected) -> None:  # type: ignore[no-untyped-def]
    cs = build_cloneset(1)
    if lifecycle is not None:
        cs["spec"]["lifecycle"] = lifecycle
    kw = dict(pod_kw)
    pod = state_pod(kw.pop("state"), **kw)
    assert refreshed_lifecycle_state(cs, pod, revision, completed) == expected


def test_priority_weight_and_order() -> None:
    pods = [build_pod("a", labels={"w": "low"}), build_pod("b", labels={"w": "high"}), build_pod("c")]
    weight = {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"w": "high"}}}]}
    assert names(priority_sort(pods, weight)) == ["b", "a", "c"]
    ordered = [build_pod("x", labels={"k": "v1"}), build_pod("y", labels={"k": "v10"}), build_pod("z")]
    order = {"orderPriority": [{"orderedKey": "k"}]}
    # pods without any ordered key sort first, then larger numeric suffix first
    assert names(priority_sort(ordered, order)) == ["z", "y", "x"]


@pytest.mark.parametrize(("value", "number"), [("v10", 10), ("abc", 0), ("5", 5), ("a1b2", 2), ("", 0)])
def test_int_suffix(value: str, number: int) -> None:
    assert int_suffix(value) == number


def test_scatter_spreads_matching_pods() -> None:
    pods = [build_pod(f"m{i}", labels={"zone": "a"}) for i in range(3)]
    pods += [build_pod(f"u{i}", labels={"zone": "b"}) for i in range(3)]
    ordered = names(scatter_sort(pods, pods, [{"key": "zone", "value": "a"}]))
    assert sorted(ordered) == sorted(names(pods))
    assert ordered[-1] == "m2"
    assert ordered[:2] != ["m0", "m1"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=20))
def test_scatter_is_a_permutation(flags: list[bool]) -> None:
    pods = [build_pod(f"p{i}", labels={"zone": "a" if f else "b"}) for i, f in enumerate(flags)]
    assert sorted(names(scatter_sort(pods, pods, [{"key": "zone", "value": "a"}]))) == sorted(names(pods))


def test_preparing_update_pods_go_first() -> None:
    cs = build_cloneset(2)
    pods = [build_pod("a", ready=False), state_pod("PreparingUpdate")]
    pods[1]["metadata"]["name"] = "b"
    assert names(sort_update_candidates(cs, pods, pods)) == ["b", "a"]


def test_plan_respects_partition_budget_and_paused() -> None:
    cs = build_cloneset(5, partition=1, maxUnavailable=2)
    pods = [build_pod(f"p{i}", "cs-old") for i in range(5)]
    diffs = calculate_diffs(cs, pods, "cs-old", "cs-new", NOW)
    target, chosen = pods_to_update(cs, pods, "cs-old", "cs-new", diffs, NOW)
    assert target == "cs-new" and len(chosen) == 2
    cs["spec"]["updateStrategy"]["paused"] = True
    assert pods_to_update(cs, pods, "cs-old", "cs-new", diffs, NOW)[1] == []


def test_plan_skips_preparing_delete_and_grace_pods() -> None:
    cs = build_cloneset(3, maxUnavailable=3)
    pods = [
        build_pod("a", "cs-old"),
        build_pod("b", "cs-old", labels={STATE: "PreparingDelete"}),
        build_pod("c", "cs-old"),
    ]
    pods[2]["metadata"]["annotations"] = {"apps.kruise.io/inplace-update-grace": "{}"}
    diffs = calculate_diffs(cs, pods, "cs-old", "cs-new", NOW)
    assert names(pods_to_update(cs, pods, "cs-old", "cs-new", diffs, NOW)[1]) == ["a"]


def test_unavailable_updated_pods_consume_the_budget() -> None:
    cs = build_cloneset(4, maxUnavailable=1)
    pods = [build_pod("n", "cs-new", ready=False)] + [build_pod(f"o{i}", "cs-old") for i in range(3)]
    diffs = calculate_diffs(cs, pods, "cs-old", "cs-new", NOW)
    assert pods_to_update(cs, pods, "cs-old", "cs-new", diffs, NOW)[1] == []


@settings(max_examples=200, deadline=None)
@given(
    replicas=st.integers(1, 10),
    old=st.integers(0, 10),
    unready=st.integers(0, 10),
    max_unavailable=st.integers(0, 4),
    partition=st.integers(0, 10),
)
def test_update_never_exceeds_unavailability_budget(
    replicas, old, unready, max_unavailable, partition
) -> None:  # type: ignore[no-untyped-def]
    old = min(old, replicas)
    cs = build_cloneset(
        replicas, maxUnavailable=max_unavailable if max_unavailable else 1, partition=partition
    )
    pods = [build_pod(f"o{i}", "cs-old", ready=i >= unready) for i in range(old)]
    pods += [build_pod(f"n{i}", "cs-new") for i in range(replicas - old)]
    diffs = calculate_diffs(cs, pods, "cs-old", "cs-new", NOW)
    _, chosen = pods_to_update(cs, pods, "cs-old", "cs-new", diffs, NOW)
    unavailable_after = sum(1 for p in pods if not is_pod_available(p, 0, NOW) or p in chosen)
    budget = max(diffs.update_max_unavailable, sum(1 for p in pods if not is_pod_available(p, 0, NOW)))
    assert unavailable_after <= budget
    assert old - len(chosen) >= min(partition, old)


@pytest.mark.parametrize(
    ("update_type", "lifecycle", "state", "can", "kind"),
    [
        ("ReCreate", None, "Normal", True, UpdateKind.RECREATE),
        ("InPlaceIfPossible", None, "Normal", True, UpdateKind.IN_PLACE),
        ("InPlaceIfPossible", None, "Normal", False, UpdateKind.RECREATE),
        ("InPlaceOnly", None, "Normal", False, UpdateKind.BLOCKED),
        (
            "InPlaceIfPossible",
            {"inPlaceUpdate": {"labelsHandler": {"hold": "y"}}},
            "Normal",
            True,
            UpdateKind.PREPARE_UPDATE,
        ),
        (
            "InPlaceIfPossible",
            {"inPlaceUpdate": {"labelsHandler": {"hold": "y"}}},
            "PreparingUpdate",
            True,
            UpdateKind.WAIT,
        ),
        (
            "InPlaceIfPossible",
            {"inPlaceUpdate": {"labelsHandler": {"other": "y"}}},
            "PreparingUpdate",
            True,
            UpdateKind.IN_PLACE,
        ),
        ("InPlaceIfPossible", None, "Updated", True, UpdateKind.PREPARE_UPDATE),
        ("InPlaceIfPossible", None, "PreparingDelete", True, UpdateKind.BLOCKED),
    ],
)
def test_pod_update_action(update_type, lifecycle, state, can, kind) -> None:  # type: ignore[no-untyped-def]
    cs = build_cloneset(1, type=update_type)
    if lifecycle:
        cs["spec"]["lifecycle"] = lifecycle
    pod = build_pod(labels={STATE: state, "hold": "y"})
    assert pod_update_kind(cs, pod, can)[0] is kind


def test_event_messages() -> None:
    assert in_place_event_message("p", "cs-1") == "successfully update pod p in-place(revision cs-1)"
    assert (
        recreate_event_message("p", "cs-1")
        == "successfully patch pod p specified-delete for update(revision cs-1)"
    )


def test_fresh_ready_pods_are_not_available_until_min_ready() -> None:
    pod = build_pod(ready_since=timedelta(seconds=3))
    assert not is_pod_available(pod, 10, NOW) and is_pod_available(pod, 0, NOW)


def test_refresh_pod_reports_needed_writes() -> None:
    cs = build_cloneset(1)
    settled = build_pod(labels={STATE: "Normal", "pod-template-hash": "new"})
    assert not refresh_pod(cs, settled, "cs-new", NOW).writes()
    fresh = build_pod(labels={STATE: "PreparingNormal"})
    result = refresh_pod(cs, fresh, "cs-new", NOW)
    assert result.lifecycle_state == "Normal" and result.template_hash_label == "new"
    updating = build_pod(labels={STATE: "Updating", "pod-template-hash": "new"})
    assert refresh_pod(cs, updating, "cs-new", NOW).lifecycle_state == "Normal"


def test_availability_needs_strictly_more_than_min_ready_seconds() -> None:
    # podutil.IsPodAvailable: lastTransitionTime + minReadySeconds must be *before* now.
    assert not is_pod_available(build_pod(ready_since=timedelta(seconds=10)), 10, NOW)
    assert is_pod_available(build_pod(ready_since=timedelta(seconds=11)), 10, NOW)


def _revisions(cs: dict, old_image: str, new_image: str) -> tuple[dict, dict]:
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = old_image
    old = new_cloneset_revision(cs, 1, 0)
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = new_image
    new = new_cloneset_revision(cs, 2, 0)
    return old, new


def _on(pod: dict, revision: dict) -> dict:
    pod["metadata"]["labels"]["controller-revision-hash"] = revision["metadata"]["name"]
    pod["metadata"]["labels"]["pod-template-hash"] = revision["metadata"]["name"].rsplit("-", 1)[-1]
    return pod


def _plan(cs: dict, pods: list, old: dict, new: dict):  # type: ignore[no-untyped-def]
    diffs = calculate_diffs(cs, pods, old["metadata"]["name"], new["metadata"]["name"], NOW)
    return plan_update(cs, pods, old, new, [old, new], diffs, NOW)


def test_plan_update_image_change_is_in_place_with_spec_and_budget() -> None:
    cs = build_cloneset(3, type="InPlaceIfPossible", maxUnavailable=1)
    old, new = _revisions(cs, "nginx:1", "nginx:2")
    pods = [_on(build_pod(f"p{i}", labels={STATE: "Normal"}), old) for i in range(3)]
    plan = _plan(cs, pods, old, new)
    assert plan.refreshes == ()
    assert [u.kind for u in plan.updates] == [UpdateKind.IN_PLACE]
    update = plan.updates[0]
    assert update.target_revision == new["metadata"]["name"]
    assert update.spec is not None and update.spec.container_images == {"main": "nginx:2"}


def test_plan_update_beyond_images_recreates_and_in_place_only_blocks() -> None:
    cs = build_cloneset(1, type="InPlaceIfPossible")
    old, new = _revisions(cs, "nginx:1", "nginx:2")
    new["data"]["spec"]["template"]["spec"]["containers"][0]["args"] = ["-v"]
    pods = [_on(build_pod("p0", labels={STATE: "Normal"}), old)]
    assert [u.kind for u in _plan(cs, pods, old, new).updates] == [UpdateKind.RECREATE]
    cs["spec"]["updateStrategy"]["type"] = "InPlaceOnly"
    (blocked,) = _plan(cs, pods, old, new).updates
    assert blocked.kind is UpdateKind.BLOCKED and "InPlaceOnly" in blocked.message and blocked.spec is None


def test_plan_update_lifecycle_refresh_ends_the_pass() -> None:
    cs = build_cloneset(2, type="InPlaceIfPossible", maxUnavailable=2)
    old, new = _revisions(cs, "nginx:1", "nginx:2")
    settling = _on(build_pod("p0", labels={STATE: "PreparingNormal"}), old)
    waiting = _on(build_pod("p1", labels={STATE: "Normal"}), old)
    plan = _plan(cs, [settling, waiting], old, new)
    assert [r.pod["metadata"]["name"] for r in plan.refreshes] == ["p0"]
    assert plan.refreshes[0].lifecycle_state == "Normal"
    assert plan.updates == ()


def test_plan_update_paused_plans_refreshes_only() -> None:
    cs = build_cloneset(1, type="InPlaceIfPossible", paused=True)
    old, new = _revisions(cs, "nginx:1", "nginx:2")
    pods = [_on(build_pod("p0", labels={STATE: "Normal"}), old)]
    assert _plan(cs, pods, old, new).updates == ()


def test_plan_update_hooked_pod_prepares_then_waits() -> None:
    cs = build_cloneset(1, type="InPlaceIfPossible")
    cs["spec"]["lifecycle"] = {"inPlaceUpdate": {"labelsHandler": {"hold": "y"}, "markPodNotReady": True}}
    old, new = _revisions(cs, "nginx:1", "nginx:2")
    pod = _on(build_pod("p0", labels={STATE: "Normal", "hold": "y"}), old)
    (prepare,) = _plan(cs, [pod], old, new).updates
    assert prepare.kind is UpdateKind.PREPARE_UPDATE and prepare.mark_not_ready
    pod["metadata"]["labels"][STATE] = "PreparingUpdate"
    assert [u.kind for u in _plan(cs, [pod], old, new).updates] == [UpdateKind.WAIT]


def test_first_refresh_writes_both_readiness_gate_conditions_in_one_status_write() -> None:
    cs = build_cloneset(1)
    fresh = build_pod(labels={STATE: "PreparingNormal", "pod-template-hash": "new"})
    fresh["spec"]["readinessGates"] = [
        {"conditionType": "InPlaceUpdateReady"},
        {"conditionType": "KruisePodReady"},
    ]
    step = refresh_pod(cs, fresh, "cs-new", NOW)
    assert step.inplace.pod is None and step.inplace.status_pod is not None
    written = {c["type"]: c["status"] for c in step.inplace.status_pod["status"]["conditions"]}
    assert written["InPlaceUpdateReady"] == written["KruisePodReady"] == "True"

    # KruisePodReady already there (False from a not-ready key): never overwritten
    held = build_pod(
        labels={STATE: "Normal", "pod-template-hash": "new"},
        conditions=[
            {"type": "InPlaceUpdateReady", "status": "True"},
            {"type": "KruisePodReady", "status": "False", "message": "[]"},
        ],
    )
    held["spec"]["readinessGates"] = fresh["spec"]["readinessGates"]
    assert not refresh_pod(cs, held, "cs-new", NOW).writes()

    # only the KruisePodReady gate missing its condition: the refresh writes it alone
    lone = copy.deepcopy(held)
    lone["status"]["conditions"] = [c for c in lone["status"]["conditions"] if c["type"] != "KruisePodReady"]
    step = refresh_pod(cs, lone, "cs-new", NOW)
    assert step.writes() and [c["type"] for c in step.inplace.status_pod["status"]["conditions"]][-1] == (
        "KruisePodReady"
    )


def _new_gated_pod(node: str | None) -> dict:
    pod = build_pod(labels={STATE: "PreparingNormal", "pod-template-hash": "new"}, node=node)
    gates = ("InPlaceUpdateReady", "KruisePodReady")
    pod["spec"]["readinessGates"] = [{"conditionType": gate} for gate in gates]
    return pod


def test_an_unscheduled_new_pod_waits_and_then_moves_to_normal_with_its_conditions() -> None:
    cs = build_cloneset(1)
    waiting = refresh_pod(cs, _new_gated_pod(node=None), "cs-new", NOW)
    assert not waiting.writes(), "nothing to write before the pod has a node"

    scheduled = refresh_pod(cs, _new_gated_pod(node="node-a"), "cs-new", NOW)
    assert scheduled.lifecycle_state == "Normal" and scheduled.inplace.status_pod is not None
    written = {c["type"]: c["status"] for c in scheduled.inplace.status_pod["status"]["conditions"]}
    assert written["InPlaceUpdateReady"] == written["KruisePodReady"] == "True"


def test_a_pre_normal_hook_does_not_hold_back_the_readiness_gate_conditions() -> None:
    cs = build_cloneset(1)
    cs["spec"]["lifecycle"] = {"preNormal": {"labelsHandler": {"ready-to-serve": "true"}}}
    step = refresh_pod(cs, _new_gated_pod(node=None), "cs-new", NOW)
    assert step.lifecycle_state is None and step.inplace.status_pod is not None


def _new_pod(name: str, **kw: object) -> dict:
    """A pod as a CloneSet creates it: PreparingNormal, both readiness gates, no condition for them."""
    pod = build_pod(name, labels={STATE: "PreparingNormal", "pod-template-hash": "new"}, **kw)  # type: ignore[arg-type]
    pod["spec"]["readinessGates"] = [
        {"conditionType": "InPlaceUpdateReady"},
        {"conditionType": "KruisePodReady"},
    ]
    return pod


def test_first_readiness_refreshes_are_new_scheduled_pods_with_one_write_due() -> None:
    cs = build_cloneset(4)
    scheduled = _new_pod("a")
    unscheduled = _new_pod("b", node=None)
    settled = build_pod("c", labels={STATE: "Normal", "pod-template-hash": "new"})
    no_hash_label = _new_pod("d")
    del no_hash_label["metadata"]["labels"]["pod-template-hash"]
    steps = first_readiness_refreshes(cs, [scheduled, unscheduled, settled, no_hash_label], "cs-new", NOW)
    assert [step.pod["metadata"]["name"] for step in steps] == ["a"]
    (step,) = steps
    assert step.lifecycle_state == "Normal" and step.inplace.pod is None
    conditions = {c["type"]: c["status"] for c in step.inplace.status_pod["status"]["conditions"]}
    assert conditions["InPlaceUpdateReady"] == "True" and conditions["KruisePodReady"] == "True"


def test_first_readiness_refreshes_leave_pods_held_by_a_pre_normal_hook() -> None:
    cs = build_cloneset(1)
    cs["spec"]["lifecycle"] = {"preNormal": {"labelsHandler": {"ok": "y"}}}
    assert first_readiness_refreshes(cs, [_new_pod("a")], "cs-new", NOW) == ()
