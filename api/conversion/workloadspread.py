"""WorkloadSpread v1alpha1 <-> v1beta1 (apps.kruise.io; v1beta1 is master's storage version).

- `spec.subsets[].requiredNodeSelectorTerm` (v1alpha1) is `requiredNodeSelector` (v1beta1) and
  `spec.subsets[].preferredNodeSelectorTerms` is `preferredNodeSelector`.
- Subset-status conditions (in `status.subsetStatuses` and in every list of
  `status.versionedSubsetStatuses`) are metav1.Condition in v1beta1: a condition without a reason
  gets reason `Unknown` (metav1.Condition requires one; upstream's choice) and one without a message
  gets `message: ""` (what Go writes for the non-omitempty field); v1beta1's
  `observedGeneration` has no place in v1alpha1 and is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kruise.api.conversion.fields import child, object_list, rename, string

GROUP = "apps.kruise.io"
KIND = "WorkloadSpread"
RENAMES = (
    ("requiredNodeSelectorTerm", "requiredNodeSelector"),
    ("preferredNodeSelectorTerms", "preferredNodeSelector"),
)
UNKNOWN_REASON = "Unknown"


def _subsets(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = child(obj, "spec", "")
    return object_list(spec, "subsets", "spec") if spec is not None else []


def _conditions(obj: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each subset-status condition with its field path."""
    status = child(obj, "status", "")
    if status is None:
        return
    lists = [("status", "subsetStatuses", status)]
    versioned = child(status, "versionedSubsetStatuses", "status")
    for version in versioned or {}:
        lists.append(("status.versionedSubsetStatuses", version, versioned))
    for path, key, parent in lists:
        for index, subset in enumerate(object_list(parent, key, path)):
            subset_path = f"{path}.{key}[{index}]"
            for number, condition in enumerate(object_list(subset, "conditions", subset_path)):
                yield condition, f"{subset_path}.conditions[{number}]"


def to_v1beta1(obj: dict[str, Any]) -> None:
    for subset in _subsets(obj):
        for old, new in RENAMES:
            rename(subset, old, new)
    for condition, path in _conditions(obj):
        if not string(condition, "reason", path):
            condition["reason"] = UNKNOWN_REASON
        if string(condition, "message", path) is None:
            condition["message"] = ""


def to_v1alpha1(obj: dict[str, Any]) -> None:
    for subset in _subsets(obj):
        for old, new in RENAMES:
            rename(subset, new, old)
    for condition, _ in _conditions(obj):
        condition.pop("observedGeneration", None)
