"""One whole sandbox cluster in-process: API emulator with webhook admission, CRDs, simulated nodes.

``kruise sandbox up`` and the tests assemble the same thing, so it lives here once:

    async with Sandbox(nodes=3) as sb:
        subprocess.run(["kubectl", "--kubeconfig", str(sb.kubeconfig), "get", "nodes"])

Start order matters the way it does in a real cluster: the apiserver first, then the CRDs
(established before anything uses them), then nodes and kubelets, then the ``manifests`` a caller
wants in place first (``kubectl apply -f``; see ``manifests``), then the extra components
(kruise-webhook/manager/daemon processes, registered through ``components``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml

from kruise.sandbox.apiserver import serviceroute
from kruise.sandbox.apiserver.server import ApiServer
from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from kruise.sandbox.cri.slow_pulls import SlowImages
from kruise.sandbox.failurelogs import keep_failure_logs
from kruise.sandbox.manifests import apply_manifests, check_paths
from kruise.sandbox.simulator import ProcessImage, Simulator
from kruise.sandbox.simulator.client import ApiError, Client
from kruise.sandbox.simulator.simulator import RUNTIMES

log = logging.getLogger(__name__)

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
DEFAULT_CRD_DIR = Path(__file__).resolve().parent.parent / "crds"


class Component(Protocol):
    """Something started after the cluster is up and stopped before it goes down.

    This is where kruise-webhook, kruise-manager and kruise-daemon processes plug in: a component
    gets the running Sandbox (kubeconfig, ``register_service`` for webhook Services) in ``start``.
    """

    name: str

    async def start(self, sandbox: Sandbox) -> None: ...

    async def stop(self) -> None: ...


class Sandbox:
    """Emulator + webhook admission + CRDs + simulated nodes, as an async context manager.

    ``service_addresses`` maps a webhook Service ``(namespace, name, port)`` to the ``host:port``
    of a host process that serves it (``register_service`` adds entries while running); any other
    Service is reached through a ready endpoint of its EndpointSlices, which the simulator's
    endpointslice controller keeps for pods: containers of ``process_images`` run as real
    processes at their pod IP (see ``simulator.processes``). ``crd_dir`` defaults to the
    repository's ``crds/`` when it exists. Pod and node IPs come from a loopback slot the simulator
    claims (``address_slot``, or the first free one; see ``simulator.addresses``), so sandboxes
    side by side on one machine never reach each other's pods.
    ``runtime="containerd"`` runs every node on a real
    containerd (see ``Simulator``) and also serves the API on the pod bridge's host address.
    ``fault_endpoints`` serves the emulator's fault hooks at `/debug/faults/*` (test-only; see
    ``apiserver.faultroutes``). ``manifests`` (files or directories of YAML) are applied after the
    nodes and before the components, so kruise-py starts on a cluster that already has them.
    """

    def __init__(
        self,
        *,
        nodes: int = 3,
        port: int = 0,
        kubeconfig: str | Path | None = None,
        speed: float = 1.0,
        crd_dir: str | Path | None = DEFAULT_CRD_DIR,
        components: Sequence[Component] = (),
        service_addresses: dict[tuple[str, str, int], str] | None = None,
        crd_timeout: float = 30.0,
        process_images: Sequence[ProcessImage] = (),
        address_slot: int | None = None,
        runtime: str = "fake",
        pod_subnet: str | None = None,
        fail_images: Sequence[str] = (),
        slow_images: Sequence[tuple[str, float]] = (),
        kube_api_qps: float | None = None,
        kube_api_burst: int = 30,
        fault_endpoints: bool = False,
        manifests: Sequence[str | Path] = (),
    ) -> None:
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime: must be one of {list(RUNTIMES)}, got {runtime!r}")
        if nodes < 0:
            raise ValueError(f"nodes: must be >= 0, got {nodes}")
        if speed <= 0:
            raise ValueError(f"speed: must be > 0, got {speed}")
        self.nodes = nodes
        self.port = port
        self.speed = speed
        self.crd_dir = Path(crd_dir) if crd_dir is not None else None
        self.components = list(components)
        self.service_addresses: dict[tuple[str, str, int], str] = dict(service_addresses or {})
        self.crd_timeout = crd_timeout
        self.process_images = list(process_images)
        self.address_slot = address_slot
        self.runtime = runtime
        self.pod_subnet = pod_subnet
        self.fail_images = list(fail_images)
        self.slow_images = list(slow_images)
        self.kube_api_qps = kube_api_qps
        self.kube_api_burst = kube_api_burst
        self.fault_endpoints = fault_endpoints
        self.manifests = check_paths([Path(m) for m in manifests])
        self.applied: list[str] = []
        """What ``manifests`` created or changed, as ``kind/name`` (kubectl's ``-o name``)."""
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._kubeconfig_arg = Path(kubeconfig) if kubeconfig is not None else None
        self.kubeconfig: Path = Path()
        self.admission: WebhookAdmission | None = None
        self.server: ApiServer | None = None
        self.simulator: Simulator | None = None
        self.crds: list[str] = []
        self._started: list[Component] = []
        self.kept_logs: Path | None = None
        """Where ``keep_logs`` left a failed sandbox's logs."""

    @property
    def url(self) -> str:
        if self.server is None:
            raise RuntimeError("sandbox is not started")
        return self.server.url

    def register_service(self, namespace: str, name: str, port: int, address: str) -> None:
        """Make ``<name>.<namespace>.svc:<port>`` reachable for webhook calls at ``address`` (host:port)."""
        self.service_addresses[(namespace, name, port)] = address

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> None:
        if isinstance(exc, Exception):  # failed while up (a demo step, a component): keep the logs
            await self.keep_logs()
        await self.stop()

    async def start(self) -> None:
        try:
            await self._start()
        except Exception:
            await self.keep_logs()
            await self.stop()
            raise
        except BaseException:
            await self.stop()
            raise

    async def keep_logs(self) -> Path | None:
        """Before tearing down a sandbox that failed: copy its pods' and components' logs and its events
        into a directory that outlives it (see ``failurelogs``); ``kept_logs`` names it (None: nothing
        ran yet). Never raises: the failure being reported matters more than its logs."""
        kubelets = self.simulator.kubelets if self.simulator is not None else {}
        logs = [Path(f) for c in self.components if (f := getattr(c, "log_file", None)) is not None]
        events = list(self.server.store.list(("", "events"))) if self.server is not None else []
        try:
            self.kept_logs = await keep_failure_logs(kubelets, logs, events)
        except Exception as exc:  # a half-written directory is still worth naming
            log.warning("could not keep the failed sandbox's logs: %s", exc)
        return self.kept_logs

    async def _start(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="kruise-sandbox-")
        self.kubeconfig = self._kubeconfig_arg or Path(self._tmp.name) / "kubeconfig"
        self.admission = WebhookAdmission(self._list_stored, self._service_address)
        self.server = ApiServer(
            admission=self.admission,
            service_addresses=self._service_address,
            fault_endpoints=self.fault_endpoints,
        )
        await self.server.start(host="127.0.0.1", port=self.port)
        self.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        self.server.write_kubeconfig(self.kubeconfig)
        if self.crd_dir is not None and self.crd_dir.is_dir():
            self.crds = await apply_crds(self.kubeconfig, load_crds(self.crd_dir), timeout=self.crd_timeout)
        if self.nodes:
            self.simulator = Simulator(
                str(self.kubeconfig),
                nodes=self.nodes,
                speed=self.speed,
                cri_socket_dir=Path(self._tmp.name) / "cri",
                process_images=self.process_images,
                state_dir=Path(self._tmp.name) / "kubelet",
                address_slot=self.address_slot,
                runtime=self.runtime,
                pod_subnet=self.pod_subnet,
                fail_images=self.fail_images,
                pull_delay=SlowImages(self.slow_images),
                kube_api_qps=self.kube_api_qps,
                kube_api_burst=self.kube_api_burst,
                # the sandbox's apiserver has no other scheduler: every Node is a target, as on kind
                schedule_any_node=True,
            )
            await self.simulator.start()
            if self.simulator.real is not None:  # pods on the bridge reach the API at its host address
                await self.server.listen_also(str(self.simulator.real.network.host_address))
        if self.manifests:
            self.applied = await apply_manifests(self.kubeconfig, self.manifests, timeout=self.crd_timeout)
        for component in self.components:
            try:
                await component.start(self)
            except BaseException:
                # it may have spawned something before failing; stop() only knows started ones
                with contextlib.suppress(Exception):
                    await component.stop()
                raise
            self._started.append(component)

    async def stop(self) -> None:
        """Tear down in reverse start order; each step runs even if an earlier one failed."""
        errors: list[BaseException] = []
        while self._started:
            component = self._started.pop()
            try:
                await component.stop()
            except Exception as exc:  # keep tearing down; report the first failure
                errors.append(exc)
        for step in (self._stop_simulator, self._stop_server, self._close_admission):
            try:
                await step()
            except Exception as exc:
                errors.append(exc)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        if errors:
            raise errors[0]

    async def _stop_simulator(self) -> None:
        simulator, self.simulator = self.simulator, None
        if simulator is not None:
            await simulator.stop()

    async def _stop_server(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            await server.stop()

    async def _close_admission(self) -> None:
        admission, self.admission = self.admission, None
        if admission is not None:
            await admission.aclose()

    def _service_address(self, namespace: str, name: str, port: int) -> str:
        """A registered address (the host-process components), else a ready endpoint of the
        Service's EndpointSlices, as kube-proxy would pick one (``ServiceUnreachable`` if none)."""
        registered = self.service_addresses.get((namespace, name, port))
        if registered is not None:
            return registered
        assert self.server is not None
        store = self.server.store
        return serviceroute.resolve(lambda group, plural: store.list((group, plural)), namespace, name, port)

    def _list_stored(self, group: str, version: str, plural: str) -> list[dict[str, Any]]:
        """Admission reads webhook configurations and namespaces straight from storage.

        kube-apiserver reads them through informers; reading storage directly means a configuration
        created a moment ago already applies to the next request, so tests need no waiting.
        """
        assert self.server is not None
        return list(self.server.store.list((group, plural)))


def load_crds(crd_dir: Path) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition document in ``crd_dir/*.yaml``, in file name order."""
    crds: list[dict[str, Any]] = []
    for path in sorted(crd_dir.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                crds.append(doc)
    return crds


async def apply_crds(kubeconfig: str | Path, crds: Iterable[dict[str, Any]], *, timeout: float) -> list[str]:
    """Create or replace each CRD, then wait until every one reports Established."""
    client = Client(kubeconfig, user_agent="kruise-sandbox")
    names: list[str] = []
    try:
        for crd in crds:
            name = crd["metadata"]["name"]
            try:
                await client.create(CRD_PATH, crd)
            except ApiError as exc:
                if not exc.conflict:
                    raise
                current = await client.get(f"{CRD_PATH}/{name}")
                crd = {
                    **crd,
                    "metadata": {
                        **crd["metadata"],
                        "resourceVersion": current["metadata"]["resourceVersion"],
                    },
                }
                await client.replace(f"{CRD_PATH}/{name}", crd)
            names.append(name)
        await asyncio.wait_for(_wait_established(client, set(names)), timeout)
    finally:
        await client.close()
    return names


def _established(crd: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in (crd.get("status") or {}).get("conditions") or []
    )


async def _wait_established(client: Client, pending: set[str]) -> None:
    """List once, then follow the watch until no CRD of ``pending`` lacks Established."""
    listing = await client.list(CRD_PATH)
    for crd in listing.get("items") or []:
        if _established(crd):
            pending.discard(crd["metadata"]["name"])
    version = listing["metadata"]["resourceVersion"]
    while pending:
        async for event in client.watch(CRD_PATH, version):
            obj = event.get("object") or {}
            version = (obj.get("metadata") or {}).get("resourceVersion", version)
            if event.get("type") in ("ADDED", "MODIFIED") and _established(obj):
                pending.discard(obj["metadata"]["name"])
            if not pending:
                return
