"""Advanced DaemonSet (apps.kruise.io/v1alpha1): DaemonSet with in-place update, surge, partition and
node-selector-scoped rollout.

Upstream's webhook does not default the pod template of a DaemonSet, so neither do we (keeping
revision hashes identical); an unset template restartPolicy is therefore read as the pod default,
Always, when validating.
"""

from __future__ import annotations

import re

from pydantic import Field

from kruise.api.common import (
    Int32,
    Int64,
    IntOrString,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    PodTemplate,
    selector_matches,
)
from kruise.api.crdgen import CRD_REQUIRED, CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.podtemplate_validation import template_labels, template_spec, validate_pod_template
from kruise.api.validation import (
    FieldError,
    changed_outside,
    forbidden,
    int_or_percent_errors,
    invalid,
    not_supported,
    percent_over_100,
    required,
    validate_label_selector,
    validate_nonnegative,
)
from kruise.api.workload_common import Lifecycle

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
VERSION_V1BETA1 = "v1beta1"
KIND = "DaemonSet"
STRATEGY_ROLLING_UPDATE = "RollingUpdate"
STRATEGY_ON_DELETE = "OnDelete"
ROLLING_STANDARD = "Standard"
ROLLING_IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
ROLLING_SURGING_DEPRECATED = "Surging"


class RollingUpdateDaemonSet(KruiseModel):
    type: str | None = Field(default=None, alias="rollingUpdateType")
    """How a node's pod is replaced: Standard (delete and create, the default; Surging is an old name for
    it) or InPlaceIfPossible (update images in place when only they changed)."""
    max_unavailable: IntOrString | None = None
    """Most nodes whose daemon pod may be unavailable at once during the update: a number (e.g. 5) or a
    percentage of desiredNumberScheduled (e.g. 30%, rounded up). Cannot be 0 when maxSurge is 0. Default
    1."""
    max_surge: IntOrString | None = None
    """Most nodes that may run an updated pod next to the old one during the update (the old pod is
    deleted once the new one is available): a number (e.g. 5) or a percentage of desiredNumberScheduled
    (rounded up, at least 1). Cannot be 0 when maxUnavailable is 0. Default 0."""
    selector: LabelSelector | None = None
    """Update only the pods on nodes whose labels match this selector."""
    partition: IntOrString | None = None
    """Number of pods to keep at old revisions; at most desiredNumberScheduled (which updates none).
    Default 0."""
    paused: bool | None = None
    """Stop updating pods until set back to false. Default false."""


class DaemonSetUpdateStrategy(KruiseModel):
    type: str | None = None
    """RollingUpdate (the default): pods are replaced node by node as rollingUpdate says; OnDelete: a pod
    gets the new template only when it is deleted."""
    rolling_update: RollingUpdateDaemonSet | None = None
    """How pods are updated when type is RollingUpdate."""


class DaemonSetSpec(KruiseModel):
    selector: LabelSelector | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    """Label query over the pods this DaemonSet owns; must match the template's labels and cannot be
    changed. See https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"""
    template: PodTemplate
    """The pod template (a core PodTemplateSpec): one pod from it runs on every node that matches the
    template's node selector and affinity (every node when it has none)."""
    update_strategy: DaemonSetUpdateStrategy = Field(default_factory=DaemonSetUpdateStrategy)
    """How pods are updated when the template changes."""
    min_ready_seconds: Int32 | None = None
    """Seconds a new pod must be ready, with no container crashing, before it counts as available.
    Default 0."""
    burst_replicas: IntOrString | None = None
    """Most pods created in one pass of the controller, which limits the burst when many nodes need a
    pod. Default 250."""
    revision_history_limit: Int32 | None = None
    """How many old revisions to keep for rollback. Default 10."""
    lifecycle: Lifecycle | None = None
    """Hooks that hold pods; DaemonSets use only preDelete."""


class DaemonSetCondition(KruiseModel):
    type: str
    """The kind of condition."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    last_transition_time: str | None = None
    """When the status last changed from one value to another."""
    reason: str | None = None
    """A CamelCase word saying why the condition last changed."""
    message: str | None = None
    """Details of the last change, for humans."""


class _DaemonSetStatusCommon(KruiseModel):
    current_number_scheduled: Int32 | None = None
    """Number of nodes that should run the daemon pod and run at least one."""
    number_misscheduled: Int32 | None = None
    """Number of nodes that run the daemon pod but should not."""
    desired_number_scheduled: Int32 | None = None
    """Number of nodes that should run the daemon pod."""
    number_ready: Int32 | None = None
    """Number of nodes that should run the daemon pod and have one running and ready."""
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    updated_number_scheduled: Int32 | None = None
    """Number of nodes that run an updated daemon pod."""
    number_available: Int32 | None = None
    """Number of nodes that should run the daemon pod and have one that has been ready for at least
    minReadySeconds."""
    number_unavailable: Int32 | None = None
    """Number of nodes that should run the daemon pod and have none available."""
    collision_count: Int32 | None = None
    """Count of revision name hash collisions, mixed into the next revision's name to avoid another."""
    conditions: list[DaemonSetCondition] | None = None
    """Latest observations of the DaemonSet's state."""


class DaemonSetStatus(_DaemonSetStatusCommon):
    daemon_set_hash: str | None = None
    """Hash of the current template (its controller-revision-hash), naming the latest revision."""


class DaemonSet(KruiseObject):
    spec: DaemonSetSpec
    """Desired state of the DaemonSet."""
    status: DaemonSetStatus | None = None
    """Observed state of the DaemonSet, written by kruise-manager."""


class DaemonSetScaleStrategy(KruiseModel):
    """v1beta1: `partitionedScaling` replaces annotation daemonset.kruise.io/progressive-create-pod."""

    partitioned_scaling: bool | None = None
    """Let partition also limit the creation of pods on nodes that need one (new nodes), not only
    updates. Default false: every such node gets a pod."""


class DaemonSetSpecV1beta1(DaemonSetSpec):
    scale_strategy: DaemonSetScaleStrategy | None = None
    """How pods are created on nodes that need one."""


class DaemonSetStatusV1beta1(_DaemonSetStatusCommon):
    """v1beta1 names v1alpha1's `daemonSetHash` `updateRevision`."""

    update_revision: str | None = None
    """Hash of the current template (its controller-revision-hash), naming the latest revision."""


class DaemonSetV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    spec: DaemonSetSpecV1beta1
    """Desired state of the DaemonSet."""
    status: DaemonSetStatusV1beta1 | None = None
    """Observed state of the DaemonSet, written by kruise-manager."""


_COLUMNS = (
    PrinterColumn("DESIRED", "integer", ".status.desiredNumberScheduled"),
    PrinterColumn("CURRENT", "integer", ".status.currentNumberScheduled"),
    PrinterColumn("READY", "integer", ".status.numberReady"),
    PrinterColumn("UP-TO-DATE", "integer", ".status.updatedNumberScheduled"),
    PrinterColumn("AVAILABLE", "integer", ".status.numberAvailable"),
    age_column(),
    PrinterColumn("CONTAINERS", "string", ".spec.template.spec.containers[*].name", priority=1),
    PrinterColumn("IMAGES", "string", ".spec.template.spec.containers[*].image", priority=1),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="daemonsets",
    description="Advanced DaemonSet runs one pod on each matching node, like the built-in DaemonSet, "
    "adding in-place update, partition, node selection for updates, surge and a preDelete hook.",
    short_names=("daemon", "ads"),
    versions=(
        CRDVersion(VERSION, DaemonSet, storage=True, printer_columns=_COLUMNS),
        CRDVersion(VERSION_V1BETA1, DaemonSetV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


def set_defaults(obj: DaemonSet) -> None:
    """SetDefaultsDaemonSet."""
    spec = obj.spec
    if spec.burst_replicas is None:
        spec.burst_replicas = 250
    strategy = spec.update_strategy
    if not strategy.type:
        strategy.type = STRATEGY_ROLLING_UPDATE
    if strategy.type == STRATEGY_ROLLING_UPDATE:
        rolling = strategy.rolling_update or RollingUpdateDaemonSet()
        if rolling.type == ROLLING_SURGING_DEPRECATED:
            if rolling.max_surge is None:
                rolling.max_surge = 1
            if rolling.max_unavailable is None:
                rolling.max_unavailable = 0
        if not rolling.type or rolling.type == ROLLING_SURGING_DEPRECATED:
            rolling.type = ROLLING_STANDARD
        if rolling.max_unavailable is None and rolling.max_surge is None:
            rolling.max_unavailable = 1
            rolling.max_surge = 0
        strategy.rolling_update = rolling
    spec.update_strategy = strategy
    if spec.revision_history_limit is None:
        spec.revision_history_limit = 10


def _int_or_percent_value(value: IntOrString) -> int:
    """getIntOrPercentValue: the number of "N%", or Go's IntValue() (Atoi of a plain string, 0 on error)."""
    if isinstance(value, int):
        return value
    if re.fullmatch(r"[0-9]+%", value):
        return int(value[:-1])
    return int(value) if re.fullmatch(r"[+-]?[0-9]+", value) else 0


def _rolling_update_errors(rolling: RollingUpdateDaemonSet, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    has_unavailable = (
        rolling.max_unavailable is not None and _int_or_percent_value(rolling.max_unavailable) != 0
    )
    has_surge = rolling.max_surge is not None and _int_or_percent_value(rolling.max_surge) != 0
    if has_unavailable:
        errs.extend(int_or_percent_errors(rolling.max_unavailable, f"{path}.maxUnavailable"))
        errs.extend(percent_over_100(rolling.max_unavailable, f"{path}.maxUnavailable"))
    if has_surge:
        errs.extend(int_or_percent_errors(rolling.max_surge, f"{path}.maxSurge"))
        errs.extend(percent_over_100(rolling.max_surge, f"{path}.maxSurge"))
    if has_unavailable and has_surge:
        errs.append(
            invalid(f"{path}.maxSurge", rolling.max_surge, "may not be set when maxUnavailable is non-zero")
        )
    elif not has_unavailable and not has_surge:
        errs.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    kind = rolling.type or ""
    if kind in ("", ROLLING_STANDARD):
        pass
    elif kind == ROLLING_IN_PLACE_IF_POSSIBLE:
        if has_surge:
            errs.append(required(f"{path}.maxSurge", "must be 0 for InPlaceIfPossible type"))
    elif kind == ROLLING_SURGING_DEPRECATED:
        if has_unavailable:
            errs.append(required(f"{path}.maxUnavailable", "must be 0 for Surging type"))
    else:
        # upstream appends "rollingUpdate" twice here; kept so messages match byte for byte
        errs.append(
            not_supported(
                f"{path}.rollingUpdate.type",
                kind,
                [ROLLING_STANDARD, ROLLING_SURGING_DEPRECATED, ROLLING_IN_PLACE_IF_POSSIBLE],
            )
        )
    if rolling.partition is not None:
        errs.extend(int_or_percent_errors(rolling.partition, f"{path}.rollingUpdate.partition"))
        errs.extend(percent_over_100(rolling.partition, f"{path}.rollingUpdate.partition"))
    return errs


def validate_spec(spec: DaemonSetSpec, path: str = "spec") -> list[FieldError]:
    errs = validate_label_selector(spec.selector, f"{path}.selector")
    try:
        matched = selector_matches(spec.selector, template_labels(spec.template))
    except ValueError:
        matched = True
    if not matched:
        errs.append(
            invalid(
                f"{path}.template.metadata.labels",
                template_labels(spec.template),
                "`selector` does not match template `labels`",
            )
        )
    if spec.selector is not None and spec.selector.is_empty():
        errs.append(
            invalid(f"{path}.selector", spec.selector.to_dict(), "empty selector is invalid for daemonset")
        )
    errs.extend(validate_pod_template(spec.template, f"{path}.template"))
    pod_spec = template_spec(spec.template)
    restart = pod_spec.get("restartPolicy") or "Always"
    if restart != "Always":
        errs.append(not_supported(f"{path}.template.spec.restartPolicy", restart, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                f"{path}.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in DaemonSet is not Supported",
            )
        )
    errs.extend(validate_nonnegative(spec.min_ready_seconds or 0, f"{path}.minReadySeconds"))
    strategy = spec.update_strategy
    spath = f"{path}.updateStrategy"
    if strategy.type == STRATEGY_ON_DELETE:
        pass
    elif strategy.type == STRATEGY_ROLLING_UPDATE:
        if strategy.rolling_update is None:
            errs.append(required(f"{spath}.rollingUpdate"))
        else:
            errs.extend(_rolling_update_errors(strategy.rolling_update, f"{spath}.rollingUpdate"))
    else:
        errs.append(not_supported(spath, strategy.to_dict(), [STRATEGY_ROLLING_UPDATE, STRATEGY_ON_DELETE]))
    if spec.revision_history_limit is not None:
        errs.extend(validate_nonnegative(spec.revision_history_limit, f"{path}.revisionHistoryLimit"))
    if spec.lifecycle is not None and spec.lifecycle.in_place_update is not None:
        errs.append(forbidden(f"{path}.lifecycle.inPlaceUpdate", "inPlaceUpdate hook has not supported yet"))
    return errs


MUTABLE_SPEC_FIELDS = (
    "template",
    "updateStrategy",
    "lifecycle",
    "burstReplicas",
    "minReadySeconds",
    "revisionHistoryLimit",
)


def validate(obj: DaemonSet, old: DaemonSet | None = None) -> list[FieldError]:
    """The validating webhook: create when `old` is None, update otherwise."""
    errs: list[FieldError] = []
    if old is not None and changed_outside(obj.spec.to_dict(), old.spec.to_dict(), MUTABLE_SPEC_FIELDS):
        errs.append(
            forbidden(
                "spec",
                "updates to daemonset spec for fields other than 'BurstReplicas', 'template', "
                "'lifecycle',  'updateStrategy', 'minReadySeconds', and 'revisionHistoryLimit' "
                "are forbidden",
            )
        )
    errs.extend(validate_spec(obj.spec))
    return errs
