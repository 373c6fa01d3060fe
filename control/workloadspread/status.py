"""A WorkloadSpread's status recomputed from the pods the controller sees.

The webhook books pods it admits into `creatingPods` and pods it lets go into `deletingPods`; the
controller owns the truth. Pods are grouped by the subset named in their
`apps.kruise.io/matched-workloadspread` annotation (pods with no annotation for this WorkloadSpread,
or naming a subset that no longer exists, fall in no subset), and by version as the webhook counts
them. Per subset: `replicas` is the number of active pods, `missingReplicas` starts at the scaled
`maxReplicas` (-1 unlimited) and drops by one per active pod, never below zero.

A `creatingPods` entry is dropped once its pod is seen (by name, or by the generated id in the
annotation); an unseen one is kept, and counted as created, for 30s after its booking, then dropped
with a `CreatePodFailed` warning. A `deletingPods` entry is kept, and counted as gone, while its pod is
still active within 15s of its booking, then dropped with `DeletePodFailed`; an entry whose pod is
no longer active is simply forgotten. The controller asks to run again when the first kept entry
expires. Without the Adaptive strategy no subset carries a `Schedulable` condition; with it, see
`kruise.control.workloadspread.reschedule`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kruise.api.conditions import get_condition
from kruise.api.objects import MutableObj, Obj, meta_of, section, spec_of
from kruise.api.timestamps import parse_time
from kruise.control.common import podstatus
from kruise.control.workloadspread import reschedule
from kruise.control.workloadspread.deletioncost import NO_SUBSET
from kruise.control.workloadspread.subsets import (
    CONDITION_SCHEDULABLE,
    UNLIMITED,
    MatchedSpread,
    MaxReplicasError,
    pod_version,
    scaled_max_replicas,
)

CREATE_POD_TIMEOUT = timedelta(seconds=30)
DELETE_POD_TIMEOUT = timedelta(seconds=15)
ADAPTIVE = "Adaptive"


@dataclass
class Notes:
    """What a status computation wants reported: warning events and the earliest re-run."""

    events: list[tuple[str, str]] = field(default_factory=list)
    requeue_after: timedelta | None = None
    normal_events: list[tuple[str, str]] = field(default_factory=list)
    failed_to_schedule: list[tuple[str, Obj]] = field(default_factory=list)
    """(subset, pod) the Adaptive strategy deletes after the status write (overall books only)."""

    def warn(self, reason: str, message: str) -> None:
        """Once per (reason, message): overall and versioned books may both hold the same pod."""
        if (reason, message) not in self.events:
            self.events.append((reason, message))

    def inform(self, reason: str, message: str) -> None:
        if (reason, message) not in self.normal_events:
            self.normal_events.append((reason, message))

    def requeue(self, after: timedelta) -> None:
        if self.requeue_after is None or after < self.requeue_after:
            self.requeue_after = after


def subset_of(ws: Mapping[str, Any], pod: Obj) -> str:
    """The subset this WorkloadSpread's annotation on the pod names, or NO_SUBSET."""
    matched = MatchedSpread.of(pod)
    name = (meta_of(ws).get("name")) or ""
    if matched is None or matched.name != name or not matched.subset:
        return NO_SUBSET
    subsets = {s.get("name") for s in spec_of(ws).get("subsets") or []}
    return matched.subset if matched.subset in subsets else NO_SUBSET


def group_pods(
    ws: Mapping[str, Any], pods: Sequence[Obj]
) -> tuple[dict[str, dict[str, list[Obj]]], dict[str, list[Obj]]]:
    """(version → subset → pods, subset → pods); every subset has a (possibly empty) list."""
    names = [s.get("name") for s in spec_of(ws).get("subsets") or []]

    def empty() -> dict[str, list[Obj]]:
        return {NO_SUBSET: [], **{n: [] for n in names}}

    by_subset = empty()
    versioned: dict[str, dict[str, list[Obj]]] = {}
    for pod in pods:
        subset = subset_of(ws, pod)
        by_subset[subset].append(pod)
        versioned.setdefault(pod_version(pod), empty())[subset].append(pod)
    return versioned, by_subset


def subset_status(
    ws: Mapping[str, Any],
    subset: Mapping[str, Any],
    pods: Sequence[Obj],
    old: Mapping[str, Any] | None,
    workload_replicas: int,
    now: datetime,
    notes: Notes,
) -> MutableObj | None:
    """One subset's status, or None when its maxReplicas cannot be evaluated (no status write)."""
    try:
        limit = scaled_max_replicas(subset.get("maxReplicas"), workload_replicas)
    except MaxReplicasError:
        return None
    if subset.get("maxReplicas") is not None and limit < 0:
        return None
    namespace = meta_of(ws).get("namespace") or ""
    missing = limit
    creating_old = dict(section((old or {}), "creatingPods"))
    deleting_old = (old or {}).get("deletingPods") or {}
    creating: MutableObj = {}
    deleting: MutableObj = {}
    active = 0
    for pod in pods:
        matched = MatchedSpread.of(pod)
        name = meta_of(pod).get("name") or ""
        creating_old.pop(matched.uid if matched is not None and matched.uid else name, None)
        if not podstatus.is_active(pod):
            continue
        active += 1
        if missing > 0:
            missing -= 1
        if name in deleting_old:
            booked = parse_time(deleting_old[name])
            deadline = booked + DELETE_POD_TIMEOUT if booked is not None else None
            if deadline is None or deadline < now:
                notes.warn(
                    "DeletePodFailed", f"Pod {namespace}/{name} was expected to be deleted but it wasn't"
                )
            else:
                deleting[name] = deleting_old[name]
                if missing < limit:
                    missing += 1
                notes.requeue(deadline - now)
    for pod_id, value in sorted(creating_old.items()):
        booked = parse_time(value)
        deadline = booked + CREATE_POD_TIMEOUT if booked is not None else None
        if deadline is None or deadline < now:
            notes.warn(
                "CreatePodFailed", f"Pod {namespace}/{pod_id} was expected to be created but it wasn't"
            )
            continue
        creating[pod_id] = value
        if missing > 0:
            missing -= 1
        notes.requeue(deadline - now)
    out: MutableObj = {"name": subset["name"], "replicas": active, "missingReplicas": missing}
    if creating:
        out["creatingPods"] = creating
    if deleting:
        out["deletingPods"] = deleting
    return out


def _critical(ws: Mapping[str, Any]) -> timedelta | None:
    """rescheduleCriticalSeconds of an Adaptive strategy, None when rescheduling is off."""
    strategy = spec_of(ws).get("scheduleStrategy") or {}
    seconds = section(strategy, "adaptive").get("rescheduleCriticalSeconds")
    if strategy.get("type") == ADAPTIVE and isinstance(seconds, int) and seconds > 0:
        return timedelta(seconds=seconds)
    return None


def subset_statuses(
    ws: Mapping[str, Any],
    old: Sequence[Mapping[str, Any]] | None,
    pods_by_subset: Mapping[str, Sequence[Obj]],
    workload_replicas: int,
    now: datetime,
    notes: Notes,
    *,
    overall: bool = False,
) -> list[MutableObj] | None:
    """Every subset's status in spec order (old statuses are matched by name, so reordering subsets
    keeps their books); None when a subset's maxReplicas is invalid. With the Adaptive strategy each
    subset also gets its Schedulable condition, and for the `overall` books the pods failed to
    schedule are noted for deletion."""
    old_by_name = {s.get("name"): s for s in old or []}
    subsets = list(spec_of(ws).get("subsets") or [])
    critical = _critical(ws)
    out: list[MutableObj] = []
    for i, subset in enumerate(subsets):
        previous = old_by_name.get(subset["name"])
        status = subset_status(
            ws, subset, pods_by_subset.get(subset["name"]) or [], previous, workload_replicas, now, notes
        )
        if status is None:
            return None
        if critical is not None:
            found = get_condition(previous, CONDITION_SCHEDULABLE)
            kept = dict(found) if found is not None else None
            if i == len(subsets) - 1:
                # The last subset is never rescheduled away from: always schedulable.
                kept = reschedule.last_subset_condition(kept, now)
            else:
                pods = pods_by_subset.get(subset["name"]) or []
                kept, failed, wait, recovered = reschedule.subset_condition(pods, kept, critical, now)
                if wait is not None:
                    notes.requeue(wait)
                if recovered:
                    namespace = meta_of(ws).get("namespace") or ""
                    notes.inform(
                        reschedule.RECOVER_REASON,
                        f"Subset {subset['name']} of WorkloadSpread {namespace}/{ws['metadata']['name']} "
                        "is recovered from unschedulable to schedulable",
                    )
                if overall:
                    notes.failed_to_schedule.extend((subset["name"], p) for p in failed)
            status["conditions"] = [kept]
        out.append(status)
    return out


def _empty(statuses: Sequence[Mapping[str, Any]]) -> bool:
    return not any(
        int(s.get("replicas") or 0) or s.get("creatingPods") or s.get("deletingPods") for s in statuses
    )


def next_status(
    ws: Mapping[str, Any],
    versioned: Mapping[str, Mapping[str, Sequence[Obj]]],
    by_subset: Mapping[str, Sequence[Obj]],
    workload_replicas: int,
    now: datetime,
    notes: Notes,
) -> MutableObj | None:
    """The whole status: observedGeneration, overall and per-version subset statuses. A version the
    webhook booked but whose pods the controller has not seen yet keeps its (expiring) books while
    anything is left in them. None when a maxReplicas is invalid."""
    old = ws.get("status") or {}
    overall = subset_statuses(
        ws, old.get("subsetStatuses"), by_subset, workload_replicas, now, notes, overall=True
    )
    if overall is None:
        return None
    old_versioned = old.get("versionedSubsetStatuses") or {}
    out_versioned: dict[str, list[MutableObj]] = {}
    for version, pods_by_subset in versioned.items():
        statuses = subset_statuses(
            ws, old_versioned.get(version), pods_by_subset, workload_replicas, now, notes
        )
        if statuses is not None:
            out_versioned[version] = statuses
    for version, old_statuses in old_versioned.items():
        if version in versioned:
            continue
        statuses = subset_statuses(ws, old_statuses, {}, workload_replicas, now, notes)
        if statuses is not None and not _empty(statuses):
            out_versioned[version] = statuses
    status: MutableObj = {"observedGeneration": meta_of(ws).get("generation") or 0}
    status["subsetStatuses"] = overall
    if out_versioned:
        status["versionedSubsetStatuses"] = out_versioned
    return status


__all__ = [
    "CREATE_POD_TIMEOUT",
    "DELETE_POD_TIMEOUT",
    "UNLIMITED",
    "Notes",
    "group_pods",
    "next_status",
    "subset_of",
    "subset_status",
    "subset_statuses",
]
