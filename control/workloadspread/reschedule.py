"""The Adaptive schedule strategy: subsets whose pods cannot be scheduled are marked unschedulable and
those pods deleted, so the workload re-creates them and the webhook places them in a later subset.

With `scheduleStrategy: {type: Adaptive, adaptive: {rescheduleCriticalSeconds: N}}` (N > 0), as
upstream's `rescheduleSubset`:

- a pod *failed to schedule* when it is Pending, unbound, not being deleted, carries
  `PodScheduled=False` with reason `Unschedulable`, and was created more than N seconds ago (one
  still within N seconds asks for a re-run when it reaches N);
- every subset but the last gets a `Schedulable` condition: `False`/`PodUnschedulable` while it holds
  such a pod, else `True`/`Sufficient`; a subset marked `False` turns back `True` (with a
  `RecoverSchedulable` event) once 5 minutes have passed since it was marked and no pod of it is
  failing, and the controller re-runs at that moment;
- the last subset is always `Schedulable=True` (nowhere else to go);
- the failed pods of the overall books are deleted after the status is written.

A condition keeps its lastTransitionTime while its status does not change, and is left untouched
when neither status nor reason changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from kruise.api.conditions import condition_of, set_condition
from kruise.api.objects import MutableObj, Obj, spec_of
from kruise.api.timestamps import parse_time, rfc3339

CONDITION_SCHEDULABLE = "Schedulable"
MAX_SCHEDULE_FAILED_DURATION = timedelta(seconds=300)
REASON_UNSCHEDULABLE = "PodUnschedulable"
REASON_SUFFICIENT = "Sufficient"
RECOVER_REASON = "RecoverSchedulable"


def marked_unschedulable(pod: Obj) -> bool:
    """The scheduler reported the pod as not fitting anywhere: `PodScheduled=False`, reason
    `Unschedulable`."""
    scheduled = condition_of(pod, "PodScheduled") or {}
    return scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable"


def pending_timeout(pod: Obj, critical: timedelta, now: datetime) -> tuple[bool, timedelta | None]:
    """(failed to schedule past `critical`, time left before it would be) — the second only for an
    unschedulable pod still within the limit (upstream's GetTimeBeforePendingTimeout)."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") != "Pending" or spec_of(pod).get("nodeName"):
        return False, None
    if not marked_unschedulable(pod):
        return False, None
    created = parse_time(meta.get("creationTimestamp"))
    if created is None:
        return False, None
    expected = created + critical
    if expected < now:
        return True, None
    return False, expected - now


def _condition(status: str, reason: str, now: datetime) -> MutableObj:
    return {
        "type": CONDITION_SCHEDULABLE,
        "status": status,
        "reason": reason,
        "lastTransitionTime": rfc3339(now),
    }


def merge_schedulable(current: MutableObj | None, new: MutableObj) -> MutableObj:
    """setWorkloadSpreadSubsetCondition for the single Schedulable condition."""
    written = set_condition(
        [current] if current is not None else [],
        dict(new),
        same=("status", "reason"),
        keep_transition_time=True,
    )
    return written[0]


def last_subset_condition(old: MutableObj | None, now: datetime) -> MutableObj:
    return merge_schedulable(dict(old) if old else None, _condition("True", REASON_SUFFICIENT, now))


def subset_condition(
    pods: Sequence[Obj], old: MutableObj | None, critical: timedelta, now: datetime
) -> tuple[MutableObj, list[Obj], timedelta | None, bool]:
    """(the subset's Schedulable condition, its pods failed to schedule, the earliest re-run wanted,
    whether it recovered to schedulable now)."""
    failed: list[Obj] = []
    requeue: timedelta | None = None
    for pod in pods:
        timed_out, left = pending_timeout(pod, critical, now)
        if timed_out:
            failed.append(pod)
        elif left is not None and (requeue is None or left < requeue):
            requeue = left
    unschedulable = bool(failed)
    if old is None:
        if unschedulable:
            return _condition("False", REASON_UNSCHEDULABLE, now), failed, requeue, False
        return _condition("True", REASON_SUFFICIENT, now), failed, requeue, False
    current = dict(old)
    if unschedulable:
        return (
            merge_schedulable(current, _condition("False", REASON_UNSCHEDULABLE, now)),
            failed,
            requeue,
            False,
        )
    if current.get("status") == "False":
        since = parse_time(current.get("lastTransitionTime"))
        expected = (since or now) + MAX_SCHEDULE_FAILED_DURATION
        if since is None or expected < now:
            return (
                merge_schedulable(current, _condition("True", REASON_SUFFICIENT, now)),
                failed,
                requeue,
                True,
            )
        left = expected - now
        requeue = left if requeue is None or left < requeue else requeue
    return current, failed, requeue, False


__all__ = [
    "CONDITION_SCHEDULABLE",
    "MAX_SCHEDULE_FAILED_DURATION",
    "last_subset_condition",
    "marked_unschedulable",
    "merge_schedulable",
    "pending_timeout",
    "subset_condition",
]
