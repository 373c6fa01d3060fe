"""Hot upgrade: a sidecar `c` runs as two containers, `c-1` (working) and `c-2` (parked on the
empty image), so the SidecarSet controller can later start the new version beside the old one and
hand over without a gap. Each learns its role from version annotations via the downward API.

`expand` is the webhook's part (injection); the rest is the controller's: which container of the pair
takes a new version (`container_to_upgrade`), the annotations that make it the working one
(`switch_working`), and, once it runs ready, putting the old one back on the empty image (`reset_idle`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from kruise.api.conditions import get_condition, is_true
from kruise.api.keys import (
    ANNOTATION_PREFIX_SIDECARSET_VERSION,
    ANNOTATION_PREFIX_SIDECARSET_VERSION_ALT,
    ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
    ENV_SIDECARSET_VERSION,
    ENV_SIDECARSET_VERSION_ALT,
)
from kruise.api.objects import annotations_of, containers_of, section
from kruise.api.sidecarset import UPGRADE_HOT
from kruise.control.sidecarset import gojson

ANNOTATION_WORKING = ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER


def container_names(name: str) -> tuple[str, str]:
    return f"{name}-1", f"{name}-2"


def version_annotation(container: str) -> str:
    return f"{ANNOTATION_PREFIX_SIDECARSET_VERSION}{container}"


def version_alt_annotation(container: str) -> str:
    return f"{ANNOTATION_PREFIX_SIDECARSET_VERSION_ALT}{container}"


def _with_version_env(container: dict[str, Any]) -> dict[str, Any]:
    name = container["name"]
    env = list(container.get("env") or [])
    for key, annotation in (
        (ENV_SIDECARSET_VERSION, version_annotation(name)),
        (ENV_SIDECARSET_VERSION_ALT, version_alt_annotation(name)),
    ):
        env.append(
            {"name": key, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{annotation}']"}}}
        )
    container["env"] = env
    return container


def expand(
    sidecar: dict[str, Any], working: dict[str, str], annotations: dict[str, str]
) -> list[dict[str, Any]]:
    """The two containers for `sidecar`; records their version annotations and marks `-1` as the
    working one in `working` (which accumulates across sidecars) and in `annotations`."""
    first, second = container_names(sidecar.get("name", ""))
    working_one = _with_version_env({**sidecar, "name": first})  # env is rebound, not appended to
    empty_one = _with_version_env({**sidecar, "name": second})
    empty_one["image"] = section(sidecar, "upgradeStrategy").get("hotUpgradeEmptyImage") or ""
    annotations[version_annotation(first)] = "1"
    annotations[version_alt_annotation(first)] = "0"
    annotations[version_annotation(second)] = "0"
    annotations[version_alt_annotation(second)] = "1"
    working[sidecar.get("name", "")] = first
    annotations[ANNOTATION_WORKING] = gojson.dumps(dict(sorted(working.items()))).decode()
    return [working_one, empty_one]


# --- the controller's side: rolling a new version into an injected pair -------------------------------


def is_hot(sidecar: Mapping[str, Any]) -> bool:
    return section(sidecar, "upgradeStrategy").get("upgradeType") == UPGRADE_HOT


def empty_image(sidecar: Mapping[str, Any]) -> str:
    return section(sidecar, "upgradeStrategy").get("hotUpgradeEmptyImage") or ""


def working_containers(pod: Mapping[str, Any]) -> dict[str, str]:
    """The working-container annotation, `{sidecar: "<sidecar>-1"|"<sidecar>-2"}`; an unreadable one
    counts as empty, as upstream (which then treats `-2` as working)."""
    raw = annotations_of(pod).get(ANNOTATION_WORKING)
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def pod_pair(sidecar_name: str, pod: Mapping[str, Any]) -> tuple[str, str]:
    """(working, other) container names of `sidecar_name` in `pod`: the other one is the idle container
    on the empty image or, while an upgrade is under way, the older version."""
    first, second = container_names(sidecar_name)
    if working_containers(pod).get(sidecar_name) == first:
        return first, second
    return second, first


def container_to_upgrade(
    sidecar: Mapping[str, Any], pod: Mapping[str, Any], ready: Callable[[str], bool]
) -> tuple[str, str]:
    """(container to receive the new image, the other one). Preference: the one on the empty image,
    else the only one not `ready` (started but not up yet), else the older (non-working) one."""
    first, second = container_names(sidecar.get("name", ""))
    images = {c.get("name"): c.get("image") for c in containers_of(pod)}
    empty = empty_image(sidecar)
    if images.get(first) == empty:
        return first, second
    if images.get(second) == empty:
        return second, first
    first_ready, second_ready = ready(first), ready(second)
    if first_ready and not second_ready:
        return second, first
    if second_ready and not first_ready:
        return first, second
    working, older = pod_pair(sidecar.get("name", ""), pod)
    return older, working


def switch_working(
    annotations: dict[str, str], sidecar_name: str, new: str, older: str, version: str
) -> None:
    """After `new` got the new image: it is the working container, at `version`, and each container's
    ALT version names the other's (`new`'s alt is what `older` runs)."""
    working = working_containers({"metadata": {"annotations": annotations}})
    working[sidecar_name] = new
    annotations[ANNOTATION_WORKING] = gojson.dumps(dict(sorted(working.items()))).decode()
    annotations[version_annotation(new)] = version
    annotations[version_alt_annotation(new)] = annotations.get(version_annotation(older), "")
    annotations[version_alt_annotation(older)] = version


def idle_containers(sidecarset: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, str]:
    """`{non-working container: empty image}` for each hot-upgrade sidecar of the SidecarSet."""
    idle = {}
    for sidecar in containers_of(sidecarset):
        if is_hot(sidecar):
            idle[pod_pair(sidecar.get("name", ""), pod)[1]] = empty_image(sidecar)
    return idle


def in_hot_upgrade(sidecarset: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Some non-working container is not back on the empty image: an upgrade still has to finish."""
    images = {c.get("name"): c.get("image") for c in containers_of(pod)}
    return any(images.get(name) != image for name, image in idle_containers(sidecarset, pod).items())


def working_side_ready(sidecarset: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """The pod is Running and Ready, or every container but the non-working ones reports ready
    (the old version may be gone already; only the new one must serve)."""
    status = pod.get("status") or {}
    if status.get("phase") == "Running" and is_true(get_condition(status, "Ready")):
        return True
    idle = idle_containers(sidecarset, pod)
    return all(s.get("ready") for s in status.get("containerStatuses") or [] if s.get("name") not in idle)


def reset_idle(sidecarset: Mapping[str, Any], pod: dict[str, Any]) -> list[str]:
    """Put every non-working container of `pod` (in place) back on the empty image, its version to "0"
    and the working one's alt version to "0"; the names of the containers changed."""
    containers = {c.get("name"): c for c in containers_of(pod)}
    annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
    changed = []
    for sidecar in containers_of(sidecarset):
        if not is_hot(sidecar):
            continue
        working, idle = pod_pair(sidecar.get("name", ""), pod)
        container = containers.get(idle)
        if container is None or container.get("image") == empty_image(sidecar):
            continue
        container["image"] = empty_image(sidecar)
        annotations[version_annotation(idle)] = "0"
        annotations[version_alt_annotation(working)] = "0"
        changed.append(idle)
    return changed
