"""Claims resized with the rollout (gate StatefulSetAutoResizePVCGate, ``volumeClaimUpdateStrategy:
OnPodRollingUpdate``): where a pod's claims stand, and how the update plan resizes them before
their pod and waits for the expansion."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from sts_builders import CUR, NOW, REVS, UPD, names, ordinal_pod, pods, sts

from kruise.control.statefulset.actions import ResizeClaims, UpdatePod
from kruise.control.statefulset.claims import ClaimResize, PodClaims, pod_claims_state
from kruise.control.statefulset.scaleplan import plan_scale
from kruise.control.statefulset.update import plan_update


def template(name: str = "data", storage: str = "2Gi", sc: str | None = "fast") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if sc is not None:
        spec["storageClassName"] = sc
    return {"metadata": {"name": name}, "spec": spec}


def claim(
    name: str,
    request: str = "1Gi",
    capacity: str | None = "1Gi",
    *,
    sc: str | None = "fast",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    pending: bool = False,
    deleting: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": request}}}
    if sc is not None:
        spec["storageClassName"] = sc
    status: dict[str, Any] = {}
    if capacity is not None:
        status["capacity"] = {"storage": capacity}
    if pending:
        status["conditions"] = [{"type": "FileSystemResizePending", "status": "True"}]
    meta: dict[str, Any] = {"name": name, "namespace": "ns"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": spec, "status": status}


def resizing_set(*templates: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return sts(
        volumeClaimTemplates=list(templates or [template()]),
        volumeClaimUpdateStrategy={"type": "OnPodRollingUpdate"},
        **kw,
    )


def state(set_: dict[str, Any], claims: dict[str, dict[str, Any]], ordinal: int) -> PodClaims:
    return pod_claims_state(set_, ordinal_pod(ordinal), claims.get)


def test_small_claim_is_resized_to_the_template_resources():
    set_ = resizing_set()
    got = state(set_, {"data-web-0": claim("data-web-0")}, 0)
    assert got == PodClaims(
        ready=True,
        matched=False,
        completed=False,
        resizes=(ClaimResize("data-web-0", "fast", {"requests": {"storage": "2Gi"}}),),
    )


def test_claim_at_or_above_template_size_is_matched():
    set_ = resizing_set()
    for request in ("2Gi", "3Gi", "2048Mi"):
        got = state(set_, {"data-web-0": claim("data-web-0", request, request)}, 0)
        assert (got.matched, got.completed, got.ready, got.resizes) == (True, True, True, ())


def test_expansion_completes_with_capacity_or_file_system_pending():
    set_ = resizing_set()
    resized = claim("data-web-0", "2Gi", "1Gi")
    assert (
        state(set_, {"data-web-0": resized}, 0).completed,
        state(set_, {"data-web-0": resized}, 0).ready,
    ) == (
        False,
        False,
    )
    pending = claim("data-web-0", "2Gi", "1Gi", pending=True)
    got = state(set_, {"data-web-0": pending}, 0)
    assert got.matched and got.completed and not got.ready
    grown = claim("data-web-0", "2Gi", "2Gi")
    assert state(set_, {"data-web-0": grown}, 0).ready


def test_claim_differing_in_more_than_size_is_a_conflict_after_earlier_resizes():
    set_ = resizing_set(template("a"), template("b"), template("c"))
    claims = {
        "a-web-1": claim("a-web-1"),
        "b-web-1": claim("b-web-1", modes=("ReadWriteMany",)),
        "c-web-1": claim("c-web-1"),
    }
    got = state(set_, claims, 1)
    assert [r.name for r in got.resizes] == ["a-web-1"]
    assert got.conflict == "b-web-1" and not got.matched
    other_class = {"a-web-1": claim("a-web-1", "2Gi", "2Gi", sc="slow")}
    assert state(set_, other_class, 1).conflict == "a-web-1"


def test_missing_and_deleting_claims_are_left_out():
    set_ = resizing_set(template("a"), template("b"))
    got = state(set_, {"a-web-2": claim("a-web-2", deleting=True)}, 2)
    assert got == PodClaims(ready=True, matched=True, completed=True)


def test_claim_without_class_matches_a_template_without_class():
    set_ = resizing_set(template(sc=None))
    got = state(set_, {"data-web-0": claim("data-web-0", sc=None)}, 0)
    assert got.resizes == (ClaimResize("data-web-0", None, {"requests": {"storage": "2Gi"}}),)


def run(set_: dict[str, Any], current: list[dict[str, Any]], claims: dict[str, dict[str, Any]] | None):
    scale = plan_scale(set_, current, REVS, NOW)
    lookup = (lambda p: pod_claims_state(set_, p, claims.get)) if claims is not None else None
    return plan_update(set_, scale.live_range, scale.replicas, scale.placeholders, UPD, NOW, claims=lookup)


def small(*ordinals: int) -> dict[str, dict[str, Any]]:
    return {f"data-web-{n}": claim(f"data-web-{n}") for n in ordinals}


def test_claims_of_the_first_target_are_resized_before_its_pod():
    plan = run(resizing_set(), pods(0, 1, 2, revision=CUR), small(0, 1, 2))
    assert names(plan.actions) == ["ResizeClaims:web-2"]
    assert plan.actions[0].resizes[0].name == "data-web-2"
    # web-2 counts as unavailable while its claim grows: web-1 waits
    assert plan.blocked_by == "web-1" and "web-2" in plan.unavailable


def test_pod_waits_for_its_claim_then_is_updated():
    claims = {**small(0, 1), "data-web-2": claim("data-web-2", "2Gi", "1Gi")}
    plan = run(resizing_set(), pods(0, 1, 2, revision=CUR), claims)
    assert plan.actions == [] and plan.blocked_by == "web-1"
    claims["data-web-2"] = claim("data-web-2", "2Gi", "2Gi")
    plan = run(resizing_set(), pods(0, 1, 2, revision=CUR), claims)
    assert names(plan.actions) == ["UpdatePod:web-2"]
    claims["data-web-2"] = claim("data-web-2", "2Gi", "1Gi", pending=True)
    assert names(run(resizing_set(), pods(0, 1, 2, revision=CUR), claims).actions) == ["UpdatePod:web-2"]


def test_updated_pod_with_small_claim_is_still_a_target():
    # only the claim template changed: the pods are at the update revision, yet their claims are
    # resized one at a time; once a claim matches its template the pod is done (not recreated)
    plan = run(resizing_set(), pods(0, 1, 2), small(0, 1, 2))
    assert names(plan.actions) == ["ResizeClaims:web-2"]
    done = {**small(0, 1), "data-web-2": claim("data-web-2", "2Gi", "2Gi")}
    plan = run(resizing_set(), pods(0, 1, 2), done)
    assert names(plan.actions) == ["ResizeClaims:web-1"]


def test_available_pod_with_unready_claim_counts_as_unavailable():
    claims = {
        "data-web-0": claim("data-web-0", "2Gi", "1Gi"),
        **{f"data-web-{n}": claim(f"data-web-{n}", "2Gi", "2Gi") for n in (1, 2)},
    }
    plan = run(resizing_set(), [ordinal_pod(0), *pods(1, 2, revision=CUR)], claims)
    assert plan.unavailable == {"web-0"} and plan.actions == [] and plan.blocked_by == "web-2"


def test_conflict_rides_on_the_resize_action():
    set_ = resizing_set()
    claims = {**small(0, 1), "data-web-2": claim("data-web-2", modes=("ReadWriteMany",))}
    [action] = run(set_, pods(0, 1, 2, revision=CUR), claims).actions
    assert isinstance(action, ResizeClaims) and action.resizes == () and action.conflict == "data-web-2"


def test_without_claims_the_update_leaves_claims_alone():
    plan = run(resizing_set(), pods(0, 1, 2, revision=CUR), None)
    assert names(plan.actions) == ["UpdatePod:web-2"]
    assert run(resizing_set(), pods(0, 1, 2), None).actions == []


def test_on_delete_plans_nothing_even_with_claims():
    set_ = resizing_set(strategy_type="OnDelete")
    assert run(set_, pods(0, 1, 2, revision=CUR), small(0, 1, 2)).skipped == "OnDelete"


CLAIM_STATES = st.sampled_from(["small", "resizing", "pending", "grown"])


def claim_in(state_: str, name: str) -> dict[str, Any]:
    return {
        "small": claim(name),
        "resizing": claim(name, "2Gi", "1Gi"),
        "pending": claim(name, "2Gi", "1Gi", pending=True),
        "grown": claim(name, "2Gi", "2Gi"),
    }[state_]


@given(
    states=st.lists(CLAIM_STATES, min_size=1, max_size=6),
    outdated=st.lists(st.booleans(), min_size=6, max_size=6),
    budget=st.integers(1, 6),
)
def test_no_pod_is_updated_before_its_claims_completed(states, outdated, budget):
    replicas = len(states)
    set_ = resizing_set(replicas=replicas, policy="Parallel", max_unavailable=budget)
    current = [ordinal_pod(n, CUR if outdated[n] else UPD) for n in range(replicas)]
    claims = {f"data-web-{n}": claim_in(s, f"data-web-{n}") for n, s in enumerate(states)}
    plan = run(set_, current, claims)
    touched = [a.pod["metadata"]["name"] for a in plan.actions]
    assert len(touched) == len(set(touched)), "a pod is resized or updated, never both in one pass"
    for action in plan.actions:
        ordinal = int(action.pod["metadata"]["name"].rsplit("-", 1)[1])
        if isinstance(action, UpdatePod):
            assert states[ordinal] in ("pending", "grown")
        else:
            assert isinstance(action, ResizeClaims) and states[ordinal] == "small"
    # every pod resized or waiting for its claims counts against the budget
    waiting = {f"web-{n}" for n, s in enumerate(states) if s in ("small", "resizing")}
    assert {n for n in touched if n in waiting} <= plan.unavailable
