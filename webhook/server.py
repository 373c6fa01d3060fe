"""Running the app under uvicorn over HTTPS with a certificate that can change under it.

uvicorn builds one `ssl.SSLContext` at load time and uses it for every new connection; calling
`load_cert_chain` on that same context swaps the certificate for all later handshakes, so a renewed
certificate takes effect without a restart and without dropping open connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from kruise.webhook.app import WebhookApp


class _Server(uvicorn.Server):
    """uvicorn's server plus an event for "listening", so callers wait on it instead of polling."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Signals belong to the process owner (`kruise.webhook.main`), which stops everything in order;
        uvicorn's own capture would re-raise SIGTERM after serving and kill the process mid-cleanup."""
        yield

    async def startup(self, sockets: list | None = None) -> None:  # type: ignore[type-arg]
        await super().startup(sockets)
        if self.started:
            self.listening.set()


class HTTPSServer:
    def __init__(
        self,
        app: WebhookApp,
        host: str,
        port: int,
        cert_file: Path,
        key_file: Path,
        shutdown_grace: float = 10.0,
    ) -> None:
        """`shutdown_grace` bounds the wait for open connections on stop: an idle keep-alive peer that
        never answers TLS close_notify would otherwise hold shutdown for asyncio's 30 s SSL timeout."""
        self.cert_file = cert_file
        self.key_file = key_file
        self.config = uvicorn.Config(
            app,
            host=host,
            port=port,
            ssl_certfile=str(cert_file),
            ssl_keyfile=str(key_file),
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=shutdown_grace,
        )
        self.config.load()
        self.server = _Server(self.config)
        self.task: asyncio.Task[None] | None = None
        self.reloads = 0

    @property
    def ssl_context(self) -> ssl.SSLContext:
        assert self.config.ssl is not None
        return self.config.ssl

    def reload_certificate(self) -> None:
        self.ssl_context.load_cert_chain(str(self.cert_file), str(self.key_file))
        self.reloads += 1

    @property
    def started(self) -> bool:
        return self.server.started

    def bound_port(self) -> int:
        """The real port (useful with port 0 in tests)."""
        for server in self.server.servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        raise RuntimeError("server is not listening")

    async def serve(self) -> None:
        await self.server.serve()

    async def start(self, timeout: float = 30.0) -> asyncio.Task[None]:
        """Serve in a task; return it once listening, or raise why it could not start."""
        self.task = asyncio.create_task(self.serve(), name="https")
        listening = asyncio.create_task(self.server.listening.wait())
        done, _ = await asyncio.wait(
            {self.task, listening}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if listening not in done:
            listening.cancel()
            if self.task in done:
                self.task.result()  # re-raises the startup failure
            self.stop()
            raise RuntimeError(f"HTTPS server did not start within {timeout}s")
        return self.task

    def stop(self) -> None:
        self.server.should_exit = True
