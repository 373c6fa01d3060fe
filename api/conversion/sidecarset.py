"""SidecarSet v1alpha1 <-> v1beta1 (apps.kruise.io).

- v1beta1 has no `spec.namespace`; a namespace becomes a `namespaceSelector` on the
  `kubernetes.io/metadata.name` label (and wins over a namespaceSelector, as upstream's webhook
  rejects having both anyway).
- v1alpha1 label `apps.kruise.io/sidecarset-custom-version` is `spec.customVersion` in v1beta1
  (moved off the labels, as upstream does).
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.fields import child, pop_meta, set_meta, string

GROUP = "apps.kruise.io"
KIND = "SidecarSet"
CUSTOM_VERSION_LABEL = "apps.kruise.io/sidecarset-custom-version"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def to_v1beta1(obj: dict[str, Any]) -> None:
    spec = child(obj, "spec", "")
    if spec is not None:
        namespace = string(spec, "namespace", "spec")
        spec.pop("namespace", None)
        if namespace:
            spec["namespaceSelector"] = {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}
    custom_version = pop_meta(obj, "labels", CUSTOM_VERSION_LABEL)
    if custom_version is not None:
        if spec is None:
            spec = obj["spec"] = {}
        spec["customVersion"] = custom_version


def to_v1alpha1(obj: dict[str, Any]) -> None:
    spec = child(obj, "spec", "")
    if spec is None:
        return
    custom_version = string(spec, "customVersion", "spec")
    spec.pop("customVersion", None)
    if custom_version:
        set_meta(obj, "labels", CUSTOM_VERSION_LABEL, custom_version)
