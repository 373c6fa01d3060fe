"""SidecarSet controller: a new sidecar image reaches injected pods in place (seed 002's example)."""

from __future__ import annotations

import copy

import pytest

from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.control.sidecarset.injection import inject
from kruise.kube.resources import PODS, SIDECARSETS
from kruise.manager.controllers.sidecarset import SETUP

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


def pod(name, sidecar_set):
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "nginx"}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.7.9"}]},
    }
    assert inject(body, [sidecar_set])  # what kruise-webhook does on pod CREATE
    return body


def statuses(p):
    return {s["name"]: s for s in p["status"]["containerStatuses"]}


async def test_new_sidecar_image_is_rolled_in_place(kruise_cluster):
    client = kruise_cluster.client
    created = await client.create(SIDECARSETS, sidecarset())
    for name in ("test-pod-1", "test-pod-2"):
        await client.create(PODS, pod(name, created))

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


async def test_not_update_and_partition_hold_pods_back(kruise_cluster):
    client = kruise_cluster.client
    created = await client.create(SIDECARSETS, sidecarset(partition=1))
    for name in ("p-1", "p-2"):
        await client.create(PODS, pod(name, created))

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
