"""What the kubelet needs to run a container as a local process: its argv, env and directory.

``ProcessRunner`` holds the configured process images and the kubelet's state directory
(``pods/<uid>/...`` as in ``podvolumes``, ``nodes/<node>/`` as each node's host file system).
``prepare`` turns a pod's container into a ``Launch``:

- argv: ``command``/``args`` with ``$(VAR)`` expanded, the entry point mapped by the image's
  ``ProcessImage``, each argument that names a path under a volumeMount rewritten to the local
  path, and an "any interface" listen address (``:8080``, ``--addr=:8080``) bound to the pod IP;
- env: the host's ``PATH``/``LANG`` only (a container does not inherit the node's
  environment), ``HOSTNAME``, ``KUBERNETES_SERVICE_HOST``/``_PORT`` pointing at the apiserver
  the simulator uses (as the kubelet sets them for the ``kubernetes`` Service), the container's
  own variables (see ``podenv``; values naming a mounted path rewritten too),
  ``SANDBOX_CONTAINER_ROOT`` and, when the service account volume is mounted,
  ``KUBERNETES_SERVICE_ACCOUNT_DIR`` = its local directory - so an in-cluster client (client-go's
  rules: the service variables plus ``token``/``ca.crt`` in that directory) connects as it
  would in a pod without knowing about the sandbox;
- cwd: the container's ``workingDir`` under a mount, else its root.

Service account tokens come from the TokenRequest API; an apiserver without it (the sandbox
emulator today) gets the simulator's own bearer token, so a process can still authenticate.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kruise.sandbox.simulator.client import ApiError, Client, Obj, resource_path
from kruise.sandbox.simulator.podenv import container_env, expand
from kruise.sandbox.simulator.podvolumes import (
    ROOT_ENV,
    TMP,
    PathMap,
    VolumeContext,
    bind_listen_address,
    materialize,
)
from kruise.sandbox.simulator.processes import ProcessImage, match_image

# Where a pod's service account files are mounted, and the variable that tells an in-cluster
# client where they really are when the runtime cannot put them there (see prepare()).
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
SERVICE_ACCOUNT_DIR_ENV = "KUBERNETES_SERVICE_ACCOUNT_DIR"
CRI_SOCKET = "run/containerd/containerd.sock"  # under a node's host file system


def link_cri_socket(host_root: Path, socket: Path, *, hard: bool = False) -> None:
    """Put a node's CRI socket where containerd keeps it on a host (``/run/containerd/
    containerd.sock``, with ``/var/run`` a link to ``/run``) in that node's host file system, so
    a hostPath mount of ``/var/run`` or ``/run`` (kruise-daemon's chart) finds the runtime as on a
    real node. Idempotent.

    ``hard`` links the socket's inode itself (a unix socket is reached through any of its names):
    a real container sees the hostPath through a bind mount, where a symbolic link to a path of the
    machine points nowhere. A process container (the fake runtime) follows a symbolic link fine."""
    target = host_root / CRI_SOCKET
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    if hard:
        os.link(socket.resolve(), target)
    else:
        target.symlink_to(socket)
    var_run = host_root / "var" / "run"
    if not var_run.is_symlink() and not var_run.exists():
        var_run.parent.mkdir(parents=True, exist_ok=True)
        var_run.symlink_to(Path("..") / "run")


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    paths: PathMap


class ProcessRunner:
    """Prepares process containers for one simulator (shared by its kubelets)."""

    def __init__(self, client: Client, images: Sequence[ProcessImage], state_dir: Path) -> None:
        self.client = client
        self.images = list(images)
        self.state_dir = Path(state_dir)
        server = urlsplit(client.config.server)
        self.api_host = server.hostname or "127.0.0.1"
        self.api_port = str(server.port or (443 if server.scheme == "https" else 80))

    def match(self, image: str) -> ProcessImage | None:
        return match_image(self.images, image)

    def pod_dir(self, uid: str) -> Path:
        return self.state_dir / "pods" / uid

    def node_root(self, node: str) -> Path:
        return self.state_dir / "nodes" / node

    def link_cri_socket(self, node: str, socket: Path, *, hard: bool = False) -> None:
        link_cri_socket(self.node_root(node), socket, hard=hard)

    def forget(self, uid: str) -> None:
        shutil.rmtree(self.pod_dir(uid), ignore_errors=True)

    async def fetch(self, plural: str, namespace: str, name: str) -> Obj | None:
        try:
            return await self.client.get(resource_path("v1", plural, namespace, name))
        except ApiError as error:
            if error.not_found:
                return None
            raise

    async def token(self, namespace: str, account: str, audience: str, expiration: int) -> str:
        """A bound token from TokenRequest, else (no such API) the simulator's own credential."""
        request: Obj = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": expiration, "audiences": [audience] if audience else []},
        }
        try:
            answer = await self.client.create(
                resource_path("v1", "serviceaccounts", namespace, account, sub="token"), request
            )
            return str(answer["status"]["token"])
        except ApiError as error:
            if error.status not in (404, 405):
                raise
        header = self.client.config.headers.get("Authorization", "")
        return header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""

    async def prepare(
        self,
        pod: Obj,
        container: Mapping[str, Any],
        rule: ProcessImage,
        *,
        pod_ip: str,
        host_ip: str,
        node: str,
    ) -> Launch:
        """Write the container's volumes and compute its launch (``ConfigMissing``/``MountFailed``/
        ``StartError`` say why it cannot start yet)."""
        meta = pod["metadata"]
        host_network = bool((pod.get("spec") or {}).get("hostNetwork"))
        base = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOSTNAME": node if host_network else meta["name"],
            "KUBERNETES_SERVICE_HOST": self.api_host,
            "KUBERNETES_SERVICE_PORT": self.api_port,
            "KUBERNETES_SERVICE_PORT_HTTPS": self.api_port,
        }
        if "LANG" in os.environ:
            base["LANG"] = os.environ["LANG"]
        env = await container_env(pod, container, self.fetch, pod_ip=pod_ip, host_ip=host_ip, base=base)
        context = VolumeContext(pod, self.fetch, self.token, pod_ip, host_ip)
        paths = await materialize(self.pod_dir(meta["uid"]), self.node_root(node), container, context)
        for name, value in list(env.items()):
            env[name] = paths.rewrite(value)
        env[ROOT_ENV] = str(paths.root)
        env.setdefault("TMPDIR", paths.local(TMP))  # tempfile.gettempdir() -> the container's own /tmp
        account_dir = paths.local(SERVICE_ACCOUNT_DIR)
        if account_dir != SERVICE_ACCOUNT_DIR:
            env.setdefault(SERVICE_ACCOUNT_DIR_ENV, account_dir)
        command = [expand(part, env) for part in container.get("command") or []]
        args = [expand(part, env) for part in container.get("args") or []]
        argv = rule.argv(command, args)
        argv = [argv[0], *(bind_listen_address(paths.rewrite(a), pod_ip) for a in argv[1:])]
        working = container.get("workingDir") or ""
        cwd = Path(paths.local(working)) if working and paths.local(working) != working else paths.root
        return Launch(argv, env, cwd, paths)
