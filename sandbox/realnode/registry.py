"""A local image registry (Debian's docker-registry, the CNCF distribution) on 127.0.0.1.

containerd on every node pulls through it: its registry mirrors send docker.io, registry.k8s.io
and friends here, so manifests run unchanged with no network beyond the loopback interface. A
second instance with basic auth (htpasswd) serves the private image that ``imagePullSecrets`` and
ImagePullJob ``pullSecrets`` need: without credentials a pull fails with 401, as from a real one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import httpx

from kruise.sandbox.ports import reserve_port
from kruise.sandbox.realnode import htpasswd
from kruise.sandbox.realnode.prereqs import binary
from kruise.sandbox.realnode.process import Daemon


@dataclass(frozen=True)
class BasicAuth:
    """The one account of an auth-protected registry."""

    username: str
    password: str


REALM = "kruise-sandbox"


def registry_config(storage: Path, address: str, htpasswd_file: Path | None = None) -> dict[str, object]:
    config: dict[str, object] = {
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
        "http": {"addr": address},
    }
    if htpasswd_file is not None:
        config["auth"] = {"htpasswd": {"realm": REALM, "path": str(htpasswd_file)}}
    return config


class LocalRegistry:
    """``docker-registry serve``, storage and log under ``directory``; ``auth`` turns on basic auth."""

    def __init__(
        self,
        directory: Path,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        auth: BasicAuth | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.host = host
        self.port = port
        self.auth = auth
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
        """An HTTP client for the registry API, logged in when the registry wants it."""
        credentials = (self.auth.username, self.auth.password) if self.auth else None
        return httpx.AsyncClient(base_url=self.url, timeout=30.0, trust_env=False, auth=credentials)

    async def _answers(self) -> bool:
        async with self.client() as client:
            return (await client.get("/v2/")).status_code == 200

    async def start(self, timeout: float = 30.0) -> None:
        if self.port is None:
            self.port = reserve_port(self.host)
        storage = self.directory / "storage"
        storage.mkdir(parents=True, exist_ok=True)
        htpasswd_file = None
        if self.auth is not None:
            htpasswd_file = self.directory / "htpasswd"
            htpasswd.write(htpasswd_file, {self.auth.username: self.auth.password})
        config = self.directory / "config.yml"
        document = registry_config(storage, self.address, htpasswd_file)
        config.write_text(json.dumps(document, indent=2) + "\n")
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
