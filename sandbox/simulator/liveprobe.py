"""Probing a real container process: httpGet and tcpSocket connect to it at the pod IP.

As the kubelet: ``host`` defaults to the pod IP, a named port is looked up in the container's
``ports``, HTTPS is not verified, a status in [200, 400) is a success, ``timeoutSeconds``
(default 1, real seconds) bounds the attempt. ``grpc`` probes are checked as a TCP connect to
their port (the sandbox carries no gRPC health client); ``exec`` probes go to ``execute`` with
that timeout (the kubelet's: the node runtime's ExecSync, which runs the command for real).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp

Obj = dict[str, Any]
Execute = Callable[[list[str], int], Awaitable[tuple[bool, str]]]


def resolve_port(port: Any, container: Mapping[str, Any]) -> int:
    """A probe's ``port``: a number, or the name of one of the container's ports."""
    if isinstance(port, int) or (isinstance(port, str) and port.isdigit()):
        return int(port)
    for declared in container.get("ports") or []:
        if declared.get("name") == port:
            return int(declared["containerPort"])
    raise ValueError(f"port {port!r}: not a number and no container port of that name")


_INSECURE = ssl.create_default_context()
_INSECURE.check_hostname = False
_INSECURE.verify_mode = ssl.CERT_NONE


async def check(
    probe: Mapping[str, Any], container: Mapping[str, Any], pod_ip: str, execute: Execute
) -> tuple[bool, str]:
    """Run one probe attempt against the process; returns (success, output for the event)."""
    timeout = float(probe.get("timeoutSeconds") or 1)
    if (probe.get("exec") or {}).get("command"):
        return await execute(list(probe["exec"]["command"]), int(probe.get("timeoutSeconds") or 1))
    try:
        if "httpGet" in probe:
            return await _http(probe["httpGet"], container, pod_ip, timeout)
        target = probe.get("tcpSocket") or probe.get("grpc")
        if target is None:
            return False, "probe has no handler"
        return await _tcp(target, container, pod_ip, timeout)
    except ValueError as error:
        return False, str(error)


async def _http(
    spec: Mapping[str, Any], container: Mapping[str, Any], pod_ip: str, timeout: float
) -> tuple[bool, str]:
    scheme = str(spec.get("scheme") or "HTTP").lower()
    host = spec.get("host") or pod_ip
    port = resolve_port(spec.get("port"), container)
    path = spec.get("path") or "/"
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{host}:{port}{path}"
    headers = {h["name"]: h.get("value", "") for h in spec.get("httpHeaders") or []}
    headers.setdefault("User-Agent", "kube-probe/1.36")
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.get(url, headers=headers, ssl=_INSECURE if scheme == "https" else None) as response,
        ):
            body = (await response.content.read(10240)).decode(errors="replace")
            if 200 <= response.status < 400:
                return True, ""
            detail = f": {body}" if body else ""
            return False, f"HTTP probe failed with statuscode: {response.status}{detail}"
    except TimeoutError:
        return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded)'
    except aiohttp.ClientError as error:
        return False, f'Get "{url}": {error}'


async def _tcp(
    spec: Mapping[str, Any], container: Mapping[str, Any], pod_ip: str, timeout: float
) -> tuple[bool, str]:
    host = spec.get("host") or pod_ip
    port = resolve_port(spec.get("port"), container)
    try:
        async with asyncio.timeout(timeout):
            _reader, writer = await asyncio.open_connection(host, port)
    except (TimeoutError, OSError) as error:
        return False, f"dial tcp {host}:{port}: {error or 'i/o timeout'}"
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True, ""
