"""A small Kubernetes REST client over raw dicts, for the simulator only.

The simulator must run against any apiserver (the sandbox emulator or a real one) and must not
import the rest of kruise, so it carries its own thin client: kubeconfig loading (token, client
certificate, CA), JSON requests with typed errors, and watches as async iterators.
"""

from __future__ import annotations

import base64
import ssl
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson
import yaml

from kruise.sandbox.simulator.ratelimit import TokenBucket

Obj = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class ApiError(Exception):
    """A non-2xx answer; ``status`` is the HTTP code and ``reason`` the Status reason (e.g. Conflict)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def gone(self) -> bool:
        return self.status == 410


def _materialize(data: str | None, path: str | None, base: Path, workdir: Path, name: str) -> str | None:
    """A file path for kubeconfig ``*-data`` (base64) or ``*`` (path relative to the kubeconfig)."""
    if data:
        target = workdir / name
        target.write_bytes(base64.b64decode(data))
        return str(target)
    if path:
        return str((base / path).resolve())
    return None


class Kubeconfig:
    """The current context of a kubeconfig file: server URL, auth headers and TLS settings."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        config = yaml.safe_load(path.read_text()) or {}
        current = config.get("current-context")
        contexts = {c["name"]: c.get("context") or {} for c in config.get("contexts") or []}
        if current not in contexts:
            raise ValueError(f"kubeconfig {path}: current-context {current!r} is not among contexts")
        context = contexts[current]
        clusters = {c["name"]: c.get("cluster") or {} for c in config.get("clusters") or []}
        users = {u["name"]: u.get("user") or {} for u in config.get("users") or []}
        cluster = clusters.get(context.get("cluster"), {})
        user = users.get(context.get("user"), {})
        if not cluster.get("server"):
            raise ValueError(f"kubeconfig {path}: cluster {context.get('cluster')!r} has no server")
        self.server: str = cluster["server"].rstrip("/")
        self.namespace: str = context.get("namespace") or "default"
        self.headers: dict[str, str] = {}
        token = user.get("token")
        if not token and user.get("tokenFile"):
            token = (path.parent / user["tokenFile"]).read_text().strip()
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        elif user.get("username"):
            raw = f"{user['username']}:{user.get('password', '')}".encode()
            self.headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        self.verify: ssl.SSLContext | bool = True
        if self.server.startswith("https"):
            self.verify = self._ssl_context(cluster, user, path.parent)

    @staticmethod
    def _ssl_context(cluster: Obj, user: Obj, base: Path) -> ssl.SSLContext | bool:
        if cluster.get("insecure-skip-tls-verify"):
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            context = ssl.create_default_context()
            with tempfile.TemporaryDirectory() as tmp:
                ca = _materialize(
                    cluster.get("certificate-authority-data"),
                    cluster.get("certificate-authority"),
                    base,
                    Path(tmp),
                    "ca.crt",
                )
                if ca:
                    context.load_verify_locations(cafile=ca)
        with tempfile.TemporaryDirectory() as tmp:
            cert = _materialize(
                user.get("client-certificate-data"), user.get("client-certificate"), base, Path(tmp), "c.crt"
            )
            key = _materialize(user.get("client-key-data"), user.get("client-key"), base, Path(tmp), "c.key")
            if cert and key:
                context.load_cert_chain(cert, key)
        return context


def resource_path(
    group_version: str, plural: str, namespace: str | None = None, name: str | None = None, sub: str = ""
) -> str:
    """``/api/v1/namespaces/ns/pods/name/status``-style paths for core and named groups."""
    base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    path = base + (f"/namespaces/{quote(namespace)}" if namespace else "") + f"/{plural}"
    if name:
        path += f"/{quote(name)}"
    if sub:
        path += f"/{sub}"
    return path


class Client:
    """JSON over HTTP to one apiserver; every method takes and returns plain dicts.

    aiohttp rather than httpx: the simulator keeps many watches open while it writes, and
    httpx's connection pool scans every connection per request, which dominated CPU time.
    """

    def __init__(
        self,
        kubeconfig: str | Path,
        *,
        user_agent: str = "kruise-sandbox-simulator",
        qps: float | None = None,
        burst: int = 30,
    ) -> None:
        """`qps`: limit every request to that rate (burst `burst`) as client-go does; None: unlimited."""
        self.config = Kubeconfig(kubeconfig)
        self.limiter = TokenBucket(qps, burst) if qps is not None else None
        self._headers = {**self.config.headers, "User-Agent": user_agent, "Accept": "application/json"}
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        """Created lazily so the client can be built outside a running event loop."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                connector=aiohttp.TCPConnector(ssl=self.config.verify, limit=0),
                timeout=aiohttp.ClientTimeout(total=None, connect=30.0, sock_read=None),
                read_bufsize=2**24,
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Obj:
        if self.limiter is not None:
            await self.limiter.acquire()
        content = orjson.dumps(body) if body is not None else None
        headers = {"Content-Type": content_type} if content is not None else None
        async with self.session.request(
            method,
            self.config.server + path,
            data=content,
            params=_query(params),
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=60.0),
        ) as response:
            payload = await response.read()
            if response.status >= 400:
                raise _error(response.status, payload)
        return orjson.loads(payload) if payload else {}

    async def get(self, path: str) -> Obj:
        return await self.request("GET", path)

    async def list(self, path: str, **params: Any) -> Obj:
        return await self.request("GET", path, params=params)

    async def create(self, path: str, obj: Obj) -> Obj:
        return await self.request("POST", path, body=obj)

    async def replace(self, path: str, obj: Obj) -> Obj:
        return await self.request("PUT", path, body=obj)

    async def patch(self, path: str, patch: Any, content_type: str = MERGE_PATCH) -> Obj:
        return await self.request("PATCH", path, body=patch, content_type=content_type)

    async def delete(
        self, path: str, *, grace_period_seconds: int | None = None, uid: str | None = None
    ) -> Obj:
        body: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        if uid:
            body["preconditions"] = {"uid": uid}
        return await self.request("DELETE", path, body=body)

    async def watch(self, path: str, resource_version: str, **params: Any) -> AsyncIterator[Obj]:
        """Watch events (``{"type", "object"}``) from ``resource_version``; ends when the server closes.

        An ``ERROR`` event carrying a 410 Status is raised as ``ApiError`` so callers relist.
        """
        query = {
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            **params,
        }
        async with self.session.get(self.config.server + path, params=_query(query)) as response:
            if response.status >= 400:
                raise _error(response.status, await response.read())
            while True:
                line = await response.content.readline()
                if not line:
                    return
                if not line.strip():
                    continue
                event = orjson.loads(line)
                if event.get("type") == "ERROR":
                    status = event.get("object") or {}
                    raise ApiError(
                        int(status.get("code") or 500), status.get("reason", ""), status.get("message", "")
                    )
                yield event


def _query(params: dict[str, Any] | None) -> dict[str, str] | None:
    if not params:
        return None
    return {k: str(v) for k, v in params.items() if v is not None}


def _error(code: int, content: bytes) -> ApiError:
    try:
        status = orjson.loads(content)
    except orjson.JSONDecodeError:
        status = {}
    if not isinstance(status, dict):
        status = {}
    return ApiError(code, status.get("reason", ""), status.get("message", content.decode(errors="replace")))
