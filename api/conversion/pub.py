"""PodUnavailableBudget v1alpha1 <-> v1beta1 (policy.kruise.io; v1beta1 storage on master).

- Annotation `kruise.io/pub-protect-operations` (comma-separated DELETE, UPDATE, EVICT, RESIZE) is
  `spec.protectOperations` in v1beta1; annotation `pub.kruise.io/protect-total-replicas` (int32)
  is `spec.protectTotalReplicas`. As upstream does, the annotations stay on the v1beta1 object
  (metadata is copied whole) and the v1alpha1 annotations are rewritten from the spec fields on
  the way down, removed when the field is unset.
- `spec.ignoredPodSelector` is v1beta1 only and is dropped from v1alpha1.
- An annotation that does not parse fails the conversion naming it (upstream returns an error too);
  the v1alpha1 webhook rejects such annotations, so only objects written around it can hit this.
"""

from __future__ import annotations

import re
from typing import Any

from kruise.api.conversion.errors import ConversionError
from kruise.api.conversion.fields import child, ensure_child, pop_meta, set_meta, string_map

GROUP = "policy.kruise.io"
KIND = "PodUnavailableBudget"
PROTECT_OPERATIONS_ANNOTATION = "kruise.io/pub-protect-operations"
PROTECT_TOTAL_REPLICAS_ANNOTATION = "pub.kruise.io/protect-total-replicas"
OPERATIONS = ("UPDATE", "DELETE", "EVICT", "RESIZE")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _operations(text: str) -> list[str]:
    field = f"metadata.annotations[{PROTECT_OPERATIONS_ANNOTATION}]"
    operations = []
    for item in text.split(","):
        operation = item.strip()
        if not operation:
            continue
        if operation not in OPERATIONS:
            raise ConversionError(field, f"operation {operation!r} is not one of {', '.join(OPERATIONS)}")
        operations.append(operation)
    return operations


def _int32(text: str) -> int:
    field = f"metadata.annotations[{PROTECT_TOTAL_REPLICAS_ANNOTATION}]"
    if not re.fullmatch(r"[+-]?[0-9]+", text) or not _INT32_MIN <= int(text) <= _INT32_MAX:
        raise ConversionError(field, f"must be a decimal int32, got {text!r}")
    return int(text)


def to_v1beta1(obj: dict[str, Any]) -> None:
    annotations = string_map(obj, "annotations") or {}
    operations = _operations(annotations.get(PROTECT_OPERATIONS_ANNOTATION, ""))
    replicas = annotations.get(PROTECT_TOTAL_REPLICAS_ANNOTATION, "")
    if operations:
        ensure_child(obj, "spec", "")["protectOperations"] = operations
    if replicas:
        ensure_child(obj, "spec", "")["protectTotalReplicas"] = _int32(replicas)


def _operations_text(value: object) -> str:
    path = "spec.protectOperations"
    if not isinstance(value, list):
        raise ConversionError(path, f"must be a list, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ConversionError(f"{path}[{index}]", f"must be a string, got {item!r}")
    return ",".join(item for item in value if item)


def to_v1alpha1(obj: dict[str, Any]) -> None:
    spec = child(obj, "spec", "")
    operations = spec.pop("protectOperations", None) if spec is not None else None
    replicas = spec.pop("protectTotalReplicas", None) if spec is not None else None
    if spec is not None:
        spec.pop("ignoredPodSelector", None)
    if operations:
        set_meta(obj, "annotations", PROTECT_OPERATIONS_ANNOTATION, _operations_text(operations))
    else:
        pop_meta(obj, "annotations", PROTECT_OPERATIONS_ANNOTATION)
    if replicas is None:
        pop_meta(obj, "annotations", PROTECT_TOTAL_REPLICAS_ANNOTATION)
        return
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise ConversionError("spec.protectTotalReplicas", f"must be an integer, got {replicas!r}")
    set_meta(obj, "annotations", PROTECT_TOTAL_REPLICAS_ANNOTATION, str(replicas))
