"""Pure container-level rules of the kubelet: pull policy, env config checks, status entries.

Kept apart from the kubelet loop so each rule is tested on plain dicts, and so the messages
(which users and Kruise's container-launch-priority barrier read) match the real kubelet's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from kruise.sandbox.cri import ContainerState
from kruise.sandbox.qos import compute_qos
from kruise.sandbox.simulator.containerhash import hash_annotation
from kruise.sandbox.simulator.noderuntime import ContainerStatus

Obj = dict[str, Any]
ConfigMapLookup = Callable[[str, str], Mapping[str, Any] | None]


def default_pull_policy(image: str) -> str:
    """Always for ``:latest`` or untagged images, IfNotPresent otherwise (apiserver defaulting)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or last.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def pull_policy(container: Mapping[str, Any]) -> str:
    return container.get("imagePullPolicy") or default_pull_policy(container.get("image", ""))


def config_error(namespace: str, container: Mapping[str, Any], lookup: ConfigMapLookup) -> str | None:
    """Why the container's environment cannot be built from ConfigMaps yet, as the kubelet says it.

    ``lookup(namespace, name)`` returns a ConfigMap dict or None. Optional references never block.
    """
    for source in container.get("envFrom") or []:
        ref = source.get("configMapRef")
        if ref and not ref.get("optional") and lookup(namespace, ref.get("name", "")) is None:
            return f'configmap "{ref.get("name", "")}" not found'
    for env in container.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("configMapKeyRef")
        if not ref or ref.get("optional"):
            continue
        name, key = ref.get("name", ""), ref.get("key", "")
        configmap = lookup(namespace, name)
        if configmap is None:
            return f'configmap "{name}" not found'
        if key not in (configmap.get("data") or {}) and key not in (configmap.get("binaryData") or {}):
            return f"couldn't find key {key} in ConfigMap {namespace}/{name}"
    return None


def kubelet_annotations(
    pod: Mapping[str, Any], container: Mapping[str, Any], restart_count: int
) -> dict[str, str]:
    """The annotations the kubelet puts on a runtime container that a node agent reads back without the
    pod (kruise-daemon's containermeta report and its kills): the container hash, the restart count and
    the pod's grace period. The kubelet's preStop handler is not written here."""
    spec = pod.get("spec") or {}
    annotations = {**hash_annotation(container), "io.kubernetes.container.restartCount": str(restart_count)}
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None:
        annotations["io.kubernetes.pod.terminationGracePeriod"] = str(grace)
    return annotations


def rfc3339_ns(nanos: int) -> str:
    return datetime.fromtimestamp(nanos / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def container_id_uri(container: ContainerStatus) -> str:
    return f"containerd://{container.id}"


def terminated_state(container: ContainerStatus) -> Obj:
    state: Obj = {
        "exitCode": container.exit_code,
        "reason": container.reason or ("Completed" if container.exit_code == 0 else "Error"),
        "startedAt": rfc3339_ns(container.started_at) if container.started_at else None,
        "finishedAt": rfc3339_ns(container.finished_at) if container.finished_at else None,
        "containerID": container_id_uri(container),
    }
    if container.message:
        state["message"] = container.message
    return state


def container_status(
    spec: Mapping[str, Any],
    record: ContainerStatus | None,
    *,
    restart_count: int,
    ready: bool,
    waiting: tuple[str, str] | None,
    last_terminated: Obj | None,
    started: bool = True,
    allocated: Obj | None = None,
    actuated: Obj | None = None,
) -> Obj:
    """One ``containerStatuses[]`` entry from the runtime record (None: not created yet).

    A running container reports ``resources`` (the requests and limits applied to it, ``actuated``)
    and ``allocatedResources`` (the ``allocated`` requests) as kubelet 1.33+ does; ``resources`` is
    there even when empty, which is how the apiserver knows the node supports in-place resize.
    """
    status: Obj = {
        "name": spec["name"],
        "image": spec.get("image", ""),
        "imageID": "",
        "ready": False,
        "restartCount": restart_count,
        "started": False,
        "lastState": {"terminated": last_terminated} if last_terminated else {},
    }
    if record is not None:
        status["image"] = record.image
        status["imageID"] = record.image_ref
        status["containerID"] = container_id_uri(record)
    if waiting is not None or record is None or record.state == ContainerState.CREATED:
        reason, message = waiting or ("ContainerCreating", "")
        state: Obj = {"reason": reason}
        if message:
            state["message"] = message
        status["state"] = {"waiting": state}
    elif record.state == ContainerState.RUNNING:
        status["state"] = {"running": {"startedAt": rfc3339_ns(record.started_at)}}
        status["started"] = started  # false until the startup probe succeeded
        status["ready"] = ready
        status["resources"] = copy.deepcopy(actuated or {})
        if (allocated or {}).get("requests"):
            status["allocatedResources"] = copy.deepcopy(allocated["requests"])  # type: ignore[index]
    else:
        status["state"] = {"terminated": terminated_state(record)}
    return status


def qos_class(pod: Obj) -> str:
    """The pod's QoS class; a limit without a request counts as that request, as the apiserver's
    defaulting makes it before ComputePodQOS sees the pod."""
    spec = dict(pod.get("spec") or {})
    for group in ("initContainers", "containers"):
        defaulted = []
        for container in spec.get(group) or []:
            resources = dict(container.get("resources") or {})
            limits = resources.get("limits") or {}
            if limits:
                resources["requests"] = {**limits, **(resources.get("requests") or {})}
            defaulted.append({**container, "resources": resources})
        spec[group] = defaulted
    return compute_qos(spec)
