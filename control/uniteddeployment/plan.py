"""One pass over a UnitedDeployment's children, decided without I/O.

Given the children of the template's kind (already read with `read_child`) the plan says which
duplicates go (a subset keeps its first child by name), which subsets need a new child, which
children belong to subsets no longer in the spec, and which kept children must be rewritten (and
why), each with the body to write. Children of another template kind are all deleted by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.uniteddeployment import UnitedDeployment
from kruise.control.uniteddeployment.subsets import Child, needs_update, patch_annotation, render_child


@dataclass(frozen=True)
class ChildWrite:
    subset: str
    body: dict[str, Any]
    reason: str = ""
    revision: str = ""
    partition: int = 0


@dataclass(frozen=True)
class ChildrenPlan:
    existing: Mapping[str, Child]
    """The child kept per subset name (including subsets no longer in the spec)."""
    creates: tuple[ChildWrite, ...]
    deletes: tuple[Child, ...]
    updates: tuple[ChildWrite, ...]


def group_children(children: Iterable[Child]) -> tuple[dict[str, Child], list[Child]]:
    """The first child (by name) of each subset, and the extra ones to delete."""
    keep: dict[str, Child] = {}
    extra: list[Child] = []
    for child in sorted(children, key=lambda c: c.name):
        if not child.subset_name:
            continue
        if child.subset_name in keep:
            extra.append(child)
        else:
            keep[child.subset_name] = child
    return keep, extra


def plan_children(
    ud_obj: Mapping[str, Any],
    ud: UnitedDeployment,
    existing: Mapping[str, Child],
    revision: str,
    next_replicas: Mapping[str, int],
    next_partitions: Mapping[str, int],
) -> ChildrenPlan:
    subsets = {s.name: s for s in ud.spec.topology.subsets or []}
    updates = []
    for name in sorted(set(existing) & set(subsets)):
        child = existing[name]
        replicas, partition = next_replicas[name], next_partitions[name]
        reason = needs_update(child, revision, replicas, partition, patch_annotation(subsets[name]))
        if reason is None:
            continue
        body = render_child(ud_obj, ud, name, revision, replicas, partition, existing=child.obj)
        updates.append(ChildWrite(name, body, reason, revision, partition))
    return ChildrenPlan(
        existing=dict(existing),
        creates=tuple(
            ChildWrite(
                name, render_child(ud_obj, ud, name, revision, next_replicas[name], next_partitions[name])
            )
            for name in sorted(set(subsets) - set(existing))
        ),
        deletes=tuple(existing[name] for name in sorted(set(existing) - set(subsets))),
        updates=tuple(updates),
    )
