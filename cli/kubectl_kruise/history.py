"""Rollout history as kubectl shows it, and which revision `rollout undo` goes back to.

Every kind except Deployment keeps its history in ControllerRevisions it controls (revision
data `{"spec": {"template": {..., "$patch": "replace"}}}`); a Deployment keeps it in its
ReplicaSets, numbered by the `deployment.kubernetes.io/revision` annotation. Both are reduced
to `Revision(number, template, change_cause)` so listing, describing and choosing are shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.cli.kubectl_kruise.describe import describe_pod_template
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.control.common.revision import go_encoded_template, go_json

CHANGE_CAUSE_ANNOTATION = "kubernetes.io/change-cause"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
NO_HISTORY = "No rollout history found."


class HistoryError(PluginError):
    """No such revision, or nothing to roll back to; kubectl's wording."""


@dataclass(frozen=True)
class Revision:
    number: int
    template: dict[str, Any]
    change_cause: str
    source: Mapping[str, Any]  # the ControllerRevision or ReplicaSet it came from


def is_controlled_by(obj: Mapping[str, Any], owner_uid: str) -> bool:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid") == owner_uid:
            return True
    return False


def _change_cause(obj: Mapping[str, Any]) -> str:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(CHANGE_CAUSE_ANNOTATION, "")


def template_of_revision_data(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pod template a revision restores, without the patch directive and without the
    `creationTimestamp: null` Go's encoder writes into every stored template."""
    template = dict(((data or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    metadata = template.get("metadata")
    if (
        isinstance(metadata, dict)
        and "creationTimestamp" in metadata
        and metadata["creationTimestamp"] is None
    ):
        template["metadata"] = {k: v for k, v in metadata.items() if k != "creationTimestamp"}
    return template


def controller_revisions(revisions: Iterable[Mapping[str, Any]], owner_uid: str) -> list[Revision]:
    """The owner's revisions, by number; a number seen twice keeps the last one listed, as
    kubectl's map does."""
    by_number: dict[int, Revision] = {}
    for rev in revisions:
        if not is_controlled_by(rev, owner_uid):
            continue
        number = int(rev.get("revision") or 0)
        by_number[number] = Revision(
            number, template_of_revision_data(rev.get("data")), _change_cause(rev), rev
        )
    return [by_number[n] for n in sorted(by_number)]


def replicaset_revisions(replicasets: Iterable[Mapping[str, Any]], owner_uid: str) -> list[Revision]:
    by_number: dict[int, Revision] = {}
    for rs in replicasets:
        if not is_controlled_by(rs, owner_uid):
            continue
        annotations = (rs.get("metadata") or {}).get("annotations") or {}
        try:
            number = int(annotations.get(REVISION_ANNOTATION, ""))
        except ValueError:
            continue
        template = dict((rs.get("spec") or {}).get("template") or {})
        by_number[number] = Revision(number, template, _change_cause(rs), rs)
    return [by_number[n] for n in sorted(by_number)]


def _table(rows: list[tuple[str, str]]) -> str:
    """Go's tabwriter (padding 2, spaces) over two columns: the last cell is never padded."""
    width = max(len(first) for first, _ in rows) + 2
    return "".join(f"{first.ljust(width)}{second}\n" for first, second in rows)


def view_history(revisions: list[Revision], number: int = 0) -> str:
    """The text after `<kind>/<name> `: the revision table, or one revision's pod template."""
    if not revisions:
        return NO_HISTORY
    if number > 0:
        for rev in revisions:
            if rev.number == number:
                return describe_pod_template(rev.template)
        raise HistoryError("unable to find the specified revision")
    rows = [("REVISION", "CHANGE-CAUSE")] + [(str(r.number), r.change_cause or "<none>") for r in revisions]
    return _table(rows)


def revision_not_found(number: int) -> HistoryError:
    return HistoryError(f"unable to find specified revision {number} in history")


def find_revision(revisions: list[Revision], to_revision: int, latest_word: str = "last") -> Revision:
    """`--to-revision=N`, or (0) the second newest revision, as kruise-tools' findHistory."""
    if to_revision < 0:
        raise revision_not_found(to_revision)
    if to_revision == 0:
        if len(revisions) <= 1:
            raise HistoryError(f"no {latest_word} revision to roll back to")
        return revisions[-2]
    for rev in revisions:
        if rev.number == to_revision:
            return rev
    raise revision_not_found(to_revision)


def _without_hash(template: Mapping[str, Any]) -> dict[str, Any]:
    encoded = go_encoded_template(template)
    labels = dict((encoded.get("metadata") or {}).get("labels") or {})
    labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    encoded["metadata"] = {**encoded["metadata"], "labels": labels}
    return encoded


def templates_equal(lhs: Mapping[str, Any], rhs: Mapping[str, Any]) -> bool:
    """Semantic equality of pod templates, ignoring a Deployment's pod-template-hash label."""
    return go_json(_without_hash(lhs)) == go_json(_without_hash(rhs))


def deployment_rollback_target(
    revisions: list[Revision], current_template: Mapping[str, Any], to_revision: int, name: str
) -> Revision:
    """kubectl's deploymentRevision: the named revision, else the one before the newest."""
    if to_revision < 0:
        raise revision_not_found(to_revision)
    if to_revision > 0:
        for rev in revisions:
            if rev.number == to_revision:
                return rev
        raise revision_not_found(to_revision)
    if len(revisions) < 2:
        raise HistoryError(f'no rollout history found for deployment "{name}"')
    return revisions[-2]


# Deployment annotations kubectl never copies from a ReplicaSet on rollback.
DEPLOYMENT_ANNOTATIONS_TO_SKIP = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION_ANNOTATION,
        "deployment.kubernetes.io/revision-history",
        "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas",
        "deprecated.deployment.rollback.to",
    }
)


def deployment_rollback_patch(deployment: Mapping[str, Any], target: Revision) -> list[dict[str, Any]]:
    """JSON patch restoring the ReplicaSet's template (without its hash label) and annotations."""
    template = dict(target.template)
    meta = dict(template.get("metadata") or {})
    labels = dict(meta.get("labels") or {})
    labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    meta["labels"] = labels
    template["metadata"] = meta
    annotations = {
        k: v
        for k, v in ((deployment.get("metadata") or {}).get("annotations") or {}).items()
        if k in DEPLOYMENT_ANNOTATIONS_TO_SKIP
    }
    rs_annotations = (target.source.get("metadata") or {}).get("annotations") or {}
    annotations.update({k: v for k, v in rs_annotations.items() if k not in DEPLOYMENT_ANNOTATIONS_TO_SKIP})
    return [
        {"op": "replace", "path": "/spec/template", "value": template},
        {"op": "add", "path": "/metadata/annotations", "value": annotations},
    ]


def template_rollback_patch(target: Revision) -> list[dict[str, Any]]:
    """Put the revision's whole template back (a replace, as the revision's `$patch: replace`
    means, so fields added since that revision are removed too)."""
    return [{"op": "replace", "path": "/spec/template", "value": target.template}]
