"""PodUnavailableBudget (policy.kruise.io/v1alpha1): caps voluntary disruption (delete, evict, in-place
update) of the pods it selects, by selector or by the workload it targets.

Upstream's webhook answers invalid PUBs with HTTP 400 (not 422); the messages are reproduced here and
the status code is the webhook's concern.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from kruise.api.common import (
    Int32,
    Int64,
    IntOrString,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    LabelSelectorRequirement,
    TargetReference,
    Time,
)
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn
from kruise.api.keys import (
    ANNOTATION_PUB_PROTECT_OPERATIONS,
    ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS,
    PUB_OPERATION_DELETE,
    PUB_OPERATION_EVICT,
    PUB_OPERATION_RESIZE,
    PUB_OPERATION_UPDATE,
)
from kruise.api.validation import (
    ErrorType,
    FieldError,
    int_or_percent_errors,
    invalid,
    percent_over_100,
    required,
    validate_label_selector,
)

GROUP = "policy.kruise.io"
VERSION = "v1alpha1"
KIND = "PodUnavailableBudget"


class PodUnavailableBudgetSpec(KruiseModel):
    selector: LabelSelector | None = None
    """Label query over the pods, in this namespace, the budget protects. Exactly one of selector and
    targetRef is required."""
    target_reference: TargetReference | None = Field(default=None, alias="targetRef")
    """The workload (CloneSet, Deployment, StatefulSet ...) whose pods the budget protects, instead of a
    selector."""
    max_unavailable: IntOrString | None = None
    """Most protected pods that may be unavailable (not ready, or being disrupted) at once: a number or a
    percentage of the total. Set exactly one of maxUnavailable and minAvailable."""
    min_available: IntOrString | None = None
    """Fewest protected pods that must stay available: a number or a percentage of the total. Set exactly
    one of maxUnavailable and minAvailable."""


class PodUnavailableBudgetStatus(KruiseModel):
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    disrupted_pods: dict[str, Time] | None = None
    """Pods whose disruption the webhook has allowed but the controller has not yet seen happen, with the
    time of the approval; entries expire after a while."""
    unavailable_pods: dict[str, Time] | None = None
    """Pods the webhook let become unavailable (e.g. by an in-place update) and that are not available
    again yet, with the time of the approval."""
    unavailable_allowed: Int32 | None = None
    """How many more protected pods may be disrupted now."""
    current_available: Int32 | None = None
    """Number of protected pods available now."""
    desired_available: Int32 | None = None
    """Fewest protected pods that should stay available, from minAvailable or maxUnavailable."""
    total_replicas: Int32 | None = None
    """Total number of pods the budget counts: the workload's replicas, or protectTotalReplicas."""


class PodUnavailableBudget(KruiseObject):
    spec: PodUnavailableBudgetSpec = Field(default_factory=PodUnavailableBudgetSpec)
    """Desired state of the PodUnavailableBudget."""
    status: PodUnavailableBudgetStatus | None = None
    """Observed state of the PodUnavailableBudget, written by kruise-manager and kruise-webhook."""


class PodUnavailableBudgetSpecV1beta1(PodUnavailableBudgetSpec):
    """v1beta1 holds what v1alpha1 keeps in annotations (`kruise.io/pub-protect-operations`,
    `pub.kruise.io/protect-total-replicas`) and adds `ignoredPodSelector`."""

    protect_operations: list[str] | None = None
    """The pod operations the budget holds back: any of DELETE, EVICT, UPDATE (in-place update) and
    RESIZE (in-place resize). Default DELETE, EVICT and UPDATE."""
    protect_total_replicas: Int32 | None = None
    """Total number of pods to compute the budget against, instead of the workload's replicas (for pods
    spread over several workloads, say)."""
    ignored_pod_selector: LabelSelector | None = None
    """Pods matching this label query are not protected and do not count toward the budget."""


class PodUnavailableBudgetV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    spec: PodUnavailableBudgetSpecV1beta1 = Field(default_factory=PodUnavailableBudgetSpecV1beta1)
    """Desired state of the PodUnavailableBudget."""
    status: PodUnavailableBudgetStatus | None = None
    """Observed state of the PodUnavailableBudget, written by kruise-manager and kruise-webhook."""


_COLUMNS = (
    PrinterColumn("Allowed", "integer", ".status.unavailableAllowed"),
    PrinterColumn("Current", "integer", ".status.currentAvailable"),
    PrinterColumn("Desired", "integer", ".status.desiredAvailable"),
    PrinterColumn("Total", "integer", ".status.totalReplicas"),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="podunavailablebudgets",
    description="PodUnavailableBudget (PUB) limits how many of the selected pods may be unavailable at "
    "once, refusing deletions, evictions and in-place updates that would exceed it.",
    short_names=("pub",),
    versions=(
        CRDVersion(VERSION, PodUnavailableBudget, storage=True, printer_columns=_COLUMNS),
        CRDVersion(
            "v1beta1",
            PodUnavailableBudgetV1beta1,
            storage=False,
            printer_columns=_COLUMNS,
        ),
    ),
    conversion_webhook=True,
)

# RESIZE: a pod UPDATE that only resizes containers in place
# (see kruise.control.pub.budget.can_resize_in_place)
PROTECTABLE_OPERATIONS = (
    PUB_OPERATION_UPDATE,
    PUB_OPERATION_DELETE,
    PUB_OPERATION_EVICT,
    PUB_OPERATION_RESIZE,
)


def set_defaults(obj: PodUnavailableBudget) -> None:
    """Upstream has no PUB defaulting; kept so every kind exposes the same entry points."""


def _group_version_problem(api_version: str) -> str | None:
    """schema.ParseGroupVersion: "", "v1" and "group/version" parse; more slashes do not."""
    if api_version.count("/") > 1:
        return f"unexpected GroupVersion string: {api_version}"
    return None


def _internal(path: str, detail: str) -> FieldError:
    return FieldError(ErrorType.Internal, path, detail=detail)


def validate_spec(obj: PodUnavailableBudget, path: str = "spec") -> list[FieldError]:
    spec = obj.spec
    errs: list[FieldError] = []
    if spec.selector is None and spec.target_reference is None:
        errs.append(
            required(
                f"{path}.selector, targetRef", "no selector or targetRef defined in PodUnavailableBudget"
            )
        )
    elif spec.selector is not None and spec.target_reference is not None:
        errs.append(required(f"{path}.selector, targetRef", "selector and targetRef are mutually exclusive"))
    elif spec.target_reference is not None:
        ref = spec.target_reference
        if not ref.api_version or not ref.name or not ref.kind:
            errs.append(
                invalid(
                    f"{path}.TargetReference",
                    ref.to_dict(),
                    "empty TargetReference is not valid for PodUnavailableBudget.",
                )
            )
        problem = _group_version_problem(ref.api_version or "")
        if problem:
            errs.append(invalid(f"{path}.TargetReference", ref.to_dict(), problem))
    elif spec.selector is not None:
        errs.extend(validate_label_selector(spec.selector, f"{path}.selector"))
        if spec.selector.is_empty():
            errs.append(
                invalid(
                    f"{path}.selector",
                    spec.selector.to_dict(),
                    "empty selector is not valid for PodUnavailableBudget.",
                )
            )
    if spec.max_unavailable is None and spec.min_available is None:
        errs.append(
            required(
                f"{path}.maxUnavailable, minAvailable",
                "no maxUnavailable or minAvailable defined in PodUnavailableBudget",
            )
        )
    elif spec.max_unavailable is not None and spec.min_available is not None:
        errs.append(
            required(
                f"{path}.maxUnavailable, minAvailable",
                "maxUnavailable and minAvailable are mutually exclusive",
            )
        )
    elif spec.max_unavailable is not None:
        errs.extend(int_or_percent_errors(spec.max_unavailable, f"{path}.maxUnavailable"))
        errs.extend(percent_over_100(spec.max_unavailable, f"{path}.maxUnavailable"))
    else:
        errs.extend(int_or_percent_errors(spec.min_available, f"{path}.minAvailable"))
        errs.extend(percent_over_100(spec.min_available, f"{path}.minAvailable"))
    return errs


def _annotation_errors(obj: PodUnavailableBudget) -> list[FieldError]:
    errs: list[FieldError] = []
    annotations = obj.metadata.annotations or {}
    if ANNOTATION_PUB_PROTECT_OPERATIONS in annotations:
        for operation in annotations[ANNOTATION_PUB_PROTECT_OPERATIONS].split(","):
            if operation not in PROTECTABLE_OPERATIONS:
                errs.append(
                    _internal("metadata", f"annotation[{ANNOTATION_PUB_PROTECT_OPERATIONS}] is invalid")
                )
    if ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS in annotations:
        value = annotations[ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS]
        try:
            number = int(value, 10)
            ok = value.strip() == value and "_" not in value and -(2**31) <= number < 2**31
        except ValueError:
            ok = False
        if not ok:
            errs.append(
                _internal("metadata", f"annotation[{ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS}] is invalid")
            )
    return errs


def _requirements_by_key(selector: LabelSelector) -> dict[str, LabelSelectorRequirement]:
    by_key = {req.key: req for req in selector.match_expressions or []}
    for key, value in (selector.match_labels or {}).items():
        by_key[key] = LabelSelectorRequirement(key=key, operator="In", values=[value])
    return by_key


def _expressions_overlap(a: LabelSelectorRequirement, b: LabelSelectorRequirement) -> bool:
    a_values, b_values = set(a.values or []), set(b.values or [])
    if a.operator == "In":
        return (
            b.operator == "Exists"
            or (b.operator == "In" and bool(a_values & b_values))
            or (b.operator == "NotIn" and not a_values <= b_values)
        )
    if a.operator == "Exists":
        return b.operator in ("In", "NotIn", "Exists")
    if a.operator == "NotIn":
        return b.operator in ("Exists", "DoesNotExist", "NotIn") or (
            b.operator == "In" and not b_values <= a_values
        )
    if a.operator == "DoesNotExist":
        return b.operator in ("DoesNotExist", "NotIn")
    return False


def selectors_loosely_overlap(first: LabelSelector, second: LabelSelector) -> bool:
    """util.IsSelectorLooseOverlap: same keys on both sides, each pair of requirements compatible."""
    a, b = _requirements_by_key(first), _requirements_by_key(second)
    if set(a) != set(b):
        return False
    return all(_expressions_overlap(a[k], b[k]) and _expressions_overlap(b[k], a[k]) for k in a)


def _api_group(api_version: str | None) -> str:
    return api_version.split("/")[0] if api_version and "/" in api_version else ""


def conflict_errors(obj: PodUnavailableBudget, others: Iterable[PodUnavailableBudget]) -> list[FieldError]:
    """Another PUB in the namespace already protects the same workload or (loosely) the same pods."""
    for other in others:
        if other.metadata.name == obj.metadata.name:
            continue
        suffix = f"is in conflict with other PodUnavailableBudget {other.metadata.name}"
        mine, theirs = obj.spec.target_reference, other.spec.target_reference
        if mine is not None and theirs is not None:
            mine_key = (_api_group(mine.api_version), mine.kind, mine.name)
            if mine_key == (_api_group(theirs.api_version), theirs.kind, theirs.name):
                return [invalid("spec.targetReference", mine.to_dict(), f"pub.spec.targetReference {suffix}")]
        elif (
            obj.spec.selector is not None
            and other.spec.selector is not None
            and selectors_loosely_overlap(obj.spec.selector, other.spec.selector)
        ):
            return [invalid("spec.selector", obj.spec.selector.to_dict(), f"pub.spec.selector {suffix}")]
    return []


def validate(
    obj: PodUnavailableBudget,
    old: PodUnavailableBudget | None = None,
    others: Iterable[PodUnavailableBudget] = (),
) -> list[FieldError]:
    """The validating webhook; `others` are the PUBs in the same namespace."""
    errs = _annotation_errors(obj) + validate_spec(obj)
    if old is not None:
        same_selector = (obj.spec.selector.to_dict() if obj.spec.selector else None) == (
            old.spec.selector.to_dict() if old.spec.selector else None
        )
        same_ref = (obj.spec.target_reference.to_dict() if obj.spec.target_reference else None) == (
            old.spec.target_reference.to_dict() if old.spec.target_reference else None
        )
        if not (same_selector and same_ref):
            errs.append(required("spec.selector, targetRef", "selector and targetRef cannot be modified"))
    errs.extend(conflict_errors(obj, others))
    return errs
