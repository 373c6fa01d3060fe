"""Advanced DaemonSet against the emulator + simulator on a fake clock: a failed daemon pod is
replaced at once the first time and only after the node's backoff the second time; orphan pods and
ControllerRevisions that match the selector are adopted, and a pod relabelled out of the selector is
released and replaced."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kruise.control.common.nodeeligibility import target_node_name
from kruise.kube.client import PatchType
from kruise.kube.clock import FakeClock
from kruise.kube.resources import ADVANCED_DAEMONSETS, CONTROLLER_REVISIONS, NODES, PODS
from kruise.manager.controllers.daemonset import SETUP
from tests.integration.manager.test_daemonset_controller import (
    NAME,
    NS,
    event_messages,
    live_pods,
    manifest,
    settled,
)


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def manager_clock():
    return FakeClock(wall_start=datetime.now(UTC))


async def fail(cluster, pod: dict[str, Any]) -> None:
    """What a kubelet reports for a pod it rejected."""
    await cluster.client.patch(
        PODS,
        pod["metadata"]["name"],
        {
            "status": {
                "phase": "Failed",
                "reason": "NodeAffinity",
                "message": "rejected",
                "conditions": [{"type": "Ready", "status": "False"}],
            }
        },
        NS,
        subresource="status",
        patch_type=PatchType.STRATEGIC,
    )


async def failed_events(cluster) -> list[str]:
    return [m for r, m in await event_messages(cluster) if r == "FailedDaemonPod"]


def controller_uid(obj: dict[str, Any]) -> str | None:
    refs = obj["metadata"].get("ownerReferences") or []
    return next((r["uid"] for r in refs if r.get("controller")), None)


def ghost_node() -> dict[str, Any]:
    """A Node no simulated kubelet serves: its daemon pod stays unscheduled, so the Failed phase a
    test writes is not overwritten (the simulated kubelets never fail a restartPolicy Always pod)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "ghost", "labels": {"kubernetes.io/hostname": "ghost"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


async def ghost_pods(cluster) -> list[dict[str, Any]]:
    return [p for p in await live_pods(cluster) if target_node_name(p) == "ghost"]


@pytest.mark.parametrize("simulator_nodes", [1])
async def test_failed_pod_is_recreated_then_held_by_the_node_backoff(kruise_cluster, manager_clock):
    cluster = kruise_cluster
    await cluster.client.create(NODES, ghost_node())
    await cluster.client.create(ADVANCED_DAEMONSETS, manifest())
    key = f"{NS}/{NAME}"
    queue = cluster.controllers[0].queue
    (first,) = await cluster.until(lambda: ghost_pods(cluster), lambda pods: len(pods) == 1)
    # the backoff key holds status.observedGeneration (upstream too): let it reach 1 first, or the
    # second failure would be judged under a fresh key
    await cluster.until(
        lambda: cluster.client.get(ADVANCED_DAEMONSETS, NAME, NS),
        lambda ds: ds.get("status", {}).get("observedGeneration") == 1,
    )

    # first failure on the node: deleted at once, with the Warning event, and replaced
    await fail(cluster, first)
    (second,) = await cluster.until(
        lambda: ghost_pods(cluster),
        lambda pods: len(pods) == 1 and pods[0]["metadata"]["uid"] != first["metadata"]["uid"],
    )
    assert await cluster.until(lambda: failed_events(cluster), lambda m: len(m) == 1) == [
        f"Found failed daemon pod {NS}/{first['metadata']['name']} on node ghost, will try to kill it"
    ]

    # second failure within the 1 s backoff (the clock has not moved): the pod stays and the
    # DaemonSet is parked until exactly one backoff (1 s) from now on the fake clock
    failed_at = manager_clock.now()
    await fail(cluster, second)
    await cluster.until(lambda: _async(queue.ready_at(key)), lambda at: at == failed_at + 1.0)
    pods = await ghost_pods(cluster)
    assert [p["metadata"]["uid"] for p in pods] == [second["metadata"]["uid"]]
    assert pods[0]["status"]["phase"] == "Failed"
    assert len(await failed_events(cluster)) == 1

    # at the backoff moment the pass runs again, deletes it and the node gets a new pod
    manager_clock.step(1.0)
    (third,) = await cluster.until(
        lambda: ghost_pods(cluster),
        lambda pods: len(pods) == 1 and pods[0]["metadata"]["uid"] != second["metadata"]["uid"],
    )
    assert third["status"].get("phase") != "Failed"
    messages = await cluster.until(lambda: failed_events(cluster), lambda m: len(m) == 2)
    assert messages[1].startswith(f"Found failed daemon pod {NS}/{second['metadata']['name']} ")

    # third failure right away: held for the doubled delay, 2 s. The pass may also park the
    # DaemonSet earlier, for a paced status write (the delete and the create moved the counters
    # within one second); that wake must neither delete the pod nor move its deadline to 2 s from
    # then: the pod goes at exactly T + 2
    held_from = manager_clock.now()
    await fail(cluster, third)
    pods_cache = cluster.context.informers.informer(PODS)
    await cluster.until(
        lambda: _async(pods_cache.get(f"{NS}/{third['metadata']['name']}")),
        lambda pod: pod is not None and pod["status"].get("phase") == "Failed",
    )
    await cluster.until(lambda: _async(idle_and_parked(queue, key)), lambda at: at is not None)
    assert idle_and_parked(queue, key) <= held_from + 2.0
    manager_clock.step(1.0)
    await cluster.until(lambda: _async(idle_and_parked(queue, key)), lambda at: at == held_from + 2.0)
    assert [p["metadata"]["uid"] for p in await ghost_pods(cluster)] == [third["metadata"]["uid"]]
    assert len(await failed_events(cluster)) == 2

    manager_clock.step(1.0)
    await cluster.until(
        lambda: ghost_pods(cluster),
        lambda pods: len(pods) == 1 and pods[0]["metadata"]["uid"] != third["metadata"]["uid"],
    )
    messages = await cluster.until(lambda: failed_events(cluster), lambda m: len(m) == 3)
    assert messages[2].startswith(f"Found failed daemon pod {NS}/{third['metadata']['name']} ")


def idle_and_parked(queue: Any, key: str) -> float | None:
    """When ``key`` is parked until, once no pass for it is queued or running; else None."""
    if key in queue.processing() or len(queue):
        return None
    return queue.ready_at(key)


async def _async(value: Any) -> Any:
    return value


def orphan_pod(node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"orphan-{node}", "namespace": NS, "labels": {"app": NAME}},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "nginx:alpine"}]},
    }


async def test_orphans_are_adopted_and_a_relabelled_pod_is_released(kruise_cluster):
    cluster = kruise_cluster
    orphan = await cluster.client.create(PODS, orphan_pod("node-1"))
    stray_revision = await cluster.client.create(
        CONTROLLER_REVISIONS,
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "stray", "namespace": NS, "labels": {"app": NAME}},
            "data": {"spec": {"template": {"$patch": "replace"}}},
            "revision": 1,
        },
    )
    # the controller's cache must hold the orphans before the DaemonSet's first pass, or that pass
    # would create a pod of its own on node-1 (and the younger-named one would then be pruned)
    pods_cache = cluster.context.informers.informer(PODS)
    revisions_cache = cluster.context.informers.informer(CONTROLLER_REVISIONS)
    await cluster.until(
        lambda: _async((pods_cache.get(f"{NS}/orphan-node-1"), revisions_cache.get(f"{NS}/stray"))),
        lambda cached: all(cached),
    )
    # OnDelete: the adopted pod carries no revision hash, so a RollingUpdate would replace it
    ds = await cluster.client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy={"type": "OnDelete"}))
    uid = ds["metadata"]["uid"]

    adopted = await cluster.until(
        lambda: cluster.client.get(PODS, orphan["metadata"]["name"], NS),
        lambda pod: controller_uid(pod) == uid,
    )
    ref = next(r for r in adopted["metadata"]["ownerReferences"] if r.get("controller"))
    assert ref == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "name": NAME,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    await cluster.until(
        lambda: cluster.client.get(CONTROLLER_REVISIONS, stray_revision["metadata"]["name"], NS),
        lambda rev: controller_uid(rev) == uid,
    )
    await cluster.until(
        lambda: cluster.client.get(ADVANCED_DAEMONSETS, NAME, NS),
        lambda ds: (
            ds.get("status", {}).get("currentNumberScheduled") == 3
            and ds["status"].get("updatedNumberScheduled") == 2
        ),
    )
    pods = await live_pods(cluster)
    on_node_1 = [p for p in pods if p["spec"].get("nodeName") == "node-1"]
    assert [p["metadata"]["name"] for p in on_node_1] == ["orphan-node-1"]  # no second pod there

    # relabelled out of the selector: released, and node-1 gets a pod of its own
    await cluster.client.patch(
        PODS,
        "orphan-node-1",
        {"metadata": {"labels": {"app": "elsewhere"}}},
        NS,
        patch_type=PatchType.MERGE,
    )
    released = await cluster.until(
        lambda: cluster.client.get(PODS, "orphan-node-1", NS), lambda pod: controller_uid(pod) is None
    )
    assert not any(r["uid"] == uid for r in released["metadata"].get("ownerReferences") or [])
    await settled(cluster, 3)
    pods = await live_pods(cluster)
    assert len([p for p in pods if p["spec"].get("nodeName") == "node-1"]) == 1
    assert all(controller_uid(p) == uid for p in pods)
