"""SidecarSet container `resourcesPolicy` (upstream 1.9 / master): the API types and the validating
webhook's rules for them.

The policy tells the pod webhook to compute a sidecar's resources from the app containers at pod
creation (see `kruise.control.sidecarset.resources`). Validation follows upstream's
`validateResourcesPolicy`: no static `resources` beside a policy, a non-empty name regex Go's
`regexp.Compile` accepts (`kruise.api.goregexp`),
at least one of limits/requests, and every expression evaluable with its variable set to 1; a
policy on an initContainer needs `restartPolicy: Always` (a native sidecar). Paths are upstream's
(`spec[<i>].resourcesPolicy...`, where `<i>` indexes initContainers or containers).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kruise.api import goregexp
from kruise.api.common import KruiseModel
from kruise.api.crdgen import CRD_REQUIRED
from kruise.api.resourceexpr import ExpressionError, Value, evaluate
from kruise.api.validation import FieldError, invalid, not_supported, required

TARGET_MODE_SUM = "sum"
TARGET_MODE_MAX = "max"
DEFAULT_NAME_REGEX = ".*"


class ResourceExprLimits(KruiseModel):
    cpu: str | None = None
    """Expression for the sidecar's CPU limit, over the variable cpu (the sum or maximum of the target
    containers' CPU limits) with + - * /, max() and min(). Unlimited when a target container has no
    limit; an unlimited result sets no limit."""
    memory: str | None = None
    """Expression for the sidecar's memory limit, over the variable memory (the sum or maximum of the
    target containers' memory limits) with + - * /, max() and min(). Unlimited when a target container
    has no limit; an unlimited result sets no limit."""


class ResourceExprRequests(KruiseModel):
    cpu: str | None = None
    """Expression for the sidecar's CPU request, over the variable cpu (the sum or maximum of the target
    containers' CPU requests, a missing one counting 0) with + - * /, max() and min()."""
    memory: str | None = None
    """Expression for the sidecar's memory request, over the variable memory (the sum or maximum of the
    target containers' memory requests, a missing one counting 0) with + - * /, max() and min()."""


class ResourcesExpr(KruiseModel):
    limits: ResourceExprLimits | None = None
    """Expressions for the sidecar's resource limits."""
    requests: ResourceExprRequests | None = None
    """Expressions for the sidecar's resource requests."""


class ResourcesPolicy(KruiseModel):
    target_containers_mode: str | None = Field(
        default=None,
        json_schema_extra={**CRD_REQUIRED, "crd_enum": [TARGET_MODE_SUM, TARGET_MODE_MAX]},
    )
    """How the target containers' resources are combined into the expressions' variables: sum or max."""
    target_containers_name_regex: str | None = Field(
        default=None, json_schema_extra={"crd_default": DEFAULT_NAME_REGEX}
    )
    """Regular expression selecting the target containers by name, among the pod's own containers and
    native sidecars (not Kruise-injected ones). A pod in which none matches is rejected. Default .*"""
    resources_expr: ResourcesExpr | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    """Expressions computing the sidecar's resources from the target containers'."""


def _expression_error(expression: str, variable: str) -> str | None:
    """upstream validateResourceExpression: evaluate with the variable bound to the number 1."""
    try:
        evaluate(expression, {variable: Value(number=1.0)})
    except ExpressionError as exc:
        return f"invalid expression: {exc}"
    return None


def _exprs_errors(exprs: ResourceExprLimits | ResourceExprRequests, path: str) -> list[FieldError]:
    errs = []
    for variable in ("cpu", "memory"):
        expression = getattr(exprs, variable)
        if expression and (message := _expression_error(expression, variable)) is not None:
            errs.append(invalid(f"{path}.{variable}", expression, message))
    return errs


def resources_policy_errors(
    policy: ResourcesPolicy, resources: dict[str, Any] | None, path: str
) -> list[FieldError]:
    """`validateResourcesPolicy` for one container; `resources` is the container's static one."""
    if (resources or {}).get("limits") or (resources or {}).get("requests"):
        detail = "resourcesPolicy and resources cannot be configured together"
        return [invalid(path, policy.to_dict(), detail)]
    errs: list[FieldError] = []
    if policy.target_containers_mode not in (TARGET_MODE_SUM, TARGET_MODE_MAX):
        errs.append(
            not_supported(
                f"{path}.targetContainersMode",
                policy.target_containers_mode or "",
                [TARGET_MODE_SUM, TARGET_MODE_MAX],
            )
        )
    regex = policy.target_containers_name_regex
    if not regex:
        errs.append(required(f"{path}.targetContainersNameRegex", "invalid empty regex"))
    else:
        try:
            goregexp.compile(regex)
        except goregexp.GoRegexpError as exc:
            errs.append(invalid(f"{path}.targetContainersNameRegex", regex, f"invalid regex pattern: {exc}"))
    expr = policy.resources_expr or ResourcesExpr()
    expr_path = f"{path}.resourcesExpr"
    if expr.limits is None and expr.requests is None:
        detail = "at least one of limits or requests must be configured"
        errs.append(invalid(expr_path, expr.to_dict(), detail))
        return errs
    if expr.limits is not None:
        errs.extend(_exprs_errors(expr.limits, f"{expr_path}.limits"))
    if expr.requests is not None:
        errs.extend(_exprs_errors(expr.requests, f"{expr_path}.requests"))
    return errs


def init_container_policy_errors(
    policy: ResourcesPolicy, container: dict[str, Any], path: str
) -> list[FieldError]:
    """An initContainer's policy: only native sidecars (`restartPolicy: Always`) may carry one."""
    errs = []
    if container.get("restartPolicy") != "Always":
        detail = "resourcesPolicy is only supported for containers with RestartPolicy Always"
        errs.append(invalid(path, policy.to_dict(), detail))
    return errs + resources_policy_errors(policy, container.get("resources"), path)
