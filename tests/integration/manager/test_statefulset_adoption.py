"""Advanced StatefulSet claims against the emulator + simulator (upstream's getPodsForStatefulSet
and adoptOrphanRevisions): a set re-created over the pods and revisions its predecessor orphaned
adopts them instead of recreating; an orphan ``<set>-<n>`` that appears later wakes the set and
is adopted (then handled like any of its pods); a pod named after another set is never taken; a
pod relabelled out of the selector is released and its ordinal refilled once the name is free."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.kube.client import PatchType
from kruise.kube.resources import ADVANCED_STATEFULSETS, CONTROLLER_REVISIONS, PODS
from kruise.manager.controllers.statefulset import SETUP
from tests.integration.manager.test_statefulset_controller import (
    NS,
    events_of,
    get_sts,
    manifest,
    pods_of,
    settled,
)


@pytest.fixture
def controller_setups():
    return [SETUP]


def controller_uid(obj: dict[str, Any]) -> str | None:
    refs = obj["metadata"].get("ownerReferences") or []
    return next((r["uid"] for r in refs if r.get("controller")), None)


def orphan_pod(name: str, app: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": app}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
    }


async def revisions_of(cluster, app: str) -> dict[str, dict[str, Any]]:
    listing = await cluster.client.list(CONTROLLER_REVISIONS, NS, label_selector={"app": app})
    return {r["metadata"]["name"]: r for r in listing["items"]}


async def absent(cluster, name: str) -> bool:
    listing = await cluster.client.list(ADVANCED_STATEFULSETS, NS)
    return all(s["metadata"]["name"] != name for s in listing["items"])


async def test_recreated_set_adopts_orphaned_pods_and_revisions(kruise_cluster):
    cluster = kruise_cluster
    first = await cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=3))
    before = await settled(cluster, "web", 3)
    pods = await pods_of(cluster, "web")
    revisions = await revisions_of(cluster, "web")
    assert sorted(pods) == ["web-0", "web-1", "web-2"]
    assert list(revisions) == [before["status"]["currentRevision"]]
    # a pod named after another set but matching the selector: never this set's
    await cluster.client.create(PODS, orphan_pod("other-0"))

    # delete the set, keeping its dependents: the garbage collector drops their ownerReferences
    await cluster.client.delete(ADVANCED_STATEFULSETS, "web", NS, propagation_policy="Orphan")
    await cluster.until(lambda: absent(cluster, "web"), bool)
    await cluster.until(
        lambda: pods_of(cluster, "web"), lambda now: all(controller_uid(p) is None for p in now.values())
    )
    await cluster.until(
        lambda: revisions_of(cluster, "web"), lambda now: all(controller_uid(r) is None for r in now.values())
    )

    second = await cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=3))
    uid = second["metadata"]["uid"]
    assert uid != first["metadata"]["uid"]
    adopted = await cluster.until(
        lambda: pods_of(cluster, "web"),
        lambda now: all(controller_uid(now[n]) == uid for n in ("web-0", "web-1", "web-2")),
    )
    # the same pods (not recreated), with the set as controller
    assert {n: adopted[n]["metadata"]["uid"] for n in pods} == {
        n: p["metadata"]["uid"] for n, p in pods.items()
    }
    ref = next(r for r in adopted["web-0"]["metadata"]["ownerReferences"] if r.get("controller"))
    assert ref == {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "name": "web",
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert controller_uid(adopted["other-0"]) is None
    # the orphaned revision is adopted and reused: no new revision, same current revision
    now = await cluster.until(
        lambda: revisions_of(cluster, "web"), lambda now: all(controller_uid(r) == uid for r in now.values())
    )
    assert list(now) == list(revisions)
    after = await settled(cluster, "web", 3, currentReplicas=3, updatedReplicas=3)
    assert after["status"]["currentRevision"] == before["status"]["currentRevision"]
    assert after["status"]["updateRevision"] == before["status"]["updateRevision"]
    final = await pods_of(cluster, "web")
    assert {n: final[n]["metadata"]["uid"] for n in pods} == {
        n: p["metadata"]["uid"] for n, p in pods.items()
    }
    assert controller_uid(final["other-0"]) is None
    assert not [e for e in await events_of(cluster, "web") if e["reason"] == "SuccessfulCreate"][3:]


async def test_a_late_orphan_member_wakes_the_set_and_is_adopted(kruise_cluster):
    cluster = kruise_cluster
    created = await cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=1))
    uid = created["metadata"]["uid"]
    await settled(cluster, "web", 1)
    # web-5 is a member by name: the set adopts it, and as ordinal 5 is beyond replicas it is
    # condemned and deleted like any pod of the set (upstream deletes only claimed pods)
    orphan = await cluster.client.create(PODS, orphan_pod("web-5"))
    await cluster.until(lambda: pods_of(cluster, "web"), lambda now: "web-5" not in now)
    # the recorder writes events from a background sender after the delete returns: wait for it
    await cluster.until(
        lambda: events_of(cluster, "web"),
        lambda now: any(e["reason"] == "SuccessfulDelete" and "web-5" in e["message"] for e in now),
    )
    pods = await pods_of(cluster, "web")
    assert sorted(pods) == ["web-0"]
    assert controller_uid(pods["web-0"]) == uid
    assert orphan["metadata"]["uid"] not in {p["metadata"]["uid"] for p in pods.values()}


async def test_a_relabelled_pod_is_released_and_its_ordinal_refilled(kruise_cluster):
    cluster = kruise_cluster
    created = await cluster.client.create(ADVANCED_STATEFULSETS, manifest(replicas=2))
    uid = created["metadata"]["uid"]
    await settled(cluster, "web", 2)
    old = (await pods_of(cluster, "web"))["web-1"]

    await cluster.client.patch(
        PODS, "web-1", {"metadata": {"labels": {"app": "elsewhere"}}}, NS, patch_type=PatchType.MERGE
    )
    released = await cluster.until(
        lambda: cluster.client.get(PODS, "web-1", NS), lambda pod: controller_uid(pod) is None
    )
    assert not any(r["uid"] == uid for r in released["metadata"].get("ownerReferences") or [])
    # the released pod still holds the name: the create of web-1 fails (AlreadyExists) and says so
    failing = await cluster.until(
        lambda: get_sts(cluster, "web"),
        lambda sts: any(
            c.get("type") == "FailedCreatePod" for c in sts.get("status", {}).get("conditions", [])
        ),
    )
    assert failing["status"]["replicas"] == 1

    # once the name is free the set creates its own web-1
    await cluster.client.delete(PODS, "web-1", NS, grace_period_seconds=0)
    await settled(cluster, "web", 2)
    pods = await pods_of(cluster, "web")
    assert sorted(pods) == ["web-0", "web-1"]
    assert pods["web-1"]["metadata"]["uid"] != old["metadata"]["uid"]
    assert all(controller_uid(p) == uid for p in pods.values())
