"""The simulator's apps/v1 StatefulSet controller: ordinals, ordering, scaling, rolling updates, PVCs.

Ordering is checked on the recorded stream of pod watch events: under OrderedReady a pod is
created only once every lower ordinal was seen Running and Ready, and scale-in deletes the highest
ordinal and waits for it to be gone before deleting the next.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from simulator_testkit import WAIT, Cluster, is_ready

from kruise.sandbox.simulator.client import MERGE_PATCH, resource_path

Obj = dict[str, Any]
APPS = "apps/v1"
KUBECTL = Path(sys.executable).parent / "kubectl"


def statefulset(name: str = "web", replicas: int = 3, **spec: Any) -> Obj:
    return {
        "apiVersion": APPS,
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
            },
            **spec,
        },
    }


def sts_path(name: str = "web", sub: str = "") -> str:
    return resource_path(APPS, "statefulsets", "default", name, sub)


async def patch_sts(cluster: Cluster, patch: Obj, name: str = "web", sub: str = "") -> Obj:
    return await cluster.client.patch(sts_path(name, sub), patch, MERGE_PATCH)


def settled(replicas: int, revision_changed_from: str | None = None) -> Callable[[Obj], bool]:
    def check(sts: Obj) -> bool:
        status = sts.get("status") or {}
        return (
            status.get("observedGeneration") == sts["metadata"]["generation"]
            and status.get("replicas") == replicas
            and status.get("readyReplicas", 0) == replicas
            and status.get("updatedReplicas", 0) == replicas
            and status.get("currentRevision") == status.get("updateRevision")
            and status.get("currentRevision") != revision_changed_from
        )

    return check


async def wait_sts(cluster: Cluster, predicate: Callable[[Obj], bool], name: str = "web") -> Obj:
    return await cluster.wait_for("statefulsets", name, predicate, group_version=APPS, timeout=30)


async def record_pods(
    cluster: Cluster, selector: str, done: Callable[[dict[str, Obj]], bool], action: Callable[[], Any]
) -> list[tuple[str, Obj]]:
    """Run ``action`` while recording every pod watch event of ``selector`` until ``done(live pods)``."""
    path = resource_path("v1", "pods", "default")
    listing = await cluster.client.list(path, labelSelector=selector)
    live = {p["metadata"]["name"]: p for p in listing["items"]}
    history: list[tuple[str, Obj]] = [("ADDED", p) for p in live.values()]
    await action()
    async with asyncio.timeout(WAIT * 2):
        async for event in cluster.client.watch(
            path, listing["metadata"]["resourceVersion"], labelSelector=selector
        ):
            if event["type"] == "BOOKMARK":
                continue
            pod = event["object"]
            history.append((event["type"], pod))
            if event["type"] == "DELETED":
                live.pop(pod["metadata"]["name"], None)
            else:
                live[pod["metadata"]["name"]] = pod
            if done(live):
                return history
    raise AssertionError("unreachable")


def all_ready(names: set[str]) -> Callable[[dict[str, Obj]], bool]:
    return lambda live: set(live) == names and all(map(is_ready, live.values()))


def assert_created_in_order(history: list[tuple[str, Obj]], prefix: str) -> None:
    """Each pod appears only after every lower ordinal was seen Running and Ready."""
    ready: set[int] = set()
    seen: set[int] = set()
    for kind, pod in history:
        ordinal = int(pod["metadata"]["name"].removeprefix(prefix))
        if kind == "ADDED" and ordinal not in seen:
            seen.add(ordinal)
            assert set(range(ordinal)) <= ready, (
                f"{prefix}{ordinal} created before {sorted(ready)} were ready"
            )
        if kind != "DELETED" and is_ready(pod) and pod["status"].get("phase") == "Running":
            ready.add(ordinal)


async def test_ordered_ready_identity_status_and_scale_in_from_the_top(cluster: Cluster):
    history = await record_pods(
        cluster,
        "app=web",
        all_ready({"web-0", "web-1", "web-2"}),
        lambda: cluster.create(statefulset(), "statefulsets", APPS),
    )
    assert_created_in_order(history, "web-")
    sts = await wait_sts(cluster, settled(3))
    status = sts["status"]
    assert status["availableReplicas"] == 3 and status["currentReplicas"] == 3
    assert status["collisionCount"] == 0
    revision = status["updateRevision"]
    assert revision.startswith("web-")

    pods = {p["metadata"]["name"]: p for _, p in history}
    pod = pods["web-1"]
    assert pod["metadata"]["labels"] == {
        "app": "web",
        "statefulset.kubernetes.io/pod-name": "web-1",
        "apps.kubernetes.io/pod-index": "1",
        "controller-revision-hash": revision,
    }
    assert pod["spec"]["hostname"] == "web-1" and pod["spec"]["subdomain"] == "web"
    owner = pod["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("StatefulSet", "web", True)

    listing = await cluster.client.list(resource_path(APPS, "controllerrevisions", "default"))
    revisions = [
        r for r in listing["items"] if r["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
    ]
    assert [(r["metadata"]["name"], r["revision"]) for r in revisions] == [(revision, 1)]
    assert revisions[0]["data"]["spec"]["template"]["$patch"] == "replace"

    # Scale in through the scale subresource: web-2 goes, and only once it is gone does web-1.
    history = await record_pods(
        cluster,
        "app=web",
        lambda live: set(live) == {"web-0"},
        lambda: patch_sts(cluster, {"spec": {"replicas": 1}}, sub="scale"),
    )
    order = [
        (kind if kind == "DELETED" else "TERMINATING", pod["metadata"]["name"])
        for kind, pod in history
        if kind == "DELETED" or pod["metadata"].get("deletionTimestamp")
    ]
    deduped = [item for i, item in enumerate(order) if item not in order[:i]]
    assert deduped == [
        ("TERMINATING", "web-2"),
        ("DELETED", "web-2"),
        ("TERMINATING", "web-1"),
        ("DELETED", "web-1"),
    ]
    scale = await cluster.client.get(sts_path(sub="scale"))
    assert scale["spec"]["replicas"] == 1
    await wait_sts(cluster, settled(1))


async def test_parallel_with_ordinals_start(cluster: Cluster):
    await cluster.create(
        statefulset(podManagementPolicy="Parallel", ordinals={"start": 5}), "statefulsets", APPS
    )
    pods = await cluster.wait_list(
        "pods", lambda ps: len(ps) == 3 and all(map(is_ready, ps)), label_selector="app=web"
    )
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-5", "web-6", "web-7"]
    assert sorted(p["metadata"]["labels"]["apps.kubernetes.io/pod-index"] for p in pods) == ["5", "6", "7"]
    await wait_sts(cluster, settled(3))

    # Scale in under Parallel: both condemned pods are deleted at once, the highest ordinals.
    await patch_sts(cluster, {"spec": {"replicas": 1}})
    pods = await cluster.wait_list("pods", lambda ps: len(ps) == 1, label_selector="app=web")
    assert pods[0]["metadata"]["name"] == "web-5"
    await wait_sts(cluster, settled(1))


async def test_rolling_update_with_partition_then_all(cluster: Cluster):
    await cluster.create(statefulset(), "statefulsets", APPS)
    sts = await wait_sts(cluster, settled(3))
    old = sts["status"]["currentRevision"]

    patch = {
        "spec": {
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
            "template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}},
        }
    }
    history = await record_pods(
        cluster,
        "app=web",
        lambda live: (
            len(live) == 3
            and all(map(is_ready, live.values()))
            and sum(p["spec"]["containers"][0]["image"] == "nginx:1.27" for p in live.values()) == 2
        ),
        lambda: patch_sts(cluster, patch),
    )
    deleted = [p["metadata"]["name"] for kind, p in history if kind == "DELETED"]
    assert deleted == ["web-2", "web-1"]
    sts = await wait_sts(
        cluster,
        lambda s: (
            (s.get("status") or {}).get("updatedReplicas") == 2
            and s["status"].get("readyReplicas") == 3
            and s["status"]["observedGeneration"] == s["metadata"]["generation"]
        ),
    )
    status = sts["status"]
    new = status["updateRevision"]
    assert status["currentRevision"] == old and new != old
    assert status["currentReplicas"] == 1 and status["replicas"] == 3
    pods = await cluster.wait_list("pods", lambda ps: len(ps) == 3, label_selector="app=web")
    by_name = {p["metadata"]["name"]: p["metadata"]["labels"]["controller-revision-hash"] for p in pods}
    assert by_name == {"web-0": old, "web-1": new, "web-2": new}

    # A pod below the partition that is deleted comes back at the current (old) revision.
    await cluster.client.delete(resource_path("v1", "pods", "default", "web-0"))
    pod = await cluster.wait_for(
        "pods", "web-0", lambda p: is_ready(p) and not p["metadata"].get("deletionTimestamp")
    )
    assert pod["metadata"]["labels"]["controller-revision-hash"] == old
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.25"

    await patch_sts(cluster, {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})
    sts = await wait_sts(cluster, settled(3, revision_changed_from=old))
    assert sts["status"]["currentRevision"] == new

    # Rolling back reuses the first revision, renumbered as the newest.
    back = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}}
    await patch_sts(cluster, back)
    sts = await wait_sts(cluster, settled(3, revision_changed_from=new))
    assert sts["status"]["updateRevision"] == old
    listing = await cluster.client.list(resource_path(APPS, "controllerrevisions", "default"))
    numbers = {r["metadata"]["name"]: r["revision"] for r in listing["items"]}
    assert numbers == {new: 2, old: 3}


async def test_on_delete_waits_for_manual_deletion(cluster: Cluster):
    await cluster.create(statefulset(replicas=2, updateStrategy={"type": "OnDelete"}), "statefulsets", APPS)
    sts = await wait_sts(cluster, settled(2))
    old = sts["status"]["currentRevision"]
    await patch_sts(
        cluster, {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}}}
    )
    sts = await wait_sts(
        cluster,
        lambda s: (
            (s.get("status") or {}).get("observedGeneration") == s["metadata"]["generation"]
            and s["status"]["updateRevision"] != old
        ),
    )
    assert sts["status"]["currentReplicas"] == 2 and "updatedReplicas" not in sts["status"]
    await cluster.client.delete(resource_path("v1", "pods", "default", "web-1"))
    pod = await cluster.wait_for(
        "pods", "web-1", lambda p: is_ready(p) and not p["metadata"].get("deletionTimestamp")
    )
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"
    sts = await wait_sts(cluster, lambda s: (s.get("status") or {}).get("updatedReplicas") == 1)
    assert sts["status"]["currentRevision"] == old  # OnDelete never completes a rollout, as upstream
    web0 = await cluster.client.get(resource_path("v1", "pods", "default", "web-0"))
    assert web0["spec"]["containers"][0]["image"] == "nginx:1.25"


async def test_volume_claim_templates_and_retention(cluster: Cluster):
    claim = {
        "metadata": {"name": "data", "labels": {"tier": "db"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    manifest = statefulset(
        replicas=2,
        volumeClaimTemplates=[claim],
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Retain", "whenScaled": "Delete"},
    )
    manifest["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/d"}
    ]
    await cluster.create(manifest, "statefulsets", APPS)
    await wait_sts(cluster, settled(2))
    claims = await cluster.wait_list(
        "persistentvolumeclaims", lambda cs: len(cs) == 2, label_selector="app=web"
    )
    assert sorted(c["metadata"]["name"] for c in claims) == ["data-web-0", "data-web-1"]
    assert all(c["metadata"]["labels"] == {"tier": "db", "app": "web"} for c in claims)
    assert all(not c["metadata"].get("ownerReferences") for c in claims)
    pod = await cluster.client.get(resource_path("v1", "pods", "default", "web-1"))
    assert pod["spec"]["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}
    events = await cluster.events_for("web")
    assert "create Claim data-web-0 Pod web-0 in StatefulSet web success" in {e["message"] for e in events}

    # whenScaled: Delete - the condemned pod owns its claim, so the garbage collector removes it.
    await patch_sts(cluster, {"spec": {"replicas": 1}})
    claims = await cluster.wait_list(
        "persistentvolumeclaims",
        lambda cs: [c["metadata"]["name"] for c in cs] == ["data-web-0"],
        label_selector="app=web",
        timeout=30,
    )
    await wait_sts(cluster, settled(1))

    # whenDeleted: Delete - the set becomes an owner of the remaining claim.
    await patch_sts(cluster, {"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}})
    claim = await cluster.wait_for(
        "persistentvolumeclaims", "data-web-0", lambda c: bool(c["metadata"].get("ownerReferences"))
    )
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    await cluster.client.delete(sts_path())
    await cluster.wait_list("persistentvolumeclaims", lambda cs: not cs, label_selector="app=web", timeout=30)


async def kubectl(cluster: Cluster, tmp_path: Path, *args: str) -> str:
    if not KUBECTL.exists() and shutil.which("kubectl") is None:
        pytest.skip("kubectl binary not available")
    proc = await asyncio.create_subprocess_exec(
        str(KUBECTL if KUBECTL.exists() else shutil.which("kubectl")),
        "--kubeconfig",
        str(cluster.simulator.kubeconfig_path),
        "--cache-dir",
        str(tmp_path / "cache"),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    return re.sub(r" +", " ", out.decode())


async def test_kubectl_columns_and_scale(cluster: Cluster, tmp_path: Path):
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    await cluster.create(statefulset(replicas=1, volumeClaimTemplates=[claim]), "statefulsets", APPS)
    sts = await wait_sts(cluster, settled(1))
    out = await kubectl(cluster, tmp_path, "scale", "statefulset", "web", "--replicas=2")
    assert out == "statefulset.apps/web scaled\n"
    sts = await wait_sts(cluster, settled(2))
    lines = (await kubectl(cluster, tmp_path, "get", "sts", "-o", "wide")).splitlines()
    assert lines[0] == "NAME READY AGE CONTAINERS IMAGES"
    assert lines[1].startswith("web 2/2 ") and lines[1].endswith(" main nginx:1.25")
    lines = (await kubectl(cluster, tmp_path, "get", "controllerrevisions")).splitlines()
    assert lines[0] == "NAME CONTROLLER REVISION AGE"
    assert lines[1].startswith(f"{sts['status']['currentRevision']} statefulset.apps/web 1 ")
    lines = (await kubectl(cluster, tmp_path, "get", "pvc")).splitlines()
    assert lines[0] == "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE"
    assert [line.split(" ")[:2] for line in lines[1:]] == [
        ["data-web-0", "Pending"],
        ["data-web-1", "Pending"],
    ]
