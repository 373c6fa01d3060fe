"""CloneSet ownership against the emulator + simulator (upstream's ``ClaimOwnedObjects`` over the
pods listed by its uid): a pod relabelled out of the selector is released and replaced; an orphan
matching the selector is never adopted (upstream CloneSet has no adoption)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.kube.client import PatchType
from kruise.kube.resources import CLONESETS, PODS
from kruise.manager.controllers.cloneset import SETUP
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of, settled


@pytest.fixture
def controller_setups():
    return [SETUP]


def controller_uid(obj: dict[str, Any]) -> str | None:
    refs = obj["metadata"].get("ownerReferences") or []
    return next((r["uid"] for r in refs if r.get("controller")), None)


async def test_relabelled_pod_is_released_and_replaced_and_orphans_stay_orphans(kruise_cluster):
    cluster = kruise_cluster
    created = await cluster.client.create(CLONESETS, manifest(replicas=2))
    uid = created["metadata"]["uid"]
    await settled(cluster, "cs-demo", 2)
    orphan = await cluster.client.create(
        PODS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "stray", "namespace": NS, "labels": {"app": "cs-demo"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
        },
    )
    victim = next(p for p in await pods_of(cluster, "cs-demo") if controller_uid(p) == uid)
    name = victim["metadata"]["name"]

    await cluster.client.patch(
        PODS, name, {"metadata": {"labels": {"app": "elsewhere"}}}, NS, patch_type=PatchType.MERGE
    )
    released = await cluster.until(
        lambda: cluster.client.get(PODS, name, NS), lambda pod: controller_uid(pod) is None
    )
    assert not any(r["uid"] == uid for r in released["metadata"].get("ownerReferences") or [])
    assert released["metadata"]["uid"] == victim["metadata"]["uid"]  # released, not deleted

    def replaced(pods: list[dict[str, Any]]) -> bool:
        ours = [p for p in pods if controller_uid(p) == uid]
        return len(ours) == 2 and name not in {p["metadata"]["name"] for p in ours}

    await cluster.until(lambda: pods_of(cluster, "cs-demo"), replaced)
    await settled(cluster, "cs-demo", 2)
    stray = await cluster.client.get(PODS, "stray", NS)
    assert stray["metadata"]["uid"] == orphan["metadata"]["uid"]
    assert controller_uid(stray) is None
