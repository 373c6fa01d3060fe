"""SidecarSetReconciler against fake caches and a recording client: status, which pods it writes, and that
a conflicting pod write is recomputed on a fresh read (the shared in-place writer), never applied stale."""

from __future__ import annotations

import copy
import json

import pytest

from kruise.control.sidecarset import update
from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.control.sidecarset.injection import inject
from kruise.kube.clock import FakeClock
from kruise.kube.errors import Conflict, Forbidden
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import CONTROLLER_REVISIONS, PODS, SIDECARSETS
from kruise.manager.controllers.sidecarset.history import SidecarSetHistory
from kruise.manager.controllers.sidecarset.reconciler import SidecarSetReconciler
from kruise.manager.writers.inplace import InPlaceWriter
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"


def sidecarset(image: str = "busybox:1.34", **strategy) -> dict:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": "logs", "uid": "ss-uid", "generation": 1},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1, **strategy},
            "containers": [{"name": "sidecar1", "image": image, "command": ["sleep", "999d"]}],
        },
    }
    set_hash_annotations(body)
    return body


def running_pod(name: str, injected_from: dict) -> dict:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": {"app": "web"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "nginx:1.27"}]},
    }
    assert inject(body, [injected_from])
    body["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}],
        "containerStatuses": [
            {"name": c["name"], "image": c["image"], "imageID": f"sha-{c['image']}", "ready": True}
            for c in body["spec"]["containers"]
        ],
    }
    return body


class Harness:
    def __init__(self, current: dict, pods: list[dict]) -> None:
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.recorder = RecordingEventRecorder()
        self.sidecarsets = FakeInformer([current])
        self.pods = FakeInformer()
        self.client.put(SIDECARSETS, current)
        self.client.put(PODS, *pods)
        self.client.sync(PODS, self.pods)
        self.revisions = FakeInformer()
        self.client.sync(CONTROLLER_REVISIONS, self.revisions)
        self.client.clear()
        expectations = ResourceVersionExpectations(self.clock)
        self.reconciler = SidecarSetReconciler(
            self.client,
            self.recorder,
            InPlaceWriter(self.client, expectations),
            expectations,
            SidecarSetHistory(self.client, self.revisions, "kruise-system"),
            sidecarsets=self.sidecarsets,
            pods=self.pods,
            namespaces=FakeInformer([{"metadata": {"name": NS}}]),
            wall=self.clock.wall,
        )

    async def reconcile(self):
        result = await self.reconciler.reconcile("logs")
        self.sidecarsets.assert_unmodified()
        return result

    def pod_updates(self) -> list[str]:
        return [c.name for c in self.client.calls_to("update", PODS) if c.succeeded]


async def test_all_pods_current_writes_status_only() -> None:
    current = sidecarset()
    h = Harness(current, [running_pod("p1", current), running_pod("p2", current)])
    assert await h.reconcile() is None
    revision_write, status_write = h.client.writes
    assert revision_write.verb == "create" and revision_write.resource == CONTROLLER_REVISIONS
    assert status_write.resource == SIDECARSETS and status_write.subresource == "status"
    (revision,) = h.client.objects(CONTROLLER_REVISIONS)
    assert status_write.body["status"] == {
        "observedGeneration": 1,
        "matchedPods": 2,
        "updatedPods": 2,
        "readyPods": 2,
        "updatedReadyPods": 2,
        "latestRevision": revision["metadata"]["name"],
        "collisionCount": 0,
    }
    h.client.clear()
    h.sidecarsets.add({**current, "status": status_write.body["status"]})
    await h.reconcile()
    assert h.client.writes == []  # unchanged status is not written again


async def test_new_image_updates_max_unavailable_pods_in_place() -> None:
    old = sidecarset("busybox:1.34")
    new = sidecarset("busybox:1.35")
    h = Harness(new, [running_pod("p1", old), running_pod("p2", old)])
    await h.reconcile()
    assert h.pod_updates() == ["p1"]  # maxUnavailable 1: one pod at a time, by name among the ready ones
    updated = h.client.object(PODS, "p1", NS)
    images = {c["name"]: c["image"] for c in updated["spec"]["containers"]}
    assert images == {"sidecar1": "busybox:1.35", "web": "nginx:1.27"}
    assert update.is_updated(updated, new)
    assert h.client.object(PODS, "p1", NS)["metadata"]["uid"] == "uid-p1"


async def test_pod_updated_in_place_records_the_revision_registered_in_the_same_pass() -> None:
    """Upstream e2e "sidecarSet InjectionStrategy.Revision checker": the cache still holds the SidecarSet
    with the old `status.latestRevision` when the pass writes the pod; the pod must name the new one."""
    old = sidecarset("busybox:1.34")
    old["status"] = {"latestRevision": "logs-old"}
    p1 = running_pod("p1", old)
    assert json.loads(p1["metadata"]["annotations"]["kruise.io/sidecarset-hash"])["logs"][
        "controllerRevision"
    ] == ("logs-old")
    new = {**sidecarset("busybox:1.35"), "status": {"latestRevision": "logs-old"}}
    h = Harness(new, [p1])
    await h.reconcile()
    (revision,) = h.client.objects(CONTROLLER_REVISIONS)
    (status_write,) = h.client.calls_to("patch", SIDECARSETS)
    assert status_write.body["status"]["latestRevision"] == revision["metadata"]["name"] != "logs-old"
    assert h.pod_updates() == ["p1"]
    record = json.loads(
        h.client.object(PODS, "p1", NS)["metadata"]["annotations"]["kruise.io/sidecarset-hash"]
    )
    assert record["logs"]["controllerRevision"] == revision["metadata"]["name"]


async def test_conflict_rereads_the_pod_and_recomputes() -> None:
    old = sidecarset("busybox:1.34")
    new = sidecarset("busybox:1.35")
    h = Harness(new, [running_pod("p1", old)])
    h.client.fail_next("update", PODS, "p1", NS, error=Conflict)
    await h.reconcile()
    updates = h.client.calls_to("update", PODS)
    assert [c.succeeded for c in updates] == [False, True]
    assert [c.verb for c in h.client.calls_to("get", PODS)] == ["get"]  # the fresh read between the two
    assert update.is_updated(h.client.object(PODS, "p1", NS), new)


async def test_paused_and_not_update_write_no_pod() -> None:
    old = sidecarset("busybox:1.34")
    for strategy in ({"paused": True}, {"type": "NotUpdate"}):
        new = sidecarset("busybox:1.35", **strategy)
        h = Harness(new, [running_pod("p1", old)])
        await h.reconcile()
        assert h.pod_updates() == [], strategy


async def test_change_beyond_images_marks_pods_not_upgradable() -> None:
    old = sidecarset("busybox:1.34")
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "busybox:1.35"
    new["spec"]["containers"][0]["env"] = [{"name": "LEVEL", "value": "debug"}]
    set_hash_annotations(new)
    h = Harness(new, [running_pod("p1", old)])
    await h.reconcile()
    assert h.pod_updates() == []
    assert "NotUpgradablePods" in h.recorder.reasons()
    conditions = h.client.object(PODS, "p1", NS)["status"]["conditions"]
    upgradable = next(c for c in conditions if c["type"] == "SidecarSetUpgradable")
    assert upgradable["status"] == "False"


async def test_deleted_sidecarset_is_ignored() -> None:
    current = sidecarset()
    h = Harness(current, [running_pod("p1", current)])
    h.sidecarsets.remove("logs")
    assert await h.reconcile() is None
    assert h.client.calls == []


PUB_REFUSAL = (
    'admission webhook "vpod.kb.io" denied the request: podunavailablebudget.policy.kruise.io '
    '"web-pub" is forbidden: pub unavailable allowed is negative'
)


async def test_pub_refusal_ends_the_pass_and_retries_in_a_second() -> None:
    """Issue 31: a refused pass is not an error (whose backoff doubles per refusal) but a 1 s requeue."""
    old = sidecarset("busybox:1.34")
    new = sidecarset("busybox:1.35", maxUnavailable="100%")
    h = Harness(new, [running_pod("p1", old), running_pod("p2", old), running_pod("p3", old)])
    for name in ("p1", "p2", "p3"):
        h.client.fail_next("update", PODS, name, NS, error=Forbidden(PUB_REFUSAL))
    result = await h.reconcile()
    assert result is not None and result.requeue_after == 1.0
    assert len(h.client.calls_to("update", PODS)) == 1  # the pass stopped at the first refusal


async def test_other_forbidden_pod_writes_stay_errors() -> None:
    old = sidecarset("busybox:1.34")
    h = Harness(sidecarset("busybox:1.35"), [running_pod("p1", old)])
    h.client.fail_next("update", PODS, "p1", NS, error=Forbidden('pods "p1" is forbidden: no RBAC'))
    with pytest.raises(Forbidden):
        await h.reconcile()
