"""Upstream's BroadcastJob e2e, context "BroadcastJob dispatching" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/broadcastjob.go) and its v1beta1 copy (test/e2e/apps/v1beta1/broadcastjob.go,
context "BroadcastJob v1beta1 dispatching"), translated to kubectl on the AllAlpha sandbox: same objects,
same steps, same assertions. The dispatching case is the same in both files but for the API version, so it
runs once per version (ids `[v1alpha1]`, `[v1beta1]`); the v1beta1 file adds "test v1beta1 specific
features". docs/upstream-e2e.md maps every upstream case to its test here.

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

import pytest
from harness import Cluster
from upstream_kit import BUSYBOX_IMAGE, Case, Obj, controlled_by, tolerates, upstream_case

API_VERSIONS = [pytest.param(v, id=v) for v in ("v1alpha1", "v1beta1")]
# upstream's NewDefaultFramework base name of each file
NAMESPACE_BASE = {"v1alpha1": "broadcastjobs", "v1beta1": "broadcastjobs-v1beta1"}
E2E_FAKE_KEY = "kruise-e2e-fake"
FAKE_NODE_PREFIX = "fake-node-"


def broadcastjob_resource(version: str) -> str:
    """Fully qualified, as upstream's clientset of that version speaks it (a bare `broadcastjob` is
    kubectl's preferred version)."""
    return f"broadcastjobs.{version}.apps.kruise.io"


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


@pytest.mark.parametrize("api_version", API_VERSIONS)
async def test_succeeds_for_parallelism_less_than_number_of_nodes(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """succeeds for parallelism < number of node"""
    base = NAMESPACE_BASE[api_version]
    async with upstream_case(kruise_sandbox_all_gates, base) as case, fake_node(case) as node:
        resource = broadcastjob_resource(api_version)
        name = "job-" + case.rand
        tolerations = [{"key": E2E_FAKE_KEY, "operator": "Equal", "value": case.rand, "effect": "NoSchedule"}]
        job = {
            "apiVersion": f"apps.kruise.io/{api_version}",
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
            lambda: case.must_get(resource, name),
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
            lambda: case.must_get(resource, name),
            lambda j: (j.get("status") or {}).get("succeeded") == len(nodes),
            f"status.succeeded == {len(nodes)}",
            timeout=60,
        )


async def test_v1beta1_specific_features(kruise_sandbox_all_gates: Cluster):
    """test v1beta1 specific features

    Upstream's AfterEach deletes the fake node of the case's random string; this case creates none."""
    async with upstream_case(kruise_sandbox_all_gates, NAMESPACE_BASE["v1beta1"]) as case:
        # Create BroadcastJob v1beta1 with TTL
        box = {"name": "box", "image": BUSYBOX_IMAGE, "command": ["/bin/sh", "-c", "echo 'test'"]}
        job = {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "BroadcastJob",
            "metadata": {"name": "job-ttl-" + case.rand, "namespace": case.ns},
            "spec": {
                "template": {
                    "spec": {
                        "containers": [box],
                        "restartPolicy": "Never",
                    }
                },
                "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 30},
            },
        }
        job = await case.create(job)

        # Verify TTL is set correctly
        assert job["apiVersion"] == "apps.kruise.io/v1beta1"
        assert job["spec"]["completionPolicy"].get("ttlSecondsAfterFinished") == 30
