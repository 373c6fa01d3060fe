"""The stand-in images on a real containerd: the hot-upgrade sample's listener hand-over, the private
registry behind basic auth, and the perl/ubuntu stand-ins. Containers are driven through CRI by hand,
step for step as kruise's SidecarSet hot upgrade and the kubelet would.

Needs root and Debian's containerd, runc, containernetworking-plugins, docker-registry and
busybox-static; skipped (with the apt-get line) where they are missing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio

from kruise.sandbox.cri.schema import enum_value, messages
from kruise.sandbox.realnode import images
from kruise.sandbox.realnode.nodes import PRIVATE_AUTH, RealNodes
from tests.kit.polling import until
from tests.kit.realnode import Pod, log_messages, skip_unless_possible

pytestmark = [
    pytest.mark.containerd,
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.asyncio(loop_scope="module"),
]

SAMPLE = images.HOTUPGRADE_SAMPLE
SUCCESS = "request sidecar server success, and response(body=This is version({}) sidecar)"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fleet(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RealNodes]:
    skip_unless_possible()
    nodes = RealNodes(tmp_path_factory.mktemp("standins"), ["node-1"])
    await nodes.start()
    try:
        yield nodes
    finally:
        assert await nodes.stop() == []


async def _exited(pod: Pod, container_id: str) -> messages.ContainerStatus:
    async def status() -> messages.ContainerStatus | None:
        answer = await pod.cri.ContainerStatus(messages.ContainerStatusRequest(container_id=container_id))
        exited = answer.status.state == enum_value("ContainerState", "CONTAINER_EXITED")
        return answer.status if exited else None

    return await until(status, timeout=60, message=f"container {container_id[:12]} exited")


async def _answers(log: Path, version: str, at_least: int, after: int = 0) -> list[str]:
    """Wait for ``at_least`` answers from ``version`` in the client's log after line ``after``."""
    line = SUCCESS.format(version)

    def enough() -> list[str] | None:
        lines = log_messages(log)
        return lines if sum(line in m for m in lines[after:]) >= at_least else None

    return await until(enough, timeout=60, message=f"{at_least} answers from {version} in {log}")


async def test_hot_upgrade_hands_the_listener_over_without_a_failed_request(fleet: RealNodes) -> None:
    node = fleet.nodes["node-1"]
    async with node.client(timeout=120.0) as cri:
        pod = Pod(node, cri, "hotupgrade-0")
        await pod.run()
        # What SidecarSet injects at creation: sidecar-1 works (version 1), sidecar-2 idles (version 0).
        working = {"IS_INJECTED": "true", "SIDECARSET_VERSION": "1", "SIDECARSET_VERSION_ALT": "0"}
        idle = {"IS_INJECTED": "true", "SIDECARSET_VERSION": "0", "SIDECARSET_VERSION_ALT": "1"}
        sidecar1 = await pod.start("sidecar-1", f"{SAMPLE}:sidecarv1", env=working)
        hook = await pod.exec(sidecar1, "/bin/sh", "/migrate.sh", timeout=70)  # the postStart hook
        assert (hook.exit_code, hook.stdout) == (0, b"check start success\n")
        sidecar2 = await pod.start("sidecar-2", f"{SAMPLE}:empty", env=idle)
        hook = await pod.exec(sidecar2, "/bin/sh", "/migrate.sh", timeout=70)
        assert (hook.exit_code, hook.stdout) == (0, b"empty image\n")
        client = await pod.start("busybox", f"{SAMPLE}:busybox")
        log = pod.log_path("busybox")
        before = len(await _answers(log, "v1", at_least=5))

        # Upgrade: the idle container restarts on sidecarv2; its postStart returns once it serves.
        await pod.stop_and_remove(sidecar2)
        newer = {"IS_INJECTED": "true", "SIDECARSET_VERSION": "2", "SIDECARSET_VERSION_ALT": "1"}
        sidecar2 = await pod.start("sidecar-2", f"{SAMPLE}:sidecarv2", env=newer, attempt=1)
        hook = await pod.exec(sidecar2, "/bin/sh", "/migrate.sh", timeout=70)
        assert (hook.exit_code, hook.stdout) == (0, b"check start success\n")
        # Reset: the old sidecar's container goes back to the empty image.
        await pod.stop_and_remove(sidecar1)
        reset = {"IS_INJECTED": "true", "SIDECARSET_VERSION": "0", "SIDECARSET_VERSION_ALT": "2"}
        await pod.start("sidecar-1", f"{SAMPLE}:empty", env=reset, attempt=1)
        lines = await _answers(log, "v2", at_least=5, after=before)

        status = (await cri.ContainerStatus(messages.ContainerStatusRequest(container_id=client))).status
        assert status.state == enum_value("ContainerState", "CONTAINER_RUNNING"), "the client loop stopped"
        failed = [m for m in lines if "success" not in m]
        assert failed == [], f"requests failed across the switch: {failed}"
        versions = [m[m.index("version(") :] for m in lines]
        switch = versions.index("version(v2) sidecar)")
        assert set(versions[:switch]) == {"version(v1) sidecar)"}
        assert set(versions[switch:]) == {"version(v2) sidecar)"}, "v1 answered after v2 took over"
        sidecar2_log = "\n".join(log_messages(pod.log_path("sidecar-2", attempt=1)))
        assert "received the listening socket" in sidecar2_log, sidecar2_log


async def test_private_image_pulls_only_with_credentials(fleet: RealNodes) -> None:
    node = fleet.nodes["node-1"]
    private = images.PRIVATE_IMAGE
    spec = messages.ImageSpec(image=private)
    async with node.client(timeout=120.0) as cri:
        with pytest.raises(grpc.aio.AioRpcError) as anonymous:
            await cri.PullImage(messages.PullImageRequest(image=spec))
        assert "401 Unauthorized" in (anonymous.value.details() or "")
        wrong = messages.AuthConfig(username=PRIVATE_AUTH.username, password="not-the-password")
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await cri.PullImage(messages.PullImageRequest(image=spec, auth=wrong))
        assert "401 Unauthorized" in (refused.value.details() or "")

        auth = messages.AuthConfig(username=PRIVATE_AUTH.username, password=PRIVATE_AUTH.password)
        await cri.PullImage(messages.PullImageRequest(image=spec, auth=auth))
        status = await cri.ImageStatus(messages.ImageStatusRequest(image=spec))
        digest = fleet.images[private]
        assert f"{images.PRIVATE_REGISTRY}/private/busybox@{digest}" in status.image.repo_digests

        pod = Pod(node, cri, "private-0")
        await pod.run()
        container = await pod.start("app", private, ["sleep", "3600"], auth=auth)
        identity = await pod.exec(container, "cat", images.IDENTITY_FILE)
        assert identity.stdout == b"private-busybox\n"


async def test_perl_computes_pi_and_ubuntu_has_bash(fleet: RealNodes) -> None:
    node = fleet.nodes["node-1"]
    async with node.client(timeout=120.0) as cri:
        pod = Pod(node, cri, "jobs-0")
        await pod.run()
        pi = await pod.start("pi", "perl:5.34", ["perl", "-Mbignum=bpi", "-wle", "print bpi(30)"])
        shell = await pod.start("shell", "ubuntu:latest", ["bash", "-c", ". /etc/os-release && echo $ID"])
        for container in (pi, shell):
            assert (await _exited(pod, container)).exit_code == 0
        assert log_messages(pod.log_path("pi")) == ["3.14159265358979323846264338328"]
        assert log_messages(pod.log_path("shell")) == ["ubuntu"]


async def test_minecraft_probe_walks_failed_then_data_then_gate(fleet: RealNodes) -> None:
    """openkruise/minecraft-demo:probe-v0 as upstream's PodProbeMarker e2e "test2" sees it: `bash
    ./probe.sh` in /data exits 1 while the gate and data processes run, then answers "data", then "gate"."""
    node = fleet.nodes["node-1"]
    async with node.client(timeout=120.0) as cri:
        pod = Pod(node, cri, "minecraft-0")
        await pod.run()
        game = await pod.start("minecraft", "openkruise/minecraft-demo:probe-v0")
        seen: list[tuple[int, str]] = []

        async def probed(answer: tuple[int, str]) -> bool:
            result = await pod.exec(game, "bash", "./probe.sh")
            outcome = (result.exit_code, result.stdout.decode().strip())
            if not seen or seen[-1] != outcome:
                seen.append(outcome)
            return outcome == answer

        # start.sh forks both processes right after the container starts
        await until(lambda: probed((1, "")), timeout=10, interval=0.2, message="probe.sh fails first")
        seen[:] = [(1, "")]
        await until(lambda: probed((0, "data")), timeout=30, interval=0.5, message="probe.sh answers data")
        await until(lambda: probed((0, "gate")), timeout=30, interval=0.5, message="probe.sh answers gate")
        assert seen == [(1, ""), (0, "data"), (0, "gate")]
        await pod.stop_and_remove(game, grace=2)
