"""How far one ContainerRecreateRequest has got, and what kruise-daemon does next, decided from the pod
(pure; the recreator acts on the returned `RecreatePlan`).

Per container, in spec order: not killed yet -> kill it (stop through the CRI; the kubelet starts it
again); killed -> Succeeded once the pod shows a new container (another containerID, or a higher
restartCount than recorded in statusContext) that is Ready and has run `minStartedSeconds`.
`orderedRecreate` kills the next container only after the previous one succeeded. Once every
container is Succeeded or Failed the request is Completed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.api.crr import PHASE_COMPLETED, PHASE_FAILED, PHASE_PENDING, PHASE_RECREATING, PHASE_SUCCEEDED
from kruise.api.objects import Obj, container_statuses_of, containers_of, section, spec_of
from kruise.control.common import podstatus


@dataclass(frozen=True)
class Kill:
    container: str
    container_id: str


def initial_states(crr: Obj) -> list[dict[str, Any]]:
    status = crr.get("status") or {}
    if status.get("containerRecreateStates"):
        return [dict(s) for s in status["containerRecreateStates"]]
    return [{"name": c["name"], "phase": PHASE_PENDING} for c in containers_of(crr)]


def _status_of(pod: Obj, name: str) -> Mapping[str, Any] | None:
    return next((s for s in container_statuses_of(pod) if s.get("name") == name), None)


def _replaced(current: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return current.get("containerID") != context.get("containerID") or int(
        current.get("restartCount") or 0
    ) > int(context.get("restartCount") or 0)


def recreated(container: Obj, pod: Obj, min_started: int, now: datetime) -> bool:
    """The container the kubelet started after our kill is Ready and has been running long enough."""
    context = container.get("statusContext") or {}
    current = _status_of(pod, container["name"])
    if current is None:
        return False
    if not _replaced(current, context) or not current.get("ready"):
        return False
    started = podstatus.parse_time(section(current, "state", "running").get("startedAt"))
    return started is not None and (now - started).total_seconds() >= min_started


@dataclass(frozen=True)
class RecreatePlan:
    """One pass of the recreator: every container's state as the pod now shows it (spec order), and
    the containers to kill now (the recreator kills the first; see `recreator.Recreator`)."""

    states: tuple[Mapping[str, Any], ...]
    kills: tuple[Kill, ...]


def plan_recreate(crr: Obj, pod: Obj, states: Sequence[Mapping[str, Any]], now: datetime) -> RecreatePlan:
    """The states moved on from `states` (left as they are) by what the pod shows, and the kills due."""
    strategy = spec_of(crr).get("strategy") or {}
    ordered = bool(strategy.get("orderedRecreate"))
    min_started = int(strategy.get("minStartedSeconds") or 0)
    specs = {c["name"]: c for c in containers_of(crr)}
    moved = [dict(s) for s in states]
    kills: list[Kill] = []
    for state in moved:
        if state["phase"] in (PHASE_SUCCEEDED, PHASE_FAILED):
            continue
        container = specs.get(state["name"])
        if container is None:
            state.update(phase=PHASE_FAILED, message="container not in spec")
            continue
        if state.get("isKilled"):
            if recreated(container, pod, min_started, now):
                state["phase"] = PHASE_SUCCEEDED
                continue
            state["phase"] = PHASE_RECREATING
            if ordered:
                break
            continue
        context = container.get("statusContext") or {}
        current = _status_of(pod, container["name"])
        if current is not None and _replaced(current, context):
            # already stopped and restarted (our record of the kill may not have been written yet):
            # never kill the new container
            state.update(phase=PHASE_RECREATING, isKilled=True)
            if recreated(container, pod, min_started, now):
                state["phase"] = PHASE_SUCCEEDED
            elif ordered:
                break
            continue
        container_id = (current or {}).get("containerID") or context.get("containerID") or ""
        kills.append(Kill(container["name"], container_id.rpartition("://")[2]))
        if ordered:
            break
    return RecreatePlan(states=tuple(moved), kills=tuple(kills))


def finished(states: Sequence[Mapping[str, Any]]) -> bool:
    return all(s["phase"] in (PHASE_SUCCEEDED, PHASE_FAILED) for s in states)


def must_stop(crr: Obj, states: Sequence[Mapping[str, Any]]) -> bool:
    """failurePolicy Fail (the default): one failed container completes the request at once."""
    policy = section(crr, "spec", "strategy").get("failurePolicy") or "Fail"
    return policy == "Fail" and any(s["phase"] == PHASE_FAILED for s in states)


def completed_status(states: list[dict[str, Any]], now: str, message: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "phase": PHASE_COMPLETED,
        "completionTime": now,
        "containerRecreateStates": states,
    }
    if message:
        body["message"] = message
    return body


def recreating_status(states: list[dict[str, Any]]) -> dict[str, Any]:
    return {"phase": PHASE_RECREATING, "containerRecreateStates": states}
