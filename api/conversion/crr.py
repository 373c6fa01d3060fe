"""ContainerRecreateRequest v1alpha1 <-> v1beta1 (apps.kruise.io; v1beta1 storage on master).

Two v1alpha1 annotations are status in v1beta1:
- `crr.apps.kruise.io/sync-container-statuses` (a JSON list of {name, ready, restartCount,
  containerID}) is `status.containerStatusSnapshot`;
- `crr.apps.kruise.io/unready-acquired` (an RFC 3339 time) is a `PreRecreateGrace` condition with
  status True in `status.conditions`, its lastTransitionTime being that time.
As upstream does, the annotations stay on the v1beta1 object (metadata is copied whole); an
annotation that does not parse is not promoted (upstream logs and drops it). On the way down the
annotations are rewritten from the status, and the v1beta1-only status fields are dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from kruise.api.conditions import find_condition, is_true
from kruise.api.conversion.errors import ConversionError
from kruise.api.conversion.fields import child, ensure_child, set_meta, string_map
from kruise.api.timestamps import go_parse_rfc3339, rfc3339

GROUP = "apps.kruise.io"
KIND = "ContainerRecreateRequest"
SYNC_CONTAINER_STATUSES_ANNOTATION = "crr.apps.kruise.io/sync-container-statuses"
UNREADY_ACQUIRED_ANNOTATION = "crr.apps.kruise.io/unready-acquired"
PRE_RECREATE_GRACE = "PreRecreateGrace"
PRE_RECREATE_GRACE_MESSAGE = "Pod has been forced to not-ready for unreadyGracePeriodSeconds drain"


def _snapshot_entry(item: object) -> dict[str, Any] | None:
    """One annotation entry as ContainerRecreateRequestSyncContainerStatus; None when it is not one."""
    if not isinstance(item, dict):
        return None
    name, ready = item.get("name", ""), item.get("ready", False)
    restarts, container_id = item.get("restartCount", 0), item.get("containerID", "")
    if not (isinstance(name, str) and isinstance(ready, bool) and isinstance(container_id, str)):
        return None
    if isinstance(restarts, bool) or not isinstance(restarts, int):
        return None
    entry: dict[str, Any] = {"name": name, "ready": ready, "restartCount": restarts}
    if container_id:
        entry["containerID"] = container_id
    return entry


def _snapshot(text: str) -> list[dict[str, Any]] | None:
    try:
        items = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(items, list):
        return None
    entries = [_snapshot_entry(item) for item in items]
    return None if any(e is None for e in entries) else entries  # type: ignore[return-value]


def to_v1beta1(obj: dict[str, Any]) -> None:
    annotations = string_map(obj, "annotations") or {}
    raw = annotations.get(SYNC_CONTAINER_STATUSES_ANNOTATION, "")
    snapshot = _snapshot(raw) if raw else None
    if snapshot is not None:
        ensure_child(obj, "status", "")["containerStatusSnapshot"] = snapshot
    acquired = go_parse_rfc3339(annotations.get(UNREADY_ACQUIRED_ANNOTATION, ""))
    if acquired is not None:
        ensure_child(obj, "status", "")["conditions"] = [
            {
                "type": PRE_RECREATE_GRACE,
                "status": "True",
                "lastTransitionTime": rfc3339(acquired),
                "reason": PRE_RECREATE_GRACE,
                "message": PRE_RECREATE_GRACE_MESSAGE,
            }
        ]


def _list(status: dict[str, Any], key: str) -> list[Any] | None:
    value = status.get(key)
    if value is None or isinstance(value, list):
        return value
    raise ConversionError(f"status.{key}", f"must be a list, got {type(value).__name__}")


def _objects(conditions: list[Any]) -> Iterator[dict[str, Any]]:
    """The conditions, each checked to be an object as the scan reaches it."""
    for index, cond in enumerate(conditions):
        if not isinstance(cond, dict):
            raise ConversionError(f"status.conditions[{index}]", f"must be an object, got {cond!r}")
        yield cond


def _grace_time(conditions: list[Any]) -> str | None:
    """lastTransitionTime of the first PreRecreateGrace condition with status True (entries after it
    are not looked at, so not checked either)."""
    grace = find_condition((c for c in _objects(conditions) if is_true(c)), PRE_RECREATE_GRACE)
    if grace is None:
        return None
    text = grace.get("lastTransitionTime")
    moment = go_parse_rfc3339(text) if isinstance(text, str) else None
    if moment is None:
        index = conditions.index(grace)
        raise ConversionError(
            f"status.conditions[{index}].lastTransitionTime", f"must be an RFC 3339 time, got {text!r}"
        )
    return rfc3339(moment)


def to_v1alpha1(obj: dict[str, Any]) -> None:
    status = child(obj, "status", "")
    if status is None:
        return
    snapshot = _list(status, "containerStatusSnapshot")
    conditions = _list(status, "conditions") or []
    status.pop("containerStatusSnapshot", None)
    status.pop("conditions", None)
    if snapshot is not None:
        entries = []
        for index, item in enumerate(snapshot):
            entry = _snapshot_entry(item)
            if entry is None:
                raise ConversionError(
                    f"status.containerStatusSnapshot[{index}]",
                    "must be an object with name, ready, restartCount and containerID",
                )
            entries.append(entry)
        text = json.dumps(entries, separators=(",", ":"))
        set_meta(obj, "annotations", SYNC_CONTAINER_STATUSES_ANNOTATION, text)
    grace = _grace_time(conditions)
    if grace is not None:
        set_meta(obj, "annotations", UNREADY_ACQUIRED_ANNOTATION, grace)
