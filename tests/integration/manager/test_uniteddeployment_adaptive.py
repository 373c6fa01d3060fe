"""UnitedDeployment Adaptive scheduling on the emulator + simulator, on a fake manager clock.

Subset `subset-x` asks for zone-x, which no node has at first, so the simulated scheduler marks
its pods `PodScheduled=False` (Unschedulable). The test steps the UnitedDeployment controller's
clock to exactly `rescheduleCriticalSeconds` after the pods' creation and sees the subset marked
unschedulable at that second, its replicas moved to `subset-a`; then a node joins zone-x, the clock
steps to the end of `unschedulableDuration`, the subset recovers, and a scale-up puts replicas
back into it. Children are Deployments, run by the simulator (not by the fake clock).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kruise.kube.clock import FakeClock, parse_rfc3339, rfc3339
from kruise.kube.resources import DEPLOYMENTS, EVENTS, NODES, PODS, UNITED_DEPLOYMENTS
from kruise.manager.controllers.uniteddeployment import SETUP
from tests.integration.manager.test_uniteddeployment_kinds import (
    NS,
    POD_TEMPLATE,
    ZONE,
    children,
    edit_ud,
    manifest,
    replicas_of,
    zone_subset,
)

CRITICAL = 10
DURATION = 60
NO_FIT = (
    "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
    "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def manager_clock():
    return FakeClock(wall_start=datetime.now(UTC))


def adaptive(**extra: Any) -> dict[str, Any]:
    return {
        "type": "Adaptive",
        "adaptive": {"rescheduleCriticalSeconds": CRITICAL, "unschedulableDuration": DURATION, **extra},
    }


def schedulable(ud: dict[str, Any], subset: str) -> dict[str, Any] | None:
    for entry in (ud.get("status") or {}).get("subsetStatuses") or []:
        if entry.get("name") == subset:
            return next((c for c in entry.get("conditions") or [] if c["type"] == "Schedulable"), None)
    return None


async def step_to(cluster, clock: FakeClock, moment: datetime) -> None:
    """Move the manager clock to `moment`, then wait until the controller has done what it woke for.

    Waiting matters: a pass woken by the step that finished after a second step would park its
    requeue relative to the later time and miss its moment.
    """
    clock.step((moment - clock.wall()).total_seconds())
    queue = cluster.controllers[0].queue
    async with asyncio.timeout(10):
        quiet = 0
        while quiet < 5:
            await asyncio.sleep(0.02)
            quiet = quiet + 1 if len(queue) == 0 and not queue.processing() else 0


async def subset_pods(cluster, subset: str) -> list[dict[str, Any]]:
    selector = {"app": "demo", "apps.kruise.io/subset-name": subset}
    pods = (await cluster.client.list(PODS, NS, label_selector=selector))["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


async def test_unschedulable_subset_moves_replicas_and_recovers(kruise_cluster, manager_clock) -> None:
    cluster, clock = kruise_cluster, manager_clock
    subsets = [zone_subset("zone-x", maxReplicas=2), zone_subset("zone-a")]
    spec = {"template": POD_TEMPLATE, "strategy": {"type": "RollingUpdate"}}
    body = manifest("adp", 4, "deploymentTemplate", spec, subsets)
    body["spec"]["topology"]["scheduleStrategy"] = adaptive()
    await cluster.client.create(UNITED_DEPLOYMENTS, body, NS)

    found = await cluster.until(lambda: children(cluster, DEPLOYMENTS, "adp"), lambda c: len(c) == 2)
    assert replicas_of(found) == {"subset-x": 2, "subset-a": 2}

    # The simulated scheduler reports zone-x's pods as kube-scheduler does.
    pending = await cluster.until(
        lambda: subset_pods(cluster, "subset-x"),
        lambda pods: (
            len(pods) == 2
            and all(
                any(c["type"] == "PodScheduled" for c in (p.get("status") or {}).get("conditions") or [])
                for p in pods
            )
        ),
    )
    for pod in pending:
        scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        assert (scheduled["status"], scheduled["reason"], scheduled["message"]) == (
            "False",
            "Unschedulable",
            NO_FIT,
        )
    ud = await cluster.client.get(UNITED_DEPLOYMENTS, "adp", NS)
    assert schedulable(ud, "subset-x") is None

    # Exactly rescheduleCriticalSeconds after the first pod's creation the subset is marked (a pass
    # also counts a deadline less than a second away as passed: docs/uniteddeployment.md).
    first_created = min(parse_rfc3339(p["metadata"]["creationTimestamp"]) for p in pending)
    deadline = first_created + timedelta(seconds=CRITICAL)
    await step_to(cluster, clock, deadline - timedelta(seconds=2))
    ud = await cluster.client.get(UNITED_DEPLOYMENTS, "adp", NS)
    assert schedulable(ud, "subset-x") is None
    await step_to(cluster, clock, deadline)
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "adp", NS),
        lambda u: (schedulable(u, "subset-x") or {}).get("status") == "False",
    )
    marked = schedulable(ud, "subset-x")
    assert marked == {
        "type": "Schedulable",
        "status": "False",
        "lastTransitionTime": rfc3339(deadline),
        "reason": "reschedule",
        "message": "timeout pending pods found",
    }
    assert ud["status"]["subsetReplicas"] == {"subset-x": 0, "subset-a": 4}

    # The replicas moved: subset-x's pending pods are scaled away, subset-a runs four.
    found = await cluster.until(
        lambda: children(cluster, DEPLOYMENTS, "adp"),
        lambda c: replicas_of(c) == {"subset-x": 0, "subset-a": 4},
    )
    running = await cluster.until(
        lambda: subset_pods(cluster, "subset-a"),
        lambda pods: len(pods) == 4 and all(ready(p) for p in pods),
        timeout=60,
    )
    assert len(running) == 4
    await cluster.until(lambda: subset_pods(cluster, "subset-x"), lambda pods: pods == [])

    # A node joins zone-x; the mark holds until unschedulableDuration has passed.
    node = (await cluster.client.list(NODES))["items"][-1]
    node["metadata"]["labels"][ZONE] = "zone-x"
    await cluster.client.update(NODES, node)
    recover_at = parse_rfc3339(marked["lastTransitionTime"]) + timedelta(seconds=DURATION)
    await step_to(cluster, clock, recover_at - timedelta(seconds=1))
    ud = await cluster.client.get(UNITED_DEPLOYMENTS, "adp", NS)
    assert (schedulable(ud, "subset-x") or {}).get("status") == "False"
    await step_to(cluster, clock, recover_at)
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "adp", NS),
        lambda u: (schedulable(u, "subset-x") or {}).get("status") == "True",
    )
    assert schedulable(ud, "subset-x") == {
        "type": "Schedulable",
        "status": "True",
        "lastTransitionTime": rfc3339(recover_at),
        "reason": "recover",
        "message": f"unschedulable subset recovered after {DURATION:f} seconds",
    }
    # Running pods are never deleted to rebalance: subset-a keeps its four ready pods ...
    assert ud["status"]["subsetReplicas"] == {"subset-x": 0, "subset-a": 4}

    # ... and new replicas go to the recovered subset first, where they now run.
    await edit_ud(cluster, "adp", lambda u: u["spec"].__setitem__("replicas", 6))
    await cluster.until(
        lambda: children(cluster, DEPLOYMENTS, "adp"),
        lambda c: replicas_of(c) == {"subset-x": 2, "subset-a": 4},
    )
    back = await cluster.until(
        lambda: subset_pods(cluster, "subset-x"),
        lambda pods: len(pods) == 2 and all(ready(p) for p in pods),
        timeout=60,
    )
    assert {p["spec"]["nodeName"] for p in back} == {node["metadata"]["name"]}
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "adp", NS),
        lambda u: (u.get("status") or {}).get("readyReplicas") == 6,
        timeout=60,
    )
    assert (schedulable(ud, "subset-x") or {}).get("status") == "True"
    failed = [
        e
        for e in (await cluster.client.list(EVENTS, NS))["items"]
        if e.get("reason") == "FailedScheduling"
        and e["involvedObject"]["name"] in {p["metadata"]["name"] for p in pending}
    ]
    assert failed and {e["message"] for e in failed} == {NO_FIT}
