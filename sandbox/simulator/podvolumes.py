"""Volumes of a pod whose containers run as real processes, laid out on the local disk.

Layout (under the kubelet's state directory, like ``/var/lib/kubelet/pods/<uid>``)::

    pods/<uid>/volumes/<volume>/...             the volume's files
    pods/<uid>/containers/<container>/root/     the container's file system root: every
        <mountPath> -> ../volumes/<volume>[/<subPath>]   volumeMount is a symlink there
    claims/<volumeName>/...                     a bound PersistentVolumeClaim's files

A process cannot see ``/var/run/secrets/...`` at its real place, so paths are mapped two ways
(see ``PathMap``): the process gets ``SANDBOX_CONTAINER_ROOT=<root>`` (a file the container
would read at ``/p`` is at ``$SANDBOX_CONTAINER_ROOT/p``), and args and env values that name a
path under a mountPath (``/etc/x``, ``--flag=/etc/x``) are rewritten to the local path.

Secret, ConfigMap, downwardAPI and projected volumes (secret, configMap, downwardAPI,
serviceAccountToken sources) are written when a container starts; emptyDir volumes are
directories that live as long as the pod; hostPath volumes are directories of the node's
fake host file system ``nodes/<node>/<path>`` (the simulator may link files into it, e.g.
the node's CRI socket). A persistentVolumeClaim volume is the directory of the volume its claim is
bound to, beside ``pods/``: it outlives the pod and follows the claim to any node (as network
storage would), so a stateful pod recreated elsewhere finds what its predecessor wrote; until the
claim is Bound the mount fails and the kubelet retries, as a real one waits for the attach.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kruise.sandbox.simulator.podenv import ConfigMissing, Fetch, field_value

Obj = dict[str, Any]
# (namespace, serviceAccountName, audience, expirationSeconds) -> a bearer token
TokenSource = Callable[[str, str, str, int], Awaitable[str]]

ROOT_ENV = "SANDBOX_CONTAINER_ROOT"
TMP = "/tmp"  # the container path; mapped into the container's own root
DEFAULT_MODE = 0o644
# ":8080", "0.0.0.0:8080", "[::]:8080", "0.0.0.0", "::" - alone or as "--flag=<that>"
_LISTEN_ANY = re.compile(r"^(--?[A-Za-z0-9-]+=)?(?:(?:0\.0\.0\.0|\[::\])?:(\d+)|0\.0\.0\.0|::)$")


class MountFailed(Exception):
    """A volume cannot be set up yet (the container stays ContainerCreating, event FailedMount)."""


@dataclass
class PathMap:
    """How the container's paths map to local ones: mountPath -> local directory or file."""

    root: Path
    mounts: list[tuple[str, Path]] = field(default_factory=list)

    def local(self, path: str) -> str:
        """The local path of a container path under a mount (others are returned unchanged)."""
        for mount, target in sorted(self.mounts, key=lambda m: -len(m[0])):
            if path == mount or path.startswith(mount.rstrip("/") + "/"):
                return str(target) + path[len(mount.rstrip("/")) :]
        return path

    def rewrite(self, value: str) -> str:
        """``/mount/x`` and ``--flag=/mount/x`` point at the local file; others stay."""
        flag, eq, rest = value.partition("=")
        if eq and flag.startswith("-") and rest.startswith("/"):
            return f"{flag}={self.local(rest)}"
        return self.local(value) if value.startswith("/") else value


def bind_listen_address(arg: str, ip: str) -> str:
    """``:8080``, ``--addr=0.0.0.0:8080`` or ``--bind-address=0.0.0.0`` (all interfaces of the pod's
    network namespace) becomes the pod IP: pods share the machine's network, so the pod IP stands
    in for "any" - two replicas on one machine must not both take every interface's port."""
    match = _LISTEN_ANY.match(arg)
    if not match:
        return arg
    port = f":{match.group(2)}" if match.group(2) else ""
    return f"{match.group(1) or ''}{ip}{port}"


def _write(directory: Path, files: Mapping[str, bytes], mode: int) -> None:
    """Replace the volume's files with ``files`` (relative path -> content), each atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for relative, content in files.items():
        target = directory / relative
        if ".." in Path(relative).parts or Path(relative).is_absolute():
            raise MountFailed(f"volume path {relative!r}: must be relative and not contain '..'")
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_bytes(content)
        temporary.chmod(mode)
        temporary.replace(target)
        wanted.add(target)
    for existing in directory.rglob("*"):
        if existing.is_file() and existing not in wanted:
            existing.unlink()


def _object_files(obj: Obj, secret: bool) -> dict[str, bytes]:
    if secret:
        return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    files = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    files.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return files


def _select(
    files: dict[str, bytes], items: Iterable[Mapping[str, Any]] | None, what: str
) -> dict[str, bytes]:
    if not items:
        return files
    selected = {}
    for item in items:
        if item.get("key") not in files:
            raise MountFailed(f'{what}: key "{item.get("key")}" not found')
        selected[item.get("path") or item["key"]] = files[item["key"]]
    return selected


@dataclass
class VolumeContext:
    pod: Obj
    fetch: Fetch
    token: TokenSource
    pod_ip: str
    host_ip: str

    @property
    def namespace(self) -> str:
        return self.pod["metadata"].get("namespace", "default")

    async def source(self, secret: bool, name: str, optional: bool, items: Any) -> dict[str, bytes]:
        kind = "secret" if secret else "configmap"
        obj = await self.fetch("secrets" if secret else "configmaps", self.namespace, name)
        if obj is None:
            if optional:
                return {}
            raise MountFailed(f'{kind} "{name}" not found')
        return _select(_object_files(obj, secret), items, f'{kind} "{name}"')

    def downward(self, items: Iterable[Mapping[str, Any]]) -> dict[str, bytes]:
        files = {}
        for item in items:
            ref = item.get("fieldRef")
            if not ref:
                raise MountFailed(f"downwardAPI item {item.get('path')!r}: only fieldRef is supported")
            try:
                value = field_value(self.pod, ref.get("fieldPath", ""), self.pod_ip, self.host_ip)
            except ConfigMissing as error:
                raise MountFailed(str(error)) from None
            files[item["path"]] = value.encode()
        return files

    async def projected(self, sources: Iterable[Mapping[str, Any]]) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        for source in sources:
            if "secret" in source:
                ref = source["secret"]
                files |= await self.source(
                    True, ref.get("name", ""), bool(ref.get("optional")), ref.get("items")
                )
            elif "configMap" in source:
                ref = source["configMap"]
                files |= await self.source(
                    False, ref.get("name", ""), bool(ref.get("optional")), ref.get("items")
                )
            elif "downwardAPI" in source:
                files |= self.downward(source["downwardAPI"].get("items") or [])
            elif "serviceAccountToken" in source:
                ref = source["serviceAccountToken"]
                account = (self.pod.get("spec") or {}).get("serviceAccountName") or "default"
                expiration = int(ref.get("expirationSeconds") or 3600)
                token = await self.token(self.namespace, account, ref.get("audience") or "", expiration)
                files[ref.get("path") or "token"] = token.encode()
        return files


async def materialize(
    pod_dir: Path,
    node_root: Path,
    container: Mapping[str, Any],
    context: VolumeContext,
) -> PathMap:
    """Write the volumes the container mounts and link them into its root; returns its path map."""
    volumes = {v["name"]: v for v in (context.pod.get("spec") or {}).get("volumes") or []}
    root = pod_dir / "containers" / container["name"] / "root"
    root.mkdir(parents=True, exist_ok=True)
    paths = PathMap(root)
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name", ""))
        if volume is None:
            raise MountFailed(f'volumeMount "{mount.get("name")}": no volume of that name in the pod')
        directory = await volume_dir(pod_dir, node_root, volume, context)
        source = directory / mount["subPath"] if mount.get("subPath") else directory
        if mount.get("subPath"):
            source.parent.mkdir(parents=True, exist_ok=True)
            if not source.exists():
                source.mkdir()
        link = root / mount["mountPath"].lstrip("/")
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.is_file():
            link.unlink()
        elif link.is_dir():
            os.rmdir(link)
        link.symlink_to(source)
        # Rewritten paths name the volume itself, not the link: shorter, which matters for unix
        # sockets (108 bytes at most), e.g. the node's CRI socket under a hostPath mount.
        paths.mounts.append((mount["mountPath"], source))
    if not any(mount.rstrip("/") == TMP for mount, _ in paths.mounts):
        # A container's /tmp is its own, never the host's: two kruise-webhook pods (of this sandbox or
        # another on the machine) writing serving certificates to the host /tmp would serve each
        # other's, signed by a CA their configurations do not carry.
        own = root / TMP.lstrip("/")
        own.mkdir(exist_ok=True)
        paths.mounts.append((TMP, own))
    return paths


async def volume_dir(pod_dir: Path, node_root: Path, volume: Obj, context: VolumeContext) -> Path:
    """The host directory holding ``volume``'s files, written now (a process container links it into
    its root; a real runtime bind-mounts it)."""
    name = volume["name"]
    directory = pod_dir / "volumes" / name
    if "hostPath" in volume:
        path = node_root / str(volume["hostPath"].get("path", "")).lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        return path
    if "emptyDir" in volume:
        directory.mkdir(parents=True, exist_ok=True)
        return directory
    if "persistentVolumeClaim" in volume:
        return await claim_dir(pod_dir, volume["persistentVolumeClaim"], context)
    mode = DEFAULT_MODE
    if "secret" in volume:
        ref = volume["secret"]
        mode = int(ref.get("defaultMode") or DEFAULT_MODE)
        files = await context.source(
            True, ref.get("secretName", ""), bool(ref.get("optional")), ref.get("items")
        )
    elif "configMap" in volume:
        ref = volume["configMap"]
        mode = int(ref.get("defaultMode") or DEFAULT_MODE)
        files = await context.source(False, ref.get("name", ""), bool(ref.get("optional")), ref.get("items"))
    elif "downwardAPI" in volume:
        files = context.downward(volume["downwardAPI"].get("items") or [])
    elif "projected" in volume:
        mode = int(volume["projected"].get("defaultMode") or DEFAULT_MODE)
        files = await context.projected(volume["projected"].get("sources") or [])
    else:
        kinds = sorted(k for k in volume if k != "name")
        raise MountFailed(f'volume "{name}": type {kinds} is not supported for process containers')
    _write(directory, files, mode)
    return directory


async def claim_dir(pod_dir: Path, source: Mapping[str, Any], context: VolumeContext) -> Path:
    """The directory of the volume the claim is bound to (``claims/<volumeName>`` of the state dir,
    which holds ``pods/``); ``MountFailed`` while the claim is missing or not yet Bound."""
    name = str(source.get("claimName") or "")
    claim = await context.fetch("persistentvolumeclaims", context.namespace, name)
    if claim is None:
        raise MountFailed(f'persistentvolumeclaim "{name}" not found')
    volume_name = (claim.get("spec") or {}).get("volumeName")
    if not volume_name or (claim.get("status") or {}).get("phase") != "Bound":
        raise MountFailed(f'persistentvolumeclaim "{name}" is not bound')
    path = pod_dir.parent.parent / "claims" / str(volume_name)
    path.mkdir(parents=True, exist_ok=True)
    return path
