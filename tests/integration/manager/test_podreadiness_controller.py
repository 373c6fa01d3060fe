"""The pod-readiness controller sets KruisePodReady=True once, so gated pods can become Ready."""

from __future__ import annotations

import pytest

from kruise.kube.resources import PODS
from kruise.manager.controllers.podreadiness import SETUP


@pytest.fixture
def controller_setups():
    return [SETUP]


def condition(pod, type_):
    return next((c for c in pod.get("status", {}).get("conditions", []) if c["type"] == type_), None)


async def test_gated_pod_gets_condition_and_becomes_ready(kruise_cluster):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gated", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "nginx:alpine"}],
            "readinessGates": [{"conditionType": "KruisePodReady"}],
        },
    }
    await kruise_cluster.client.create(PODS, pod)
    ready = await kruise_cluster.until(
        lambda: kruise_cluster.client.get(PODS, "gated", "default"),
        lambda p: (condition(p, "Ready") or {}).get("status") == "True",
    )
    assert condition(ready, "KruisePodReady")["status"] == "True"


async def test_pod_without_the_gate_gets_no_condition(kruise_cluster):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "plain", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx:alpine"}]},
    }
    await kruise_cluster.client.create(PODS, pod)
    running = await kruise_cluster.until(
        lambda: kruise_cluster.client.get(PODS, "plain", "default"),
        lambda p: (condition(p, "Ready") or {}).get("status") == "True",
    )
    assert condition(running, "KruisePodReady") is None
