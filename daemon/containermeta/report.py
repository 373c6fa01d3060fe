"""What the containermeta reporter decides, without I/O: which pod events matter, the
``apps.kruise.io/runtime-containers-meta`` value for a pod, and which containers must restart.

The annotation is kruise-daemon's report of the containers the runtime really runs for a pod: per container
its name, runtime containerID, restart count, the kubelet's plain hash and — under
InPlaceUpdateEnvFromMetadata — the hash of the env values it read from pod labels/annotations when it
started. kruise-manager finishes an in-place update that changed such metadata only once every container's
reported hash equals the one its metadata now implies; the daemon gets it there by restarting exactly the
containers whose hash is stale, and only while the pod is being updated in place (``InPlaceUpdateReady``
False): a label someone edits on a running pod restarts nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.api.conditions import condition_of
from kruise.api.controllerref import controller_of
from kruise.api.keys import ANNOTATION_RUNTIME_CONTAINERS_META, CONDITION_INPLACE_UPDATE_READY
from kruise.api.objects import Obj, annotations_of, container_statuses_of, meta_of
from kruise.control.common.inplace import envhash

KRUISE_APPS_GROUP = "apps.kruise.io"
SIDECARSET_HASH_ANNOTATION = "kruise.io/sidecarset-hash"


@dataclass(frozen=True)
class RuntimeContainer:
    """One container of the pod as the runtime reports it (the newest one of its name)."""

    name: str
    container_id: str  # "<runtime>://<id>", as the pod status writes it
    restart_count: int
    plain_hash: int
    running: bool


def parse_meta_set(pod: Obj) -> list[dict[str, Any]] | None:
    """The containers of the pod's current report; None without one (or when it is not JSON, which the
    next report replaces)."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_RUNTIME_CONTAINERS_META)
    if raw is None:
        return None
    try:
        body = json.loads(raw)
    except json.JSONDecodeError:
        return None
    containers = body.get("containers") if isinstance(body, dict) else None
    return [c for c in containers if isinstance(c, dict)] if isinstance(containers, list) else None


def dump_meta_set(containers: Sequence[Mapping[str, Any]]) -> str:
    """The annotation value, in the field order Go's ``json.Marshal`` writes ``RuntimeContainerMetaSet``."""
    return json.dumps({"containers": list(containers)}, separators=(",", ":"), ensure_ascii=False)


def _env_hash(meta: Mapping[str, Any]) -> int:
    value = (meta.get("hashes") or {}).get("extractedEnvFromMetadataHash") or 0
    return value if isinstance(value, int) else 0


def is_watched(pod: Obj) -> bool:
    """Only pods of Kruise workloads (controller in apps.kruise.io) or with SidecarSet-injected
    containers are reported: they are the ones kruise-manager updates in place."""
    ref = controller_of(pod)
    if ref is not None and str(ref.get("apiVersion", "")).rpartition("/")[0] == KRUISE_APPS_GROUP:
        return True
    return SIDECARSET_HASH_ANNOTATION in annotations_of(pod)


def can_sync(pod: Obj) -> bool:
    """A pod being deleted or without container statuses yet has nothing to report."""
    return not meta_of(pod).get("deletionTimestamp") and bool(container_statuses_of(pod))


def needs_report(old: Obj | None, new: Obj, env_from_metadata: bool) -> bool:
    """``eventFilter``: does this pod event (old None = seen for the first time) make the report stale?

    True when a container got a new ID, when the report is missing or misses a container, or (with the
    env gate) when the metadata-implied env hash differs from the reported one or from the old pod's.
    """
    if not is_watched(new):
        return False
    new_containers = (new.get("spec") or {}).get("containers") or []
    if old is not None and len((old.get("spec") or {}).get("containers") or []) != len(new_containers):
        return True
    metas = parse_meta_set(new)
    statuses = (new.get("status") or {}).get("containerStatuses") or []
    old_specs = {c.get("name"): c for c in (old.get("spec") or {}).get("containers") or []} if old else {}
    new_specs = {c.get("name"): c for c in new_containers}
    for status in statuses:
        if not status.get("containerID"):
            continue
        if metas is None or len(metas) != len(statuses):
            return True
        name = status.get("name")
        meta = next((m for m in metas if m.get("name") == name), None)
        if meta is None or meta.get("containerID") != status["containerID"]:
            return True
        spec = new_specs.get(name)
        if not env_from_metadata or spec is None:
            continue
        expected = envhash.expected_hash(spec, new.get("metadata") or {})
        if expected != _env_hash(meta):
            return True
        old_spec = old_specs.get(name)
        if old is not None and old_spec is not None:  # noqa: SIM102 - the old pod's hash is costly
            if expected != envhash.expected_hash(old_spec, old.get("metadata") or {}):
                return True
    return False


def reusable_meta(old_metas: Sequence[Mapping[str, Any]] | None, container_id: str) -> dict[str, Any] | None:
    """The earlier report of this very container (same ID): its env hash was read once, from the
    values it started with, and stays true for its whole life."""
    for meta in reversed(old_metas or []):
        if meta.get("containerID") == container_id:
            return {**meta, "hashes": dict(meta.get("hashes") or {})}
    return None


def new_meta(container: RuntimeContainer) -> dict[str, Any]:
    return {
        "name": container.name,
        "containerID": container.container_id,
        "restartCount": container.restart_count,
        "hashes": {"plainHash": container.plain_hash},
    }


def set_env_hash(meta: dict[str, Any], value: int) -> None:
    """Go omits a zero ``extractedEnvFromMetadataHash``; the key follows ``plainHash``."""
    hashes = {"plainHash": (meta.get("hashes") or {}).get("plainHash", 0)}
    if value:
        hashes["extractedEnvFromMetadataHash"] = value
    meta["hashes"] = hashes


def env_hash_missing(meta: Mapping[str, Any]) -> bool:
    return _env_hash(meta) == 0


def is_updating_in_place(pod: Obj) -> bool:
    """``InPlaceUpdateReady`` is False: kruise-manager has started an in-place update of the pod."""
    condition = condition_of(pod, CONDITION_INPLACE_UPDATE_READY)
    return condition is not None and condition.get("status") == "False"


def stale_env(pod: Obj, container: Obj, meta: Mapping[str, Any]) -> bool:
    """The container must restart: the pod is being updated in place and the env values the container
    read at start (a known hash) differ from what its labels/annotations say now."""
    reported = _env_hash(meta)
    return (
        is_updating_in_place(pod)
        and reported > 0
        and reported != envhash.expected_hash(container, pod.get("metadata") or {})
    )
