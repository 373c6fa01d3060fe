"""Scheduling predicates and node choice, as pure functions over pod and node dicts.

These mirror kube-scheduler's filter plugins that matter for Kruise workloads (NodeUnschedulable,
NodeAffinity incl. nodeSelector, TaintToleration, NodePorts, NodeResourcesFit with pod count) and phrase
failures exactly as the scheduler does, because users and tests read them in
``PodScheduled=False`` conditions and ``FailedScheduling`` events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.sandbox.quantity import milli, whole
from kruise.sandbox.simulator.hostports import REASON_PORTS, ports_fit

Obj = dict[str, Any]

REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_TOO_MANY_PODS = "Too many pods"
FILTERING_EFFECTS = ("NoSchedule", "NoExecute")


# ------------------------------------------------------------------ affinity


def _match_requirement(values: Mapping[str, str], requirement: Mapping[str, Any]) -> bool:
    key = requirement.get("key", "")
    operator = requirement.get("operator", "")
    wanted = requirement.get("values") or []
    present = key in values
    value = values.get(key)
    if operator == "In":
        return present and value in wanted
    if operator == "NotIn":
        return not present or value not in wanted
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt"):
        if not present or len(wanted) != 1:
            return False
        try:
            have, limit = int(value or ""), int(wanted[0])
        except ValueError:
            return False
        return have > limit if operator == "Gt" else have < limit
    return False


def match_node_selector_term(node: Obj, term: Mapping[str, Any]) -> bool:
    """One nodeSelectorTerm: all its expressions and fields must hold; an empty term matches nothing."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    node_fields = {"metadata.name": (node.get("metadata") or {}).get("name", "")}
    return all(_match_requirement(labels, r) for r in expressions) and all(
        r.get("key") == "metadata.name" and _match_requirement(node_fields, r) for r in fields
    )


def matches_node_affinity(pod: Obj, node: Obj) -> bool:
    """nodeSelector (every pair) AND required node affinity (any term)."""
    spec = pod.get("spec") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if terms is None:
        return True
    return any(match_node_selector_term(node, term) for term in terms)


def preferred_affinity_score(pod: Obj, node: Obj) -> int:
    """The weights of the pod's preferred node-affinity terms the node matches, summed: what
    kube-scheduler's NodeAffinity score plugin ranks feasible nodes by (before normalising)."""
    preferred = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = preferred.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    return sum(
        int(term.get("weight") or 0)
        for term in terms
        if match_node_selector_term(node, term.get("preference") or {})
    )


# -------------------------------------------------------------------- taints


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Whether one toleration tolerates one taint (v1 helper ToleratesTaint)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    if operator == "Equal":
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def untolerated_taint(pod: Obj, node: Obj) -> Mapping[str, Any] | None:
    """The first NoSchedule/NoExecute taint of the node that the pod does not tolerate."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in FILTERING_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def taint_reason(taint: Mapping[str, Any]) -> str:
    return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"


# ----------------------------------------------------------------- resources


@dataclass
class Requests:
    """Resource amounts: cpu in millicores, memory in bytes, plus any other named resource."""

    cpu: int = 0
    memory: int = 0
    other: dict[str, int] = field(default_factory=dict)

    def add(self, other: Requests) -> None:
        self.cpu += other.cpu
        self.memory += other.memory
        for name, amount in other.other.items():
            self.other[name] = self.other.get(name, 0) + amount

    def maximum(self, other: Requests) -> None:
        self.cpu = max(self.cpu, other.cpu)
        self.memory = max(self.memory, other.memory)
        for name, amount in other.other.items():
            self.other[name] = max(self.other.get(name, 0), amount)


def _container_requests(container: Mapping[str, Any]) -> Requests:
    resources = container.get("resources") or {}
    amounts = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    result = Requests()
    for name, value in amounts.items():
        if name == "cpu":
            result.cpu = milli(value)
        elif name == "memory":
            result.memory = whole(value)
        elif name not in ("ephemeral-storage",) and not name.startswith("hugepages-"):
            result.other[name] = whole(value)
    return result


def pod_requests(pod: Obj) -> Requests:
    """Effective pod request: regular containers plus native sidecars, at least any init container's
    (counting sidecars started before it), plus overhead — the scheduler's computePodResourceRequest."""
    spec = pod.get("spec") or {}
    total = Requests()
    for container in spec.get("containers") or []:
        total.add(_container_requests(container))
    sidecars = Requests()
    init_peak = Requests()
    for container in spec.get("initContainers") or []:
        requests = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            sidecars.add(requests)
            init_peak.maximum(sidecars)
        else:
            running = Requests()
            running.add(sidecars)
            running.add(requests)
            init_peak.maximum(running)
    total.add(sidecars)
    total.maximum(init_peak)
    overhead = spec.get("overhead") or {}
    if overhead:
        total.add(_container_requests({"resources": {"requests": overhead}}))
    return total


def node_allocatable(node: Obj) -> tuple[Requests, int]:
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    result = _container_requests(
        {"resources": {"requests": {k: v for k, v in allocatable.items() if k != "pods"}}}
    )
    return result, whole(allocatable.get("pods", "110"))


def fit_reasons(pod: Obj, node: Obj, pods_on_node: Sequence[Obj]) -> list[str]:
    """NodeResourcesFit failures ("Too many pods", "Insufficient cpu", ...), empty when the pod fits."""
    allocatable, max_pods = node_allocatable(node)
    reasons: list[str] = []
    if len(pods_on_node) + 1 > max_pods:
        reasons.append(REASON_TOO_MANY_PODS)
    wanted = pod_requests(pod)
    used = Requests()
    for other in pods_on_node:
        used.add(pod_requests(other))
    if wanted.cpu and used.cpu + wanted.cpu > allocatable.cpu:
        reasons.append("Insufficient cpu")
    if wanted.memory and used.memory + wanted.memory > allocatable.memory:
        reasons.append("Insufficient memory")
    for name, amount in sorted(wanted.other.items()):
        if amount and used.other.get(name, 0) + amount > allocatable.other.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


# ------------------------------------------------------------------ decision


def filter_reasons(pod: Obj, node: Obj, pods_on_node: Sequence[Obj]) -> list[str]:
    """Why ``node`` cannot take ``pod`` (empty list: it can), in the scheduler's plugin order."""
    spec = node.get("spec") or {}
    if spec.get("unschedulable"):
        unschedulable_taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        if not any(tolerates(t, unschedulable_taint) for t in tolerations):
            return [REASON_UNSCHEDULABLE]
    if not matches_node_affinity(pod, node):
        return [REASON_AFFINITY]
    taint = untolerated_taint(pod, node)
    if taint is not None:
        return [taint_reason(taint)]
    if not ports_fit(pod, pods_on_node):
        return [REASON_PORTS]
    return fit_reasons(pod, node, pods_on_node)


@dataclass
class Decision:
    """Either a chosen ``node`` or the FailedScheduling ``message``."""

    node: str | None
    message: str = ""


def fit_error_message(total: int, reasons: Counter[str]) -> str:
    """``0/3 nodes are available: 1 Too many pods, 2 node(s) ... .`` plus the preemption tail."""
    if total == 0:
        return "no nodes available to schedule pods"
    parts = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
    return (
        f"0/{total} nodes are available: {parts}. preemption: 0/{total} nodes are available: "
        f"{total} Preemption is not helpful for scheduling."
    )


def choose_node(pod: Obj, nodes: Iterable[Obj], pods_by_node: Mapping[str, Sequence[Obj]]) -> Decision:
    """The feasible node the pod's preferred node affinity weighs most, then the one with the fewest
    pods (then lowest cpu requested, then name); or why none fits. Preferred affinity goes first because
    in kube-scheduler a matching term outweighs the spreading scores (a PersistentPodState's preferred
    hostname brings a recreated pod back to its node)."""
    node_list = list(nodes)
    reasons: Counter[str] = Counter()
    feasible: list[tuple[int, int, int, str]] = []
    for node in node_list:
        name = node["metadata"]["name"]
        on_node = pods_by_node.get(name, ())
        failures = filter_reasons(pod, node, on_node)
        if failures:
            reasons.update(failures)
            continue
        cpu = sum(pod_requests(p).cpu for p in on_node)
        feasible.append((-preferred_affinity_score(pod, node), len(on_node), cpu, name))
    if feasible:
        return Decision(node=min(feasible)[3])
    return Decision(node=None, message=fit_error_message(len(node_list), reasons))
