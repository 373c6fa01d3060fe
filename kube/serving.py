"""The metrics and health endpoints every kruise process serves.

`/metrics` exposes prometheus-client's registry (workqueue, controller, leader metrics included);
`/healthz` and `/readyz` run named checks with the Kubernetes response format: `ok` when all pass,
otherwise (or with `?verbose`) one `[+]name ok` / `[-]name failed: reason withheld` line per check.
`/healthz/<name>` runs a single check.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

Check = Callable[[], bool | Awaitable[bool | None] | None]


async def _run(check: Check) -> bool:
    """A check passes by returning None/True; False or an exception fails it."""
    try:
        result = check()
        if inspect.isawaitable(result):
            result = await result
    except Exception:
        return False
    return result is None or bool(result)


class ProbeServer:
    """HTTP server for `/metrics`, `/healthz` and `/readyz` on one port."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 8080, registry: CollectorRegistry = REGISTRY
    ) -> None:
        self.host = host
        self.port = port
        self.registry = registry
        self.checks: dict[str, dict[str, Check]] = {
            "healthz": {"ping": lambda: True},
            "readyz": {"ping": lambda: True},
        }
        self._runner: web.AppRunner | None = None

    def add_healthz_check(self, name: str, check: Check) -> None:
        self._add("healthz", name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        self._add("readyz", name, check)

    def _add(self, kind: str, name: str, check: Check) -> None:
        if not name or "/" in name:
            raise ValueError(f"{kind} check name: must be non-empty and contain no '/', got {name!r}")
        if name in self.checks[kind]:
            raise ValueError(f"{kind} check {name!r}: already added")
        self.checks[kind][name] = check

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        for kind in ("healthz", "readyz"):
            app.router.add_get(f"/{kind}", self._probe(kind))
            app.router.add_get(f"/{kind}/{{name}}", self._probe(kind))
        return app

    async def start(self) -> int:
        """Start serving; returns the bound port (useful with port=0)."""
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        addresses = self._runner.addresses
        if addresses:
            self.port = addresses[0][1]
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    def _probe(self, kind: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            checks = self.checks[kind]
            name = request.match_info.get("name")
            if name is not None:
                if name not in checks:
                    raise web.HTTPNotFound(text=f"{kind} check {name!r} not found\n")
                ok = await _run(checks[name])
                return web.Response(
                    status=200 if ok else 500, text="ok" if ok else f"internal server error: {name} failed"
                )
            results = {n: await _run(c) for n, c in checks.items()}
            passed = all(results.values())
            if passed and "verbose" not in request.query:
                return web.Response(text="ok")
            lines = [f"[+]{n} ok" if ok else f"[-]{n} failed: reason withheld" for n, ok in results.items()]
            lines.append(f"{kind} check {'passed' if passed else 'failed'}")
            return web.Response(status=200 if passed else 500, text="\n".join(lines) + "\n")

        return handler
