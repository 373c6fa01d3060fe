"""How many pods to create, delete and update in one reconcile (upstream
``calculateDiffsWithExpectation``, the heart of the CloneSet controller).

Scale and update are never both acted upon in one pass; the controller re-runs this after its
expectations are satisfied, so every number here is computed from the observed pods only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from kruise.api.keys import LABEL_SPECIFIED_DELETE, LIFECYCLE_STATE_NORMAL, LIFECYCLE_STATE_PREPARING_DELETE
from kruise.api.objects import Obj, section, spec_of
from kruise.control.cloneset.strategy import excludes_preparing_delete, rollout_limits
from kruise.control.common import lifecycle, podstatus
from kruise.control.common.revision import equal_to_revision_hash


@dataclass(frozen=True)
class ExpectationDiffs:
    """Field meanings follow upstream: ``*_old_revision`` parts are subsets of the totals;
    ``update_num`` > 0 updates towards the update revision, < 0 rolls back."""

    scale_up_num: int = 0
    scale_up_num_old_revision: int = 0
    scale_down_num: int = 0
    scale_down_num_old_revision: int = 0
    scale_up_limit: int = 0
    delete_ready_limit: int = 0
    use_surge: int = 0
    use_surge_old_revision: int = 0
    update_num: int = 0
    update_max_unavailable: int = 0

    def is_empty(self) -> bool:
        return not any(asdict(self).values())


def is_specified_delete(cloneset: Mapping[str, Any], pod: Obj) -> bool:
    """Marked by the ``apps.kruise.io/specified-delete`` label (any value) or in podsToDelete."""
    meta = pod.get("metadata") or {}
    if LABEL_SPECIFIED_DELETE in section(meta, "labels"):
        return True
    to_delete = section(cloneset, "spec", "scaleStrategy").get("podsToDelete") or []
    return meta.get("name") in to_delete


def is_pod_available(pod: Obj, min_ready_seconds: int, now: datetime) -> bool:
    """Available for CloneSet: lifecycle Normal (or unset) and update-ready for minReadySeconds."""
    state = lifecycle.pod_state(pod)
    if state and state != LIFECYCLE_STATE_NORMAL:
        return False
    return podstatus.is_update_ready(pod, min_ready_seconds, now)


def is_pod_ready(pod: Obj, now: datetime) -> bool:
    """``isPodReady`` used to limit deletions of ready pods: available ignoring minReadySeconds."""
    return is_pod_available(pod, 0, now)


def calculate_diffs(
    cloneset: Mapping[str, Any],
    pods: Sequence[Obj],
    current_revision: str,
    update_revision: str,
    now: datetime,
    *,
    is_pod_update: Callable[[Obj, str], bool] | None = None,
    partition_rollback: bool = False,
    exclude_preparing_delete_flag: bool = False,
) -> ExpectationDiffs:
    limits = rollout_limits(cloneset)
    replicas, partition = limits.replicas, limits.partition
    max_surge, max_unavailable = limits.max_surge, limits.max_unavailable
    min_ready = int(spec_of(cloneset).get("minReadySeconds") or 0)
    matches = is_pod_update or equal_to_revision_hash

    count = {True: 0, False: 0}
    active = {True: 0, False: 0}
    unavailable = {True: 0, False: 0}
    to_delete = {True: 0, False: 0}
    pre_deleting = {True: 0, False: 0}
    for pod in pods:
        new = bool(matches(pod, update_revision))
        count[new] += 1
        if lifecycle.pod_state(pod) == LIFECYCLE_STATE_PREPARING_DELETE:
            pre_deleting[new] += 1
            continue
        active[new] += 1
        if is_specified_delete(cloneset, pod):
            to_delete[new] += 1
        elif not is_pod_available(pod, min_ready, now):
            unavailable[new] += 1

    update_old_diff = active[False] - partition
    update_new_diff = active[True] - (replicas - partition)
    total_unavailable = sum(pre_deleting.values()) + sum(unavailable.values())
    if update_revision == current_revision or not partition_rollback:
        update_old_diff = max(update_old_diff, 0)
        update_new_diff = min(update_new_diff, 0)

    use_surge = use_surge_old = 0
    if max_surge > 0:
        scale_surge = scale_old_surge = 0
        to_delete_total = to_delete[True] + to_delete[False]
        if to_delete_total > 0:
            scale_surge = min(max(total_unavailable + to_delete_total - max_unavailable, 0), to_delete_total)
            if scale_surge > to_delete[True]:
                scale_old_surge = scale_surge - to_delete[True]
        update_surge = update_old_surge = 0
        if (update_old_diff > 0 and update_new_diff < 0) or (update_old_diff < 0 and update_new_diff > 0):
            if abs(update_old_diff) <= abs(update_new_diff):
                update_surge = abs(update_old_diff)
                if update_old_diff < 0:
                    update_old_surge = update_surge
            else:
                update_surge = abs(update_new_diff)
                if update_new_diff > 0:
                    update_old_surge = update_surge
        if scale_surge >= update_surge:
            use_surge = min(max_surge, scale_surge)
            use_surge_old = min(use_surge, scale_old_surge)
        else:
            use_surge = min(max_surge, update_surge)
            use_surge_old = min(use_surge, update_old_surge)

    total_count = len(pods)
    total_old = count[False]
    if excludes_preparing_delete(cloneset, exclude_preparing_delete_flag):
        total_count -= pre_deleting[False] + pre_deleting[True]
        total_old -= pre_deleting[False]
    expected_total = replicas + use_surge
    expected_old = partition + use_surge_old

    scale_up = scale_up_old = scale_up_limit = 0
    if (num := expected_total - total_count) > 0:
        scale_up = num
        scale_up_old = max(expected_old - total_old, 0)
        scale_up_limit = min(scale_up, max(limits.scale_max_unavailable - total_unavailable, 0))

    scale_down = scale_down_old = 0
    if (num := total_count - to_delete[False] - to_delete[True] - expected_total) > 0:
        scale_down = num
        scale_down_old = max(total_old - to_delete[False] - expected_old, 0)
    delete_ready_limit = 0
    if to_delete[True] > 0 or to_delete[False] > 0 or scale_down > 0:
        delete_ready_limit = max(max_unavailable + (len(pods) - replicas) - total_unavailable, 0)

    update_num = update_old_diff if abs(update_old_diff) <= abs(update_new_diff) else -update_new_diff
    update_max_unavailable = max_unavailable + len(pods) - replicas if update_num != 0 else 0

    return ExpectationDiffs(
        scale_up_num=scale_up,
        scale_up_num_old_revision=scale_up_old,
        scale_down_num=scale_down,
        scale_down_num_old_revision=scale_down_old,
        scale_up_limit=scale_up_limit,
        delete_ready_limit=delete_ready_limit,
        use_surge=use_surge,
        use_surge_old_revision=use_surge_old,
        update_num=update_num,
        update_max_unavailable=update_max_unavailable,
    )
