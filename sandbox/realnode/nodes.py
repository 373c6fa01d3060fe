"""The real-node fleet of one sandbox: registries seeded with stand-ins, the bridge, a containerd per node.

Start order is the dependency order (registry, images, bridge, nodes) and a failure at any step
tears down what already started, so ``--runtime containerd`` never leaves a half-started machine.
Stop runs the reverse order and goes on past errors, collecting them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import httpx

from kruise.sandbox.realnode import images, oci, prereqs
from kruise.sandbox.realnode.containerd import ContainerdNode
from kruise.sandbox.realnode.network import DEFAULT_POD_SUBNET, Bridge, PodNetwork, bridge_name_for
from kruise.sandbox.realnode.push import push_image
from kruise.sandbox.realnode.registry import BasicAuth, LocalRegistry

# The private registry's account: a fixed, documented one, so a Secret for it can be written in YAML.
PRIVATE_AUTH = BasicAuth("kruise", "sandbox-private")


async def seed_registry(
    registry: LocalRegistry, standins: Sequence[images.StandIn] = images.STANDINS
) -> dict[str, str]:
    """Push every stand-in under all its references; returns ``{reference: manifest digest}``."""
    pushed: dict[str, str] = {}
    async with registry.client() as client:
        for standin, image in images.build_all(standins):
            by_repository: dict[str, list[str]] = {}
            for ref in standin.parsed():
                by_repository.setdefault(ref.repository, []).append(ref.tag)
                pushed[str(ref)] = image.digest
            for repository, tags in by_repository.items():
                await push_image(client, repository, tags, image)
    return pushed


class RealNodes:
    """Everything real below the simulated kubelets of one sandbox, rooted at ``directory``."""

    def __init__(
        self,
        directory: Path,
        node_names: Sequence[str],
        *,
        pod_subnet: str = DEFAULT_POD_SUBNET,
        private_auth: BasicAuth = PRIVATE_AUTH,
    ) -> None:
        if not node_names:
            raise ValueError("node_names: a real-node sandbox needs at least one node")
        if len(set(node_names)) != len(node_names):
            raise ValueError(f"node_names: must be unique, got {list(node_names)}")
        self.directory = Path(directory).resolve()
        self.network = PodNetwork.create(pod_subnet, bridge_name_for(self.directory))
        if len(node_names) > self.network.max_nodes:
            raise ValueError(f"node_names: {self.network.subnet} has room for {self.network.max_nodes} nodes")
        self.registry = LocalRegistry(self.directory / "registry")
        self.private_registry = LocalRegistry(self.directory / "private-registry", auth=private_auth)
        self.bridge = Bridge(self.network)
        self.node_names = list(node_names)
        self.nodes: dict[str, ContainerdNode] = {}
        self.images: dict[str, str] = {}

    async def start(self) -> None:
        prereqs.check()
        try:
            await self.registry.start()
            self.images = await seed_registry(self.registry)
            await self.private_registry.start()
            self.images |= await seed_registry(self.private_registry, images.PRIVATE_STANDINS)
            await self.bridge.up()
            for index, name in enumerate(self.node_names):
                node = ContainerdNode(
                    name,
                    self.directory / "nodes" / name,
                    index=index,
                    network=self.network,
                    registry_url=self.registry.url,
                    private_registries={images.PRIVATE_REGISTRY: self.private_registry.url},
                )
                self.nodes[name] = node
                await node.start()
        except BaseException:
            await self.stop()
            raise

    async def push(self, image: oci.Image, reference: str) -> str:
        """Put ``image`` into the nodes' registry under ``reference`` (as a pod names it: ``kruise-py:0.1.0``
        is docker.io's ``library/kruise-py``), so every node pulls it as from the registry it names;
        returns the normalised reference."""
        ref = images.Reference.parse(reference)
        if ref.registry == images.PRIVATE_REGISTRY:
            raise ValueError(f"reference {reference!r}: {ref.registry} is the private registry's name")
        async with self.registry.client() as client:
            client.timeout = httpx.Timeout(120.0)  # a real image's layer, not a stand-in's few kB
            await push_image(client, ref.repository, [ref.tag], image)
        self.images[str(ref)] = image.digest
        return str(ref)

    async def stop(self) -> list[str]:
        """Tear everything down, going on past failures; returns what went wrong, for a person to read."""
        errors: list[str] = []
        for name, node in reversed(list(self.nodes.items())):
            try:
                errors += [f"{name}: {error}" for error in await node.stop()]
            except Exception as exc:
                errors.append(f"{name}: teardown: {exc}")
        steps = (
            ("bridge", self.bridge.down),
            ("registry", self.registry.stop),
            ("private registry", self.private_registry.stop),
        )
        for what, step in steps:
            try:
                await step()
            except Exception as exc:
                errors.append(f"{what}: teardown: {exc}")
        return errors
