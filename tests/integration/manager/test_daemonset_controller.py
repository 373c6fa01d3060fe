"""Advanced DaemonSet controller against the emulator + simulator: one pod per eligible node, pods
following nodes, revisions and status, Standard rolling update within maxUnavailable, partition."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kruise.api import daemonset as daemonset_api
from kruise.control.common.nodeeligibility import target_node_name
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


def is_new(pod: dict[str, Any], update_hash: str) -> bool:
    return pod["metadata"]["labels"].get("controller-revision-hash") == update_hash


@pytest.mark.parametrize("simulator_nodes", [3])
async def test_max_surge_new_pod_coexists_with_old_until_available(kruise_cluster):
    """maxSurge 1 / maxUnavailable 0 with minReadySeconds: on each node the new pod runs beside the
    old one, and the old one goes only once the new one has been ready for minReadySeconds; no
    node is ever left without a ready pod."""
    min_ready = 3
    client = kruise_cluster.client
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    await client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy=strategy, minReadySeconds=min_ready))
    await settled(kruise_cluster, 3, timeout=60.0)
    old_uids = {p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}
    await update_template(kruise_cluster, set_image("nginx:mainline"))
    ds = await kruise_cluster.until(
        lambda: get_ds(kruise_cluster),
        lambda d: d["status"].get("observedGeneration") == d["metadata"]["generation"],
    )
    update_hash = ds["status"]["daemonSetHash"]
    loop = asyncio.get_running_loop()
    new_ready_at: dict[str, float] = {}  # node → when its new pod was first seen ready
    old_gone_at: dict[str, float] = {}  # node → when its old pod was first seen deleting or gone
    both_live: set[str] = set()  # nodes seen running the old and the new pod at once
    bare_nodes: list[tuple[float, str]] = []  # (time, node) seen without any ready pod

    async def sample() -> None:
        while True:
            now = loop.time()
            listing = (await client.list(PODS, NS, label_selector={"app": NAME}))["items"]
            for node in ("node-1", "node-2", "node-3"):
                here = [p for p in listing if target_node_name(p) == node]
                live = [p for p in here if not p["metadata"].get("deletionTimestamp")]
                if not any(ready(p) for p in live):
                    bare_nodes.append((now, node))
                new = [p for p in live if is_new(p, update_hash)]
                old_live = [p for p in live if p["metadata"]["uid"] in old_uids]
                if new and ready(new[0]):
                    new_ready_at.setdefault(node, now)
                if new and old_live:
                    both_live.add(node)
                if not old_live:
                    old_gone_at.setdefault(node, now)
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    try:
        await settled(kruise_cluster, 3, timeout=90.0)
    finally:
        sampler.cancel()
    assert not bare_nodes
    assert both_live == {"node-1", "node-2", "node-3"}
    for node in ("node-1", "node-2", "node-3"):
        # Ready's lastTransitionTime has whole-second precision, so availability can be judged
        # up to one second before minReadySeconds of wall time have passed.
        assert old_gone_at[node] - new_ready_at[node] >= min_ready - 1.0, node
    pods = await live_pods(kruise_cluster)
    assert len(pods) == 3 and all(is_new(p, update_hash) for p in pods)


HOOK_LABEL = "example.io/hold"


async def test_pre_delete_hook_holds_each_pod_in_preparing_delete(kruise_cluster):
    """A preDelete labelsHandler: the pod picked for replacement goes to PreparingDelete and stays
    (counting against maxUnavailable 1, so no other pod is picked) until the hook label is removed;
    then it is deleted, its node gets the new pod, and the next pod is picked."""
    client = kruise_cluster.client
    body = manifest(lifecycle={"preDelete": {"labelsHandler": {HOOK_LABEL: "true"}}})
    body["spec"]["template"]["metadata"]["labels"][HOOK_LABEL] = "true"
    await client.create(ADVANCED_DAEMONSETS, body)
    await settled(kruise_cluster, 3)
    await update_template(kruise_cluster, set_image("nginx:mainline"))
    state = "lifecycle.apps.kruise.io/state"

    def preparing(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [p for p in pods if p["metadata"]["labels"].get(state) == "PreparingDelete"]

    released: list[str] = []
    for expected_node in ("node-3", "node-2", "node-1"):  # highest node name first
        pods = await kruise_cluster.until(
            lambda: live_pods(kruise_cluster), lambda ps: len(preparing(ps)) == 1
        )
        held = preparing(pods)[0]
        assert target_node_name(held) == expected_node
        # Held: for a second of sampling, the pod stays and is the only one picked.
        deadline = asyncio.get_running_loop().time() + 1.0
        while asyncio.get_running_loop().time() < deadline:
            pods = await live_pods(kruise_cluster)
            assert [p["metadata"]["uid"] for p in preparing(pods)] == [held["metadata"]["uid"]]
            assert len(pods) == 3
            await asyncio.sleep(0.05)
        await client.patch(PODS, held["metadata"]["name"], {"metadata": {"labels": {HOOK_LABEL: None}}}, NS)
        released.append(held["metadata"]["name"])
        await kruise_cluster.until(
            lambda: live_pods(kruise_cluster),
            lambda ps, node=expected_node: any(
                target_node_name(p) == node and p["spec"]["containers"][0]["image"] == "nginx:mainline"
                for p in ps
            ),
        )
    await settled(kruise_cluster, 3, timeout=60.0)
    messages = await event_messages(kruise_cluster)
    deleted = [msg for reason, msg in messages if reason == "SuccessfulDelete"]
    assert sorted(deleted) == sorted(f"Deleted pod: {name}" for name in released)


@pytest.mark.parametrize("simulator_nodes", [10])
async def test_max_unavailable_never_exceeded_over_ten_nodes(kruise_cluster):
    """maxUnavailable 30% of 10 nodes (3, rounded up): sampled all through the rollout, never more
    than 3 nodes are without a ready pod, and the budget is actually used."""
    client = kruise_cluster.client
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "30%"}}
    await client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy=strategy))
    await settled(kruise_cluster, 10, timeout=60.0)
    await update_template(kruise_cluster, set_image("nginx:mainline"))
    unavailable: list[int] = []

    async def sample() -> None:
        while True:
            listing = (await client.list(PODS, NS, label_selector={"app": NAME}))["items"]
            serving = {
                target_node_name(p)
                for p in listing
                if not p["metadata"].get("deletionTimestamp") and ready(p)
            }
            unavailable.append(10 - len(serving))
            await asyncio.sleep(0.01)

    sampler = asyncio.create_task(sample())
    try:
        ds = await settled(kruise_cluster, 10, timeout=120.0)
    finally:
        sampler.cancel()
    assert len(unavailable) >= 3  # sampled during the rollout (a loaded machine samples less often)
    assert 1 <= max(unavailable) <= 3  # never beyond 30% of 10; the peak is 3 when sampled densely
    pods = await live_pods(kruise_cluster)
    assert len(pods) == 10 and all(is_new(p, ds["status"]["daemonSetHash"]) for p in pods)
