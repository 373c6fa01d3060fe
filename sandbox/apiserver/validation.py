"""The slice of built-in kinds' validation that clients and controllers run into in practice."""

from __future__ import annotations

import copy
from typing import Any

from kruise.sandbox.apiserver import crdconversion, crdversions
from kruise.sandbox.apiserver.claims import validate_claim_update
from kruise.sandbox.apiserver.errors import field_error
from kruise.sandbox.apiserver.features import NEWEST, ApiFeatures
from kruise.sandbox.apiserver.podupdateresize import MUTABLE_RESOURCES_RULE, resize_rules, without_resize
from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.selectors import labels_match, selector_from_label_selector

_POD_UPDATE_RULE = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)
_WORKLOADS = {
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
}


def _containers(spec: dict[str, Any], path: str) -> list[dict[str, str]]:
    causes = []
    containers = spec.get("containers")
    if not containers:
        causes.append(field_error("FieldValueRequired", f"{path}.containers"))
    seen: set[str] = set()
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            where = f"{path}.{group}[{i}]"
            name = c.get("name")
            if not name:
                causes.append(field_error("FieldValueRequired", f"{where}.name"))
            elif name in seen:
                causes.append(field_error("FieldValueDuplicate", f"{where}.name", name))
            else:
                seen.add(name)
            if not c.get("image"):
                causes.append(field_error("FieldValueRequired", f"{where}.image"))
    return causes


def _mutable_view(spec: dict[str, Any]) -> dict[str, Any]:
    view = copy.deepcopy(spec)
    for group in ("containers", "initContainers"):
        for c in view.get(group) or []:
            c.pop("image", None)
    for key in (
        "activeDeadlineSeconds",
        "tolerations",
        "terminationGracePeriodSeconds",
    ):
        view.pop(key, None)
    return view


def _pod_update(obj: dict[str, Any], old: dict[str, Any], features: ApiFeatures) -> list[dict[str, str]]:
    """ValidatePodUpdate's spec rule; below 1.32 cpu/memory may change too (podupdateresize.py)."""
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    rule, causes = _POD_UPDATE_RULE, []
    if features.resources_in_pod_update:
        causes = resize_rules(obj, old)
        spec, rule = without_resize(spec, old_spec), _POD_UPDATE_RULE + MUTABLE_RESOURCES_RULE
    if _mutable_view(spec) != _mutable_view(old_spec):
        causes.append(field_error("FieldValueForbidden", "spec", detail=rule))
    return causes


_BINDINGS = {
    ("rbac.authorization.k8s.io", "rolebindings"): ("ClusterRole", "Role"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): ("ClusterRole",),
}


def _rbac_and_scheduling(
    rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None
) -> list[dict[str, str]]:
    """The rules `helm upgrade` and `kubectl apply` meet: a binding's roleRef and a PriorityClass's
    value are fixed at creation (delete and recreate to change them)."""
    causes: list[dict[str, str]] = []
    if rt.key in _BINDINGS:
        ref = obj.get("roleRef") or {}
        allowed = _BINDINGS[rt.key]
        if ref.get("kind") not in allowed:
            supported = ", ".join(f'"{k}"' for k in allowed)
            causes.append(
                field_error(
                    "FieldValueNotSupported",
                    "roleRef.kind",
                    ref.get("kind", ""),
                    f"supported values: {supported}",
                )
            )
        if not ref.get("name"):
            causes.append(field_error("FieldValueRequired", "roleRef.name"))
        if old is not None and (old.get("roleRef") or {}) != ref:
            go = (
                f'rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", Kind:"{ref.get("kind", "")}", '
                f'Name:"{ref.get("name", "")}"}}'
            )
            causes.append(
                field_error(
                    "FieldValueInvalid", "roleRef", None, f"{go}: cannot change roleRef", show_value=False
                )
            )
    if (
        rt.key == ("scheduling.k8s.io", "priorityclasses")
        and old is not None
        and obj.get("value") != old.get("value")
    ):
        causes.append(field_error("FieldValueForbidden", "value", detail="may not be changed in an update."))
    return causes


def validate_builtin(
    rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, features: ApiFeatures = NEWEST
) -> list[dict[str, str]]:
    """`features`: what the apiserver's reported version changes (features.py)."""
    if rt.is_custom:
        return []
    spec = obj.get("spec") or {}
    causes: list[dict[str, str]] = []
    if rt.key == ("", "pods"):
        causes += _containers(spec, "spec")
        if old is not None:
            causes += _pod_update(obj, old, features)
    if rt.key in _WORKLOADS | {("batch", "jobs")}:
        replicas = spec.get("replicas")
        if isinstance(replicas, int) and replicas < 0:
            causes.append(
                field_error(
                    "FieldValueInvalid", "spec.replicas", replicas, "must be greater than or equal to 0"
                )
            )
        template = spec.get("template") or {}
        causes += _containers(template.get("spec") or {}, "spec.template.spec")
        selector = spec.get("selector")
        if rt.key in _WORKLOADS:
            if not selector:
                causes.append(field_error("FieldValueRequired", "spec.selector"))
            else:
                reqs = selector_from_label_selector(selector) or []
                labels = (template.get("metadata") or {}).get("labels") or {}
                if not reqs:
                    causes.append(
                        field_error(
                            "FieldValueInvalid",
                            "spec.selector",
                            selector,
                            "empty selector is invalid for deployment",
                        )
                    )
                elif not labels_match(reqs, labels):
                    causes.append(
                        field_error(
                            "FieldValueInvalid",
                            "spec.template.metadata.labels",
                            labels,
                            "`selector` does not match template `labels`",
                        )
                    )
            if (
                old is not None
                and (old.get("spec") or {}).get("selector") != selector
                and rt.key != ("apps", "deployments")
            ):
                causes.append(
                    field_error("FieldValueInvalid", "spec.selector", selector, "field is immutable")
                )
    if rt.key == ("", "persistentvolumeclaims") and old is not None:
        causes += validate_claim_update(obj, old)
    causes += _rbac_and_scheduling(rt, obj, old)
    if rt.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
        names = spec.get("names") or {}
        expected = f"{names.get('plural', '')}.{spec.get('group', '')}"
        if obj["metadata"].get("name") != expected:
            causes.append(
                field_error(
                    "FieldValueInvalid",
                    "metadata.name",
                    obj["metadata"].get("name"),
                    'must be spec.names.plural+"."+spec.group',
                )
            )
        versions = spec.get("versions") or []
        if sum(1 for v in versions if v.get("storage")) != 1:
            causes.append(
                field_error(
                    "FieldValueInvalid",
                    "spec.versions",
                    None,
                    "must have exactly one version marked as storage version",
                    show_value=False,
                )
            )
        causes += crdconversion.validate(spec)
        causes += crdversions.validate(obj)
        if spec.get("scope") not in ("Namespaced", "Cluster"):
            causes.append(
                field_error(
                    "FieldValueNotSupported",
                    "spec.scope",
                    spec.get("scope"),
                    'supported values: "Cluster", "Namespaced"',
                )
            )
    return causes
