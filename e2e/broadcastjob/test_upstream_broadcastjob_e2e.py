"""Upstream's BroadcastJob e2e, context "BroadcastJob dispatching" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/broadcastjob.go), translated to kubectl on the AllAlpha sandbox: same objects,
same steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here.

The case adds a fake node (upstream's `NodeTester.CreateFakeNode`): a Node object with no kubelet behind
it, tainted so only the job's pods go there; its pod never runs, and the case itself marks it Succeeded.
The sandbox runs kubelets only for its own nodes, as kind does, so the fake node is as upstream has it.
Upstream keeps the fake node's Ready heartbeat fresh from a goroutine because kind's node lifecycle
controller would taint a silent node; the sandbox has no such controller, so the status is written once.
The same goroutine force-deletes pods left terminating on the node; here the case does that when it
deletes the node."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

from harness import Cluster
from upstream_kit import BUSYBOX_IMAGE, Case, Obj, controlled_by, tolerates, upstream_case

BROADCASTJOB = "broadcastjobs.v1alpha1.apps.kruise.io"
E2E_FAKE_KEY = "kruise-e2e-fake"
FAKE_NODE_PREFIX = "fake-node-"


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


@asynccontextmanager
async def fake_node(case: Case) -> AsyncIterator[Obj]:
    """`CreateFakeNode(randStr)` and, afterwards, `DeleteFakeNode(randStr)`."""
    cluster = case.cluster
    name = FAKE_NODE_PREFIX + case.rand
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, E2E_FAKE_KEY: "true"}},
        "spec": {"taints": [{"key": E2E_FAKE_KEY, "value": case.rand, "effect": "NoSchedule"}]},
    }
    await cluster.kubectl("create", "-f", "-", stdin=json.dumps(node))
    try:
        resources = {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "20Gi", "pods": "16"}
        now = datetime.now(UTC)
        status = {
            "phase": "Running",
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "FakeReady",
                    # Ready for 10min
                    "lastTransitionTime": _stamp(now - timedelta(minutes=10)),
                    "lastHeartbeatTime": _stamp(now),
                }
            ],
        }
        await cluster.kubectl(
            "patch",
            "node",
            name,
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            json.dumps({"status": status}),
        )

        async def node_obj() -> Obj:
            _, out = await cluster.kubectl("get", "node", name, "-o", "json")
            return json.loads(out)

        # wait for not-ready taint to be removed
        ready = await case.eventually(
            node_obj,
            lambda n: (
                not any(t.get("key") == "node.kubernetes.io/not-ready" for t in n["spec"].get("taints") or [])
            ),
            f"{name} without the not-ready taint",
            timeout=10,
        )
        yield ready
    finally:
        await cluster.kubectl("delete", "node", name, "--ignore-not-found", "--wait=false")
        await cluster.kubectl(
            "delete", "pods", "--all-namespaces", "--field-selector", f"spec.nodeName={name}",
            "--grace-period=0", "--force", "--ignore-not-found",
        )  # fmt: skip


async def real_nodes_with_fake(case: Case, tolerations: list[Obj]) -> list[Obj]:
    """`ListRealNodesWithFake`: the nodes whose every taint the tolerations tolerate."""
    _, out = await case.cluster.kubectl("get", "nodes", "-o", "json")
    return [
        n
        for n in json.loads(out)["items"]
        if all(tolerates(tolerations, t) for t in n["spec"].get("taints") or [])
    ]


async def test_succeeds_for_parallelism_less_than_number_of_nodes(kruise_sandbox_all_gates: Cluster):
    """succeeds for parallelism < number of node"""
    async with upstream_case(kruise_sandbox_all_gates, "broadcastjobs") as case, fake_node(case) as node:
        name = "job-" + case.rand
        tolerations = [{"key": E2E_FAKE_KEY, "operator": "Equal", "value": case.rand, "effect": "NoSchedule"}]
        job = {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "BroadcastJob",
            "metadata": {"name": name, "namespace": case.ns},
            "spec": {
                "template": {
                    "spec": {
                        "tolerations": tolerations,
                        "containers": [
                            {"name": "box", "image": BUSYBOX_IMAGE, "command": ["/bin/sh", "-c", "sleep 5"]}
                        ],
                        "restartPolicy": "Never",
                    }
                },
                "completionPolicy": {"type": "Always"},
            },
        }
        nodes = await real_nodes_with_fake(case, tolerations)
        job["spec"]["parallelism"] = max(len(nodes) - 1, min(len(nodes), 1))
        job = await case.create(job)

        # Check the status of job
        await case.eventually(
            lambda: case.must_get(BROADCASTJOB, name),
            lambda j: (j.get("status") or {}).get("desired") == len(nodes),
            f"status.desired == {len(nodes)}",
            timeout=10,
        )

        async def pods_of_job() -> list[Obj]:
            pods = [p for p in await case.list("pods") if controlled_by(p, job["metadata"]["uid"])]
            fake = next((p for p in pods if p["spec"].get("nodeName") == node["metadata"]["name"]), None)
            if fake is not None and (fake.get("status") or {}).get("phase") != "Succeeded":
                # Try to update Pod <fake> to Succeeded
                await case.kubectl(
                    "patch", "pod", fake["metadata"]["name"], "--subresource=status", "--type", "merge",
                    "-p", '{"status":{"phase":"Succeeded"}}',
                )  # fmt: skip
            return pods

        await case.eventually(pods_of_job, lambda pods: len(pods) == len(nodes), f"{len(nodes)} pods", 180)
        await case.eventually(
            lambda: case.must_get(BROADCASTJOB, name),
            lambda j: (j.get("status") or {}).get("succeeded") == len(nodes),
            f"status.succeeded == {len(nodes)}",
            timeout=60,
        )
