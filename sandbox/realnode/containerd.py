"""One node's containerd: its own root, state, sockets, runc root, CNI and registry configuration.

Several containerd instances share the machine (one per simulated node, plus whatever else runs),
so everything an instance writes lives below ``<sandbox dir>/nodes/<node>``: metadata and
snapshots (root), shim and CRI state (state), runc's state (the runc ``Root`` option), network
namespaces (``netns_mounts_under_state_dir``) and host-local IPAM state. That makes teardown
exact: whatever is left below the node's directory, or runs with the node's socket in its argv,
belongs to this node and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import grpc

from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.realnode.images import PAUSE_IMAGE
from kruise.sandbox.realnode.mounts import unmount_below
from kruise.sandbox.realnode.network import PodNetwork
from kruise.sandbox.realnode.prereqs import CNI_BIN_DIR, binary
from kruise.sandbox.realnode.process import Daemon, children_of, find_processes, kill

CRI_PLUGIN = 'plugins."io.containerd.grpc.v1.cri"'
CRI_NAMESPACE = "k8s.io"

# Registries whose names tutorials and tests use; containerd resolves them all at the local registry.
MIRRORED_REGISTRIES = (
    "docker.io",
    "registry.k8s.io",
    "k8s.gcr.io",
    "gcr.io",
    "ghcr.io",
    "quay.io",
    "openkruise-registry.cn-shanghai.cr.aliyuncs.com",
    "openkruise-registry.cn-hangzhou.cr.aliyuncs.com",
    "registry.cn-hangzhou.aliyuncs.com",
)


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON's escaping is a subset TOML accepts)."""
    return json.dumps(value)


def hosts_toml(registry_url: str) -> str:
    """certs.d/<host>/hosts.toml sending pulls for that host to the local registry only."""
    url = _toml_string(registry_url)
    return f'server = {url}\n\n[host.{url}]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n'


class NodePaths:
    """Where one node's containerd keeps everything (all below ``directory``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory).resolve()
        self.root = self.directory / "root"
        self.state = self.directory / "state"
        self.socket = self.directory / "containerd.sock"
        self.ttrpc_socket = self.directory / "containerd.sock.ttrpc"
        self.config = self.directory / "config.toml"
        self.cni_conf_dir = self.directory / "cni"
        self.certs_dir = self.directory / "certs.d"
        self.runc_root = self.directory / "runc"
        self.ipam_dir = self.directory / "ipam"
        # where netns_mounts_under_state_dir puts the pods' network namespaces
        self.netns_dir = self.state / "io.containerd.grpc.v1.cri" / "netns"
        self.opt_dir = self.directory / "opt"
        self.log_file = self.directory / "containerd.log"
        self.pod_logs = self.directory / "pods"


def containerd_config(paths: NodePaths, *, sandbox_image: str = PAUSE_IMAGE) -> str:
    """containerd config (version 2) of one node; see the module docstring for why each path."""
    s = _toml_string
    return f"""version = 2
root = {s(str(paths.root))}
state = {s(str(paths.state))}
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", \
"io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = {s(str(paths.socket))}

[ttrpc]
  address = {s(str(paths.ttrpc_socket))}

[plugins."io.containerd.internal.v1.opt"]
  path = {s(str(paths.opt_dir))}

[{CRI_PLUGIN}]
  sandbox_image = {s(sandbox_image)}
  # runc here cannot lower oom_score_adj (sandboxes ask for -998): without this every pod fails with
  # "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false

  [{CRI_PLUGIN}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [{CRI_PLUGIN}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [{CRI_PLUGIN}.containerd.runtimes.runc.options]
        Root = {s(str(paths.runc_root))}
        SystemdCgroup = false

  [{CRI_PLUGIN}.cni]
    bin_dir = {s(str(CNI_BIN_DIR))}
    conf_dir = {s(str(paths.cni_conf_dir))}
    max_conf_num = 1

  [{CRI_PLUGIN}.registry]
    config_path = {s(str(paths.certs_dir))}
"""


class ContainerdNode:
    """The containerd of node ``name`` (index ``index`` in the pod network), pulling from ``registry_url``."""

    def __init__(
        self,
        name: str,
        directory: Path,
        *,
        index: int,
        network: PodNetwork,
        registry_url: str,
        registries: Iterable[str] = MIRRORED_REGISTRIES,
        private_registries: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.index = index
        self.network = network
        self.registry_url = registry_url
        self.registries = tuple(registries)
        # host name -> URL of a registry that wants credentials (the private stand-in registry)
        self.private_registries = dict(private_registries or {})
        self.paths = NodePaths(directory)
        self.pod_cidr = network.node_block(index)
        self._daemon: Daemon | None = None

    @property
    def pid(self) -> int | None:
        """containerd's process id while it runs."""
        return self._daemon.pid if self._daemon is not None and self._daemon.running else None

    def write_config(self) -> None:
        p = self.paths
        for folder in (p.root, p.state, p.cni_conf_dir, p.certs_dir, p.runc_root, p.ipam_dir, p.pod_logs):
            folder.mkdir(parents=True, exist_ok=True)
        p.config.write_text(containerd_config(p))
        conflist = self.network.cni_conflist(self.index, p.ipam_dir)
        (p.cni_conf_dir / "10-kruise-sandbox.conflist").write_text(json.dumps(conflist, indent=2) + "\n")
        hosts = {host: self.registry_url for host in (*self.registries, "_default")}
        hosts.update(self.private_registries)
        for host, url in hosts.items():
            (p.certs_dir / host).mkdir(exist_ok=True)
            (p.certs_dir / host / "hosts.toml").write_text(hosts_toml(url))

    def client(self, timeout: float | None = 30.0) -> CriClient:
        return CriClient(self.paths.socket, timeout=timeout)

    async def _answers(self) -> bool:
        if not self.paths.socket.exists():
            return False
        async with self.client(timeout=2.0) as cri:
            await cri.Version(messages.VersionRequest(version="v1"))
            return True

    async def start(self, timeout: float = 60.0) -> None:
        self.write_config()
        self._daemon = Daemon(
            f"containerd ({self.name})",
            [binary("containerd"), "--config", str(self.paths.config)],
            self.paths.log_file,
        )
        await self._daemon.start()
        try:
            await self._daemon.wait_ready(self._answers, timeout)
        except BaseException:
            await self.stop()
            raise

    async def remove_all_pods(self) -> list[str]:
        """Stop and remove every pod sandbox through CRI (containers, network, netns go with them)."""
        errors: list[str] = []
        async with self.client(timeout=60.0) as cri:
            listed = await cri.ListPodSandbox(messages.ListPodSandboxRequest())
            for sandbox in listed.items:
                for step, request in (
                    ("StopPodSandbox", messages.StopPodSandboxRequest(pod_sandbox_id=sandbox.id)),
                    ("RemovePodSandbox", messages.RemovePodSandboxRequest(pod_sandbox_id=sandbox.id)),
                ):
                    try:
                        await cri.call(step, request)
                    except grpc.aio.AioRpcError as exc:
                        errors.append(f"{step} {sandbox.id[:12]}: {exc.code().name}: {exc.details()}")
        return errors

    def shims(self) -> list[int]:
        """containerd-shim processes serving this node (their argv names this node's socket)."""
        socket = str(self.paths.socket)
        return find_processes(
            lambda argv: Path(argv[0]).name.startswith("containerd-shim") and socket in argv
        )

    async def _runc(self, *args: str) -> str:
        process = await asyncio.create_subprocess_exec(
            binary("runc"),
            "--root",
            str(self.paths.runc_root / CRI_NAMESPACE),
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            stdin=asyncio.subprocess.DEVNULL,
        )
        out, _ = await process.communicate()
        return out.decode()

    async def kill_leftovers(self) -> None:
        """After containerd is gone: kill containers runc still knows, then the shims, then unmount."""
        if (self.paths.runc_root / CRI_NAMESPACE).exists():
            listed = json.loads(await self._runc("list", "--format", "json") or "null") or []
            for container in listed:
                await self._runc("kill", container["id"], "KILL")
                await self._runc("delete", "--force", container["id"])
        shims = self.shims()
        for shim in shims:
            kill(children_of(shim))
        kill(shims)

    async def stop(self, timeout: float = 10.0) -> list[str]:
        """Tear the node down completely; returns CRI errors met on the way (teardown goes on regardless)."""
        errors: list[str] = []
        if self._daemon is not None and self._daemon.running:
            try:
                errors += await self.remove_all_pods()
            except grpc.aio.AioRpcError as exc:
                errors.append(f"ListPodSandbox: {exc.code().name}: {exc.details()}")
            await self._daemon.stop(timeout)
        await self.kill_leftovers()
        unmount_below(self.paths.directory)
        for folder in (self.paths.ipam_dir, self.paths.netns_dir):
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(folder)
        return errors
