"""CloneSet controller against the emulator + simulator: scale, in-place and recreate updates,
partition, podsToDelete, pause, revisions and status — the behaviours of seed 002."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api import cloneset as cloneset_api
from kruise.kube.resources import CLONESETS, CONTROLLER_REVISIONS, EVENTS, PODS, PVCS
from kruise.manager.controllers.cloneset import SETUP

NS = "default"


@pytest.fixture
def controller_setups():
    return [SETUP]


def manifest(
    name: str = "cs-demo", replicas: int = 3, image: str = "nginx:alpine", **spec: Any
) -> dict[str, Any]:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": image}]},
            },
            **spec,
        },
    }
    # The webhook is not running here: default the object the way it would.
    model = cloneset_api.CloneSet.model_validate(body)
    cloneset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def pods_of(cluster, name: str) -> list[dict[str, Any]]:
    listing = await cluster.client.list(PODS, NS, label_selector={"app": name})
    return [p for p in listing["items"] if not p["metadata"].get("deletionTimestamp")]


async def get_cs(cluster, name: str) -> dict[str, Any]:
    return await cluster.client.get(CLONESETS, name, NS)


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


def restarts(pod: dict[str, Any]) -> int:
    return sum(s.get("restartCount", 0) for s in pod.get("status", {}).get("containerStatuses", []))


async def settled(cluster, name: str, replicas: int, **expected: int) -> dict[str, Any]:
    def done(cs: dict[str, Any]) -> bool:
        status = cs.get("status") or {}
        want = {"replicas": replicas, "readyReplicas": replicas, "updatedReplicas": replicas, **expected}
        return status.get("observedGeneration") == cs["metadata"]["generation"] and all(
            status.get(k) == v for k, v in want.items()
        )

    return await cluster.until(lambda: get_cs(cluster, name), done)


async def update_spec(cluster, name: str, change) -> None:
    cs = await get_cs(cluster, name)
    body = copy.deepcopy(cs)
    change(body["spec"])
    await cluster.client.update(CLONESETS, body)


async def event_reasons(cluster, name: str) -> list[str]:
    listing = await cluster.client.list(EVENTS, NS)
    return [e["reason"] for e in listing["items"] if e["involvedObject"].get("name") == name]


async def test_scale_up_creates_named_pods_with_revision_labels(kruise_cluster):
    await kruise_cluster.client.create(CLONESETS, manifest(replicas=3))
    cs = await settled(kruise_cluster, "cs-demo", 3, availableReplicas=3)
    pods = await pods_of(kruise_cluster, "cs-demo")
    assert len(pods) == 3 and all(ready(p) for p in pods)
    revision = cs["status"]["updateRevision"]
    assert cs["status"]["currentRevision"] == revision
    assert cs["status"]["labelSelector"] == "app=cs-demo"
    assert cs["status"]["expectedUpdatedReplicas"] == 3
    for pod in pods:
        labels = pod["metadata"]["labels"]
        instance = labels["apps.kruise.io/cloneset-instance-id"]
        assert pod["metadata"]["name"] == f"cs-demo-{instance}"
        assert labels["controller-revision-hash"] == revision
        assert labels["pod-template-hash"] == revision.rsplit("-", 1)[1]
        assert labels["lifecycle.apps.kruise.io/state"] == "Normal"
        assert {"conditionType": "InPlaceUpdateReady"} in pod["spec"]["readinessGates"]
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "CloneSet"
    revisions = await kruise_cluster.client.list(CONTROLLER_REVISIONS, NS)
    assert [r["metadata"]["name"] for r in revisions["items"]] == [revision]
    reasons = await kruise_cluster.until(
        lambda: event_reasons(kruise_cluster, "cs-demo"), lambda r: r.count("SuccessfulCreate") == 3
    )
    assert reasons.count("SuccessfulCreate") == 3


async def test_in_place_update_keeps_pod_identity(kruise_cluster):
    body = manifest(replicas=3, updateStrategy={"type": "InPlaceIfPossible"})
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 3)
    before = {p["metadata"]["name"]: p for p in await pods_of(kruise_cluster, "cs-demo")}

    def new_image(spec):
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "cs-demo", new_image)
    cs = await settled(kruise_cluster, "cs-demo", 3, updatedReadyReplicas=3)
    after = {p["metadata"]["name"]: p for p in await pods_of(kruise_cluster, "cs-demo")}
    assert after.keys() == before.keys()
    for name, pod in after.items():
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
        assert pod["status"]["podIP"] == before[name]["status"]["podIP"]
        assert pod["spec"]["containers"][0]["image"] == "nginx:mainline"
        assert restarts(pod) == 1
        assert pod["metadata"]["labels"]["controller-revision-hash"] == cs["status"]["updateRevision"]
        assert "apps.kruise.io/inplace-update-state" in pod["metadata"]["annotations"]
        gate = next(c for c in pod["status"]["conditions"] if c["type"] == "InPlaceUpdateReady")
        assert gate["status"] == "True"
    assert cs["status"]["currentRevision"] == cs["status"]["updateRevision"]
    reasons = await kruise_cluster.until(
        lambda: event_reasons(kruise_cluster, "cs-demo"), lambda r: r.count("SuccessfulUpdatePodInPlace") == 3
    )
    assert "SuccessfulUpdatePodReCreate" not in reasons


async def test_recreate_update_replaces_pods(kruise_cluster):
    await kruise_cluster.client.create(CLONESETS, manifest(replicas=2))
    await settled(kruise_cluster, "cs-demo", 2)
    before = {p["metadata"]["name"] for p in await pods_of(kruise_cluster, "cs-demo")}

    def new_image(spec):
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "cs-demo", new_image)
    await settled(kruise_cluster, "cs-demo", 2, updatedReadyReplicas=2)
    after = await kruise_cluster.until(
        lambda: pods_of(kruise_cluster, "cs-demo"), lambda pods: len(pods) == 2
    )
    assert not before & {p["metadata"]["name"] for p in after}
    assert all(restarts(p) == 0 for p in after)
    reasons = await event_reasons(kruise_cluster, "cs-demo")
    assert reasons.count("SuccessfulUpdatePodReCreate") == 2


async def test_partition_keeps_old_pods(kruise_cluster):
    body = manifest(replicas=5, updateStrategy={"type": "InPlaceIfPossible", "partition": 3})
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 5)

    def new_image(spec):
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "cs-demo", new_image)
    cs = await settled(kruise_cluster, "cs-demo", 5, updatedReplicas=2, updatedReadyReplicas=2)
    assert cs["status"]["expectedUpdatedReplicas"] == 2
    assert cs["status"]["currentRevision"] != cs["status"]["updateRevision"]
    images = sorted(p["spec"]["containers"][0]["image"] for p in await pods_of(kruise_cluster, "cs-demo"))
    assert images == ["nginx:alpine"] * 3 + ["nginx:mainline"] * 2

    await update_spec(kruise_cluster, "cs-demo", lambda spec: spec["updateStrategy"].update(partition=0))
    cs = await settled(kruise_cluster, "cs-demo", 5, updatedReadyReplicas=5)
    assert cs["status"]["currentRevision"] == cs["status"]["updateRevision"]


async def test_pods_to_delete_replaces_the_named_pod_and_is_cleared(kruise_cluster):
    await kruise_cluster.client.create(CLONESETS, manifest(replicas=3))
    await settled(kruise_cluster, "cs-demo", 3)
    victim = sorted(p["metadata"]["name"] for p in await pods_of(kruise_cluster, "cs-demo"))[0]
    await update_spec(
        kruise_cluster, "cs-demo", lambda spec: spec["scaleStrategy"].update(podsToDelete=[victim])
    )

    def replaced(cs):
        return not (cs["spec"].get("scaleStrategy") or {}).get("podsToDelete")

    await kruise_cluster.until(lambda: get_cs(kruise_cluster, "cs-demo"), replaced)
    pods = await kruise_cluster.until(
        lambda: pods_of(kruise_cluster, "cs-demo"),
        lambda pods: len(pods) == 3 and victim not in {p["metadata"]["name"] for p in pods},
    )
    assert len(pods) == 3


async def test_scale_down_and_paused_update(kruise_cluster):
    body = manifest(replicas=4, updateStrategy={"type": "InPlaceIfPossible", "paused": True})
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 4)

    def change(spec):
        spec["replicas"] = 2
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "cs-demo", change)
    cs = await settled(kruise_cluster, "cs-demo", 2, updatedReplicas=0)
    assert cs["status"]["currentRevision"] != cs["status"]["updateRevision"]
    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "cs-demo"), lambda pods: len(pods) == 2)
    assert all(p["spec"]["containers"][0]["image"] == "nginx:alpine" for p in pods)


async def test_scale_max_unavailable_creates_one_at_a_time(kruise_cluster):
    body = manifest(replicas=3, scaleStrategy={"maxUnavailable": 1})
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 3)
    reasons = await kruise_cluster.until(
        lambda: event_reasons(kruise_cluster, "cs-demo"), lambda r: r.count("SuccessfulCreate") == 3
    )
    assert "ScaleUpLimited" in reasons


async def test_history_is_truncated_to_the_limit(kruise_cluster):
    body = manifest(replicas=1, revisionHistoryLimit=1, updateStrategy={"type": "InPlaceIfPossible"})
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 1)
    for tag in ("1.25", "1.26", "1.27"):

        def change(spec, tag=tag):
            spec["template"]["spec"]["containers"][0]["image"] = f"nginx:{tag}"

        await update_spec(kruise_cluster, "cs-demo", change)
        await settled(kruise_cluster, "cs-demo", 1, updatedReadyReplicas=1)

    async def names():
        listing = await kruise_cluster.client.list(CONTROLLER_REVISIONS, NS)
        return [r["metadata"]["name"] for r in listing["items"]]

    # live revision + 1 of history
    assert len(await kruise_cluster.until(names, lambda n: len(n) == 2)) == 2


async def test_pre_delete_hook_holds_the_pod_in_preparing_delete(kruise_cluster):
    body = manifest(replicas=3, lifecycle={"preDelete": {"labelsHandler": {"lifecycle-hook": "true"}}})
    body["spec"]["template"]["metadata"]["labels"]["lifecycle-hook"] = "true"
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 3)
    victim = sorted(p["metadata"]["name"] for p in await pods_of(kruise_cluster, "cs-demo"))[0]
    await kruise_cluster.client.patch(
        PODS, victim, {"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}}, NS
    )
    held = await kruise_cluster.until(
        lambda: kruise_cluster.client.get(PODS, victim, NS),
        lambda p: p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "PreparingDelete",
    )
    assert not held["metadata"].get("deletionTimestamp")
    cs = await get_cs(kruise_cluster, "cs-demo")
    assert cs["status"]["replicas"] == 3  # no replacement while the hook holds it

    await kruise_cluster.client.patch(PODS, victim, {"metadata": {"labels": {"lifecycle-hook": "false"}}}, NS)
    pods = await kruise_cluster.until(
        lambda: pods_of(kruise_cluster, "cs-demo"),
        lambda pods: len(pods) == 3 and victim not in {p["metadata"]["name"] for p in pods},
    )
    assert len(pods) == 3


async def test_in_place_update_hook_with_mark_pod_not_ready(kruise_cluster):
    body = manifest(
        replicas=1,
        updateStrategy={"type": "InPlaceIfPossible"},
        lifecycle={"inPlaceUpdate": {"labelsHandler": {"hook": "true"}, "markPodNotReady": True}},
    )
    template = body["spec"]["template"]
    template["metadata"]["labels"]["hook"] = "true"
    template["spec"]["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    await kruise_cluster.client.create(CLONESETS, body)
    (pod,) = await kruise_cluster.until(
        lambda: pods_of(kruise_cluster, "cs-demo"), lambda pods: len(pods) == 1
    )
    name = pod["metadata"]["name"]
    # Nobody else sets KruisePodReady here (the pod-readiness controller is not under test).
    await kruise_cluster.client.patch(
        PODS,
        name,
        {"status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]}},
        NS,
        patch_type="application/strategic-merge-patch+json",
        subresource="status",
    )
    await settled(kruise_cluster, "cs-demo", 1)

    def new_image(spec):
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "cs-demo", new_image)
    preparing = await kruise_cluster.until(
        lambda: kruise_cluster.client.get(PODS, name, NS),
        lambda p: p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "PreparingUpdate",
    )
    kruise_ready = next(c for c in preparing["status"]["conditions"] if c["type"] == "KruisePodReady")
    assert kruise_ready["status"] == "False" and "preUpdateHook" in kruise_ready["message"]
    assert preparing["spec"]["containers"][0]["image"] == "nginx:alpine"  # waits for the hook

    await kruise_cluster.client.patch(PODS, name, {"metadata": {"labels": {"hook": "false"}}}, NS)
    updated = await kruise_cluster.until(
        lambda: kruise_cluster.client.get(PODS, name, NS),
        lambda p: p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Updated",
    )
    assert updated["spec"]["containers"][0]["image"] == "nginx:mainline"
    await kruise_cluster.client.patch(PODS, name, {"metadata": {"labels": {"hook": "true"}}}, NS)
    normal = await kruise_cluster.until(
        lambda: kruise_cluster.client.get(PODS, name, NS),
        lambda p: p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Normal",
    )
    assert restarts(normal) == 1


async def test_volume_claim_templates_give_each_pod_its_pvc(kruise_cluster):
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    body = manifest(replicas=2, volumeClaimTemplates=[claim])
    body["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/data"}
    ]
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 2)
    pods = await pods_of(kruise_cluster, "cs-demo")
    listing = await kruise_cluster.client.list(PVCS, NS)
    claims = {c["metadata"]["name"]: c for c in listing["items"]}
    for pod in pods:
        instance = pod["metadata"]["labels"]["apps.kruise.io/cloneset-instance-id"]
        expected = f"data-cs-demo-{instance}"
        assert expected in claims
        assert claims[expected]["metadata"]["labels"]["apps.kruise.io/cloneset-instance-id"] == instance
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "data")
        assert volume["persistentVolumeClaim"]["claimName"] == expected

    # A pod deleted by hand is replaced with the same instance id, re-using its PVC.
    victim = pods[0]
    await kruise_cluster.client.delete(PODS, victim["metadata"]["name"], NS)
    replacement = await kruise_cluster.until(
        lambda: pods_of(kruise_cluster, "cs-demo"),
        lambda ps: len(ps) == 2 and all(p["metadata"]["uid"] != victim["metadata"]["uid"] for p in ps),
    )
    ids = {p["metadata"]["labels"]["apps.kruise.io/cloneset-instance-id"] for p in replacement}
    assert victim["metadata"]["labels"]["apps.kruise.io/cloneset-instance-id"] in ids


async def test_recreate_with_max_surge_never_drops_below_replicas(kruise_cluster):
    body = manifest(replicas=3, updateStrategy={"type": "ReCreate", "maxSurge": 1, "maxUnavailable": 0})
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 3, availableReplicas=3)
    samples: list[tuple[int, int]] = []

    async def sample():
        pods = await pods_of(kruise_cluster, "cs-demo")
        samples.append((len(pods), sum(ready(p) for p in pods)))
        return await get_cs(kruise_cluster, "cs-demo")

    def new_image(spec):
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "cs-demo", new_image)

    def done(cs):
        s = cs.get("status") or {}
        return s.get("updatedReadyReplicas") == 3 and s.get("replicas") == 3 and s.get("readyReplicas") == 3

    await kruise_cluster.until(sample, done)
    assert max(total for total, _ in samples) <= 4
    assert min(ready_count for _, ready_count in samples) >= 3


async def test_priority_strategy_updates_weighted_pods_first(kruise_cluster):
    body = manifest(
        replicas=4,
        updateStrategy={
            "type": "InPlaceIfPossible",
            "partition": 2,
            "priorityStrategy": {
                "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"tier": "front"}}}]
            },
        },
    )
    await kruise_cluster.client.create(CLONESETS, body)
    await settled(kruise_cluster, "cs-demo", 4)
    names = sorted(p["metadata"]["name"] for p in await pods_of(kruise_cluster, "cs-demo"))
    front = names[1:3]
    for name in front:
        await kruise_cluster.client.patch(PODS, name, {"metadata": {"labels": {"tier": "front"}}}, NS)

    def new_image(spec):
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"

    await update_spec(kruise_cluster, "cs-demo", new_image)
    await settled(kruise_cluster, "cs-demo", 4, updatedReplicas=2, updatedReadyReplicas=2)
    updated = sorted(
        p["metadata"]["name"]
        for p in await pods_of(kruise_cluster, "cs-demo")
        if p["spec"]["containers"][0]["image"] == "nginx:mainline"
    )
    assert updated == front
