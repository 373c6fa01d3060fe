"""Advanced DaemonSet rollouts survive a kruise-manager crash: the controllers stop mid-rollout
(informer caches, queued keys, expectations and in-memory state go with them) and a fresh manager
built from nothing finishes the job without losing a node, updating a pod twice, overrunning
maxUnavailable / maxSurge or crossing the partition.

Every check samples the pods on each poll (`observe`), before, across and after the crash."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kruise.control.common.nodeeligibility import target_node_name
from kruise.kube.resources import ADVANCED_DAEMONSETS, EVENTS, PODS
from kruise.manager.controllers.daemonset import SETUP
from tests.integration.manager.test_daemonset_controller import (
    NAME,
    NS,
    get_ds,
    is_new,
    live_pods,
    manifest,
    ready,
    set_image,
    settled,
    update_template,
)

OLD, NEW = "nginx:alpine", "nginx:mainline"


@pytest.fixture
def controller_setups():
    return [SETUP]


def image(pod: dict[str, Any]) -> str:
    return pod["spec"]["containers"][0]["image"]


def restarts(pod: dict[str, Any]) -> int:
    return sum(s.get("restartCount", 0) for s in pod.get("status", {}).get("containerStatuses", []))


def in_place_ready(pod: dict[str, Any]) -> str | None:
    conditions = pod.get("status", {}).get("conditions", [])
    return next((c["status"] for c in conditions if c["type"] == "InPlaceUpdateReady"), None)


def node_names(count: int) -> list[str]:
    return [f"node-{i}" for i in range(1, count + 1)]


async def all_pods(cluster) -> list[dict[str, Any]]:
    """Every pod of the DaemonSet, terminating ones included."""
    return (await cluster.client.list(PODS, NS, label_selector={"app": NAME}))["items"]


async def in_place_events(cluster, fresh) -> dict[str, int]:
    """pod name → how many `SuccessfulUpdatePodInPlace` events name it (an aggregated event counts
    as many times as it was recorded), after both managers' recorders have flushed."""
    for recorder in fresh.recorders:
        await recorder.flush()
    listing = (await cluster.client.list(EVENTS, NS))["items"]
    counts: dict[str, int] = {}
    for event in listing:
        if event["involvedObject"].get("name") != NAME or event["reason"] != "SuccessfulUpdatePodInPlace":
            continue
        pod = event["message"].removeprefix("successfully update pod ").removesuffix(" in-place")
        counts[pod] = counts.get(pod, 0) + int(event.get("count") or 1)
    return counts


async def converge(cluster, nodes: int, observe: Callable[[], Any], **expected: int) -> dict[str, Any]:
    """Poll (sampling the pods each time) until the DaemonSet's status shows its current generation
    with every counter at `nodes`, or at the value given in `expected`."""
    counters = (
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "numberReady",
        "updatedNumberScheduled",
        "numberAvailable",
    )
    want = {k: nodes for k in counters} | expected | {"numberMisscheduled": 0}

    async def status() -> dict[str, Any]:
        await observe()
        return await get_ds(cluster)

    def done(ds: dict[str, Any]) -> bool:
        s = ds.get("status") or {}
        return s.get("observedGeneration") == ds["metadata"]["generation"] and all(
            s.get(k) == v for k, v in want.items()
        )

    return await cluster.until(status, done, timeout=90.0)


@pytest.mark.parametrize("simulator_nodes", [5])
@pytest.mark.parametrize("hard", [False, True], ids=["gentle", "hard"])
async def test_manager_crash_mid_in_place_rollout_updates_no_pod_twice(kruise_cluster, hard):
    """InPlaceIfPossible, maxUnavailable 2 over 5 nodes; the manager crashes with some pods
    updated and others not: the rollout completes, every pod keeps its UID and restarted exactly
    once, at most 2 nodes are ever without a ready pod, and no pod is updated in place twice.
    `hard` kills the in-flight pass wherever it is awaiting (`restart_manager(hard=True)`)."""
    nodes = 5
    strategy = {
        "type": "RollingUpdate",
        "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 2},
    }
    client = kruise_cluster.client
    # minReadySeconds: each batch of two stays unavailable 2 s, so the rollout is observably half-way (at
    # speed 50 it could otherwise finish between two polls of a loaded machine)
    await client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy=strategy, minReadySeconds=2))
    await settled(kruise_cluster, nodes, timeout=60.0)
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}
    assert len(before) == nodes
    worst = 0
    samples = 0

    async def observe() -> list[dict[str, Any]]:
        nonlocal worst, samples
        pods = await all_pods(kruise_cluster)
        serving = {
            target_node_name(p) for p in pods if not p["metadata"].get("deletionTimestamp") and ready(p)
        }
        worst = max(worst, nodes - len(serving))
        samples += 1
        return pods

    def moved(pods: list[dict[str, Any]]) -> int:
        return sum(image(p) == NEW for p in pods)

    half_way: list[str] = []  # pods the crash left out of the endpoints with their spec not yet written

    async def left_by_crash() -> None:
        half_way.extend(
            p["metadata"]["name"]
            for p in await all_pods(kruise_cluster)
            if image(p) == OLD and in_place_ready(p) == "False"
        )

    await update_template(kruise_cluster, set_image(NEW))
    await kruise_cluster.until(observe, lambda pods: 1 <= moved(pods) < nodes)
    fresh = await kruise_cluster.restart_manager([SETUP], hard=hard, crashed=left_by_crash)
    crashed = await observe()
    assert 1 <= moved(crashed) < nodes, "the crash must land mid-rollout"

    ds = await converge(kruise_cluster, nodes, observe)
    after = await all_pods(kruise_cluster)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in after} == before
    for pod in after:
        name = pod["metadata"]["name"]
        assert image(pod) == NEW, name
        assert restarts(pod) == 1, name
        assert is_new(pod, ds["status"]["daemonSetHash"]), name
    assert samples > 3
    # An old pod already unavailable is replaced outside maxUnavailable (upstream rollingUpdate's
    # allowedReplacementPods): a pod a hard crash left half-way (InPlaceUpdateReady=False, old spec)
    # is such a pod, so the fresh manager may take up to maxUnavailable others down beside it.
    assert not half_way or hard
    assert 1 <= worst <= 2 + len(half_way), (worst, half_way)
    updated = await in_place_events(kruise_cluster, fresh)
    if not hard:
        # the old manager's in-flight passes finished before it stopped: each pod has its one event
        assert updated == dict.fromkeys(before, 1)
    else:
        # a killed pass may lose a pod's event (written to the pod, event still queued), never
        # record one twice
        assert set(updated) <= set(before) and set(updated.values()) <= {1}, updated


@pytest.mark.parametrize("simulator_nodes", [4])
@pytest.mark.parametrize("hard", [False, True], ids=["gentle", "hard"])
async def test_manager_crash_mid_surge_rollout_keeps_every_node_served(kruise_cluster, hard):
    """Standard with maxSurge 1 / maxUnavailable 0 over 4 nodes; the manager crashes with some
    node running its old pod and its new one: the rollout completes, at most one node at a
    time runs two pods (the surge), no node ever has three or is left without a ready pod, and every
    node ends with exactly one pod of the new revision."""
    nodes = 4
    strategy = {
        "type": "RollingUpdate",
        "rollingUpdate": {"rollingUpdateType": "Standard", "maxSurge": 1, "maxUnavailable": 0},
    }
    client = kruise_cluster.client
    # minReadySeconds keeps each surge open long enough for the crash to land inside one: Ready's
    # lastTransitionTime has whole seconds, so a new pod may count as available up to a second early
    await client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy=strategy, minReadySeconds=3))
    await settled(kruise_cluster, nodes, timeout=60.0)
    old_uids = {p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}
    most_per_node = 0
    most_surging = 0
    bare: list[tuple[str, int]] = []  # (node, sample) seen without a ready pod
    samples = 0

    async def observe() -> list[dict[str, Any]]:
        nonlocal most_per_node, most_surging, samples
        pods = await all_pods(kruise_cluster)
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        per_node = {node: [p for p in live if target_node_name(p) == node] for node in node_names(nodes)}
        most_per_node = max(most_per_node, *(len(here) for here in per_node.values()))
        most_surging = max(most_surging, sum(len(here) > 1 for here in per_node.values()))
        bare.extend((node, samples) for node, here in per_node.items() if not any(ready(p) for p in here))
        samples += 1
        return live

    def surging(pods: list[dict[str, Any]]) -> bool:
        """Some node runs its old pod and its new one at once."""
        return any(
            {image(p) for p in pods if target_node_name(p) == node} == {OLD, NEW}
            for node in node_names(nodes)
        )

    await update_template(kruise_cluster, set_image(NEW))
    await kruise_cluster.until(observe, surging)
    await kruise_cluster.restart_manager([SETUP], hard=hard)
    assert surging(await observe()), "the crash must land mid-rollout, on a surging node"

    ds = await converge(kruise_cluster, nodes, observe)
    after = await kruise_cluster.until(lambda: live_pods(kruise_cluster), lambda pods: len(pods) == nodes)
    assert sorted(target_node_name(p) for p in after) == node_names(nodes)
    assert all(is_new(p, ds["status"]["daemonSetHash"]) and image(p) == NEW for p in after)
    assert not ({p["metadata"]["uid"] for p in after} & old_uids)
    assert samples > 3
    assert most_per_node == 2
    assert most_surging == 1  # maxSurge 1: one node at a time
    assert not bare


@pytest.mark.parametrize("simulator_nodes", [4])
async def test_manager_crash_mid_partitioned_rollout_honours_the_partition(kruise_cluster):
    """Standard, partition 2 over 4 nodes: the manager crashes after the first node is updated;
    the fresh manager updates the second and stops there, the two partitioned nodes keep their
    original pods all along, and lowering the partition afterwards finishes the rollout."""
    nodes = 4
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    client = kruise_cluster.client
    # minReadySeconds holds node-3 back a second or more (Ready's lastTransitionTime has whole
    # seconds) after node-4's new pod appears: the crash lands between the two
    await client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy=strategy, minReadySeconds=2))
    await settled(kruise_cluster, nodes, timeout=60.0)
    original = {target_node_name(p): p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}
    kept = ("node-1", "node-2")  # nodes are updated from the highest name down
    crossed: list[tuple[str, Any]] = []  # partitioned nodes seen with anything but their original pod

    async def observe() -> list[dict[str, Any]]:
        pods = await all_pods(kruise_cluster)
        for node in kept:
            here = [
                (p["metadata"]["uid"], image(p), bool(p["metadata"].get("deletionTimestamp")))
                for p in pods
                if target_node_name(p) == node
            ]
            if here != [(original[node], OLD, False)]:
                crossed.append((node, here))
        return pods

    await update_template(kruise_cluster, set_image(NEW))
    await kruise_cluster.until(observe, lambda pods: sum(image(p) == NEW for p in pods) == 1)
    await kruise_cluster.restart_manager([SETUP])
    crashed = await observe()
    assert sum(image(p) == NEW for p in crashed) == 1, (
        f"the crash must land mid-rollout: {[(target_node_name(p), image(p)) for p in crashed]}"
    )

    await converge(kruise_cluster, nodes, observe, updatedNumberScheduled=2)
    pods = {target_node_name(p): p for p in await live_pods(kruise_cluster)}
    assert {node: image(p) for node, p in pods.items()} == {
        "node-1": OLD,
        "node-2": OLD,
        "node-3": NEW,
        "node-4": NEW,
    }
    assert not crossed

    def lower_partition(spec: dict[str, Any]) -> None:
        spec["updateStrategy"]["rollingUpdate"]["partition"] = 0

    await update_template(kruise_cluster, lower_partition)
    ds = await converge(kruise_cluster, nodes, lambda: all_pods(kruise_cluster))
    pods = await live_pods(kruise_cluster)
    assert len(pods) == nodes and all(is_new(p, ds["status"]["daemonSetHash"]) for p in pods)
