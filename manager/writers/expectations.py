"""The "may this reconcile act yet?" preamble, written once for every reconciler (issue 29).

A controller that created, deleted or wrote objects must not act again on a cache that does not show
those writes yet, or it acts twice. Two kinds of memory say so: `ScaleExpectations` (names created or
deleted, per controller key) and `ResourceVersionExpectations` (the resourceVersion of each object it
wrote). Every reconciler asks them the same questions; only what happens once an event was lost for
`timeout` seconds differs between upstream controllers, so that is an explicit `Overtime` argument.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from kruise.kube.controller import Result
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations

log = structlog.get_logger("kruise.manager.expectations")

FORCED_EXPECTATION_REQUEUE = 10.0
"""Seconds before the retry that follows forgetting timed-out expectations (upstream's 10 s)."""


class Overtime(enum.Enum):
    """What a reconcile does once scale expectations stayed unsatisfied for their `timeout`."""

    GIVE_UP = "give-up"
    """Stop until the next event of the key (BroadcastJob, EphemeralJob, CloneSet by default)."""
    FORGET_AND_REQUEUE = "forget-and-requeue"
    """Drop the expectations and retry after `FORCED_EXPECTATION_REQUEUE` (DaemonSet, StatefulSet,
    CloneSet with ForceDeleteTimeoutExpectation)."""
    FORGET_AND_PROCEED = "forget-and-proceed"
    """Drop the expectations and act on the cache now (ImageListPullJob: an event was lost)."""


@dataclass(frozen=True)
class Hold:
    """The reconcile must stop here and return `result` (None: wait for the next event)."""

    result: Result | None

    @property
    def requeue_after(self) -> float | None:
        return None if self.result is None else self.result.requeue_after


def scale_hold(
    expectations: ScaleExpectations,
    key: str,
    overtime: Overtime,
    on_overtime: Callable[[], None] | None = None,
) -> Hold | None:
    """None when the cache shows every create and delete of `key`; otherwise how to stop: retry when
    the timeout would expire, or — once it has — what `overtime` says (logged; `on_overtime` lets a
    controller count it, e.g. CloneSet's leakage metric)."""
    satisfied, waited, pending = expectations.satisfied(key)
    if satisfied:
        return None
    if waited < expectations.timeout:
        return Hold(Result(requeue_after=expectations.timeout - waited))
    log.warning("scale expectations unsatisfied overtime", key=key, pending=pending, waited=waited)
    if on_overtime is not None:
        on_overtime()
    if overtime is Overtime.GIVE_UP:
        return Hold(None)
    expectations.delete(key)
    if overtime is Overtime.FORGET_AND_REQUEUE:
        return Hold(Result(requeue_after=FORCED_EXPECTATION_REQUEUE))
    return None


def writes_pending(
    expectations: ResourceVersionExpectations, objects: Iterable[Mapping[str, Any]], *, observe: bool = False
) -> bool:
    """Whether the cache still lacks one of our writes to `objects`. `observe`: first record each
    cached object's resourceVersion (for kinds whose informer handlers do not)."""
    for obj in objects:
        if observe:
            expectations.observe(dict(obj))
        if not expectations.is_satisfied(dict(obj)):
            return True
    return False


def settled(
    expectations: ResourceVersionExpectations, objects: Iterable[Mapping[str, Any]]
) -> Iterator[Mapping[str, Any]]:
    """The `objects` whose last write by us the cache already shows: the ones safe to write again."""
    return (obj for obj in objects if expectations.is_satisfied(dict(obj)))
