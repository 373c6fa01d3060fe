"""`controller.kubernetes.io/pod-deletion-cost` values that make a workload scale in the right pods.

Within a subset the pods up to `maxReplicas` get a positive cost, larger for earlier subsets
(100 × (subsets − index)); pods beyond `maxReplicas` — the ones kube's ActivePods order would
delete first — and pods in no subset get a negative cost, lower for later subsets
(−100 × (index + 1)). The ReplicaSet/CloneSet controllers delete cheaper pods first, so a scale-in
removes over-quota pods, then later subsets before earlier ones. Pods of an old version (not the
workload's latest) are ranked with the subset order reversed, so a rolling update drains them from
the first subsets first. Only CloneSet, Deployment and ReplicaSet honour the annotation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.api.controllerref import controller_of
from kruise.api.objects import Obj, annotations_of, labels_of, meta_of, section, spec_of, status_of
from kruise.control.cloneset.podsort import POD_DELETION_COST, sort_active_pods
from kruise.control.workloadspread.subsets import (
    LABEL_POD_TEMPLATE_HASH,
    VERSION_IGNORED,
    MaxReplicasError,
    scaled_max_replicas,
)

COST_POSITIVE = 100
COST_NEGATIVE = -100
COST_KINDS = frozenset({"CloneSet", "Deployment", "ReplicaSet"})
NO_SUBSET = ""
"""Key of the pods that belong to no subset in `pods_by_subset`."""


def _active(pod: Obj) -> bool:
    phase = status_of(pod).get("phase")
    return phase not in ("Succeeded", "Failed") and not meta_of(pod).get("deletionTimestamp")


def subset_costs(
    pods: Sequence[Obj],
    index: int,
    subsets: int,
    max_replicas: int | str | None,
    workload_replicas: int,
    *,
    in_subset: bool = True,
) -> list[tuple[Obj, int]]:
    """(pod, cost) for the active pods of the subset at (possibly reversed) `index`; `in_subset`
    False for the pods in no subset (all negative). Empty for an invalid maxReplicas."""
    active = [p for p in pods if _active(p)]
    positive = COST_POSITIVE * (subsets - index)
    negative = COST_NEGATIVE * (index + 1)
    if not in_subset:
        return [(p, negative) for p in active]
    if max_replicas is None:
        return [(p, positive) for p in active]
    try:
        limit = scaled_max_replicas(max_replicas, workload_replicas)
    except MaxReplicasError:
        return []
    if limit < 0:
        return []
    if len(active) <= limit:
        return [(p, positive) for p in active]
    ordered = sort_active_pods(active)
    surplus = len(active) - limit
    return [(p, negative if i < surplus else positive) for i, p in enumerate(ordered)]


def deletion_costs(
    ws: Mapping[str, Any],
    pods_by_subset: Mapping[str, Sequence[Obj]],
    workload_replicas: int,
    *,
    old_version: bool = False,
) -> list[tuple[Obj, int]]:
    """Every active pod of one version with the cost it should carry."""
    subsets = list(spec_of(ws).get("subsets") or [])
    count = len(subsets)
    out: list[tuple[Obj, int]] = []
    for i, subset in enumerate(subsets):
        index = count - i - 1 if old_version else i
        out.extend(
            subset_costs(
                pods_by_subset.get(subset["name"]) or [],
                index,
                count,
                subset.get("maxReplicas"),
                workload_replicas,
            )
        )
    if pods_by_subset.get(NO_SUBSET):
        out.extend(
            subset_costs(pods_by_subset[NO_SUBSET], count, count, None, workload_replicas, in_subset=False)
        )
    return out


def cost_patch(pod: Obj, cost: int) -> dict[str, Any] | None:
    """The metadata patch that sets the cost, or None when the pod has it (or 0 and no annotation)."""
    current = annotations_of(pod).get(POD_DELETION_COST)
    value = str(cost)
    if current == value or (current is None and value == "0"):
        return None
    return {"metadata": {"annotations": {POD_DELETION_COST: value}}}


def _without_hash(template: Mapping[str, Any] | None) -> dict[str, Any]:
    body = dict(template or {})
    metadata = dict(meta_of(body))
    labels = {k: v for k, v in section(metadata, "labels").items() if k != LABEL_POD_TEMPLATE_HASH}
    metadata["labels"] = labels
    body["metadata"] = metadata
    return body


def latest_version(workload: Mapping[str, Any], replicasets: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """The version key of the workload's newest pods, as `subsets.pod_version` keys them: a
    ReplicaSet's pod-template-hash; for a Deployment, the hash of its live ReplicaSet whose template
    equals the Deployment's (None while there is none: costs wait); VERSION_IGNORED for the rest."""
    kind = workload.get("kind")
    if kind == "ReplicaSet":
        return labels_of(workload).get(LABEL_POD_TEMPLATE_HASH, "")
    if kind != "Deployment":
        return VERSION_IGNORED
    uid = meta_of(workload).get("uid")
    wanted = _without_hash(spec_of(workload).get("template"))
    for rs in replicasets:
        meta = rs.get("metadata") or {}
        owner = controller_of(rs)
        if owner is None or owner.get("uid") != uid or meta.get("deletionTimestamp"):
            continue
        if _without_hash(spec_of(rs).get("template")) == wanted:
            return section(meta, "labels").get(LABEL_POD_TEMPLATE_HASH, "")
    return None
