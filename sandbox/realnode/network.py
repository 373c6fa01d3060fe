"""The pod network: one Linux bridge per sandbox, an address block per node, nothing routed out.

All pods of all nodes share one L2 segment (the bridge) and one subnet, so pods on different nodes
reach each other without routes; each node's host-local IPAM hands out addresses from its own /24
block of that subnet. The bridge holds the subnet's first address: the host side, where pods reach
the API emulator. There is no uplink, no NAT and no default route in a pod. The default subnet lies
in 198.18.0.0/15 (RFC 2544, benchmarking), and the sandbox refuses to start if the machine already
routes any part of it, because the bridge's route would shadow that one.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kruise.sandbox.realnode.prereqs import binary

DEFAULT_POD_SUBNET = "198.18.0.0/16"
TEST_RANGE = ipaddress.IPv4Network("198.18.0.0/15")
NODE_BLOCK_PREFIX = 24
CNI_VERSION = "0.4.0"
BRIDGE_PREFIX = "kpy"


class NetworkError(RuntimeError):
    """The pod network cannot be set up (conflicting route, bad subnet, an ``ip`` command failed)."""


def bridge_name_for(directory: Path) -> str:
    """A stable interface name (<= 15 chars) per sandbox directory, so leftovers are recognisable."""
    digest = hashlib.sha256(str(Path(directory).resolve()).encode()).hexdigest()[:8]
    return f"{BRIDGE_PREFIX}{digest}"


@dataclass(frozen=True)
class PodNetwork:
    subnet: ipaddress.IPv4Network
    bridge: str

    @classmethod
    def create(cls, subnet: str, bridge: str) -> PodNetwork:
        try:
            network = ipaddress.IPv4Network(subnet)
        except ValueError as exc:
            msg = f"pod subnet: must be an IPv4 network, e.g. {DEFAULT_POD_SUBNET}: {exc}"
            raise NetworkError(msg) from exc
        if network.prefixlen > NODE_BLOCK_PREFIX - 1:
            raise NetworkError(
                f"pod subnet {network}: must be /{NODE_BLOCK_PREFIX - 1} or larger "
                f"(one /{NODE_BLOCK_PREFIX} for the host, one per node)"
            )
        if not bridge or len(bridge) > 15:
            raise NetworkError(f"bridge name: must be 1-15 characters, got {bridge!r}")
        return cls(network, bridge)

    @property
    def host_address(self) -> ipaddress.IPv4Address:
        """The bridge's own address: the host as pods see it."""
        return self.subnet.network_address + 1

    @property
    def host_interface(self) -> str:
        return f"{self.host_address}/{self.subnet.prefixlen}"

    @property
    def max_nodes(self) -> int:
        return 2 ** (NODE_BLOCK_PREFIX - self.subnet.prefixlen) - 1

    def node_block(self, index: int) -> ipaddress.IPv4Network:
        """Node ``index`` (0-based) gets block ``index + 1``; block 0 holds the host address."""
        if not 0 <= index < self.max_nodes:
            last = self.max_nodes - 1
            raise NetworkError(f"node index: must be in 0..{last} for {self.subnet}, got {index}")
        blocks = self.subnet.subnets(new_prefix=NODE_BLOCK_PREFIX)
        for position, block in enumerate(blocks):
            if position == index + 1:
                return block
        raise AssertionError("unreachable: index checked against max_nodes")

    def cni_conflist(self, index: int, ipam_dir: Path) -> dict[str, object]:
        """The CNI configuration of node ``index``: bridge + host-local (state in ``ipam_dir``) + loopback."""
        block = self.node_block(index)
        return {
            "cniVersion": CNI_VERSION,
            "name": f"{self.bridge}-node{index}",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": self.bridge,
                    # The sandbox addresses the bridge itself: isGateway would make the plugin
                    # turn on the host's ip_forward, and a pod needs no gateway on one segment.
                    "isGateway": False,
                    "isDefaultGateway": False,
                    "ipMasq": False,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "dataDir": str(ipam_dir),
                        "ranges": [
                            [
                                {
                                    "subnet": str(self.subnet),
                                    "rangeStart": str(block.network_address + 1),
                                    "rangeEnd": str(block.broadcast_address - 1),
                                }
                            ]
                        ],
                    },
                },
                {"type": "loopback"},
            ],
        }


def conflicting_routes(
    subnet: ipaddress.IPv4Network, routes: Iterable[Mapping[str, object]], own_bridge: str
) -> list[str]:
    """Routes (from ``ip -j route``) whose destination overlaps ``subnet``, described for a person.

    The default route is no conflict (ours is more specific on purpose); a route on our own bridge
    is a leftover of this very sandbox, removed with the bridge.
    """
    found = []
    for route in routes:
        dst = str(route.get("dst", ""))
        if dst in {"", "default"} or route.get("dev") == own_bridge:
            continue
        try:
            network = ipaddress.ip_network(dst, strict=False)
        except ValueError:
            continue
        if network.version == 4 and network.prefixlen > 0 and network.overlaps(subnet):
            via = f" via {route['gateway']}" if "gateway" in route else ""
            found.append(f"{dst} dev {route.get('dev', '?')}{via}")
    return found


async def ip(*args: str, check: bool = True) -> str:
    process = await asyncio.create_subprocess_exec(
        binary("ip"),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    out, err = await process.communicate()
    if check and process.returncode != 0:
        raise NetworkError(f"ip {' '.join(args)}: exit {process.returncode}: {err.decode().strip()}")
    return out.decode()


async def read_routes() -> list[dict[str, object]]:
    return json.loads(await ip("-j", "route", "show", "table", "main") or "[]")


async def link_exists(name: str) -> bool:
    return bool((await ip("-j", "link", "show", "dev", name, check=False)).strip())


class Bridge:
    """The sandbox's bridge: created (with the host address) on ``up``, deleted on ``down``."""

    def __init__(self, network: PodNetwork) -> None:
        self.network = network

    async def up(self) -> None:
        conflicts = conflicting_routes(self.network.subnet, await read_routes(), self.network.bridge)
        if conflicts:
            raise NetworkError(
                f"pod subnet {self.network.subnet} overlaps route(s) this machine already has: "
                f"{'; '.join(conflicts)}; choose another pod subnet (e.g. one inside {TEST_RANGE})"
            )
        if await link_exists(self.network.bridge):
            # left over from a crashed run of this very sandbox (the name is derived from its directory)
            await ip("link", "del", "dev", self.network.bridge)
        await ip("link", "add", "name", self.network.bridge, "type", "bridge")
        try:
            await ip("addr", "add", self.network.host_interface, "dev", self.network.bridge)
            await ip("link", "set", "dev", self.network.bridge, "up")
        except BaseException:
            await self.down()
            raise

    async def down(self) -> None:
        if await link_exists(self.network.bridge):
            await ip("link", "del", "dev", self.network.bridge)
