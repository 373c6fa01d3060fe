"""The Manager: probes always, controllers only while holding the lease.

Every replica serves /healthz, /readyz and /metrics so Kubernetes can tell a healthy standby from a
dead one; only the leader builds its controllers, starts their informers and reconciles. Losing the
lease raises LeadershipLost out of `run()` so the process exits and the standby takes over, instead of
two replicas reconciling at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog

from kruise.api import registry
from kruise.kube.client import Client
from kruise.kube.controller import Controller
from kruise.kube.informer import InformerOptions, SharedInformerFactory
from kruise.kube.leaderelection import LeaderElector
from kruise.kube.serving import ProbeServer
from kruise.manager.context import ControllerSetup, ManagerContext, unhandled_kinds
from kruise.manager.options import Options

log = structlog.get_logger("kruise.manager")

CACHE_SYNC_TIMEOUT = 120.0


class Manager:
    def __init__(
        self, client: Client, options: Options, setups: Sequence[ControllerSetup] | None = None
    ) -> None:
        if setups is None:
            from kruise.manager.controllers import discover

            setups = discover()
        self.client = client
        self.options = options
        self.setups = [
            s for s in setups if options.controller_enabled(s.name) and s.enabled(options.feature_gates)
        ]
        kruise_kinds = [f"{info.kind}.{info.group}" for info in registry.KINDS]
        self.context = ManagerContext(
            client=client,
            informers=SharedInformerFactory(
                client, options=InformerOptions(resync_period=options.sync_period)
            ),
            feature_gates=options.feature_gates,
            namespace=options.namespace,
            workers=options.workers,
            nodeimage_creation_delay=options.nodeimage_creation_delay,
            assign_bcj_pods_by_scheduler=options.assign_bcj_pods_by_scheduler,
            unhandled_kinds=unhandled_kinds(kruise_kinds, setups, self.setups),
        )
        self.controllers: list[Controller] = []
        self.metrics = ProbeServer(options.metrics_addr.host, options.metrics_addr.port)
        self.probes = ProbeServer(options.health_probe_addr.host, options.health_probe_addr.port)
        self.probes.add_readyz_check("controllers", self.ready)
        self.elector = (
            LeaderElector(client, options.leader_election_config(), on_started_leading=self._lead)
            if options.leader_election
            else None
        )
        self._running = asyncio.Event()
        self._standing_by = True

    def ready(self) -> bool:
        """A standby is ready (it serves probes); a leader once its caches synced and controllers run."""
        return self._standing_by or self._running.is_set()

    @property
    def leading(self) -> bool:
        return self._running.is_set()

    async def start_probes(self) -> tuple[int, int]:
        return await self.metrics.start(), await self.probes.start()

    async def _lead(self) -> None:
        self._standing_by = False
        self.controllers = [setup.build(self.context) for setup in self.setups]
        self.context.informers.start()
        if not await self.context.informers.wait_for_cache_sync(CACHE_SYNC_TIMEOUT):
            raise RuntimeError("informer caches did not sync in time")
        for controller in self.controllers:
            controller.start()
        self._running.set()
        log.info("controllers started", controllers=[c.name for c in self.controllers])

    async def run(self) -> None:
        """Campaign (or lead at once without election) until cancelled; LeadershipLost propagates."""
        if self.elector is None:
            await self._lead()
            await asyncio.Event().wait()
        else:
            await self.elector.run()

    async def stop(self) -> None:
        """Let in-flight reconciles finish, flush events, stop informers and probes."""
        for controller in self.controllers:
            await controller.stop()
        for recorder in self.context.recorders:
            with contextlib.suppress(Exception):
                await recorder.stop()
        await self.context.informers.stop()
        self._running.clear()
        await self.metrics.stop()
        await self.probes.stop()
