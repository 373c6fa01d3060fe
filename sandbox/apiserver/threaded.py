"""Run an `ApiServer` on its own event loop in a background thread.

Tests need the emulator from sync and async code alike (including fixtures resolved lazily
while another loop is running), and a server on its own loop keeps answering even when the code
under test blocks its loop — as a real apiserver would.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kruise.sandbox.apiserver.server import ApiServer


@contextmanager
def serve_in_thread(host: str = "127.0.0.1", port: int = 0, **options: Any) -> Iterator[ApiServer]:
    """Start `ApiServer(**options)` in a daemon thread; yield it once it listens; stop it on exit."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def boot() -> None:
            try:
                server = ApiServer(**options)
                await server.start(host, port)
                holder["server"] = server
            except BaseException as exc:  # surfaced to the caller below
                holder["error"] = exc
            finally:
                ready.set()

        loop.run_until_complete(boot())
        if "server" in holder:
            loop.run_forever()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    thread = threading.Thread(target=run, name="sandbox-apiserver", daemon=True)
    thread.start()
    ready.wait()
    if "error" in holder:
        thread.join()
        raise holder["error"]
    server: ApiServer = holder["server"]
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
