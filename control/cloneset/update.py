"""Update planning for CloneSet: lifecycle refresh, candidate choice and order, and the budget.

Mirrors upstream ``cloneset_update.go``: first every pod's state is refreshed (if anything was
written, the pass ends); then, unless paused, candidates not at the target revision are sorted
(ActivePods, priority, scatter, PreparingUpdate first) and cut to |updateNum| and to the
unavailability budget. Each chosen pod then goes through :func:`pod_update_action`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
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
from kruise.api.workload_common import UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY
from kruise.control import lifecycle
from kruise.control.cloneset.diffs import ExpectationDiffs, is_pod_available
from kruise.control.cloneset.podsort import sort_active_pods
from kruise.control.inplace.engine import RefreshResult, refresh, update_completed_problem
from kruise.control.inplace.state import get_grace_json
from kruise.control.revision import equal_to_revision_hash, short_hash
from kruise.control.updatesort import priority_sort, scatter_sort

Pod = Mapping[str, Any]


def _lifecycle(cloneset: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return (cloneset.get("spec") or {}).get("lifecycle")


def _after_update_state(cloneset: Mapping[str, Any], pod: Pod) -> str:
    spec_lifecycle = _lifecycle(cloneset)
    if spec_lifecycle is not None and not lifecycle.is_all_hooked(spec_lifecycle.get("inPlaceUpdate"), pod):
        return LIFECYCLE_STATE_UPDATED
    return LIFECYCLE_STATE_NORMAL


def refreshed_lifecycle_state(
    cloneset: Mapping[str, Any], pod: Pod, update_revision: str, update_completed: bool
) -> str | None:
    """The lifecycle state the pod should move to now (``refreshPodState``), or None to stay.

    ``update_completed`` is the in-place engine's verdict (``update_completed_problem`` is None).
    """
    spec_lifecycle = _lifecycle(cloneset)
    state = lifecycle.pod_state(pod)
    if state == LIFECYCLE_STATE_PREPARING_NORMAL:
        hook = (spec_lifecycle or {}).get("preNormal")
        done = lifecycle.is_all_hooked(hook, pod) if hook else bool((pod.get("spec") or {}).get("nodeName"))
        return LIFECYCLE_STATE_NORMAL if done else None
    if state == LIFECYCLE_STATE_PREPARING_UPDATE:
        return _after_update_state(cloneset, pod) if equal_to_revision_hash(pod, update_revision) else None
    if state == LIFECYCLE_STATE_UPDATING:
        return _after_update_state(cloneset, pod) if update_completed else None
    if state == LIFECYCLE_STATE_UPDATED:
        hook = (spec_lifecycle or {}).get("inPlaceUpdate")
        return LIFECYCLE_STATE_NORMAL if not hook or lifecycle.is_all_hooked(hook, pod) else None
    return None


def update_candidates(pods: Sequence[Pod], update_revision: str, update_num: int) -> list[Pod]:
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
    cloneset: Mapping[str, Any], all_pods: Sequence[Pod], candidates: Sequence[Pod]
) -> list[Pod]:
    strategy = (cloneset.get("spec") or {}).get("updateStrategy") or {}
    ordered = sort_active_pods(candidates)
    ordered = priority_sort(ordered, strategy.get("priorityStrategy"))
    ordered = scatter_sort(all_pods, ordered, strategy.get("scatterStrategy"))
    return sorted(ordered, key=lambda p: lifecycle.pod_state(p) != LIFECYCLE_STATE_PREPARING_UPDATE)


def limit_update_candidates(
    cloneset: Mapping[str, Any],
    all_pods: Sequence[Pod],
    candidates: Sequence[Pod],
    diffs: ExpectationDiffs,
    target_revision: str,
    now: datetime,
) -> list[Pod]:
    """Cut to |updateNum|, then stop before unavailable pods would exceed the budget: pods of the
    target revision already unavailable count against it, and so does every available pod we
    are about to take down."""
    min_ready = int((cloneset.get("spec") or {}).get("minReadySeconds") or 0)
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


def plan_updates(
    cloneset: Mapping[str, Any],
    pods: Sequence[Pod],
    current_revision: str,
    update_revision: str,
    diffs: ExpectationDiffs,
    now: datetime,
) -> tuple[str, list[Pod]]:
    """(target revision, pods to update now, in order). Empty when paused, OnDelete or done."""
    strategy = (cloneset.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type") == "OnDelete" or strategy.get("paused") or diffs.update_num == 0:
        return update_revision, []
    target = update_revision if diffs.update_num > 0 else current_revision
    candidates = update_candidates(pods, update_revision, diffs.update_num)
    ordered = sort_update_candidates(cloneset, pods, candidates)
    return target, limit_update_candidates(cloneset, pods, ordered, diffs, target, now)


@dataclass(frozen=True)
class PodUpdateAction:
    """What to do with one chosen pod.

    kind: ``"preparing-update"`` (move to PreparingUpdate and wait for the hook),
    ``"wait"`` (hook still held), ``"in-place"`` (run the in-place engine; set state Updating),
    ``"recreate"`` (label specified-delete), ``"error"`` (``message`` says why).
    """

    kind: str
    message: str = ""


def pod_update_action(cloneset: Mapping[str, Any], pod: Pod, can_in_place: bool) -> PodUpdateAction:
    """``updatePod``: ``can_in_place`` is whether the in-place engine produced a spec from the
    pod's revision to the target (``calculate_update_spec`` is not None)."""
    strategy = (cloneset.get("spec") or {}).get("updateStrategy") or {}
    update_type = strategy.get("type")
    name = (pod.get("metadata") or {}).get("name", "")
    if update_type in (UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY):
        if can_in_place:
            hook = (_lifecycle(cloneset) or {}).get("inPlaceUpdate")
            state = lifecycle.pod_state(pod)
            if state in ("", LIFECYCLE_STATE_PREPARING_NORMAL, LIFECYCLE_STATE_NORMAL):
                if lifecycle.is_hooked(hook, pod):
                    return PodUpdateAction("preparing-update")
            elif state == LIFECYCLE_STATE_UPDATED:
                return PodUpdateAction("preparing-update")
            elif state == LIFECYCLE_STATE_PREPARING_UPDATE:
                if lifecycle.is_hooked(hook, pod):
                    return PodUpdateAction("wait")
            elif state != LIFECYCLE_STATE_UPDATING:
                return PodUpdateAction("error", f"not allowed to in-place update pod {name} in state {state}")
            return PodUpdateAction("in-place")
        if update_type == UPDATE_TYPE_IN_PLACE_ONLY:
            return PodUpdateAction(
                "error", f"find Pod {name} update strategy is InPlaceOnly but can not update in-place"
            )
    return PodUpdateAction("recreate")


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

    inplace: RefreshResult
    lifecycle_state: str | None
    mark_not_ready: bool
    template_hash_label: str | None

    def writes(self) -> bool:
        return bool(
            self.inplace.pod is not None
            or self.inplace.status_pod is not None
            or self.lifecycle_state
            or self.template_hash_label
        )


def refresh_pod(cloneset: Mapping[str, Any], pod: Pod, update_revision: str, now: datetime) -> PodRefresh:
    spec_lifecycle = _lifecycle(cloneset) or {}
    inplace = refresh(pod, now, equal_to_revision_hash)
    completed = update_completed_problem(pod) is None
    labels = (pod.get("metadata") or {}).get("labels") or {}
    missing_hash = None
    if LABEL_POD_TEMPLATE_HASH not in labels:
        missing_hash = short_hash(labels.get(LABEL_CONTROLLER_REVISION_HASH, ""))
    return PodRefresh(
        inplace=inplace,
        lifecycle_state=refreshed_lifecycle_state(cloneset, pod, update_revision, completed),
        mark_not_ready=bool((spec_lifecycle.get("inPlaceUpdate") or {}).get("markPodNotReady")),
        template_hash_label=missing_hash,
    )
