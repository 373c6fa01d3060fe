"""A pod's QoS class, shared by the API emulator (status.qosClass, resize validation) and the kubelet."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from kruise.sandbox.quantity import amount

_COMPUTE = ("cpu", "memory")


def compute_qos(spec: dict[str, Any]) -> str:
    """qos.ComputePodQOS: cpu and memory summed over all containers (init ones too); positive
    quantities only; Guaranteed when every container limits both and the sums of requests equal
    the sums of limits, BestEffort when nothing is requested or limited."""
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = container.get("resources") or {}
        for name, value in (resources.get("requests") or {}).items():
            quantity = amount(value)
            if name in _COMPUTE and quantity is not None and quantity > 0:
                requests[name] = requests.get(name, Decimal(0)) + quantity
        found = set()
        for name, value in (resources.get("limits") or {}).items():
            quantity = amount(value)
            if name in _COMPUTE and quantity is not None and quantity > 0:
                found.add(name)
                limits[name] = limits.get(name, Decimal(0)) + quantity
        if not found >= set(_COMPUTE):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    equal = all(name in limits and limits[name] == req for name, req in requests.items())
    if guaranteed and equal and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
