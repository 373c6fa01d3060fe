"""A CloneSet step gated by minReadySeconds happens the moment the pod qualifies, with no other event.

The controllers run on a FakeClock and no simulated kubelet touches the pods (no node matches their
nodeSelector; the test binds them to a node no kubelet serves): the test writes
each pod's status itself, so after that write the only thing that can wake the CloneSet is the requeue
the controller parked for itself. Seed 002's scale-up (maxUnavailable 1 + minReadySeconds) used to move
only when something else touched the object, up to minReadySeconds late.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.resources import CLONESETS, PODS
from kruise.manager.controllers.cloneset import SETUP
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of

NAME = "cs-minready"
KEY = f"{NS}/{NAME}"
MIN_READY = 30
READY_AGO = 20  # the pod turned Ready this long before the controller first looks at it
GHOST = "node-without-kubelet"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def manager_clock():
    return FakeClock(wall_start=datetime.now(UTC).replace(microsecond=0))


async def bind(cluster, pod: dict[str, Any]) -> None:
    """What a scheduler does (CloneSet moves a pod to lifecycle Normal once it is scheduled)."""
    name = pod["metadata"]["name"]
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"name": GHOST}}
    await cluster.client.request("POST", PODS.path(NS, name, "binding"), body=binding)


async def mark_ready(cluster, pod: dict[str, Any], since: datetime) -> None:
    """What a kubelet reports for a running pod whose containers turned Ready at `since`."""
    at = rfc3339(since)
    conditions = [
        {"type": kind, "status": "True", "lastTransitionTime": at}
        for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready", "InPlaceUpdateReady")
    ]
    await cluster.client.patch(
        PODS,
        pod["metadata"]["name"],
        {"status": {"phase": "Running", "conditions": conditions}},
        NS,
        subresource="status",
    )


def parked(cluster) -> float | None:
    """Seconds until the CloneSet's own requeue, once the controller is idle with only that left."""
    queue = cluster.controllers[0].queue
    if len(queue) or queue.processing():
        return None
    ready_at = queue.ready_at(KEY)
    return None if ready_at is None else ready_at - cluster.context.clock.now()


async def test_scale_up_step_fires_on_its_own_requeue_after_the_remaining_min_ready_time(kruise_cluster):
    clock: FakeClock = kruise_cluster.context.clock
    body = manifest(NAME, replicas=2, minReadySeconds=MIN_READY, scaleStrategy={"maxUnavailable": 1})
    body["spec"]["template"]["spec"]["nodeSelector"] = {"example.io/no-such-node": "true"}
    await kruise_cluster.client.create(CLONESETS, body)
    first = await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), lambda ps: len(ps) == 1)
    await bind(kruise_cluster, first[0])
    await kruise_cluster.until(
        lambda: pods_of(kruise_cluster, NAME),
        lambda ps: ps[0]["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Normal",
    )
    await mark_ready(kruise_cluster, first[0], clock.wall() - timedelta(seconds=READY_AGO))
    await kruise_cluster.until(
        lambda: kruise_cluster.client.get(CLONESETS, NAME, NS),
        lambda cs: (cs.get("status") or {}).get("readyReplicas") == 1,
    )

    async def idle() -> float | None:
        return parked(kruise_cluster)

    # Parked for exactly the time left (30 - 20 s), not a fresh whole minReadySeconds.
    wait = await kruise_cluster.until(idle, lambda w: w is not None and w < MIN_READY)
    assert wait == pytest.approx(MIN_READY - READY_AGO, abs=0.01)
    assert len(await pods_of(kruise_cluster, NAME)) == 1

    # Just short of it nothing moves: the key is still parked, the second pod not created.
    clock.step(wait - 0.5)
    assert await idle() == pytest.approx(0.5, abs=0.01)
    assert len(await pods_of(kruise_cluster, NAME)) == 1
    # Time reaches it: the parked key alone makes the next scale-up step.
    clock.step(0.5)
    await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), lambda ps: len(ps) == 2)
