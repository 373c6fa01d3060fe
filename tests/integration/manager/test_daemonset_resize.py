"""Advanced DaemonSet and InPlaceWorkloadVerticalScaling, through the emulator.

Upstream's Advanced DaemonSet runs the shared in-place code, so with the gate on a cpu/memory-only
change that keeps the QoS class resizes each pod in place: one `pods/resize` patch and one object
write (revision label); the pod stays in service and — having no lifecycle label — needs no further
write once kubelet reports the new resources. The test stops the simulator's kubelets and reports
container status resources itself (see test_cloneset_resize.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.client import Client
from kruise.kube.resources import ADVANCED_DAEMONSETS
from kruise.manager.controllers import daemonset, podreadiness
from tests.integration.manager.test_cloneset_resize import (
    BURSTABLE,
    BURSTABLE_BIGGER,
    GATE,
    report_applied_resources,
)
from tests.integration.manager.test_daemonset_controller import get_ds, live_pods, manifest, settled
from tests.integration.manager.writelog import write_log  # noqa: F401  (fixture)

NODES = 3


@pytest.fixture
def controller_setups():
    return [daemonset.SETUP, podreadiness.SETUP]


@pytest.fixture
def feature_gates():
    return FeatureGates({GATE: True}, env={})


async def test_resize_keeps_pods_and_costs_two_writes_per_pod(kruise_cluster, write_log, emulator):  # noqa: F811
    rolling = {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "100%"}
    body = manifest(updateStrategy={"type": "RollingUpdate", "rollingUpdate": rolling})
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = copy.deepcopy(BURSTABLE)
    await kruise_cluster.client.create(ADVANCED_DAEMONSETS, body)
    await settled(kruise_cluster, NODES)
    before = {p["metadata"]["name"]: p for p in await live_pods(kruise_cluster)}
    for node_kubelet in kruise_cluster.simulator.kubelets.values():
        await node_kubelet.stop()
    kubelet = await Client.from_kubeconfig(emulator.kubeconfig)
    try:
        for pod in before.values():
            await report_applied_resources(kubelet, pod)
        await kruise_cluster.until(
            lambda: live_pods(kruise_cluster),
            lambda pods: all("resources" in p["status"]["containerStatuses"][0] for p in pods),
        )
        write_log.clear()
        ds = copy.deepcopy(await get_ds(kruise_cluster))
        ds["spec"]["template"]["spec"]["containers"][0]["resources"] = copy.deepcopy(BURSTABLE_BIGGER)
        await kruise_cluster.client.update(ADVANCED_DAEMONSETS, ds)

        def resized(pods: list[dict[str, Any]]) -> bool:
            return len(pods) == NODES and all(
                p["spec"]["containers"][0]["resources"] == BURSTABLE_BIGGER for p in pods
            )

        pods = await kruise_cluster.until(lambda: live_pods(kruise_cluster), resized)
        for pod in pods:
            await report_applied_resources(kubelet, pod)
    finally:
        await kubelet.close()
    await settled(kruise_cluster, NODES)

    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == {
        n: p["metadata"]["uid"] for n, p in before.items()
    }
    for pod in pods:
        conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert conditions["InPlaceUpdateReady"] == conditions["Ready"] == "True"
    expected = (("PATCH", "pods/resize"), ("PUT", "pods"))
    sequences = {
        name: tuple((m, r) for m, r, n in write_log.writes if n == name and r.startswith("pods"))
        for name in before
    }
    assert sequences == {name: expected for name in before}
