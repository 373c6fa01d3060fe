"""The Manager: probes always, warm caches always, reconciling only while holding the lease.

Every replica serves /healthz, /readyz and /metrics so Kubernetes can tell a healthy standby from a
dead one. Every replica builds its controllers and keeps their informer caches synced (a warm
standby: failover starts workers, it does not relist); only the leader starts the workers that
reconcile. Losing the lease raises LeadershipLost out of `run()` so the process exits and the standby
takes over, instead of two replicas reconciling at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog

from kruise.api import registry
from kruise.kube.client import Client, ServerVersion
from kruise.kube.controller import Controller
from kruise.kube.informer import InformerOptions, SharedInformerFactory
from kruise.kube.leaderelection import LeaderElector
from kruise.kube.serving import ProbeServer
from kruise.manager.cachefields import projections as cache_projections
from kruise.manager.context import ControllerSetup, ManagerContext, unhandled_kinds
from kruise.manager.options import Options
from kruise.manager.webhookready import wait_for_webhook

log = structlog.get_logger("kruise.manager")

LEADER_ELECTION_USER_AGENT = "kruise-manager/leader-election"


async def read_server_version(client: Client) -> ServerVersion | None:
    """The apiserver's version for `ManagerContext.server_version`, or None when it cannot be read.

    Upstream refuses to start without it; here a failure is logged and the manager runs on, taking the
    version as unknown — which the in-place writer treats as upstream treats an unparsable one (resources
    ride the pod object write, no `pods/resize`), so it is named in the log for the operator."""
    try:
        version = await client.server_version()
    except Exception as exc:  # any failure (transport, status, bad body) means "unknown", never a crash
        log.warning(
            "could not read the apiserver version; in-place resizes write the pod object, not pods/resize",
            error=str(exc),
        )
        return None
    log.info("apiserver version", git_version=version.git_version, major=version.major, minor=version.minor)
    return version


class Manager:
    def __init__(
        self,
        client: Client,
        options: Options,
        setups: Sequence[ControllerSetup] | None = None,
        *,
        lease_client: Client | None = None,
    ) -> None:
        """`lease_client` carries leader election only; by default one is derived from `client`.

        Lease renewals must never queue behind controller traffic: sharing the controllers' rate
        limiter (and connection pool) starves them under load until the renew deadline passes and
        leadership is lost mid-rollout. A derived client is owned, and closed by `stop()`.
        """
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
                client,
                options=InformerOptions(resync_period=options.sync_period),
                projections=cache_projections(self.setups),
            ),
            feature_gates=options.feature_gates,
            namespace=options.namespace,
            workers=options.workers,
            nodeimage_creation_delay=options.nodeimage_creation_delay,
            assign_bcj_pods_by_scheduler=options.assign_bcj_pods_by_scheduler,
            expectation_timeout=options.expectation_timeout,
            unhandled_kinds=unhandled_kinds(kruise_kinds, setups, self.setups),
        )
        self.controllers: list[Controller] = []
        self.metrics = ProbeServer(options.metrics_addr.host, options.metrics_addr.port)
        self.probes = ProbeServer(options.health_probe_addr.host, options.health_probe_addr.port)
        self.probes.add_readyz_check("controllers", self.ready)
        self.lease_client: Client | None = None
        self._owns_lease_client = False
        self.elector: LeaderElector | None = None
        if options.leader_election:
            self._owns_lease_client = lease_client is None
            self.lease_client = lease_client or client.derive(
                user_agent=LEADER_ELECTION_USER_AGENT, qps=options.qps, burst=options.burst
            )
            self.elector = LeaderElector(
                self.lease_client, options.leader_election_config(), on_started_leading=self._lead
            )
        self._running = asyncio.Event()
        self._standing_by = True
        self._built = False

    def ready(self) -> bool:
        """A standby is ready (it serves probes); a leader once its caches synced and controllers run."""
        return self._standing_by or self._running.is_set()

    @property
    def leading(self) -> bool:
        return self._running.is_set()

    async def start_probes(self) -> tuple[int, int]:
        return await self.metrics.start(), await self.probes.start()

    def _warm_up(self) -> None:
        """Build the controllers and start their informers; idempotent.

        Runs before campaigning, so a standby keeps its caches listed and watched while it waits
        (warm standby, as controller-runtime starts caches on every replica): a takeover then only
        starts workers instead of relisting everything. The workqueues fill while standing by, but
        nothing takes from them until `_lead`.
        """
        if self._built:
            return
        self._built = True
        self.controllers = [setup.build(self.context) for setup in self.setups]
        self.context.informers.start()

    def caches_synced(self) -> bool:
        """Every informer of the built controllers has listed (a standby's too)."""
        return self._built and all(i.has_synced() for i in self.context.informers.informers)

    async def _lead(self) -> None:
        self._standing_by = False
        self._warm_up()
        timeout = self.options.cache_sync_timeout
        if not await self.context.informers.wait_for_cache_sync(timeout):
            raise RuntimeError(f"informer caches did not sync within {timeout:g}s (--cache-sync-timeout)")
        if self.options.webhook_service_name:
            await wait_for_webhook(self.client, self.options.namespace, self.options.webhook_service_name)
        for controller in self.controllers:
            controller.start()
        self._running.set()
        log.info("controllers started", controllers=[c.name for c in self.controllers])

    async def read_server_version(self) -> None:
        """Read the apiserver's version into the context once, before any controller is built (the
        in-place writers choose their resize write from it). Through the lease client when there is
        one: the controllers' rate limiter may already be in debt (a restart under load), and neither
        the version nor the first Lease request may wait behind it."""
        if self.context.server_version is None:
            self.context.server_version = await read_server_version(self.lease_client or self.client)

    async def read_wire_versions(self) -> None:
        """Make the controllers' client talk each Kruise kind's CRD storage version (`kruise.kube.wire`),
        before any informer lists. Read through the lease client when there is one, for the reason
        `read_server_version` gives."""
        self.client.wire = await (self.lease_client or self.client).read_wire_versions()

    async def run(self) -> None:
        """Read the server version and the CRDs' storage versions (what the client talks on the wire,
        `kruise.kube.wire`), warm the caches, campaign (or lead at once without election) until
        cancelled.

        LeadershipLost propagates.
        """
        await self.read_server_version()
        await self.read_wire_versions()
        self._warm_up()
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
        if self._owns_lease_client and self.lease_client is not None:
            await self.lease_client.close()
            self._owns_lease_client = False
