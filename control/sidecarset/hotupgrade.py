"""Hot upgrade: a sidecar `c` runs as two containers, `c-1` (working) and `c-2` (parked on the
empty image), so the SidecarSet controller can later start the new version beside the old one and
hand over without a gap. Each learns its role from version annotations via the downward API.
"""

from __future__ import annotations

from typing import Any

from kruise.api.keys import (
    ANNOTATION_PREFIX_SIDECARSET_VERSION,
    ANNOTATION_PREFIX_SIDECARSET_VERSION_ALT,
    ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
    ENV_SIDECARSET_VERSION,
    ENV_SIDECARSET_VERSION_ALT,
)
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
    empty_one["image"] = (sidecar.get("upgradeStrategy") or {}).get("hotUpgradeEmptyImage") or ""
    annotations[version_annotation(first)] = "1"
    annotations[version_alt_annotation(first)] = "0"
    annotations[version_annotation(second)] = "0"
    annotations[version_alt_annotation(second)] = "1"
    working[sidecar.get("name", "")] = first
    annotations[ANNOTATION_WORKING] = gojson.dumps(dict(sorted(working.items()))).decode()
    return [working_one, empty_one]
