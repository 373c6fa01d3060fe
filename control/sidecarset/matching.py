"""Which SidecarSets apply to a pod being created.

Upstream lists the SidecarSets pinned to the pod's namespace (`spec.namespace`) and then the
cluster-wide ones, drops paused ones (`injectionStrategy.paused`: injection disabled) and those
whose namespaceSelector or selector do not match, and lets a canary SidecarSet replace its base.
The listing order decides container order in the pod; an informer's order is arbitrary, so each
group is sorted by name here to make injection deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kruise.api.keys import ANNOTATION_SIDECARSET_BASE, ANNOTATION_SIDECARSET_CANARY
from kruise.api.objects import annotations_of, labels_of, meta_of, section, spec_of, status_of

NamespaceLabels = Callable[[str], dict[str, str] | None]


class SelectorError(ValueError):
    """A stored selector the apiserver would not accept; upstream fails the admission with it."""


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """`metav1.LabelSelectorAsSelector(s).Matches(labels)`: nil selects nothing, `{}` everything."""
    if selector is None:
        return False
    for key, value in section(selector, "matchLabels").items():
        if labels.get(key) != value:
            return False
    for req in selector.get("matchExpressions") or []:
        key, operator, values = req.get("key"), req.get("operator"), req.get("values") or []
        present = key in labels
        if operator == "In":
            ok = present and labels[key] in values
        elif operator == "NotIn":
            ok = not present or labels[key] not in values
        elif operator == "Exists":
            ok = present
        elif operator == "DoesNotExist":
            ok = not present
        else:
            raise SelectorError(f'"{operator}" is not a valid label selector operator')
        if not ok:
            return False
    return True


def selector_is_empty(selector: dict[str, Any] | None) -> bool:
    return not selector or (not selector.get("matchLabels") and not selector.get("matchExpressions"))


def is_active_pod(pod: dict[str, Any]) -> bool:
    """`kubecontroller.IsPodActive`: not Succeeded/Failed and not being deleted."""
    phase = status_of(pod).get("phase")
    return phase not in ("Succeeded", "Failed") and not meta_of(pod).get("deletionTimestamp")


def pod_namespace(pod: dict[str, Any]) -> str:
    return meta_of(pod).get("namespace") or "default"


def pod_matches(sidecarset: dict[str, Any], pod: dict[str, Any], namespace_labels: NamespaceLabels) -> bool:
    """`PodMatchedSidecarSet`: namespaceSelector (a missing namespace matches nothing), then a
    non-empty selector over the pod's labels."""
    spec = sidecarset.get("spec") or {}
    ns_selector = spec.get("namespaceSelector")
    if ns_selector is not None:
        labels = namespace_labels(pod_namespace(pod))
        try:
            if labels is None or not selector_matches(ns_selector, labels):
                return False
        except SelectorError:
            return False  # IsSelectorNamespace swallows a bad namespace selector
    selector = spec.get("selector")
    if selector_is_empty(selector):
        return False
    return selector_matches(selector, labels_of(pod))


def canary_base(sidecarset: dict[str, Any]) -> str | None:
    """The base a canary SidecarSet stands in for, or None when it is not a canary."""
    annotations = annotations_of(sidecarset)
    base = annotations.get(ANNOTATION_SIDECARSET_BASE, "")
    return base if annotations.get(ANNOTATION_SIDECARSET_CANARY) == "true" and base else None


def _name(sidecarset: dict[str, Any]) -> str:
    return meta_of(sidecarset).get("name") or ""


def matching_sidecarsets(
    sidecarsets: Iterable[dict[str, Any]], pod: dict[str, Any], namespace_labels: NamespaceLabels
) -> list[dict[str, Any]]:
    """The SidecarSets to inject into `pod`, in injection order."""
    namespace = pod_namespace(pod)
    pinned, cluster = [], []
    for sidecarset in sidecarsets:
        target = spec_of(sidecarset).get("namespace")
        if target == namespace:
            pinned.append(sidecarset)
        elif not target:
            cluster.append(sidecarset)
    matched = []
    for sidecarset in sorted(pinned, key=_name) + sorted(cluster, key=_name):
        if section(sidecarset, "spec", "injectionStrategy").get("paused"):
            continue
        if pod_matches(sidecarset, pod, namespace_labels):
            matched.append(sidecarset)
    replaced = {base for s in matched if (base := canary_base(s))}
    return [s for s in matched if _name(s) not in replaced]
