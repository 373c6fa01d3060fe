"""What a Service's EndpointSlices and Endpoints should hold, computed from its pods.

Pure functions, worded after kube-controller-manager's endpointslice and endpoints controllers:

- a pod counts once it has an IP and is not terminal (``Succeeded``/``Failed``); EndpointSlices
  keep terminating pods (``ready: false``, ``serving`` = pod Ready, ``terminating: true``) while
  Endpoints keep them only with ``publishNotReadyAddresses``;
- each Service port's ``targetPort`` is resolved per pod (``FindPort``): a number is used as it
  is, a name is looked up in the pod's container ports (and restartable init containers) with
  the same protocol; a pod without that named port is served without that port;
- pods whose resolved ports differ go to different slices (a slice has one port list), at most
  ``MAX_ENDPOINTS_PER_SLICE`` endpoints each.

The simulator's controller (``endpoints``) writes the results; the sandbox apiserver's webhook
caller reads them to reach a ``service`` clientConfig.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kruise.sandbox.simulator.owners import is_ready, is_terminal

Obj = dict[str, Any]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY = "endpointslice-controller.k8s.io"
ENDPOINTS_MANAGED_BY_LABEL = "endpoints.kubernetes.io/managed-by"
ENDPOINTS_MANAGED_BY = "endpoint-controller"
HEADLESS_LABEL = "service.kubernetes.io/headless"
MAX_ENDPOINTS_PER_SLICE = 100
_RESERVED_LABELS = (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL)

PortKey = tuple[tuple[str, int, str], ...]


def selects(service: Obj, pod: Obj) -> bool:
    """The Service's selector (equality on every key) matches the pod; no selector selects nothing."""
    selector = (service.get("spec") or {}).get("selector") or {}
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def find_port(pod: Obj, service_port: Mapping[str, Any]) -> int | None:
    """podutil.FindPort: the container port a Service port's ``targetPort`` means for this pod."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    for container in [*(spec.get("containers") or []), *sidecars]:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def endpoint_ports(service: Obj, pod: Obj) -> list[Obj]:
    """The slice ports of ``service`` for ``pod``; ports the pod cannot serve are left out."""
    ports: list[Obj] = []
    for service_port in (service.get("spec") or {}).get("ports") or []:
        number = find_port(pod, service_port)
        if number is None:
            continue
        port: Obj = {
            "name": service_port.get("name") or "",
            "port": number,
            "protocol": service_port.get("protocol") or "TCP",
        }
        if service_port.get("appProtocol"):
            port["appProtocol"] = service_port["appProtocol"]
        ports.append(port)
    return ports


def port_key(ports: Iterable[Mapping[str, Any]]) -> PortKey:
    return tuple(sorted((p.get("name") or "", int(p["port"]), p.get("protocol") or "TCP") for p in ports))


def _pod_ip(pod: Obj) -> str:
    return (pod.get("status") or {}).get("podIP") or ""


def _terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _target_ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta.get("uid", "")}


def slice_endpoint(service: Obj, pod: Obj, zone_of: Callable[[str], str | None]) -> Obj:
    """One pod as an EndpointSlice endpoint (conditions as the endpointslice controller sets them)."""
    serving = is_ready(pod)
    terminating = _terminating(pod)
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    endpoint: Obj = {
        "addresses": [_pod_ip(pod)],
        "conditions": {
            "ready": publish or (serving and not terminating),
            "serving": serving,
            "terminating": terminating,
        },
        "targetRef": _target_ref(pod),
    }
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        endpoint["nodeName"] = node
        zone = zone_of(node)
        if zone:
            endpoint["zone"] = zone
    return endpoint


def _is_headless(service: Obj) -> bool:
    return (service.get("spec") or {}).get("clusterIP") == "None"


def managed_labels(service: Obj) -> dict[str, str]:
    """The Service's own labels (reserved keys dropped) plus the controller's."""
    own = (service.get("metadata") or {}).get("labels") or {}
    labels = {k: v for k, v in own.items() if k not in _RESERVED_LABELS}
    labels[SERVICE_NAME_LABEL] = service["metadata"]["name"]
    labels[MANAGED_BY_LABEL] = MANAGED_BY
    if _is_headless(service):
        labels[HEADLESS_LABEL] = ""
    return labels


def desired_slices(
    service: Obj, pods: Iterable[Obj], zone_of: Callable[[str], str | None] = lambda _: None
) -> list[tuple[list[Obj], list[Obj]]]:
    """``(ports, endpoints)`` per slice the Service should have, pods in name order."""
    groups: dict[PortKey, tuple[list[Obj], list[Obj]]] = {}
    chosen = [p for p in pods if selects(service, p) and _pod_ip(p) and not is_terminal(p)]
    for pod in sorted(chosen, key=lambda p: p["metadata"]["name"]):
        ports = endpoint_ports(service, pod)
        key = port_key(ports)
        groups.setdefault(key, (ports, []))[1].append(slice_endpoint(service, pod, zone_of))
    slices: list[tuple[list[Obj], list[Obj]]] = []
    for _, (ports, endpoints) in sorted(groups.items()):
        for start in range(0, len(endpoints), MAX_ENDPOINTS_PER_SLICE):
            slices.append((ports, endpoints[start : start + MAX_ENDPOINTS_PER_SLICE]))
    return slices


def desired_subsets(service: Obj, pods: Iterable[Obj]) -> list[Obj]:
    """The v1 Endpoints ``subsets``: ready pods in ``addresses``, others in ``notReadyAddresses``,
    one subset per distinct port list (``RepackSubsets``), addresses in IP order."""
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    groups: dict[PortKey, tuple[list[Obj], list[Obj], list[Obj]]] = {}
    for pod in pods:
        if not selects(service, pod) or not _pod_ip(pod) or is_terminal(pod):
            continue
        if _terminating(pod) and not publish:
            continue
        ports = endpoint_ports(service, pod)
        if not ports and ((service.get("spec") or {}).get("ports") or not _is_headless(service)):
            continue  # only a headless Service without ports lists bare addresses
        address: Obj = {"ip": _pod_ip(pod), "targetRef": _target_ref(pod)}
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            address["nodeName"] = node
        ready, not_ready = groups.setdefault(port_key(ports), ([], [], ports))[:2]
        (ready if publish or is_ready(pod) else not_ready).append(address)
    subsets: list[Obj] = []
    for _, (ready, not_ready, ports) in sorted(groups.items()):
        subset: Obj = {}
        if ready:
            subset["addresses"] = sorted(ready, key=lambda a: a["ip"])
        if not_ready:
            subset["notReadyAddresses"] = sorted(not_ready, key=lambda a: a["ip"])
        if ports:
            subset["ports"] = sorted(ports, key=lambda p: (p["name"], p["port"]))
        subsets.append(subset)
    return subsets


def endpoints_labels(service: Obj) -> dict[str, str]:
    own = (service.get("metadata") or {}).get("labels") or {}
    labels = {k: v for k, v in own.items() if k != HEADLESS_LABEL}
    labels[ENDPOINTS_MANAGED_BY_LABEL] = ENDPOINTS_MANAGED_BY
    if _is_headless(service):
        labels[HEADLESS_LABEL] = ""
    return labels
