"""The simulated kubelet on a real containerd (``Sandbox(runtime="containerd")``): env and volumes reach
the real container, a crashing container is restarted with its exit code in lastState, an exec
readiness probe runs through ExecSync, ``kubectl logs`` reads the CRI log file, and a deleted pod
leaves no container, sandbox or log directory behind.

Needs root and Debian's containerd, runc, containernetworking-plugins, docker-registry and
busybox-static; skipped (with the apt-get line) where they are missing.
"""

from __future__ import annotations

import asyncio
import ipaddress
from pathlib import Path

import pytest

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.realnode import prereqs
from kruise.sandbox.realnode.network import DEFAULT_POD_SUBNET
from kruise.sandbox.simulator.client import ApiError, Client, resource_path
from kruise.sandbox.up import find_kubectl
from tests.kit.pods import pod
from tests.kit.polling import until, until_fetched

pytestmark = [pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(300)]

PODS = resource_path("v1", "pods", "default")
CONFIG = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "app", "namespace": "default"},
    "data": {"greeting": "hello", "file.txt": "from-a-configmap"},
}


def busybox_pod(name: str, container: dict, **spec: object) -> dict:
    """A pod labelled app=`name` whose main busybox container is `container`; `spec`: more spec fields."""
    return pod(
        name,
        labels={"app": name},
        containers=[{"name": "main", "image": "busybox:1.35.0", **container}],
        typed=True,
        **spec,
    )


@pytest.fixture
def possible() -> None:
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))


async def kubectl(sandbox: Sandbox, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        find_kubectl(), "--kubeconfig", str(sandbox.kubeconfig), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await process.communicate()
    return out.decode()


def container_status(obj: dict) -> dict:
    return ((obj.get("status") or {}).get("containerStatuses") or [{}])[0]


async def test_the_kubelet_runs_pods_on_a_real_containerd(tmp_path: Path, possible: None) -> None:
    async with Sandbox(nodes=1, speed=20, crd_dir=None, runtime="containerd") as sandbox:
        client = Client(sandbox.kubeconfig)
        try:
            await client.create(resource_path("v1", "configmaps", "default"), CONFIG)
            worker = busybox_pod(
                "worker",
                {
                    "command": [
                        "sh",
                        "-c",
                        "echo $(GREETING) $(POD_NAME) $POD_IP; cat /cfg/file.txt; echo; "
                        "touch /tmp/ready; exec sleep 3600",
                    ],
                    "env": [
                        {
                            "name": "GREETING",
                            "valueFrom": {"configMapKeyRef": {"name": "app", "key": "greeting"}},
                        },
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                    ],
                    "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}],
                    "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 1},
                },
                volumes=[{"name": "cfg", "configMap": {"name": "app"}}],
            )
            crasher = busybox_pod("crasher", {"command": ["sh", "-c", "echo about to fail; exit 3"]})
            for body in (worker, crasher):
                await client.create(PODS, body)

            def get(name: str):
                return lambda: client.get(resource_path("v1", "pods", "default", name))

            ready = await until_fetched(
                get("worker"), lambda p: container_status(p).get("ready"), timeout=90, message="worker ready"
            )
            ip = ready["status"]["podIP"]
            assert ipaddress.IPv4Address(ip) in ipaddress.IPv4Network(DEFAULT_POD_SUBNET)

            async def worker_logs() -> str:
                text = await kubectl(sandbox, "logs", "worker")
                return text if "from-a-configmap" in text else ""

            logs = await until(worker_logs, timeout=30, interval=0.2, message="worker's output")
            assert logs.splitlines()[:2] == [f"hello worker {ip}", "from-a-configmap"]

            crashed = await until_fetched(
                get("crasher"),
                lambda p: (
                    container_status(p).get("restartCount", 0) >= 1
                    and "terminated" in container_status(p).get("lastState", {})
                ),
                timeout=90,
                message="crasher restarted",
            )
            last = container_status(crashed)["lastState"]["terminated"]
            assert (last["exitCode"], last["reason"]) == (3, "Error")
            assert "about to fail" in await kubectl(sandbox, "logs", "crasher", "--previous")

            for name in ("worker", "crasher"):
                await client.delete(resource_path("v1", "pods", "default", name), grace_period_seconds=1)

            async def gone(name: str) -> bool:
                try:
                    await get(name)()
                except ApiError as error:
                    return error.not_found
                return False

            for name in ("worker", "crasher"):
                await until(lambda name=name: gone(name), timeout=60, message=f"{name} deleted")
            assert sandbox.simulator is not None and sandbox.simulator.real is not None
            node = sandbox.simulator.real.nodes["node-1"]

            async def no_pods_left() -> bool:
                async with node.client() as cri:
                    listed = await cri.ListPodSandbox(messages.ListPodSandboxRequest())
                return not listed.items and not any(node.paths.pod_logs.iterdir())

            await until(
                no_pods_left, timeout=60, interval=0.2, message="sandboxes and log directories removed"
            )
        finally:
            await client.close()
