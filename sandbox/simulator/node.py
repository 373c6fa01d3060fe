"""A simulated node's API object: registration, heartbeats, Lease renewals and status.images.

The object looks like one a kubelet on containerd would register, so controllers that read
labels, allocatable, conditions or images (Kruise's NodeImage, scheduling, kubectl) see the
usual shapes. Heartbeats keep the Ready condition's lastHeartbeatTime fresh; the Lease in
kube-node-lease is renewed like the kubelet's node lease.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from kruise.sandbox.cri import FakeRuntime
from kruise.sandbox.simulator.addresses import AddressRanges
from kruise.sandbox.simulator.client import ApiError, Client, Obj, resource_path
from kruise.sandbox.simulator.cri_status import CriRuntimeStatus
from kruise.sandbox.simulator.events import now_micro, now_rfc3339

log = logging.getLogger(__name__)

KUBELET_VERSION = "v1.36.0"
OS_IMAGE = "Kruise Sandbox Linux"
KERNEL_VERSION = "6.8.0-sandbox"
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_SECONDS = 40


@dataclass
class NodeSpec:
    """Shape of one simulated node; ``index`` is 1-based and picks the pod CIDR and zone."""

    name: str
    index: int
    zone: str
    cpu: str = "8"
    memory: str = "32Gi"
    pods: int = 110
    arch: str = "amd64"
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Obj] = field(default_factory=list)
    kubelet_port: int = 10250  # the simulator's KubeletApi port once it listens
    addresses: AddressRanges = field(default_factory=AddressRanges)  # the simulator's claimed slot
    cidr: str = ""  # a real node's pod block (its CNI hands out these addresses); "" = the loopback one

    @property
    def internal_ip(self) -> str:
        """A loopback address (Linux routes all of 127.0.0.0/8 to ``lo``), so a hostNetwork
        process the kubelet runs can bind it."""
        return self.addresses.node_ip(self.index)

    @property
    def pod_cidr(self) -> str:
        """A loopback /24 per node from the simulator's slot: every pod IP is bindable by a real process
        on this machine (a real node's own block when ``cidr`` is set)."""
        return self.cidr or self.addresses.pod_cidr(self.index)


def node_images(runtime: FakeRuntime) -> list[Obj]:
    """``status.images`` as the kubelet reports them: names (digests then tags) and size, biggest first."""
    images = [{"names": image.names, "sizeBytes": image.size} for image in runtime.list_images()]
    return sorted(images, key=lambda i: (-i["sizeBytes"], i["names"]))


def ready_condition(now: str, transition: str) -> Obj:
    return {
        "type": "Ready",
        "status": "True",
        "lastHeartbeatTime": now,
        "lastTransitionTime": transition,
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
    }


def pressure_conditions(now: str, transition: str) -> list[Obj]:
    return [
        {
            "type": kind,
            "status": "False",
            "lastHeartbeatTime": now,
            "lastTransitionTime": transition,
            "reason": reason,
            "message": message,
        }
        for kind, reason, message in (
            ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        )
    ]


def build_node(spec: NodeSpec, runtime: FakeRuntime) -> Obj:
    """The Node object to create (its status is written separately through nodes/status)."""
    labels = {
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": spec.arch,
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": spec.arch,
        "topology.kubernetes.io/zone": spec.zone,
        "topology.kubernetes.io/region": "sandbox",
        **spec.labels,
    }
    node: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": spec.name,
            "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "kruise.io/sandbox-simulated": "true",
            },
        },
        "spec": {
            "podCIDR": spec.pod_cidr,
            "podCIDRs": [spec.pod_cidr],
            "providerID": f"sandbox://{spec.name}",
        },
    }
    if spec.taints:
        node["spec"]["taints"] = spec.taints
    return node


def build_status(
    spec: NodeSpec,
    runtime: FakeRuntime,
    *,
    now: str,
    transition: str,
    images: list[Obj] | None = None,
    runtime_version: str | None = None,
) -> Obj:
    """The node's status; ``images`` and ``runtime_version`` are a real node's, read from its own
    runtime (``cri_status``), else the fake runtime's are reported."""
    if runtime_version is None:
        runtime_version = f"{runtime.runtime_name}://{runtime.runtime_version.lstrip('v')}"
    resources = {"cpu": spec.cpu, "memory": spec.memory, "pods": str(spec.pods), "ephemeral-storage": "100Gi"}
    return {
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": [*pressure_conditions(now, transition), ready_condition(now, transition)],
        "addresses": [
            {"type": "InternalIP", "address": spec.internal_ip},
            {"type": "Hostname", "address": spec.name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": spec.kubelet_port}},
        "nodeInfo": {
            "machineID": f"{spec.index:032x}",
            "systemUUID": f"00000000-0000-0000-0000-{spec.index:012x}",
            "bootID": f"sandbox-boot-{spec.index}",
            "kernelVersion": KERNEL_VERSION,
            "osImage": OS_IMAGE,
            "containerRuntimeVersion": runtime_version,
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": spec.arch,
        },
        "images": node_images(runtime) if images is None else images,
    }


class NodeAgent:
    """Registers the node, then keeps its status and Lease fresh until stopped."""

    def __init__(
        self,
        client: Client,
        spec: NodeSpec,
        runtime: FakeRuntime,
        heartbeat: float = 10.0,
        real: CriRuntimeStatus | None = None,
    ) -> None:
        self.client = client
        self.spec = spec
        self.runtime = runtime
        self.real = real  # a real node: images and runtime version come from its containerd
        self.heartbeat = heartbeat
        self.uid = ""
        self._transition = now_rfc3339()
        self._images_dirty = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def register(self) -> None:
        path = resource_path("v1", "nodes")
        try:
            node = await self.client.create(path, build_node(self.spec, self.runtime))
        except ApiError as error:
            if error.status != 409:
                raise
            node = await self.client.get(resource_path("v1", "nodes", name=self.spec.name))
        self.uid = node["metadata"]["uid"]
        await self.post_status()
        await self.renew_lease()

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._heartbeats(), name=f"node {self.spec.name} heartbeat")]
        if self.real is None:  # a real node's images are read again at every heartbeat
            self._tasks.append(asyncio.create_task(self._image_watch(), name=f"node {self.spec.name} images"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def post_status(self) -> None:
        images = version = None
        if self.real is not None:
            images, version = await self.real.images(), await self.real.runtime_version()
        status = build_status(
            self.spec,
            self.runtime,
            now=now_rfc3339(),
            transition=self._transition,
            images=images,
            runtime_version=version,
        )
        await self.client.patch(
            resource_path("v1", "nodes", name=self.spec.name, sub="status"), {"status": status}
        )

    async def renew_lease(self) -> None:
        path = resource_path("coordination.k8s.io/v1", "leases", LEASE_NAMESPACE, self.spec.name)
        spec = {
            "holderIdentity": self.spec.name,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": now_micro(),
        }
        try:
            await self.client.patch(path, {"spec": spec})
        except ApiError as error:
            if not error.not_found:
                raise
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": self.spec.name,
                    "namespace": LEASE_NAMESPACE,
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Node", "name": self.spec.name, "uid": self.uid}
                    ],
                },
                "spec": spec,
            }
            await self._ensure_namespace(LEASE_NAMESPACE)
            await self.client.create(
                resource_path("coordination.k8s.io/v1", "leases", LEASE_NAMESPACE), lease
            )

    async def _ensure_namespace(self, name: str) -> None:
        try:
            await self.client.create(
                resource_path("v1", "namespaces"),
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
            )
        except ApiError as error:
            if error.status != 409:
                raise

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            try:
                await self.post_status()
                await self.renew_lease()
            except Exception as error:  # the next beat retries
                log.debug("node %s heartbeat failed: %s", self.spec.name, error)

    async def _image_watch(self) -> None:
        """Publish status.images whenever the runtime's image set changes (kubelet or CRI pulls)."""
        generation = self.runtime.images.generation
        while True:
            generation = await self.runtime.wait_images_changed(generation)
            try:
                await self.client.patch(
                    resource_path("v1", "nodes", name=self.spec.name, sub="status"),
                    {"status": {"images": node_images(self.runtime)}},
                )
            except Exception as error:  # heartbeat will publish them again
                log.debug("node %s images update failed: %s", self.spec.name, error)
