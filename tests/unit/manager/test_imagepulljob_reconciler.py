"""ImagePullJobReconciler against fake caches and a recording client: which NodeImages it tags, the status
it writes, and how a finished job loses its finalizer and expires."""

from __future__ import annotations

import pytest

from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import IMAGEPULLJOBS, NAMESPACES, NODEIMAGES, SECRETS
from kruise.manager.controllers.imagepulljob.controller import jobs_of
from kruise.manager.controllers.imagepulljob.reconciler import RESYNC_SECONDS, ImagePullJobReconciler
from kruise.manager.controllers.imagepulljob.secrets import PullSecretSync
from tests.kit import FakeInformer, RecordingClient

NS = "default"
KEY = f"{NS}/warm"
PROTECTION = "apps.kruise.io/deletion-protection"
NODES = ("node-1", "node-2", "node-3")
DAEMON_NS = "kruise-daemon-config"


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

    def __init__(self, jobs=(), images=None, pods=(), secrets=()):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.jobs, self.images, self.pods = FakeInformer(), FakeInformer(), FakeInformer(pods)
        self.secrets = FakeInformer()
        self.client.put(IMAGEPULLJOBS, *jobs)
        self.client.put(NODEIMAGES, *(images if images is not None else [node_image(n) for n in NODES]))
        self.client.put(NAMESPACES, {"metadata": {"name": DAEMON_NS}})
        self.client.put(SECRETS, *secrets)
        self.client.sync(IMAGEPULLJOBS, self.jobs)
        self.client.sync(NODEIMAGES, self.images)
        self.client.sync(SECRETS, self.secrets)
        self.reconciler = ImagePullJobReconciler(
            self.client,
            jobs=self.jobs,
            node_images=self.images,
            pods=self.pods,
            pull_secrets=PullSecretSync(self.client, self.secrets, DAEMON_NS),
            wall=self.clock.wall,
        )

    async def reconcile(self, key=KEY):
        result = await self.reconciler.reconcile(key)
        for informer in (self.jobs, self.images, self.pods, self.secrets):
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


# ---- pull secrets: copies in kruise-daemon's namespace, as upstream 1.9 ----

SOURCE = {
    "metadata": {"name": "reg", "namespace": NS, "labels": {"team": "a"}},
    "type": "kubernetes.io/dockerconfigjson",
    "data": {".dockerconfigjson": "e30="},
}


def copies(h):
    return [s for s in h.client.objects(SECRETS) if s["metadata"]["namespace"] == DAEMON_NS]


def beta_refs(h, node):
    """The node's pull secret references as a v1beta1 reader sees them (modes from the annotation)."""
    from kruise.control.nodeimage.modes import as_v1beta1

    return as_v1beta1(h.client.object(NODEIMAGES, node))["spec"]["images"]["nginx"]["pullSecrets"]


async def test_a_job_s_pull_secret_is_copied_into_the_daemon_namespace_and_the_nodeimage_points_at_it():
    h = Harness([job(pullSecrets=["reg"])], secrets=[SOURCE])
    await h.reconcile()
    (copy,) = copies(h)
    name = copy["metadata"]["name"]
    assert name.startswith("reg-") and len(name) == len("reg-") + 6
    assert copy["metadata"]["annotations"] == {
        "imagepulljobs.kruise.io/references": KEY,
        "imagepulljobs.kruise.io/source-key": f"{NS}/reg",
        "imagepulljobs.kruise.io/mode": "batch",
    }
    assert copy["metadata"]["labels"] == {"team": "a"}
    assert (copy["type"], copy["data"]) == (SOURCE["type"], SOURCE["data"])
    written = h.client.object(NODEIMAGES, "node-1")["spec"]["images"]["nginx"]["pullSecrets"]
    assert written == [{"namespace": DAEMON_NS, "name": name}]  # v1alpha1 has no mode ...
    # ... and a v1beta1 reader sees the mode
    assert beta_refs(h, "node-1") == [{"namespace": DAEMON_NS, "name": name, "mode": "batch"}]


async def test_two_jobs_share_one_copy_and_a_finished_job_releases_it_before_losing_its_finalizer():
    two = {"names": ["node-1", "node-2"]}
    h = Harness(
        [job(pullSecrets=["reg"], selector=two), job("other", pullSecrets=["reg"], selector=two)],
        secrets=[SOURCE],
    )
    await h.reconcile()
    await h.reconcile(f"{NS}/other")
    (copy,) = copies(h)
    assert copy["metadata"]["annotations"]["imagepulljobs.kruise.io/references"] == f"{NS}/other,{KEY}"
    for node in ("node-1", "node-2"):
        h.report(node, "Succeeded")
    await h.reconcile()  # writes the completion
    await h.reconcile()  # the finished job lets go
    (copy,) = copies(h)
    assert copy["metadata"]["annotations"]["imagepulljobs.kruise.io/references"] == f"{NS}/other"
    assert h.client.object(IMAGEPULLJOBS, "warm", NS)["metadata"]["finalizers"] == []
    other = h.client.object(IMAGEPULLJOBS, "other", NS)
    other["metadata"]["deletionTimestamp"] = "2026-11-22T22:00:00Z"
    h.client.put(IMAGEPULLJOBS, other)
    h.client.sync(IMAGEPULLJOBS, h.jobs)
    await h.reconcile(f"{NS}/other")
    assert copies(h) == []  # the last reference gone: the copy is deleted
    assert h.client.object(IMAGEPULLJOBS, "other", NS) is None  # and then the finalizer, so the job goes


async def test_a_copy_follows_its_source_and_a_dropped_secret_is_released():
    h = Harness([job(pullSecrets=["reg"])], secrets=[SOURCE])
    await h.reconcile()
    changed = h.client.object(SECRETS, "reg", NS)
    changed["data"] = {".dockerconfigjson": "bmV3"}
    h.client.put(SECRETS, changed)
    await h.reconcile()
    assert copies(h)[0]["data"] == {".dockerconfigjson": "bmV3"}
    dropped = h.client.object(IMAGEPULLJOBS, "warm", NS)
    dropped["spec"]["pullSecrets"] = []
    h.client.put(IMAGEPULLJOBS, dropped)
    h.client.sync(IMAGEPULLJOBS, h.jobs)
    await h.reconcile()
    assert copies(h) == []


async def test_a_job_in_the_daemon_namespace_references_its_secrets_as_they_are():
    own = {**SOURCE, "metadata": {"name": "reg", "namespace": DAEMON_NS}}
    local = job(pullSecrets=["reg"])
    local["metadata"]["namespace"] = DAEMON_NS
    h = Harness([local], secrets=[own])
    await h.reconcile(f"{DAEMON_NS}/warm")
    assert copies(h) == [h.client.object(SECRETS, "reg", DAEMON_NS)]
    assert beta_refs(h, "node-1") == [{"namespace": DAEMON_NS, "name": "reg"}]


async def test_without_the_daemon_namespace_the_job_waits():
    from kruise.manager.controllers.imagepulljob.secrets import NamespaceNotActive

    h = Harness([job(pullSecrets=["reg"])], secrets=[SOURCE])
    await h.client.delete(NAMESPACES, DAEMON_NS)
    with pytest.raises(NamespaceNotActive, match="kruise-daemon-config"):
        await h.reconcile()
    assert h.writes("update", NODEIMAGES) == []
