"""ImageListPullJobReconciler against fake caches and a recording client: the ImagePullJobs it creates
and deletes, the expectations that stop a stale cache from doubling them, status, completion, TTL."""

from __future__ import annotations

from kruise.control.imagelistpulljob import childjobs
from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.resources import IMAGELISTPULLJOBS, IMAGEPULLJOBS
from kruise.manager.controllers.imagelistpulljob.controller import observe_children
from kruise.manager.controllers.imagelistpulljob.reconciler import ImageListPullJobReconciler
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"
KEY = f"{NS}/warm"


def ilpj(images=("nginx:1.26", "redis:7"), ttl=None, policy="Always", **spec):
    completion = {"type": policy}
    if ttl is not None:
        completion["ttlSecondsAfterFinished"] = ttl
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImageListPullJob",
        "metadata": {"name": "warm", "namespace": NS, "uid": "uid-warm"},
        "spec": {
            "images": list(images),
            "selector": {"names": ["node-1", "node-2"]},
            "parallelism": 1,
            "pullSecrets": ["regcred"],
            "pullPolicy": {"backoffLimit": 2, "timeoutSeconds": 100},
            "completionPolicy": completion,
            **spec,
        },
    }


class Harness:
    """A reconciler over caches that follow the recording client's store (the watch, without the wait)."""

    def __init__(self, list_jobs=(), jobs=()):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.list_jobs, self.jobs = FakeInformer(), FakeInformer()
        self.client.put(IMAGELISTPULLJOBS, *list_jobs)
        self.client.put(IMAGEPULLJOBS, *jobs)
        self.client.sync(IMAGELISTPULLJOBS, self.list_jobs)
        self.client.sync(IMAGEPULLJOBS, self.jobs)
        self.recorder = RecordingEventRecorder()
        self.expectations = ScaleExpectations(self.clock)
        self.reconciler = ImageListPullJobReconciler(
            self.client,
            list_jobs=self.list_jobs,
            jobs=self.jobs,
            recorder=self.recorder,
            expectations=self.expectations,
            clock=self.clock,
        )
        self.observe = observe_children(self.expectations)

    async def reconcile(self, key=KEY):
        result = await self.reconciler.reconcile(key)
        self.list_jobs.assert_unmodified()
        self.jobs.assert_unmodified()
        return result

    def children(self):
        return sorted(self.client.objects(IMAGEPULLJOBS), key=lambda c: c["spec"]["image"])

    def observe_all(self):
        """What the ImagePullJob informer's handlers do once the created children show up."""
        for child in self.client.objects(IMAGEPULLJOBS):
            self.observe["on_add"](child)

    def set_child_status(self, image, **status):
        child = next(c for c in self.client.objects(IMAGEPULLJOBS) if c["spec"]["image"] == image)
        child["status"] = {"startTime": rfc3339(self.clock.wall()), "active": 0, "succeeded": 0, "failed": 0,
                           **status}  # fmt: skip
        self.client.put(IMAGEPULLJOBS, child)

    def status(self):
        return self.client.object(IMAGELISTPULLJOBS, "warm", NS).get("status") or {}


async def test_the_first_pass_creates_one_image_pull_job_per_image_with_the_template():
    h = Harness([ilpj()])
    assert await h.reconcile() is None
    children = h.children()
    assert [c["spec"]["image"] for c in children] == ["nginx:1.26", "redis:7"]
    hash_ = childjobs.template_hash(ilpj())
    for child in children:
        meta = child["metadata"]
        assert meta["name"].startswith("warm-") and meta["namespace"] == NS
        assert meta["labels"] == {"controller-revision-hash": hash_}
        assert meta["ownerReferences"][0]["uid"] == "uid-warm" and meta["ownerReferences"][0]["controller"]
        assert child["spec"]["selector"] == {"names": ["node-1", "node-2"]}
        assert child["spec"]["parallelism"] == 1 and child["spec"]["pullSecrets"] == ["regcred"]
        assert child["spec"]["pullPolicy"] == {"backoffLimit": 2, "timeoutSeconds": 100}
        assert child["spec"]["completionPolicy"] == {"type": "Always"}
    labelled = h.client.object(IMAGELISTPULLJOBS, "warm", NS)
    assert labelled["metadata"]["labels"]["controller-revision-hash"] == hash_
    (status_call,) = h.client.calls_to("patch", IMAGELISTPULLJOBS, subresource="status")
    assert status_call.patch_type == PatchType.MERGE
    assert status_call.body == {
        "status": {
            "startTime": rfc3339(h.clock.wall()),
            "desired": 2,
            "active": 0,
            "completed": 0,
            "succeeded": 0,
        }
    }
    assert [(e.reason, e.message) for e in h.recorder.events] == [
        ("Successful create ImagePullJob", "Create 2 ImagePullJob")
    ]


async def test_unobserved_creations_hold_the_next_pass_back():
    h = Harness([ilpj()])
    await h.reconcile()
    h.client.clear()
    result = await h.reconcile()
    assert result is not None and result.requeue_after and result.requeue_after > 0
    assert h.client.calls_to("create") == []
    h.observe_all()
    assert await h.reconcile() is None
    assert h.client.calls_to("create") == [] and len(h.children()) == 2


async def test_lost_events_are_given_up_on_after_the_expectation_timeout():
    h = Harness([ilpj()])
    h.expectations.expect(KEY, ScaleExpectations.CREATE, "nginx:1.26")
    await h.reconcile()
    h.clock.step(h.expectations.timeout + 1)
    await h.reconcile()
    assert len(h.children()) == 2


async def test_status_follows_the_children_and_the_list_job_completes():
    h = Harness([ilpj()])
    await h.reconcile()
    h.observe_all()
    h.set_child_status("nginx:1.26", desired=2, active=1, succeeded=1)
    h.set_child_status("redis:7", desired=2, failed=1)
    await h.reconcile()
    status = h.status()
    assert (status["desired"], status["active"], status["completed"], status["succeeded"]) == (2, 1, 0, 0)
    (failed,) = status["failedImageStatuses"]
    assert failed["name"] == "redis:7" and failed["imagePullJob"].startswith("warm-")

    h.clock.step(10)
    h.set_child_status("nginx:1.26", desired=2, succeeded=2)
    h.set_child_status("redis:7", desired=2, succeeded=1, failed=1)
    assert await h.reconcile() is None
    done = h.status()
    assert done["completionTime"] == rfc3339(h.clock.wall())
    assert (done["active"], done["completed"], done["succeeded"]) == (0, 2, 1)

    h.client.clear()
    assert await h.reconcile() is None  # finished, no TTL: nothing more to do
    assert h.client.writes == []


async def test_a_never_list_job_does_not_complete():
    h = Harness([ilpj(policy="Never")])
    await h.reconcile()
    h.observe_all()
    h.set_child_status("nginx:1.26", desired=1, succeeded=1)
    h.set_child_status("redis:7", desired=1, succeeded=1)
    await h.reconcile()
    assert h.status()["completed"] == 2 and "completionTime" not in h.status()


async def test_a_finished_list_job_is_deleted_when_its_ttl_runs_out():
    h = Harness([ilpj(ttl=30)])
    await h.reconcile()
    h.observe_all()
    h.set_child_status("nginx:1.26", desired=1, succeeded=1)
    h.set_child_status("redis:7", desired=1, succeeded=1)
    assert await h.reconcile() == Result(requeue_after=30.0)
    h.clock.step(12)
    assert await h.reconcile() == Result(requeue_after=18.0)
    assert h.client.calls_to("delete") == []
    h.clock.step(18)
    assert await h.reconcile() is None
    assert [c.name for c in h.client.calls_to("delete", IMAGELISTPULLJOBS)] == ["warm"]


async def test_removing_an_image_deletes_its_job_and_a_template_change_replaces_the_rest():
    h = Harness([ilpj()])
    await h.reconcile()
    h.observe_all()
    before = {c["spec"]["image"]: c["metadata"]["name"] for c in h.children()}
    edited = h.client.object(IMAGELISTPULLJOBS, "warm", NS)
    edited["spec"]["images"] = ["nginx:1.26"]
    h.client.put(IMAGELISTPULLJOBS, edited)
    h.list_jobs.add(edited)
    h.recorder.events.clear()
    await h.reconcile()
    assert [c.name for c in h.client.calls_to("delete", IMAGEPULLJOBS)] == [before["redis:7"]]
    assert [c["metadata"]["name"] for c in h.children()] == [before["nginx:1.26"]]
    assert h.recorder.reasons() == ["Successful delete ImagePullJob"]
    ref = {
        "kind": "ImageListPullJob",
        "apiVersion": "apps.kruise.io/v1alpha1",
        "name": "warm",
        "controller": True,
    }
    h.observe["on_delete"](
        {"metadata": {"namespace": NS, "ownerReferences": [ref]}, "spec": {"image": "redis:7"}}
    )

    edited = h.client.object(IMAGELISTPULLJOBS, "warm", NS)
    edited["spec"]["parallelism"] = 2
    h.client.put(IMAGELISTPULLJOBS, edited)
    h.list_jobs.add(edited)
    h.client.clear()
    await h.reconcile()
    (replacement,) = h.children()
    assert replacement["metadata"]["name"] != before["nginx:1.26"] and replacement["spec"]["parallelism"] == 2
    assert replacement["metadata"]["labels"]["controller-revision-hash"] == childjobs.template_hash(edited)


async def test_a_list_job_gone_or_being_deleted_is_left_alone():
    h = Harness()
    assert await h.reconcile() is None
    deleting = ilpj()
    deleting["metadata"]["deletionTimestamp"] = "2026-11-24T10:00:00Z"
    deleting["metadata"]["finalizers"] = ["keep"]
    h = Harness([deleting])
    assert await h.reconcile() is None
    assert h.client.writes == []
