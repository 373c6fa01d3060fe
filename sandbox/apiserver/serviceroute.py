"""Reach a Service the way kube-proxy would: through one ready endpoint of its EndpointSlices.

The sandbox has no cluster IPs or DNS, so when the apiserver calls a webhook (or anything else)
by ``clientConfig.service {namespace, name, port}`` it needs a ``host:port`` that listens. This
module finds it in what the endpointslice controller stored: the Service port with that number,
the slice port of the same name, and a ready endpoint's address. Failures carry the texts a
kube-apiserver shows (``no endpoints available for service "x"``), so a webhook whose pods are
not ready yet fails exactly as it would on a real cluster.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

Obj = dict[str, Any]
# (group, plural) -> every stored object of that resource, all namespaces
ListStored = Callable[[str, str], Iterable[Obj]]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"


class ServiceUnreachable(Exception):
    """The Service cannot be routed to (missing, no such port, no ready endpoint)."""


def _in(obj: Obj, namespace: str) -> bool:
    return (obj.get("metadata") or {}).get("namespace") == namespace


def _labels(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def ready_addresses(slices: Iterable[Obj], port_name: str, protocol: str) -> list[str]:
    """``ip:port`` of every ready endpoint of ``slices`` for the slice port named ``port_name``."""
    found: list[str] = []
    for slice_ in slices:
        number = next(
            (
                p.get("port")
                for p in slice_.get("ports") or []
                if (p.get("name") or "") == port_name and (p.get("protocol") or "TCP") == protocol
            ),
            None,
        )
        if number is None:
            continue
        for endpoint in slice_.get("endpoints") or []:
            # a missing ready condition means ready (EndpointConditions.ready is "unknown = ready")
            if (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            found.extend(f"{address}:{number}" for address in endpoint.get("addresses") or [])
    return found


def resolve(
    list_stored: ListStored,
    namespace: str,
    name: str,
    port: int,
    choose: Callable[[list[str]], str] = random.choice,
) -> str:
    """A ``host:port`` serving Service ``namespace/name``'s ``port`` (``ServiceUnreachable`` if none)."""
    service = next(
        (
            s
            for s in list_stored("", "services")
            if _in(s, namespace) and (s.get("metadata") or {}).get("name") == name
        ),
        None,
    )
    if service is None:
        raise ServiceUnreachable(f'service "{name}" not found')
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return f"{spec.get('externalName', '')}:{port}"
    service_port = next((p for p in spec.get("ports") or [] if p.get("port") == port), None)
    if service_port is None:
        raise ServiceUnreachable(f'no service port {port} found for service "{name}"')
    slices = [
        s
        for s in list_stored("discovery.k8s.io", "endpointslices")
        if _in(s, namespace) and _labels(s).get(SERVICE_NAME_LABEL) == name
    ]
    addresses = ready_addresses(slices, service_port.get("name") or "", service_port.get("protocol") or "TCP")
    if not addresses:
        raise ServiceUnreachable(f'no endpoints available for service "{name}"')
    return choose(sorted(addresses))
