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
    """Namespace of the secret."""
    name: str | None = None
    """Name of the secret."""


class ImageTagPullPolicy(KruiseModel):
    timeout_seconds: Int32 | None = None
    """Seconds one pull attempt may take before it is abandoned. Default 600."""
    backoff_limit: Int32 | None = None
    """Times a failed pull is retried before the tag counts as failed. Default 3."""
    ttl_seconds_after_finished: Int32 | None = Field(default=None, alias="ttlSecondsAfterFinished")
    """Seconds after the pull finishes (succeeded or failed) before the tag's entry is removed; 0 removes
    it as soon as it finishes. Unset keeps it."""
    active_deadline_seconds: Int64 | None = None
    """Seconds from the pull's start after which it is stopped; must be positive. Unset means no deadline."""


class ObjectReference(KruiseModel):
    api_version: str | None = None
    """API version of the owner."""
    kind: str | None = None
    """Kind of the owner, e.g. ImagePullJob."""
    name: str | None = None
    """Name of the owner."""
    namespace: str | None = None
    """Namespace of the owner."""
    uid: str | None = None
    """UID of the owner."""
    resource_version: str | None = None
    """The owner's resourceVersion when the reference was made."""
    field_path: str | None = None
    """A part of the owner the reference is about, if not the whole object."""


class ImageTagSpec(KruiseModel):
    tag: str
    """The tag (or digest) to pull."""
    created_at: Time | None = None
    """When this tag was asked for."""
    pull_policy: ImageTagPullPolicy | None = None
    """Timeout, retries and lifetime of this tag's pull. Unset uses the defaults."""
    owner_references: list[ObjectReference] | None = None
    """The objects (usually ImagePullJobs) that asked for this tag; the tag is removed once none is left."""
    version: Int64 | None = None
    """Internal version of this tag's request, bumped when it changes so kruise-daemon pulls again; set by
    the system, read-only."""
    image_pull_policy: str | None = None
    """Always pulls even when the node has the image; IfNotPresent (the default) does not pull an image
    the node has."""


class ImageSpec(KruiseModel):
    pull_secrets: list[ReferenceObject] | None = None
    """Secrets (namespace and name) with registry credentials for pulling this image."""
    tags: list[ImageTagSpec] = Field(default_factory=list)
    """The tags of this image to pull."""
    sandbox_config: SandboxConfig | None = None
    """Metadata passed with the pull to the container runtime, for runtimes or proxies that need it."""


class NodeImageSpec(KruiseModel):
    images: dict[str, ImageSpec] | None = None
    """Images to keep pulled on this node, by image name without tag (e.g. docker.io/library/nginx); at
    most 256."""


class ImageTagStatus(KruiseModel):
    tag: str
    """The tag this status is about."""
    phase: str
    """Where the pull is: Waiting, Pulling, Succeeded or Failed."""
    progress: Int32 | None = None
    """Percentage (0 to 100) of the pull done; may go back when a pull is retried."""
    start_time: Time | None = None
    """When kruise-daemon started the pull."""
    completion_time: Time | None = None
    """When the pull finished."""
    version: Int64 | None = None
    """The version of the tag's request that kruise-daemon last handled."""
    image_id: str | None = Field(default=None, alias="imageID")
    """ID of the pulled image."""
    message: str | None = None
    """Details of the pull's state, for humans (e.g. why it failed)."""


class ImageStatus(KruiseModel):
    tags: list[ImageTagStatus] = Field(default_factory=list)
    """Pull status of each requested tag of the image."""


class SyncStatus(KruiseModel):
    sync_at: Time | None = None
    """When the node's first set of pulls finished."""
    status: str | None = None
    """How they ended: Succeeded (every one) or Failed (at least one)."""
    message: str | None = None
    """Details, for humans."""


class NodeImageStatus(KruiseModel):
    desired: Int32 = 0
    """Number of tags the spec asks for on this node."""
    succeeded: Int32 = 0
    """Number of tags pulled."""
    failed: Int32 = 0
    """Number of tags whose pull failed."""
    pulling: Int32 = 0
    """Number of tags being pulled now."""
    waiting: Int32 = 0
    """Number of tags whose pull has not started."""
    image_statuses: dict[str, ImageStatus] | None = None
    """Pull status per image name."""
    first_sync_status: SyncStatus | None = None
    """How the first pulls on this node ended, for systems waiting until a new node has its images."""


class NodeImage(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["NodeImage"] | None = None
    spec: NodeImageSpec = Field(default_factory=NodeImageSpec)
    """The images kruise-daemon should pull on this node."""
    status: NodeImageStatus | None = None
    """Pull progress, written by kruise-daemon on this node."""


class ReferenceObjectV1beta1(ReferenceObject):
    """v1beta1 adds `mode`: `batch` syncs the secret once for all pull jobs rather than per job."""

    mode: str | None = None
    """How the secret is synced to kruise-daemon: batch syncs it once for every pull job that names it
    (and it is cleaned up with the image entry); unset syncs it per job."""


class ImageSpecV1beta1(ImageSpec):
    pull_secrets: list[ReferenceObjectV1beta1] | None = None  # type: ignore[assignment]
    """Secrets (namespace and name) with registry credentials for pulling this image."""


class NodeImageSpecV1beta1(KruiseModel):
    images: dict[str, ImageSpecV1beta1] | None = None
    """Images to keep pulled on this node, by image name without tag (e.g. docker.io/library/nginx); at
    most 256."""


class NodeImageV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["NodeImage"] | None = None
    spec: NodeImageSpecV1beta1 = Field(default_factory=NodeImageSpecV1beta1)
    """The images kruise-daemon should pull on this node."""
    status: NodeImageStatus | None = None
    """Pull progress, written by kruise-daemon on this node."""


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
    description="NodeImage lists the images kruise-daemon should pull on one node (named after it) and "
    "reports their progress; kruise-manager keeps one per node, ImagePullJobs add to it.",
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
