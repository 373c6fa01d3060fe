"""SidecarSet controller: a new sidecar image reaches injected pods in place (seed 002's examples: cold
upgrade, and hot upgrade through the `-1`/`-2` pair)."""

from __future__ import annotations

import copy

import pytest

from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.control.sidecarset.injection import inject
from kruise.kube.resources import CONTROLLER_REVISIONS, EVENTS, PODS, SIDECARSETS
from kruise.manager.controllers.sidecarset import SETUP
from tests.kit.pods import pod

NS = "default"


@pytest.fixture
def controller_setups():
    return [SETUP]


def sidecarset(**strategy):
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": "test-sidecarset"},
        "spec": {
            "selector": {"matchLabels": {"app": "nginx"}},
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1, **strategy},
            "containers": [{"name": "sidecar1", "image": "busybox:1.34", "command": ["sleep", "999d"],
                            "podInjectPolicy": "BeforeAppContainer"}],
        },
    }  # fmt: skip
    set_hash_annotations(body)  # what kruise-webhook's SidecarSet mutation adds
    return body


def injected_pod(name, sidecar_set):
    """An nginx pod as kruise-webhook admits it on CREATE: with `sidecar_set` injected."""
    body = pod(
        name,
        namespace=NS,
        labels={"app": "nginx"},
        containers=[{"name": "nginx", "image": "nginx:1.7.9"}],
        typed=True,
    )
    assert inject(body, [sidecar_set])  # what kruise-webhook does on pod CREATE
    return body


def statuses(p):
    return {s["name"]: s for s in p["status"]["containerStatuses"]}


async def test_new_sidecar_image_is_rolled_in_place(kruise_cluster):
    client = kruise_cluster.client
    created = await client.create(SIDECARSETS, sidecarset())
    for name in ("test-pod-1", "test-pod-2"):
        await client.create(PODS, injected_pod(name, created))

    async def status():
        return (await client.get(SIDECARSETS, "test-sidecarset")).get("status") or {}

    await kruise_cluster.until(status, lambda s: s.get("matchedPods") == 2 and s.get("updatedReadyPods") == 2)
    before = {n: await client.get(PODS, n, NS) for n in ("test-pod-1", "test-pod-2")}

    changed = copy.deepcopy(await client.get(SIDECARSETS, "test-sidecarset"))
    changed["spec"]["containers"][0]["image"] = "busybox:1.35.0"
    set_hash_annotations(changed)
    generation = (await client.update(SIDECARSETS, changed))["metadata"]["generation"]

    final = await kruise_cluster.until(
        status,
        lambda s: (
            s.get("observedGeneration") == generation
            and s.get("updatedPods") == 2
            and s.get("updatedReadyPods") == 2
            and s.get("readyPods") == 2
        ),
    )
    assert final["matchedPods"] == 2
    for name, old in before.items():
        now = await client.get(PODS, name, NS)
        assert now["metadata"]["uid"] == old["metadata"]["uid"]
        sidecar = next(c for c in now["spec"]["containers"] if c["name"] == "sidecar1")
        assert sidecar["image"] == "busybox:1.35.0"
        assert statuses(now)["sidecar1"]["restartCount"] == 1
        assert statuses(now)["nginx"]["restartCount"] == 0  # the app container is not touched
        assert (
            "test-sidecarset" in now["metadata"]["annotations"]["kruise.io/sidecarset-inplace-update-state"]
        )
        upgradable = condition(now, "SidecarSetUpgradable")
        assert upgradable["status"] == "True" and upgradable["message"] == '{"test-sidecarset":true}'


async def test_not_update_and_partition_hold_pods_back(kruise_cluster):
    client = kruise_cluster.client
    created = await client.create(SIDECARSETS, sidecarset(partition=1))
    for name in ("p-1", "p-2"):
        await client.create(PODS, injected_pod(name, created))

    async def status():
        return (await client.get(SIDECARSETS, "test-sidecarset")).get("status") or {}

    await kruise_cluster.until(status, lambda s: s.get("updatedReadyPods") == 2)
    changed = copy.deepcopy(await client.get(SIDECARSETS, "test-sidecarset"))
    changed["spec"]["containers"][0]["image"] = "busybox:1.35.0"
    set_hash_annotations(changed)
    await client.update(SIDECARSETS, changed)
    held = await kruise_cluster.until(
        status, lambda s: s.get("updatedPods") == 1 and s.get("updatedReadyPods") == 1
    )
    assert held["matchedPods"] == 2


EMPTY = "openkruise/hotupgrade-sample:empty"
WORKING = "kruise.io/sidecarset-working-hotupgrade-container"


def hot_sidecarset():
    body = sidecarset()
    body["metadata"]["name"] = "hotupgrade-sidecarset"
    body["spec"]["containers"] = [
        {
            "name": "sidecar",
            "image": "openkruise/hotupgrade-sample:sidecarv1",
            "command": ["sleep", "999d"],
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": EMPTY},
        }
    ]
    set_hash_annotations(body)
    return body


def images(p):
    return {c["name"]: c["image"] for c in p["spec"]["containers"]}


async def test_hot_upgrade_swaps_the_working_container_without_restarting_the_pod(kruise_cluster):
    client = kruise_cluster.client
    created = await client.create(SIDECARSETS, hot_sidecarset())
    names = ("hot-pod-1", "hot-pod-2")
    for name in names:
        await client.create(PODS, injected_pod(name, created))

    async def status():
        return (await client.get(SIDECARSETS, "hotupgrade-sidecarset")).get("status") or {}

    await kruise_cluster.until(status, lambda s: s.get("matchedPods") == 2 and s.get("updatedReadyPods") == 2)
    before = {n: await client.get(PODS, n, NS) for n in names}
    for p in before.values():
        assert images(p)["sidecar-1"] == "openkruise/hotupgrade-sample:sidecarv1"
        assert images(p)["sidecar-2"] == EMPTY

    changed = copy.deepcopy(await client.get(SIDECARSETS, "hotupgrade-sidecarset"))
    changed["spec"]["containers"][0]["image"] = "openkruise/hotupgrade-sample:sidecarv2"
    set_hash_annotations(changed)
    generation = (await client.update(SIDECARSETS, changed))["metadata"]["generation"]

    final = await kruise_cluster.until(
        status,
        lambda s: (
            s.get("observedGeneration") == generation
            and s.get("updatedPods") == 2
            and s.get("updatedReadyPods") == 2
            and s.get("readyPods") == 2
        ),
    )
    assert final["matchedPods"] == 2
    for name, old in before.items():
        now = await client.get(PODS, name, NS)
        assert now["metadata"]["uid"] == old["metadata"]["uid"]
        # the new version runs in the formerly idle container, the old one is back on the empty image
        assert images(now) == {
            "nginx": "nginx:1.7.9",
            "sidecar-1": EMPTY,
            "sidecar-2": "openkruise/hotupgrade-sample:sidecarv2",
        }
        annotations = now["metadata"]["annotations"]
        assert annotations[WORKING] == '{"sidecar":"sidecar-2"}'
        assert annotations["version.sidecarset.kruise.io/sidecar-1"] == "0"
        assert annotations["versionalt.sidecarset.kruise.io/sidecar-2"] == "0"
        running = statuses(now)
        # the kubelet reports normalized references (docker.io/...)
        assert running["sidecar-2"]["image"].endswith("/openkruise/hotupgrade-sample:sidecarv2")
        assert running["sidecar-2"]["ready"] and running["sidecar-1"]["image"].endswith("/" + EMPTY)
        assert running["nginx"]["restartCount"] == 0  # the app container is not touched

    async def resets() -> set[str]:
        # events are written by the recorder's background task, after the reset they report
        events = (await client.list(EVENTS, NS))["items"]
        return {e["involvedObject"]["name"] for e in events if e["reason"] == "ResetContainerSucceed"}

    await kruise_cluster.until(resets, lambda found: found == set(names))


def condition(p, type_):
    return next((c for c in p["status"].get("conditions") or [] if c["type"] == type_), None)


async def test_change_beyond_images_marks_pods_not_upgradable(kruise_cluster):
    client = kruise_cluster.client
    created = await client.create(SIDECARSETS, sidecarset())
    for name in ("n-1", "n-2"):
        await client.create(PODS, injected_pod(name, created))

    async def status():
        return (await client.get(SIDECARSETS, "test-sidecarset")).get("status") or {}

    await kruise_cluster.until(status, lambda s: s.get("updatedReadyPods") == 2)
    changed = copy.deepcopy(await client.get(SIDECARSETS, "test-sidecarset"))
    changed["spec"]["containers"][0]["image"] = "busybox:1.35.0"
    changed["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "new"}]  # not in-place updatable
    set_hash_annotations(changed)
    await client.update(SIDECARSETS, changed)

    async def conditions():
        return [condition(await client.get(PODS, n, NS), "SidecarSetUpgradable") for n in ("n-1", "n-2")]

    marked = await kruise_cluster.until(conditions, lambda cs: all(c is not None for c in cs))
    for c in marked:
        assert c["status"] == "False" and c["reason"] == "UpdateImmutableField"
        assert c["message"] == '{"test-sidecarset":false}'
    for name in ("n-1", "n-2"):
        sidecar = next(
            c for c in (await client.get(PODS, name, NS))["spec"]["containers"] if c["name"] == "sidecar1"
        )
        assert sidecar["image"] == "busybox:1.34" and "MODE" not in {
            e["name"] for e in sidecar.get("env") or []
        }
    final = await status()
    assert final["updatedPods"] == 0 and final["matchedPods"] == 2

    async def reasons():
        events = (await client.list(EVENTS, NS))["items"]  # a cluster-scoped object's events go to default
        return {e["reason"]: e for e in events if e["involvedObject"].get("name") == "test-sidecarset"}

    event = (await kruise_cluster.until(reasons, lambda r: "NotUpgradablePods" in r))["NotUpgradablePods"]
    assert event["message"] == (
        "SidecarSet in-place update detected 2 not upgradable pod(s) in this round, will skip them."
    )


def sidecar_image(p):
    return images(p)["sidecar1"]


async def test_priority_strategy_orders_the_rollout(kruise_cluster):
    """orderPriority `rank`: the larger suffix goes first; partition steps show the order one pod at a
    time (weightPriority and scatter share the CloneSet sorter, unit-tested there and in order)."""
    client = kruise_cluster.client
    created = await client.create(
        SIDECARSETS, sidecarset(partition=2, priorityStrategy={"orderPriority": [{"orderedKey": "rank"}]})
    )
    ranks = {"o-a": "1", "o-b": "3", "o-c": "2"}
    for name, rank in ranks.items():
        body = injected_pod(name, created)
        body["metadata"]["labels"]["rank"] = rank
        await client.create(PODS, body)

    async def status():
        return (await client.get(SIDECARSETS, "test-sidecarset")).get("status") or {}

    await kruise_cluster.until(status, lambda s: s.get("updatedReadyPods") == 3)

    async def upgraded():
        pods = {n: await client.get(PODS, n, NS) for n in ranks}
        return {n for n, p in pods.items() if sidecar_image(p) == "busybox:1.35.0"}

    async def roll(partition, expected):
        current = copy.deepcopy(await client.get(SIDECARSETS, "test-sidecarset"))
        current["spec"]["containers"][0]["image"] = "busybox:1.35.0"
        current["spec"]["updateStrategy"]["partition"] = partition
        set_hash_annotations(current)
        await client.update(SIDECARSETS, current)
        await kruise_cluster.until(
            status,
            lambda s: s.get("updatedPods") == len(expected) and s.get("updatedReadyPods") == len(expected),
        )
        assert await upgraded() == expected

    await roll(2, {"o-b"})
    await roll(1, {"o-b", "o-c"})
    await roll(0, {"o-a", "o-b", "o-c"})


async def test_scatter_strategy_spreads_a_zone_through_the_rollout(kruise_cluster):
    """Priority alone would leave both z1 pods (lowest ranks) for last; scatter on zone=z1 moves one of
    them to the front, so `partition: 2` holds back one z1 pod and one z2 pod."""
    client = kruise_cluster.client
    created = await client.create(
        SIDECARSETS,
        sidecarset(
            partition=2,
            maxUnavailable=6,
            priorityStrategy={"orderPriority": [{"orderedKey": "rank"}]},
            scatterStrategy=[{"key": "zone", "value": "z1"}],
        ),
    )
    zones = {"s-1": "z1", "s-2": "z1", "s-10": "z2", "s-11": "z2", "s-12": "z2", "s-13": "z2"}
    for name, zone in zones.items():
        body = injected_pod(name, created)
        body["metadata"]["labels"].update(zone=zone, rank=name.split("-")[1])
        await client.create(PODS, body)

    async def status():
        return (await client.get(SIDECARSETS, "test-sidecarset")).get("status") or {}

    await kruise_cluster.until(status, lambda s: s.get("updatedReadyPods") == 6)
    current = copy.deepcopy(await client.get(SIDECARSETS, "test-sidecarset"))
    current["spec"]["containers"][0]["image"] = "busybox:1.35.0"
    set_hash_annotations(current)
    await client.update(SIDECARSETS, current)
    await kruise_cluster.until(status, lambda s: s.get("updatedPods") == 4 and s.get("updatedReadyPods") == 4)
    held = {n for n in zones if sidecar_image(await client.get(PODS, n, NS)) != "busybox:1.35.0"}
    assert held == {"s-1", "s-10"}


async def test_each_sidecar_version_is_a_controller_revision_pruned_to_the_history_limit(kruise_cluster):
    """status.latestRevision names a ControllerRevision in kruise's namespace holding the sidecar part;
    going back to an old version reuses its revision; history stays within revisionHistoryLimit."""
    client = kruise_cluster.client
    body = sidecarset()
    body["spec"]["revisionHistoryLimit"] = 2
    await client.create(SIDECARSETS, body)

    async def latest():
        return ((await client.get(SIDECARSETS, "test-sidecarset")).get("status") or {}).get("latestRevision")

    async def stored():
        items = (await client.list(CONTROLLER_REVISIONS, "kruise-system"))["items"]
        return {r["metadata"]["name"]: r for r in items}

    first = await kruise_cluster.until(latest, bool)
    revision = (await stored())[first]
    assert revision["metadata"]["labels"]["kruise.io/sidecarset-name"] == "test-sidecarset"
    assert revision["data"]["spec"]["containers"][0]["image"] == "busybox:1.34"
    assert revision["metadata"]["ownerReferences"][0]["kind"] == "SidecarSet"

    async def set_image(image):
        changed = copy.deepcopy(await client.get(SIDECARSETS, "test-sidecarset"))
        changed["spec"]["containers"][0]["image"] = image
        set_hash_annotations(changed)
        await client.update(SIDECARSETS, changed)

    await set_image("busybox:1.35.0")
    second = await kruise_cluster.until(latest, lambda n: n and n != first)
    await set_image("busybox:1.34")
    await kruise_cluster.until(latest, lambda n: n == first)
    assert (await stored())[first]["revision"] == 3
    await set_image("busybox:1.36.0")
    third = await kruise_cluster.until(latest, lambda n: n not in (first, second))
    remaining = await kruise_cluster.until(stored, lambda s: len(s) == 2)
    assert set(remaining) == {first, third}
