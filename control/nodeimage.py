"""Which tags a NodeImage's spec should drop, and when to look again (pure).

Upstream's nodeimage-controller keeps every NodeImage spec tidy; a tag leaves `spec.images` when

- it has no `createdAt` (the defaulting webhook stamps it, so someone bypassed the webhook);
- every ImagePullJob that owned it is gone (deleted, or replaced by a job of the same name with
  another uid); owners of other kinds are kept as they are;
- its pull finished — the status tag of the same `version` has a `completionTime` — and
  `pullPolicy.ttlSecondsAfterFinished` has elapsed since then.

An image whose tags are all gone leaves the spec too, and the remaining tags are sorted by name.
For tags still waiting out their TTL the plan says how long until the first expires, so the
controller comes back exactly then instead of polling; a wait under `MIN_REQUEUE_SECONDS` is
raised to it, as upstream does, so a burst of nearly-due tags costs one pass.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.api.timestamps import parse_rfc3339

Obj = Mapping[str, Any]
MIN_REQUEUE_SECONDS = 3.0
JOB_GROUP = "apps.kruise.io"
JOB_KIND = "ImagePullJob"

# (namespace, name) -> uid of the ImagePullJob there now, or None when there is none.
JobLookup = Callable[[str, str], str | None]


@dataclass
class SpecPlan:
    """`spec` is the NodeImage spec to write, or None when nothing changes. `reasons` say why, one
    line per change (for the log); `requeue_after` is when a TTL next runs out (None: no TTL waits)."""

    spec: dict[str, Any] | None = None
    reasons: list[str] = field(default_factory=list)
    requeue_after: float | None = None

    def wait(self, seconds: float) -> None:
        if self.requeue_after is None or seconds < self.requeue_after:
            self.requeue_after = seconds


def completion_time(node_image: Obj, image: str, tag: str, version: int) -> datetime | None:
    """When the daemon finished the tag at this version, per the status; None while it has not."""
    statuses = (((node_image.get("status") or {}).get("imageStatuses") or {}).get(image) or {}).get("tags")
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
    ttl = (tag.get("pullPolicy") or {}).get("ttlSecondsAfterFinished")
    if ttl is None:
        return None
    finished = completion_time(node_image, image, tag.get("tag", ""), int(tag.get("version") or 0))
    if finished is None:
        return None
    return float(ttl) - (now - finished).total_seconds()


def prune_spec(node_image: Obj, now: datetime, job_uid: JobLookup) -> SpecPlan:
    """Plan the NodeImage's spec clean-up at `now` (see the module docstring)."""
    plan = SpecPlan()
    images: dict[str, Any] = {}
    changed = False
    for name, image in ((node_image.get("spec") or {}).get("images") or {}).items():
        tags = []
        for tag in image.get("tags") or []:
            full = f"{name}:{tag.get('tag', '')}"
            if not tag.get("createdAt"):
                changed = True
                plan.reasons.append(f"image {full} has no createdAt field")
                continue
            refs = list(tag.get("ownerReferences") or [])
            owners = live_owners(refs, job_uid)
            if len(owners) != len(refs):
                changed = True
                if not owners:
                    plan.reasons.append(f"image {full} owners are all gone")
                    continue
                plan.reasons.append(f"image {full} lost {len(refs) - len(owners)} owner(s)")
                tag = {**tag, "ownerReferences": owners}
            left = _ttl_left(node_image, name, tag, now)
            if left is not None and left <= 0:
                changed = True
                ttl = tag["pullPolicy"]["ttlSecondsAfterFinished"]
                plan.reasons.append(f"image {full} has exceeded TTL ({ttl})s since it completed")
                continue
            if left is not None:
                plan.wait(max(left, MIN_REQUEUE_SECONDS))
            tags.append(tag)
        if tags:
            images[name] = {**image, "tags": sorted(tags, key=lambda t: t.get("tag", ""))}
        else:
            changed = True
            plan.reasons.append(f"no longer has {name} image spec")
    if changed:
        spec = copy.deepcopy(dict(node_image.get("spec") or {}))
        spec["images"] = copy.deepcopy(images)
        plan.spec = spec
    return plan
