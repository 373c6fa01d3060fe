"""kruise-webhook refuses a WorkloadSpread whose workload (group, kind, name) another WorkloadSpread
of the namespace already targets, with upstream's "ws.spec.targetRef is in conflict with other
WorkloadSpread <name>"; the version of the targetRef does not matter."""

from __future__ import annotations

from typing import Any

from kruise.webhook import registry
from tests.kit.webhook import context
from tests.unit.webhook.test_workloadspread_pods import setup, workloadspread
from tests.unit.webhook.test_workloadspread_whitelist import PATH, review


def named(name: str, **kwargs: Any) -> dict[str, Any]:
    ws = workloadspread(("a", 1), ("b", None), **kwargs)
    ws["metadata"]["name"] = name
    return ws


def validate(existing: dict[str, Any]):
    _, _, keeper = setup(existing)
    return registry.routes(context(spreads=keeper))[PATH]


async def test_second_workloadspread_on_the_same_workload_is_refused() -> None:
    validate_ = validate(named("first"))
    for api in ("apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"):
        decision = await validate_(review(named("second", api=api)))
        assert not decision.allowed
        assert decision.code == 422
        assert "spec.targetRef: Invalid value" in decision.message
        assert "ws.spec.targetRef is in conflict with other WorkloadSpread first" in decision.message


async def test_other_workloads_and_the_workloadspread_itself_are_no_conflict() -> None:
    validate_ = validate(named("first"))
    assert (await validate_(review(named("first"), "UPDATE", named("first")))).allowed
    assert (await validate_(review(named("second", kind="Deployment", api="apps/v1")))).allowed
    other = named("second")
    other["spec"]["targetRef"]["name"] = "another"
    assert (await validate_(review(other))).allowed
    elsewhere = named("first")
    elsewhere["metadata"]["namespace"] = "other"
    assert (await validate(elsewhere)(review(named("second")))).allowed


async def test_without_the_workloadspread_cache_the_check_is_skipped() -> None:
    routes = registry.routes(context())
    assert (await routes[PATH](review(named("second")))).allowed
