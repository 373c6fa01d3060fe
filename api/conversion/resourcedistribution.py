"""ResourceDistribution v1alpha1 <-> v1beta1 (apps.kruise.io, cluster-scoped; v1beta1 is master's
storage version).

- `spec.targets.namespaceLabelSelector` (v1alpha1) is `spec.targets.namespaceSelector` (v1beta1).
- `status.conditions[].failedNamespace` (v1alpha1, singular JSON name of a list) is
  `failedNamespaces` (v1beta1). An empty list is dropped, as upstream's conversion turns it into nil.
- The resource, allNamespaces and the included/excluded lists have the same shape in both.
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.fields import child, object_list, rename

GROUP = "apps.kruise.io"
KIND = "ResourceDistribution"
ALPHA_SELECTOR, BETA_SELECTOR = "namespaceLabelSelector", "namespaceSelector"
ALPHA_FAILED, BETA_FAILED = "failedNamespace", "failedNamespaces"


def _targets(obj: dict[str, Any]) -> dict[str, Any] | None:
    spec = child(obj, "spec", "")
    return child(spec, "targets", "spec") if spec is not None else None


def _conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    status = child(obj, "status", "")
    return object_list(status, "conditions", "status") if status is not None else []


def _rename_failed(condition: dict[str, Any], old: str, new: str) -> None:
    rename(condition, old, new)
    if condition.get(new) == []:
        del condition[new]


def to_v1beta1(obj: dict[str, Any]) -> None:
    rename(_targets(obj), ALPHA_SELECTOR, BETA_SELECTOR)
    for condition in _conditions(obj):
        _rename_failed(condition, ALPHA_FAILED, BETA_FAILED)


def to_v1alpha1(obj: dict[str, Any]) -> None:
    rename(_targets(obj), BETA_SELECTOR, ALPHA_SELECTOR)
    for condition in _conditions(obj):
        _rename_failed(condition, BETA_FAILED, ALPHA_FAILED)
