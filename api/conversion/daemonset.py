"""Advanced DaemonSet v1alpha1 <-> v1beta1 (apps.kruise.io).

- v1alpha1 annotation `daemonset.kruise.io/progressive-create-pod: "true"` is
  `spec.scaleStrategy.partitionedScaling: true` in v1beta1 (moved, not copied, so the two can
  never disagree).
- v1beta1 has no deprecated `Surging` rollingUpdateType; it becomes `Standard`.
- `status.daemonSetHash` (v1alpha1) is `status.updateRevision` (v1beta1).
- `partition` is int-or-string in both versions since 1.9 and passes through unchanged.
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.fields import (
    boolean,
    child,
    drop_if_empty,
    ensure_child,
    pop_meta,
    set_meta,
    string,
)

GROUP = "apps.kruise.io"
KIND = "DaemonSet"
PROGRESSIVE_CREATE_POD_ANNOTATION = "daemonset.kruise.io/progressive-create-pod"


def _rename(parent: dict[str, Any] | None, old: str, new: str) -> None:
    if parent is not None and old in parent:
        parent[new] = parent.pop(old)


def to_v1beta1(obj: dict[str, Any]) -> None:
    spec = child(obj, "spec", "")
    if spec is not None:
        strategy = child(spec, "updateStrategy", "spec")
        rolling = child(strategy, "rollingUpdate", "spec.updateStrategy") if strategy else None
        if rolling is not None:
            path = "spec.updateStrategy.rollingUpdate"
            if string(rolling, "rollingUpdateType", path) == "Surging":
                rolling["rollingUpdateType"] = "Standard"
    if pop_meta(obj, "annotations", PROGRESSIVE_CREATE_POD_ANNOTATION) == "true":
        scale = ensure_child(ensure_child(obj, "spec", ""), "scaleStrategy", "spec")
        scale["partitionedScaling"] = True
    _rename(child(obj, "status", ""), "daemonSetHash", "updateRevision")


def to_v1alpha1(obj: dict[str, Any]) -> None:
    spec = child(obj, "spec", "")
    scale = child(spec, "scaleStrategy", "spec") if spec is not None else None
    if spec is not None and scale is not None:
        partitioned = boolean(scale, "partitionedScaling", "spec.scaleStrategy")
        scale.pop("partitionedScaling", None)
        drop_if_empty(spec, "scaleStrategy")
        if partitioned:
            set_meta(obj, "annotations", PROGRESSIVE_CREATE_POD_ANNOTATION, "true")
    _rename(child(obj, "status", ""), "updateRevision", "daemonSetHash")
