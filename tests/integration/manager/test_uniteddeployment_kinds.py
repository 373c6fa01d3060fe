"""UnitedDeployment with Advanced StatefulSet, Deployment and native StatefulSet templates.

The Advanced StatefulSet controller runs in-process and the simulator runs Deployments (and their
ReplicaSets) and native StatefulSets, so every child gets real, scheduled pods. A pod that must stay
unready gets a readiness exec probe the nodes' fake runtimes answer with a failure.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kruise.api import statefulset as statefulset_api
from kruise.api import uniteddeployment as ud_api
from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_SUBSET_NAME
from kruise.kube.errors import Conflict
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    DEPLOYMENTS,
    EVENTS,
    NODES,
    PODS,
    STATEFULSETS_APPS,
    UNITED_DEPLOYMENTS,
    ResourceRef,
)
from kruise.manager.controllers.statefulset import SETUP as ASTS_SETUP
from kruise.manager.controllers.uniteddeployment import SETUP
from kruise.sandbox.cri import ExecResult
from kruise.sandbox.cri.model import POD_NAME_LABEL
from tests.kit.polling import until

NS = "default"
ZONE = "topology.kubernetes.io/zone"
POD_TEMPLATE = {
    "metadata": {"labels": {"app": "demo"}},
    "spec": {"containers": [{"name": "main", "image": "nginx:alpine"}]},
}


@pytest.fixture
def controller_setups():
    return [SETUP, ASTS_SETUP]


def asts_spec(**extra: Any) -> dict[str, Any]:
    """An advancedStatefulSetTemplate spec as the Advanced StatefulSet webhook would default the child."""
    body = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "x", "namespace": NS},
        "spec": {
            "serviceName": "demo",
            "selector": {"matchLabels": {"app": "demo"}},
            "template": POD_TEMPLATE,
        },
    }
    body["spec"].update(extra)
    model = statefulset_api.StatefulSet.model_validate(body)
    statefulset_api.set_defaults(model)
    spec = model.model_dump(by_alias=True, exclude_none=True)["spec"]
    spec.pop("replicas", None)
    spec.pop("selector", None)
    return spec


def zone_subset(zone: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": f"subset-{zone[-1]}",
        "nodeSelectorTerm": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]},
        **fields,
    }


def manifest(
    name: str, replicas: int, field: str, spec: dict[str, Any], subsets: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "demo"}},
            "template": {field: {"metadata": {"labels": {"app": "demo"}}, "spec": spec}},
            "topology": {"subsets": subsets},
            **extra,
        },
    }
    model = ud_api.UnitedDeployment.model_validate(body)
    ud_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def children(cluster, ref: ResourceRef, ud_name: str) -> dict[str, dict[str, Any]]:
    out = {}
    for obj in (await cluster.client.list(ref, NS))["items"]:
        refs = obj["metadata"].get("ownerReferences") or []
        if any(r.get("name") == ud_name and r.get("kind") == "UnitedDeployment" for r in refs):
            out[obj["metadata"]["labels"][LABEL_SUBSET_NAME]] = obj
    return out


async def edit_ud(cluster, name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply `change` to the latest UnitedDeployment, again on a Conflict with a status write."""

    async def attempt() -> dict[str, Any]:
        ud = await cluster.client.get(UNITED_DEPLOYMENTS, name, NS)
        change(ud)
        return await cluster.client.update(UNITED_DEPLOYMENTS, ud)

    return await until(attempt, timeout=10, ignore=(Conflict,))


def set_image(field: str, image: str) -> Callable[[dict[str, Any]], None]:
    def change(ud: dict[str, Any]) -> None:
        ud["spec"]["template"][field]["spec"]["template"]["spec"]["containers"][0]["image"] = image

    return change


def replicas_of(found: dict[str, dict[str, Any]]) -> dict[str, int]:
    return {name: obj["spec"]["replicas"] for name, obj in found.items()}


async def settled_ud(cluster, name: str, ready: int, timeout: float = 60.0) -> dict[str, Any]:
    return await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, name, NS),
        lambda u: (
            (u.get("status") or {}).get("readyReplicas") == ready
            and u["status"].get("updatedReadyReplicas") == ready
            and u["status"].get("observedGeneration") == u["metadata"]["generation"]
        ),
        timeout=timeout,
    )


async def pods_in_zones(cluster, revision: str) -> dict[str, list[dict[str, Any]]]:
    """Live pods of app=demo per subset, each asserted to run in its subset's zone at `revision`."""
    nodes = {
        n["metadata"]["name"]: n["metadata"]["labels"][ZONE]
        for n in (await cluster.client.list(NODES))["items"]
    }
    per_subset: dict[str, list[dict[str, Any]]] = {}
    for pod in (await cluster.client.list(PODS, NS, label_selector={"app": "demo"}))["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        subset = pod["metadata"]["labels"][LABEL_SUBSET_NAME]
        assert nodes[pod["spec"]["nodeName"]] == f"zone-{subset[-1]}"
        assert pod["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] == revision
        per_subset.setdefault(subset, []).append(pod)
    return per_subset


async def test_advanced_statefulset_subsets_in_zones_with_manual_partition(kruise_cluster) -> None:
    cluster = kruise_cluster
    subsets = [zone_subset("zone-a", replicas=1), zone_subset("zone-b")]
    body = manifest("asts", 3, "advancedStatefulSetTemplate", asts_spec(), subsets)
    await cluster.client.create(UNITED_DEPLOYMENTS, body, NS)

    found = await cluster.until(
        lambda: children(cluster, ADVANCED_STATEFULSETS, "asts"), lambda c: len(c) == 2
    )
    assert replicas_of(found) == {"subset-a": 1, "subset-b": 2}
    for subset, child in found.items():
        assert child["apiVersion"] == "apps.kruise.io/v1beta1"
        assert child["metadata"]["name"].startswith(f"asts-{subset}-")
        assert child["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 0
        assert child["spec"]["selector"]["matchLabels"] == {"app": "demo", LABEL_SUBSET_NAME: subset}

    ud = await settled_ud(cluster, "asts", 3)
    revision = ud["status"]["currentRevision"]
    per_subset = await pods_in_zones(cluster, revision)
    assert {s: len(p) for s, p in per_subset.items()} == {"subset-a": 1, "subset-b": 2}
    # Advanced StatefulSet pods are named by ordinal after their child.
    names_b = sorted(p["metadata"]["name"] for p in per_subset["subset-b"])
    assert names_b == [f"{found['subset-b']['metadata']['name']}-{i}" for i in range(2)]
    assert ud["status"]["subsetReplicas"] == {"subset-a": 1, "subset-b": 2}

    # A new image with subset-b held at partition 1: only its ordinal 1 and subset-a's pod roll.
    def manual_and_image(ud: dict[str, Any]) -> None:
        ud["spec"]["updateStrategy"] = {"type": "Manual", "manualUpdate": {"partitions": {"subset-b": 1}}}
        set_image("advancedStatefulSetTemplate", "nginx:1.27")(ud)

    await edit_ud(cluster, "asts", manual_and_image)
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "asts", NS),
        lambda u: (
            (u.get("status") or {}).get("updatedReadyReplicas") == 2
            and u["status"].get("readyReplicas") == 3
            and u["status"]["updateStatus"]["updatedRevision"] != revision
        ),
        timeout=60,
    )
    assert ud["status"]["updateStatus"]["currentPartitions"] == {"subset-a": 0, "subset-b": 1}
    found = await children(cluster, ADVANCED_STATEFULSETS, "asts")
    assert found["subset-b"]["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 1
    new_revision = ud["status"]["updateStatus"]["updatedRevision"]
    pods = (await cluster.client.list(PODS, NS, label_selector={LABEL_SUBSET_NAME: "subset-b"}))["items"]
    by_ordinal = {
        p["metadata"]["name"][-1]: p["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH]
        for p in pods
    }
    assert by_ordinal == {"0": revision, "1": new_revision}


async def test_deployment_subsets_count_pods_through_replicasets(kruise_cluster) -> None:
    cluster = kruise_cluster
    subsets = [zone_subset("zone-a"), zone_subset("zone-b"), zone_subset("zone-c")]
    spec = {"template": POD_TEMPLATE, "strategy": {"type": "RollingUpdate"}}
    await cluster.client.create(
        UNITED_DEPLOYMENTS, manifest("dep", 4, "deploymentTemplate", spec, subsets), NS
    )

    found = await cluster.until(lambda: children(cluster, DEPLOYMENTS, "dep"), lambda c: len(c) == 3)
    assert sum(replicas_of(found).values()) == 4
    for child in found.values():
        assert child["apiVersion"] == "apps/v1" and child["kind"] == "Deployment"
        assert "updateStrategy" not in child["spec"]
        assert child["spec"]["strategy"]["type"] == "RollingUpdate"

    # updatedReadyReplicas is counted from the pods of each Deployment's ReplicaSets.
    ud = await settled_ud(cluster, "dep", 4)
    revision = ud["status"]["currentRevision"]
    per_subset = await pods_in_zones(cluster, revision)
    assert {s: len(p) for s, p in per_subset.items()} == replicas_of(found)

    # A template change rolls every Deployment to the new revision.
    def scale_and_image(ud: dict[str, Any]) -> None:
        ud["spec"]["replicas"] = 6
        set_image("deploymentTemplate", "nginx:1.27")(ud)

    await edit_ud(cluster, "dep", scale_and_image)
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "dep", NS),
        lambda u: (
            (u.get("status") or {}).get("updatedReadyReplicas") == 6
            and u["status"].get("replicas") == 6
            and u["status"]["currentRevision"] != revision
        ),
        timeout=90,
    )
    found = await children(cluster, DEPLOYMENTS, "dep")
    assert replicas_of(found) == {"subset-a": 2, "subset-b": 2, "subset-c": 2}
    assert {c["spec"]["template"]["spec"]["containers"][0]["image"] for c in found.values()} == {"nginx:1.27"}
    per_subset = await cluster.until(
        lambda: pods_in_zones(cluster, ud["status"]["currentRevision"]),
        lambda p: sum(len(v) for v in p.values()) == 6,
        timeout=60,
    )
    assert {s: len(p) for s, p in per_subset.items()} == {"subset-a": 2, "subset-b": 2, "subset-c": 2}


READINESS = {"exec": {"command": ["check"]}, "periodSeconds": 1}


def fail_readiness(cluster, failing: Callable[[str], bool]) -> None:
    """Every node answers the readiness exec probe with a failure for pods named as `failing` says."""

    def handler(container: Any, cmd: list[str]) -> ExecResult:
        return ExecResult(exit_code=1 if failing(container.labels.get(POD_NAME_LABEL, "")) else 0)

    for runtime in cluster.simulator.runtimes.values():
        runtime.exec_handler = handler


async def test_native_statefulset_subsets_get_ready_pods_in_their_zones(kruise_cluster) -> None:
    cluster = kruise_cluster
    subsets = [zone_subset("zone-a", replicas=1), zone_subset("zone-b"), zone_subset("zone-c")]
    spec = {"serviceName": "demo", "template": POD_TEMPLATE}
    await cluster.client.create(
        UNITED_DEPLOYMENTS, manifest("sts", 5, "statefulSetTemplate", spec, subsets), NS
    )
    found = await cluster.until(lambda: children(cluster, STATEFULSETS_APPS, "sts"), lambda c: len(c) == 3)
    assert replicas_of(found) == {"subset-a": 1, "subset-b": 2, "subset-c": 2}

    ud = await settled_ud(cluster, "sts", 5)
    per_subset = await pods_in_zones(cluster, ud["status"]["currentRevision"])
    assert {s: len(p) for s, p in per_subset.items()} == {"subset-a": 1, "subset-b": 2, "subset-c": 2}
    for subset, pods in per_subset.items():
        child = found[subset]["metadata"]["name"]
        assert sorted(p["metadata"]["name"] for p in pods) == [f"{child}-{i}" for i in range(len(pods))]
        assert all(p["spec"]["hostname"] == p["metadata"]["name"] for p in pods)
        assert all(p["spec"]["subdomain"] == "demo" for p in pods)
    found = await cluster.until(
        lambda: children(cluster, STATEFULSETS_APPS, "sts"),
        lambda c: all(
            (s.get("status") or {}).get("readyReplicas") == s["spec"]["replicas"] for s in c.values()
        ),
    )
    assert ud["status"]["subsetReplicas"] == {"subset-a": 1, "subset-b": 2, "subset-c": 2}


async def test_native_statefulset_children_stuck_pods_and_kind_switch(kruise_cluster) -> None:
    cluster = kruise_cluster
    # subset-a's ordinal 1 never becomes ready, which blocks an OrderedReady rolling update.
    fail_readiness(cluster, lambda pod: pod.startswith("nat-subset-a-") and pod.endswith("-1"))
    subsets = [zone_subset("zone-a"), zone_subset("zone-b")]
    template = copy.deepcopy(POD_TEMPLATE)
    template["spec"]["containers"][0]["readinessProbe"] = READINESS
    spec = {"serviceName": "demo", "template": template}
    await cluster.client.create(
        UNITED_DEPLOYMENTS, manifest("nat", 4, "statefulSetTemplate", spec, subsets), NS
    )

    found = await cluster.until(lambda: children(cluster, STATEFULSETS_APPS, "nat"), lambda c: len(c) == 2)
    assert replicas_of(found) == {"subset-a": 2, "subset-b": 2}
    child = found["subset-a"]
    assert child["apiVersion"] == "apps/v1" and child["kind"] == "StatefulSet"
    assert child["spec"]["serviceName"] == "demo"
    assert child["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    revision = child["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH]
    ud = await cluster.until(
        lambda: cluster.client.get(UNITED_DEPLOYMENTS, "nat", NS),
        lambda u: (u.get("status") or {}).get("readyReplicas") == 3 and u["status"].get("replicas") == 4,
    )
    assert ud["status"]["updatedReplicas"] == 4
    stuck = await cluster.client.get(PODS, f"{child['metadata']['name']}-1", NS)

    # A new template: the child is rewritten and its old, unready pod at/above partition is deleted
    # (the stuck-rollout workaround), so the StatefulSet controller recreates it at the new revision;
    # the ready ordinal 0 stays behind it, as OrderedReady waits for ordinal 1 to become ready.
    await edit_ud(cluster, "nat", set_image("statefulSetTemplate", "nginx:1.27"))

    async def subset_a_pods() -> dict[str, dict[str, Any]]:
        listing = await cluster.client.list(PODS, NS, label_selector={LABEL_SUBSET_NAME: "subset-a"})
        return {
            p["metadata"]["name"]: p for p in listing["items"] if not p["metadata"].get("deletionTimestamp")
        }

    name = child["metadata"]["name"]
    pods = await cluster.until(
        subset_a_pods,
        lambda ps: (
            f"{name}-1" in ps
            and ps[f"{name}-1"]["metadata"]["uid"] != stuck["metadata"]["uid"]
            and ps[f"{name}-1"]["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] != revision
        ),
    )
    assert pods[f"{name}-1"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert pods[f"{name}-0"]["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] == revision
    found = await children(cluster, STATEFULSETS_APPS, "nat")
    assert found["subset-a"]["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] != revision

    # Switching the template kind replaces the StatefulSets by Deployments.
    deployment = {"metadata": {"labels": {"app": "demo"}}, "spec": {"template": POD_TEMPLATE}}
    await edit_ud(
        cluster, "nat", lambda u: u["spec"].__setitem__("template", {"deploymentTemplate": deployment})
    )
    await cluster.until(lambda: children(cluster, DEPLOYMENTS, "nat"), lambda c: len(c) == 2)
    await cluster.until(lambda: children(cluster, STATEFULSETS_APPS, "nat"), lambda c: not c)
    # the recorder writes events after the creates return: wait for them
    await cluster.until(
        lambda: cluster.client.list(EVENTS, NS),
        lambda listing: (
            {"Create 2 Subset (StatefulSet)", "Create 2 Subset (Deployment)"}
            <= {e["message"] for e in listing["items"] if e["involvedObject"].get("name") == "nat"}
        ),
    )
