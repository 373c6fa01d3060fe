"""SidecarSet across a kruise-manager crash: a rollout interrupted half-way is finished by a fresh
manager, with nothing lost and nothing done twice.

The crash point is made deterministic by holding the new sidecar image back from every node (its pull
fails until released): the first pods updated cannot become ready, so `maxUnavailable` stops the old
manager after exactly that many, and the crash lands while those pods are mid-update (cold) or
mid-swap (hot). The fresh manager starts from the API alone (its caches, queue and expectations are
new), then the image is released and the rollout must finish.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.kube.resources import PODS, SIDECARSETS
from kruise.manager.controllers.sidecarset import SETUP
from tests.integration.manager.test_sidecarset_controller import (
    EMPTY,
    NS,
    WORKING,
    hot_sidecarset,
    images,
    injected_pod,
    sidecarset,
    statuses,
)

OLD, NEW = "busybox:1.34", "busybox:1.35.0"
HOT_OLD, HOT_NEW = "openkruise/hotupgrade-sample:sidecarv1", "openkruise/hotupgrade-sample:sidecarv2"
NAMES = tuple(f"crash-{i}" for i in range(6))


@pytest.fixture
def controller_setups():
    return [SETUP]


@contextmanager
def pulls_failing(cluster, image: str) -> Iterator[None]:
    """Every node fails to pull `image` until the block ends (the kubelet then retries after its
    back-off and succeeds)."""
    pattern = f"*{image}"
    runtimes = list(cluster.simulator.runtimes.values())
    for runtime in runtimes:
        runtime.fail_images.add(pattern)
    try:
        yield
    finally:
        for runtime in runtimes:
            runtime.fail_images.discard(pattern)


def pod_ready(p: dict[str, Any]) -> bool:
    conditions = (p.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def pull_failing(p: dict[str, Any], container: str) -> bool:
    waiting = ((statuses(p).get(container) or {}).get("state") or {}).get("waiting") or {}
    return waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff")


def runs_spec_images(p: dict[str, Any]) -> bool:
    """Every container's reported image is its spec image (the kubelet reports docker.io/... refs)."""
    running = statuses(p)
    return all(
        name in running and (running[name]["image"] == image or running[name]["image"].endswith("/" + image))
        for name, image in images(p).items()
    )


class Rollout:
    """Polls the pods and the SidecarSet, remembering the most pods ever unavailable at once (not
    Ready, or not yet running their spec images) and the most ever moved to the new image."""

    def __init__(self, cluster, name: str, moved: Any) -> None:
        self.cluster, self.name, self.moved = cluster, name, moved
        self.worst_unavailable = 0
        self.most_moved = 0

    async def pods(self) -> dict[str, dict[str, Any]]:
        pods = {n: await self.cluster.client.get(PODS, n, NS) for n in NAMES}
        unavailable = sum(not (pod_ready(p) and runs_spec_images(p)) for p in pods.values())
        self.worst_unavailable = max(self.worst_unavailable, unavailable)
        self.most_moved = max(self.most_moved, sum(self.moved(p) for p in pods.values()))
        return pods

    async def status(self) -> dict[str, Any]:
        await self.pods()
        return (await self.cluster.client.get(SIDECARSETS, self.name)).get("status") or {}


async def create(cluster, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The SidecarSet and six pods injected with it, once all run ready on the SidecarSet's version."""
    client = cluster.client
    created = await client.create(SIDECARSETS, body)
    for name in NAMES:
        await client.create(PODS, injected_pod(name, created))
    name = body["metadata"]["name"]

    async def status():
        return (await client.get(SIDECARSETS, name)).get("status") or {}

    await cluster.until(status, lambda s: s.get("matchedPods") == 6 and s.get("updatedReadyPods") == 6)
    return {n: await client.get(PODS, n, NS) for n in NAMES}


async def set_image(cluster, name: str, image: str, **strategy) -> int:
    changed = copy.deepcopy(await cluster.client.get(SIDECARSETS, name))
    changed["spec"]["containers"][0]["image"] = image
    changed["spec"]["updateStrategy"].update(strategy)
    set_hash_annotations(changed)
    return (await cluster.client.update(SIDECARSETS, changed))["metadata"]["generation"]


async def passes_done(cluster, rollout: Rollout) -> dict[str, Any]:
    """Two full passes of the fresh manager over the SidecarSet: a harmless spec change (the history
    limit) is observed twice. A pass writes status before it updates pods and passes of one SidecarSet
    never overlap, so after the second the first pass's pod writes (if any) are in the API."""
    for limit in (8, 9):
        current = copy.deepcopy(await cluster.client.get(SIDECARSETS, rollout.name))
        current["spec"]["revisionHistoryLimit"] = limit
        generation = (await cluster.client.update(SIDECARSETS, current))["metadata"]["generation"]
        status = await cluster.until(
            rollout.status, lambda s, seen=generation: s.get("observedGeneration") == seen
        )
    return status


def finished(generation: int, updated: int):
    def done(s: dict[str, Any]) -> bool:
        return (
            s.get("observedGeneration") == generation
            and s.get("matchedPods") == 6
            and s.get("updatedPods") == updated
            and s.get("updatedReadyPods") == updated
            and s.get("readyPods") == 6
        )

    return done


async def test_manager_crash_mid_cold_upgrade_restarts_each_sidecar_once(kruise_cluster):
    """Two of six pods are mid-update (maxUnavailable 2) when the manager crashes: the fresh manager
    updates no further pod until they are ready, then finishes; no pod is recreated, each sidecar
    restarted exactly once and no app container at all."""
    before = await create(kruise_cluster, sidecarset(maxUnavailable=2))
    rollout = Rollout(kruise_cluster, "test-sidecarset", lambda p: images(p)["sidecar1"] == NEW)

    with pulls_failing(kruise_cluster, NEW):
        await set_image(kruise_cluster, "test-sidecarset", NEW)
        stuck = await kruise_cluster.until(
            rollout.pods,
            lambda pods: sum(pull_failing(p, "sidecar1") for p in pods.values()) == 2,
        )
        await kruise_cluster.restart_manager([SETUP])
        # the fresh manager sees two updated pods not ready: the budget is spent, nothing else moves
        held = await passes_done(kruise_cluster, rollout)
        assert held["updatedPods"] == 2 and held["updatedReadyPods"] == 0
        assert {n for n, p in stuck.items() if images(p)["sidecar1"] == NEW} == {
            n for n, p in (await rollout.pods()).items() if images(p)["sidecar1"] == NEW
        }

    generation = (await kruise_cluster.client.get(SIDECARSETS, rollout.name))["metadata"]["generation"]
    await kruise_cluster.until(rollout.status, finished(generation, 6), timeout=60)
    after = await rollout.pods()
    for name, old in before.items():
        now = after[name]
        assert now["metadata"]["uid"] == old["metadata"]["uid"], name
        assert images(now) == {"nginx": "nginx:1.7.9", "sidecar1": NEW}, name
        assert statuses(now)["sidecar1"]["restartCount"] == 1, name
        assert statuses(now)["nginx"]["restartCount"] == 0, name
    assert rollout.worst_unavailable == 2


async def test_manager_crash_mid_hot_upgrade_swap_finishes_each_pair_once(kruise_cluster):
    """Three pods (maxUnavailable 3) hold the new version in their idle container, already named
    working, while the old one still serves, when the manager crashes: the fresh manager finishes
    each swap (old container back on the empty image) and the rest of the rollout, in place."""
    body = hot_sidecarset()
    body["spec"]["updateStrategy"]["maxUnavailable"] = 3
    before = await create(kruise_cluster, body)
    for p in before.values():
        assert images(p) == {"nginx": "nginx:1.7.9", "sidecar-1": HOT_OLD, "sidecar-2": EMPTY}
    rollout = Rollout(kruise_cluster, "hotupgrade-sidecarset", lambda p: HOT_NEW in images(p).values())

    with pulls_failing(kruise_cluster, HOT_NEW):
        await set_image(kruise_cluster, "hotupgrade-sidecarset", HOT_NEW)
        swapping = await kruise_cluster.until(
            rollout.pods,
            lambda pods: sum(pull_failing(p, "sidecar-2") for p in pods.values()) == 3,
        )
        mid_swap = [p for p in swapping.values() if pull_failing(p, "sidecar-2")]
        for p in mid_swap:  # the new version is named working while the old one still serves
            assert images(p) == {"nginx": "nginx:1.7.9", "sidecar-1": HOT_OLD, "sidecar-2": HOT_NEW}
            assert p["metadata"]["annotations"][WORKING] == '{"sidecar":"sidecar-2"}'
            assert statuses(p)["sidecar-1"]["ready"]
        await kruise_cluster.restart_manager([SETUP])
        held = await passes_done(kruise_cluster, rollout)
        assert held["updatedPods"] == 3 and held["updatedReadyPods"] == 0
        assert sum(rollout.moved(p) for p in (await rollout.pods()).values()) == 3

    generation = (await kruise_cluster.client.get(SIDECARSETS, rollout.name))["metadata"]["generation"]
    await kruise_cluster.until(rollout.status, finished(generation, 6), timeout=60)
    after = await rollout.pods()
    for name, old in before.items():
        now = after[name]
        assert now["metadata"]["uid"] == old["metadata"]["uid"], name
        assert images(now) == {"nginx": "nginx:1.7.9", "sidecar-1": EMPTY, "sidecar-2": HOT_NEW}, name
        annotations = now["metadata"]["annotations"]
        assert annotations[WORKING] == '{"sidecar":"sidecar-2"}', name
        assert annotations["version.sidecarset.kruise.io/sidecar-1"] == "0", name
        assert annotations["versionalt.sidecarset.kruise.io/sidecar-2"] == "0", name
        running = statuses(now)
        assert running["sidecar-2"]["ready"] and running["sidecar-2"]["image"].endswith("/" + HOT_NEW), name
        assert running["sidecar-1"]["image"].endswith("/" + EMPTY), name
        # each container of the pair changed image exactly once, the app container never
        assert running["sidecar-1"]["restartCount"] == 1, name
        assert running["sidecar-2"]["restartCount"] == 1, name
        assert running["nginx"]["restartCount"] == 0, name
    assert rollout.worst_unavailable == 3


async def test_manager_crash_mid_rollout_honours_the_partition(kruise_cluster):
    """partition 3 of six pods, maxUnavailable 2: two pods are mid-update at the crash; the fresh
    manager updates exactly one more, and the three pods beyond the partition are never touched."""
    before = await create(kruise_cluster, sidecarset(maxUnavailable=2, partition=3))
    rollout = Rollout(kruise_cluster, "test-sidecarset", lambda p: images(p)["sidecar1"] == NEW)

    with pulls_failing(kruise_cluster, NEW):
        await set_image(kruise_cluster, "test-sidecarset", NEW)
        await kruise_cluster.until(
            rollout.pods,
            lambda pods: sum(pull_failing(p, "sidecar1") for p in pods.values()) == 2,
        )
        await kruise_cluster.restart_manager([SETUP])
        held = await passes_done(kruise_cluster, rollout)
        assert held["updatedPods"] == 2 and rollout.most_moved == 2

    generation = (await kruise_cluster.client.get(SIDECARSETS, rollout.name))["metadata"]["generation"]
    await kruise_cluster.until(rollout.status, finished(generation, 3), timeout=60)
    after = await rollout.pods()
    moved = {n for n, p in after.items() if images(p)["sidecar1"] == NEW}
    assert len(moved) == 3 and rollout.most_moved == 3
    for name, old in before.items():
        now = after[name]
        assert now["metadata"]["uid"] == old["metadata"]["uid"], name
        assert statuses(now)["nginx"]["restartCount"] == 0, name
        if name in moved:
            assert statuses(now)["sidecar1"]["restartCount"] == 1, name
        else:  # held back: the pod as it was injected
            assert images(now) == {"nginx": "nginx:1.7.9", "sidecar1": OLD}, name
            assert statuses(now)["sidecar1"]["restartCount"] == 0, name
            assert now["metadata"]["annotations"] == old["metadata"]["annotations"], name
    assert rollout.worst_unavailable == 2

    # the partition lifted, the held pods follow (the fresh manager still runs the rollout)
    generation = await set_image(kruise_cluster, "test-sidecarset", NEW, partition=0)
    await kruise_cluster.until(rollout.status, finished(generation, 6), timeout=60)
    for name, now in (await rollout.pods()).items():
        assert images(now)["sidecar1"] == NEW and statuses(now)["sidecar1"]["restartCount"] == 1, name


@pytest.mark.parametrize("hard", [False, True], ids=["gentle", "hard"])
async def test_manager_crash_wherever_a_free_running_rollout_is(kruise_cluster, hard):
    """No image held back: the crash lands wherever the rollout happens to be once a pod moved (maybe
    between a pod write and the kubelet acting on it; with `hard`, also half-way through a pass that
    has written some pods and not others, or a status not yet written); the outcome is the same."""
    body = sidecarset(maxUnavailable=2)
    # a restarted sidecar turns ready 100 cluster seconds (2 s) after its start: each batch of two takes
    # that long, so the rollout stays observably half-way (at speed 50 with no delay it can finish between
    # two polls of a loaded machine, and the test would wait for a half-way state that came and went)
    body["spec"]["containers"][0]["readinessProbe"] = {
        "exec": {"command": ["true"]}, "initialDelaySeconds": 100, "periodSeconds": 1,
    }  # fmt: skip
    set_hash_annotations(body)
    before = await create(kruise_cluster, body)
    rollout = Rollout(kruise_cluster, "test-sidecarset", lambda p: images(p)["sidecar1"] == NEW)
    generation = await set_image(kruise_cluster, "test-sidecarset", NEW)
    await kruise_cluster.until(rollout.pods, lambda pods: 1 <= sum(map(rollout.moved, pods.values())) < 6)
    await kruise_cluster.restart_manager([SETUP], hard=hard)

    await kruise_cluster.until(rollout.status, finished(generation, 6), timeout=60)
    after = await rollout.pods()
    for name, old in before.items():
        now = after[name]
        assert now["metadata"]["uid"] == old["metadata"]["uid"], name
        assert images(now)["sidecar1"] == NEW, name
        assert statuses(now)["sidecar1"]["restartCount"] == 1, name
        assert statuses(now)["nginx"]["restartCount"] == 0, name
    # a sample may fall between a sidecar's restart and its readiness or not: only the bound is certain
    assert rollout.worst_unavailable <= 2
