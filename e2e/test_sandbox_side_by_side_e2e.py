"""Two `kruise sandbox up` on one machine, started at once: each claims its own pod and node addresses,
each runs seed 002's CloneSet through its own kruise-webhook and kruise-manager, and a `kill -9` of one
leaves none of its processes behind while the other keeps working and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from pathlib import Path

import pytest
from harness import SAMPLE_CLONESET, Cluster, SandboxProcess, ready_kubeconfig

from tests.kit.polling import until
from tests.kit.proctree import Process, descendants, survivors

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

READY = 300.0  # two sandboxes installing kruise-py at once on a shared machine
GONE = 30.0


Networks = tuple[ipaddress.IPv4Network, ipaddress.IPv4Network]


async def start(tmp_path: Path, name: str) -> tuple[SandboxProcess, Cluster, Networks]:
    sandbox = SandboxProcess.start("--nodes", "2", "--speed", "20", "--kubeconfig", str(tmp_path / name))
    ready = await asyncio.to_thread(sandbox.wait_for, "ready", READY)
    addresses = await asyncio.to_thread(sandbox.wait_for, "  addresses:", 10)
    # "  addresses: pods 127.244.0.0/16, nodes 127.18.0.0/24"
    pods, nodes = (part.split()[-1] for part in addresses.split(":", 1)[1].split(","))
    networks = (ipaddress.IPv4Network(pods), ipaddress.IPv4Network(nodes))
    return sandbox, Cluster(ready_kubeconfig(ready), is_sandbox=True, nodes=2), networks


async def cloneset_ready(cluster: Cluster, replicas: int) -> None:
    await cluster.kubectl(
        "wait", "cloneset/sample", f"--for=jsonpath={{.status.readyReplicas}}={replicas}", "--timeout=180s"
    )


async def pod_ips(cluster: Cluster, *selector: str) -> list[ipaddress.IPv4Address]:
    _, out = await cluster.kubectl("get", "pods", *selector, "-o", "json")
    return [ipaddress.IPv4Address(p["status"]["podIP"]) for p in json.loads(out)["items"]]


async def all_gone(processes: set[Process], what: str) -> float:
    """Seconds until none of ``processes`` runs any more (fails naming the survivors)."""
    began = time.monotonic()
    await until(lambda: not survivors(processes), timeout=GONE, interval=0.05, message=what)
    return time.monotonic() - began


async def test_two_sandboxes_side_by_side(tmp_path: Path):
    began = time.monotonic()
    started = await asyncio.gather(start(tmp_path, "a"), start(tmp_path, "b"), return_exceptions=True)
    sandboxes = [s[0] for s in started if not isinstance(s, BaseException)]
    try:
        for outcome in started:
            if isinstance(outcome, BaseException):
                raise outcome
        (first, one, nets_one), (second, two, nets_two) = started  # type: ignore[misc]
        print(f"both sandboxes ready after {time.monotonic() - began:.1f}s: {nets_one} and {nets_two}")
        assert not any(a.overlaps(b) for a in nets_one for b in nets_two), (nets_one, nets_two)

        for cluster in (one, two):
            await cluster.kubectl("apply", "-f", "-", stdin=SAMPLE_CLONESET)
        await asyncio.gather(cloneset_ready(one, 3), cloneset_ready(two, 3))
        for cluster, (pods, nodes) in ((one, nets_one), (two, nets_two)):
            ips = await pod_ips(cluster, "-n", "kruise-system") + await pod_ips(cluster, "-l", "app=sample")
            # kruise-daemon runs with hostNetwork: its pods have their node's IP
            assert ips and all(ip in pods or ip in nodes for ip in ips), (pods, nodes, ips)
        print(f"both CloneSets ready after {time.monotonic() - began:.1f}s")

        processes = descendants(first.process.pid)
        assert len(processes) >= 4, processes  # two kruise-webhook, two kruise-manager, a daemon per node
        first.process.kill()
        first.process.wait()
        gone = await all_gone(processes, "kill -9")
        print(f"kill -9: its {len(processes)} processes gone after {gone:.2f}s")

        # the survivor still admits and reconciles: a scale-up goes through its webhook and manager
        await two.kubectl("scale", "cloneset/sample", "--replicas=4")
        await cloneset_ready(two, 4)

        processes = descendants(second.process.pid)
        assert second.terminate() == 0, second.output
        gone = await all_gone(processes, "SIGTERM")
        print(f"SIGTERM: its {len(processes)} processes gone after {gone:.2f}s")
    finally:
        for sandbox in sandboxes:
            if sandbox.process.poll() is None:
                sandbox.process.kill()
                sandbox.process.wait()
