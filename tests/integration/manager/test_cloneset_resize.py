"""CloneSet and InPlaceWorkloadVerticalScaling, through the emulator: in-place cpu/memory resize.

With the gate on, a template change of cpu/memory requests and limits that keeps the pod's QoS
class is applied in place: one `pods/resize` patch, one object write (revision labels, state
`Updating`), and — once the containers' status resources equal the spec — the move back to
`Normal`. The pods keep serving meanwhile (no `InPlaceUpdateReady=False`). With the gate off, or
when the QoS class changes, the pods are recreated.

The resize test stops the simulator's kubelets once the pods run and plays the kubelet itself, so the
moment a resize completes is the test's: it writes each container's applied resources into
`status.containerStatuses[].resources` (from its own client, outside the counts). The simulator's own
resize actuation is exercised by e2e/cloneset/test_cloneset_resize_e2e.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.client import Client
from kruise.kube.errors import Conflict
from kruise.kube.resources import CLONESETS, PODS
from kruise.manager.controllers import cloneset, podreadiness
from tests.integration.manager.test_cloneset_controller import get_cs, manifest, pods_of, settled
from tests.integration.manager.writelog import WriteLog, write_log  # noqa: F401  (fixture)

NS = "default"
NAME = "cs-resize"
PODS_N = 3
GATE = "InPlaceWorkloadVerticalScaling"

BURSTABLE = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}
BURSTABLE_BIGGER = {
    "requests": {"cpu": "150m", "memory": "96Mi"},
    "limits": {"cpu": "300m", "memory": "192Mi"},
}
GUARANTEED = {"requests": {"cpu": "200m", "memory": "128Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP, podreadiness.SETUP]


@pytest.fixture
def feature_gates(request):
    return FeatureGates({GATE: request.param}, env={})


def resize_manifest() -> dict[str, Any]:
    body = manifest(
        NAME, replicas=PODS_N, updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": "100%"}
    )
    template = body["spec"]["template"]["spec"]
    template["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    template["containers"][0]["resources"] = copy.deepcopy(BURSTABLE)
    return body


async def running(kruise_cluster) -> dict[str, dict[str, Any]]:
    """Create the CloneSet and wait for every pod Normal; pod name -> pod."""
    await kruise_cluster.client.create(CLONESETS, resize_manifest())
    await settled(kruise_cluster, NAME, PODS_N, availableReplicas=PODS_N)

    def normal(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == PODS_N and all(
            p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Normal" for p in pods
        )

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), normal)
    return {p["metadata"]["name"]: p for p in pods}


async def set_resources(kruise_cluster, resources: dict[str, Any]) -> str:
    """Change the template's container resources; returns the new update revision."""
    body = copy.deepcopy(await get_cs(kruise_cluster, NAME))
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = copy.deepcopy(resources)
    written = await kruise_cluster.client.update(CLONESETS, body)
    cs = await kruise_cluster.until(
        lambda: get_cs(kruise_cluster, NAME),
        lambda c: (c.get("status") or {}).get("observedGeneration") == written["metadata"]["generation"],
    )
    return cs["status"]["updateRevision"]


async def report_applied_resources(client: Client, pod: dict[str, Any]) -> None:
    """What kubelet does after a resize: container status resources = the spec's."""
    meta = pod["metadata"]
    for _ in range(5):
        current = await client.get(PODS, meta["name"], meta["namespace"])
        spec = {c["name"]: c for c in current["spec"]["containers"]}
        for status in current["status"]["containerStatuses"]:
            status["resources"] = copy.deepcopy(spec[status["name"]].get("resources") or {})
        try:
            await client.update_status(PODS, current)
            return
        except Conflict:
            continue
    raise AssertionError(f"could not write the status resources of {meta['name']}")


@pytest.mark.parametrize("feature_gates", [True], indirect=True)
async def test_resize_keeps_pods_and_costs_three_writes_per_pod(kruise_cluster, write_log, emulator):  # noqa: F811
    before = await running(kruise_cluster)
    for node_kubelet in kruise_cluster.simulator.kubelets.values():
        await node_kubelet.stop()  # from here on the test is the kubelet
    kubelet = await Client.from_kubeconfig(emulator.kubeconfig)
    try:
        # a 1.33 kubelet reports what it runs; without it the apiserver refuses any resize
        for pod in before.values():
            await report_applied_resources(kubelet, pod)
        await kruise_cluster.until(
            lambda: pods_of(kruise_cluster, NAME),
            lambda pods: all("resources" in p["status"]["containerStatuses"][0] for p in pods),
        )
        write_log.clear()
        await resize_in_place(kruise_cluster, kubelet, before, write_log)
    finally:
        await kubelet.close()


async def resize_in_place(kruise_cluster, kubelet: Client, before: dict[str, Any], log: WriteLog) -> None:

    revision = await set_resources(kruise_cluster, BURSTABLE_BIGGER)

    def resized(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == PODS_N and all(
            p["metadata"]["labels"].get("controller-revision-hash") == revision
            and p["spec"]["containers"][0]["resources"] == BURSTABLE_BIGGER
            for p in pods
        )

    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), resized)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == {
        name: p["metadata"]["uid"] for name, p in before.items()
    }
    # not complete before kubelet reports the new resources; the pods kept serving
    for pod in pods:
        assert pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == "Updating"
        conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert conditions["InPlaceUpdateReady"] == conditions["Ready"] == "True"

    for pod in pods:
        await report_applied_resources(kubelet, pod)

    def normal(pods: list[dict[str, Any]]) -> bool:
        return all(p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Normal" for p in pods)

    await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), normal)
    await settled(kruise_cluster, NAME, PODS_N, updatedReadyReplicas=PODS_N)
    assert log.counts() == {
        ("PATCH", "pods/resize"): PODS_N,  # the new cpu/memory, before the object write
        ("PUT", "pods"): PODS_N,  # revision labels + in-place state + state Updating
        ("PATCH", "pods"): PODS_N,  # Updating -> Normal once the status resources match
    }


async def recreated(kruise_cluster, before: dict[str, dict[str, Any]], revision: str) -> None:
    old_uids = {p["metadata"]["uid"] for p in before.values()}

    def replaced(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == PODS_N and all(
            p["metadata"]["uid"] not in old_uids
            and p["metadata"]["labels"].get("controller-revision-hash") == revision
            for p in pods
        )

    await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), replaced)


@pytest.mark.parametrize("feature_gates", [False], indirect=True)
async def test_gate_off_recreates_on_resource_change(kruise_cluster, write_log):  # noqa: F811
    before = await running(kruise_cluster)
    revision = await set_resources(kruise_cluster, BURSTABLE_BIGGER)
    await recreated(kruise_cluster, before, revision)
    assert write_log.counts()[("PATCH", "pods/resize")] == 0


@pytest.mark.parametrize("feature_gates", [True], indirect=True)
async def test_qos_change_recreates_even_with_the_gate(kruise_cluster, write_log):  # noqa: F811
    before = await running(kruise_cluster)
    revision = await set_resources(kruise_cluster, GUARANTEED)
    await recreated(kruise_cluster, before, revision)
    assert write_log.counts()[("PATCH", "pods/resize")] == 0
