"""Custom workloads a WorkloadSpread may target, from ConfigMap `kruise-configuration` (kruise
namespace), key `WorkloadSpread_Watch_Custom_Workload_WhiteList`:

    {"workloads": [{"group": "demo.io", "version": "v1", "kind": "GameSet",
                    "subResources": [{"group": "demo.io", "version": "v1", "kind": "GameReplicas"}],
                    "replicasPath": "spec.replicas"}]}

A whitelisted kind may be a WorkloadSpread's target; its pods are followed up their controller
chain through the kind itself and its `subResources` (the kinds it creates pods through), and the
replicas percentages resolve against are read at `replicasPath` (dotted, list indexes as numbers).
Field names match case-insensitively, as Go's JSON decoding does (decoding shared with
PersistentPodState's whitelist in `kruise.control.common.customworkloads`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.keys import CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.control.common.customworkloads import (
    GroupVersionKind,
    WhitelistError,
    field,
    gvk,
    json_list,
    json_object,
    string,
    workload_items,
)

__all__ = ["CustomWorkload", "GroupVersionKind", "ReplicasPathError", "Whitelist", "WhitelistError",
           "parse_whitelist", "replicas_at"]  # fmt: skip


class ReplicasPathError(ValueError):
    """`replicasPath` does not lead to an integer in the workload."""


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


def parse_whitelist(configuration: Mapping[str, str] | None) -> Whitelist:
    """The whitelist in kruise-configuration's `data` (absent ConfigMap or key: empty whitelist).

    Raises WhitelistError naming the key and the offending field on bad JSON or a wrong shape."""
    workloads = []
    for path, obj in workload_items(configuration, KEY):
        subs = tuple(
            gvk(KEY, json_object(KEY, sub, f"{path}.subResources[{j}]"), f"{path}.subResources[{j}]")
            for j, sub in enumerate(json_list(KEY, field(obj, "subResources"), f"{path}.subResources"))
        )
        workloads.append(CustomWorkload(gvk(KEY, obj, path), subs, string(KEY, obj, "replicasPath", path)))
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
