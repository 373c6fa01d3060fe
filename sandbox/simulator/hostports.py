"""Host ports: which a pod holds on its node, and when two collide.

The scheduler (filter ``NodePorts``) keeps pods whose host ports collide off one node, and the
kubelet rejects such a pod when something bound it there anyway (``admission``); both decide with
the scheduler library's rules, kept here once: a port with no ``hostIP`` binds every address, one
with no protocol is TCP, and only ``0.0.0.0`` is a wildcard (``::`` is an address like any other).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

BIND_ALL = "0.0.0.0"
REASON_PORTS = "node(s) didn't have free ports for the requested pod ports"


@dataclass(frozen=True)
class HostPort:
    """One host port a pod asks for, defaults filled in."""

    ip: str
    protocol: str
    port: int


def host_ports(pod: Mapping[str, Any]) -> list[HostPort]:
    """The host ports a pod holds while it runs: its containers' and its native sidecars' (init
    containers with ``restartPolicy: Always``); ports without a hostPort hold nothing."""
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    result: list[HostPort] = []
    for container in [*sidecars, *(spec.get("containers") or [])]:
        for port in container.get("ports") or []:
            number = int(port.get("hostPort") or 0)
            if number > 0:
                result.append(HostPort(port.get("hostIP") or BIND_ALL, port.get("protocol") or "TCP", number))
    return result


def port_conflict(wanted: HostPort, used: Iterable[HostPort]) -> bool:
    """Whether ``wanted`` collides with a port in use: same protocol and number, and either side
    binds every address or both bind the same one."""
    for other in used:
        if other.protocol != wanted.protocol or other.port != wanted.port:
            continue
        if BIND_ALL in (wanted.ip, other.ip) or other.ip == wanted.ip:
            return True
    return False


def ports_fit(pod: Mapping[str, Any], pods_on_node: Iterable[Mapping[str, Any]]) -> bool:
    """Whether none of the pod's host ports collides with one a pod on the node holds."""
    used = [port for other in pods_on_node for port in host_ports(other)]
    return not any(port_conflict(wanted, used) for wanted in host_ports(pod))


__all__ = ["BIND_ALL", "REASON_PORTS", "HostPort", "host_ports", "port_conflict", "ports_fit"]
