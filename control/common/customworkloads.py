"""Custom workloads named in ConfigMap `kruise-configuration`: the JSON decoding both whitelists share,
and PersistentPodState's own list.

Two keys name kinds kruise should follow beyond the built-in workloads:
`WorkloadSpread_Watch_Custom_Workload_WhiteList` (targets with subResources and a replicasPath, see
`kruise.control.workloadspread.whitelist`) and `PPS_Watch_Custom_Workload_WhiteList`, a plain list of
statefulset-like kinds a PersistentPodState may target:

    {"workloads": [{"group": "demo.io", "version": "v1", "kind": "GameServerSet"}]}

Field names match case-insensitively, as Go's JSON decoding does. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.keys import CONFIG_PPS_WATCH_CUSTOM_WORKLOAD_WHITELIST as PPS_KEY
from kruise.api.persistentpodstate import DEFAULT_SUPPORTED_GROUPS as BUILTIN_STATEFULSET_GROUPS
from kruise.api.persistentpodstate import parse_group


class WhitelistError(ValueError):
    """A whitelist in kruise-configuration is not valid JSON of the expected shape."""


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def field(obj: Mapping[str, Any], name: str) -> Any:
    """`obj[name]`, else the first key equal to `name` ignoring case (Go's decoder), else None."""
    if name in obj:
        return obj[name]
    lowered = name.lower()
    for key, value in obj.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return None


def string(key: str, obj: Mapping[str, Any], name: str, path: str) -> str:
    value = field(obj, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WhitelistError(f"{key}: {path}.{name}: must be a string, got {value!r}")
    return value


def json_object(key: str, value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WhitelistError(f"{key}: {path}: must be a JSON object, got {value!r}")
    return value


def json_list(key: str, value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WhitelistError(f"{key}: {path}: must be a JSON array, got {value!r}")
    return value


def gvk(key: str, obj: Mapping[str, Any], path: str) -> GroupVersionKind:
    return GroupVersionKind(
        string(key, obj, "group", path), string(key, obj, "version", path), string(key, obj, "kind", path)
    )


def workload_items(configuration: Mapping[str, str] | None, key: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, object) of each entry of `workloads` under `key` ([] when the ConfigMap, the key or the
    list is absent). Raises WhitelistError naming the key on bad JSON or a wrong shape."""
    raw = (configuration or {}).get(key)
    if raw is None or raw == "":
        return []
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise WhitelistError(f"{key}: not valid JSON: {exc}") from exc
    if document is None:
        return []
    top = json_object(key, document, "")
    return [
        (f"workloads[{i}]", json_object(key, item, f"workloads[{i}]"))
        for i, item in enumerate(json_list(key, field(top, "workloads"), "workloads"))
    ]


@dataclass(frozen=True)
class StatefulSetLikeWhitelist:
    """PPS_Watch_Custom_Workload_WhiteList: kinds whose pods are numbered `<name>-<ordinal>` as a
    StatefulSet's, so a PersistentPodState may target them."""

    workloads: tuple[GroupVersionKind, ...] = ()

    def kinds(self) -> frozenset[tuple[str, str]]:
        """(group, kind) a PersistentPodState may target beyond StatefulSets."""
        return frozenset((w.group, w.kind) for w in self.workloads)

    def allows(self, api_version: str, kind: str) -> bool:
        """ValidateAPIVersionAndKind: a StatefulSet of a built-in group, or a whitelisted (group, kind)
        (any version); an apiVersion that does not parse is never allowed."""
        group = parse_group(api_version)
        if group is None:
            return False
        if kind == "StatefulSet" and group in BUILTIN_STATEFULSET_GROUPS:
            return True
        return (group, kind) in self.kinds()

    def is_custom(self, api_version: str, kind: str) -> bool:
        """Allowed only through the whitelist (not a built-in StatefulSet)."""
        group = parse_group(api_version)
        if group is None or (kind == "StatefulSet" and group in BUILTIN_STATEFULSET_GROUPS):
            return False
        return (group, kind) in self.kinds()


def parse_pps_whitelist(configuration: Mapping[str, str] | None) -> StatefulSetLikeWhitelist:
    """The PersistentPodState whitelist in kruise-configuration's `data` (empty when absent).

    Raises WhitelistError naming the key and the offending field on bad JSON or a wrong shape."""
    return StatefulSetLikeWhitelist(
        tuple(gvk(PPS_KEY, obj, path) for path, obj in workload_items(configuration, PPS_KEY))
    )
