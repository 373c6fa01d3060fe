"""DaemonSetReconciler against fake caches and a recording client, no emulator: the first pass (revision,
one pod per node), the wait for its own creates, a rolling update within maxUnavailable, a failed delete
handed back to the queue, and an in-place update whose object write is retried after a conflict."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kruise.api import daemonset as daemonset_api
from kruise.api.features import FeatureGates
from kruise.control.common.nodeeligibility import target_node_name
from kruise.control.common.podstatus import AVAILABILITY_TICK
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.resources import ADVANCED_DAEMONSETS, CONTROLLER_REVISIONS, PODS
from kruise.manager.controllers.daemonset.reconciler import DaemonSetReconciler
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"
NAME = "ds"
HASH = "controller-revision-hash"


def daemonset(image: str = "nginx:1", generation: int = 1, **rolling) -> dict:
    """A DaemonSet as the webhook would store it (defaults applied)."""
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "ds-uid",
            "generation": generation,
            "resourceVersion": str(generation),
        },
        "spec": {
            "selector": {"matchLabels": {"app": NAME}},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, **rolling}},
        },
    }
    model = daemonset_api.DaemonSet.model_validate(body)
    daemonset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


def node(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"kubernetes.io/hostname": name}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


class Harness:
    def __init__(self, ds: dict, nodes: int = 3) -> None:
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.recorder = RecordingEventRecorder()
        self.daemonsets = FakeInformer([ds])
        self.nodes = FakeInformer([node(f"node-{i}") for i in range(1, nodes + 1)])
        self.pods, self.revisions = FakeInformer(), FakeInformer()
        self.client.put(ADVANCED_DAEMONSETS, ds)
        self.client.sync(PODS, self.pods)
        self.client.sync(CONTROLLER_REVISIONS, self.revisions)
        self.scale = ScaleExpectations(self.clock)
        self.rv = ResourceVersionExpectations(self.clock)
        self.reconciler = DaemonSetReconciler(
            self.client,
            self.recorder,
            FeatureGates(env={}),
            daemonsets=self.daemonsets,
            pods=self.pods,
            nodes=self.nodes,
            revisions=self.revisions,
            scale_expectations=self.scale,
            rv_expectations=self.rv,
            wall=self.clock.wall,
            monotonic=self.clock.now,
        )

    async def reconcile(self) -> Result | None:
        result = await self.reconciler.reconcile(f"{NS}/{NAME}")
        for cache in (self.daemonsets, self.nodes, self.pods, self.revisions):
            cache.assert_unmodified()
        return result

    def observe_pods(self, *deleted: str) -> None:
        """What the controller's pod handler does when the informer delivers our creates (expected
        per target node) and the deletes of `deleted` (expected per pod name)."""
        key = f"{NS}/{NAME}"
        for pod in self.pods.list():
            self.scale.observe(key, ScaleExpectations.CREATE, target_node_name(pod) or "")
            self.rv.observe(pod)
        for name in deleted:
            self.scale.observe(key, ScaleExpectations.DELETE, name)

    def make_ready(self) -> None:
        """The kubelet's part: every pod bound to its node, running and ready."""
        for pod in self.client.objects(PODS):
            pod["spec"]["nodeName"] = target_node_name(pod)
            pod["status"] = {
                "phase": "Running",
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T22:00:00Z"},
                    {"type": "InPlaceUpdateReady", "status": "True"},
                ],
                "containerStatuses": [
                    {"name": c["name"], "image": c["image"], "imageID": f"id-{c['image']}", "ready": True}
                    for c in pod["spec"]["containers"]
                ],
            }
            self.client.put(PODS, pod)
            self.pods.add(self.client.object(PODS, pod["metadata"]["name"], NS))

    def roll_to(self, ds: dict) -> None:
        """The user's update, as the watch delivers it."""
        self.daemonsets.add(ds)
        self.client.put(ADVANCED_DAEMONSETS, ds)
        self.client.clear()
        self.recorder.events.clear()


async def settled(ds: dict, nodes: int = 3) -> Harness:
    """A harness whose first pass ran and whose pods are observed, running and ready."""
    h = Harness(ds, nodes)
    await h.reconcile()
    h.observe_pods()
    h.make_ready()
    await h.reconcile()
    return h


async def test_first_pass_writes_the_revision_and_one_pod_per_node() -> None:
    h = Harness(daemonset(), nodes=3)
    await h.reconcile()

    (revision,) = h.client.objects(CONTROLLER_REVISIONS)
    hash_ = revision["metadata"]["labels"][HASH]
    assert revision["metadata"]["name"] == f"{NAME}-{hash_}"
    assert revision["metadata"]["ownerReferences"][0]["uid"] == "ds-uid"
    creates = h.client.calls_to("create", PODS)
    assert len(creates) == 3
    assert all(c.body["metadata"]["generateName"] == f"{NAME}-" for c in creates)
    pods = h.client.objects(PODS)
    assert sorted(target_node_name(p) for p in pods) == ["node-1", "node-2", "node-3"]
    for pod in pods:
        assert pod["metadata"]["labels"] == {"app": NAME, HASH: hash_}
        owner = pod["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("DaemonSet", "ds-uid", True)
    assert sorted(e.message for e in h.recorder.events if e.reason == "SuccessfulCreate") == sorted(
        f"Created pod: {p['metadata']['name']}" for p in pods
    )
    (status,) = h.client.calls_to("patch", ADVANCED_DAEMONSETS, NAME, subresource="status")
    assert status.body["status"]["desiredNumberScheduled"] == 3
    assert status.body["status"]["daemonSetHash"] == hash_
    assert "observedGeneration" not in status.body["status"]  # the pass ended waiting for its creates


async def test_a_pass_waits_for_its_own_creates_to_reach_the_cache() -> None:
    h = Harness(daemonset(), nodes=2)
    await h.reconcile()
    h.client.clear()
    # the pods are in the cache, but the handler has not counted them: the next pass must not act again
    result = await h.reconcile()
    assert isinstance(result, Result) and result.requeue_after
    assert [c for c in h.client.writes if c.resource in (PODS, CONTROLLER_REVISIONS)] == []

    h.observe_pods()
    h.client.clear()
    await h.reconcile()
    assert [c for c in h.client.writes if c.resource in (PODS, CONTROLLER_REVISIONS)] == []
    (status,) = h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status")
    assert status.body["status"]["observedGeneration"] == 1


async def test_image_change_deletes_max_unavailable_old_pods_and_waits_for_the_delete() -> None:
    h = await settled(daemonset(image="nginx:1"), nodes=3)
    old_pods = {p["metadata"]["name"] for p in h.client.objects(PODS)}
    (old_hash,) = {p["metadata"]["labels"][HASH] for p in h.client.objects(PODS)}
    h.roll_to(daemonset(image="nginx:2", generation=2))
    await h.reconcile()

    revisions = h.client.objects(CONTROLLER_REVISIONS)
    assert len(revisions) == 2
    (delete,) = h.client.calls_to("delete", PODS)  # maxUnavailable 1: one old pod at a time
    assert delete.name in old_pods
    assert h.client.calls_to("create", PODS) == []
    assert [(e.reason, e.message) for e in h.recorder.events] == [
        ("SuccessfulDelete", f"Deleted pod: {delete.name}")
    ]

    # until the informer reports the delete, a second pass deletes nothing more
    h.client.clear()
    await h.reconcile()
    assert h.client.calls_to("delete", PODS) == [] and h.client.calls_to("create", PODS) == []

    # once it does, the emptied node gets a pod of the new revision
    h.observe_pods(delete.name)
    h.client.clear()
    await h.reconcile()
    (create,) = h.client.calls_to("create", PODS)
    (new_hash,) = {r["metadata"]["labels"][HASH] for r in revisions} - {old_hash}
    assert create.body["metadata"]["labels"][HASH] == new_hash
    assert target_node_name(create.body) not in {
        target_node_name(p) for p in h.client.objects(PODS) if p["metadata"]["name"] != create.name
    }


async def test_a_failed_delete_is_reported_and_retried_by_the_next_pass() -> None:
    h = await settled(daemonset(image="nginx:1"), nodes=1)
    (victim,) = (p["metadata"]["name"] for p in h.client.objects(PODS))
    h.roll_to(daemonset(image="nginx:2", generation=2))
    h.client.fail_next("delete", PODS, victim, NS, error=Conflict)

    with pytest.raises(Conflict):  # the controller requeues the key with backoff
        await h.reconcile()
    assert [(c.name, c.succeeded) for c in h.client.calls_to("delete", PODS)] == [(victim, False)]
    assert h.recorder.reasons() == ["FailedDelete"]

    # the failed delete is no longer expected, so the retry is not stuck behind it
    h.client.clear()
    await h.reconcile()
    assert [(c.name, c.succeeded) for c in h.client.calls_to("delete", PODS)] == [(victim, True)]
    assert h.client.object(PODS, victim, NS) is None


async def test_in_place_update_retries_its_object_write_after_a_conflict() -> None:
    in_place = {"rollingUpdateType": "InPlaceIfPossible"}
    h = await settled(daemonset(image="nginx:1", **in_place), nodes=1)
    (pod,) = h.client.objects(PODS)
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    h.roll_to(daemonset(image="nginx:2", generation=2, **in_place))
    h.client.fail_next("update", PODS, name, NS, error=Conflict)
    await h.reconcile()

    pod_writes = [(c.verb, c.subresource, c.succeeded) for c in h.client.writes if c.resource == PODS]
    # InPlaceUpdateReady=False first, then the object write: refused once, re-read, written
    assert pod_writes == [("patch", "status", True), ("update", None, False), ("update", None, True)]
    assert h.client.calls_to("get", PODS, name)
    assert h.client.calls_to("delete", PODS) == []
    updated = h.client.object(PODS, name, NS)
    assert updated["metadata"]["uid"] == uid
    assert updated["spec"]["containers"][0]["image"] == "nginx:2"
    new_hash = h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status")[-1].body["status"][
        "daemonSetHash"
    ]
    assert updated["metadata"]["labels"][HASH] == new_hash
    assert h.recorder.reasons() == ["SuccessfulUpdatePodInPlace"]


async def test_creates_go_in_slow_start_batches_and_stop_after_a_failing_batch() -> None:
    """Upstream syncNodes: batches of 1, 2, 4, ... at once; a failure ends the pass after its batch, and
    only the creates actually sent stay expected."""
    h = Harness(daemonset(), nodes=6)
    create = h.client.create

    async def failing_on_node_2(resource, body, *args, **kwargs):  # type: ignore[no-untyped-def]
        if resource is PODS and target_node_name(body) == "node-2":
            raise Conflict("refused")
        return await create(resource, body, *args, **kwargs)

    h.client.create = failing_on_node_2  # type: ignore[method-assign]
    with pytest.raises(Conflict):
        await h.reconcile()
    # batch 1: node-1; batch 2: node-2 (fails) and node-3 together; node-4..6 wait for the next pass
    assert sorted(target_node_name(p) for p in h.client.objects(PODS)) == ["node-1", "node-3"]
    _, _, pending = h.scale.satisfied(f"{NS}/{NAME}")
    assert sorted(pending[ScaleExpectations.CREATE]) == ["node-1", "node-3"]
    assert h.recorder.reasons().count("FailedCreate") == 1


def make_one_ready(h: Harness, name: str) -> None:
    pod = h.client.object(PODS, name, NS)
    assert pod is not None
    pod["status"] = {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T22:00:00Z"},
            {"type": "InPlaceUpdateReady", "status": "True"},
        ],
    }
    h.client.put(PODS, pod)
    h.pods.add(h.client.object(PODS, name, NS))


def observe_status(h: Harness) -> None:
    """The watch delivering the DaemonSet's own status write."""
    h.daemonsets.add(h.client.object(ADVANCED_DAEMONSETS, NAME, NS))


async def test_a_counters_only_status_write_waits_for_the_pace_then_is_written() -> None:
    h = Harness(daemonset(), nodes=2)
    h.reconciler.clock = h.clock
    h.reconciler.status_pace_seconds = 1.0
    await h.reconcile()
    h.observe_pods()
    h.client.clear()
    await h.reconcile()  # observedGeneration moves: written at once, whatever the pace
    (status,) = h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status")
    assert status.body["status"]["observedGeneration"] == 1
    observe_status(h)

    first, second = sorted(p["metadata"]["name"] for p in h.client.objects(PODS))
    make_one_ready(h, first)
    h.client.clear()
    result = await h.reconcile()  # numberReady 0 -> 1, within the pace: held, the pass comes back
    assert h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status") == []
    assert isinstance(result, Result) and result.requeue_after is not None
    assert 0 < result.requeue_after <= 1.0

    h.clock.step(1.0)
    await h.reconcile()
    (status,) = h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status")
    assert status.body["status"]["numberReady"] == 1
    observe_status(h)

    make_one_ready(h, second)
    h.client.clear()
    await h.reconcile()  # every pod updated and available: written at once
    (status,) = h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status")
    assert status.body["status"]["numberAvailable"] == 2


async def test_a_pass_before_its_own_status_write_is_observed_neither_rewrites_nor_parks() -> None:
    """The cache still holds the status from before this controller's write: the counters computed
    again equal what was sent, so there is nothing to write and no pace to wait for (the write's
    watch event brings the next pass). Parking here woke the DaemonSet inside a failed pod's
    backoff window."""
    h = Harness(daemonset(), nodes=2)
    h.reconciler.clock = h.clock
    h.reconciler.status_pace_seconds = 1.0
    await h.reconcile()
    h.observe_pods()
    h.client.clear()
    await h.reconcile()  # observedGeneration 1 written; the cache does not show it yet
    assert len(h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status")) == 1
    stale = h.daemonsets.get(f"{NS}/{NAME}")
    assert stale is not None and "observedGeneration" not in (stale.get("status") or {})

    h.client.clear()
    result = await h.reconcile()
    assert h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status") == []
    assert result is None or result.requeue_after is None or result.requeue_after > 1.0

    # once the write is observed, a real change is paced again as usual
    observe_status(h)
    make_one_ready(h, sorted(p["metadata"]["name"] for p in h.client.objects(PODS))[0])
    result = await h.reconcile()
    assert h.client.calls_to("patch", ADVANCED_DAEMONSETS, subresource="status") == []
    assert isinstance(result, Result) and result.requeue_after is not None and result.requeue_after <= 1.0


def with_min_ready(ds: dict, seconds: int) -> dict:
    ds["spec"]["minReadySeconds"] = seconds
    return ds


async def test_the_next_replacement_is_requeued_for_exactly_the_rest_of_min_ready_seconds() -> None:
    """The new pod turned Ready 20 s before this pass saw it: the pass holds the next old pod (maxUnavailable
    1), emits no numUnavailable >= maxUnavailable Warning (1.9 has none) and parks itself for the 10 s left,
    not a fresh minReadySeconds; the pass at that moment, with nothing else changed, replaces the next pod."""
    h = await settled(with_min_ready(daemonset(image="nginx:1"), 30), nodes=2)
    h.roll_to(with_min_ready(daemonset(image="nginx:2", generation=2), 30))
    await h.reconcile()
    (first,) = h.client.calls_to("delete", PODS)
    h.observe_pods(first.name)
    h.client.clear()
    await h.reconcile()
    (create,) = h.client.calls_to("create", PODS)
    h.observe_pods()
    pod = h.client.object(PODS, create.name, NS)
    pod["spec"]["nodeName"] = target_node_name(pod)
    since = rfc3339(h.clock.wall() - timedelta(seconds=20))
    pod["status"] = {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": since},
            {"type": "InPlaceUpdateReady", "status": "True"},
        ],
    }
    h.client.put(PODS, pod)
    h.pods.add(h.client.object(PODS, create.name, NS))
    h.client.clear()
    h.recorder.events.clear()

    result = await h.reconcile()
    assert h.client.calls_to("delete", PODS) == []
    assert result is not None and result.requeue_after == pytest.approx(10 + AVAILABILITY_TICK)
    assert "numUnavailable >= maxUnavailable" not in h.recorder.reasons()

    h.clock.step(result.requeue_after)
    h.client.clear()
    await h.reconcile()
    (second,) = h.client.calls_to("delete", PODS)
    assert second.name != first.name and second.name != create.name
