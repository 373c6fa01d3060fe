"""Advanced StatefulSet (apps.kruise.io v1beta1 storage, v1alpha1 served): native StatefulSet plus
in-place update, maxUnavailable, unordered update, reserved ordinals and lifecycle hooks.

v1alpha1 is a strict subset of v1beta1 with identical meaning, so both versions share defaulting
and validation; a v1alpha1 object is checked through its v1beta1 reading.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from kruise.api.common import (
    ClaimTemplate,
    Int32,
    Int64,
    IntOrString,
    IntOrStringError,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    PodTemplate,
    scaled_value_round_up,
    selector_matches,
)
from kruise.api.crdgen import CRD_REQUIRED, CRDInfo, CRDVersion, PrinterColumn, ScaleSubresource, age_column
from kruise.api.keys import CONDITION_INPLACE_UPDATE_READY
from kruise.api.podtemplate_defaults import default_pod_template, default_pvc
from kruise.api.podtemplate_validation import first_non_image_change, template_labels, template_spec
from kruise.api.validation import (
    FieldError,
    changed_outside,
    forbidden,
    int_or_percent_errors,
    invalid,
    not_supported,
    required,
    validate_label_selector,
    validate_labels,
    validate_nonnegative,
)
from kruise.api.workload_common import (
    POD_UPDATE_TYPES,
    UPDATE_TYPE_IN_PLACE_IF_POSSIBLE,
    UPDATE_TYPE_IN_PLACE_ONLY,
    UPDATE_TYPE_RECREATE,
    InPlaceUpdateStrategy,
    Lifecycle,
    UpdatePriorityStrategy,
    priority_strategy_problem,
)

GROUP = "apps.kruise.io"
KIND = "StatefulSet"
MAX_MIN_READY_SECONDS = 300
POD_MANAGEMENT_ORDERED_READY = "OrderedReady"
POD_MANAGEMENT_PARALLEL = "Parallel"
STRATEGY_ROLLING_UPDATE = "RollingUpdate"
STRATEGY_ON_DELETE = "OnDelete"
PVC_RETAIN = "Retain"
PVC_DELETE = "Delete"
VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE = "OnPodRollingUpdate"
VOLUME_CLAIM_UPDATE_ON_DELETE = "OnDelete"
_RESERVE_RANGE = re.compile(r"^\d+-\d+$")


class UnorderedUpdateStrategy(KruiseModel):
    priority_strategy: UpdatePriorityStrategy | None = None
    """Which pods to update first: by label value order, or by the weights of label selectors."""


class RollingUpdateStatefulSetStrategy(KruiseModel):
    partition: Int32 | None = None
    """Number of pods to keep at old revisions: the StatefulSet updates replicas minus partition pods,
    highest ordinals first unless unorderedUpdate says otherwise. Lower it step by step for a batched
    release. Default 0."""
    max_unavailable: IntOrString | None = None
    """Most pods that may be unavailable at once while updating: a number (e.g. 5) or a percentage of
    replicas (e.g. 10%, rounded down). Above 1 only with podManagementPolicy Parallel. Default 1."""
    pod_update_policy: str | None = None
    """How a pod gets the new template: ReCreate (delete and create, the default), InPlaceIfPossible
    (update images and other in-place changeable fields without recreating, recreate otherwise) or
    InPlaceOnly (in place only; other template changes are rejected)."""
    paused: bool | None = None
    """Stop updating pods (scaling goes on) until set back to false. Default false."""
    unordered_update: UnorderedUpdateStrategy | None = None
    """Update pods in priority order instead of by descending ordinal. Only with podManagementPolicy
    Parallel."""
    in_place_update_strategy: InPlaceUpdateStrategy | None = None
    """Settings of in-place updates (podUpdatePolicy InPlaceIfPossible or InPlaceOnly)."""
    min_ready_seconds: Int32 | None = None
    """Seconds an updated or new pod must be ready before it counts as available, which paces updates
    (with maxUnavailable) and OrderedReady scale-up. 0 to 300, default 0."""


class StatefulSetUpdateStrategy(KruiseModel):
    type: str | None = None
    """RollingUpdate (the default): the StatefulSet updates its pods as rollingUpdate says; OnDelete: a
    pod gets the new template only when it is deleted and recreated."""
    rolling_update: RollingUpdateStatefulSetStrategy | None = None
    """How pods are updated when type is RollingUpdate."""


class VolumeClaimUpdateStrategy(KruiseModel):
    type: str | None = None
    """When claims follow a changed volumeClaimTemplates: OnPodRollingUpdate (claims are updated as their
    pods are rolled) or OnDelete (only claims that are deleted are recreated from the new template). Needs
    the StatefulSetAutoResizePVCGate feature gate."""


class StatefulSetScaleStrategy(KruiseModel):
    max_unavailable: IntOrString | None = None
    """Most pods that may be unavailable at once while scaling: a number (e.g. 5) or a percentage of
    replicas (e.g. 10%, rounded down). Only with podManagementPolicy Parallel."""


class PersistentVolumeClaimRetentionPolicy(KruiseModel):
    when_deleted: str | None = None
    """What happens to the claims made from volumeClaimTemplates when the StatefulSet is deleted: Retain
    (the default, keep them) or Delete."""
    when_scaled: str | None = None
    """What happens to the claims of pods removed by a scale-down: Retain (the default, keep them) or
    Delete."""


class StatefulSetOrdinals(KruiseModel):
    start: Int32 = 0
    """Ordinal of the first pod: pods are numbered from start to start + replicas - 1. Default 0."""


class StatefulSetSpecV1alpha1(KruiseModel):
    replicas: Int32 | None = None
    """Desired number of pods, each with a stable name (<name>-<ordinal>) and its own claims. Default
    1."""
    selector: LabelSelector | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    """Label query over the pods this StatefulSet owns; must match the template's labels and cannot be
    changed. See https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"""
    template: PodTemplate
    """The pod template (a core PodTemplateSpec) every pod is created from; each pod still has its own
    identity."""
    volume_claim_templates: list[ClaimTemplate] | None = None
    """PersistentVolumeClaims made for every pod (<template name>-<pod name>), kept with the pod's
    identity across restarts and rescheduling. Each must be mounted by name in the template; it wins over
    a template volume of the same name."""
    service_name: str | None = None
    """Name of the headless Service that gives the pods their network identity
    (<pod name>.<serviceName>.<namespace>.svc...)."""
    pod_management_policy: str | None = None
    """How pods are created and deleted when scaling: OrderedReady (the default; one at a time in
    ordinal order, each waiting for the previous to be ready, and in reverse order when scaling down) or
    Parallel (all at once)."""
    update_strategy: StatefulSetUpdateStrategy = Field(default_factory=StatefulSetUpdateStrategy)
    """How pods are updated when the template changes."""
    revision_history_limit: Int32 | None = None
    """How many old revisions (ControllerRevisions no pod uses) to keep. Default 10."""


class StatefulSetSpec(StatefulSetSpecV1alpha1):
    volume_claim_update_strategy: VolumeClaimUpdateStrategy = Field(default_factory=VolumeClaimUpdateStrategy)
    """How existing claims follow changes of volumeClaimTemplates."""
    reserve_ordinals: list[IntOrString] | None = None
    """Ordinals no pod may use: the StatefulSet deletes the pods that have them and keeps replicas pods at
    the next free ordinals. Numbers or ranges ("3-5" means 3, 4 and 5). To remove a pod for good, reserve
    its ordinal and lower replicas at the same time."""
    lifecycle: Lifecycle | None = None
    """Hooks that hold pods after creation (preNormal), before deletion (preDelete) and around in-place
    updates (inPlaceUpdate)."""
    scale_strategy: StatefulSetScaleStrategy | None = None
    """How pods are created and deleted when scaling."""
    persistent_volume_claim_retention_policy: PersistentVolumeClaimRetentionPolicy | None = None
    """Whether claims made from volumeClaimTemplates are deleted when the StatefulSet is deleted or
    scaled down."""
    ordinals: StatefulSetOrdinals | None = None
    """How pods are numbered (the first ordinal)."""


class StatefulSetCondition(KruiseModel):
    type: str
    """The kind of condition, e.g. FailedCreatePod or FailedUpdatePod."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    last_transition_time: str | None = None
    """When the status last changed from one value to another."""
    reason: str | None = None
    """A CamelCase word saying why the condition last changed."""
    message: str | None = None
    """Details of the last change, for humans."""


class VolumeClaimStatus(KruiseModel):
    volume_claim_name: str
    """Name of the volume claim template."""
    compatible_replicas: Int32 = 0
    """Number of pods whose claim from this template requests at least the template's storage."""
    compatible_ready_replicas: Int32 = 0
    """Number of those pods whose claim also has at least the requested capacity (the resize is done)."""


class StatefulSetStatusV1alpha1(KruiseModel):
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    replicas: Int32 | None = None
    """Number of pods the StatefulSet owns."""
    ready_replicas: Int32 | None = None
    """Number of its pods that are ready."""
    available_replicas: Int32 | None = None
    """Number of its pods that have been ready for at least minReadySeconds."""
    current_replicas: Int32 | None = None
    """Number of its pods at currentRevision."""
    updated_replicas: Int32 | None = None
    """Number of its pods at updateRevision."""
    current_revision: str | None = None
    """Name of the ControllerRevision the pods ran before the update in progress."""
    update_revision: str | None = None
    """Name of the ControllerRevision of the current template."""
    collision_count: Int32 | None = None
    """Count of revision name hash collisions, mixed into the next revision's name to avoid another."""
    conditions: list[StatefulSetCondition] | None = None
    """Latest observations of the StatefulSet's state."""
    label_selector: str | None = None
    """spec.selector as a string, for the scale subresource (HorizontalPodAutoscaler)."""


class StatefulSetStatus(StatefulSetStatusV1alpha1):
    updated_ready_replicas: Int32 | None = None
    """Number of its pods at updateRevision that are ready."""
    updated_available_replicas: Int32 | None = None
    """Number of its pods at updateRevision that have been ready for at least minReadySeconds."""
    volume_claims: list[VolumeClaimStatus] | None = None
    """Per volume claim template, how many pods' claims match it (after a change of its storage
    request)."""


class StatefulSetV1alpha1(KruiseObject):
    spec: StatefulSetSpecV1alpha1
    """Desired state of the StatefulSet."""
    status: StatefulSetStatusV1alpha1 | None = None
    """Observed state of the StatefulSet, written by kruise-manager."""


class StatefulSet(KruiseObject):
    spec: StatefulSetSpec
    """Desired state of the StatefulSet."""
    status: StatefulSetStatus | None = None
    """Observed state of the StatefulSet, written by kruise-manager."""


_COLUMNS = (
    PrinterColumn("DESIRED", "integer", ".spec.replicas"),
    PrinterColumn("CURRENT", "integer", ".status.replicas"),
    PrinterColumn("UPDATED", "integer", ".status.updatedReplicas"),
    PrinterColumn("READY", "integer", ".status.readyReplicas"),
    age_column(),
    PrinterColumn("CONTAINERS", "string", ".spec.template.spec.containers[*].name", priority=1),
    PrinterColumn("IMAGES", "string", ".spec.template.spec.containers[*].image", priority=1),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="statefulsets",
    description="Advanced StatefulSet runs pods with stable names and storage, like the built-in "
    "StatefulSet, adding in-place update, maxUnavailable, unordered update, reserved ordinals and "
    "lifecycle hooks.",
    short_names=("sts", "asts"),
    versions=(
        CRDVersion(
            "v1alpha1", StatefulSetV1alpha1, storage=False, printer_columns=_COLUMNS, scale=ScaleSubresource()
        ),
        CRDVersion("v1beta1", StatefulSet, storage=True, printer_columns=_COLUMNS, scale=ScaleSubresource()),
    ),
    conversion_webhook=True,
)


def to_v1beta1(obj: StatefulSetV1alpha1 | StatefulSet) -> StatefulSet:
    """Read a v1alpha1 object as v1beta1 (every v1alpha1 field exists there with the same meaning)."""
    if isinstance(obj, StatefulSet):
        return obj
    data = obj.to_dict()
    data["apiVersion"] = f"{GROUP}/v1beta1"
    return StatefulSet.model_validate(data)


def set_defaults(
    obj: StatefulSet | StatefulSetV1alpha1,
    inject_template_defaults: bool = True,
    auto_resize_pvc: bool = False,
    host_network_host_ports: bool = False,
    auto_delete_pvc: bool = True,
) -> None:
    """SetDefaultsStatefulSet.

    ``auto_delete_pvc``: gate StatefulSetAutoDeletePVC (beta, on); off, v1beta1's
    ``persistentVolumeClaimRetentionPolicy`` is not defaulted to Retain/Retain (and the controller
    ignores it).
    ``auto_resize_pvc``: gate StatefulSetAutoResizePVCGate (off by default); on, an unset
    ``volumeClaimUpdateStrategy.type`` becomes ``OnDelete`` (claims are resized only by recreation).
    ``host_network_host_ports``: gate DefaultHostNetworkHostPortsInPodTemplates (see
    `default_pod_spec`)."""
    spec = obj.spec
    if not spec.pod_management_policy:
        spec.pod_management_policy = POD_MANAGEMENT_ORDERED_READY
    strategy = spec.update_strategy
    if not strategy.type:
        strategy.type = STRATEGY_ROLLING_UPDATE
    if strategy.type == STRATEGY_ROLLING_UPDATE:
        rolling = strategy.rolling_update or RollingUpdateStatefulSetStrategy()
        if rolling.partition is None:
            rolling.partition = 0
        if rolling.max_unavailable is None:
            rolling.max_unavailable = 1
        if not rolling.pod_update_policy:
            rolling.pod_update_policy = UPDATE_TYPE_RECREATE
        if rolling.min_ready_seconds is None:
            rolling.min_ready_seconds = 0
        strategy.rolling_update = rolling
    spec.update_strategy = strategy
    if isinstance(spec, StatefulSetSpec):
        if auto_delete_pvc:
            policy = spec.persistent_volume_claim_retention_policy or PersistentVolumeClaimRetentionPolicy()
            if not policy.when_deleted:
                policy.when_deleted = PVC_RETAIN
            if not policy.when_scaled:
                policy.when_scaled = PVC_RETAIN
            spec.persistent_volume_claim_retention_policy = policy
        spec.volume_claim_update_strategy = spec.volume_claim_update_strategy
        if auto_resize_pvc and not spec.volume_claim_update_strategy.type:
            spec.volume_claim_update_strategy.type = VOLUME_CLAIM_UPDATE_ON_DELETE
    if spec.replicas is None:
        spec.replicas = 1
    if spec.revision_history_limit is None:
        spec.revision_history_limit = 10
    if inject_template_defaults:
        default_pod_template(spec.template, host_network_host_ports)
        for pvc in spec.volume_claim_templates or []:
            default_pvc(pvc)


def _max_unavailable_errors(value: IntOrString, spec: StatefulSetSpec, path: str) -> list[FieldError]:
    errs = int_or_percent_errors(value, path)
    try:
        scaled = scaled_value_round_up(value, 1)
    except IntOrStringError as err:
        errs.append(invalid(path, value, f"getValueFromIntOrPercent error: {err}"))
    else:
        if scaled < 1:
            errs.append(invalid(path, value, "should not be less than 1"))
    if spec.pod_management_policy != POD_MANAGEMENT_PARALLEL and value != 1:
        errs.append(invalid(path, value, "can only work with Parallel PodManagementPolicyType"))
    return errs


def _rolling_update_errors(spec: StatefulSetSpec, path: str) -> list[FieldError]:
    rolling = spec.update_strategy.rolling_update
    if rolling is None:
        return []
    rpath = f"{path}.updateStrategy.rollingUpdate"
    errs = validate_nonnegative(rolling.partition or 0, f"{rpath}.partition")
    min_ready = rolling.min_ready_seconds or 0
    errs.extend(validate_nonnegative(min_ready, f"{rpath}.minReadySeconds"))
    if min_ready > MAX_MIN_READY_SECONDS:
        errs.append(invalid(f"{rpath}.minReadySeconds", min_ready, "must be no more than 300 seconds"))
    if rolling.max_unavailable is None:
        errs.append(required(f"{rpath}.maxUnavailable"))
    else:
        errs.extend(_max_unavailable_errors(rolling.max_unavailable, spec, f"{rpath}.maxUnavailable"))
    policy = rolling.pod_update_policy or ""
    if not policy:
        errs.append(required(f"{rpath}.podUpdatePolicy"))
    elif policy in (UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY):
        gates = template_spec(spec.template).get("readinessGates") or []
        if not any(g.get("conditionType") == CONDITION_INPLACE_UPDATE_READY for g in gates):
            errs.append(
                invalid(
                    f"{path}.template.spec.readinessGates",
                    gates,
                    f"must contains {CONDITION_INPLACE_UPDATE_READY} when podUpdatePolicy is {policy}",
                )
            )
    elif policy not in POD_UPDATE_TYPES:
        errs.append(
            invalid(
                f"{rpath}.podUpdatePolicy",
                policy,
                f"must be '{UPDATE_TYPE_RECREATE}', {UPDATE_TYPE_IN_PLACE_IF_POSSIBLE} "
                f"or '{UPDATE_TYPE_IN_PLACE_ONLY}'",
            )
        )
    if rolling.unordered_update is not None:
        upath = f"{rpath}.unorderedUpdate"
        if spec.pod_management_policy != POD_MANAGEMENT_PARALLEL:
            errs.append(
                required(upath, "unorderedUpdate can only work with Parallel PodManagementPolicyType")
            )
        problem = priority_strategy_problem(rolling.unordered_update.priority_strategy)
        if problem:
            errs.append(required(f"{upath}.priorityStrategy", problem))
    return errs


def _reserve_ordinal_errors(spec: StatefulSetSpec) -> list[FieldError]:
    errs: list[FieldError] = []
    ordinals = spec.reserve_ordinals or []
    for i, item in enumerate(ordinals):
        if isinstance(item, str):
            if not _RESERVE_RANGE.match(item):
                errs.append(invalid("spec", ordinals, f"{i} th reserve ordinal is not a valid range: {item}"))
            else:
                low, high = (int(x) for x in item.split("-"))
                if low > high:
                    errs.append(
                        invalid(
                            "spec",
                            ordinals,
                            f"{i} th reserve ordinal is invalid: {item}, err = "
                            f"invalid range {item}: start {low} is greater than end {high}",
                        )
                    )
        elif item < 0:
            errs.append(invalid("spec", ordinals, f"{i} th reserve ordinal is negative: {item}"))
    return errs


def _retention_errors(policy: PersistentVolumeClaimRetentionPolicy | None, path: str) -> list[FieldError]:
    if policy is None:
        return []
    errs = []
    for name, value in (("whenDeleted", policy.when_deleted), ("whenScaled", policy.when_scaled)):
        if value not in (PVC_RETAIN, PVC_DELETE):
            errs.append(not_supported(f"{path}.{name}", value or "", [PVC_RETAIN, PVC_DELETE]))
    return errs


def validate_spec(spec: StatefulSetSpec, path: str = "spec") -> list[FieldError]:
    errs: list[FieldError] = []
    policy = spec.pod_management_policy or ""
    if not policy:
        errs.append(required(f"{path}.podManagementPolicy"))
    elif policy not in (POD_MANAGEMENT_ORDERED_READY, POD_MANAGEMENT_PARALLEL):
        errs.append(
            invalid(f"{path}.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"),
        )
    errs.extend(_reserve_ordinal_errors(spec))
    if spec.scale_strategy is not None and spec.scale_strategy.max_unavailable is not None:
        errs.extend(
            _max_unavailable_errors(
                spec.scale_strategy.max_unavailable, spec, f"{path}.scaleStrategy.maxUnavailable"
            )
        )
    stype = spec.update_strategy.type or ""
    if not stype:
        errs.append(required(f"{path}.updateStrategy"))
    elif stype == STRATEGY_ON_DELETE:
        if spec.update_strategy.rolling_update is not None:
            errs.append(
                invalid(
                    f"{path}.updateStrategy.rollingUpdate",
                    spec.update_strategy.rolling_update.to_dict(),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            )
    elif stype == STRATEGY_ROLLING_UPDATE:
        errs.extend(_rolling_update_errors(spec, path))
    else:
        errs.append(
            invalid(
                f"{path}.updateStrategy",
                spec.update_strategy.to_dict(),
                "must be 'RollingUpdate' or 'OnDelete'",
            )
        )
    errs.extend(
        _retention_errors(
            spec.persistent_volume_claim_retention_policy, f"{path}.persistentVolumeClaimRetentionPolicy"
        )
    )
    errs.extend(validate_nonnegative(spec.replicas if spec.replicas is not None else 1, f"{path}.replicas"))
    if spec.selector is None:
        errs.append(required(f"{path}.selector"))
    else:
        errs.extend(validate_label_selector(spec.selector, f"{path}.selector"))
        if spec.selector.is_empty():
            errs.append(
                invalid(
                    f"{path}.selector", spec.selector.to_dict(), "empty selector is invalid for statefulset"
                )
            )
    try:
        matched = spec.selector is None or selector_matches(spec.selector, template_labels(spec.template))
    except ValueError:
        matched = True
    if spec.selector is not None and not spec.selector.is_empty() and not matched:
        errs.append(
            invalid(
                f"{path}.template.metadata.labels",
                template_labels(spec.template),
                "`selector` does not match template `labels`",
            )
        )
    # like native StatefulSets, only the template's labels are checked, not its pod spec
    errs.extend(validate_labels(template_labels(spec.template), f"{path}.template.labels"))
    pod_spec = template_spec(spec.template)
    restart = pod_spec.get("restartPolicy")
    if restart and restart != "Always":
        errs.append(not_supported(f"{path}.template.spec.restartPolicy", restart, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                f"{path}.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in StatefulSet is not Supported",
            )
        )
    return errs


MUTABLE_SPEC_FIELDS = (
    "replicas",
    "ordinals",
    "template",
    "reserveOrdinals",
    "lifecycle",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "volumeClaimTemplates",
    "volumeClaimUpdateStrategy",
    "updateStrategy",
    "scaleStrategy",
)


def validate(
    obj: StatefulSet | StatefulSetV1alpha1, old: StatefulSet | StatefulSetV1alpha1 | None = None
) -> list[FieldError]:
    """The validating webhook for either version: create when `old` is None, update otherwise."""
    new = to_v1beta1(obj)
    errs = validate_spec(new.spec)
    if old is not None:
        previous = to_v1beta1(old)
        if changed_outside(new.spec.to_dict(), previous.spec.to_dict(), MUTABLE_SPEC_FIELDS):
            errs.append(
                forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                    "'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', "
                    "'persistentVolumeClaimRetentionPolicy', "
                    "`volumeClaimTemplates`, `VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden",
                )
            )
        errs.extend(
            validate_nonnegative(new.spec.replicas if new.spec.replicas is not None else 1, "spec.replicas")
        )
        errs.extend(
            _retention_errors(
                new.spec.persistent_volume_claim_retention_policy, "spec.persistentVolumeClaimRetentionPolicy"
            )
        )
    return errs


def in_place_only_problem(old_template: dict[str, Any], new_template: dict[str, Any]) -> str | None:
    """Whole-request rejection for InPlaceOnly updates that change more than container images."""
    change = first_non_image_change(old_template, new_template, anchored=False)
    if change is None:
        return None
    return (
        f"invalid template modified with InPlaceOnly strategy: {change}, "
        "currently only image update is allowed for InPlaceOnly"
    )
