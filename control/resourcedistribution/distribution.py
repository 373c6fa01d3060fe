"""ResourceDistribution planning (pure): target namespaces, the copy to write, and the status.

A ResourceDistribution (cluster-scoped) copies the Secret or ConfigMap in `spec.resource` into every
target namespace: all namespaces, or the union of `includedNamespaces` and the namespaces matching
`namespaceLabelSelector`; minus `excludedNamespaces`, and never kube-system or kube-public. Each copy
is controlled by the distribution (an owner reference to a cluster-scoped owner is valid from any
namespace, so deleting the distribution garbage-collects every copy) and annotated with the
distribution's name and the SHA-256 of the resource. An object of the same name the distribution
does not control is a conflict and is left alone.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.common import LabelSelector
from kruise.api.controllerref import controller_of, new_controller_ref
from kruise.api.keys import ANNOTATION_RESOURCEDISTRIBUTION_HASHCODE, ANNOTATION_RESOURCEDISTRIBUTION_SOURCE
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of
from kruise.api.resourcedistribution import ALWAYS_EXCLUDED_NAMESPACES
from kruise.control.common.revision import go_json

KIND = "ResourceDistribution"
API_VERSION = "apps.kruise.io/v1alpha1"

GET_FAILED = "GetResourceFailed"
CREATE_FAILED = "CreateResourceFailed"
UPDATE_FAILED = "UpdateResourceFailed"
DELETE_FAILED = "DeleteResourceFailed"
CONFLICT = "ConflictOccurred"
NAMESPACE_NOT_EXISTS = "NamespaceNotExists"
CONDITION_ORDER = (GET_FAILED, CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED, CONFLICT, NAMESPACE_NOT_EXISTS)
"""All six conditions are always in the status, in upstream's order."""
RETRIED = (GET_FAILED, CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED)
"""Failures worth a retry; a conflict or a missing namespace waits for an event instead."""
SUCCEEDED_REASON = "Succeeded"
NAMESPACE_GONE_MESSAGE = "namespace not found or is terminating"
CONFLICT_MESSAGE = (
    "conflict with existing resources because of the same namespace, group, version, kind and name"
)


def _targets(rd: Obj) -> Mapping[str, Any]:
    return spec_of(rd).get("targets") or {}


def _listed(targets: Obj, field: str) -> list[str]:
    return [str(item.get("name") or "") for item in (section(targets, field).get("list") or [])]


def _selector(targets: Obj) -> LabelSelector | None:
    """The namespace selector, or None when it selects nothing (absent or empty, as upstream)."""
    raw = targets.get("namespaceLabelSelector") or {}
    if not raw.get("matchLabels") and not raw.get("matchExpressions"):
        return None
    return LabelSelector.from_dict(dict(raw))


def _labels(namespace: Obj) -> dict[str, str]:
    return dict(labels_of(namespace))


def target_namespaces(rd: Obj, namespaces: Iterable[Obj]) -> tuple[list[str], list[str]]:
    """(matched, unmatched), both sorted. A listed namespace that does not exist is matched (and
    reported as NamespaceNotExists); unmatched are the existing namespaces that are not targets."""
    targets = _targets(rd)
    existing = [n for n in namespaces if meta_of(n).get("name")]
    names = [n["metadata"]["name"] for n in existing]
    matched: set[str] = set()
    if targets.get("allNamespaces"):
        matched.update(names)
    else:
        matched.update(_listed(targets, "includedNamespaces"))
        matched.update(n["metadata"]["name"] for n in existing if matches_selector(n, rd))
    matched.difference_update(ALWAYS_EXCLUDED_NAMESPACES)
    matched.difference_update(_listed(targets, "excludedNamespaces"))
    matched.discard("")
    return sorted(matched), sorted(set(names) - matched)


def matches_targets(namespace: Obj, rd: Obj) -> bool:
    """Would a namespace that just appeared be a target (upstream's check on namespace creation)."""
    name = meta_of(namespace).get("name") or ""
    targets = _targets(rd)
    if name in ALWAYS_EXCLUDED_NAMESPACES or name in _listed(targets, "excludedNamespaces"):
        return False
    if targets.get("allNamespaces") or name in _listed(targets, "includedNamespaces"):
        return True
    return matches_selector(namespace, rd)


def lists_namespace(namespace: Obj, rd: Obj) -> bool:
    """Is the namespace in `includedNamespaces` (checked when a namespace is deleted)."""
    return (meta_of(namespace).get("name") or "") in _listed(_targets(rd), "includedNamespaces")


def matches_selector(namespace: Obj, rd: Obj) -> bool:
    """Does the namespace's label set match the distribution's (non-empty) namespace selector."""
    selector = _selector(_targets(rd))
    try:
        return selector is not None and selector.matches(_labels(namespace))
    except ValueError:
        return False


def resource(rd: Obj) -> Mapping[str, Any]:
    return spec_of(rd).get("resource") or {}


def resource_name(rd: Obj) -> str:
    return str(meta_of(resource(rd)).get("name") or "")


def resource_kind(rd: Obj) -> str:
    return str(resource(rd).get("kind") or "")


def resource_hash(rd: Obj) -> str:
    """SHA-256 (hex) of the resource as written in the spec: the copies' hashcode annotation."""
    return hashlib.sha256(go_json(resource(rd))).hexdigest()


def is_controlled_by(obj: Obj, rd: Obj) -> bool:
    """The object's controller reference is this distribution (by uid; by kind and name without one)."""
    ref = controller_of(obj)
    if ref is None:
        return False
    uid = rd["metadata"].get("uid")
    if ref.get("uid") and uid:
        return bool(ref["uid"] == uid)
    return bool(ref.get("kind") == KIND and ref.get("name") == rd["metadata"]["name"])


def _normalized(body: Obj) -> dict[str, Any]:
    """The body as the apiserver stores it: a Secret's `stringData` folded into `data` (base64),
    `type` defaulted to Opaque. Without this a copy would always look out of date."""
    out = {k: v for k, v in body.items()}
    if out.get("kind") == "Secret":
        string_data = out.pop("stringData", None) or {}
        if string_data:
            data = dict(section(out, "data"))
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            out["data"] = data
        out.setdefault("type", "Opaque")
    return out


def _content(body: Obj) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ("metadata", "status")}


def needs_update(existing: Obj, rd: Obj) -> bool:
    """Does the copy's content (everything but metadata and status) differ from the resource's."""
    return _content(_normalized(existing)) != _content(_normalized(resource(rd)))


def desired_copy(rd: Obj, namespace: str, existing: Obj | None = None) -> dict[str, Any]:
    """The copy to create (or to PUT over `existing`): the resource, in `namespace`, controlled by the
    distribution, annotated with its name and hash; on update the existing labels, annotations and
    finalizers the resource does not set are kept, and its resourceVersion guards the write."""
    body = _normalized(resource(rd))
    source_meta = dict(meta_of(body))
    labels = dict(section(source_meta, "labels"))
    annotations = dict(section(source_meta, "annotations"))
    finalizers = list(source_meta.get("finalizers") or [])
    owners = [dict(r) for r in source_meta.get("ownerReferences") or []]
    meta: dict[str, Any] = {"name": source_meta.get("name"), "namespace": namespace}
    if existing is not None:
        old = existing.get("metadata") or {}
        labels = {**section(old, "labels"), **labels}
        annotations = {**section(old, "annotations"), **annotations}
        finalizers = sorted(set(finalizers) | set(old.get("finalizers") or []))
        owners = [dict(r) for r in old.get("ownerReferences") or []]
        meta["resourceVersion"] = old.get("resourceVersion")
    ref = new_controller_ref(rd, api_version=API_VERSION, kind=KIND)
    owners = [r for r in owners if r.get("uid") != ref["uid"]] + [ref]
    annotations[ANNOTATION_RESOURCEDISTRIBUTION_HASHCODE] = resource_hash(rd)
    annotations[ANNOTATION_RESOURCEDISTRIBUTION_SOURCE] = rd["metadata"]["name"]
    meta.update(annotations=annotations, ownerReferences=owners)
    if labels:
        meta["labels"] = labels
    if finalizers:
        meta["finalizers"] = finalizers
    return {**body, "metadata": meta}


@dataclass(frozen=True)
class Failure:
    """One namespace that could not be brought in line, by condition type and with the error."""

    condition: str
    namespace: str
    message: str


def conditions(old: Iterable[Obj], failures: Iterable[Failure], now: str) -> list[dict[str, Any]]:
    """The six conditions: True with the last error and the failed namespaces, else False/Succeeded;
    lastTransitionTime moves only when the status flips."""
    previous = {c.get("type"): c for c in old}
    by_type: dict[str, list[Failure]] = {t: [] for t in CONDITION_ORDER}
    for failure in failures:
        by_type[failure.condition].append(failure)
    out = []
    for type_ in CONDITION_ORDER:
        failed = by_type[type_]
        condition: dict[str, Any] = {
            "type": type_,
            "status": "True" if failed else "False",
            "reason": failed[-1].message if failed else SUCCEEDED_REASON,
        }
        if failed:
            condition["failedNamespace"] = [f.namespace for f in failed]
        before = previous.get(type_)
        if (
            before is not None
            and before.get("status") == condition["status"]
            and before.get("lastTransitionTime")
        ):
            condition["lastTransitionTime"] = before["lastTransitionTime"]
        else:
            condition["lastTransitionTime"] = now
        out.append(condition)
    return out


def status(rd: Obj, failures: list[Failure], desired: int, succeeded: int, now: str) -> dict[str, Any]:
    old = rd.get("status") or {}
    return {
        "desired": desired,
        "succeeded": succeeded,
        "failed": desired - succeeded,
        "observedGeneration": rd["metadata"].get("generation"),
        "conditions": conditions(old.get("conditions") or [], failures, now),
    }
