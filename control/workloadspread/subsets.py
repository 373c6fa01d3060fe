"""Which subset a new pod of a WorkloadSpread's workload goes to, and the status bookkeeping of it.

Subsets are tried in spec order; a subset takes a pod while its `missingReplicas` is above zero or
is -1 (no `maxReplicas`: unlimited) and it is not marked `Schedulable=False`. A pod admitted into a
limited subset is written into that subset's `creatingPods` (by name, or by a generated id when the
pod only has a generateName) with `missingReplicas` one lower; a pod deleted or evicted from one
goes into `deletingPods` with `missingReplicas` one higher. The controller later replaces both maps
with what it sees in the pods. Because the webhook writes this status with optimistic concurrency,
two concurrent creations that read the same status cannot both take its last slot.

As upstream 1.9, the webhook keeps its books in `status.versionedSubsetStatuses[version]`: pods of a
ReplicaSet (a Deployment) are counted per pod-template-hash, every other pod under "versionIgnored".
A StatefulSet's pods are not counted at all: ordinal n goes to the subset whose cumulative
`maxReplicas` first exceeds n.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.api.conditions import get_condition
from kruise.api.controllerref import controller_of
from kruise.api.objects import MutableObj, annotations_of, labels_of, meta_of, section, spec_of, status_of
from kruise.api.timestamps import rfc3339
from kruise.control.common import podstatus

ANNOTATION_MATCHED = "apps.kruise.io/matched-workloadspread"
VERSION_IGNORED = "versionIgnored"
CONDITION_SCHEDULABLE = "Schedulable"
UNLIMITED = -1
INT32_MAX = 2**31 - 1

LABEL_POD_TEMPLATE_HASH = "pod-template-hash"
LABEL_CONTROLLER_REVISION_HASH = "controller-revision-hash"
# Owner kinds whose pods are counted per version (upstream flag --ws-enabled-versioned-status).
VERSIONED_OWNER_KINDS = frozenset({"deployment", "replicaset"})

_PERCENT = re.compile(r"^(-?[0-9]+)%$")
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


class MaxReplicasError(ValueError):
    """A subset's maxReplicas is neither an integer nor an integer percent."""


@dataclass(frozen=True)
class MatchedSpread:
    """The `apps.kruise.io/matched-workloadspread` annotation: WorkloadSpread, subset, generated id."""

    name: str
    subset: str
    uid: str = ""

    def to_json(self) -> str:
        """Go's encoding of upstream's struct: `{"name":..,"subset":..}` plus `"uid"` when set."""
        body: dict[str, str] = {"name": self.name, "subset": self.subset}
        if self.uid:
            body["uid"] = self.uid
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def of(cls, pod: Mapping[str, Any]) -> MatchedSpread | None:
        """The pod's annotation, or None when absent or not valid JSON of that shape."""
        raw = annotations_of(pod).get(ANNOTATION_MATCHED)
        if not raw:
            return None
        try:
            body = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(body, dict):
            return None
        name, subset, uid = body.get("name", ""), body.get("subset", ""), body.get("uid", "")
        if not all(isinstance(v, str) for v in (name, subset, uid)):
            return None
        return cls(name, subset, uid)


def scaled_max_replicas(max_replicas: int | str | None, workload_replicas: int) -> int:
    """`maxReplicas` against the workload's replicas (percent rounded up); UNLIMITED for nil."""
    if max_replicas is None:
        return UNLIMITED
    if isinstance(max_replicas, bool):
        raise MaxReplicasError(f"maxReplicas: Invalid value: {max_replicas!r}: must be an int or a percent")
    if isinstance(max_replicas, int):
        return max_replicas
    match = _PERCENT.match(str(max_replicas))
    if not match:
        raise MaxReplicasError(f"maxReplicas: Invalid value: {max_replicas!r}: must be an int or a percent")
    return math.ceil(int(match.group(1)) * workload_replicas / 100)


def has_percent_subset(ws: Mapping[str, Any]) -> bool:
    """Only percentages need the workload's replicas."""
    return any(
        isinstance(s.get("maxReplicas"), str) and str(s["maxReplicas"]).endswith("%") for s in _subsets(ws)
    )


def _subsets(ws: Mapping[str, Any]) -> list[MutableObj]:
    return list(spec_of(ws).get("subsets") or [])


def pod_version(pod: Mapping[str, Any]) -> str:
    """The key of the versioned subset statuses this pod is counted under."""
    owner = controller_of(pod)
    if owner is None or str(owner.get("kind", "")).lower() not in VERSIONED_OWNER_KINDS:
        return VERSION_IGNORED
    labels = labels_of(pod)
    if LABEL_POD_TEMPLATE_HASH in labels:
        return labels[LABEL_POD_TEMPLATE_HASH]
    if LABEL_CONTROLLER_REVISION_HASH in labels:
        return labels[LABEL_CONTROLLER_REVISION_HASH].split("-")[-1]
    return VERSION_IGNORED


def initial_subset_statuses(ws: Mapping[str, Any], workload_replicas: int) -> list[MutableObj]:
    """Fresh books: every subset with its whole quota missing (-1 when unlimited)."""
    return [
        {
            "name": s["name"],
            "replicas": 0,
            "missingReplicas": scaled_max_replicas(s.get("maxReplicas"), workload_replicas),
        }
        for s in _subsets(ws)
    ]


def schedulable(status: Mapping[str, Any]) -> bool:
    return (get_condition(status, CONDITION_SCHEDULABLE) or {}).get("status") != "False"


def suitable_subset(statuses: Sequence[Mapping[str, Any]]) -> int | None:
    """Index of the first schedulable subset with room, or None when every subset is full."""
    for i, status in enumerate(statuses):
        missing = int(status.get("missingReplicas", 0))
        if schedulable(status) and (missing > 0 or missing == UNLIMITED):
            return i
    return None


def recorded_in(statuses: Sequence[Mapping[str, Any]], pod_name: str) -> Mapping[str, Any] | None:
    """The subset whose creatingPods or deletingPods already holds this pod."""
    for status in statuses:
        if pod_name in section(status, "creatingPods") or pod_name in section(status, "deletingPods"):
            return status
    return None


@dataclass(frozen=True)
class Assignment:
    """What a CREATE does: the chosen subset (None: no room anywhere, the pod is left alone), the id
    generated for a pod without a name, and the WorkloadSpread to write back (None: no write)."""

    subset: str | None
    uid: str = ""
    updated: MutableObj | None = None


def _books(ws: MutableObj, version: str, workload_replicas: int) -> list[MutableObj]:
    status = ws.setdefault("status", {})
    versioned = status.get("versionedSubsetStatuses") or {}
    status["versionedSubsetStatuses"] = versioned
    if not versioned.get(version):
        versioned[version] = initial_subset_statuses(ws, workload_replicas)
    return versioned[version]


def statefulset_subset(ws: Mapping[str, Any], pod: Mapping[str, Any]) -> str | None:
    """A StatefulSet pod's subset from its ordinal: each subset holds the next `maxReplicas` ordinals."""
    match = _ORDINAL.match(meta_of(pod).get("name") or "")
    ordinal = int(match.group(2)) if match else -1
    statuses = {s.get("name"): s for s in status_of(ws).get("subsetStatuses") or []}
    threshold = 0
    for subset in _subsets(ws):
        if not schedulable(statuses.get(subset["name"]) or {}):
            continue
        limit = subset.get("maxReplicas")
        threshold += INT32_MAX if limit is None else scaled_max_replicas(limit, 0)
        if ordinal < threshold:
            return subset["name"]
    return None


def assign_for_creation(
    ws: Mapping[str, Any],
    pod: Mapping[str, Any],
    now: datetime,
    workload_replicas: int,
    new_uid: Callable[[], str],
) -> Assignment:
    """The subset for a new pod, from the WorkloadSpread as last read (the input is not changed).

    `workload_replicas` only matters for percentages and only when the version's books start fresh.
    Raises MaxReplicasError for a maxReplicas that is not an int or percent.
    """
    subsets = _subsets(ws)
    if len(subsets) == 1 and subsets[0].get("maxReplicas") is None:
        return Assignment(subsets[0]["name"])
    target = section(ws, "spec", "targetRef").get("kind")
    if target == "StatefulSet":
        return Assignment(statefulset_subset(ws, pod))
    updated = copy.deepcopy(dict(ws))
    statuses = _books(updated, pod_version(pod), workload_replicas)
    pod_name = meta_of(pod).get("name") or ""
    if pod_name:
        already = recorded_in(statuses, pod_name)
        if already is not None:
            return Assignment(already.get("name"))
    index = suitable_subset(statuses)
    if index is None:
        return Assignment(None)
    chosen = statuses[index]
    if int(chosen.get("missingReplicas", 0)) == UNLIMITED:
        return Assignment(chosen["name"])
    uid = "" if pod_name else new_uid()
    creating = chosen.get("creatingPods") or {}
    creating[pod_name or uid] = rfc3339(now)
    chosen["creatingPods"] = creating
    chosen["missingReplicas"] = int(chosen["missingReplicas"]) - 1
    return Assignment(chosen["name"], uid, updated)


def deletion_booking(pod: Mapping[str, Any]) -> MatchedSpread | None:
    """The WorkloadSpread and subset a pod being deleted or evicted is booked out of, or None when
    the deletion changes no books: as upstream, only an active pod (not Succeeded/Failed, not already
    terminating) with a controller and a readable `matched-workloadspread` annotation naming a
    WorkloadSpread counts."""
    matched = MatchedSpread.of(pod)
    if matched is None or not matched.name:
        return None
    if not podstatus.is_active(pod) or controller_of(pod) is None:
        return None
    return matched


def record_deletion(
    ws: Mapping[str, Any], pod: Mapping[str, Any], subset: str, now: datetime, workload_replicas: int
) -> MutableObj | None:
    """The WorkloadSpread with a deleted/evicted pod put into its subset's deletingPods and one more
    missing replica (when not already negative), or None when nothing changes: a single unlimited
    subset or a StatefulSet target (neither keeps books), a pod already in some subset's
    creatingPods/deletingPods of its version, an unknown subset, an unlimited subset. The input is not
    changed. `workload_replicas` only matters for percentages when the version's books start fresh."""
    subsets = _subsets(ws)
    if len(subsets) == 1 and subsets[0].get("maxReplicas") is None:
        return None
    if section(ws, "spec", "targetRef").get("kind") == "StatefulSet":
        return None
    updated = copy.deepcopy(dict(ws))
    statuses = _books(updated, pod_version(pod), workload_replicas)
    pod_name = meta_of(pod).get("name") or ""
    if recorded_in(statuses, pod_name) is not None:
        return None
    chosen = next((s for s in statuses if s.get("name") == subset), None)
    if chosen is None or int(chosen.get("missingReplicas", 0)) == UNLIMITED:
        return None
    deleting = chosen.get("deletingPods") or {}
    deleting[pod_name] = rfc3339(now)
    chosen["deletingPods"] = deleting
    if int(chosen.get("missingReplicas", 0)) >= 0:
        chosen["missingReplicas"] = int(chosen["missingReplicas"]) + 1
    return updated
