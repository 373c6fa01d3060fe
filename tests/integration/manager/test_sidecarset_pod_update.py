"""SidecarSet and a pod UPDATE, as upstream: a CloneSet in-place update of the app container leaves the
injected sidecar exactly as it is.

Upstream's pod mutating webhook is registered for CREATE only, and even its handler's UPDATE branch
stops before touching anything (the community SidecarControl's `IsPodAvailabilityChanged` is always
false). The CloneSet's in-place write changes only the containers its template diff names, so the sidecar
keeps its image, its restart count and the pod's `kruise.io/sidecarset-hash` records — also when the
SidecarSet has moved on meanwhile (a pod is re-injected only when recreated). Bringing the sidecar up to
date stays the SidecarSet controller's job, which then works on the CloneSet's pods like on any other.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.kube.client import PatchType
from kruise.kube.resources import CLONESETS, SIDECARSETS
from kruise.manager.controllers import cloneset, sidecarset
from kruise.webhook.main import WebhookProcess
from tests.integration.manager.test_cloneset_controller import NS, get_cs, manifest, pods_of

HASH = "kruise.io/sidecarset-hash"
HASH_WITHOUT_IMAGE = "kruise.io/sidecarset-hash-without-image"


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP, sidecarset.SETUP]


def mesh(image: str, update_type: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": "mesh"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "updateStrategy": {"type": update_type},
            "containers": [{"name": "sidecar1", "image": image, "command": ["sleep", "999d"],
                            "imagePullPolicy": "IfNotPresent"}],
        },
    }  # fmt: skip


def container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pod["spec"]["containers"] if c["name"] == name)


def status_of(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in pod["status"]["containerStatuses"] if s["name"] == name)


async def test_cloneset_in_place_update_keeps_the_injected_sidecar(kruise_cluster, webhook):
    client = kruise_cluster.client
    await client.create(SIDECARSETS, mesh("busybox:1.34", "NotUpdate"))
    await kruise_cluster.until(lambda: _cached(webhook, "mesh"), lambda s: s is not None)
    await client.create(
        CLONESETS,
        manifest("web", replicas=2, image="nginx:1.25", updateStrategy={"type": "InPlaceIfPossible"}),
        NS,
    )

    async def sidecarset_status() -> dict[str, Any]:
        return (await client.get(SIDECARSETS, "mesh")).get("status") or {}

    await kruise_cluster.until(
        sidecarset_status, lambda s: s.get("matchedPods") == 2 and s.get("updatedReadyPods") == 2, timeout=60
    )
    before = {p["metadata"]["name"]: p for p in await pods_of(kruise_cluster, "web")}
    for p in before.values():
        # BeforeAppContainer (the default): the sidecar is containers[0] where the template has the app,
        # so the CloneSet's `/spec/containers/0/image` diff must reach the pod by container name
        assert [c["name"] for c in p["spec"]["containers"]] == ["sidecar1", "nginx"]
        assert container(p, "sidecar1")["image"] == "busybox:1.34"

    # the SidecarSet moves on, but NotUpdate: running pods keep busybox:1.34
    await client.patch(
        SIDECARSETS, "mesh", [{"op": "replace", "path": "/spec/containers/0/image", "value": "busybox:1.35"}],
        patch_type=PatchType.JSON,
    )  # fmt: skip
    generation = (await client.get(SIDECARSETS, "mesh"))["metadata"]["generation"]
    await kruise_cluster.until(
        sidecarset_status, lambda s: s.get("observedGeneration") == generation and s.get("updatedPods") == 0
    )
    await kruise_cluster.until(
        lambda: _cached(webhook, "mesh"), lambda s: s and s["metadata"]["generation"] == generation
    )

    # the CloneSet writes its new app image into the pods in place: a pod UPDATE
    await client.patch(
        CLONESETS, "web",
        [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.26"}],
        NS, patch_type=PatchType.JSON,
    )  # fmt: skip

    def rolled(cs: dict[str, Any]) -> bool:
        status = cs.get("status") or {}
        return (
            status.get("observedGeneration") == cs["metadata"]["generation"]
            and status.get("updatedReplicas") == 2
            and status.get("updatedReadyReplicas") == 2
        )

    await kruise_cluster.until(lambda: get_cs(kruise_cluster, "web"), rolled, timeout=60)
    after = {p["metadata"]["name"]: p for p in await pods_of(kruise_cluster, "web")}
    assert after.keys() == before.keys()
    for name, old in before.items():
        now = after[name]
        assert now["metadata"]["uid"] == old["metadata"]["uid"]
        assert container(now, "nginx")["image"] == "nginx:1.26"
        assert status_of(now, "nginx")["restartCount"] == 1
        # the sidecar is untouched: not re-injected at the SidecarSet's new version
        assert container(now, "sidecar1") == container(old, "sidecar1")
        assert status_of(now, "sidecar1")["restartCount"] == 0
        for key in (HASH, HASH_WITHOUT_IMAGE, "kruise.io/sidecarset-injected-list"):
            assert now["metadata"]["annotations"][key] == old["metadata"]["annotations"][key]
        assert "kruise.io/sidecarset-inplace-update-state" not in now["metadata"]["annotations"]
    held = await sidecarset_status()
    assert held["matchedPods"] == 2 and held["updatedPods"] == 0

    # the SidecarSet controller brings the sidecars up to date in the same pods, the CloneSet keeps them
    await client.patch(SIDECARSETS, "mesh", {"spec": {"updateStrategy": {"type": "RollingUpdate"}}})
    await kruise_cluster.until(
        sidecarset_status, lambda s: s.get("updatedPods") == 2 and s.get("updatedReadyPods") == 2, timeout=60
    )
    final = {p["metadata"]["name"]: p for p in await pods_of(kruise_cluster, "web")}
    assert final.keys() == before.keys()
    for name, old in before.items():
        now = final[name]
        assert now["metadata"]["uid"] == old["metadata"]["uid"]
        assert container(now, "sidecar1")["image"] == "busybox:1.35"
        assert container(now, "nginx")["image"] == "nginx:1.26"
        assert status_of(now, "sidecar1")["restartCount"] == 1
        assert status_of(now, "nginx")["restartCount"] == 1
    assert rolled(await get_cs(kruise_cluster, "web"))


def _cached(webhook: WebhookProcess, name: str):
    async def fetch():
        return webhook.sidecarsets.get(name)

    return fetch()
