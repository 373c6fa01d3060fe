"""kruise-daemon's prober against the emulator and the simulated node's fake CRI: exec probes go
through CRI ExecSync, tcpSocket and httpGet probes reach a local server, and the results (after
their thresholds) are written into the node's NodePodProbe status and follow the spec."""

from __future__ import annotations

import asyncio

import pytest

from kruise.daemon.cri.client import RuntimeClient
from kruise.daemon.podprobe.prober import PodProber
from kruise.kube.resources import NODE_POD_PROBES, PODS
from kruise.sandbox.cri.model import ExecResult
from tests.kit.daemon_node import NODE, NS, simulated_node
from tests.kit.polling import until_fetched


class Backend:
    """A local TCP/HTTP server standing in for the pod (simulated pods have no reachable IP)."""

    def __init__(self) -> None:
        self.status = 200
        self.server: asyncio.Server | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            request = b""  # a tcpSocket probe connects and closes
        if request:
            reason = b"OK" if self.status == 200 else b"Service Unavailable"
            writer.write(
                b"HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" % (self.status, reason)
            )
            await writer.drain()
        writer.close()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@pytest.fixture
async def node(emulator):
    async with simulated_node(emulator, "ppm-cri-") as (simulator, client):
        runtime = RuntimeClient(simulator.socket_path(NODE))
        runtime.open()
        prober = PodProber(client, runtime, NODE)
        prober.start()
        backend = Backend()
        port = await backend.start()
        try:
            yield client, simulator.runtimes[NODE], backend, port
        finally:
            await backend.stop()
            await prober.stop()
            await runtime.close()


def states_of(npp):
    return {
        (entry["name"], state["name"]): state
        for entry in (npp.get("status") or {}).get("podProbeStatuses") or []
        for state in entry.get("probeStates") or []
    }


async def test_exec_tcp_and_http_probes_reported_after_thresholds(node):
    client, runtime, backend, port = node
    verdict = {"idle": True}
    calls = []

    def exec_handler(container, cmd):
        calls.append((cmd, verdict["idle"]))
        if verdict["idle"]:
            return ExecResult(exit_code=0, stdout=b"idle\n")
        return ExecResult(exit_code=1, stderr=b"players online\n")

    runtime.exec_handler = exec_handler
    pod_body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "game", "namespace": NS},
        "spec": {"nodeName": NODE, "containers": [{"name": "main", "image": "nginx:alpine"}]},
    }
    await client.create(PODS, pod_body)
    pod = await until_fetched(
        lambda: client.get(PODS, "game", NS), lambda p: p.get("status", {}).get("phase") == "Running"
    )
    timing = {"periodSeconds": 1, "failureThreshold": 2}
    entry = {
        "name": "game",
        "namespace": NS,
        "uid": pod["metadata"]["uid"],
        "IP": "127.0.0.1",
        "probes": [
            {"name": "m#idle", "containerName": "main",
             "probe": {"exec": {"command": ["/idle.sh"]}, **timing}},
            {"name": "m#port", "containerName": "main", "probe": {"tcpSocket": {"port": port}, **timing}},
            {"name": "m#http", "containerName": "main",
             "probe": {"httpGet": {"path": "/healthz", "port": port}, **timing}},
        ],
    }  # fmt: skip
    npp = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodePodProbe", "metadata": {"name": NODE}}
    await client.create(NODE_POD_PROBES, {**npp, "spec": {"podProbes": [entry]}})

    async def current():
        return await client.get(NODE_POD_PROBES, NODE)

    ok = await until_fetched(
        current, lambda o: [s["state"] for s in states_of(o).values()] == ["Succeeded"] * 3
    )
    idle = states_of(ok)[("game", "m#idle")]
    assert idle["message"] == "idle" and idle["lastProbeTime"] and idle["lastTransitionTime"]
    assert calls[0] == (["/idle.sh"], True)
    assert [s["name"] for s in ok["status"]["podProbeStatuses"][0]["probeStates"]] == [
        "m#idle",
        "m#port",
        "m#http",
    ]

    verdict["idle"] = False
    backend.status = 503
    flipped = await until_fetched(
        current,
        lambda o: (
            states_of(o)[("game", "m#idle")]["state"] == "Failed"
            and states_of(o)[("game", "m#http")]["state"] == "Failed"
        ),
    )
    states = states_of(flipped)
    assert states[("game", "m#idle")]["message"] == "players online"
    assert "503" in states[("game", "m#http")]["message"]
    assert states[("game", "m#port")]["state"] == "Succeeded"
    failures = [c for c in calls if not c[1]]
    assert len(failures) >= 2  # failureThreshold 2: one failure alone reports nothing

    latest = await current()
    latest["spec"]["podProbes"][0]["probes"] = latest["spec"]["podProbes"][0]["probes"][1:2]
    await client.update(NODE_POD_PROBES, latest)
    trimmed = await until_fetched(current, lambda o: list(states_of(o)) == [("game", "m#port")])
    assert trimmed["status"]["podProbeStatuses"][0]["uid"] == pod["metadata"]["uid"]
    latest = await current()
    latest["spec"] = {}
    await client.update(NODE_POD_PROBES, latest)
    await until_fetched(current, lambda o: not (o.get("status") or {}).get("podProbeStatuses"))
