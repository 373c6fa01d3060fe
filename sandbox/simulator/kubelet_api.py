"""The kubelet's HTTP API subset the apiserver calls: ``GET /containerLogs/{ns}/{pod}/{container}``,
and ``/exec`` and ``/attach`` (``kubelet_exec``: CRI streaming, WebSocket relayed).

A real apiserver serves ``pods/log`` by dialling the node's kubelet at its address and
``status.daemonEndpoints.kubeletEndpoint.Port``. One server answers for every simulated node
(pods are found in whichever kubelet runs them) and each node advertises its port. It listens
on loopback with plain HTTP and no authentication: the simulated nodes' InternalIPs are
fictitious, so the sandbox emulator dials kubelets on 127.0.0.1 (see its ``pods/log``).
Errors use the kubelet's texts and codes (400 for a container that has not started or has
no previous instance, 404 for an unknown pod), which the apiserver turns into Status bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from aiohttp import web

from kruise.sandbox.simulator import kubelet_exec
from kruise.sandbox.simulator.logs import LogOptions, NoInstance

if TYPE_CHECKING:
    from kruise.sandbox.simulator.kubelet import Kubelet


def _int(query: Mapping[str, str], key: str) -> int | None:
    value = query.get(key)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise web.HTTPBadRequest(text=f"invalid {key}: {value!r}") from None


def _bool(query: Mapping[str, str], key: str) -> bool:
    return query.get(key, "").lower() in ("1", "true")


def log_options(query: Mapping[str, str]) -> LogOptions:
    since_ns = None
    if (seconds := _int(query, "sinceSeconds")) is not None:
        since_ns = int((datetime.now().timestamp() - seconds) * 1e9)
    elif query.get("sinceTime"):
        try:
            stamp = datetime.fromisoformat(query["sinceTime"].replace("Z", "+00:00"))
        except ValueError:
            raise web.HTTPBadRequest(text=f"invalid sinceTime: {query['sinceTime']!r}") from None
        since_ns = int(stamp.timestamp() * 1e9)
    return LogOptions(
        previous=_bool(query, "previous"),
        timestamps=_bool(query, "timestamps"),
        tail_lines=_int(query, "tailLines"),
        since_ns=since_ns,
        limit_bytes=_int(query, "limitBytes"),
        follow=_bool(query, "follow"),
    )


async def _healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


class KubeletApi:
    """Serves container logs of every kubelet in ``kubelets`` (node name -> Kubelet)."""

    def __init__(self, kubelets: Mapping[str, Kubelet]) -> None:
        self.kubelets = kubelets
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        app = web.Application()
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._logs)
        for verb in ("exec", "attach"):
            handler = self._streamer(verb)
            app.router.add_route("GET", f"/{verb}/{{namespace}}/{{pod}}/{{container}}", handler)
            app.router.add_route("POST", f"/{verb}/{{namespace}}/{{pod}}/{{container}}", handler)
        app.router.add_get("/healthz", _healthz)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _streamer(self, verb: str):  # type: ignore[no-untyped-def]
        async def handle(request: web.Request) -> web.StreamResponse:
            return await kubelet_exec.serve(self.kubelets, request, verb)

        return handle

    async def _logs(self, request: web.Request) -> web.StreamResponse:
        namespace, pod, container = (request.match_info[k] for k in ("namespace", "pod", "container"))
        options = log_options(request.query)
        key = f"{namespace}/{pod}"
        kubelet = next((k for k in self.kubelets.values() if key in k.runs or k.pods.get(key)), None)
        if kubelet is None:
            raise web.HTTPNotFound(text=f'pod "{key}" not found')
        run = kubelet.runs.get(key)
        try:
            if run is None:
                raise NoInstance(container)
            read = kubelet.runtime.open_log(run.uid, container, options.previous)
        except NoInstance:
            if options.previous:
                raise web.HTTPBadRequest(
                    text=f'previous terminated container "{container}" in pod "{pod}" not found'
                ) from None
            slot = run.slots.get(container) if run else None
            reason = slot.waiting[0] if slot and slot.waiting else "ContainerCreating"
            raise web.HTTPBadRequest(
                text=f'container "{container}" in pod "{pod}" is waiting to start: {reason}'
            ) from None
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        async for chunk in read(options):
            await response.write(chunk)
        await response.write_eof()
        return response
