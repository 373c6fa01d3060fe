"""Hash of the env values a container reads from pod labels/annotations.

kruise-daemon reports it (runtime-containers-meta ``extractedEnvFromMetadataHash``) for the
running container, and the controller compares it with the hash expected from the pod's current
metadata: equal means the container was restarted with the new values. Both sides in kruise-py
use this function; it hashes the same sorted (name, value) list as upstream but with FNV-1a over
compact JSON instead of Go's spew-based DeepHashObject, so values differ from a Go daemon's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from kruise.api.objects import section
from kruise.control.revision import fnv1a_32, go_json

_SUBSCRIPTED = re.compile(r"^(.*)\['(.*)'\]$")
EXCLUDED_ENVS = frozenset({"SIDECARSET_VERSION", "SIDECARSET_VERSION_ALT"})
_META_PATHS = ("metadata.annotations", "metadata.labels")


def meta_env_refs(container: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(env name, metadata path, key) for every downward-API env reading labels/annotations."""
    found = []
    for env in container.get("env") or []:
        field_ref = section(env, "valueFrom").get("fieldRef")
        if env.get("value") or not field_ref or env.get("name") in EXCLUDED_ENVS:
            continue
        match = _SUBSCRIPTED.match(field_ref.get("fieldPath", ""))
        if match and match.group(1) in _META_PATHS:
            found.append((env["name"], match.group(1), match.group(2)))
    return found


def _hash(envs: list[dict[str, str]]) -> int:
    return fnv1a_32(go_json(sorted(envs, key=lambda e: e["name"])))


def expected_hash(container: Mapping[str, Any], pod_metadata: Mapping[str, Any]) -> int:
    """Hash of the values the container *should* see given the pod's metadata now."""
    envs = []
    for name, path, key in meta_env_refs(container):
        source = pod_metadata.get("annotations" if path == "metadata.annotations" else "labels") or {}
        envs.append({"name": name, "value": source.get(key, "")})
    return _hash(envs)


def current_hash(container: Mapping[str, Any], getter: Callable[[str], str]) -> int:
    """Hash of the values the running container has (``getter`` reads an env by name)."""
    return _hash([{"name": name, "value": getter(name)} for name, _, _ in meta_env_refs(container)])
