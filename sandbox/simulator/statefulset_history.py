"""ControllerRevisions of apps/v1 StatefulSets: what a revision holds, its name, and which to keep.

As kube-controller-manager records them: a revision's ``data`` is the patch
``{"spec": {"template": {..., "$patch": "replace"}}}`` that turns any set into one with that pod
template; its name is ``<set>-<hash>`` where the hash is an FNV-32a of the data plus the set's
``collisionCount`` (encoded like Kubernetes' SafeEncodeString, not byte-equal to upstream, which
hashes Go's encoding); it carries the template's labels plus ``controller.kubernetes.io/hash`` and
a ``revision`` number one above the highest. An identical template reuses its old revision (moved
to the newest number), so rolling back does not grow the history. Revisions neither current, nor
the update revision, nor used by a pod are pruned down to ``revisionHistoryLimit``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from kruise.sandbox.simulator.deployment import template_hash
from kruise.sandbox.simulator.owners import owner_reference

Obj = dict[str, Any]

HASH_LABEL = "controller.kubernetes.io/hash"


def revision_data(sts: Obj) -> Obj:
    template = copy.deepcopy((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def template_of(revision: Obj) -> Obj:
    """The pod template a revision holds (ApplyRevision on the template)."""
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def revision_name(sts: Obj, collision_count: int) -> str:
    return f"{sts['metadata']['name']}-{template_hash(revision_data(sts), collision_count)}"


def next_number(revisions: Iterable[Obj]) -> int:
    return max((int(r.get("revision", 0)) for r in revisions), default=0) + 1


def new_revision(sts: Obj, number: int, collision_count: int) -> Obj:
    meta = sts["metadata"]
    labels = dict((((sts.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
    name = revision_name(sts, collision_count)
    labels[HASH_LABEL] = name.rpartition("-")[2]
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [owner_reference(sts)],
        },
        "data": revision_data(sts),
        "revision": number,
    }


def equal_revisions(revisions: Iterable[Obj], data: Obj) -> list[Obj]:
    """Revisions holding exactly ``data``, oldest first."""
    return sorted((r for r in revisions if r.get("data") == data), key=lambda r: int(r.get("revision", 0)))


def to_prune(revisions: Iterable[Obj], live: set[str], limit: int) -> list[Obj]:
    """The oldest revisions not in ``live`` beyond ``limit`` of them (truncateHistory)."""
    history = sorted(
        (r for r in revisions if r["metadata"]["name"] not in live), key=lambda r: int(r.get("revision", 0))
    )
    return history[: max(len(history) - limit, 0)]
