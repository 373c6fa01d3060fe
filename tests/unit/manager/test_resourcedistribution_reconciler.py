"""ResourceDistributionReconciler against fake caches and a recording client: copies created, updated,
left alone on conflict, removed from namespaces that stop being targets; status and retries."""

from __future__ import annotations

from kruise.control.resourcedistribution.distribution import CONFLICT_MESSAGE, desired_copy, resource_hash
from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock
from kruise.kube.controller import Result
from kruise.kube.errors import Forbidden
from kruise.kube.resources import CONFIGMAPS, NAMESPACES, RESOURCEDISTRIBUTIONS, SECRETS
from kruise.manager.controllers.resourcedistribution.controller import (
    copy_handlers,
    distribution_of,
    namespace_handlers,
)
from kruise.manager.controllers.resourcedistribution.reconciler import ResourceDistributionReconciler
from tests.kit import FakeInformer, RecordingClient

SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "regcred"}, "data": {"k": "dg=="}}


def distribution(targets, resource=SECRET, name="share"):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ResourceDistribution",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"resource": resource, "targets": targets},
    }


def ns(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def included(*names):
    return {"includedNamespaces": {"list": [{"name": n} for n in names]}}


class Harness:
    def __init__(self, rds, namespaces=("default", "ns-1", "ns-2"), secrets=()):
        self.clock = FakeClock()
        self.client = RecordingClient(self.clock)
        self.rds, self.namespaces = FakeInformer(), FakeInformer()
        self.secrets, self.configmaps = FakeInformer(), FakeInformer()
        self.client.put(RESOURCEDISTRIBUTIONS, *rds)
        self.client.put(NAMESPACES, *[ns(n) if isinstance(n, str) else n for n in namespaces])
        self.client.put(SECRETS, *secrets)
        for ref, informer in ((RESOURCEDISTRIBUTIONS, self.rds), (NAMESPACES, self.namespaces),
                              (SECRETS, self.secrets), (CONFIGMAPS, self.configmaps)):  # fmt: skip
            self.client.sync(ref, informer)
        self.reconciler = ResourceDistributionReconciler(
            self.client,
            distributions=self.rds,
            namespaces=self.namespaces,
            copies={"Secret": self.secrets, "ConfigMap": self.configmaps},
            clock=self.clock,
        )

    async def reconcile(self, key="share"):
        result = await self.reconciler.reconcile(key)
        for informer in (self.rds, self.namespaces, self.secrets, self.configmaps):
            informer.assert_unmodified()
        return result

    def copies(self):
        return {s["metadata"]["namespace"]: s for s in self.client.objects(SECRETS)}

    def status(self, name="share"):
        return self.client.object(RESOURCEDISTRIBUTIONS, name).get("status") or {}

    def conditions(self):
        return {c["type"]: c for c in self.status()["conditions"]}

    def edit(self, targets):
        rd = self.client.object(RESOURCEDISTRIBUTIONS, "share")
        rd["spec"]["targets"] = targets
        self.client.put(RESOURCEDISTRIBUTIONS, rd)


async def test_copies_land_in_listed_namespaces_and_a_missing_namespace_is_reported():
    h = Harness([distribution(included("ns-1", "ns-2", "ghost"))])
    assert await h.reconcile() is None
    copies = h.copies()
    assert sorted(copies) == ["ns-1", "ns-2"]
    annotations = copies["ns-1"]["metadata"]["annotations"]
    assert annotations["kruise.io/resourcedistribution.resource.from"] == "share"
    assert annotations["kruise.io/resourcedistribution.resource.hashcode"] == resource_hash(
        distribution(included())
    )
    assert copies["ns-1"]["data"] == {"k": "dg=="}
    assert (h.status()["desired"], h.status()["succeeded"], h.status()["failed"]) == (3, 2, 1)
    missing = h.conditions()["NamespaceNotExists"]
    assert (missing["status"], missing["failedNamespace"]) == ("True", ["ghost"])
    (status_call,) = h.client.calls_to("patch", RESOURCEDISTRIBUTIONS)
    assert (status_call.subresource, status_call.patch_type) == ("status", PatchType.MERGE)


async def test_an_unrelated_object_of_the_same_name_is_a_conflict_and_left_alone():
    foreign = {**SECRET, "metadata": {"name": "regcred", "namespace": "ns-2"}, "data": {"k": "b3RoZXI="}}
    h = Harness([distribution(included("ns-1", "ns-2"))], secrets=[foreign])
    assert await h.reconcile() is None  # a conflict waits for an event, no retry
    assert h.copies()["ns-2"]["data"] == {"k": "b3RoZXI="}
    conflict = h.conditions()["ConflictOccurred"]
    assert (conflict["status"], conflict["failedNamespace"]) == ("True", ["ns-2"])
    assert conflict["reason"] == CONFLICT_MESSAGE
    assert h.client.calls_to("update", SECRETS) == [] and h.client.calls_to("delete") == []


async def test_a_changed_resource_updates_the_copies_and_an_unchanged_one_writes_nothing():
    h = Harness([distribution(included("ns-1"))])
    await h.reconcile()
    h.client.clear()
    await h.reconcile()
    assert h.client.writes == []

    rd = h.client.object(RESOURCEDISTRIBUTIONS, "share")
    rd["spec"]["resource"] = {**SECRET, "data": {"k": "bmV3"}}
    h.client.put(RESOURCEDISTRIBUTIONS, rd)
    await h.reconcile()
    (update,) = h.client.calls_to("update", SECRETS)
    assert update.body["metadata"]["resourceVersion"]
    copy = h.copies()["ns-1"]
    assert copy["data"] == {"k": "bmV3"}
    assert copy["metadata"]["annotations"][
        "kruise.io/resourcedistribution.resource.hashcode"
    ] == resource_hash(rd)


async def test_a_namespace_that_stops_being_a_target_loses_its_copy_but_not_a_foreign_object():
    foreign = {**SECRET, "metadata": {"name": "regcred", "namespace": "default"}}
    h = Harness([distribution(included("ns-1", "ns-2"))], secrets=[foreign])
    await h.reconcile()
    h.edit(included("ns-1"))
    await h.reconcile()
    assert [c.namespace for c in h.client.calls_to("delete", SECRETS)] == ["ns-2"]
    assert sorted(h.copies()) == ["default", "ns-1"]
    assert h.status()["desired"] == 1


async def test_all_namespaces_with_exclusions_and_config_maps():
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1"}}
    h = Harness(
        [distribution({"allNamespaces": True, "excludedNamespaces": {"list": [{"name": "ns-2"}]}}, config)],
        namespaces=("default", "ns-1", "ns-2", "kube-system"),
    )
    await h.reconcile()
    assert sorted(c["metadata"]["namespace"] for c in h.client.objects(CONFIGMAPS)) == ["default", "ns-1"]


async def test_a_failed_write_is_recorded_and_retried():
    h = Harness([distribution(included("ns-1", "ns-2"))])
    h.client.fail_next("create", SECRETS, "regcred", "ns-1", error=Forbidden)
    assert await h.reconcile() == Result(requeue=True)
    failed = h.conditions()["CreateResourceFailed"]
    assert failed["status"] == "True" and failed["failedNamespace"] == ["ns-1"]
    assert sorted(h.copies()) == ["ns-2"]
    assert await h.reconcile() is None
    assert (
        sorted(h.copies()) == ["ns-1", "ns-2"] and h.conditions()["CreateResourceFailed"]["status"] == "False"
    )


async def test_a_deleted_distribution_is_left_to_the_garbage_collector():
    h = Harness([])
    assert await h.reconcile() is None
    assert h.client.writes == []


def test_event_mapping():
    prod = {"namespaceLabelSelector": {"matchLabels": {"env": "prod"}}}
    rds = FakeInformer([distribution(prod, name="by-label"), distribution(included("ns-1"), name="by-list")])
    woken: list[str] = []
    handlers = namespace_handlers(rds, woken.append)
    handlers["on_add"](ns("new", env="prod"))
    assert woken == ["by-label"]
    woken.clear()
    handlers["on_update"](ns("ns-1"), ns("ns-1", env="prod"))
    assert woken == ["by-label"]
    woken.clear()
    handlers["on_update"](ns("ns-1", env="prod"), ns("ns-1", env="prod"))
    assert woken == []
    handlers["on_delete"](ns("ns-1"))
    assert woken == ["by-list"]

    copy = desired_copy(distribution(included("ns-1")), "ns-1")
    assert distribution_of(copy) == ["share"]
    woken.clear()
    on_copy = copy_handlers(woken.append)
    on_copy["on_update"](copy, copy)
    on_copy["on_delete"](copy)
    assert woken == ["share", "share"] and "on_add" not in on_copy
