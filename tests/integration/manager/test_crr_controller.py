"""ContainerRecreateRequest controller: completion rules, unready acquisition, TTL (the daemon's part
is played by status patches here; tests/integration/daemon covers the daemon)."""

from __future__ import annotations

import pytest

from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS
from kruise.manager.controllers.containerrecreaterequest import SETUP

NS = "default"


@pytest.fixture
def controller_setups():
    return [SETUP]


def ready(pod):
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


async def a_pod(cluster, name, gate=False):
    spec = {"containers": [{"name": "app", "image": "nginx:alpine"}]}
    if gate:
        spec["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    await cluster.client.create(
        PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}
    )
    if gate:  # what the pod-readiness controller does
        await cluster.client.patch(
            PODS, name, {"status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]}}, NS,
            patch_type="application/strategic-merge-patch+json", subresource="status",
        )  # fmt: skip
    return await cluster.until(lambda: cluster.client.get(PODS, name, NS), ready)


def request(pod, name, **spec):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {
                "crr.apps.kruise.io/pod-uid": pod["metadata"]["uid"],
                "crr.apps.kruise.io/active": "true",
            },
        },
        "spec": {"podName": pod["metadata"]["name"], "containers": [{"name": "app"}], **spec},
    }


async def get(cluster, name):
    return await cluster.client.get(CONTAINER_RECREATE_REQUESTS, name, NS)


async def test_pod_gone_completes_and_ttl_deletes(kruise_cluster):
    pod = await a_pod(kruise_cluster, "gone")
    await kruise_cluster.client.create(
        CONTAINER_RECREATE_REQUESTS, request(pod, "r1", ttlSecondsAfterFinished=3)
    )
    await kruise_cluster.client.delete(PODS, "gone", NS, grace_period_seconds=0)
    done = await kruise_cluster.until(
        lambda: get(kruise_cluster, "r1"), lambda c: c.get("status", {}).get("completionTime")
    )
    assert done["status"]["message"] == "pod has gone" and done["status"]["phase"] == "Completed"

    async def names():
        return [
            c["metadata"]["name"]
            for c in (await kruise_cluster.client.list(CONTAINER_RECREATE_REQUESTS, NS))["items"]
        ]

    assert await kruise_cluster.until(names, lambda n: "r1" not in n) == []


async def test_active_deadline_and_label_release(kruise_cluster):
    pod = await a_pod(kruise_cluster, "slow")
    await kruise_cluster.client.create(
        CONTAINER_RECREATE_REQUESTS, request(pod, "r2", activeDeadlineSeconds=1)
    )
    done = await kruise_cluster.until(
        lambda: get(kruise_cluster, "r2"),
        lambda c: "crr.apps.kruise.io/active" not in c["metadata"].get("labels", {}),
    )
    assert done["status"]["message"] == "recreating has exceeded the activeDeadlineSeconds"


async def test_unready_grace_takes_the_pod_out_of_service_first(kruise_cluster):
    pod = await a_pod(kruise_cluster, "served", gate=True)
    await kruise_cluster.client.create(
        CONTAINER_RECREATE_REQUESTS, request(pod, "r3", strategy={"unreadyGracePeriodSeconds": 5})
    )
    await kruise_cluster.client.patch(
        CONTAINER_RECREATE_REQUESTS, "r3", {"status": {"phase": "Recreating"}}, NS, subresource="status"
    )  # what kruise-daemon does when it picks the request up
    acquired = await kruise_cluster.until(
        lambda: get(kruise_cluster, "r3"),
        lambda c: "crr.apps.kruise.io/unready-acquired" in c["metadata"].get("annotations", {}),
    )
    assert "crr.apps.kruise.io/unready-acquired" in acquired["metadata"]["finalizers"]
    out = await kruise_cluster.client.get(PODS, "served", NS)
    condition = next(c for c in out["status"]["conditions"] if c["type"] == "KruisePodReady")
    assert condition["status"] == "False" and "default/r3" in condition["message"]

    await kruise_cluster.client.patch(
        CONTAINER_RECREATE_REQUESTS, "r3",
        {"status": {"phase": "Completed", "completionTime": "2026-01-01T00:00:00Z"}}, NS,
        subresource="status",
    )  # fmt: skip
    released = await kruise_cluster.until(
        lambda: get(kruise_cluster, "r3"), lambda c: not c["metadata"].get("finalizers")
    )
    assert released["metadata"]["name"] == "r3"
    back = await kruise_cluster.client.get(PODS, "served", NS)
    assert next(c for c in back["status"]["conditions"] if c["type"] == "KruisePodReady")["status"] == "True"
