"""Pod lifecycle states and hook checks shared by Kruise workloads (``pkg/util/lifecycle``).

A hook "matches" a pod when ANY of its handler labels/finalizers is present (the user is still
holding the pod); it is "all hooked" when EVERY handler is present (the user has opted in).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kruise.api.keys import (
    ANNOTATION_LIFECYCLE_TIMESTAMP,
    LABEL_LIFECYCLE_STATE,
    LIFECYCLE_STATE_NORMAL,
    LIFECYCLE_STATE_PREPARING_DELETE,
    LIFECYCLE_STATE_PREPARING_NORMAL,
    LIFECYCLE_STATE_PREPARING_UPDATE,
    LIFECYCLE_STATE_UPDATED,
    LIFECYCLE_STATE_UPDATING,
)
from kruise.api.objects import labels_of, meta_of, section
from kruise.api.timestamps import rfc3339

STATES = (
    LIFECYCLE_STATE_PREPARING_NORMAL,
    LIFECYCLE_STATE_NORMAL,
    LIFECYCLE_STATE_PREPARING_UPDATE,
    LIFECYCLE_STATE_UPDATING,
    LIFECYCLE_STATE_UPDATED,
    LIFECYCLE_STATE_PREPARING_DELETE,
)


def _labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return labels_of(pod)


def _finalizers(pod: Mapping[str, Any]) -> list[str]:
    return meta_of(pod).get("finalizers") or []


def _handlers(hook: Mapping[str, Any]) -> tuple[Mapping[str, str], list[str]]:
    return hook.get("labelsHandler") or {}, hook.get("finalizersHandler") or []


def pod_state(pod: Mapping[str, Any]) -> str:
    """The lifecycle state label; ``""`` when absent (treated like Normal by callers)."""
    return _labels(pod).get(LABEL_LIFECYCLE_STATE, "")


def is_hooked(hook: Mapping[str, Any] | None, pod: Mapping[str, Any]) -> bool:
    if not hook:
        return False
    labels, finalizers = _handlers(hook)
    pod_labels, pod_finalizers = _labels(pod), _finalizers(pod)
    return any(f in pod_finalizers for f in finalizers) or any(
        pod_labels.get(k) == v for k, v in labels.items()
    )


def is_all_hooked(hook: Mapping[str, Any] | None, pod: Mapping[str, Any]) -> bool:
    if not hook:
        return False
    labels, finalizers = _handlers(hook)
    pod_labels, pod_finalizers = _labels(pod), _finalizers(pod)
    return all(f in pod_finalizers for f in finalizers) and all(
        pod_labels.get(k) == v for k, v in labels.items()
    )


def state_patch(state: str, now: datetime) -> dict[str, Any]:
    """Merge patch moving a pod to ``state`` and stamping when it happened."""
    if state not in STATES:
        raise ValueError(f"unknown lifecycle state {state!r}, must be one of {', '.join(STATES)}")
    return {
        "metadata": {
            "labels": {LABEL_LIFECYCLE_STATE: state},
            "annotations": {ANNOTATION_LIFECYCLE_TIMESTAMP: rfc3339(now)},
        }
    }


def deletion_needs_preparing(lifecycle: Mapping[str, Any] | None, pod: Mapping[str, Any]) -> bool:
    """With a matching preDelete hook a pod is only moved to PreparingDelete, never deleted yet."""
    hook = (lifecycle or {}).get("preDelete")
    return is_hooked(hook, pod) and pod_state(pod) != LIFECYCLE_STATE_PREPARING_DELETE


def deletion_allowed(lifecycle: Mapping[str, Any] | None, pod: Mapping[str, Any]) -> bool:
    """A pod may actually be deleted when no preDelete hook still holds it."""
    return not is_hooked((lifecycle or {}).get("preDelete"), pod)


def marks_pod_not_ready(lifecycle: Mapping[str, Any] | None) -> bool:
    """Whether the preDelete or inPlaceUpdate hook asks Kruise to flip KruisePodReady False."""
    spec = lifecycle or {}
    return any(section(spec, hook).get("markPodNotReady") for hook in ("preDelete", "inPlaceUpdate"))
