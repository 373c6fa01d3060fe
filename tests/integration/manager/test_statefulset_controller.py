"""Advanced StatefulSet controller against the emulator + simulator: ordered scale-up and scale-in,
claims before pods, in-place and recreate updates, partition, reserveOrdinals, status and events
(scenarios 29, 33, 37 of the spec catalogue)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api import statefulset as statefulset_api
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CONTROLLER_REVISIONS,
    EVENTS,
    PODS,
    PVCS,
    STORAGE_CLASSES,
)
from kruise.manager.controllers.statefulset import SETUP

NS = "default"


@pytest.fixture
def controller_setups():
    return [SETUP]


def manifest(
    name: str = "web", replicas: int = 3, image: str = "nginx:alpine", **spec: Any
) -> dict[str, Any]:
    template_spec: dict[str, Any] = {"containers": [{"name": "nginx", "image": image}]}
    rolling = ((spec.get("updateStrategy") or {}).get("rollingUpdate")) or {}
    if rolling.get("podUpdatePolicy") in ("InPlaceIfPossible", "InPlaceOnly"):
        template_spec["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    body = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": template_spec},
            **spec,
        },
    }
    # The webhook is not running here: default the object the way it would.
    model = statefulset_api.StatefulSet.model_validate(body)
    statefulset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def pods_of(cluster, name: str) -> dict[str, dict[str, Any]]:
    listing = await cluster.client.list(PODS, NS, label_selector={"app": name})
    return {p["metadata"]["name"]: p for p in listing["items"] if not p["metadata"].get("deletionTimestamp")}


async def get_sts(cluster, name: str) -> dict[str, Any]:
    return await cluster.client.get(ADVANCED_STATEFULSETS, name, NS)


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


def ready_since(pod: dict[str, Any]) -> str:
    return next(c["lastTransitionTime"] for c in pod["status"]["conditions"] if c["type"] == "Ready")


def restarts(pod: dict[str, Any]) -> int:
    return sum(s.get("restartCount", 0) for s in pod.get("status", {}).get("containerStatuses", []))


async def settled(
    cluster, name: str, replicas: int, timeout: float = 60.0, **expected: Any
) -> dict[str, Any]:
    def done(sts: dict[str, Any]) -> bool:
        status = sts.get("status") or {}
        want = {"replicas": replicas, "readyReplicas": replicas, **expected}
        return status.get("observedGeneration") == sts["metadata"]["generation"] and all(
            status.get(k) == v for k, v in want.items()
        )

    return await cluster.until(lambda: get_sts(cluster, name), done, timeout=timeout)


async def update_spec(cluster, name: str, change) -> None:
    body = copy.deepcopy(await get_sts(cluster, name))
    change(body["spec"])
    await cluster.client.update(ADVANCED_STATEFULSETS, body)


def new_image(image: str):
    def change(spec: dict[str, Any]) -> None:
        spec["template"]["spec"]["containers"][0]["image"] = image

    return change


async def events_of(cluster, name: str) -> list[dict[str, Any]]:
    listing = await cluster.client.list(EVENTS, NS)
    return [e for e in listing["items"] if e["involvedObject"].get("name") == name]


async def test_ordered_ready_creates_pods_one_after_another(kruise_cluster):
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=3))
    seen: list[dict[str, bool]] = []

    async def snapshot() -> dict[str, bool]:
        state = {name: ready(pod) for name, pod in (await pods_of(kruise_cluster, "web")).items()}
        seen.append(state)
        return state

    await kruise_cluster.until(snapshot, lambda s: len(s) == 3 and all(s.values()))
    # OrderedReady: in every observation, a pod exists only once its predecessor is Ready
    for state in seen:
        for ordinal in (1, 2):
            if f"web-{ordinal}" in state:
                assert state[f"web-{ordinal - 1}"], state
    assert any(len(state) == 1 for state in seen), "web-0 was never observed alone"
    sts = await settled(kruise_cluster, "web", 3, availableReplicas=3, updatedReplicas=3, currentReplicas=3)
    pods = await pods_of(kruise_cluster, "web")
    assert sorted(pods) == ["web-0", "web-1", "web-2"]
    for ordinal in range(3):
        pod = pods[f"web-{ordinal}"]
        labels = pod["metadata"]["labels"]
        assert pod["spec"]["hostname"] == f"web-{ordinal}"
        assert pod["spec"]["subdomain"] == "web"
        assert labels["statefulset.kubernetes.io/pod-name"] == f"web-{ordinal}"
        assert labels["apps.kubernetes.io/pod-index"] == str(ordinal)
        assert labels["controller-revision-hash"] == sts["status"]["updateRevision"]
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    for ordinal in (1, 2):
        created = pods[f"web-{ordinal}"]["metadata"]["creationTimestamp"]
        assert created >= ready_since(pods[f"web-{ordinal - 1}"])
    status = sts["status"]
    assert status["currentRevision"] == status["updateRevision"]
    assert status["updatedReadyReplicas"] == 3
    assert status["labelSelector"] == "app=web"
    assert status["collisionCount"] == 0
    revisions = await kruise_cluster.client.list(CONTROLLER_REVISIONS, NS)
    assert [r["metadata"]["name"] for r in revisions["items"]] == [status["updateRevision"]]
    events = await kruise_cluster.until(
        lambda: events_of(kruise_cluster, "web"),
        lambda evs: sum(e["reason"] == "SuccessfulCreate" for e in evs) == 3,
    )
    messages = [e["message"] for e in events if e["reason"] == "SuccessfulCreate"]
    assert sorted(messages) == [f"create Pod web-{n} in StatefulSet web successful" for n in range(3)]


async def test_claims_exist_before_their_pod(kruise_cluster):
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    await kruise_cluster.client.create(
        ADVANCED_STATEFULSETS, manifest(replicas=2, volumeClaimTemplates=[claim])
    )
    await settled(kruise_cluster, "web", 2)
    pods = await pods_of(kruise_cluster, "web")
    claims = {c["metadata"]["name"]: c for c in (await kruise_cluster.client.list(PVCS, NS))["items"]}
    assert set(claims) == {"data-web-0", "data-web-1"}
    for ordinal in range(2):
        pod = pods[f"web-{ordinal}"]
        pvc = claims[f"data-web-{ordinal}"]
        assert pvc["metadata"]["creationTimestamp"] <= pod["metadata"]["creationTimestamp"]
        assert pvc["metadata"]["labels"] == {"app": "web"}
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "data")
        assert volume["persistentVolumeClaim"]["claimName"] == f"data-web-{ordinal}"
    events = await kruise_cluster.until(
        lambda: events_of(kruise_cluster, "web"),
        lambda evs: any(e["message"].startswith("create Claim data-web-1 Pod web-1") for e in evs),
    )
    assert "create Claim data-web-0 Pod web-0 in StatefulSet web success" in [e["message"] for e in events]


async def test_scale_in_removes_highest_ordinal_first(kruise_cluster):
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=3))
    await settled(kruise_cluster, "web", 3)

    def scale_to_one(spec):
        spec["replicas"] = 1

    await update_spec(kruise_cluster, "web", scale_to_one)
    await settled(kruise_cluster, "web", 1)
    assert sorted(await pods_of(kruise_cluster, "web")) == ["web-0"]
    events = await kruise_cluster.until(
        lambda: events_of(kruise_cluster, "web"),
        lambda evs: sum(e["reason"] == "SuccessfulDelete" for e in evs) == 2,
    )
    deletions = sorted(
        (e for e in events if e["reason"] == "SuccessfulDelete"), key=lambda e: e["metadata"]["name"]
    )
    assert [e["message"] for e in deletions] == [
        "delete Pod web-2 in StatefulSet web successful",
        "delete Pod web-1 in StatefulSet web successful",
    ]


async def test_in_place_update_keeps_pods_and_restarts_containers(kruise_cluster):
    body = manifest(replicas=3, updateStrategy={"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}})
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    first = await settled(kruise_cluster, "web", 3, updatedReplicas=3)
    before = await pods_of(kruise_cluster, "web")

    await update_spec(kruise_cluster, "web", new_image("nginx:mainline"))
    sts = await settled(
        kruise_cluster, "web", 3, updatedReplicas=3, updatedReadyReplicas=3, currentReplicas=3
    )
    assert sts["status"]["updateRevision"] != first["status"]["updateRevision"]
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    after = await pods_of(kruise_cluster, "web")
    assert after.keys() == before.keys()
    for name, pod in after.items():
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
        assert pod["spec"]["containers"][0]["image"] == "nginx:mainline"
        assert restarts(pod) == 1
        assert pod["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]
        assert pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == "Normal"
        gate = next(c for c in pod["status"]["conditions"] if c["type"] == "InPlaceUpdateReady")
        assert gate["status"] == "True"
    events = await kruise_cluster.until(
        lambda: events_of(kruise_cluster, "web"),
        lambda evs: sum(e["reason"] == "SuccessfulUpdatePodInPlace" for e in evs) == 3,
    )
    assert not any(e["reason"] == "SuccessfulDelete" for e in events)
    revision = sts["status"]["updateRevision"]
    assert f"successfully update pod web-2 in-place(revision {revision})" in [e["message"] for e in events]


async def test_recreate_update_replaces_pods_under_their_names(kruise_cluster):
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=2))
    await settled(kruise_cluster, "web", 2)
    before = await pods_of(kruise_cluster, "web")

    await update_spec(kruise_cluster, "web", new_image("nginx:mainline"))
    sts = await settled(kruise_cluster, "web", 2, updatedReplicas=2, currentReplicas=2)
    after = await pods_of(kruise_cluster, "web")
    assert sorted(after) == ["web-0", "web-1"]
    for name, pod in after.items():
        assert pod["metadata"]["uid"] != before[name]["metadata"]["uid"]
        assert pod["spec"]["containers"][0]["image"] == "nginx:mainline"
        assert pod["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]


async def test_partition_keeps_low_ordinals_at_the_old_revision(kruise_cluster):
    body = manifest(replicas=4, updateStrategy={"rollingUpdate": {"partition": 2}})
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    old = (await settled(kruise_cluster, "web", 4))["status"]["updateRevision"]

    await update_spec(kruise_cluster, "web", new_image("nginx:mainline"))
    sts = await settled(
        kruise_cluster, "web", 4, updatedReplicas=2, currentReplicas=2, updatedReadyReplicas=2
    )
    new = sts["status"]["updateRevision"]
    assert new != old and sts["status"]["currentRevision"] == old
    pods = await pods_of(kruise_cluster, "web")
    revisions = {name: pod["metadata"]["labels"]["controller-revision-hash"] for name, pod in pods.items()}
    assert revisions == {"web-0": old, "web-1": old, "web-2": new, "web-3": new}

    def no_partition(spec):
        spec["updateStrategy"]["rollingUpdate"]["partition"] = 0

    await update_spec(kruise_cluster, "web", no_partition)
    sts = await settled(kruise_cluster, "web", 4, updatedReplicas=4, currentReplicas=4)
    assert sts["status"]["currentRevision"] == new


async def test_reserve_ordinals_skips_an_ordinal(kruise_cluster):
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=3, reserveOrdinals=[1]))
    await settled(kruise_cluster, "web", 3)
    assert sorted(await pods_of(kruise_cluster, "web")) == ["web-0", "web-2", "web-3"]

    def reserve_two(spec):
        spec["reserveOrdinals"] = [1, 2]

    await update_spec(kruise_cluster, "web", reserve_two)
    await settled(kruise_cluster, "web", 3)
    pods = await kruise_cluster.until(
        lambda: pods_of(kruise_cluster, "web"), lambda p: sorted(p) == ["web-0", "web-3", "web-4"]
    )
    assert all(ready(p) for p in pods.values())


CLAIM = {
    "metadata": {"name": "data"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}


async def claim_names(cluster) -> list[str]:
    return sorted(c["metadata"]["name"] for c in (await cluster.client.list(PVCS, NS))["items"])


@pytest.mark.parametrize(
    ("when_scaled", "left"),
    [("Delete", ["data-web-0"]), ("Retain", ["data-web-0", "data-web-1", "data-web-2"])],
)
async def test_claims_of_removed_ordinals_follow_when_scaled(kruise_cluster, when_scaled, left):
    body = manifest(
        replicas=3,
        volumeClaimTemplates=[CLAIM],
        persistentVolumeClaimRetentionPolicy={"whenScaled": when_scaled, "whenDeleted": "Retain"},
    )
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    await settled(kruise_cluster, "web", 3)

    def scale_to_one(spec):
        spec["replicas"] = 1

    await update_spec(kruise_cluster, "web", scale_to_one)
    await settled(kruise_cluster, "web", 1)
    assert (
        await kruise_cluster.until(lambda: claim_names(kruise_cluster), lambda names: names == left) == left
    )


async def test_when_deleted_delete_hands_claims_to_the_set(kruise_cluster):
    body = manifest(
        replicas=1,
        volumeClaimTemplates=[CLAIM],
        persistentVolumeClaimRetentionPolicy={"whenScaled": "Retain", "whenDeleted": "Delete"},
    )
    created = await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    await settled(kruise_cluster, "web", 1)
    pvc = await kruise_cluster.client.get(PVCS, "data-web-0", NS)
    [owner] = pvc["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("StatefulSet", "web", created["metadata"]["uid"])
    await kruise_cluster.client.delete(ADVANCED_STATEFULSETS, "web", NS)
    assert await kruise_cluster.until(lambda: claim_names(kruise_cluster), lambda names: names == []) == []


async def test_a_retention_policy_change_moves_the_claims_to_and_from_the_set(kruise_cluster):
    body = manifest(
        replicas=2,
        volumeClaimTemplates=[CLAIM],
        persistentVolumeClaimRetentionPolicy={"whenScaled": "Retain", "whenDeleted": "Retain"},
    )
    created = await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    await settled(kruise_cluster, "web", 2)
    names = ["data-web-0", "data-web-1"]

    async def owners() -> dict[str, list[tuple[str, str, str]]]:
        claims = (await kruise_cluster.client.list(PVCS, NS))["items"]
        return {
            c["metadata"]["name"]: [
                (o["kind"], o["name"], o["uid"]) for o in c["metadata"].get("ownerReferences") or []
            ]
            for c in claims
        }

    assert await owners() == {name: [] for name in names}

    async def claim_uids() -> dict[str, str]:
        return {
            c["metadata"]["name"]: c["metadata"]["uid"]
            for c in (await kruise_cluster.client.list(PVCS, NS))["items"]
        }

    uids = await claim_uids()

    def when_deleted(value: str):
        def change(spec):
            spec["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] = value

        return change

    await update_spec(kruise_cluster, "web", when_deleted("Delete"))
    set_owner = [("StatefulSet", "web", created["metadata"]["uid"])]
    assert await kruise_cluster.until(owners, lambda o: o == {name: set_owner for name in names})

    await update_spec(kruise_cluster, "web", when_deleted("Retain"))
    assert await kruise_cluster.until(owners, lambda o: o == {name: [] for name in names})
    # the claims were updated in place, never recreated, and the pods kept running
    assert await claim_uids() == uids
    pods = await pods_of(kruise_cluster, "web")
    assert sorted(pods) == ["web-0", "web-1"] and all(ready(p) for p in pods.values())


async def test_paused_rollout_updates_nothing_until_resumed(kruise_cluster):
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=2))
    old = (await settled(kruise_cluster, "web", 2))["status"]["updateRevision"]
    before = await pods_of(kruise_cluster, "web")

    def pause_and_change(spec):
        spec["updateStrategy"]["rollingUpdate"]["paused"] = True
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "web", pause_and_change)
    sts = await settled(kruise_cluster, "web", 2, updatedReplicas=0, currentReplicas=2)
    assert sts["status"]["updateRevision"] != old

    def scale_up(spec):
        spec["replicas"] = 3

    await update_spec(kruise_cluster, "web", scale_up)
    sts = await settled(kruise_cluster, "web", 3, updatedReplicas=1, currentReplicas=2)
    pods = await pods_of(kruise_cluster, "web")
    assert {n: p["metadata"]["uid"] for n, p in pods.items() if n != "web-2"} == {
        n: p["metadata"]["uid"] for n, p in before.items()
    }
    # partition 0: the new ordinal is created at the update revision even while paused
    assert pods["web-2"]["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]

    def resume(spec):
        spec["updateStrategy"]["rollingUpdate"]["paused"] = False

    await update_spec(kruise_cluster, "web", resume)
    await settled(kruise_cluster, "web", 3, updatedReplicas=3, currentReplicas=3)


async def test_parallel_rollout_keeps_at_most_max_unavailable_pods_down(kruise_cluster):
    body = manifest(
        replicas=5,
        podManagementPolicy="Parallel",
        updateStrategy={"rollingUpdate": {"maxUnavailable": 2}},
    )
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    await settled(kruise_cluster, "web", 5)
    await update_spec(kruise_cluster, "web", new_image("nginx:mainline"))
    target = (await get_sts(kruise_cluster, "web"))["metadata"]["generation"]
    worst = 0

    async def observe() -> dict[str, Any]:
        nonlocal worst
        listing = await kruise_cluster.client.list(PODS, NS, label_selector={"app": "web"})
        live = [p for p in listing["items"] if not p["metadata"].get("deletionTimestamp")]
        worst = max(worst, 5 - sum(ready(p) for p in live))
        return await get_sts(kruise_cluster, "web")

    def done(sts: dict[str, Any]) -> bool:
        status = sts.get("status") or {}
        return status.get("observedGeneration") == target and status.get("updatedReadyReplicas") == 5

    await kruise_cluster.until(observe, done, timeout=60)
    assert 1 <= worst <= 2


@pytest.mark.parametrize("hard", [False, True], ids=["gentle", "hard"])
async def test_manager_crash_mid_in_place_rollout_updates_no_pod_twice(kruise_cluster, hard):
    """The controllers stop half-way through an in-place rollout of 6 pods (maxUnavailable 2) and
    fresh ones take over: the rollout completes, every pod keeps its UID and restarted exactly once,
    and maxUnavailable holds across the crash. `hard` kills the reconcile wherever it is awaiting
    (a pod's spec written, its state annotation not yet): the fresh manager must not update that
    pod again, and at most its one event is lost (<= 1 per pod holds either way)."""
    body = manifest(
        replicas=6,
        podManagementPolicy="Parallel",
        # minReadySeconds: each batch stays unavailable 2 s, so the crash surely lands half-way (at speed
        # 50 an unhindered rollout can finish between two polls, or during the restart)
        updateStrategy={
            "rollingUpdate": {
                "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2, "minReadySeconds": 2,
            }
        },
    )  # fmt: skip
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    # available, not just ready: an unavailable pod is updated without taking the budget
    await settled(kruise_cluster, "web", 6, updatedReplicas=6, availableReplicas=6)
    before = await pods_of(kruise_cluster, "web")
    worst = 0

    async def observe() -> dict[str, dict[str, Any]]:
        nonlocal worst
        pods = await pods_of(kruise_cluster, "web")
        worst = max(worst, 6 - sum(ready(p) for p in pods.values()))
        return pods

    def moved(pods: dict[str, dict[str, Any]]) -> int:
        return sum(p["spec"]["containers"][0]["image"] == "nginx:mainline" for p in pods.values())

    await update_spec(kruise_cluster, "web", new_image("nginx:mainline"))
    await kruise_cluster.until(observe, lambda pods: 1 <= moved(pods) < 6)
    fresh = await kruise_cluster.restart_manager([SETUP], hard=hard)
    crashed = await observe()
    assert 1 <= moved(crashed) < 6, "the crash must land mid-rollout"

    target = (await get_sts(kruise_cluster, "web"))["metadata"]["generation"]

    async def status() -> dict[str, Any]:
        await observe()
        return await get_sts(kruise_cluster, "web")

    def done(sts: dict[str, Any]) -> bool:
        s = sts.get("status") or {}
        return s.get("observedGeneration") == target and s.get("updatedReadyReplicas") == 6

    sts = await kruise_cluster.until(status, done, timeout=60)
    after = await pods_of(kruise_cluster, "web")
    assert after.keys() == before.keys()
    for name, pod in after.items():
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
        assert pod["spec"]["containers"][0]["image"] == "nginx:mainline"
        assert restarts(pod) == 1, name
        assert pod["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]
    assert 1 <= worst <= 2
    for recorder in fresh.recorders:
        await recorder.flush()
    in_place = [
        e for e in await events_of(kruise_cluster, "web") if e["reason"] == "SuccessfulUpdatePodInPlace"
    ]
    for name in after:
        assert sum(f"pod {name} in-place" in e["message"] for e in in_place) <= 1, name


def volume_claims(sts: dict[str, Any]) -> list[dict[str, Any]] | None:
    return (sts.get("status") or {}).get("volumeClaims")


async def provision(cluster, name: str, storage: str, capacity: str) -> None:
    """Play the volume provisioner: the claim requests `storage` and its volume reports `capacity`."""
    pvc = copy.deepcopy(await cluster.client.get(PVCS, name, NS))
    pvc["spec"]["resources"]["requests"]["storage"] = storage
    pvc = await cluster.client.update(PVCS, pvc)
    pvc["status"] = {"phase": "Bound", "capacity": {"storage": capacity}}
    await cluster.client.update_status(PVCS, pvc)


async def test_status_volume_claims_follow_the_template_and_the_claims(kruise_cluster):
    # an expandable class no simulated provisioner serves: the test plays the provisioner
    manual = {
        "metadata": {"name": "manual"},
        "provisioner": "example.com/manual",
        "allowVolumeExpansion": True,
    }
    await kruise_cluster.client.create(STORAGE_CLASSES, manual)
    claim = {
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "manual",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    await kruise_cluster.client.create(
        ADVANCED_STATEFULSETS,
        manifest(replicas=2, podManagementPolicy="Parallel", volumeClaimTemplates=[claim]),
    )
    await settled(kruise_cluster, "web", 2)
    # claims exist and match the template, no volume reports a capacity yet
    await kruise_cluster.until(
        lambda: get_sts(kruise_cluster, "web"),
        lambda s: (
            volume_claims(s)
            == [{"volumeClaimName": "data", "compatibleReplicas": 2, "compatibleReadyReplicas": 0}]
        ),
    )
    for ordinal in range(2):
        await provision(kruise_cluster, f"data-web-{ordinal}", "1Gi", "1Gi")

    def grow(spec: dict[str, Any]) -> None:
        spec["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "2Gi"

    # the template outgrows every claim: none is compatible any more
    await update_spec(kruise_cluster, "web", grow)
    await kruise_cluster.until(
        lambda: get_sts(kruise_cluster, "web"),
        lambda s: (
            (s.get("status") or {}).get("observedGeneration") == s["metadata"]["generation"]
            and volume_claims(s)
            == [{"volumeClaimName": "data", "compatibleReplicas": 0, "compatibleReadyReplicas": 0}]
        ),
    )
    # the user expands web-0's claim and its volume grows; a new replica gets a 2Gi claim
    await provision(kruise_cluster, "data-web-0", "2Gi", "2Gi")
    await update_spec(kruise_cluster, "web", lambda spec: spec.update(replicas=3))
    await settled(kruise_cluster, "web", 3)
    await kruise_cluster.until(
        lambda: get_sts(kruise_cluster, "web"),
        lambda s: (
            volume_claims(s)
            == [{"volumeClaimName": "data", "compatibleReplicas": 2, "compatibleReadyReplicas": 1}]
        ),
    )
