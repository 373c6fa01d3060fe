"""Strategy pieces several workloads share (upstream `apis/apps/pub`): lifecycle hooks,
in-place update grace, update priority and scatter, plus their upstream field checks."""

from __future__ import annotations

from kruise.api.common import Int32, KruiseModel, LabelSelector
from kruise.api.validation import FieldError, required

UPDATE_TYPE_RECREATE = "ReCreate"
UPDATE_TYPE_IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
UPDATE_TYPE_IN_PLACE_ONLY = "InPlaceOnly"
POD_UPDATE_TYPES = (UPDATE_TYPE_RECREATE, UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY)


class LifecycleHook(KruiseModel):
    labels_handler: dict[str, str] | None = None
    """Labels (key: value) that tie a pod to this hook. Before a pod is deleted or updated in place, the
    workload holds it in PreparingDelete or PreparingUpdate while it still carries any of them; after a
    pod is created or updated in place, it becomes Normal only once it carries all of them."""
    finalizers_handler: list[str] | None = None
    """Finalizers that tie a pod to this hook, the same way as labelsHandler."""
    mark_pod_not_ready: bool | None = None
    """Set the pod's KruisePodReady condition to False while it is held in PreparingDelete or
    PreparingUpdate (and back to True once an in-place update is done), so traffic stops first. Only the
    preDelete and inPlaceUpdate hooks use it. Default false."""


class Lifecycle(KruiseModel):
    pre_delete: LifecycleHook | None = None
    """Hook before a pod is deleted: the pod waits in PreparingDelete while it carries any of the hook's
    labels or finalizers."""
    in_place_update: LifecycleHook | None = None
    """Hook around an in-place update: the pod waits in PreparingUpdate before the update while it carries
    any of the hook's labels or finalizers, and in Updated afterwards until it carries all of them."""
    pre_normal: LifecycleHook | None = None
    """Hook after a pod is created: the pod stays PreparingNormal until it carries all of the hook's
    labels and finalizers, then becomes Normal."""


class InPlaceUpdateStrategy(KruiseModel):
    grace_period_seconds: Int32 | None = None
    """Seconds to wait between marking a pod not ready and changing its images during an in-place
    update, so load balancers can drain it first."""


class UpdatePriorityOrderTerm(KruiseModel):
    ordered_key: str
    """Pod label whose value orders the update: the last integer in the value counts (5 in "5", 10 in
    "sts-10"), higher first. Pods without the label come after those that have it."""


class UpdatePriorityWeightTerm(KruiseModel):
    weight: Int32
    """Weight added to the priority of every pod the selector matches, 1 to 100."""
    match_selector: LabelSelector
    """Pods (by their labels) this term's weight applies to."""


class UpdatePriorityStrategy(KruiseModel):
    order_priority: list[UpdatePriorityOrderTerm] | None = None
    """Update pods in the order of label values: the first term's key sorts the pods that have it, the
    next term's key sorts the rest, and so on. Cannot be used with weightPriority."""
    weight_priority: list[UpdatePriorityWeightTerm] | None = None
    """Update pods with the highest sum of matching terms' weights first. Cannot be used with
    orderPriority."""


class UpdateScatterTerm(KruiseModel):
    key: str
    """Pod label key of the scatter rule."""
    value: str
    """Pod label value: pods with key=value are spread over the whole update instead of being updated in
    one batch."""


def priority_strategy_problem(strategy: UpdatePriorityStrategy | None) -> str | None:
    """UpdatePriorityStrategy.FieldsValidation: the first problem, in upstream's words."""
    if strategy is None:
        return None
    if strategy.weight_priority and strategy.order_priority:
        return "only one of weightPriority and orderPriority can be used"
    for term in strategy.weight_priority or []:
        if term.weight < 0 or term.weight > 100:
            return "weight must be valid number in the range 1-100"
        if term.match_selector.is_empty():
            return "selector can not be empty"
        for req in term.match_selector.match_expressions or []:
            if req.operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
                return f'invalid selector "{req.operator}" is not a valid label selector operator'
    for term in strategy.order_priority or []:
        if not term.ordered_key:
            return "order key can not be empty"
    return None


def scatter_strategy_problem(terms: list[UpdateScatterTerm] | None) -> str | None:
    """UpdateScatterStrategy.FieldsValidation."""
    seen: set[tuple[str, str]] = set()
    for term in terms or []:
        if not term.key:
            return "key should not be empty"
        if (term.key, term.value) in seen:
            return f"duplicated key={term.key} value={term.value}"
        seen.add((term.key, term.value))
    return None


def validate_priority_and_scatter(
    priority: UpdatePriorityStrategy | None, scatter: list[UpdateScatterTerm] | None, path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    problem = priority_strategy_problem(priority)
    if problem:
        errs.append(required(f"{path}.priorityStrategy", problem))
    problem = scatter_strategy_problem(scatter)
    if problem:
        errs.append(required(f"{path}.scatterStrategy", problem))
    return errs
