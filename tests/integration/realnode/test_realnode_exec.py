"""``kubectl exec`` on a real containerd: API emulator -> kubelet API -> CRI Exec streaming server.

The pod runs on a real node (containerd, runc, a stand-in busybox); the kubelet API serves it from a
kubelet stand-in that knows the pod's container and asks containerd for the streaming URL (CRI
Exec), which is what the CRI back-end's ``exec_stream`` does. kubectl talks WebSocket
(v5.channel.k8s.io) to the emulator, which relays to the kubelet API, which relays to containerd.

Needs root and Debian's containerd, runc, containernetworking-plugins, docker-registry and
busybox-static; skipped (with the apt-get line) where they are missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest
import pytest_asyncio

from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.realnode.nodes import RealNodes
from kruise.sandbox.simulator import cri_streams
from kruise.sandbox.simulator.kubelet import PodRun, Slot
from kruise.sandbox.simulator.kubelet_api import KubeletApi
from kruise.sandbox.simulator.noderuntime import StreamOptions
from tests.kit.polling import until
from tests.kit.realnode import Pod, skip_unless_possible

pytestmark = [pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(300)]

KUBECTL = Path(sys.executable).parent / "kubectl"
NODE = "node-1"


class CriStreams:
    """The streaming part of a CRI back-end (``cri_streams``), over one CRI client."""

    def __init__(self, cri: CriClient) -> None:
        self.cri = cri

    async def exec_stream(self, container_id: str, command: Sequence[str], options: StreamOptions) -> str:
        return await cri_streams.exec_url(self.cri, container_id, command, options)

    async def attach_stream(self, container_id: str, options: StreamOptions) -> str:
        return await cri_streams.attach_url(self.cri, container_id, options)


@dataclass
class KubeletStandIn:
    """What the kubelet API reads of a kubelet: the pods it runs and its runtime."""

    runtime: CriStreams
    runs: dict[str, PodRun] = field(default_factory=dict)
    pods: dict[str, dict] = field(default_factory=dict)


@dataclass
class Node:
    fleet: RealNodes
    pod: Pod
    shell: str
    api: KubeletApi


@pytest_asyncio.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    skip_unless_possible()
    fleet = RealNodes(tmp_path / "fleet", [NODE])
    await fleet.start()
    try:
        async with fleet.nodes[NODE].client(timeout=120.0) as cri:
            pod = Pod(fleet.nodes[NODE], cri, "web")
            await pod.run()
            shell = await pod.start("shell", "busybox", ["sleep", "3600"])
            kubelet = KubeletStandIn(CriStreams(cri))
            run = PodRun(uid="uid-web", sandbox_id=pod.id, ip=str(pod.ip), start_time="")
            run.slots["shell"] = Slot("shell", container_id=shell)
            kubelet.runs["default/web"] = run
            api = KubeletApi({NODE: kubelet})  # type: ignore[dict-item]
            await api.start()
            try:
                yield Node(fleet, pod, shell, api)
            finally:
                await api.stop()
    finally:
        assert await fleet.stop() == []


async def _frames(url: str, protocol: str, send: Sequence[bytes] = ()) -> dict[int, bytes]:
    """Run one session against the kubelet API; the bytes per channel when the server closes."""
    received: dict[int, bytes] = {}
    async with aiohttp.ClientSession() as session, session.ws_connect(url, protocols=[protocol]) as ws:
        assert ws.protocol == protocol
        for frame in send:
            await ws.send_bytes(frame)
        async for message in ws:
            assert message.type == aiohttp.WSMsgType.BINARY, message
            received[message.data[0]] = received.get(message.data[0], b"") + message.data[1:]
    return received


@pytest.mark.parametrize("protocol", ["v5.channel.k8s.io", "v4.channel.k8s.io"])
async def test_kubelet_api_relays_cri_exec(node: Node, protocol: str) -> None:
    base = f"http://127.0.0.1:{node.api.port}/exec/default/web/shell"
    script = "echo out; echo err >&2; cat /etc/kruise-standin; exit 3"
    url = f"{base}?" + urlencode([("command", "sh"), ("command", "-c"), ("command", script)])
    got = await _frames(url + "&stdout=true&stderr=true", protocol)
    assert got[1] == b"out\nbusybox\n" and got[2] == b"err\n"
    status = json.loads(got[3])
    assert (status["status"], status["reason"]) == ("Failure", "NonZeroExitCode")
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]

    head = f"{base}?command=head&command=-n1&stdin=true&stdout=true"
    echoed = await _frames(head, protocol, [b"\0hello\n"])
    assert echoed[1] == b"hello\n"
    assert json.loads(echoed[3])["status"] == "Success"


async def test_unknown_container_is_a_status_on_the_error_channel(node: Node) -> None:
    url = f"http://127.0.0.1:{node.api.port}/exec/default/web/nope?command=true&stdout=true"
    got = await _frames(url, "v5.channel.k8s.io")
    assert json.loads(got[3])["message"] == 'container not found ("nope")'


def _kubectl(emulator) -> list[str]:  # type: ignore[no-untyped-def]
    if not KUBECTL.exists() and shutil.which("kubectl") is None:
        pytest.skip("kubectl binary not available")
    binary = str(KUBECTL) if KUBECTL.exists() else str(shutil.which("kubectl"))
    return [binary, "--kubeconfig", str(emulator.kubeconfig)]


async def _register(emulator, node: Node) -> None:  # type: ignore[no-untyped-def]
    """The Node (advertising the kubelet API's port) and the Pod bound to it, as the API sees them."""
    manifests = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": NODE},
            "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": node.api.port}}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": [{"name": "shell", "image": "busybox"}]},
        },
    ]
    for manifest in manifests:
        process = await asyncio.create_subprocess_exec(
            *_kubectl(emulator),
            "create",
            "-f",
            "-",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await process.communicate(json.dumps(manifest).encode())
        assert process.returncode == 0, err.decode()


async def _run(argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 60)
    return process.returncode or 0, out.decode(), err.decode()


async def test_kubectl_exec_through_the_emulator(node: Node, emulator) -> None:  # type: ignore[no-untyped-def]
    kubectl = _kubectl(emulator)
    await _register(emulator, node)
    code, out, err = await _run([*kubectl, "exec", "web", "--", "sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (code, out, err) == (3, "out\n", "err\ncommand terminated with exit code 3\n"), err
    code, out, err = await _run([*kubectl, "exec", "-i", "web", "--", "head", "-n1"], stdin=b"hello\n")
    assert (code, out) == (0, "hello\n"), err
    code, out, err = await _run([*kubectl, "exec", "web", "-c", "nope", "--", "true"])
    assert code == 1 and "container nope is not valid for pod web" in err, err


async def test_kubectl_exec_it_gets_a_terminal(node: Node, emulator) -> None:  # type: ignore[no-untyped-def]
    kubectl = _kubectl(emulator)
    await _register(emulator, node)
    primary, secondary = pty.openpty()
    process = await asyncio.create_subprocess_exec(
        *kubectl, "exec", "-it", "web", "--", "sh", stdin=secondary, stdout=secondary, stderr=secondary
    )
    os.close(secondary)
    output = bytearray()
    loop = asyncio.get_running_loop()

    def read() -> None:
        try:
            output.extend(os.read(primary, 4096))
        except OSError:
            loop.remove_reader(primary)

    loop.add_reader(primary, read)
    try:
        await until(lambda: output, timeout=30, message="the shell's prompt")
        os.write(primary, b"tty; echo answer=$((6*7))\r")
        await until(lambda: b"answer=42" in output, timeout=30, message=f"the answer in {bytes(output)!r}")
        assert b"/dev/pts/" in output, bytes(output)
        os.write(primary, b"exit 0\r")
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        loop.remove_reader(primary)
        os.close(primary)
        if process.returncode is None:
            process.kill()
            await process.wait()
