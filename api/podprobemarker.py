"""PodProbeMarker (apps.kruise.io/v1alpha1): custom probes whose results become pod labels/conditions.

The probe itself is a core v1.Probe inlined by upstream; it is kept schemaless here and checked by
the rules of upstream's webhook (exec and tcpSocket only, no host, valid port).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from kruise.api.common import Int64, KruiseModel, KruiseObject, LabelSelector, ProbeDict
from kruise.api.crdgen import CRD_REQUIRED, CRDInfo, CRDVersion
from kruise.api.validation import (
    FieldError,
    forbidden,
    invalid,
    qualified_name_errors,
    required,
    validate_label_selector,
    validate_labels,
)

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "PodProbeMarker"

PROBE_SUCCEEDED = "Succeeded"
PROBE_FAILED = "Failed"
PROBE_UNKNOWN = "Unknown"

RESERVED_CONDITION_NAMES = frozenset(
    {"PodScheduled", "Initialized", "Ready", "ContainersReady", "KruisePodReady", "InPlaceUpdateReady"}
)
"""Pod condition types a probe may not be named after (Kubernetes' own and Kruise's)."""


class ProbeMarkerPolicy(KruiseModel):
    state: str
    """The probe result this entry applies to: Succeeded or Failed."""
    labels: dict[str, str] | None = None
    """Labels patched onto the pod while the probe is in that state."""
    annotations: dict[str, str] | None = None
    """Annotations patched onto the pod while the probe is in that state (e.g. a pod-deletion-cost)."""


class PodContainerProbe(KruiseModel):
    name: str
    """Name of the probe, unique within the pod across all its containers."""
    container_name: str
    """The container the probe runs against."""
    # a core v1.Probe (exec/tcpSocket handler plus timing fields)
    probe: ProbeDict = Field(default_factory=dict)
    """The probe itself (a core Probe: exec, tcpSocket or httpGet, with its timings), run by
    kruise-daemon."""
    marker_policy: list[ProbeMarkerPolicy] | None = None
    """Labels and annotations to patch onto the pod by the probe's result. At least one of markerPolicy
    and podConditionType is required."""
    pod_condition_type: str | None = None
    """Pod condition type that records the result: status True while the probe succeeds, False when it
    fails (e.g. game.kruise.io/healthy)."""


class PodProbeMarkerSpec(KruiseModel):
    selector: LabelSelector | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    """Label query over the pods, in this namespace, that run the probes. See
    https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"""
    probes: list[PodContainerProbe] = Field(default_factory=list, json_schema_extra=CRD_REQUIRED)
    """The custom probes to run on each matched pod."""


class PodProbeMarkerStatus(KruiseModel):
    observed_generation: Int64 = 0
    """The metadata.generation the controller last acted on."""
    matched_pods: Int64 | None = None
    """Number of pods the selector matches."""


class PodProbeMarker(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["PodProbeMarker"] | None = None
    spec: PodProbeMarkerSpec
    """Desired state of the PodProbeMarker."""
    status: PodProbeMarkerStatus | None = None
    """Observed state of the PodProbeMarker, written by kruise-manager."""


CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="podprobemarkers",
    description="PodProbeMarker runs custom probes in the containers of matching pods (through "
    "kruise-daemon) and records each result on the pod as labels, annotations or a condition.",
    versions=(CRDVersion(name=VERSION, model=PodProbeMarker),),
)


def port_name_errors(name: str) -> list[str]:
    """validation.IsValidPortName (IANA service name rules)."""
    msgs = []
    if len(name) > 15:
        msgs.append("must be no more than 15 characters")
    if not re.fullmatch(r"[-a-z0-9]+", name):
        msgs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", name):
        msgs.append("must contain at least one letter (a-z)")
    if "--" in name:
        msgs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        msgs.append("must not begin or end with a hyphen")
    return msgs


def _port_errors(port: Any, path: str) -> list[FieldError]:
    if isinstance(port, int) and not isinstance(port, bool):
        if not 1 <= port <= 65535:
            return [invalid(path, port, "must be between 1 and 65535, inclusive")]
        return []
    if isinstance(port, str):
        return [invalid(path, port, m) for m in port_name_errors(port)]
    return [invalid(path, port, "must be an integer or a port name")]


def validate_probe(probe: dict[str, Any], path: str) -> list[FieldError]:
    """validateProbe: exactly one of exec/httpGet/tcpSocket, non-negative timings. OpenKruise 1.9 added HTTP
    probes (1.8 refused httpGet with "current no support http probe"); the port rule is tcpSocket's."""
    errs: list[FieldError] = []
    handlers = 0
    if probe.get("exec") is not None:
        handlers += 1
        if not (probe["exec"] or {}).get("command"):
            errs.append(required(f"{path}.exec.command"))
    if probe.get("httpGet") is not None:
        if handlers:
            errs.append(forbidden(f"{path}.httpGet", "may not specify more than 1 handler type"))
        else:
            handlers += 1
            http = probe["httpGet"] or {}
            errs.extend(_port_errors(http.get("port", 0), f"{path}.httpGet.port"))
    if probe.get("tcpSocket") is not None:
        if handlers:
            errs.append(forbidden(f"{path}.tcpSocket", "may not specify more than 1 handler type"))
        else:
            handlers += 1
            tcp = probe["tcpSocket"] or {}
            if tcp.get("host"):
                errs.append(
                    invalid(f"{path}.tcpSocket.host", tcp["host"], "host field in probes is not allowed")
                )
            errs.extend(_port_errors(tcp.get("port", 0), f"{path}.tcpSocket.port"))
    if handlers == 0:
        errs.append(required(path, "must specify a handler type"))
    for field in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        value = probe.get(field, 0)
        if isinstance(value, int) and value < 0:
            errs.append(invalid(f"{path}.{field}", value, "must be greater than or equal to 0"))
    return errs


def validate_marker_policy(policy: ProbeMarkerPolicy, path: str) -> list[FieldError]:
    if policy.state not in (PROBE_SUCCEEDED, PROBE_FAILED):
        return [required(f"{path}.state", "marker policy state must be 'True' or 'False'")]
    if not policy.labels and not policy.annotations:
        return [required(path, "marker policy annotations or labels can't be both empty")]
    errs = validate_labels(policy.labels, f"{path}.labels")
    for key in policy.annotations or {}:
        errs.extend(invalid(f"{path}.annotations", key, m) for m in qualified_name_errors(key.lower()))
    return errs


def validate_spec(spec: PodProbeMarkerSpec, path: str = "spec") -> list[FieldError]:
    """validatePodProbeMarkerSpec; like upstream it stops at the first bad probe entry."""
    errs: list[FieldError] = []
    if spec.selector is None:
        errs.append(invalid(f"{path}.selector", None, "empty Selector is not valid for PodProbeMarker."))
    else:
        errs.extend(validate_label_selector(spec.selector, f"{path}.selector"))
        if spec.selector.is_empty():
            errs.append(
                invalid(
                    f"{path}.selector",
                    spec.selector.to_dict(),
                    "empty selector is not valid for podProbeMarker.",
                )
            )
    probes_path = f"{path}.probes"
    if not spec.probes:
        errs.append(invalid(probes_path, [], "empty probes is not valid for PodProbeMarker."))
        return errs
    names: set[str] = set()
    condition_types: set[str] = set()
    for probe in spec.probes:
        if "#" in probe.name:
            return [*errs, invalid(probes_path, probe.name, "probe name can't contains '#'.")]
        if probe.name == "":
            return [*errs, invalid(probes_path, probe.name, "probe name can't be empty in PodProbeMarker.")]
        if probe.container_name == "":
            return [
                *errs,
                invalid(
                    probes_path, probe.container_name, "probe containerName can't be empty in PodProbeMarker."
                ),
            ]
        if probe.name in RESERVED_CONDITION_NAMES:
            return [*errs, invalid(probes_path, probe.name, f"probe name can't be {probe.name}")]
        if probe.name in names:
            return [*errs, invalid(probes_path, probe.name, "probe name must be unique in PodProbeMarker.")]
        names.add(probe.name)
        errs.extend(validate_probe(probe.probe, f"{path}.probe"))
        if not probe.pod_condition_type and not probe.marker_policy:
            return [
                *errs,
                invalid(
                    probes_path,
                    probe.to_dict(),
                    "podConditionType and markerPolicy cannot be empty at the same time",
                ),
            ]
        if probe.pod_condition_type:
            if probe.pod_condition_type in condition_types:
                return [
                    *errs,
                    invalid(
                        probes_path,
                        probe.pod_condition_type,
                        f"podConditionType {probe.pod_condition_type} must be unique in podProbeMarker",
                    ),
                ]
            condition_types.add(probe.pod_condition_type)
            errs.extend(
                invalid(path, probe.pod_condition_type, m)
                for m in qualified_name_errors(probe.pod_condition_type)
            )
        states: set[str] = set()
        for policy in probe.marker_policy or []:
            if policy.state in states:
                return [
                    *errs,
                    invalid(f"{path}.markerPolicy", policy.state, "marker policy state must be unique."),
                ]
            states.add(policy.state)
            errs.extend(validate_marker_policy(policy, f"{path}.markerPolicy"))
    return errs


def validate(obj: PodProbeMarker, old: PodProbeMarker | None = None) -> list[FieldError]:
    """validatingPodProbeMarkerFn: the spec, and on UPDATE an unchanged selector."""
    errs = validate_spec(obj.spec)
    if old is not None:
        new_selector = obj.spec.selector.to_dict() if obj.spec.selector else None
        old_selector = old.spec.selector.to_dict() if old.spec.selector else None
        if new_selector != old_selector:
            errs.append(invalid("selector", new_selector, "selector must be immutable"))
    return errs
