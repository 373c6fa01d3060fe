"""ContainerRecreateRequestReconciler against fake caches and a recording client: which request and
pod writes it makes (completion rules, unready acquisition and release, active label, TTL)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS
from kruise.manager.controllers.containerrecreaterequest.reconciler import (
    RESPONSE_TIMEOUT,
    ContainerRecreateRequestReconciler,
)
from tests.kit import FakeInformer, RecordingClient

NS = "default"
KEY = f"{NS}/r1"
ACTIVE = "crr.apps.kruise.io/active"
UNREADY = "crr.apps.kruise.io/unready-acquired"


def a_pod(name="web-0", *, uid="pod-uid-1", gate=True, deleting=False):
    meta = {"name": name, "namespace": NS, "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-22T22:59:00Z"
    spec = {"containers": [{"name": "app", "image": "nginx:alpine"}]}
    conditions = [{"type": "Ready", "status": "True"}]
    if gate:
        spec["readinessGates"] = [{"conditionType": "KruisePodReady"}]
        conditions.append({"type": "KruisePodReady", "status": "True"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"conditions": conditions},
    }


def a_request(clock, *, age=1.0, pod_uid="pod-uid-1", phase=None, status=None, labels=None, **spec):
    meta = {
        "name": "r1",
        "namespace": NS,
        "creationTimestamp": rfc3339(clock.wall() - timedelta(seconds=age)),
        "labels": {"crr.apps.kruise.io/pod-uid": pod_uid, ACTIVE: "true", **(labels or {})},
    }
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": meta,
        "spec": {"podName": "web-0", "containers": [{"name": "app"}], **spec},
        "status": dict(status or {}),
    }
    if phase:
        body["status"]["phase"] = phase
    return body


class Harness:
    """The reconciler over fake caches; the client mirrors request and pod writes into the caches."""

    def __init__(self, requests=(), pods=()):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.requests, self.pods = FakeInformer(), FakeInformer()
        self.client.put(CONTAINER_RECREATE_REQUESTS, *requests)
        self.client.put(PODS, *pods)
        self.client.sync(CONTAINER_RECREATE_REQUESTS, self.requests)
        self.client.sync(PODS, self.pods)
        self.client.clear()
        self.reconciler = ContainerRecreateRequestReconciler(
            self.client, requests=self.requests, pods=self.pods, wall=self.clock.wall
        )

    async def reconcile(self, key=KEY):
        result = await self.reconciler.reconcile(key)
        self.requests.assert_unmodified()
        self.pods.assert_unmodified()
        return result

    def request(self):
        return self.client.object(CONTAINER_RECREATE_REQUESTS, "r1", NS)


def not_ready_keys(pod):
    condition = next(c for c in pod["status"]["conditions"] if c["type"] == "KruisePodReady")
    return condition["status"], json.loads(condition.get("message") or "[]")


async def test_a_missing_request_is_a_no_op():
    h = Harness()
    assert await h.reconcile() is None
    assert h.client.calls == []


@pytest.mark.parametrize(
    "pod", [None, a_pod(uid="someone-else"), a_pod(deleting=True)], ids=["gone", "replaced", "deleting"]
)
async def test_a_request_whose_pod_is_gone_completes(pod):
    clock = FakeClock()
    h = Harness([a_request(clock, phase="Recreating")], [pod] if pod else [])
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.subresource, call.patch_type) == ("patch", "status", PatchType.MERGE)
    assert call.body["status"] == {
        "phase": "Completed",
        "completionTime": rfc3339(h.clock.wall()),
        "message": "pod has gone",
    }


async def test_an_unanswered_request_waits_for_the_daemon_then_completes():
    h = Harness([a_request(FakeClock(), age=20.0)], [a_pod()])
    assert await h.reconcile() == Result(requeue_after=pytest.approx(RESPONSE_TIMEOUT - 20.0))
    assert h.client.writes == []
    h.clock.step(RESPONSE_TIMEOUT - 20.0)
    assert await h.reconcile() is None
    assert h.request()["status"]["message"] == "daemon has not responded for a long time"
    assert h.request()["status"]["phase"] == "Completed"


@pytest.mark.parametrize("phase", ["Pending", "Recreating"])
async def test_an_answered_request_never_times_out_on_the_daemon(phase):
    h = Harness([a_request(FakeClock(), age=RESPONSE_TIMEOUT * 5, phase=phase)], [a_pod()])
    assert await h.reconcile() is None
    assert h.client.writes == []


async def test_the_active_deadline_requeues_until_it_passes():
    h = Harness([a_request(FakeClock(), age=10.0, activeDeadlineSeconds=30)], [a_pod()])
    assert await h.reconcile() == Result(requeue_after=pytest.approx(20.0))  # earlier than the daemon's 50 s
    h.clock.step(20.0)
    assert await h.reconcile() is None
    assert h.request()["status"]["message"] == "recreating has exceeded the activeDeadlineSeconds"


async def test_unready_acquisition_adds_finalizer_then_not_ready_key_then_stamp():
    clock = FakeClock()
    h = Harness([a_request(clock, phase="Recreating", strategy={"unreadyGracePeriodSeconds": 3})], [a_pod()])
    assert await h.reconcile() is None
    (first,) = h.client.writes
    assert first.body == {"metadata": {"finalizers": [UNREADY]}}
    assert h.client.calls_to("update", PODS) == []  # the finalizer lands before the pod is touched
    h.client.clear()
    assert await h.reconcile() is None
    pod_write, stamp = h.client.writes
    assert (pod_write.verb, pod_write.resource, pod_write.subresource) == ("update", PODS, "status")
    assert not_ready_keys(h.client.object(PODS, "web-0", NS)) == (
        "False",
        [{"userAgent": "ContainerRecreateRequest", "key": KEY}],
    )
    assert stamp.body == {"metadata": {"annotations": {UNREADY: rfc3339(h.clock.wall())}}}
    h.client.clear()
    assert await h.reconcile() is None  # acquired: nothing more until the daemon finishes
    assert h.client.writes == []


async def test_a_pod_without_the_readiness_gate_is_not_touched_but_the_stamp_is_written():
    h = Harness(
        [a_request(FakeClock(), phase="Recreating", strategy={"unreadyGracePeriodSeconds": 3})],
        [a_pod(gate=False)],
    )
    await h.reconcile()
    await h.reconcile()
    assert h.client.calls_to(resource=PODS) == []
    assert UNREADY in h.request()["metadata"]["annotations"]


async def test_no_acquisition_before_the_daemon_picks_the_request_up():
    h = Harness([a_request(FakeClock(), age=5.0, strategy={"unreadyGracePeriodSeconds": 3})], [a_pod()])
    assert await h.reconcile() == Result(requeue_after=pytest.approx(RESPONSE_TIMEOUT - 5.0))
    assert h.client.writes == []


async def test_completion_releases_the_pod_and_finalizer_then_label_then_ttl_delete():
    clock = FakeClock()
    done = {"phase": "Completed", "completionTime": rfc3339(clock.wall())}
    crr = a_request(clock, status=done, strategy={"unreadyGracePeriodSeconds": 3}, ttlSecondsAfterFinished=30)
    crr["metadata"]["finalizers"] = [UNREADY]
    pod = a_pod()
    pod["status"]["conditions"][1] = {
        "type": "KruisePodReady",
        "status": "False",
        "message": json.dumps([{"userAgent": "ContainerRecreateRequest", "key": KEY}]),
    }
    h = Harness([crr], [pod])
    assert await h.reconcile() is None
    assert not_ready_keys(h.client.object(PODS, "web-0", NS)) == ("True", [])
    assert h.request()["metadata"].get("finalizers") == []
    assert await h.reconcile() is None
    assert ACTIVE not in h.request()["metadata"]["labels"]
    assert await h.reconcile() == Result(requeue_after=pytest.approx(30.0))
    h.clock.step(30.0)
    h.client.clear()
    assert await h.reconcile() is None
    (delete,) = h.client.writes
    assert (delete.verb, delete.name) == ("delete", "r1")
    assert h.request() is None


async def test_a_deleted_request_without_the_finalizer_needs_nothing():
    crr = a_request(FakeClock(), phase="Recreating")
    crr["metadata"].update(deletionTimestamp="2026-11-22T22:59:00Z", finalizers=["example.com/hold"])
    h = Harness([crr], [a_pod()])
    assert await h.reconcile() is None
    assert h.client.writes == []


async def test_not_found_means_done_and_a_conflict_on_the_pod_is_retried_on_a_fresh_read():
    """Upstream's AddNotReadyKey retries on conflict around a fresh Get: the key is on the pod before
    the acquisition is stamped (a stamp without the key would let the daemon kill a serving pod)."""
    h = Harness([a_request(FakeClock(), phase="Recreating")], [])
    h.client.fail_next("patch", CONTAINER_RECREATE_REQUESTS, "r1", NS, error=NotFound)
    assert await h.reconcile() is None
    crr = a_request(FakeClock(), phase="Recreating", strategy={"unreadyGracePeriodSeconds": 3})
    crr["metadata"]["finalizers"] = [UNREADY]
    h2 = Harness([crr], [a_pod()])
    h2.client.fail_next("update", PODS, "web-0", NS, error=Conflict)
    assert await h2.reconcile() is None
    assert [(c.verb, type(c.error).__name__) for c in h2.client.writes] == [
        ("update", "Conflict"),
        ("update", "NoneType"),
        ("patch", "NoneType"),
    ]
    assert not_ready_keys(h2.client.object(PODS, "web-0", NS))[1] == [
        {"userAgent": "ContainerRecreateRequest", "key": KEY}
    ]


async def test_a_conflict_on_the_request_propagates_for_a_retry():
    h = Harness([a_request(FakeClock())], [])
    h.client.fail_next("patch", CONTAINER_RECREATE_REQUESTS, "r1", NS, error=Conflict)
    with pytest.raises(Conflict):
        await h.reconcile()
