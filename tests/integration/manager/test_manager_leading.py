"""Manager against the emulator: only the lease holder runs controllers; a clean stop hands over at once."""

from __future__ import annotations

import asyncio

import pytest

from kruise.kube.client import Client
from kruise.kube.controller import Controller
from kruise.kube.resources import CONFIGMAPS, LEASES, NAMESPACES
from kruise.manager.app import Manager
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
    await until(lambda: second.leading, timeout=3.0)  # well within one lease duration
    await until(lambda: "default/a" in seen_b)
    lease = await client.get(LEASES, "kruise-manager", NS)
    assert lease["spec"]["holderIdentity"] == second.elector.identity
    assert lease["spec"]["leaseTransitions"] >= 1

    run_second.cancel()
    await asyncio.gather(run_second, return_exceptions=True)
    await second.stop()


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
