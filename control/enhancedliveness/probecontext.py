"""EnhancedLivenessProbe: liveness probing taken away from the kubelet.

A pod owned by a kruise workload and annotated `apps.kruise.io/using-enhanced-liveness: "true"` has each
app container's `livenessProbe` removed at creation and kept, as upstream's webhook keeps it, in the
`apps.kruise.io/container-probe-context` annotation: `[{"name": <container>, "livenessProbe": <probe>}]`.
The kubelet then never restarts those containers on a failed probe; a component that reads the annotation
(upstream leaves that to a separate controller) decides instead. The JSON is written the way Go's
encoding/json writes a `v1.Probe` — struct field order, zero values omitted — so a consumer written
against upstream's annotation sees the same text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kruise.api.keys import ANNOTATION_CONTAINER_PROBE_CONTEXT, ANNOTATION_USING_ENHANCED_LIVENESS
from kruise.api.objects import annotations_of, containers_of

# Go struct field order of the probe types (k8s.io/api/core/v1); fields not listed keep their order after.
_FIELD_ORDER: dict[str, tuple[str, ...]] = {
    "probe": (
        "exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "timeoutSeconds", "periodSeconds",
        "successThreshold", "failureThreshold", "terminationGracePeriodSeconds",
    ),
    "exec": ("command",),
    "httpGet": ("path", "port", "host", "scheme", "httpHeaders"),
    "tcpSocket": ("port", "host"),
    "grpc": ("port", "service"),
    "httpHeaders": ("name", "value"),
}  # fmt: skip
# fields without omitempty in Go: written even when zero
_ALWAYS_WRITTEN = {("httpGet", "port"), ("tcpSocket", "port"), ("grpc", "port"), ("grpc", "service"),
                   ("httpHeaders", "name"), ("httpHeaders", "value")}  # fmt: skip


def _go_ordered(value: Any, kind: str) -> Any:
    if isinstance(value, list):
        return [_go_ordered(item, kind) for item in value]
    if not isinstance(value, Mapping):
        return value
    order = _FIELD_ORDER.get(kind, ())
    keys = [k for k in order if k in value] + [k for k in value if k not in order]
    out: dict[str, Any] = {}
    for key in keys:
        item = value[key]
        if (kind, key) not in _ALWAYS_WRITTEN and item in (0, "", None, [], {}):
            continue
        out[key] = _go_ordered(item, key)
    return out


def go_ordered_probe(probe: Mapping[str, Any]) -> Any:
    """A v1.Probe with its keys in Go's struct order and zero values dropped, ready for json.dumps."""
    return _go_ordered(probe, "probe")


def probe_context(containers: list[Mapping[str, Any]]) -> str:
    """The annotation's value for (name, livenessProbe) of each container that has one."""
    entries = [
        {"name": c.get("name", ""), "livenessProbe": _go_ordered(c["livenessProbe"], "probe")}
        for c in containers
        if c.get("livenessProbe")
    ]
    return json.dumps(entries, separators=(",", ":"), ensure_ascii=False)


def uses_enhanced_liveness(pod: Mapping[str, Any]) -> bool:
    annotations = annotations_of(pod)
    return annotations.get(ANNOTATION_USING_ENHANCED_LIVENESS) == "true"


def move_liveness_probes(pod: dict[str, Any]) -> bool:
    """Remove the app containers' livenessProbes into the annotation, in place; True when the pod
    changed (no container had one: nothing is written). The caller checks ownership and the gate."""
    if not uses_enhanced_liveness(pod):
        return False
    containers = containers_of(pod)
    probed = [c for c in containers if c.get("livenessProbe")]
    if not probed:
        return False
    context = probe_context(probed)
    for container in probed:
        del container["livenessProbe"]
    pod.setdefault("metadata", {}).setdefault("annotations", {})[ANNOTATION_CONTAINER_PROBE_CONTEXT] = context
    return True
