"""An AdvancedCronJob's children (Jobs, BroadcastJobs or ImageListPullJobs): how they are read, named,
built and pruned.

A child remembers the activation it was started for in the `apps.kruise.io/scheduled-at`
annotation (RFC 3339); the latest of those is the cron job's `status.lastScheduleTime`, so the
schedule survives controller restarts without trusting the status. A child's name is
`<cron job>-<activation as Unix seconds>` (seconds, unlike Kubernetes' CronJob, which uses minutes),
which makes a second create for the same activation fail with AlreadyExists instead of running twice.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kruise.api.advancedcronjob import (
    KIND,
    TEMPLATE_KIND_BROADCASTJOB,
    TEMPLATE_KIND_IMAGELISTPULLJOB,
    TEMPLATE_KIND_JOB,
)
from kruise.api.controllerref import new_controller_ref
from kruise.api.keys import ANNOTATION_SCHEDULED_AT
from kruise.api.objects import Obj, annotations_of, conditions_of, meta_of, section, spec_of, status_of
from kruise.api.timestamps import go_format_rfc3339, go_parse_rfc3339

ACJ_API_VERSION = "apps.kruise.io/v1alpha1"
CHILD_API_VERSION = {
    TEMPLATE_KIND_JOB: "batch/v1",
    TEMPLATE_KIND_BROADCASTJOB: "apps.kruise.io/v1alpha1",
    TEMPLATE_KIND_IMAGELISTPULLJOB: "apps.kruise.io/v1alpha1",
}
"""The version children are created at: the served (storage) one. Upstream 1.9 creates its
BroadcastJobs and ImageListPullJobs at v1beta1, which is not served here yet."""
TEMPLATE_FIELD = {
    TEMPLATE_KIND_JOB: "jobTemplate",
    TEMPLATE_KIND_BROADCASTJOB: "broadcastJobTemplate",
    TEMPLATE_KIND_IMAGELISTPULLJOB: "imageListPullJobTemplate",
}


def scheduled_at(child: Obj) -> datetime | None:
    """The activation a child was started for; None when unannotated or unparsable (upstream skips it)."""
    annotations = annotations_of(child)
    raw = annotations.get(ANNOTATION_SCHEDULED_AT)
    if not raw:
        return None
    return go_parse_rfc3339(raw)


def child_name(acj_name: str, scheduled: datetime) -> str:
    """`<cron job name>-<activation in Unix seconds>`: deterministic, so one activation makes one child."""
    return f"{acj_name}-{int(scheduled.timestamp())}"


FINISHED_COMPLETE = "Complete"
FINISHED_FAILED = "Failed"


def finished_type(child: Obj, kind: str = TEMPLATE_KIND_JOB) -> str | None:
    """`Complete` or `Failed` once the child has finished; None while it runs.

    Jobs and BroadcastJobs report it through the first of these two condition types that is True.
    An ImageListPullJob has no such conditions: it has finished once `status.completionTime` is set,
    and it counts as complete only when every image succeeded (`succeeded == desired`), as upstream.
    """
    if kind == TEMPLATE_KIND_IMAGELISTPULLJOB:
        return _image_list_pull_job_finished(child)
    for condition in conditions_of(child):
        kind = condition.get("type")
        if kind in (FINISHED_COMPLETE, FINISHED_FAILED) and condition.get("status") == "True":
            return str(kind)
    return None


def _image_list_pull_job_finished(child: Obj) -> str | None:
    status = child.get("status") or {}
    if not status.get("completionTime"):
        return None
    # Absent counters are Go's zero values.
    if (status.get("succeeded") or 0) == (status.get("desired") or 0):
        return FINISHED_COMPLETE
    return FINISHED_FAILED


@dataclass(frozen=True)
class Children:
    """Children sorted into upstream's three buckets (each ordered by name), and the latest activation."""

    active: tuple[Obj, ...]
    succeeded: tuple[Obj, ...]
    failed: tuple[Obj, ...]
    last_scheduled: datetime | None


def classify(children: Sequence[Obj], kind: str = TEMPLATE_KIND_JOB) -> Children:
    """Sort children of `kind` into active / succeeded / failed (see `finished_type`)."""
    active: list[Obj] = []
    succeeded: list[Obj] = []
    failed: list[Obj] = []
    latest: datetime | None = None
    for child in sorted(children, key=lambda c: meta_of(c).get("name") or ""):
        state = finished_type(child, kind)
        if state is None:
            active.append(child)
        elif state == FINISHED_FAILED:
            failed.append(child)
        else:
            succeeded.append(child)
        moment = scheduled_at(child)
        if moment is not None and (latest is None or moment > latest):
            latest = moment
    return Children(tuple(active), tuple(succeeded), tuple(failed), latest)


def _start_time_key(child: Obj) -> tuple[int, datetime, str]:
    """Oldest first, children without `status.startTime` before all others (as upstream sorts)."""
    name = meta_of(child).get("name") or ""
    raw = status_of(child).get("startTime")
    started = go_parse_rfc3339(raw) if isinstance(raw, str) else None
    if started is None:
        return (0, datetime.min.replace(tzinfo=UTC), name)
    return (1, started, name)


def beyond_history_limit(finished: Sequence[Obj], limit: int | None) -> list[Obj]:
    """The oldest finished children that exceed `limit` (None keeps them all; a limit of 0 keeps none)."""
    if limit is None:
        return []
    excess = len(finished) - max(limit, 0)
    if excess <= 0:
        return []
    return sorted(finished, key=_start_time_key)[:excess]


def object_reference(child: Obj, kind: str) -> dict[str, Any]:
    """The ObjectReference upstream lists in `status.active` for a running child."""
    meta = child.get("metadata") or {}
    ref: dict[str, Any] = {
        "apiVersion": child.get("apiVersion") or CHILD_API_VERSION[kind],
        "kind": child.get("kind") or kind,
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    return {k: v for k, v in ref.items() if v}


def build_child(acj: Obj, kind: str, scheduled: datetime) -> dict[str, Any]:
    """The child for one activation: the template's spec, labels and annotations, plus the
    scheduled-at annotation and a controller reference to the cron job.

    Nothing else of the template's metadata is carried over (as upstream). `scheduled` is formatted
    in its own zone, as Go formats the activation it computed.
    """
    meta = acj["metadata"]
    template = spec_of(acj).get("template") or {}
    child_template = template.get(TEMPLATE_FIELD[kind]) or {}
    template_meta = child_template.get("metadata") or {}
    annotations = dict(section(template_meta, "annotations"))
    annotations[ANNOTATION_SCHEDULED_AT] = go_format_rfc3339(scheduled)
    return {
        "apiVersion": CHILD_API_VERSION[kind],
        "kind": kind,
        "metadata": {
            "name": child_name(meta["name"], scheduled),
            "namespace": meta.get("namespace"),
            "labels": dict(section(template_meta, "labels")),
            "annotations": annotations,
            "ownerReferences": [new_controller_ref({**acj, "apiVersion": ACJ_API_VERSION, "kind": KIND})],
        },
        "spec": copy.deepcopy(spec_of(child_template)),
    }
