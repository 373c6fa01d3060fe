"""CloneSetReconciler against fake caches and a recording client: a whole pass without the emulator —
its revision, its pod creates, the wait for its own writes (expectations), and an in-place update through
the shared writer (status patch first, then one object write)."""

from __future__ import annotations

from kruise.api.features import FeatureGates
from kruise.control.common.revision import new_cloneset_revision
from kruise.kube.clock import FakeClock
from kruise.kube.controller import Result
from kruise.kube.expectations import EXPECTATIONS_TIMEOUT, ResourceVersionExpectations, ScaleExpectations
from kruise.kube.resources import CLONESETS, CONTROLLER_REVISIONS, PODS, PVCS
from kruise.manager.controllers.cloneset.reconciler import SCALE_EXPECTATION_LEAKAGE, CloneSetReconciler
from kruise.manager.writers.expectations import FORCED_EXPECTATION_REQUEUE
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"
STATE = "lifecycle.apps.kruise.io/state"


def cloneset(replicas: int = 3, image: str = "nginx:1", **strategy) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": "web",
            "namespace": NS,
            "uid": "cs-uid",
            "generation": 1,
            "resourceVersion": "1",
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "main", "image": image}],
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                },
            },
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": 1, **strategy},
            "revisionHistoryLimit": 10,
        },
    }


class Harness:
    def __init__(self, current: dict, gates: str = "", timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.recorder = RecordingEventRecorder()
        self.clonesets = FakeInformer([current])
        self.pods, self.pvcs, self.revisions = FakeInformer(), FakeInformer(), FakeInformer()
        self.client.put(CLONESETS, current)
        self.client.sync(PODS, self.pods)
        self.client.sync(PVCS, self.pvcs)
        self.client.sync(CONTROLLER_REVISIONS, self.revisions)
        self.scale = ScaleExpectations(self.clock, timeout)
        self.rv = ResourceVersionExpectations(self.clock, timeout)
        self.reconciler = CloneSetReconciler(
            self.client,
            self.recorder,
            FeatureGates.from_flag(gates, env={}),
            clonesets=self.clonesets,
            pods=self.pods,
            pvcs=self.pvcs,
            revisions=self.revisions,
            scale_expectations=self.scale,
            rv_expectations=self.rv,
            wall=self.clock.wall,
            clock=self.clock,
        )

    async def reconcile(self):
        result = await self.reconciler.reconcile(f"{NS}/web")
        self.clonesets.assert_unmodified()
        return result

    def observe_created_pods(self) -> None:
        """What the controller's pod handler does when the informer delivers our creates."""
        for pod in self.pods.list():
            self.scale.observe(f"{NS}/web", ScaleExpectations.CREATE, pod["metadata"]["name"])
            self.rv.observe(pod)


def make_running(h: Harness) -> None:
    """The kubelet's part: every pod scheduled, running, ready (written into the fake store and cache)."""
    for pod in h.client.objects(PODS):
        pod = dict(pod)
        pod["spec"] = {**pod["spec"], "nodeName": "node-1"}
        pod["status"] = {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T22:00:00Z"},
                {"type": "ContainersReady", "status": "True"},
                {"type": "InPlaceUpdateReady", "status": "True"},
            ],
            "containerStatuses": [
                {"name": c["name"], "image": c["image"], "imageID": f"id-{c['image']}", "ready": True}
                for c in pod["spec"]["containers"]
            ],
        }
        pod["metadata"] = {**pod["metadata"], "labels": {**pod["metadata"]["labels"], STATE: "Normal"}}
        h.client.put(PODS, pod)
        h.pods.add(h.client.object(PODS, pod["metadata"]["name"], NS))


async def test_first_pass_writes_a_revision_and_creates_the_pods() -> None:
    h = Harness(cloneset(replicas=3))
    await h.reconcile()
    (revision,) = h.client.objects(CONTROLLER_REVISIONS)
    pods = h.client.objects(PODS)
    assert len(pods) == 3
    for pod in pods:
        labels = pod["metadata"]["labels"]
        assert labels["controller-revision-hash"] == revision["metadata"]["name"]
        assert labels[STATE] == "PreparingNormal"  # as upstream: Normal comes with the next refresh
        assert pod["metadata"]["ownerReferences"][0]["uid"] == "cs-uid"
    assert h.recorder.reasons().count("SuccessfulCreate") == 3


async def test_a_pass_waits_for_its_own_creates_to_reach_the_cache() -> None:
    h = Harness(cloneset(replicas=2))
    await h.reconcile()
    creates = len(h.client.calls_to("create", PODS))
    # the cache has the pods (sync) but the handler has not observed them yet: the next pass must not act
    result = await h.reconcile()
    assert isinstance(result, Result) and result.requeue_after
    assert len(h.client.calls_to("create", PODS)) == creates


def leakage() -> float:
    return SCALE_EXPECTATION_LEAKAGE.labels(NS, "web")._value.get()


async def test_a_leaked_expectation_blocks_until_the_timeout_then_stays_blocked_without_the_gate() -> None:
    """Upstream: after --expectation-timeout the pass logs and counts the leak, and does nothing more."""
    h = Harness(cloneset(replicas=2), timeout=3.0)
    await h.reconcile()
    first = h.pods.list()[0]["metadata"]["name"]
    h.scale.observe(f"{NS}/web", ScaleExpectations.CREATE, first)  # the other pod's event was lost
    before = leakage()
    waiting = await h.reconcile()
    assert isinstance(waiting, Result) and waiting.requeue_after == 3.0
    h.clock.step(3.0)
    assert await h.reconcile() is None
    assert leakage() == before + 1
    assert h.scale.satisfied(f"{NS}/web")[0] is False


async def test_a_leaked_expectation_is_dropped_after_the_timeout_with_the_gate() -> None:
    h = Harness(cloneset(replicas=2), gates="ForceDeleteTimeoutExpectationGate=true", timeout=3.0)
    await h.reconcile()
    await h.reconcile()  # starts the unsatisfied clock: no pod was observed
    h.clock.step(3.0)
    before = leakage()
    assert await h.reconcile() == Result(requeue_after=FORCED_EXPECTATION_REQUEUE)
    assert leakage() == before + 1
    assert h.scale.satisfied(f"{NS}/web")[0] is True


async def test_image_change_is_an_in_place_update_of_max_unavailable_pods() -> None:
    current = cloneset(replicas=2, image="nginx:1")
    h = Harness(current)
    await h.reconcile()
    h.observe_created_pods()
    make_running(h)
    await h.reconcile()  # settles lifecycle states and status
    h.client.clear()

    updated = cloneset(replicas=2, image="nginx:2")
    updated["metadata"]["generation"] = 2
    h.clonesets.add(updated)
    h.client.put(CLONESETS, updated)
    await h.reconcile()

    new_revision = new_cloneset_revision(updated, 2, 0)["metadata"]["name"]
    pod_writes = [c for c in h.client.writes if c.resource == PODS]
    # one pod (maxUnavailable 1): InPlaceUpdateReady=False as a status patch, then one object write
    assert [(c.verb, c.subresource) for c in pod_writes] == [("patch", "status"), ("update", None)]
    pod = h.client.object(PODS, pod_writes[1].name, NS)
    assert pod["spec"]["containers"][0]["image"] == "nginx:2"
    assert pod["metadata"]["labels"]["controller-revision-hash"] == new_revision
    assert pod["metadata"]["labels"][STATE] == "Updating"
    assert "apps.kruise.io/inplace-update-state" in pod["metadata"]["annotations"]
    ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert ready["InPlaceUpdateReady"] == "False"
    assert "SuccessfulUpdatePodInPlace" in h.recorder.reasons()


def schedule(h: Harness) -> None:
    """The scheduler's part only: every pod without a node bound to one."""
    for pod in h.client.objects(PODS):
        if pod["spec"].get("nodeName"):
            continue
        pod = {**pod, "spec": {**pod["spec"], "nodeName": "node-1"}, "status": {"phase": "Pending"}}
        h.client.put(PODS, pod)
        h.pods.add(h.client.object(PODS, pod["metadata"]["name"], NS))


def scale_to(h: Harness, replicas: int) -> None:
    cs = h.clonesets.get(f"{NS}/web")
    assert cs is not None
    h.clonesets.add({**cs, "spec": {**cs["spec"], "replicas": replicas}})


def pod_writes(h: Harness) -> list[tuple[str, str, str | None]]:
    """(verb, pod name, subresource) of every pod write, in the order the client was asked."""
    return [(c.verb, c.name, c.subresource) for c in h.client.writes if c.resource == PODS]


async def test_a_scale_up_pass_gives_earlier_pods_their_first_write_before_it_creates_more() -> None:
    # issue 27: the client's QPS is a token bucket served in request order, so the order asked is the
    # order sent; a pod created by an earlier pass must not wait for this pass's creates to turn Ready
    h = Harness(cloneset(replicas=3))
    await h.reconcile()
    h.observe_created_pods()
    first = sorted(p["metadata"]["name"] for p in h.client.objects(PODS))
    schedule(h)
    scale_to(h, 6)
    h.client.calls.clear()
    await h.reconcile()
    writes = pod_writes(h)
    status_patches = [name for verb, name, sub in writes if verb == "patch" and sub == "status"]
    assert sorted(status_patches) == first
    first_create = next(i for i, (verb, _, _) in enumerate(writes) if verb == "create")
    assert first_create == len(first)  # every first write is asked for before the pass's first create
    assert len([w for w in writes if w[0] == "create"]) == 3
    for name in first:
        pod = h.client.object(PODS, name, NS)
        types = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert types["InPlaceUpdateReady"] == "True"
        assert pod["metadata"]["labels"][STATE] == "Normal"  # the move to Normal rode in that write


async def test_unscheduled_new_pods_get_no_write_during_the_scale_up() -> None:
    # their first write waits for a node so that it can carry the move to Normal: still one write a pod
    h = Harness(cloneset(replicas=3))
    await h.reconcile()
    h.observe_created_pods()
    scale_to(h, 6)
    h.client.calls.clear()
    await h.reconcile()
    assert {verb for verb, _, _ in pod_writes(h)} == {"create"}


async def test_each_pod_of_a_scale_up_across_passes_is_written_twice() -> None:
    # the write moved ahead of the creates is the same one the update half would make after them
    h = Harness(cloneset(replicas=3))
    await h.reconcile()
    h.observe_created_pods()
    schedule(h)
    scale_to(h, 6)
    await h.reconcile()
    h.observe_created_pods()
    schedule(h)
    for _ in range(3):  # the update half gives the last pass's pods theirs; then nothing is left
        h.clock.step(1.0)
        await h.reconcile()
        h.observe_created_pods()
    per_pod: dict[str, int] = {}
    for _, name, _ in pod_writes(h):
        per_pod[name] = per_pod.get(name, 0) + 1
    assert len(per_pod) == 6
    assert set(per_pod.values()) == {2}


async def test_a_new_leader_with_a_cache_behind_its_predecessors_update_does_not_update_a_pod_twice() -> None:
    """Leader churn (e2e/faults scenario 4): the new leader's pod cache still shows a pod before the in-place
    write its predecessor made just before dying, and its expectations are empty. Its InPlaceUpdateReady
    patch (no resourceVersion, as upstream) answers with the fresh pod, which shows the same update begun:
    no object write follows and no second event is recorded."""
    current = cloneset(replicas=1, image="nginx:1")
    h = Harness(current)
    await h.reconcile()
    h.observe_created_pods()
    make_running(h)
    await h.reconcile()
    stale = [dict(p) for p in h.pods.list()]
    updated = cloneset(replicas=1, image="nginx:2")
    updated["metadata"]["generation"] = 2
    h.clonesets.add(updated)
    h.client.put(CLONESETS, updated)
    await h.reconcile()  # the leader that is then killed
    (pod,) = h.client.objects(PODS)
    state = pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"]
    h.client.clear()
    h.recorder.events.clear()

    successor = CloneSetReconciler(
        h.client,
        h.recorder,
        FeatureGates.from_flag("", env={}),
        clonesets=h.clonesets,
        pods=FakeInformer(stale),
        pvcs=h.pvcs,
        revisions=h.revisions,
        scale_expectations=ScaleExpectations(h.clock),
        rv_expectations=ResourceVersionExpectations(h.clock),
        wall=h.clock.wall,
        clock=h.clock,
    )
    h.clock.step(5.0)
    await successor.reconcile(f"{NS}/web")

    (pod,) = h.client.objects(PODS)
    assert pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"] == state
    assert [c.verb for c in h.client.writes if c.resource == PODS and c.subresource is None] == []
    assert "SuccessfulUpdatePodInPlace" not in h.recorder.reasons()
