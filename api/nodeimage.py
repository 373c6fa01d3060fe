"""NodeImage (apps.kruise.io/v1alpha1, cluster-scoped): the images kruise-daemon keeps pulled on one node.

One object per node, named after it; ImagePullJobs add tags here and kruise-daemon reports progress
in status.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field

from kruise.api.common import Int32, Int64, KruiseModel, KruiseObject, Time
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.imagepulljob import DEFAULT_PULL_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS, SandboxConfig
from kruise.api.timestamps import rfc3339
from kruise.api.validation import FieldError, duplicate, invalid, required

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "NodeImage"

MAX_IMAGES_PER_NODE = 256

PHASE_WAITING = "Waiting"
PHASE_PULLING = "Pulling"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"

SYNC_SUCCEEDED = "Succeeded"
SYNC_FAILED = "Failed"


class ReferenceObject(KruiseModel):
    namespace: str | None = None
    name: str | None = None


class ImageTagPullPolicy(KruiseModel):
    timeout_seconds: Int32 | None = None
    backoff_limit: Int32 | None = None
    ttl_seconds_after_finished: Int32 | None = Field(default=None, alias="ttlSecondsAfterFinished")
    active_deadline_seconds: Int64 | None = None


class ObjectReference(KruiseModel):
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class ImageTagSpec(KruiseModel):
    tag: str
    created_at: Time | None = None
    pull_policy: ImageTagPullPolicy | None = None
    owner_references: list[ObjectReference] | None = None
    version: Int64 | None = None
    image_pull_policy: str | None = None


class ImageSpec(KruiseModel):
    pull_secrets: list[ReferenceObject] | None = None
    tags: list[ImageTagSpec] = Field(default_factory=list)
    sandbox_config: SandboxConfig | None = None


class NodeImageSpec(KruiseModel):
    images: dict[str, ImageSpec] | None = None


class ImageTagStatus(KruiseModel):
    tag: str
    phase: str
    progress: Int32 | None = None
    start_time: Time | None = None
    completion_time: Time | None = None
    version: Int64 | None = None
    image_id: str | None = Field(default=None, alias="imageID")
    message: str | None = None


class ImageStatus(KruiseModel):
    tags: list[ImageTagStatus] = Field(default_factory=list)


class SyncStatus(KruiseModel):
    sync_at: Time | None = None
    status: str | None = None
    message: str | None = None


class NodeImageStatus(KruiseModel):
    desired: Int32 = 0
    succeeded: Int32 = 0
    failed: Int32 = 0
    pulling: Int32 = 0
    waiting: Int32 = 0
    image_statuses: dict[str, ImageStatus] | None = None
    first_sync_status: SyncStatus | None = None


class NodeImage(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["NodeImage"] | None = None
    spec: NodeImageSpec = Field(default_factory=NodeImageSpec)
    status: NodeImageStatus | None = None


class ReferenceObjectV1beta1(ReferenceObject):
    """v1beta1 adds `mode`: `batch` syncs the secret once for all pull jobs rather than per job."""

    mode: str | None = None


class ImageSpecV1beta1(ImageSpec):
    pull_secrets: list[ReferenceObjectV1beta1] | None = None  # type: ignore[assignment]


class NodeImageSpecV1beta1(KruiseModel):
    images: dict[str, ImageSpecV1beta1] | None = None


class NodeImageV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["NodeImage"] | None = None
    spec: NodeImageSpecV1beta1 = Field(default_factory=NodeImageSpecV1beta1)
    status: NodeImageStatus | None = None


_COLUMNS = (
    PrinterColumn("DESIRED", "integer", ".status.desired", description="Number of all images on this node"),
    PrinterColumn("PULLING", "integer", ".status.pulling", description="Number of image pull task active"),
    PrinterColumn(
        "SUCCEED",
        "integer",
        ".status.succeeded",
        description="Number of image pull task succeeded",
    ),
    PrinterColumn("FAILED", "integer", ".status.failed", description="Number of image pull tasks failed"),
    age_column(),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="nodeimages",
    scope="Cluster",
    versions=(
        CRDVersion(VERSION, NodeImage, storage=True, printer_columns=_COLUMNS),
        CRDVersion("v1beta1", NodeImageV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


def set_defaults(obj: NodeImage, now: str | None = None) -> None:
    """SetDefaultsNodeImage: stamp createdAt and fill per-tag pull policy defaults (600s, 3 retries)."""
    stamp = now or rfc3339(datetime.now(UTC))
    for image in (obj.spec.images or {}).values():
        for tag in image.tags:
            if tag.created_at is None:
                tag.created_at = stamp
            if tag.pull_policy is None:
                tag.pull_policy = ImageTagPullPolicy()
            if tag.pull_policy.timeout_seconds is None:
                tag.pull_policy.timeout_seconds = DEFAULT_PULL_TIMEOUT_SECONDS
            if tag.pull_policy.backoff_limit is None:
                tag.pull_policy.backoff_limit = DEFAULT_PULL_BACKOFF_LIMIT


def validate(obj: NodeImage) -> list[FieldError]:
    """The validating webhook's `validate`: first problem only, with upstream's message as detail.

    Runs after defaulting, so a missing createdAt/pullPolicy means a client bypassed the defaults.
    """
    images = obj.spec.images or {}
    if len(images) > MAX_IMAGES_PER_NODE:
        return [
            invalid(
                "spec.images",
                len(images),
                f"spec images length {len(images)} can not be more than {MAX_IMAGES_PER_NODE}",
            )
        ]
    for name, image in images.items():
        path = f"spec.images[{name}]"
        if len(name) == 0:
            return [required(path, "image name can not be empty")]
        seen: set[str] = set()
        for i, tag in enumerate(image.tags):
            tpath = f"{path}.tags[{i}]"
            if len(tag.tag) == 0:
                return [required(f"{tpath}.tag", f"tag for image {name} can not be empty")]
            if tag.tag in seen:
                return [duplicate(f"{tpath}.tag", tag.tag)]
            seen.add(tag.tag)
            full_name = f"{name}/{tag.tag}"
            if tag.created_at is None:
                return [required(f"{tpath}.createdAt", f"createAt field for {full_name} can not be empty")]
            if tag.version is not None and tag.version < 0:
                return [
                    invalid(
                        f"{tpath}.version", tag.version, f"version for {full_name} can not be less than 0"
                    )
                ]
            if tag.pull_policy is None:
                return [required(f"{tpath}.pullPolicy", f"pullPolicy field for {full_name} must set")]
            if tag.pull_policy.ttl_seconds_after_finished is None:
                return [
                    required(
                        f"{tpath}.pullPolicy.ttlSecondsAfterFinished",
                        f"pullPolicy.ttlSecondsAfterFinished for {full_name} must set",
                    )
                ]
    return []
