"""Pod network planning: route conflicts, per-node blocks, the CNI configuration."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from kruise.sandbox.realnode.network import (
    DEFAULT_POD_SUBNET,
    TEST_RANGE,
    NetworkError,
    PodNetwork,
    bridge_name_for,
    conflicting_routes,
)

SUBNET = ipaddress.IPv4Network(DEFAULT_POD_SUBNET)


def test_default_subnet_is_in_the_benchmarking_range() -> None:
    assert SUBNET.subnet_of(TEST_RANGE)


def test_routes_overlapping_the_subnet_are_named() -> None:
    routes = [
        {"dst": "default", "gateway": "192.0.2.1", "dev": "eth0"},
        {"dst": "192.0.2.0/24", "dev": "eth0"},
        {"dst": "198.18.5.0/24", "dev": "vpn0"},
        {"dst": "198.0.0.0/8", "gateway": "192.0.2.9", "dev": "eth0"},
        {"dst": "198.18.0.0/16", "dev": "kpyleft"},
        {"dst": "fe80::/64", "dev": "eth0"},
    ]
    assert conflicting_routes(SUBNET, routes, own_bridge="kpyleft") == [
        "198.18.5.0/24 dev vpn0",
        "198.0.0.0/8 dev eth0 via 192.0.2.9",
    ]


def test_host_address_and_node_blocks() -> None:
    network = PodNetwork.create(DEFAULT_POD_SUBNET, "kpy0")
    assert network.host_interface == "198.18.0.1/16"
    assert [str(network.node_block(i)) for i in (0, 1)] == ["198.18.1.0/24", "198.18.2.0/24"]
    assert network.max_nodes == 255
    with pytest.raises(NetworkError, match="node index"):
        network.node_block(255)


def test_cni_conflist_has_no_gateway_no_masquerade_and_own_ipam_state(tmp_path: Path) -> None:
    network = PodNetwork.create("198.19.0.0/20", "kpy0")
    conflist = network.cni_conflist(2, tmp_path / "ipam")
    bridge, loopback = conflist["plugins"]
    assert loopback == {"type": "loopback"}
    assert (bridge["type"], bridge["bridge"]) == ("bridge", "kpy0")
    assert bridge["isGateway"] is False and bridge["isDefaultGateway"] is False and bridge["ipMasq"] is False
    assert bridge["ipam"]["dataDir"] == str(tmp_path / "ipam")
    assert "routes" not in bridge["ipam"]
    assert bridge["ipam"]["ranges"] == [
        [{"subnet": "198.19.0.0/20", "rangeStart": "198.19.3.1", "rangeEnd": "198.19.3.254"}]
    ]


@pytest.mark.parametrize(
    ("subnet", "bridge", "match"),
    [
        ("not-a-net", "kpy0", "pod subnet"),
        ("198.18.0.0/24", "kpy0", "pod subnet"),
        ("198.18.0.0/16", "a-very-long-bridge-name", "bridge name"),
    ],
)
def test_bad_network_settings_are_refused(subnet: str, bridge: str, match: str) -> None:
    with pytest.raises(NetworkError, match=match):
        PodNetwork.create(subnet, bridge)


def test_bridge_name_is_stable_and_short(tmp_path: Path) -> None:
    name = bridge_name_for(tmp_path)
    assert name == bridge_name_for(tmp_path / ".") and len(name) <= 15
    assert name != bridge_name_for(tmp_path / "other")
