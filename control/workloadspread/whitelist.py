"""Custom workloads a WorkloadSpread may target, from ConfigMap `kruise-configuration` (kruise
namespace), key `WorkloadSpread_Watch_Custom_Workload_WhiteList`:

    {"workloads": [{"group": "demo.io", "version": "v1", "kind": "GameSet",
                    "subResources": [{"group": "demo.io", "version": "v1", "kind": "GameReplicas"}],
                    "replicasPath": "spec.replicas"}]}

A whitelisted kind may be a WorkloadSpread's target; its pods are followed up their controller
chain through the kind itself and its `subResources` (the kinds it creates pods through), and the
replicas percentages resolve against are read at `replicasPath` (dotted, list indexes as numbers).
Field names match case-insensitively, as Go's JSON decoding does. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.keys import CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY


class WhitelistError(ValueError):
    """The whitelist in kruise-configuration is not valid JSON of the expected shape."""


class ReplicasPathError(ValueError):
    """`replicasPath` does not lead to an integer in the workload."""


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str


@dataclass(frozen=True)
class CustomWorkload:
    gvk: GroupVersionKind
    sub_resources: tuple[GroupVersionKind, ...] = ()
    replicas_path: str = ""


@dataclass(frozen=True)
class Whitelist:
    workloads: tuple[CustomWorkload, ...] = ()

    def target_kinds(self) -> frozenset[tuple[str, str]]:
        """(group, kind) a WorkloadSpread may target beyond the built-in workloads."""
        return frozenset((w.gvk.group, w.gvk.kind) for w in self.workloads)

    def owner_kinds(self) -> frozenset[tuple[str, str]]:
        """(group, kind) a pod's controller chain is followed through: targets and their subResources."""
        kinds = {(w.gvk.group, w.gvk.kind) for w in self.workloads}
        kinds.update((s.group, s.kind) for w in self.workloads for s in w.sub_resources)
        return frozenset(kinds)

    def kinds_to_follow(self) -> tuple[GroupVersionKind, ...]:
        """Every whitelisted kind (targets first, then subResources), each once."""
        seen: dict[tuple[str, str], GroupVersionKind] = {}
        for w in self.workloads:
            seen.setdefault((w.gvk.group, w.gvk.kind), w.gvk)
        for w in self.workloads:
            for s in w.sub_resources:
                seen.setdefault((s.group, s.kind), s)
        return tuple(seen.values())

    def replicas_path(self, group: str, kind: str) -> str | None:
        """The replicasPath of the whitelisted (group, kind), None when it is not whitelisted."""
        for w in self.workloads:
            if (w.gvk.group, w.gvk.kind) == (group, kind):
                return w.replicas_path
        return None


def _field(obj: Mapping[str, Any], name: str) -> Any:
    if name in obj:
        return obj[name]
    lowered = name.lower()
    for key, value in obj.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return None


def _string(obj: Mapping[str, Any], name: str, path: str) -> str:
    value = _field(obj, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WhitelistError(f"{KEY}: {path}.{name}: must be a string, got {value!r}")
    return value


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WhitelistError(f"{KEY}: {path}: must be a JSON object, got {value!r}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WhitelistError(f"{KEY}: {path}: must be a JSON array, got {value!r}")
    return value


def _gvk(obj: Mapping[str, Any], path: str) -> GroupVersionKind:
    return GroupVersionKind(
        _string(obj, "group", path), _string(obj, "version", path), _string(obj, "kind", path)
    )


def parse_whitelist(configuration: Mapping[str, str] | None) -> Whitelist:
    """The whitelist in kruise-configuration's `data` (absent ConfigMap or key: empty whitelist).

    Raises WhitelistError naming the key and the offending field on bad JSON or a wrong shape."""
    raw = (configuration or {}).get(KEY)
    if raw is None or raw == "":
        return Whitelist()
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise WhitelistError(f"{KEY}: not valid JSON: {exc}") from exc
    if document is None:
        return Whitelist()
    top = _object(document, "")
    workloads = []
    for i, item in enumerate(_list(_field(top, "workloads"), "workloads")):
        path = f"workloads[{i}]"
        obj = _object(item, path)
        subs = tuple(
            _gvk(_object(sub, f"{path}.subResources[{j}]"), f"{path}.subResources[{j}]")
            for j, sub in enumerate(_list(_field(obj, "subResources"), f"{path}.subResources"))
        )
        workloads.append(CustomWorkload(_gvk(obj, path), subs, _string(obj, "replicasPath", path)))
    return Whitelist(tuple(workloads))


def replicas_at(workload: Mapping[str, Any], path: str) -> int:
    """The integer at dotted `path` in the workload; an empty path reads as 0 (as upstream).

    Raises ReplicasPathError when a step is missing, an index is out of range or not a number, or
    the value is not an integer."""
    if not path:
        return 0
    value: Any = workload
    for part in path.split("."):
        if isinstance(value, Mapping):
            if part not in value:
                raise ReplicasPathError(f'replicasPath {path}: path "{part}" not exists')
            value = value[part]
        elif isinstance(value, list):
            if not part.lstrip("-").isdigit():
                raise ReplicasPathError(f"replicasPath {path}: {part!r} is not a list index")
            index = int(part)
            if index < 0 or index >= len(value):
                raise ReplicasPathError(f"replicasPath {path}: index {index} out of range")
            value = value[index]
        else:
            raise ReplicasPathError(f"replicasPath {path}: object is not deep enough at {part!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReplicasPathError(f"replicasPath {path}: {value!r} is not an integer")
    return value
