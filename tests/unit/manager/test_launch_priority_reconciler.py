"""ContainerLaunchPriorityReconciler against fake caches and a recording client: the barrier it creates,
the keys it releases in priority order, and the completion mark."""

from __future__ import annotations

import pytest

from kruise.api.keys import ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED
from kruise.control.launchpriority import barriers
from kruise.kube.client import PatchType
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.resources import CONFIGMAPS, PODS
from kruise.manager.controllers.containerlaunchpriority.reconciler import (
    ContainerLaunchPriorityReconciler,
    present_keys,
    should_enqueue,
)
from tests.kit import FakeInformer, RecordingClient

NS = "default"
NAMES = ("first", "second", "third")  # Ordered: priorities 0, -1, -2


def ordered_pod(name="p", *, ready=(), completed=False, containers_ready=False):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"},
        },
        "spec": {"containers": [{"name": c, "image": "nginx"} for c in NAMES]},
        "status": {
            "containerStatuses": [{"name": c, "ready": c in ready} for c in NAMES],
            "conditions": [{"type": "ContainersReady", "status": "True" if containers_ready else "False"}],
        },
    }
    assert barriers.inject_barriers(pod)
    if completed:
        pod["metadata"]["annotations"][ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED] = "true"
    return pod


def barrier(pod_name="p", *keys):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{pod_name}-barrier", "namespace": NS},
        "data": dict.fromkeys(keys, "true"),
    }


class Harness:
    """A reconciler over pod and ConfigMap caches that follow the recording client's store."""

    def __init__(self, pods=(), configmaps=()):
        self.client = RecordingClient()
        self.pods, self.configmaps = FakeInformer(), FakeInformer()
        self.client.put(PODS, *pods)
        self.client.put(CONFIGMAPS, *configmaps)
        self.client.sync(PODS, self.pods)
        self.client.sync(CONFIGMAPS, self.configmaps)
        self.reconciler = ContainerLaunchPriorityReconciler(
            self.client, pods=self.pods, configmaps=self.configmaps
        )

    async def reconcile(self, key=f"{NS}/p"):
        result = await self.reconciler.reconcile(key)
        self.pods.assert_unmodified()
        self.configmaps.assert_unmodified()
        return result

    def set_ready(self, *containers):
        """The kubelet reports these containers Ready (written to the store, seen by the cache)."""
        pod = self.client.object(PODS, "p", NS)
        for status in pod["status"]["containerStatuses"]:
            status["ready"] = status["name"] in containers
        self.client.put(PODS, pod)

    def released(self):
        return set(self.client.object(CONFIGMAPS, "p-barrier", NS).get("data") or {})


async def test_a_pod_without_a_barrier_gets_one_owned_by_it_and_is_requeued():
    h = Harness([ordered_pod()])
    assert await h.reconcile() == Result(requeue=True)
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.namespace, call.name) == ("create", CONFIGMAPS, NS, "p-barrier")
    assert call.body == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "p-barrier",
            "namespace": NS,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p"}],
        },
    }


async def test_keys_are_released_highest_priority_first_one_group_at_a_time():
    h = Harness([ordered_pod()])
    assert await h.reconcile() == Result(requeue=True)
    h.client.clear()

    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.name, call.patch_type) == (
        "patch",
        CONFIGMAPS,
        "p-barrier",
        PatchType.STRATEGIC,
    )
    assert call.body == {"data": {"p_0": "true"}}
    h.client.clear()

    assert await h.reconcile() is None  # "first" is not Ready yet: nothing more to release
    assert h.client.writes == []

    h.set_ready("first")
    assert await h.reconcile() is None
    assert [c.body for c in h.client.writes] == [{"data": {"p_-1": "true"}}]
    h.client.clear()

    h.set_ready("first", "second")
    assert await h.reconcile() is None
    # the last group's key and the completion mark go out together
    assert [(c.resource, c.body) for c in h.client.writes] == [
        (CONFIGMAPS, {"data": {"p_-2": "true"}}),
        (PODS, {"metadata": {"annotations": {ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED: "true"}}}),
    ]
    assert h.released() == {"p_0", "p_-1", "p_-2"}
    annotations = h.pods.get(f"{NS}/p")["metadata"]["annotations"]
    assert annotations[ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED] == "true"
    assert not should_enqueue(h.pods.get(f"{NS}/p"), h.configmaps.get(f"{NS}/p-barrier"))


async def test_a_barrier_already_holding_the_lowest_key_only_marks_completion():
    h = Harness([ordered_pod()], [barrier("p", "p_0", "p_-1", "p_-2")])
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.name) == ("patch", PODS, "p")
    assert call.body == {
        "metadata": {"annotations": {ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED: "true"}}
    }


async def test_a_barrier_created_concurrently_is_not_an_error():
    h = Harness([ordered_pod()])
    h.client.fail_next("create", CONFIGMAPS, "p-barrier", NS, error=AlreadyExists)
    assert await h.reconcile() == Result(requeue=True)
    assert [(c.verb, type(c.error)) for c in h.client.writes] == [("create", AlreadyExists)]


async def test_a_pod_deleted_before_its_completion_mark_is_not_an_error():
    h = Harness([ordered_pod(ready=("first", "second"))], [barrier("p", "p_0", "p_-1")])
    h.client.fail_next("patch", PODS, "p", NS, error=NotFound)
    assert await h.reconcile() is None
    assert [(c.resource, c.succeeded) for c in h.client.writes] == [(CONFIGMAPS, True), (PODS, False)]


async def test_a_barrier_deleted_under_the_release_propagates_for_a_retry():
    h = Harness([ordered_pod()], [barrier("p")])
    h.client.fail_next("patch", CONFIGMAPS, "p-barrier", NS, error=NotFound)
    with pytest.raises(NotFound):
        await h.reconcile()


async def test_a_pod_gone_from_the_cache_is_a_no_op():
    h = Harness()
    assert await h.reconcile() is None
    assert h.client.calls == []


@pytest.mark.parametrize(
    ("pod", "configmap", "expected"),
    [
        (ordered_pod(), None, True),  # no barrier yet
        (ordered_pod(), barrier("p"), True),  # highest key missing
        (ordered_pod(), barrier("p", "p_0"), False),  # waiting for "first" to become Ready
        (ordered_pod(ready=("first",)), barrier("p", "p_0"), True),
        (ordered_pod(completed=True), None, False),
        (ordered_pod(containers_ready=True), None, False),
        (ordered_pod(ready=NAMES), None, False),  # nothing pending
    ],
)
def test_should_enqueue(pod, configmap, expected):
    assert should_enqueue(pod, configmap) is expected


def test_a_pod_without_barriers_is_never_enqueued():
    plain = {"metadata": {"name": "x", "namespace": NS}, "spec": {"containers": [{"name": "c"}]}}
    assert should_enqueue(plain, None) is False


def test_present_keys():
    assert present_keys(None) is None
    assert present_keys(barrier("p")) == set()
    assert present_keys(barrier("p", "p_0", "p_-1")) == {"p_0", "p_-1"}
