"""In-place pod resize as the kubelet (1.33+) decides it, as pure functions over pod and node dicts.

The kubelet keeps, per container, the resources it has *allocated* (admitted; reported as
``allocatedResources``) and the ones it has *actuated* (applied to the container; reported as
``resources``). When the spec asks for something else it first checks the node: a pod that alone
asks more than the node's allocatable is ``Infeasible``; one that does not fit beside the node's
other pods is ``Deferred`` (both as a ``PodResizePending`` condition, with the kubelet's texts, and
nothing changes). Otherwise the new resources are allocated and actuated; containers whose
``resizePolicy`` says ``RestartContainer`` for a changed resource are restarted to apply them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.sandbox.quantity import amount
from kruise.sandbox.simulator.scheduling import Requests, node_allocatable, pod_requests

Obj = dict[str, Any]

PENDING = "PodResizePending"
IN_PROGRESS = "PodResizeInProgress"
INFEASIBLE = "Infeasible"
DEFERRED = "Deferred"
RESIZE_CONDITIONS = (PENDING, IN_PROGRESS)


def resizable_containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The containers a resize may touch: native sidecars and regular containers."""
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return [*sidecars, *(spec.get("containers") or [])]


def container_resources(container: Mapping[str, Any]) -> Obj:
    """The container's requests and limits as the kubelet allocates them (empty lists left out)."""
    resources = container.get("resources") or {}
    return {key: copy.deepcopy(dict(resources[key])) for key in ("requests", "limits") if resources.get(key)}


def desired(pod: Mapping[str, Any]) -> dict[str, Obj]:
    """Container name -> the resources its spec asks for, for every resizable container."""
    return {c["name"]: container_resources(c) for c in resizable_containers(pod.get("spec") or {})}


def _same_list(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    a, b = a or {}, b or {}
    return set(a) == set(b) and all(amount(a[k]) == amount(b[k]) for k in a)


def same(a: Mapping[str, Obj], b: Mapping[str, Obj]) -> bool:
    """Two allocations equal quantity for quantity (``1`` equals ``1000m``)."""
    if set(a) != set(b):
        return False
    return all(
        _same_list(a[n].get("requests"), b[n].get("requests"))
        and _same_list(a[n].get("limits"), b[n].get("limits"))
        for n in a
    )


def changed_resources(before: Mapping[str, Any], after: Mapping[str, Any]) -> set[str]:
    """The resource names (cpu, memory, ...) whose request or limit differs between two allocations."""
    names: set[str] = set()
    for key in ("requests", "limits"):
        old, new = before.get(key) or {}, after.get(key) or {}
        names |= {n for n in set(old) | set(new) if amount(old.get(n)) != amount(new.get(n))}
    return names


def needs_restart(container: Mapping[str, Any], changed: Iterable[str]) -> bool:
    """Whether the container's resizePolicy asks a restart for one of the changed resources
    (NotRequired, the default, applies the change to the running container)."""
    policies = {p.get("resourceName"): p.get("restartPolicy") for p in container.get("resizePolicy") or []}
    return any(policies.get(name) == "RestartContainer" for name in changed)


def with_allocation(pod: Mapping[str, Any], allocation: Mapping[str, Obj]) -> Obj:
    """The pod with its resizable containers' resources replaced by what is allocated to them."""
    copied = copy.deepcopy(dict(pod))
    for container in resizable_containers(copied.get("spec") or {}):
        if container["name"] in allocation:
            container["resources"] = copy.deepcopy(allocation[container["name"]])
    return copied


def shortfall(wanted: Requests, used: Requests, allocatable: Requests) -> tuple[str, int, int, int] | None:
    """The first resource (cpu, then memory, then others by name) the node lacks, as the scheduler
    library the kubelet admits with orders them: (name, requested, used, capacity)."""
    if wanted.cpu and used.cpu + wanted.cpu > allocatable.cpu:
        return ("cpu", wanted.cpu, used.cpu, allocatable.cpu)
    if wanted.memory and used.memory + wanted.memory > allocatable.memory:
        return ("memory", wanted.memory, used.memory, allocatable.memory)
    for name, quantity in sorted(wanted.other.items()):
        have = allocatable.other.get(name, 0)
        if quantity and used.other.get(name, 0) + quantity > have:
            return (name, quantity, used.other.get(name, 0), have)
    return None


def pending(
    pod: Mapping[str, Any], node: Mapping[str, Any], others: Iterable[Mapping[str, Any]]
) -> tuple[str, str] | None:
    """Why the kubelet cannot allocate the pod's new resources now: (reason, message), or None.

    ``others`` are the node's other active pods with their allocated resources. The pod alone
    over the node's allocatable is Infeasible (memory named first); not fitting beside the
    others is Deferred, with the kubelet's admission text.
    """
    allocatable, max_pods = node_allocatable(dict(node))
    wanted = pod_requests(dict(pod))
    if wanted.cpu > allocatable.cpu or wanted.memory > allocatable.memory:
        if wanted.memory > allocatable.memory:
            what = f"memory, requested: {wanted.memory}, capacity: {allocatable.memory}"
        else:
            what = f"cpu, requested: {wanted.cpu}, capacity: {allocatable.cpu}"
        return INFEASIBLE, f"Node didn't have enough capacity: {what}"
    others = list(others)
    if len(others) + 1 > max_pods:
        return DEFERRED, (
            f"Node didn't have enough resource: pods, requested: 1, used: {len(others)}, capacity: {max_pods}"
        )
    used = Requests()
    for other in others:
        used.add(pod_requests(dict(other)))
    short = shortfall(wanted, used, allocatable)
    if short is None:
        return None
    name, requested, in_use, capacity = short
    return DEFERRED, (
        f"Node didn't have enough resource: {name}, requested: {requested}, used: {in_use}, "
        f"capacity: {capacity}"
    )


def conditions(waiting: tuple[str, str] | None, in_progress: bool) -> list[Obj]:
    """The resize conditions the kubelet reports now (without timestamps); none when settled."""
    result: list[Obj] = []
    if waiting is not None:
        reason, message = waiting
        result.append({"type": PENDING, "status": "True", "reason": reason, "message": message})
    if in_progress:
        result.append({"type": IN_PROGRESS, "status": "True"})
    return result


__all__ = [
    "DEFERRED",
    "INFEASIBLE",
    "IN_PROGRESS",
    "PENDING",
    "RESIZE_CONDITIONS",
    "changed_resources",
    "conditions",
    "container_resources",
    "desired",
    "needs_restart",
    "pending",
    "resizable_containers",
    "same",
    "shortfall",
    "with_allocation",
]
