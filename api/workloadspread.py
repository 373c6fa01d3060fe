"""WorkloadSpread (apps.kruise.io v1alpha1/v1beta1): spread a workload's pods over subsets of nodes with
quotas.

v1beta1 (upstream master's storage version) renames a subset's `requiredNodeSelectorTerm` /
`preferredNodeSelectorTerms` to `requiredNodeSelector` / `preferredNodeSelector` and holds subset
conditions as metav1.Condition; validation is written against v1alpha1 and
`kruise.api.conversion.workloadspread` maps between the two.

Validation follows upstream's webhook for the WorkloadSpread's own fields; the other inputs it
needs (kruise-configuration's custom-workload whitelist, the namespace's other WorkloadSpreads) are
arguments. Node-selector terms and tolerations get core's validation (shared with UnitedDeployment).
Not covered here: the dry-run of `patch` against the target workload's pod template, which needs
the workload.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import Field

from kruise.api.common import (
    Int32,
    Int64,
    IntOrString,
    IntOrStringError,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    ListMapKeys,
    NodeSelectorTermDict,
    PreferredTermDict,
    Schemaless,
    Time,
    TolerationDict,
    scaled_value_round_up,
)
from kruise.api.crdgen import CRD_REQUIRED, CRDInfo, CRDVersion, PrinterColumn
from kruise.api.crr import MetaCondition
from kruise.api.persistentpodstate import parse_group
from kruise.api.validation import (
    FieldError,
    dns1123_subdomain_errors,
    forbidden,
    invalid,
    label_value_errors,
    not_supported,
    qualified_name_errors,
    required,
    validate_label_selector,
)

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "WorkloadSpread"

STRATEGY_FIXED = "Fixed"
STRATEGY_ADAPTIVE = "Adaptive"
CONDITION_SCHEDULABLE = "Schedulable"

MAX_SCHEDULED_FAILED_SECONDS = 300

# Built-in target kinds and the API groups each may come from.
BUILTIN_TARGETS: dict[str, tuple[str, ...]] = {
    "CloneSet": ("apps.kruise.io",),
    "Deployment": ("apps",),
    "ReplicaSet": ("apps",),
    "Job": ("batch",),
    "StatefulSet": ("apps", "apps.kruise.io"),
}


class WorkloadTargetReference(KruiseModel):
    api_version: str = ""
    """API version of the workload, e.g. apps.kruise.io/v1alpha1."""
    kind: str = ""
    """Kind of the workload: CloneSet, Deployment, ReplicaSet, Job, StatefulSet, or a kind the
    kruise-configuration whitelist allows."""
    name: str = ""
    """Name of the workload, in this namespace."""


class TargetFilter(KruiseModel):
    selector: LabelSelector | None = None
    """Only pods of the workload that match this label query are spread; the rest are left alone."""
    replicas_path_list: list[str] | None = None
    """Dot-separated paths in the workload (e.g. spec.replicas, or subsets.1.replicas with an array index)
    whose integer values add up to the number of filtered pods; unset uses the workload's replicas."""


class AdaptiveStrategy(KruiseModel):
    disable_simulation_schedule: bool | None = None
    """Do not check, when a pod is created, whether a subset's nodes have room for it (a simple check of
    node resources only). Default false."""
    reschedule_critical_seconds: Int32 | None = None
    """Seconds a pod may stay unschedulable in its subset before it is deleted so the workload recreates
    it in a later subset with room; the subset is then marked unschedulable for a while. Unset means no
    rescheduling."""


class ScheduleStrategy(KruiseModel):
    type: str | None = None
    """Fixed (the default): pods stay in the subset they were put in; Adaptive: pods that cannot be
    scheduled move on to later subsets, as adaptive says."""
    adaptive: AdaptiveStrategy | None = None
    """Settings for type Adaptive."""


class WorkloadSpreadSubset(KruiseModel):
    name: str
    """Name of the subset, unique within the WorkloadSpread."""
    required_node_selector_term: NodeSelectorTermDict | None = None
    """Node selector term the subset's pods are required to match, added to their node affinity."""
    preferred_node_selector_terms: list[PreferredTermDict] | None = None
    """Weighted node selector terms the subset's pods prefer, added to their node affinity."""
    tolerations: list[TolerationDict] | None = None
    """Tolerations added to the subset's pods."""
    max_replicas: IntOrString | None = None
    """Most pods in this subset: a number or a percentage of the workload's replicas. Unset means no limit
    (usually for the last subset)."""
    patch: Schemaless | None = None
    """A strategic merge patch applied to each pod put in this subset, e.g. to add labels or change
    resources."""


class WorkloadSpreadSpec(KruiseModel):
    target_ref: WorkloadTargetReference | None = Field(
        default=None, alias="targetRef", json_schema_extra=CRD_REQUIRED
    )
    """The workload whose pods are spread; cannot be changed."""
    target_filter: TargetFilter | None = None
    """Spread only part of the workload's pods."""
    subsets: list[WorkloadSpreadSubset] = Field(default_factory=list, json_schema_extra=CRD_REQUIRED)
    """The subsets, in order: a new pod goes to the first subset with room; pods are deleted from the last
    subset first."""
    schedule_strategy: ScheduleStrategy | None = None
    """What happens to pods that cannot be scheduled in their subset."""


class SubsetCondition(KruiseModel):
    type: str
    """The kind of condition: Schedulable."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    last_transition_time: Time | None = None
    """When the status last changed from one value to another."""
    reason: str | None = None
    """A short CamelCase word saying why the condition last changed."""
    message: str | None = None
    """Details of the last change, for humans."""


class SubsetStatus(KruiseModel):
    name: str
    """Name of the subset."""
    replicas: Int32 = 0
    """Number of active pods in the subset, as last observed."""
    conditions: list[SubsetCondition] | None = None
    """Latest observations of the subset, e.g. Schedulable False while its nodes lack room."""
    missing_replicas: Int32 = 0
    """How many more pods the subset can take before maxReplicas; -1 when it has no maxReplicas."""
    creating_pods: dict[str, Time] | None = None
    """Pods the webhook put in this subset that the controller has not seen yet, with the time of the
    webhook's decision; stale entries are dropped."""
    deleting_pods: dict[str, Time] | None = None
    """Pods the webhook let go from this subset that the controller has not seen deleted yet, with the
    time of the webhook's decision."""


class WorkloadSpreadStatus(KruiseModel):
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    subset_statuses: list[SubsetStatus] | None = None
    """State of each subset, in spec order."""
    versioned_subset_statuses: dict[str, list[SubsetStatus]] | None = None
    """Subset states per pod revision, kept during a rolling update (when new pods may be created before
    old ones go) so each version is spread on its own."""


class WorkloadSpread(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["WorkloadSpread"] | None = None
    spec: WorkloadSpreadSpec
    """Desired state of the WorkloadSpread."""
    status: WorkloadSpreadStatus | None = None
    """Observed state of the WorkloadSpread, written by kruise-manager and kruise-webhook."""


class WorkloadSpreadSubsetV1beta1(KruiseModel):
    name: str
    """Name of the subset, unique within the WorkloadSpread."""
    required_node_selector: NodeSelectorTermDict | None = None
    """Node selector term the subset's pods are required to match, added to their node affinity."""
    preferred_node_selector: list[PreferredTermDict] | None = None
    """Weighted node selector terms the subset's pods prefer, added to their node affinity."""
    tolerations: list[TolerationDict] | None = None
    """Tolerations added to the subset's pods."""
    max_replicas: IntOrString | None = None
    """Most pods in this subset: a number or a percentage of the workload's replicas. Unset means no limit
    (usually for the last subset)."""
    patch: Schemaless | None = None
    """A strategic merge patch applied to each pod put in this subset, e.g. to add labels or change
    resources."""


class WorkloadSpreadSpecV1beta1(KruiseModel):
    target_ref: WorkloadTargetReference | None = Field(
        default=None, alias="targetRef", json_schema_extra=CRD_REQUIRED
    )
    """The workload whose pods are spread; cannot be changed."""
    target_filter: TargetFilter | None = None
    """Spread only part of the workload's pods."""
    subsets: list[WorkloadSpreadSubsetV1beta1] = Field(default_factory=list, json_schema_extra=CRD_REQUIRED)
    """The subsets, in order: a new pod goes to the first subset with room; pods are deleted from the last
    subset first."""
    schedule_strategy: ScheduleStrategy | None = None
    """What happens to pods that cannot be scheduled in their subset."""


class SubsetStatusV1beta1(KruiseModel):
    name: str
    """Name of the subset."""
    replicas: Int32 = 0
    """Number of active pods in the subset, as last observed."""
    conditions: Annotated[list[MetaCondition], ListMapKeys(("type",))] | None = None
    """Latest observations of the subset, e.g. Schedulable False while its nodes lack room."""
    missing_replicas: Int32 = 0
    """How many more pods the subset can take before maxReplicas; -1 when it has no maxReplicas."""
    creating_pods: dict[str, Time] | None = None
    """Pods the webhook put in this subset that the controller has not seen yet, with the time of the
    webhook's decision; stale entries are dropped."""
    deleting_pods: dict[str, Time] | None = None
    """Pods the webhook let go from this subset that the controller has not seen deleted yet, with the
    time of the webhook's decision."""


class WorkloadSpreadStatusV1beta1(KruiseModel):
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    subset_statuses: list[SubsetStatusV1beta1] | None = None
    """State of each subset, in spec order."""
    versioned_subset_statuses: dict[str, list[SubsetStatusV1beta1]] | None = None
    """Subset states per pod revision, kept during a rolling update (when new pods may be created before
    old ones go) so each version is spread on its own."""


class WorkloadSpreadV1beta1(KruiseObject):
    """The v1beta1 (upstream's storage) form; controllers read v1alpha1, `/convert` maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["WorkloadSpread"] | None = None
    spec: WorkloadSpreadSpecV1beta1
    """Desired state of the WorkloadSpread."""
    status: WorkloadSpreadStatusV1beta1 | None = None
    """Observed state of the WorkloadSpread, written by kruise-manager and kruise-webhook."""


_COLUMNS = (
    PrinterColumn("WorkloadName", "string", ".spec.targetRef.name", description="The name of workload"),
    PrinterColumn("WorkloadKind", "string", ".spec.targetRef.kind", description="The kind of workload"),
    PrinterColumn(
        "Adaptive",
        "boolean",
        '.spec.scheduleStrategy.type[?(@ == "Adaptive")]',
        description="Whether use the adaptive reschedule strategy",
    ),
    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
)


CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="workloadspreads",
    description="WorkloadSpread spreads the pods of a workload over subsets of nodes (zones, node pools, "
    "spot and on-demand ...) with a quota per subset, without changing the workload.",
    short_names=("ws",),
    versions=(
        CRDVersion(VERSION, WorkloadSpread, storage=True, printer_columns=_COLUMNS),
        CRDVersion("v1beta1", WorkloadSpreadV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


# --- core scheduling validation (k8s.io/kubernetes/pkg/apis/core/validation) ---

_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _node_selector_requirement(req: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    operator, values = req.get("operator", ""), req.get("values") or []
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(
                    f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = req.get("key", "")
    errs.extend(invalid(f"{path}.key", key, m) for m in qualified_name_errors(key))
    return errs


def _node_field_requirement(req: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    operator, values = req.get("operator", ""), req.get("values") or []
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = req.get("key", "")
    if key != "metadata.name":
        errs.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs.extend(invalid(f"{path}.values[{i}]", value, m) for m in dns1123_subdomain_errors(value))
    return errs


def validate_node_selector_term(term: dict, path: str) -> list[FieldError]:
    """ValidateNodeSelectorTerm."""
    errs: list[FieldError] = []
    for j, req in enumerate(term.get("matchExpressions") or []):
        errs.extend(_node_selector_requirement(req, f"{path}.matchExpressions[{j}]"))
    for j, req in enumerate(term.get("matchFields") or []):
        errs.extend(_node_field_requirement(req, f"{path}.matchFields[{j}]"))
    return errs


def validate_preferred_scheduling_terms(terms: list[dict], path: str) -> list[FieldError]:
    """ValidatePreferredSchedulingTerms: weight 1-100 and a valid preference term."""
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        weight = term.get("weight", 0)
        if not isinstance(weight, int) or weight <= 0 or weight > 100:
            errs.append(invalid(f"{path}[{i}].weight", weight, "must be in the range 1-100"))
        errs.extend(validate_node_selector_term(term.get("preference") or {}, f"{path}[{i}].preference"))
    return errs


def validate_tolerations(tolerations: list[dict], path: str) -> list[FieldError]:
    """ValidateTolerations."""
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        tpath = f"{path}[{i}]"
        key = toleration.get("key", "")
        operator = toleration.get("operator", "")
        value = toleration.get("value", "")
        effect = toleration.get("effect", "")
        if key:
            errs.extend(invalid(f"{tpath}.key", key, m) for m in qualified_name_errors(key))
        if not key and operator != "Exists":
            errs.append(
                invalid(
                    f"{tpath}.operator",
                    operator,
                    "operator must be Exists when `key` is empty, "
                    'which means "match all values and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(
                invalid(
                    f"{tpath}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"
                )
            )
        if operator in ("Equal", ""):
            msgs = label_value_errors(value)
            if msgs:
                errs.append(invalid(f"{tpath}.operator", value, ";".join(msgs)))
        elif operator == "Exists":
            if value:
                errs.append(
                    invalid(
                        f"{tpath}.operator", toleration, "value must be empty when `operator` is 'Exists'"
                    )
                )
        else:
            errs.append(not_supported(f"{tpath}.operator", operator, ["Equal", "Exists"]))
        if effect and effect not in _TAINT_EFFECTS:
            errs.append(not_supported(f"{tpath}.effect", effect, _TAINT_EFFECTS))
    return errs


def _same_group_kind(ref: WorkloadTargetReference, kind: str, groups: Iterable[str]) -> bool:
    group = parse_group(ref.api_version)
    return group is not None and ref.kind == kind and group in groups


def validate_target_ref(
    ref: WorkloadTargetReference | None, whitelist: Iterable[tuple[str, str]]
) -> list[FieldError]:
    path = "spec.targetRef"
    if ref is None:
        return [required(path, "no targetRef defined in WorkloadSpread")]
    value = ref.to_dict()
    if not ref.api_version or not ref.name or not ref.kind:
        return [invalid(path, value, "empty TargetReference is not valid for WorkloadSpread.")]
    if ref.kind in BUILTIN_TARGETS:
        if not _same_group_kind(ref, ref.kind, BUILTIN_TARGETS[ref.kind]):
            return [invalid(path, value, f"TargetReference is not valid for {ref.kind}.")]
        return []
    if not any(_same_group_kind(ref, kind, (group,)) for group, kind in whitelist):
        return [invalid(path, value, "TargetReference's GroupKind is not permitted.")]
    return []


def validate_subsets(spec: WorkloadSpreadSpec, path: str = "spec.subsets") -> list[FieldError]:
    subsets = spec.subsets
    if not subsets:
        return [required(path, "subsets number must >= 1 in WorkloadSpread")]
    errs: list[FieldError] = []
    names: set[str] = set()
    percent_sum = 0
    first_is_percent: bool | None = None
    for i, subset in enumerate(subsets):
        spath = f"{path}[{i}]"
        if subset.name == "":
            errs.append(invalid(f"{spath}.name", "", ""))
        else:
            if subset.name in names:
                errs.append(invalid(f"{spath}.name", subset.name, f"duplicated subset name {subset.name}"))
            names.add(subset.name)
        if subset.required_node_selector_term is not None:
            errs.extend(
                validate_node_selector_term(
                    subset.required_node_selector_term, f"{spath}.requiredNodeSelectorTerm"
                )
            )
        if subset.preferred_node_selector_terms is not None:
            errs.extend(
                validate_preferred_scheduling_terms(
                    subset.preferred_node_selector_terms, f"{spath}.preferredSchedulingTerms"
                )
            )
        if subset.tolerations is not None:
            errs.extend(validate_tolerations(subset.tolerations, f"{spath}.tolerations"))
        max_replicas = subset.max_replicas
        if max_replicas is None:
            continue
        is_percent = isinstance(max_replicas, str)
        if first_is_percent is None:
            first_is_percent = is_percent
        elif is_percent != first_is_percent:
            return [
                *errs,
                invalid(
                    f"{spath}.maxReplicas",
                    max_replicas,
                    "the maxReplicas type of all subsets must be the same",
                ),
            ]
        if spec.target_ref is not None and spec.target_ref.kind == "StatefulSet" and is_percent:
            return [
                *errs,
                invalid(
                    f"{spath}.maxReplicas", max_replicas, "the maxReplicas type must be Int for StatefulSet"
                ),
            ]
        try:
            value = scaled_value_round_up(max_replicas, 100)
        except IntOrStringError:
            value = -1
        if value < 0:
            return [
                *errs,
                invalid(f"{spath}.maxReplicas", max_replicas, "maxReplicas is not valid for subset"),
            ]
        if is_percent:
            percent_sum += value
            if percent_sum > 100:
                return [
                    *errs,
                    invalid(
                        f"{spath}.maxReplicas",
                        max_replicas,
                        "the sum of all subset's maxReplicas exceeds 100% is no permitted",
                    ),
                ]
    if first_is_percent and percent_sum < 100 and subsets[-1].max_replicas is not None:
        errs.append(
            invalid(
                f"{path}[0].maxReplicas",
                subsets[0].max_replicas,
                "maxReplicas sum of all subsets must equal 100% when type is specified as percent",
            )
        )
    return errs


def validate_schedule_strategy(
    spec: WorkloadSpreadSpec, path: str = "spec.scheduleStrategy"
) -> list[FieldError]:
    strategy = spec.schedule_strategy or ScheduleStrategy()
    errs: list[FieldError] = []
    if strategy.type and strategy.type not in (STRATEGY_FIXED, STRATEGY_ADAPTIVE):
        errs.append(invalid(f"{path}.type", strategy.type, "ScheduleStrategy's type is not valid"))
    adaptive = strategy.adaptive
    if adaptive is None:
        return errs
    seconds = adaptive.reschedule_critical_seconds
    if strategy.type != STRATEGY_ADAPTIVE:
        errs.append(
            invalid(
                f"{path}.type",
                seconds,
                "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy",
            )
        )
    if len(spec.subsets) > 1 and spec.subsets[-1].max_replicas is not None:
        errs.append(
            invalid(
                f"{path}.adaptive",
                seconds,
                "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy",
            )
        )
    allowed_max = (1 << 31) - 1
    if len(spec.subsets) > 1:
        allowed_max = (MAX_SCHEDULED_FAILED_SECONDS - 5) // (len(spec.subsets) - 1)
    if seconds is not None and (seconds < 0 or seconds > allowed_max):
        errs.append(
            invalid(
                f"{path}.adaptive.rescheduleCriticalSeconds",
                seconds,
                f"rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > {allowed_max} "
                "is not permitted",
            )
        )
    return errs


def validate(
    obj: WorkloadSpread,
    whitelist: Iterable[tuple[str, str]] = (),
    others: Iterable[WorkloadSpread] = (),
) -> list[FieldError]:
    """validatingWorkloadSpreadFn (CREATE and UPDATE); `whitelist` holds (group, kind) pairs."""
    spec = obj.spec
    errs = validate_target_ref(spec.target_ref, whitelist)
    errs.extend(validate_subsets(spec))
    errs.extend(validate_schedule_strategy(spec))
    if spec.target_filter is not None and spec.target_filter.selector is not None:
        selector_errs = validate_label_selector(spec.target_filter.selector, "spec.targetFilter.selector")
        if selector_errs:
            errs.append(invalid("spec.targetFilter", spec.target_filter.to_dict(), selector_errs[0].body()))
    ref = spec.target_ref
    if ref is not None:
        for other in others:
            other_ref = other.spec.target_ref
            if other.metadata.name == obj.metadata.name or other_ref is None:
                continue
            if (parse_group(ref.api_version), ref.kind, ref.name) == (
                parse_group(other_ref.api_version),
                other_ref.kind,
                other_ref.name,
            ):
                errs.append(
                    invalid(
                        "spec.targetRef",
                        ref.to_dict(),
                        f"ws.spec.targetRef is in conflict with other WorkloadSpread {other.metadata.name}",
                    )
                )
                break
    return errs


def validate_update(obj: WorkloadSpread, old: WorkloadSpread) -> list[FieldError]:
    """validateWorkloadSpreadUpdate: the target workload (group, kind, name) may not change."""
    ref, old_ref = obj.spec.target_ref, old.spec.target_ref
    if ref is None or old_ref is None:
        return []
    if (parse_group(ref.api_version), ref.kind, ref.name) != (
        parse_group(old_ref.api_version),
        old_ref.kind,
        old_ref.name,
    ):
        return [
            invalid(
                "spec.targetRef", ref.to_dict(), "change TargetReference is not permitted for WorkloadSpread"
            )
        ]
    return []
