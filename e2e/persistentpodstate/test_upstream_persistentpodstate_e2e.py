"""Upstream's PersistentPodState e2e, Describe "PersistentPodState" — context "PersistentPodState
functionality" (openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/persistent_pod_state.go, helpers in
framework/v1alpha1/persistent_pod_state_util.go) — translated to kubectl on the AllAlpha sandbox. Where
upstream sleeps 3 s (or 10 s) after a change and then reads the PersistentPodState once, the translation
polls until the read passes the same checks."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import pytest
from harness import Cluster
from upstream_kit import Case, Obj, is_ready, upstream_case

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

OS_TOPOLOGY = "kubernetes.io/os"
NODE_TOPOLOGY = "kubernetes.io/hostname"
AUTO_GENERATE = "kruise.io/auto-generate-persistent-pod-state"
REQUIRED = "kruise.io/required-persistent-topology"
PREFERRED = "kruise.io/preferred-persistent-topology"
PERSISTENT_ANNOTATIONS = "kruise.io/persistent-pod-annotations"
INJECTED = "kruise.io/injected-persistent-pod-state"
PPS = "persistentpodstates.v1alpha1.apps.kruise.io"
STS = "statefulsets.v1.apps"
STS_LIKE = "statefulsetliketests.v1beta1.apps.kruise.io"
STS_LIKE_CRD = "statefulsetliketests.apps.kruise.io"
WAIT = 300.0  # WaitForStatefulsetRunning's 5 minutes


def base_statefulset(ns: str) -> Obj:
    """`NewBaseStatefulset`: an apps/v1 StatefulSet of 5 busybox pods."""
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "statefulset", "namespace": ns, "annotations": {}, "labels": {}},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": {"app": "staticip"}},
            "template": {
                "metadata": {"labels": {"app": "staticip"}, "annotations": {}},
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox:1.34",
                            "command": ["/bin/sh", "-c", "sleep 10000000"],
                        }
                    ],
                    "terminationGracePeriodSeconds": 5,
                },
            },
        },
    }


class StateTester:
    """`PersistentPodStateTester` on kubectl."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.nodes: dict[str, Obj] = {}

    async def node(self, name: str) -> Obj:
        if name not in self.nodes:
            _, out = await self.case.cluster.kubectl("get", "node", name, "-o", "json")
            self.nodes[name] = json.loads(out)
        return self.nodes[name]

    async def wait_running(self, sts: Obj) -> None:
        """`WaitForStatefulsetRunning`: observed, and every replica ready and updated."""

        def running(inner: Obj | None) -> bool:
            if inner is None:
                return False
            status = inner.get("status") or {}
            want = inner["spec"]["replicas"]
            return inner["metadata"].get("generation") == status.get("observedGeneration") and (
                want
                == status.get("readyReplicas", 0)
                == status.get("updatedReplicas", 0)
                == status.get("replicas", 0)
            )

        name = sts["metadata"]["name"]
        await self.case.eventually(
            lambda: self.case.get(STS, name), running, f"statefulset {name} running", WAIT
        )

    async def create_statefulset(self, sts: Obj) -> None:
        await self.case.create(sts)
        await self.wait_running(sts)

    async def update_statefulset(self, sts: Obj) -> None:
        """`UpdateStatefulset`: the spec, annotations and labels of `sts` written over the live object."""

        def change(live: Obj) -> None:
            live["spec"] = copy.deepcopy(sts["spec"])
            live["metadata"]["annotations"] = dict(sts["metadata"]["annotations"])
            live["metadata"]["labels"] = dict(sts["metadata"]["labels"])

        await self.case.update(STS, sts["metadata"]["name"], change)
        await self.wait_running(sts)

    async def live_pods(self) -> list[Obj]:
        """`ListPodsInKruiseSts` / `ListPodsInNamespace`: the namespace's pods not being deleted."""
        return [p for p in await self.case.list("pods") if not p["metadata"].get("deletionTimestamp")]

    async def read(self, name: str) -> tuple[list[Obj], Obj | None]:
        return await self.live_pods(), await self.case.get(PPS, name)

    async def problems(
        self,
        pods: list[Obj],
        pps: Obj | None,
        replicas: int,
        labels: int,
        only_key: str | None = None,
        states: Obj | None = None,
        injected: bool = False,
    ) -> list[str]:
        """Upstream's block of checks after each step, as a list of what does not hold (empty: all do)."""
        if len(pods) != replicas:
            return [f"{len(pods)} pods, want {replicas}"]
        if pps is None:
            return ["no PersistentPodState"]
        pod_states = (pps.get("status") or {}).get("podStates") or {}
        found = []
        if states is not None:
            if pod_states != states:
                found.append(f"podStates {pod_states} != {states}")
        elif len(pod_states) != len(pods):
            found.append(f"{len(pod_states)} podStates for {len(pods)} pods")
        for pod in pods:
            name = pod["metadata"]["name"]
            if (
                injected
                and (pod["metadata"].get("annotations") or {}).get(INJECTED) != pps["metadata"]["name"]
            ):
                found.append(f"pod {name} lacks {INJECTED}={pps['metadata']['name']}")
            state = pod_states.get(name)
            if state is None:
                found.append(f"no podState for {name}")
                continue
            topology = state.get("nodeTopologyLabels") or {}
            if len(topology) != labels:
                found.append(f"{name}: nodeTopologyLabels {topology}, want {labels}")
            node = await self.node(pod["spec"]["nodeName"])
            for key, value in topology.items():
                if only_key is not None and key != only_key:
                    found.append(f"{name}: topology key {key}, want {only_key}")
                if node["metadata"]["labels"].get(key) != value:
                    found.append(f"{name}: {key}={value} but node says {node['metadata']['labels'].get(key)}")
            if state.get("nodeName") != node["metadata"]["name"]:
                found.append(f"{name}: nodeName {state.get('nodeName')}, pod on {node['metadata']['name']}")
        return found

    async def check(self, name: str, what: str, **want: object) -> Obj:
        """Poll until the pods and the PersistentPodState pass `problems`; returns the PersistentPodState."""
        last: list[str] = []

        async def probe() -> list[str]:
            nonlocal last
            pods, pps = await self.read(name)
            last = await self.problems(pods, pps, **want)  # type: ignore[arg-type]
            return last

        await self.case.eventually(probe, lambda found: not found, what, 60.0)
        pps = await self.case.get(PPS, name)
        assert pps is not None
        return pps


def states_of(pps: Obj) -> Obj:
    return copy.deepcopy((pps.get("status") or {}).get("podStates") or {})


async def test_statefulset_node_topology(kruise_sandbox_all_gates: Cluster):
    """statefulset node topology"""
    async with upstream_case(kruise_sandbox_all_gates, "persistentpodstates") as case:
        tester = StateTester(case)
        sts = base_statefulset(case.ns)
        name = sts["metadata"]["name"]
        sts["metadata"]["annotations"].update(
            {AUTO_GENERATE: "true", REQUIRED: OS_TOPOLOGY, PREFERRED: NODE_TOPOLOGY}
        )
        await tester.create_statefulset(sts)
        pps = await tester.check(name, "PersistentPodState after create", replicas=5, labels=2)
        current = states_of(pps)

        # upgrade statefulSet.container[x].image
        sts["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.35"
        await tester.update_statefulset(sts)
        await tester.check(
            name, "states kept across the image upgrade", replicas=5, labels=2, states=current, injected=True
        )

        # scale down, 5 -> 1
        sts["spec"]["replicas"] = 1
        await tester.update_statefulset(sts)
        await tester.check(name, "states after scaling to 1", replicas=1, labels=2, injected=True)

        # scale up, 1 -> 5
        sts["spec"]["replicas"] = 5
        await tester.update_statefulset(sts)
        pps = await tester.check(name, "states after scaling to 5", replicas=5, labels=2)
        current = states_of(pps)

        # delete auto generate annotation
        del sts["metadata"]["annotations"][AUTO_GENERATE]
        await tester.update_statefulset(sts)
        await case.eventually(
            lambda: case.get(PPS, name), lambda got: got is None, "PersistentPodState deleted", 60.0
        )

        # add auto generate annotation
        sts["metadata"]["annotations"][AUTO_GENERATE] = "true"
        await tester.update_statefulset(sts)
        await tester.check(name, "states rebuilt as they were", replicas=5, labels=2, states=current)

        del sts["metadata"]["annotations"][REQUIRED]
        await tester.update_statefulset(sts)
        pps = await tester.check(
            name, "states without the required topology", replicas=5, labels=1, only_key=NODE_TOPOLOGY
        )
        current = states_of(pps)

        # update persistentPodState
        def when_deleted(live: Obj) -> None:
            live["spec"]["persistentPodStateRetentionPolicy"] = "WhenDeleted"

        await case.update(PPS, name, when_deleted)

        # scale down 5 -> 1
        sts["spec"]["replicas"] = 1
        await tester.update_statefulset(sts)
        await tester.check(
            name,
            "states retained after scaling to 1 (WhenDeleted)",
            replicas=1,
            labels=1,
            only_key=NODE_TOPOLOGY,
            states=current,
            injected=True,
        )

        # check validate webhook
        other = {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "PersistentPodState",
            "metadata": {"namespace": case.ns, "name": "pps-test"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name},
                "requiredPersistentTopology": {"nodeTopologyKeys": [NODE_TOPOLOGY]},
                "preferredPersistentTopology": [
                    {"weight": 100, "preference": {"nodeTopologyKeys": [OS_TOPOLOGY]}}
                ],
            },
        }
        code, out = await case.kubectl("create", "-f", "-", stdin=json.dumps(other), check=False)
        assert code != 0, f"a second PersistentPodState for {name} was admitted: {out}"

        # delete sts
        await case.kubectl("delete", STS, name, "--wait=false")
        await case.eventually(
            lambda: case.get(PPS, name), lambda got: got is None, "PersistentPodState deleted", 60.0
        )


def statefulset_like_crd() -> Obj:
    """`CreateStatefulsetLikeCRD`: a namespaced kind that keeps any field."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": STS_LIKE_CRD},
        "spec": {
            "group": "apps.kruise.io",
            "names": {
                "plural": "statefulsetliketests",
                "singular": "statefulsetliketest",
                "kind": "StatefulSetLikeTest",
            },
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
            "scope": "Namespaced",
        },
    }


async def add_to_watch_whitelist(case: Case) -> None:
    """`CreateDynamicWatchWhiteList`: StatefulSetLikeTest added to kruise-configuration's
    PPS_Watch_Custom_Workload_WhiteList (the ConfigMap created when there is none)."""
    cluster = case.cluster
    gvk = {"Group": "apps.kruise.io", "Version": "v1beta1", "Kind": "StatefulSetLikeTest"}
    code, out = await cluster.kubectl(
        "get", "configmap", "kruise-configuration", "-n", "kruise-system", "-o", "json", check=False
    )
    if code != 0:
        assert "NotFound" in out, out
        conf: Obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"namespace": "kruise-system", "name": "kruise-configuration"},
            "data": {},
        }
    else:
        conf = json.loads(out)
    data = conf.setdefault("data", {}) or {}
    conf["data"] = data
    whitelist = json.loads(data.get("PPS_Watch_Custom_Workload_WhiteList") or "{}")
    whitelist["workloads"] = [*(whitelist.get("workloads") or []), gvk]
    data["PPS_Watch_Custom_Workload_WhiteList"] = json.dumps(whitelist)
    verb = "replace" if code == 0 else "create"
    await cluster.kubectl(verb, "-f", "-", stdin=json.dumps(conf))


async def test_statefulsetlike_node_topology(kruise_sandbox_all_gates: Cluster):
    """statefulsetlike node topology

    Upstream runs the body only when CRD statefulsetliketests.apps.kruise.io already exists ("crd
    statefilsetlike.kruise.io not exist, skip") and creates it only after that check, so on a fresh kind
    cluster the case returns at once. The translation creates the CRD first (as the body does) so the
    body runs. Upstream's `AddStatefulsetLikeClusterRoleConf` grants kruise-manager's ClusterRole the
    new kind; the sandbox's kruise-manager is a host process with the cluster-admin kubeconfig and no
    ClusterRole, so there is nothing to extend."""
    async with upstream_case(kruise_sandbox_all_gates, "persistentpodstates") as case:
        cluster = case.cluster
        code, out = await cluster.kubectl(
            "create", "-f", "-", stdin=json.dumps(statefulset_like_crd()), check=False
        )
        assert code == 0 or "AlreadyExists" in out, out
        await case.eventually(
            lambda: cluster.kubectl("get", STS_LIKE, "-A", check=False),
            lambda result: result[0] == 0,
            "StatefulSetLikeTest served",
            60.0,
        )
        sts = {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "StatefulSetLikeTest",
            "metadata": {
                "name": "statefulsetlike",
                "namespace": case.ns,
                "annotations": {
                    AUTO_GENERATE: "true",
                    REQUIRED: OS_TOPOLOGY,
                    PREFERRED: NODE_TOPOLOGY,
                    PERSISTENT_ANNOTATIONS: "name",
                },
                "labels": {},
            },
            "spec": {
                "replicas": 5,
                "selector": {"matchLabels": {"app": "staticip"}},
                "template": {
                    "metadata": {"labels": {"app": "staticip"}, "annotations": {}},
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "nginx:1.23.1",
                                "command": ["/bin/sh", "-c", "sleep 10000000"],
                            }
                        ],
                        "terminationGracePeriodSeconds": 5,
                    },
                },
            },
        }
        sts = await case.create(sts)
        name = sts["metadata"]["name"]
        await add_to_watch_whitelist(case)

        # CreateStatefulsetLikePods: the template's pods, controlled by the StatefulSetLikeTest
        owner = {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "StatefulSetLikeTest",
            "name": name,
            "uid": sts["metadata"]["uid"],
            "controller": True,
        }
        template = sts["spec"]["template"]
        for i in range(5):
            pod_name = f"{name}-{i}"
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": pod_name,
                    "namespace": case.ns,
                    "labels": dict(template["metadata"]["labels"]),
                    "annotations": {"name": pod_name},
                    "ownerReferences": [owner],
                },
                "spec": copy.deepcopy(template["spec"]),
            }
            await case.create(pod)
        ready: Callable[[list[Obj]], bool] = lambda pods: sum(is_ready(p) for p in pods) == 5  # noqa: E731
        pods = await case.eventually(
            lambda: case.list("pods", {"app": "staticip"}), ready, "5 statefulsetlike pods ready", WAIT
        )

        # UpdateStatefulsetLikeStatus
        live = await case.must_get(STS_LIKE, name)
        live["status"] = {"replicas": 5, "readyReplicas": sum(is_ready(p) for p in pods)}
        await case.kubectl("replace", "-f", "-", stdin=json.dumps(live))

        tester = StateTester(case)
        pps = await tester.check(name, "PersistentPodState of the statefulsetlike", replicas=5, labels=2)
        current = states_of(pps)
        assert len(current) == 5, current
        for pod_name, state in current.items():
            assert len(state.get("annotations") or {}) == 1, (pod_name, state)
