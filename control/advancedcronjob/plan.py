"""One reconcile of an AdvancedCronJob as data: what to write, delete and create, and when to look again.

The controller lists the cron job's children of its template kind (owned through a controller
reference), calls `plan_reconcile`, and carries the plan out in upstream's order:

1. write `status` (upstream writes it on every pass);
2. delete `history_deletions` — best effort, background propagation, errors only logged;
3. stop if `outcome` is PAUSED, SCHEDULE_PROBLEM (log `message`), NOT_DUE or FORBIDDEN;
4. delete `replace_deletions` (background propagation, NotFound ignored) — any other error aborts
   the pass (return the error so the key backs off) before anything is created;
5. create `create`; an error is returned (AlreadyExists means this activation already ran);
6. requeue after `requeue_after` when it is not None.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from kruise.api.advancedcronjob import (
    CONCURRENCY_FORBID,
    CONCURRENCY_REPLACE,
    TEMPLATE_KIND_BROADCASTJOB,
    TEMPLATE_KIND_IMAGELISTPULLJOB,
    TEMPLATE_KIND_JOB,
)
from kruise.api.objects import Obj, meta_of, spec_of, status_of
from kruise.api.timestamps import go_format_rfc3339, go_parse_rfc3339
from kruise.control.advancedcronjob.children import (
    beyond_history_limit,
    build_child,
    classify,
    object_reference,
)
from kruise.control.advancedcronjob.schedule import ScheduleProblem, due_run, parse_effective


class Outcome(enum.StrEnum):
    """Why the pass ends where it does (for logs and tests)."""

    PAUSED = "Paused"
    SCHEDULE_PROBLEM = "ScheduleProblem"
    NOT_DUE = "NotDue"
    FORBIDDEN = "Forbidden"
    RUN = "Run"


class DeletionReason(enum.StrEnum):
    FAILED_HISTORY = "FailedHistoryLimit"
    SUCCESSFUL_HISTORY = "SuccessfulHistoryLimit"
    REPLACED = "Replaced"


@dataclass(frozen=True)
class Deletion:
    """A child to delete with background propagation; `uid` makes the delete a precondition-guarded one."""

    kind: str
    namespace: str | None
    name: str
    uid: str | None
    reason: DeletionReason


@dataclass(frozen=True)
class ReconcilePlan:
    child_kind: str
    """Job, BroadcastJob or ImageListPullJob: the kind listed, deleted and created (also `status.type`)."""
    status: dict[str, Any]
    """The complete status to write (camelCase, empty fields omitted)."""
    status_changed: bool
    history_deletions: tuple[Deletion, ...]
    replace_deletions: tuple[Deletion, ...]
    create: dict[str, Any] | None
    """The child manifest to create, or None."""
    outcome: Outcome
    requeue_after: timedelta | None
    """Time until the next activation; None when nothing should requeue (paused, schedule problem)."""
    scheduled_time: datetime | None = None
    """The activation being run (outcome RUN) or skipped (FORBIDDEN)."""
    next_run: datetime | None = None
    message: str | None = None
    """Upstream's log text for SCHEDULE_PROBLEM."""


def template_kind(acj: Obj) -> str:
    """upstream's FindTemplateKind: jobTemplate wins, then imageListPullJobTemplate; anything else is a
    BroadcastJob cron job."""
    template = spec_of(acj).get("template") or {}
    if template.get("jobTemplate") is not None:
        return TEMPLATE_KIND_JOB
    if template.get("imageListPullJobTemplate") is not None:
        return TEMPLATE_KIND_IMAGELISTPULLJOB
    return TEMPLATE_KIND_BROADCASTJOB


@dataclass(frozen=True)
class ConcurrencyDecision:
    run: bool
    replace: tuple[Obj, ...]
    """Active children to delete before the new one is created."""


def decide_concurrency(policy: str | None, active: Sequence[Obj]) -> ConcurrencyDecision:
    """Forbid skips the run while anything is active; Replace deletes the active children first;
    Allow — and any other value, as upstream only tests for the other two — just runs."""
    if policy == CONCURRENCY_FORBID and active:
        return ConcurrencyDecision(run=False, replace=())
    if policy == CONCURRENCY_REPLACE:
        return ConcurrencyDecision(run=True, replace=tuple(active))
    return ConcurrencyDecision(run=True, replace=())


def _deletion(child: Obj, kind: str, reason: DeletionReason) -> Deletion:
    meta = child.get("metadata") or {}
    return Deletion(kind, meta.get("namespace"), meta.get("name") or "", meta.get("uid"), reason)


def _creation_time(acj: Obj) -> datetime | None:
    raw = meta_of(acj).get("creationTimestamp")
    return go_parse_rfc3339(raw) if isinstance(raw, str) else None


def plan_reconcile(
    acj: Obj, children: Sequence[Obj], now: datetime, local_zone: tzinfo = UTC
) -> ReconcilePlan:
    """Plan one pass for `acj` (a dict as the apiserver returns it) given its children of the template
    kind and the current time.

    `local_zone` stands for the manager process's zone: schedules without `TZ=`/`spec.timeZone` are
    evaluated in it and scheduled-at annotations are written in it (upstream formats them in the
    process's local zone). `status.lastScheduleTime` is always written in UTC, as metav1.Time is.
    """
    if now.tzinfo is None:
        raise ValueError("plan_reconcile needs a timezone-aware `now`")
    now = now.astimezone(local_zone)
    spec = acj.get("spec") or {}
    kind = template_kind(acj)
    sorted_children = classify(children, kind)

    status: dict[str, Any] = {"type": kind}
    if sorted_children.active:
        status["active"] = [object_reference(c, kind) for c in sorted_children.active]
    if sorted_children.last_scheduled is not None:
        status["lastScheduleTime"] = go_format_rfc3339(sorted_children.last_scheduled.astimezone(UTC))
    status_changed = status != status_of(acj)

    history = tuple(
        _deletion(c, kind, DeletionReason.FAILED_HISTORY)
        for c in beyond_history_limit(sorted_children.failed, spec.get("failedJobsHistoryLimit"))
    ) + tuple(
        _deletion(c, kind, DeletionReason.SUCCESSFUL_HISTORY)
        for c in beyond_history_limit(sorted_children.succeeded, spec.get("successfulJobsHistoryLimit"))
    )

    def finish(
        outcome: Outcome,
        requeue_after: timedelta | None,
        *,
        scheduled_time: datetime | None = None,
        next_run: datetime | None = None,
        message: str | None = None,
        replace: tuple[Deletion, ...] = (),
        create: dict[str, Any] | None = None,
    ) -> ReconcilePlan:
        return ReconcilePlan(
            child_kind=kind,
            status=status,
            status_changed=status_changed,
            history_deletions=history,
            replace_deletions=replace,
            create=create,
            outcome=outcome,
            requeue_after=requeue_after,
            scheduled_time=scheduled_time,
            next_run=next_run,
            message=message,
        )

    if spec.get("paused") is True:
        return finish(Outcome.PAUSED, None)

    try:
        schedule = parse_effective(spec.get("schedule") or "", spec.get("timeZone"))
        due = due_run(
            schedule,
            sorted_children.last_scheduled,
            _creation_time(acj),
            spec.get("startingDeadlineSeconds"),
            now,
        )
    except ScheduleProblem as problem:
        return finish(Outcome.SCHEDULE_PROBLEM, None, message=str(problem))

    requeue = due.next_run - now if due.next_run is not None else None
    if due.missed is None:
        return finish(Outcome.NOT_DUE, requeue, next_run=due.next_run)
    # No "too late" check is needed: the window starts at now - startingDeadlineSeconds and an
    # activation is strictly after the window's start, so `missed` is always within the deadline.
    decision = decide_concurrency(spec.get("concurrencyPolicy"), sorted_children.active)
    if not decision.run:
        return finish(Outcome.FORBIDDEN, requeue, scheduled_time=due.missed, next_run=due.next_run)
    return finish(
        Outcome.RUN,
        requeue,
        scheduled_time=due.missed,
        next_run=due.next_run,
        replace=tuple(_deletion(c, kind, DeletionReason.REPLACED) for c in decision.replace),
        create=build_child(acj, kind, due.missed),
    )
