"""kruise-manager run as a pod by the simulated kubelet connects with in-cluster config.

The process gets no kubeconfig: only what a kubelet gives a container (the service variables and
the projected service-account volume). It must find the apiserver, authenticate, take the Lease
and run its controllers - the CloneSet below gets its pods from it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.simulator import ProcessImage
from kruise.sandbox.simulator.client import ApiError, Client, resource_path

MANAGER = Path(sys.executable).parent / "kruise-manager"
NAMESPACE = "kruise-system"
WAIT = 60.0

pytestmark = pytest.mark.skipif(not MANAGER.exists(), reason="kruise-manager is not installed in the venv")


def manager_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "kruise-manager-0",
            "namespace": NAMESPACE,
            "labels": {"control-plane": "controller-manager"},
        },
        "spec": {
            "containers": [
                {
                    "name": "manager",
                    "image": "kruise-py:test",
                    "command": ["kruise-manager"],
                    "args": [
                        f"--leader-election-namespace={NAMESPACE}",
                        "--metrics-addr=:8080",
                        "--health-probe-addr=:8000",
                        "--logging-format=json",
                    ],
                    "env": [
                        {
                            "name": "POD_NAMESPACE",
                            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                        }
                    ],
                    "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8000}, "periodSeconds": 1},
                }
            ]
        },
    }


def cloneset() -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "sample", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "sample"}},
            "template": {
                "metadata": {"labels": {"app": "sample"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
            },
        },
    }


async def until(check, what: str) -> Any:
    try:
        async with asyncio.timeout(WAIT):
            while True:
                value = await check()
                if value:
                    return value
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError(what) from None


async def test_manager_pod_uses_in_cluster_config():
    image = ProcessImage("kruise-py:*", {"kruise-manager": [str(MANAGER)]}, default="kruise-manager")
    async with Sandbox(nodes=1, speed=10, process_images=[image]) as sandbox:
        client = Client(sandbox.kubeconfig)
        try:
            await client.create(
                resource_path("v1", "namespaces"),
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
            )

            async def default_account() -> bool:
                try:
                    await client.get(resource_path("v1", "serviceaccounts", NAMESPACE, "default"))
                except ApiError:
                    return False
                return True

            await until(default_account, "no default ServiceAccount in kruise-system")
            await client.create(resource_path("v1", "pods", NAMESPACE), manager_pod())

            async def lease_holder() -> str:
                try:
                    lease = await client.get(
                        resource_path("coordination.k8s.io/v1", "leases", NAMESPACE, "kruise-manager")
                    )
                except ApiError:
                    return ""
                return (lease.get("spec") or {}).get("holderIdentity", "")

            async def logs() -> str:
                pod = await client.get(resource_path("v1", "pods", NAMESPACE, "kruise-manager-0"))
                instance = sandbox.simulator.logs.instance(pod["metadata"]["uid"], "manager", False)
                return "\n".join(text for _, text in instance.lines)

            try:
                await until(lease_holder, "kruise-manager never took its Lease")
            except AssertionError:
                raise AssertionError(
                    f"kruise-manager never took its Lease; its log:\n{await logs()}"
                ) from None

            cloneset_path = resource_path("apps.kruise.io/v1alpha1", "clonesets", "default")
            await client.create(cloneset_path, cloneset())

            async def cloned() -> list[Any]:
                pods = await client.list(resource_path("v1", "pods", "default"), labelSelector="app=sample")
                return pods["items"] if len(pods["items"]) == 2 else []

            pods = await until(cloned, "the CloneSet got no pods from the in-pod manager")
            assert all(p["metadata"]["ownerReferences"][0]["kind"] == "CloneSet" for p in pods)
        finally:
            await client.close()
