"""A scripted HTTP handler served on 127.0.0.1 with a kubeconfig pointing at it.

Unit tests of the wire-level client (`kruise.kube.client.Client`) answer requests with an aiohttp
handler of their own; this is the one place that starts it and writes the kubeconfig for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import yaml
from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@asynccontextmanager
async def served(handler: Handler, directory: Path, token: str = "t") -> AsyncIterator[Path]:
    """Serve `handler` for every path and method; yields the kubeconfig (bearer `token`) for it."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    kubeconfig = directory / "kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    kubeconfig.write_text(yaml.safe_dump(config))
    try:
        yield kubeconfig
    finally:
        await runner.cleanup()
