"""The simulated scheduler: selectors, affinity, taints, capacity, and Unschedulable reporting."""

from __future__ import annotations

from simulator_testkit import Cluster, condition, pod_manifest

from kruise.sandbox.simulator.client import resource_path


def bound(pod):
    return bool(pod["spec"].get("nodeName"))


def unschedulable(pod):
    scheduled = condition(pod, "PodScheduled")
    return scheduled is not None and scheduled["status"] == "False"


async def test_node_selector_and_required_affinity(cluster: Cluster):
    await cluster.create(pod_manifest("by-selector", nodeSelector={"kubernetes.io/hostname": "node-2"}))
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-3"]}]}
                ]
            }
        }
    }
    await cluster.create(pod_manifest("by-fields", affinity=affinity))
    zone_affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}
                        ]
                    }
                ]
            }
        }
    }
    await cluster.create(pod_manifest("by-zone", affinity=zone_affinity))
    assert (await cluster.wait_for("pods", "by-selector", bound))["spec"]["nodeName"] == "node-2"
    assert (await cluster.wait_for("pods", "by-fields", bound))["spec"]["nodeName"] == "node-3"
    assert (await cluster.wait_for("pods", "by-zone", bound))["spec"]["nodeName"] == "node-1"
    scheduled = await cluster.wait_event("by-selector", "Scheduled")
    assert scheduled["message"] == "Successfully assigned default/by-selector to node-2"


async def test_unschedulable_then_scheduled_when_the_taint_goes(cluster: Cluster):
    node_path = resource_path("v1", "nodes", name="node-1")
    await cluster.client.patch(
        node_path, {"spec": {"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}}
    )
    await cluster.create(pod_manifest("picky", nodeSelector={"kubernetes.io/hostname": "node-1"}))
    pod = await cluster.wait_for("pods", "picky", unschedulable)
    scheduled = condition(pod, "PodScheduled")
    assert scheduled["reason"] == "Unschedulable"
    assert scheduled["message"].startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, "
        "2 node(s) didn't match Pod's node affinity/selector."
    )
    event = await cluster.wait_event("picky", "FailedScheduling")
    assert event["type"] == "Warning"
    await cluster.client.patch(node_path, {"spec": {"taints": None}})
    assert (await cluster.wait_for("pods", "picky", bound))["spec"]["nodeName"] == "node-1"


async def test_toleration_lets_a_pod_onto_a_tainted_node(cluster: Cluster):
    await cluster.client.patch(
        resource_path("v1", "nodes", name="node-3"),
        {"spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoExecute"}]}},
    )
    tolerant = pod_manifest(
        "tolerant",
        nodeSelector={"kubernetes.io/hostname": "node-3"},
        tolerations=[{"key": "gpu", "operator": "Exists"}],
    )
    await cluster.create(tolerant)
    assert (await cluster.wait_for("pods", "tolerant", bound))["spec"]["nodeName"] == "node-3"
