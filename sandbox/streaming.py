"""kubectl exec/attach streams: WebSocket remotecommand, relayed hop by hop (apiserver, kubelet, runtime).

kubectl (1.30+) opens exec and attach as a WebSocket with subprotocol ``v5.channel.k8s.io``; older
clients and the Python Kubernetes clients offer ``v4.channel.k8s.io``. Every binary message starts
with its channel: 0 stdin, 1 stdout, 2 stderr, 3 error (a ``metav1.Status`` in JSON), 4 terminal
resize; v5 adds 255, "close this stream" (stdin EOF). A container runtime's streaming server that
speaks only v4 (containerd 1.6) ignores channel 255, so v5 downstream over v4 upstream is a plain
relay that loses only stdin half-close.

Errors after the upgrade travel as a Status on channel 3, as kube-apiserver's stream translator
reports a kubelet's refusal; kubectl prints the Status message and exits non-zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any

import aiohttp
from aiohttp import web

V5 = "v5.channel.k8s.io"
V4 = "v4.channel.k8s.io"
SUPPORTED = (V5, V4)
ERROR_CHANNEL = 3

WebSocket = web.WebSocketResponse | aiohttp.ClientWebSocketResponse


def is_websocket(request: web.Request) -> bool:
    upgrade = request.headers.get("Upgrade", "").lower()
    return upgrade == "websocket" and "upgrade" in request.headers.get("Connection", "").lower()


def offered(request: web.Request) -> list[str]:
    """The subprotocols the client offers, in its order (the header may repeat)."""
    found: list[str] = []
    for header in request.headers.getall("Sec-WebSocket-Protocol", []):
        found += [p.strip() for p in header.split(",") if p.strip()]
    return found


def choose(protocols: Sequence[str]) -> str | None:
    """The first offered protocol this relay speaks, or None."""
    return next((p for p in protocols if p in SUPPORTED), None)


def upstream_offer(protocol: str) -> list[str]:
    """What to offer the next hop for a downstream ``protocol``: v5 may fall back to v4 (see module doc)."""
    return [V5, V4] if protocol == V5 else [protocol]


def compatible(downstream: str, upstream: str | None) -> bool:
    return upstream == downstream or (downstream == V5 and upstream == V4)


def failure(code: int, reason: str, message: str) -> dict[str, Any]:
    """A ``metav1.Status`` failure, as the error channel carries it."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


async def accept(request: web.Request, protocol: str) -> web.WebSocketResponse:
    socket = web.WebSocketResponse(protocols=(protocol,), max_msg_size=0, autoping=True)
    await socket.prepare(request)
    return socket


async def refuse(request: web.Request, protocol: str, status: dict[str, Any]) -> web.WebSocketResponse:
    """Upgrade, write ``status`` on the error channel and close: how a refusal after upgrade looks."""
    socket = await accept(request, protocol)
    await socket.send_bytes(bytes([ERROR_CHANNEL]) + json.dumps(status).encode())
    await socket.close()
    return socket


async def _pump(source: WebSocket, target: WebSocket) -> None:
    async for message in source:
        if message.type == aiohttp.WSMsgType.BINARY:
            await target.send_bytes(message.data)
        elif message.type == aiohttp.WSMsgType.TEXT:
            await target.send_str(message.data)
        elif message.type == aiohttp.WSMsgType.ERROR:
            break


async def relay(downstream: WebSocket, upstream: WebSocket) -> None:
    """Copy messages both ways until either side closes, then close the other side too."""
    pumps = [
        asyncio.ensure_future(_pump(downstream, upstream)),
        asyncio.ensure_future(_pump(upstream, downstream)),
    ]
    try:
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pump in pumps:
            pump.cancel()
        for pump in pumps:
            with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError, ConnectionError):
                await pump
        for side in (upstream, downstream):
            with contextlib.suppress(aiohttp.ClientError, ConnectionError, RuntimeError):
                await side.close()
