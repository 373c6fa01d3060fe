"""Pod health as the Advanced StatefulSet controller sees it (``stateful_set_utils.go``).

Unlike plain readiness, a pod whose Kruise lifecycle state is set and not ``Normal`` (preparing
to update or delete, updating in place) is neither healthy nor available.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kruise.api.conditions import condition_of
from kruise.api.keys import LIFECYCLE_STATE_NORMAL
from kruise.api.objects import Obj, section
from kruise.control.common import lifecycle, podstatus


def is_created(pod: Obj) -> bool:
    """The apiserver has the pod (it has a phase); placeholders built for creation have none."""
    return podstatus.phase(pod) != ""


def is_failed(pod: Obj) -> bool:
    return podstatus.phase(pod) == "Failed"


def is_succeeded(pod: Obj) -> bool:
    return podstatus.phase(pod) == "Succeeded"


def is_pending(pod: Obj) -> bool:
    return podstatus.phase(pod) == "Pending"


def is_terminating(pod: Obj) -> bool:
    return podstatus.is_terminating(pod)


def is_running_and_ready(pod: Obj) -> bool:
    return podstatus.phase(pod) == "Running" and podstatus.is_ready(pod)


def _lifecycle_normal(pod: Obj) -> bool:
    state = lifecycle.pod_state(pod)
    return state in ("", LIFECYCLE_STATE_NORMAL)


def is_healthy(pod: Obj) -> bool:
    return _lifecycle_normal(pod) and is_running_and_ready(pod) and not is_terminating(pod)


def running_and_available(pod: Obj, min_ready_seconds: int, now: datetime) -> tuple[bool, float]:
    """(available, seconds to wait): available once Running, Ready, lifecycle Normal and Ready
    for ``min_ready_seconds``; a positive wait says when to look again (0 = not ready at all)."""
    if not _lifecycle_normal(pod) or not is_running_and_ready(pod):
        return False, 0.0
    if min_ready_seconds <= 0:
        return True, 0.0
    since = podstatus.parse_time((condition_of(pod, "Ready") or {}).get("lastTransitionTime"))
    if since is None:
        return False, float(min_ready_seconds)
    wait = (since - now).total_seconds() + min_ready_seconds
    if wait > 0:
        return False, wait
    return True, 0.0


def min_ready_seconds(sts: Mapping[str, Any]) -> int:
    rolling = section(sts, "spec", "updateStrategy").get("rollingUpdate") or {}
    return int(rolling.get("minReadySeconds") or 0)
