"""BroadcastJob (apps.kruise.io/v1alpha1): run one pod of a template on every eligible node.

Also home of CompletionPolicy, which upstream shares between BroadcastJob and the image pull jobs.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kruise.api import keys
from kruise.api.common import (
    Int32,
    Int64,
    IntOrString,
    KruiseModel,
    KruiseObject,
    ObjectMeta,
    PodTemplate,
    Time,
)
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.objects import labels_of, spec_of
from kruise.api.podtemplate_defaults import default_pod_template
from kruise.api.podtemplate_validation import validate_pod_template
from kruise.api.validation import FieldError, invalid, validate_job_name

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "BroadcastJob"

COMPLETION_ALWAYS = "Always"
COMPLETION_NEVER = "Never"

FAILURE_POLICY_CONTINUE = "Continue"
FAILURE_POLICY_FAIL_FAST = "FailFast"
FAILURE_POLICY_PAUSE = "Pause"

PHASE_RUNNING = "running"
PHASE_PAUSED = "paused"
PHASE_COMPLETED = "completed"
PHASE_FAILED = "failed"

CONDITION_COMPLETE = "Complete"
CONDITION_FAILED = "Failed"

"""Upstream's broadcastJobNameMaxLen: a pod is named ``<job>-xxxxx`` and carries the name as a label value."""

UNLIMITED_PARALLELISM = (1 << 31) - 1
"""Upstream's default parallelism: MaxInt32, i.e. every desired node at once."""


class CompletionPolicy(KruiseModel):
    type: str | None = None
    """When the job ends: Always (the default) finishes it once its work is done on every desired node, or
    earlier when activeDeadlineSeconds passes or its failure limit is hit; Never keeps it running, so
    nodes that join later are served too."""
    active_deadline_seconds: Int64 | None = None
    """Seconds from the job's start after which it is stopped and marked failed; must be positive and
    applies only to type Always. Unset means no deadline."""
    ttl_seconds_after_finished: Int32 | None = Field(default=None, alias="ttlSecondsAfterFinished")
    """Seconds after the job finishes (completed or failed) before it is deleted; only for type Always. 0
    deletes it as soon as it finishes; unset keeps it."""


class FailurePolicy(KruiseModel):
    type: str | None = None
    """What a failed pod does to the job: FailFast (the default) marks the job failed, Continue lets the
    other pods finish, Pause pauses the job."""
    restart_limit: Int32 | None = None
    """Times a pod may be retried before it counts as failed."""


class BroadcastJobSpec(KruiseModel):
    parallelism: IntOrString | None = None
    """Most pods running at once: a number or a percentage of the desired pods. Default: no limit (every
    eligible node at once)."""
    template: PodTemplate = Field(default_factory=dict)
    """The pod template (a core PodTemplateSpec): one pod from it runs to completion on every node that
    matches its node selector, affinity and tolerations."""
    completion_policy: CompletionPolicy = Field(default_factory=CompletionPolicy)
    """When the job counts as finished, and what happens to it afterwards."""
    paused: bool | None = None
    """Stop creating new pods (running ones go on) until set back to false. Default false."""
    failure_policy: FailurePolicy | None = None
    """What to do when pods fail."""


class JobCondition(KruiseModel):
    type: str
    """The kind of condition: Complete or Failed."""
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


class BroadcastJobStatus(KruiseModel):
    conditions: list[JobCondition] | None = None
    """Latest observations of the job's state."""
    start_time: Time | None = None
    """When the controller first acted on the job."""
    completion_time: Time | None = None
    """When the job finished."""
    active: Int32 = 0
    """Number of pods running now."""
    succeeded: Int32 = 0
    """Number of pods that reached phase Succeeded."""
    failed: Int32 = 0
    """Number of pods that reached phase Failed."""
    desired: Int32 = 0
    """Number of pods the job should run: usually the number of nodes eligible for its template."""
    phase: str = ""
    """Where the job is: running, paused, completed or failed."""


class BroadcastJob(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["BroadcastJob"] | None = None
    spec: BroadcastJobSpec = Field(default_factory=BroadcastJobSpec)
    """Desired state of the BroadcastJob."""
    status: BroadcastJobStatus | None = None
    """Observed state of the BroadcastJob, written by kruise-manager."""


class BroadcastJobV1beta1(BroadcastJob):
    """The v1beta1 (storage) form: the same shape as v1alpha1."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None  # type: ignore[assignment]


_COLUMNS = (
    PrinterColumn(
        "Desired",
        "integer",
        ".status.desired",
        description="The desired number of pods. This is typically equal to the number of "
        "nodes satisfied to run pods.",
    ),
    PrinterColumn("Active", "integer", ".status.active", description="The number of actively running pods."),
    PrinterColumn(
        "Succeeded",
        "integer",
        ".status.succeeded",
        description="The number of pods which reached phase Succeeded.",
    ),
    PrinterColumn(
        "Failed",
        "integer",
        ".status.failed",
        description="The number of pods which reached phase Failed.",
    ),
    age_column(),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="broadcastjobs",
    description="BroadcastJob runs one pod of its template to completion on every eligible node, like a "
    "Job spread over the cluster, ending by its completion policy.",
    short_names=("bcj",),
    versions=(
        CRDVersion(VERSION, BroadcastJob, storage=True, printer_columns=_COLUMNS),
        CRDVersion("v1beta1", BroadcastJobV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


def set_defaults_spec(
    spec: BroadcastJobSpec, inject_template_defaults: bool = True, host_network_host_ports: bool = False
) -> None:
    """SetDefaultsBroadcastJob: completion Always, parallelism MaxInt32, FailFast, restartPolicy OnFailure.

    Like upstream, pod-template defaults run first, so an empty restartPolicy becomes Always there
    (and is then rejected by validation) unless template defaulting is skipped — the mutating
    webhook skips it only on updates that leave the template unchanged (or with TemplateNoDefaults).
    """
    if inject_template_defaults:
        default_pod_template(spec.template, host_network_host_ports)
    # Re-assigning marks defaulted sub-objects as set, so to_dict() emits them.
    spec.completion_policy = spec.completion_policy
    spec.template = spec.template
    if not spec.completion_policy.type:
        spec.completion_policy.type = COMPLETION_ALWAYS
    if spec.parallelism is None:
        spec.parallelism = UNLIMITED_PARALLELISM
    if spec.failure_policy is None:
        spec.failure_policy = FailurePolicy()
    if not spec.failure_policy.type:
        spec.failure_policy.type = FAILURE_POLICY_FAIL_FAST
    pod_spec = spec.template.setdefault("spec", {})
    if not pod_spec.get("restartPolicy"):
        pod_spec["restartPolicy"] = "OnFailure"


def set_defaults(
    obj: BroadcastJob, inject_template_defaults: bool = True, host_network_host_ports: bool = False
) -> None:
    set_defaults_spec(obj.spec, inject_template_defaults, host_network_host_ports)


def validate_spec(spec: BroadcastJobSpec, path: str = "spec") -> list[FieldError]:
    """validateBroadcastJobSpec: completion-policy combinations, restartPolicy, reserved labels, template."""
    errs: list[FieldError] = []
    policy = spec.completion_policy
    if policy.type == COMPLETION_NEVER:
        if policy.ttl_seconds_after_finished is not None:
            errs.append(
                invalid(
                    f"{path}.completionPolicy.ttlSecondsAfterFinished",
                    policy.ttl_seconds_after_finished,
                    "ttlSecondsAfterFinished can just work with Always CompletionPolicyType",
                )
            )
        if policy.active_deadline_seconds is not None:
            errs.append(
                invalid(
                    f"{path}.completionPolicy.activeDeadlineSeconds",
                    policy.active_deadline_seconds,
                    "activeDeadlineSeconds can just work with Always CompletionPolicyType",
                )
            )
    restart_policy = spec_of(spec.template).get("restartPolicy", "")
    if restart_policy not in ("OnFailure", "Never"):
        errs.append(
            invalid(
                f"{path}.template.spec.restartPolicy",
                restart_policy,
                "pod restartPolicy can only be Never or OnFailure",
            )
        )
    labels: dict[str, Any] = labels_of(spec.template)
    if labels.get(keys.LABEL_BROADCASTJOB_NAME) or labels.get(keys.LABEL_BROADCASTJOB_CONTROLLER_UID):
        errs.append(
            invalid(
                f"{path}.template.metadata.labels",
                labels,
                f'"{keys.LABEL_BROADCASTJOB_NAME}" and "{keys.LABEL_BROADCASTJOB_CONTROLLER_UID}" '
                "are not allowed to preset in pod labels",
            )
        )
    errs.extend(validate_pod_template(spec.template, f"{path}.template"))
    return errs


def validate_name(meta: ObjectMeta) -> list[FieldError]:
    return validate_job_name("BroadcastJob", meta.name, meta.generate_name)


def validate(obj: BroadcastJob) -> list[FieldError]:
    """The validating webhook runs the same checks on CREATE and UPDATE: the name, then the spec."""
    return [*validate_name(obj.metadata), *validate_spec(obj.spec)]
