"""A long scale-up of an Advanced StatefulSet, Advanced DaemonSet or BroadcastJob is cut into passes
(issue 18): no create starts once a pass has been creating for its budget, so each pass ends with its
one status write showing the pods created so far.

Time is the fake clock, moved on one second by every pod create, so what is asserted is the cut, not
a wall-clock limit: with a 2.5 s budget the creates at t=0, 1 and 2 start and the one at t=3 does not;
the pods left out are not expected and the next pass creates them.
"""

from __future__ import annotations

from typing import Any

from kruise.kube.clock import FakeClock
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.resources import ADVANCED_DAEMONSETS, ADVANCED_STATEFULSETS, PODS
from tests.unit.manager import test_broadcastjob_reconciler as bcj_kit
from tests.unit.manager import test_daemonset_reconciler as ds_kit
from tests.unit.manager import test_statefulset_reconciler as sts_kit

BUDGET = 2.5


def slow_creates(client: Any, clock: FakeClock) -> None:
    """Every pod create takes one fake second."""
    create = client.create

    async def slow(resource: Any, *args: Any, **kwargs: Any) -> Any:
        if resource is PODS:
            clock.step(1.0)
        return await create(resource, *args, **kwargs)

    client.create = slow


def status_writes(client: Any, resource: Any) -> list[Any]:
    return [c for c in client.writes if c.resource == resource and c.subresource == "status"]


async def test_statefulset_parallel_scale_up_spreads_over_passes():
    h = sts_kit.Harness(sts_kit.statefulset(replicas=5, podManagementPolicy="Parallel"))
    h.reconciler.clock = h.clock
    h.reconciler.create_pass_seconds = BUDGET
    slow_creates(h.client, h.clock)

    await h.reconcile()
    assert sorted(p["metadata"]["name"] for p in h.client.objects(PODS)) == ["web-0", "web-1", "web-2"]
    assert len(status_writes(h.client, ADVANCED_STATEFULSETS)) <= 1

    h.observe_pods()
    await h.reconcile()
    assert len(h.client.objects(PODS)) == 5


async def test_daemonset_scale_up_spreads_over_passes():
    h = ds_kit.Harness(ds_kit.daemonset(), nodes=5)
    h.reconciler.clock = h.clock
    h.reconciler.create_pass_seconds = BUDGET
    slow_creates(h.client, h.clock)

    await h.reconcile()
    assert len(h.client.objects(PODS)) == 3
    _, _, pending = h.scale.satisfied(f"{ds_kit.NS}/{ds_kit.NAME}")
    assert len(pending.get(ScaleExpectations.CREATE, [])) == 3
    writes = status_writes(h.client, ADVANCED_DAEMONSETS)
    assert len(writes) == 1

    h.observe_pods()
    await h.reconcile()
    assert len(h.client.objects(PODS)) == 5


async def test_broadcastjob_no_batch_starts_after_the_budget():
    client = bcj_kit._Client()
    reconciler, expectations = bcj_kit._reconciler(client, 10)
    clock = FakeClock()
    reconciler.clock = clock
    reconciler.create_pass_seconds = BUDGET
    slow_creates(client, clock)

    await reconciler.reconcile(bcj_kit.KEY)
    # batches of 1 (t=0) and 2 (t=1, both started together) start; the batch of 4 at t=3 does not
    assert client.created == ["n0", "n1", "n2"]
    assert client.statuses[-1]["active"] == 3
    _, _, pending = expectations.satisfied(bcj_kit.KEY)
    assert sorted(pending[ScaleExpectations.CREATE]) == ["n0", "n1", "n2"]
