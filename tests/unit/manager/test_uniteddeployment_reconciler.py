"""UnitedDeploymentReconciler against fake caches and a recording client, no emulator: the first pass
(revision, one CloneSet per subset with the replicas split), the wait for its own status write, a new
spec.replicas split again across the children, and a refused child update that fails the pass before
any status is written."""

from __future__ import annotations

import pytest

from kruise.api import cloneset as cloneset_api
from kruise.api import uniteddeployment as ud_api
from kruise.api.keys import LABEL_SUBSET_NAME
from kruise.control.uniteddeployment.subsets import (
    KIND_ADVANCED_STATEFULSET,
    KIND_CLONESET,
    KIND_DEPLOYMENT,
    KIND_STATEFULSET,
)
from kruise.kube.clock import FakeClock
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CLONESETS,
    CONTROLLER_REVISIONS,
    DEPLOYMENTS,
    STATEFULSETS_APPS,
    UNITED_DEPLOYMENTS,
)
from kruise.manager.controllers.uniteddeployment.reconciler import UnitedDeploymentReconciler
from tests.kit import FakeInformer, RecordingClient, RecordingEventRecorder

NS = "default"
NAME = "demo"
ZONE = "topology.kubernetes.io/zone"


def cloneset_spec() -> dict:
    """A cloneSetTemplate spec as the CloneSet webhook would default the child."""
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "x", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": NAME}},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
            },
        },
    }
    model = cloneset_api.CloneSet.model_validate(body)
    cloneset_api.set_defaults(model)
    spec = model.model_dump(by_alias=True, exclude_none=True)["spec"]
    spec.pop("replicas", None)
    spec.pop("selector", None)
    return spec


def zone_subset(zone: str, **fields) -> dict:
    return {
        "name": f"subset-{zone[-1]}",
        "nodeSelectorTerm": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]},
        **fields,
    }


def united_deployment(replicas: int = 5, generation: int = 1) -> dict:
    """Three zone subsets, subset-a pinned to one replica, the rest split evenly."""
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "ud-uid",
            "generation": generation,
            "resourceVersion": str(generation),
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": NAME}},
            "template": {
                "cloneSetTemplate": {"metadata": {"labels": {"app": NAME}}, "spec": cloneset_spec()}
            },
            "topology": {
                "subsets": [zone_subset("zone-a", replicas=1), zone_subset("zone-b"), zone_subset("zone-c")]
            },
        },
    }
    model = ud_api.UnitedDeployment.model_validate(body)
    ud_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


class Harness:
    def __init__(self, ud: dict) -> None:
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.recorder = RecordingEventRecorder()
        self.uds = FakeInformer([ud])
        self.client.put(UNITED_DEPLOYMENTS, ud)
        self.clonesets = FakeInformer()
        self.client.sync(CLONESETS, self.clonesets)
        self.revisions = FakeInformer()
        self.client.sync(CONTROLLER_REVISIONS, self.revisions)
        self.pods, self.replicasets = FakeInformer(), FakeInformer()
        self.expectations = ResourceVersionExpectations(clock=self.clock)
        self.reconciler = UnitedDeploymentReconciler(
            self.client,
            uds=self.uds,
            children={
                KIND_CLONESET: (CLONESETS, self.clonesets),
                KIND_STATEFULSET: (STATEFULSETS_APPS, FakeInformer()),
                KIND_ADVANCED_STATEFULSET: (ADVANCED_STATEFULSETS, FakeInformer()),
                KIND_DEPLOYMENT: (DEPLOYMENTS, FakeInformer()),
            },
            pods=self.pods,
            revisions=self.revisions,
            replicasets=self.replicasets,
            recorder=self.recorder,
            expectations=self.expectations,
            wall=self.clock.wall,
        )

    async def reconcile(self) -> Result | None:
        result = await self.reconciler.reconcile(f"{NS}/{NAME}")
        for cache in (self.uds, self.clonesets, self.revisions):
            cache.assert_unmodified()
        return result

    def observe_ud(self) -> None:
        """What the controller's handler does when the watch delivers the UnitedDeployment it wrote."""
        stored = self.client.object(UNITED_DEPLOYMENTS, NAME, NS)
        self.uds.add(stored)
        self.expectations.observe(stored)

    def roll_to(self, ud: dict) -> None:
        """The user's spec edit on the stored object (status kept), as the watch delivers it."""
        stored = self.client.object(UNITED_DEPLOYMENTS, NAME, NS)
        stored["spec"] = ud["spec"]
        stored["metadata"]["generation"] = ud["metadata"]["generation"]
        self.client.put(UNITED_DEPLOYMENTS, stored)
        self.observe_ud()
        self.client.clear()
        self.recorder.events.clear()

    def children(self) -> dict[str, dict]:
        return {cs["metadata"]["labels"][LABEL_SUBSET_NAME]: cs for cs in self.client.objects(CLONESETS)}


def replicas_of(children: dict[str, dict]) -> dict[str, int]:
    return {subset: cs["spec"]["replicas"] for subset, cs in children.items()}


async def test_first_pass_writes_the_revision_and_one_cloneset_per_subset() -> None:
    h = Harness(united_deployment(replicas=5))
    assert await h.reconcile() is None

    (revision,) = h.client.objects(CONTROLLER_REVISIONS)
    revision_name = revision["metadata"]["name"]
    assert revision_name.startswith(f"{NAME}-")
    assert revision["metadata"]["ownerReferences"][0]["uid"] == "ud-uid"
    assert len(h.client.calls_to("create", CLONESETS)) == 3
    children = h.children()
    assert replicas_of(children) == {"subset-a": 1, "subset-b": 2, "subset-c": 2}
    for subset, cs in children.items():
        meta = cs["metadata"]
        assert meta["name"].startswith(f"{NAME}-{subset}-")
        assert meta["labels"]["apps.kruise.io/controller-revision-hash"] == revision_name
        owner = meta["ownerReferences"][0]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("UnitedDeployment", "ud-uid", True)
        assert cs["spec"]["selector"]["matchLabels"] == {"app": NAME, LABEL_SUBSET_NAME: subset}
        template = cs["spec"]["template"]
        assert template["metadata"]["labels"][LABEL_SUBSET_NAME] == subset
        terms = template["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"] == [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [f"zone-{subset[-1]}"]}]}
        ]
    assert [(e.reason, e.message) for e in h.recorder.events] == [
        ("SuccessfulUpdateSubset", "Create 3 Subset (CloneSet)")
    ]
    (status,) = h.client.calls_to("patch", UNITED_DEPLOYMENTS, NAME, subresource="status")
    assert status.body["status"]["observedGeneration"] == 1
    assert status.body["status"]["updateStatus"]["updatedRevision"] == revision_name


async def test_a_pass_waits_for_its_own_status_write_to_reach_the_cache() -> None:
    h = Harness(united_deployment(replicas=5))
    await h.reconcile()
    h.client.clear()
    # the cache still holds the UnitedDeployment from before the status write: computing from it is unsafe
    assert await h.reconcile() == Result(requeue_after=1.0)
    assert h.client.writes == []

    h.observe_ud()
    h.client.clear()
    assert await h.reconcile() is None
    assert h.client.calls_to("create", CLONESETS) == []  # the children are there already


async def test_new_replicas_are_split_again_across_the_children() -> None:
    h = Harness(united_deployment(replicas=5))
    await h.reconcile()
    names = {subset: cs["metadata"]["name"] for subset, cs in h.children().items()}
    h.roll_to(united_deployment(replicas=9, generation=2))
    await h.reconcile()

    assert h.client.calls_to("create", CLONESETS) == [] and h.client.calls_to("delete", CLONESETS) == []
    # subset-a keeps its fixed replica; only the two children whose share changed are written
    assert sorted(c.name for c in h.client.calls_to("update", CLONESETS)) == sorted(
        [names["subset-b"], names["subset-c"]]
    )
    assert replicas_of(h.children()) == {"subset-a": 1, "subset-b": 4, "subset-c": 4}
    (status,) = h.client.calls_to("patch", UNITED_DEPLOYMENTS, NAME, subresource="status")
    assert status.body["status"]["subsetReplicas"] == {"subset-a": 1, "subset-b": 4, "subset-c": 4}
    assert status.body["status"]["observedGeneration"] == 2


async def test_a_refused_child_update_fails_the_pass_before_status_and_is_retried() -> None:
    h = Harness(united_deployment(replicas=5))
    await h.reconcile()
    child_b = h.children()["subset-b"]["metadata"]["name"]
    h.roll_to(united_deployment(replicas=9, generation=2))
    h.client.fail_next("update", CLONESETS, child_b, NS, error=Conflict)

    with pytest.raises(
        RuntimeError, match="Operation cannot be fulfilled"
    ):  # the controller requeues the key with backoff
        await h.reconcile()
    failed = [c.name for c in h.client.calls_to("update", CLONESETS) if not c.succeeded]
    assert failed == [child_b]
    assert h.recorder.reasons() == ["FailedUpdateSubset"]
    # as upstream: no status after a failure
    assert h.client.calls_to(None, UNITED_DEPLOYMENTS, subresource="status") == []
    # the other child is written regardless; only subset-b is left at its old share
    assert replicas_of(h.children()) == {"subset-a": 1, "subset-b": 2, "subset-c": 4}

    h.client.clear()
    await h.reconcile()
    assert [(c.name, c.succeeded) for c in h.client.calls_to("update", CLONESETS)] == [(child_b, True)]
    assert replicas_of(h.children()) == {"subset-a": 1, "subset-b": 4, "subset-c": 4}
