"""AdvancedCronJob (apps.kruise.io/v1alpha1): a CronJob whose child is a Job, a BroadcastJob or an
ImageListPullJob.

Upstream 1.9 declares `spec.template.imageListPullJobTemplate` on v1beta1 only (its v1alpha1 refuses
to hold it). Here v1alpha1 stays the storage version and the version controllers read (both are served,
see docs/api.md), so the field is part of the v1alpha1 model too: otherwise the apiserver would prune it
on its way to storage and the feature could not be used at all.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kruise.api.broadcastjob import COMPLETION_ALWAYS, BroadcastJobSpec
from kruise.api.common import Int32, Int64, KruiseModel, KruiseObject, ObjectMeta, Schemaless, Time
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.cronschedule import ScheduleError, load_location, parse_standard
from kruise.api.imagelistpulljob import MAX_IMAGES, ImageListPullJobSpec
from kruise.api.imagepulljob import (
    DEFAULT_PULL_BACKOFF_LIMIT,
    DEFAULT_PULL_TIMEOUT_SECONDS,
    PULL_IF_NOT_PRESENT,
    PullPolicy,
    image_errors,
    validate_selectors,
)
from kruise.api.podtemplate_defaults import default_pod_template
from kruise.api.podtemplate_validation import validate_pod_template
from kruise.api.validation import (
    FieldError,
    forbidden,
    invalid,
    validate_job_name,
    validate_nonnegative,
)

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "AdvancedCronJob"

CONCURRENCY_ALLOW = "Allow"
CONCURRENCY_FORBID = "Forbid"
CONCURRENCY_REPLACE = "Replace"

TEMPLATE_KIND_JOB = "Job"
TEMPLATE_KIND_BROADCASTJOB = "BroadcastJob"
TEMPLATE_KIND_IMAGELISTPULLJOB = "ImageListPullJob"

MAX_ACTIVE_DEADLINE_SECONDS = 3600 * 24
"""The longest `completionPolicy.activeDeadlineSeconds` an ImageListPullJob template may ask for."""


UPDATABLE_SPEC_FIELDS = (
    "schedule",
    "concurrency_policy",
    "successful_jobs_history_limit",
    "failed_jobs_history_limit",
    "starting_deadline_seconds",
    "paused",
    "time_zone",
)
"""Spec fields an update may change; the ImageListPullJob template may change too (see validate_update)."""


class BroadcastJobTemplateSpec(KruiseModel):
    metadata: ObjectMeta | None = None
    """Labels, annotations and so on of each BroadcastJob created."""
    spec: BroadcastJobSpec = Field(default_factory=BroadcastJobSpec)
    """Spec of each BroadcastJob created."""


class ImageListPullJobTemplateSpec(KruiseModel):
    metadata: ObjectMeta | None = None
    """Labels, annotations and so on of each ImageListPullJob created."""
    spec: ImageListPullJobSpec
    """Spec of each ImageListPullJob created."""


class CronJobTemplate(KruiseModel):
    # batch/v1 JobTemplateSpec, kept as the user wrote it (an embedded Kubernetes type)
    job_template: Schemaless | None = None
    """Template of a batch/v1 Job (a core JobTemplateSpec) to create at each scheduled time."""
    broadcast_job_template: BroadcastJobTemplateSpec | None = None
    """Template of a BroadcastJob to create at each scheduled time."""
    # an ImageListPullJob per activation (upstream 1.9, v1beta1; see the module docstring)
    image_list_pull_job_template: ImageListPullJobTemplateSpec | None = None
    """Template of an ImageListPullJob to create at each scheduled time."""


class AdvancedCronJobSpec(KruiseModel):
    schedule: str
    """When to create a job, in cron format (e.g. "*/5 * * * *" or @hourly)."""
    time_zone: str | None = None
    """IANA time zone the schedule is read in (e.g. Asia/Shanghai). Default: kruise-manager's local time
    zone."""
    starting_deadline_seconds: Int64 | None = None
    """Seconds after a scheduled time within which a missed job may still start; later runs are skipped
    and count as missed. Unset means no deadline."""
    concurrency_policy: str | None = None
    """What to do when a run is due while the previous job is still active: Allow (the default) runs both,
    Forbid skips the new run, Replace deletes the old job for the new one. An ImageListPullJob template
    defaults to Replace."""
    paused: bool | None = None
    """Skip every scheduled run until set back to false; jobs already running go on. Default false."""
    successful_jobs_history_limit: Int32 | None = None
    """How many finished successful jobs to keep. Default 3."""
    failed_jobs_history_limit: Int32 | None = None
    """How many failed jobs to keep. Default 1."""
    template: CronJobTemplate
    """The job to create at each scheduled time; exactly one of its templates is set."""


class ObjectReference(KruiseModel):
    api_version: str | None = None
    """API version of the job."""
    kind: str | None = None
    """Kind of the job: Job, BroadcastJob or ImageListPullJob."""
    name: str | None = None
    """Name of the job."""
    namespace: str | None = None
    """Namespace of the job."""
    uid: str | None = None
    """UID of the job."""
    resource_version: str | None = None
    """The job's resourceVersion when the reference was made."""
    field_path: str | None = None
    """A part of the job the reference is about, if not the whole object."""


class AdvancedCronJobStatus(KruiseModel):
    type: str | None = None
    """Kind of job the template creates: Job, BroadcastJob or ImageListPullJob."""
    active: list[ObjectReference] | None = None
    """The jobs this AdvancedCronJob created that are still running."""
    last_schedule_time: Time | None = None
    """When a job was last successfully scheduled."""


class AdvancedCronJob(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["AdvancedCronJob"] | None = None
    spec: AdvancedCronJobSpec
    """Desired state of the AdvancedCronJob."""
    status: AdvancedCronJobStatus | None = None
    """Observed state of the AdvancedCronJob, written by kruise-manager."""


class CronJobTemplateV1beta1(CronJobTemplate):
    """v1beta1 (1.9) has the same template (the ImageListPullJob one included)."""


class AdvancedCronJobSpecV1beta1(AdvancedCronJobSpec):
    template: CronJobTemplateV1beta1  # type: ignore[assignment]


class AdvancedCronJobV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["AdvancedCronJob"] | None = None
    spec: AdvancedCronJobSpecV1beta1
    """Desired state of the AdvancedCronJob."""
    status: AdvancedCronJobStatus | None = None
    """Observed state of the AdvancedCronJob, written by kruise-manager."""


_COLUMNS = (
    PrinterColumn("Schedule", "string", ".spec.schedule", description="The schedule of advanced cron job."),
    PrinterColumn("Type", "string", ".status.type", description="Type of cron job."),
    PrinterColumn(
        "LastScheduleTime",
        "date",
        ".status.lastScheduleTime",
        description="The last time at which job was scheduled.",
    ),
    age_column(),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="advancedcronjobs",
    description="AdvancedCronJob creates a Job, a BroadcastJob or an ImageListPullJob on a cron schedule, "
    "like the built-in CronJob but with more kinds of child job.",
    short_names=("acj",),
    versions=(
        CRDVersion(VERSION, AdvancedCronJob, storage=True, printer_columns=_COLUMNS),
        CRDVersion("v1beta1", AdvancedCronJobV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


def set_defaults(
    obj: AdvancedCronJob, inject_template_defaults: bool = True, host_network_host_ports: bool = False
) -> None:
    """SetDefaultsAdvancedCronJob: Allow (Replace for an ImageListPullJob template: pulling the same
    images twice at once is useless), not paused, keep 3 successful and 1 failed child.

    Only the pod template of the child gets defaults here; the child's own defaults (e.g. a
    BroadcastJob's parallelism) are applied when the controller creates it. An ImageListPullJob
    template gets its pull defaults only while its completion policy type is unset, as upstream.
    """
    spec = obj.spec
    if inject_template_defaults:
        if spec.template.job_template is not None:
            job_spec = spec.template.job_template.setdefault("spec", {})
            default_pod_template(job_spec.setdefault("template", {}), host_network_host_ports)
        if spec.template.broadcast_job_template is not None:
            default_pod_template(spec.template.broadcast_job_template.spec.template, host_network_host_ports)
    ilpj_template = spec.template.image_list_pull_job_template
    if ilpj_template is not None and not ilpj_template.spec.completion_policy.type:
        _default_image_list_pull_job_template(ilpj_template.spec)
    if not spec.concurrency_policy:
        spec.concurrency_policy = CONCURRENCY_REPLACE if ilpj_template is not None else CONCURRENCY_ALLOW
    if spec.paused is None:
        spec.paused = False
    if spec.successful_jobs_history_limit is None:
        spec.successful_jobs_history_limit = 3
    if spec.failed_jobs_history_limit is None:
        spec.failed_jobs_history_limit = 1


def _default_image_list_pull_job_template(spec: ImageListPullJobSpec) -> None:
    spec.completion_policy = spec.completion_policy  # marks it set, so to_dict() emits it
    spec.completion_policy.type = COMPLETION_ALWAYS
    if spec.pull_policy is None:
        spec.pull_policy = PullPolicy()
    if spec.pull_policy.timeout_seconds is None:
        spec.pull_policy.timeout_seconds = DEFAULT_PULL_TIMEOUT_SECONDS
    if spec.pull_policy.backoff_limit is None:
        spec.pull_policy.backoff_limit = DEFAULT_PULL_BACKOFF_LIMIT
    if not spec.image_pull_policy:
        spec.image_pull_policy = PULL_IF_NOT_PRESENT


def template_kind(spec: AdvancedCronJobSpec) -> str | None:
    """Which child kind the cron job creates (what status.type reports), in upstream's order."""
    if spec.template.job_template is not None:
        return TEMPLATE_KIND_JOB
    if spec.template.image_list_pull_job_template is not None:
        return TEMPLATE_KIND_IMAGELISTPULLJOB
    if spec.template.broadcast_job_template is not None:
        return TEMPLATE_KIND_BROADCASTJOB
    return None


def validate_name(meta: ObjectMeta) -> list[FieldError]:
    return validate_job_name("AdvancedCronJob", meta.name, meta.generate_name)


def validate_time_zone(time_zone: str | None, path: str) -> list[FieldError]:
    if time_zone is None:
        return []
    if time_zone == "":
        return [invalid(path, time_zone, "timeZone must be nil or non-empty string")]
    errs: list[FieldError] = []
    if time_zone.lower() == "local":
        errs.append(
            invalid(
                path,
                time_zone,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        )
    try:
        load_location(time_zone)
    except ScheduleError as err:
        errs.append(invalid(path, time_zone, str(err)))
    return errs


def validate_schedule(spec: AdvancedCronJobSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(spec.schedule) == 0:
        errs.append(
            invalid(
                f"{path}.schedule",
                spec.schedule,
                "schedule cannot be empty, please provide valid cron schedule.",
            )
        )
    try:
        parse_standard(spec.schedule)
    except ScheduleError as err:
        errs.append(invalid(f"{path}.schedule", spec.schedule, str(err)))
    if "TZ" in spec.schedule and spec.time_zone is not None:
        errs.append(
            invalid(
                f"{path}.schedule",
                spec.schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            )
        )
    return errs


def validate_template(spec: AdvancedCronJobSpec, path: str) -> list[FieldError]:
    """Exactly one child template, which passes its own kind's checks.

    The pod-template error path is `spec.template.spec...` for Jobs and BroadcastJobs, and the
    concurrency-policy error path is `spec.spec.concurrencyPolicy`, because upstream builds them so.
    """
    errs: list[FieldError] = []
    count = 0
    if spec.template.job_template is not None:
        count += 1
        job_spec = spec.template.job_template.get("spec") or {}
        errs.extend(validate_pod_template(job_spec.get("template"), f"{path}.template"))
    if spec.template.broadcast_job_template is not None:
        count += 1
        bcj_template = spec.template.broadcast_job_template.spec.template
        errs.extend(validate_pod_template(bcj_template, f"{path}.template"))
    if spec.template.image_list_pull_job_template is not None:
        count += 1
        if spec.concurrency_policy not in (CONCURRENCY_REPLACE, CONCURRENCY_FORBID):
            errs.append(
                invalid(
                    f"{path}.spec.concurrencyPolicy",
                    spec.concurrency_policy or "",
                    "concurrencyPolicy should be Replace or Forbid, "
                    f"but current value is: {spec.concurrency_policy or ''}",
                )
            )
        errs.extend(
            validate_image_list_pull_job_template(
                spec.template.image_list_pull_job_template, f"{path}.template.imageListPullJobTemplate"
            )
        )
    if count == 0:
        errs.append(
            forbidden(
                f"{path}.template",
                "spec must have one template, either JobTemplate or BroadcastJobTemplate "
                "or ImageListPullJobTemplate should be provided",
            )
        )
    elif count > 1:
        errs.append(
            forbidden(
                f"{path}.template",
                "spec can have only one template, either JobTemplate or BroadcastJobTemplate "
                "or ImageListPullJobTemplate should be provided",
            )
        )
    return errs


def validate_image_list_pull_job_template(
    template: ImageListPullJobTemplateSpec, path: str
) -> list[FieldError]:
    """The ImageListPullJob a cron job creates: the ImageListPullJob's own selector and image rules,
    plus the cron job's narrower completion rules (only `Always`, a deadline of at most a day that
    outlasts the pull timeout, and no TTL — the cron job's history limits own the cleanup).

    Like upstream, only the first problem is reported.
    """
    spec = template.spec
    spec_path = f"{path}.spec"
    errs = validate_selectors(spec, spec_path)
    if errs:
        return errs
    images_path = f"{spec_path}.images"
    if len(spec.images) == 0:
        return [invalid(images_path, spec.images, "image can not be empty")]
    if len(spec.images) > MAX_IMAGES:
        return [invalid(images_path, len(spec.images), f"the maximum number of images cannot > {MAX_IMAGES}")]
    seen: set[str] = set()
    for i, image in enumerate(spec.images):
        if image in seen:
            return [invalid(f"{images_path}[{i}]", image, "images cannot have duplicate values")]
        seen.add(image)
    for i, image in enumerate(spec.images):
        errs = image_errors(image, f"{images_path}[{i}]")
        if errs:
            return errs
    policy = spec.completion_policy
    policy_path = f"{spec_path}.completionPolicy"
    if policy.type != COMPLETION_ALWAYS:
        return [
            invalid(
                f"{policy_path}.type",
                policy.type or "",
                f"completionPolicy should be Always, but current value is: {policy.type or ''}",
            )
        ]
    deadline = policy.active_deadline_seconds
    if deadline is not None and deadline > MAX_ACTIVE_DEADLINE_SECONDS:
        return [
            invalid(
                f"{policy_path}.activeDeadlineSeconds",
                deadline,
                f"activeDeadlineSeconds must be less than {MAX_ACTIVE_DEADLINE_SECONDS}, "
                f"current value is: {deadline}",
            )
        ]
    timeout = spec.pull_policy.timeout_seconds if spec.pull_policy is not None else None
    if deadline is not None and timeout is not None and timeout > deadline:
        return [
            invalid(
                f"{policy_path}.activeDeadlineSeconds",
                deadline,
                "completionPolicy.activeDeadlineSeconds must be greater than "
                f"pullPolicy.timeoutSeconds({timeout})",
            )
        ]
    if policy.ttl_seconds_after_finished is not None:
        return [
            invalid(
                f"{policy_path}.ttlSecondsAfterFinished",
                policy.ttl_seconds_after_finished,
                "ttlSecondsAfterFinished is not supported in advancedCronJob",
            )
        ]
    return []


def validate_spec(spec: AdvancedCronJobSpec, path: str = "spec") -> list[FieldError]:
    errs = validate_schedule(spec, path)
    errs.extend(validate_template(spec, path))
    errs.extend(validate_nonnegative(spec.starting_deadline_seconds, f"{path}.startingDeadlineSeconds"))
    errs.extend(
        validate_nonnegative(spec.successful_jobs_history_limit, f"{path}.successfulJobsHistoryLimit")
    )
    errs.extend(validate_nonnegative(spec.failed_jobs_history_limit, f"{path}.failedJobsHistoryLimit"))
    errs.extend(validate_time_zone(spec.time_zone, f"{path}.timeZone"))
    return errs


def validate(obj: AdvancedCronJob) -> list[FieldError]:
    """validateAdvancedCronJob (CREATE)."""
    return validate_name(obj.metadata) + validate_spec(obj.spec)


def validate_update(obj: AdvancedCronJob, old: AdvancedCronJob) -> list[FieldError]:
    """validateAdvancedCronJobUpdate: only scheduling knobs may change, and the ImageListPullJob
    template when the cron job already has one; the Job and BroadcastJob templates are immutable."""
    errs = validate_spec(obj.spec)
    frozen_new = obj.spec.model_copy(update={f: getattr(old.spec, f) for f in UPDATABLE_SPEC_FIELDS})
    if old.spec.template.image_list_pull_job_template is not None:
        frozen_new.template = frozen_new.template.model_copy(
            update={"image_list_pull_job_template": old.spec.template.image_list_pull_job_template}
        )
    if frozen_new.model_dump(exclude_none=True) != old.spec.model_dump(exclude_none=True):
        errs.append(
            forbidden(
                "spec",
                "updates to advancedcronjob spec for fields other than 'imageListPullJobTemplate', "
                "'schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', "
                "'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden",
            )
        )
    return errs
