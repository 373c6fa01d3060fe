"""ControllerRevisions of an Advanced DaemonSet (upstream ``constructHistory`` / ``cleanupHistory``).

A revision stores the template as the strategic-merge patch ``{"spec":{"template":{…,
"$patch":"replace"}}}`` (the same shape CloneSet stores), is named ``<ds>-<hash>`` and labelled
``controller-revision-hash: <hash>``; the hash is what new pods carry in the same label and what
``status.daemonSetHash`` reports. The revision matching the current template is the current one,
all others are old; the current one is renumbered past every old one when a rollback brings an old
template back. Old revisions no pod still uses are deleted beyond ``revisionHistoryLimit``.

The hash is :func:`kruise.control.common.revision.hash_revision_data` over the stored data plus the
collision count (upstream hashes the Go template struct, which cannot be reproduced byte for byte
outside Go; a pod labelled by a Go controller is therefore seen as old and rolled once).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.api.controllerref import new_controller_ref
from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH
from kruise.api.objects import Obj, labels_of, section, spec_of, status_of
from kruise.control.common.revision import (
    cloneset_revision_data,
    controller_revision_name,
    go_json,
    hash_revision_data,
    revisions_equal,
    sort_revisions,
)

DEFAULT_HISTORY_LIMIT = 10


def revision_data(template: Obj) -> dict[str, Any]:
    """getPatch: the template as a replacing strategic-merge patch."""
    return cloneset_revision_data(template)


def template_hash(template: Obj, collision_count: int | None) -> str:
    return hash_revision_data(go_json(revision_data(template)), collision_count)


def revision_hash(revision: Obj) -> str:
    """The hash a revision stands for: its label, else its name (legacy revisions, as upstream)."""
    meta = revision.get("metadata") or {}
    return section(meta, "labels").get(LABEL_CONTROLLER_REVISION_HASH) or meta.get("name") or ""


def new_revision(daemonset: Obj, number: int) -> dict[str, Any]:
    """snapshot: the ControllerRevision for the DaemonSet's current template."""
    meta = daemonset["metadata"]
    template = spec_of(daemonset).get("template") or {}
    collision = int(status_of(daemonset).get("collisionCount") or 0)
    hash_ = template_hash(template, collision)
    labels = dict(labels_of(template))
    labels[LABEL_CONTROLLER_REVISION_HASH] = hash_
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": controller_revision_name(meta["name"], hash_),
            "namespace": meta.get("namespace"),
            "labels": labels,
            "ownerReferences": [
                new_controller_ref(daemonset, api_version="apps.kruise.io/v1alpha1", kind="DaemonSet")
            ],
        },
        "data": revision_data(template),
        "revision": number,
    }
    if meta.get("annotations"):
        body["metadata"]["annotations"] = dict(meta["annotations"])
    return body


@dataclass(frozen=True)
class HistoryPlan:
    """``current``: the stored revision of the current template, or None (then ``create`` it).
    ``renumber``: the revision number ``current`` must be moved to (None: leave it).
    ``old``: every other revision."""

    current: Obj | None
    create: Obj | None
    renumber: int | None
    old: tuple[Obj, ...]


def plan_history(daemonset: Obj, revisions: Iterable[Obj]) -> HistoryPlan:
    """constructHistory. When several stored revisions match the template the newest is current."""
    template = spec_of(daemonset).get("template") or {}
    probe = {"data": revision_data(template)}
    matching: list[Obj] = []
    old: list[Obj] = []
    for revision in sort_revisions(revisions):
        (matching if revisions_equal(revision, probe) else old).append(revision)
    next_number = max((int(r.get("revision") or 0) for r in old), default=0) + 1
    if not matching:
        return HistoryPlan(None, new_revision(daemonset, next_number), None, tuple(old))
    current = matching[-1]
    old.extend(matching[:-1])
    renumber = next_number if int(current.get("revision") or 0) < next_number else None
    return HistoryPlan(current, None, renumber, tuple(sort_revisions(old)))


def revisions_to_prune(
    old: Sequence[Obj], live_hashes: Iterable[str], history_limit: int | None
) -> list[str]:
    """cleanupHistory: names of old revisions to delete, oldest first, skipping any whose hash a pod
    still carries, until at most ``history_limit`` old revisions remain."""
    limit = DEFAULT_HISTORY_LIMIT if history_limit is None else int(history_limit)
    excess = len(old) - limit
    if excess <= 0:
        return []
    live = set(live_hashes)
    names: list[str] = []
    for revision in sort_revisions(old):
        if len(names) >= excess:
            break
        if revision_hash(revision) in live:
            continue
        names.append(revision["metadata"]["name"])
    return names
