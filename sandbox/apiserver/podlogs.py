"""``GET pods/{name}/log``: pick the container like kube-apiserver, then stream from the kubelet.

kube-apiserver validates the container choice itself (``ValidateContainer``), answers an empty
log for a pod with no node yet, and otherwise proxies to the node's kubelet
(``/containerLogs/{ns}/{pod}/{container}`` at ``status.daemonEndpoints.kubeletEndpoint.Port``),
turning a kubelet error into a Status (400 BadRequest, 404 NotFound, else 500 InternalError).
The simulated nodes' addresses are fictitious, so the emulator dials ``kubelet_host``
(loopback by default) at the advertised port; a node without a reachable kubelet (e.g. no
simulator) is a 500 naming the URL, like the apiserver's dial error.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

from kruise.sandbox.apiserver.errors import StatusError

_FORWARDED = ("follow", "previous", "timestamps", "tailLines", "sinceSeconds", "sinceTime", "limitBytes")


def choose_container(pod: dict[str, Any], requested: str) -> str:
    """The container to read, or the apiserver's BadRequest."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    containers = [c["name"] for c in spec.get("containers") or []]
    init = [c["name"] for c in spec.get("initContainers") or []]
    ephemeral = [c["name"] for c in spec.get("ephemeralContainers") or []]
    if not requested:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise StatusError(400, "BadRequest", f"no containers in pod {name}")
        message = (
            f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
        )
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        if ephemeral:
            message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
        raise StatusError(400, "BadRequest", message)
    if requested not in containers + init + ephemeral:
        raise StatusError(400, "BadRequest", f"container {requested} is not valid for pod {name}")
    return requested


def _kubelet_error(status: int, body: str) -> StatusError:
    if status == 400:
        return StatusError(400, "BadRequest", body)
    if status == 404:
        return StatusError(404, "NotFound", body)
    return StatusError(500, "InternalError", f"Internal error occurred: {body}")


async def serve(
    request: web.Request, pod: dict[str, Any], node: dict[str, Any] | None, kubelet_host: str
) -> web.StreamResponse:
    container = choose_container(pod, request.query.get("container", ""))
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        await response.prepare(request)
        await response.write_eof()
        return response
    if node is None:
        raise StatusError(404, "NotFound", f'nodes "{node_name}" not found')
    port = ((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint", {}).get("Port")
    meta = pod["metadata"]
    url = f"http://{kubelet_host}:{port}/containerLogs/{meta['namespace']}/{meta['name']}/{container}"
    params = {k: request.query[k] for k in _FORWARDED if k in request.query}
    try:
        async with aiohttp.ClientSession() as session, session.get(url, params=params) as upstream:
            if upstream.status != 200:
                raise _kubelet_error(upstream.status, (await upstream.text()).strip())
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
    except aiohttp.ClientError as exc:
        raise StatusError(500, "InternalError", f'Get "{url}": {exc}') from None
    await response.write_eof()
    return response
