"""Probe handlers of kruise-daemon that need no runtime: tcpSocket refused, an unknown handler,
and httpGet scheme/path/header handling against a local server."""

from __future__ import annotations

import asyncio
import socket

from kruise.daemon.podprobe import checks


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_tcp_refused_fails_with_the_address():
    port = closed_port()
    state, message = await checks.run_tcp("127.0.0.1", port, 1)
    assert (state, message) == ("Failed", f"dial tcp 127.0.0.1:{port}: connect: connection refused")


async def test_http_sends_path_and_headers_and_accepts_redirect_range():
    seen = []

    async def handle(reader, writer):
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        action = {"port": port, "path": "ready", "httpHeaders": [{"name": "X-Probe", "value": "idle"}]}
        assert await checks.run_http("127.0.0.1", action, 2) == ("Succeeded", "")
    finally:
        server.close()
        await server.wait_closed()
    request = seen[0].decode()
    assert request.startswith("GET /ready HTTP/1.1") and "X-Probe: idle" in request


async def test_unknown_handler_and_missing_ip():
    pod = {"uid": "u", "IP": ""}
    assert await checks.run_probe(None, pod, {"probe": {"tcpSocket": {"port": 80}}}, 1) is None
    assert await checks.run_probe(None, {**pod, "IP": "127.0.0.1"}, {"probe": {}}, 1) == (
        "Failed",
        "probe has no exec, tcpSocket or httpGet handler",
    )
