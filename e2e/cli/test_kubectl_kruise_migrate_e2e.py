"""`kubectl kruise migrate` for real: kubectl finds the installed plugin on PATH, the sandbox's
Deployment controller and kruise-manager's CloneSet controller move the pods, and the sandbox's
endpoints controller keeps the Service's Endpoints. Every version of those Endpoints is recorded
(an informer sees each change), so "no downtime" is checked on all of them, not on a few samples."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from harness import Cluster, kubectl_kruise, until

from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import ResourceRef

pytestmark = pytest.mark.e2e

ENDPOINTS = ResourceRef("", "v1", "endpoints", True, "Endpoints")
REPLICAS = 10
MAX_SURGE = 2
LABELS = {"app": "web"}


def deployment(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:alpine",
                            # a new pod serves only 20 cluster seconds after it starts (1 s at speed 20), so
                            # a migration that removed Deployment pods before its CloneSet pods are ready
                            # would show in the Endpoints
                            "readinessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 20},
                        }
                    ]
                },
            },
        },
    }


def service(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {"selector": LABELS, "ports": [{"port": 80, "targetPort": 80}]},
    }


def ready_pods(endpoints: dict[str, Any]) -> list[str]:
    return sorted(
        (address.get("targetRef") or {}).get("name", "")
        for subset in endpoints.get("subsets") or []
        for address in subset.get("addresses") or []
    )


async def apply(cluster: Cluster, obj: dict[str, Any]) -> None:
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(obj))


async def test_migrate_moves_ten_pods_under_a_cloneset_without_losing_ready_endpoints(
    kruise_sandbox: Cluster,
):
    cluster = kruise_sandbox
    ns = f"e2e-migrate-{uuid.uuid4().hex[:6]}"
    await apply(cluster, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    client = await Client.from_kubeconfig(cluster.kubeconfig, qps=500, burst=500)
    informer = SharedInformer(client, ENDPOINTS, ns, field_selector="metadata.name=web")
    versions: list[list[str]] = []
    try:
        await apply(cluster, deployment(ns))
        await apply(cluster, service(ns))

        async def endpoints() -> list[str]:
            _, out = await cluster.kubectl("get", "endpoints", "web", "-n", ns, "-o", "json", check=False)
            return ready_pods(json.loads(out)) if out.startswith("{") else []

        await until(
            endpoints, lambda pods: len(pods) == REPLICAS, "10 ready Deployment pods behind the Service"
        )

        def record(*objs: dict[str, Any]) -> None:
            versions.append(ready_pods(objs[-1]))

        informer.add_event_handler(on_add=record, on_update=record)
        informer.start()
        assert await informer.wait_for_sync(30)

        base = (
            "migrate",
            "CloneSet",
            "--from",
            "Deployment",
            "-n",
            ns,
            "--src-name",
            "web",
            "--dst-name",
            "web-cs",
        )
        _, out, err = await kubectl_kruise(cluster, *base, "--create")
        assert (out, err) == ("", "Successfully created from Deployment/web to CloneSet/web-cs\n")

        _, out, err = await kubectl_kruise(
            cluster, *base, f"--max-surge={MAX_SURGE}", "--timeout-seconds=240", timeout=300
        )
        lines = err.splitlines()
        assert out == ""
        assert (
            lines[0]
            == f"Migration progress: Deployment/web scale in 0, CloneSet/web-cs scale out {MAX_SURGE}"
        )
        assert all(line.startswith("Migration progress: Deployment/web scale in ") for line in lines[:-1])
        assert lines[-1] == "Successfully migrated 10 replicas from Deployment/web to CloneSet/web-cs"

        final = await until(
            endpoints,
            lambda pods: len(pods) == REPLICAS and all(p.startswith("web-cs-") for p in pods),
            "the Service served by the CloneSet's 10 pods alone",
        )
        assert len(set(final)) == REPLICAS
        _, replicas = await cluster.kubectl(
            "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}"
        )
        assert replicas == "0"
    finally:
        await informer.stop()
        await client.close()
        await cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)

    counts = [len(pods) for pods in versions]
    print(f"migrate e2e: {len(versions)} Endpoints versions, ready min={min(counts)} max={max(counts)}")
    assert len(versions) > REPLICAS, f"too few Endpoints versions seen to judge: {versions}"
    # migrate allows no unavailability: each Deployment pod goes only once its CloneSet replacement is ready
    assert min(counts) >= REPLICAS, [c for c in counts]
    # and at most --max-surge pods beyond the ten exist, so no more than that many can be serving
    assert max(counts) <= REPLICAS + MAX_SURGE, counts
    assert any(
        any(p.startswith("web-cs-") for p in pods) and any(not p.startswith("web-cs-") for p in pods)
        for pods in versions
    ), "no Endpoints version showed both workloads serving"
