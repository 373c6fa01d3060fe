"""An in-place pod resize reaches the real container: the simulated kubelet on a real containerd creates
each container with the cgroup settings of its resources and, on a resize whose resizePolicy needs no
restart, hands the new ones to the running container (CRI UpdateContainerResources). What the kernel
enforces is read inside the container, from its own cgroup, with ExecSync.

Needs root and Debian's containerd, runc, containernetworking-plugins, docker-registry and
busybox-static; skipped (with the apt-get line) where they are missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.realnode import prereqs
from kruise.sandbox.simulator.client import STRATEGIC_PATCH, Client, resource_path
from tests.kit.polling import until, until_fetched

pytestmark = [pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(300)]

POD = "sized"
# a subnet of its own: a real-node sandbox running elsewhere on the machine (the default 198.18.0.0/16, the
# e2e modules' 198.19.{0,64,128}.0/18 and 198.19.192.0/19) would refuse this one
POD_SUBNET = "198.19.240.0/20"
CGROUP_V1 = Path("/sys/fs/cgroup/memory").is_dir()  # else the unified hierarchy (v2)
# cgroup v1 files first, then the v2 ones; a container sees its own cgroup at /sys/fs/cgroup
READ_CGROUP = (
    "if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then "
    "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.cfs_quota_us "
    "/sys/fs/cgroup/cpu/cpu.shares; "
    "else cat /sys/fs/cgroup/memory.max; cut -d' ' -f1 /sys/fs/cgroup/cpu.max; "
    "cat /sys/fs/cgroup/cpu.weight; fi"
)


def _resources(cpu: str, cpu_limit: str, memory_limit: str) -> dict:
    return {"requests": {"cpu": cpu, "memory": "32Mi"}, "limits": {"cpu": cpu_limit, "memory": memory_limit}}


def _expected(cpu_milli: int, quota: int, memory: int, v1: bool) -> list[int]:
    if v1:
        return [memory, quota, cpu_milli * 1024 // 1000]
    # cgroup v2: runc maps shares to a weight (1 + ((shares - 2) * 9999) / 262142)
    return [memory, quota, 1 + ((cpu_milli * 1024 // 1000 - 2) * 9999) // 262142]


@pytest.fixture
def possible() -> None:
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))


async def _cgroup(cri: CriClient, container_id: str) -> list[int]:
    request = messages.ExecSyncRequest(container_id=container_id, cmd=["sh", "-c", READ_CGROUP], timeout=10)
    result = await cri.ExecSync(request)
    assert result.exit_code == 0, bytes(result.stderr).decode()
    return [int(line) for line in bytes(result.stdout).decode().split()]


async def test_a_resize_without_restart_changes_the_running_containers_cgroup(
    tmp_path: Path, possible: None
) -> None:
    v1 = CGROUP_V1
    options = {"nodes": 1, "speed": 20, "crd_dir": None, "runtime": "containerd", "pod_subnet": POD_SUBNET}
    async with Sandbox(**options) as sandbox:
        client = Client(sandbox.kubeconfig)
        pods = resource_path("v1", "pods", "default")
        try:
            container = {
                "name": "main",
                "image": "busybox:1.35.0",
                "command": ["sleep", "3600"],
                "resources": _resources("200m", "1", "256Mi"),
                "resizePolicy": [
                    {"resourceName": "cpu", "restartPolicy": "NotRequired"},
                    {"resourceName": "memory", "restartPolicy": "NotRequired"},
                ],
            }
            body = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": POD, "namespace": "default"},
                "spec": {"containers": [container]},
            }
            await client.create(pods, body)
            get = lambda: client.get(resource_path("v1", "pods", "default", POD))  # noqa: E731
            ready = await until_fetched(
                get,
                lambda p: ((p.get("status") or {}).get("containerStatuses") or [{}])[0].get("ready"),
                timeout=90,
                message="pod ready",
            )
            before = ready["status"]["containerStatuses"][0]
            container_id = before["containerID"].removeprefix("containerd://")
            assert sandbox.simulator is not None and sandbox.simulator.real is not None
            node = sandbox.simulator.real.nodes["node-1"]

            async with node.client() as cri:
                # created with its resources: 256Mi, 1 cpu over a 100 ms period, 200m of shares
                assert await _cgroup(cri, container_id) == _expected(200, 100_000, 256 << 20, v1)

                resized = _resources("100m", "500m", "128Mi")
                patch = {"spec": {"containers": [{"name": "main", "resources": resized}]}}
                resize = resource_path("v1", "pods", "default", POD, "resize")
                await client.patch(resize, patch, STRATEGIC_PATCH)
                wanted = _expected(100, 50_000, 128 << 20, v1)

                async def applied() -> list[int] | None:
                    values = await _cgroup(cri, container_id)
                    return values if values == wanted else None

                await until(applied, timeout=60, interval=0.2, message=f"cgroup {wanted}")

            after = (await get())["status"]["containerStatuses"][0]
            assert after["containerID"] == before["containerID"]
            assert after["restartCount"] == 0
        finally:
            await client.close()
