"""A local image registry (Debian's docker-registry, the CNCF distribution) on 127.0.0.1.

containerd on every node pulls through it: its registry mirrors send docker.io, registry.k8s.io
and friends here, so manifests run unchanged with no network beyond the loopback interface.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx

from kruise.sandbox.realnode.prereqs import binary
from kruise.sandbox.realnode.process import Daemon


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def registry_config(storage: Path, address: str) -> dict[str, object]:
    return {
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
        "http": {"addr": address},
    }


class LocalRegistry:
    """``docker-registry serve`` with its storage and log under ``directory``."""

    def __init__(self, directory: Path, *, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.directory = Path(directory)
        self.host = host
        self.port = port
        self._daemon: Daemon | None = None

    @property
    def address(self) -> str:
        if self.port is None:
            raise RuntimeError("registry: not started, so it has no port yet")
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=30.0, trust_env=False)

    async def _answers(self) -> bool:
        async with self.client() as client:
            return (await client.get("/v2/")).status_code == 200

    async def start(self, timeout: float = 30.0) -> None:
        if self.port is None:
            self.port = free_port(self.host)
        storage = self.directory / "storage"
        storage.mkdir(parents=True, exist_ok=True)
        config = self.directory / "config.yml"
        config.write_text(json.dumps(registry_config(storage, self.address), indent=2) + "\n")
        argv = [binary("docker-registry"), "serve", str(config)]
        self._daemon = Daemon("docker-registry", argv, self.directory / "registry.log")
        await self._daemon.start()
        try:
            await self._daemon.wait_ready(self._answers, timeout)
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        if self._daemon is not None:
            await self._daemon.stop()
