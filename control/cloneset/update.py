"""Update planning for CloneSet: lifecycle refresh, candidate choice and order, and the budget.

Mirrors upstream ``cloneset_update.go``: first every pod's state is refreshed (if anything was
written, the pass ends); then, unless paused, candidates not at the target revision are sorted
(ActivePods, priority, scatter, PreparingUpdate first) and cut to |updateNum| and to the
unavailability budget. :func:`plan_update` returns both halves as typed data (refreshes, then a
:class:`PodUpdate` per chosen pod) for the manager's thin writer to carry out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from typing import Any

from kruise.api.keys import (
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_POD_TEMPLATE_HASH,
    LIFECYCLE_STATE_NORMAL,
    LIFECYCLE_STATE_PREPARING_DELETE,
    LIFECYCLE_STATE_PREPARING_NORMAL,
    LIFECYCLE_STATE_PREPARING_UPDATE,
    LIFECYCLE_STATE_UPDATED,
    LIFECYCLE_STATE_UPDATING,
)
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of
from kruise.api.workload_common import UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY
from kruise.control.cloneset.diffs import ExpectationDiffs, is_pod_available
from kruise.control.cloneset.podsort import sort_active_pods
from kruise.control.cloneset.vcthash import vct_change_forces_recreate
from kruise.control.common import lifecycle, podreadiness
from kruise.control.common.inplace.engine import RefreshResult, refresh, update_completed_problem
from kruise.control.common.inplace.spec import UpdateSpec, calculate_update_spec
from kruise.control.common.inplace.state import get_grace_json
from kruise.control.common.revision import equal_to_revision_hash, short_hash
from kruise.control.common.updatesort import priority_sort, scatter_sort


def _lifecycle(cloneset: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return spec_of(cloneset).get("lifecycle")


def _after_update_state(cloneset: Mapping[str, Any], pod: Obj) -> str:
    spec_lifecycle = _lifecycle(cloneset)
    if spec_lifecycle is not None and not lifecycle.is_all_hooked(spec_lifecycle.get("inPlaceUpdate"), pod):
        return LIFECYCLE_STATE_UPDATED
    return LIFECYCLE_STATE_NORMAL


def refreshed_lifecycle_state(
    cloneset: Mapping[str, Any], pod: Obj, update_revision: str, update_completed: bool
) -> str | None:
    """The lifecycle state the pod should move to now (``refreshPodState``), or None to stay.

    ``update_completed`` is the in-place engine's verdict (``update_completed_problem`` is None).
    """
    spec_lifecycle = _lifecycle(cloneset)
    state = lifecycle.pod_state(pod)
    if state == LIFECYCLE_STATE_PREPARING_NORMAL:
        hook = (spec_lifecycle or {}).get("preNormal")
        done = lifecycle.is_all_hooked(hook, pod) if hook else bool(spec_of(pod).get("nodeName"))
        return LIFECYCLE_STATE_NORMAL if done else None
    if state == LIFECYCLE_STATE_PREPARING_UPDATE:
        return _after_update_state(cloneset, pod) if equal_to_revision_hash(pod, update_revision) else None
    if state == LIFECYCLE_STATE_UPDATING:
        return _after_update_state(cloneset, pod) if update_completed else None
    if state == LIFECYCLE_STATE_UPDATED:
        hook = (spec_lifecycle or {}).get("inPlaceUpdate")
        return LIFECYCLE_STATE_NORMAL if not hook or lifecycle.is_all_hooked(hook, pod) else None
    return None


def update_candidates(pods: Sequence[Obj], update_revision: str, update_num: int) -> list[Obj]:
    """Pods waiting for an update (towards the update revision, or back when ``update_num`` < 0),
    skipping PreparingDelete pods and pods inside an in-place grace period (unless Updated)."""
    chosen = []
    for pod in pods:
        on_update = equal_to_revision_hash(pod, update_revision)
        if on_update if update_num > 0 else not on_update:
            continue
        state = lifecycle.pod_state(pod)
        if state == LIFECYCLE_STATE_PREPARING_DELETE:
            continue
        if state != LIFECYCLE_STATE_UPDATED and get_grace_json(pod):
            continue
        chosen.append(pod)
    return chosen


def sort_update_candidates(
    cloneset: Mapping[str, Any], all_pods: Sequence[Obj], candidates: Sequence[Obj]
) -> list[Obj]:
    strategy = spec_of(cloneset).get("updateStrategy") or {}
    ordered = sort_active_pods(candidates)
    ordered = priority_sort(ordered, strategy.get("priorityStrategy"))
    ordered = scatter_sort(all_pods, ordered, strategy.get("scatterStrategy"))
    return sorted(ordered, key=lambda p: lifecycle.pod_state(p) != LIFECYCLE_STATE_PREPARING_UPDATE)


def limit_update_candidates(
    cloneset: Mapping[str, Any],
    all_pods: Sequence[Obj],
    candidates: Sequence[Obj],
    diffs: ExpectationDiffs,
    target_revision: str,
    now: datetime,
) -> list[Obj]:
    """Cut to |updateNum|, then stop before unavailable pods would exceed the budget: pods of the
    target revision already unavailable count against it, and so does every available pod we
    are about to take down."""
    min_ready = int(spec_of(cloneset).get("minReadySeconds") or 0)
    chosen = list(candidates[: abs(diffs.update_num)])
    unavailable = target_unavailable = 0
    for pod in all_pods:
        if not is_pod_available(pod, min_ready, now):
            unavailable += 1
            target_unavailable += equal_to_revision_hash(pod, target_revision)
    allowed = 0
    for pod in chosen:
        if target_unavailable + allowed >= diffs.update_max_unavailable:
            break
        if is_pod_available(pod, min_ready, now):
            if unavailable >= diffs.update_max_unavailable:
                break
            unavailable += 1
        allowed += 1
    return chosen[:allowed]


def pods_to_update(
    cloneset: Mapping[str, Any],
    pods: Sequence[Obj],
    current_revision: str,
    update_revision: str,
    diffs: ExpectationDiffs,
    now: datetime,
) -> tuple[str, list[Obj]]:
    """(target revision, pods to update now, in order). Empty when paused, OnDelete or done."""
    strategy = spec_of(cloneset).get("updateStrategy") or {}
    if strategy.get("type") == "OnDelete" or strategy.get("paused") or diffs.update_num == 0:
        return update_revision, []
    target = update_revision if diffs.update_num > 0 else current_revision
    candidates = update_candidates(pods, update_revision, diffs.update_num)
    ordered = sort_update_candidates(cloneset, pods, candidates)
    return target, limit_update_candidates(cloneset, pods, ordered, diffs, target, now)


class UpdateKind(Enum):
    """What the update half of a pass does to one chosen pod."""

    PREPARE_UPDATE = "PrepareUpdate"
    """Move to PreparingUpdate (readiness key first with markPodNotReady) and wait for the hook."""
    IN_PLACE = "InPlace"
    """Run the in-place writer with `PodUpdate.spec`; lifecycle state becomes Updating in the same write."""
    RECREATE = "Recreate"
    """Label the pod specified-delete; the scale half replaces it on the next pass."""
    BLOCKED = "Blocked"
    """Cannot be updated; `PodUpdate.message` becomes the FailedUpdate condition."""
    WAIT = "Wait"
    """An inPlaceUpdate hook still holds the PreparingUpdate pod: nothing is written (upstream still
    asks the PodUnavailableBudget first, so the pod stays in the plan)."""


@dataclass(frozen=True)
class PodUpdate:
    kind: UpdateKind
    pod: Obj
    target_revision: str
    spec: UpdateSpec | None = None
    mark_not_ready: bool = False
    message: str = ""


def pod_update_kind(
    cloneset: Mapping[str, Any], pod: Obj, can_in_place: bool
) -> tuple[UpdateKind | None, str]:
    """``updatePod``'s decision, with the reason when blocked; None while an inPlaceUpdate hook still
    holds a PreparingUpdate pod. ``can_in_place``: the engine produced a spec from the pod's revision."""
    strategy = spec_of(cloneset).get("updateStrategy") or {}
    update_type = strategy.get("type")
    name = meta_of(pod).get("name", "")
    if update_type in (UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY):
        if can_in_place:
            hook = (_lifecycle(cloneset) or {}).get("inPlaceUpdate")
            state = lifecycle.pod_state(pod)
            if state in ("", LIFECYCLE_STATE_PREPARING_NORMAL, LIFECYCLE_STATE_NORMAL):
                if lifecycle.is_hooked(hook, pod):
                    return UpdateKind.PREPARE_UPDATE, ""
            elif state == LIFECYCLE_STATE_UPDATED:
                return UpdateKind.PREPARE_UPDATE, ""
            elif state == LIFECYCLE_STATE_PREPARING_UPDATE:
                if lifecycle.is_hooked(hook, pod):
                    return UpdateKind.WAIT, ""
            elif state != LIFECYCLE_STATE_UPDATING:
                return UpdateKind.BLOCKED, f"not allowed to in-place update pod {name} in state {state}"
            return UpdateKind.IN_PLACE, ""
        if update_type == UPDATE_TYPE_IN_PLACE_ONLY:
            return (
                UpdateKind.BLOCKED,
                f"find Pod {name} update strategy is InPlaceOnly but can not update in-place",
            )
    return UpdateKind.RECREATE, ""


def in_place_spec(
    cloneset: Mapping[str, Any],
    pod: Obj,
    target: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    *,
    env_from_metadata: bool,
    recreate_on_vct_change: bool = False,
    vertical_scaling: bool = False,
) -> UpdateSpec | None:
    """The in-place change from the pod's own revision to ``target`` (None: not possible in place).
    ``vertical_scaling``: the InPlaceWorkloadVerticalScaling gate (cpu/memory changes in place)."""
    old = next((r for r in revisions if equal_to_revision_hash(pod, r["metadata"]["name"])), None)
    if vct_change_forces_recreate(cloneset, old, target, recreate_on_vct_change=recreate_on_vct_change):
        return None
    strategy = section(cloneset, "spec", "updateStrategy").get("inPlaceUpdateStrategy") or {}
    grace = int(strategy.get("gracePeriodSeconds") or 0)
    return calculate_update_spec(
        old,
        target,
        grace_seconds=grace,
        env_from_metadata=env_from_metadata,
        vertical_scaling=vertical_scaling,
    )


def pod_update(
    cloneset: Mapping[str, Any],
    pod: Obj,
    target: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    *,
    env_from_metadata: bool,
    recreate_on_vct_change: bool = False,
    vertical_scaling: bool = False,
) -> PodUpdate:
    spec = in_place_spec(
        cloneset,
        pod,
        target,
        revisions,
        env_from_metadata=env_from_metadata,
        recreate_on_vct_change=recreate_on_vct_change,
        vertical_scaling=vertical_scaling,
    )
    kind, message = pod_update_kind(cloneset, pod, spec is not None)
    hook = (_lifecycle(cloneset) or {}).get("inPlaceUpdate") or {}
    return PodUpdate(
        kind=kind,
        pod=pod,
        target_revision=target["metadata"]["name"],
        spec=spec if kind is UpdateKind.IN_PLACE else None,
        mark_not_ready=bool(hook.get("markPodNotReady")),
        message=message,
    )


def in_place_event_message(pod_name: str, revision: str) -> str:
    return f"successfully update pod {pod_name} in-place(revision {revision})"


def in_place_failed_message(pod_name: str, revision: str, error: str) -> str:
    return f"failed to update pod {pod_name} in-place(revision {revision}): {error}"


def recreate_event_message(pod_name: str, revision: str) -> str:
    return f"successfully patch pod {pod_name} specified-delete for update(revision {revision})"


@dataclass(frozen=True)
class PodRefresh:
    """Writes one pod needs before any update is planned (``refreshPodState`` +
    ``fixPodTemplateHashLabel``). ``inplace`` is the engine's step (object or status write);
    ``lifecycle_state`` the state to patch (with ``mark_not_ready`` from the inPlaceUpdate hook);
    ``template_hash_label`` the missing ``pod-template-hash`` value; ``delay_seconds`` when to
    requeue (grace period)."""

    pod: Obj
    inplace: RefreshResult
    lifecycle_state: str | None
    mark_not_ready: bool
    template_hash_label: str | None

    def matters(self) -> bool:
        """Something for the writer to do or report: a write, a grace-period requeue or an error."""
        return self.writes() or bool(self.inplace.delay_seconds) or self.inplace.error is not None

    def writes(self) -> bool:
        return bool(
            self.inplace.pod is not None
            or self.inplace.status_pod is not None
            or self.lifecycle_state
            or self.template_hash_label
        )


def _waits_for_scheduling(cloneset: Mapping[str, Any], pod: Obj) -> bool:
    """A new pod held in PreparingNormal only until it is scheduled (no preNormal hook). Its first
    status write (both readiness-gate conditions) waits too, and then carries the move to Normal:
    one write instead of two. Nothing observable is lost — a pod without a node has no running
    containers, so its readiness gates cannot matter before then."""
    return lifecycle.pod_state(pod) == LIFECYCLE_STATE_PREPARING_NORMAL and not (
        (_lifecycle(cloneset) or {}).get("preNormal")
    )


def refresh_pod(
    cloneset: Mapping[str, Any],
    pod: Obj,
    update_revision: str,
    now: datetime,
    *,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> PodRefresh:
    """``vertical_scaling`` / ``resize_subresource``: the in-place engine's modes (see ``engine``)."""
    spec_lifecycle = _lifecycle(cloneset) or {}
    step = refresh(
        pod,
        now,
        equal_to_revision_hash,
        vertical_scaling=vertical_scaling,
        resize_subresource=resize_subresource,
    )
    inplace = podreadiness.fold_initial_condition(step, pod, now)
    completed = update_completed_problem(pod, vertical_scaling=vertical_scaling) is None
    labels = labels_of(pod)
    missing_hash = None
    if LABEL_POD_TEMPLATE_HASH not in labels:
        missing_hash = short_hash(labels.get(LABEL_CONTROLLER_REVISION_HASH, ""))
    state = refreshed_lifecycle_state(cloneset, pod, update_revision, completed)
    if state is None and _waits_for_scheduling(cloneset, pod) and inplace.pod is None:
        inplace = replace(inplace, status_pod=None)
    return PodRefresh(
        pod=pod,
        inplace=inplace,
        lifecycle_state=state,
        mark_not_ready=bool(section(spec_lifecycle, "inPlaceUpdate").get("markPodNotReady")),
        template_hash_label=missing_hash,
    )


def first_readiness_refreshes(
    cloneset: Mapping[str, Any],
    pods: Sequence[Obj],
    update_revision: str,
    now: datetime,
    *,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> tuple[PodRefresh, ...]:
    """The refreshes a scale-up carries out before its next creates (issue 27): new pods (PreparingNormal)
    whose refresh is now exactly their first write — one pods/status patch with the readiness-gate
    conditions and the move to Normal — the same write the pass after the scale-up would make.

    Upstream makes it only once scaling is done, so with the client's QPS spent on creates first no
    pod turns Ready until the last create; made before each pass's creates, every pod turns Ready
    about one pass after its own create, for the same writes. Pods whose refresh is anything else
    (not scheduled yet, a preNormal hook pending, a template-hash fix) are left to the update half."""
    steps = []
    for pod in pods:
        if lifecycle.pod_state(pod) != LIFECYCLE_STATE_PREPARING_NORMAL:
            continue
        step = refresh_pod(
            cloneset,
            pod,
            update_revision,
            now,
            vertical_scaling=vertical_scaling,
            resize_subresource=resize_subresource,
        )
        inplace = step.inplace
        if (
            inplace.status_pod is not None
            and inplace.pod is None
            and inplace.error is None
            and not inplace.delay_seconds
            and step.lifecycle_state is not None
            and step.template_hash_label is None
        ):
            steps.append(step)
    return tuple(steps)


@dataclass(frozen=True)
class UpdatePlan:
    """The update half of one pass. ``refreshes`` (every pod needing a write, in pod order) are carried out
    first; ``updates`` are empty when any refresh moves a lifecycle state, because upstream ends the pass
    there and picks new pods only from a settled state on the next one."""

    refreshes: tuple[PodRefresh, ...]
    updates: tuple[PodUpdate, ...]


def plan_update(
    cloneset: Mapping[str, Any],
    pods: Sequence[Obj],
    current_revision: Mapping[str, Any],
    update_revision: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    diffs: ExpectationDiffs,
    now: datetime,
    *,
    env_from_metadata: bool = True,
    recreate_on_vct_change: bool = False,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> UpdatePlan:
    """``vertical_scaling``: the InPlaceWorkloadVerticalScaling gate; ``resize_subresource``: resources
    go through ``pods/resize`` (the refresh steps then carry the resize body)."""
    update_name = update_revision["metadata"]["name"]
    modes = {"vertical_scaling": vertical_scaling, "resize_subresource": resize_subresource}
    refreshes = tuple(
        step for step in (refresh_pod(cloneset, p, update_name, now, **modes) for p in pods) if step.matters()
    )
    if any(step.lifecycle_state for step in refreshes):
        return UpdatePlan(refreshes, ())
    target_name, chosen = pods_to_update(
        cloneset, pods, current_revision["metadata"]["name"], update_name, diffs, now
    )
    target = update_revision if target_name == update_name else current_revision
    updates = (
        pod_update(
            cloneset,
            pod,
            target,
            revisions,
            env_from_metadata=env_from_metadata,
            recreate_on_vct_change=recreate_on_vct_change,
            vertical_scaling=vertical_scaling,
        )
        for pod in chosen
    )
    return UpdatePlan(refreshes, tuple(u for u in updates if u is not None))
