"""One probe run: exec through the node's CRI runtime (ExecSync), tcpSocket connect, httpGet.

Each returns `(outcome, message)` with outcome Succeeded or Failed, or None when the probe cannot run
now (the container is not running): nothing is counted then, as the kubelet skips such probes.
exec succeeds on exit code 0 (message: the command's output); tcpSocket when a connection to the pod
IP and port opens within the timeout; httpGet on a status from 200 to 399.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl

import aiohttp
import grpc

from kruise.api.objects import Obj
from kruise.api.podprobemarker import PROBE_FAILED, PROBE_SUCCEEDED
from kruise.daemon.cri import api_pb2 as cri
from kruise.daemon.cri.client import CONTAINER_NAME_LABEL, POD_UID_LABEL, RuntimeClient
from kruise.daemon.podprobe.outcomes import message_of

Outcome = tuple[str, str] | None


async def running_container(runtime: RuntimeClient, pod_uid: str, container: str) -> str | None:
    """The id of the newest running container of that name in that pod, if any."""
    found = await runtime.list_containers({POD_UID_LABEL: pod_uid, CONTAINER_NAME_LABEL: container})
    running = [c for c in found if c.state == cri.CONTAINER_RUNNING]
    return max(running, key=lambda c: c.created_at).id if running else None


async def run_exec(
    runtime: RuntimeClient, pod_uid: str, container: str, command: list[str], timeout: int
) -> Outcome:
    container_id = await running_container(runtime, pod_uid, container)
    if container_id is None:
        return None
    try:
        response = await runtime.exec_sync(container_id, command, timeout)
    except grpc.aio.AioRpcError as exc:
        if exc.code() == grpc.StatusCode.NOT_FOUND:
            return None  # the container went away between the list and the exec
        return PROBE_FAILED, message_of(exc.details() or str(exc.code()))
    output = (response.stdout + response.stderr).decode(errors="replace")
    return (PROBE_SUCCEEDED if response.exit_code == 0 else PROBE_FAILED), message_of(output)


async def run_tcp(host: str, port: int, timeout: int) -> Outcome:
    try:
        async with asyncio.timeout(timeout):
            _reader, writer = await asyncio.open_connection(host, port)
    except TimeoutError:
        return PROBE_FAILED, f"dial tcp {host}:{port}: i/o timeout"
    except OSError as exc:
        return PROBE_FAILED, f"dial tcp {host}:{port}: {dial_error(exc)}"
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return PROBE_SUCCEEDED, ""


def dial_error(exc: OSError) -> str:
    """The failure as the kubelet's Go dialer words it (``connect: connection refused``): asyncio's
    own text ("Connect call failed (...)") would land in the pod condition's message otherwise."""
    if exc.errno:
        reason = os.strerror(exc.errno)
        return f"connect: {reason[:1].lower()}{reason[1:]}"
    return str(exc)


async def run_http(host: str, action: Obj, timeout: int) -> Outcome:
    scheme = str(action.get("scheme") or "HTTP").lower()
    path = str(action.get("path") or "/")
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{action.get('host') or host}:{int(action['port'])}{path}"
    headers = {"User-Agent": "kruise-daemon/podprobe", "Accept": "*/*"}
    for header in action.get("httpHeaders") or []:
        headers[header["name"]] = header.get("value", "")
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # the kubelet does not verify probe certificates either
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.get(url, headers=headers, ssl=insecure if scheme == "https" else None) as response,
        ):
            body = (await response.content.read(MAX_BODY)).decode(errors="replace")
            if 200 <= response.status < 400:
                return PROBE_SUCCEEDED, ""
            return PROBE_FAILED, message_of(f"HTTP probe failed with statuscode: {response.status} {body}")
    except TimeoutError:
        return PROBE_FAILED, f"Get {url}: context deadline exceeded"
    except aiohttp.ClientError as exc:
        return PROBE_FAILED, message_of(f"Get {url}: {exc}")


MAX_BODY = 10 * 1024


async def run_probe(runtime: RuntimeClient, pod: Obj, probe: Obj, timeout: int) -> Outcome:
    """Run one NodePodProbe probe of one pod entry (named ports already resolved by the manager)."""
    body = probe.get("probe") or {}
    host = pod.get("IP") or ""
    if body.get("exec") is not None:
        command = [str(part) for part in (body["exec"] or {}).get("command") or []]
        return await run_exec(runtime, pod.get("uid", ""), probe.get("containerName", ""), command, timeout)
    if body.get("tcpSocket") is not None:
        if not host:
            return None
        return await run_tcp(host, int(body["tcpSocket"]["port"]), timeout)
    if body.get("httpGet") is not None:
        if not host:
            return None
        return await run_http(host, body["httpGet"], timeout)
    return PROBE_FAILED, "probe has no exec, tcpSocket or httpGet handler"
