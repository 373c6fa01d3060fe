"""WorkloadSpreadReconciler against fake caches and a recording client: status recomputed from the
target's pods (not other workloads'), deletion costs patched once, expired books dropped with a
warning and kept ones re-run at their expiry, a conflicting status write surfacing for a retry,
Deployment pods found through ReplicaSets, costs held back until the newest ReplicaSet is known;
and the event handlers' wake-ups."""

from __future__ import annotations

import copy
from datetime import timedelta
from functools import partial

import pytest

from kruise.api.timestamps import rfc3339
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, MatchedSpread
from kruise.kube.clock import FakeClock
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict
from kruise.kube.resources import (
    CLONESETS,
    DEPLOYMENTS,
    JOBS,
    NODES,
    PODS,
    REPLICASETS,
    WORKLOADSPREADS,
)
from kruise.manager.controllers.workloadspread.controller import pod_handlers, workload_handlers
from kruise.manager.controllers.workloadspread.reconciler import WorkloadSpreadReconciler
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder
from tests.kit.pods import controller_ref, pod

COST = "controller.kubernetes.io/pod-deletion-cost"


def spread(kind="CloneSet", api_version="apps.kruise.io/v1alpha1", status=None, **extra):
    ws = {
        "metadata": {"name": "ws", "namespace": "default", "generation": 2},
        "spec": {
            "targetRef": {"apiVersion": api_version, "kind": kind, "name": "app"},
            "subsets": [{"name": "zone-a", "maxReplicas": 2}, {"name": "zone-b"}],
            **extra,
        },
    }
    if status is not None:
        ws["status"] = status
    return ws


def cloneset(replicas=4, name="app"):
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"replicas": replicas},
    }


def owned_by(kind: str, uid: str) -> dict:
    return controller_ref(kind, "app", uid=uid, api_version="apps.kruise.io/v1alpha1")


def matched(subset: str) -> dict[str, str]:
    """The annotation the webhook puts on a pod it placed in `subset` of WorkloadSpread ws."""
    return {ANNOTATION_MATCHED: MatchedSpread("ws", subset).to_json()}


# a running pod of CloneSet app on n1, in no subset yet
app_pod = partial(
    pod, owner=owned_by("CloneSet", "uid-app"), created="2026-11-22T22:00:00Z", node="n1", phase="Running",
    labels={}, annotations={},
)  # fmt: skip


class Harness:
    def __init__(self, spreads=(), pods=(), clonesets=(), deployments=(), replicasets=(), jobs=(), nodes=()):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.recorder = RecordingEventRecorder()
        self.informers = {
            ref: FakeInformer()
            for ref in (WORKLOADSPREADS, PODS, CLONESETS, DEPLOYMENTS, REPLICASETS, JOBS, NODES)
        }
        for ref, objs in (
            (WORKLOADSPREADS, spreads),
            (PODS, pods),
            (CLONESETS, clonesets),
            (DEPLOYMENTS, deployments),
            (REPLICASETS, replicasets),
            (JOBS, jobs),
            (NODES, nodes),
        ):
            self.client.put(ref, *objs)
            self.client.sync(ref, self.informers[ref])
        self.reconciler = WorkloadSpreadReconciler(
            self.client,
            spreads=self.informers[WORKLOADSPREADS],
            pods=self.informers[PODS],
            workloads={
                (ref.group, ref.kind): self.informers[ref]
                for ref in (CLONESETS, DEPLOYMENTS, REPLICASETS, JOBS)
            },
            nodes=self.informers[NODES],
            recorder=self.recorder,
            clock=self.clock,
        )

    async def reconcile(self, key="default/ws"):
        result = await self.reconciler.reconcile(key)
        for informer in self.informers.values():
            informer.assert_unmodified()
        return result

    def status(self):
        return self.client.object(WORKLOADSPREADS, "ws", "default").get("status") or {}

    def cost(self, name):
        return (self.client.object(PODS, name, "default")["metadata"].get("annotations") or {}).get(COST)


async def test_status_and_costs_from_the_cloneset_pods_then_no_writes():
    pods = [
        app_pod("a1", annotations=matched("zone-a")),
        app_pod("a2", annotations=matched("zone-a")),
        app_pod("a3", annotations=matched("zone-a"), created="2026-11-22T22:30:00Z"),
        app_pod("b1", annotations=matched("zone-b")),
        app_pod("x1", annotations=matched("zone-b"), owner=owned_by("CloneSet", "uid-other")),
    ]
    h = Harness([spread()], pods, [cloneset(), cloneset(name="other")])
    assert await h.reconcile() is None
    assert h.status()["observedGeneration"] == 2
    assert h.status()["subsetStatuses"] == [
        {"name": "zone-a", "replicas": 3, "missingReplicas": 0},
        {"name": "zone-b", "replicas": 1, "missingReplicas": -1},
    ]
    # zone-a over quota: its newest pod goes first (-100); in-quota zone-a 200; zone-b 100
    assert [h.cost(n) for n in ("a1", "a2", "a3", "b1", "x1")] == ["200", "200", "-100", "100", None]
    assert {c.name for c in h.client.calls_to("patch", PODS)} == {"a1", "a2", "a3", "b1"}
    h.client.clear()
    await h.reconcile()
    assert h.client.writes == []


async def test_pods_in_no_subset_get_a_negative_cost():
    h = Harness([spread()], [app_pod("old"), app_pod("a1", annotations=matched("zone-a"))], [cloneset()])
    await h.reconcile()
    assert h.cost("old") == "-300" and h.cost("a1") == "200"


async def test_expired_creating_booking_dropped_with_warning_and_live_one_requeued():
    clock_now = FakeClock().wall()
    stale = rfc3339(clock_now - timedelta(seconds=31))
    fresh = rfc3339(clock_now - timedelta(seconds=10))
    books = {
        "versionIgnored": [
            {
                "name": "zone-a",
                "replicas": 0,
                "missingReplicas": 0,
                "creatingPods": {"gone": stale, "soon": fresh},
            },
            {"name": "zone-b", "replicas": 0, "missingReplicas": -1},
        ]
    }
    h = Harness([spread(status={"versionedSubsetStatuses": books})], [], [cloneset()])
    result = await h.reconcile()
    assert result == Result(requeue_after=20.0)
    kept = h.status()["versionedSubsetStatuses"]["versionIgnored"][0]
    assert kept["creatingPods"] == {"soon": fresh} and kept["missingReplicas"] == 1
    assert h.recorder.reasons() == ["CreatePodFailed"]
    assert h.recorder.events[0].message == "Pod default/gone was expected to be created but it wasn't"


async def test_conflicting_status_write_surfaces_for_a_retry():
    h = Harness([spread()], [app_pod("a1", annotations=matched("zone-a"))], [cloneset()])
    h.client.fail_next("patch", WORKLOADSPREADS, "ws", "default", error=Conflict)
    with pytest.raises(Conflict):
        await h.reconcile()
    await h.reconcile()
    assert h.status()["subsetStatuses"][0]["replicas"] == 1


async def test_missing_workload_counts_nothing_and_deleted_spread_is_left_alone():
    h = Harness([spread()], [app_pod("a1", annotations=matched("zone-a"))])
    await h.reconcile()
    assert h.status()["subsetStatuses"][0] == {"name": "zone-a", "replicas": 0, "missingReplicas": 2}
    assert h.client.calls_to("patch", PODS) == []
    h2 = Harness()
    assert await h2.reconcile() is None and h2.client.writes == []


def deployment(image="v2"):
    return {
        "metadata": {"name": "app", "namespace": "default", "uid": "uid-dep"},
        "spec": {
            "replicas": 3,
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
        },
    }


def replicaset(hash_, image):
    labels = {"app": "x", "pod-template-hash": hash_}
    return {
        "metadata": {
            "name": f"app-{hash_}",
            "namespace": "default",
            "uid": f"uid-rs-{hash_}",
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "app",
                    "uid": "uid-dep",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": image}]},
            }
        },
    }


async def test_deployment_pods_through_replicasets_with_old_version_ranked_reversed():
    old = app_pod(
        "o1",
        annotations=matched("zone-a"),
        owner=owned_by("ReplicaSet", "uid-rs-h1"),
        labels={"pod-template-hash": "h1"},
    )
    new = app_pod(
        "n1",
        annotations=matched("zone-a"),
        owner=owned_by("ReplicaSet", "uid-rs-h2"),
        labels={"pod-template-hash": "h2"},
    )
    ws = spread(kind="Deployment", api_version="apps/v1")
    h = Harness(
        [ws],
        [old, new],
        deployments=[deployment()],
        replicasets=[replicaset("h1", "v1"), replicaset("h2", "v2")],
    )
    await h.reconcile()
    # the newest version keeps subset order (zone-a first: 200), the old one is reversed (zone-a: 100)
    assert h.cost("n1") == "200" and h.cost("o1") == "100"
    assert sorted(h.status()["versionedSubsetStatuses"]) == ["h1", "h2"]


async def test_costs_wait_for_the_newest_replicaset():
    ws = spread(kind="Deployment", api_version="apps/v1")
    h = Harness([ws], [], deployments=[deployment("v3")], replicasets=[replicaset("h1", "v1")])
    assert await h.reconcile() == Result(requeue=True)
    assert h.client.writes == []


async def test_job_target_counts_selected_pods_and_gets_no_costs():
    job = {
        "metadata": {"name": "app", "namespace": "default", "uid": "uid-job"},
        "spec": {"parallelism": 4, "selector": {"matchLabels": {"run": "1"}}},
    }
    ws = spread(kind="Job", api_version="batch/v1")
    ws["spec"]["subsets"][0]["maxReplicas"] = "50%"
    p1 = app_pod("j1", annotations=matched("zone-a"), owner=owned_by("Job", "uid-job"), labels={"run": "1"})
    p2 = app_pod("j2", annotations=matched("zone-a"), owner=owned_by("Job", "uid-job"), labels={"run": "2"})
    h = Harness([ws], [p1, p2], jobs=[job])
    await h.reconcile()
    assert h.status()["subsetStatuses"][0] == {"name": "zone-a", "replicas": 1, "missingReplicas": 1}
    assert h.client.calls_to("patch", PODS) == []


def test_pod_handlers_wake_the_named_spread_on_create_stop_and_delete():
    woken = []
    handlers = pod_handlers(woken.append)
    handlers["on_add"](app_pod("a1", annotations=matched("zone-a")))
    handlers["on_add"](app_pod("plain"))
    running, failed = (
        app_pod("a1", annotations=matched("zone-a")),
        app_pod("a1", annotations=matched("zone-a")),
    )
    failed["status"]["phase"] = "Failed"
    handlers["on_update"](running, running)  # nothing relevant changed
    handlers["on_update"](running, failed)
    handlers["on_delete"](app_pod("a1", annotations=matched("zone-a")))
    assert woken == ["default/ws"] * 3


def test_pod_handlers_wake_when_the_scheduler_marks_a_pod_unschedulable_once():
    """Adaptive: the pass that starts a pod's rescheduleCriticalSeconds must not depend on luck."""
    woken = []
    handlers = pod_handlers(woken.append)
    pending = app_pod("x1", annotations=matched("zone-a"))
    pending["status"] = {"phase": "Pending"}
    failed = copy.deepcopy(pending)
    failed["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}
    ]
    retried = copy.deepcopy(failed)
    retried["status"]["conditions"][0]["message"] = "0/4 nodes"
    gated = copy.deepcopy(pending)
    gated["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    handlers["on_update"](pending, gated)  # not the scheduler giving up
    handlers["on_update"](pending, failed)
    handlers["on_update"](failed, retried)  # already counted
    handlers["on_update"](app_pod("plain"), {**failed, "metadata": app_pod("plain")["metadata"]})
    assert woken == ["default/ws"]


def test_workload_handlers_wake_on_replicas_and_through_a_deployments_replicaset():
    spreads = FakeInformer(
        [
            spread(),
            {
                **spread(kind="Deployment", api_version="apps/v1"),
                "metadata": {"name": "dep-ws", "namespace": "default"},
            },
        ]
    )
    woken = []
    cs = workload_handlers(CLONESETS, spreads, woken.append)
    cs["on_update"](cloneset(4), cloneset(4))
    cs["on_update"](cloneset(4), cloneset(6))
    rs = workload_handlers(REPLICASETS, spreads, woken.append)
    rs["on_add"](replicaset("h1", "v1"))
    assert woken == ["default/ws", "default/dep-ws"]


def zone_node(name, zone, taints=None):
    return {
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
        "spec": {"taints": taints} if taints else {},
    }


def zoned_spread(annotations=None):
    def term(zone):
        return {
            "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]
        }

    ws = spread()
    ws["spec"]["subsets"] = [
        {"name": "zone-a", "requiredNodeSelectorTerm": term("a"), "maxReplicas": 1},
        {
            "name": "zone-b",
            "requiredNodeSelectorTerm": term("b"),
            "patch": {"metadata": {"labels": {"pool": "b"}}, "spec": {"priorityClassName": "x"}},
        },
    ]
    if annotations:
        ws["metadata"]["annotations"] = annotations
    return ws


def on(node_name, p):
    p["spec"]["nodeName"] = node_name
    return p


async def test_pods_without_annotation_adopted_by_their_node_then_counted_and_costed():
    pods = [
        on("na", app_pod("old-a", created="2026-11-22T21:00:00Z")),
        on("na", app_pod("old-a2", created="2026-11-22T21:10:00Z")),
        on("nb", app_pod("old-b")),
        on("nc", app_pod("old-c")),
        on("", app_pod("pending")),
    ]
    nodes = [zone_node("na", "a"), zone_node("nb", "b"), zone_node("nc", "c")]
    h = Harness([zoned_spread()], pods, [cloneset()], nodes=nodes)
    assert await h.reconcile() is None
    adopted = {
        c.name: (c.body, c.patch_type)
        for c in h.client.calls_to("patch", PODS)
        if ANNOTATION_MATCHED in str(c.body)
    }
    assert adopted == {
        "old-a": (
            {"metadata": {"annotations": {ANNOTATION_MATCHED: '{"name":"ws","subset":"zone-a"}'}}},
            "application/strategic-merge-patch+json",
        ),
        "old-a2": (
            {"metadata": {"annotations": {ANNOTATION_MATCHED: '{"name":"ws","subset":"zone-a"}'}}},
            "application/strategic-merge-patch+json",
        ),
        "old-b": (
            {
                "metadata": {
                    "labels": {"pool": "b"},
                    "annotations": {ANNOTATION_MATCHED: '{"name":"ws","subset":"zone-b"}'},
                }
            },
            "application/strategic-merge-patch+json",
        ),
    }
    assert h.client.object(PODS, "old-b", "default")["metadata"]["labels"] == {"pool": "b"}
    # the only zone-a subset takes both zone-a pods, over its quota of 1
    assert h.status()["subsetStatuses"] == [
        {"name": "zone-a", "replicas": 2, "missingReplicas": 0},
        {"name": "zone-b", "replicas": 1, "missingReplicas": -1},
    ]
    # the younger zone-a pod is over quota; pods in no subset rank last
    assert [h.cost(n) for n in ("old-a", "old-a2", "old-b", "old-c", "pending")] == [
        "200",
        "-100",
        "100",
        "-300",
        "-300",
    ]
    h.client.clear()
    h.client.sync(PODS, h.informers[PODS])
    await h.reconcile()
    assert h.client.writes == []


async def test_ignore_patch_annotation_adopts_without_subset_metadata():
    ws = zoned_spread({"workloadspread.kruise.io/ignore-patch-existing-pods-metadata": "true"})
    h = Harness([ws], [on("nb", app_pod("old-b"))], [cloneset()], nodes=[zone_node("nb", "b")])
    await h.reconcile()
    meta = h.client.object(PODS, "old-b", "default")["metadata"]
    assert meta["labels"] == {}
    assert meta["annotations"][ANNOTATION_MATCHED] == '{"name":"ws","subset":"zone-b"}'


async def test_tainted_node_not_tolerated_leaves_pod_unadopted():
    node = zone_node("nb", "b", taints=[{"key": "spot", "effect": "NoSchedule"}])
    h = Harness([zoned_spread()], [on("nb", app_pod("old-b"))], [cloneset()], nodes=[node])
    await h.reconcile()
    assert ANNOTATION_MATCHED not in h.client.object(PODS, "old-b", "default")["metadata"]["annotations"]
    assert h.cost("old-b") == "-300"


async def test_failed_adoption_patch_fails_the_pass_for_a_retry():
    h = Harness([zoned_spread()], [on("nb", app_pod("old-b"))], [cloneset()], nodes=[zone_node("nb", "b")])
    h.client.fail_next("patch", PODS, "old-b", "default", error=Conflict)
    with pytest.raises(Conflict):
        await h.reconcile()
    assert h.client.calls_to("update", WORKLOADSPREADS) == []
    await h.reconcile()
    assert h.status()["subsetStatuses"][1]["replicas"] == 1


async def test_adaptive_deletes_pods_stuck_unschedulable_after_marking_the_subset():
    ws = spread(scheduleStrategy={"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}})
    stuck = app_pod(
        "stuck", annotations=matched("zone-a"), created=rfc3339(FakeClock().wall() - timedelta(seconds=60))
    )
    stuck["spec"] = {}
    stuck["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }
    h = Harness([ws], [stuck, app_pod("b1", annotations=matched("zone-b"))], [cloneset()])
    await h.reconcile()
    assert h.status()["subsetStatuses"][0]["conditions"][0]["status"] == "False"
    assert [c.name for c in h.client.calls_to("delete", PODS)] == ["stuck"]
    status_write = h.client.calls_to("patch", WORKLOADSPREADS, subresource="status")
    assert status_write and h.client.writes.index(status_write[0]) < h.client.writes.index(
        h.client.calls_to("delete", PODS)[0]
    )
