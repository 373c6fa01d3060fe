"""The simulator's apps/v1 DaemonSet controller: a pod per eligible node, rolling updates, status."""

from __future__ import annotations

from typing import Any

from simulator_testkit import Cluster, is_ready

from kruise.sandbox.simulator.client import resource_path


def daemonset(image: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": image}]},
            },
            **spec,
        },
    }


def settled(ds: dict[str, Any], desired: int) -> bool:
    status = ds.get("status") or {}
    return (
        status.get("observedGeneration") == ds["metadata"]["generation"]
        and status.get("desiredNumberScheduled") == desired
        and status.get("updatedNumberScheduled") == desired
        and status.get("numberAvailable") == desired
    )


async def test_one_ready_pod_per_node_then_a_rolling_update(cluster: Cluster):
    await cluster.create(daemonset("agent:1"), "daemonsets", "apps/v1")
    ds = await cluster.wait_for("daemonsets", "agent", lambda d: settled(d, 3), group_version="apps/v1")
    assert ds["status"]["currentNumberScheduled"] == 3
    assert ds["status"]["numberReady"] == 3 and ds["status"]["numberMisscheduled"] == 0
    pods = await cluster.wait_list(
        "pods", lambda ps: len(ps) == 3 and all(map(is_ready, ps)), label_selector="app=agent"
    )
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1", "node-2", "node-3"]
    pod = pods[0]
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [pod["spec"]["nodeName"]]
    assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in pod[
        "spec"
    ]["tolerations"]
    assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
    old_hash = pod["metadata"]["labels"]["controller-revision-hash"]

    current = await cluster.client.get(resource_path("apps/v1", "daemonsets", "default", "agent"))
    current["spec"]["template"]["spec"]["containers"][0]["image"] = "agent:2"
    await cluster.client.replace(resource_path("apps/v1", "daemonsets", "default", "agent"), current)
    await cluster.wait_for("daemonsets", "agent", lambda d: settled(d, 3), group_version="apps/v1")
    pods = await cluster.wait_list(
        "pods",
        lambda ps: len(ps) == 3 and all(p["spec"]["containers"][0]["image"] == "agent:2" for p in ps),
        label_selector="app=agent",
    )
    assert all(p["metadata"]["labels"]["controller-revision-hash"] != old_hash for p in pods)
    assert all(p["metadata"]["labels"]["pod-template-generation"] == "2" for p in pods)


async def test_node_selector_limits_the_nodes(cluster: Cluster):
    spec_selector = {"topology.kubernetes.io/zone": "zone-b"}
    manifest = daemonset("agent:1")
    manifest["spec"]["template"]["spec"]["nodeSelector"] = spec_selector
    await cluster.create(manifest, "daemonsets", "apps/v1")
    await cluster.wait_for("daemonsets", "agent", lambda d: settled(d, 1), group_version="apps/v1")
    pods = await cluster.wait_list("pods", lambda ps: len(ps) == 1, label_selector="app=agent")
    assert pods[0]["spec"]["nodeName"] == "node-2"
