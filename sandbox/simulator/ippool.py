"""The fake node runtime's pod addresses: what a host-local CNI plugin hands out on a real node."""

from __future__ import annotations

import ipaddress


class IPPool:
    """Unique pod IPs from the node's /24 (``.2`` to ``.254``)."""

    def __init__(self, cidr: str) -> None:
        network = ipaddress.ip_network(cidr)
        self._free = [str(ip) for ip in list(network.hosts())[1:]]
        self._used: set[str] = set()

    def take(self) -> str:
        if not self._free:
            raise RuntimeError("pod CIDR exhausted")
        ip = self._free.pop(0)
        self._used.add(ip)
        return ip

    def release(self, ip: str) -> None:
        if ip in self._used:
            self._used.discard(ip)
            self._free.append(ip)
