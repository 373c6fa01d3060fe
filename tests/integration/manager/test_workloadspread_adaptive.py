"""WorkloadSpread `scheduleStrategy: Adaptive` end to end on the emulator + simulator, with the live
kruise-webhook placing pods and the manager's controllers on a fake clock.

Subset `subset-x` asks for zone-x, which no node has at first, so the simulated scheduler marks its
pods `PodScheduled=False` (Unschedulable) with kube-scheduler's message. The test steps the
controllers' clock past `rescheduleCriticalSeconds` after the pods' creation: the WorkloadSpread
controller marks the subset `Schedulable=False` and deletes the pending pods; the CloneSet re-creates
them and the webhook, skipping the unschedulable subset, places them in `subset-a`, where they run.
A node then joins zone-x; 5 minutes after the mark the subset is `Schedulable=True` again
(`RecoverSchedulable`), and a scale-up puts new pods back into it, on that node.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kruise.control.workloadspread.reschedule import MAX_SCHEDULE_FAILED_DURATION
from kruise.kube.clock import FakeClock, parse_rfc3339, rfc3339
from kruise.kube.resources import CLONESETS, EVENTS, NODES, WORKLOADSPREADS
from kruise.manager.controllers import cloneset, workloadspread
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of, ready
from tests.integration.manager.test_workloadspread_controller import ZONE, subset

pytestmark = pytest.mark.asyncio

CRITICAL = 10
HALF = timedelta(seconds=0.5)  # steps land between whole seconds: times are kept to the second
NO_FIT = (
    "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
    "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP, workloadspread.SETUP]


@pytest.fixture
def manager_clock():
    return FakeClock(wall_start=datetime.now(UTC))


def zone(name: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [name]}]}


def adaptive_spread() -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws-adaptive", "namespace": NS},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": [
                {"name": "subset-x", "requiredNodeSelectorTerm": zone("zone-x"), "maxReplicas": 2},
                {"name": "subset-a", "requiredNodeSelectorTerm": zone("zone-a")},
            ],
            "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": CRITICAL}},
        },
    }


def schedulable(ws: dict[str, Any], name: str) -> dict[str, Any] | None:
    for entry in (ws.get("status") or {}).get("subsetStatuses") or []:
        if entry.get("name") == name:
            return next((c for c in entry.get("conditions") or [] if c["type"] == "Schedulable"), None)
    return None


async def step_to(cluster, clock: FakeClock, moment: datetime) -> None:
    """Move the controllers' clock to `moment`, then wait until every controller has done what it woke
    for (a pass still running when the clock moves again would park its requeue too late)."""
    clock.step((moment - clock.wall()).total_seconds())
    queues = [c.queue for c in cluster.controllers]
    async with asyncio.timeout(10):
        quiet = 0
        while quiet < 5:
            await asyncio.sleep(0.02)
            idle = all(len(q) == 0 and not q.processing() for q in queues)
            quiet = quiet + 1 if idle else 0


def pod_scheduled(pod: dict[str, Any]) -> dict[str, Any] | None:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "PodScheduled"), None)


async def test_unschedulable_subset_is_skipped_then_recovers(kruise_cluster, manager_clock, webhook):
    cluster, clock, client = kruise_cluster, manager_clock, kruise_cluster.client
    await client.create(WORKLOADSPREADS, adaptive_spread(), NS)
    await client.create(CLONESETS, manifest("web", replicas=4), NS)

    def placed(pods: list[dict[str, Any]]) -> bool:
        in_x = [p for p in pods if subset(p) == "subset-x"]
        return (
            len(pods) == 4
            and len(in_x) == 2
            and all((pod_scheduled(p) or {}).get("reason") == "Unschedulable" for p in in_x)
        )

    pods = await cluster.until(lambda: pods_of(cluster, "web"), placed, timeout=60)
    pending = [p for p in pods if subset(p) == "subset-x"]
    for pod in pending:
        scheduled = pod_scheduled(pod) or {}
        assert (scheduled["status"], scheduled["message"]) == ("False", NO_FIT)
        assert not pod["spec"].get("nodeName")
    pending_names = {p["metadata"]["name"] for p in pending}

    # Up to rescheduleCriticalSeconds after the first pod's creation nothing moves.
    created = sorted(parse_rfc3339(p["metadata"]["creationTimestamp"]) for p in pending)
    deadline = created[0] + timedelta(seconds=CRITICAL)
    await step_to(cluster, clock, deadline - HALF)
    ws = await client.get(WORKLOADSPREADS, "ws-adaptive", NS)
    assert (schedulable(ws, "subset-x") or {}).get("status") == "True"
    assert pending_names <= {p["metadata"]["name"] for p in await pods_of(cluster, "web")}

    # Just past it the subset is marked; each pending pod is deleted once its own time is up.
    marked_at = deadline + HALF
    await step_to(cluster, clock, marked_at)
    ws = await cluster.until(
        lambda: client.get(WORKLOADSPREADS, "ws-adaptive", NS),
        lambda w: (schedulable(w, "subset-x") or {}).get("status") == "False",
    )
    assert schedulable(ws, "subset-x") == {
        "type": "Schedulable",
        "status": "False",
        "reason": "PodUnschedulable",
        "lastTransitionTime": rfc3339(marked_at),
    }
    await step_to(cluster, clock, created[-1] + timedelta(seconds=CRITICAL) + HALF)
    assert (schedulable(ws, "subset-a") or {}).get("status") == "True"

    # The CloneSet re-creates them; the webhook skips subset-x and they run in zone-a.
    def moved(pods: list[dict[str, Any]]) -> bool:
        names = {p["metadata"]["name"] for p in pods}
        return (
            len(pods) == 4
            and not names & pending_names
            and all(subset(p) == "subset-a" and ready(p) for p in pods)
        )

    pods = await cluster.until(lambda: pods_of(cluster, "web"), moved, timeout=60)
    zone_a = {
        n["metadata"]["name"]
        for n in (await client.list(NODES))["items"]
        if n["metadata"]["labels"].get(ZONE) == "zone-a"
    }
    assert {p["spec"]["nodeName"] for p in pods} <= zone_a

    def counted(w: dict[str, Any]) -> bool:
        books = [(s["name"], s["replicas"]) for s in (w.get("status") or {}).get("subsetStatuses") or []]
        return books == [("subset-x", 0), ("subset-a", 4)]

    ws = await cluster.until(lambda: client.get(WORKLOADSPREADS, "ws-adaptive", NS), counted)
    assert (schedulable(ws, "subset-x") or {}).get("status") == "False"

    # A node joins zone-x; the mark holds for 5 minutes after it was set.
    node = next(
        n for n in (await client.list(NODES))["items"] if n["metadata"]["labels"].get(ZONE) == "zone-c"
    )
    node["metadata"]["labels"][ZONE] = "zone-x"
    await client.update(NODES, node)
    marked = parse_rfc3339((schedulable(ws, "subset-x") or {})["lastTransitionTime"])
    recover_at = marked + MAX_SCHEDULE_FAILED_DURATION
    await step_to(cluster, clock, recover_at - HALF)
    ws = await client.get(WORKLOADSPREADS, "ws-adaptive", NS)
    assert (schedulable(ws, "subset-x") or {}).get("status") == "False"
    recovered_at = recover_at + HALF
    await step_to(cluster, clock, recovered_at)
    ws = await cluster.until(
        lambda: client.get(WORKLOADSPREADS, "ws-adaptive", NS),
        lambda w: (schedulable(w, "subset-x") or {}).get("status") == "True",
    )
    assert schedulable(ws, "subset-x") == {
        "type": "Schedulable",
        "status": "True",
        "reason": "Sufficient",
        "lastTransitionTime": rfc3339(recovered_at),
    }
    events = await cluster.until(
        lambda: client.list(EVENTS, NS),
        lambda listing: any(e.get("reason") == "RecoverSchedulable" for e in listing["items"]),
    )
    recover = next(e for e in events["items"] if e.get("reason") == "RecoverSchedulable")
    assert (recover["type"], recover["involvedObject"]["name"]) == ("Normal", "ws-adaptive")
    assert recover["message"] == (
        f"Subset subset-x of WorkloadSpread {NS}/ws-adaptive is recovered from unschedulable to schedulable"
    )

    # Running pods stay where they are; new pods go to the recovered subset and run on its node.
    await client.patch(CLONESETS, "web", {"spec": {"replicas": 6}}, NS)

    def back(pods: list[dict[str, Any]]) -> bool:
        in_x = [p for p in pods if subset(p) == "subset-x"]
        return len(pods) == 6 and len(in_x) == 2 and all(ready(p) for p in pods)

    pods = await cluster.until(lambda: pods_of(cluster, "web"), back, timeout=60)
    assert {p["spec"]["nodeName"] for p in pods if subset(p) == "subset-x"} == {node["metadata"]["name"]}
    ws = await cluster.until(
        lambda: client.get(WORKLOADSPREADS, "ws-adaptive", NS),
        lambda w: (
            [(s["name"], s["replicas"]) for s in w["status"]["subsetStatuses"]]
            == [("subset-x", 2), ("subset-a", 4)]
        ),
    )
    assert (schedulable(ws, "subset-x") or {}).get("status") == "True"
    failed = [
        e
        for e in (await client.list(EVENTS, NS))["items"]
        if e.get("reason") == "FailedScheduling" and e["involvedObject"]["name"] in pending_names
    ]
    assert failed and {e["message"] for e in failed} == {NO_FIT}
