"""Kruise feature gates: names, defaults, stages, and the `--feature-gates` flag syntax.

Manager, webhook and daemon all take the same `--feature-gates` flag and must agree on what a gate
means, so the table lives in the API layer. Defaults and the knock-on rules (e.g. `KruiseDaemon=false`
switches off every daemon-backed gate) follow upstream's `pkg/features` for OpenKruise 1.8.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Stage(StrEnum):
    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = "GA"


@dataclass(frozen=True)
class Gate:
    default: bool
    stage: Stage


POD_WEBHOOK = "PodWebhook"
KRUISE_DAEMON = "KruiseDaemon"
DAEMON_WATCHING_POD = "DaemonWatchingPod"
CLONESET_SHORT_HASH = "CloneSetShortHash"
KRUISE_POD_READINESS_GATE = "KruisePodReadinessGate"
PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE = "PreDownloadImageForInPlaceUpdate"
CLONESET_PARTITION_ROLLBACK = "CloneSetPartitionRollback"
RESOURCES_DELETION_PROTECTION = "ResourcesDeletionProtection"
POD_UNAVAILABLE_BUDGET_DELETE_GATE = "PodUnavailableBudgetDeleteGate"
POD_UNAVAILABLE_BUDGET_UPDATE_GATE = "PodUnavailableBudgetUpdateGate"
WORKLOAD_SPREAD = "WorkloadSpread"
TEMPLATE_NO_DEFAULTS = "TemplateNoDefaults"
IN_PLACE_UPDATE_ENV_FROM_METADATA = "InPlaceUpdateEnvFromMetadata"
STATEFULSET_AUTO_DELETE_PVC = "StatefulSetAutoDeletePVC"
SIDECARSET_PATCH_POD_METADATA_DEFAULTS_ALLOWED = "SidecarSetPatchPodMetadataDefaultsAllowed"
SIDECAR_TERMINATOR = "SidecarTerminator"
POD_PROBE_MARKER_GATE = "PodProbeMarkerGate"
PRE_DOWNLOAD_IMAGE_FOR_DAEMONSET_UPDATE = "PreDownloadImageForDaemonSetUpdate"
CLONESET_EVENT_HANDLER_OPTIMIZATION = "CloneSetEventHandlerOptimization"
PREPARING_UPDATE_AS_UPDATE = "PreparingUpdateAsUpdate"
IMAGE_PULL_JOB_GATE = "ImagePullJobGate"
RESOURCE_DISTRIBUTION_GATE = "ResourceDistributionGate"
DELETION_PROTECTION_FOR_CRD_CASCADING_GATE = "DeletionProtectionForCRDCascadingGate"
ENHANCED_LIVENESS_PROBE = "EnhancedLivenessProbe"
RECREATE_POD_WHEN_CHANGE_VCT_IN_CLONESET_GATE = "RecreatePodWhenChangeVCTInCloneSetGate"
STATEFULSET_START_ORDINAL = "StatefulSetStartOrdinal"
POD_INDEX_LABEL = "PodIndexLabel"
ENABLE_EXTERNAL_CERTS = "EnableExternalCerts"
STATEFULSET_AUTO_RESIZE_PVC_GATE = "StatefulSetAutoResizePVCGate"
FORCE_DELETE_TIMEOUT_EXPECTATION_GATE = "ForceDeleteTimeoutExpectationGate"
IN_PLACE_WORKLOAD_VERTICAL_SCALING = "InPlaceWorkloadVerticalScaling"
ENABLE_POD_PROBE_MARKER_ON_SERVERLESS = "EnablePodProbeMarkerOnServerless"
ENABLE_SORT_SIDECAR_CONTAINER_BY_NAME = "EnableSortSidecarContainerByName"
IN_PLACE_POD_VERTICAL_SCALING = "InPlacePodVerticalScaling"
DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES = "DefaultHostNetworkHostPortsInPodTemplates"
DAEMONSET_PRUNE_INELIGIBLE_NODES = "DaemonSetPruneIneligibleNodes"

_A, _B = Stage.ALPHA, Stage.BETA

DEFAULT_GATES: Mapping[str, Gate] = {
    POD_WEBHOOK: Gate(True, _B),
    KRUISE_DAEMON: Gate(True, _B),
    DAEMON_WATCHING_POD: Gate(True, _B),
    CLONESET_SHORT_HASH: Gate(False, _A),
    KRUISE_POD_READINESS_GATE: Gate(False, _A),
    PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE: Gate(False, _A),
    CLONESET_PARTITION_ROLLBACK: Gate(False, _A),
    RESOURCES_DELETION_PROTECTION: Gate(False, _B),
    POD_UNAVAILABLE_BUDGET_DELETE_GATE: Gate(True, _B),
    POD_UNAVAILABLE_BUDGET_UPDATE_GATE: Gate(False, _A),
    WORKLOAD_SPREAD: Gate(True, _B),
    TEMPLATE_NO_DEFAULTS: Gate(False, _A),
    IN_PLACE_UPDATE_ENV_FROM_METADATA: Gate(True, _B),
    STATEFULSET_AUTO_DELETE_PVC: Gate(True, _B),
    SIDECARSET_PATCH_POD_METADATA_DEFAULTS_ALLOWED: Gate(False, _A),
    SIDECAR_TERMINATOR: Gate(False, _A),
    POD_PROBE_MARKER_GATE: Gate(True, _B),
    PRE_DOWNLOAD_IMAGE_FOR_DAEMONSET_UPDATE: Gate(False, _A),
    CLONESET_EVENT_HANDLER_OPTIMIZATION: Gate(False, _A),
    PREPARING_UPDATE_AS_UPDATE: Gate(False, _A),
    IMAGE_PULL_JOB_GATE: Gate(False, _A),
    RESOURCE_DISTRIBUTION_GATE: Gate(False, _B),
    DELETION_PROTECTION_FOR_CRD_CASCADING_GATE: Gate(False, _A),
    ENHANCED_LIVENESS_PROBE: Gate(False, _A),
    RECREATE_POD_WHEN_CHANGE_VCT_IN_CLONESET_GATE: Gate(False, _A),
    STATEFULSET_START_ORDINAL: Gate(False, _A),
    POD_INDEX_LABEL: Gate(True, _B),
    ENABLE_EXTERNAL_CERTS: Gate(False, _A),
    STATEFULSET_AUTO_RESIZE_PVC_GATE: Gate(False, _A),
    FORCE_DELETE_TIMEOUT_EXPECTATION_GATE: Gate(False, _A),
    IN_PLACE_WORKLOAD_VERTICAL_SCALING: Gate(False, _A),
    ENABLE_POD_PROBE_MARKER_ON_SERVERLESS: Gate(False, _A),
    ENABLE_SORT_SIDECAR_CONTAINER_BY_NAME: Gate(False, _A),
    IN_PLACE_POD_VERTICAL_SCALING: Gate(False, _A),
    DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES: Gate(False, _A),
    DAEMONSET_PRUNE_INELIGIBLE_NODES: Gate(False, _A),
}

# Gates that make no sense without the pod webhook or the daemon are forced off with them.
_NEEDS_POD_WEBHOOK = (
    KRUISE_POD_READINESS_GATE,
    POD_UNAVAILABLE_BUDGET_DELETE_GATE,
    POD_UNAVAILABLE_BUDGET_UPDATE_GATE,
    WORKLOAD_SPREAD,
    SIDECARSET_PATCH_POD_METADATA_DEFAULTS_ALLOWED,
    ENHANCED_LIVENESS_PROBE,
    ENABLE_POD_PROBE_MARKER_ON_SERVERLESS,
)
_NEEDS_DAEMON = (
    PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE,
    DAEMON_WATCHING_POD,
    IN_PLACE_UPDATE_ENV_FROM_METADATA,
    PRE_DOWNLOAD_IMAGE_FOR_DAEMONSET_UPDATE,
    POD_PROBE_MARKER_GATE,
    SIDECAR_TERMINATOR,
    IMAGE_PULL_JOB_GATE,
    ENHANCED_LIVENESS_PROBE,
)
_NEEDS_IMAGE_PULL_JOB = (PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE, PRE_DOWNLOAD_IMAGE_FOR_DAEMONSET_UPDATE)

# Gates upstream has and kruise-py accepts (so upstream's values files keep working) but does not act
# on yet. A component warns at start when one of them is set away from its default: the setting
# changes nothing here, and saying so is better than a silent no-op. A gate leaves this set when
# its behaviour is built.
WITHOUT_EFFECT: frozenset[str] = frozenset(
    {
        CLONESET_EVENT_HANDLER_OPTIMIZATION,
    }
)

ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
# Legacy switch: a list of enabled custom resources; without SidecarSet the pod webhook is off by default.
ENV_CUSTOM_RESOURCE_ENABLE = "CUSTOM_RESOURCE_ENABLE"


class FeatureGateError(ValueError):
    """A bad `--feature-gates` value; the message names the gate and the problem."""


def _parse_bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("true", "1", "t"):
        return True
    if value in ("false", "0", "f"):
        return False
    raise FeatureGateError(
        f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing {raw!r}: invalid syntax"
    )


def parse(spec: str) -> dict[str, bool]:
    """`A=true,B=false` -> {A: True, B: False}, with component-base's error wording."""
    result: dict[str, bool] = {}
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, raw = part.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        if name not in DEFAULT_GATES and name not in (ALL_ALPHA, ALL_BETA):
            raise FeatureGateError(f"unrecognized feature gate: {name}")
        result[name] = _parse_bool(name, raw)
    return result


class FeatureGates:
    """Resolved gate values. Immutable after construction: every component reads one consistent view."""

    def __init__(
        self, overrides: Mapping[str, bool] | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        overrides = dict(overrides or {})
        for name in overrides:
            if name not in DEFAULT_GATES and name not in (ALL_ALPHA, ALL_BETA):
                raise FeatureGateError(f"unrecognized feature gate: {name}")
        values = {name: gate.default for name, gate in DEFAULT_GATES.items()}
        custom = (env if env is not None else os.environ).get(ENV_CUSTOM_RESOURCE_ENABLE)
        if custom and "SidecarSet" not in [c.strip() for c in custom.split(",")]:
            values[POD_WEBHOOK] = False
        for bulk, stage in ((ALL_ALPHA, Stage.ALPHA), (ALL_BETA, Stage.BETA)):
            if bulk in overrides:
                for name, gate in DEFAULT_GATES.items():
                    if gate.stage is stage:
                        values[name] = overrides[bulk]
        for name, value in overrides.items():
            if name in DEFAULT_GATES:
                values[name] = value
        if not values[POD_WEBHOOK]:
            values.update(dict.fromkeys(_NEEDS_POD_WEBHOOK, False))
        if not values[KRUISE_DAEMON]:
            values.update(dict.fromkeys(_NEEDS_DAEMON, False))
        if any(values[name] for name in _NEEDS_IMAGE_PULL_JOB):
            values[IMAGE_PULL_JOB_GATE] = True
        if not values[RESOURCES_DELETION_PROTECTION]:
            values[DELETION_PROTECTION_FOR_CRD_CASCADING_GATE] = False
        self._values = values

    @classmethod
    def from_flag(cls, spec: str, env: Mapping[str, str] | None = None) -> FeatureGates:
        return cls(parse(spec), env=env)

    def enabled(self, name: str) -> bool:
        if name not in self._values:
            raise KeyError(f"unknown feature gate {name!r}")
        return self._values[name]

    def without_effect(self) -> list[str]:
        """Gates set away from their default that kruise-py does not act on (`WITHOUT_EFFECT`), sorted."""
        return sorted(n for n in WITHOUT_EFFECT if self._values[n] != DEFAULT_GATES[n].default)

    def as_dict(self) -> dict[str, bool]:
        return dict(self._values)

    def __repr__(self) -> str:
        changed = {k: v for k, v in self._values.items() if v != DEFAULT_GATES[k].default}
        return f"FeatureGates({changed})"
