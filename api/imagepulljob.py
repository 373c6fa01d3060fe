"""ImagePullJob (apps.kruise.io/v1alpha1): pre-pull one image on a set of nodes.

Also home of the pieces ImageListPullJob shares with it (the inline ImagePullJobTemplate and its
checks), mirroring upstream where ImageListPullJobSpec inlines ImagePullJobTemplate.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kruise.api import keys
from kruise.api.broadcastjob import COMPLETION_ALWAYS, COMPLETION_NEVER, CompletionPolicy
from kruise.api.common import Int32, IntOrString, KruiseModel, KruiseObject, LabelSelector, Time
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.imageref import ImageReferenceError, normalize
from kruise.api.validation import FieldError, forbidden, invalid, required, validate_label_selector

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "ImagePullJob"

PULL_ALWAYS = "Always"
PULL_IF_NOT_PRESENT = "IfNotPresent"

DEFAULT_PULL_TIMEOUT_SECONDS = 600
DEFAULT_PULL_BACKOFF_LIMIT = 3


class SandboxConfig(KruiseModel):
    """Labels/annotations for the pod sandbox the runtime may need to pull (e.g. for a proxy)."""

    labels: dict[str, str] | None = None
    """Labels put on the pod sandbox config passed to the runtime's PullImage call."""
    annotations: dict[str, str] | None = None
    """Annotations put on the pod sandbox config passed to the runtime's PullImage call."""


class PullPolicy(KruiseModel):
    timeout_seconds: Int32 | None = None
    """Seconds one pull attempt may take before it is abandoned. Default 600."""
    backoff_limit: Int32 | None = None
    """Times a failed pull is retried on a node before that node counts as failed. Default 3."""


class ImagePullJobNodeSelector(LabelSelector):
    names: list[str] | None = None
    """Names of the nodes to pull on; combined with the label selector when both are set."""


class ImagePullJobPodSelector(LabelSelector):
    pass


class ImagePullJobTemplate(KruiseModel):
    pull_secrets: list[str] | None = None
    """Names of secrets in the job's namespace holding registry credentials for the pull (docker config
    secrets)."""
    selector: ImagePullJobNodeSelector | None = None
    """Which nodes pull: by names and/or labels. Unset means every node. Cannot be set together with
    podSelector."""
    pod_selector: ImagePullJobPodSelector | None = None
    """Pull on the nodes where pods matching this label query run. Cannot be set together with selector."""
    parallelism: IntOrString | None = None
    """Most nodes pulling at once: a number or a percentage. 0 holds the job until it is raised. Default
    1."""
    pull_policy: PullPolicy | None = None
    """Timeout and retries of each node's pull."""
    completion_policy: CompletionPolicy = Field(default_factory=CompletionPolicy)
    """When the job counts as finished, and what happens to it afterwards. Default type Always."""
    sandbox_config: SandboxConfig | None = None
    """Metadata passed with the pull to the container runtime, for runtimes or proxies that need it."""
    image_pull_policy: str | None = None
    """Always pulls even when the node has the image (to refresh a moving tag); IfNotPresent (the default)
    skips nodes that have it."""


class ImagePullJobSpec(ImagePullJobTemplate):
    image: str
    """The image to pull, e.g. nginx:1.25 or registry.example.com/app@sha256:..."""


class ImagePullJobStatus(KruiseModel):
    start_time: Time | None = None
    """When the controller first acted on the job."""
    completion_time: Time | None = None
    """When the job finished."""
    desired: Int32 = 0
    """Number of nodes that should pull: usually the nodes the selectors match."""
    active: Int32 = 0
    """Number of nodes pulling now."""
    succeeded: Int32 = 0
    """Number of nodes that pulled the image."""
    failed: Int32 = 0
    """Number of nodes whose pull failed after every retry."""
    message: str | None = None
    """A short, human-readable summary of the job's progress or why it failed."""
    failed_nodes: list[str] | None = None
    """Names of the nodes whose pull failed."""


class ImagePullJob(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["ImagePullJob"] | None = None
    spec: ImagePullJobSpec
    """Desired state of the ImagePullJob."""
    status: ImagePullJobStatus | None = None
    """Observed state of the ImagePullJob, written by kruise-manager."""


class ImagePullJobV1beta1(ImagePullJob):
    """The v1beta1 (storage) form: the same shape as v1alpha1."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None  # type: ignore[assignment]


_COLUMNS = (
    PrinterColumn(
        "TOTAL",
        "integer",
        ".status.desired",
        description="Number of all nodes matched by this job",
    ),
    PrinterColumn("ACTIVE", "integer", ".status.active", description="Number of image pull task active"),
    PrinterColumn(
        "SUCCEED",
        "integer",
        ".status.succeeded",
        description="Number of image pull task succeeded",
    ),
    PrinterColumn("FAILED", "integer", ".status.failed", description="Number of image pull tasks failed"),
    age_column(),
)
# upstream's v1alpha1 also prints the failure message; its v1beta1 does not
_COLUMNS_V1ALPHA1 = (
    *_COLUMNS,
    PrinterColumn("MESSAGE", "string", ".status.message", description="Summary of status when job is failed"),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="imagepulljobs",
    description="ImagePullJob pre-pulls one image onto a set of nodes through kruise-daemon, so pods that "
    "use it later start without waiting for the download.",
    versions=(
        CRDVersion(VERSION, ImagePullJob, storage=True, printer_columns=_COLUMNS_V1ALPHA1),
        CRDVersion("v1beta1", ImagePullJobV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


def set_defaults_pull_policy(template: ImagePullJobTemplate) -> None:
    template.completion_policy = template.completion_policy  # marks it set, so to_dict() emits it
    if not template.completion_policy.type:
        template.completion_policy.type = COMPLETION_ALWAYS
    if template.pull_policy is None:
        template.pull_policy = PullPolicy()
    if template.pull_policy.timeout_seconds is None:
        template.pull_policy.timeout_seconds = DEFAULT_PULL_TIMEOUT_SECONDS
    if template.pull_policy.backoff_limit is None:
        template.pull_policy.backoff_limit = DEFAULT_PULL_BACKOFF_LIMIT


def set_defaults(obj: ImagePullJob, add_protection: bool = True) -> None:
    """SetDefaultsImagePullJob: Always, 600s timeout, 3 retries, IfNotPresent, protection finalizer."""
    set_defaults_pull_policy(obj.spec)
    if not obj.spec.image_pull_policy:
        obj.spec.image_pull_policy = PULL_IF_NOT_PRESENT
    if add_protection:
        finalizers = obj.metadata.finalizers or []
        if keys.FINALIZER_DELETION_PROTECTION not in finalizers:
            obj.metadata.finalizers = [*finalizers, keys.FINALIZER_DELETION_PROTECTION]


def validate_selectors(template: ImagePullJobTemplate, path: str) -> list[FieldError]:
    """Node selector (names XOR labels, names unique) and podSelector, exclusive with selector."""
    selector = template.selector
    if selector is not None:
        if selector.match_labels is not None or selector.match_expressions is not None:
            if selector.names is not None:
                return [
                    forbidden(
                        f"{path}.selector", "can not set both names and labelSelector in this spec.selector"
                    )
                ]
            errs = validate_label_selector(selector, f"{path}.selector")
            if errs:
                return [invalid(f"{path}.selector", selector.to_dict(), f"invalid selector: {errs[0]}")]
        if selector.names is not None and len(set(selector.names)) != len(selector.names):
            return [invalid(f"{path}.selector.names", selector.names, "duplicated name in selector names")]
    if template.pod_selector is not None:
        if selector is not None:
            return [forbidden(f"{path}.podSelector", "can not set both selector and podSelector")]
        errs = validate_label_selector(template.pod_selector, f"{path}.podSelector")
        if errs:
            return [
                invalid(
                    f"{path}.podSelector", template.pod_selector.to_dict(), f"invalid podSelector: {errs[0]}"
                )
            ]
    return []


def image_errors(image: str, path: str) -> list[FieldError]:
    try:
        normalize(image)
    except ImageReferenceError as err:
        return [invalid(path, image, f"invalid image {image}: {err}")]
    return []


def validate(obj: ImagePullJob) -> list[FieldError]:
    """The validating webhook's `validate` (CREATE and UPDATE).

    Upstream stops at the first problem and returns it as a plain message; this returns at most one
    error too, whose detail is that message.
    """
    spec = obj.spec
    errs = validate_selectors(spec, "spec")
    if errs:
        return errs
    if len(spec.image) == 0:
        return [required("spec.image", "image can not be empty")]
    errs = image_errors(spec.image, "spec.image")
    if errs:
        return errs
    timeout = DEFAULT_PULL_TIMEOUT_SECONDS
    if spec.pull_policy is not None and spec.pull_policy.timeout_seconds is not None:
        timeout = spec.pull_policy.timeout_seconds
    policy = spec.completion_policy
    if policy.type == COMPLETION_ALWAYS:
        if policy.active_deadline_seconds is not None and timeout > policy.active_deadline_seconds:
            return [
                invalid(
                    "spec.completionPolicy.activeDeadlineSeconds",
                    policy.active_deadline_seconds,
                    "completionPolicy.activeDeadlineSeconds must be greater than "
                    "pullPolicy.timeoutSeconds(default 600)",
                )
            ]
        return []
    return completion_type_errors(policy, "spec.completionPolicy")


def completion_type_errors(policy: CompletionPolicy, path: str) -> list[FieldError]:
    """The Never/unknown branches shared with ImageListPullJob."""
    if policy.type == COMPLETION_ALWAYS:
        return []
    if policy.type == COMPLETION_NEVER:
        if policy.active_deadline_seconds is not None or policy.ttl_seconds_after_finished is not None:
            return [
                forbidden(
                    path,
                    "activeDeadlineSeconds and ttlSecondsAfterFinished "
                    "can only work with Always CompletionPolicyType",
                )
            ]
        return []
    return [invalid(f"{path}.type", policy.type, f"unknown type of completionPolicy: {policy.type or ''}")]
