"""Rolling update of an Advanced StatefulSet as a plan (``rollingUpdateStatefulsetPods``).

Runs after the scale pass, on the same ``replicas`` map. Nothing happens under OnDelete or when
paused. Pods count as unavailable when unhealthy, in-place updating, or not yet available for
minReadySeconds; ``maxUnavailable`` (Parallel only; 1 otherwise) caps that number. Pods labelled
``apps.kruise.io/specified-delete`` go first, highest ordinal first, ignoring partition. Then
targets are walked highest slot first down to ``partition`` (or, with unorderedUpdate, already
updated pods then priority order, at most replicas - partition of them); the walk stops at the
first available pod the budget cannot afford.

With ``claims`` (gate StatefulSetAutoResizePVCGate on and ``volumeClaimUpdateStrategy:
OnPodRollingUpdate``) the claims take part: an available pod whose claims' volumes are not ready
counts as unavailable, a pod whose claims are smaller than their templates is a target even at
the update revision, and such a pod's claims are resized first (``ResizeClaims``); the pod itself
is updated on a later pass, once the expansion completed. Until then it counts as unavailable and
the walk goes on to the next target (which the budget usually holds back), as upstream — claims
are only resized right before their pod is, since the file system grows online only while a pod
uses the volume.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.api.common import scaled_value
from kruise.api.keys import (
    LABEL_SPECIFIED_DELETE,
    LIFECYCLE_STATE_NORMAL,
    LIFECYCLE_STATE_PREPARING_NORMAL,
    LIFECYCLE_STATE_PREPARING_UPDATE,
    LIFECYCLE_STATE_UPDATED,
    LIFECYCLE_STATE_UPDATING,
)
from kruise.api.objects import Obj, labels_of, section, spec_of
from kruise.api.workload_common import UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY
from kruise.control.common import lifecycle
from kruise.control.common.inplace.engine import update_completed_problem
from kruise.control.common.revision import is_pod_update
from kruise.control.common.updatesort import priority_sort
from kruise.control.statefulset import health
from kruise.control.statefulset.actions import Action, PrepareDelete, ResizeClaims, UpdatePod, deletion
from kruise.control.statefulset.claims import PodClaims
from kruise.control.statefulset.identity import OrdinalRange, pod_name_of
from kruise.control.statefulset.pods import revision_of

ClaimsOf = Callable[[Obj], PodClaims]
"""Where a pod's claims stand (``claims.pod_claims_state`` over the claim informer)."""


def _rolling(sts: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return section(sts, "spec", "updateStrategy").get("rollingUpdate")


def update_max_unavailable(sts: Mapping[str, Any]) -> int:
    """``rollingUpdate.maxUnavailable`` (default 1) against spec.replicas, rounded down, >= 1."""
    spec = sts.get("spec") or {}
    rolling = _rolling(sts)
    if rolling is None:
        return 1
    value = rolling.get("maxUnavailable")
    replicas = spec.get("replicas")
    try:
        scaled = scaled_value(1 if value is None else value, 1 if replicas is None else int(replicas), False)
    except ValueError as err:
        raise ValueError(f"spec.updateStrategy.rollingUpdate.maxUnavailable: {err}") from err
    return max(scaled, 1)


def _slots(live_range: OrdinalRange, replicas: Mapping[int, Obj]) -> list[Obj | None]:
    return [replicas.get(live_range.start + i) for i in range(live_range.slot_count())]


def sort_update_targets(
    sts: Mapping[str, Any],
    live_range: OrdinalRange,
    replicas: Mapping[int, Obj],
    update_revision: str,
    preparing_update_as_update: bool = False,
) -> list[int]:
    """Ordinals to walk for the update, in order (``sortPodsToUpdate``). Partition counts slots
    of the ordinal range (reserved ordinals included), and at most replicas - partition pods
    are returned. With unorderedUpdate, updated pods come first (``IsPodUpdate``: with gate
    PreparingUpdateAsUpdate a PreparingUpdate pod counts as updated)."""
    rolling = _rolling(sts)
    partition = int((rolling or {}).get("partition") or 0)
    spec_replicas = spec_of(sts).get("replicas")
    max_update = (1 if spec_replicas is None else int(spec_replicas)) - partition
    if max_update <= 0:
        return []
    slots = _slots(live_range, replicas)
    if rolling is None or rolling.get("unorderedUpdate") is None:
        ordered: list[int] = []
        for index in range(len(slots) - 1, partition - 1, -1):
            if len(ordered) >= max_update:
                break
            if slots[index] is not None:
                ordered.append(live_range.start + index)
        return ordered
    updated: list[int] = []
    waiting: list[Obj] = []
    for index in range(len(slots) - 1, -1, -1):
        pod = slots[index]
        if pod is None:
            continue
        if health.is_terminating(pod) or is_pod_update(pod, update_revision, preparing_update_as_update):
            updated.append(live_range.start + index)
        else:
            waiting.append(pod)
    strategy = section(rolling, "unorderedUpdate").get("priorityStrategy")
    by_name = {pod_name_of(replicas[n]): n for n in replicas}
    waiting_ordinals = [by_name[pod_name_of(p)] for p in priority_sort(waiting, strategy)]
    return [*updated, *waiting_ordinals][:max_update]


def is_unavailable(
    pod: Obj, min_ready_seconds: int, now: datetime, *, vertical_scaling: bool = False
) -> tuple[bool, float]:
    """(unavailable, seconds until it may become available) for the update budget; with the
    InPlaceWorkloadVerticalScaling gate (``vertical_scaling``) a pod still resizing is unavailable."""
    if not health.is_healthy(pod):
        return True, 0.0
    if update_completed_problem(pod, vertical_scaling=vertical_scaling) is not None:
        return True, 0.0
    available, wait = health.running_and_available(pod, min_ready_seconds, now)
    return (not available), wait


@dataclass(frozen=True)
class UpdatePlan:
    """``actions`` in order (specified deletions, then updates). ``unavailable``: names counted
    against ``max_unavailable`` after the plan. ``blocked_by``: the first target the budget could
    not afford. ``paused``/``skipped`` say why nothing was planned."""

    actions: list[Action] = field(default_factory=list)
    max_unavailable: int = 1
    unavailable: set[str] = field(default_factory=set)
    targets: list[int] = field(default_factory=list)
    blocked_by: str | None = None
    requeue_after: float | None = None
    skipped: str | None = None


def is_specified_delete(pod: Obj) -> bool:
    return LABEL_SPECIFIED_DELETE in labels_of(pod)


def plan_update(
    sts: Mapping[str, Any],
    live_range: OrdinalRange,
    replicas: Mapping[int, Obj],
    placeholders: frozenset[int] | set[int],
    update_revision: str,
    now: datetime,
    *,
    vertical_scaling: bool = False,
    claims: ClaimsOf | None = None,
    preparing_update_as_update: bool = False,
) -> UpdatePlan:
    """``replicas``/``placeholders`` come from the scale plan; placeholders (pods not created yet)
    count as unavailable but are never deleted or updated. ``vertical_scaling``: the
    InPlaceWorkloadVerticalScaling gate (resizes count in the in-place completion check).
    ``claims``: given when claims are resized with the rollout (see the module docstring).
    ``preparing_update_as_update``: gate PreparingUpdateAsUpdate (see `sort_update_targets`)."""
    strategy = spec_of(sts).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") == "OnDelete":
        return UpdatePlan(skipped="OnDelete")
    rolling = _rolling(sts)
    if rolling is not None and rolling.get("paused"):
        return UpdatePlan(skipped="paused")
    max_unavailable = update_max_unavailable(sts)
    actions: list[Action] = []
    unavailable: set[str] = set()
    requeue_after: float | None = None
    blocked_by: str | None = None
    min_ready = health.min_ready_seconds(sts)
    for ordinal in sorted(replicas):
        not_available, wait = is_unavailable(
            replicas[ordinal], min_ready, now, vertical_scaling=vertical_scaling
        )
        if not_available:
            unavailable.add(pod_name_of(replicas[ordinal]))
            if wait > 0 and (requeue_after is None or wait < requeue_after):
                requeue_after = wait
        elif claims is not None and not claims(replicas[ordinal]).ready:
            unavailable.add(pod_name_of(replicas[ordinal]))

    specified: set[str] = set()
    for ordinal in sorted(replicas, reverse=True):
        pod = replicas[ordinal]
        name = pod_name_of(pod)
        if ordinal in placeholders or not is_specified_delete(pod):
            continue
        if len(unavailable) >= max_unavailable and name not in unavailable:
            continue
        specified.add(name)
        if not health.is_terminating(pod):
            action = deletion(sts, pod, "specified-delete")
            if action is not None:
                actions.append(action)
        unavailable.add(name)

    targets = sort_update_targets(sts, live_range, replicas, update_revision, preparing_update_as_update)
    for ordinal in targets:
        pod = replicas[ordinal]
        name = pod_name_of(pod)
        state = claims(pod) if claims is not None else None
        if revision_of(pod) == update_revision and (state is None or state.matched):
            continue
        if len(unavailable) >= max_unavailable and name not in unavailable:
            blocked_by = name
            break
        if state is not None:
            if not state.matched:
                actions.append(ResizeClaims(pod, state.resizes, state.conflict))
            if not state.matched or not state.completed:
                # resized just now (the cache still shows the old size) or still expanding
                unavailable.add(name)
                continue
        if ordinal in placeholders or name in specified or health.is_terminating(pod):
            continue
        actions.append(UpdatePod(pod, update_revision))
        unavailable.add(name)
    return UpdatePlan(
        actions=actions,
        max_unavailable=max_unavailable,
        unavailable=unavailable,
        targets=targets,
        blocked_by=blocked_by,
        requeue_after=requeue_after,
    )


@dataclass(frozen=True)
class UpdateMethod:
    """How to carry out one ``UpdatePod``. kind: ``in-place`` (run the shared in-place writer;
    set lifecycle Updating when the pod has a state), ``preparing-update`` (move to
    PreparingUpdate, ``mark_not_ready`` from the inPlaceUpdate hook, and wait), ``wait`` (a hook
    still holds it), ``delete``/``prepare-delete`` (recreate through deletion), ``error``."""

    kind: str
    message: str = ""
    mark_not_ready: bool = False


def update_method(sts: Mapping[str, Any], pod: Obj, can_in_place: bool) -> UpdateMethod:
    """``inPlaceUpdatePod`` then ``deletePod``. ``can_in_place``: the in-place engine can turn
    the pod's revision into the update revision (``calculate_update_spec`` is not None)."""
    rolling = _rolling(sts) or {}
    policy = rolling.get("podUpdatePolicy")
    spec_lifecycle = spec_of(sts).get("lifecycle") or {}
    hook = spec_lifecycle.get("inPlaceUpdate")
    mark = bool((hook or {}).get("markPodNotReady"))
    name = pod_name_of(pod)
    if policy in (UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY):
        if can_in_place:
            state = lifecycle.pod_state(pod)
            if state in ("", LIFECYCLE_STATE_PREPARING_NORMAL, LIFECYCLE_STATE_NORMAL):
                if lifecycle.is_hooked(hook, pod):
                    return UpdateMethod("preparing-update", mark_not_ready=mark)
            elif state == LIFECYCLE_STATE_UPDATED:
                return UpdateMethod("preparing-update", mark_not_ready=mark)
            elif state == LIFECYCLE_STATE_PREPARING_UPDATE:
                if lifecycle.is_hooked(hook, pod):
                    return UpdateMethod("wait")
            elif state != LIFECYCLE_STATE_UPDATING:
                return UpdateMethod("error", f"not allowed to in-place update pod {name} in state {state}")
            return UpdateMethod("in-place")
        if policy == UPDATE_TYPE_IN_PLACE_ONLY:
            return UpdateMethod(
                "error", f"find strategy is InPlaceOnly but Pod {name} can not update in-place"
            )
    action = deletion(sts, pod, "update")
    if action is None:
        return UpdateMethod("wait")
    if isinstance(action, PrepareDelete):
        return UpdateMethod("prepare-delete", mark_not_ready=action.mark_not_ready)
    return UpdateMethod("delete")


def refreshed_lifecycle_state(
    sts: Mapping[str, Any], pod: Obj, update_revision: str, update_completed: bool
) -> str | None:
    """The lifecycle state a pod moves to in ``refreshPodState`` (None: stay). Differs from
    CloneSet: PreparingNormal becomes Normal without waiting for the pod to be scheduled."""
    spec_lifecycle = spec_of(sts).get("lifecycle")
    hooks = spec_lifecycle or {}

    def after_update() -> str:
        if spec_lifecycle is not None and not lifecycle.is_all_hooked(hooks.get("inPlaceUpdate"), pod):
            return LIFECYCLE_STATE_UPDATED
        return LIFECYCLE_STATE_NORMAL

    state = lifecycle.pod_state(pod)
    if state == LIFECYCLE_STATE_PREPARING_NORMAL:
        hook = hooks.get("preNormal")
        return LIFECYCLE_STATE_NORMAL if not hook or lifecycle.is_all_hooked(hook, pod) else None
    if state == LIFECYCLE_STATE_PREPARING_UPDATE:
        return after_update() if revision_of(pod) == update_revision else None
    if state == LIFECYCLE_STATE_UPDATING:
        return after_update() if update_completed else None
    if state == LIFECYCLE_STATE_UPDATED:
        hook = hooks.get("inPlaceUpdate")
        return LIFECYCLE_STATE_NORMAL if not hook or lifecycle.is_all_hooked(hook, pod) else None
    return None
