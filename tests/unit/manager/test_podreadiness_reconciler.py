"""PodReadinessReconciler against a fake pod cache and a recording client: when it adds KruisePodReady."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import PODS
from kruise.manager.controllers.podreadiness.reconciler import PodReadinessReconciler, needs_condition
from tests.kit import FakeInformer, RecordingClient
from tests.kit.pods import pod

GATE = {"conditionType": "KruisePodReady"}
# a running pod gated on KruisePodReady, with no conditions yet
gated_pod = partial(
    pod, typed=True, uid="uid-p", containers=[{"name": "c", "image": "nginx"}], readinessGates=[GATE],
    phase="Running", conditions=[],
)  # fmt: skip


class Harness:
    """A reconciler over a pod cache that the recording client keeps in step with its writes."""

    def __init__(self, *pods):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.pods = FakeInformer()
        self.client.put(PODS, *pods)
        self.client.sync(PODS, self.pods)
        self.reconciler = PodReadinessReconciler(self.client, pods=self.pods, wall=self.clock.wall)

    async def reconcile(self, key="default/p"):
        result = await self.reconciler.reconcile(key)
        self.pods.assert_unmodified()
        return result


async def test_a_gated_pod_gets_the_condition_once_through_the_status_subresource():
    scheduled = {"type": "PodScheduled", "status": "True"}
    h = Harness(gated_pod(conditions=[scheduled]))
    assert await h.reconcile() is None
    (call,) = h.client.writes
    assert (call.verb, call.resource, call.namespace, call.name) == ("patch", PODS, "default", "p")
    assert (call.subresource, call.patch_type) == ("status", PatchType.STRATEGIC)
    condition = {"type": "KruisePodReady", "status": "True", "lastTransitionTime": rfc3339(h.clock.wall())}
    assert call.body == {"status": {"conditions": [condition]}}
    assert "resourceVersion" not in call.body.get("metadata", {})  # never conflicts with the kubelet
    # merged by type: the kubelet's conditions stay
    assert h.pods.get("default/p")["status"]["conditions"] == [scheduled, condition]
    h.client.clear()
    assert await h.reconcile() is None
    assert h.client.calls == []


async def test_an_existing_condition_is_never_overwritten():
    not_ready = {"type": "KruisePodReady", "status": "False", "message": '{"userAgent":"Lifecycle"}'}
    h = Harness(gated_pod(conditions=[not_ready]))
    assert await h.reconcile() is None
    assert h.client.calls == []


@pytest.mark.parametrize(
    "which",
    ["no gate", "another gate", "terminating", "gone"],
)
async def test_pods_that_need_nothing_get_no_write(which):
    pods = {
        "no gate": [gated_pod(readinessGates=[])],
        "another gate": [gated_pod(readinessGates=[{"conditionType": "example.com/ready"}])],
        "terminating": [gated_pod(deleting=True, meta={"finalizers": ["example.com/hold"]})],
        "gone": [],
    }[which]
    h = Harness(*pods)
    assert await h.reconcile() is None
    assert h.client.calls == []


async def test_a_pod_deleted_before_the_patch_is_not_an_error():
    h = Harness(gated_pod())
    h.client.fail_next("patch", PODS, "p", "default", error=NotFound)
    assert await h.reconcile() is None
    assert [(c.verb, type(c.error)) for c in h.client.writes] == [("patch", NotFound)]


async def test_other_errors_propagate_for_a_rate_limited_retry():
    h = Harness(gated_pod())
    h.client.fail_next("patch", PODS, "p", "default", error=Conflict)
    with pytest.raises(Conflict):
        await h.reconcile()
    assert await h.reconcile() is None  # the retry succeeds
    assert [c.succeeded for c in h.client.writes] == [False, True]


condition_types = st.sampled_from(["KruisePodReady", "Ready", "ContainersReady", "example.com/gate"])


@given(
    gates=st.lists(condition_types, max_size=3),
    conditions=st.lists(st.tuples(condition_types, st.sampled_from(["True", "False"])), max_size=3),
)
def test_needs_condition_is_gate_without_condition(gates, conditions):
    p = gated_pod(
        readinessGates=[{"conditionType": g} for g in gates],
        conditions=[{"type": t, "status": s} for t, s in conditions],
    )
    expected = "KruisePodReady" in gates and all(t != "KruisePodReady" for t, _ in conditions)
    assert needs_condition(p) is expected


def test_needs_condition_tolerates_missing_spec_and_status():
    assert needs_condition({"metadata": {"name": "bare"}}) is False
    assert needs_condition({"spec": {"readinessGates": [GATE]}}) is True


def test_needs_condition_leaves_kruise_workload_pods_to_their_controller():
    p = {"metadata": {"name": "cs-x"}, "spec": {"readinessGates": [GATE]}}
    p["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "name": "cs",
            "uid": "u",
            "controller": True,
        }
    ]
    assert needs_condition(p) is False
    for kind in ("StatefulSet", "DaemonSet", "BroadcastJob"):
        p["metadata"]["ownerReferences"][0]["kind"] = kind
        assert needs_condition(p) is False
    p["metadata"]["ownerReferences"][0]["kind"] = "UnitedDeployment"
    assert needs_condition(p) is True
    p["metadata"]["ownerReferences"][0].update(apiVersion="apps/v1", kind="StatefulSet")
    assert needs_condition(p) is True


async def test_a_pod_woken_again_before_the_cache_shows_the_patch_is_not_patched_twice():
    """Issue 18: the kubelet's and workload controllers' status writes wake the pod while the cache
    still holds the copy without the condition; the patch already sent must not be sent again."""
    clock = FakeClock()
    client = RecordingClient(clock)
    client.put(PODS, gated_pod())
    cache = FakeInformer([await client.get(PODS, "p", "default")])
    client.clear()
    reconciler = PodReadinessReconciler(client, pods=cache, wall=clock.wall)
    await reconciler.reconcile("default/p")
    await reconciler.reconcile("default/p")  # woken by another writer; the cache is still behind
    assert [(c.verb, c.subresource) for c in client.writes] == [("patch", "status")]
    # the cache catches up with something newer that still lacks the condition (status wiped):
    # the expectation is met, so the pod is patched again
    newer = await client.get(PODS, "p", "default")
    newer["status"]["conditions"] = []
    newer["metadata"]["resourceVersion"] = str(int(newer["metadata"]["resourceVersion"]) + 1)
    cache.add(newer)
    await reconciler.reconcile("default/p")
    assert [(c.verb, c.subresource) for c in client.writes] == [("patch", "status")] * 2
