"""A pod's QoS class from its spec, as Kubernetes' ``qos.GetPodQOS`` computes it (v1.32).

In-place vertical scaling may not move a pod to another QoS class (kubelet would have to move it
to another cgroup), so the in-place update engine compares the class of the old and the new
template. Only cpu and memory count; zero or negative quantities count as unset. Requests and
limits are summed over app and init containers; the pod is Guaranteed when every container sets
positive cpu and memory limits and the summed requests equal the summed limits resource by
resource. Pod-level ``spec.resources`` (the PodLevelResources gate, off by default in 1.32) is not
considered, as upstream kruise's vendored Kubernetes does not with the gate off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api.goquantity import Quantity

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"
QOS_COMPUTE_RESOURCES = frozenset({"cpu", "memory"})


def _positive(resources: Mapping[str, Any] | None) -> dict[str, Quantity]:
    """The cpu/memory entries of a resource list whose quantity is above zero."""
    found = {}
    for name, raw in (resources or {}).items():
        if name not in QOS_COMPUTE_RESOURCES:
            continue
        quantity = Quantity.of(raw)
        if quantity.value > 0:
            found[name] = quantity
    return found


def _add(totals: dict[str, Quantity], extra: Mapping[str, Quantity]) -> None:
    for name, quantity in extra.items():
        totals[name] = quantity.add(totals[name]) if name in totals else quantity


def pod_qos_class(pod_spec: Mapping[str, Any]) -> str:
    """Guaranteed, Burstable or BestEffort for a pod (or pod template) spec.

    Raises ``QuantityError`` for a resource value that is not a quantity.
    """
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    for container in [*(pod_spec.get("containers") or []), *(pod_spec.get("initContainers") or [])]:
        resources = container.get("resources") or {}
        _add(requests, _positive(resources.get("requests")))
        container_limits = _positive(resources.get("limits"))
        _add(limits, container_limits)
        if not container_limits.keys() >= QOS_COMPUTE_RESOURCES:
            guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed:
        guaranteed = all(name in limits and limits[name].cmp(req) == 0 for name, req in requests.items())
    if guaranteed and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE
