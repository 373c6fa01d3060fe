"""Pod conditions and phase, computed like the kubelet's status manager.

Pure functions so the readiness rules (containers ready AND every readiness gate True, with the
kubelet's exact reasons and messages) are unit-tested apart from any I/O. The kubelet owns
Initialized, ContainersReady, Ready and PodReadyToStartContainers; PodScheduled belongs to the
scheduler and readiness-gate conditions to whoever set them, so both are carried over untouched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


@dataclass(frozen=True)
class ContainerView:
    """What the status builder needs to know about one container."""

    name: str
    ready: bool
    started: bool
    terminated: bool = False
    exit_code: int = 0


def readiness_gate_problem(pod: Obj, conditions: Sequence[Mapping[str, Any]]) -> str | None:
    """The kubelet's message for the first readiness gate that is not True, or None if all are."""
    by_type = {c.get("type"): c for c in conditions}
    for gate in (pod.get("spec") or {}).get("readinessGates") or []:
        kind = gate.get("conditionType", "")
        condition = by_type.get(kind)
        if condition is None:
            return f'corresponding condition of pod readiness gate "{kind}" does not exist.'
        if condition.get("status") != "True":
            return f'the status of pod readiness gate "{kind}" is not "True", but {condition.get("status")}'
    return None


def _condition(kind: str, ok: bool, reason: str = "", message: str = "") -> Obj:
    condition: Obj = {"type": kind, "status": "True" if ok else "False"}
    if not ok:
        if reason:
            condition["reason"] = reason
        if message:
            condition["message"] = message
    return condition


def kubelet_conditions(
    pod: Obj,
    *,
    sandbox_ready: bool,
    init_containers: Sequence[ContainerView],
    containers: Sequence[ContainerView],
    phase: str,
) -> list[Obj]:
    """The four kubelet-owned conditions (without timestamps) for the pod's current state.

    ``init_containers`` are the regular (run-to-completion) init containers; native sidecars
    count as containers for readiness, as in the kubelet.
    """
    uninitialized = [c.name for c in init_containers if not (c.terminated and c.exit_code == 0)]
    if phase == "Succeeded":
        uninitialized = []
    initialized = _condition(
        "Initialized",
        not uninitialized,
        "ContainersNotInitialized",
        f"containers with incomplete status: [{' '.join(uninitialized)}]",
    )
    if phase in ("Succeeded", "Failed"):
        reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        not_ready = _condition("ContainersReady", False, reason)
        ready = _condition("Ready", False, reason)
        if phase == "Succeeded":
            initialized = _condition("Initialized", True)
        return [
            _condition("PodReadyToStartContainers", False),
            initialized,
            ready,
            not_ready,
        ]
    unready = [c.name for c in containers if not c.ready]
    message = f"containers with unready status: [{' '.join(unready)}]"
    containers_ready = _condition("ContainersReady", not unready, "ContainersNotReady", message)
    if uninitialized:
        ready = _condition("Ready", False, "ContainersNotReady", message if unready else "")
    elif unready:
        ready = _condition("Ready", False, "ContainersNotReady", message)
    else:
        gate = readiness_gate_problem(pod, (pod.get("status") or {}).get("conditions") or [])
        ready = _condition("Ready", gate is None, "ReadinessGatesNotReady", gate or "")
    return [_condition("PodReadyToStartContainers", sandbox_ready), initialized, ready, containers_ready]


def merge_conditions(existing: Sequence[Mapping[str, Any]], owned: Sequence[Obj], now: str) -> list[Obj]:
    """Replace kubelet-owned conditions, keep all others; lastTransitionTime moves only on change."""
    old = {c.get("type"): c for c in existing}
    result: list[Obj] = []
    for condition in owned:
        previous = old.get(condition["type"])
        merged = {**condition, "lastProbeTime": None}
        if previous is not None and previous.get("status") == condition["status"]:
            merged["lastTransitionTime"] = previous.get("lastTransitionTime") or now
        else:
            merged["lastTransitionTime"] = now
        result.append(merged)
    owned_types = {c["type"] for c in owned}
    result.extend(dict(c) for c in existing if c.get("type") not in owned_types)
    return result


def pod_phase(
    restart_policy: str,
    *,
    initialized: bool,
    init_failed: bool,
    containers: Sequence[ContainerView],
) -> str:
    """Pending until init is done and a container started; Succeeded/Failed once all have terminated
    for good (only with restartPolicy Never/OnFailure); otherwise Running."""
    if init_failed and restart_policy == "Never":
        return "Failed"
    if not initialized:
        return "Pending"
    if not containers or not any(c.started or c.terminated for c in containers):
        return "Pending"
    if restart_policy != "Always" and all(c.terminated for c in containers):
        failed = [c for c in containers if c.exit_code != 0]
        if not failed:
            return "Succeeded"
        if restart_policy == "Never":
            return "Failed"
    return "Running"
