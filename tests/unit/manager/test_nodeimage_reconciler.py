"""NodeImageReconciler against fake caches and a recording client: which NodeImage writes it makes."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, Conflict, NotFound
from kruise.kube.resources import NODEIMAGES
from kruise.manager.controllers.nodeimage.reconciler import FAKE_LABEL, NodeImageReconciler, ready_since
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

DELAY = 30.0


def node(name="node-1", *, labels=None, ready=True, ready_for=60.0, clock=None, deleting=False):
    clock = clock or FakeClock()
    meta = {"name": name, "uid": f"uid-{name}", "labels": dict(labels or {"kubernetes.io/hostname": name})}
    if deleting:
        meta["deletionTimestamp"] = rfc3339(clock.wall())
        meta["finalizers"] = ["example.com/hold"]
    since = clock.wall() - timedelta(seconds=ready_for)
    condition = {
        "type": "Ready",
        "status": "True" if ready else "False",
        "lastTransitionTime": rfc3339(since),
    }
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"conditions": [condition]}}


def node_image(name="node-1", *, labels=None, deleting=False):
    meta = {"name": name, "labels": dict(labels or {})}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-22T22:00:00Z"
        meta["finalizers"] = ["example.com/hold"]
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodeImage", "metadata": meta, "spec": {}}


class Harness:
    """A reconciler over fake caches; the client mirrors NodeImage writes into the cache."""

    def __init__(self, nodes=(), images=(), jobs=(), clock=None, secrets=()):
        self.clock = clock or FakeClock()
        self.client = RecordingClient(self.clock)
        self.nodes = FakeInformer(nodes)
        self.images = FakeInformer()
        self.jobs = FakeInformer(jobs)
        self.secrets = FakeInformer(secrets)
        self.recorder = RecordingEventRecorder("nodeimage-controller")
        self.client.put(NODEIMAGES, *images)
        self.client.sync(NODEIMAGES, self.images)
        self.client.clear()
        self.reconciler = NodeImageReconciler(
            self.client,
            nodes=self.nodes,
            node_images=self.images,
            jobs=self.jobs,
            secrets=self.secrets,
            recorder=self.recorder,
            creation_delay=DELAY,
            wall=self.clock.wall,
            rng=random.Random(7),
        )

    async def reconcile(self, name="node-1"):
        result = await self.reconciler.reconcile(name)
        self.nodes.assert_unmodified()
        return result


async def test_a_node_ready_past_the_delay_gets_a_nodeimage_with_its_labels():
    h = Harness([node(labels={"pool": "gpu", "zone": "a"}, ready_for=DELAY + 1)])
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.name, call.namespace) == ("create", NODEIMAGES, "node-1", None)
    assert call.body == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": "node-1", "labels": {"pool": "gpu", "zone": "a"}},
        "spec": {},
    }


async def test_a_recently_ready_node_is_requeued_for_the_rest_of_the_delay():
    h = Harness([node(ready_for=10.0)])
    assert await h.reconcile() == Result(requeue_after=pytest.approx(DELAY - 10.0))
    assert h.client.writes == []
    h.clock.step(DELAY - 10.0)
    assert await h.reconcile() is None
    assert [c.verb for c in h.client.writes] == ["create"]


@pytest.mark.parametrize("ready", [False, None])
async def test_a_node_that_is_not_ready_gets_nothing(ready):
    n = node(ready=bool(ready))
    if ready is None:
        n["status"] = {}  # no Ready condition reported yet
    h = Harness([n])
    assert await h.reconcile() is None
    assert h.client.calls == []


async def test_already_exists_from_a_racing_create_is_not_an_error():
    h = Harness([node()])
    h.client.fail_next("create", NODEIMAGES, "node-1", error=AlreadyExists)
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert isinstance(call.error, AlreadyExists)


async def test_labels_are_mirrored_and_stale_ones_removed():
    h = Harness(
        [node(labels={"pool": "gpu", "zone": "b"})],
        [node_image(labels={"pool": "gpu", "zone": "a", "old": "x"})],
    )
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.patch_type) == ("patch", PatchType.MERGE)
    assert call.body == {"metadata": {"labels": {"old": None, "pool": "gpu", "zone": "b"}}}
    assert h.images.get("node-1")["metadata"]["labels"] == {"pool": "gpu", "zone": "b"}
    h.client.clear()
    assert await h.reconcile() is None  # the cache caught up: nothing left to do
    assert h.client.writes == []


async def test_matching_labels_mean_no_write():
    h = Harness([node(labels={"pool": "gpu"})], [node_image(labels={"pool": "gpu"})])
    assert await h.reconcile() is None
    assert h.client.calls == []


async def test_a_fake_nodeimage_keeps_its_own_labels_and_outlives_its_node():
    fake = node_image(labels={FAKE_LABEL: "true"})
    h = Harness([node(labels={"pool": "gpu"})], [fake])
    assert await h.reconcile() is None
    h.nodes.remove("node-1")
    assert await h.reconcile() is None
    assert h.client.calls == []
    assert h.images.get("node-1") is not None


@pytest.mark.parametrize("node_state", ["gone", "terminating"])
async def test_the_nodeimage_is_deleted_with_its_node(node_state):
    nodes = [] if node_state == "gone" else [node(deleting=True)]
    h = Harness(nodes, [node_image(labels={"pool": "gpu"})])
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.name) == ("delete", NODEIMAGES, "node-1")
    assert h.images.get("node-1") is None


async def test_a_terminating_nodeimage_is_left_to_finish():
    h = Harness([], [node_image(deleting=True)])
    assert await h.reconcile() is None
    assert h.client.calls == []


async def test_not_found_on_delete_or_patch_means_someone_else_did_it():
    h = Harness([], [node_image()])
    h.client.fail_next("delete", NODEIMAGES, "node-1", error=NotFound)
    assert await h.reconcile() is None
    h2 = Harness([node(labels={"a": "1"})], [node_image(labels={"a": "0"})])
    h2.client.fail_next("patch", NODEIMAGES, "node-1", error=NotFound)
    assert await h2.reconcile() is None
    assert [(c.verb, type(c.error)) for c in h.client.writes + h2.client.writes] == [
        ("delete", NotFound),
        ("patch", NotFound),
    ]


async def test_other_write_errors_propagate_for_a_rate_limited_retry():
    h = Harness([node(labels={"a": "1"})], [node_image(labels={"a": "0"})])
    h.client.fail_next("patch", NODEIMAGES, "node-1")  # Conflict
    with pytest.raises(Conflict, match="Operation cannot be fulfilled"):
        await h.reconcile()


async def test_nothing_at_all_is_a_no_op():
    h = Harness()
    assert await h.reconcile("ghost") is None
    assert h.client.calls == []


def test_ready_since_reads_the_ready_transition():
    clock = FakeClock()
    assert ready_since(node(ready_for=5.0, clock=clock)) == clock.wall() - timedelta(seconds=5)
    assert ready_since(node(ready=False)) is None
    assert ready_since({"status": {"conditions": [{"type": "MemoryPressure", "status": "True"}]}}) is None


JOB = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "namespace": "ns", "name": "warm",
       "uid": "uid-warm"}  # fmt: skip


def job(uid="uid-warm"):
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
            "metadata": {"namespace": "ns", "name": "warm", "uid": uid}}  # fmt: skip


def with_tags(clock, *, ttl=300, finished_ago=None, labels=None, pulling=False):
    """A NodeImage holding nginx:1.25 (owned by JOB, the given TTL), finished `finished_ago` s ago
    (or, with `pulling`, reported Pulling by the daemon)."""
    image = node_image(labels=labels or {"kubernetes.io/hostname": "node-1"})
    tag = {"tag": "1.25", "version": 0, "createdAt": rfc3339(clock.wall() - timedelta(hours=1)),
           "ownerReferences": [JOB], "pullPolicy": {"ttlSecondsAfterFinished": ttl}}  # fmt: skip
    image["spec"] = {"images": {"nginx": {"tags": [tag]}}}
    if finished_ago is not None:
        done = rfc3339(clock.wall() - timedelta(seconds=finished_ago))
        image["status"] = {"imageStatuses": {"nginx": {"tags": [
            {"tag": "1.25", "version": 0, "phase": "Succeeded", "completionTime": done}]}}}  # fmt: skip
    elif pulling:
        image["status"] = {
            "imageStatuses": {"nginx": {"tags": [{"tag": "1.25", "version": 0, "phase": "Pulling"}]}}
        }
    return image


async def test_a_finished_tag_is_removed_when_its_ttl_runs_out_and_not_before():
    clock = FakeClock()
    h = Harness([node(clock=clock)], [with_tags(clock, ttl=300, finished_ago=100)], [job()], clock)
    assert await h.reconcile() == Result(requeue_after=pytest.approx(200.0))
    assert h.client.writes == []

    clock.step(200.0)
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.name) == ("update", NODEIMAGES, "node-1")
    assert call.body["spec"] == {"images": {}}
    # the write carried the cached resourceVersion, so a concurrent tag would make it conflict
    assert call.body["metadata"]["resourceVersion"]

    h.client.clear()
    assert await h.reconcile() is None  # the emptied NodeImage (from the cache) needs nothing
    assert h.client.writes == []


async def test_a_tag_still_pulling_has_no_ttl_clock_yet():
    clock = FakeClock()
    h = Harness([node(clock=clock)], [with_tags(clock, ttl=1, pulling=True)], [job()])
    assert await h.reconcile() is None
    assert h.client.writes == []


async def test_a_deleted_jobs_tag_goes_at_once():
    clock = FakeClock()
    h = Harness([node(clock=clock)], [with_tags(clock)], [])
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert call.body["spec"] == {"images": {}}


async def test_a_fake_nodeimage_without_a_node_is_still_pruned():
    clock = FakeClock()
    h = Harness([], [with_tags(clock, labels={FAKE_LABEL: "true"}, ttl=30, finished_ago=10)], [job()], clock)
    assert await h.reconcile() == Result(requeue_after=pytest.approx(20.0))
    assert h.client.writes == []


async def test_a_conflicting_spec_write_propagates_for_a_retry():
    clock = FakeClock()
    h = Harness([node(clock=clock)], [with_tags(clock)], [job(uid="uid-recreated")])
    h.client.fail_next("update", NODEIMAGES, "node-1")
    with pytest.raises(Conflict):
        await h.reconcile()


def secret(name, namespace="ns"):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": namespace, "name": name}}


async def test_pull_secret_references_whose_secret_is_gone_are_removed():
    clock = FakeClock()
    image = with_tags(clock, pulling=True)
    image["spec"]["images"]["nginx"]["pullSecrets"] = [
        {"namespace": "ns", "name": "here"},
        {"namespace": "ns", "name": "gone"},
    ]
    h = Harness([node(clock=clock)], [image], [job()], clock, secrets=[secret("here")])
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert call.body["spec"]["images"]["nginx"]["pullSecrets"] == [{"namespace": "ns", "name": "here"}]


async def test_an_unanswered_tag_is_failed_with_events_and_the_next_deadline_is_scheduled():
    clock = FakeClock()
    image = with_tags(clock)  # created an hour ago, no status at all
    tag = {"tag": "7", "version": 0, "createdAt": rfc3339(clock.wall() - timedelta(seconds=500)),
           "ownerReferences": [JOB], "pullPolicy": {}}  # fmt: skip
    image["spec"]["images"]["redis"] = {"tags": [tag]}
    h = Harness([node(clock=clock)], [image], [job()], clock)
    assert await h.reconcile() == Result(requeue_after=pytest.approx(100.0))  # redis:7 times out next
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.subresource) == ("patch", NODEIMAGES, "status")
    assert call.body["metadata"]["resourceVersion"]
    assert call.body["status"]["imageStatuses"] == {"nginx": {"tags": [{"tag": "1.25", "phase": "Failed",
        "completionTime": rfc3339(clock.wall()), "version": 0,
        "message": "node has not responded for a long time"}]}}  # fmt: skip
    assert (call.body["status"]["desired"], call.body["status"]["failed"]) == (2, 1)
    message = "Failed to pull image nginx:1.25 on node node-1 for node has not responded for a long time"
    assert [(e.key, e.involved["kind"], e.type, e.reason, e.message) for e in h.recorder.events] == [
        ("ns/warm", "ImagePullJob", "Warning", "PullImageFailed", message),
        ("node-1", "NodeImage", "Warning", "PullImageFailed", message),
    ]
    assert h.recorder.events[0].involved["uid"] == "uid-warm"


async def test_a_deadline_under_three_seconds_comes_back_in_three_to_five():
    clock = FakeClock()
    image = with_tags(clock)
    image["spec"]["images"]["nginx"]["tags"][0]["createdAt"] = rfc3339(clock.wall() - timedelta(seconds=599))
    h = Harness([node(clock=clock)], [image], [job()], clock)
    result = await h.reconcile()
    assert 3.0 <= result.requeue_after < 5.0
    assert h.client.writes == []


async def test_a_conflicting_status_write_propagates_for_a_retry():
    clock = FakeClock()
    h = Harness([node(clock=clock)], [with_tags(clock)], [job()], clock)
    h.client.fail_next("patch", NODEIMAGES, "node-1")
    with pytest.raises(Conflict):
        await h.reconcile()
