"""Image pre-download shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet (upstream's
``pkg/util/imagejob/utilfunction`` plus the parts the three ``*_predownload_image.go`` files repeat).

Each workload decides *whether* to pre-download in its own module (``kruise.control.<kind>.predownload``);
this module holds what is the same for all of them: the once-per-revision labels, which images changed,
the pull settings read from the workload's annotations, and the ImagePullJob objects themselves — one
per changed container, named ``<updateRevision>-<container>``, owned by the workload, selecting its pods
that are not on the update revision yet.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.api.common import IntOrStringError, scaled_value
from kruise.api.keys import (
    ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
    ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM,
    ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
    LABEL_CONTROLLER_HASH,
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_IMAGE_PREDOWNLOAD_IGNORED,
    LABEL_PRE_PREDOWNLOAD_CREATED,
)
from kruise.api.objects import Obj, annotations_of, labels_of, section, spec_of
from kruise.control.common.inplace.spec import template_of

# CloneSet and Advanced StatefulSet pre-download only with more replicas than this.
MIN_REPLICAS_TO_PREDOWNLOAD = 3
DEFAULT_TIMEOUT_SECONDS = 300
DEFAULT_PARALLELISM = 1
PULL_BACKOFF_LIMIT = 1
JOB_TTL_SECONDS_AFTER_FINISHED = 600
IMAGE_PULL_JOB_API_VERSION = "apps.kruise.io/v1alpha1"

CREATED = LABEL_PRE_PREDOWNLOAD_CREATED
IGNORED = LABEL_IMAGE_PREDOWNLOAD_IGNORED


@dataclass(frozen=True)
class PreDownloadPlan:
    """What one pass does about pre-download.

    ``delete_jobs``: the rollout converged, remove every ImagePullJob the workload owns.
    ``label``: ``CREATED`` or ``IGNORED``, to put on the update revision (after creating ``jobs``);
    ``None`` with no jobs means nothing to do this pass."""

    delete_jobs: bool = False
    label: str | None = None
    jobs: tuple[dict[str, Any], ...] = field(default_factory=tuple)


NOTHING = PreDownloadPlan()
DELETE_JOBS = PreDownloadPlan(delete_jobs=True)
IGNORE = PreDownloadPlan(label=IGNORED)


def annotation(owner: Obj, key: str) -> str | None:
    return annotations_of(owner).get(key)


def already_decided(update_revision: Obj) -> bool:
    """The decision is taken once per update revision; either label on it means it was."""
    labels = labels_of(update_revision)
    return CREATED in labels or IGNORED in labels


def parse_int_or_string(text: str) -> int | str:
    """``intstr.Parse``: a decimal integer becomes an int, anything else stays a string."""
    try:
        return int(text)
    except ValueError:
        return text


def min_updated_ready_pods(owner: Obj, total: int) -> int:
    """``apps.kruise.io/image-predownload-min-updated-ready-pods`` scaled against ``total`` (percent
    rounds up); absent or unparsable counts as 0, as upstream logs the error and goes on with 0."""
    raw = annotation(owner, ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS)
    if raw is None:
        return 0
    try:
        return scaled_value(parse_int_or_string(raw), total, round_up=True)
    except (IntOrStringError, ValueError):
        return 0


def enough_updated_ready(owner: Obj, update_revision_name: str, total: int) -> bool:
    """Whether enough pods of the update revision are ready: ``status.updatedReadyReplicas`` counts
    only when the status already refers to this update revision."""
    status = owner.get("status") or {}
    ready = 0
    if status.get("updateRevision") == update_revision_name:
        ready = int(status.get("updatedReadyReplicas") or 0)
    return min_updated_ready_pods(owner, total) <= ready


def changed_images(old_revisions: Sequence[Obj], update_revision: Obj) -> dict[str, str]:
    """Container name -> image of the update revision, for each container whose image differs from
    the same-named container of some old revision, or that no old revision has."""
    olds = [
        {c["name"]: c.get("image", "") for c in spec_of(template_of(r)).get("containers") or []}
        for r in old_revisions
    ]
    images: dict[str, str] = {}
    for container in spec_of(template_of(update_revision)).get("containers") or []:
        name, image = container["name"], container.get("image", "")
        known = [old[name] for old in olds if name in old]
        if not known or any(old_image != image for old_image in known):
            images[name] = image
    return images


@dataclass(frozen=True)
class PullSettings:
    parallelism: int | str = DEFAULT_PARALLELISM
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS


def annotation_pull_settings(owner: Obj, *, percent_parallelism: bool = False) -> PullSettings:
    """Parallelism and pull timeout from the ``apps.kruise.io/image-predownload-*`` annotations
    (``CreateJobForWorkload``): a value that is not an integer keeps the default. CloneSet also takes
    a percent parallelism (its v1beta1 field is an int-or-string the annotation round-trips)."""
    settings = PullSettings()
    raw_parallelism = annotation(owner, ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM)
    raw_timeout = annotation(owner, ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS)
    parallelism: int | str = settings.parallelism
    if raw_parallelism is not None:
        parsed = parse_int_or_string(raw_parallelism)
        if isinstance(parsed, int) or (percent_parallelism and parsed.endswith("%")):
            parallelism = parsed
    timeout = settings.timeout_seconds
    if raw_timeout is not None:
        parsed_timeout = parse_int_or_string(raw_timeout)
        if isinstance(parsed_timeout, int) and -(2**31) <= parsed_timeout < 2**31:
            timeout = parsed_timeout
    return PullSettings(parallelism, timeout)


def pods_not_updated_selector(owner: Obj, update_revision: Obj) -> dict[str, Any]:
    """The workload's selector plus ``controller-revision-hash NotIn [<revision name>, <its
    controller.kubernetes.io/hash label>]``: the pods still to be updated."""
    selector = copy.deepcopy(dict(section(owner, "spec", "selector")))
    meta = update_revision.get("metadata") or {}
    selector["matchExpressions"] = [
        *(selector.get("matchExpressions") or []),
        {
            "key": LABEL_CONTROLLER_REVISION_HASH,
            "operator": "NotIn",
            "values": [meta.get("name", ""), section(meta, "labels").get(LABEL_CONTROLLER_HASH, "")],
        },
    ]
    return selector


def image_pull_jobs(
    owner: Obj,
    owner_ref: Mapping[str, Any],
    update_revision: Obj,
    images: Mapping[str, str],
    settings: PullSettings,
) -> tuple[dict[str, Any], ...]:
    """One ImagePullJob per changed container. Its labels are the pod template's plus
    ``controller.kubernetes.io/hash`` of the update revision (whatever the workload owns carries
    its template labels); the sandbox gets the template's labels and annotations too."""
    meta = owner["metadata"]
    template = spec_of(owner).get("template") or {}
    template_meta = template.get("metadata") or {}
    revision_meta = update_revision["metadata"]
    labels = {
        **section(template_meta, "labels"),
        LABEL_CONTROLLER_HASH: section(revision_meta, "labels").get(LABEL_CONTROLLER_HASH, ""),
    }
    annotations = dict(section(template_meta, "annotations"))
    selector = pods_not_updated_selector(owner, update_revision)
    pull_secrets = [s["name"] for s in spec_of(template).get("imagePullSecrets") or []]
    jobs = []
    for container, image in sorted(images.items()):
        spec: dict[str, Any] = {
            "image": image,
            "podSelector": copy.deepcopy(selector),
            "parallelism": settings.parallelism,
            "pullPolicy": {"backoffLimit": PULL_BACKOFF_LIMIT, "timeoutSeconds": settings.timeout_seconds},
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": JOB_TTL_SECONDS_AFTER_FINISHED},
            "sandboxConfig": {"labels": dict(labels), "annotations": dict(annotations)},
        }
        if pull_secrets:
            spec["pullSecrets"] = list(pull_secrets)
        job_meta: dict[str, Any] = {
            "name": f"{revision_meta['name']}-{container}",
            "labels": dict(labels),
            "ownerReferences": [dict(owner_ref)],
        }
        if meta.get("namespace"):
            job_meta["namespace"] = meta["namespace"]
        jobs.append(
            {
                "apiVersion": IMAGE_PULL_JOB_API_VERSION,
                "kind": "ImagePullJob",
                "metadata": job_meta,
                "spec": spec,
            }
        )
    return tuple(jobs)


def created_event_message(job_name: str, image: str) -> str:
    return f"created ImagePullJob {job_name} for image: {image}"


def failed_event_message(job_name: str, error: object) -> str:
    return f"failed to create ImagePullJob {job_name}: {error}"
