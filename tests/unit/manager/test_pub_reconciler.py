"""PodUnavailableBudgetReconciler against fake caches and a recording client: the status it writes,
the related-pub stamps, record expiry with its events and requeue, and conflicts on the status."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import PODS, PODUNAVAILABLEBUDGETS
from kruise.kube.retry import Backoff
from kruise.manager.controllers.podunavailablebudget.reconciler import PodUnavailableBudgetReconciler
from kruise.manager.controllers.podunavailablebudget.workloads import WorkloadFinder
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"
KEY = f"{NS}/web-pub"
RELATED = "kruise.io/related-pub"


def deployment(replicas=3):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS, "uid": "dep-uid"},
        "spec": {"replicas": replicas},
    }


def replica_set():
    owner = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
        "uid": "dep-uid",
        "controller": True,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": NS, "uid": "rs-uid", "ownerReferences": [owner]},
        "spec": {"replicas": 3},
    }


def a_pod(name, *, ready=True, related=None):
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web-1",
        "uid": "rs-uid",
        "controller": True,
    }
    meta = {"name": name, "namespace": NS, "labels": {"app": "web"}, "ownerReferences": [owner]}
    if related:
        meta["annotations"] = {RELATED: related, "pub.kruise.io/related-pub": related}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def a_pub(status=None, **spec):
    spec = spec or {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxUnavailable": 1,
    }
    body = {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": NS, "generation": 1},
        "spec": spec,
    }
    if status is not None:
        body["status"] = status
    return body


class Harness:
    def __init__(self, pubs=(), pods=(), workloads=True):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.pubs, self.pods = FakeInformer(), FakeInformer()
        self.client.put(PODUNAVAILABLEBUDGETS, *pubs)
        self.client.put(PODS, *pods)
        self.client.sync(PODUNAVAILABLEBUDGETS, self.pubs)
        self.client.sync(PODS, self.pods)
        self.client.clear()
        self.recorder = RecordingEventRecorder()
        informers = {
            ("apps", "Deployment"): FakeInformer([deployment()] if workloads else []),
            ("apps", "ReplicaSet"): FakeInformer([replica_set()] if workloads else []),
        }
        self.reconciler = PodUnavailableBudgetReconciler(
            self.client,
            pubs=self.pubs,
            finder=WorkloadFinder(self.pods, informers),
            recorder=self.recorder,
            wall=self.clock.wall,
            conflict_retry=Backoff(steps=3, duration=0.0, jitter=0.0),
        )

    async def reconcile(self, key=KEY):
        result = await self.reconciler.reconcile(key)
        self.pubs.assert_unmodified()
        self.pods.assert_unmodified()
        return result

    def status(self):
        return self.client.object(PODUNAVAILABLEBUDGETS, "web-pub", NS).get("status") or {}


def three_pods(**kw):
    return [a_pod(f"web-1-{i}", related="web-pub", **kw) for i in range(3)]


async def test_status_counts_available_pods_against_the_budget():
    pods = [
        a_pod("web-1-0", related="web-pub"),
        a_pod("web-1-1", related="web-pub"),
        a_pod("web-1-2", ready=False),
    ]
    h = Harness([a_pub()], pods)
    assert await h.reconcile() is None
    assert h.status() == {
        "observedGeneration": 1,
        "disruptedPods": {},
        "unavailablePods": {},
        "unavailableAllowed": 0,
        "currentAvailable": 2,
        "desiredAvailable": 2,
        "totalReplicas": 3,
    }
    stamp = [c for c in h.client.writes if c.resource == PODS]
    assert [(c.verb, c.name, c.patch_type) for c in stamp] == [("patch", "web-1-2", PatchType.STRATEGIC)]
    assert stamp[0].body == {
        "metadata": {"annotations": {RELATED: "web-pub", "pub.kruise.io/related-pub": "web-pub"}}
    }


async def test_an_unchanged_status_is_not_written_again():
    h = Harness([a_pub()], three_pods())
    await h.reconcile()
    h.pubs.add(h.client.object(PODUNAVAILABLEBUDGETS, "web-pub", NS))
    h.client.clear()
    assert await h.reconcile() is None
    assert h.client.writes == []


async def test_no_covered_pods_is_reported():
    h = Harness([a_pub()], [], workloads=False)
    assert await h.reconcile() is None
    assert h.recorder.reasons() == ["NoPods"]
    assert h.status()["totalReplicas"] == 0


@pytest.mark.parametrize("deleting", [False, True], ids=["missing", "deleting"])
async def test_a_missing_or_deleting_pub_is_left_alone(deleting):
    pubs = []
    if deleting:
        pub = a_pub()
        pub["metadata"].update(deletionTimestamp="2026-11-22T22:00:00Z", finalizers=["example.com/hold"])
        pubs = [pub]
    h = Harness(pubs, three_pods())
    assert await h.reconcile() is None
    assert h.client.calls == []


async def test_a_fresh_disruption_is_kept_and_rechecked_when_it_expires():
    clock = FakeClock()
    since = clock.wall() - timedelta(seconds=5)
    h = Harness([a_pub(status={"disruptedPods": {"web-1-0": rfc3339(since)}})], three_pods())
    assert await h.reconcile() == Result(requeue_after=pytest.approx(15.0 + 0.01))
    assert h.status()["disruptedPods"] == {"web-1-0": rfc3339(since)}
    assert h.status()["currentAvailable"] == 2 and h.status()["unavailableAllowed"] == 0


async def test_an_expired_disruption_of_a_pod_still_there_is_dropped_and_reported():
    clock = FakeClock()
    since = clock.wall() - timedelta(seconds=25)
    h = Harness([a_pub(status={"disruptedPods": {"web-1-0": rfc3339(since)}})], three_pods())
    assert await h.reconcile() is None
    assert h.status()["disruptedPods"] == {}
    assert h.status()["currentAvailable"] == 3 and h.status()["unavailableAllowed"] == 1
    (event,) = h.recorder.events
    assert (event.key, event.type, event.reason) == (f"{NS}/web-1-0", "Warning", "NotDeleted")
    assert event.message == f"Pod was expected by PUB {KEY} to be deleted but it wasn't"


async def test_a_conflicting_status_write_is_recomputed_from_a_fresh_read():
    h = Harness([a_pub()], three_pods())
    # the webhook took a slot meanwhile: the fresh copy carries its record, which must survive
    stamp = rfc3339(h.clock.wall())
    h.client.put(PODUNAVAILABLEBUDGETS, {**a_pub(status={"disruptedPods": {"web-1-1": stamp}})})
    h.client.fail_next("patch", PODUNAVAILABLEBUDGETS, "web-pub", NS, error=Conflict)
    assert await h.reconcile() == Result(requeue_after=pytest.approx(20.0 + 0.01))
    assert [(c.verb, type(c.error).__name__) for c in h.client.calls_to(resource=PODUNAVAILABLEBUDGETS)] == [
        ("patch", "Conflict"),
        ("get", "NoneType"),
        ("patch", "NoneType"),
    ]
    assert h.status()["disruptedPods"] == {"web-1-1": stamp}
    assert h.status()["unavailableAllowed"] == 0


async def test_a_pub_deleted_during_the_write_ends_the_pass_and_gone_pods_are_skipped():
    h = Harness([a_pub()], [a_pod("web-1-0")])
    h.client.fail_next("patch", PODS, "web-1-0", NS, error=NotFound)
    h.client.fail_next("patch", PODUNAVAILABLEBUDGETS, "web-pub", NS, error=NotFound)
    assert await h.reconcile() is None
    assert [(c.verb, type(c.error).__name__) for c in h.client.writes] == [
        ("patch", "NotFound"),
        ("patch", "NotFound"),
    ]


async def test_conflicts_beyond_the_retries_propagate():
    h = Harness([a_pub()], three_pods())
    h.client.fail_next("patch", PODUNAVAILABLEBUDGETS, "web-pub", NS, error=Conflict, times=3)
    with pytest.raises(Conflict):
        await h.reconcile()
