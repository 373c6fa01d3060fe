"""Upstream's container launch priority e2e (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/containerlaunchpriority.go) on CloneSet pods, translated to kubectl on the AllAlpha
sandbox. Only "run with no container priority" runs on the fake runtime: the other three separate the
containers' start times with postStart hooks (see docs/upstream-e2e.md)."""

from __future__ import annotations

import json

from cloneset_tester import container_status, upstream_case
from harness import Cluster

WEBSERVER_IMAGE = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"  # upstream's common.WebserverImage


async def test_run_with_no_container_priority(kruise_sandbox_all_gates: Cluster):
    """run with no container priority"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster) as case:
        _, out = await cluster.kubectl("get", "nodes", "-o", "json")
        replicas = len(json.loads(out)["items"])  # upstream: one pod per node
        cs = case.new_cloneset(f"clone-{case.rand}", replicas)
        spec = cs["spec"]["template"]["spec"]
        spec["containers"].append({
            "name": "c2", "image": WEBSERVER_IMAGE, "command": ["/bin/bash", "-c", "read -p wait"],
            "stdin": True, "env": [{"name": "test", "value": "foo"}],
        })  # fmt: skip
        spec["topologySpreadConstraints"] = [{
            "labelSelector": cs["spec"]["selector"], "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
        }]  # fmt: skip
        name = (await case.create(cs))["metadata"]["name"]
        await case.eventually_status(name, "readyReplicas", replicas, timeout=150)

        pods = json.loads(await case.kubectl("get", "pods", "-l", f"owner={name}", "-o", "json"))["items"]
        assert len(pods) == replicas
        for pod in pods:
            # no priority: no barrier env injected
            assert len(pod["spec"]["containers"][0]["env"]) == 1
            assert len(pod["spec"]["containers"][1]["env"]) == 1
            first = container_status(pod, pod["spec"]["containers"][0]["name"])["state"]["running"][
                "startedAt"
            ]
            second = container_status(pod, "c2")["state"]["running"]["startedAt"]
            assert first <= second  # RFC 3339 UTC seconds compare as strings
