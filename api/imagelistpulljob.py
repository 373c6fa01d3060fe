"""ImageListPullJob (apps.kruise.io/v1alpha1): pre-pull a list of images, one ImagePullJob per image."""

from __future__ import annotations

from typing import Literal

from kruise.api.common import Int32, KruiseModel, KruiseObject, Time
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.imagepulljob import (
    ImagePullJobTemplate,
    completion_type_errors,
    image_errors,
    set_defaults_pull_policy,
    validate_selectors,
)
from kruise.api.validation import FieldError, invalid, required

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "ImageListPullJob"

MAX_IMAGES = 255


class ImageListPullJobSpec(ImagePullJobTemplate):
    images: list[str]
    """The images to pull (at most 255, no duplicates); each gets its own ImagePullJob that shares the
    rest of this spec."""


class FailedImageStatus(KruiseModel):
    image_pull_job: str | None = None
    """Name of the ImagePullJob that had failed nodes."""
    name: str | None = None
    """The image that failed."""
    message: str | None = None
    """A short, human-readable summary of that job's state."""


class ImageListPullJobStatus(KruiseModel):
    start_time: Time | None = None
    """When the controller first acted on the job."""
    completion_time: Time | None = None
    """When the job finished."""
    desired: Int32 = 0
    """Number of images, that is of ImagePullJobs, to run."""
    active: Int32 = 0
    """Number of ImagePullJobs still running."""
    completed: Int32 = 0
    """Number of ImagePullJobs that finished."""
    succeeded: Int32 = 0
    """Number of ImagePullJobs that finished with every desired node succeeded."""
    failed_image_statuses: list[FailedImageStatus] | None = None
    """The ImagePullJobs that have failed nodes, one entry per image."""


class ImageListPullJob(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["ImageListPullJob"] | None = None
    spec: ImageListPullJobSpec
    """Desired state of the ImageListPullJob."""
    status: ImageListPullJobStatus | None = None
    """Observed state of the ImageListPullJob, written by kruise-manager."""


class ImageListPullJobV1beta1(ImageListPullJob):
    """The v1beta1 (storage) form: the same shape as v1alpha1."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None  # type: ignore[assignment]


_COLUMNS = (
    PrinterColumn("TOTAL", "integer", ".status.desired", description="Number of image pull job"),
    PrinterColumn(
        "SUCCEEDED",
        "integer",
        ".status.succeeded",
        description="Number of image pull job succeeded",
    ),
    PrinterColumn(
        "COMPLETED",
        "integer",
        ".status.completed",
        description="Number of ImagePullJobs which are finished",
    ),
    age_column(),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="imagelistpulljobs",
    description="ImageListPullJob pre-pulls a list of images onto a set of nodes by running one "
    "ImagePullJob per image.",
    versions=(
        CRDVersion(VERSION, ImageListPullJob, storage=True, printer_columns=_COLUMNS),
        CRDVersion("v1beta1", ImageListPullJobV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


def set_defaults(obj: ImageListPullJob) -> None:
    """SetDefaultsImageListPullJob: Always, timeout 600s, 3 retries (imagePullPolicy stays per child)."""
    set_defaults_pull_policy(obj.spec)


def validate(obj: ImageListPullJob) -> list[FieldError]:
    """The validating webhook's `validate`: first problem only, with upstream's message as detail."""
    spec = obj.spec
    errs = validate_selectors(spec, "spec")
    if errs:
        return errs
    if len(spec.images) == 0:
        return [required("spec.images", "image can not be empty")]
    seen: set[str] = set()
    for i, image in enumerate(spec.images):
        if image in seen:
            return [invalid(f"spec.images[{i}]", image, "images cannot have duplicate values")]
        seen.add(image)
    if len(spec.images) > MAX_IMAGES:
        return [
            invalid("spec.images", len(spec.images), f"the maximum number of images cannot > {MAX_IMAGES}")
        ]
    for i, image in enumerate(spec.images):
        errs = image_errors(image, f"spec.images[{i}]")
        if errs:
            return errs
    return completion_type_errors(spec.completion_policy, "spec.completionPolicy")
