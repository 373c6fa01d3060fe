"""Advanced DaemonSet controller against the emulator + simulator: one pod per eligible node, pods
following nodes, revisions and status, Standard rolling update within maxUnavailable, partition."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kruise.api import daemonset as daemonset_api
from kruise.control.daemonnodes import target_node_name
from kruise.kube.resources import ADVANCED_DAEMONSETS, CONTROLLER_REVISIONS, EVENTS, NODES, PODS
from kruise.manager.controllers.daemonset import SETUP

NS = "default"
NAME = "ds-demo"


@pytest.fixture
def controller_setups():
    return [SETUP]


def manifest(
    name: str = NAME, image: str = "nginx:alpine", node_selector=None, **spec: Any
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"containers": [{"name": "main", "image": image}]}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
            **spec,
        },
    }
    # The webhook is not running here: default the object the way it would.
    model = daemonset_api.DaemonSet.model_validate(body)
    daemonset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def live_pods(cluster, name: str = NAME) -> list[dict[str, Any]]:
    listing = await cluster.client.list(PODS, NS, label_selector={"app": name})
    return [p for p in listing["items"] if not p["metadata"].get("deletionTimestamp")]


async def get_ds(cluster, name: str = NAME) -> dict[str, Any]:
    return await cluster.client.get(ADVANCED_DAEMONSETS, name, NS)


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


def by_node(pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {target_node_name(p): p for p in pods}


async def settled(cluster, desired: int, name: str = NAME, timeout: float = 30.0) -> dict[str, Any]:
    def done(ds: dict[str, Any]) -> bool:
        status = ds.get("status") or {}
        return (
            status.get("observedGeneration") == ds["metadata"]["generation"]
            and all(
                status.get(k) == desired
                for k in (
                    "desiredNumberScheduled",
                    "currentNumberScheduled",
                    "numberReady",
                    "updatedNumberScheduled",
                    "numberAvailable",
                )
            )
            and status.get("numberMisscheduled") == 0
        )

    return await cluster.until(lambda: get_ds(cluster, name), done, timeout=timeout)


async def update_template(cluster, change, name: str = NAME) -> None:
    ds = await get_ds(cluster, name)
    body = copy.deepcopy(ds)
    change(body["spec"])
    await cluster.client.update(ADVANCED_DAEMONSETS, body)


async def event_messages(cluster, name: str = NAME) -> list[tuple[str, str]]:
    listing = await cluster.client.list(EVENTS, NS)
    return [(e["reason"], e["message"]) for e in listing["items"] if e["involvedObject"].get("name") == name]


def set_image(image: str):
    def change(spec: dict[str, Any]) -> None:
        spec["template"]["spec"]["containers"][0]["image"] = image

    return change


async def test_one_pod_per_node_with_revision_status_and_events(kruise_cluster):
    await kruise_cluster.client.create(ADVANCED_DAEMONSETS, manifest())
    ds = await settled(kruise_cluster, 3)
    pods = await live_pods(kruise_cluster)
    placed = by_node(pods)
    assert sorted(placed) == ["node-1", "node-2", "node-3"]
    revisions = (await kruise_cluster.client.list(CONTROLLER_REVISIONS, NS))["items"]
    assert len(revisions) == 1
    hash_ = ds["status"]["daemonSetHash"]
    assert revisions[0]["metadata"]["name"] == f"{NAME}-{hash_}"
    assert revisions[0]["metadata"]["labels"]["controller-revision-hash"] == hash_
    for node, pod in placed.items():
        assert pod["metadata"]["name"].startswith(f"{NAME}-")
        assert pod["metadata"]["labels"]["controller-revision-hash"] == hash_
        assert pod["spec"]["nodeName"] == node
        term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        }
        assert {
            "key": "node.kubernetes.io/unschedulable",
            "operator": "Exists",
            "effect": "NoSchedule",
        } in pod["spec"]["tolerations"]
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert ds["status"]["numberMisscheduled"] == 0 and ds["status"]["numberUnavailable"] == 0
    messages = await kruise_cluster.until(
        lambda: event_messages(kruise_cluster), lambda m: sum(r == "SuccessfulCreate" for r, _ in m) == 3
    )
    created = sorted(msg for reason, msg in messages if reason == "SuccessfulCreate")
    assert created == sorted(f"Created pod: {p['metadata']['name']}" for p in pods)


async def test_pods_follow_node_labels(kruise_cluster):
    client = kruise_cluster.client
    for node in ("node-1", "node-2"):
        await client.patch(NODES, node, {"metadata": {"labels": {"daemon": "yes"}}})
    await client.create(ADVANCED_DAEMONSETS, manifest(node_selector={"daemon": "yes"}))
    await settled(kruise_cluster, 2)
    assert sorted(by_node(await live_pods(kruise_cluster))) == ["node-1", "node-2"]

    await client.patch(NODES, "node-3", {"metadata": {"labels": {"daemon": "yes"}}})
    await settled(kruise_cluster, 3)
    assert sorted(by_node(await live_pods(kruise_cluster))) == ["node-1", "node-2", "node-3"]

    await client.patch(NODES, "node-1", {"metadata": {"labels": {"daemon": None}}})
    await kruise_cluster.until(
        lambda: live_pods(kruise_cluster), lambda pods: sorted(by_node(pods)) == ["node-2", "node-3"]
    )
    await settled(kruise_cluster, 2)
    messages = await event_messages(kruise_cluster)
    assert any(
        reason == "SuccessfulDelete" and msg.startswith(f"Deleted pod: {NAME}-") for reason, msg in messages
    )


async def test_tainted_node_loses_its_pod_and_a_new_node_gets_one(kruise_cluster):
    client = kruise_cluster.client
    await client.create(ADVANCED_DAEMONSETS, manifest())
    await settled(kruise_cluster, 3)

    await client.patch(
        NODES, "node-2", {"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoExecute"}]}}
    )
    await kruise_cluster.until(
        lambda: live_pods(kruise_cluster), lambda pods: sorted(by_node(pods)) == ["node-1", "node-3"]
    )
    await settled(kruise_cluster, 2)

    # a Node no kubelet serves: the pod is created for it (and stays Pending)
    await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-extra"}})
    pods = await kruise_cluster.until(
        lambda: live_pods(kruise_cluster), lambda pods: "node-extra" in by_node(pods)
    )
    assert sorted(by_node(pods)) == ["node-1", "node-3", "node-extra"]
    ds = await kruise_cluster.until(
        lambda: get_ds(kruise_cluster), lambda d: (d.get("status") or {}).get("desiredNumberScheduled") == 3
    )
    assert ds["status"]["numberAvailable"] <= 3

    # the Node goes away before its pod was ever scheduled: the pod is removed
    await client.delete(NODES, "node-extra")
    await kruise_cluster.until(
        lambda: live_pods(kruise_cluster), lambda pods: sorted(by_node(pods)) == ["node-1", "node-3"]
    )
    await settled(kruise_cluster, 2)


@pytest.mark.parametrize("simulator_nodes", [6])
async def test_image_change_rolls_within_max_unavailable(kruise_cluster):
    client = kruise_cluster.client
    body = manifest(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
    await client.create(ADVANCED_DAEMONSETS, body)
    await settled(kruise_cluster, 6)
    before = {p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}

    await update_template(kruise_cluster, set_image("nginx:mainline"))
    worst = 0
    samples = 0

    async def sample() -> None:
        nonlocal worst, samples
        while True:
            listing = await client.list(PODS, NS, label_selector={"app": NAME})
            serving = {
                target_node_name(p)
                for p in listing["items"]
                if not p["metadata"].get("deletionTimestamp") and ready(p)
            }
            worst = max(worst, 6 - len(serving))
            samples += 1
            await asyncio.sleep(0.01)

    sampler = asyncio.create_task(sample())
    try:
        ds = await settled(kruise_cluster, 6, timeout=60.0)
    finally:
        sampler.cancel()
    pods = await live_pods(kruise_cluster)
    assert len(pods) == 6 and not ({p["metadata"]["uid"] for p in pods} & before)
    assert all(p["spec"]["containers"][0]["image"] == "nginx:mainline" for p in pods)
    assert all(
        p["metadata"]["labels"]["controller-revision-hash"] == ds["status"]["daemonSetHash"] for p in pods
    )
    assert samples > 10
    assert 1 <= worst <= 2
    revisions = (await client.list(CONTROLLER_REVISIONS, NS))["items"]
    assert len(revisions) == 2


@pytest.mark.parametrize("simulator_nodes", [4])
async def test_partition_keeps_old_pods(kruise_cluster):
    client = kruise_cluster.client
    body = manifest(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 3}})
    await client.create(ADVANCED_DAEMONSETS, body)
    await settled(kruise_cluster, 4)
    await update_template(kruise_cluster, set_image("nginx:mainline"))

    def one_updated(ds: dict[str, Any]) -> bool:
        status = ds.get("status") or {}
        return (
            status.get("observedGeneration") == ds["metadata"]["generation"]
            and status.get("updatedNumberScheduled") == 1
            and status.get("numberAvailable") == 4
        )

    ds = await kruise_cluster.until(lambda: get_ds(kruise_cluster), one_updated)
    pods = by_node(await live_pods(kruise_cluster))
    images = {node: p["spec"]["containers"][0]["image"] for node, p in pods.items()}
    # nodes are updated from the highest name down
    assert images == {
        "node-4": "nginx:mainline",
        "node-3": "nginx:alpine",
        "node-2": "nginx:alpine",
        "node-1": "nginx:alpine",
    }
    assert pods["node-4"]["metadata"]["labels"]["controller-revision-hash"] == ds["status"]["daemonSetHash"]

    def lower_partition(spec: dict[str, Any]) -> None:
        spec["updateStrategy"]["rollingUpdate"]["partition"] = 1

    await update_template(kruise_cluster, lower_partition)
    await kruise_cluster.until(
        lambda: get_ds(kruise_cluster),
        lambda d: (
            (d.get("status") or {}).get("updatedNumberScheduled") == 3
            and d["status"].get("numberAvailable") == 4
        ),
    )
    images = {
        n: p["spec"]["containers"][0]["image"] for n, p in by_node(await live_pods(kruise_cluster)).items()
    }
    assert images["node-1"] == "nginx:alpine"
    assert sorted(n for n, i in images.items() if i == "nginx:mainline") == ["node-2", "node-3", "node-4"]


async def test_in_place_if_possible_keeps_pod_uids(kruise_cluster):
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible"}}
    await kruise_cluster.client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy=strategy))
    await settled(kruise_cluster, 3)
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}
    await update_template(kruise_cluster, set_image("nginx:mainline"))
    ds = await settled(kruise_cluster, 3, timeout=60.0)
    pods = await live_pods(kruise_cluster)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == before
    for pod in pods:
        assert pod["spec"]["containers"][0]["image"] == "nginx:mainline"
        assert pod["metadata"]["labels"]["controller-revision-hash"] == ds["status"]["daemonSetHash"]
        gate = next(c for c in pod["status"]["conditions"] if c["type"] == "InPlaceUpdateReady")
        assert gate["status"] == "True"
    messages = await kruise_cluster.until(
        lambda: event_messages(kruise_cluster),
        lambda m: sum(r == "SuccessfulUpdatePodInPlace" for r, _ in m) == 3,
    )
    assert not any(reason == "SuccessfulDelete" for reason, _ in messages)


async def test_paused_rollout_still_serves_new_nodes(kruise_cluster):
    client = kruise_cluster.client
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"paused": True}}
    await client.create(
        ADVANCED_DAEMONSETS, manifest(node_selector={"daemon": "yes"}, updateStrategy=strategy)
    )
    for node in ("node-1", "node-2"):
        await client.patch(NODES, node, {"metadata": {"labels": {"daemon": "yes"}}})
    await settled(kruise_cluster, 2)
    before = {p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}
    await update_template(kruise_cluster, set_image("nginx:mainline"))
    await client.patch(NODES, "node-3", {"metadata": {"labels": {"daemon": "yes"}}})
    ds = await kruise_cluster.until(
        lambda: get_ds(kruise_cluster),
        lambda d: (
            (d.get("status") or {}).get("numberAvailable") == 3
            and d["status"].get("observedGeneration") == d["metadata"]["generation"]
        ),
    )
    assert ds["status"]["updatedNumberScheduled"] == 1
    pods = by_node(await live_pods(kruise_cluster))
    assert pods["node-3"]["spec"]["containers"][0]["image"] == "nginx:mainline"
    assert {pods["node-1"]["metadata"]["uid"], pods["node-2"]["metadata"]["uid"]} == before
