"""`kruise-webhook`: flags, wiring and lifetime of the admission process.

Order matters: caches and the certificate come first (uvicorn cannot listen on TLS without a cert),
then the HTTPS server, then the loop that keeps the certificate and configurations current.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog

from kruise.api import apisets, features
from kruise.api.apisets import DEFAULT_API_SET
from kruise.api.features import FeatureGateError, FeatureGates
from kruise.api.objects import meta_of, section
from kruise.control.common.customworkloads import GroupVersionKind
from kruise.control.sidecarset.revision import LABEL_SIDECARSET_NAME
from kruise.control.sidecarset.whitelist import CONFIGURATION_NAME
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.logging import configure_logging, warn_gates_without_effect
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CLONESETS,
    CONFIGMAPS,
    CONTROLLER_REVISIONS,
    DEPLOYMENTS,
    JOBS,
    NAMESPACES,
    NODES,
    PERSISTENT_POD_STATES,
    POD_PROBE_MARKERS,
    PODS,
    PODUNAVAILABLEBUDGETS,
    PVCS,
    REPLICASETS,
    STATEFULSETS_APPS,
    STORAGE_CLASSES,
    WORKLOADSPREADS,
    ResourceRef,
)
from kruise.webhook import certs, registry
from kruise.webhook.app import create_app
from kruise.webhook.cachefields import projections as cache_projections
from kruise.webhook.caches import (
    SIDECARSETS,
    StoreNamespaceContents,
    StorePersistentPodStates,
    StorePodProbeMarkers,
    StorePodsAndNodes,
    StorePubs,
    StoreSidecarSets,
    StoreSpreads,
    StoreStorageClasses,
)
from kruise.webhook.certcontroller import CertController
from kruise.webhook.certsecret import SECRET_NAME, ConfigurationPatcher
from kruise.webhook.configurations import SERVICE_NAME, ClientTarget
from kruise.webhook.context import WebhookContext
from kruise.webhook.crdconversion import ConversionPatcher
from kruise.webhook.customworkloads import CustomWorkloadFollower
from kruise.webhook.handlers.pub import BudgetKeeper
from kruise.webhook.handlers.workloadspread import SpreadKeeper
from kruise.webhook.server import HTTPSServer

log = structlog.get_logger("kruise.webhook")

# Workloads a WorkloadSpread's pods come from: the webhook follows pod owners through these caches.
SPREAD_WORKLOADS: tuple[ResourceRef, ...] = (REPLICASETS, DEPLOYMENTS, JOBS, STATEFULSETS_APPS)
SPREAD_KRUISE_WORKLOADS: tuple[ResourceRef, ...] = (CLONESETS, ADVANCED_STATEFULSETS)


@dataclass(frozen=True)
class InformerCaches:
    """Every informer this process started, as the app's `CacheGate`: each handler reads some of them,
    and a request waits for all rather than each handler declaring which (a re-list takes milliseconds)."""

    factory: SharedInformerFactory

    def not_current(self) -> list[str]:
        return [str(informer.ref) for informer in self.factory.not_current()]

    async def wait_current(self) -> None:
        await self.factory.wait_current()


@dataclass
class Options:
    kubeconfig: str | None = None
    namespace: str = "kruise-system"
    bind_address: str = "0.0.0.0"
    port: int = 9876
    cert_dir: Path = field(
        default_factory=lambda: Path(tempfile.gettempdir()) / "k8s-webhook-server" / "serving-certs"
    )
    webhook_url: str | None = None
    service_name: str = SERVICE_NAME
    secret_name: str = SECRET_NAME
    renew_before: str = "6m"
    cert_resync_seconds: float = 60.0
    initialize_timeout: float = 60.0
    cache_sync_timeout: float = 120.0
    shutdown_grace: float = 10.0
    log_level: str = "info"
    feature_gates: str = ""
    api_set: str = DEFAULT_API_SET
    """Which versions the webhook configurations it creates list per kind (docs/api.md, "API sets")."""

    @property
    def dns_name(self) -> str:
        """The name the certificate is for: the URL's host in --webhook-url mode, else the Service's."""
        if self.webhook_url:
            return urlsplit(self.webhook_url).hostname or "localhost"
        return f"{self.service_name}.{self.namespace}.svc"

    @property
    def target(self) -> ClientTarget:
        return ClientTarget(namespace=self.namespace, service=self.service_name, url=self.webhook_url)


def parse_args(argv: list[str] | None = None) -> Options:
    env = os.environ
    p = argparse.ArgumentParser(prog="kruise-webhook", description="Kruise admission webhook server (HTTPS).")
    p.add_argument("--kubeconfig", default=env.get("KUBECONFIG"))
    p.add_argument("--namespace", default=env.get("POD_NAMESPACE", "kruise-system"), help="kruise namespace")
    p.add_argument("--bind-address", default="0.0.0.0")
    p.add_argument("--port", type=int, default=int(env.get("WEBHOOK_PORT", "9876")))
    p.add_argument("--cert-dir", type=Path, default=env.get("WEBHOOK_CERT_DIR") or Options().cert_dir)
    p.add_argument(
        "--webhook-url",
        default=env.get("WEBHOOK_URL"),
        help="base URL the apiserver calls (https://host:port) instead of the Service",
    )
    p.add_argument("--service-name", default=env.get("SERVICE_NAME", SERVICE_NAME))
    p.add_argument("--secret-name", default=env.get("SECRET_NAME", SECRET_NAME))
    p.add_argument("--certs-renew-before", default=env.get("CERTS_RENEW_BEFORE", "6m"))
    p.add_argument("--cert-resync-seconds", type=float, default=60.0)
    p.add_argument("--webhook-initialize-timeout", type=float, default=60.0)
    p.add_argument("--cache-sync-timeout", type=float, default=120.0)
    p.add_argument("--shutdown-grace-seconds", type=float, default=10.0)
    p.add_argument("--log-level", default="info")
    p.add_argument("--feature-gates", default="", help="A=true,B=false (the same gates as kruise-manager)")
    p.add_argument(
        "--api-set",
        default=env.get("KRUISE_API_SET", DEFAULT_API_SET),
        help='the Kruise API the cluster serves: "1.9" (default) or "2.0" (its CRDs must be installed)',
    )
    a = p.parse_args(argv)
    if a.webhook_url and urlsplit(a.webhook_url).scheme != "https":
        p.error(f"--webhook-url: must be an https:// URL, got {a.webhook_url!r}")
    try:
        certs.parse_renew_before(a.certs_renew_before)
        FeatureGates.from_flag(a.feature_gates)
        api_set = apisets.parse(a.api_set, field="--api-set")
    except (ValueError, FeatureGateError) as exc:
        p.error(str(exc))
    return Options(
        kubeconfig=a.kubeconfig, namespace=a.namespace, bind_address=a.bind_address, port=a.port,
        cert_dir=Path(a.cert_dir), webhook_url=a.webhook_url, service_name=a.service_name,
        secret_name=a.secret_name, renew_before=a.certs_renew_before,
        cert_resync_seconds=a.cert_resync_seconds, initialize_timeout=a.webhook_initialize_timeout,
        cache_sync_timeout=a.cache_sync_timeout, shutdown_grace=a.shutdown_grace_seconds,
        log_level=a.log_level, feature_gates=a.feature_gates, api_set=api_set,
    )  # fmt: skip


class WebhookProcess:
    """Everything one replica runs; `start()` returns once it serves, `stop()` tears it down."""

    def __init__(self, client: Client, options: Options) -> None:
        self.client = client
        self.options = options
        self.factory = SharedInformerFactory(client, projections=cache_projections())
        pods = self.factory.informer(PODS)
        pvcs = self.factory.informer(PVCS)
        self.gates = FeatureGates.from_flag(options.feature_gates)
        configuration = self._configuration = self.factory.informer(
            CONFIGMAPS, options.namespace, field_selector=f"metadata.name={CONFIGURATION_NAME}"
        )
        sidecarset_revisions = self.factory.informer(
            CONTROLLER_REVISIONS, options.namespace, label_selector=LABEL_SIDECARSET_NAME
        )
        self.sidecarsets = StoreSidecarSets(
            self.factory.informer(NAMESPACES).store,
            None,
            configuration.store,
            sidecarset_revisions.store,
            options.namespace,
        )
        self.pubs = StorePubs(pods.store)
        self.recorder = EventRecorder(client, "kruise-webhook")
        self.budgets = BudgetKeeper(
            client,
            self.pubs,
            self.recorder,
            vertical_scaling=self.gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING),
        )
        objects = StorePodsAndNodes(pods.store, self.factory.informer(NODES).store)
        self.spreads: StoreSpreads | None = None
        keeper = None
        if self.gates.enabled(features.WORKLOAD_SPREAD) and self.gates.enabled(features.POD_WEBHOOK):
            self.spreads = StoreSpreads()
            keeper = SpreadKeeper(client, self.spreads, configuration=self.sidecarsets.configuration)
        self.persistent_pod_states = StorePersistentPodStates()
        self.probe_markers: StorePodProbeMarkers | None = None
        if self.gates.enabled(features.ENABLE_POD_PROBE_MARKER_ON_SERVERLESS):
            # only this gate's pod step reads markers (RBAC: podprobemarkers get/list/watch)
            self.probe_markers = StorePodProbeMarkers()
        storage_classes = None
        if self.gates.enabled(features.STATEFULSET_AUTO_RESIZE_PVC_GATE):
            # only this gate's claim-template check reads classes (RBAC: storageclasses get/list/watch)
            storage_classes = StoreStorageClasses(self.factory.informer(STORAGE_CLASSES).store)
        context = WebhookContext(
            namespace_contents=StoreNamespaceContents(pods.store, pvcs.store),
            sidecarsets=self.sidecarsets,
            gates=self.gates,
            budgets=self.budgets,
            objects=objects,
            spreads=keeper,
            persistent_pod_states=self.persistent_pod_states.in_namespace,
            storage_classes=storage_classes,
            configuration=self.sidecarsets.configuration,
            list_custom_resources=self._list_custom_resources,
            probe_markers=self.probe_markers.in_namespace if self.probe_markers is not None else None,
        )
        self.routes = registry.routes(context)
        self.certs = CertController(
            client, options.namespace, options.dns_name, options.cert_dir,
            ConfigurationPatcher(client, options.target, frozenset(self.routes), options.api_set),
            secret_name=options.secret_name, renew_before=certs.parse_renew_before(options.renew_before),
            resync_seconds=options.cert_resync_seconds, on_rotate=lambda _: self._reload(),
            conversion=ConversionPatcher(client, options.target, redefined=self._crd_redefined),
            external=self.gates.enabled(features.ENABLE_EXTERNAL_CERTS),
        )  # fmt: skip
        self.app = create_app(self.routes, ready=self.ready, caches=InformerCaches(self.factory))
        self.server: HTTPSServer | None = None
        self.custom_workloads: CustomWorkloadFollower | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def ready(self) -> bool:
        synced = all(i.has_synced() for i in self.factory.informers)
        return synced and self.certs.bundle is not None and self.server is not None and self.server.started

    def _crd_redefined(self, crd: dict[str, Any]) -> None:
        """This process changed the CRD's spec: its watches end and a resume could race that end, so its
        caches of the resource re-list now, and admission waits for them (see `InformerCaches`)."""
        spec = section(crd, "spec")
        plural = str(section(spec, "names").get("plural", ""))
        chosen = self.factory.relist(str(spec.get("group", "")), plural)
        if chosen:
            log.info("re-listing caches of a redefined CRD", crd=meta_of(crd).get("name"), caches=len(chosen))

    def _reload(self) -> None:
        if self.server is not None:
            self.server.reload_certificate()
            log.info("serving certificate hot-reloaded")

    async def _list_custom_resources(self, ref: ResourceRef) -> list[dict[str, Any]]:
        items, _ = await self.client.list_all(ref)
        return items

    async def _sidecarset_served(self) -> bool:
        """Upstream turns SidecarSet handling off when the kind is not installed; so do we, rather
        than never becoming ready waiting on a cache that cannot sync."""
        return await self._served(
            SIDECARSETS, "SidecarSet is not served; pods are admitted without sidecar injection"
        )

    async def _pub_served(self) -> bool:
        return await self._served(
            PODUNAVAILABLEBUDGETS,
            "PodUnavailableBudget is not served; pods are admitted without budget checks",
        )

    async def _served(self, ref: ResourceRef, not_served: str | None = None) -> bool:
        """Whether the kind is installed: only NotFound says no. Any other error (typically the CRD's
        conversion webhook - this very process, not listening yet - failing a list of a kind stored
        at another version) means the kind exists; its informer retries until conversion answers."""
        try:
            await self.client.list(ref, limit=1)
        except NotFound:
            if not_served is not None:
                log.warning(not_served)
            return False
        except ApiError as error:
            log.info("kind served, not listable yet", resource=ref.plural, reason=str(error))
        return True

    async def _attach_spreads(self, spreads: StoreSpreads) -> None:
        """WorkloadSpread injection reads WorkloadSpreads and the workloads behind pod owners; kinds
        that are not served (a CRD not installed) are simply not followed."""
        if not await self._served(WORKLOADSPREADS):
            log.warning("WorkloadSpread is not served; pods are admitted without subset injection")
            return
        spreads.attach(self.factory.informer(WORKLOADSPREADS).store)
        for ref in SPREAD_WORKLOADS:
            spreads.attach_workload(ref.group, ref.kind, self.factory.informer(ref).store)
        for ref in SPREAD_KRUISE_WORKLOADS:
            if await self._served(ref):
                spreads.attach_workload(ref.group, ref.kind, self.factory.informer(ref).store)
        await self._attach_custom_workloads(spreads)

    async def _attach_custom_workloads(self, spreads: StoreSpreads) -> None:
        """Caches for the kinds in kruise-configuration's WorkloadSpread whitelist at start (readiness
        waits for them); kinds whitelisted or served later are followed by `CustomWorkloadFollower`,
        woken by changes of the ConfigMap and of CRDs (see kruise.webhook.customworkloads)."""
        follower = CustomWorkloadFollower(self.client, spreads, self.sidecarsets.configuration, self._served)
        try:
            config_map = await self.client.get(CONFIGMAPS, CONFIGURATION_NAME, self.options.namespace)
        except NotFound:
            config_map = {}

        def cache_for(gvk: GroupVersionKind, ref: ResourceRef) -> None:
            spreads.attach_workload(gvk.group, gvk.kind, self.factory.informer(ref).store)

        await follower.follow(section(config_map, "data"), cache_for)
        self._configuration.add_event_handler(on_add=follower.poke, on_update=follower.poke)
        if self.certs.crds is not None:
            self.certs.crds.add_event_handler(on_add=follower.poke, on_update=follower.poke)
        self.custom_workloads = follower

    async def _persistent_pod_state_served(self) -> bool:
        return await self._served(
            PERSISTENT_POD_STATES,
            "PersistentPodState is not served; recreated StatefulSet pods are not steered back",
        )

    async def start(self) -> None:
        # Before any cache lists: each Kruise kind is cached at its CRD storage version and converted
        # in-process (`kruise.kube.wire`), so no informer depends on this process's own /convert.
        self.client.wire = await self.client.read_wire_versions()
        if self.spreads is not None:
            await self._attach_spreads(self.spreads)
        if await self._persistent_pod_state_served():
            self.persistent_pod_states.attach(self.factory.informer(PERSISTENT_POD_STATES).store)
        if self.probe_markers is not None:
            if await self._served(POD_PROBE_MARKERS):
                self.probe_markers.attach(self.factory.informer(POD_PROBE_MARKERS).store)
            else:
                log.warning("PodProbeMarker is not served; pods are admitted without serverless probes")
        if await self._sidecarset_served():
            self.sidecarsets.attach(self.factory.informer(SIDECARSETS).store)
        if await self._pub_served():
            # a new pod's owner is its ReplicaSet: a Deployment-targeted PUB is found through it
            self.pubs.attach(
                self.factory.informer(PODUNAVAILABLEBUDGETS).store, self.factory.informer(REPLICASETS).store
            )
        self.factory.start()
        await self.certs.initialize(self.options.initialize_timeout)
        # Listen before the caches sync: a kind whose CRD could not be read at start is listed at the
        # code's version through /convert, which this very server answers. Admission calls get 503
        # (the caller's failurePolicy applies) until ready() holds.
        self.server = HTTPSServer(
            self.app,
            self.options.bind_address,
            self.options.port,
            self.certs.cert_file,
            self.certs.key_file,
            shutdown_grace=self.options.shutdown_grace,
        )
        serve = await self.server.start()
        self._tasks = [serve, asyncio.create_task(self.certs.run(), name="certs")]
        if self.custom_workloads is not None:
            self._tasks.append(asyncio.create_task(self.custom_workloads.run(), name="custom-workloads"))
        if not await self.factory.wait_for_cache_sync(self.options.cache_sync_timeout):
            raise RuntimeError("informer caches did not sync in time")

    async def wait(self) -> None:
        done, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        for task in self._tasks:
            if task.get_name() != "https":
                task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        with contextlib.suppress(Exception):
            await self.recorder.stop()
        if self.custom_workloads is not None:
            await self.custom_workloads.stop()
        await self.factory.stop()


async def run(options: Options) -> None:
    client = await Client.from_environment(options.kubeconfig)
    process = WebhookProcess(client, options)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    try:
        await process.start()
        log.info("kruise-webhook serving", port=process.server.bound_port() if process.server else None)
        stop = asyncio.create_task(stopping.wait())
        running = asyncio.create_task(process.wait())
        done, _ = await asyncio.wait({stop, running}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if running in done:
            running.result()
        else:
            running.cancel()
            log.info("kruise-webhook stopping on signal")
    finally:
        await process.stop()
        await client.close()


def main(argv: list[str] | None = None) -> None:
    options = parse_args(argv)
    configure_logging(options.log_level)
    warn_gates_without_effect(log, FeatureGates.from_flag(options.feature_gates))
    asyncio.run(run(options))


if __name__ == "__main__":
    main()
