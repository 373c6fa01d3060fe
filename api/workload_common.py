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
    finalizers_handler: list[str] | None = None
    mark_pod_not_ready: bool | None = None


class Lifecycle(KruiseModel):
    pre_delete: LifecycleHook | None = None
    in_place_update: LifecycleHook | None = None
    pre_normal: LifecycleHook | None = None


class InPlaceUpdateStrategy(KruiseModel):
    grace_period_seconds: Int32 | None = None


class UpdatePriorityOrderTerm(KruiseModel):
    ordered_key: str


class UpdatePriorityWeightTerm(KruiseModel):
    weight: Int32
    match_selector: LabelSelector


class UpdatePriorityStrategy(KruiseModel):
    order_priority: list[UpdatePriorityOrderTerm] | None = None
    weight_priority: list[UpdatePriorityWeightTerm] | None = None


class UpdateScatterTerm(KruiseModel):
    key: str
    value: str


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
