"""AdvancedCronJob (apps.kruise.io/v1alpha1): a CronJob whose child is a Job or a BroadcastJob."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kruise.api.broadcastjob import BroadcastJobSpec
from kruise.api.common import Int32, Int64, KruiseModel, KruiseObject, ObjectMeta, Schemaless, Time
from kruise.api.crdgen import V1BETA1_SERVED, CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.cronschedule import ScheduleError, load_location, parse_standard
from kruise.api.imagelistpulljob import ImageListPullJobSpec
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


UPDATABLE_SPEC_FIELDS = (
    "schedule",
    "concurrency_policy",
    "successful_jobs_history_limit",
    "failed_jobs_history_limit",
    "starting_deadline_seconds",
    "paused",
    "time_zone",
)


class BroadcastJobTemplateSpec(KruiseModel):
    metadata: ObjectMeta | None = None
    spec: BroadcastJobSpec = Field(default_factory=BroadcastJobSpec)


class CronJobTemplate(KruiseModel):
    job_template: Schemaless | None = None
    """batch/v1 JobTemplateSpec, kept as the user wrote it (an embedded Kubernetes type)."""
    broadcast_job_template: BroadcastJobTemplateSpec | None = None


class AdvancedCronJobSpec(KruiseModel):
    schedule: str
    time_zone: str | None = None
    starting_deadline_seconds: Int64 | None = None
    concurrency_policy: str | None = None
    paused: bool | None = None
    successful_jobs_history_limit: Int32 | None = None
    failed_jobs_history_limit: Int32 | None = None
    template: CronJobTemplate


class ObjectReference(KruiseModel):
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class AdvancedCronJobStatus(KruiseModel):
    type: str | None = None
    active: list[ObjectReference] | None = None
    last_schedule_time: Time | None = None


class AdvancedCronJob(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["AdvancedCronJob"] | None = None
    spec: AdvancedCronJobSpec
    status: AdvancedCronJobStatus | None = None


class ImageListPullJobTemplateSpec(KruiseModel):
    metadata: ObjectMeta | None = None
    spec: ImageListPullJobSpec


class CronJobTemplateV1beta1(CronJobTemplate):
    """v1beta1 (1.9) can also create ImageListPullJobs on schedule."""

    image_list_pull_job_template: ImageListPullJobTemplateSpec | None = None


class AdvancedCronJobSpecV1beta1(AdvancedCronJobSpec):
    template: CronJobTemplateV1beta1  # type: ignore[assignment]


class AdvancedCronJobV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["AdvancedCronJob"] | None = None
    spec: AdvancedCronJobSpecV1beta1
    status: AdvancedCronJobStatus | None = None


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
    short_names=("acj",),
    versions=(
        CRDVersion(VERSION, AdvancedCronJob, storage=True, printer_columns=_COLUMNS),
        CRDVersion(
            "v1beta1", AdvancedCronJobV1beta1, served=V1BETA1_SERVED, storage=False, printer_columns=_COLUMNS
        ),
    ),
    conversion_webhook=True,
)


def set_defaults(obj: AdvancedCronJob, inject_template_defaults: bool = True) -> None:
    """SetDefaultsAdvancedCronJob: Allow, not paused, keep 3 successful and 1 failed child.

    Only the pod template of the child gets defaults here; the child's own defaults (e.g. a
    BroadcastJob's parallelism) are applied when the controller creates it.
    """
    spec = obj.spec
    if inject_template_defaults:
        if spec.template.job_template is not None:
            job_spec = spec.template.job_template.setdefault("spec", {})
            default_pod_template(job_spec.setdefault("template", {}))
        if spec.template.broadcast_job_template is not None:
            default_pod_template(spec.template.broadcast_job_template.spec.template)
    if not spec.concurrency_policy:
        spec.concurrency_policy = CONCURRENCY_ALLOW
    if spec.paused is None:
        spec.paused = False
    if spec.successful_jobs_history_limit is None:
        spec.successful_jobs_history_limit = 3
    if spec.failed_jobs_history_limit is None:
        spec.failed_jobs_history_limit = 1


def template_kind(spec: AdvancedCronJobSpec) -> str | None:
    """Which child kind the cron job creates (what status.type reports)."""
    if spec.template.job_template is not None:
        return TEMPLATE_KIND_JOB
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
    """Exactly one child template, whose pod template passes core validation.

    The error path is `spec.template.spec...` for both kinds because upstream builds it that way.
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
    if count == 0:
        errs.append(
            forbidden(
                f"{path}.template",
                "spec must have one template, either JobTemplate or BroadcastJobTemplate should be provided",
            )
        )
    elif count > 1:
        errs.append(
            forbidden(
                f"{path}.template",
                "spec can have only one template, "
                "either JobTemplate or BroadcastJobTemplate should be provided",
            )
        )
    return errs


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
    """validateAdvancedCronJobUpdate: only scheduling knobs may change; the template is immutable."""
    errs = validate_spec(obj.spec)
    frozen_new = obj.spec.model_copy(update={f: getattr(old.spec, f) for f in UPDATABLE_SPEC_FIELDS})
    if frozen_new.model_dump(exclude_none=True) != old.spec.model_dump(exclude_none=True):
        errs.append(
            forbidden(
                "spec",
                "updates to advancedcronjob spec for fields other than 'schedule', 'concurrencyPolicy', "
                "'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', "
                "'timeZone' and 'paused' are forbidden",
            )
        )
    return errs
