"""Adaptive scheduling: which subsets cannot schedule their pods, decided from pods and subset status.

With `topology.scheduleStrategy.type: Adaptive` every pass first assesses each existing child
before the replicas are split (upstream's `calculateSubsetsStatusFor*AdaptiveStrategy`):

- **default** (no `reserveUnschedulablePods`): a pod still Pending with `PodScheduled=False`,
  reason `Unschedulable`, `rescheduleCriticalSeconds` after its creation marks its subset
  unschedulable: the subset's `Schedulable` condition goes False (reason `reschedule`), the
  allocator pins the subset to its ready replicas (so the pending pods are scaled away) and the rest
  goes to the next subsets. The mark holds for `unschedulableDuration` after the condition's
  lastTransitionTime; then the condition turns True (reason `recover`) and the subset takes
  replicas again.
- **reservation** (`reserveUnschedulablePods: true`, 1.9): such pods are kept and labelled
  `apps.kruise.io/united-deployment-reserved-pod=true`; the allocator creates as many stand-ins in
  the next subsets. A reserved pod leaves the reserved state once Running, Ready and at the
  expected revision for `unschedulableDuration`; pods created while the subset is marked
  unschedulable start reserved. Pods of an older revision count as reserved when the update has
  been going on (UnitedDeploymentUpdated False) longer than `rescheduleCriticalSeconds`.

Every "not yet" answer carries how long until it may change, so the controller requeues at that
exact moment (upstream's DurationStore keeps the shortest positive one). Where upstream tests
`deadline.Before(now)` this module counts the deadline itself as passed: upstream's requeue fires a
little after the deadline on a real clock, a fake clock lands on it exactly, and "not yet, check
again in 0s" would never be checked again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kruise.api.conditions import condition_of, get_condition, set_condition
from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_UNITED_DEPLOYMENT_RESERVED_POD
from kruise.api.objects import Obj, labels_of, meta_of, spec_of, status_of
from kruise.api.timestamps import parse_rfc3339, rfc3339
from kruise.api.uniteddeployment import (
    DEFAULT_RESCHEDULE_CRITICAL_SECONDS,
    DEFAULT_UNSCHEDULABLE_SECONDS,
    UnitedDeployment,
)

SCHEDULABLE = "Schedulable"
"""The subset condition type (`UnitedDeploymentSubsetSchedulable`)."""

RESERVED_SELECTOR_SUFFIX = f",{LABEL_UNITED_DEPLOYMENT_RESERVED_POD}=false"
"""Appended to `status.labelSelector` in reservation mode, so an HPA never counts reserved pods."""


@dataclass(frozen=True)
class AdaptiveTimes:
    """`rescheduleCriticalSeconds` and `unschedulableDuration` with upstream's defaults (30s, 300s)."""

    reschedule_critical: timedelta = timedelta(seconds=DEFAULT_RESCHEDULE_CRITICAL_SECONDS)
    unschedulable: timedelta = timedelta(seconds=DEFAULT_UNSCHEDULABLE_SECONDS)

    @classmethod
    def of(cls, ud: UnitedDeployment) -> AdaptiveTimes:
        strategy = ud.spec.topology.schedule_strategy
        adaptive = strategy.adaptive if strategy is not None else None
        critical = adaptive.reschedule_critical_seconds if adaptive is not None else None
        duration = adaptive.unschedulable_duration if adaptive is not None else None
        return cls(
            timedelta(seconds=DEFAULT_RESCHEDULE_CRITICAL_SECONDS if critical is None else critical),
            timedelta(seconds=DEFAULT_UNSCHEDULABLE_SECONDS if duration is None else duration),
        )


@dataclass
class Requeue:
    """The shortest positive delay pushed during a pass (upstream's `requeueduration.Duration`)."""

    seconds: float = 0.0

    def push(self, delay: timedelta | float) -> None:
        value = delay.total_seconds() if isinstance(delay, timedelta) else float(delay)
        if value > 0 and (self.seconds <= 0 or value < self.seconds):
            self.seconds = value


@dataclass
class Assessment:
    """One subset's unschedulable status (upstream's `SubsetUnschedulableStatus`)."""

    unschedulable: bool = False
    marked_unschedulable: bool = False
    reserved_pods: int = 0
    pending_pods: int = 0
    update_timeout_pods: int = 0
    pods_to_label: list[tuple[Obj, bool]] = field(default_factory=list)
    """Reservation mode: pods whose reserved label must be written, with the value."""


# ---- pods ----------------------------------------------------------------------------------------


def _created(pod: Obj) -> datetime | None:
    stamp = meta_of(pod).get("creationTimestamp")
    return parse_rfc3339(stamp) if stamp else None


CREATION_RESOLUTION = timedelta(seconds=1)
"""A creationTimestamp's resolution. A pass deciding pending timeouts also times out the pods whose
deadline falls within it: pods a UnitedDeployment's subsets created together carry the same second
when created within milliseconds, as upstream's Go controllers do, and time out in one pass. Spread
over a few hundred milliseconds (kruise-py, a loaded machine) they may straddle a second, and
deciding the first subset alone hands its replicas to a subset whose pods time out a second later,
which then keeps them reserved (upstream's e2e "adaptive united deployment with reserved pods and
min replicas" expects the subsets decided together)."""


def pending_timeout(
    pod: Obj, timeout: timedelta, now: datetime, slack: timedelta = timedelta(0)
) -> tuple[bool, timedelta | None]:
    """`GetTimeBeforePendingTimeout`: (timed out, time left while failing to schedule).

    Only an undeleted, unbound Pending pod whose PodScheduled condition is False/Unschedulable
    counts; the clock runs from the pod's creation. Anything else: (False, None). A deadline within
    `slack` after `now` counts as passed (see CREATION_RESOLUTION); the time left is still counted to
    the deadline itself, so a requeue never comes early.
    """
    meta = pod.get("metadata") or {}
    if (
        meta.get("deletionTimestamp")
        or status_of(pod).get("phase") != "Pending"
        or spec_of(pod).get("nodeName")
    ):
        return False, None
    scheduled = condition_of(pod, "PodScheduled")
    created = _created(pod)
    if (
        scheduled is None
        or scheduled.get("status") != "False"
        or scheduled.get("reason") != "Unschedulable"
        or created is None
    ):
        return False, None
    deadline = created + timeout
    if deadline <= now + slack:
        return True, None
    return False, deadline - now


def update_timeout(
    pod: Obj, updated_since: datetime | None, timeout: timedelta, now: datetime
) -> tuple[bool, timedelta | None]:
    """`GetTimeBeforeUpdateTimeout`: an update running longer than `timeout` times out every old pod."""
    if meta_of(pod).get("deletionTimestamp") or updated_since is None:
        return False, None
    deadline = updated_since + timeout
    if deadline <= now:
        return True, None
    return False, deadline - now


def reserved_label(pod: Obj) -> tuple[bool, bool]:
    """`IsPodMarkedAsReserved`: (label says "true", label present)."""
    labels = labels_of(pod)
    if LABEL_UNITED_DEPLOYMENT_RESERVED_POD not in labels:
        return False, False
    return labels[LABEL_UNITED_DEPLOYMENT_RESERVED_POD] == "true", True


@dataclass(frozen=True)
class PodReservation:
    reserved: bool
    check_after: timedelta | None
    update_timed_out: bool = False


def pod_reservation(
    pod: Obj,
    revision: str,
    updated_since: datetime | None,
    times: AdaptiveTimes,
    now: datetime,
) -> PodReservation:
    """`CheckPodReallyInReservedStatus`: is the pod reserved now, and when to look again.

    A reserved pod stays reserved until it has been Running, Ready and at `revision` for
    `unschedulableDuration` (the "min ready" of reservation); an unreserved pod becomes reserved
    when its scheduling (current revision) or its update (older revision) timed out.
    """
    labels = labels_of(pod)
    pod_revision = labels.get(LABEL_KRUISE_CONTROLLER_REVISION_HASH, "")
    min_ready = times.unschedulable
    if reserved_label(pod)[0]:
        if status_of(pod).get("phase") == "Running" and pod_revision == revision:
            ready = condition_of(pod, "Ready")
            if ready is not None and ready.get("status") == "True":
                since = ready.get("lastTransitionTime")
                ready_at = parse_rfc3339(since) if since else now
                if ready_at + min_ready <= now:
                    return PodReservation(False, None)
                return PodReservation(True, ready_at + min_ready - now)
        return PodReservation(True, min_ready)
    if pod_revision == revision:
        timed_out, after = pending_timeout(pod, times.reschedule_critical, now, CREATION_RESOLUTION)
        update_timed_out = False
    else:
        timed_out, after = update_timeout(pod, updated_since, times.reschedule_critical, now)
        update_timed_out = timed_out
    if timed_out:
        return PodReservation(True, min_ready, update_timed_out)
    return PodReservation(False, after, update_timed_out)


# ---- subset conditions ---------------------------------------------------------------------------


def schedulable_condition(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return get_condition(entry, SCHEDULABLE)


def set_subset_condition(entry: dict[str, Any], state: str, reason: str, message: str, now: datetime) -> None:
    """`UnitedDeploymentSubsetStatus.SetCondition`: same status and reason keep the condition as is;
    otherwise it is rewritten with lastTransitionTime now (even when only the reason changed)."""
    new = _subset_condition(state, reason, message, now)
    entry["conditions"] = set_condition(entry.get("conditions"), new, same=("status", "reason"))


def _subset_condition(state: str, reason: str, message: str, now: datetime) -> dict[str, Any]:
    condition: dict[str, Any] = {"type": SCHEDULABLE, "status": state, "lastTransitionTime": rfc3339(now)}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def _seconds(delta: timedelta) -> str:
    """Go's `%f` of a float64 number of seconds."""
    return f"{delta.total_seconds():f}"


# ---- the two strategies --------------------------------------------------------------------------


def assess_default(
    entry: dict[str, Any],
    status_replicas: int,
    ready_replicas: int,
    pods: Iterable[Obj],
    times: AdaptiveTimes,
    now: datetime,
    requeue: Requeue,
) -> Assessment:
    """`calculateSubsetsStatusForDefaultAdaptiveStrategy`; updates the subset's condition in `entry`."""
    result = Assessment()
    condition = schedulable_condition(entry)
    if condition is not None and condition.get("status") == "False":
        since = condition.get("lastTransitionTime")
        recover_at = (parse_rfc3339(since) if since else now) + times.unschedulable
        if now < recover_at:
            requeue.push(recover_at - now)
            result.unschedulable = True
        else:
            set_subset_condition(
                entry,
                "True",
                "recover",
                f"unschedulable subset recovered after {_seconds(times.unschedulable)} seconds",
                now,
            )
    if ready_replicas < status_replicas:
        for pod in pods:
            timed_out, after = pending_timeout(pod, times.reschedule_critical, now, CREATION_RESOLUTION)
            if timed_out:
                result.pending_pods += 1
            if after is not None:
                requeue.push(after)
        if result.pending_pods > 0:
            result.unschedulable = True
            set_subset_condition(entry, "False", "reschedule", "timeout pending pods found", now)
            requeue.push(times.unschedulable)
    return result


def assess_reservation(
    entry: dict[str, Any],
    pods: Iterable[Obj],
    revision: str,
    updated_since: datetime | None,
    times: AdaptiveTimes,
    now: datetime,
    requeue: Requeue,
    workload_replicas: int = 0,
) -> Assessment:
    """`calculateSubsetsStatusForReservedAdaptiveStrategy`; updates the condition in `entry` and
    lists the pods whose reserved label must be (re)written.

    One difference from upstream: in a subset marked unschedulable, pods its workload still counts
    (`workload_replicas`, the workload's `status.replicas`) but that are gone from the cache count as
    reserved. They are pods being recreated: a CloneSet deletes not-ready pods it updates by
    recreation and creates their replacements in its next pass. Upstream counts that moment as "no
    reserved pods", so the subset looks recovered, takes every remaining replica, and keeps them
    once the replacements come back reserved. Upstream's e2e case "adaptive united deployment with
    unschedulable pods reserved" fails whenever a pass lands in that gap; Go's gap is a few
    milliseconds, kruise-py's under load is long enough to land in."""
    result = Assessment()
    condition = schedulable_condition(entry)
    if condition is not None:
        result.marked_unschedulable = condition.get("status") == "False"
    soonest = math.inf
    duration = times.unschedulable.total_seconds()
    pods = list(pods)
    if result.marked_unschedulable:
        result.reserved_pods += max(0, workload_replicas - len(pods))
    for pod in pods:
        old_reserved, labelled = reserved_label(pod)
        if result.marked_unschedulable and not labelled:
            # Created while the subset is marked unschedulable: reserved from the start.
            result.reserved_pods += 1
            result.pods_to_label.append((pod, True))
            # Upstream raises an already-pushed shorter delay to the duration here (sic).
            if soonest < duration:
                soonest = duration
            continue
        verdict = pod_reservation(pod, revision, updated_since, times, now)
        if verdict.update_timed_out:
            result.update_timeout_pods += 1
        if verdict.reserved:
            result.reserved_pods += 1
        if verdict.check_after is not None:
            after = verdict.check_after.total_seconds()
            if 0 < after < soonest:
                soonest = after
        if verdict.reserved != old_reserved or not labelled:
            result.pods_to_label.append((pod, verdict.reserved))
    if soonest < math.inf:
        requeue.push(soonest)
    if result.reserved_pods > 0:
        result.unschedulable = True
        set_subset_condition(entry, "False", "reschedule", "reserved pods found", now)
    else:
        set_subset_condition(entry, "True", "reschedule", "no reserved pods", now)
    return result


def after_allocation(
    entry: dict[str, Any], assessment: Assessment, replicas: int, next_replicas: int, now: datetime
) -> None:
    """`postProcessSubsetStatusForReservedAdaptiveStrategy`: a subset that just recovered and is
    scaled up is marked unschedulable again, so its new pods start reserved and the stand-ins
    elsewhere go only once those pods really run."""
    if not assessment.unschedulable and assessment.marked_unschedulable and next_replicas > replicas:
        set_subset_condition(entry, "False", "reschedule", "subset just recovered scaled up", now)


def mark_new_subsets(
    status: dict[str, Any], known: Iterable[str], names: Iterable[str], now: datetime
) -> None:
    """`initStatus` in reservation mode: a subset added to a UnitedDeployment that already had subset
    statuses starts with `Schedulable=False` (reason `created`), so its first pods start reserved."""
    known = set(known)
    if not known:
        return
    for entry in status.get("subsetStatuses") or []:
        if entry.get("name") in known or entry.get("name") not in set(names):
            continue
        set_subset_condition(entry, "False", "created", "newly-created subsets in reservation strategy", now)


def max_unavailable_for(replicas: int, ready_replicas: int, assessment: Assessment) -> int:
    """Reservation mode, unschedulable subset being updated: let every not-ready pod (plus the old
    pods whose update timed out) be replaced at once (upstream's SetMaxUnavailable on UpdateSubset)."""
    return replicas - ready_replicas + assessment.update_timeout_pods


def failing_to_schedule(pod: Obj) -> bool:
    """Pending, unbound and marked `PodScheduled=False` reason Unschedulable by the scheduler."""
    scheduled = condition_of(pod, "PodScheduled")
    return (
        scheduled is not None
        and scheduled.get("status") == "False"
        and scheduled.get("reason") == "Unschedulable"
        and status_of(pod).get("phase") == "Pending"
        and not spec_of(pod).get("nodeName")
    )


def turned_unschedulable(old: Obj, new: Obj) -> bool:
    """The update that makes a pod fail to schedule (the moment its pending clock starts to matter)."""
    return failing_to_schedule(new) and not failing_to_schedule(old)
