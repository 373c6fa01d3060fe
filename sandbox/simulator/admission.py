"""Kubelet admission: the GeneralPredicates a kubelet checks before it starts a pod bound to it.

A pod can reach a node without the scheduler's filters (``spec.nodeName`` set by its creator), and
the kubelet is the last word then: a pod that does not fit beside the pods already admitted there
is rejected, never started — phase ``Failed``, the predicate's reason, ``Pod was rejected: ...`` —
and controllers (a StatefulSet, a ReplicaSet) delete and recreate it. Pure functions over pod and
node dicts, in the order and words of kubernetes' ``pkg/kubelet/lifecycle/predicate.go`` and the
scheduler library it calls (``AdmissionCheck``): resources, node affinity/selector, host ports;
the first failure is the one reported. Node name needs no check here (the kubelet only sees pods
bound to it); NoExecute taints are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.sandbox.simulator.hostports import REASON_PORTS, ports_fit
from kruise.sandbox.simulator.resize import shortfall
from kruise.sandbox.simulator.scheduling import (
    REASON_AFFINITY,
    Requests,
    matches_node_affinity,
    node_allocatable,
    pod_requests,
)

Obj = dict[str, Any]

NODE_PORTS = "NodePorts"
NODE_AFFINITY = "NodeAffinity"
REJECTED_PREFIX = "Pod was rejected: "
OUT_OF = {"cpu": "OutOfcpu", "memory": "OutOfmemory", "pods": "OutOfpods"}


@dataclass(frozen=True)
class Rejection:
    """Why the kubelet refused a pod: ``reason`` is the status reason and the Warning event's,
    ``message`` the event's; the status message carries the kubelet's prefix."""

    reason: str
    message: str

    @property
    def status_message(self) -> str:
        return REJECTED_PREFIX + self.message


def _resources(pod: Obj, node: Obj, admitted: Sequence[Obj]) -> Rejection | None:
    """The first resource the node lacks for the pod beside the admitted pods (pod count first,
    then cpu, memory, other resources by name). Resources the node does not list are dropped
    from the request first, as the kubelet does for extended resources it does not know."""
    allocatable, max_pods = node_allocatable(node)
    if len(admitted) + 1 > max_pods:
        return _insufficient("pods", 1, len(admitted), max_pods)
    wanted = pod_requests(pod)
    wanted.other = {name: value for name, value in wanted.other.items() if name in allocatable.other}
    used = Requests()
    for other in admitted:
        used.add(pod_requests(other))
    short = shortfall(wanted, used, allocatable)
    return None if short is None else _insufficient(*short)


def _insufficient(name: str, requested: int, used: int, capacity: int) -> Rejection:
    return Rejection(
        OUT_OF.get(name, f"OutOf{name}"),
        f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, "
        f"capacity: {capacity}",
    )


def _predicate(name: str, reason: str) -> Rejection:
    return Rejection(name, f"Predicate {name} failed: {reason}")


def admit(pod: Obj, node: Obj, admitted: Sequence[Obj]) -> Rejection | None:
    """None if the kubelet admits ``pod`` to ``node`` (the Node object: labels, allocatable)
    beside ``admitted`` (the pods it runs there, with their allocated resources); else the first
    failing predicate."""
    short = _resources(pod, node, admitted)
    if short is not None:
        return short
    if not matches_node_affinity(pod, node):
        return _predicate(NODE_AFFINITY, REASON_AFFINITY)
    if not ports_fit(pod, admitted):
        return _predicate(NODE_PORTS, REASON_PORTS)
    return None


def needs_node_labels(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's admission reads the node's labels (a nodeSelector or required node
    affinity), so the kubelet must look at the Node as it is now."""
    spec = pod.get("spec") or {}
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return bool(spec.get("nodeSelector")) or "requiredDuringSchedulingIgnoredDuringExecution" in affinity


__all__ = ["NODE_AFFINITY", "NODE_PORTS", "Rejection", "admit", "needs_node_labels"]
