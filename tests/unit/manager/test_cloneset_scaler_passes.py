"""A long CloneSet scale-up is cut into passes: no slow-start batch starts after the pass budget.

Time is a FakeClock that each create moves on by one second, so what is asserted is the batch
arithmetic, not a wall-clock limit: with a 3 s budget the batches of 1 and 2 start (at t=0 and
t=1), the batch of 4 would start at t=3 and does not; the pods left out are no longer expected.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kruise.control.cloneset.scale import ScalePlan
from kruise.control.common.revision import new_cloneset_revision
from kruise.kube.clock import FakeClock
from kruise.kube.expectations import ScaleExpectations
from kruise.manager.controllers.cloneset.scaler import Scaler

NOW = datetime(2026, 1, 1, tzinfo=UTC)
KEY = "default/cs"


def cloneset() -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default", "uid": "cs-uid", "generation": 1},
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {
                "metadata": {"labels": {"app": "cs"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }


class SlowClient:
    """Each create takes one (fake) second."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.created: list[str] = []

    async def create(self, _resource: Any, obj: dict[str, Any]) -> dict[str, Any]:
        self.clock.step(1.0)
        self.created.append(obj["metadata"]["name"])
        return obj


class Events:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def event(self, _obj: Any, _type: str, reason: str, _message: str) -> None:
        self.reasons.append(reason)


def scaler(clock: FakeClock, budget: float) -> tuple[Scaler, SlowClient, ScaleExpectations, Events]:
    client, events, expectations = SlowClient(clock), Events(), ScaleExpectations(clock)
    s = Scaler(client, events, expectations, None, clock=clock, create_pass_seconds=budget)  # type: ignore[arg-type]
    return s, client, expectations, events


def plan(n: int) -> ScalePlan:
    return ScalePlan(create_update=n, instance_ids=[f"id{i:02d}" for i in range(n)])


async def test_no_batch_starts_after_the_pass_budget():
    clock = FakeClock()
    s, client, expectations, events = scaler(clock, budget=3.0)
    cs = cloneset()
    revision = new_cloneset_revision(cs, 1, None)
    assert await s.execute(cs, plan(10), revision, revision, [], NOW) is True
    assert client.created == ["cs-id00", "cs-id01", "cs-id02"]
    assert events.reasons == ["SuccessfulCreate"] * 3
    _, _, pending = expectations.satisfied(KEY)
    assert sorted(pending.get("create", [])) == ["cs-id00", "cs-id01", "cs-id02"]


async def test_a_pass_within_the_budget_creates_everything():
    clock = FakeClock()
    s, client, expectations, _ = scaler(clock, budget=3600.0)
    cs = cloneset()
    revision = new_cloneset_revision(cs, 1, None)
    await s.execute(cs, plan(10), revision, revision, [], NOW)
    assert len(client.created) == 10
    _, _, pending = expectations.satisfied(KEY)
    assert len(pending.get("create", [])) == 10
