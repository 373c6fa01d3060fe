"""The kubelet's ``/exec/{ns}/{pod}/{container}`` and ``/attach/...``: CRI streaming, proxied.

A kubelet answers these by asking its runtime for a streaming URL (CRI Exec / Attach) and proxying
the caller's upgraded connection to that URL (kubelet's default since streaming redirects went
away). This one speaks WebSocket remotecommand (see ``kruise.sandbox.streaming``): it accepts the
caller's upgrade, dials the runtime's streaming server and relays every message. The request's
options are checked as the kubelet's ``remotecommand.NewOptions`` does (at least one stream;
a TTY has no separate stderr). Refusals found after the upgrade - the fake runtime has no
streaming server, the container is not running - go to the caller as a Status on the error
channel, which is how kube-apiserver reports a kubelet's refusal to kubectl's WebSocket.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web

from kruise.sandbox import streaming
from kruise.sandbox.cri.errors import CriError
from kruise.sandbox.simulator.noderuntime import StreamingUnsupported, StreamOptions

if TYPE_CHECKING:
    from kruise.sandbox.simulator.kubelet import Kubelet


def _flag(request: web.Request, key: str) -> bool:
    return request.query.get(key, "").lower() in ("1", "true")


def stream_options(request: web.Request) -> StreamOptions:
    """The streams the caller asked for, or 400 when it asked for none."""
    stdin, stdout, stderr, tty = (_flag(request, k) for k in ("stdin", "stdout", "stderr", "tty"))
    if not (stdin or stdout or stderr):
        raise web.HTTPBadRequest(text="you must specify at least 1 of stdin, stdout, stderr")
    return StreamOptions(stdin=stdin, stdout=stdout, stderr=stderr and not tty, tty=tty)


async def _url(kubelets: Mapping[str, Kubelet], request: web.Request, verb: str) -> str:
    """Ask the pod's runtime for a streaming URL; web.HTTPException subclasses carry refusals."""
    namespace, pod, container = (request.match_info[k] for k in ("namespace", "pod", "container"))
    options = stream_options(request)
    command = request.query.getall("command", [])
    if verb == "exec" and not command:
        raise web.HTTPBadRequest(text="you must specify at least 1 command")
    key = f"{namespace}/{pod}"
    kubelet = next((k for k in kubelets.values() if key in k.runs), None)
    run = kubelet.runs.get(key) if kubelet is not None else None
    if kubelet is None or run is None:
        raise web.HTTPNotFound(text=f'pod "{key}" not found')
    slot = run.slots.get(container)
    if slot is None or not slot.container_id:
        raise web.HTTPNotFound(text=f'container not found ("{container}")')
    try:
        if verb == "exec":
            return await kubelet.runtime.exec_stream(slot.container_id, command, options)
        return await kubelet.runtime.attach_stream(slot.container_id, options)
    except StreamingUnsupported as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    except CriError as exc:
        raise web.HTTPInternalServerError(text=f"{verb}: {exc}") from None


_REASONS = {400: "BadRequest", 404: "NotFound"}


async def serve(kubelets: Mapping[str, Kubelet], request: web.Request, verb: str) -> web.StreamResponse:
    if not streaming.is_websocket(request):
        raise web.HTTPBadRequest(text=f"{verb}: Upgrade request required (WebSocket remotecommand)")
    protocol = streaming.choose(streaming.offered(request))
    if protocol is None:
        supported = ", ".join(streaming.SUPPORTED)
        raise web.HTTPBadRequest(text=f"{verb}: no offered subprotocol is supported ({supported})")
    try:
        url = await _url(kubelets, request, verb)
    except web.HTTPException as exc:
        status = streaming.failure(exc.status, _REASONS.get(exc.status, "InternalError"), exc.text or "")
        return await streaming.refuse(request, protocol, status)
    async with aiohttp.ClientSession() as session:
        try:
            offer = streaming.upstream_offer(protocol)
            upstream = await session.ws_connect(url, protocols=offer, max_msg_size=0)
        except aiohttp.ClientError as exc:
            message = f"{verb}: the runtime's streaming server refused the connection: {exc}"
            return await streaming.refuse(request, protocol, streaming.failure(500, "InternalError", message))
        if not streaming.compatible(protocol, upstream.protocol):
            await upstream.close()
            message = f"{verb}: the runtime's streaming server speaks {upstream.protocol!r}, not {protocol}"
            return await streaming.refuse(request, protocol, streaming.failure(500, "InternalError", message))
        downstream = await streaming.accept(request, protocol)
        await streaming.relay(downstream, upstream)
    return downstream
