"""ContainerRecreateRequest (apps.kruise.io/v1alpha1): ask kruise-daemon to recreate containers of a pod.

Upstream has no validating webhook for this kind: its *mutating* webhook both checks and fills the
object (labels, strategy defaults, per-container preStop/ports/statusContext copied from the pod),
and answers with plain messages and HTTP 400/403 rather than field errors. The pure parts live here
as `admit_create` / `admit_update`, returning a Rejection with upstream's code and text; the webhook
layer only has to fetch the pod and node.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from kruise.api import keys
from kruise.api.common import Int32, Int64, KruiseModel, KruiseObject, Schemaless, Time
from kruise.api.conditions import condition_of
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.objects import container_statuses_of, meta_of, section, status_of

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "ContainerRecreateRequest"

FAILURE_POLICY_FAIL = "Fail"
FAILURE_POLICY_IGNORE = "Ignore"

PHASE_PENDING = "Pending"
PHASE_RECREATING = "Recreating"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"
PHASE_COMPLETED = "Completed"

MIN_ACTIVE_DEADLINE_SECONDS = 3
VIRTUAL_KUBELET_LABEL_KEY = "type"
VIRTUAL_KUBELET_LABEL_VALUE = "virtual-kubelet"
CONDITION_SIDECAR_TERMINATED = "SidecarTerminated"


class ProbeHandler(KruiseModel):
    exec: Schemaless | None = None
    """A command run inside the container (a core ExecAction)."""
    http_get: Schemaless | None = Field(default=None, alias="httpGet")
    """An HTTP GET request sent to the container (a core HTTPGetAction)."""
    tcp_socket: Schemaless | None = None
    """A TCP port opened on the container (a core TCPSocketAction); not run as a hook."""


class ContainerContext(KruiseModel):
    container_id: str = Field(alias="containerID")
    """ID of the container to recreate, as <runtime>://<id>; a container with another ID has already been
    recreated."""
    restart_count: Int32 = 0
    """The container's restart count when the request was made."""


class RecreateContainer(KruiseModel):
    name: str
    """Name of a container of the pod's spec.containers to recreate."""
    pre_stop: ProbeHandler | None = None
    """The container's preStop hook, copied from the pod by the webhook when the request is created;
    read-only."""
    ports: list[Schemaless] | None = None
    """The container's ports, copied from the pod by the webhook so the preStop hook can resolve named
    ports; read-only."""
    status_context: ContainerContext | None = None
    """The container's status when the request was created, copied by the webhook; read-only."""


class RecreateStrategy(KruiseModel):
    failure_policy: str | None = None
    """What a failed container does to the request: Fail (the default) stops it and marks it failed,
    Ignore goes on with the other containers."""
    ordered_recreate: bool | None = None
    """Recreate the containers one by one, in the listed order, each only after the previous one is done.
    Default false (all at once)."""
    force_recreate: bool | None = None
    """Kill the container even if it is still starting (its postStart hook running, say). Default false."""
    termination_grace_period_seconds: Int64 | None = None
    """Seconds the container gets to stop gracefully after its preStop hook; 0 kills it at once. Default:
    the pod's terminationGracePeriodSeconds."""
    unready_grace_period_seconds: Int64 | None = None
    """Seconds the pod is held not-ready (through Kruise's readiness gate) before the containers are
    stopped, so traffic drains first. Unset means no wait."""
    min_started_seconds: Int32 | None = None
    """Seconds a recreated container must have been started (and ready, if it has a readiness probe)
    before it counts as succeeded. Default 0."""


class ContainerRecreateRequestSpec(KruiseModel):
    pod_name: str
    """Name of the pod, in this namespace, whose containers are recreated; cannot be changed."""
    containers: list[RecreateContainer]
    """The containers to recreate; names must be unique."""
    strategy: RecreateStrategy | None = None
    """How the containers are recreated."""
    active_deadline_seconds: Int64 | None = None
    """Seconds from the request's creation after which it stops and is marked failed if not yet done.
    Unset means no deadline."""
    ttl_seconds_after_finished: Int32 | None = Field(default=None, alias="ttlSecondsAfterFinished")
    """Seconds after the request completes before it is deleted. Unset keeps it."""


class ContainerRecreateState(KruiseModel):
    name: str
    """Name of the container."""
    phase: str
    """Where the container's recreation is: Pending, Recreating, Succeeded or Failed."""
    message: str | None = None
    """Details of that phase, for humans."""
    is_killed: bool | None = None
    """Whether kruise-daemon has already stopped the old container."""


class ContainerRecreateRequestStatus(KruiseModel):
    phase: str = ""
    """Where the request is: Pending, Recreating or Completed."""
    completion_time: Time | None = None
    """When the request completed."""
    message: str | None = None
    """Details of the request's state, for humans (e.g. why it failed)."""
    container_recreate_states: list[ContainerRecreateState] | None = None
    """Recreation state of each container."""


class SyncContainerStatus(KruiseModel):
    """One entry of the `crr.apps.kruise.io/sync-container-statuses` annotation (JSON list)."""

    name: str
    """Name of the container."""
    ready: bool = False
    """Whether the container passes its readiness probe."""
    restart_count: Int32 = 0
    """The container's restart count in the pod's status."""
    container_id: str | None = Field(default=None, alias="containerID")
    """ID of the container now running, as <runtime>://<id>."""


class ContainerRecreateRequest(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["ContainerRecreateRequest"] | None = None
    spec: ContainerRecreateRequestSpec
    """Desired state of the ContainerRecreateRequest."""
    status: ContainerRecreateRequestStatus | None = None
    """Observed state of the ContainerRecreateRequest, written by kruise-daemon and kruise-manager."""


class MetaCondition(KruiseModel):
    """metav1.Condition, as v1beta1 status.conditions holds it (e.g. PreRecreateGrace)."""

    type: str
    """The kind of condition, in CamelCase."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    observed_generation: Int64 | None = None
    """The metadata.generation the condition was set for."""
    last_transition_time: Time
    """When the status last changed from one value to another."""
    reason: str
    """A short CamelCase word saying why the condition last changed."""
    message: str
    """Details of the last change, for humans."""


class ContainerRecreateRequestStatusV1beta1(ContainerRecreateRequestStatus):
    """v1beta1 holds what v1alpha1 keeps in annotations: the container status snapshot
    (`crr.apps.kruise.io/sync-container-statuses`) and the PreRecreateGrace condition
    (`crr.apps.kruise.io/unready-acquired`)."""

    container_status_snapshot: list[SyncContainerStatus] | None = None
    """The pod's container statuses as kruise-manager last synced them for kruise-daemon, while the
    request is recreating."""
    conditions: list[MetaCondition] | None = None
    """Latest observations of the request's state, e.g. PreRecreateGrace while the pod is held not-ready
    before the stop."""


class ContainerRecreateRequestV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["ContainerRecreateRequest"] | None = None
    spec: ContainerRecreateRequestSpec
    """Desired state of the ContainerRecreateRequest."""
    status: ContainerRecreateRequestStatusV1beta1 | None = None
    """Observed state of the ContainerRecreateRequest, written by kruise-daemon and kruise-manager."""


_COLUMNS = (
    PrinterColumn("PHASE", "string", ".status.phase", description="Phase of this ContainerRecreateRequest."),
    PrinterColumn("POD", "string", ".spec.podName", description="Pod name of this ContainerRecreateRequest."),
    PrinterColumn(
        "NODE",
        "string",
        ".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",
        description="Pod name of this ContainerRecreateRequest.",
    ),
    age_column(),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="containerrecreaterequests",
    description="ContainerRecreateRequest asks kruise-daemon to restart (recreate) some containers of a "
    "running pod in place, running their preStop hooks, without recreating the pod.",
    short_names=("crr",),
    versions=(
        CRDVersion(VERSION, ContainerRecreateRequest, storage=True, printer_columns=_COLUMNS),
        CRDVersion(
            "v1beta1",
            ContainerRecreateRequestV1beta1,
            storage=False,
            printer_columns=_COLUMNS,
        ),
    ),
    conversion_webhook=True,
)


@dataclass(frozen=True)
class Rejection:
    """Why the webhook refuses the request: upstream's HTTP code and message."""

    code: int
    message: str


def admit_update(obj: ContainerRecreateRequest, old: ContainerRecreateRequest) -> Rejection | None:
    """UPDATE: spec and the pod-uid/node-name labels are immutable, so is a stamped unready-acquired time."""
    if obj.spec.model_dump(exclude_none=True) != old.spec.model_dump(exclude_none=True):
        return Rejection(403, "spec of ContainerRecreateRequest is immutable")
    new_labels = obj.metadata.labels or {}
    old_labels = old.metadata.labels or {}
    for key in (keys.LABEL_CRR_POD_UID, keys.LABEL_CRR_NODE_NAME):
        if new_labels.get(key, "") != old_labels.get(key, ""):
            return Rejection(403, f"not allowed to update immutable label {key}")
    acquired = (old.metadata.annotations or {}).get(keys.ANNOTATION_CRR_UNREADY_ACQUIRED, "")
    if (
        acquired
        and (obj.metadata.annotations or {}).get(keys.ANNOTATION_CRR_UNREADY_ACQUIRED, "") != acquired
    ):
        return Rejection(
            403, f"not allowed to update immutable annotation {keys.ANNOTATION_CRR_UNREADY_ACQUIRED}"
        )
    return None


def check_create(obj: ContainerRecreateRequest) -> Rejection | None:
    """CREATE, the part that needs no pod: required fields, ranges, failurePolicy; fills what it can.

    Mutates `obj` like upstream: strategy {} with failurePolicy Fail, label `crr.apps.kruise.io/active`.
    """
    labels = dict(obj.metadata.labels or {})
    spec = obj.spec
    if spec.pod_name == "":
        return Rejection(400, "podName can not be empty")
    if spec.strategy is None:
        spec.strategy = RecreateStrategy()
    labels[keys.LABEL_CRR_ACTIVE] = "true"
    obj.metadata.labels = labels
    if len(spec.containers) == 0:
        return Rejection(400, "containers list can not be null")
    if (
        spec.active_deadline_seconds is not None
        and spec.active_deadline_seconds < MIN_ACTIVE_DEADLINE_SECONDS
    ):
        return Rejection(400, f"activeDeadlineSeconds can not be less than {MIN_ACTIVE_DEADLINE_SECONDS}s")
    strategy = spec.strategy
    if (
        strategy.termination_grace_period_seconds is not None
        and strategy.termination_grace_period_seconds < 0
    ):
        return Rejection(400, "terminationGracePeriodSeconds must be non-negative integer")
    if strategy.unready_grace_period_seconds is not None and strategy.unready_grace_period_seconds < 0:
        return Rejection(400, "unreadyGracePeriodSeconds must be non-negative integer")
    if not strategy.failure_policy:
        strategy.failure_policy = FAILURE_POLICY_FAIL
    elif strategy.failure_policy not in (FAILURE_POLICY_FAIL, FAILURE_POLICY_IGNORE):
        return Rejection(400, f"unknown failurePolicy {strategy.failure_policy}")
    return None


def _pod_is_active(pod: dict[str, Any]) -> bool:
    phase = status_of(pod).get("phase")
    return phase not in ("Succeeded", "Failed") and not meta_of(pod).get("deletionTimestamp")


def _terminated_by_sidecar_terminator(pod: dict[str, Any]) -> bool:
    return condition_of(pod, CONDITION_SIDECAR_TERMINATED) is not None


def admit_create(
    obj: ContainerRecreateRequest, pod: dict[str, Any] | None, node: dict[str, Any] | None
) -> Rejection | None:
    """The whole CREATE path given the pod named by spec.podName (None if absent) and its node.

    On success `obj` carries everything upstream injects; on rejection it may be half-filled and
    must be discarded.
    """
    rejection = check_create(obj)
    if rejection:
        return rejection
    if pod is None:
        return Rejection(400, f"no found Pod named {obj.spec.pod_name}")
    pod_spec = pod.get("spec") or {}
    if not _pod_is_active(pod) and not _terminated_by_sidecar_terminator(pod):
        return Rejection(400, "not allowed to recreate containers in an inactive Pod")
    if not pod_spec.get("nodeName"):
        return Rejection(400, "not allowed to recreate containers in a pending Pod")
    return _inject_pod(obj, pod, node)


def _inject_pod(
    obj: ContainerRecreateRequest, pod: dict[str, Any], node: dict[str, Any] | None
) -> Rejection | None:
    pod_spec = pod.get("spec") or {}
    labels = dict(obj.metadata.labels or {})
    labels[keys.LABEL_CRR_NODE_NAME] = pod_spec["nodeName"]
    labels[keys.LABEL_CRR_POD_UID] = meta_of(pod).get("uid", "")
    node_labels = meta_of(node or {}).get("labels") or {}
    if node_labels.get(VIRTUAL_KUBELET_LABEL_KEY) == VIRTUAL_KUBELET_LABEL_VALUE:
        labels[VIRTUAL_KUBELET_LABEL_KEY] = VIRTUAL_KUBELET_LABEL_VALUE
    obj.metadata.labels = labels
    strategy = obj.spec.strategy or RecreateStrategy()
    if strategy.termination_grace_period_seconds is None:
        strategy.termination_grace_period_seconds = pod_spec.get("terminationGracePeriodSeconds")
    containers = {c.get("name"): c for c in pod_spec.get("containers") or []}
    statuses = {s.get("name"): s for s in container_statuses_of(pod)}
    seen: set[str] = set()
    for container in obj.spec.containers:
        if container.name in seen:
            return Rejection(400, f"can not recreate {container.name} multi times")
        seen.add(container.name)
        if (
            container.pre_stop is not None
            or container.ports is not None
            or container.status_context is not None
        ):
            return Rejection(400, "preStop, ports, statusContext in container are ready-only fields")
        pod_container = containers.get(container.name)
        if pod_container is None:
            return Rejection(400, f"container {container.name} not found in Pod")
        status = statuses.get(container.name)
        if status is None:
            return Rejection(400, f"not found {container.name} containerStatus in Pod Status")
        if not status.get("containerID"):
            return Rejection(
                400,
                f"no containerID in {container.name} containerStatus, "
                "maybe the container has not been initialized",
            )
        pre_stop = section(pod_container, "lifecycle").get("preStop")
        if pre_stop:
            container.pre_stop = ProbeHandler(
                exec=copy.deepcopy(pre_stop.get("exec")),
                http_get=copy.deepcopy(pre_stop.get("httpGet")),
                tcp_socket=copy.deepcopy(pre_stop.get("tcpSocket")),
            )
        if container.pre_stop is not None and container.pre_stop.http_get is not None:
            container.ports = copy.deepcopy(pod_container.get("ports"))
        container.status_context = ContainerContext(
            container_id=status["containerID"], restart_count=status.get("restartCount", 0)
        )
    return None
