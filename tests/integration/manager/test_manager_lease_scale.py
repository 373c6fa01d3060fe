"""kruise-manager keeps the Lease while a CloneSet scale-up backlogs its client (issue 11 bug 2).

On a real cluster (1000 pods, QPS 20, upstream's 15 s lease / 10 s renew deadline / 2 s retry) the
lease renewals starved behind the rollout when they shared the controllers' client: the doubling
create batches put the client's rate limiter seconds in debt, a renewal waited longer than the renew
deadline, the lease was lost and the manager exited mid-rollout.

What decides the bug is the ratio of that debt to the renew deadline, not the absolute sizes, so the
scenario is scaled down in time: the real Manager runs with leader election on, its lease timings
shortened through its own flags (3 s lease, 2 s renew deadline, 0.4 s retry: upstream's proportions
within the validation rules) and the controllers' client at the field's QPS 20 / burst 30, against
the emulator and simulated nodes, scaling a CloneSet to 300 pods. Since issue 27 a CloneSet create
pass starts slow-start batches for 1 s only (it was 3 s), which keeps one scale-up's own debt under the
renew deadline, so the test adds what any other busy controller sharing the client would: a burst of
reads through the controllers' client while the scale-up runs. The test proves the load is the
bug's load (the controllers' limiter goes into debt well past the renew deadline: a renewal sharing
that client would have waited longer than the deadline allows), and that the lease still holds: an
observer reads it all along and the rollout must finish with the same holder, no transition and no
renewal gap long enough for the lease to go stale.
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

ROLLOUT_TIMEOUT = 240.0
pytestmark = [pytest.mark.slow, pytest.mark.timeout(ROLLOUT_TIMEOUT + 60)]

# No kruise-webhook runs here, so nothing answers conversion: the 2.0 API set's CRDs, whose storage version of
# every kind is the one kruise-py's components talk (on the 1.9 set seven kinds are stored at v1beta1 and
# their v1alpha1 reads go through kruise-webhook's /convert, as e2e covers).
CRD_DIR = Path(__file__).resolve().parents[3] / "crds-2.0"
LEASE_NS = "kruise-system"
REPLICAS = 300
# Reads another controller sharing the client issues at once mid-scale-up: past the burst of 30, 3.5 s
# of debt at QPS 20 on top of the scale-up's own.
EXTRA_READS = 100
QPS, BURST = 20, 30
# Upstream's 15 s / 10 s / 2 s scaled by 1/5; passed as the manager's own flags.
LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 3.0, 2.0, 0.4
# The backlog a renewal on the controllers' client would have queued behind, at its worst, must
# exceed the renew deadline by this factor, or the rollout was too light to show anything.
BACKLOG_FACTOR = 1.25


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
    """Reads the Lease every 0.1 s (1/20 of the renew deadline) and records every renewal and holder;
    samples the controllers' rate limiter as often, keeping its worst debt in seconds."""

    def __init__(self, client: Client, controllers_client: Client) -> None:
        self.client = client
        self.limiter = controllers_client.limiter
        self.holders: set[str] = set()
        self.transitions: set[int] = set()
        self.renewals: list[tuple[float, str]] = []
        self.worst_backlog = 0.0

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            spec = (await self.client.get(LEASES, "kruise-manager", LEASE_NS))["spec"]
            self.holders.add(spec.get("holderIdentity") or "")
            self.transitions.add(int(spec.get("leaseTransitions") or 0))
            if not self.renewals or self.renewals[-1][1] != spec["renewTime"]:
                self.renewals.append((loop.time(), spec["renewTime"]))
            # A request reserving a token now would wait -tokens/qps seconds (client-go's limiter).
            self.worst_backlog = max(self.worst_backlog, -self.limiter.tokens() / self.limiter.qps)
            await asyncio.sleep(0.1)

    def longest_gap(self, until: float) -> float:
        times = [t for t, _ in self.renewals] + [until]
        return max(b - a for a, b in itertools.pairwise(times))


async def test_manager_keeps_the_lease_while_a_scale_up_backlogs_the_controllers_client(
    emulator, record_property
):
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
         "--rest-config-burst", str(BURST), "--leader-election-namespace", LEASE_NS,
         "--leader-election-lease-duration", str(LEASE_DURATION),
         "--leader-election-renew-deadline", str(RENEW_DEADLINE),
         "--leader-election-retry-period", str(RETRY_PERIOD)],
        env={},
    )  # fmt: skip
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=options.qps, burst=options.burst)
    manager = Manager(client, options, [cloneset.SETUP, podreadiness.SETUP])
    assert manager.elector is not None
    assert (
        manager.elector.config.lease_duration,
        manager.elector.config.renew_deadline,
        manager.elector.config.retry_period,
    ) == (LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD)
    running = asyncio.create_task(manager.run())
    watch = LeaseWatch(observer, client)
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
        extra_reads = asyncio.gather(
            *(client.get(CLONESETS, "big", "default") for _ in range(EXTRA_READS)), return_exceptions=True
        )
        async with asyncio.timeout(ROLLOUT_TIMEOUT):
            while True:
                if running.done():
                    running.result()  # LeadershipLost: the bug
                    pytest.fail("the manager stopped running mid-rollout")
                status = (await observer.get(CLONESETS, "big", "default")).get("status") or {}
                if status.get("readyReplicas") == REPLICAS and status.get("replicas") == REPLICAS:
                    break
                if loop.time() >= next_report:  # progress, for a slow machine's log
                    next_report += 10
                    elapsed, ready = loop.time() - started, status.get("readyReplicas")
                    print(f"{elapsed:.0f} s: {status.get('replicas')} pods, {ready} ready")
                await asyncio.sleep(0.2)
        finished = loop.time()
        assert not [r for r in await extra_reads if isinstance(r, BaseException)]
        record_property("rollout_seconds", round(finished - started, 1))
        record_property("longest_renewal_gap_seconds", round(watch.longest_gap(finished), 2))
        record_property("worst_controllers_backlog_seconds", round(watch.worst_backlog, 2))
        print(
            f"{REPLICAS} pods ready in {finished - started:.1f} s at QPS {QPS}; "
            f"longest gap between observed renewals {watch.longest_gap(finished):.2f} s; "
            f"controllers' client backlog up to {watch.worst_backlog:.2f} s"
        )
        # The load is the bug's: sharing the controllers' client, a renewal would have missed the deadline.
        assert watch.worst_backlog > BACKLOG_FACTOR * RENEW_DEADLINE
        assert manager.elector.is_leader() and manager.leading and not running.done()
        assert watch.holders == {manager.elector.identity}
        assert watch.transitions == {0}
        # The renew deadline itself is the elector's to enforce (it would have stepped down, failing the
        # asserts above). What an observer can check is that the lease never went stale: a gap shorter
        # than the lease duration leaves no other candidate a moment to take it. The observer shares
        # one event loop with the emulator, the simulator and the manager, so on a loaded machine its
        # own reads lag; the renew deadline would measure that lag, not the manager.
        assert watch.longest_gap(finished) < LEASE_DURATION
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
