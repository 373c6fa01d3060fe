"""The CRI configs a kubelet sends for a pod and its containers, built from the pod spec.

``sandbox_config`` is the PodSandboxConfig (metadata, hostname, log directory, the pod's labels
and annotations plus the kubelet's ``io.kubernetes.pod.*`` labels, the pod's network/PID/IPC
namespaces as a kubelet sets them). ``container_config`` is the ContainerConfig: command and args
with ``$(VAR)`` expanded, the env ``podenv`` resolves (downward API, ConfigMap/Secret refs,
``envFrom``), a bind mount per volumeMount of the directory ``podvolumes`` wrote for the volume,
the log path ``<container>/<attempt>.log``, the same namespaces and the labels a CRI client
(kruise-daemon) uses to find the pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from kruise.sandbox.cri import CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL
from kruise.sandbox.cri.schema import enum_value, messages
from kruise.sandbox.cri.wire import resources_message
from kruise.sandbox.simulator.cgroups import linux_resources
from kruise.sandbox.simulator.containerhash import hash_annotation
from kruise.sandbox.simulator.podenv import container_env, expand
from kruise.sandbox.simulator.podvolumes import MountFailed, VolumeContext, bind_listen_address, volume_dir

Obj = dict[str, Any]

# The pod spec's image exactly as written: ContainerStatus reports the image containerd resolved,
# the kubelet compares the spec with what it asked for.
REQUESTED_IMAGE_ANNOTATION = "io.kruise-py.sandbox/requested-image"
CONTAINER_ATTEMPT_ANNOTATION = "io.kubernetes.container.restartCount"


def log_directory(root: Path, pod: Obj) -> Path:
    """``/var/log/pods/<namespace>_<name>_<uid>`` of a real node, below the node's ``root``."""
    meta = pod["metadata"]
    return root / f"{meta['namespace']}_{meta['name']}_{meta['uid']}"


def pod_labels(pod: Obj) -> dict[str, str]:
    meta = pod["metadata"]
    return {
        **{str(k): str(v) for k, v in (meta.get("labels") or {}).items()},
        POD_NAME_LABEL: meta["name"],
        POD_NAMESPACE_LABEL: meta["namespace"],
        POD_UID_LABEL: meta["uid"],
    }


def sandbox_config(pod: Obj, log_dir: Path, attempt: int = 0) -> Message:
    meta = pod["metadata"]
    spec = pod.get("spec") or {}
    host_network = bool(spec.get("hostNetwork"))
    config = messages.PodSandboxConfig(
        metadata=messages.PodSandboxMetadata(
            name=meta["name"], uid=meta["uid"], namespace=meta["namespace"], attempt=attempt
        ),
        hostname="" if host_network else str(spec.get("hostname") or meta["name"])[:63],
        log_directory=str(log_dir),
        labels=pod_labels(pod),
        annotations={str(k): str(v) for k, v in (meta.get("annotations") or {}).items()},
    )
    config.linux.security_context.namespace_options.CopyFrom(namespace_options(spec))
    return config


def namespace_options(spec: Mapping[str, Any]) -> Message:
    """The namespaces a kubelet asks for, on the sandbox and on every container alike: containerd
    reads a container's own options, and a container sent none joins the pod's PID namespace (PID 1
    would be the pause process, as if ``shareProcessNamespace`` were set)."""
    mode = {name: enum_value("NamespaceMode", name) for name in ("POD", "CONTAINER", "NODE")}
    if spec.get("hostPID"):
        pid = mode["NODE"]
    elif spec.get("shareProcessNamespace"):
        pid = mode["POD"]
    else:
        pid = mode["CONTAINER"]
    return messages.NamespaceOption(
        network=mode["NODE"] if spec.get("hostNetwork") else mode["POD"],
        pid=pid,
        ipc=mode["NODE"] if spec.get("hostIPC") else mode["POD"],
    )


def run_as(pod: Obj, container: Mapping[str, Any]) -> dict[str, Message]:
    """``runAsUser``/``runAsGroup`` as the kubelet sends them: the container's securityContext wins
    over the pod's; unset leaves the image's user (its config's ``User``)."""
    pod_context = (pod.get("spec") or {}).get("securityContext") or {}
    own = container.get("securityContext") or {}
    chosen = {}
    for key, field_name in (("runAsUser", "run_as_user"), ("runAsGroup", "run_as_group")):
        value = own.get(key, pod_context.get(key))
        if value is not None:
            chosen[field_name] = messages.Int64Value(value=int(value))
    return chosen


def host_network_args(pod: Obj, parts: list[str], node_ip: str) -> list[str]:
    """Every node of the sandbox shares the machine's network namespace, so a hostNetwork pod's
    "all interfaces" listen address (``--addr=:10221``) is bound to its node's address instead: two
    nodes' kruise-daemon pods would otherwise take the same port of the one machine (the process
    containers of the fake runtime are mapped the same way)."""
    if not (pod.get("spec") or {}).get("hostNetwork"):
        return parts
    return [bind_listen_address(part, node_ip) for part in parts]


async def container_mounts(
    pod_dir: Path, node_root: Path, container: Mapping[str, Any], context: VolumeContext
) -> list[Message]:
    """A bind mount per volumeMount (``MountFailed`` when a volume cannot be written yet)."""
    volumes = {v["name"]: v for v in (context.pod.get("spec") or {}).get("volumes") or []}
    mounts = []
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name", ""))
        if volume is None:
            raise MountFailed(f'volumeMount "{mount.get("name")}": no volume of that name in the pod')
        source = await volume_dir(pod_dir, node_root, volume, context)
        if mount.get("subPath"):
            source = source / mount["subPath"]
            if not source.exists():
                source.mkdir(parents=True)
        mounts.append(
            messages.Mount(
                container_path=mount["mountPath"],
                host_path=str(source),
                readonly=bool(mount.get("readOnly")),
            )
        )
    return mounts


async def container_config(
    pod: Obj,
    container: Mapping[str, Any],
    attempt: int,
    *,
    context: VolumeContext,
    pod_dir: Path,
    node_root: Path,
    base_env: Mapping[str, str],
) -> Message:
    """The ContainerConfig (``ConfigMissing``/``MountFailed`` when env or volumes cannot be built)."""
    env = await container_env(
        pod, container, context.fetch, pod_ip=context.pod_ip, host_ip=context.host_ip, base=base_env
    )
    mounts = await container_mounts(pod_dir, node_root, container, context)
    name = container["name"]
    image = str(container.get("image", ""))
    return messages.ContainerConfig(
        metadata=messages.ContainerMetadata(name=name, attempt=attempt),
        image=messages.ImageSpec(image=image, user_specified_image=image),
        command=[expand(part, env) for part in container.get("command") or []],
        args=host_network_args(
            pod, [expand(part, env) for part in container.get("args") or []], context.host_ip
        ),
        working_dir=str(container.get("workingDir") or ""),
        envs=[messages.KeyValue(key=k, value=v.encode()) for k, v in env.items()],
        mounts=mounts,
        labels={
            **{k: v for k, v in pod_labels(pod).items() if k.startswith("io.kubernetes.")},
            CONTAINER_NAME_LABEL: name,
        },
        annotations={
            REQUESTED_IMAGE_ANNOTATION: image,
            CONTAINER_ATTEMPT_ANNOTATION: str(attempt),
            **hash_annotation(container),
        },
        log_path=f"{name}/{attempt}.log",
        stdin=bool(container.get("stdin")),
        stdin_once=bool(container.get("stdinOnce")),
        tty=bool(container.get("tty")),
        linux=messages.LinuxContainerConfig(
            resources=resources_message(linux_resources(container.get("resources"))),
            security_context=messages.LinuxContainerSecurityContext(
                namespace_options=namespace_options(pod.get("spec") or {}), **run_as(pod, container)
            ),
        ),
    )
