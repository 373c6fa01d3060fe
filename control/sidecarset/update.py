"""Rolling a SidecarSet's new sidecar images into existing pods, in place (pure).

A pod records per SidecarSet the hash it was injected or last updated with (`kruise.io/sidecarset-hash`).
It is *updated* when that equals the SidecarSet's current hash; it can be updated in place only when
nothing but images changed (the `-without-image` hashes agree). The update writes just the sidecar
images and the records, plus `kruise.io/sidecarset-inplace-update-state` with the imageIDs the
containers had, which is how a later pass tells a restarted container from one still old.

Like upstream's `updatePodSidecarAndHash`, the write also renews the pod's `kruise.io/sidecarset-hash`
entry whole — hash, sidecar list, and the `controllerRevision` the SidecarSet's status names as latest (a
pod injected from an older revision then records the one it now runs) — and re-applies the SidecarSet's
`patchPodMetadata`, so a value changed since injection reaches the pod with the upgrade. The
without-image record is left as it is: an in-place update needs it equal already.

A cold-upgrade sidecar gets the new image in its own container (the kubelet restarts it). A hot-upgrade
sidecar runs as a `-1`/`-2` pair (`hotupgrade`): the new image goes into the idle container, which becomes
the working one in the same write; once it runs ready, a second write (`flipped_pod`) puts the old one
back on the empty image. Until then the pod is not ready for the SidecarSet, so `maxUnavailable` paces
hot upgrades too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.api.common import scaled_value
from kruise.api.imageref import image_id_reference, images_equal, is_digest
from kruise.api.keys import (
    ANNOTATION_SIDECARSET_HASH,
    ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
    ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE,
)
from kruise.api.objects import (
    Obj,
    annotations_of,
    container_statuses_of,
    containers_of,
    labels_of,
    meta_of,
    section,
    spec_of,
)
from kruise.api.timestamps import rfc3339
from kruise.control.common import podstatus
from kruise.control.sidecarset import gojson, hotupgrade, order
from kruise.control.sidecarset.hashing import is_native_sidecar
from kruise.control.sidecarset.injection import upgrade_spec
from kruise.control.sidecarset.inplacestate import sidecar_update_completed
from kruise.control.sidecarset.matching import selector_matches
from kruise.control.sidecarset.metadata import patch_pod_metadata


def _name(sidecarset: Obj) -> str:
    return meta_of(sidecarset).get("name", "")


def _annotation_json(obj: Obj, key: str) -> dict[str, Any]:
    raw = annotations_of(obj).get(key)
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _record_hash(pod: Obj, key: str, name: str) -> str:
    entry = _annotation_json(pod, key).get(name)
    if isinstance(entry, str):
        return entry
    return (entry or {}).get("hash", "")


def sidecarset_hashes(sidecarset: Obj) -> tuple[str, str]:
    annotations = annotations_of(sidecarset)
    return annotations.get(ANNOTATION_SIDECARSET_HASH, ""), annotations.get(
        ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE, ""
    )


def is_injected(pod: Obj, sidecarset: Obj) -> bool:
    return _name(sidecarset) in _annotation_json(pod, ANNOTATION_SIDECARSET_HASH)


def is_updated(pod: Obj, sidecarset: Obj) -> bool:
    return (
        _record_hash(pod, ANNOTATION_SIDECARSET_HASH, _name(sidecarset)) == sidecarset_hashes(sidecarset)[0]
    )


def is_upgradable(pod: Obj, sidecarset: Obj) -> bool:
    """Only images differ between what the pod runs and the SidecarSet (cold upgrade possible)."""
    return (
        _record_hash(pod, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE, _name(sidecarset))
        == sidecarset_hashes(sidecarset)[1]
    )


def _sidecar_names(sidecarset: Obj) -> list[str]:
    """The pod containers this SidecarSet owns: its sidecars, both of a hot-upgrade pair."""
    names: list[str] = []
    for sidecar in containers_of(sidecarset):
        if hotupgrade.is_hot(sidecar):
            names.extend(hotupgrade.container_names(sidecar["name"]))
        else:
            names.append(sidecar["name"])
    return names


def has_sidecar_containers(pod: Obj, sidecarset: Obj) -> bool:
    """The pod still has every container of the SidecarSet (and, for hot upgrade, the working-container
    record); a pod whose sidecars were removed is not the controller's to manage."""
    names = {c.get("name") for c in containers_of(pod)}
    working = hotupgrade.working_containers(pod)
    for sidecar in containers_of(sidecarset):
        if hotupgrade.is_hot(sidecar):
            pair = set(hotupgrade.container_names(sidecar["name"]))
            if sidecar["name"] not in working or not pair <= names:
                return False
        elif sidecar["name"] not in names:
            return False
    return True


def _statuses(pod: Obj) -> dict[str, Mapping[str, Any]]:
    return {s.get("name"): s for s in container_statuses_of(pod)}


def _update_completed(pod: Obj, sidecarset: Obj, names: Sequence[str]) -> bool:
    """Upstream `IsSidecarContainerUpdateCompleted` for this SidecarSet's containers `names`."""
    return sidecar_update_completed(pod, [_name(sidecarset)], names)


def sidecars_consistent(pod: Obj, sidecarset: Obj, names: Sequence[str] | None = None) -> bool:
    """Upstream `IsPodStateConsistent`: every sidecar container (or just `names`) runs the image its spec
    names. A pod whose kubelet does not report every container yet is not consistent.

    Digest rule: when every one of those containers names its image by digest (`repo@sha256:…`), the
    imageID the kubelet reports (scheme stripped) must equal it, repo and digest compared as written
    (`imageref.images_equal`) — and that alone decides. Otherwise (some sidecar on a tag) it is the
    imageID test of `_update_completed`. As upstream, containers are checked in pod order and the first
    tag image ends the digest checks (a digest container before it that does not match still fails)."""
    containers = containers_of(pod)
    if len(containers) != len(container_statuses_of(pod)):
        return False
    wanted = set(names) if names else set(_sidecar_names(sidecarset))
    image_ids = {
        s.get("name"): image_id_reference(s.get("imageID") or "") for s in container_statuses_of(pod)
    }
    all_digest = True
    for container in containers:
        if container.get("name") not in wanted:
            continue
        image = container.get("image") or ""
        if not is_digest(image):
            all_digest = False
            break
        image_id = image_ids.get(container.get("name"))
        if image_id is None or not images_equal(image, image_id):
            return False
    return all_digest or _update_completed(pod, sidecarset, wanted)


def _container_ready(pod: Obj, sidecarset: Obj, name: str) -> bool:
    ready = bool(section(_statuses(pod), name).get("ready"))
    return ready and sidecars_consistent(pod, sidecarset, [name])


def is_pod_ready(pod: Obj, sidecarset: Obj) -> bool:
    """Running and Ready, every sidecar on its spec image, and no hot upgrade left half done."""
    return (
        podstatus.phase(pod) == "Running"
        and podstatus.is_ready(pod)
        and sidecars_consistent(pod, sidecarset)
        and not hotupgrade.in_hot_upgrade(sidecarset, pod)
    )


def mid_update(pod: Obj, sidecarset: Obj) -> bool:
    """A sidecar container reports ready but does not run its spec image yet: the kubelet has not picked
    up the last update, so another one must wait (upstream `IsSidecarSetUpgradable`'s consistent)."""
    return any(
        section(_statuses(pod), name).get("ready") and not sidecars_consistent(pod, sidecarset, [name])
        for name in _sidecar_names(sidecarset)
    )


def compute_status(sidecarset: Obj, pods: Sequence[Obj]) -> dict[str, Any]:
    matched = updated = ready = updated_ready = 0
    for pod in pods:
        matched += 1
        is_new = is_updated(pod, sidecarset)
        is_ready = is_pod_ready(pod, sidecarset)
        updated += is_new
        ready += is_ready
        updated_ready += is_new and is_ready
    return {
        "observedGeneration": meta_of(sidecarset).get("generation"),
        "matchedPods": matched,
        "updatedPods": updated,
        "readyPods": ready,
        "updatedReadyPods": updated_ready,
    }


def rolling(sidecarset: Obj) -> bool:
    """The SidecarSet changes pods at all: not `type: NotUpdate`, not `paused` (hot-upgrade resets too)."""
    strategy = spec_of(sidecarset).get("updateStrategy") or {}
    return strategy.get("type") != "NotUpdate" and not strategy.get("paused")


def _selected(sidecarset: Obj, pod: Obj) -> bool:
    selector = section(sidecarset, "spec", "updateStrategy").get("selector")
    return not selector or selector_matches(selector, labels_of(pod))


def pods_not_upgradable(sidecarset: Obj, pods: Sequence[Obj]) -> list[Obj]:
    """Pods due for this SidecarSet's change (not updated, selected by updateStrategy.selector) that
    cannot take it in place because more than images changed; `partition` does not hold these back."""
    return [
        p
        for p in pods
        if not is_updated(p, sidecarset) and _selected(sidecarset, p) and not is_upgradable(p, sidecarset)
    ]


def pods_to_update(sidecarset: Obj, pods: Sequence[Obj]) -> list[Obj]:
    """Which pods to update now (upstream `GetNextUpgradePods`): the waiting ones (not updated, selected
    by updateStrategy.selector, upgradable in place, not mid-update) in rollout order (`order`), less the
    last `partition` of them (int or % of the matched pods, rounded up), cut where `maxUnavailable`
    (default 1) updated-but-not-ready pods would be exceeded. Unready pods take no budget."""
    strategy = spec_of(sidecarset).get("updateStrategy") or {}
    if not rolling(sidecarset):
        return []
    total = len(pods)
    candidates = [
        p
        for p in pods
        if not is_updated(p, sidecarset)
        and is_upgradable(p, sidecarset)
        and not mid_update(p, sidecarset)
        and _selected(sidecarset, p)
    ]
    ordered = order.sort_for_update(strategy, pods, candidates)
    partition = strategy.get("partition")
    keep = 0 if partition is None else min(scaled_value(partition, total, round_up=True), total)
    ordered = ordered[: max(len(ordered) - keep, 0)]
    max_unavailable = strategy.get("maxUnavailable")
    budget = 1 if max_unavailable is None else scaled_value(max_unavailable, total, round_up=True)
    unavailable = sum(1 for p in pods if is_updated(p, sidecarset) and not is_pod_ready(p, sidecarset))
    chosen: list[Obj] = []
    for pod in ordered:
        if is_pod_ready(pod, sidecarset):
            if unavailable >= budget:
                break
            unavailable += 1
        chosen.append(pod)
    return chosen


def _record_changes(pod: dict[str, Any], sidecarset: Obj, changed: Sequence[str], now: datetime) -> None:
    """Remember the imageIDs the `changed` containers ran before this write (merged into the SidecarSet's
    in-place update state, which keeps the revision and time of its first update as upstream)."""
    statuses = _statuses(pod)
    states = _annotation_json(pod, ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE)
    state = states.get(_name(sidecarset))
    if not isinstance(state, dict):
        state = {"revision": sidecarset_hashes(sidecarset)[0], "updateTimestamp": rfc3339(now)}
    last = dict(section(state, "lastContainerStatuses"))
    for name in changed:
        last[name] = {"imageID": section(statuses, name).get("imageID", "")}
    state["lastContainerStatuses"] = last
    states[_name(sidecarset)] = state
    annotations = pod["metadata"].setdefault("annotations", {})
    annotations[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] = json.dumps(states, separators=(",", ":"))


def _upgrade_containers(pod: dict[str, Any], sidecarset: Obj) -> list[str]:
    """Set each sidecar's new image on the pod (in place); the names of the containers changed.

    Cold: the sidecar's own container. Hot: the container `container_to_upgrade` picks, which then becomes
    the working one; nothing changes when the other one already runs the new image."""
    containers = {c.get("name"): c for c in containers_of(pod)}
    version = meta_of(sidecarset).get("resourceVersion", "")
    changed = []
    for sidecar in containers_of(sidecarset):
        if hotupgrade.is_hot(sidecar):
            target, other = hotupgrade.container_to_upgrade(
                sidecar, pod, lambda name: _container_ready(pod, sidecarset, name)
            )
            current = section(containers, other).get("image")
        else:
            target = other = sidecar["name"]
            current = section(containers, target).get("image")
        if target not in containers or current == sidecar.get("image"):
            continue
        containers[target]["image"] = sidecar.get("image")
        changed.append(target)
        if hotupgrade.is_hot(sidecar):
            annotations = pod["metadata"].setdefault("annotations", {})
            hotupgrade.switch_working(annotations, sidecar["name"], target, other, version)
    return changed


def sidecar_list(sidecarset: Obj) -> list[str]:
    """Upstream `listSidecarNameInSidecarSet`, sorted: native init sidecars and every sidecar container."""
    spec = sidecarset.get("spec") or {}
    names = {c.get("name", "") for c in spec.get("initContainers") or [] if is_native_sidecar(c)}
    names.update(c.get("name", "") for c in spec.get("containers") or [])
    return sorted(names)


def updated_pod(pod: Obj, sidecarset: Obj, now: datetime) -> dict[str, Any]:
    """The pod with the SidecarSet's sidecar images, its renewed hash record, its patchPodMetadata and
    the in-place update state. `sidecarset.status.latestRevision` must be the revision just registered.
    Raises `PatchMetadataError` when a MergePatchJson annotation cannot be merged (upstream fails the
    update the same way)."""
    name = _name(sidecarset)
    clone: dict[str, Any] = copy.deepcopy(dict(pod))
    # the records are read before the images change: imageIDs are those of the running containers
    changed = _upgrade_containers(clone, sidecarset)
    records = _annotation_json(clone, ANNOTATION_SIDECARSET_HASH)
    revision = (sidecarset.get("status") or {}).get("latestRevision") or ""
    records[name] = upgrade_spec(
        rfc3339(now), sidecarset_hashes(sidecarset)[0], name, sidecar_list(sidecarset), revision
    )
    annotations = clone["metadata"].setdefault("annotations", {})
    annotations[ANNOTATION_SIDECARSET_HASH] = gojson.dumps(dict(sorted(records.items()))).decode()
    _record_changes(clone, sidecarset, changed, now)
    patch_pod_metadata(clone, (sidecarset.get("spec") or {}).get("patchPodMetadata"))
    return clone


def pods_to_flip(sidecarset: Obj, pods: Sequence[Obj]) -> list[Obj]:
    """Pods whose hot upgrade is half done and whose new working containers now run ready: their old
    containers can go back to the empty image."""
    chosen = []
    for pod in pods:
        if not hotupgrade.in_hot_upgrade(sidecarset, pod):
            continue
        idle = hotupgrade.idle_containers(sidecarset, pod)
        serving = [n for n in _sidecar_names(sidecarset) if n not in idle]
        if sidecars_consistent(pod, sidecarset, serving) and hotupgrade.working_side_ready(sidecarset, pod):
            chosen.append(pod)
    return chosen


def flipped_pod(pod: Obj, sidecarset: Obj, now: datetime) -> dict[str, Any] | None:
    """The pod with its non-working hot-upgrade containers back on the empty image (the hash records stay
    as they are: the pod was counted updated when its new version was set); None when nothing to reset."""
    clone: dict[str, Any] = copy.deepcopy(dict(pod))
    changed = hotupgrade.reset_idle(sidecarset, clone)
    if not changed:
        return None
    _record_changes(clone, sidecarset, changed, now)
    return clone
