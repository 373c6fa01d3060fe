"""``pods/{name}/exec`` and ``pods/{name}/attach``: validate like kube-apiserver, relay to the kubelet.

kube-apiserver checks the options (``ValidatePodExecOptions``: a command, at least one stream),
picks the container as for logs, refuses a pod without a node, and then streams to the node's
kubelet (``/exec/{ns}/{pod}/{container}`` at ``status.daemonEndpoints.kubeletEndpoint.Port``).
kubectl 1.30+ asks with a WebSocket (``v5.channel.k8s.io``); kube-apiserver upgrades it and
translates to the kubelet, reporting a kubelet's refusal as a Status on the error channel. This
emulator speaks WebSocket on both hops (``kruise.sandbox.streaming``): it upgrades the client
once the kubelet has accepted, or writes the dial error as that Status. aiohttp cannot take over a
SPDY upgrade, so a SPDY request (kubectl before 1.30) gets a 400 that says so.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

from kruise.sandbox import streaming
from kruise.sandbox.apiserver.errors import StatusError, field_error, invalid
from kruise.sandbox.apiserver.podlogs import choose_container

_FORWARDED = ("stdin", "stdout", "stderr", "tty")
_KIND = {"exec": "PodExecOptions", "attach": "PodAttachOptions"}


def _flag(request: web.Request, key: str) -> bool:
    return request.query.get(key, "").lower() in ("1", "true")


def validate(verb: str, request: web.Request, name: str) -> None:
    """ValidatePodExecOptions / ValidatePodAttachOptions."""
    causes = []
    if verb == "exec" and not request.query.getall("command", []):
        causes.append(field_error("FieldValueRequired", "command", "", ""))
    if not any(_flag(request, k) for k in ("stdin", "stdout", "stderr")):
        causes.append(
            field_error(
                "FieldValueRequired", "stdin", "", "must be true for at least one of stdin, stdout, or stderr"
            )
        )
    if causes:
        raise invalid("", _KIND[verb], name, causes)


def kubelet_url(
    verb: str, request: web.Request, pod: dict[str, Any], container: str, port: object, host: str
) -> tuple[str, list[tuple[str, str]]]:
    """The kubelet's URL and query for this session (the container is in the path)."""
    meta = pod["metadata"]
    params = [("command", c) for c in request.query.getall("command", [])] if verb == "exec" else []
    params += [(k, "true") for k in _FORWARDED if _flag(request, k)]
    return f"http://{host}:{port}/{verb}/{meta['namespace']}/{meta['name']}/{container}", params


async def serve(
    request: web.Request, verb: str, pod: dict[str, Any], node: dict[str, Any] | None, kubelet_host: str
) -> web.StreamResponse:
    name = pod["metadata"]["name"]
    validate(verb, request, name)
    container = choose_container(pod, request.query.get("container", ""))
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        raise StatusError(400, "BadRequest", f"pod {name} does not have a host assigned")
    if node is None:
        raise StatusError(404, "NotFound", f'nodes "{node_name}" not found')
    if not streaming.is_websocket(request):
        raise StatusError(
            400,
            "BadRequest",
            f"Upgrade request required: the sandbox API emulator streams {verb} over WebSocket only "
            f"({', '.join(streaming.SUPPORTED)}; kubectl 1.30 and later use it), not SPDY",
        )
    protocol = streaming.choose(streaming.offered(request))
    if protocol is None:
        supported = ", ".join(streaming.SUPPORTED)
        raise StatusError(400, "BadRequest", f"unable to upgrade: supported subprotocols are {supported}")
    port = ((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint", {}).get("Port")
    url, params = kubelet_url(verb, request, pod, container, port, kubelet_host)
    async with aiohttp.ClientSession() as session:
        try:
            upstream = await session.ws_connect(url, params=params, protocols=[protocol], max_msg_size=0)
        except aiohttp.ClientError as exc:
            message = f'Internal error occurred: error dialing backend: "{url}": {exc}'
            return await streaming.refuse(request, protocol, streaming.failure(500, "InternalError", message))
        downstream = await streaming.accept(request, protocol)
        await streaming.relay(downstream, upstream)
    return downstream
