"""Which pods and instance ids a scale pass works on: ids to create, pods to delete, undelete, truncate.

The building blocks of `kruise.control.cloneset.scale.plan_scale`, kept apart so each rule (instance id
reuse, deletion order, the scaleStrategy.maxUnavailable limit) is testable on its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kruise.api.keys import LABEL_CLONESET_INSTANCE_ID, LIFECYCLE_STATE_PREPARING_DELETE
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of
from kruise.control.cloneset.diffs import is_specified_delete
from kruise.control.cloneset.podsort import sort_for_deletion
from kruise.control.common import lifecycle
from kruise.control.common.revision import equal_to_revision_hash

INSTANCE_ID_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
INSTANCE_ID_LENGTH = 5


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return labels_of(obj)


def random_instance_id(rng: random.Random | None = None) -> str:
    """``rand.String(5)``: five characters from the vowel-free alphabet."""
    pick = rng or random.SystemRandom()
    return "".join(pick.choice(INSTANCE_ID_ALPHABET) for _ in range(INSTANCE_ID_LENGTH))


def available_instance_ids(
    count: int,
    pods: Iterable[Obj],
    pvcs: Iterable[Mapping[str, Any]],
    rng: random.Random | None = None,
) -> list[str]:
    """Ids for ``count`` new pods: first ids of PVCs whose pod is gone (so the replacement
    re-attaches them), then fresh random ids colliding with no existing pod or PVC."""
    existing: set[str] = set()
    orphan: list[str] = []
    pod_ids = {_labels(p).get(LABEL_CLONESET_INSTANCE_ID) for p in pods} - {None, ""}
    for pvc in pvcs:
        pvc_id = _labels(pvc).get(LABEL_CLONESET_INSTANCE_ID)
        if pvc_id:
            existing.add(pvc_id)
            if pvc_id not in pod_ids and pvc_id not in orphan:
                orphan.append(pvc_id)
    existing |= {i for i in pod_ids if i}
    chosen: list[str] = []
    for _ in range(count):
        if orphan:
            new_id = orphan.pop(0)
        else:
            new_id = random_instance_id(rng)
            while new_id in existing:
                new_id = random_instance_id(rng)
        existing.add(new_id)
        chosen.append(new_id)
    return chosen


def marked_for_deletion(cloneset: Mapping[str, Any], pods: Sequence[Obj]) -> tuple[list[Obj], list[Obj], int]:
    """(specified-delete pods, PreparingDelete pods, number of distinct pods in either)."""
    specified = [p for p in pods if is_specified_delete(cloneset, p)]
    preparing = [p for p in pods if lifecycle.pod_state(p) == LIFECYCLE_STATE_PREPARING_DELETE]
    names = {meta_of(p).get("name") for p in specified + preparing}
    return specified, preparing, len(names)


def split_by_revision(
    pods: Sequence[Obj],
    update_revision: str,
    is_pod_update: Callable[[Obj, str], bool] = equal_to_revision_hash,
) -> tuple[list[Obj], list[Obj]]:
    """(pods at the update revision, the others); ``is_pod_update`` decides which is which
    (``GroupUpdateAndNotUpdatePods`` with gate PreparingUpdateAsUpdate)."""
    updated = [p for p in pods if is_pod_update(p, update_revision)]
    return updated, [p for p in pods if not is_pod_update(p, update_revision)]


def choose_pods_to_delete(
    total: int,
    old_revision: int,
    not_updated: Sequence[Obj],
    updated: Sequence[Obj],
    available: Callable[[Obj], bool],
    ranker: Callable[[Sequence[Obj]], Mapping[str, float]] | None = None,
) -> list[Obj]:
    """Scale-in victims: old-revision pods first (up to ``old_revision``), then updated ones.

    ``ranker`` ranks the pods of one group (default: same-node crowding within the group)."""

    def choose(group: Sequence[Obj], diff: int) -> list[Obj]:
        if diff >= len(group):
            return list(group)
        return sort_for_deletion(group, available, ranker(group) if ranker else None)[:diff]

    if old_revision >= total:
        return choose(not_updated, total)
    if old_revision > 0:
        return choose(not_updated, old_revision) + choose(updated, total - old_revision)
    return choose(updated, total)


def limit_ready_deletions(
    candidates: Sequence[Obj], ready: Callable[[Obj], bool], ready_limit: int
) -> list[Obj]:
    """Unready pods may always go; ready ones only while ``ready_limit`` lasts."""
    allowed: list[Obj] = []
    for pod in candidates:
        if not ready(pod):
            allowed.append(pod)
        elif ready_limit > 0:
            allowed.append(pod)
            ready_limit -= 1
    return allowed


def scale_up_limited_message(limit: int) -> str:
    return f"scaleUp is limited because of scaleStrategy.maxUnavailable, limit: {limit}"


def split_creations(expected: int, expected_current: int) -> tuple[int, int]:
    """(pods to create at the current revision, pods at the update revision)."""
    if expected <= expected_current:
        return expected, 0
    return expected_current, expected - expected_current


def pods_to_undelete(
    cloneset: Mapping[str, Any], pods: Sequence[Obj], preparing_delete: Sequence[Obj], num_to_delete: int
) -> list[Obj]:
    """PreparingDelete pods to move back to PreparingNormal because replicas grew again
    (``managePreparingDelete``). Never when a hook marks pods not ready (no regret once the pod
    was taken out of service), and never for pods explicitly specified for deletion."""
    if lifecycle.marks_pod_not_ready(spec_of(cloneset).get("lifecycle")):
        return []
    replicas = spec_of(cloneset).get("replicas")
    diff = (1 if replicas is None else int(replicas)) - len(pods) + num_to_delete
    chosen: list[Obj] = []
    for pod in preparing_delete:
        if diff <= 0:
            break
        if is_specified_delete(cloneset, pod):
            continue
        chosen.append(pod)
        diff -= 1
    return chosen


def truncated_pods_to_delete(cloneset: Mapping[str, Any], pods: Iterable[Obj]) -> list[str] | None:
    """The podsToDelete list without names of pods that no longer exist; None if unchanged."""
    names = section(cloneset, "spec", "scaleStrategy").get("podsToDelete") or []
    existing = {meta_of(p).get("name") for p in pods}
    kept = [n for n in names if n in existing]
    return None if len(kept) == len(names) else kept
