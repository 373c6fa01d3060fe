"""kruise-manager keeps the Lease through a 1000-pod CloneSet scale-up at QPS 20 (issue 11 bug 2).

On a real cluster the lease renewals starved behind this very rollout when they shared the controllers'
client: the lease was lost after the renew deadline and the manager exited mid-rollout. Here the real
Manager runs with leader election on (upstream's timings: 15 s lease, 10 s renew deadline, 2 s retry)
and the controllers' client at QPS 20 / burst 30, against the emulator and simulated nodes; an
observer reads the Lease all along and the rollout must finish with the same holder, no transition and
no renewal gap near the renew deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from kruise.api import cloneset as cloneset_api
from kruise.kube.client import Client
from kruise.kube.leaderelection import LeadershipLost
from kruise.kube.resources import CLONESETS, LEASES, NAMESPACES
from kruise.manager.app import Manager
from kruise.manager.controllers import cloneset, podreadiness
from kruise.manager.options import parse_args
from kruise.sandbox.cluster import apply_crds, load_crds
from kruise.sandbox.simulator import Simulator, Timing

ROLLOUT_TIMEOUT = 900.0
pytestmark = [pytest.mark.slow, pytest.mark.timeout(ROLLOUT_TIMEOUT + 120)]

CRD_DIR = Path(__file__).resolve().parents[3] / "crds"
LEASE_NS = "kruise-system"
REPLICAS = 1000
QPS, BURST = 20, 30
RENEW_DEADLINE = 10.0


def manifest(name: str, replicas: int) -> dict[str, Any]:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
            },
        },
    }
    # No webhook runs here: default the object as it would.
    model = cloneset_api.CloneSet.model_validate(body)
    cloneset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


class LeaseWatch:
    """Reads the Lease every 0.5 s and records every renewal and every holder it saw."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.holders: set[str] = set()
        self.transitions: set[int] = set()
        self.renewals: list[tuple[float, str]] = []

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            spec = (await self.client.get(LEASES, "kruise-manager", LEASE_NS))["spec"]
            self.holders.add(spec.get("holderIdentity") or "")
            self.transitions.add(int(spec.get("leaseTransitions") or 0))
            if not self.renewals or self.renewals[-1][1] != spec["renewTime"]:
                self.renewals.append((loop.time(), spec["renewTime"]))
            await asyncio.sleep(0.5)

    def longest_gap(self, until: float) -> float:
        times = [t for t, _ in self.renewals] + [until]
        return max(b - a for a, b in itertools.pairwise(times))


async def test_manager_keeps_the_lease_through_a_1000_pod_scale_up_at_qps_20(emulator, record_property):
    await apply_crds(emulator.kubeconfig, load_crds(CRD_DIR), timeout=30)
    cri_dir = Path(tempfile.mkdtemp(prefix="lease-scale-", dir="/tmp"))
    simulator = Simulator(
        emulator.kubeconfig,
        nodes=4,
        speed=100,
        cri_socket_dir=cri_dir,
        pods_per_node=300,
        timing=Timing(run_seconds=20.0, init_seconds=1.0, termination_seconds=1.0),
    )
    await simulator.start()
    observer = await Client.from_kubeconfig(emulator.kubeconfig, qps=100, burst=100)
    await observer.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LEASE_NS}}
    )
    options = parse_args(
        ["--kubeconfig", str(emulator.kubeconfig), "--metrics-addr", "127.0.0.1:0",
         "--health-probe-addr", "127.0.0.1:0", "--rest-config-qps", str(QPS),
         "--rest-config-burst", str(BURST), "--leader-election-namespace", LEASE_NS],
        env={},
    )  # fmt: skip
    assert (options.lease_duration, options.renew_deadline, options.retry_period) == (
        15.0,
        RENEW_DEADLINE,
        2.0,
    )
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=options.qps, burst=options.burst)
    manager = Manager(client, options, [cloneset.SETUP, podreadiness.SETUP])
    running = asyncio.create_task(manager.run())
    watch = LeaseWatch(observer)
    watching: asyncio.Task[None] | None = None
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(60):
            while not manager.leading:
                assert not running.done(), running
                await asyncio.sleep(0.1)
        watching = asyncio.create_task(watch.run())
        started = next_report = loop.time()
        await observer.create(CLONESETS, manifest("big", REPLICAS))
        async with asyncio.timeout(ROLLOUT_TIMEOUT):
            while True:
                if running.done():
                    running.result()  # LeadershipLost: the bug
                    pytest.fail("the manager stopped running mid-rollout")
                status = (await observer.get(CLONESETS, "big", "default")).get("status") or {}
                if status.get("readyReplicas") == REPLICAS and status.get("replicas") == REPLICAS:
                    break
                if loop.time() >= next_report:  # progress, for a slow machine's log
                    next_report += 30
                    elapsed, ready = loop.time() - started, status.get("readyReplicas")
                    print(f"{elapsed:.0f} s: {status.get('replicas')} pods, {ready} ready")
                await asyncio.sleep(1.0)
        finished = loop.time()
        record_property("rollout_seconds", round(finished - started, 1))
        record_property("longest_renewal_gap_seconds", round(watch.longest_gap(finished), 2))
        print(
            f"1000 pods ready in {finished - started:.1f} s at QPS {QPS}; "
            f"longest gap between observed renewals {watch.longest_gap(finished):.2f} s"
        )
        assert manager.elector.is_leader() and manager.leading and not running.done()
        assert watch.holders == {manager.elector.identity}
        assert watch.transitions == {0}
        assert watch.longest_gap(finished) < RENEW_DEADLINE
    finally:
        if watching is not None:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
        running.cancel()
        results = await asyncio.gather(running, return_exceptions=True)
        await manager.stop()
        await client.close()
        await observer.close()
        await simulator.stop()
        shutil.rmtree(cri_dir, ignore_errors=True)
    assert not any(isinstance(r, LeadershipLost) for r in results)
