"""CloneSet and InPlaceWorkloadVerticalScaling against an apiserver that reports v1.31.4.

Below 1.32 there is no `pods/resize` (the emulator answers 404, as kube-apiserver 1.31 does) and
cpu/memory change in the pod object update itself, as upstream's ShouldUpdateResourceByResize says.
With the gate on, a cpu change in the template rolls every pod in place: the same pods (UIDs kept,
no restart) get the new resources in one PUT, the simulator's kubelet applies them (status resources
follow the spec) and the pods go back to `Normal` — no `pods/resize` request at all.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.kube.client import PatchType
from kruise.kube.errors import NotFound
from kruise.kube.resources import PODS
from tests.integration.manager.test_cloneset_controller import pods_of, settled
from tests.integration.manager.test_cloneset_resize import (  # noqa: F401  (fixtures)
    BURSTABLE_BIGGER,
    NAME,
    NS,
    PODS_N,
    controller_setups,
    feature_gates,
    running,
    set_resources,
)
from tests.integration.manager.writelog import write_log  # noqa: F401  (fixture)


@pytest.fixture
def emulator(emulator):
    emulator.server.git_version = "v1.31.4"
    return emulator


def _applied(pod: dict[str, Any]) -> bool:
    """The kubelet runs what the spec asks: container status resources equal the spec's."""
    statuses = {s["name"]: s for s in pod["status"].get("containerStatuses") or []}
    return all(
        (statuses.get(c["name"]) or {}).get("resources") == c.get("resources")
        for c in pod["spec"]["containers"]
    )


@pytest.mark.parametrize("feature_gates", [True], indirect=True)
async def test_resize_through_the_pod_update_below_1_32(kruise_cluster, write_log):  # noqa: F811
    assert kruise_cluster.context.resize_subresource is False
    before = await running(kruise_cluster)
    write_log.clear()
    revision = await set_resources(kruise_cluster, BURSTABLE_BIGGER)

    def resized(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == PODS_N and all(
            p["metadata"]["labels"].get("controller-revision-hash") == revision
            and p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Normal"
            and p["spec"]["containers"][0]["resources"] == BURSTABLE_BIGGER
            and _applied(p)
            for p in pods
        )

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), resized)
    await settled(kruise_cluster, NAME, PODS_N, updatedReadyReplicas=PODS_N)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == {
        name: p["metadata"]["uid"] for name, p in before.items()
    }
    for pod in pods:
        status = pod["status"]["containerStatuses"][0]
        assert status["restartCount"] == 0
        assert status["resources"] == BURSTABLE_BIGGER
    assert write_log.counts() == {
        ("PUT", "pods"): PODS_N,  # new cpu/memory + revision labels + in-place state + Updating
        ("PATCH", "pods"): PODS_N,  # Updating -> Normal once the kubelet applied them
    }
    with pytest.raises(NotFound):
        await kruise_cluster.client.patch(
            PODS,
            pods[0]["metadata"]["name"],
            {"spec": {"containers": [{"name": "nginx", "resources": BURSTABLE_BIGGER}]}},
            NS,
            patch_type=PatchType.STRATEGIC,
            subresource="resize",
        )
