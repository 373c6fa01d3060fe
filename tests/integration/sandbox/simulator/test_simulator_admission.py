"""Kubelet admission through the simulator: a pod bound to a node (``nodeName``, past the scheduler)
whose host port is taken there, that selects other node labels, or that does not fit is rejected —
phase Failed with the kubelet's reason and message, a Warning event, and never started — while the
scheduler keeps pods off nodes where their host port is taken."""

from __future__ import annotations

from typing import Any

import pytest
from simulator_testkit import Cluster, condition, pod_manifest

from kruise.sandbox.simulator.client import resource_path

Obj = dict[str, Any]
PORTS_MESSAGE = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"


@pytest.fixture
def simulator_options() -> dict[str, Any]:
    return {"nodes": 1}


def serving(name: str, *ports: Obj, **spec: Any) -> Obj:
    container = {"name": "nginx", "image": "nginx:1.25", "ports": list(ports)}
    return pod_manifest(name, container, **spec)


def host_port(number: int, **extra: Any) -> Obj:
    return {"containerPort": number, "hostPort": number, **extra}


def phase(value: str):
    return lambda pod: (pod.get("status") or {}).get("phase") == value


def sandboxes_of(cluster: Cluster, name: str) -> list[Any]:
    return [s for s in cluster.simulator.runtimes["node-1"].list_pod_sandboxes() if s.name == name]


async def test_a_pod_whose_host_port_is_taken_is_rejected_until_the_port_is_free(cluster: Cluster):
    await cluster.create(serving("holder", host_port(21017), nodeName="node-1"))
    await cluster.wait_for("pods", "holder", phase("Running"))

    await cluster.create(serving("rival", host_port(21017), nodeName="node-1"))
    rival = await cluster.wait_for("pods", "rival", phase("Failed"))
    status = rival["status"]
    assert status["reason"] == "NodePorts"
    assert status["message"] == "Pod was rejected: " + PORTS_MESSAGE
    assert status["qosClass"] == "BestEffort" and status["startTime"]
    assert "containerStatuses" not in status and "podIP" not in status
    event = await cluster.wait_event("rival", "NodePorts")
    assert (event["type"], event["message"]) == ("Warning", PORTS_MESSAGE)
    assert sandboxes_of(cluster, "rival") == []  # never started

    # other protocol, other address: no conflict
    await cluster.create(serving("udp", host_port(21017, protocol="UDP"), nodeName="node-1"))
    await cluster.create(serving("plain", {"containerPort": 21017}, nodeName="node-1"))
    for name in ("udp", "plain"):
        await cluster.wait_for("pods", name, phase("Running"))

    # the port is free again once its holder is gone: the same pod comes again, and runs
    await cluster.client.delete(resource_path("v1", "pods", "default", "holder"), grace_period_seconds=0)
    await cluster.client.delete(resource_path("v1", "pods", "default", "rival"), grace_period_seconds=0)
    await cluster.wait_list("pods", lambda items: not any(p["metadata"]["name"] == "rival" for p in items))
    await cluster.create(serving("rival", host_port(21017), nodeName="node-1"))
    await cluster.wait_for("pods", "rival", phase("Running"))


async def test_two_pods_bound_at_once_with_one_host_port_get_one_admitted(cluster: Cluster):
    for name in ("twin-a", "twin-b"):
        await cluster.create(serving(name, host_port(21020, hostIP="127.0.0.1"), nodeName="node-1"))
    pods = await cluster.wait_list(
        "pods",
        lambda items: sorted((p.get("status") or {}).get("phase") for p in items) == ["Failed", "Running"],
    )
    failed = next(p for p in pods if p["status"]["phase"] == "Failed")
    assert failed["status"]["reason"] == "NodePorts"


async def test_a_pod_selecting_other_node_labels_is_rejected_as_node_affinity(cluster: Cluster):
    await cluster.create(serving("picky", nodeName="node-1", nodeSelector={"disk": "ssd"}))
    pod = await cluster.wait_for("pods", "picky", phase("Failed"))
    assert pod["status"]["reason"] == "NodeAffinity"
    assert pod["status"]["message"] == (
        "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
    )
    # the kubelet reads the node's labels as they are now
    await cluster.client.patch(
        resource_path("v1", "nodes", None, "node-1"), {"metadata": {"labels": {"disk": "ssd"}}}
    )
    await cluster.create(serving("picky-2", nodeName="node-1", nodeSelector={"disk": "ssd"}))
    await cluster.wait_for("pods", "picky-2", phase("Running"))


async def test_a_pod_over_the_nodes_cpu_is_out_of_cpu(cluster: Cluster):
    big = serving("big", nodeName="node-1")
    big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "9"}}
    await cluster.create(big)
    pod = await cluster.wait_for("pods", "big", phase("Failed"))
    assert pod["status"]["reason"] == "OutOfcpu"
    assert pod["status"]["message"] == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 9000, used: 0, capacity: 8000"
    )


async def test_the_scheduler_keeps_a_pod_off_a_node_whose_host_port_is_taken(cluster: Cluster):
    await cluster.create(serving("holder", host_port(21017), nodeName="node-1"))
    await cluster.wait_for("pods", "holder", phase("Running"))
    await cluster.create(serving("later", host_port(21017)))

    def unschedulable(pod: Obj) -> bool:
        scheduled = condition(pod, "PodScheduled")
        return scheduled is not None and scheduled.get("reason") == "Unschedulable"

    pod = await cluster.wait_for("pods", "later", unschedulable)
    assert (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
        in (condition(pod, "PodScheduled")["message"])
    )
    await cluster.client.delete(resource_path("v1", "pods", "default", "holder"), grace_period_seconds=0)
    await cluster.wait_for("pods", "later", phase("Running"))
