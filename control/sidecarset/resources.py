"""SidecarSet `resourcesPolicy`: a sidecar's resources computed from the pod's app containers at CREATE
(upstream `applyResourcesPolicy` in the pod mutating webhook).

Target containers are the pod's containers plus its native sidecars (initContainers with
`restartPolicy: Always`) whose names match `targetContainersNameRegex`, leaving out every container
a matched SidecarSet injects. Their cpu and memory are aggregated (`sum` or `max`): a limit only
when every target has one (otherwise the aggregate is unlimited and the sidecar gets no such
limit), a request with a missing entry counted as 0. Each configured expression is evaluated with
`cpu` or `memory` bound to the aggregate (`memory` when the word appears in the expression, as
upstream decides), and the results replace the sidecar's `resources`. The name regex is Go's (RE2
syntax, matched anywhere in the name), through `kruise.api.goregexp`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from kruise.api import goregexp
from kruise.api.goquantity import ZERO, Quantity, QuantityError
from kruise.api.objects import section
from kruise.api.resourceexpr import ExpressionError, Value, evaluate
from kruise.api.sidecarset_resources import TARGET_MODE_MAX, TARGET_MODE_SUM

CPU = "cpu"
MEMORY = "memory"
_MEMORY_WORD = re.compile(r"\bmemory\b")


class ResourcesPolicyError(ValueError):
    """The policy cannot be applied to this pod; the pod webhook refuses the pod with it (500)."""


def _go_quote(text: str) -> str:
    """Go's `%q` for the printable strings these messages quote."""
    return json.dumps(text, ensure_ascii=False)


def _kruise_sidecar_names(sidecarsets: Iterable[dict[str, Any]]) -> set[str]:
    names: set[str] = set()
    for sidecarset in sidecarsets:
        spec = sidecarset.get("spec") or {}
        for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            names.add(container.get("name", ""))
    return names


def target_containers(
    pod: dict[str, Any], name_regex: str, sidecarsets: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Native sidecars first, then plain containers, as upstream lists them."""
    try:
        pattern = goregexp.compile(name_regex)
    except goregexp.GoRegexpError as exc:
        raise ResourcesPolicyError(
            f"failed to get target containers: invalid regex pattern {_go_quote(name_regex)}: {exc}"
        ) from exc
    skip = _kruise_sidecar_names(sidecarsets)
    spec = pod.get("spec") or {}
    natives = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return [
        c
        for c in natives + list(spec.get("containers") or [])
        if c.get("name") not in skip and pattern.match_string(c.get("name") or "")
    ]


def _quantity(container: dict[str, Any], kind: str, resource: str) -> Quantity | None:
    raw = section(container, "resources", kind).get(resource)
    if raw is None:
        return None
    try:
        return Quantity.parse(str(raw))
    except QuantityError as exc:
        raise ResourcesPolicyError(
            f"container {container.get('name')} resources.{kind}.{resource} {raw!r}: {exc}"
        ) from exc


def aggregate(containers: list[dict[str, Any]], mode: str) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """(limits, requests) of the targets; a limit is absent (unlimited) unless every target sets it,
    a zero request sum is absent too. An unknown mode aggregates nothing, as upstream."""
    limits: dict[str, Quantity] = {}
    requests: dict[str, Quantity] = {}
    if mode not in (TARGET_MODE_SUM, TARGET_MODE_MAX):
        return limits, requests
    for resource in (CPU, MEMORY):
        limit_values = [_quantity(c, "limits", resource) for c in containers]
        request_values = [q for c in containers if (q := _quantity(c, "requests", resource)) is not None]
        if mode == TARGET_MODE_SUM:
            if all(q is not None for q in limit_values):
                limits[resource] = _sum(q for q in limit_values if q is not None)
            total = _sum(request_values)
            if not total.is_zero():
                requests[resource] = total
        else:
            if limit_values and all(q is not None for q in limit_values):
                limits[resource] = _max(q for q in limit_values if q is not None)
            if request_values:
                requests[resource] = _max(request_values)
    return limits, requests


def _sum(values: Iterable[Quantity]) -> Quantity:
    total = Quantity.from_int(0)
    for value in values:
        total = total.add(value)
    return total


def _max(values: Iterable[Quantity]) -> Quantity:
    best: Quantity | None = None
    for value in values:
        if best is None or value.cmp(best) > 0:
            best = value
    assert best is not None
    return best


def evaluate_expression(expression: str, aggregated: Quantity) -> Quantity:
    """One expression with its variable bound; a number result becomes millicores for `cpu`,
    whole units for `memory` (truncated, DecimalSI), as upstream converts it."""
    variable = MEMORY if _MEMORY_WORD.search(expression) else CPU
    try:
        result = evaluate(expression, {variable: Value(quantity=aggregated)})
    except ExpressionError as exc:
        raise ResourcesPolicyError(f"failed to parse expression {_go_quote(expression)}: {exc}") from exc
    if result.quantity is not None:
        return result.quantity
    if variable == CPU:
        return Quantity.from_milli(int(result.number * 1000))
    return Quantity.from_int(int(result.number))


def compute_resources(
    policy: dict[str, Any], pod: dict[str, Any], sidecarsets: Iterable[dict[str, Any]]
) -> dict[str, Any]:
    """The `resources` the sidecar gets (possibly `{}`); raises ResourcesPolicyError."""
    regex = policy.get("targetContainersNameRegex") or ""
    targets = target_containers(pod, regex, sidecarsets)
    if not targets:
        raise ResourcesPolicyError(f"no containers match the regex pattern {_go_quote(regex)}")
    limits, requests = aggregate(targets, policy.get("targetContainersMode") or "")
    expressions = policy.get("resourcesExpr") or {}
    resources: dict[str, Any] = {}
    for kind, aggregated in (("limits", limits), ("requests", requests)):
        exprs = expressions.get(kind)
        if exprs is None:
            continue
        computed: dict[str, str] = {}
        for resource in (CPU, MEMORY):
            if not exprs.get(resource):
                continue
            if kind == "limits" and resource not in aggregated:
                continue  # an unlimited aggregate leaves the sidecar unlimited
            value = aggregated.get(resource, ZERO)
            try:
                computed[resource] = str(evaluate_expression(exprs[resource], value))
            except ResourcesPolicyError as exc:
                label = "CPU" if resource == CPU else "memory"
                raise ResourcesPolicyError(f"failed to evaluate {label} {kind} expression: {exc}") from exc
        if computed:
            resources[kind] = computed
    return resources


def apply_resources_policy(
    sidecar: dict[str, Any], pod: dict[str, Any], sidecarsets: Iterable[dict[str, Any]]
) -> None:
    """Replace `sidecar['resources']` when it has a `resourcesPolicy`; the sidecar dict is the
    injection's own copy, never the cached SidecarSet's."""
    policy = sidecar.get("resourcesPolicy")
    if policy is None:
        return
    sidecar["resources"] = compute_resources(policy, pod, sidecarsets)
