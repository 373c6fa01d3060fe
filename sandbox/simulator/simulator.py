"""``Simulator``: nodes, a scheduler, kubelets and built-in controllers against one apiserver.

It is a client of whatever the kubeconfig points at (the sandbox emulator or a real
kube-apiserver), like kwok. Each node gets its own ``FakeRuntime``; with ``cri_socket_dir``
each runtime is also served over CRI gRPC at ``<dir>/<node>.sock`` for kruise-daemon.
With ``process_images``, containers of those images run as real local processes (see
``kubelet`` and ``process_runner``); their files live under ``state_dir``, and each node's CRI
socket is also linked at ``/run/containerd/containerd.sock`` of its host file system.

With ``runtime="containerd"`` each node is real below the kubelet: the simulator starts
``RealNodes`` (a local registry with stand-in images, a bridge, one containerd per node, under
``<state_dir>/real``) before the kubelets, drives each node through ``CriNodeRuntime``, links
``<cri_socket_dir>/<node>.sock`` to that node's containerd socket (for kruise-daemon) and tears the
real nodes down after the kubelets stop.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kruise.sandbox.cri import FakeRuntime
from kruise.sandbox.cri.image_store import PullDelay
from kruise.sandbox.simulator.addresses import MAX_NODE_INDEX, AddressClaim, AddressRanges, claim_addresses
from kruise.sandbox.simulator.client import Client, Obj, resource_path
from kruise.sandbox.simulator.containers import ConfigMapLookup
from kruise.sandbox.simulator.controller import OwnerController
from kruise.sandbox.simulator.cri_node import CriNodeRuntime
from kruise.sandbox.simulator.cri_status import CriRuntimeStatus
from kruise.sandbox.simulator.daemonset import DaemonSetController
from kruise.sandbox.simulator.deployment import DeploymentController
from kruise.sandbox.simulator.endpoints import EndpointsController
from kruise.sandbox.simulator.events import Recorder
from kruise.sandbox.simulator.fake_node import FakeNodeRuntime
from kruise.sandbox.simulator.informer import Informer
from kruise.sandbox.simulator.job import JobController
from kruise.sandbox.simulator.kubelet import Kubelet
from kruise.sandbox.simulator.kubelet_api import KubeletApi
from kruise.sandbox.simulator.logs import ContainerLogs
from kruise.sandbox.simulator.node import NodeAgent, NodeSpec
from kruise.sandbox.simulator.noderuntime import NodeRuntime
from kruise.sandbox.simulator.pleg import RelistGate
from kruise.sandbox.simulator.process_runner import ProcessRunner
from kruise.sandbox.simulator.processes import ProcessImage
from kruise.sandbox.simulator.replicaset import ReplicaSetController
from kruise.sandbox.simulator.scheduler import Scheduler
from kruise.sandbox.simulator.statefulset import StatefulSetController
from kruise.sandbox.simulator.timing import Timing
from kruise.sandbox.simulator.volumes import VolumeController

log = logging.getLogger(__name__)

APPS_V1 = "apps/v1"
DEFAULT_ZONES = ("zone-a", "zone-b", "zone-c")
CONTROLLERS = (
    "scheduler",
    "job",
    "deployment",
    "replicaset",
    "daemonset",
    "statefulset",
    "endpoints",
    "volumes",
)
RUNTIMES = ("fake", "containerd")


class Simulator:
    """A simulated cluster's data plane.

    Args:
        kubeconfig_path: where the apiserver is and how to authenticate.
        nodes: how many nodes (``node-1`` ... ``node-N``), spread over ``zones`` round-robin.
        speed: divides every simulated duration (see ``Timing``).
        cri_socket_dir: if set, serve each node's runtime at ``<dir>/<node>.sock``.
        timing: durations in cluster seconds (its ``speed`` is overridden by ``speed``).
        controllers: which built-ins to run; drop ``"deployment"``, ``"replicaset"``, ``"job"``,
            ``"daemonset"``, ``"statefulset"`` and ``"endpoints"`` (EndpointSlices and Endpoints of selector
            Services) when the target cluster already runs kube-controller-manager,
            ``"scheduler"`` when it runs kube-scheduler, ``"volumes"`` (provisioning, binding and
            expansion of claims of ``sandbox.kruise.io/volumes`` StorageClasses) when it has storage.
        pods_per_node, cpu, memory: node capacity.
        pull_delay: seconds each image pull takes at speed 1, or a function of the normalized
            reference (``--slow-image``, see ``cri.slow_pulls``).
        fail_images: glob patterns of image references whose pull fails on every node (as an
            unreachable registry would), so a rollout to a bad image can be staged without a real one.
        process_images: images whose containers run as real local processes.
        state_dir: where those containers' volumes and roots are written (a temporary
            directory, removed on stop, when not given).
        address_slot: the loopback slot for pod and node IPs (see ``addresses``); None claims the
            first free one at start, so simulators on one machine never share pod IPs.
        lock_dir: where slots are claimed (``addresses.default_lock_dir()`` when not given).
        runtime: ``"fake"`` (in-memory, the default) or ``"containerd"`` (real nodes; root and
            Debian's containerd, runc, CNI plugins and docker-registry).
        api_host: the API server's address as pods on real nodes reach it (the bridge's host
            address by default) for ``KUBERNETES_SERVICE_HOST``.
        pod_subnet: the real nodes' pod subnet (``RealNodes``' default when None).
        schedule_any_node: the scheduler binds pods to every Node of the cluster, as kube-scheduler
            does, not only to the simulator's own ``node-1``..``node-N``. For a cluster whose only
            scheduler this is (the sandbox's own apiserver): a Node a user or test adds with no kubelet
            behind it (upstream e2e's fake node) gets pods bound, which then stay Pending. Off by
            default, so a simulator beside other node owners never binds to their nodes.
        kube_api_qps, kube_api_burst: kube-controller-manager's `--kube-api-qps` / `--kube-api-burst`:
            each workload controller (Deployment, ReplicaSet, Job, DaemonSet, StatefulSet) writes
            through its own client limited to that rate (real defaults 20 / 30). None: unlimited.
    """

    def __init__(
        self,
        kubeconfig_path: str | Path,
        nodes: int = 3,
        speed: float = 1.0,
        cri_socket_dir: str | Path | None = None,
        *,
        timing: Timing | None = None,
        controllers: tuple[str, ...] = CONTROLLERS,
        zones: tuple[str, ...] = DEFAULT_ZONES,
        pods_per_node: int = 110,
        cpu: str = "8",
        memory: str = "32Gi",
        pull_delay: PullDelay = 0.0,
        fail_images: Sequence[str] = (),
        process_images: Sequence[ProcessImage] = (),
        state_dir: str | Path | None = None,
        address_slot: int | None = None,
        lock_dir: str | Path | None = None,
        runtime: str = "fake",
        api_host: str | None = None,
        pod_subnet: str | None = None,
        schedule_any_node: bool = False,
        kube_api_qps: float | None = None,
        kube_api_burst: int = 30,
    ) -> None:
        if kube_api_qps is not None and kube_api_qps <= 0:
            raise ValueError(f"kube_api_qps: must be > 0, got {kube_api_qps}")
        if kube_api_burst < 1:
            raise ValueError(f"kube_api_burst: must be >= 1, got {kube_api_burst}")
        self.kube_api_qps = kube_api_qps
        self.kube_api_burst = kube_api_burst
        self._controller_clients: list[Client] = []
        if not 1 <= nodes <= MAX_NODE_INDEX:
            raise ValueError(f"nodes: must be in 1..{MAX_NODE_INDEX}, got {nodes}")
        if address_slot is not None:
            AddressRanges(address_slot)  # fail on a bad slot now, not at start
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime: must be one of {list(RUNTIMES)}, got {runtime!r}")
        self.runtime = runtime
        self.api_host = api_host
        self.pod_subnet = pod_subnet
        self.schedule_any_node = schedule_any_node
        self.real: Any = None  # RealNodes in containerd mode
        unknown = set(controllers) - set(CONTROLLERS)
        if unknown:
            raise ValueError(f"controllers: unknown {sorted(unknown)}, supported: {list(CONTROLLERS)}")
        self.kubeconfig_path = Path(kubeconfig_path)
        self.timing = timing or Timing()
        self.timing.speed = speed
        self.timing.__post_init__()
        self.cri_socket_dir = Path(cri_socket_dir) if cri_socket_dir else None
        self.controllers = controllers
        self.node_specs = [
            NodeSpec(
                name=f"node-{i}",
                index=i,
                zone=zones[(i - 1) % len(zones)],
                cpu=cpu,
                memory=memory,
                pods=pods_per_node,
            )
            for i in range(1, nodes + 1)
        ]
        self.runtimes: dict[str, FakeRuntime] = {
            spec.name: FakeRuntime(spec.name, speed=speed, pull_delay=pull_delay, fail_images=fail_images)
            for spec in self.node_specs
        }
        self.client: Client | None = None
        self.kubelets: dict[str, Kubelet] = {}
        self.logs = ContainerLogs()
        self.kubelet_api = KubeletApi(self.kubelets)
        self.cri_servers: dict[str, object] = {}
        self.process_images = list(process_images)
        self.state_dir = Path(state_dir) if state_dir else None
        self._own_state_dir = False
        self.processes: ProcessRunner | None = None
        self._agents: list[NodeAgent] = []
        self._real_statuses: list[CriRuntimeStatus] = []
        self._informers: list[Informer] = []
        self._parts: list[object] = []
        self.address_slot = address_slot
        self.lock_dir = Path(lock_dir) if lock_dir is not None else None
        self._claim: AddressClaim | None = None

    @property
    def addresses(self) -> AddressRanges:
        """The claimed pod and node ranges (slot 0 before start)."""
        return self.node_specs[0].addresses

    @property
    def node_names(self) -> list[str]:
        return [spec.name for spec in self.node_specs]

    def socket_path(self, node: str) -> Path | None:
        return self.cri_socket_dir / f"{node}.sock" if self.cri_socket_dir else None

    async def _start_real_nodes(self) -> None:
        """containerd mode: the real nodes, and each node's socket where kruise-daemon looks."""
        from kruise.sandbox.realnode.nodes import RealNodes  # containerd mode only

        assert self.state_dir is not None
        subnet = {"pod_subnet": self.pod_subnet} if self.pod_subnet else {}
        self.real = RealNodes(self.state_dir / "real", self.node_names, **subnet)
        await self.real.start()
        for spec in self.node_specs:
            spec.cidr = str(self.real.nodes[spec.name].pod_cidr)
        if self.cri_socket_dir is not None:
            self.cri_socket_dir.mkdir(parents=True, exist_ok=True)
            for name, node in self.real.nodes.items():
                link = self.socket_path(name)
                assert link is not None
                link.unlink(missing_ok=True)
                link.symlink_to(node.paths.socket)

    def _node_runtime(self, spec: NodeSpec, configmap: ConfigMapLookup) -> NodeRuntime:
        if self.real is None:
            runtime = self.runtimes[spec.name]
            return FakeNodeRuntime(runtime, spec, self.timing, self.logs, self.processes, configmap)
        assert self.processes is not None
        node = self.real.nodes[spec.name]
        return CriNodeRuntime(
            spec,
            node.paths.socket,
            self.timing,
            self.processes,
            node.paths.pod_logs,
            api_host=self.api_host or str(self.real.network.host_address),
            api_port=self.processes.api_port,
        )

    def _workload_controller(
        self, shared: Client, name: str, make: Callable[[Client], OwnerController]
    ) -> OwnerController:
        """`make(client)` with the client the controller writes through: with `kube_api_qps` its own,
        limited to `kube_api_qps` / `kube_api_burst` as kube-controller-manager builds one per
        controller, and its events still on the shared client — a real controller's event spam filter
        (25 per object, then one per 5 minutes) keeps events from spending its QPS. Else the shared."""
        if self.kube_api_qps is None:
            return make(shared)
        client = Client(
            self.kubeconfig_path,
            user_agent=f"kube-controller-manager/{name}",
            qps=self.kube_api_qps,
            burst=self.kube_api_burst,
        )
        self._controller_clients.append(client)
        controller = make(client)
        controller.recorder = Recorder(shared, controller.name)
        return controller

    async def start(self) -> None:
        """Claim addresses, register the nodes, start every loop, and return once their caches are filled."""
        self._claim = claim_addresses(self.address_slot, lock_dir=self.lock_dir)
        for spec in self.node_specs:
            spec.addresses = self._claim.ranges
        self.client = client = Client(self.kubeconfig_path)
        if (self.process_images or self.runtime == "containerd") and self.state_dir is None:
            self.state_dir = Path(tempfile.mkdtemp(prefix="sim-state-"))
            self._own_state_dir = True
        if self.runtime == "containerd":
            await self._start_real_nodes()
        elif self.cri_socket_dir is not None:
            self.cri_socket_dir.mkdir(parents=True, exist_ok=True)
            for name, runtime in self.runtimes.items():
                self.cri_servers[name] = await runtime.serve(str(self.socket_path(name)))
        if self.process_images or self.runtime == "containerd":
            assert self.state_dir is not None
            self.processes = ProcessRunner(client, self.process_images, self.state_dir)
            for name in self.runtimes:
                if self.real is not None:  # hostPath mounts of a real container see the socket itself
                    self.processes.link_cri_socket(name, self.real.nodes[name].paths.socket, hard=True)
                    continue
                socket = self.socket_path(name)
                if socket is not None:
                    self.processes.link_cri_socket(name, socket)
        port = await self.kubelet_api.start()
        configmaps = Informer(client, resource_path("v1", "configmaps"))
        self._informers.append(configmaps)
        for spec in self.node_specs:
            spec.kubelet_port = port
            runtime = self.runtimes[spec.name]
            real_status = None
            if self.real is not None:
                real_status = CriRuntimeStatus(self.real.nodes[spec.name].paths.socket)
                real_status.open()
                self._real_statuses.append(real_status)
            agent = NodeAgent(
                client, spec, runtime, heartbeat=self.timing.heartbeat_seconds, real=real_status
            )
            await agent.register()
            agent.start()
            self._agents.append(agent)

            def lookup(namespace: str, name: str, _cms: Informer = configmaps) -> Obj | None:
                return _cms.get(f"{namespace}/{name}")

            # real nodes run hooks and processes in real seconds: their kubelet waits for relists as a
            # real one does (``pleg``); the fake runtime's scaled clock has nothing to wait for
            relist = RelistGate() if self.real is not None else None
            kubelet = Kubelet(client, spec, self._node_runtime(spec, lookup), self.timing, lookup, relist)
            self.kubelets[spec.name] = kubelet
        configmaps.add_handler(self._configmaps_changed)
        configmaps.start()
        await configmaps.synced.wait()
        for kubelet in self.kubelets.values():
            await kubelet.start()
        pods = Informer(client, resource_path("v1", "pods"))
        self._informers.append(pods)
        if "scheduler" in self.controllers or "daemonset" in self.controllers:
            nodes = Informer(client, resource_path("v1", "nodes"))
            self._informers.append(nodes)
        if "scheduler" in self.controllers:
            scheduler = Scheduler(
                client, nodes, pods, None if self.schedule_any_node else set(self.node_names)
            )
            self._parts.append(scheduler)
        if "daemonset" in self.controllers:
            daemonsets = Informer(client, resource_path(APPS_V1, "daemonsets"))
            self._informers.append(daemonsets)
            self._parts.append(
                self._workload_controller(
                    client, "daemonset", lambda c: DaemonSetController(c, daemonsets, pods, nodes)
                )
            )
        if "statefulset" in self.controllers:
            statefulsets = Informer(client, resource_path(APPS_V1, "statefulsets"))
            self._informers.append(statefulsets)
            revisions = Informer(client, resource_path(APPS_V1, "controllerrevisions"))
            claims = Informer(client, resource_path("v1", "persistentvolumeclaims"))
            self._parts.append(
                self._workload_controller(
                    client,
                    "statefulset",
                    lambda c: StatefulSetController(c, statefulsets, pods, revisions, claims),
                )
            )
        if "volumes" in self.controllers:
            claims = Informer(client, resource_path("v1", "persistentvolumeclaims"))
            classes = Informer(client, resource_path("storage.k8s.io/v1", "storageclasses"))
            self._parts.append(VolumeController(client, claims, classes, pods, self.timing))
        if "job" in self.controllers:
            jobs = Informer(client, resource_path("batch/v1", "jobs"))
            self._informers.append(jobs)
            self._parts.append(
                self._workload_controller(client, "job", lambda c: JobController(c, jobs, pods))
            )
        if "replicaset" in self.controllers or "deployment" in self.controllers:
            replicasets = Informer(client, resource_path("apps/v1", "replicasets"))
            self._informers.append(replicasets)
            if "replicaset" in self.controllers:
                self._parts.append(
                    self._workload_controller(
                        client, "replicaset", lambda c: ReplicaSetController(c, replicasets, pods)
                    )
                )
            if "deployment" in self.controllers:
                deployments = Informer(client, resource_path("apps/v1", "deployments"))
                self._informers.append(deployments)
                self._parts.append(
                    self._workload_controller(
                        client, "deployment", lambda c: DeploymentController(c, deployments, replicasets)
                    )
                )
        if "endpoints" in self.controllers:
            services = Informer(client, resource_path("v1", "services"))
            self._informers.append(services)
            zones = {spec.name: spec.zone for spec in self.node_specs}
            endpoints = EndpointsController(client, services, pods, zones.get)
            self._parts.append(endpoints)
        for part in self._parts:
            part.start()  # type: ignore[attr-defined]
        for informer in self._informers[1:]:
            informer.start()
        owned = [i for part in self._parts for i in getattr(part, "informers", [])]
        await asyncio.gather(*(i.synced.wait() for i in [*self._informers, *owned]))
        await asyncio.gather(*(k.pods.synced.wait() for k in self.kubelets.values()))

    def _configmaps_changed(self, kind: str, obj: Obj) -> None:
        for kubelet in self.kubelets.values():
            kubelet.configmaps_changed()

    async def stop(self) -> None:
        """Stop every loop (pods and nodes stay in the apiserver) and close the CRI sockets."""
        for informer in self._informers:
            await informer.stop()
        for part in self._parts:
            await part.stop()  # type: ignore[attr-defined]
        for kubelet in self.kubelets.values():
            await kubelet.stop()
        for agent in self._agents:
            await agent.stop()
        for status in self._real_statuses:
            await status.close()
        self._real_statuses.clear()
        await self.kubelet_api.stop()
        for server in self.cri_servers.values():
            await server.stop()  # type: ignore[attr-defined]
        await self._stop_real_nodes()
        if self.client is not None:
            await self.client.close()
        for controller_client in self._controller_clients:
            await controller_client.close()
        self._controller_clients.clear()
        if self._own_state_dir and self.state_dir is not None:
            shutil.rmtree(self.state_dir, ignore_errors=True)
            self.state_dir, self._own_state_dir = None, False
        self._parts.clear()
        self._informers.clear()
        self._agents.clear()
        self.cri_servers.clear()
        claim, self._claim = self._claim, None
        if claim is not None:  # last: the pods' processes are gone, their addresses free again
            claim.release()

    async def _stop_real_nodes(self) -> None:
        real, self.real = self.real, None
        if real is None:
            return
        for problem in await real.stop():
            log.warning("real node teardown: %s", problem)
        for spec in self.node_specs:
            link = self.socket_path(spec.name)
            if link is not None and link.is_symlink():
                link.unlink()

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
