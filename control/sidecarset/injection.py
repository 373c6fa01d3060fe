"""Injecting matched SidecarSets into a pod at CREATE (upstream `sidecarsetMutatingPod`).

For each SidecarSet in order: its patchPodMetadata, then its initContainers and imagePullSecrets,
then its containers, each sidecar getting the app containers' volumeMounts when it shares volumes,
the envs it transfers from app containers, `IS_INJECTED=true`, and the SidecarSet volumes its
mounts name. The pod then records, per SidecarSet, the hash it was injected with; the SidecarSet
controller reads these to upgrade sidecars in place later.
"""

from __future__ import annotations

import copy
import datetime
import json
import re
from dataclasses import dataclass, field
from typing import Any

from kruise.api.keys import (
    ANNOTATION_SIDECARSET_HASH,
    ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
    ANNOTATION_SIDECARSET_INJECTED_LIST,
)
from kruise.api.objects import annotations_of, containers_of, section, spec_of, status_of
from kruise.api.sidecarset import INJECT_BEFORE_APP, SHARE_VOLUME_ENABLED, UPGRADE_HOT
from kruise.api.timestamps import rfc3339
from kruise.control.sidecarset import gojson, hotupgrade
from kruise.control.sidecarset.hashing import is_native_sidecar
from kruise.control.sidecarset.matching import is_active_pod
from kruise.control.sidecarset.metadata import patch_pod_metadata
from kruise.control.sidecarset.resources import ResourcesPolicyError, apply_resources_policy

ENV_IS_INJECTED = "IS_INJECTED"
# Fields of a SidecarContainer that are Kruise's, not the core Container's.
SIDECAR_ONLY_FIELDS = (
    "podInjectPolicy",
    "upgradeStrategy",
    "shareVolumePolicy",
    "shareVolumeDevicePolicy",
    "transferEnv",
    "resourcesPolicy",
)
_SUBPATH_EXPR_ENV = re.compile(r"\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")
_SUBSCRIPTED = re.compile(r"^(metadata\.annotations|metadata\.labels)\['(.*)'\]$")


class InjectionError(ValueError):
    """Injection cannot proceed (a corrupt pod annotation, a bad MergePatchJson); upstream answers 500."""


class InjectionConflict(ValueError):
    """Two sources inject a container of the same name; the apiserver would refuse such a pod."""


@dataclass
class _Additions:
    """Everything the SidecarSets contribute, collected before any of it touches the pod."""

    containers: list[dict[str, Any]] = field(default_factory=list)
    init_containers: list[dict[str, Any]] = field(default_factory=list)
    secrets: list[dict[str, Any]] = field(default_factory=list)
    volumes: list[dict[str, Any]] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


def merge_by_key(
    original: list[dict[str, Any]], extra: list[dict[str, Any]], key: str
) -> list[dict[str, Any]]:
    """Append the `extra` items whose `key` is not taken yet (`util.MergeEnvVar`/`MergeVolumes`)."""
    seen = {item.get(key) for item in original}
    merged = list(original)
    for item in extra:
        if item.get(key) not in seen:
            merged.append(item)
            seen.add(item.get(key))
    return merged


def _set_list(obj: dict[str, Any], key: str, items: list[dict[str, Any]]) -> None:
    """Go writes a nil slice as nothing at all; keep the dict the same shape."""
    if items:
        obj[key] = items
    else:
        obj.pop(key, None)


def _merge_mounts(container: dict[str, Any], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`util.MergeVolumeMounts`: a shared mount is skipped when its path is already used."""
    taken = {m.get("mountPath") for m in container.get("volumeMounts") or []}
    taken |= {d.get("devicePath") for d in container.get("volumeDevices") or []}
    merged = list(container.get("volumeMounts") or [])
    for mount in extra:
        if mount.get("mountPath") not in taken:
            merged.append(mount)
            taken.add(mount.get("mountPath"))
    return merged


def _merge_devices(container: dict[str, Any], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    taken = {d.get("devicePath") for d in container.get("volumeDevices") or []}
    taken |= {m.get("mountPath") for m in container.get("volumeMounts") or []}
    merged = list(container.get("volumeDevices") or [])
    for device in extra:
        if device.get("devicePath") not in taken:
            merged.append(device)
            taken.add(device.get("devicePath"))
    return merged


def _app_containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """Pod containers that are not themselves injected sidecars (no `IS_INJECTED=true`)."""
    return [
        c
        for c in containers_of(pod)
        if not any(e.get("name") == ENV_IS_INJECTED and e.get("value") == "true" for e in c.get("env") or [])
    ]


def shared_mounts_and_envs(
    sidecar: dict[str, Any], pod: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """shareVolumePolicy enabled: every app container's volumeMounts, plus the envs their
    `subPathExpr` expands (`$(POD_NAME)`), copied from the container that mounts them."""
    if section(sidecar, "shareVolumePolicy").get("type") != SHARE_VOLUME_ENABLED:
        return [], []
    mounts: list[dict[str, Any]] = []
    envs: list[dict[str, Any]] = []
    for app in _app_containers(pod):
        app_envs = {e.get("name"): e for e in app.get("env") or []}
        for mount in app.get("volumeMounts") or []:
            mounts.append(mount)
            for name in _SUBPATH_EXPR_ENV.findall(mount.get("subPathExpr") or ""):
                if name in app_envs:
                    envs.append(app_envs[name])
    return mounts, envs


def shared_devices(sidecar: dict[str, Any], pod: dict[str, Any]) -> list[dict[str, Any]]:
    if (section(sidecar, "shareVolumeDevicePolicy").get("type")) != SHARE_VOLUME_ENABLED:
        return []
    return [d for app in _app_containers(pod) for d in app.get("volumeDevices") or []]


def _container_name_from(field_ref: dict[str, Any], pod: dict[str, Any]) -> str | None:
    """`ExtractContainerNameFromFieldPath`: only `metadata.annotations['k']` / `metadata.labels['k']`."""
    match = _SUBSCRIPTED.match(field_ref.get("fieldPath") or "")
    if not match:
        return None
    source = "annotations" if match.group(1).endswith("annotations") else "labels"
    return section(pod, "metadata", source).get(match.group(2), "")


def transferred_envs(sidecar: dict[str, Any], pod: dict[str, Any]) -> list[dict[str, Any]]:
    """`transferEnv`: copy named envs (value or valueFrom as written) from a source container."""
    in_pod = {(c.get("name"), e.get("name")): e for c in containers_of(pod) for e in c.get("env") or []}
    envs: list[dict[str, Any]] = []
    for transfer in sidecar.get("transferEnv") or []:
        names = set(transfer.get("envNames") or [])
        if transfer.get("envName"):
            names.add(transfer["envName"])
        source = transfer.get("sourceContainerName") or ""
        field_ref = section(transfer, "sourceContainerNameFrom").get("fieldRef")
        if field_ref is not None:
            resolved = _container_name_from(field_ref, pod)
            if resolved is None:
                continue
            source = resolved
        envs.extend(in_pod[(source, name)] for name in sorted(names) if (source, name) in in_pod)
    return envs


def _prepare(
    sidecar: dict[str, Any],
    pod: dict[str, Any],
    volumes: dict[str, dict[str, Any]],
    additions: _Additions,
    sidecarsets: list[dict[str, Any]],
) -> None:
    """Resolve one sidecar in place: resourcesPolicy, shared mounts, transferred envs, IS_INJECTED,
    its volumes."""
    try:
        apply_resources_policy(sidecar, pod, sidecarsets)
    except ResourcesPolicyError as exc:
        raise InjectionError(str(exc)) from exc
    mounts, subpath_envs = shared_mounts_and_envs(sidecar, pod)
    transfer = merge_by_key(transferred_envs(sidecar, pod), subpath_envs, "name")
    for ref in (sidecar.get("volumeMounts") or []) + (sidecar.get("volumeDevices") or []):
        if ref.get("name") in volumes:
            # a copy: the cache's object stays untouched
            additions.volumes.append(copy.deepcopy(volumes[ref["name"]]))
    _set_list(sidecar, "volumeMounts", _merge_mounts(sidecar, mounts))
    env = [*(sidecar.get("env") or []), {"name": ENV_IS_INJECTED, "value": "true"}]
    sidecar["env"] = merge_by_key(env, transfer, "name")
    _set_list(sidecar, "volumeDevices", _merge_devices(sidecar, shared_devices(sidecar, pod)))


def _load_hash_annotation(pod: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    """Existing per-SidecarSet records; the old `{name: hash}` form is upgraded as upstream does."""
    meta = pod.get("metadata") or {}
    raw = section(meta, "annotations").get(key)
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
        if not isinstance(parsed, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        where = f"pod({meta.get('namespace', '')}/{meta.get('name', '')})"
        raise InjectionError(
            f"{where} invalid annotations[{key}] value {raw}, unmarshal failed: {exc}"
        ) from exc
    records = {}
    for name, value in parsed.items():
        if isinstance(value, str):
            records[name] = {
                "updateTimestamp": None,
                "hash": value,
                "sidecarSetName": name,
                "sidecarList": None,
            }
        elif isinstance(value, dict):
            records[name] = upgrade_spec(
                value.get("updateTimestamp"),
                value.get("hash", ""),
                value.get("sidecarSetName", ""),
                value.get("sidecarList"),
                value.get("controllerRevision", ""),
            )
        else:
            raise InjectionError(
                f"pod({meta.get('namespace', '')}/{meta.get('name', '')}) invalid annotations[{key}] "
                f"value {raw}, unmarshal failed: entry {name} is not an object"
            )
    return records


def upgrade_spec(
    timestamp: str | None, hash_: str, name: str, sidecars: list[str] | None, revision: str = ""
) -> dict[str, Any]:
    """`SidecarSetUpgradeSpec` in Go field order; controllerRevision is omitempty."""
    spec: dict[str, Any] = {
        "updateTimestamp": timestamp,
        "hash": hash_,
        "sidecarSetName": name,
        "sidecarList": sidecars,
    }
    if revision:
        spec["controllerRevision"] = revision
    return spec


def _working_hot_containers(pod: dict[str, Any]) -> dict[str, str]:
    raw = annotations_of(pod).get(hotupgrade.ANNOTATION_WORKING)
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        return {}  # upstream logs and starts from an empty record
    return parsed if isinstance(parsed, dict) else {}


def _build_sidecars(pod: dict[str, Any], sidecarsets: list[dict[str, Any]], now: str) -> _Additions:
    """`buildSidecars` for a CREATE: what to add, from SidecarSets already matched and ordered."""
    additions = _Additions()
    hashes = _load_hash_annotation(pod, ANNOTATION_SIDECARSET_HASH)
    hashes_without_image = _load_hash_annotation(pod, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE)
    working = _working_hot_containers(pod)
    listed = annotations_of(pod).get(ANNOTATION_SIDECARSET_INJECTED_LIST)
    names = set(listed.split(",")) if listed else set()
    for sidecarset in sidecarsets:
        meta = sidecarset.get("metadata") or {}
        name = meta.get("name") or ""
        annotations = meta.get("annotations") or {}
        spec = sidecarset.get("spec") or {}
        names.add(name)
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        sidecar_list: set[str] = set()
        injecting = False
        # shallow copies suffice: _prepare only rebinds top-level fields, core_container rebuilds the rest
        for init in [dict(c) for c in spec.get("initContainers") or []]:
            if is_native_sidecar(init):
                sidecar_list.add(init.get("name", ""))
            _prepare(init, pod, volumes, additions, sidecarsets)
            injecting = True
            hot = section(init, "upgradeStrategy").get("upgradeType") == UPGRADE_HOT
            if is_native_sidecar(init) and hot:
                additions.init_containers.extend(hotupgrade.expand(init, working, additions.annotations))
            else:
                additions.init_containers.append(init)
        additions.secrets.extend(dict(s) for s in spec.get("imagePullSecrets") or [])
        for sidecar in [dict(c) for c in spec.get("containers") or []]:
            sidecar_list.add(sidecar.get("name", ""))
            _prepare(sidecar, pod, volumes, additions, sidecarsets)
            injecting = True
            if section(sidecar, "upgradeStrategy").get("upgradeType") == UPGRADE_HOT:
                additions.containers.extend(hotupgrade.expand(sidecar, working, additions.annotations))
            else:
                additions.containers.append(sidecar)
        if injecting:
            revision = status_of(sidecarset).get("latestRevision") or ""
            listed_sidecars = sorted(sidecar_list)
            hashes[name] = upgrade_spec(
                now, annotations.get(ANNOTATION_SIDECARSET_HASH, ""), name, listed_sidecars, revision
            )
            hashes_without_image[name] = upgrade_spec(
                now, annotations.get(ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE, ""), name, listed_sidecars
            )
    additions.annotations[ANNOTATION_SIDECARSET_HASH] = gojson.dumps(dict(sorted(hashes.items()))).decode()
    additions.annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] = gojson.dumps(
        dict(sorted(hashes_without_image.items()))
    ).decode()
    additions.annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] = ",".join(sorted(names))
    return additions


def core_container(sidecar: dict[str, Any]) -> dict[str, Any]:
    """The Container a sidecar becomes in the pod, shaped as Go would encode it."""
    return gojson.struct({k: v for k, v in sidecar.items() if k not in SIDECAR_ONLY_FIELDS}, "Container")


def merge_containers(
    pod_containers: list[dict[str, Any]], sidecars: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`mergeSidecarContainers`: a same-named pod container is replaced where it stands; other
    sidecars go before (BeforeAppContainer) or after (anything else) the pod's own."""
    merged = list(pod_containers)
    index = {c.get("name"): i for i, c in enumerate(pod_containers)}
    before, after = [], []
    for sidecar in sidecars:
        container = core_container(sidecar)
        if sidecar.get("name") in index:
            merged[index[sidecar.get("name")]] = container
        elif sidecar.get("podInjectPolicy") == INJECT_BEFORE_APP:
            before.append(container)
        else:
            after.append(container)
    return before + merged + after


def _check_unique(spec: dict[str, Any], injected: set[str]) -> None:
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(key) or []):
            name = container.get("name")
            if name in seen and name in injected:
                raise InjectionConflict(f'spec.{key}[{i}].name: Duplicate value: "{name}"')
            seen.add(name)


def inject(
    pod: dict[str, Any],
    sidecarsets: list[dict[str, Any]],
    *,
    sort_containers_by_name: bool = False,
    now: datetime.datetime | None = None,
) -> bool:
    """Inject the matched, ordered `sidecarsets` into `pod` in place; True when the pod changed.

    `sort_containers_by_name` is gate EnableSortSidecarContainerByName (initContainers are always
    sorted by name). Raises InjectionError or InjectionConflict as described on them.
    """
    if not sidecarsets or not is_active_pod(pod):
        return False
    changed = False
    for sidecarset in sidecarsets:
        try:
            changed = patch_pod_metadata(pod, spec_of(sidecarset).get("patchPodMetadata")) or changed
        except ValueError as exc:
            raise InjectionError(str(exc)) from exc
    additions = _build_sidecars(pod, sidecarsets, rfc3339(now or datetime.datetime.now(datetime.UTC)))
    if not additions.containers and not additions.init_containers:
        return changed
    spec = pod.setdefault("spec", {})
    additions.init_containers.sort(key=lambda c: c.get("name", ""))
    if sort_containers_by_name:
        additions.containers.sort(key=lambda c: c.get("name", ""))
    _set_list(
        spec, "initContainers", merge_containers(spec.get("initContainers") or [], additions.init_containers)
    )
    _set_list(spec, "containers", merge_containers(spec.get("containers") or [], additions.containers))
    _set_list(spec, "volumes", merge_by_key(spec.get("volumes") or [], additions.volumes, "name"))
    secrets = merge_by_key([], (spec.get("imagePullSecrets") or []) + additions.secrets, "name")
    _set_list(spec, "imagePullSecrets", secrets)
    metadata = pod.setdefault("metadata", {})
    metadata["annotations"] = {**section(metadata, "annotations"), **additions.annotations}
    _check_unique(spec, {c.get("name", "") for c in additions.containers + additions.init_containers})
    return True
