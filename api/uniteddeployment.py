"""UnitedDeployment (apps.kruise.io v1alpha1/v1beta1): one workload per topology subset, replicas split
between them.

v1beta1 (upstream master's storage version) has the same spec and a per-subset status; defaulting and
validation are written against v1alpha1 and `kruise.api.conversion.uniteddeployment` maps between the two.

Validation is upstream 1.9's webhook: selector, subset names, the replicas / min / max arithmetic,
manual partitions, the Adaptive-strategy rules, core validation of subset nodeSelectorTerm/tolerations
and their immutability on update; the embedded template's per-kind checks and update rules live in
`kruise.api.uniteddeployment_templates`.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import Field

from kruise.api.common import (
    Int32,
    Int64,
    IntOrString,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    NodeSelectorTermDict,
    ObjectMeta,
    Schemaless,
    Time,
    TolerationDict,
    WorkloadSpecDict,
)
from kruise.api.crdgen import (
    CRD_REQUIRED,
    CRDInfo,
    CRDVersion,
    PrinterColumn,
    ScaleSubresource,
    age_column,
)
from kruise.api.podtemplate_defaults import default_pod_template, default_pvc
from kruise.api.uniteddeployment_templates import validate_template, validate_template_update
from kruise.api.validation import (
    FieldError,
    dns1123_label_errors,
    forbidden,
    invalid,
    required,
    validate_label_selector,
    validate_nonnegative,
)
from kruise.api.workloadspread import validate_node_selector_term, validate_tolerations

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "UnitedDeployment"

UPDATE_STRATEGY_MANUAL = "Manual"
SCHEDULE_FIXED = "Fixed"
SCHEDULE_ADAPTIVE = "Adaptive"
DEFAULT_RESCHEDULE_CRITICAL_SECONDS = 30
DEFAULT_UNSCHEDULABLE_SECONDS = 300

TEMPLATE_FIELDS = (
    "statefulSetTemplate",
    "advancedStatefulSetTemplate",
    "cloneSetTemplate",
    "deploymentTemplate",
)
_UNSET_UD_REPLICAS = -1
_UNBOUNDED_MAX_REPLICAS = 1_000_000


class WorkloadTemplate(KruiseModel):
    """`{metadata, spec}` of a child workload; the spec is the child kind's own spec, kept as written."""

    metadata: ObjectMeta | None = None
    """Labels, annotations and so on of each subset's workload."""
    spec: WorkloadSpecDict = Field(default_factory=dict)
    """Spec of each subset's workload, in that kind's own schema; the controller sets its replicas and
    adds the subset's node selector, tolerations and patch."""


class SubsetTemplate(KruiseModel):
    stateful_set_template: WorkloadTemplate | None = None
    """Make each subset a StatefulSet (apps/v1) from this template."""
    advanced_stateful_set_template: WorkloadTemplate | None = None
    """Make each subset an Advanced StatefulSet (apps.kruise.io) from this template."""
    clone_set_template: WorkloadTemplate | None = None
    """Make each subset a CloneSet from this template."""
    deployment_template: WorkloadTemplate | None = None
    """Make each subset a Deployment from this template."""


class Subset(KruiseModel):
    name: str
    """Name of the subset, a DNS label unique within the UnitedDeployment; its workload is named
    <UnitedDeployment name>-<subset name>-<random suffix>."""
    node_selector_term: NodeSelectorTermDict | None = None
    """Node selector term the subset's pods are required to match, so the subset stands for a group of
    nodes; cannot be changed."""
    tolerations: list[TolerationDict] | None = None
    """Tolerations added to the subset's pods; cannot be changed."""
    replicas: IntOrString | None = None
    """Pods in this subset: a number or a percentage of spec.replicas. Unset shares what the other subsets
    leave evenly among the unset ones. Cannot be combined with minReplicas/maxReplicas in one
    UnitedDeployment."""
    min_replicas: IntOrString | None = None
    """Fewest pods this subset gets, filled in subset order before any subset gets more: a number or a
    percentage. Default 0."""
    max_replicas: IntOrString | None = None
    """Most pods this subset gets: a number or a percentage, at least minReplicas. Unset means no limit;
    leave at least one subset unlimited so scaling cannot get stuck."""
    patch: Schemaless | None = None
    """A strategic merge patch applied to the subset's workload template (e.g. different resources or
    labels per subset); it wins over the fields above."""


class AdaptiveStrategy(KruiseModel):
    """1.9: `unschedulableDuration` (was `unschedulableLastSeconds`) and `reserveUnschedulablePods`."""

    reschedule_critical_seconds: Int32 | None = None
    """Seconds a pod may stay unschedulable in its subset before it is moved to a later subset with room.
    Default 30."""
    unschedulable_duration: Int32 | None = None
    """Seconds a subset stays marked unschedulable after a pod could not be scheduled in it, before new
    pods are put there again. Default 300."""
    reserve_unschedulable_pods: bool | None = None
    """Keep the pod that cannot be scheduled and create a temporary substitute in another subset, deleting
    the substitute once the kept pod is running and ready. Default false (the pod is moved)."""


class ScheduleStrategy(KruiseModel):
    type: str | None = None
    """Fixed (the default): pods stay in their subset even when they cannot be scheduled; Adaptive: such
    pods move on to other subsets, as adaptive says."""
    adaptive: AdaptiveStrategy | None = None
    """Settings for type Adaptive."""


class Topology(KruiseModel):
    subsets: list[Subset] | None = None
    """The subsets, in order; each gets its own workload."""
    schedule_strategy: ScheduleStrategy | None = None
    """What happens to pods that cannot be scheduled in their subset."""


class ManualUpdate(KruiseModel):
    partitions: dict[str, Int32] | None = None
    """Per subset name, how many of its pods to keep at the old revision (the subset workload's
    partition). Default 0: update them all."""


class UpdateStrategy(KruiseModel):
    type: str | None = None
    """How template changes roll out: Manual (the default), paced by manualUpdate's per-subset partitions."""
    manual_update: ManualUpdate | None = None
    """The partition of each subset, for type Manual."""


class UnitedDeploymentSpec(KruiseModel):
    replicas: Int32 | None = None
    """Total number of pods over all subsets. Default 1."""
    selector: LabelSelector | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    """Label query over the pods this UnitedDeployment owns; must match the template's labels. See
    https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"""
    template: SubsetTemplate = Field(default_factory=SubsetTemplate)
    """The workload each subset runs; exactly one of its templates is set."""
    topology: Topology = Field(default_factory=Topology)
    """The subsets and how pods are split and scheduled between them."""
    update_strategy: UpdateStrategy = Field(default_factory=UpdateStrategy)
    """How the subsets are updated when the template changes."""
    revision_history_limit: Int32 | None = None
    """How many old revisions to keep. Default 10."""


class UnitedDeploymentCondition(KruiseModel):
    type: str | None = None
    """The kind of condition: SubsetProvisioned, SubsetUpdated, SubsetFailure or UnitedDeploymentUpdated."""
    status: str | None = None
    """Whether the condition holds: True, False or Unknown."""
    last_transition_time: Time | None = None
    """When the status last changed from one value to another."""
    reason: str | None = None
    """A short CamelCase word saying why the condition last changed."""
    message: str | None = None
    """Details of the last change, for humans."""


class SubsetCondition(KruiseModel):
    type: str
    """The kind of condition: SubsetSchedulable."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    last_transition_time: Time | None = None
    """When the status last changed from one value to another."""
    reason: str | None = None
    """A short CamelCase word saying why the condition last changed."""
    message: str | None = None
    """Details of the last change, for humans."""


class SubsetStatus(KruiseModel):
    name: str | None = None
    """Name of the subset."""
    replicas: Int32 | None = None
    """Number of pods the subset's workload has, as last observed."""
    ready_replicas: Int32 | None = None
    """Number of the subset's pods that are ready."""
    partition: Int32 | None = None
    """The subset's current partition."""
    reserved_pods: Int32 | None = None
    """Number of the subset's pods kept while unschedulable (reserveUnschedulablePods)."""
    conditions: list[SubsetCondition] | None = None
    """Latest observations of the subset, e.g. SubsetSchedulable False while its nodes lack room."""


class UpdateStatus(KruiseModel):
    updated_revision: str | None = None
    """Name of the latest revision, which updated pods run."""
    current_partitions: dict[str, Int32] | None = None
    """Partition in force per subset name."""


class _UnitedDeploymentStatusCommon(KruiseModel):
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    ready_replicas: Int32 | None = None
    """Number of pods that are ready."""
    replicas: Int32 = 0
    """Number of pods over all subsets, as last observed."""
    updated_replicas: Int32 = 0
    """Number of pods at the latest revision."""
    reserved_pods: Int32 | None = None
    """Number of pods kept while unschedulable, with substitutes in other subsets
    (reserveUnschedulablePods)."""
    updated_ready_replicas: Int32 | None = None
    """Number of pods at the latest revision that are ready."""
    collision_count: Int32 | None = None
    """Count of revision name hash collisions, mixed into the next revision's name to avoid another."""
    current_revision: str = ""
    """Name of the revision all pods ran when the last update finished (every pod updated and ready)."""
    subset_statuses: list[SubsetStatus] | None = None
    """State of each subset."""
    conditions: list[UnitedDeploymentCondition] | None = None
    """Latest observations of the UnitedDeployment's state."""
    label_selector: str | None = None
    """The selector in string form, for the scale subresource (HPA)."""


class UnitedDeploymentStatus(_UnitedDeploymentStatusCommon):
    subset_replicas: dict[str, Int32] | None = None
    """Number of pods each subset should run, by subset name."""
    update_status: UpdateStatus | None = None
    """Progress of the current update."""


class UnitedDeployment(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["UnitedDeployment"] | None = None
    spec: UnitedDeploymentSpec
    """Desired state of the UnitedDeployment."""
    status: UnitedDeploymentStatus | None = None
    """Observed state of the UnitedDeployment, written by kruise-manager."""


class UnitedDeploymentStatusV1beta1(_UnitedDeploymentStatusCommon):
    """v1beta1 keeps per-subset replicas and partitions in `subsetStatuses[]` (v1alpha1: the
    `subsetReplicas` and `updateStatus.currentPartitions` maps) and the updated revision at the top
    (v1alpha1: `updateStatus.updatedRevision`)."""

    updated_revision: str | None = None
    """Name of the latest revision, which updated pods run."""


class UnitedDeploymentV1beta1(KruiseObject):
    """The v1beta1 (upstream's storage) form; controllers read v1alpha1, `/convert` maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["UnitedDeployment"] | None = None
    spec: UnitedDeploymentSpec
    """Desired state of the UnitedDeployment."""
    status: UnitedDeploymentStatusV1beta1 | None = None
    """Observed state of the UnitedDeployment, written by kruise-manager."""


_COLUMNS = (
    PrinterColumn("DESIRED", "integer", ".spec.replicas", description="The desired number of pods."),
    PrinterColumn("CURRENT", "integer", ".status.replicas", description="The number of currently all pods."),
    PrinterColumn("UPDATED", "integer", ".status.updatedReplicas", description="The number of pods updated."),
    PrinterColumn("READY", "integer", ".status.readyReplicas", description="The number of pods ready."),
    age_column(),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="uniteddeployments",
    description="UnitedDeployment runs one workload (StatefulSet, Advanced StatefulSet, CloneSet or "
    "Deployment) per topology subset, such as a zone, and splits its replicas between them.",
    short_names=("ud",),
    versions=(
        CRDVersion(
            VERSION, UnitedDeployment, storage=True, scale=ScaleSubresource(), printer_columns=_COLUMNS
        ),
        CRDVersion(
            "v1beta1",
            UnitedDeploymentV1beta1,
            storage=False,
            scale=ScaleSubresource(),
            printer_columns=_COLUMNS,
        ),
    ),
    conversion_webhook=True,
)


def set_defaults(
    obj: UnitedDeployment, inject_template_defaults: bool = True, host_network_host_ports: bool = False
) -> None:
    """SetDefaultsUnitedDeployment: history 10, Manual updates, minReplicas 0 when only capacities are set.

    Like upstream, only a `statefulSetTemplate` gets pod-template and PVC defaults.
    """
    spec = obj.spec
    if spec.revision_history_limit is None:
        spec.revision_history_limit = 10
    spec.update_strategy = spec.update_strategy  # marks it set, so to_dict() emits it
    if not spec.update_strategy.type:
        spec.update_strategy.type = UPDATE_STRATEGY_MANUAL
    if spec.update_strategy.type == UPDATE_STRATEGY_MANUAL and spec.update_strategy.manual_update is None:
        spec.update_strategy.manual_update = ManualUpdate()
    sts = spec.template.stateful_set_template
    if sts is not None and inject_template_defaults:
        default_pod_template(sts.spec.setdefault("template", {}), host_network_host_ports)
        for claim in sts.spec.get("volumeClaimTemplates") or []:
            default_pvc(claim)
    subsets = spec.topology.subsets or []
    has_replicas = any(s.replicas is not None for s in subsets)
    has_capacity = any(s.min_replicas is not None or s.max_replicas is not None for s in subsets)
    if has_capacity and not has_replicas:
        for subset in subsets:
            if subset.min_replicas is None:
                subset.min_replicas = 0


def _go_round(value: float) -> int:
    """Go's math.Round: half away from zero."""
    return math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)


def parse_subset_replicas(ud_replicas: int, value: int | str) -> int:
    """The controller's ParseSubsetReplicas: an int, or "N%" of the UnitedDeployment's replicas (rounded)."""
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"subset replicas ({value}) should not be less than 0")
        return value
    if ud_replicas < 0:
        raise ValueError(
            f"subsetReplicas ({value}) should not be string when unitedDeployment replicas is empty"
        )
    if not value.endswith("%"):
        raise ValueError(
            f"subset replicas ({value}) only support integer value or percentage value with a suffix '%'"
        )
    digits = value[:-1]
    if not re.fullmatch(r"[+-]?[0-9]+", digits):
        raise ValueError(
            f"subset replicas ({value}) should be correct percentage integer: "
            f'strconv.ParseInt: parsing "{digits}": invalid syntax'
        )
    percent = int(digits)
    if not 0 <= percent <= 100:
        raise ValueError(f"subset replicas ({value}) should be in range [0, 100]")
    return _go_round(ud_replicas * percent / 100)


def validate_subset_replicas(expected: int | None, subsets: list[Subset], path: str) -> list[FieldError]:
    """validateSubsetReplicas. Upstream formats the UnitedDeployment replicas in two messages from a
    pointer (printing an address); the value is printed here instead."""
    ud_replicas = _UNSET_UD_REPLICAS if expected is None else expected
    errs: list[FieldError] = []
    sum_replicas = sum_min = sum_max = 0
    count_replicas = count_max = 0
    has_replicas = has_capacity = False
    for i, subset in enumerate(subsets):
        replicas = 0
        if subset.replicas is not None:
            count_replicas += 1
            has_replicas = True
            try:
                replicas = parse_subset_replicas(ud_replicas, subset.replicas)
            except ValueError as err:
                errs.append(invalid(f"{path}[{i}].replicas", subset.replicas, str(err)))
        sum_replicas += replicas
        min_replicas = 0
        if subset.min_replicas is not None:
            has_capacity = True
            try:
                min_replicas = parse_subset_replicas(ud_replicas, subset.min_replicas)
            except ValueError as err:
                errs.append(invalid(f"{path}[{i}].minReplicas", subset.max_replicas, str(err)))
        sum_min += min_replicas
        max_replicas = _UNBOUNDED_MAX_REPLICAS
        if subset.max_replicas is not None:
            count_max += 1
            has_capacity = True
            try:
                max_replicas = parse_subset_replicas(ud_replicas, subset.max_replicas)
            except ValueError as err:
                errs.append(invalid(f"{path}[{i}].minReplicas", subset.max_replicas, str(err)))
        sum_max += max_replicas
        if min_replicas > max_replicas:
            errs.append(
                invalid(
                    f"{path}[{i}].minReplicas",
                    subset.max_replicas,
                    f"subset[{i}].minReplicas must be more than or equal to maxReplicas",
                )
            )
    if has_replicas and has_capacity:
        errs.append(
            invalid(
                path,
                [s.to_dict() for s in subsets],
                "subset.Replicas and subset.MinReplicas/subset.MaxReplicas are mutually exclusive in a "
                "UnitedDeployment",
            )
        )
        return errs
    if has_capacity:
        if ud_replicas == _UNSET_UD_REPLICAS:
            errs.append(
                invalid(
                    path,
                    ud_replicas,
                    "spec.replicas must be not empty if you set subset.minReplicas/maxReplicas",
                )
            )
        if count_max >= len(subsets):
            errs.append(invalid(path, count_max, "at least one subset.maxReplicas must be empty"))
        if sum_min > sum_max:
            errs.append(
                invalid(
                    path,
                    sum_min,
                    "sum of indicated subset.minReplicas should not be greater than sum of indicated "
                    "subset.maxReplicas",
                )
            )
    elif ud_replicas != _UNSET_UD_REPLICAS:
        if sum_replicas > ud_replicas:
            errs.append(
                invalid(
                    path,
                    sum_replicas,
                    f"sum of indicated subset replicas {sum_replicas} should not be greater than "
                    f"UnitedDeployment replicas {ud_replicas}",
                )
            )
        if 0 < count_replicas == len(subsets) and sum_replicas != ud_replicas:
            errs.append(
                invalid(
                    path,
                    sum_replicas,
                    "if replicas of all subsets are provided, the sum of indicated subset replicas "
                    f"{sum_replicas} should equal UnitedDeployment replicas {ud_replicas}",
                )
            )
    elif count_replicas != len(subsets):
        errs.append(
            invalid(
                path,
                sum_replicas,
                "if UnitedDeployment replicas is not provided, replicas of all subsets should be provided",
            )
        )
    return errs


def _reserves_unschedulable_pods(strategy: ScheduleStrategy | None) -> bool:
    """ShouldReserveUnschedulablePods: the Adaptive strategy with `reserveUnschedulablePods: true`."""
    return (
        strategy is not None
        and strategy.type == SCHEDULE_ADAPTIVE
        and strategy.adaptive is not None
        and bool(strategy.adaptive.reserve_unschedulable_pods)
    )


def validate(obj: UnitedDeployment, old: UnitedDeployment | None = None) -> list[FieldError]:
    """validateUnitedDeployment (CREATE), plus ValidateUnitedDeploymentUpdate when `old` is given
    (UPDATE runs both, as upstream's handler does). The name must be a DNS subdomain (checked by the
    apiserver too)."""
    spec = obj.spec
    path = "spec"
    errs: list[FieldError] = []
    errs.extend(validate_nonnegative(spec.replicas, f"{path}.replicas"))
    selector_errs: list[FieldError] = []
    if spec.selector is None:
        errs.append(required(f"{path}.selector"))
    else:
        selector_errs = validate_label_selector(spec.selector, f"{path}.selector")
        errs.extend(selector_errs)
        if spec.selector.is_empty():
            errs.append(
                invalid(
                    f"{path}.selector", spec.selector.to_dict(), "empty selector is invalid for statefulset"
                )
            )
    strategy = spec.topology.schedule_strategy
    if _reserves_unschedulable_pods(strategy) and (
        spec.template.advanced_stateful_set_template is not None
        or spec.template.stateful_set_template is not None
    ):
        errs.append(
            invalid(
                f"{path}.topology.scheduleStrategy",
                strategy.to_dict() if strategy else None,
                "only stateless workloads (Deployment and CloneSet) are supported by reserved rescheduling",
            )
        )
    if selector_errs:
        # upstream: the selector does not convert, so the templates are not checked against it
        errs.append(invalid(f"{path}.selector", spec.selector.to_dict() if spec.selector else None, ""))
    else:
        errs.extend(validate_template(spec.template, spec.selector, f"{path}.template"))
    adaptive = strategy is not None and strategy.type == SCHEDULE_ADAPTIVE
    subsets = spec.topology.subsets or []
    subsets_path = f"{path}.topology.subsets"
    errs.extend(validate_subset_replicas(spec.replicas, subsets, subsets_path))
    names: set[str] = set()
    for i, subset in enumerate(subsets):
        name_path = f"{subsets_path}[{i}].name"
        if not subset.name:
            errs.append(required(name_path))
        if subset.name in names:
            errs.append(invalid(name_path, subset.name, f"duplicated subset name {subset.name}"))
        names.add(subset.name)
        msgs = dns1123_label_errors(subset.name)
        if msgs:
            errs.append(invalid(name_path, subset.name, f"invalid subset name {', '.join(msgs)}"))
        errs.extend(
            validate_node_selector_term(
                subset.node_selector_term or {}, f"{subsets_path}[{i}].nodeSelectorTerm"
            )
        )
        if subset.tolerations is not None:
            errs.extend(validate_tolerations(subset.tolerations, f"{subsets_path}[{i}].tolerations"))
        if subset.replicas is not None and adaptive:
            errs.append(
                forbidden(
                    f"{subsets_path}[{i}].replicas",
                    "specify replicas use minReplicas/maxReplicas to enable adaptive strategy",
                )
            )
    manual = spec.update_strategy.manual_update
    if manual is not None:
        for subset_name in manual.partitions or {}:
            if subset_name not in names:
                errs.append(
                    invalid(
                        f"{path}.updateStrategy.partitions",
                        manual.partitions,
                        f"subset {subset_name} does not exist",
                    )
                )
    if old is not None:
        errs.extend(validate_update(obj, old))
    return errs


def validate_update(obj: UnitedDeployment, old: UnitedDeployment) -> list[FieldError]:
    """ValidateUnitedDeploymentUpdate: the kept template kind's update rules
    (`uniteddeployment_templates.validate_template_update`), then a kept subset's nodeSelectorTerm
    and tolerations are immutable.

    Upstream checks tolerations in two loops, so a toleration change is reported twice; kept as is.
    """
    errs = validate_template_update(obj.spec.template, old.spec.template, "spec.template")
    old_subsets = {s.name: s for s in old.spec.topology.subsets or []}
    subsets = obj.spec.topology.subsets or []
    for i, subset in enumerate(subsets):
        previous = old_subsets.get(subset.name)
        if previous is None:
            continue
        if (previous.node_selector_term or {}) != (subset.node_selector_term or {}):
            errs.append(
                forbidden(f"spec.topology.subsets[{i}].nodeSelectorTerm", "may not be changed in an update")
            )
        if previous.tolerations != subset.tolerations:
            errs.append(
                forbidden(f"spec.topology.subsets[{i}].tolerations", "may not be changed in an update")
            )
    for i, subset in enumerate(subsets):
        previous = old_subsets.get(subset.name)
        if previous is not None and previous.tolerations != subset.tolerations:
            errs.append(
                forbidden(f"spec.topology.subsets[{i}].tolerations", "may not be changed in an update")
            )
    errs.extend(validate_nonnegative(obj.spec.replicas, "spec.replicas"))
    return errs
