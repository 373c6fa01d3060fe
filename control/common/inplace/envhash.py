"""Hash of the env values a container reads from pod labels/annotations (InPlaceUpdateEnvFromMetadata).

kruise-daemon reports it (runtime-containers-meta ``extractedEnvFromMetadataHash``) for the running
container, from the values the container really has; kruise-manager compares it with the hash expected
from the pod's current metadata: equal means the container runs with the new values. The two sides may be
upstream's Go programs or kruise-py's in any mix (a Go daemon under a kruise-py manager, or a pod whose
annotation a Go daemon wrote before the switch), so the value is upstream's to the bit: the referencing
envs become ``[{"name", "value"}]`` (``value`` left out when empty, ``null`` for none), sorted by name,
encoded as Go's ``json.Marshal`` of ``[]v1.EnvVar``, rendered through ``hashutil.DeepHashObject`` (spew's
``%#v`` of the byte slice) and hashed with FNV-1a 32.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kruise.api.objects import section
from kruise.control.common.revision import fnv1a_32, go_json, spew_bytes

# Injected by SidecarSet and changed by it alone; never a reason to restart a container.
EXCLUDED_ENVS = frozenset({"SIDECARSET_VERSION", "SIDECARSET_VERSION_ALT"})
_META_PATHS = ("metadata.annotations", "metadata.labels")


def split_subscripted_path(field_path: str) -> tuple[str, str] | None:
    """``fieldpath.SplitMaybeSubscriptedPath``: ``metadata.labels['a']`` -> (``metadata.labels``, ``a``);
    the split is at the first ``['``, and a path without a subscript is None."""
    if not field_path.endswith("']"):
        return None
    path, sep, key = field_path[: -len("']")].partition("['")
    if not sep or not path:
        return None
    return path, key


def meta_env_refs(container: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(env name, metadata path, key) for every downward-API env reading labels/annotations."""
    found = []
    for env in container.get("env") or []:
        field_ref = section(env, "valueFrom").get("fieldRef")
        if env.get("value") or not field_ref or env.get("name") in EXCLUDED_ENVS:
            continue
        split = split_subscripted_path(str(field_ref.get("fieldPath") or ""))
        if split is not None and split[0] in _META_PATHS:
            found.append((str(env.get("name") or ""), split[0], split[1]))
    return found


def hash_envs(envs: list[tuple[str, str]]) -> int:
    """The hash of (name, value) pairs, in upstream's encoding (see the module docstring)."""
    ordered = sorted(envs, key=lambda e: e[0].encode())  # Go compares strings bytewise; stable
    body = [{"name": name, **({"value": value} if value else {})} for name, value in ordered]
    return fnv1a_32(spew_bytes(go_json(body or None)))


def expected_hash(container: Mapping[str, Any], pod_metadata: Mapping[str, Any]) -> int:
    """``GetExpectHash``: the values the container *should* see given the pod's metadata now."""
    envs = []
    for name, path, key in meta_env_refs(container):
        source = pod_metadata.get("annotations" if path == "metadata.annotations" else "labels") or {}
        envs.append((name, str(source.get(key, ""))))
    return hash_envs(envs)


def current_hash(container: Mapping[str, Any], getter: Callable[[str], str]) -> int:
    """``GetCurrentHash``: the values the running container has (``getter`` reads an env by name and
    raises when it cannot)."""
    return hash_envs([(name, getter(name)) for name, _, _ in meta_env_refs(container)])
