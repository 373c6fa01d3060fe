"""The pod subnets the real-node test modules name are pairwise disjoint and leave the default one alone.

A real-node sandbox refuses to start when the machine already routes part of its pod subnet (another
sandbox's bridge), so two modules whose subnets overlap cannot run at the same time, and neither can two
that both use the default (198.18.0.0/16). Modules that name a subnet of their own may run beside any
other; this keeps that true as modules are added (a new one picks a block no other module names).
"""

from __future__ import annotations

import ast
import ipaddress
from itertools import combinations
from pathlib import Path

from kruise.sandbox.realnode.network import DEFAULT_POD_SUBNET, TEST_RANGE

ROOT = Path(__file__).resolve().parents[2]
REAL_NODE_FOLDERS = ("e2e/containerd", "tests/integration/realnode", "tests/image")


def named_subnets(source: str) -> set[ipaddress.IPv4Network]:
    """String constants of a module that are networks inside the sandbox's test range."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "/" in node.value:
            try:
                network = ipaddress.IPv4Network(node.value)
            except ValueError:
                continue
            if network.subnet_of(TEST_RANGE):
                found.add(network)
    return found


def module_subnets() -> dict[str, set[ipaddress.IPv4Network]]:
    by_module = {}
    for folder in REAL_NODE_FOLDERS:
        for path in sorted((ROOT / folder).glob("*.py")):
            subnets = named_subnets(path.read_text())
            if subnets:
                by_module[str(path.relative_to(ROOT))] = subnets
    return by_module


def test_named_subnets_found_in_the_source() -> None:
    source = 'ARGS = ("--pod-subnet", "198.19.0.0/18")\nOTHER = "10.0.0.0/8"\nPATH = "a/b"\n'
    assert named_subnets(source) == {ipaddress.IPv4Network("198.19.0.0/18")}


def test_real_node_modules_pod_subnets_are_disjoint_and_off_the_default() -> None:
    by_module = module_subnets()
    assert "e2e/containerd/test_upstream_statefulset_containerd_e2e.py" in by_module, by_module
    default = ipaddress.IPv4Network(DEFAULT_POD_SUBNET)
    on_default = {module: s for module, s in by_module.items() for subnet in s if subnet.overlaps(default)}
    assert on_default == {}, "name no subnet to use the default; a subnet of its own must not overlap it"
    owned = [(module, subnet) for module, subnets in by_module.items() for subnet in subnets]
    overlapping = [(a, b) for a, b in combinations(owned, 2) if a[0] != b[0] and a[1].overlaps(b[1])]
    assert overlapping == [], "these modules' pod subnets overlap, so they cannot run side by side"
