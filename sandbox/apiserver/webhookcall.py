"""One HTTPS POST to a webhook's ``clientConfig``, the way kube-apiserver's webhook client makes it.

Admission webhooks (webhooks.py) and CRD conversion webhooks (conversion.py) are reached the same
way: a ``url`` (https only) or a ``service {namespace, name, port, path}`` routed to a listening
``host:port`` (the sandbox has no cluster DNS) while TLS is still verified against ``caBundle`` for
the name ``<name>.<namespace>.svc``. The URL carries ``?timeout=<n>s`` as the apiserver's does, and
the call as a whole (connect, TLS, request, answer) gets those n seconds, after which it fails with
``context deadline exceeded`` as Go's context does. A
call that cannot be made or gets a non-2xx answer raises `CallFailed` with the client-side words
(``Post "<url>": ...``); each caller wraps them in its own prefix.

Connections are kept alive between calls, and a server may close an idle one just as the next
request goes out on it (uvicorn closes after 5 s idle, httpx keeps them 5 s too): the call then
fails with "Server disconnected without sending a response" though the webhook is fine. Go's
http.Transport, which kube-apiserver uses, replays a request that failed that way on a reused
connection. So does this caller, once, on a fresh connection, and only for failures where no answer
came back on a reused connection; a review is safe to send twice (v1 webhooks declare no side
effects). A fresh connection that fails is reported as it is.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ssl
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from kruise.sandbox.apiserver.serviceroute import ServiceUnreachable

ServiceAddresses = Mapping[tuple[str, str, int], str] | Callable[[str, str, int], str | None]


class CallFailed(Exception):
    """The webhook could not be called, or answered with a non-2xx status."""


class WebhookCaller:
    """Posts JSON to webhooks; keeps one HTTP client per caBundle (connections are reused).

    ``service_addresses`` resolves a clientConfig.service ``(namespace, name, port)`` to the
    ``host:port`` actually listening; a callable may raise ``ServiceUnreachable`` to fail the call
    with the apiserver's words (see ``serviceroute``).
    """

    def __init__(self, service_addresses: ServiceAddresses | None = None) -> None:
        self._service_addresses = service_addresses if service_addresses is not None else {}
        self._clients: dict[bytes, httpx.AsyncClient] = {}
        self._contexts: dict[bytes, ssl.SSLContext] = {}
        self.replays = 0  # calls retried on a fresh connection after a reused one was closed under them

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    async def post(self, client_config: dict[str, Any], body: Any, timeout: float) -> bytes:
        """POST ``body`` as JSON; the reply's bytes, or `CallFailed`."""
        url, connect_url, server_name = self.target(client_config, timeout)
        try:
            client = self._client_for(client_config)
        except (ssl.SSLError, ValueError, binascii.Error) as exc:
            raise CallFailed(f"invalid caBundle: {exc}") from exc
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        extensions: dict[str, Any] = {}
        if server_name:
            headers["Host"] = urlsplit(url).netloc
            extensions["sni_hostname"] = server_name
        content = orjson.dumps(body)
        deadline = asyncio.get_running_loop().time() + float(timeout)
        try:
            # One deadline for the whole exchange, as the apiserver's context.WithTimeout: httpx's own
            # timeout is per phase, so a webhook that answers a byte at a time would outlive it.
            async with asyncio.timeout_at(deadline):
                try:
                    reply = await _send(client, connect_url, content, headers, float(timeout), extensions)
                except _ClosedUnderUs:
                    self.replays += 1
                    left = max(deadline - asyncio.get_running_loop().time(), 0.001)
                    async with httpx.AsyncClient(
                        verify=self._contexts[_bundle(client_config)], trust_env=False
                    ) as one:
                        reply = await _send(one, connect_url, content, headers, left, extensions, replay=True)
        except (httpx.TimeoutException, TimeoutError) as exc:
            raise CallFailed(f'Post "{url}": context deadline exceeded') from exc
        except httpx.HTTPError as exc:
            raise CallFailed(f'Post "{url}": {_describe(exc)}') from exc
        if reply.status_code // 100 != 2:
            raise CallFailed(
                f'an error on the server ("{reply.text[:200]}") has prevented the request from succeeding'
            )
        return reply.content

    def target(self, config: dict[str, Any], timeout: float) -> tuple[str, str, str]:
        """(URL as the apiserver names it, URL actually dialled, TLS server name), or `CallFailed`."""
        query = f"timeout={int(timeout)}s"
        if config.get("url"):
            parts = urlsplit(config["url"])
            if parts.scheme != "https":
                raise CallFailed(f'unsupported protocol scheme "{parts.scheme}"')
            full = urlunsplit(parts._replace(query=f"{parts.query}&{query}" if parts.query else query))
            return full, full, ""
        service = config.get("service")
        if not service:
            raise CallFailed("clientConfig has neither url nor service")
        ns, name, port = (
            service.get("namespace", ""),
            service.get("name", ""),
            int(service.get("port") or 443),
        )
        path = service.get("path") or "/"
        if not path.startswith("/"):
            path = "/" + path
        server_name = f"{name}.{ns}.svc"
        url = f"https://{server_name}:{port}{path}?{query}"
        try:
            address = self._resolve(ns, name, port)
        except ServiceUnreachable as exc:
            raise CallFailed(f'Post "{url}": {exc}') from exc
        if address is None:
            raise CallFailed(f'Post "{url}": service "{ns}/{name}" has no address in the sandbox')
        return url, f"https://{address}{path}?{query}", server_name

    def _resolve(self, namespace: str, name: str, port: int) -> str | None:
        if callable(self._service_addresses):
            return self._service_addresses(namespace, name, port)
        return self._service_addresses.get((namespace, name, port))

    def _client_for(self, client_config: dict[str, Any]) -> httpx.AsyncClient:
        bundle = _bundle(client_config)
        client = self._clients.get(bundle)
        if client is None:
            context = ssl.create_default_context()
            if bundle:
                context = ssl.create_default_context(cadata=bundle.decode("ascii", "replace"))
            client = httpx.AsyncClient(verify=context, trust_env=False)
            self._clients[bundle] = client
            self._contexts[bundle] = context
        return client


def _bundle(client_config: dict[str, Any]) -> bytes:
    return base64.b64decode(client_config.get("caBundle") or "", validate=True)


class _ClosedUnderUs(Exception):
    """A reused connection was closed by the server before any answer came back on it."""


# How httpx reports a connection the server closed before answering: end of stream before a status
# line, a reset while reading, or a broken pipe while writing.
_NOTHING_RECEIVED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


async def _send(
    client: httpx.AsyncClient,
    url: str,
    content: bytes,
    headers: dict[str, str],
    timeout: float,
    extensions: dict[str, Any],
    *,
    replay: bool = False,
) -> httpx.Response:
    """POST once; `_ClosedUnderUs` when the request went out on a reused connection that the server
    closed without answering (unless this already is the replay)."""
    dialled = answered = False

    async def trace(event: str, info: dict[str, Any]) -> None:
        nonlocal dialled, answered
        if event.startswith("connection.connect_tcp."):
            dialled = True
        elif event == "http11.receive_response_headers.complete":
            answered = True

    try:
        return await client.post(
            url, content=content, headers=headers, timeout=timeout, extensions={**extensions, "trace": trace}
        )
    except _NOTHING_RECEIVED as exc:
        if replay or dialled or answered or not _no_answer(exc):
            raise
        raise _ClosedUnderUs() from exc


def _no_answer(exc: httpx.HTTPError) -> bool:
    if isinstance(exc, httpx.RemoteProtocolError):
        return "without sending a response" in str(exc)
    return True


def _describe(exc: httpx.HTTPError) -> str:
    cause = exc.__cause__ or exc.__context__
    return str(exc) or (str(cause) if cause else type(exc).__name__)
