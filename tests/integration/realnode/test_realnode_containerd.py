"""A real node end to end: local registry + stand-ins, one containerd, a pod through CRI, full teardown.

Needs root and Debian's containerd, runc, containernetworking-plugins, docker-registry and
busybox-static; skipped (with the apt-get line) where they are missing.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from kruise.sandbox.cri.schema import enum_value, messages
from kruise.sandbox.realnode.mounts import mounts_below
from kruise.sandbox.realnode.network import link_exists
from kruise.sandbox.realnode.nodes import RealNodes
from kruise.sandbox.realnode.process import find_processes
from tests.kit.polling import until, until_fetched
from tests.kit.realnode import CRI_LOG_LINE, Pod, skip_unless_possible

pytestmark = [pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture
def possible() -> None:
    skip_unless_possible()


def _netns() -> set[str]:
    directory = Path("/var/run/netns")
    return {p.name for p in directory.iterdir()} if directory.exists() else set()


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def _mentions(directory: Path) -> Callable[[list[str]], bool]:
    root = str(directory)
    return lambda argv: any(root in arg for arg in argv)


async def _assert_nothing_left(directory: Path, fleet: RealNodes, netns_before: set[str]) -> None:
    assert find_processes(_mentions(directory)) == [], "containerd, shims or the registry outlived stop"
    assert not await link_exists(fleet.network.bridge)
    assert mounts_below(directory) == [], "mounts (rootfs, shm, netns) outlived stop"
    assert _netns() - netns_before == set()
    for node in fleet.nodes.values():
        assert not node.paths.ipam_dir.exists() and not node.paths.netns_dir.exists()


async def test_pod_with_busybox_and_nginx_on_a_real_containerd(tmp_path: Path, possible: None) -> None:
    netns_before = _netns()
    fleet = RealNodes(tmp_path, ["node-1"])
    await fleet.start()
    try:
        node = fleet.nodes["node-1"]
        async with node.client(timeout=120.0) as cri:
            assert (await cri.Version(messages.VersionRequest(version="v1"))).runtime_name == "containerd"
            pod = Pod(node, cri, "web-0")
            await pod.run()
            assert pod.ip in node.pod_cidr, f"pod IP {pod.ip} outside node block {node.pod_cidr}"

            busybox = await pod.start(
                "busybox", "busybox", ["sh", "-c", "echo hello-from-busybox; exec sleep 3600"]
            )
            await pod.start("nginx", "nginx:1.7.9", [])

            status = (await cri.ContainerStatus(messages.ContainerStatusRequest(container_id=busybox))).status
            assert status.state == enum_value("ContainerState", "CONTAINER_RUNNING")
            expected_digest = fleet.images["docker.io/library/busybox:latest"]
            assert status.image_ref == f"docker.io/library/busybox@{expected_digest}"

            log_file = pod.log_dir / "busybox" / "0.log"
            line = await until(
                lambda: log_file.exists() and next(iter(log_file.read_text().splitlines()), None),
                timeout=30,
                message=f"a line in {log_file}",
            )
            match = CRI_LOG_LINE.match(line)
            assert match is not None, f"not a CRI log line: {line!r}"
            assert match.groups() == ("stdout", "F", "hello-from-busybox")

            identity = await pod.exec(busybox, "cat", "/etc/kruise-standin")
            assert (identity.exit_code, identity.stdout) == (0, b"busybox\n")
            routes = await pod.exec(busybox, "cat", "/proc/net/route")
            destinations = [row.split()[1] for row in routes.stdout.decode().splitlines()[1:]]
            assert destinations and "00000000" not in destinations, "a pod must have no default route"

            async with httpx.AsyncClient(timeout=2.0, trust_env=False) as http:

                async def page() -> httpx.Response | None:
                    try:
                        return await http.get(f"http://{pod.ip}/")
                    except httpx.TransportError:
                        return None

                response = await until_fetched(page, lambda r: r is not None, timeout=30, interval=0.2)
            assert response.status_code == 200
            assert "Welcome to nginx!" in response.text and "nginx:1.7.9" in response.text
    finally:
        errors = await fleet.stop()
    assert errors == []
    await _assert_nothing_left(tmp_path, fleet, netns_before)


async def test_teardown_after_containerd_was_killed_leaves_nothing(tmp_path: Path, possible: None) -> None:
    netns_before = _netns()
    fleet = RealNodes(tmp_path, ["node-1"])
    await fleet.start()
    try:
        node = fleet.nodes["node-1"]
        async with node.client(timeout=120.0) as cri:
            pod = Pod(node, cri, "orphan-0")
            await pod.run()
            sleeper = await pod.start("sleeper", "busybox:1.35.0", ["sleep", "3600"])
            verbose = await cri.ContainerStatus(
                messages.ContainerStatusRequest(container_id=sleeper, verbose=True)
            )
            container_pid = json.loads(verbose.info["info"])["pid"]
        assert _alive(container_pid)
        assert node.shims(), "a running pod has a shim"
        assert node.pid is not None
        os.kill(node.pid, signal.SIGKILL)
        await until(lambda: node.pid is None, timeout=10, message="containerd gone after SIGKILL")
    finally:
        errors = await fleet.stop()
    assert errors == []
    await _assert_nothing_left(tmp_path, fleet, netns_before)
    assert not _alive(container_pid), "the container's process outlived its killed containerd"
