"""One scale pass as a plan (upstream ``realControl.Scale``), for the controller to execute.

The steps are tried in upstream's order and the first one with work wins, because the controller
stops after any write and waits for its expectations: (1) take PreparingDelete pods back when
replicas grew, (2) create pods, (3) finish PreparingDelete pods whose hook was released,
(4) delete specified pods, (5) plain scale-in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from kruise.api.keys import LABEL_CLONESET_INSTANCE_ID
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of, template_of
from kruise.control.cloneset.diffs import calculate_diffs, is_pod_available, is_pod_ready
from kruise.control.cloneset.podchoice import (
    available_instance_ids,
    choose_pods_to_delete,
    limit_ready_deletions,
    marked_for_deletion,
    pods_to_undelete,
    scale_up_limited_message,
    split_by_revision,
    split_creations,
)
from kruise.control.cloneset.podsort import spread_constraint_ranks
from kruise.control.common import lifecycle
from kruise.control.common.revision import equal_to_revision_hash


@dataclass(frozen=True)
class ScalePlan:
    """``undelete``: pods to move back to PreparingNormal. ``create_current``/``create_update``:
    pod counts per revision, using ``instance_ids`` in order. ``prepare_delete``: pods a preDelete
    hook holds (move to PreparingDelete). ``delete``: pods to delete with their PVCs.
    ``scale_up_limited``: Warning event message when creation was capped."""

    undelete: list[Obj] = field(default_factory=list)
    create_current: int = 0
    create_update: int = 0
    instance_ids: list[str] = field(default_factory=list)
    prepare_delete: list[Obj] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)
    scale_up_limited: str | None = None

    def is_empty(self) -> bool:
        return not (
            self.undelete or self.create_current or self.create_update or self.prepare_delete or self.delete
        )


def pvcs_of(pod: Obj, pvcs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """PVCs sharing the pod's instance id (deleted together with it)."""
    pod_id = labels_of(pod).get(LABEL_CLONESET_INSTANCE_ID)
    return [p for p in pvcs if labels_of(p).get(LABEL_CLONESET_INSTANCE_ID) == pod_id]


def _split_hooked(cloneset: Mapping[str, Any], pods: Sequence[Obj], plan: ScalePlan) -> None:
    hook = section(cloneset, "spec", "lifecycle").get("preDelete")
    for pod in pods:
        if lifecycle.is_hooked(hook, pod):
            if lifecycle.pod_state(pod) != "PreparingDelete":
                plan.prepare_delete.append(pod)
        else:
            plan.delete.append(pod)


def plan_scale(
    cloneset: Mapping[str, Any],
    pods: Sequence[Obj],
    pvcs: Sequence[Mapping[str, Any]],
    current_revision: str,
    update_revision: str,
    now: datetime,
    *,
    is_pod_update: Callable[[Obj, str], bool] | None = None,
    node_labels: Mapping[str, Mapping[str, str]] | None = None,
    rng: random.Random | None = None,
    exclude_preparing_delete_flag: bool = False,
    partition_rollback: bool = False,
) -> ScalePlan:
    """``node_labels`` is needed only when the template has topologySpreadConstraints.
    ``is_pod_update`` tells update-revision pods from the others for both the diffs and the choice
    of scale-in victims (upstream passes ``revision.IsPodUpdate``: with gate PreparingUpdateAsUpdate,
    see `kruise.control.common.revision.is_pod_update`); None compares the revision hash only.
    ``partition_rollback`` (gate CloneSetPartitionRollback) counts pods beyond a raised partition as
    due back to the current revision here too: upstream's diffs read the gate on both paths, and
    with maxSurge a rollback surges old-revision pods."""
    specified, preparing, num_to_delete = marked_for_deletion(cloneset, pods)
    undelete = pods_to_undelete(cloneset, pods, preparing, num_to_delete)
    if undelete:
        return ScalePlan(undelete=undelete)

    diffs = calculate_diffs(
        cloneset,
        pods,
        current_revision,
        update_revision,
        now,
        is_pod_update=is_pod_update,
        partition_rollback=partition_rollback,
        exclude_preparing_delete_flag=exclude_preparing_delete_flag,
    )
    limited = (
        scale_up_limited_message(diffs.scale_up_limit) if diffs.scale_up_num > diffs.scale_up_limit else None
    )
    plan = ScalePlan(scale_up_limited=limited)
    if diffs.scale_up_num > 0:
        create_current, create_update = split_creations(diffs.scale_up_limit, diffs.scale_up_num_old_revision)
        return replace(
            plan,
            instance_ids=available_instance_ids(diffs.scale_up_limit, pods, pvcs, rng),
            create_current=create_current,
            create_update=create_update,
        )

    if preparing:
        _split_hooked(cloneset, preparing, plan)
        if plan.delete or plan.prepare_delete:
            return plan

    ready_limit = diffs.delete_ready_limit

    def ready(pod: Obj) -> bool:
        return is_pod_ready(pod, now)

    preparing_names = {meta_of(p).get("name") for p in preparing}
    to_delete = [p for p in specified if meta_of(p).get("name") not in preparing_names]
    if to_delete:
        allowed = limit_ready_deletions(to_delete, ready, ready_limit)
        ready_limit -= sum(1 for p in allowed if ready(p))
        _split_hooked(cloneset, allowed, plan)
        if plan.delete or plan.prepare_delete:
            return plan

    if diffs.scale_down_num > 0 and num_to_delete == 0:
        min_ready = int(spec_of(cloneset).get("minReadySeconds") or 0)
        constraints = template_of(cloneset).get("spec", {}).get("topologySpreadConstraints") or []
        ranker = None
        if constraints:
            keys = [c.get("topologyKey", "") for c in constraints]

            def ranker(group: Sequence[Obj]) -> Mapping[str, float]:
                return spread_constraint_ranks(group, keys, node_labels or {})

        updated, not_updated = split_by_revision(
            pods, update_revision, is_pod_update or equal_to_revision_hash
        )
        victims = choose_pods_to_delete(
            diffs.scale_down_num,
            diffs.scale_down_num_old_revision,
            not_updated,
            updated,
            lambda p: is_pod_available(p, min_ready, now),
            ranker,
        )
        _split_hooked(cloneset, limit_ready_deletions(victims, ready, ready_limit), plan)
    return plan
