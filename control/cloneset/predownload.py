"""Image pre-download for in-place updates (gates KruiseDaemon + PreDownloadImageForInPlaceUpdate).

When a CloneSet starts rolling an in-place-capable revision in several batches, one ImagePullJob
per changed container warms the new image on the nodes of pods that are not updated yet. The
decision is recorded on the update revision with a label so it is taken only once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.api.common import scaled_value
from kruise.api.keys import (
    ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
    ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM,
    ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
    LABEL_CONTROLLER_HASH,
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_IMAGE_PREDOWNLOAD_IGNORED,
    LABEL_PRE_PREDOWNLOAD_CREATED,
)
from kruise.api.workload_common import UPDATE_TYPE_RECREATE
from kruise.control.cloneset.pods import controller_ref
from kruise.control.cloneset.strategy import DEFAULT_MAX_UNAVAILABLE, partition_replicas
from kruise.control.inplace.spec import calculate_update_spec, template_of

# Only CloneSets with more replicas than this pre-download (avoids useless pulls for tiny sets).
MIN_REPLICAS_TO_PREDOWNLOAD = 3
DEFAULT_TIMEOUT_SECONDS = 300


def _annotation(cloneset: Mapping[str, Any], key: str) -> str | None:
    return ((cloneset.get("metadata") or {}).get("annotations") or {}).get(key)


def _int_or_string(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def min_updated_ready_pods(cloneset: Mapping[str, Any]) -> int:
    """Updated-ready pods required before pre-downloading (annotation, int or percent, rounds up)."""
    raw = _annotation(cloneset, ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS)
    replicas = int((cloneset.get("spec") or {}).get("replicas") or 0)
    return 0 if raw is None else scaled_value(_int_or_string(raw), replicas, round_up=True)


def should_consider(cloneset: Mapping[str, Any], current_revision: str, update_revision: str) -> bool:
    """The controller looks at pre-download only mid-rollout and once enough updated pods are
    ready (status counts only when they refer to this update revision)."""
    if current_revision == update_revision:
        return False
    status = cloneset.get("status") or {}
    ready = (
        int(status.get("updatedReadyReplicas") or 0) if status.get("updateRevision") == update_revision else 0
    )
    return min_updated_ready_pods(cloneset) <= ready


def decision(
    cloneset: Mapping[str, Any], current: Mapping[str, Any], update: Mapping[str, Any]
) -> str | None:
    """``None`` (already decided), ``LABEL_IMAGE_PREDOWNLOAD_IGNORED`` or ``LABEL_PRE_PREDOWNLOAD_CREATED``:
    the label to put on the update revision (after creating the jobs for the latter)."""
    labels = (update.get("metadata") or {}).get("labels") or {}
    if LABEL_PRE_PREDOWNLOAD_CREATED in labels or LABEL_IMAGE_PREDOWNLOAD_IGNORED in labels:
        return None
    spec = cloneset.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    replicas = int(spec.get("replicas") or 0)
    if (
        strategy.get("type") or UPDATE_TYPE_RECREATE
    ) == UPDATE_TYPE_RECREATE or replicas <= MIN_REPLICAS_TO_PREDOWNLOAD:
        return LABEL_IMAGE_PREDOWNLOAD_IGNORED
    partition = partition_replicas(strategy.get("partition"), replicas)
    unavailable = strategy.get("maxUnavailable")
    max_unavailable = scaled_value(
        DEFAULT_MAX_UNAVAILABLE if unavailable is None else unavailable, replicas, False
    )
    if partition == 0 and max_unavailable >= replicas:
        return LABEL_IMAGE_PREDOWNLOAD_IGNORED
    if calculate_update_spec(current, update) is None:
        return LABEL_IMAGE_PREDOWNLOAD_IGNORED
    return LABEL_PRE_PREDOWNLOAD_CREATED


def changed_images(current: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, str]:
    """Container name -> new image, for containers new or changed in the update revision."""
    old = {
        c["name"]: c.get("image") for c in (template_of(current).get("spec") or {}).get("containers") or []
    }
    return {
        c["name"]: c.get("image", "")
        for c in (template_of(update).get("spec") or {}).get("containers") or []
        if old.get(c["name"]) != c.get("image") or c["name"] not in old
    }


def image_pull_jobs(
    cloneset: Mapping[str, Any], current: Mapping[str, Any], update: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One ImagePullJob per changed container, named ``<updateRevision>-<container>``."""
    meta, spec = cloneset["metadata"], cloneset["spec"]
    template = spec.get("template") or {}
    update_meta = update["metadata"]
    revision_hash = (update_meta.get("labels") or {}).get(LABEL_CONTROLLER_HASH, "")
    selector = copy.deepcopy(dict(spec.get("selector") or {}))
    selector["matchExpressions"] = [
        *(selector.get("matchExpressions") or []),
        {
            "key": LABEL_CONTROLLER_REVISION_HASH,
            "operator": "NotIn",
            "values": [update_meta["name"], revision_hash],
        },
    ]
    labels = {**((template.get("metadata") or {}).get("labels") or {}), LABEL_CONTROLLER_HASH: revision_hash}
    annotations = dict((template.get("metadata") or {}).get("annotations") or {})
    raw_parallelism = _annotation(cloneset, ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM)
    raw_timeout = _annotation(cloneset, ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS)
    pull_secrets = [s["name"] for s in (template.get("spec") or {}).get("imagePullSecrets") or []]
    jobs = []
    for container, image in sorted(changed_images(current, update).items()):
        job_spec: dict[str, Any] = {
            "image": image,
            "podSelector": selector,
            "parallelism": 1 if raw_parallelism is None else _int_or_string(raw_parallelism),
            "pullPolicy": {
                "backoffLimit": 1,
                "timeoutSeconds": DEFAULT_TIMEOUT_SECONDS if raw_timeout is None else int(raw_timeout),
            },
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 600},
            "sandboxConfig": {"labels": labels, "annotations": annotations},
        }
        if pull_secrets:
            job_spec["pullSecrets"] = pull_secrets
        job_meta: dict[str, Any] = {
            "name": f"{update_meta['name']}-{container}",
            "labels": labels,
            "ownerReferences": [controller_ref(cloneset)],
        }
        if meta.get("namespace"):
            job_meta["namespace"] = meta["namespace"]
        jobs.append(
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "ImagePullJob",
                "metadata": job_meta,
                "spec": job_spec,
            }
        )
    return jobs


def created_event_message(job_name: str, image: str) -> str:
    return f"created ImagePullJob {job_name} for image: {image}"
