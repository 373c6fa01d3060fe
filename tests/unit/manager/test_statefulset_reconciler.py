"""StatefulSetReconciler against fake caches and a recording client, no emulator: the first pass (revision,
web-0 only under OrderedReady), the wait for its own create, web-1 once web-0 is Ready, claims before their
pod, a refused pod create written to the status as FailedCreatePod and retried by the next pass, an
in-place update whose object write is retried after a conflict, and a finished in-place update whose
state move rides in its InPlaceUpdateReady=True status patch."""

from __future__ import annotations

import copy

import pytest

from kruise.api import statefulset as statefulset_api
from kruise.api.features import FeatureGates
from kruise.kube.clock import FakeClock
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.resources import ADVANCED_STATEFULSETS, CONTROLLER_REVISIONS, PODS, PVCS
from kruise.manager.controllers.statefulset.reconciler import StatefulSetReconciler
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"
NAME = "web"
HASH = "controller-revision-hash"


def statefulset(replicas: int = 3, **spec) -> dict:
    """An Advanced StatefulSet as the webhook would store it (defaults applied: OrderedReady)."""
    body = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "sts-uid",
            "generation": 1,
            "resourceVersion": "1",
        },
        "spec": {
            "replicas": replicas,
            "serviceName": NAME,
            "selector": {"matchLabels": {"app": NAME}},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1"}]},
            },
            **spec,
        },
    }
    model = statefulset_api.StatefulSet.model_validate(body)
    statefulset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


class Harness:
    def __init__(self, sts: dict, gates: FeatureGates | None = None) -> None:
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.recorder = RecordingEventRecorder()
        self.sets = FakeInformer([sts])
        self.pods, self.pvcs, self.revisions = FakeInformer(), FakeInformer(), FakeInformer()
        self.client.put(ADVANCED_STATEFULSETS, sts)
        self.client.sync(PODS, self.pods)
        self.client.sync(PVCS, self.pvcs)
        self.client.sync(CONTROLLER_REVISIONS, self.revisions)
        self.scale = ScaleExpectations(self.clock)
        self.rv = ResourceVersionExpectations(self.clock)
        self.reconciler = StatefulSetReconciler(
            self.client,
            self.recorder,
            gates or FeatureGates(env={}),
            sets=self.sets,
            pods=self.pods,
            pvcs=self.pvcs,
            revisions=self.revisions,
            scale_expectations=self.scale,
            rv_expectations=self.rv,
            wall=self.clock.wall,
        )

    async def reconcile(self) -> Result | None:
        result = await self.reconciler.reconcile(f"{NS}/{NAME}")
        for cache in (self.sets, self.pods, self.pvcs, self.revisions):
            cache.assert_unmodified()
        return result

    def observe_pods(self) -> None:
        """What the controller's pod handler does when the informer delivers our creates."""
        for pod in self.pods.list():
            self.scale.observe(f"{NS}/{NAME}", ScaleExpectations.CREATE, pod["metadata"]["name"])
            self.rv.observe(pod)

    def make_ready(self, name: str) -> None:
        """The kubelet's part for one pod: scheduled, running, ready."""
        pod = self.client.object(PODS, name, NS)
        assert pod is not None, f"{name} was never created"
        pod["spec"]["nodeName"] = "node-1"
        pod["status"] = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T22:00:00Z"}],
            "containerStatuses": [{"name": "nginx", "image": "nginx:1", "ready": True}],
        }
        self.client.put(PODS, pod)
        self.pods.add(self.client.object(PODS, name, NS))

    def pod_writes(self) -> list[tuple[str, str]]:
        return [(c.verb, c.name) for c in self.client.writes if c.resource == PODS]


async def test_first_pass_writes_the_revision_and_only_web_0() -> None:
    h = Harness(statefulset(replicas=3))
    await h.reconcile()

    (revision,) = h.client.objects(CONTROLLER_REVISIONS)
    revision_name = revision["metadata"]["name"]
    assert revision["metadata"]["ownerReferences"][0]["uid"] == "sts-uid"
    assert h.pod_writes() == [("create", "web-0")]  # OrderedReady: web-1 waits for web-0
    pod = h.client.object(PODS, "web-0", NS)
    labels = pod["metadata"]["labels"]
    assert labels["app"] == NAME
    assert labels[HASH] == revision_name
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-0"
    assert labels["apps.kubernetes.io/pod-index"] == "0"
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-0", NAME)
    owner = pod["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("StatefulSet", "sts-uid", True)
    assert [(e.reason, e.message) for e in h.recorder.events] == [
        ("SuccessfulCreate", "create Pod web-0 in StatefulSet web successful")
    ]
    (status,) = h.client.calls_to("patch", ADVANCED_STATEFULSETS, NAME, subresource="status")
    assert status.body["status"]["updateRevision"] == revision_name
    assert status.body["status"]["currentRevision"] == revision_name


async def test_a_pass_waits_for_its_own_create_to_reach_the_cache() -> None:
    h = Harness(statefulset(replicas=3))
    await h.reconcile()
    h.client.clear()
    # web-0 is in the cache but the handler has not counted it: the pass must not plan from that view
    result = await h.reconcile()
    assert isinstance(result, Result) and result.requeue_after
    assert h.client.writes == []


async def test_ordered_ready_creates_web_1_only_once_web_0_is_ready() -> None:
    h = Harness(statefulset(replicas=3))
    await h.reconcile()
    h.observe_pods()
    h.client.clear()
    await h.reconcile()  # web-0 exists but is not Ready: nothing to create yet
    assert h.pod_writes() == []

    h.make_ready("web-0")
    h.client.clear()
    await h.reconcile()
    assert h.pod_writes() == [("create", "web-1")]
    assert h.client.object(PODS, "web-2", NS) is None
    assert h.recorder.events[-1].message == "create Pod web-1 in StatefulSet web successful"


async def test_claims_are_created_before_their_pod() -> None:
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    h = Harness(statefulset(replicas=1, volumeClaimTemplates=[claim]))
    await h.reconcile()

    creates = [(c.resource, c.name) for c in h.client.calls_to("create") if c.resource in (PVCS, PODS)]
    assert creates == [(PVCS, "data-web-0"), (PODS, "web-0")]
    pvc = h.client.object(PVCS, "data-web-0", NS)
    assert pvc["metadata"]["labels"] == {"app": NAME}
    volume = next(v for v in h.client.object(PODS, "web-0", NS)["spec"]["volumes"] if v["name"] == "data")
    assert volume["persistentVolumeClaim"]["claimName"] == "data-web-0"
    assert [e.message for e in h.recorder.events] == [
        "create Claim data-web-0 Pod web-0 in StatefulSet web success",
        "create Pod web-0 in StatefulSet web successful",
    ]


async def test_a_refused_pod_create_is_reported_in_status_and_retried() -> None:
    h = Harness(statefulset(replicas=1))
    h.client.fail_next("create", PODS, "web-0", NS, error=Conflict)

    with pytest.raises(Conflict):  # the controller requeues the key with backoff
        await h.reconcile()
    assert [(c.name, c.succeeded) for c in h.client.calls_to("create", PODS)] == [("web-0", False)]
    assert h.recorder.reasons() == ["FailedCreate"]
    (status,) = h.client.calls_to("patch", ADVANCED_STATEFULSETS, NAME, subresource="status")
    (condition,) = status.body["status"]["conditions"]
    assert (condition["type"], condition["status"]) == ("FailedCreatePod", "True")
    assert "StatefulPodControl failed" in condition["message"]

    # the refused create is not left expected, so the retry is not stuck waiting for it
    h.client.clear()
    await h.reconcile()
    assert [(c.name, c.succeeded) for c in h.client.calls_to("create", PODS)] == [("web-0", True)]
    assert h.client.object(PODS, "web-0", NS) is not None


async def test_in_place_update_retries_its_object_write_after_a_conflict() -> None:
    in_place = {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}
    sts = statefulset(replicas=1, updateStrategy=in_place)
    sts["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    h = Harness(sts)
    await h.reconcile()
    h.observe_pods()
    h.make_ready("web-0")
    await h.reconcile()
    uid = h.client.object(PODS, "web-0", NS)["metadata"]["uid"]

    rolled = copy.deepcopy(sts)
    rolled["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    rolled["metadata"].update(generation=2, resourceVersion="2")
    h.sets.add(rolled)
    h.client.put(ADVANCED_STATEFULSETS, rolled)
    h.client.clear()
    h.client.fail_next("update", PODS, "web-0", NS, error=Conflict)
    await h.reconcile()

    pod_writes = [(c.verb, c.subresource, c.succeeded) for c in h.client.writes if c.resource == PODS]
    # InPlaceUpdateReady=False first, then the object write: refused once, re-read, written
    assert pod_writes == [("patch", "status", True), ("update", None, False), ("update", None, True)]
    assert h.client.calls_to("get", PODS, "web-0")
    pod = h.client.object(PODS, "web-0", NS)
    assert pod["metadata"]["uid"] == uid  # updated in place, not recreated
    assert pod["spec"]["containers"][0]["image"] == "nginx:2"
    (status,) = h.client.calls_to("patch", ADVANCED_STATEFULSETS, NAME, subresource="status")
    assert pod["metadata"]["labels"][HASH] == status.body["status"]["updateRevision"]
    assert h.recorder.reasons()[-1] == "SuccessfulUpdatePodInPlace"


async def test_a_finished_in_place_update_moves_the_state_in_its_ready_condition_write() -> None:
    """`InPlaceUpdateReady=True` and Updating -> Normal in one pods/status patch (upstream's
    refreshPodState makes both moves in one pass, as two writes)."""
    in_place = {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}
    sts = statefulset(replicas=1, updateStrategy=in_place)
    sts["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    h = Harness(sts)
    await h.reconcile()
    h.observe_pods()
    h.make_ready("web-0")
    await h.reconcile()
    h.pods.add(h.client.object(PODS, "web-0", NS))
    rolled = copy.deepcopy(sts)
    rolled["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    rolled["metadata"].update(generation=2, resourceVersion="2")
    h.sets.add(rolled)
    h.client.put(ADVANCED_STATEFULSETS, rolled)
    await h.reconcile()
    pod = h.client.object(PODS, "web-0", NS)
    assert pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == "Updating"

    # the kubelet runs the new image
    pod["status"]["containerStatuses"] = [
        {"name": "nginx", "image": "nginx:2", "imageID": "sha-2", "ready": True}
    ]
    h.client.put(PODS, pod)
    h.pods.add(h.client.object(PODS, "web-0", NS))
    h.rv.observe(h.client.object(PODS, "web-0", NS))
    h.client.clear()
    await h.reconcile()

    (write,) = [c for c in h.client.writes if c.resource == PODS]
    assert (write.verb, write.subresource) == ("patch", "status")
    assert write.body["metadata"]["labels"] == {"lifecycle.apps.kruise.io/state": "Normal"}
    assert [c["type"] for c in write.body["status"]["conditions"]] == ["InPlaceUpdateReady"]
    pod = h.client.object(PODS, "web-0", NS)
    assert pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == "Normal"
