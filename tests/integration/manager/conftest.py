"""`kruise_cluster`: emulator + CRDs + simulator + the real controllers of kruise-manager, in-process.

Controllers are built through their `SETUP` exactly as the manager builds them (leader election is
the manager's business and is tested elsewhere), so a controller test sees the same wiring as
production. Waits poll the API under a timeout; nothing sleeps hoping for the best.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kruise.api import registry
from kruise.api.features import FeatureGates
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock
from kruise.kube.controller import Controller
from kruise.kube.errors import AlreadyExists
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.resources import NAMESPACES
from kruise.manager.app import read_server_version
from kruise.manager.cachefields import projections as cache_projections
from kruise.manager.context import ControllerSetup, ManagerContext, unhandled_kinds
from kruise.manager.controllers import discover
from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from kruise.sandbox.cluster import apply_crds, load_crds
from kruise.sandbox.simulator import Simulator, Timing
from kruise.sandbox.simulator.processes import ProcessImage
from kruise.webhook.main import Options, WebhookProcess
from tests.kit.ports import free_port

# No kruise-webhook runs here by default, so nothing answers conversion: the 2.0 API set's CRDs, whose
# storage version of every kind is the one kruise-py's code is written for. (kruise-manager's client talks
# storage versions itself, `kruise.kube.wire`, but the other components' clients do not yet.)
REPO = Path(__file__).resolve().parents[3]
CRD_DIR = REPO / "crds-2.0"
SPEED = 50.0
T = TypeVar("T")


@dataclass
class KruiseCluster:
    client: Client
    context: ManagerContext
    simulator: Simulator
    controllers: list[Controller]

    async def stop_controllers(self) -> None:
        """Stop every controller (idempotent). A fixture that serves admission for the cluster (a
        kruise-webhook) calls this before it stops serving, so no reconcile meets a dead webhook."""
        for controller in self.controllers:
            await controller.stop()

    async def restart_manager(
        self,
        setups: Sequence[ControllerSetup],
        *,
        hard: bool = False,
        crashed: Callable[[], Awaitable[object]] | None = None,
    ) -> ManagerContext:
        """A crash and a fresh kruise-manager, in-process: the running controllers stop, their informer
        caches, queued events and expectations are dropped with them, and new ones are built from
        nothing through `setups`, exactly as a new process would. The fresh context replaces
        `self.context` (the fixture stops it at teardown) and is returned.

        By default the stop is gentle: in-flight reconciles finish their pass (up to 30 s) and the
        event recorders flush their queues. `hard=True` is SIGKILL instead: every in-flight reconcile
        is cancelled wherever it is awaiting (half-way through a pass, between two writes of one
        update) and queued events are dropped unsent, so the fresh manager must take over state
        written half-way. What even `hard` cannot do is take back a request already sent: a write
        whose caller was cancelled while awaiting the answer is applied or not depending on whether
        the server got to store it (the emulator stores a write atomically after its last await, and
        drops it if the client went away first), never half — exactly what a real API server does
        with the last write of a killed process.

        `crashed`, when given, is awaited once the old manager is gone and before the fresh one
        starts: the moment to read what the crash left."""
        if hard:
            for controller in self.controllers:
                await controller.stop(timeout=0)
        else:
            await self.stop_controllers()
        await self.context.informers.stop()
        for recorder in self.context.recorders:
            await recorder.stop(timeout=0 if hard else 5.0)
        if crashed is not None:
            await crashed()
        old = self.context
        fresh = ManagerContext(
            client=self.client,
            informers=SharedInformerFactory(self.client, projections=cache_projections(setups)),
            feature_gates=old.feature_gates,
            clock=old.clock,
            nodeimage_creation_delay=0.0,
            unhandled_kinds=old.unhandled_kinds,
            server_version=await read_server_version(self.client),
        )
        controllers = [setup.build(fresh) for setup in setups if setup.enabled(old.feature_gates)]
        fresh.informers.start()
        assert await fresh.informers.wait_for_cache_sync(30)
        for controller in controllers:
            controller.start()
        self.context = fresh
        self.controllers[:] = controllers
        return fresh

    async def until(
        self, fetch: Callable[[], Awaitable[T]], predicate: Callable[[T], bool], timeout: float = 30.0
    ) -> T:
        """The first value of `fetch()` satisfying `predicate`, polled every 20 ms under `timeout`."""
        value = await fetch()
        async with asyncio.timeout(timeout):
            while not predicate(value):
                await asyncio.sleep(0.02)
                value = await fetch()
        return value


@pytest.fixture
def crd_dir() -> Path:
    """The CRDs `kruise_cluster` installs; a module that runs kruise-webhook (for /convert) may pick the
    1.9 set's, `REPO / "crds"`."""
    return CRD_DIR


@pytest.fixture
def controller_setups() -> Sequence[ControllerSetup]:
    """Override in a test module to choose the controllers under test."""
    return discover()


@pytest.fixture
def feature_gates() -> FeatureGates:
    return FeatureGates(env={})


@pytest.fixture
def simulator_nodes() -> int:
    return 3


@pytest.fixture
def simulator_process_images() -> Sequence[ProcessImage]:
    """Images whose containers run as real local processes (override to run e.g. a long sidecar)."""
    return ()


@pytest.fixture
def manager_clock() -> Clock:
    """The controllers' clock (ManagerContext.clock); override with a FakeClock to step time by hand."""
    return RealClock()


@pytest.fixture
async def kruise_cluster(
    emulator: Any,
    crd_dir: Path,
    controller_setups: Sequence[ControllerSetup],
    feature_gates: FeatureGates,
    simulator_nodes: int,
    manager_clock: Clock,
    simulator_process_images: Sequence[ProcessImage],
) -> AsyncIterator[KruiseCluster]:
    await apply_crds(emulator.kubeconfig, load_crds(crd_dir), timeout=30)
    cri_dir = Path(tempfile.mkdtemp(prefix="kc-cri-", dir="/tmp"))
    simulator = Simulator(
        emulator.kubeconfig,
        speed=SPEED,
        cri_socket_dir=cri_dir,
        nodes=simulator_nodes,
        timing=Timing(run_seconds=20.0, init_seconds=1.0, termination_seconds=1.0),
        process_images=simulator_process_images,
    )
    await simulator.start()
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=2000, burst=2000)
    client.wire = await client.read_wire_versions()  # as Manager.run does: each kind at its storage version
    running = [setup for setup in controller_setups if setup.enabled(feature_gates)]
    context = ManagerContext(
        client=client,
        informers=SharedInformerFactory(client, projections=cache_projections(running)),
        feature_gates=feature_gates,
        clock=manager_clock,
        nodeimage_creation_delay=0.0,
        unhandled_kinds=unhandled_kinds(
            [f"{info.kind}.{info.group}" for info in registry.KINDS], discover(), running
        ),
        server_version=await read_server_version(client),  # as Manager.run reads it
    )
    with contextlib.suppress(AlreadyExists):  # the chart creates kruise's namespace (SidecarSet history)
        await client.create(NAMESPACES, {"metadata": {"name": context.namespace}})
    controllers = [setup.build(context) for setup in running]
    context.informers.start()
    assert await context.informers.wait_for_cache_sync(30)
    for controller in controllers:
        controller.start()
    cluster = KruiseCluster(client, context, simulator, controllers)
    try:
        yield cluster
    finally:
        await cluster.stop_controllers()
        for recorder in cluster.context.recorders:  # a test may have restarted the manager
            with contextlib.suppress(Exception):
                await recorder.stop()
        await cluster.context.informers.stop()
        await client.close()
        await simulator.stop()
        shutil.rmtree(cri_dir, ignore_errors=True)


@pytest.fixture
def webhook_feature_gates() -> str:
    """`--feature-gates` of the `webhook` fixture's kruise-webhook."""
    return ""


@pytest.fixture
async def webhook(kruise_cluster, emulator, tmp_path, webhook_feature_gates) -> AsyncIterator[WebhookProcess]:
    """kruise-webhook wired into the emulator's admission, started after the CRDs are served (tests
    that need the pod webhooks — injection, PUB, WorkloadSpread — ask for it by name)."""
    server = emulator.server
    server.admission = WebhookAdmission(
        lambda group, version, plural: list(server.store.list((group, plural)))
    )
    # the webhook keeps its certificate Secret there
    with contextlib.suppress(AlreadyExists):  # the kruise_cluster fixture creates it too
        await kruise_cluster.client.create(NAMESPACES, {"metadata": {"name": "kruise-system"}})
    port = free_port()
    options = Options(
        kubeconfig=str(emulator.kubeconfig), namespace="kruise-system", bind_address="127.0.0.1", port=port,
        cert_dir=tmp_path / "certs", webhook_url=f"https://127.0.0.1:{port}", cert_resync_seconds=30.0,
        initialize_timeout=30.0, cache_sync_timeout=30.0, shutdown_grace=0.5,
        feature_gates=webhook_feature_gates,
    )  # fmt: skip
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    process = WebhookProcess(client, options)
    await process.start()
    try:
        yield process
    finally:
        # the controllers go first: stopped after the webhook they would log "failed calling webhook"
        await kruise_cluster.stop_controllers()
        await process.stop()
        await client.close()
