"""Advanced StatefulSet and InPlaceWorkloadVerticalScaling, through the emulator.

With the gate on, a cpu/memory-only template change that keeps the QoS class resizes the pods in
place: per pod one `pods/resize` patch, one object write (revision label, state `Updating`) and,
once kubelet reports the new resources, the move back to `Normal` — the pod never leaves service.
The test stops the simulator's kubelets and reports container status resources itself (see
test_cloneset_resize.py). With the gate off the same change recreates the pods.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.client import Client
from kruise.kube.resources import ADVANCED_STATEFULSETS
from kruise.manager.controllers import podreadiness, statefulset
from tests.integration.manager.test_cloneset_resize import (
    BURSTABLE,
    BURSTABLE_BIGGER,
    GATE,
    report_applied_resources,
)
from tests.integration.manager.test_statefulset_controller import get_sts, manifest, pods_of, settled
from tests.integration.manager.writelog import write_log  # noqa: F401  (fixture)

PODS_N = 3
NAME = "web"


@pytest.fixture
def controller_setups():
    return [statefulset.SETUP, podreadiness.SETUP]


@pytest.fixture
def feature_gates(request):
    return FeatureGates({GATE: request.param}, env={})


async def running(kruise_cluster) -> dict[str, dict[str, Any]]:
    body = manifest(
        NAME,
        replicas=PODS_N,
        podManagementPolicy="Parallel",
        updateStrategy={"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%"}},
    )
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = copy.deepcopy(BURSTABLE)
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    await settled(kruise_cluster, NAME, PODS_N, availableReplicas=PODS_N)
    return await pods_of(kruise_cluster, NAME)


async def set_resources(kruise_cluster, resources: dict[str, Any]) -> str:
    body = copy.deepcopy(await get_sts(kruise_cluster, NAME))
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = copy.deepcopy(resources)
    written = await kruise_cluster.client.update(ADVANCED_STATEFULSETS, body)
    sts = await kruise_cluster.until(
        lambda: get_sts(kruise_cluster, NAME),
        lambda s: (s.get("status") or {}).get("observedGeneration") == written["metadata"]["generation"],
    )
    return sts["status"]["updateRevision"]


@pytest.mark.parametrize("feature_gates", [True], indirect=True)
async def test_resize_keeps_pods_and_costs_three_writes_per_pod(kruise_cluster, write_log, emulator):  # noqa: F811
    before = await running(kruise_cluster)
    for node_kubelet in kruise_cluster.simulator.kubelets.values():
        await node_kubelet.stop()
    kubelet = await Client.from_kubeconfig(emulator.kubeconfig)
    try:
        for pod in before.values():
            await report_applied_resources(kubelet, pod)
        await kruise_cluster.until(
            lambda: pods_of(kruise_cluster, NAME),
            lambda pods: all("resources" in p["status"]["containerStatuses"][0] for p in pods.values()),
        )
        write_log.clear()
        revision = await set_resources(kruise_cluster, BURSTABLE_BIGGER)

        def resized(pods: dict[str, dict[str, Any]]) -> bool:
            return len(pods) == PODS_N and all(
                p["metadata"]["labels"].get("controller-revision-hash") == revision
                and p["spec"]["containers"][0]["resources"] == BURSTABLE_BIGGER
                for p in pods.values()
            )

        pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), resized)
        assert {n: p["metadata"]["uid"] for n, p in pods.items()} == {
            n: p["metadata"]["uid"] for n, p in before.items()
        }
        for pod in pods.values():
            conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
            assert conditions["InPlaceUpdateReady"] == conditions["Ready"] == "True"
            await report_applied_resources(kubelet, pod)
    finally:
        await kubelet.close()

    def normal(pods: dict[str, dict[str, Any]]) -> bool:
        return all(
            p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Normal" for p in pods.values()
        )

    await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), normal)
    await settled(kruise_cluster, NAME, PODS_N, updatedReadyReplicas=PODS_N)
    expected = (("PATCH", "pods/resize"), ("PUT", "pods"), ("PATCH", "pods"))
    sequences = {
        name: tuple(w for w in (write_log.writes) if w[2] == name and w[1].startswith("pods"))
        for name in before
    }
    assert {name: tuple((m, r) for m, r, _ in seq) for name, seq in sequences.items()} == {
        name: expected for name in before
    }


@pytest.mark.parametrize("feature_gates", [False], indirect=True)
async def test_gate_off_recreates_on_resource_change(kruise_cluster, write_log):  # noqa: F811
    before = await running(kruise_cluster)
    revision = await set_resources(kruise_cluster, BURSTABLE_BIGGER)
    old_uids = {p["metadata"]["uid"] for p in before.values()}

    def replaced(pods: dict[str, dict[str, Any]]) -> bool:
        return len(pods) == PODS_N and all(
            p["metadata"]["uid"] not in old_uids
            and p["metadata"]["labels"].get("controller-revision-hash") == revision
            for p in pods.values()
        )

    await kruise_cluster.until(lambda: pods_of(kruise_cluster, NAME), replaced, timeout=60)
    assert write_log.count("PATCH", "pods/resize") == 0
