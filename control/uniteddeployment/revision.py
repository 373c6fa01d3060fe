"""UnitedDeployment revisions: one ControllerRevision per distinct `spec.template`.

As upstream, the revision data is `{"spec":{"template":{..., "$patch":"replace"}}}`, hashed with
Kubernetes' `HashControllerRevision` and named `<ud>-<hash>`; its labels are the workload
template's labels for StatefulSet / Advanced StatefulSet / Deployment templates and none for a
CloneSet template. The revision's name is what children and their pods carry in
`apps.kruise.io/controller-revision-hash`.

Bytes: upstream hashes Go's encoding of the typed template (with zero-valued struct fields Go
always emits); here the template is hashed as stored, so names differ from a Go controller's
for the same object. Nothing mixes the two controllers, so only stability matters.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.controllerref import new_controller_ref
from kruise.api.keys import LABEL_CONTROLLER_HASH
from kruise.api.objects import meta_of, section, spec_of, template_of
from kruise.control.common.revision import (
    controller_revision_name,
    go_json,
    hash_revision_data,
    next_revision_number,
    revisions_equal,
    sort_revisions,
)

LABELLED_TEMPLATES = ("statefulSetTemplate", "advancedStatefulSetTemplate", "deploymentTemplate")


def go_raw_json(value: Any) -> str:
    """A RawExtension as Go hands it over: compact JSON, keys sorted (the apiserver's encoding)."""
    return go_json(value).decode()


def revision_data(ud: Mapping[str, Any]) -> dict[str, Any]:
    template = copy.deepcopy(dict(template_of(ud)))
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def _revision_labels(ud: Mapping[str, Any]) -> dict[str, str]:
    template = spec_of(ud).get("template") or {}
    for field in LABELLED_TEMPLATES:
        if template.get(field) is not None:
            return dict((meta_of(template[field]).get("labels")) or {})
    return {}


def new_revision(ud: Mapping[str, Any], number: int, collision_count: int) -> dict[str, Any]:
    """The candidate ControllerRevision for the UnitedDeployment's current template."""
    meta = ud["metadata"]
    data = revision_data(ud)
    hash_ = hash_revision_data(go_json(data), collision_count)
    labels = _revision_labels(ud)
    labels[LABEL_CONTROLLER_HASH] = hash_
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": controller_revision_name(meta["name"], hash_),
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [
                new_controller_ref({**ud, "kind": "UnitedDeployment"}, api_version="apps.kruise.io/v1alpha1")
            ],
        },
        "data": data,
        "revision": number,
    }


@dataclass(frozen=True)
class HistoryPlan:
    """What to write so that the update revision exists, and which revisions the pass uses.

    `action`: "reuse" (the newest stored revision is the template), "rollback" (an older equal one:
    raise its `revision` to `update["revision"]`), or "create" (create `update`; on AlreadyExists
    with other data raise collisionCount and plan again).
    """

    action: str
    update: Mapping[str, Any]
    current_name: str
    deletions: tuple[str, ...]


def truncate(
    ordered: list[Mapping[str, Any]], ud: Mapping[str, Any]
) -> tuple[list[str], list[Mapping[str, Any]]]:
    """`cleanExpiredRevision`: beyond `revisionHistoryLimit`, the oldest revisions that are not the
    current or updated one are deleted; the kept list drops the oldest entries either way."""
    spec = ud.get("spec") or {}
    limit = spec.get("revisionHistoryLimit")
    limit = 10 if limit is None else int(limit)
    excess = len(ordered) - limit
    if excess <= 0:
        return [], ordered
    status = ud.get("status") or {}
    live = {status.get("currentRevision"), section(status, "updateStatus").get("updatedRevision")}
    doomed = [r["metadata"]["name"] for r in ordered[:excess] if r["metadata"]["name"] not in live]
    return doomed, ordered[excess:]


def plan_history(ud: Mapping[str, Any], revisions: Iterable[Mapping[str, Any]]) -> HistoryPlan:
    """`constructUnitedDeploymentRevisions` (the same step as the DaemonSet's `plan_history`): the
    stored history truncated, and the revision the current template resolves to."""
    ordered = sort_revisions(revisions)
    deletions, ordered = truncate(ordered, ud)
    status = ud.get("status") or {}
    number = next_revision_number(ordered)
    candidate = new_revision(ud, number, int(status.get("collisionCount") or 0))
    equal = [r for r in ordered if revisions_equal(r, candidate)]
    if equal and revisions_equal(ordered[-1], equal[-1]):
        action, update = "reuse", ordered[-1]
    elif equal:
        action, update = "rollback", {**equal[-1], "revision": number}
    else:
        action, update = "create", candidate
    current_name = status.get("currentRevision") or ""
    if not any(r["metadata"]["name"] == current_name for r in ordered):
        current_name = update["metadata"]["name"]
    return HistoryPlan(action, update, current_name, tuple(deletions))
