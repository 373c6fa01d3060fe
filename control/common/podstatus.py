"""Pod readiness/availability predicates as kube's podutil and Kruise's CloneSet core see them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from kruise.api.conditions import condition_of
from kruise.api.keys import CONDITION_INPLACE_UPDATE_READY
from kruise.api.objects import meta_of, status_of
from kruise.api.timestamps import parse_time


def phase(pod: Mapping[str, Any]) -> str:
    return status_of(pod).get("phase") or ""


def is_ready(pod: Mapping[str, Any]) -> bool:
    cond = condition_of(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def is_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """podutil.IsPodAvailable: Ready, and Ready for at least minReadySeconds."""
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = parse_time((condition_of(pod, "Ready") or {}).get("lastTransitionTime"))
    return since is not None and since + timedelta(seconds=min_ready_seconds) < now


# `is_available` compares strictly (upstream's `Before`), so the moment a pod turns available is one clock
# tick after lastTransitionTime + minReadySeconds; a requeue aimed at that instant must land past it.
AVAILABILITY_TICK = 0.001


def available_in(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> float | None:
    """Seconds until a Ready pod turns available by time alone; None when time will not do it (not Ready,
    no minReadySeconds, or already available).

    A controller that waits on availability requeues after this, so the next step happens the moment the
    pod qualifies rather than at the next unrelated event (a Ready pod with no lastTransitionTime waits
    the whole minReadySeconds, as upstream's podAvailableWaitingTime)."""
    if min_ready_seconds <= 0 or not is_ready(pod):
        return None
    since = parse_time((condition_of(pod, "Ready") or {}).get("lastTransitionTime"))
    if since is None:
        return float(min_ready_seconds)
    remaining = (since + timedelta(seconds=min_ready_seconds) - now).total_seconds()
    return None if remaining < 0 else remaining + AVAILABILITY_TICK


def is_running_and_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    return phase(pod) == "Running" and is_available(pod, min_ready_seconds, now)


def is_update_ready(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """CloneSet core ``IsPodUpdateReady``: running+available and InPlaceUpdateReady not False."""
    if not is_running_and_available(pod, min_ready_seconds, now):
        return False
    cond = condition_of(pod, CONDITION_INPLACE_UPDATE_READY)
    return cond is None or cond.get("status") == "True"


def is_active(pod: Mapping[str, Any]) -> bool:
    """kube controller.IsPodActive: not finished and not being deleted."""
    return phase(pod) not in ("Succeeded", "Failed") and not meta_of(pod).get("deletionTimestamp")


def is_terminating(pod: Mapping[str, Any]) -> bool:
    return bool(meta_of(pod).get("deletionTimestamp"))
