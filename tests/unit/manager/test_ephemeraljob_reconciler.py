"""EphemeralJobReconciler against fake caches and a recording client: finalizer, containers added
through pods/ephemeralcontainers with parallelism, expectations, status, failures, TTL, deletion."""

from __future__ import annotations

from functools import partial

import pytest

from kruise.api.keys import FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP
from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.resources import EPHEMERALJOBS, PODS
from kruise.manager.controllers.ephemeraljob.controller import job_changed, pod_handlers
from kruise.manager.controllers.ephemeraljob.reconciler import EphemeralJobReconciler
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder
from tests.kit.pods import pod

NS = "default"
web_pod = partial(
    pod, namespace=NS, labels={"app": "web"}, containers=[{"name": "main", "image": "nginx"}], phase="Running"
)
KEY = f"{NS}/debug"


def ejob(**spec):
    return {
        "metadata": {"name": "debug", "namespace": NS, "uid": "uid-job"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]},
            **spec,
        },
    }


class Harness:
    def __init__(self, job, pods=()):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.jobs, self.pods = FakeInformer(), FakeInformer()
        self.client.put(EPHEMERALJOBS, job)
        self.client.put(PODS, *pods)
        self.client.sync(EPHEMERALJOBS, self.jobs)
        self.client.sync(PODS, self.pods)
        self.recorder = RecordingEventRecorder()
        self.expectations = ScaleExpectations(self.clock)
        self.reconciler = EphemeralJobReconciler(
            self.client, jobs=self.jobs, pods=self.pods, recorder=self.recorder,
            expectations=self.expectations, clock=self.clock,
        )  # fmt: skip
        self.queue: list[str] = []
        self.handlers = pod_handlers(self.jobs, self.expectations, self.queue.append)

    async def reconcile(self):
        result = await self.reconciler.reconcile(KEY)
        self.jobs.assert_unmodified()
        self.pods.assert_unmodified()
        return result

    def job(self):
        return self.client.object(EPHEMERALJOBS, "debug", NS)

    def injected(self):
        return [
            p["metadata"]["name"]
            for p in sorted(self.client.objects(PODS), key=lambda p: p["metadata"]["name"])
            if p["spec"].get("ephemeralContainers")
        ]

    def observe_pods(self):
        for p in self.client.objects(PODS):
            self.handlers["on_add"](p)

    def set_state(self, name, state):
        p = self.client.object(PODS, name, NS)
        p["status"]["ephemeralContainerStatuses"] = [{"name": "dbg", "state": state}]
        self.client.put(PODS, p)
        self.client.sync(PODS, self.pods)


async def test_adds_containers_one_pod_at_a_time_and_completes():
    h = Harness(
        ejob(), [web_pod("a", created="2026-01-01T00:00:01Z"), web_pod("b", created="2026-01-01T00:00:02Z")]
    )
    assert await h.reconcile() is None
    job = h.job()
    assert FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP in job["metadata"]["finalizers"]
    assert h.injected() == ["a"]
    (call,) = h.client.calls_to("patch", PODS)
    assert call.subresource == "ephemeralcontainers" and call.patch_type is PatchType.STRATEGIC
    (added,) = h.client.object(PODS, "a", NS)["spec"]["ephemeralContainers"]
    assert added["env"] == [{"name": "KRUISE_EJOB_ID", "value": "uid-job"}]
    assert job["status"]["match"] == 2 and job["status"]["phase"] == "Unknown"

    # a stale cache (the pod event not seen yet) does not add the container twice
    h.client.clear()
    result = await h.reconcile()
    assert isinstance(result, Result) and result.requeue_after > 0
    assert not h.client.calls_to("patch", PODS)

    h.observe_pods()
    h.set_state("a", {"running": {"startedAt": rfc3339(h.clock.wall())}})
    await h.reconcile()
    assert h.injected() == ["a"]  # parallelism 1 and one running
    assert h.job()["status"]["running"] == 1 and h.job()["status"]["phase"] == "Running"

    h.set_state("a", {"terminated": {"exitCode": 0, "finishedAt": rfc3339(h.clock.wall())}})
    await h.reconcile()
    assert h.injected() == ["a", "b"]
    h.observe_pods()
    h.set_state("b", {"terminated": {"exitCode": 0, "finishedAt": rfc3339(h.clock.wall())}})
    result = await h.reconcile()
    status = h.job()["status"]
    assert status["phase"] == "Succeeded" and status["succeeded"] == 2 and status["completionTime"]
    assert {c["type"] for c in status["conditions"]} == {"Initialized", "JobSucceeded"}

    # finished: deleted after the default TTL of 1800 s
    result = await h.reconcile()
    assert result == Result(requeue_after=1800.0)
    h.clock.step(1800)
    await h.reconcile()
    assert h.client.calls_to("delete", EPHEMERALJOBS)


async def test_parallelism_replicas_and_paused():
    h = Harness(
        ejob(parallelism=5, replicas=2),
        [
            web_pod("a", created="2026-01-01T00:00:01Z"),
            web_pod("b", created="2026-01-01T00:00:02Z"),
            web_pod("c", created="2026-01-01T00:00:03Z"),
        ],
    )
    await h.reconcile()
    assert h.injected() == ["a", "b"]
    assert h.job()["status"]["match"] == 2

    paused = Harness(ejob(paused=True), [web_pod("a", created="2026-01-01T00:00:01Z")])
    await paused.reconcile()
    assert paused.injected() == [] and paused.job()["status"]["phase"] == "Paused"


async def test_a_failed_injection_is_reported_and_retried():
    h = Harness(ejob(), [web_pod("a", created="2026-01-01T00:00:01Z")])
    h.client.fail_next("patch", PODS, "a", NS, error=Conflict)
    with pytest.raises(Conflict):  # surfaces, for a retry with backoff
        await h.reconcile()
    (event,) = h.recorder.events
    assert event.type == "Warning" and event.reason == "CreateFailed"
    assert "failed to create ephemeral container in pod default/a" in event.message
    assert h.job()["status"]["phase"] == "Unknown"  # the status was still written
    await h.reconcile()  # the expectation was lowered again: the retry goes ahead
    assert h.injected() == ["a"]


async def test_failed_container_fails_the_job_and_deadline_requeues():
    h = Harness(ejob(activeDeadlineSeconds=60), [web_pod("a", created="2026-01-01T00:00:01Z")])
    result = await h.reconcile()
    assert result == Result(requeue_after=60.0)
    h.observe_pods()
    h.set_state("a", {"terminated": {"exitCode": 2, "finishedAt": rfc3339(h.clock.wall())}})
    await h.reconcile()
    status = h.job()["status"]
    assert status["phase"] == "Failed" and status["failed"] == 1 and status["completionTime"]


async def test_deadline_exceeded_fails_a_waiting_job():
    h = Harness(ejob(activeDeadlineSeconds=30), [])
    await h.reconcile()
    assert h.job()["status"]["phase"] == "Waiting"
    h.clock.step(31)
    await h.reconcile()
    status = h.job()["status"]
    assert status["phase"] == "Failed"
    assert any(c["reason"] == "DeadlineExceeded" for c in status["conditions"])


async def test_deletion_drops_the_finalizer():
    h = Harness(ejob(), [])
    await h.reconcile()
    job = h.job()
    job["metadata"]["deletionTimestamp"] = rfc3339(h.clock.wall())
    h.client.put(EPHEMERALJOBS, job)
    h.client.sync(EPHEMERALJOBS, h.jobs)
    h.client.clear()
    await h.reconcile()
    (call,) = h.client.calls_to("patch", EPHEMERALJOBS)
    assert call.body["metadata"]["finalizers"] == []
    assert h.job() is None  # the last finalizer gone, the deletion completes


def test_job_updates_that_wake_the_controller():
    old = {**ejob(), "metadata": {**ejob()["metadata"], "resourceVersion": "1"}}
    status_only = {
        **old,
        "metadata": {**old["metadata"], "resourceVersion": "2"},
        "status": {"phase": "Running"},
    }
    assert not job_changed(old, status_only)
    assert job_changed(old, {**status_only, "spec": {**old["spec"], "parallelism": 3}})
    assert job_changed(
        old, {**status_only, "metadata": {**status_only["metadata"], "deletionTimestamp": "x"}}
    )
