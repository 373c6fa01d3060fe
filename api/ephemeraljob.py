"""EphemeralJob (apps.kruise.io/v1alpha1): inject ephemeral containers into the pods a selector matches.

Upstream does no defaulting for this kind, so its validation (core's ephemeral-container rules)
requires `imagePullPolicy` and `terminationMessagePolicy` to be spelled out. Error paths start at
`ephemeralContainers[i]`, as upstream builds them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kruise.api.common import (
    ContainerDict,
    Int32,
    Int64,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    Time,
)
from kruise.api.crdgen import CRD_REQUIRED, CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.podprobemarker import port_name_errors
from kruise.api.validation import (
    FieldError,
    dns1123_label_errors,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "EphemeralJob"

PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"
PHASE_WAITING = "Waiting"
PHASE_RUNNING = "Running"
PHASE_PAUSED = "Paused"
PHASE_ERROR = "Error"
PHASE_UNKNOWN = "Unknown"

CONDITION_SUCCEEDED = "JobSucceeded"
CONDITION_FAILED = "JobFailed"
CONDITION_ERROR = "JobError"
CONDITION_INITIALIZED = "Initialized"
CONDITION_MATCHED_EMPTY = "MatchedEmpty"

# EphemeralContainerCommon fields in declaration order; the disallowed ones are reported in this order.
_CONTAINER_FIELDS: tuple[tuple[str, bool], ...] = (
    ("name", True),
    ("image", True),
    ("command", True),
    ("args", True),
    ("workingDir", True),
    ("ports", False),
    ("envFrom", True),
    ("env", True),
    ("resources", False),
    ("resizePolicy", False),
    ("restartPolicy", False),
    ("volumeMounts", True),
    ("volumeDevices", True),
    ("livenessProbe", False),
    ("readinessProbe", False),
    ("startupProbe", False),
    ("lifecycle", False),
    ("terminationMessagePath", True),
    ("terminationMessagePolicy", True),
    ("imagePullPolicy", True),
    ("securityContext", True),
    ("stdin", True),
    ("stdinOnce", True),
    ("tty", True),
)
_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]


class EphemeralContainerTemplateSpec(KruiseModel):
    # core v1.EphemeralContainer objects, kept as written
    ephemeral_containers: list[ContainerDict] = Field(default_factory=list, json_schema_extra=CRD_REQUIRED)
    """The ephemeral containers (core EphemeralContainer objects) added to each matched pod; their names
    must not clash with the pod's containers."""


class EphemeralJobSpec(KruiseModel):
    selector: LabelSelector | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    """Label query over the pods, in the job's namespace, that get the ephemeral containers."""
    replicas: Int32 | None = None
    """Most matched pods to add the containers to, for a gradual rollout; unset, or more than match, means
    every matched pod."""
    parallelism: Int32 | None = None
    """Most pods whose ephemeral containers run at once. Default 1."""
    template: EphemeralContainerTemplateSpec
    """The ephemeral containers to add."""
    paused: bool | None = None
    """Stop adding containers to more pods until set back to false. Default false."""
    active_deadline_seconds: Int64 | None = None
    """Seconds from the job's start after which it stops and counts as failed; must be positive. Unset
    means no deadline."""
    ttl_seconds_after_finished: Int32 | None = Field(default=None, alias="ttlSecondsAfterFinished")
    """Seconds after the job finishes (succeeded or failed) before it is deleted; 0 deletes it as soon as
    it finishes. Default 1800."""


class EphemeralJobCondition(KruiseModel):
    type: str
    """The kind of condition: JobSucceeded, JobFailed, JobError, Initialized or MatchedEmpty."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    last_probe_time: Time | None = None
    """When the condition was last checked."""
    last_transition_time: Time | None = None
    """When the status last changed from one value to another."""
    reason: str | None = None
    """A short CamelCase word saying why the condition last changed."""
    message: str | None = None
    """Details of the last change, for humans."""


class EphemeralJobStatus(KruiseModel):
    conditions: list[EphemeralJobCondition] | None = None
    """Latest observations of the job's state."""
    start_time: Time | None = None
    """When the controller first acted on the job."""
    completion_time: Time | None = None
    """When the job finished."""
    phase: str = ""
    """Where the job is: Waiting, Running, Paused, Succeeded, Failed, Error or Unknown."""
    matches: Int32 = Field(default=0, alias="match")
    """Number of pods the job targets (its selector's matches, capped by replicas)."""
    running: Int32 = 0
    """Number of targeted pods whose ephemeral containers are running."""
    succeeded: Int32 = 0
    """Number of targeted pods whose ephemeral containers exited with success."""
    waiting: Int32 = 0
    """Number of targeted pods whose ephemeral containers are waiting to start."""
    failed: Int32 = 0
    """Number of targeted pods whose ephemeral containers failed."""


class EphemeralJob(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["EphemeralJob"] | None = None
    spec: EphemeralJobSpec
    """Desired state of the EphemeralJob."""
    status: EphemeralJobStatus | None = None
    """Observed state of the EphemeralJob, written by kruise-manager."""


CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="ephemeraljobs",
    description="EphemeralJob adds ephemeral containers (for debugging, say) to the running pods its "
    "selector matches, a few pods at a time, and tracks how they end.",
    short_names=("ejob",),
    versions=(
        CRDVersion(
            name=VERSION,
            model=EphemeralJob,
            printer_columns=(
                PrinterColumn("STATUS", "string", ".status.phase", description="The status of ephemeral job"),
                PrinterColumn(
                    "MATCH",
                    "integer",
                    ".status.match",
                    description="Number of ephemeral container matched by this job",
                ),
                PrinterColumn(
                    "SUCCEED",
                    "integer",
                    ".status.succeeded",
                    description="Number of succeed ephemeral containers",
                ),
                PrinterColumn(
                    "FAILED", "integer", ".status.failed", description="Number of failed ephemeral containers"
                ),
                PrinterColumn(
                    "RUNNING",
                    "integer",
                    ".status.running",
                    description="Number of running ephemeral containers",
                ),
                PrinterColumn(
                    "WAITING",
                    "integer",
                    ".status.waiting",
                    description="Number of waiting ephemeral containers",
                ),
                age_column(),
            ),
        ),
    ),
)


def _port_num_errors(value: Any, path: str) -> list[FieldError]:
    if not isinstance(value, int) or not 1 <= value <= 65535:
        return [invalid(path, value, "must be between 1 and 65535, inclusive")]
    return []


def _validate_ports(ports: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        ppath = f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            msgs = port_name_errors(name)
            if msgs:
                errs.extend(invalid(f"{ppath}.name", name, m) for m in msgs)
            elif name in names:
                errs.append(duplicate(f"{ppath}.name", name))
            else:
                names.add(name)
        if not port.get("containerPort"):
            errs.append(required(f"{ppath}.containerPort"))
        else:
            errs.extend(_port_num_errors(port["containerPort"], f"{ppath}.containerPort"))
        if port.get("hostPort"):
            errs.extend(_port_num_errors(port["hostPort"], f"{ppath}.hostPort"))
        protocol = port.get("protocol") or ""
        if not protocol:
            errs.append(required(f"{ppath}.protocol"))
        elif protocol not in _PROTOCOLS:
            errs.append(not_supported(f"{ppath}.protocol", protocol, _PROTOCOLS))
    return errs


def _validate_container_common(container: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = container.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs.extend(invalid(f"{path}.name", name, m) for m in dns1123_label_errors(name))
    if not container.get("image"):
        errs.append(required(f"{path}.image"))
    policy = container.get("terminationMessagePolicy") or ""
    if not policy:
        errs.append(required(f"{path}.terminationMessagePolicy"))
    elif policy not in _MESSAGE_POLICIES:
        errs.append(not_supported(f"{path}.terminationMessagePolicy", policy, _MESSAGE_POLICIES))
    errs.extend(_validate_ports(container.get("ports") or [], f"{path}.ports"))
    pull = container.get("imagePullPolicy") or ""
    if not pull:
        errs.append(required(f"{path}.imagePullPolicy"))
    elif pull not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES))
    return errs


def _is_set(value: Any) -> bool:
    return value not in (None, "", [], {}, False, 0)


def validate_ephemeral_containers(containers: list[dict[str, Any]], path: str) -> list[FieldError]:
    """validateEphemeralContainers (core rules) as upstream applies them to the template.

    Env/envFrom/securityContext contents are left to the apiserver, which re-validates them when
    the controller adds the containers to a pod.
    """
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, container in enumerate(containers):
        cpath = f"{path}[{i}]"
        errs.extend(_validate_container_common(container, cpath))
        image = container.get("image") or ""
        if image and image != image.strip():
            errs.append(invalid(f"{cpath}.image", image, "must not have leading or trailing whitespace"))
        name = container.get("name") or ""
        if name in names:
            errs.append(duplicate(f"{cpath}.name", name))
        else:
            names.add(name)
        for field, allowed in _CONTAINER_FIELDS:
            if not allowed and _is_set(container.get(field)):
                errs.append(forbidden(f"{cpath}.{field}", "cannot be set for an Ephemeral Container"))
        for j, mount in enumerate(container.get("volumeMounts") or []):
            for key in ("subPath", "subPathExpr"):
                if mount.get(key):
                    errs.append(
                        forbidden(
                            f"{cpath}.volumeMounts[{j}].{key}", "cannot be set for an Ephemeral Container"
                        )
                    )
    return errs


def validate(obj: EphemeralJob) -> list[FieldError]:
    """The validating webhook (CREATE and UPDATE): only the ephemeral containers are checked."""
    return validate_ephemeral_containers(obj.spec.template.ephemeral_containers, "ephemeralContainers")
