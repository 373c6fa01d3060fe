"""PersistentPodStateReconciler against fake caches and a recording client: pod states written,
no write when nothing changed, records cleared with the workload, auto-generated PPS created,
updated and deleted from StatefulSet annotations; and the event handlers' wake-ups."""

from __future__ import annotations

from functools import partial

from kruise.control.persistentpodstate import podstates
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    NODES,
    PERSISTENT_POD_STATES,
    PODS,
    STATEFULSETS_APPS,
)
from kruise.manager.controllers.persistentpodstate.controller import pod_handlers, workload_handlers
from kruise.manager.controllers.persistentpodstate.reconciler import PersistentPodStateReconciler
from tests.kit import FakeInformer, RecordingClient
from tests.kit.pods import controller_ref, pod

HOST = "kubernetes.io/hostname"
AUTO = "kruise.io/auto-generate-persistent-pod-state"
REQUIRED = "kruise.io/required-persistent-topology"
# a running pod of StatefulSet web on node-1 (each test says what differs)
sts_pod = partial(
    pod, rv=1, owner=controller_ref("StatefulSet", "web"), node="node-1", phase="Running", ready=True
)


def statefulset(name="web", replicas=2, api_version="apps/v1", **annotations):
    return {
        "apiVersion": api_version,
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "annotations": annotations},
        "spec": {"replicas": replicas},
    }


def pps(name="web", target="web", api_version="apps/v1", status=None):
    obj = {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": api_version, "kind": "StatefulSet", "name": target},
            "requiredPersistentTopology": {"nodeTopologyKeys": [HOST]},
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


class Harness:
    def __init__(self, states=(), pods=(), sets=(), asts=()):
        self.client = RecordingClient()
        self.states, self.pods, self.nodes = FakeInformer(), FakeInformer(), FakeInformer()
        self.sets, self.asts = FakeInformer(), FakeInformer()
        self.client.put(PERSISTENT_POD_STATES, *states)
        self.client.put(PODS, *pods)
        self.client.put(NODES, {"metadata": {"name": "node-1", "labels": {HOST: "node-1"}}})
        self.client.put(STATEFULSETS_APPS, *sets)
        self.client.put(ADVANCED_STATEFULSETS, *asts)
        for ref, informer in (
            (PERSISTENT_POD_STATES, self.states),
            (PODS, self.pods),
            (NODES, self.nodes),
            (STATEFULSETS_APPS, self.sets),
            (ADVANCED_STATEFULSETS, self.asts),
        ):
            self.client.sync(ref, informer)
        self.reconciler = PersistentPodStateReconciler(
            self.client,
            states=self.states,
            pods=self.pods,
            nodes=self.nodes,
            workloads={"apps": self.sets, "apps.kruise.io": self.asts},
        )

    async def reconcile(self, key="default/web"):
        result = await self.reconciler.reconcile(key)
        for informer in (self.states, self.pods, self.nodes, self.sets, self.asts):
            informer.assert_unmodified()
        return result

    def status(self, name="web"):
        return self.client.object(PERSISTENT_POD_STATES, name, "default").get("status") or {}


async def test_ready_pods_recorded_then_nothing_written_when_unchanged():
    h = Harness([pps()], [sts_pod("web-0"), sts_pod("web-1", ready=False)], [statefulset()])
    assert await h.reconcile() is None
    assert h.status()["podStates"] == {
        "web-0": {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1"}}
    }
    assert [c.subresource for c in h.client.writes] == ["status"]
    h.client.clear()
    await h.reconcile()
    assert h.client.writes == []


async def test_pods_of_another_owner_are_not_recorded():
    h = Harness(
        [pps()],
        [sts_pod("db-0", owner=controller_ref("StatefulSet", "db"))],
        [statefulset(), statefulset("db")],
    )
    await h.reconcile()
    assert "podStates" not in h.status()


async def test_advanced_statefulset_target_is_followed():
    target = pps(api_version="apps.kruise.io/v1beta1")
    h = Harness(
        [target],
        [sts_pod("web-0", owner=controller_ref("StatefulSet", "web", api_version="apps.kruise.io/v1beta1"))],
        asts=[statefulset(api_version="apps.kruise.io/v1beta1")],
    )
    await h.reconcile()
    assert list(h.status()["podStates"]) == ["web-0"]


async def test_records_cleared_when_the_workload_is_gone():
    old = {"observedGeneration": 1, "podStates": {"web-0": {"nodeName": "node-1"}}}
    h = Harness([pps(status=old)])
    await h.reconcile()
    assert h.status() == {"observedGeneration": 1}


async def test_generate_creates_updates_and_deletes_the_workload_pps():
    sts = statefulset(**{AUTO: "true", REQUIRED: HOST})
    h = Harness(sets=[sts])
    key = podstates.generate_key("default", "apps/v1", "StatefulSet", "web")
    await h.reconcile(key)
    created = h.client.object(PERSISTENT_POD_STATES, "web", "default")
    assert created["spec"]["requiredPersistentTopology"] == {"nodeTopologyKeys": [HOST]}
    assert created["metadata"]["ownerReferences"][0]["uid"] == "uid-web"
    h.client.put(STATEFULSETS_APPS, statefulset(**{AUTO: "true", REQUIRED: f"{HOST},zone"}))
    await h.reconcile(key)
    updated = h.client.object(PERSISTENT_POD_STATES, "web", "default")
    assert updated["spec"]["requiredPersistentTopology"] == {"nodeTopologyKeys": [HOST, "zone"]}
    h.client.put(STATEFULSETS_APPS, statefulset(**{AUTO: "false"}))
    h.sets.add(statefulset(**{AUTO: "false"}))
    await h.reconcile(key)
    assert h.client.object(PERSISTENT_POD_STATES, "web", "default") is None


async def test_generate_leaves_a_user_pps_of_the_same_name_alone():
    h = Harness([pps()], sets=[statefulset()])
    await h.reconcile(podstates.generate_key("default", "apps/v1", "StatefulSet", "web"))
    assert h.client.writes == []


def test_pod_handlers_wake_on_ready_terminating_and_delete_only():
    states = FakeInformer([pps()])
    woken = []
    handlers = pod_handlers(states, woken.append)
    assert "on_add" not in handlers
    old, new = sts_pod("web-0", ready=False), sts_pod("web-0")
    new["metadata"]["resourceVersion"] = "2"
    handlers["on_update"](old, new)
    relabeled = sts_pod("web-0")
    relabeled["metadata"]["resourceVersion"] = "3"
    handlers["on_update"](new, relabeled)  # still Ready: nothing
    handlers["on_delete"](sts_pod("web-0"))
    handlers["on_delete"](sts_pod("x-0", owner=controller_ref("StatefulSet", "x")))
    assert woken == ["default/web", "default/web"]


def test_workload_handlers_ask_for_generation_on_annotation_changes():
    woken = []
    handlers = workload_handlers(STATEFULSETS_APPS, FakeInformer([pps()]), woken.append)
    handlers["on_add"](statefulset())
    handlers["on_add"](statefulset(**{AUTO: "true", REQUIRED: HOST}))
    handlers["on_update"](statefulset(), statefulset(**{AUTO: "true"}))
    deleting = statefulset()
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    handlers["on_update"](statefulset(), deleting)
    generate = "default/generate#apps/v1#StatefulSet#web"
    assert woken == [generate, generate, "default/web"]
