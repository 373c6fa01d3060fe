"""Manager against the emulator: only the lease holder runs controllers; a clean stop hands over at once."""

from __future__ import annotations

import asyncio

import pytest

from kruise.kube.client import Client
from kruise.kube.controller import Controller
from kruise.kube.resources import CONFIGMAPS, LEASES, NAMESPACES
from kruise.manager.app import LEADER_ELECTION_USER_AGENT, Manager
from kruise.manager.context import ControllerSetup, ManagerContext
from kruise.manager.options import parse_args
from tests.kit import until as kit_until

NS = "kruise-system"


def configmap_setup(seen: list[str]) -> ControllerSetup:
    """A test controller: records the ConfigMap keys it reconciles."""

    def build(ctx: ManagerContext) -> Controller:
        async def reconcile(key: str) -> None:
            seen.append(key)

        controller = Controller("configmaps", reconcile, workers=ctx.workers_for("configmaps"))
        controller.watch(ctx.informers.informer(CONFIGMAPS, "default"))
        return controller

    return ControllerSetup("configmaps", build)


@pytest.fixture
async def client(emulator):
    c = await Client.from_kubeconfig(emulator.kubeconfig, qps=1000, burst=1000)
    # the lease namespace, as Helm would create it
    await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    await c.create(
        CONFIGMAPS,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}},
    )
    yield c
    await c.close()


def options(emulator):
    argv = [
        "--kubeconfig", str(emulator.kubeconfig), "--metrics-addr", "127.0.0.1:0",
        "--health-probe-addr", "127.0.0.1:0", "--leader-election-lease-duration", "3",
        "--leader-election-renew-deadline", "2", "--leader-election-retry-period", "0.2",
    ]  # fmt: skip
    return parse_args(argv, env={})


def until(predicate, timeout=15.0):
    """Manager state lives in plain attributes: poll it (leader election needs more than the default 10 s)."""
    return kit_until(predicate, timeout, interval=0.02)


async def test_only_the_leader_reconciles_and_stop_hands_over(emulator, client):
    seen_a: list[str] = []
    seen_b: list[str] = []
    first = Manager(client, options(emulator), [configmap_setup(seen_a)])
    second = Manager(client, options(emulator), [configmap_setup(seen_b)])
    await first.start_probes()
    await second.start_probes()
    run_first = asyncio.create_task(first.run())
    await until(lambda: first.leading)
    run_second = asyncio.create_task(second.run())
    await until(lambda: "default/a" in seen_a)
    assert first.ready() and second.ready()  # the standby serves readyz too
    # Let the leader renew twice: the standby keeps campaigning all along and must still not lead.
    renewals: set[str] = set()
    async with asyncio.timeout(15):
        while len(renewals) < 3:
            lease = await client.get(LEASES, "kruise-manager", NS)
            assert lease["spec"]["holderIdentity"] == first.elector.identity
            renewals.add(lease["spec"]["renewTime"])
            await asyncio.sleep(0.05)
    assert not second.leading and seen_b == []

    run_first.cancel()  # a clean stop releases the lease
    await asyncio.gather(run_first, return_exceptions=True)
    await first.stop()
    released = await client.get(LEASES, "kruise-manager", NS)
    assert released["spec"].get("holderIdentity", "") in ("", second.elector.identity)
    await until(lambda: second.leading)
    await until(lambda: "default/a" in seen_b)
    lease = await client.get(LEASES, "kruise-manager", NS)
    assert lease["spec"]["holderIdentity"] == second.elector.identity
    assert lease["spec"]["leaseTransitions"] >= 1

    run_second.cancel()
    await asyncio.gather(run_second, return_exceptions=True)
    await second.stop()


async def test_standby_syncs_its_caches_before_leading_and_does_not_reconcile(emulator, client):
    """Warm standby (issue 11 bug 8): a takeover starts workers on synced caches, no cold relist."""
    seen_a: list[str] = []
    seen_b: list[str] = []
    leader = Manager(client, options(emulator), [configmap_setup(seen_a)])
    standby = Manager(client, options(emulator), [configmap_setup(seen_b)])
    run_leader = asyncio.create_task(leader.run())
    await until(lambda: leader.leading)
    run_standby = asyncio.create_task(standby.run())
    await until(standby.caches_synced)
    informer = standby.context.informers.informer(CONFIGMAPS, "default")
    assert informer.get("default/a") is not None  # listed while standing by
    assert not standby.leading and not standby.elector.is_leader()
    assert standby.ready()  # readiness of a standby is unchanged: it serves probes
    # A change while standing by reaches the standby's cache through its watch, still unreconciled.
    await client.create(
        CONFIGMAPS,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "default"}},
    )
    await until(lambda: informer.get("default/b") is not None)
    await until(lambda: "default/b" in seen_a)
    assert seen_b == []

    run_leader.cancel()
    await asyncio.gather(run_leader, return_exceptions=True)
    await leader.stop()
    await until(lambda: standby.leading)
    # The same informer, never restarted: the takeover reconciles from the warm cache.
    assert standby.context.informers.informer(CONFIGMAPS, "default") is informer
    await until(lambda: {"default/a", "default/b"} <= set(seen_b))
    run_standby.cancel()
    await asyncio.gather(run_standby, return_exceptions=True)
    await standby.stop()


async def test_disabled_and_gated_controllers_are_not_built(emulator, client):
    seen: list[str] = []
    gated = ControllerSetup("gated", configmap_setup(seen).build, gate="ImagePullJobGate")
    opts = parse_args(
        ["--kubeconfig", str(emulator.kubeconfig), "--controllers", "*,-configmaps",
         "--metrics-addr", "127.0.0.1:0", "--health-probe-addr", "127.0.0.1:0"],
        env={},
    )  # fmt: skip
    manager = Manager(client, opts, [configmap_setup(seen), gated])
    assert manager.setups == []
    await manager.stop()  # closes the lease client the manager derived


# ---- issue 11 bug 2: leader election never queues behind controller traffic ----------------
# The controllers' client is throttled to QPS 1 and flooded with thousands of requests; the manager
# must still acquire the Lease and renew it every retry period, because its elector has its own
# client (own token bucket, own connection pool), as controller-runtime gives leader election its own
# copy of the rest config.

FLOOD = 3000


def roomy_options(emulator):
    """Lease timings no loaded machine can miss (30 s / 20 s, retry 0.2 s): the test tells a lease
    client of its own (renewals every retry period) from one behind the flood (no renewal for
    ~FLOOD s), and must not depend on how busy the machine is."""
    argv = [
        "--kubeconfig", str(emulator.kubeconfig), "--metrics-addr", "127.0.0.1:0",
        "--health-probe-addr", "127.0.0.1:0", "--leader-election-lease-duration", "30",
        "--leader-election-renew-deadline", "20", "--leader-election-retry-period", "0.2",
    ]  # fmt: skip
    return parse_args(argv, env={})


async def test_lease_is_renewed_on_time_while_the_controllers_limiter_is_flooded(emulator):
    observer = await Client.from_kubeconfig(emulator.kubeconfig, qps=1000, burst=1000)
    await observer.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    # The controllers' client at QPS 1: the flood below is almost an hour of its traffic.
    controllers_client = await Client.from_kubeconfig(emulator.kubeconfig, qps=1, burst=1)
    flood = [
        asyncio.create_task(controllers_client.get(CONFIGMAPS, f"flood-{i}", "default")) for i in range(FLOOD)
    ]
    seen: list[str] = []
    manager = Manager(controllers_client, roomy_options(emulator), [configmap_setup(seen)])
    assert manager.lease_client is not controllers_client
    assert manager.lease_client.limiter is not controllers_client.limiter
    running = asyncio.create_task(manager.run())
    try:
        # Through the controllers' bucket even the first Lease GET would wait behind the flood
        # (~FLOOD s); with its own client the lease is acquired at once.
        async with asyncio.timeout(60):
            while not manager.elector.is_leader():  # noqa: ASYNC110 - elector state is a plain attribute
                await asyncio.sleep(0.02)
        renewals: list[str] = []
        async with asyncio.timeout(60):
            while len(renewals) < 10:
                spec = (await observer.get(LEASES, "kruise-manager", NS))["spec"]
                assert spec["holderIdentity"] == manager.elector.identity
                if not renewals or renewals[-1] != spec["renewTime"]:
                    renewals.append(spec["renewTime"])
                await asyncio.sleep(0.02)
        assert manager.elector.is_leader() and not running.done()
        lease = (await observer.get(LEASES, "kruise-manager", NS))["spec"]
        assert lease.get("leaseTransitions", 0) == 0
        # The flood was in force the whole time: the controllers' bucket is still deep in debt.
        assert controllers_client.limiter.tokens() < -FLOOD / 2
        assert sum(task.done() for task in flood) < FLOOD / 2
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        for task in flood:
            task.cancel()
        await asyncio.gather(*flood, return_exceptions=True)
        await manager.stop()
        await controllers_client.close()
        await observer.close()
    assert seen == []  # the starved informers never synced, so nothing reconciled


async def test_derived_lease_client_has_its_own_limiter_and_connections(emulator):
    base = await Client.from_kubeconfig(emulator.kubeconfig, qps=7, burst=3)
    derived = base.derive(user_agent=LEADER_ELECTION_USER_AGENT)
    try:
        assert derived.host == base.host
        assert derived.limiter is not base.limiter
        assert (derived.limiter.qps, derived.limiter.burst) == (7.0, 3)
        assert derived.api_client.rest_client.pool_manager is not base.api_client.rest_client.pool_manager
        assert derived.api_client.user_agent == LEADER_ELECTION_USER_AGENT
        namespaces = await derived.list(NAMESPACES)
        assert any(ns["metadata"]["name"] == "default" for ns in namespaces["items"])
    finally:
        await derived.close()
        await base.close()
