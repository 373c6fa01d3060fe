"""Max-pods capacity on a small cluster: full nodes make pods Unschedulable until room frees up."""

from __future__ import annotations

import pytest
from simulator_testkit import Cluster, condition, pod_manifest
from test_simulator_scheduler import bound, unschedulable

from kruise.sandbox.simulator.client import resource_path


@pytest.fixture
def simulator_options():
    return {"nodes": 2, "pods_per_node": 2}


async def test_max_pods_capacity(cluster: Cluster):
    for i in range(4):
        await cluster.create(pod_manifest(f"fill-{i}"))
    pods = await cluster.wait_list("pods", lambda items: sum(bound(p) for p in items) == 4)
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1", "node-1", "node-2", "node-2"]
    await cluster.create(pod_manifest("overflow"))
    pod = await cluster.wait_for("pods", "overflow", unschedulable)
    assert "0/2 nodes are available: 2 Too many pods." in condition(pod, "PodScheduled")["message"]
    await cluster.client.delete(resource_path("v1", "pods", "default", "fill-0"))
    await cluster.wait_for("pods", "overflow", bound)
