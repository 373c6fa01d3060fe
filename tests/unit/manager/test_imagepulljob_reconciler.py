"""ImagePullJobReconciler against fake caches and a recording client: which NodeImages it tags, the status
it writes, and how a finished job loses its finalizer and expires."""

from __future__ import annotations

import pytest

from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES
from kruise.manager.controllers.imagepulljob.controller import jobs_of
from kruise.manager.controllers.imagepulljob.reconciler import RESYNC_SECONDS, ImagePullJobReconciler
from tests.kit import FakeInformer, RecordingClient

NS = "default"
KEY = f"{NS}/warm"
PROTECTION = "apps.kruise.io/deletion-protection"
NODES = ("node-1", "node-2", "node-3")


def job(name="warm", *, finalizers=(PROTECTION,), status=None, deleting=False, **spec):
    meta = {"name": name, "namespace": NS, "uid": f"uid-{name}", "finalizers": list(finalizers)}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-22T22:00:00Z"
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": meta,
        "spec": {
            "image": "nginx:1.26",
            "parallelism": 2,
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 30},
            "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 60},
            **spec,
        },
    }
    if status is not None:
        body["status"] = status
    return body


def node_image(name, labels=None):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {},
    }


def tagged(images):
    return sorted(n["metadata"]["name"] for n in images if "nginx" in (n.get("spec") or {}).get("images", {}))


class Harness:
    """A reconciler over caches that follow the recording client's store (the watch, without the wait)."""

    def __init__(self, jobs=(), images=None, pods=()):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.jobs, self.images, self.pods = FakeInformer(), FakeInformer(), FakeInformer(pods)
        self.client.put(IMAGEPULLJOBS, *jobs)
        self.client.put(NODEIMAGES, *(images if images is not None else [node_image(n) for n in NODES]))
        self.client.sync(IMAGEPULLJOBS, self.jobs)
        self.client.sync(NODEIMAGES, self.images)
        self.reconciler = ImagePullJobReconciler(
            self.client, jobs=self.jobs, node_images=self.images, pods=self.pods, wall=self.clock.wall
        )

    async def reconcile(self, key=KEY):
        result = await self.reconciler.reconcile(key)
        for informer in (self.jobs, self.images, self.pods):
            informer.assert_unmodified()
        return result

    def report(self, node, phase):
        """What kruise-daemon writes on that node once it pulled (or failed) the tag."""
        image = self.client.object(NODEIMAGES, node)
        version = image["spec"]["images"]["nginx"]["tags"][0]["version"]
        image["status"] = {
            "imageStatuses": {"nginx": {"tags": [{"tag": "1.26", "phase": phase, "version": version}]}}
        }
        self.client.put(NODEIMAGES, image)

    def status(self, name="warm"):
        return self.client.object(IMAGEPULLJOBS, name, NS).get("status") or {}

    def writes(self, verb=None, resource=None):
        return [
            c for c in self.client.writes if (verb in (None, c.verb)) and (resource in (None, c.resource))
        ]


async def test_the_first_pass_tags_parallelism_nodes_and_writes_a_running_status():
    h = Harness([job()])
    assert await h.reconcile() == Result(requeue_after=RESYNC_SECONDS)
    updates = h.writes("update", NODEIMAGES)
    assert [c.name for c in updates] == ["node-1", "node-2"]
    assert all(c.body["metadata"]["resourceVersion"] for c in updates)  # compare-and-swap PUTs
    (tag,) = updates[0].body["spec"]["images"]["nginx"]["tags"]
    now = rfc3339(h.clock.wall())
    assert tag == {
        "tag": "1.26",
        "createdAt": now,
        "pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 1, "ttlSecondsAfterFinished": 30 + 300},
        "imagePullPolicy": "IfNotPresent",
        "ownerReferences": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "ImagePullJob",
                "name": "warm",
                "namespace": NS,
                "uid": "uid-warm",
            }
        ],
        "version": 0,
    }
    (status_call,) = h.writes("patch", IMAGEPULLJOBS)
    assert (status_call.subresource, status_call.patch_type) == ("status", PatchType.MERGE)
    assert status_call.body == {
        "status": {
            "startTime": now,
            "desired": 3,
            "active": 0,
            "succeeded": 0,
            "failed": 0,
            "message": "job is running, no progress",
        }
    }
    assert tagged(h.images.list()) == ["node-1", "node-2"]


async def test_the_job_runs_to_completion_then_loses_its_finalizer_and_expires():
    h = Harness([job()])
    await h.reconcile()
    started = h.status()["startTime"]
    h.client.clear()

    assert await h.reconcile() == Result(requeue_after=RESYNC_SECONDS)  # both tagged nodes still pulling
    assert h.writes("update") == []
    assert [c.body["status"]["active"] for c in h.writes("patch", IMAGEPULLJOBS)] == [2]
    h.client.clear()

    h.report("node-1", "Succeeded")
    h.clock.step(1)
    assert await h.reconcile() == Result(requeue_after=RESYNC_SECONDS)
    assert [c.name for c in h.writes("update", NODEIMAGES)] == ["node-3"]
    assert h.status()["message"] == "job is running, progress 33.3%"
    assert h.status()["startTime"] == started  # kept from the first pass

    h.report("node-2", "Failed")
    h.report("node-3", "Succeeded")
    h.client.clear()
    assert await h.reconcile() is None
    done = h.status()
    assert (done["desired"], done["active"], done["succeeded"], done["failed"]) == (3, 0, 2, 1)
    assert done["failedNodes"] == ["node-2"] and done["message"] == "job has completed"
    assert done["completionTime"] == rfc3339(h.clock.wall())
    h.client.clear()

    h.clock.step(10)
    assert await h.reconcile() == Result(requeue_after=pytest.approx(20.0))
    (finalizer,) = h.client.writes
    assert (finalizer.verb, finalizer.subresource) == ("patch", None)
    assert finalizer.body["metadata"]["finalizers"] == []
    assert finalizer.body["metadata"]["resourceVersion"]  # never drops someone else's newer finalizer
    h.client.clear()

    h.clock.step(20)
    assert await h.reconcile() is None
    assert [(c.verb, c.name) for c in h.client.writes] == [("delete", "warm")]
    assert h.jobs.get(KEY) is None


async def test_an_unchanged_status_is_not_rewritten():
    h = Harness([job(selector={"names": ["node-2"]})])
    await h.reconcile()
    await h.reconcile()  # active 0 -> 1
    h.client.clear()
    assert await h.reconcile() == Result(requeue_after=RESYNC_SECONDS)
    assert h.client.writes == []


async def test_past_the_active_deadline_every_unfinished_node_fails():
    h = Harness([job(completionPolicy={"type": "Always", "activeDeadlineSeconds": 10})])
    await h.reconcile()
    h.report("node-1", "Succeeded")
    h.clock.step(11)
    h.client.clear()
    assert await h.reconcile() is None
    assert h.writes("update") == []  # no new nodes once the deadline passed
    status = h.status()
    assert status["message"] == "job exceeds activeDeadlineSeconds"
    assert (status["active"], status["succeeded"], status["failed"]) == (0, 1, 2)
    assert status["failedNodes"] == ["node-2", "node-3"]
    assert status["completionTime"] == rfc3339(h.clock.wall())


async def test_a_never_job_ignores_the_deadline_and_keeps_running():
    h = Harness([job(parallelism=5, completionPolicy={"type": "Never", "activeDeadlineSeconds": 10})])
    await h.reconcile()
    for node in NODES:
        h.report(node, "Succeeded")
    h.clock.step(60)
    assert await h.reconcile() == Result(requeue_after=RESYNC_SECONDS)
    assert "completionTime" not in h.status() and h.status()["succeeded"] == 3
    # a node that appears later gets the tag too
    h.client.put(NODEIMAGES, node_image("node-4"))
    h.client.clear()
    await h.reconcile()
    assert [c.name for c in h.writes("update", NODEIMAGES)] == ["node-4"]


async def test_a_conflicting_nodeimage_write_is_skipped_and_the_rest_go_on():
    h = Harness([job()])
    h.client.fail_next("update", NODEIMAGES, "node-1", error=Conflict)
    assert await h.reconcile() == Result(requeue_after=RESYNC_SECONDS)
    assert [(c.name, c.succeeded) for c in h.writes("update")] == [("node-1", False), ("node-2", True)]
    h.client.clear()
    await h.reconcile()  # node-2 is active: one slot left, node-1 gets it now
    assert [c.name for c in h.writes("update")] == ["node-1"]


async def test_node_selector_by_labels_and_pod_selector_pick_the_targets():
    images = [
        node_image("node-1", {"pool": "gpu"}),
        node_image("node-2"),
        node_image("node-3", {"pool": "gpu"}),
    ]
    h = Harness([job(selector={"matchLabels": {"pool": "gpu"}}, parallelism=5)], images)
    await h.reconcile()
    assert [c.name for c in h.writes("update")] == ["node-1", "node-3"]

    pods = [
        {
            "metadata": {"name": "a", "namespace": NS, "labels": {"app": "web"}},
            "spec": {"nodeName": "node-2"},
        },
        {
            "metadata": {"name": "b", "namespace": "other", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-3"},
        },
    ]
    h2 = Harness([job(podSelector={"matchLabels": {"app": "web"}}, parallelism=5)], pods=pods)
    await h2.reconcile()
    assert [c.name for c in h2.writes("update")] == ["node-2"]


async def test_a_terminating_job_only_loses_its_finalizer():
    h = Harness([job(deleting=True)])
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.name) == ("patch", IMAGEPULLJOBS, "warm")
    assert call.body["metadata"]["finalizers"] == []
    assert h.jobs.get(KEY) is None  # the last finalizer gone: the apiserver removed it


async def test_a_finished_job_without_ttl_or_finalizer_needs_nothing():
    status = {"completionTime": "2026-11-22T22:00:00Z", "startTime": "2026-11-22T21:00:00Z"}
    h = Harness([job(finalizers=(), status=status, completionPolicy={"type": "Always"})])
    assert await h.reconcile() is None
    assert h.client.calls == []


@pytest.mark.parametrize("error", [Conflict, NotFound])
async def test_a_lost_race_on_the_finalizer_is_left_to_the_next_event(error):
    h = Harness([job(deleting=True)])
    h.client.fail_next("patch", IMAGEPULLJOBS, "warm", NS, error=error)
    assert await h.reconcile() is None
    assert [type(c.error) for c in h.client.writes] == [error]


async def test_a_job_gone_from_the_cache_is_a_no_op():
    h = Harness()
    assert await h.reconcile() is None
    assert h.client.calls == []


def test_jobs_of_reads_the_owners_of_every_tag():
    def tag(name, *owners):
        refs = [
            {"kind": kind, "name": job_name, **({"namespace": ns} if ns else {})}
            for kind, ns, job_name in owners
        ]
        return {"tags": [{"tag": name, "ownerReferences": refs}]}

    image = node_image("node-1")
    image["spec"] = {
        "images": {
            "nginx": tag("1.26", ("ImagePullJob", "b", "j2"), ("ImagePullJob", "a", "j1")),
            "redis": tag(
                "7",
                ("ImagePullJob", "a", "j1"),
                ("ImageListPullJob", "a", "other"),
                ("ImagePullJob", None, "no-namespace"),
            ),
        }
    }
    assert jobs_of(image) == ["a/j1", "b/j2"]
    assert jobs_of(node_image("node-2")) == []
