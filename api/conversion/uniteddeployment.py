"""UnitedDeployment v1alpha1 <-> v1beta1 (apps.kruise.io; v1beta1 is master's storage version).

The spec has the same shape in both versions (the subset templates are the child kinds' own specs,
passed through). The status is restructured: v1beta1 keeps everything per subset in
`status.subsetStatuses[]` and drops the v1alpha1 maps.

- v1alpha1 `status.subsetReplicas[<subset>]` is `status.subsetStatuses[name=<subset>].replicas`;
- v1alpha1 `status.updateStatus.currentPartitions[<subset>]` is
  `status.subsetStatuses[name=<subset>].partition`;
- v1alpha1 `status.updateStatus.updatedRevision` is `status.updatedRevision`.

To v1beta1, a subset named in a map but missing from `subsetStatuses` gets an entry appended (in
name order; upstream appends in Go's random map order), and a zero count is left out as Go's
omitempty does. To v1alpha1, both maps are rebuilt from the named subset statuses (a missing count
is 0; for a repeated name the last entry wins), and `updateStatus` is absent only when there is
neither an updated revision nor a subset status, as upstream.
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.fields import child, int32_map, integer, object_list, string

GROUP = "apps.kruise.io"
KIND = "UnitedDeployment"
PATH = "status.subsetStatuses"


def _subset_status(statuses: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The first status of subset `name` (upstream's GetSubsetStatus), appended when there is none."""
    for index, status in enumerate(statuses):
        if string(status, "name", f"{PATH}[{index}]") == name:
            return status
    status = {"name": name}
    statuses.append(status)
    return status


def _set_count(status: dict[str, Any], key: str, value: int) -> None:
    if value:
        status[key] = value
    else:
        status.pop(key, None)


def to_v1beta1(obj: dict[str, Any]) -> None:
    status = child(obj, "status", "")
    if status is None:
        return
    replicas = int32_map(status, "subsetReplicas", "status") or {}
    update = child(status, "updateStatus", "status") or {}
    partitions = int32_map(update, "currentPartitions", "status.updateStatus") or {}
    revision = string(update, "updatedRevision", "status.updateStatus")
    status.pop("subsetReplicas", None)
    status.pop("updateStatus", None)
    status.pop("updatedRevision", None)
    if revision:
        status["updatedRevision"] = revision
    if not replicas and not partitions:
        return
    statuses = object_list(status, "subsetStatuses", "status")
    for key, counts in (("replicas", replicas), ("partition", partitions)):
        for name in sorted(counts):
            _set_count(_subset_status(statuses, name), key, counts[name])
    status["subsetStatuses"] = statuses


def to_v1alpha1(obj: dict[str, Any]) -> None:
    status = child(obj, "status", "")
    if status is None:
        return
    revision = string(status, "updatedRevision", "status")
    status.pop("updatedRevision", None)
    status.pop("subsetReplicas", None)
    status.pop("updateStatus", None)
    statuses = object_list(status, "subsetStatuses", "status")
    replicas: dict[str, int] = {}
    partitions: dict[str, int] = {}
    for index, subset in enumerate(statuses):
        path = f"{PATH}[{index}]"
        name = string(subset, "name", path)
        if not name:
            continue
        replicas[name] = integer(subset, "replicas", path) or 0
        partitions[name] = integer(subset, "partition", path) or 0
    if replicas:
        status["subsetReplicas"] = replicas
    if not revision and not statuses:
        return
    update: dict[str, Any] = {}
    if revision:
        update["updatedRevision"] = revision
    if partitions:
        update["currentPartitions"] = partitions
    status["updateStatus"] = update
