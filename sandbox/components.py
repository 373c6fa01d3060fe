"""Extra processes a Sandbox runs next to the cluster, e.g. kruise-webhook, kruise-manager, kruise-daemon.

A real cluster runs them as pods behind Services; the sandbox runs them as local processes and
tells webhook admission where each Service's port really listens. The process gets the sandbox's
kubeconfig through ``KUBECONFIG`` (and ``{kubeconfig}``/``{server}`` placeholders in its argv),
is considered started when it prints ``ready_line``, and is stopped with SIGTERM, then SIGKILL (and
killed by the kernel if the sandbox dies first, see ``simulator.deathsignal``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from kruise.sandbox.simulator.deathsignal import die_with_parent

if TYPE_CHECKING:
    from kruise.sandbox.cluster import Sandbox


@dataclass(frozen=True)
class ServicePort:
    """Service ``name.namespace.svc:port`` is served by this process on 127.0.0.1:``target_port``."""

    namespace: str
    name: str
    port: int
    target_port: int


class ComponentFailed(RuntimeError):
    """The process exited or stayed silent before it was ready; carries its last output lines."""


class ProcessComponent:
    """One local process, started after the cluster and stopped before it."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        services: Sequence[ServicePort] = (),
        ready_line: str | None = None,
        ready_timeout: float = 60.0,
        stop_timeout: float = 10.0,
        log: Callable[[str], None] | None = None,
        log_file: Path | None = None,
    ) -> None:
        """`log` receives every output line as it comes; `log_file` keeps them all (appended, so a restart
        does not erase what came before) where a person can `tail -f` them."""
        if not argv:
            raise ValueError(f"{name}: argv: must name a program")
        self.name = name
        self.argv = list(argv)
        self.env = dict(env or {})
        self.services = list(services)
        self.ready_line = ready_line
        self.ready_timeout = ready_timeout
        self.stop_timeout = stop_timeout
        self.log = log
        self.log_file = log_file
        self._log_stream: TextIO | None = None
        self.output: deque[str] = deque(maxlen=200)
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def start(self, sandbox: Sandbox) -> None:
        simulator = sandbox.simulator
        sockets = simulator.cri_socket_dir if simulator is not None else None
        values = {
            "kubeconfig": str(sandbox.kubeconfig),
            "server": sandbox.url,
            "cri_socket_dir": str(sockets or ""),
        }
        argv = [arg.format(**values) for arg in self.argv]
        env = {**os.environ, **self.env, "KUBECONFIG": str(sandbox.kubeconfig)}
        self._process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
            preexec_fn=die_with_parent(),  # gone with the sandbox, even a SIGKILLed one
        )  # fmt: skip
        if self.log_file is not None:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            self._log_stream = self.log_file.open("a", encoding="utf-8", buffering=1)
        self._reader = asyncio.create_task(self._read_output(), name=f"{self.name}-output")
        for service in self.services:
            sandbox.register_service(
                service.namespace, service.name, service.port, f"127.0.0.1:{service.target_port}"
            )
        if self.ready_line is not None:
            await self._wait_ready()

    async def _wait_ready(self) -> None:
        assert self._reader is not None
        ready = asyncio.create_task(self._ready.wait())
        try:
            done, _ = await asyncio.wait(
                {ready, self._reader}, timeout=self.ready_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            ready.cancel()
        if self._ready.is_set():
            return
        tail = "\n".join(self.output)
        if self._reader in done:
            code = await self._process.wait() if self._process else None
            raise ComponentFailed(
                f"{self.name} exited with {code} before printing {self.ready_line!r}:\n{tail}"
            )
        raise ComponentFailed(
            f"{self.name} printed no {self.ready_line!r} within {self.ready_timeout}s:\n{tail}"
        )

    async def _read_output(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        async for raw in self._process.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.output.append(line)
            if self._log_stream is not None:
                self._log_stream.write(line + "\n")
            if self.log is not None:
                self.log(f"[{self.name}] {line}")
            # Anywhere in the line: structured loggers put timestamps or JSON around the message.
            if self.ready_line is not None and self.ready_line in line:
                self._ready.set()

    async def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), self.stop_timeout)
            except TimeoutError:
                process.kill()
                await process.wait()
        reader, self._reader = self._reader, None
        if reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        stream, self._log_stream = self._log_stream, None
        if stream is not None:
            stream.close()
