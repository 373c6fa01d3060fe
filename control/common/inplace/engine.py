"""The in-place update flow as pure transitions of a pod dict.

Start:   ``unready_pod`` (status write: InPlaceUpdateReady=False/StartInPlaceUpdate, Ready=False)
         then ``start_update`` (object write: revision labels, state annotation, images — or, with
         gracePeriodSeconds, the pending spec in the grace annotation).
Refresh: ``refresh`` on every reconcile: finish the grace period, roll the next priority batch,
         or — once ``update_completed`` — flip InPlaceUpdateReady back to True.

Vertical scaling (``vertical_scaling`` = the InPlaceWorkloadVerticalScaling gate): a batch's
container resources are written into the pod spec, or — with ``resize_subresource`` (Kubernetes
1.32+, where upstream patches ``pods/resize``) — left out of the pod and returned as the resize
body (``StartResult.resize`` / ``RefreshResult.resize``) for the caller to send before writing the
pod; completion then also waits for the containers' status resources (``vertical.resize_problem``).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.api.conditions import condition_of, set_condition
from kruise.api.keys import (
    ANNOTATION_INPLACE_UPDATE_GRACE,
    ANNOTATION_INPLACE_UPDATE_STATE,
    ANNOTATION_INPLACE_UPDATE_STATE_OLD,
    ANNOTATION_RUNTIME_CONTAINERS_META,
    CONDITION_INPLACE_UPDATE_READY,
    REASON_START_INPLACE_UPDATE,
)
from kruise.api.objects import (
    MutableObj,
    annotations_of,
    container_statuses_of,
    containers_of,
    section,
    spec_of,
)
from kruise.control.common.inplace import envhash, vertical
from kruise.control.common.inplace.containerhash import kubelet_container_hash
from kruise.control.common.inplace.jsondiff import apply_merge_patch
from kruise.control.common.inplace.spec import UpdateSpec
from kruise.control.common.inplace.state import InPlaceUpdateState, get_grace_json, get_state, remove_grace
from kruise.control.common.lifecycle import rfc3339
from kruise.control.launchpriority.barriers import container_barrier_priority

WriteRevision = Callable[[MutableObj, str], None]


def _conditions(pod: MutableObj) -> list[dict[str, Any]]:
    return pod.setdefault("status", {}).setdefault("conditions", [])


def set_pod_condition(pod: MutableObj, condition: dict[str, Any]) -> None:
    """``util.SetPodCondition``: replace only when the status changes, else keep the old one."""
    status = pod.setdefault("status", {})
    status["conditions"] = set_condition(status.get("conditions"), condition)


def has_readiness_gate(pod: Mapping[str, Any]) -> bool:
    gates = spec_of(pod).get("readinessGates") or []
    return any(g.get("conditionType") == CONDITION_INPLACE_UPDATE_READY for g in gates)


def recompute_ready(pod: MutableObj, now: datetime) -> None:
    """``util.SetPodReadyCondition``: Kruise flips Ready itself when a readiness gate goes False
    (kubelet would only notice later); only when containers are ready, as kubelet decides."""
    ready = condition_of(pod, "Ready")
    containers = condition_of(pod, "ContainersReady")
    if ready is None or containers is None or containers.get("status") != "True":
        return
    problems = []
    for gate in spec_of(pod).get("readinessGates") or []:
        cond = condition_of(pod, gate["conditionType"])
        if cond is None:
            problems.append(
                f'corresponding condition of pod readiness gate "{gate["conditionType"]}" does not exist.'
            )
        elif cond.get("status") != "True":
            gate_type, status = gate["conditionType"], cond.get("status")
            problems.append(f'the status of pod readiness gate "{gate_type}" is not "True", but {status}')
    if problems:
        new = {
            "type": "Ready",
            "status": "False",
            "reason": "ReadinessGatesNotReady",
            "message": ", ".join(problems),
        }
    else:
        new = {"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(now)}
    set_pod_condition(pod, new)


def unready_pod(pod: Mapping[str, Any], now: datetime) -> MutableObj | None:
    """The pod (for a status write) with InPlaceUpdateReady False, or None without the gate."""
    if not has_readiness_gate(pod):
        return None
    clone = copy.deepcopy(dict(pod))
    set_pod_condition(
        clone,
        {
            "type": CONDITION_INPLACE_UPDATE_READY,
            "status": "False",
            "reason": REASON_START_INPLACE_UPDATE,
            "lastTransitionTime": rfc3339(now),
        },
    )
    recompute_ready(clone, now)
    return clone


def _metadata_sharing_closure(selected: set[str], ref_meta: Mapping[str, Mapping[str, Any]]) -> None:
    """Containers reading a label/annotation that a selected container changes must restart too."""
    frontier = set(selected)
    labels: set[str] = set()
    annotations: set[str] = set()
    while frontier:
        for name in frontier:
            labels |= set(section(ref_meta, name, "labels"))
            annotations |= set(section(ref_meta, name, "annotations"))
        frontier = set()
        for name, meta in ref_meta.items():
            if name in selected:
                continue
            if labels & set(section(meta, "labels")) or annotations & set(section(meta, "annotations")):
                selected.add(name)
                frontier.add(name)


def needs_unready(pod: Mapping[str, Any], spec: UpdateSpec, *, vertical_scaling: bool = False) -> bool:
    """Must the pod leave service (InPlaceUpdateReady False) for this update?

    ``defaultCheckPodNeedsBeUnready``: only pods with the readiness gate; and a resources-only
    update keeps serving unless a resized container's ``resizePolicy`` restarts it.
    """
    if (
        vertical_scaling
        and spec.vertical_update_only()
        and not vertical.needs_restart(pod, spec.container_resources)
    ):
        return False
    return has_readiness_gate(pod)


def patch_spec_to_pod(
    pod: MutableObj,
    spec: UpdateSpec,
    state: InPlaceUpdateState,
    now: datetime,
    *,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> MutableObj:
    """Apply this batch of ``spec`` to ``pod``; later batches go into ``state.next_*``."""
    return apply_batch(
        pod, spec, state, now, vertical_scaling=vertical_scaling, resize_subresource=resize_subresource
    )[0]


def apply_batch(
    pod: MutableObj,
    spec: UpdateSpec,
    state: InPlaceUpdateState,
    now: datetime,
    *,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> tuple[MutableObj, dict[str, dict[str, Any]]]:
    """The pod with this batch of ``spec`` applied, and the batch's resources left for a resize.

    Containers without launch priority all update now, plus those with the highest priority; the
    rest wait until these are ready (``preCheckBeforeNext``). Resources apply only with
    ``vertical_scaling``; with ``resize_subresource`` they stay out of the pod and are returned
    (``defaultPatchUpdateSpecToPod``'s expected resources), else the second item is empty.
    """
    state.next_container_images = {}
    state.next_container_ref_metadata = {}
    state.next_container_resources = {}
    if spec.metadata_patch:
        pod = apply_merge_patch(pod, spec.metadata_patch)
    pod = copy.deepcopy(pod)
    meta = pod.setdefault("metadata", {})
    labels = meta.setdefault("labels", {})
    annotations = meta.setdefault("annotations", {})
    containers = pod["spec"]["containers"]

    selected: set[str] = set()
    highest: int | None = None
    top: list[str] = []
    for c in containers:
        if (
            c["name"] not in spec.container_images
            and c["name"] not in spec.container_ref_metadata
            and c["name"] not in spec.container_resources
        ):
            continue
        priority = container_barrier_priority(c)
        if priority is None:
            selected.add(c["name"])
        elif highest is None or priority > highest:
            highest, top = priority, [c["name"]]
        elif priority == highest:
            top.append(c["name"])
    selected |= set(top)
    _metadata_sharing_closure(selected, spec.container_ref_metadata)

    changed: set[str] = set()
    for c in containers:
        image = spec.container_images.get(c["name"])
        if image is None:
            continue
        if c["name"] in selected:
            c["image"] = image
            changed.add(c["name"])
        else:
            state.next_container_images[c["name"]] = image
    for status in container_statuses_of(pod):
        if status.get("name") in changed:
            if state.last_container_statuses is None:
                state.last_container_statuses = {}
            state.last_container_statuses.setdefault(status["name"], {"imageID": status.get("imageID", "")})
    expected_resources: dict[str, dict[str, Any]] = {}
    if vertical_scaling:
        for c in containers:
            resources = spec.container_resources.get(c["name"])
            if resources is None:
                continue
            if c["name"] in selected:
                expected_resources[c["name"]] = copy.deepcopy(resources)
            else:
                state.next_container_resources[c["name"]] = copy.deepcopy(resources)
        if not resize_subresource:
            vertical.apply_resources(pod, expected_resources)
    for name, ref in spec.container_ref_metadata.items():
        if name in selected:
            labels.update(section(ref, "labels"))
            annotations.update(section(ref, "annotations"))
        else:
            state.next_container_ref_metadata[name] = ref
    state.pre_check_before_next = sorted(selected) if state.has_next_batch() else None
    state.container_batches_record.append({"timestamp": rfc3339(now), "containers": sorted(selected)})
    annotations[ANNOTATION_INPLACE_UPDATE_STATE] = state.to_json()
    return pod, (expected_resources if resize_subresource else {})


@dataclass(frozen=True)
class StartResult:
    """The pod object to write, and — when set — the ``pods/resize`` body to send first."""

    pod: MutableObj
    resize: dict[str, Any] | None = None


def start_update(
    pod: Mapping[str, Any],
    spec: UpdateSpec,
    now: datetime,
    write_revision: WriteRevision,
    *,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> MutableObj:
    """The pod object to write to begin the in-place update (``updatePodInPlace``)."""
    return begin_update(
        pod,
        spec,
        now,
        write_revision,
        vertical_scaling=vertical_scaling,
        resize_subresource=resize_subresource,
    ).pod


def already_begun(pod: Mapping[str, Any], spec: UpdateSpec, write_revision: WriteRevision) -> bool:
    """The pod already carries this update: its in-place state names `spec.revision` and its revision labels
    are the ones `write_revision` would write.

    A writer retrying on Conflict recomputes against a fresh read; when the conflict came from the same update
    written meanwhile (a new leader acting on a cache that had not yet seen its predecessor's last write),
    beginning it again would update the pod twice: a second state with a new updateTimestamp, its container
    batch record started over, its recorded "old" imageIDs taken from containers already restarted.
    """
    state = get_state(pod)
    if state is None or state.revision != spec.revision:
        return False
    labels = dict((pod.get("metadata") or {}).get("labels") or {})
    stamped: MutableObj = {"metadata": {"labels": dict(labels)}}
    write_revision(stamped, spec.revision)
    return stamped["metadata"]["labels"] == labels


def begin_update(
    pod: Mapping[str, Any],
    spec: UpdateSpec,
    now: datetime,
    write_revision: WriteRevision,
    *,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> StartResult:
    """``start_update`` plus the resize body of the first batch (with ``resize_subresource``)."""
    clone: MutableObj = copy.deepcopy(dict(pod))
    write_revision(clone, spec.revision)
    annotations = clone.setdefault("metadata", {}).setdefault("annotations", {})
    state = InPlaceUpdateState(
        revision=spec.revision,
        update_timestamp=now,
        update_env_from_metadata=spec.update_env_from_metadata,
        update_images=bool(spec.container_images),
        update_resources=bool(spec.container_resources),
    )
    annotations[ANNOTATION_INPLACE_UPDATE_STATE] = state.to_json()
    annotations.pop(ANNOTATION_INPLACE_UPDATE_STATE_OLD, None)
    if spec.grace_seconds > 0:
        annotations[ANNOTATION_INPLACE_UPDATE_GRACE] = spec.to_json()
        return StartResult(pod=clone)
    clone, expected = apply_batch(
        clone, spec, state, now, vertical_scaling=vertical_scaling, resize_subresource=resize_subresource
    )
    remove_grace(clone["metadata"]["annotations"])
    return StartResult(pod=clone, resize=vertical.resize_body(clone, expected) if expected else None)


def _container_status(pod: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    statuses = container_statuses_of(pod)
    return next((s for s in statuses if s.get("name") == name), None)


def _runtime_meta(pod: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The containers kruise-daemon reported; ValueError when the annotation is not its JSON."""
    raw = annotations_of(pod).get(ANNOTATION_RUNTIME_CONTAINERS_META)
    if raw is None:
        return None
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid {ANNOTATION_RUNTIME_CONTAINERS_META}: {exc}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("containers") or [], list):
        raise ValueError(f"invalid {ANNOTATION_RUNTIME_CONTAINERS_META}: not a RuntimeContainerMetaSet")
    return [c for c in body.get("containers") or [] if isinstance(c, dict)]


def _env_hashes_consistent(pod: Mapping[str, Any], metas: list[Mapping[str, Any]]) -> bool:
    for c in containers_of(pod):
        status = _container_status(pod, c["name"])
        meta = next((m for m in reversed(metas) if m.get("name") == c["name"]), None)  # last wins
        if status is None or meta is None or meta.get("containerID") != status.get("containerID"):
            return False
        expected = envhash.expected_hash(c, pod.get("metadata") or {})
        if int(section(meta, "hashes").get("extractedEnvFromMetadataHash") or 0) != expected:
            return False
    return True


def _plain_hashes_consistent(pod: Mapping[str, Any], metas: list[Mapping[str, Any]]) -> bool:
    """Every spec container is reported running as the status's container with its spec's kubelet hash."""
    for c in containers_of(pod):
        status = _container_status(pod, c["name"])
        meta = next((m for m in reversed(metas) if m.get("name") == c["name"]), None)  # last wins
        if status is None or meta is None or meta.get("containerID") != status.get("containerID"):
            return False
        if int(section(meta, "hashes").get("plainHash") or 0) != kubelet_container_hash(c):
            return False
    return True


def containers_update_problem(
    pod: Mapping[str, Any], state: InPlaceUpdateState, *, vertical_scaling: bool = False
) -> str | None:
    """Why the updated containers are not done yet (None = done).

    After a resize (``updateResources`` with the gate on) every container's status resources must
    equal its spec. Then the update is done when kruise-daemon's report shows every container
    restarted with its spec's kubelet hash (``containerhash``), or else when each updated container's
    status imageID differs from the one recorded before the update, or (same imageID: a second tag of
    one image) its status image equals the spec image.
    """
    try:
        metas = _runtime_meta(pod)  # upstream refuses a malformed report whatever the update changes
    except ValueError as exc:
        return str(exc)
    if state.update_env_from_metadata:
        if metas is None:
            return "waiting for all containers hash consistent, but runtime-container-meta not found"
        if not _env_hashes_consistent(pod, metas):
            return "waiting for all containers hash consistent"
    if vertical_scaling and state.update_resources:
        problem = vertical.resize_problem(pod)
        if problem is not None:
            return problem
    if metas is not None and _plain_hashes_consistent(pod, metas):
        return None
    images = {}
    for c in containers_of(pod):
        image = c.get("image", "")
        images[c["name"]] = image if len(image.split(":")) > 1 else f"{image}:latest"
    pending = dict(state.last_container_statuses or {})
    for status in container_statuses_of(pod):
        old = pending.pop(status.get("name"), None)
        same_image_id = old is not None and old.get("imageID") == status.get("imageID")
        if same_image_id and images.get(status["name"]) != status.get("image"):
            return f"container {status['name']} imageID not changed"
    if pending:
        return f"not found statuses of containers {sorted(pending)}"
    return None


def update_completed_problem(pod: Mapping[str, Any], *, vertical_scaling: bool = False) -> str | None:
    """``DefaultCheckInPlaceUpdateCompleted``: None when the whole in-place update has finished."""
    if get_grace_json(pod) is not None:
        return "still in grace period of in-place update"
    state = get_state(pod)
    if state is None:
        return None
    if state.has_next_batch():
        return "existing containers to in-place update in next batches"
    return containers_update_problem(pod, state, vertical_scaling=vertical_scaling)


@dataclass(frozen=True)
class RefreshResult:
    """At most one write: ``pod`` (object update) or ``status_pod`` (status update); ``resize``
    is the ``pods/resize`` body to send before writing ``pod`` (resize_subresource mode)."""

    pod: MutableObj | None = None
    status_pod: MutableObj | None = None
    delay_seconds: int = 0
    error: str | None = None
    resize: dict[str, Any] | None = None


def refresh(
    pod: Mapping[str, Any],
    now: datetime,
    matches_revision: Callable[[Mapping[str, Any], str], bool],
    *,
    vertical_scaling: bool = False,
    resize_subresource: bool = False,
) -> RefreshResult:
    """Advance an in-flight in-place update by one step (``Refresh``).

    A next batch holding only resources is rolled too (upstream's ``updateNextBatch`` returns
    early unless images or metadata remain, which leaves such a pod never completing).
    """
    modes = {"vertical_scaling": vertical_scaling, "resize_subresource": resize_subresource}
    grace = get_grace_json(pod)
    if grace:
        return _finish_grace(pod, grace, now, matches_revision, **modes)
    state = get_state(pod)
    if state is not None:
        if containers_update_problem(pod, state, vertical_scaling=vertical_scaling) is not None:
            return RefreshResult()
        if state.has_next_batch():
            for name in state.pre_check_before_next or []:
                status = _container_status(pod, name)
                if status is None or not status.get("ready"):
                    return RefreshResult()
            spec = UpdateSpec(
                revision=state.revision,
                container_images=dict(state.next_container_images),
                container_ref_metadata=dict(state.next_container_ref_metadata),
                container_resources=dict(state.next_container_resources),
                update_env_from_metadata=state.update_env_from_metadata,
            )
            patched, expected = apply_batch(copy.deepcopy(dict(pod)), spec, state, now, **modes)
            return RefreshResult(
                pod=patched, resize=vertical.resize_body(patched, expected) if expected else None
            )
    if not has_readiness_gate(pod):
        return RefreshResult()
    current = condition_of(pod, CONDITION_INPLACE_UPDATE_READY)
    if (
        current is not None
        and current.get("status") == "True"
        and not current.get("reason")
        and not current.get("message")
    ):
        return RefreshResult()
    clone: MutableObj = copy.deepcopy(dict(pod))
    status = clone.setdefault("status", {})
    new = {"type": CONDITION_INPLACE_UPDATE_READY, "status": "True", "lastTransitionTime": rfc3339(now)}
    status["conditions"] = set_condition(status.get("conditions"), new, same=None)
    return RefreshResult(status_pod=clone)


def _finish_grace(
    pod: Mapping[str, Any],
    grace: str,
    now: datetime,
    matches_revision: Callable[[Mapping[str, Any], str], bool],
    *,
    vertical_scaling: bool,
    resize_subresource: bool,
) -> RefreshResult:
    spec = UpdateSpec.from_json(grace)
    state = get_state(pod)
    if state is None:
        return RefreshResult(
            error=f"pod has {ANNOTATION_INPLACE_UPDATE_GRACE} but {ANNOTATION_INPLACE_UPDATE_STATE} not found"
        )
    clone: MutableObj = copy.deepcopy(dict(pod))
    if matches_revision(clone, spec.revision):
        elapsed = (now - state.update_timestamp).total_seconds()
        if elapsed < spec.grace_seconds:
            return RefreshResult(delay_seconds=math.ceil(spec.grace_seconds - elapsed))
        clone, expected = apply_batch(
            clone, spec, state, now, vertical_scaling=vertical_scaling, resize_subresource=resize_subresource
        )
        remove_grace(clone["metadata"]["annotations"])
        return RefreshResult(pod=clone, resize=vertical.resize_body(clone, expected) if expected else None)
    remove_grace(clone["metadata"]["annotations"])
    return RefreshResult(pod=clone)
