"""ImagePullJob planning over NodeImages (pure): which nodes, which are synced, what to add, status.

A job never pulls anything itself: it writes its image tag — with an owner reference to itself and
a bumped `version` — into the spec of each target node's NodeImage, at most `parallelism` nodes at a
time, and reads the result back from the NodeImage status that node's kruise-daemon writes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.api.common import LabelSelector, scaled_value
from kruise.api.objects import Obj, section, spec_of
from kruise.api.timestamps import rfc3339

DEFAULT_PARALLELISM = 1
DEFAULT_TIMEOUT_SECONDS = 600
DEFAULT_BACKOFF_LIMIT = 3
TTL_MARGIN_SECONDS = 300  # how long a finished tag stays in the NodeImage after the job's own window
TTL_FOR_NEVER_SECONDS = 24 * 3600
ACTIVE_DEADLINE_FOR_NEVER_SECONDS = 1800


def split_image(image: str) -> tuple[str, str]:
    """`name:tag` (a digest stays part of the name); the tag defaults to `latest`."""
    if "@" in image:
        return image, ""
    name, sep, tag = image.rpartition(":")
    if not sep or "/" in tag:
        return image, "latest"
    return name, tag


def owner_ref(job: Obj) -> dict[str, Any]:
    meta = job["metadata"]
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "name": meta["name"],
        "namespace": meta.get("namespace"),
        "uid": meta.get("uid"),
    }


def _spec(job: Obj) -> Mapping[str, Any]:
    return job.get("spec") or {}


def is_never(job: Obj) -> bool:
    return (section(_spec(job), "completionPolicy").get("type") or "Always") == "Never"


def tag_pull_policy(job: Obj) -> dict[str, Any]:
    """The tag's pullPolicy in the NodeImage: the job's timeout/backoff plus how long the finished tag
    stays (the job's TTL or deadline or worst-case pull time, plus a margin)."""
    spec = _spec(job)
    pull = spec.get("pullPolicy") or {}
    completion = spec.get("completionPolicy") or {}
    timeout = int(pull.get("timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS)
    backoff = int(pull.get("backoffLimit") if pull.get("backoffLimit") is not None else DEFAULT_BACKOFF_LIMIT)
    policy: dict[str, Any] = {"timeoutSeconds": timeout, "backoffLimit": backoff}
    if is_never(job):
        policy["ttlSecondsAfterFinished"] = TTL_FOR_NEVER_SECONDS
        policy["activeDeadlineSeconds"] = max(timeout, ACTIVE_DEADLINE_FOR_NEVER_SECONDS)
        return policy
    if completion.get("ttlSecondsAfterFinished") is not None:
        window = int(completion["ttlSecondsAfterFinished"])
    elif completion.get("activeDeadlineSeconds") is not None:
        window = int(completion["activeDeadlineSeconds"])
    else:
        window = timeout * max(backoff, 1)
    policy["ttlSecondsAfterFinished"] = window + TTL_MARGIN_SECONDS
    if completion.get("activeDeadlineSeconds") is not None:
        policy["activeDeadlineSeconds"] = int(completion["activeDeadlineSeconds"])
    return policy


def target_nodes(job: Obj, node_images: Iterable[Obj], pods: Iterable[Obj]) -> list[str]:
    """Names of the NodeImages the job pulls on: `selector.names`, else `selector` labels, else the nodes
    of pods matching `podSelector` in the job's namespace, else every node."""
    spec = _spec(job)
    images = {n["metadata"]["name"]: n for n in node_images}
    selector = spec.get("selector")
    if spec.get("podSelector"):
        match = LabelSelector.model_validate(spec["podSelector"])
        namespace = job["metadata"].get("namespace")
        nodes = {
            spec_of(p).get("nodeName")
            for p in pods
            if p["metadata"].get("namespace") == namespace
            and not p["metadata"].get("deletionTimestamp")
            and match.matches(section(p["metadata"], "labels"))
        }
        return sorted(n for n in nodes if n and n in images)
    if selector and selector.get("names"):
        return sorted(n for n in selector["names"] if n in images)
    if selector:
        labels = {k: v for k, v in selector.items() if k != "names"}
        match = LabelSelector.model_validate(labels)
        return sorted(name for name, n in images.items() if match.matches(section(n["metadata"], "labels")))
    return sorted(images)


def _tag_spec(node_image: Obj, name: str, tag: str) -> Mapping[str, Any] | None:
    image = section(node_image, "spec", "images").get(name) or {}
    return next((t for t in image.get("tags") or [] if t.get("tag") == tag), None)


def _owned(tag_spec: Mapping[str, Any] | None, uid: str) -> bool:
    return tag_spec is not None and any(r.get("uid") == uid for r in tag_spec.get("ownerReferences") or [])


def node_phase(job: Obj, node_image: Obj) -> str | None:
    """None when the job's tag is not (yet) in this NodeImage; else Succeeded, Failed or Pulling."""
    name, tag = split_image(_spec(job)["image"])
    spec_tag = _tag_spec(node_image, name, tag)
    if not _owned(spec_tag, job["metadata"].get("uid", "")):
        return None
    version = int((spec_tag or {}).get("version") or 0)
    statuses = ((section(node_image, "status", "imageStatuses").get(name)) or {}).get("tags") or []
    status = next(
        (s for s in statuses if s.get("tag") == tag and int(s.get("version") or 0) == version), None
    )
    if status is None or status.get("phase") not in ("Succeeded", "Failed"):
        return "Pulling"
    return status["phase"]


def missing_secrets(job: Obj, node_image: Obj, secrets: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """The job's pull secret references not yet in the NodeImage's entry for its image (matched by
    namespace and name, as upstream)."""
    name, _tag = split_image(_spec(job)["image"])
    image = section(node_image, "spec", "images").get(name) or {}
    known = {(s.get("namespace"), s.get("name")) for s in image.get("pullSecrets") or []}
    return [dict(s) for s in secrets if (s["namespace"], s["name"]) not in known]


def with_job(
    job: Obj, node_image: Obj, secrets: list[dict[str, str]], now: datetime
) -> dict[str, Any] | None:
    """The NodeImage spec with the job's tag and pull secret references added (or, for a tag other
    jobs own, the job added as an owner and the version bumped so the daemon pulls again; for a tag
    the job owns already, only its missing references), or None when all is there."""
    spec = _spec(job)
    name, tag = split_image(spec["image"])
    uid = job["metadata"].get("uid", "")
    extra = missing_secrets(job, node_image, secrets)
    updated = copy.deepcopy(dict(spec_of(node_image)))
    images = updated.setdefault("images", {})
    image = images.setdefault(name, {})
    tags = image.setdefault("tags", [])
    existing = next((t for t in tags if t.get("tag") == tag), None)
    if extra:
        image["pullSecrets"] = [*(image.get("pullSecrets") or []), *extra]
    if _owned(existing, uid):
        return updated if extra else None
    if spec.get("sandboxConfig"):
        image["sandboxConfig"] = spec["sandboxConfig"]
    entry = {
        "tag": tag,
        "createdAt": rfc3339(now),
        "pullPolicy": tag_pull_policy(job),
        "imagePullPolicy": spec.get("imagePullPolicy") or "IfNotPresent",
    }
    if existing is None:
        tags.append({**entry, "ownerReferences": [owner_ref(job)], "version": 0})
    else:
        existing.update(entry)
        existing["ownerReferences"] = [*(existing.get("ownerReferences") or []), owner_ref(job)]
        existing["version"] = int(existing.get("version") or 0) + 1
    return updated


@dataclass
class JobProgress:
    desired: int = 0
    active: int = 0
    succeeded: int = 0
    failed_nodes: list[str] = field(default_factory=list)
    not_synced: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len(self.failed_nodes)


def progress(
    job: Obj, targets: list[str], node_images: Mapping[str, Obj], secrets: Iterable[Mapping[str, str]] = ()
) -> JobProgress:
    """Phases per target node; a node whose NodeImage lacks one of the job's pull secret references is
    also not synced (it is counted by its phase too, as upstream does)."""
    result = JobProgress(desired=len(targets))
    secrets = list(secrets)
    for node in targets:
        phase = node_phase(job, node_images[node])
        if phase is not None and secrets and missing_secrets(job, node_images[node], secrets):
            result.not_synced.append(node)
        if phase is None:
            result.not_synced.append(node)
        elif phase == "Succeeded":
            result.succeeded += 1
        elif phase == "Failed":
            result.failed_nodes.append(node)
        else:
            result.active += 1
    return result


def parallelism(job: Obj, desired: int) -> int:
    value = _spec(job).get("parallelism")
    return DEFAULT_PARALLELISM if value is None else scaled_value(value, desired, round_up=False)


def job_status(job: Obj, result: JobProgress, now: datetime, started: str | None) -> dict[str, Any]:
    status: dict[str, Any] = {
        "startTime": started or rfc3339(now),
        "desired": result.desired,
        "active": result.active,
        "succeeded": result.succeeded,
        "failed": result.failed,
    }
    if result.failed_nodes:
        status["failedNodes"] = sorted(result.failed_nodes)
    done = result.succeeded + result.failed
    if not is_never(job) and result.desired - done == 0:
        status["completionTime"] = rfc3339(now)
        status["message"] = "job has completed"
    elif result.desired == 0 or done == 0:
        status["message"] = "job is running, no progress"
    else:
        status["message"] = f"job is running, progress {100.0 * done / result.desired:.1f}%"
    return status
