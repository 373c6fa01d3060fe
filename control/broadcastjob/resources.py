"""The scheduler's resource-fit check for one pod on an otherwise empty node.

A BroadcastJob asks "could this pod run on that node at all?", not "is there room right now?":
upstream runs the scheduler's ``noderesources.Fits`` against a NodeInfo holding only the node, so
the pod's requests are compared with the node's whole allocatable. Requests follow the
scheduler's ``PodRequests``: regular containers add up, sidecars (init containers with
``restartPolicy: Always``) add to everything after them, a plain init container counts as the
maximum with the sidecars started before it, and ``overhead`` is added on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api.goquantity import Quantity, QuantityError
from kruise.api.objects import Obj, section, status_of

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


def scaled(name: str, value: Any) -> int:
    """What the scheduler compares: millicores for cpu (MilliValue), else whole units (Value),
    both rounded up.

    Raises ValueError naming the resource and value: the apiserver rejects such quantities, so
    one reaching here is a bug elsewhere, not something to guess about."""
    try:
        amount = Quantity.of(value)
    except QuantityError as error:
        raise ValueError(f"quantity {name}={value!r}: {error}") from error
    return amount.milli_value() if name == CPU else amount.whole_value()


def is_scalar_resource(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended resources, hugepages and attachable volumes."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    # IsExtendedResourceName: a domain-qualified name outside kubernetes.io, not a quota "requests." name
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def _counted(name: str) -> bool:
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name)


def _requests(container: Obj) -> dict[str, int]:
    raw = section(container, "resources").get("requests") or {}
    return {name: scaled(name, value) for name, value in raw.items() if _counted(name)}


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, 0) + value


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for name, value in other.items():
        into[name] = max(into.get(name, 0), value)


def pod_requests(pod_spec: Obj) -> dict[str, int]:
    """resourcehelper.PodRequests for the resources the fit check looks at (scaled as by ``scaled``)."""
    total: dict[str, int] = {}
    for container in pod_spec.get("containers") or []:
        _add(total, _requests(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod_spec.get("initContainers") or []:
        own = _requests(container)
        if container.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            during = dict(sidecars)
        else:
            during = dict(own)
            _add(during, sidecars)
        _max(init_peak, during)
    _max(total, init_peak)
    overhead = pod_spec.get("overhead") or {}
    _add(total, {name: scaled(name, value) for name, value in overhead.items() if _counted(name)})
    return total


def insufficient_resources(pod_spec: Obj, node: Obj) -> list[str]:
    """noderesources.Fits on a NodeInfo holding only ``node``: the failure reasons, empty when it fits.

    The pod count comes first ("Too many pods" when the node allows no pod: a node that does not
    report ``allocatable.pods`` allows none, as in the scheduler); then cpu, memory,
    ephemeral-storage and scalar resources, each only when the pod requests some."""
    allocatable = status_of(node).get("allocatable") or {}
    reasons: list[str] = []
    allowed_pods = scaled(PODS, allocatable[PODS]) if PODS in allocatable else 0
    if allowed_pods < 1:
        reasons.append("Too many pods")
    wanted = pod_requests(pod_spec)
    for name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        amount = wanted.get(name, 0)
        if amount > 0 and amount > _allocatable(allocatable, name):
            reasons.append(f"Insufficient {name}")
    for name in sorted(n for n in wanted if is_scalar_resource(n)):
        amount = wanted[name]
        if amount > 0 and amount > _allocatable(allocatable, name):
            reasons.append(f"Insufficient {name}")
    return reasons


def _allocatable(allocatable: Obj, name: str) -> int:
    return scaled(name, allocatable[name]) if name in allocatable else 0
