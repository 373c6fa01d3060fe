"""What the nodeimage-controller changes in a NodeImage, and when to look again (pure).

Upstream's nodeimage-controller keeps every NodeImage spec tidy; a tag leaves `spec.images` when

- it has no `createdAt` (the defaulting webhook stamps it, so someone bypassed the webhook);
- every ImagePullJob that owned it is gone (deleted, or replaced by a job of the same name with
  another uid); owners of other kinds are kept as they are;
- its pull finished — the status tag of the same `version` has a `completionTime` — and
  `pullPolicy.ttlSecondsAfterFinished` has elapsed since then.

An image whose tags are all gone leaves the spec too, and the remaining tags are sorted by name.
An image's `pullSecrets` entry leaves when its Secret no longer exists, unless its `mode` is
`batch` (those are cleaned up with the image spec itself). `mode` exists at v1beta1 only; a reader
at v1alpha1 plans through `modes`, which finds the modes in the conversion-data annotation.

Only when the spec needs no change does the controller look at the status (`plan_status`): a
tag the daemon has not answered for `RESPONSE_TIMEOUT` (10 minutes) since `createdAt`, or one
still unfinished `activeDeadlineSeconds` + 10 minutes after it, is marked Failed by the manager.

Both plans say how long until their next deadline, so the controller comes back exactly then
instead of polling; `requeue_delay` turns a wait under `MIN_REQUEUE_SECONDS` into 3-5 s, as
upstream does, so a burst of nearly-due tags costs one pass.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.api.objects import Obj, section, spec_of, status_of
from kruise.api.timestamps import parse_rfc3339, rfc3339

MIN_REQUEUE_SECONDS = 3.0
REQUEUE_JITTER_MILLIS = 2000
RESPONSE_TIMEOUT = 600.0
NOT_RESPONDED = "node has not responded for a long time"
DEADLINE_EXCEEDED = "pulling exceeds the activeDeadlineSeconds"
BATCH_MODE = "batch"
JOB_GROUP = "apps.kruise.io"
JOB_KIND = "ImagePullJob"

# (namespace, name) -> uid of the ImagePullJob there now, or None when there is none.
JobLookup = Callable[[str, str], str | None]
# (namespace, name) -> whether that Secret exists.
SecretLookup = Callable[[str, str], bool]


@dataclass(frozen=True)
class SpecPlan:
    """`spec` is the NodeImage spec to write, or None when nothing changes. `reasons` say why, one
    line per change (for the log); `requeue_after` is when a TTL next runs out (None: no TTL waits),
    not yet raised to the minimum (see `requeue_delay`). `annotations` are the metadata annotations
    to write with the spec (None: as read); only `modes` sets them, to keep the v1beta1
    pull secret modes that ride in the conversion-data annotation consistent with the spec."""

    spec: dict[str, Any] | None = None
    reasons: list[str] = field(default_factory=list)
    requeue_after: float | None = None
    annotations: dict[str, str] | None = None


def completion_time(node_image: Obj, image: str, tag: str, version: int) -> datetime | None:
    """When the daemon finished the tag at this version, per the status; None while it has not."""
    statuses = section(node_image, "status", "imageStatuses", image).get("tags")
    for status in statuses or []:
        if status.get("tag") == tag and int(status.get("version") or 0) == version:
            raw = status.get("completionTime")
            return parse_rfc3339(raw) if raw else None
    return None


def _is_job(ref: Obj) -> bool:
    group = str(ref.get("apiVersion") or "").partition("/")[0]
    return group == JOB_GROUP and ref.get("kind") == JOB_KIND


def live_owners(refs: list[Obj], job_uid: JobLookup) -> list[Obj]:
    """The owner references still standing: ImagePullJobs that exist with the same uid, and every
    reference of another kind."""
    kept = []
    for ref in refs:
        if not _is_job(ref) or job_uid(ref.get("namespace") or "", ref.get("name") or "") == ref.get("uid"):
            kept.append(ref)
    return kept


def _ttl_left(node_image: Obj, image: str, tag: Obj, now: datetime) -> float | None:
    """Seconds until a finished tag's TTL runs out (<= 0: expired); None without TTL or finish."""
    ttl = section(tag, "pullPolicy").get("ttlSecondsAfterFinished")
    if ttl is None:
        return None
    finished = completion_time(node_image, image, tag.get("tag", ""), int(tag.get("version") or 0))
    if finished is None:
        return None
    return float(ttl) - (now - finished).total_seconds()


def live_pull_secrets(refs: list[Obj], secret_exists: SecretLookup) -> list[Obj]:
    """The pull secret references to keep: `batch` ones, and those whose Secret still exists."""
    return [
        ref
        for ref in refs
        if ref.get("mode") == BATCH_MODE or secret_exists(ref.get("namespace") or "", ref.get("name") or "")
    ]


def prune_spec(node_image: Obj, now: datetime, job_uid: JobLookup, secret_exists: SecretLookup) -> SpecPlan:
    """Plan the NodeImage's spec clean-up at `now` (see the module docstring)."""
    reasons: list[str] = []
    requeue_after: float | None = None
    images: dict[str, Any] = {}
    changed = False
    for name, image in section(node_image, "spec", "images").items():
        tags = []
        for tag in image.get("tags") or []:
            full = f"{name}:{tag.get('tag', '')}"
            if not tag.get("createdAt"):
                changed = True
                reasons.append(f"image {full} has no createdAt field")
                continue
            refs = list(tag.get("ownerReferences") or [])
            owners = live_owners(refs, job_uid)
            if len(owners) != len(refs):
                changed = True
                if not owners:
                    reasons.append(f"image {full} owners are all gone")
                    continue
                reasons.append(f"image {full} lost {len(refs) - len(owners)} owner(s)")
                tag = {**tag, "ownerReferences": owners}
            left = _ttl_left(node_image, name, tag, now)
            if left is not None and left <= 0:
                changed = True
                ttl = tag["pullPolicy"]["ttlSecondsAfterFinished"]
                reasons.append(f"image {full} has exceeded TTL ({ttl})s since it completed")
                continue
            requeue_after = _sooner(requeue_after, left)
            tags.append(tag)
        secrets = list(image.get("pullSecrets") or [])
        kept = live_pull_secrets(secrets, secret_exists)
        if len(kept) != len(secrets):
            changed = True
            reasons.append(f"image {name} lost {len(secrets) - len(kept)} pull secret(s)")
            image = {key: value for key, value in image.items() if key != "pullSecrets"}
            if kept:  # an emptied list is left out, as upstream's nil slice is
                image["pullSecrets"] = kept
        if tags:
            images[name] = {**image, "tags": sorted(tags, key=lambda t: t.get("tag", ""))}
        else:
            changed = True
            reasons.append(f"no longer has {name} image spec")
    spec = None
    if changed:
        spec = copy.deepcopy(dict(spec_of(node_image)))
        spec["images"] = copy.deepcopy(images)
    return SpecPlan(spec=spec, reasons=reasons, requeue_after=requeue_after)


@dataclass
class TagFailure:
    """A tag the manager has just marked Failed: `image` is `name:tag`, `message` why, `owners`
    the tag's owner references (each gets a PullImageFailed event, as does the NodeImage)."""

    image: str
    message: str
    owners: list[Obj]


@dataclass(frozen=True)
class StatusPlan:
    """`status` is the NodeImage status to write, or None when nothing changes; `requeue_after` is
    when the next response or deadline timeout falls due (None: nothing to wait for)."""

    status: dict[str, Any] | None = None
    failures: list[TagFailure] = field(default_factory=list)
    requeue_after: float | None = None


def _sooner(wait: float | None, seconds: float | None) -> float | None:
    """The nearer of two deadlines (None: no deadline; a past one is not waited for)."""
    if seconds is None or seconds <= 0:
        return wait
    return seconds if wait is None or seconds < wait else wait


def _mark_failed(status: dict[str, Any], version: int, message: str, now: datetime) -> None:
    status.update(phase="Failed", completionTime=rfc3339(now), version=version, message=message)


def _time_out_tag(
    failures: list[TagFailure], tags: list[dict[str, Any]], spec_tag: Obj, full: str, now: datetime
) -> float | None:
    """Mark one spec tag's status Failed if its response or deadline timeout has passed (adding
    to `failures`); else return the seconds until it will. `tags` is the image's (copied) status
    tag list, changed in place."""
    age = (now - parse_rfc3339(spec_tag["createdAt"])).total_seconds()
    version = int(spec_tag.get("version") or 0)
    status = next((t for t in tags if t.get("tag") == spec_tag.get("tag")), None)
    message = None
    if status is None or int(status.get("version") or 0) != version:
        if RESPONSE_TIMEOUT - age > 0:
            return RESPONSE_TIMEOUT - age
        if status is None:
            status = {"tag": spec_tag.get("tag")}
            tags.append(status)
        message = NOT_RESPONDED
        _mark_failed(status, version, message, now)
    deadline = section(spec_tag, "pullPolicy").get("activeDeadlineSeconds")
    if not status.get("completionTime") and deadline is not None:
        left = float(deadline) + RESPONSE_TIMEOUT - age
        if left > 0:
            return left
        message = DEADLINE_EXCEEDED
        _mark_failed(status, version, message, now)
    if message is not None:
        failures.append(TagFailure(full, message, list(spec_tag.get("ownerReferences") or [])))
    return None


def _counted(node_image: Obj, statuses: dict[str, Any], spec_names: set[str]) -> dict[str, Any]:
    """The status with image statuses cut down to the spec's tags and the phase counts redone."""
    status = copy.deepcopy(dict(status_of(node_image)))
    spec_images = spec_of(node_image).get("images") or {}
    counts = {"Succeeded": 0, "Pulling": 0, "Failed": 0}
    kept: dict[str, Any] = {}
    for name, image in statuses.items():
        if name not in spec_images:
            continue
        tags = [t for t in image.get("tags") or [] if f"{name}:{t.get('tag', '')}" in spec_names]
        for tag in tags:
            if tag.get("phase") in counts:
                counts[tag["phase"]] += 1
        if tags:
            kept[name] = {**image, "tags": tags}
    status.update(
        imageStatuses=kept,
        desired=len(spec_names),
        pulling=counts["Pulling"],
        succeeded=counts["Succeeded"],
        failed=counts["Failed"],
    )
    return status


def plan_status(node_image: Obj, now: datetime) -> StatusPlan:
    """Plan the manager's status write at `now`: tags the node has not answered for
    `RESPONSE_TIMEOUT` since `createdAt` (no status at the spec's version), and unfinished tags past
    `activeDeadlineSeconds` + `RESPONSE_TIMEOUT`, become Failed with `completionTime` now. When any
    image status changes (sorting by tag counts), the whole status is rewritten: entries no spec
    tag lists are dropped and desired/pulling/succeeded/failed are recounted."""
    failures: list[TagFailure] = []
    requeue_after: float | None = None
    old = (status_of(node_image).get("imageStatuses")) or None
    statuses: dict[str, Any] = copy.deepcopy(dict(old or {}))
    spec_names: set[str] = set()
    for name, image in section(node_image, "spec", "images").items():
        tags = list(section(statuses, name).get("tags") or [])
        for spec_tag in image.get("tags") or []:
            full = f"{name}:{spec_tag.get('tag', '')}"
            spec_names.add(full)
            if spec_tag.get("createdAt"):
                requeue_after = _sooner(requeue_after, _time_out_tag(failures, tags, spec_tag, full, now))
        if tags:
            statuses[name] = {
                **section(statuses, name),
                "tags": sorted(tags, key=lambda t: t.get("tag", "")),
            }
    status = None if statuses == dict(old or {}) else _counted(node_image, statuses, spec_names)
    return StatusPlan(status=status, failures=failures, requeue_after=requeue_after)


def requeue_delay(seconds: float | None, rng: random.Random) -> float | None:
    """When to come back for the nearest deadline: None without one; a wait under
    `MIN_REQUEUE_SECONDS` becomes 3 s plus 0-2 s of jitter (in whole milliseconds), as upstream's."""
    if seconds is None or seconds <= 0:
        return None
    if seconds < MIN_REQUEUE_SECONDS:
        return MIN_REQUEUE_SECONDS + rng.randrange(REQUEUE_JITTER_MILLIS) / 1000
    return seconds
