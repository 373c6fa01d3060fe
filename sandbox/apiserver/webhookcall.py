"""One HTTPS POST to a webhook's ``clientConfig``, the way kube-apiserver's webhook client makes it.

Admission webhooks (webhooks.py) and CRD conversion webhooks (conversion.py) are reached the same
way: a ``url`` (https only) or a ``service {namespace, name, port, path}`` routed to a listening
``host:port`` (the sandbox has no cluster DNS) while TLS is still verified against ``caBundle`` for
the name ``<name>.<namespace>.svc``. The URL carries ``?timeout=<n>s`` as the apiserver's does. A
call that cannot be made or gets a non-2xx answer raises `CallFailed` with the client-side words
(``Post "<url>": ...``); each caller wraps them in its own prefix.
"""

from __future__ import annotations

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
        try:
            reply = await client.post(
                connect_url,
                content=orjson.dumps(body),
                headers=headers,
                timeout=float(timeout),
                extensions=extensions,
            )
        except httpx.TimeoutException as exc:
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
        bundle = base64.b64decode(client_config.get("caBundle") or "", validate=True)
        client = self._clients.get(bundle)
        if client is None:
            context = ssl.create_default_context()
            if bundle:
                context = ssl.create_default_context(cadata=bundle.decode("ascii", "replace"))
            client = httpx.AsyncClient(verify=context, trust_env=False)
            self._clients[bundle] = client
        return client


def _describe(exc: httpx.HTTPError) -> str:
    cause = exc.__cause__ or exc.__context__
    return str(exc) or (str(cause) if cause else type(exc).__name__)
